/* A kernel that never ends (a loop with a wrong bound, hang.zeasm) is
 * stopped by the KMD's job timeout (docs/kmd.md §6) and reported as a lost
 * device instead of a hang: the fence and queue waits return
 * ZE_RESULT_ERROR_DEVICE_LOST once the job has run for job_timeout_ms (not
 * before, and within a few seconds after), the kernel's stores never
 * happened, and the queue stays banned.  A new queue of the same context and
 * a queue of a new context then run the same kernel with a correct bound.
 * Run by timeout.py on a daemon with a short timeout, which also checks the
 * daemon's statistics and message.
 *   test_timeout hang.elf TIMEOUT_MS */
#include <time.h>
#include <unistd.h>

#include "e2e.h"

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* step2 with an even bound on a new synchronous queue of `ctx`: every work
 * item stores n. */
static void bounded_run(e2e_t *e, const char *path, uint32_t n)
{
	ze_module_handle_t m = e2e_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "step2");
	uint32_t *out = e2e_alloc_shared(e, 8 * sizeof(uint32_t));
	memset(out, 0, 8 * sizeof(uint32_t));
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	const e2e_arg_t args[] = {{8, &out}, {4, &n}};
	e2e_set_args(k, 2, args);
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &imm));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(imm, k, &one, NULL, 0, NULL));
	for (int i = 0; i < 8; i++)
		EXPECT(out[i] == n, "out[%d] = %u on a new queue, expected %u", i, out[i], n);
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: test_timeout hang.elf TIMEOUT_MS");
	const double timeout = atof(argv[2]) / 1000;
	e2e_t e;
	e2e_init(&e);
	printf("timeout: pid %d\n", (int)getpid());
	fflush(stdout);

	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "step2");
	uint32_t *out = e2e_alloc_shared(&e, 8 * sizeof(uint32_t));
	memset(out, 0, 8 * sizeof(uint32_t));
	const uint32_t odd = 7; /* the bug: i = 0, 2, 4, ... never equals 7 */
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	const e2e_arg_t args[] = {{8, &out}, {4, &odd}};
	e2e_set_args(k, 2, args);
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t fence;
	CHECK(zeFenceCreate(e.queue, &fd, &fence));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &one, NULL, 0, NULL));
	CHECK(zeCommandListClose(e.list));

	const double t0 = seconds();
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, fence));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceHostSynchronize(fence, UINT64_MAX));
	const double waited = seconds() - t0;
	EXPECT(waited >= timeout, "the wait ended after %.3f s, before the %.3f s timeout", waited, timeout);
	EXPECT(waited < timeout + 20, "the wait took %.3f s for a %.3f s timeout", waited, timeout);
	printf("timeout: DEVICE_LOST after %.2f s\n", waited);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceQueryStatus(fence));
	for (int i = 0; i < 8; i++)
		EXPECT(out[i] == 0, "out[%d] = %u: the stopped kernel stored", i, out[i]);
	/* The queue is banned: a new submission on it fails at once. */
	const double t1 = seconds();
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	EXPECT(seconds() - t1 < 5, "a submission on the banned queue took %.3f s", seconds() - t1);

	/* A new queue of the same context, then a new context, run correctly. */
	bounded_run(&e, argv[1], 1000);
	e2e_t e2 = {.drv = e.drv, .dev = e.dev};
	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	CHECK(zeContextCreate(e.drv, &cd, &e2.ctx));
	bounded_run(&e2, argv[1], 2000);
	CHECK(zeContextDestroy(e2.ctx));

	CHECK(zeFenceDestroy(fence));
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	printf("timeout: a kernel that never ends is a lost device after the job timeout; new queues run\n");
	return 0;
}
