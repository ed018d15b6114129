/* Calls between native modules (issue 15 item 4; docs/isa.md §3.5, driver/README.md
 * "Calls between modules"): a kernel of module A calls a function of module B
 * through the address zeModuleGetFunctionPointer gave, passed as a qword kernel
 * argument, with `calla`.
 *
 *   test_native_call call_a.elf call_b.elf calls    results (e2e_native_call)
 *   test_native_call call_a.elf call_b.elf faults   faults (e2e_native_call_faults)
 *
 * calls: every result against the value computed here in C — B's function alone,
 * B's function calling another function of B with `call`, B calling back into A
 * through a second pointer (ping-pong), one kernel launched twice in one list with a
 * different callee each time, the same callee twice in one thread, a kernel of B
 * called at its entry (its address from zeModuleGetFunctionPointer); the errors of
 * zeModuleGetFunctionPointer.
 * faults (fault_mode fail): a callee that stores to an unmapped address, a pointer
 * that is not 16-byte aligned, and a pointer into module B after zeModuleDestroy(B):
 * each launch's fence, queue and event report ZE_RESULT_ERROR_DEVICE_LOST and nothing
 * is written; a fresh queue then runs a good call.  Prints "fault-case NAME key=0x..."
 * per case for native_call.py, which checks the daemon's fault lines. */
#include <sys/mman.h>
#include <unistd.h>

#include "e2e.h"

#define GROUPS 4
#define ITEMS (GROUPS * 8)

static uint32_t square_plus(uint32_t x) { return x * x + 3; }
static uint32_t triple(uint32_t x) { return 3 * x + 1; }
static uint32_t a_five(uint32_t x) { return 5 * x + 2; }
static uint32_t pingpong(uint32_t x) { return a_five(x + 7) ^ 0x55; }

static void *fnptr(ze_module_handle_t m, const char *name)
{
	void *p = NULL;
	CHECK(zeModuleGetFunctionPointer(m, name, &p));
	EXPECT(p && (uintptr_t)p % 16 == 0, "%s at %p: not an instruction address", name, p);
	return p;
}

/* Append call_one(out, fn, back) for ITEMS work items (groups of 8). */
static void append_call(ze_command_list_handle_t l, ze_kernel_handle_t k, uint32_t *out, void *fn, void *back,
			ze_event_handle_t ev)
{
	CHECK(zeKernelSetArgumentValue(k, 0, sizeof(out), &out));
	CHECK(zeKernelSetArgumentValue(k, 1, sizeof(fn), &fn));
	CHECK(zeKernelSetArgumentValue(k, 2, sizeof(back), &back));
	const ze_group_count_t g = {GROUPS, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(l, k, &g, ev, 0, NULL));
}

static void expect_values(const char *what, const uint32_t *out, uint32_t (*f)(uint32_t))
{
	for (uint32_t i = 0; i < ITEMS; i++)
		EXPECT(out[i] == f(i), "%s: out[%u] = %u, expected %u", what, i, out[i], f(i));
}

static uint32_t triple_twice(uint32_t x) { return triple(triple(x)); }
static uint32_t plus9(uint32_t x) { return x + 9; }

static void calls(e2e_t *e, ze_module_handle_t a, ze_module_handle_t b)
{
	/* zeModuleGetFunctionPointer: kernels and functions of each module, no other name. */
	void *sq = fnptr(b, "b_square_plus"), *tr = fnptr(b, "b_triple"), *pp = fnptr(b, "b_pingpong");
	void *five = fnptr(a, "a_five"), *blib = fnptr(b, "b_lib"), *one = fnptr(a, "call_one");
	void *p9 = fnptr(b, "b_plus9");
	EXPECT((uint8_t *)sq > (uint8_t *)blib && (uint8_t *)tr > (uint8_t *)sq && (uint8_t *)five > (uint8_t *)one,
	       "functions lie after their kernels: b_lib %p b_square_plus %p b_triple %p; call_one %p a_five %p", blib,
	       sq, tr, one, five);
	void *p = (void *)0x1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(a, "b_triple", &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(b, "nope", &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(b, "", &p));
	EXPECT(p == (void *)0x1, "a failed lookup wrote %p", p);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeModuleGetFunctionPointer(b, NULL, &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeModuleGetFunctionPointer(b, "b_triple", NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeModuleGetFunctionPointer(NULL, "b_triple", &p));

	ze_kernel_handle_t k = e2e_kernel(a, "call_one"), k2 = e2e_kernel(a, "call_twice");
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	CHECK(zeKernelSetGroupSize(k2, 8, 1, 1));
	uint32_t *out = e2e_alloc_shared(e, 6 * ITEMS * sizeof(uint32_t));
	memset(out, 0xee, 6 * ITEMS * sizeof(uint32_t));
	/* One list, the same kernel with three callees (arguments are copied at the
	 * append), the other kernel calling one callee twice per thread, and the first
	 * again calling a kernel of B at its entry. */
	append_call(e->list, k, out, sq, five, NULL);
	append_call(e->list, k, out + ITEMS, tr, five, NULL);
	append_call(e->list, k, out + 2 * ITEMS, pp, five, NULL);
	CHECK(zeKernelSetArgumentValue(k2, 0, sizeof(void *), &(uint32_t *){out + 3 * ITEMS}));
	CHECK(zeKernelSetArgumentValue(k2, 1, sizeof(tr), &tr));
	const ze_group_count_t g = {GROUPS, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k2, &g, NULL, 0, NULL));
	append_call(e->list, k, out + 4 * ITEMS, p9, five, NULL);
	e2e_run(e);
	expect_values("b_square_plus (calls b_square inside B)", out, square_plus);
	expect_values("b_triple", out + ITEMS, triple);
	expect_values("b_pingpong (calls back into A's a_five)", out + 2 * ITEMS, pingpong);
	expect_values("call_twice b_triple", out + 3 * ITEMS, triple_twice);
	expect_values("kernel b_plus9 called at its entry", out + 4 * ITEMS, plus9);
	for (uint32_t i = 5 * ITEMS; i < 6 * ITEMS; i++)
		EXPECT(out[i] == 0xeeeeeeeeu, "out[%u] = %#x: written past the launches", i, out[i]);

	/* The callee chosen per launch again, on an immediate list. */
	ze_command_queue_desc_t sd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &sd, &imm));
	memset(out, 0, 2 * ITEMS * sizeof(uint32_t));
	append_call(imm, k, out, tr, five, NULL);
	append_call(imm, k, out + ITEMS, sq, five, NULL);
	expect_values("immediate b_triple", out, triple);
	expect_values("immediate b_square_plus", out + ITEMS, square_plus);
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeKernelDestroy(k2));
}

/* Run call_one(out, fn, back) on a fresh queue with a fence and an event; each must
 * report DEVICE_LOST and out must stay untouched. */
static void expect_lost(e2e_t *e, ze_kernel_handle_t k, ze_event_pool_handle_t pool, uint32_t *out, void *fn,
			void *back, const char *name)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	e2e_fresh_queue(e, &q, &l);
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t f;
	CHECK(zeFenceCreate(q, &fd, &f));
	memset(out, 0xee, ITEMS * sizeof(uint32_t));
	append_call(l, k, out, fn, back, ev);
	CHECK(zeCommandListClose(l));
	fflush(stdout);
	CHECK(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeFenceHostSynchronize(f, 20000000000ull));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeCommandQueueSynchronize(q, 20000000000ull));
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, zeEventHostSynchronize(ev, 20000000000ull));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));
	for (uint32_t i = 0; i < ITEMS; i++)
		EXPECT(out[i] == 0xeeeeeeeeu, "%s: out[%u] = %#x: a faulting launch wrote", name, i, out[i]);
	CHECK(zeFenceDestroy(f));
	CHECK(zeEventDestroy(ev));
	CHECK(zeCommandListDestroy(l));
	CHECK(zeCommandQueueDestroy(q));
}

/* call_one(out, fn) on a fresh synchronous immediate list: it must work. */
static void expect_good(e2e_t *e, ze_kernel_handle_t k, uint32_t *out, void *fn, const char *after)
{
	ze_command_queue_desc_t sd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
				      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &sd, &imm));
	memset(out, 0, ITEMS * sizeof(uint32_t));
	append_call(imm, k, out, fn, fn, NULL);
	CHECK(zeCommandListDestroy(imm));
	for (uint32_t i = 0; i < ITEMS; i++)
		EXPECT(out[i] == triple(i), "after %s: out[%u] = %u, expected %u", after, i, out[i], triple(i));
}

static void faults(e2e_t *e, ze_module_handle_t a, ze_module_handle_t b, const char *b_path)
{
	ze_kernel_handle_t k = e2e_kernel(a, "call_one");
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e->ctx, &pd, 0, NULL, &pool));
	uint32_t *out = e2e_alloc_shared(e, ITEMS * sizeof(uint32_t));
	void *bf = fnptr(b, "b_fault"), *tr = fnptr(b, "b_triple"), *one = fnptr(a, "call_one");

	/* The callee stores to 0x1000 (unmapped): the fault names B's code as the base. */
	printf("fault-case callee ib=%#llx kernel=%#llx\n", (unsigned long long)(uintptr_t)bf,
	       (unsigned long long)(uintptr_t)one);
	expect_lost(e, k, pool, out, bf, tr, "callee fault");
	expect_good(e, k, out, tr, "a faulting callee");

	/* A pointer that is not an instruction address: misaligned at the calla. */
	void *mis = (uint8_t *)tr + 8;
	printf("fault-case misaligned target=%#llx kernel=%#llx\n", (unsigned long long)(uintptr_t)mis,
	       (unsigned long long)(uintptr_t)one);
	expect_lost(e, k, pool, out, mis, tr, "misaligned pointer");
	expect_good(e, k, out, tr, "a misaligned pointer");

	/* Module B destroyed while A keeps B's pointer: its code is unbound with its
	 * memory, and the call faults at the fetch.  GPU addresses are the host
	 * addresses of the mappings: hold the freed page so that no later allocation
	 * (a batch, an argument area) lands there and makes the stale pointer hit
	 * other memory (what a dangling function pointer does on a CPU too). */
	CHECK(zeModuleDestroy(b));
	void *page = (void *)((uintptr_t)tr & ~(uintptr_t)4095);
	EXPECT(mmap(page, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == page,
	       "the page of destroyed module B's code is still mapped on the host");
	printf("fault-case destroyed target=%#llx kernel=%#llx\n", (unsigned long long)(uintptr_t)tr,
	       (unsigned long long)(uintptr_t)one);
	expect_lost(e, k, pool, out, tr, tr, "destroyed module");
	/* B loaded again: a new address, and the call works. */
	ze_module_handle_t b2 = e2e_module(e, b_path);
	void *tr2 = fnptr(b2, "b_triple");
	expect_good(e, k, out, tr2, "a call into a destroyed module");
	CHECK(zeModuleDestroy(b2));
	munmap(page, 4096);
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeKernelDestroy(k));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 4 && (strcmp(argv[3], "calls") == 0 || strcmp(argv[3], "faults") == 0),
	       "usage: test_native_call call_a.elf call_b.elf calls|faults");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t a = e2e_module(&e, argv[1]), b = e2e_module(&e, argv[2]);
	if (strcmp(argv[3], "calls") == 0) {
		calls(&e, a, b);
		CHECK(zeModuleDestroy(b));
	} else {
		faults(&e, a, b, argv[2]);
	}
	CHECK(zeModuleDestroy(a));
	e2e_fini(&e);
	note("native_call %s: OK", argv[3]);
	return 0;
}
