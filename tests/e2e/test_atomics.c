/* Global and SLM atomics (add, inc with and without return, min, max, xor)
 * checked against a host computation.  argv[1]: atomics.elf */
#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_atomics atomics.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "atomics");

	const uint32_t n = 2500, bins = 32, group = 128;
	int32_t *in = e2e_alloc_host(&e, n * 4);
	uint32_t *hist = e2e_alloc_shared(&e, bins * 4), *ticket = e2e_alloc_shared(&e, n * 4);
	int32_t *stats = e2e_alloc_device(&e, 8 * 4);
	int32_t *stats_host = e2e_alloc_host(&e, 8 * 4);
	uint32_t seed = 99;
	for (uint32_t i = 0; i < n; i++)
		in[i] = (int32_t)(e2e_rand(&seed) % 2000001) - 1000000;
	const int32_t init[8] = {0, INT32_MAX, INT32_MIN, 0, 0, 0, 0, 0};
	const uint32_t zero = 0, mask = bins - 1;

	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	const e2e_arg_t args[] = {{8, &in}, {8, &hist}, {8, &stats}, {8, &ticket}, {4, &n}, {4, &mask}};
	e2e_set_args(k, 6, args);
	CHECK(zeCommandListAppendMemoryFill(e.list, hist, &zero, 4, bins * 4, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, stats, init, 0, NULL, 0, NULL)); /* size 0: a no-op */
	memcpy(stats_host, init, sizeof(init));
	CHECK(zeCommandListAppendMemoryCopy(e.list, stats, stats_host, sizeof(init), NULL, 0, NULL));
	ze_group_count_t groups = {(n + group - 1) / group, 1, 1};
	/* Every result is order-independent (commutative atomics on shared
	 * counters) except the tickets: the old values of an atomic inc, which
	 * depend on the order the items got there.  Only their multiset (a
	 * permutation of 0..n-1) is compared against the ISS. */
	const e2e_buffer_t buffers[] = {{in, n * 4, E2E_BYTES},
					{hist, bins * 4, E2E_BYTES},
					{stats, sizeof(init), E2E_BYTES},
					{ticket, n * 4, E2E_DWORD_MULTISET}};
	e2e_dump_launch(&e, argv[1], "atomics", &groups, group, 1, 1, 6, args, 4, buffers);
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, stats_host, stats, sizeof(init), NULL, 0, NULL));
	e2e_run(&e);
	e2e_dump_results();

	uint32_t want_hist[32] = {0};
	int32_t mn = INT32_MAX, mx = INT32_MIN;
	uint32_t x = 0, sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		want_hist[(uint32_t)in[i] & mask]++;
		mn = in[i] < mn ? in[i] : mn;
		mx = in[i] > mx ? in[i] : mx;
		x ^= (uint32_t)in[i];
		sum += (uint32_t)in[i];
	}
	for (uint32_t b = 0; b < bins; b++)
		EXPECT(hist[b] == want_hist[b], "hist[%u] = %u, expected %u", b, hist[b], want_hist[b]);
	EXPECT((uint32_t)stats_host[0] == n, "count %d", stats_host[0]);
	EXPECT(stats_host[1] == mn && stats_host[2] == mx, "min %d max %d, expected %d %d", stats_host[1],
	       stats_host[2], mn, mx);
	EXPECT((uint32_t)stats_host[3] == x, "xor %#x, expected %#x", (uint32_t)stats_host[3], x);
	EXPECT((uint32_t)stats_host[4] == sum, "sum %u, expected %u", (uint32_t)stats_host[4], sum);
	EXPECT((uint32_t)stats_host[5] == n, "SLM counts add up to %d", stats_host[5]);
	EXPECT((uint32_t)stats_host[6] == n, "tickets issued %d", stats_host[6]);
	uint8_t *seen = calloc(n, 1);
	for (uint32_t i = 0; i < n; i++) {
		EXPECT(ticket[i] < n && !seen[ticket[i]], "ticket[%u] = %u is not unique", i, ticket[i]);
		seen[ticket[i]] = 1;
	}
	free(seen);
	CHECK(zeMemFree(e.ctx, in));
	CHECK(zeMemFree(e.ctx, hist));
	CHECK(zeMemFree(e.ctx, ticket));
	CHECK(zeMemFree(e.ctx, stats));
	CHECK(zeMemFree(e.ctx, stats_host));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("atomics: %u items, %u bins correct", n, bins);
	return 0;
}
