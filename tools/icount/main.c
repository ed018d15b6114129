/* zesim-icount: run a Level Zero program with every kernel rewritten to count
 * its executed instructions, and print the counts per kernel and per source
 * line (tools/icount/README.md).  This launcher only sets the environment and
 * runs the program; the work is libzesim_icount.so's (zi_icount.c). */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: zesim-icount [--out FILE] [--json FILE [--save-modules DIR]] [--no-rewrite] [--max-blocks N] -- PROGRAM [ARGS...]\n"
		   "\n"
		   "Runs PROGRAM (a Level Zero program, on the simulated GPU: start it under\n"
		   "`zesim run`, or use `./zesim icount`) with libzesim_icount.so preloaded. Every\n"
		   "module the program creates is built with -g and -zet-profile-flags 0x3 (free-register\n"
		   "info; register reallocation keeps r126-r127 free in SPIR-V kernels), and each\n"
		   "kernel is rewritten to count the executions of its basic blocks in two registers\n"
		   "the kernel leaves free (zetKernelGetProfileInfo; r126-r127 whenever free) and a\n"
		   "counter buffer per kernel, which also counts the code a launch reaches through\n"
		   "calla in other modules (\"called_blocks\" in the JSON). At exit it\n"
		   "prints, per kernel, the instructions executed and their split per source line\n"
		   "(the module's DWARF line table; SPIR-V compiled with clang -g).\n"
		   "\n"
		   "  --out FILE    append the report to FILE instead of stderr\n"
		   "  --json FILE   also append one JSON line per process: {\"pid\", \"kernels\":\n"
		   "                [{\"module\", \"name\", \"instructions\", \"blocks\": [[offset,\n"
		   "                instructions, executions]...], \"called_blocks\": [[module, kernel,\n"
		   "                offset, instructions, executions]...], \"lines\": [[file, line,\n"
		   "                count]...]}]}\n"
		   "  --save-modules DIR  write each module's native binary (as the program built it)\n"
		   "                into DIR, named in the JSON (\"module_file\")\n"
		   "  --no-rewrite  only build the modules as for counting (the same code, no counters):\n"
		   "                the run to compare with, e.g. the model's ledger\n"
		   "  --max-blocks N  counters per kernel (default 65536: 256 KiB of shared memory\n"
		   "                per kernel): the most basic blocks all the process's modules may\n"
		   "                have together (code reached through calla counts into the\n"
		   "                calling kernel's buffer at its own module's block numbers)\n"
		   "  --help        this text\n"
		   "\n"
		   "example: ./zesim icount -- build/tests/e2e/zesim_l0_demo build/tests/kernels/vadd.spv\n");
}

int main(int argc, char **argv)
{
	const char *out = NULL, *json = NULL, *save = NULL, *max_blocks = NULL;
	int rewrite = 1;
	int i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--save-modules") && i + 1 < argc) {
			save = argv[++i];
		} else if (!strcmp(argv[i], "--max-blocks") && i + 1 < argc) {
			max_blocks = argv[++i];
			char *end;
			const unsigned long v = strtoul(max_blocks, &end, 10);
			if (!*max_blocks || *end || !v || v > (1ul << 24)) {
				fprintf(stderr, "zesim-icount: --max-blocks %s: expected a number from 1 to %lu\n",
					max_blocks, 1ul << 24);
				return 2;
			}
		} else if (!strcmp(argv[i], "--no-rewrite")) {
			rewrite = 0;
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else {
			fprintf(stderr, "zesim-icount: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "zesim-icount: no program\n");
		usage(stderr);
		return 2;
	}
	/* The library sits in lib/ beside the tools/ folder of this executable. */
	char self[PATH_MAX], lib[PATH_MAX + 64];
	const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("zesim-icount: /proc/self/exe");
		return 1;
	}
	self[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/../lib/libzesim_icount.so", dirname(self));
	if (access(lib, R_OK)) {
		fprintf(stderr, "zesim-icount: %s is missing: build the target zesim_icount\n", lib);
		return 1;
	}
	const char *pre = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
	if (!preload)
		return 1;
	sprintf(preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "");
	if (setenv("LD_PRELOAD", preload, 1) || setenv("ZET_ENABLE_PROGRAM_INSTRUMENTATION", "1", 1) ||
	    (out && setenv("ZESIM_ICOUNT_OUT", out, 1)) || (json && setenv("ZESIM_ICOUNT_JSON", json, 1)) ||
	    (save && setenv("ZESIM_ICOUNT_SAVE", save, 1)) ||
	    (max_blocks && setenv("ZESIM_ICOUNT_MAX_BLOCKS", max_blocks, 1)) || (!rewrite && setenv("ZESIM_ICOUNT_NO_REWRITE", "1", 1))) {
		perror("zesim-icount: setenv");
		return 1;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "zesim-icount: cannot run %s: ", argv[i]);
	perror(NULL);
	return 127;
}
