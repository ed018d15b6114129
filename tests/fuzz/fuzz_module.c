/* libFuzzer target: the module reader and the disassembler on arbitrary
 * bytes.  Rejections are fine; crashes, leaks and UB are not. */
#include <stdio.h>

#include "zdis.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	zm_module_t m;
	char err[512];
	if (zm_module_read_mem(data, size, &m, err, sizeof(err)) == 0) {
		zdis_module(&m, devnull);
		zm_module_free(&m);
	}
	zdis_raw(data, size, devnull);
	return 0;
}
