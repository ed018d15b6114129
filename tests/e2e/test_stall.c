/* Host waits honour their timeouts when the daemon does not answer
 * (issue 11 item 6; docs/preload.md §5).  Driven by stall.py, which owns the
 * daemon and stops, resumes and kills it when this program asks on stdout;
 * it answers on stdin once done.
 *
 *   1. A vadd job waits on a host event W, so its fence F, its signal event E
 *      and the queue stay busy.  "stop": the daemon is SIGSTOPped.
 *      zeEventHostSynchronize(E), zeFenceHostSynchronize(F) and
 *      zeCommandQueueSynchronize with a 2 s timeout must each give NOT_READY
 *      within 2.1 s (the daemon still owes the reply of the last fence wait).
 *      Then another thread allocates device memory (ioctls that block until
 *      the daemon resumes, holding the connection); the same waits with a 1 s
 *      timeout must give NOT_READY within 1.1 s.
 *   2. "cont": the daemon resumes.  The allocation completes, W is signalled,
 *      the same waits without a timeout succeed with the right results, and a
 *      second launch runs: the late replies were discarded.
 *   3. Another job waits on W again; "kill": the daemon is SIGKILLed.  The
 *      three waits (5 s timeout) give DEVICE_LOST within 1 s each.
 *
 *   test_stall vadd.elf */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "e2e.h"

#define N 64
#define STOP_TIMEOUT_NS 2000000000ull

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Ask the driver script for `what` and wait for its answer. */
static void ask(const char *what)
{
	printf("stall: %s\n", what);
	fflush(stdout);
	char line[64];
	EXPECT(fgets(line, sizeof(line), stdin) != NULL, "no answer to \"%s\"", what);
	EXPECT(strncmp(line, what, strlen(what)) == 0, "answer \"%s\" to \"%s\"", line, what);
}

static e2e_t g_e;
static void *g_alloc;
static ze_result_t g_alloc_result = ZE_RESULT_ERROR_UNKNOWN;
static int g_alloc_started;

static void *allocate(void *unused)
{
	(void)unused;
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	__atomic_store_n(&g_alloc_started, 1, __ATOMIC_RELEASE);
	g_alloc_result = zeMemAllocDevice(g_e.ctx, &dd, 4096, 64, g_e.dev, &g_alloc);
	return NULL;
}

/* Each host synchronization with `timeout`, expecting `want` within `limit` seconds. */
static void waits(ze_event_handle_t ev, ze_fence_handle_t fence, uint64_t timeout, ze_result_t want, double limit,
		  const char *phase)
{
	const char *names[3] = {"zeEventHostSynchronize", "zeFenceHostSynchronize", "zeCommandQueueSynchronize"};
	for (int i = 0; i < 3; i++) {
		const double t0 = seconds();
		ze_result_t r = i == 0	 ? zeEventHostSynchronize(ev, timeout)
				: i == 1 ? zeFenceHostSynchronize(fence, timeout)
					 : zeCommandQueueSynchronize(g_e.queue, timeout);
		const double took = seconds() - t0;
		printf("stall: %s: %s returned 0x%x after %.3f s\n", phase, names[i], (unsigned)r, took);
		fflush(stdout);
		EXPECT(r == want, "%s: %s returned 0x%x, expected 0x%x", phase, names[i], (unsigned)r, (unsigned)want);
		EXPECT(took <= limit, "%s: %s took %.3f s, limit %.3f s", phase, names[i], took, limit);
	}
}

static ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index)
{
	ze_event_desc_t d = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = index,
			     .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &d, &ev));
	return ev;
}

/* c = a + b after the host signals `w`; signals `e` when done. */
static void submit(ze_kernel_handle_t k, ze_event_handle_t w, ze_event_handle_t e, ze_fence_handle_t fence)
{
	const ze_group_count_t groups = {N / 16, 1, 1};
	CHECK(zeCommandListReset(g_e.list));
	CHECK(zeCommandListAppendLaunchKernel(g_e.list, k, &groups, e, 1, &w));
	CHECK(zeCommandListClose(g_e.list));
	CHECK(zeFenceReset(fence));
	CHECK(zeCommandQueueExecuteCommandLists(g_e.queue, 1, &g_e.list, fence));
}

static void check_sum(const float *c, float want_at_1)
{
	for (int i = 0; i < N; i++)
		EXPECT(c[i] == (float)i * want_at_1, "c[%d] = %g, expected %g", i, c[i], (float)i * want_at_1);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_stall vadd.elf");
	e2e_init(&g_e);
	ze_module_handle_t m = e2e_module(&g_e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	float *a = e2e_alloc_shared(&g_e, N * sizeof(float)), *b = e2e_alloc_shared(&g_e, N * sizeof(float));
	float *c = e2e_alloc_shared(&g_e, N * sizeof(float));
	for (int i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 2.0f * (float)i;
		c[i] = -1;
	}
	const uint32_t n = N;
	CHECK(zeKernelSetGroupSize(k, 16, 1, 1));
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}, {4, &n}};
	e2e_set_args(k, 4, args);
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 2};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(g_e.ctx, &pd, 0, NULL, &pool));
	ze_event_handle_t w = make_event(pool, 0), e = make_event(pool, 1);
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t fence;
	CHECK(zeFenceCreate(g_e.queue, &fd, &fence));

	/* 1. The daemon stopped while a job waits on the host. */
	submit(k, w, e, fence);
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(e, 10000000));
	ask("stop");
	waits(e, fence, STOP_TIMEOUT_NS, ZE_RESULT_NOT_READY, 2.1, "stopped");
	pthread_t t;
	EXPECT(pthread_create(&t, NULL, allocate, NULL) == 0, "pthread_create");
	while (!__atomic_load_n(&g_alloc_started, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(100000); /* the allocation's ioctls are now stuck on the stopped daemon */
	waits(e, fence, STOP_TIMEOUT_NS / 2, ZE_RESULT_NOT_READY, 1.1, "stopped, another thread stuck");
	EXPECT(g_alloc_result == ZE_RESULT_ERROR_UNKNOWN, "the allocation returned 0x%x with the daemon stopped",
	       (unsigned)g_alloc_result);

	/* 2. Resumed: the late replies are discarded, everything proceeds. */
	ask("cont");
	EXPECT(pthread_join(t, NULL) == 0, "pthread_join");
	CHECK(g_alloc_result);
	CHECK(zeEventHostSignal(w));
	waits(e, fence, UINT64_MAX, ZE_RESULT_SUCCESS, 60, "resumed");
	check_sum(c, 3);
	CHECK(zeEventHostReset(w));
	CHECK(zeEventHostReset(e));
	for (int i = 0; i < N; i++)
		b[i] = 4.0f * (float)i;
	submit(k, w, e, fence);
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 1000000));
	CHECK(zeEventHostSignal(w));
	waits(e, fence, UINT64_MAX, ZE_RESULT_SUCCESS, 60, "again");
	check_sum(c, 5);
	CHECK(zeMemFree(g_e.ctx, g_alloc));

	/* 3. The daemon killed while a job waits: the device is lost, at once. */
	CHECK(zeEventHostReset(w));
	CHECK(zeEventHostReset(e));
	submit(k, w, e, fence);
	ask("kill");
	waits(e, fence, 5 * STOP_TIMEOUT_NS / 2, ZE_RESULT_ERROR_DEVICE_LOST, 1.0, "killed");
	printf("stall: ok\n");
	return 0;
}
