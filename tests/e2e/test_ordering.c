/* In-order queues (issue 11, item 1).  argv[1]: misc.elf
 * A queue's work completes in submission order, even when its first job is
 * parked at a semaphore (a wait on a host event) to let other queues run:
 *  - immediate list: A waits on a host event and counts X; B counts Y; a
 *    barrier signals E.  Until the host signals, E is not signalled and
 *    neither X nor Y moved; another queue's work still runs meanwhile;
 *  - command queue: l1 (waits on a host event) then l2; fence f2, fence f1
 *    and zeCommandQueueSynchronize all report NOT_READY until the host
 *    signals, and l2's count stays 0. */
#include "e2e.h"

#define WAIT_NS 300000000ull /* long enough for the daemon to park and run the rest */

static ze_command_list_handle_t immediate(e2e_t *e)
{
	ze_command_queue_desc_t d = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				     .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
	ze_command_list_handle_t l;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &d, &l));
	return l;
}

static ze_kernel_handle_t counter_kernel(ze_module_handle_t m, uint32_t *counter)
{
	ze_kernel_handle_t k = e2e_kernel(m, "inc");
	CHECK(zeKernelSetGroupSize(k, 1, 1, 1));
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &counter));
	return k;
}

static volatile uint32_t *at(uint32_t *c) { return c; }

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_ordering misc.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	uint32_t *c = e2e_alloc_shared(&e, 4096);
	memset(c, 0, 4096);
	uint32_t *x = c, *y = c + 16, *z = c + 32, *x2 = c + 48, *y2 = c + 64;
	ze_kernel_handle_t kx = counter_kernel(m, x), ky = counter_kernel(m, y), kz = counter_kernel(m, z);
	ze_kernel_handle_t kx2 = counter_kernel(m, x2), ky2 = counter_kernel(m, y2);
	const ze_group_count_t one = {1, 1, 1};

	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 4};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 1, &e.dev, &pool));
	ze_event_handle_t host_ev, done_ev, host_ev2, other_ev;
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0,
			      .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	CHECK(zeEventCreate(pool, &ed, &host_ev));
	ed.index = 1;
	CHECK(zeEventCreate(pool, &ed, &done_ev));
	ed.index = 2;
	CHECK(zeEventCreate(pool, &ed, &host_ev2));
	ed.index = 3;
	CHECK(zeEventCreate(pool, &ed, &other_ev));

	/* ---- immediate list ---- */
	ze_command_list_handle_t il = immediate(&e), other = immediate(&e);
	CHECK(zeCommandListAppendLaunchKernel(il, kx, &one, NULL, 1, &host_ev));
	CHECK(zeCommandListAppendLaunchKernel(il, ky, &one, NULL, 0, NULL));
	CHECK(zeCommandListAppendBarrier(il, done_ev, 0, NULL));
	/* Another queue's work must still get the engine. */
	CHECK(zeCommandListAppendLaunchKernel(other, kz, &one, other_ev, 0, NULL));
	CHECK(zeEventHostSynchronize(other_ev, 20000000000ull));
	EXPECT(*at(z) == 1, "the other queue's kernel did not run while the first waited: z = %u", *at(z));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(done_ev, WAIT_NS));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(done_ev));
	EXPECT(*at(x) == 0, "A ran before its host event: x = %u", *at(x));
	EXPECT(*at(y) == 0, "B overtook A, which still waits for its host event: y = %u", *at(y));
	CHECK(zeEventHostSignal(host_ev));
	CHECK(zeEventHostSynchronize(done_ev, 20000000000ull));
	EXPECT(*at(x) == 1 && *at(y) == 1, "after the signal: x = %u, y = %u", *at(x), *at(y));
	note("immediate list: B waited for A (parked at its host event), another queue ran meanwhile");

	/* ---- command queue and fences ---- */
	ze_command_list_handle_t l1, l2;
	ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
	CHECK(zeCommandListCreate(e.ctx, e.dev, &ld, &l1));
	CHECK(zeCommandListCreate(e.ctx, e.dev, &ld, &l2));
	CHECK(zeCommandListAppendLaunchKernel(l1, kx2, &one, NULL, 1, &host_ev2));
	CHECK(zeCommandListClose(l1));
	CHECK(zeCommandListAppendLaunchKernel(l2, ky2, &one, NULL, 0, NULL));
	CHECK(zeCommandListClose(l2));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t f1, f2;
	CHECK(zeFenceCreate(e.queue, &fd, &f1));
	CHECK(zeFenceCreate(e.queue, &fd, &f2));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &l1, f1));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &l2, f2));
	/* Other work again, so that the KMD has a reason to park l1. */
	CHECK(zeEventHostReset(other_ev));
	CHECK(zeCommandListAppendLaunchKernel(other, kz, &one, other_ev, 0, NULL));
	CHECK(zeEventHostSynchronize(other_ev, 20000000000ull));
	EXPECT(*at(z) == 2, "z = %u", *at(z));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(f2, WAIT_NS));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceQueryStatus(f1));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeFenceQueryStatus(f2));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(e.queue, WAIT_NS));
	EXPECT(*at(x2) == 0 && *at(y2) == 0, "l2 completed before l1: x2 = %u, y2 = %u", *at(x2), *at(y2));
	CHECK(zeEventHostSignal(host_ev2));
	CHECK(zeFenceHostSynchronize(f2, 20000000000ull));
	CHECK(zeFenceQueryStatus(f1));
	CHECK(zeCommandQueueSynchronize(e.queue, 20000000000ull));
	EXPECT(*at(x2) == 1 && *at(y2) == 1, "after the signal: x2 = %u, y2 = %u", *at(x2), *at(y2));
	note("command queue: fences and synchronize waited for l1, l2 ran after it");

	CHECK(zeFenceDestroy(f1));
	CHECK(zeFenceDestroy(f2));
	CHECK(zeCommandListDestroy(l1));
	CHECK(zeCommandListDestroy(l2));
	CHECK(zeCommandListDestroy(il));
	CHECK(zeCommandListDestroy(other));
	CHECK(zeEventDestroy(host_ev));
	CHECK(zeEventDestroy(host_ev2));
	CHECK(zeEventDestroy(done_ev));
	CHECK(zeEventDestroy(other_ev));
	CHECK(zeEventPoolDestroy(pool));
	ze_kernel_handle_t ks[] = {kx, ky, kz, kx2, ky2};
	for (int i = 0; i < 5; i++)
		CHECK(zeKernelDestroy(ks[i]));
	CHECK(zeModuleDestroy(m));
	CHECK(zeMemFree(e.ctx, c));
	e2e_fini(&e);
	note("ordering: OK");
	return 0;
}
