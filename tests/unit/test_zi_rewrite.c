/* zesim-icount's basic blocks (tools/icount/zi_rewrite.c) against block lists worked out
 * by hand from tests/e2e/call_a.zeasm: a `calla` ends its block, as `call` does (the
 * callee may end the thread, so what follows the call is a block of its own).
 *
 *   test_zi_rewrite call_a.elf */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zi_rewrite.h"

static int failures;

static void expect_blocks(zm_module_t *m, const char *kernel, const zi_block_t *want, uint32_t nwant)
{
	uint32_t ki = 0;
	while (ki < m->nkernels && strcmp(m->kernels[ki].name, kernel) != 0)
		ki++;
	if (ki == m->nkernels) {
		printf("no kernel %s\n", kernel);
		failures++;
		return;
	}
	zi_block_t *b = NULL;
	uint32_t nb = 0;
	char err[256];
	if (zi_instrument_kernel(&m->kernels[ki], ki, 120, 121, 0x10000, 0, &b, &nb, err, sizeof(err))) {
		printf("%s: %s\n", kernel, err);
		failures++;
		return;
	}
	int same = nb == nwant;
	for (uint32_t i = 0; same && i < nb; i++)
		same = b[i].kernel == ki && b[i].offset == want[i].offset && b[i].ninst == want[i].ninst;
	if (!same) {
		printf("%s: blocks (offset, instructions):", kernel);
		for (uint32_t i = 0; i < nb; i++)
			printf(" (%u, %u)", b[i].offset, b[i].ninst);
		printf("; expected");
		for (uint32_t i = 0; i < nwant; i++)
			printf(" (%u, %u)", want[i].offset, want[i].ninst);
		printf("\n");
		failures++;
	}
	free(b);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_zi_rewrite call_a.elf\n");
		return 2;
	}
	zm_module_t m;
	char err[256];
	if (zm_module_read_file(argv[1], &m, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	/* call_one: shl add calla | shl send.store send.eot | a_five: mul add ret */
	const zi_block_t one[] = {{0, 0, 3}, {0, 48, 3}, {0, 96, 3}};
	expect_blocks(&m, "call_one", one, 3);
	/* call_twice: shl add calla | mov calla | shl add shl send.store send.eot */
	const zi_block_t twice[] = {{0, 0, 3}, {0, 48, 2}, {0, 80, 5}};
	expect_blocks(&m, "call_twice", twice, 3);
	zm_module_free(&m);
	if (!failures)
		printf("test_zi_rewrite: blocks end at calla\n");
	return failures != 0;
}
