/* Allocations and the built-in copy and fill kernels, against host memcpy
 * and a host model of the fill:
 *  - zeMemGetAllocProperties / zeMemGetAddressRange for host, device and
 *    shared allocations, interior pointers and foreign memory;
 *  - alignment requests; unified memory (the host writes device memory);
 *  - copies at every byte alignment of source and destination, many sizes;
 *  - fills with every pattern size at every alignment;
 *  - 2-D and 3-D region copies; zeMemFreeExt. */
#include "e2e.h"

static uint8_t *dev_a, *dev_b, *host_a, *host_b;
enum { BUF = 16384 };

static void check_copy(e2e_t *e, size_t doff, size_t soff, size_t size)
{
	/* host_a → dev_a (+soff) → dev_b (+doff) → host_b, compare with memcpy */
	memset(host_b, 0xee, BUF);
	CHECK(zeCommandListAppendMemoryFill(e->list, dev_b, "\xee", 1, BUF, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e->list, dev_a, host_a, BUF, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e->list, dev_b + doff, dev_a + soff, size, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e->list, host_b, dev_b, BUF, NULL, 0, NULL));
	e2e_run(e);
	uint8_t *want = malloc(BUF);
	memset(want, 0xee, BUF);
	memcpy(want + doff, host_a + soff, size);
	for (size_t i = 0; i < BUF; i++)
		EXPECT(host_b[i] == want[i], "copy of %zu bytes from +%zu to +%zu: byte %zu is %#x, expected %#x", size,
		       soff, doff, i, host_b[i], want[i]);
	free(want);
}

static void check_fill(e2e_t *e, size_t off, size_t psize, size_t size)
{
	uint8_t pat[128];
	for (size_t i = 0; i < psize; i++)
		pat[i] = (uint8_t)(0x11 * (i + 1) + psize);
	memset(host_b, 0x77, BUF);
	CHECK(zeCommandListAppendMemoryCopy(e->list, dev_b, host_b, BUF, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryFill(e->list, dev_b + off, pat, psize, size, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e->list, host_b, dev_b, BUF, NULL, 0, NULL));
	e2e_run(e);
	for (size_t i = 0; i < BUF; i++) {
		const uint8_t want = i >= off && i < off + size ? pat[(i - off) % psize] : 0x77;
		EXPECT(host_b[i] == want, "fill of %zu bytes at +%zu with a %zu-byte pattern: byte %zu is %#x, expected %#x",
		       size, off, psize, i, host_b[i], want);
	}
}

int main(void)
{
	e2e_t e;
	e2e_init(&e);

	/* ---- allocation properties ---- */
	void *h = e2e_alloc_host(&e, 100), *d = e2e_alloc_device(&e, 5000), *s = e2e_alloc_shared(&e, 1);
	struct {
		void *p;
		ze_memory_type_t type;
		ze_device_handle_t dev;
		size_t size;
	} want[3] = {{h, ZE_MEMORY_TYPE_HOST, NULL, 100}, {d, ZE_MEMORY_TYPE_DEVICE, e.dev, 5000},
		     {s, ZE_MEMORY_TYPE_SHARED, e.dev, 1}};
	uint64_t ids[3];
	for (int i = 0; i < 3; i++) {
		ze_memory_allocation_properties_t ap = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
		ze_device_handle_t dev = (ze_device_handle_t)&ap;
		CHECK(zeMemGetAllocProperties(e.ctx, want[i].p, &ap, &dev));
		EXPECT(ap.type == want[i].type && dev == want[i].dev && ap.id != 0 && ap.pageSize >= 4096,
		       "allocation %d: type %d id %llu", i, ap.type, (unsigned long long)ap.id);
		ids[i] = ap.id;
		/* An interior pointer belongs to the same allocation. */
		ze_memory_allocation_properties_t ap2 = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
		CHECK(zeMemGetAllocProperties(e.ctx, (uint8_t *)want[i].p + want[i].size - 1, &ap2, NULL));
		EXPECT(ap2.id == ap.id && ap2.type == ap.type, "interior pointer of allocation %d", i);
		void *base;
		size_t size;
		CHECK(zeMemGetAddressRange(e.ctx, (uint8_t *)want[i].p + want[i].size / 2, &base, &size));
		EXPECT(base == want[i].p && size == want[i].size, "address range %p+%zu", base, size);
	}
	EXPECT(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "ids are unique");
	int on_stack;
	ze_memory_allocation_properties_t ap = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
	CHECK(zeMemGetAllocProperties(e.ctx, &on_stack, &ap, NULL));
	EXPECT(ap.type == ZE_MEMORY_TYPE_UNKNOWN, "stack memory has type %d", ap.type);
	CHECK(zeMemGetAllocProperties(e.ctx, (uint8_t *)h + 100, &ap, NULL));
	EXPECT(ap.type == ZE_MEMORY_TYPE_UNKNOWN, "one past the end has type %d", ap.type);
	CHECK(zeContextMakeMemoryResident(e.ctx, e.dev, d, 5000));
	CHECK(zeContextEvictMemory(e.ctx, e.dev, d, 5000));
	CHECK(zeMemFree(e.ctx, h));
	CHECK(zeMemFree(e.ctx, d));
	CHECK(zeMemFree(e.ctx, s));

	/* ---- alignment ---- */
	ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	for (size_t align = 1; align <= (1u << 20); align <<= 3) {
		void *p;
		CHECK(zeMemAllocDevice(e.ctx, &dd, 3 * align + 1, align, e.dev, &p));
		EXPECT((uintptr_t)p % align == 0, "%p is not %zu-aligned", p, align);
		CHECK(zeMemFree(e.ctx, p));
	}

	/* ---- unified memory: the host reads and writes device memory ---- */
	dev_a = e2e_alloc_device(&e, BUF);
	dev_b = e2e_alloc_device(&e, BUF);
	host_a = e2e_alloc_host(&e, BUF);
	host_b = e2e_alloc_host(&e, BUF);
	for (int i = 0; i < BUF; i++)
		host_a[i] = (uint8_t)(i * 7 + i / 256);
	memset(dev_a, 0x42, BUF);
	CHECK(zeCommandListAppendMemoryCopy(e.list, host_b, dev_a, BUF, NULL, 0, NULL));
	e2e_run(&e);
	EXPECT(host_b[0] == 0x42 && host_b[BUF - 1] == 0x42, "host writes to device memory");

	/* ---- copies at every alignment ---- */
	const size_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 1000, 4097};
	for (size_t soff = 0; soff < 4; soff++)
		for (size_t doff = 0; doff < 4; doff++)
			for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
				check_copy(&e, doff + 8, soff + 16, sizes[i]);
	check_copy(&e, 0, 0, BUF); /* a whole buffer */

	/* ---- fills: every pattern size at every alignment ---- */
	const size_t fsizes[] = {1, 3, 4, 6, 17, 256, 1001};
	for (size_t psize = 1; psize <= 128; psize *= 2)
		for (size_t off = 0; off < 4; off++)
			for (size_t i = 0; i < sizeof(fsizes) / sizeof(fsizes[0]); i++)
				check_fill(&e, off + 4, psize, fsizes[i]);

	/* ---- region copies ---- */
	const uint32_t pitch = 100, slice = 100 * 20;
	/* depth 0 is a 2-D copy: one slice (the spec: "Set this to 0 for 2D copy"). */
	for (int depth = 0; depth <= 3; depth += depth ? 2 : 1) {
		memset(host_b, 0, BUF);
		ze_copy_region_t sr = {3, 2, 1, 37, 11, (uint32_t)depth}, dr = {5, 1, 0, 37, 11, (uint32_t)depth};
		CHECK(zeCommandListAppendMemoryCopyRegion(e.list, host_b, &dr, pitch, slice, host_a, &sr, pitch, slice,
							  NULL, 0, NULL));
		e2e_run(&e);
		for (uint32_t z = 0; z < 4; z++)
			for (uint32_t y = 0; y < 20; y++)
				for (uint32_t x = 0; x < pitch; x++) {
					const uint8_t got = host_b[z * slice + y * pitch + x];
					uint8_t w = 0;
					if (x >= dr.originX && x < dr.originX + dr.width && y >= dr.originY &&
					    y < dr.originY + dr.height && z >= dr.originZ &&
					    z < dr.originZ + (dr.depth ? dr.depth : 1))
						w = host_a[(z - dr.originZ + sr.originZ) * slice +
							   (y - dr.originY + sr.originY) * pitch + x - dr.originX +
							   sr.originX];
					EXPECT(got == w, "region copy (depth %d): byte (%u,%u,%u) is %#x, expected %#x",
					       depth, x, y, z, got, w);
				}
	}

	/* ---- zeMemFreeExt waits for the device ---- */
	ze_memory_free_ext_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC,
					.freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE};
	CHECK(zeCommandListAppendMemoryCopy(e.list, dev_b, dev_a, BUF, NULL, 0, NULL));
	CHECK(zeCommandListClose(e.list));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK(zeMemFreeExt(e.ctx, &fd, dev_a));
	CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	CHECK(zeCommandListReset(e.list));

	/* Many allocations at once do not overlap. */
	enum { N = 64 };
	uint8_t *many[N];
	size_t msz[N];
	uint32_t seed = 5;
	for (int i = 0; i < N; i++) {
		msz[i] = 1 + e2e_rand(&seed) % 20000;
		many[i] = e2e_alloc_shared(&e, msz[i]);
		memset(many[i], i, msz[i]);
	}
	for (int i = 0; i < N; i++) {
		EXPECT(many[i][0] == i && many[i][msz[i] - 1] == i, "allocation %d overwritten", i);
		CHECK(zeMemFree(e.ctx, many[i]));
	}

	CHECK(zeMemFree(e.ctx, dev_b));
	CHECK(zeMemFree(e.ctx, host_a));
	CHECK(zeMemFree(e.ctx, host_b));
	e2e_fini(&e);
	note("memory: properties, alignment, copies, fills and region copies correct");
	return 0;
}
