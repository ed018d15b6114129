/* The debuggee of the program-debug tests (debug_e2e.py): a plain Level Zero program.
 *
 *     test_debug_target debug.elf MODE [ARG]
 *
 * It prints "pid N", then waits for a line on stdin (the harness sends it once the
 * debugger is attached), then runs its kernel and prints what it computed:
 *   bp     dbgk over 16 items (two SIMD8 threads): "out I V" per item
 *   spin   spin over ARG groups of 8 (default 8) counting to ARG2 (default 400000): "out I V"
 *   fault  fault over 8 items loading from an unmapped address: "bad 0x..", "out I V"
 *   slm    slmk over 8 items (one thread, its SLM): "out I V"
 *   calla  a second module from the same file; dbgcall over 16 items calls its dbg_twice
 *          through the address zeModuleGetFunctionPointer gives ("fn 0x.."): "out I V"
 * and "target done".  The harness checks the values against its own reference. */
#include <unistd.h>

#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc >= 3, "usage: test_debug_target debug.elf bp|spin|fault|slm|calla [groups [count]]");
	const char *mode = argv[2];
	e2e_t e;
	e2e_init(&e);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	uint32_t n = 16, groups = 2;
	ze_kernel_handle_t k;
	ze_module_handle_t b = NULL; /* calla: the callee's module */
	uint32_t *out;
	if (strcmp(mode, "bp") == 0) {
		k = e2e_kernel(m, "dbgk");
		uint32_t *in = e2e_alloc_shared(&e, n * 4);
		out = e2e_alloc_shared(&e, n * 4);
		for (uint32_t i = 0; i < n; i++)
			in[i] = i * 13 + 1, out[i] = 0;
		e2e_arg_t args[] = {{sizeof(in), &in}, {sizeof(out), &out}};
		e2e_set_args(k, 2, args);
	} else if (strcmp(mode, "spin") == 0) {
		k = e2e_kernel(m, "spin");
		groups = argc > 3 ? (uint32_t)atoi(argv[3]) : 8;
		n = groups * 8;
		out = e2e_alloc_shared(&e, n * 4);
		memset(out, 0, n * 4);
		const uint32_t count = argc > 4 ? (uint32_t)atoi(argv[4]) : 400000;
		e2e_arg_t args[] = {{sizeof(out), &out}, {sizeof(count), &count}};
		e2e_set_args(k, 2, args);
	} else if (strcmp(mode, "calla") == 0) {
		b = e2e_module(&e, argv[1]);
		void *fn;
		CHECK(zeModuleGetFunctionPointer(b, "dbg_twice", &fn));
		printf("fn %p\n", fn);
		fflush(stdout);
		k = e2e_kernel(m, "dbgcall");
		out = e2e_alloc_shared(&e, n * 4);
		memset(out, 0, n * 4);
		e2e_arg_t args[] = {{sizeof(out), &out}, {sizeof(fn), &fn}};
		e2e_set_args(k, 2, args);
	} else if (strcmp(mode, "slm") == 0) {
		k = e2e_kernel(m, "slmk");
		n = 8;
		groups = 1;
		out = e2e_alloc_shared(&e, n * 4);
		memset(out, 0, n * 4);
		e2e_arg_t args[] = {{sizeof(out), &out}};
		e2e_set_args(k, 1, args);
	} else {
		k = e2e_kernel(m, "fault");
		n = 8;
		groups = 1;
		out = e2e_alloc_shared(&e, n * 4);
		memset(out, 0, n * 4);
		/* never mapped; above 4 GiB (cr0.3 has 32 bits, the event the whole address) */
		const uint64_t bad = 0x100000001000ull;
		printf("bad 0x%llx\n", (unsigned long long)bad);
		fflush(stdout);
		e2e_arg_t args[] = {{sizeof(bad), &bad}, {sizeof(out), &out}};
		e2e_set_args(k, 2, args);
	}
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	ze_group_count_t gc = {groups, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &gc, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < n; i++)
		printf("out %u %u\n", i, out[i]);
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	if (b)
		CHECK(zeModuleDestroy(b));
	printf("target done\n");
	fflush(stdout);
	e2e_fini(&e);
	return 0;
}
