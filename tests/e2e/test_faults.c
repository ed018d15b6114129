/* Faulting kernels reach the program (issue 11, item 2).  argv[1]: misc.elf,
 * argv[2]: "fail" (the daemon's default fault_mode) or "continue".
 * A kernel stores through five kinds of bad address: low and high unmapped
 * addresses, a non-canonical one, a freed allocation and a misaligned int *.
 * With fault_mode fail, each launch's queue reports ZE_RESULT_ERROR_DEVICE_LOST
 * (fence, queue synchronize, event) and nothing is written; a new queue still
 * works.  With fault_mode continue the launch "succeeds" (the faulting thread
 * simply ends).  Prints "fault-case NAME ADDRESS" per case for faults.py, which
 * checks the daemon's log names each address. */
#include <sys/mman.h>

#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: test_faults misc.elf fail|continue");
	const int fail = strcmp(argv[2], "fail") == 0;
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t poke = e2e_kernel(m, "poke");
	CHECK(zeKernelSetGroupSize(poke, 1, 1, 1));
	const ze_group_count_t one = {1, 1, 1};
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));

	uint32_t *good = e2e_alloc_shared(&e, 4096);
	memset(good, 0, 4096);
	uint32_t *freed = e2e_alloc_device(&e, 4096);
	CHECK(zeMemFree(e.ctx, freed));
	/* GPU addresses are the host addresses of the mappings: hold the freed
	 * range so that no later allocation (a command list's batch) reuses it. */
	EXPECT(mmap(freed, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == freed,
	       "cannot reserve the freed range");
	const struct {
		const char *name;
		uintptr_t addr;
	} cases[] = {
		{"low", 0x1000},
		{"high", 0x7ffffff00000ull},
		{"non-canonical", 0x8000000000001000ull},
		{"freed", (uintptr_t)freed},
		{"misaligned", (uintptr_t)good + 1},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ze_command_queue_handle_t q;
		ze_command_list_handle_t l;
		e2e_fresh_queue(&e, &q, &l);
		ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST};
		ze_event_handle_t ev;
		CHECK(zeEventCreate(pool, &ed, &ev));
		ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
		ze_fence_handle_t f;
		CHECK(zeFenceCreate(q, &fd, &f));
		void *p = (void *)cases[i].addr;
		CHECK(zeKernelSetArgumentValue(poke, 0, sizeof(p), &p));
		CHECK(zeCommandListAppendLaunchKernel(l, poke, &one, ev, 0, NULL));
		CHECK(zeCommandListClose(l));
		printf("fault-case %s 0x%llx\n", cases[i].name, (unsigned long long)cases[i].addr);
		fflush(stdout);
		CHECK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
		if (fail) {
			CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceHostSynchronize(f, 20000000000ull));
			CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueSynchronize(q, 20000000000ull));
			CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeEventHostSynchronize(ev, 20000000000ull));
			CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));
		} else {
			CHECK(zeFenceHostSynchronize(f, 20000000000ull));
			CHECK(zeEventHostSynchronize(ev, 20000000000ull));
		}
		for (int w = 0; w < 1024; w++)
			EXPECT(good[w] == 0, "%s: good[%d] = %u: a faulting store landed", cases[i].name, w, good[w]);
		CHECK(zeFenceDestroy(f));
		CHECK(zeEventDestroy(ev));
		CHECK(zeCommandListDestroy(l));
		CHECK(zeCommandQueueDestroy(q));
	}
	/* A new queue still runs work. */
	ze_command_queue_desc_t sd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e.ctx, e.dev, &sd, &imm));
	CHECK(zeKernelSetArgumentValue(poke, 0, sizeof(good), &good));
	CHECK(zeCommandListAppendLaunchKernel(imm, poke, &one, NULL, 0, NULL));
	EXPECT(good[0] == 7, "good[0] = %u after a launch on a new queue", good[0]);
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeMemFree(e.ctx, good));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeKernelDestroy(poke));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	printf("faults: %s\n", fail ? "every faulting kernel was reported as a lost device" : "faults ignored");
	return 0;
}
