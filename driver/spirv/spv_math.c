/* OpenCL.std instructions computed by code sequences in ZE-ISA (the ISA has
 * only inv, sqrt, exp2 and log2 in hardware).  See spv_internal.h. */
#include "spv_internal.h"

#include <spirv/unified1/OpenCL.std.h>

int spv_math_ocl(spv_ctx_t *c, uint32_t n, const opnd_t *x, int is_float, opnd_t *o)
{
	(void)c;
	(void)n;
	(void)x;
	(void)is_float;
	(void)o;
	return 0;
}
