/* Virtual memory (issue 16, item 4; driver/README.md "Virtual memory").
 * argv[1]: misc.elf (the kernel `poke`: out[lid] = 7 for 8 lanes).
 * A reservation of 4 pages, a physical object of 2, mapped read-write at the
 * start: a kernel writes through the reserved address and the host reads the
 * value there and through a second, read-only view of the same physical page.
 * Set read-only, the kernel's write faults (DEVICE_LOST, nothing written);
 * read-write again, a fresh queue writes.  The errors of the spec: unaligned
 * and zero sizes, overlapping maps, unmapping what is not mapped, destroying
 * or freeing what is still mapped. */
#include "e2e.h"

#define PAGE (64u << 10)

/* Launch poke(out) on a fresh queue and list; the queue's result. */
static ze_result_t poke_on_fresh_queue(e2e_t *e, ze_kernel_handle_t poke, void *out)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	e2e_fresh_queue(e, &q, &l);
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeKernelSetArgumentValue(poke, 0, sizeof(out), &out));
	CHECK(zeCommandListAppendLaunchKernel(l, poke, &one, NULL, 0, NULL));
	CHECK(zeCommandListClose(l));
	CHECK(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
	const ze_result_t r = zeCommandQueueSynchronize(q, 20000000000ull);
	CHECK(zeCommandListDestroy(l));
	CHECK(zeCommandQueueDestroy(q));
	return r;
}

/* Copy n bytes from src to dst on a fresh queue and list; the queue's result. */
static ze_result_t copy_on_fresh_queue(e2e_t *e, void *dst, const void *src, size_t n)
{
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	e2e_fresh_queue(e, &q, &l);
	CHECK(zeCommandListAppendMemoryCopy(l, dst, src, n, NULL, 0, NULL));
	CHECK(zeCommandListClose(l));
	CHECK(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
	const ze_result_t r = zeCommandQueueSynchronize(q, 20000000000ull);
	CHECK(zeCommandListDestroy(l));
	CHECK(zeCommandQueueDestroy(q));
	return r;
}

static void expect_access(e2e_t *e, const uint8_t *p, size_t size, ze_memory_access_attribute_t want,
			  size_t want_size)
{
	ze_memory_access_attribute_t a = (ze_memory_access_attribute_t)99;
	size_t n = 0;
	CHECK(zeVirtualMemGetAccessAttribute(e->ctx, p, size, &a, &n));
	EXPECT(a == want && n == want_size, "access %d over %zu bytes, want %d over %zu", (int)a, n, (int)want,
	       want_size);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_vmem misc.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t poke = e2e_kernel(m, "poke");
	CHECK(zeKernelSetGroupSize(poke, 8, 1, 1));

	size_t page = 0;
	CHECK(zeVirtualMemQueryPageSize(e.ctx, e.dev, 1000, &page));
	EXPECT(page == PAGE, "page size %zu, want 64 KiB", page);

	/* pStart is a hint (the validation layer refuses NULL, which the spec's text allows). */
	void *base_v = NULL, *hint = (void *)(uintptr_t)0x7e0000000000ull;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeVirtualMemReserve(e.ctx, hint, 0, &base_v));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeVirtualMemReserve(e.ctx, hint, PAGE + 4096, &base_v));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
		     zeVirtualMemReserve(e.ctx, (uint8_t *)hint + 4096, PAGE, &base_v));
	CHECK(zeVirtualMemReserve(e.ctx, hint, 4 * PAGE, &base_v));
	uint8_t *base = base_v;
	EXPECT(((uintptr_t)base & (PAGE - 1)) == 0, "reservation %p not page aligned", (void *)base);
	/* The hint taken: another reservation there gets another range. */
	void *other = NULL;
	CHECK(zeVirtualMemReserve(e.ctx, base, PAGE, &other));
	EXPECT(other != NULL && ((uintptr_t)other & (PAGE - 1)) == 0 &&
		       ((uint8_t *)other + PAGE <= base || (uint8_t *)other >= base + 4 * PAGE),
	       "second reservation %p overlaps the first %p", other, (void *)base);
	CHECK(zeVirtualMemFree(e.ctx, other, PAGE));
	expect_access(&e, base, 4 * PAGE, ZE_MEMORY_ACCESS_ATTRIBUTE_NONE, 4 * PAGE);

	ze_physical_mem_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, .size = 4096};
	ze_physical_mem_handle_t phys;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zePhysicalMemCreate(e.ctx, e.dev, &pd, &phys));
	pd.size = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zePhysicalMemCreate(e.ctx, e.dev, &pd, &phys));
	pd.size = 2 * PAGE;
	CHECK(zePhysicalMemCreate(e.ctx, e.dev, &pd, &phys));

	const ze_memory_access_attribute_t RW = ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE,
					   RO = ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY,
					   NONE = ZE_MEMORY_ACCESS_ATTRIBUTE_NONE;
	/* Map errors: alignment, sizes, outside the physical object or the reservation. */
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, zeVirtualMemMap(e.ctx, base + 4096, PAGE, phys, 0, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeVirtualMemMap(e.ctx, base, 4096, phys, 0, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, zeVirtualMemMap(e.ctx, base, PAGE, phys, 4096, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemMap(e.ctx, base, 2 * PAGE, phys, PAGE, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemMap(e.ctx, base + 3 * PAGE, 2 * PAGE, phys, 0, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
		     zeVirtualMemMap(e.ctx, base, PAGE, phys, 0, (ze_memory_access_attribute_t)3));

	/* Pages 0-1: the whole object, read-write. */
	CHECK(zeVirtualMemMap(e.ctx, base, 2 * PAGE, phys, 0, RW));
	expect_access(&e, base, 4 * PAGE, RW, 2 * PAGE);
	expect_access(&e, base + 2 * PAGE, 2 * PAGE, NONE, 2 * PAGE);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemMap(e.ctx, base + PAGE, PAGE, phys, 0, RW));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemUnmap(e.ctx, base + 2 * PAGE, PAGE));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeVirtualMemUnmap(e.ctx, base, 4096));

	/* The GPU writes through the reserved address; the host reads it there. */
	uint32_t *w = (uint32_t *)(base + PAGE);
	CHECK(poke_on_fresh_queue(&e, poke, w));
	for (int i = 0; i < 8; i++)
		EXPECT(w[i] == 7, "w[%d] = %u after the kernel's write", i, w[i]);
	EXPECT(w[8] == 0, "w[8] = %u: written past the kernel's 8 lanes", w[8]);
	/* A copy into the range is the GPU's (device memory), and lands. */
	uint32_t *src = e2e_alloc_shared(&e, 4096);
	for (int i = 0; i < 1024; i++)
		src[i] = 0xc0de0000u + (uint32_t)i;
	CHECK(copy_on_fresh_queue(&e, w + 1024, src, 4096));
	for (int i = 0; i < 1024; i++)
		EXPECT(w[1024 + i] == src[i], "w[%d] = 0x%x after the copy", 1024 + i, w[1024 + i]);

	/* Page 3: a second, read-only view of the object's second page. */
	CHECK(zeVirtualMemMap(e.ctx, base + 3 * PAGE, PAGE, phys, PAGE, RO));
	expect_access(&e, base + 3 * PAGE, PAGE, RO, PAGE);
	const uint32_t *view = (const uint32_t *)(base + 3 * PAGE);
	EXPECT(view[0] == 7 && view[7] == 7, "the second view reads %u %u, not the physical page", view[0], view[7]);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, (void *)(base + 3 * PAGE + 256)));
	EXPECT(view[64] == 0, "a write through the read-only view landed (%u)", view[64]);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, copy_on_fresh_queue(&e, (void *)(base + 3 * PAGE + 8192), src, 256));
	EXPECT(view[2048] == 0, "a copy into the read-only view landed (0x%x)", view[2048]);
	/* A range that runs out of the reservation is no memory a command may name. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendMemoryCopy(e.list, base + 4 * PAGE - 16, src, 64, NULL, 0, NULL));

	/* Read-only by attribute: the kernel's write faults, nothing lands. */
	CHECK(zeVirtualMemSetAccessAttribute(e.ctx, base, 2 * PAGE, RO));
	expect_access(&e, base, 4 * PAGE, RO, 2 * PAGE);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, w + 32));
	for (int i = 32; i < 40; i++)
		EXPECT(w[i] == 0, "w[%d] = %u: a write to a read-only range landed", i, w[i]);
	/* Inaccessible: unbound, the write faults too. */
	CHECK(zeVirtualMemSetAccessAttribute(e.ctx, base, 2 * PAGE, NONE));
	expect_access(&e, base, 4 * PAGE, NONE, 3 * PAGE); /* pages 0-1, and 2 (unmapped) */
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, w + 64));
	/* Read-write again: a fresh queue writes. */
	CHECK(zeVirtualMemSetAccessAttribute(e.ctx, base, 2 * PAGE, RW));
	CHECK(poke_on_fresh_queue(&e, poke, w + 96));
	for (int i = 32; i < 104; i++)
		EXPECT(w[i] == (i >= 96 ? 7u : 0u), "w[%d] = %u after the faults and the last write", i, w[i]);
	/* Part of a mapping: page 1 read-only, page 0 stays read-write. */
	CHECK(zeVirtualMemSetAccessAttribute(e.ctx, base + PAGE, PAGE, RO));
	expect_access(&e, base, 4 * PAGE, RW, PAGE);
	expect_access(&e, base + PAGE, 3 * PAGE, RO, PAGE);
	uint32_t *w0 = (uint32_t *)base;
	CHECK(poke_on_fresh_queue(&e, poke, w0));
	EXPECT(w0[0] == 7 && w0[7] == 7, "page 0 reads %u %u after the kernel's write", w0[0], w0[7]);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, w + 128));
	EXPECT(w[128] == 0, "a write to the read-only part landed (%u)", w[128]);
	/* Across both parts; a range with a page that is not mapped. */
	CHECK(zeVirtualMemSetAccessAttribute(e.ctx, base, 2 * PAGE, RW));
	expect_access(&e, base, 4 * PAGE, RW, 2 * PAGE);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemSetAccessAttribute(e.ctx, base + PAGE, 2 * PAGE, RO));

	/* Still mapped: neither the object nor the reservation can go. */
	CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zePhysicalMemDestroy(e.ctx, phys));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemFree(e.ctx, base, 4 * PAGE));

	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemUnmap(e.ctx, base + PAGE, 2 * PAGE));
	/* Part of a mapping: page 0 goes, page 1 stays bound. */
	CHECK(zeVirtualMemUnmap(e.ctx, base, PAGE));
	expect_access(&e, base, 4 * PAGE, NONE, PAGE);
	CHECK(poke_on_fresh_queue(&e, poke, w + 160));
	EXPECT(w[160] == 7, "page 1 after page 0's unmap: %u", w[160]);
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, w0 + 64));
	CHECK(zeVirtualMemUnmap(e.ctx, base + PAGE, PAGE));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemUnmap(e.ctx, base, 2 * PAGE));
	CHECK(zeVirtualMemUnmap(e.ctx, base + 3 * PAGE, PAGE));
	expect_access(&e, base, 4 * PAGE, NONE, 4 * PAGE);
	/* Unmapped: the GPU address is gone. */
	CHECK_RESULT(ZE_RESULT_ERROR_DEVICE_LOST, poke_on_fresh_queue(&e, poke, w));

	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemFree(e.ctx, base, 2 * PAGE));
	CHECK(zeVirtualMemFree(e.ctx, base, 4 * PAGE));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeVirtualMemFree(e.ctx, base, 4 * PAGE));
	CHECK(zePhysicalMemDestroy(e.ctx, phys));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zePhysicalMemDestroy(e.ctx, phys));

	CHECK(zeMemFree(e.ctx, src));
	CHECK(zeKernelDestroy(poke));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("vmem: ok");
	return 0;
}
