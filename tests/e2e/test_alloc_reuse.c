/* Allocations freed and made again in a loop (issue 16 item 8; driver/README.md
 * "Allocations"): the driver keeps freed GEM objects for the next allocation of
 * their size.  Checked against what a new allocation must be, whatever the driver
 * does inside:
 *  - a new allocation reads as zero on the host (shared) and through a copy
 *    (device), even when the freed one of the same size was written all over;
 *  - the GPU reads and writes it: vadd on it gives the host's sums;
 *  - the freed range is free host address space again (mmap MAP_FIXED_NOREPLACE
 *    there succeeds; e2e_faults checks that the GPU faults there);
 *  - sizes of one page, several pages, above the in-place clearing limit (64 KiB)
 *    and above the reuse limit (4 MiB), interleaved, for many rounds.
 * Usage: e2e_alloc_reuse VADD.elf */
#include <sys/mman.h>

#include "e2e.h"

static e2e_t e;
static ze_kernel_handle_t vadd;

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* c = a + b on the GPU for n floats; the inputs depend on `round`. */
static void check_vadd(float *a, float *b, float *c, uint32_t n, uint32_t round)
{
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)(i % 1000 + round);
		b[i] = (float)(2 * (i % 7));
	}
	e2e_arg_t args[] = {{sizeof(a), &a}, {sizeof(b), &b}, {sizeof(c), &c}, {sizeof(n), &n}};
	e2e_set_args(vadd, 4, args);
	const ze_group_count_t g = {(n + 15) / 16, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, vadd, &g, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c[i] == (float)(i % 1000 + round) + (float)(2 * (i % 7)), "round %u: c[%u] = %g", round, i,
		       (double)c[i]);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: e2e_alloc_reuse VADD.elf");
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	vadd = e2e_kernel(m, "vadd");
	CHECK(zeKernelSetGroupSize(vadd, 16, 1, 1));

	/* bytes per buffer: one page, three pages, above 64 KiB, above 4 MiB */
	static const size_t sizes[] = {4096, 12288, 192 << 10, (5 << 20) + 4096};
	const unsigned nsizes = sizeof(sizes) / sizeof(sizes[0]);
	for (uint32_t round = 0; round < 24; round++) {
		const size_t bytes = sizes[round % nsizes];
		/* the kernel covers the first 16 Ki floats at most (the simulation's time) */
		const uint32_t n = (uint32_t)(bytes / sizeof(float) < 16384 ? bytes / sizeof(float) : 16384);
		float *a = e2e_alloc_shared(&e, bytes), *b = e2e_alloc_shared(&e, bytes), *c = e2e_alloc_shared(&e, bytes);
		EXPECT(all_zero((uint8_t *)a, bytes) && all_zero((uint8_t *)b, bytes) && all_zero((uint8_t *)c, bytes),
		       "round %u: a new %zu-byte shared allocation does not read as zero", round, bytes);
		check_vadd(a, b, c, n, round);
		/* a device allocation, written by a copy, freed; its successor copied back */
		uint8_t *d = e2e_alloc_device(&e, bytes);
		CHECK(zeCommandListAppendMemoryCopy(e.list, d, c, bytes, NULL, 0, NULL));
		e2e_run(&e);
		CHECK(zeMemFree(e.ctx, d));
		d = e2e_alloc_device(&e, bytes);
		memset(c, 0x5a, bytes);
		CHECK(zeCommandListAppendMemoryCopy(e.list, c, d, bytes, NULL, 0, NULL));
		e2e_run(&e);
		EXPECT(all_zero((uint8_t *)c, bytes), "round %u: a new %zu-byte device allocation does not read as zero",
		       round, bytes);
		CHECK(zeMemFree(e.ctx, d));
		/* dirty everything before the free: the successors must not see it */
		memset(a, 0xa5, bytes);
		memset(b, 0xa5, bytes);
		memset(c, 0xa5, bytes);
		CHECK(zeMemFree(e.ctx, a));
		/* the freed range is the program's again (before anything else is mapped) */
		void *r = mmap(a, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		EXPECT(r == (void *)a, "round %u: the freed range %p is still mapped", round, (void *)a);
		munmap(r, bytes);
		CHECK(zeMemFree(e.ctx, b));
		CHECK(zeMemFree(e.ctx, c));
	}
	note("alloc_reuse: 24 rounds of allocate, launch, copy, free: new allocations read zero, results right");
	CHECK(zeKernelDestroy(vadd));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	return 0;
}
