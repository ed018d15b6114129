/* zesim-spirv: the driver's SPIR-V front end as a command, for developers and
 * tests: translate a SPIR-V module into a ZE-ISA module file.
 *
 *     zesim-spirv [-8] [-g] [-o OUT.elf] IN.spv
 *
 * -8 limits kernels to SIMD8; -g writes the DWARF line table of the module's
 * OpLine positions (zeModuleCreate's build flag -g).  Errors are the build-log messages that
 * zeModuleCreate returns; the exit status is 1 on a failed build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	spv_compile_options_t opt = {.max_simd = 16};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "-8") == 0)
			opt.max_simd = 8;
		else if (strcmp(argv[i], "-g") == 0)
			opt.debug_lines = 1;
		else if (strcmp(argv[i], "-fno-unroll-loops") == 0)
			opt.no_unroll = 1;
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fprintf(stderr, "usage: zesim-spirv [-8] [-g] [-fno-unroll-loops] [-o OUT.elf] IN.spv\n");
			return 2;
		}
	}
	if (!in) {
		fprintf(stderr, "usage: zesim-spirv [-8] [-g] [-fno-unroll-loops] [-o OUT.elf] IN.spv\n");
		return 2;
	}
	FILE *f = fopen(in, "rb");
	if (!f) {
		perror(in);
		return 1;
	}
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			unsigned char *b = realloc(buf, cap *= 2);
			if (!b) {
				free(buf);
				buf = NULL;
			}
			buf = b;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", in);
		return 1;
	}
	zm_module_t m;
	char err[1024];
	if (spv_compile(buf, n, &opt, &m, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", in, err);
		free(buf);
		return 1;
	}
	free(buf);
	for (uint32_t i = 0; i < m.nkernels; i++) {
		const zm_kernel_t *k = &m.kernels[i];
		printf("%s: SIMD%u, %u GRF, %u bytes of SLM, %u instructions, %u arguments (%u bytes)", k->name,
		       k->simd, k->grf, k->slm, k->text_size / 16, k->nargs, k->arg_bytes);
		if (k->reqd_group[0])
			printf(", group size %ux%ux%u required", k->reqd_group[0], k->reqd_group[1], k->reqd_group[2]);
		printf("\n");
	}
	int rc = 0;
	if (out && zm_module_write(&m, out, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", out, err);
		rc = 1;
	}
	zm_module_free(&m);
	return rc;
}
