/* Events, fences and timestamps.  argv[1]: misc.elf
 *  - kernel timestamps: start < end, in submission order, inside the window
 *    of zeDeviceGetGlobalTimestamps taken before and after, equal to what
 *    zeCommandListAppendQueryKernelTimestamps copies, next to a global
 *    timestamp written by zeCommandListAppendWriteGlobalTimestamp;
 *  - fences: pending, signalled, reset, created signalled, timeouts;
 *  - a list waiting on an event the host signals later, across two queues;
 *  - device-side event reset and signal, host reset;
 *  - a thread blocked in zeEventHostSynchronize while another thread
 *    submits the work that signals it. */
#include <pthread.h>
#include <time.h>

#include "e2e.h"

static void *host_sync_thread(void *ev)
{
	static ze_result_t r;
	r = zeEventHostSynchronize((ze_event_handle_t)ev, UINT64_MAX);
	return &r;
}

static ze_event_handle_t make_event(ze_event_pool_handle_t pool, uint32_t index)
{
	ze_event_desc_t d = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = index,
			     .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &d, &ev));
	return ev;
}

static void set_busy(ze_kernel_handle_t k, uint32_t *out, uint32_t iters)
{
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &out));
	CHECK(zeKernelSetArgumentValue(k, 1, 4, &iters));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_events misc.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t busy = e2e_kernel(m, "busy");
	CHECK(zeKernelSetGroupSize(busy, 8, 1, 1));
	const ze_group_count_t one = {1, 1, 1};

	ze_event_pool_desc_t tpd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				    .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				    .count = 4};
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 4};
	ze_event_pool_handle_t tpool, pool;
	CHECK(zeEventPoolCreate(e.ctx, &tpd, 1, &e.dev, &tpool));
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	ze_event_handle_t ts0 = make_event(tpool, 0), ts1 = make_event(tpool, 1);
	ze_event_handle_t ev0 = make_event(pool, 0), ev1 = make_event(pool, 1), ev2 = make_event(pool, 2);

	uint32_t *out = e2e_alloc_shared(&e, 4096);
	uint64_t *gts = e2e_alloc_shared(&e, 64);
	ze_kernel_timestamp_result_t *res = e2e_alloc_shared(&e, 2 * sizeof(*res));
	memset(res, 0, 2 * sizeof(*res));

	/* ---- kernel timestamps and a fence ---- */
	ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	CHECK(zeDeviceGetProperties(e.dev, &dp));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t fence;
	CHECK(zeFenceCreate(e.queue, &fd, &fence));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 0));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(ts0, &res[0]));

	set_busy(busy, out, 2000);
	CHECK(zeCommandListAppendLaunchKernel(e.list, busy, &one, ts0, 0, NULL));
	set_busy(busy, out + 8, 3000);
	CHECK(zeCommandListAppendLaunchKernel(e.list, busy, &one, ts1, 1, &ts0));
	CHECK(zeCommandListAppendWriteGlobalTimestamp(e.list, gts, NULL, 0, NULL));
	ze_event_handle_t both[2] = {ts0, ts1};
	CHECK(zeCommandListAppendQueryKernelTimestamps(e.list, 2, both, res, NULL, NULL, 0, NULL));
	CHECK(zeCommandListClose(e.list));
	uint64_t host0, dev0, host1, dev1;
	CHECK(zeDeviceGetGlobalTimestamps(e.dev, &host0, &dev0));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, fence));
	CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
	CHECK(zeFenceQueryStatus(fence));
	CHECK(zeDeviceGetGlobalTimestamps(e.dev, &host1, &dev1));
	CHECK(zeEventQueryStatus(ts0));
	CHECK(zeEventHostSynchronize(ts1, 0));
	EXPECT(out[0] == 2000 && out[7] == 2000 && out[8] == 3000 && out[15] == 3000, "busy kernels wrote %u %u",
	       out[0], out[8]);

	ze_kernel_timestamp_result_t k0, k1;
	CHECK(zeEventQueryKernelTimestamp(ts0, &k0));
	CHECK(zeEventQueryKernelTimestamp(ts1, &k1));
	EXPECT(k0.global.kernelStart < k0.global.kernelEnd && k1.global.kernelStart < k1.global.kernelEnd,
	       "kernels take time: [%llu, %llu] [%llu, %llu]", (unsigned long long)k0.global.kernelStart,
	       (unsigned long long)k0.global.kernelEnd, (unsigned long long)k1.global.kernelStart,
	       (unsigned long long)k1.global.kernelEnd);
	EXPECT(k0.global.kernelEnd <= k1.global.kernelStart, "in order");
	EXPECT(k1.global.kernelEnd - k1.global.kernelStart > k0.global.kernelEnd - k0.global.kernelStart,
	       "3000 iterations take longer than 2000");
	EXPECT(dev0 <= k0.global.kernelStart && k1.global.kernelEnd <= gts[0] && gts[0] <= dev1,
	       "device clock: before %llu, kernels [%llu, %llu], global timestamp %llu, after %llu",
	       (unsigned long long)dev0, (unsigned long long)k0.global.kernelStart,
	       (unsigned long long)k1.global.kernelEnd, (unsigned long long)gts[0], (unsigned long long)dev1);
	EXPECT(k0.context.kernelStart == k0.global.kernelStart && k0.context.kernelEnd == k0.global.kernelEnd,
	       "context timestamps");
	EXPECT(memcmp(&res[0], &k0, sizeof(k0)) == 0 && memcmp(&res[1], &k1, sizeof(k1)) == 0,
	       "zeCommandListAppendQueryKernelTimestamps copied [%llu, %llu], expected [%llu, %llu]",
	       (unsigned long long)res[0].global.kernelStart, (unsigned long long)res[0].global.kernelEnd,
	       (unsigned long long)k0.global.kernelStart, (unsigned long long)k0.global.kernelEnd);
	const double ns = (double)(k0.global.kernelEnd - k0.global.kernelStart) * (double)dp.timerResolution;
	EXPECT(host0 < host1, "host clock");

	/* Re-execute the same closed list after a fence reset. */
	CHECK(zeFenceReset(fence));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
	CHECK(zeEventHostReset(ts0));
	CHECK(zeEventHostReset(ts1));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ts0));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, fence));
	CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
	CHECK(zeEventQueryKernelTimestamp(ts1, &k1));
	EXPECT(k1.global.kernelStart > dev1, "second run after the first");
	CHECK(zeCommandListReset(e.list));

	ze_fence_desc_t sfd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC, .flags = ZE_FENCE_FLAG_SIGNALED};
	ze_fence_handle_t sfence;
	CHECK(zeFenceCreate(e.queue, &sfd, &sfence));
	CHECK(zeFenceQueryStatus(sfence));
	CHECK(zeFenceHostSynchronize(sfence, 0));
	CHECK(zeFenceDestroy(sfence));

	/* ---- a device wait on a host-signalled event, across two queues ---- */
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
	ze_command_queue_handle_t q2;
	CHECK(zeCommandQueueCreate(e.ctx, e.dev, &qd, &q2));
	ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
	ze_command_list_handle_t l2;
	CHECK(zeCommandListCreate(e.ctx, e.dev, &ld, &l2));
	/* queue 1: wait for the host (ev0), run, signal ev1; queue 2: wait for ev1, run, signal ev2 */
	out[16] = out[24] = 0;
	set_busy(busy, out + 16, 500);
	CHECK(zeCommandListAppendLaunchKernel(e.list, busy, &one, ev1, 1, &ev0));
	CHECK(zeCommandListClose(e.list));
	set_busy(busy, out + 24, 600);
	CHECK(zeCommandListAppendWaitOnEvents(l2, 1, &ev1));
	CHECK(zeCommandListAppendLaunchKernel(l2, busy, &one, NULL, 0, NULL));
	CHECK(zeCommandListAppendSignalEvent(l2, ev2));
	CHECK(zeCommandListClose(l2));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK(zeCommandQueueExecuteCommandLists(q2, 1, &l2, NULL));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev1, 20000000));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(e.queue, 0));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev2));
	EXPECT(out[16] == 0 && out[24] == 0, "ran before the host signalled");
	CHECK(zeEventHostSignal(ev0));
	CHECK(zeEventHostSynchronize(ev2, UINT64_MAX));
	CHECK(zeEventQueryStatus(ev1));
	EXPECT(out[16] == 500 && out[24] == 600, "after the signal: %u %u", out[16], out[24]);
	CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	CHECK(zeCommandQueueSynchronize(q2, UINT64_MAX));

	/* ---- device-side reset and signal, host reset ---- */
	CHECK(zeCommandListReset(l2));
	CHECK(zeCommandListAppendEventReset(l2, ev1));
	CHECK(zeCommandListAppendEventReset(l2, ev2));
	CHECK(zeCommandListAppendSignalEvent(l2, ev2));
	CHECK(zeCommandListAppendBarrier(l2, NULL, 0, NULL));
	CHECK(zeCommandListClose(l2));
	CHECK(zeCommandQueueExecuteCommandLists(q2, 1, &l2, NULL));
	CHECK(zeCommandQueueSynchronize(q2, UINT64_MAX));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev1));
	CHECK(zeEventQueryStatus(ev2));
	CHECK(zeEventHostReset(ev2));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev2, 0));

	/* ---- one thread waits, another submits ---- */
	pthread_t th;
	CHECK(zeEventHostReset(ev1));
	EXPECT(pthread_create(&th, NULL, host_sync_thread, ev1) == 0, "pthread_create");
	struct timespec pause = {0, 30000000};
	nanosleep(&pause, NULL); /* let it block in the driver */
	CHECK(zeCommandListReset(l2));
	set_busy(busy, out + 32, 100);
	CHECK(zeCommandListAppendLaunchKernel(l2, busy, &one, ev1, 0, NULL));
	CHECK(zeCommandListClose(l2));
	CHECK(zeCommandQueueExecuteCommandLists(q2, 1, &l2, NULL));
	void *res_thread;
	pthread_join(th, &res_thread);
	CHECK(*(ze_result_t *)res_thread);
	EXPECT(out[32] == 100, "the waited-for kernel ran: %u", out[32]);

	CHECK(zeCommandListDestroy(l2));
	CHECK(zeCommandQueueDestroy(q2));
	CHECK(zeFenceDestroy(fence));
	CHECK(zeEventDestroy(ts0));
	CHECK(zeEventDestroy(ts1));
	CHECK(zeEventDestroy(ev0));
	CHECK(zeEventDestroy(ev1));
	CHECK(zeEventDestroy(ev2));
	CHECK(zeEventPoolDestroy(tpool));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeMemFree(e.ctx, gts));
	CHECK(zeMemFree(e.ctx, res));
	CHECK(zeKernelDestroy(busy));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("events: kernel of 2000 iterations took %.0f ns of device time", ns);
	return 0;
}
