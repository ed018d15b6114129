/* Checked launches, and a kernel that never ends, for the scheduler's tests
 * (runaway.py, soak.py; issue 11):
 *   test_launches misc.elf N [FAULT_EVERY]
 *       N launches of `inc` (8 work items) on a synchronous immediate list,
 *       the counter checked after each one.  With FAULT_EVERY = k > 0, every
 *       k-th launch instead stores through an unmapped address on a queue of
 *       its own and must report ZE_RESULT_ERROR_DEVICE_LOST, with the good
 *       queue unaffected.
 *   test_launches hang.elf spin
 *       launches step2 with an odd bound (never ends), prints "spinning" and
 *       waits forever (until killed or the job timeout fails it).
 * Prints one summary line. */
#include <time.h>
#include <unistd.h>

#include "e2e.h"

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ze_command_list_handle_t sync_list(e2e_t *e)
{
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t l;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &l));
	return l;
}

static int spin(e2e_t *e, const char *path)
{
	ze_module_handle_t m = e2e_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "step2");
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	uint32_t *out = e2e_alloc_shared(e, 4096);
	const uint32_t odd = 7;
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &out));
	CHECK(zeKernelSetArgumentValue(k, 1, 4, &odd));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &one, NULL, 0, NULL));
	CHECK(zeCommandListClose(e->list));
	CHECK(zeCommandQueueExecuteCommandLists(e->queue, 1, &e->list, NULL));
	printf("spinning: pid %d\n", (int)getpid());
	fflush(stdout);
	ze_result_t r = zeCommandQueueSynchronize(e->queue, UINT64_MAX);
	printf("spin: the wait ended with 0x%x\n", (unsigned)r);
	return r == ZE_RESULT_ERROR_DEVICE_LOST ? 0 : 1;
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 3, "usage: test_launches misc.elf N [FAULT_EVERY] | hang.elf spin");
	e2e_t e;
	e2e_init(&e);
	if (strcmp(argv[2], "spin") == 0)
		return spin(&e, argv[1]);
	const long n = atol(argv[2]), fault_every = argc > 3 ? atol(argv[3]) : 0;
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t inc = e2e_kernel(m, "inc"), poke = e2e_kernel(m, "poke");
	CHECK(zeKernelSetGroupSize(inc, 8, 1, 1));
	CHECK(zeKernelSetGroupSize(poke, 1, 1, 1));
	uint32_t *counter = e2e_alloc_shared(&e, 64);
	*counter = 0;
	CHECK(zeKernelSetArgumentValue(inc, 0, 8, &counter));
	void *bad = (void *)(uintptr_t)0x1000;
	CHECK(zeKernelSetArgumentValue(poke, 0, 8, &bad));
	const ze_group_count_t one = {1, 1, 1};
	ze_command_list_handle_t l = sync_list(&e);
	const double t0 = seconds();
	uint32_t want = 0;
	long faults = 0;
	for (long i = 1; i <= n; i++) {
		if (fault_every > 0 && i % fault_every == 0) {
			ze_command_list_handle_t f = sync_list(&e);
			CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandListAppendLaunchKernel(f, poke, &one, NULL, 0, NULL));
			CHECK(zeCommandListDestroy(f));
			faults++;
			continue;
		}
		CHECK(zeCommandListAppendLaunchKernel(l, inc, &one, NULL, 0, NULL));
		want += 8;
		EXPECT(*counter == want, "launch %ld: counter %u, expected %u", i, *counter, want);
	}
	const double t = seconds() - t0;
	CHECK(zeCommandListDestroy(l));
	CHECK(zeMemFree(e.ctx, counter));
	CHECK(zeKernelDestroy(inc));
	CHECK(zeKernelDestroy(poke));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	printf("launches: %ld checked launches and %ld faulting ones in %.2f s\n", n - faults, faults, t);
	return 0;
}
