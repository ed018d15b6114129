/* Vector add through the whole stack: inputs in host and shared memory,
 * output in device memory copied back with zeCommandListAppendMemoryCopy,
 * checked against the host's own sums.  argv[1]: vadd.elf */
#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_vadd vadd.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");

	const uint32_t n = 1000; /* not a multiple of the group size */
	float *a = e2e_alloc_host(&e, n * sizeof(float));
	float *b = e2e_alloc_shared(&e, n * sizeof(float));
	float *c = e2e_alloc_host(&e, n * sizeof(float));
	float *dev_c = e2e_alloc_device(&e, n * sizeof(float));
	uint32_t seed = 12345;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)(e2e_rand(&seed) % 20000) / 16.0f - 600.0f;
		b[i] = (float)(e2e_rand(&seed) % 20000) / 64.0f;
		c[i] = -1.0f;
	}

	const uint32_t group = 64;
	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	e2e_arg_t args[] = {{sizeof(a), &a}, {sizeof(b), &b}, {sizeof(dev_c), &dev_c}, {sizeof(n), &n}};
	e2e_set_args(k, 4, args);
	ze_group_count_t groups = {(n + group - 1) / group, 1, 1};
	e2e_buffer_t buffers[] = {
		{a, n * sizeof(float), E2E_BYTES}, {b, n * sizeof(float), E2E_BYTES}, {dev_c, n * sizeof(float), E2E_BYTES}};
	e2e_dump_launch(&e, argv[1], "vadd", &groups, group, 1, 1, 4, args, 3, buffers);
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	CHECK(zeCommandListAppendBarrier(e.list, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, c, dev_c, n * sizeof(float), NULL, 0, NULL));
	e2e_run(&e);
	e2e_dump_results();

	for (uint32_t i = 0; i < n; i++)
		EXPECT(c[i] == a[i] + b[i], "c[%u] = %g, expected %g", i, (double)c[i], (double)(a[i] + b[i]));

	/* Run the same kernel again with new arguments: the first launch's
	 * arguments were captured when it was appended. */
	for (uint32_t i = 0; i < n; i++)
		a[i] = (float)i;
	args[2] = (e2e_arg_t){sizeof(c), &c};
	CHECK(zeKernelSetArgumentValue(k, 2, args[2].size, args[2].value));
	buffers[2].ptr = c;
	e2e_dump_launch(&e, argv[1], "vadd", &groups, group, 1, 1, 4, args, 3, buffers);
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	e2e_dump_results();
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c[i] == (float)i + b[i], "second run: c[%u] = %g", i, (double)c[i]);

	CHECK(zeMemFree(e.ctx, a));
	CHECK(zeMemFree(e.ctx, b));
	CHECK(zeMemFree(e.ctx, c));
	CHECK(zeMemFree(e.ctx, dev_c));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("vadd: %u results correct", n);
	return 0;
}
