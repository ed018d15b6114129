/* Immediate command lists.  argv[1]: misc.elf
 *  - synchronous mode: every append has completed when it returns;
 *  - asynchronous mode: a thousand launches in flight (the list recycles
 *    its GPU memory as the queue completes them), ordered, then an event;
 *  - waits on events signalled by the host and by a regular queue. */
#include "e2e.h"

static ze_command_list_handle_t immediate(e2e_t *e, ze_command_queue_mode_t mode)
{
	ze_command_queue_desc_t d = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .mode = mode};
	ze_command_list_handle_t l;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &d, &l));
	return l;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_immediate misc.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t inc = e2e_kernel(m, "inc");
	CHECK(zeKernelSetGroupSize(inc, 1, 1, 1));
	uint32_t *counter = e2e_alloc_shared(&e, 64), *buf = e2e_alloc_device(&e, 4096);
	uint32_t *host = e2e_alloc_host(&e, 4096);
	CHECK(zeKernelSetArgumentValue(inc, 0, 8, &counter));
	const ze_group_count_t one = {1, 1, 1};

	/* ---- synchronous ---- */
	ze_command_list_handle_t sync = immediate(&e, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
	const uint32_t zero = 0, pattern = 0x5a5a1234;
	CHECK(zeCommandListAppendMemoryFill(sync, counter, &zero, 4, 64, NULL, 0, NULL));
	EXPECT(counter[0] == 0 && counter[15] == 0, "fill done on return");
	CHECK(zeCommandListAppendLaunchKernel(sync, inc, &one, NULL, 0, NULL));
	EXPECT(counter[0] == 1, "launch done on return: %u", counter[0]);
	CHECK(zeCommandListAppendMemoryFill(sync, buf, &pattern, 4, 4096, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(sync, host, buf, 4096, NULL, 0, NULL));
	for (int i = 0; i < 1024; i++)
		EXPECT(host[i] == pattern, "host[%d] = %#x", i, host[i]);
	/* Close and reset are allowed and change nothing. */
	CHECK(zeCommandListClose(sync));
	CHECK(zeCommandListReset(sync));
	CHECK(zeCommandListAppendLaunchKernel(sync, inc, &one, NULL, 0, NULL));
	EXPECT(counter[0] == 2, "counter %u", counter[0]);

	/* ---- asynchronous: many appends in flight ---- */
	ze_command_list_handle_t async = immediate(&e, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 4};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 1, &e.dev, &pool));
	ze_event_handle_t ev[4];
	for (uint32_t i = 0; i < 4; i++) {
		ze_event_desc_t d = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = i};
		CHECK(zeEventCreate(pool, &d, &ev[i]));
	}
	const uint32_t launches = 1000;
	for (uint32_t i = 0; i < launches; i++)
		CHECK(zeCommandListAppendLaunchKernel(async, inc, &one, NULL, 0, NULL));
	/* Copy the running count: in order after every launch. */
	CHECK(zeCommandListAppendMemoryCopy(async, host, counter, 4, ev[0], 0, NULL));
	CHECK(zeEventHostSynchronize(ev[0], UINT64_MAX));
	EXPECT(host[0] == 2 + launches, "after %u async launches: %u", launches, host[0]);

	/* ---- waiting on the host ---- */
	CHECK(zeCommandListAppendLaunchKernel(async, inc, &one, ev[2], 1, &ev[1]));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev[2], 10000000));
	EXPECT(counter[0] == 2 + launches, "ran before its wait event");
	CHECK(zeEventHostSignal(ev[1]));
	CHECK(zeEventHostSynchronize(ev[2], UINT64_MAX));
	EXPECT(counter[0] == 3 + launches, "counter %u", counter[0]);

	/* ---- waiting on a regular queue ---- */
	CHECK(zeEventHostReset(ev[1]));
	CHECK(zeEventHostReset(ev[2]));
	CHECK(zeCommandListAppendMemoryFill(e.list, counter, &zero, 4, 4, NULL, 1, &ev[3]));
	CHECK(zeCommandListAppendSignalEvent(e.list, ev[1]));
	CHECK(zeCommandListClose(e.list));
	/* The simulated engine runs one batch at a time in submission order
	 * (no time-slicing): the batch that signals must be submitted before
	 * the one that waits (driver/README.md, "Limitations"). */
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK(zeCommandListAppendLaunchKernel(async, inc, &one, ev[2], 1, &ev[1]));
	CHECK(zeEventHostSignal(ev[3]));
	CHECK(zeEventHostSynchronize(ev[2], UINT64_MAX));
	EXPECT(counter[0] == 1, "regular queue's fill, then the immediate launch: %u", counter[0]);
	CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));

	for (uint32_t i = 0; i < 4; i++)
		CHECK(zeEventDestroy(ev[i]));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeCommandListDestroy(sync));
	CHECK(zeCommandListDestroy(async));
	CHECK(zeMemFree(e.ctx, counter));
	CHECK(zeMemFree(e.ctx, buf));
	CHECK(zeMemFree(e.ctx, host));
	CHECK(zeKernelDestroy(inc));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("immediate: synchronous and %u asynchronous appends", launches);
	return 0;
}
