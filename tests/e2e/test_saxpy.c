/* saxpy with a float value argument: y = a * x + y, fused like the ISA's
 * mad, checked bit for bit against the host's fmaf.  Data moves through
 * device memory with copies and a fill.  argv[1]: saxpy.elf */
#include <math.h>

#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_saxpy saxpy.elf");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "saxpy");

	const uint32_t n = 4099;
	const float a = 2.718281828f;
	float *x = e2e_alloc_host(&e, n * sizeof(float)), *y = e2e_alloc_host(&e, n * sizeof(float));
	float *out = e2e_alloc_host(&e, n * sizeof(float));
	float *dx = e2e_alloc_device(&e, n * sizeof(float)), *dy = e2e_alloc_device(&e, n * sizeof(float));
	uint32_t seed = 777;
	for (uint32_t i = 0; i < n; i++) {
		x[i] = (float)(int32_t)(e2e_rand(&seed) % 100000 - 50000) / 7.0f;
		y[i] = (float)(int32_t)(e2e_rand(&seed) % 100000 - 50000) / 3.0f;
	}

	uint32_t gx, gy, gz;
	CHECK(zeKernelSuggestGroupSize(k, n, 1, 1, &gx, &gy, &gz));
	EXPECT(gy == 1 && gz == 1 && n % gx == 0, "suggested %ux%ux%u for %u", gx, gy, gz, n);
	const uint32_t group = 128 <= gx ? 128 : 64;
	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	const e2e_arg_t args[] = {{sizeof(dx), &dx}, {sizeof(dy), &dy}, {sizeof(a), &a}, {sizeof(n), &n}};
	e2e_set_args(k, 4, args);
	const float poison = -0.0f;
	CHECK(zeCommandListAppendMemoryFill(e.list, out, &poison, sizeof(poison), n * sizeof(float), NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, dx, x, n * sizeof(float), NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, dy, y, n * sizeof(float), NULL, 0, NULL));
	ze_group_count_t groups = {(n + group - 1) / group, 1, 1};
	const e2e_buffer_t buffers[] = {{dx, n * sizeof(float), E2E_BYTES}, {dy, n * sizeof(float), E2E_BYTES}};
	e2e_dump_launch(&e, argv[1], "saxpy", &groups, group, 1, 1, 4, args, 2, buffers);
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, out, dy, n * sizeof(float), NULL, 0, NULL));
	e2e_run(&e);
	e2e_dump_results();

	for (uint32_t i = 0; i < n; i++) {
		const float want = fmaf(a, x[i], y[i]);
		EXPECT(memcmp(&out[i], &want, sizeof(float)) == 0, "y[%u] = %a, expected %a", i, (double)out[i],
		       (double)want);
	}
	CHECK(zeMemFree(e.ctx, x));
	CHECK(zeMemFree(e.ctx, y));
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeMemFree(e.ctx, dx));
	CHECK(zeMemFree(e.ctx, dy));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("saxpy: %u results bit-exact", n);
	return 0;
}
