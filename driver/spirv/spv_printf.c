/* OpenCL.std printf (see spv_internal.h). */
#include "spv_internal.h"

void spv_printf(spv_ctx_t *c, const spv_inst_t *in)
{
	spv_fail(c, in->off, "OpenCL.std instruction 'printf' is not supported yet");
}
