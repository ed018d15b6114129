/* zesim-dis: print an ELF module (or raw instructions) as ZE-ISA assembly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zdis.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: zesim-dis [--raw] [-o OUT] IN\n"
		   "  --raw     IN holds bare 16-byte instructions, not an ELF module\n"
		   "  -o FILE   write the text to FILE instead of standard output\n");
}

int main(int argc, char **argv)
{
	const char *in = NULL, *outp = NULL;
	int raw = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--raw") == 0)
			raw = 1;
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			outp = argv[++i];
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "zesim-dis: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!in)
			in = argv[i];
		else {
			fprintf(stderr, "zesim-dis: more than one input file\n");
			return 2;
		}
	}
	if (!in) {
		usage(stderr);
		return 2;
	}
	zm_module_t m;
	char err[512];
	uint8_t *buf = NULL;
	size_t len = 0;
	if (raw) {
		FILE *f = fopen(in, "rb");
		if (!f) {
			fprintf(stderr, "zesim-dis: %s: %s\n", in, strerror(errno));
			return 1;
		}
		size_t cap = 0;
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 4096;
				if (cap > (64u << 20)) {
					fprintf(stderr, "zesim-dis: %s: larger than 64 MiB\n", in);
					return 1;
				}
				uint8_t *nb = realloc(buf, cap);
				if (!nb)
					return 1;
				buf = nb;
			}
			size_t got = fread(buf + len, 1, cap - len, f);
			if (!got)
				break;
			len += got;
		}
		fclose(f);
	} else if (zm_module_read_file(in, &m, err, sizeof(err))) {
		fprintf(stderr, "zesim-dis: %s\n", err);
		return 1;
	}
	FILE *out = outp ? fopen(outp, "w") : stdout;
	if (!out) {
		fprintf(stderr, "zesim-dis: %s: %s\n", outp, strerror(errno));
		return 1;
	}
	if (raw)
		zdis_raw(buf, len, out);
	else
		zdis_module(&m, out);
	free(buf);
	if (!raw)
		zm_module_free(&m);
	if (fflush(out) != 0 || (outp && fclose(out) != 0)) {
		fprintf(stderr, "zesim-dis: write error\n");
		return 1;
	}
	return 0;
}
