/* bench/alloc_loop: host time of the rounds a test-sized Level Zero program repeats
 * (issue 16 item 8), the kinds alternating in one run, medians printed:
 *   plain     one launch of vadd on buffers allocated once (write inputs, launch, wait, check)
 *   alloc     the same round, but its three shared buffers allocated before and freed after
 *   test      the round unit tests do: three device allocations, two copies in from malloc
 *             memory, the launch, one copy out to malloc memory, wait, check, three frees
 *   hostcopy  one copy from malloc memory into device memory (a host rendezvous), executed
 *   devcopy   the same copy between two device allocations (no host rendezvous)
 * Every round's result is checked against the host's sum.  The goal is alloc <= 2x plain.
 * Usage: ./zesim run --preset tiny -- build/bench/alloc_loop build/tests/e2e/vadd.elf [ROUNDS] [ELEMENTS] */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>

#include "bench_stats.h"

#define CALL(x)                                                                                                       \
	do {                                                                                                          \
		ze_result_t r_ = (x);                                                                                 \
		if (r_) {                                                                                             \
			fprintf(stderr, "alloc_loop: %s = 0x%x\n", #x, (unsigned)r_);                                 \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

static ze_context_handle_t ctx;
static ze_device_handle_t dev;
static ze_command_queue_handle_t queue;
static ze_command_list_handle_t list;
static ze_kernel_handle_t kernel;
static uint32_t elems, group = 64;

static void *alloc(int shared)
{
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
	void *p;
	if (shared)
		CALL(zeMemAllocShared(ctx, &dd, &hd, elems * sizeof(float), 64, dev, &p));
	else
		CALL(zeMemAllocDevice(ctx, &dd, elems * sizeof(float), 64, dev, &p));
	return p;
}

static void free3(void *a, void *b, void *c)
{
	CALL(zeMemFree(ctx, a));
	CALL(zeMemFree(ctx, b));
	CALL(zeMemFree(ctx, c));
}

static void run_list(void)
{
	CALL(zeCommandListClose(list));
	CALL(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
	CALL(zeCommandQueueSynchronize(queue, UINT64_MAX));
	CALL(zeCommandListReset(list));
}

static void append_vadd(float *a, float *b, float *c)
{
	CALL(zeKernelSetArgumentValue(kernel, 0, sizeof(a), &a));
	CALL(zeKernelSetArgumentValue(kernel, 1, sizeof(b), &b));
	CALL(zeKernelSetArgumentValue(kernel, 2, sizeof(c), &c));
	CALL(zeKernelSetArgumentValue(kernel, 3, sizeof(elems), &elems));
	ze_group_count_t g = {(elems + group - 1) / group, 1, 1};
	CALL(zeCommandListAppendLaunchKernel(list, kernel, &g, NULL, 0, NULL));
}

static void inputs(float *a, float *b, int round)
{
	for (uint32_t i = 0; i < elems; i++) {
		a[i] = (float)(i + (uint32_t)round);
		b[i] = (float)(3 * i);
	}
}

static void check(const float *c, int round, const char *kind)
{
	for (uint32_t i = 0; i < elems; i++)
		if (c[i] != (float)(i + (uint32_t)round) + (float)(3 * i)) {
			fprintf(stderr, "alloc_loop: %s round %d: c[%u] = %g, want %g\n", kind, round, i, (double)c[i],
				(double)((float)(i + (uint32_t)round) + (float)(3 * i)));
			exit(1);
		}
}

enum { PLAIN, ALLOC, TEST, HOSTCOPY, DEVCOPY, KINDS };

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(argc < 2 ? stderr : stdout, "usage: alloc_loop VADD.elf [ROUNDS] [ELEMENTS]\n"
						   "  host time per round of each kind (median), the kinds alternating;\n"
						   "  run under `zesim run`, e.g. ./zesim run --preset tiny -- build/bench/alloc_loop build/tests/e2e/vadd.elf\n");
		return argc < 2 ? 2 : 0;
	}
	const int rounds = argc > 2 ? atoi(argv[2]) : 200;
	elems = argc > 3 ? (uint32_t)atoi(argv[3]) : 4096;
	if (rounds < 1 || elems < 1 || elems > (1u << 24)) {
		fprintf(stderr, "alloc_loop: ROUNDS must be >= 1 and ELEMENTS in 1..16M\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static uint8_t bin[1 << 20];
	const size_t size = fread(bin, 1, sizeof(bin), f);
	fclose(f);

	CALL(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	ze_driver_handle_t drv;
	uint32_t n = 1;
	CALL(zeDriverGet(&n, &drv));
	n = 1;
	CALL(zeDeviceGet(drv, &n, &dev));
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	CALL(zeContextCreate(drv, &cd, &ctx));
	ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
				      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
	CALL(zeCommandQueueCreate(ctx, dev, &qd, &queue));
	ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
	CALL(zeCommandListCreate(ctx, dev, &ld, &list));
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, size, bin, "", NULL};
	ze_module_handle_t mod;
	CALL(zeModuleCreate(ctx, dev, &md, &mod, NULL));
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "vadd"};
	CALL(zeKernelCreate(mod, &kd, &kernel));
	CALL(zeKernelSetGroupSize(kernel, group, 1, 1));

	const size_t bytes = elems * sizeof(float);
	float *pa = alloc(1), *pb = alloc(1), *pc = alloc(1);       /* the plain rounds' buffers */
	float *da = alloc(0), *db = alloc(0);                       /* the copy rounds' */
	float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes); /* ordinary host memory */
	double *t[KINDS];
	for (int k = 0; k < KINDS; k++)
		t[k] = malloc(sizeof(double) * (size_t)rounds);
	if (!ha || !hb || !hc || !t[KINDS - 1]) {
		fprintf(stderr, "alloc_loop: out of host memory\n");
		return 1;
	}
	/* One untimed round of each kind first: lazy set-up (the host-operation worker,
	 * the first binding of a page-table level) is not what a loop repeats. */
	for (int r = -1; r < rounds; r++) {
		const int round = r < 0 ? 0 : r;
		double t0 = bench_now_us();
		inputs(pa, pb, round);
		append_vadd(pa, pb, pc);
		run_list();
		check(pc, round, "plain");
		double t1 = bench_now_us();

		float *a = alloc(1), *b = alloc(1), *c = alloc(1);
		inputs(a, b, round);
		append_vadd(a, b, c);
		run_list();
		check(c, round, "alloc");
		free3(a, b, c);
		double t2 = bench_now_us();

		a = alloc(0), b = alloc(0), c = alloc(0);
		inputs(ha, hb, round);
		memset(hc, 0, bytes);
		CALL(zeCommandListAppendMemoryCopy(list, a, ha, bytes, NULL, 0, NULL));
		CALL(zeCommandListAppendMemoryCopy(list, b, hb, bytes, NULL, 0, NULL));
		CALL(zeCommandListAppendBarrier(list, NULL, 0, NULL));
		append_vadd(a, b, c);
		CALL(zeCommandListAppendBarrier(list, NULL, 0, NULL));
		CALL(zeCommandListAppendMemoryCopy(list, hc, c, bytes, NULL, 0, NULL));
		run_list();
		check(hc, round, "test");
		free3(a, b, c);
		double t3 = bench_now_us();

		CALL(zeCommandListAppendMemoryCopy(list, da, ha, bytes, NULL, 0, NULL));
		run_list();
		double t4 = bench_now_us();
		CALL(zeCommandListAppendMemoryCopy(list, db, da, bytes, NULL, 0, NULL));
		run_list();
		double t5 = bench_now_us();
		if (r >= 0) {
			t[PLAIN][r] = t1 - t0;
			t[ALLOC][r] = t2 - t1;
			t[TEST][r] = t3 - t2;
			t[HOSTCOPY][r] = t4 - t3;
			t[DEVCOPY][r] = t5 - t4;
		}
		if (r >= 0 && (r + 1) % 50 == 0 && r + 1 < rounds)
			fprintf(stderr, "alloc_loop: %d of %d rounds\n", r + 1, rounds);
	}
	/* The copies went where they should: db holds ha's last contents. */
	CALL(zeCommandListAppendMemoryCopy(list, hc, db, bytes, NULL, 0, NULL));
	run_list();
	if (memcmp(hc, ha, bytes)) {
		fprintf(stderr, "alloc_loop: the copied data differ\n");
		return 1;
	}
	double m[KINDS];
	for (int k = 0; k < KINDS; k++)
		m[k] = bench_median(t[k], rounds);
	printf("alloc_loop: vadd of %u floats (%zu KiB per buffer), medians of %d rounds, host time\n", elems,
	       bytes / 1024, rounds);
	printf("  plain launch round                                %9.1f us\n", m[PLAIN]);
	printf("  allocate 3 - launch - free 3 round                %9.1f us  (%.2fx plain; goal <= 2x)\n", m[ALLOC],
	       m[ALLOC] / m[PLAIN]);
	printf("  test round (3 device allocs, 2 copies in, launch,\n"
	       "    1 copy out, host memory, 3 frees)               %9.1f us  (%.2fx plain)\n",
	       m[TEST], m[TEST] / m[PLAIN]);
	printf("  one copy from malloc memory to device memory      %9.1f us\n", m[HOSTCOPY]);
	printf("  one copy device to device                         %9.1f us  (host copy %.2fx)\n", m[DEVCOPY],
	       m[HOSTCOPY] / m[DEVCOPY]);
	CALL(zeMemFree(ctx, pa));
	CALL(zeMemFree(ctx, pb));
	CALL(zeMemFree(ctx, pc));
	CALL(zeMemFree(ctx, da));
	CALL(zeMemFree(ctx, db));
	CALL(zeKernelDestroy(kernel));
	CALL(zeModuleDestroy(mod));
	CALL(zeCommandListDestroy(list));
	CALL(zeCommandQueueDestroy(queue));
	CALL(zeContextDestroy(ctx));
	return 0;
}
