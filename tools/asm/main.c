/* zesim-as: assemble ZE-ISA source into an ELF module. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zas.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: zesim-as [-g] -o OUT.elf IN.zeasm\n"
		   "  -g        emit DWARF line info (.debug_line)\n"
		   "  -o FILE   output module (written only when there are no errors)\n");
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "zesim-as: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		if (cap >= (64u << 20)) {
			fprintf(stderr, "zesim-as: %s: larger than 64 MiB\n", path);
			free(buf);
			buf = NULL;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf && ferror(f)) {
		fprintf(stderr, "zesim-as: %s: read error\n", path);
		free(buf);
		buf = NULL;
	}
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL;
	zas_options_t opt = {0, 1, 0};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-g") == 0)
			opt.debug_line = 1;
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "zesim-as: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!in)
			in = argv[i];
		else {
			fprintf(stderr, "zesim-as: more than one input file\n");
			return 2;
		}
	}
	if (!in || !out) {
		usage(stderr);
		return 2;
	}
	size_t len;
	char *src = read_all(in, &len);
	if (!src)
		return 1;
	zm_module_t m;
	unsigned errors = zas_assemble(in, src, len, &opt, &m, stderr);
	free(src);
	if (errors) {
		fprintf(stderr, "zesim-as: %u error%s; %s not written\n", errors,
			errors == 1 ? "" : "s", out);
		return 1;
	}
	char err[512];
	int rc = zm_module_write(&m, out, err, sizeof(err));
	zm_module_free(&m);
	if (rc) {
		fprintf(stderr, "zesim-as: %s\n", err);
		return 1;
	}
	return 0;
}
