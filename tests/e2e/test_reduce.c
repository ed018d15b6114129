/* Reduction with SLM and barriers: per-group tree sums in a local argument,
 * checked against the host; also checks where the driver placed the local
 * arguments (after the kernel's 62 bytes of static SLM, 4-byte aligned, in
 * declaration order: pad at 64, scratch at 64 + 12).  argv[1]: reduce.elf */
#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_reduce reduce.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "reduce");

	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	EXPECT(kp.numKernelArgs == 6 && kp.localMemSize == 62, "%u args, %u bytes SLM", kp.numKernelArgs,
	       kp.localMemSize);

	const uint32_t n = 3000, group = 64, ngroups = (n + group - 1) / group;
	uint32_t *in = e2e_alloc_shared(&e, n * 4), *out = e2e_alloc_shared(&e, ngroups * 4);
	uint32_t *offs = e2e_alloc_shared(&e, 2 * 4);
	uint32_t seed = 4242;
	for (uint32_t i = 0; i < n; i++)
		in[i] = e2e_rand(&seed) % 1000000;
	memset(out, 0xff, ngroups * 4);
	offs[0] = offs[1] = 0xdeadbeef;

	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	const e2e_arg_t args[] = {{8, &in},
				  {8, &out},
				  {8, &offs},
				  {10, NULL},        /* pad: 10 bytes of SLM */
				  {group * 4, NULL}, /* scratch: one dword per item */
				  {4, &n}};
	e2e_set_args(k, 6, args);
	ze_group_count_t groups = {ngroups, 1, 1};
	const e2e_buffer_t buffers[] = {
		{in, n * 4, E2E_BYTES}, {out, ngroups * 4, E2E_BYTES}, {offs, 2 * 4, E2E_BYTES}};
	e2e_dump_launch(&e, argv[1], "reduce", &groups, group, 1, 1, 6, args, 3, buffers);
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	e2e_dump_results();

	uint64_t total = 0, got = 0;
	for (uint32_t g = 0; g < ngroups; g++) {
		uint32_t want = 0;
		for (uint32_t i = g * group; i < n && i < (g + 1) * group; i++)
			want += in[i];
		EXPECT(out[g] == want, "group %u: sum %u, expected %u", g, out[g], want);
		total += want;
		got += out[g];
	}
	EXPECT(total == got, "total");
	EXPECT(offs[0] == 64 && offs[1] == 76, "local arguments at SLM %u and %u, expected 64 and 76", offs[0],
	       offs[1]);
	CHECK(zeMemFree(e.ctx, in));
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeMemFree(e.ctx, offs));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("reduce: %u groups of %u, total %llu", ngroups, group, (unsigned long long)total);
	return 0;
}
