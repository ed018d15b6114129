/* zesim-spirv: the driver's SPIR-V front end as a command, for developers and
 * tests: translate a SPIR-V module into a ZE-ISA module file.
 *
 *     zesim-spirv [-8] [-g] [-fno-unroll-loops] [-o OUT.elf] IN.spv
 *     zesim-spirv [options] --stage NAME [--format text|binary] [-o OUT] IN.spv
 *     zesim-spirv --stages
 *
 * -8 limits kernels to SIMD8; -g writes the DWARF line table of the module's
 * OpLine positions (zeModuleCreate's build flag -g).  --stage writes one stage of
 * the pipeline (driver/README.md, "Program snapshots"; --stages lists them) to OUT
 * or stdout, in the stage's default format unless --format says.  Errors are the
 * build-log messages that zeModuleCreate returns; the exit status is 1 on a failed
 * build, 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"

#define USAGE                                                                                                          \
	"usage: zesim-spirv [-8] [-g] [-fno-unroll-loops] [--stage NAME [--format text|binary]] [-o OUT] IN.spv\n"      \
	"       zesim-spirv --stages\n"

static int write_out(const char *out, const void *data, size_t size)
{
	FILE *f = out ? fopen(out, "wb") : stdout;
	if (!f || fwrite(data, 1, size, f) != size || (out ? fclose(f) : fflush(f))) {
		perror(out ? out : "stdout");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL, *stage_name = NULL, *format_name = NULL;
	spv_compile_options_t opt = {.max_simd = 16};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--stage") == 0 && i + 1 < argc)
			stage_name = argv[++i];
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
			format_name = argv[++i];
		else if (strcmp(argv[i], "--stages") == 0) {
			for (int s = 0; s < SPV_NSTAGES; s++)
				printf("%u %-17s %s%s  %s\n", s, spv_stages[s].name,
				       spv_stages[s].def_format == SPV_FMT_TEXT ? "text" : "binary",
				       spv_stages[s].formats == (SPV_FMT_TEXT | SPV_FMT_BINARY)
					       ? (spv_stages[s].def_format == SPV_FMT_TEXT ? ",binary" : ",text")
					       : "       ",
				       spv_stages[s].description);
			return 0;
		}
		else if (strcmp(argv[i], "-8") == 0)
			opt.max_simd = 8;
		else if (strcmp(argv[i], "-g") == 0)
			opt.debug_lines = 1;
		else if (strcmp(argv[i], "-fno-unroll-loops") == 0)
			opt.no_unroll = 1;
		else if (!in && argv[i][0] != '-')
			in = argv[i];
		else {
			fputs(USAGE, stderr);
			return 2;
		}
	}
	if (!in || (format_name && !stage_name)) {
		fputs(USAGE, stderr);
		return 2;
	}
	int stage = -1;
	uint32_t fmt = 0;
	if (stage_name) {
		stage = spv_stage_by_name(stage_name);
		if (stage < 0) {
			fprintf(stderr, "zesim-spirv: no stage \"%s\" (zesim-spirv --stages lists them)\n", stage_name);
			return 2;
		}
		fmt = spv_stages[stage].def_format;
		if (format_name)
			fmt = strcmp(format_name, "text") == 0 ? SPV_FMT_TEXT : strcmp(format_name, "binary") == 0 ? SPV_FMT_BINARY : 0;
		if (!(fmt & spv_stages[stage].formats)) {
			fprintf(stderr, "zesim-spirv: stage %s has no format \"%s\"\n", stage_name, format_name);
			return 2;
		}
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
	char err[1024];
	if (stage == SPV_STAGE_SPIRV || stage == SPV_STAGE_SPIRV_TRANSLATED) {
		/* No linking here: the module the translator reads is the one given. */
		int rc = write_out(out, buf, n);
		free(buf);
		return rc;
	}
	if (stage == SPV_STAGE_ZEISA) {
		uint8_t *elf;
		size_t size;
		int rc = spv_compile_elf(buf, n, &opt, &elf, &size, err, sizeof(err));
		free(buf);
		if (rc) {
			fprintf(stderr, "%s: %s\n", in, err);
			return 1;
		}
		if (fmt == SPV_FMT_TEXT) {
			char *text;
			size_t len;
			rc = spv_disassemble(elf, size, &text, &len, err, sizeof(err));
			free(elf);
			if (rc) {
				fprintf(stderr, "%s: %s\n", in, err);
				return 1;
			}
			rc = write_out(out, text, len);
			free(text);
			return rc;
		}
		rc = write_out(out, elf, size);
		free(elf);
		return rc;
	}
	spv_snapshot_t snap = {.stage = (uint32_t)(stage < 0 ? 0 : stage)};
	if (stage >= 0)
		opt.snapshot = &snap;
	zm_module_t m;
	if (spv_compile(buf, n, &opt, &m, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", in, err);
		free(buf);
		free(snap.text);
		return 1;
	}
	free(buf);
	if (stage >= 0) {
		int rc = write_out(out, snap.text ? snap.text : "", snap.size);
		free(snap.text);
		zm_module_free(&m);
		return rc;
	}
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
