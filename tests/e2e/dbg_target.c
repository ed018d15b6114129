/* The program zesim-dbg debugs in its tmux test (tests/e2e/dbg_tmux.py): loads
 * MODULE (tests/e2e/dbg.zeasm, assembled with -g), writes its pid to PIDFILE, waits
 * until GOFILE exists (the debugger attaches and sets its breakpoints meanwhile), then
 * runs kernel dbgk on one group of 8 work items and prints out[0..7]; or, with
 * "spin G N", kernel spin on G groups of 8 counting to N, and prints "spin: ok" when
 * out[gid] = N + gid for every gid (else the first wrong one); or, with "saxpy",
 * MODULE is tests/kernels/saxpy.cl in SPIR-V, built with -g: y = 2 x + y on 16 work
 * items, "saxpy: ok" when y equals the host's fmaf; or, with "calla", MODULE is
 * tests/e2e/dbg_call.zeasm, loaded twice: callk of the first calls `twice` of the second
 * through its zeModuleGetFunctionPointer address, "calla: ok" when out is right.
 *
 *     dbg_target MODULE PIDFILE GOFILE [spin G N | saxpy | calla] */
#include <math.h>
#include <unistd.h>

#include "e2e.h"

/* Write the pid, wait for the go file (the debugger sets its breakpoints meanwhile). */
static void ready(char **argv)
{
	FILE *f = fopen(argv[2], "w");
	EXPECT(f && fprintf(f, "%d\n", (int)getpid()) > 0 && fclose(f) == 0, "cannot write %s", argv[2]);
	printf("dbg_target: pid %d, module loaded; waiting for %s\n", (int)getpid(), argv[3]);
	fflush(stdout);
	for (int i = 0; access(argv[3], F_OK) != 0; i++) {
		EXPECT(i < 1200, "%s did not appear in 120 s", argv[3]);
		usleep(100000);
	}
}

static int saxpy(char **argv)
{
	e2e_t e;
	e2e_init(&e);
	size_t size;
	uint8_t *il = read_file(argv[1], &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, il, "-g", NULL};
	ze_module_handle_t m;
	CHECK(zeModuleCreate(e.ctx, e.dev, &md, &m, NULL));
	free(il);
	ze_kernel_handle_t k = e2e_kernel(m, "saxpy");
	const uint32_t n = 16;
	const float a = 2.0f;
	float *x = e2e_alloc_shared(&e, n * sizeof(float)), *y = e2e_alloc_shared(&e, n * sizeof(float));
	for (uint32_t i = 0; i < n; i++) {
		x[i] = (float)i;
		y[i] = 100.0f + (float)i;
	}
	CHECK(zeKernelSetGroupSize(k, n, 1, 1));
	e2e_arg_t args[] = {{sizeof(x), &x}, {sizeof(y), &y}, {sizeof(a), &a}, {sizeof(n), &n}};
	e2e_set_args(k, 4, args);
	ready(argv);
	ze_group_count_t groups = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	uint32_t bad = 0;
	while (bad < n && y[bad] == fmaf(a, (float)bad, 100.0f + (float)bad))
		bad++;
	if (bad == n)
		printf("dbg_target: saxpy: ok\n");
	else
		printf("dbg_target: saxpy: y[%u] = %g\n", bad, (double)y[bad]);
	CHECK(zeMemFree(e.ctx, x));
	CHECK(zeMemFree(e.ctx, y));
	e2e_fini(&e);
	return bad == n ? 0 : 1;
}

/* calla: the module twice; callk of the first calls `twice` of the second
 * (dbg_call.zeasm): out[lid] = 2 * (lid + 0x100) + 5. */
static int calla(char **argv)
{
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t a = e2e_module(&e, argv[1]), b = e2e_module(&e, argv[1]);
	void *fn;
	CHECK(zeModuleGetFunctionPointer(b, "twice", &fn));
	ze_kernel_handle_t k = e2e_kernel(a, "callk");
	uint32_t *out = e2e_alloc_shared(&e, 8 * sizeof(uint32_t));
	memset(out, 0, 8 * sizeof(uint32_t));
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	e2e_arg_t args[] = {{sizeof(out), &out}, {sizeof(fn), &fn}};
	e2e_set_args(k, 2, args);
	printf("dbg_target: twice at %p\n", fn);
	ready(argv);
	ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &one, NULL, 0, NULL));
	e2e_run(&e);
	uint32_t bad = 0;
	while (bad < 8 && out[bad] == 2 * (bad + 0x100) + 5)
		bad++;
	if (bad == 8)
		printf("dbg_target: calla: ok\n");
	else
		printf("dbg_target: calla: out[%u] = %u, expected %u\n", bad, out[bad], 2 * (bad + 0x100) + 5);
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(a));
	CHECK(zeModuleDestroy(b));
	e2e_fini(&e);
	return bad == 8 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const int spin = argc == 7 && strcmp(argv[4], "spin") == 0;
	if (argc == 5 && strcmp(argv[4], "saxpy") == 0)
		return saxpy(argv);
	if (argc == 5 && strcmp(argv[4], "calla") == 0)
		return calla(argv);
	EXPECT(argc == 4 || spin, "usage: dbg_target MODULE PIDFILE GOFILE [spin GROUPS COUNT | saxpy | calla]");
	const uint32_t groups_n = spin ? (uint32_t)atoi(argv[5]) : 1, count = spin ? (uint32_t)atoi(argv[6]) : 0;
	EXPECT(groups_n >= 1 && groups_n <= 64, "1 to 64 groups");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, spin ? "spin" : "dbgk");
	const uint32_t n = 8 * groups_n;
	uint32_t *out = e2e_alloc_shared(&e, n * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++)
		out[i] = 0xdeadbeef;
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	e2e_arg_t args[] = {{sizeof(out), &out}, {sizeof(count), &count}};
	e2e_set_args(k, spin ? 2 : 1, args);

	ready(argv);
	ze_group_count_t groups = {groups_n, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	CHECK(zeCommandListClose(e.list));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	printf("dbg_target: launched\n");
	fflush(stdout);
	CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	if (spin) {
		uint32_t bad = 0;
		while (bad < n && out[bad] == count + bad)
			bad++;
		if (bad == n)
			printf("dbg_target: spin: ok\n");
		else
			printf("dbg_target: spin: out[%u] = %u, expected %u\n", bad, out[bad], count + bad);
		CHECK(zeMemFree(e.ctx, out));
		e2e_fini(&e);
		return bad == n ? 0 : 1;
	}
	printf("dbg_target: out =");
	for (int i = 0; i < 8; i++)
		printf(" 0x%x", out[i]);
	printf("\n");
	CHECK(zeMemFree(e.ctx, out));
	e2e_fini(&e);
	printf("dbg_target: done\n");
	return 0;
}
