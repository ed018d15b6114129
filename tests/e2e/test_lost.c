/* A device-side failure is reported, never a hang.  A list writes a global
 * timestamp into memory the application frees before executing it: the
 * post-sync write faults, the KMD resets the engine and bans the queue.
 * Queue and fence waits, an event the dead job would have signalled, and
 * the device status all report ZE_RESULT_ERROR_DEVICE_LOST; a new queue
 * still runs work (the KMD banned only the failing one).  argv[1]: misc.elf */
#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_lost misc.elf");
	e2e_t e;
	e2e_init(&e);
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t fence;
	CHECK(zeFenceCreate(e.queue, &fd, &fence));

	uint64_t *ts = e2e_alloc_device(&e, 64);
	CHECK(zeCommandListAppendWriteGlobalTimestamp(e.list, ts, NULL, 0, NULL));
	CHECK(zeCommandListAppendSignalEvent(e.list, ev));
	CHECK(zeCommandListClose(e.list));
	CHECK(zeMemFree(e.ctx, ts)); /* the bug under test */
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, fence));

	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeEventHostSynchronize(ev, UINT64_MAX));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceHostSynchronize(fence, UINT64_MAX));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceQueryStatus(fence));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeDeviceGetStatus(e.dev));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeContextGetStatus(e.ctx));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));

	/* Another queue is unaffected. */
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t inc = e2e_kernel(m, "inc");
	uint32_t *counter = e2e_alloc_shared(&e, 4);
	*counter = 0;
	CHECK(zeKernelSetGroupSize(inc, 8, 1, 1));
	CHECK(zeKernelSetArgumentValue(inc, 0, 8, &counter));
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e.ctx, e.dev, &qd, &imm));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(imm, inc, &one, NULL, 0, NULL));
	EXPECT(*counter == 8, "counter %u on a new queue", *counter);

	CHECK(zeCommandListDestroy(imm));
	CHECK(zeMemFree(e.ctx, counter));
	CHECK(zeKernelDestroy(inc));
	CHECK(zeModuleDestroy(m));
	CHECK(zeFenceDestroy(fence));
	CHECK(zeEventDestroy(ev));
	CHECK(zeEventPoolDestroy(pool));
	e2e_fini(&e);
	note("lost: a faulting batch is reported as a lost device");
	return 0;
}
