/* libFuzzer target: the assembler must never crash, and every program it
 * accepts must disassemble to text that assembles to the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zas.h"
#include "zdis.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	zas_options_t opt = {1, 0, 5};
	zm_module_t m;
	if (zas_assemble("fuzz.zeasm", (const char *)data, size, &opt, &m, devnull))
		return 0;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	zdis_module(&m, mem);
	fclose(mem);
	zm_module_t again;
	opt.debug_line = 0;
	if (zas_assemble("fuzz.dis", text, len, &opt, &again, stderr)) {
		fprintf(stderr, "disassembly does not assemble:\n%s\n", text);
		abort();
	}
	if (again.nkernels != m.nkernels)
		abort();
	for (uint32_t i = 0; i < m.nkernels; i++)
		if (again.kernels[i].text_size != m.kernels[i].text_size ||
		    memcmp(again.kernels[i].text, m.kernels[i].text, m.kernels[i].text_size) != 0) {
			fprintf(stderr, "round trip changed kernel %s:\n%s\n", m.kernels[i].name, text);
			abort();
		}
	free(text);
	zm_module_free(&m);
	zm_module_free(&again);
	return 0;
}
