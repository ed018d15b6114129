/* OpenCL C kernels compiled to SPIR-V (tests/kernels/, clang-14 + llvm-spirv-14)
 * and loaded with zeModuleCreate(ZE_MODULE_FORMAT_IL_SPIRV): the driver's
 * front end translates them to ZE-ISA.  Each kernel's results are checked
 * against the same computation on the host, bit for bit.
 *
 *     test_spirv KERNEL MODULE.spv
 *
 * KERNEL: vadd (also argument reflection and the native binary, reloaded as a
 * ZE-ISA module), saxpy, elementwise, reduce, histogram, builtins (3-D ids,
 * sizes and group counts, reqd_work_group_size), spec (specialization constants),
 * spec_ops (every OpSpecConstantOp operation against the host). */
#include <math.h>

#include "spirv.h"

static ze_kernel_properties_t props(ze_kernel_handle_t k)
{
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	return kp;
}

static void launch(e2e_t *e, ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t nx,
		   uint32_t ny, uint32_t nz)
{
	CHECK(zeKernelSetGroupSize(k, gx, gy, gz));
	ze_group_count_t groups = {nx, ny, nz};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
}

/* ---- vadd ------------------------------------------------------------------- */

static void run_vadd(e2e_t *e, ze_module_handle_t m, uint32_t n)
{
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	float *a = e2e_alloc_shared(e, n * 4), *b = e2e_alloc_shared(e, n * 4), *c = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 99;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)(int32_t)(e2e_rand(&seed) % 200001 - 100000) / 64.0f;
		b[i] = (float)(int32_t)(e2e_rand(&seed) % 200001 - 100000) / 3.0f;
		c[i] = -1.0f;
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}};
	e2e_set_args(k, 3, args);
	launch(e, k, 64, 1, 1, n / 64, 1, 1);
	for (uint32_t i = 0; i < n; i++) {
		const float want = a[i] + b[i];
		EXPECT(float_bits(c[i]) == float_bits(want), "c[%u] = %a, expected %a", i, (double)c[i], (double)want);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, c));
	CHECK(zeKernelDestroy(k));
}

static void test_vadd(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	uint32_t count = 0;
	CHECK(zeModuleGetKernelNames(m, &count, NULL));
	const char *name = NULL;
	EXPECT(count == 1, "%u kernels", count);
	CHECK(zeModuleGetKernelNames(m, &count, &name));
	EXPECT(strcmp(name, "vadd") == 0, "kernel %s", name);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	const ze_kernel_properties_t kp = props(k);
	EXPECT(kp.numKernelArgs == 3 && kp.localMemSize == 0 && (kp.maxSubgroupSize == 16 || kp.maxSubgroupSize == 8),
	       "%u arguments, %u bytes SLM, sub-group %u", kp.numKernelArgs, kp.localMemSize, kp.maxSubgroupSize);
	/* Argument reflection works as for native modules: sizes are checked. */
	float *p = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(k, 0, 4, &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, zeKernelSetArgumentValue(k, 3, 8, &p));
	size_t nlen = 0;
	CHECK(zeKernelGetName(k, &nlen, NULL));
	EXPECT(nlen == 5, "name of %zu bytes", nlen);
	CHECK(zeKernelDestroy(k));
	run_vadd(e, m, 4096);

	/* The native binary is the ZE-ISA module the SPIR-V became. */
	size_t size = 0;
	CHECK(zeModuleGetNativeBinary(m, &size, NULL));
	EXPECT(size > 64, "native binary of %zu bytes", size);
	uint8_t *native = malloc(size);
	CHECK(zeModuleGetNativeBinary(m, &size, native));
	EXPECT(memcmp(native, "\177ELF", 4) == 0 && native[18] == 0x45 && native[19] == 0x5a,
	       "the native binary is not a ZE-ISA ELF");
	ze_module_handle_t m2;
	char log[1024];
	CHECK(spirv_build(e, ZE_MODULE_FORMAT_NATIVE, native, size, &m2, log, sizeof(log)));
	run_vadd(e, m2, 1024);
	CHECK(zeModuleDestroy(m2));
	free(native);
	CHECK(zeModuleDestroy(m));
	note("vadd: SPIR-V and its native binary, bit-exact");
}

/* ---- saxpy ------------------------------------------------------------------ */

static void test_saxpy(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "saxpy");
	EXPECT(props(k).numKernelArgs == 4, "arguments");
	const uint32_t n = 4099, group = 128;
	const float a = 2.718281828f;
	float *x = e2e_alloc_host(e, n * 4), *y = e2e_alloc_shared(e, (n + group) * 4);
	float *want = malloc(n * 4);
	uint32_t seed = 777;
	for (uint32_t i = 0; i < n; i++) {
		x[i] = (float)(int32_t)(e2e_rand(&seed) % 100000 - 50000) / 7.0f;
		y[i] = (float)(int32_t)(e2e_rand(&seed) % 100000 - 50000) / 3.0f;
		want[i] = fmaf(a, x[i], y[i]);
	}
	for (uint32_t i = n; i < n + group; i++)
		y[i] = 42.0f; /* past n: must stay */
	const e2e_arg_t args[] = {{8, &x}, {8, &y}, {4, &a}, {4, &n}};
	e2e_set_args(k, 4, args);
	launch(e, k, group, 1, 1, (n + group - 1) / group, 1, 1);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(float_bits(y[i]) == float_bits(want[i]), "y[%u] = %a, expected %a", i, (double)y[i],
		       (double)want[i]);
	for (uint32_t i = n; i < n + group; i++)
		EXPECT(y[i] == 42.0f, "y[%u] written past n", i);
	free(want);
	CHECK(zeMemFree(e->ctx, x));
	CHECK(zeMemFree(e->ctx, y));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("saxpy: %u results bit-exact, the bound respected", n);
}

/* ---- elementwise -------------------------------------------------------------- */

/* tests/kernels/elementwise.cl on the host.  This file is compiled with
 * -ffp-contract=off, like the kernel (FP_CONTRACT OFF), so each operation
 * rounds on its own; fmaf stands for the kernel's fma(). */
static void elementwise_host(int i, int x, int k, int lid, int gid, int *oi, float *of)
{
	int acc;
	float f;
	if (x > k) {
		acc = (int)((uint32_t)x * 3u - (uint32_t)k);
		f = (float)x * 0.5f;
	} else {
		acc = (x ^ 0x55) + (int)((uint32_t)x << 2);
		f = (float)(x - k) - 1.25f;
	}
	const int n = (x & 15) + (i & 3);
	for (int j = 0; j < n; j++) {
		acc = (int)((uint32_t)acc + (uint32_t)j * (uint32_t)x);
		if ((acc & 1) == 0)
			acc = acc >> 1;
		f = fmaf(f, 1.5f, (float)j);
	}
	const uint32_t u = (uint32_t)acc;
	const int q = x / 7 + x % 5 - (int)(u / 13u);
	*oi = (int)((u % 7u == 3u ? u >> 3 : u) + (uint32_t)q + (uint32_t)lid - (uint32_t)gid);
	*of = f + (float)(int)(f * 0.25f) - (float)u / 1024.0f;
}

static void test_elementwise(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "elementwise");
	const uint32_t n = 2048, group = 64;
	const int kk = 17;
	int *in = e2e_alloc_shared(e, n * 4), *oi = e2e_alloc_shared(e, n * 4);
	float *of = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 31337;
	for (uint32_t i = 0; i < n; i++)
		in[i] = (int)(e2e_rand(&seed) % 4001) - 2000;
	const e2e_arg_t args[] = {{8, &in}, {8, &oi}, {8, &of}, {4, &kk}};
	e2e_set_args(k, 4, args);
	launch(e, k, group, 1, 1, n / group, 1, 1);
	for (uint32_t i = 0; i < n; i++) {
		int wi;
		float wf;
		elementwise_host((int)i, in[i], kk, (int)(i % group), (int)(i / group), &wi, &wf);
		EXPECT(oi[i] == wi, "out_i[%u] = %d, expected %d (x = %d)", i, oi[i], wi, in[i]);
		EXPECT(float_bits(of[i]) == float_bits(wf), "out_f[%u] = %a, expected %a (x = %d)", i, (double)of[i],
		       (double)wf, in[i]);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, oi));
	CHECK(zeMemFree(e->ctx, of));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("elementwise: %u work items with divergent branches and loops, bit-exact", n);
}

/* ---- reduce ------------------------------------------------------------------ */

static void test_reduce(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "reduce");
	EXPECT(props(k).numKernelArgs == 3, "arguments");
	for (uint32_t group = 16; group <= 128; group *= 2) {
		const uint32_t ngroups = 37, n = group * ngroups;
		int32_t *in = e2e_alloc_device(e, n * 4), *partial = e2e_alloc_shared(e, ngroups * 4);
		int32_t *host = e2e_alloc_host(e, n * 4);
		uint32_t seed = 4242 + group;
		for (uint32_t i = 0; i < n; i++)
			host[i] = (int32_t)(e2e_rand(&seed) % 2000001) - 1000000;
		CHECK(zeCommandListAppendMemoryCopy(e->list, in, host, n * 4, NULL, 0, NULL));
		memset(partial, 0x5a, ngroups * 4);
		const e2e_arg_t args[] = {{8, &in}, {8, &partial}, {group * 4, NULL}};
		e2e_set_args(k, 3, args);
		launch(e, k, group, 1, 1, ngroups, 1, 1);
		for (uint32_t g = 0; g < ngroups; g++) {
			int32_t want = 0;
			for (uint32_t i = g * group; i < (g + 1) * group; i++)
				want += host[i];
			EXPECT(partial[g] == want, "group size %u, group %u: sum %d, expected %d", group, g, partial[g],
			       want);
		}
		CHECK(zeMemFree(e->ctx, host));
		CHECK(zeMemFree(e->ctx, in));
		CHECK(zeMemFree(e->ctx, partial));
	}
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("reduce: SLM tree sums with barriers, groups of 16 to 128");
}

/* ---- histogram ------------------------------------------------------------------ */

static void test_histogram(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "histogram");
	const ze_kernel_properties_t kp = props(k);
	EXPECT(kp.numKernelArgs == 5 && kp.localMemSize == 64 * 4, "%u arguments, %u bytes of SLM", kp.numKernelArgs,
	       kp.localMemSize);
	const uint32_t n = 5000, group = 32, limit = 40000;
	uint32_t *data = e2e_alloc_shared(e, n * 4);
	int32_t *hist = e2e_alloc_shared(e, 64 * 4), *over = e2e_alloc_shared(e, 4);
	int32_t want[64] = {0}, want_over = 0;
	uint32_t seed = 2024;
	for (uint32_t i = 0; i < n; i++) {
		data[i] = e2e_rand(&seed) % 50000;
		want[data[i] % 64]++;
		want_over += data[i] > limit;
	}
	memset(hist, 0, 64 * 4);
	*over = 0;
	const e2e_arg_t args[] = {{8, &data}, {8, &hist}, {8, &over}, {4, &limit}, {4, &n}};
	e2e_set_args(k, 5, args);
	launch(e, k, group, 1, 1, (n + group - 1) / group, 1, 1);
	for (uint32_t b = 0; b < 64; b++)
		EXPECT(hist[b] == want[b], "bin %u: %d, expected %d", b, hist[b], want[b]);
	EXPECT(*over == want_over, "over: %d, expected %d", *over, want_over);
	CHECK(zeMemFree(e->ctx, data));
	CHECK(zeMemFree(e->ctx, hist));
	CHECK(zeMemFree(e->ctx, over));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("histogram: %u values, SLM atomic_inc, global atomic_add and atomic_inc", n);
}

/* ---- builtins ------------------------------------------------------------------- */

/* Run `reqd` (groups of 8x4x1 required) on N groups and check every item. */
static void run_reqd(e2e_t *e, ze_kernel_handle_t k, const uint32_t N[3])
{
	const uint32_t total = 8 * 4 * N[0] * N[1] * N[2];
	uint32_t *out = e2e_alloc_shared(e, total * 16);
	memset(out, 0xee, total * 16);
	const e2e_arg_t args[] = {{8, &out}};
	e2e_set_args(k, 1, args);
	ze_group_count_t groups = {N[0], N[1], N[2]};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
	const uint32_t G[3] = {8 * N[0], 4 * N[1], N[2]};
	for (uint32_t z = 0; z < G[2]; z++)
		for (uint32_t y = 0; y < G[1]; y++)
			for (uint32_t x = 0; x < G[0]; x++) {
				const uint32_t *o = out + ((z * G[1] + y) * G[0] + x) * 4;
				const uint32_t lin = (y % 4) * 8 + x % 8, grp = (y / 4) * N[0] + x / 8;
				EXPECT(o[0] == lin && o[1] == 8 && o[2] == 401 && o[3] == grp,
				       "reqd on %ux%ux%u groups: item (%u,%u,%u): %u %u %u %u, expected %u 8 401 %u", N[0],
				       N[1], N[2], x, y, z, o[0], o[1], o[2], o[3], lin, grp);
			}
	CHECK(zeMemFree(e->ctx, out));
}

static void expect_reqd(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z, const char *what)
{
	const ze_kernel_properties_t kp = props(k);
	EXPECT(kp.requiredGroupSizeX == x && kp.requiredGroupSizeY == y && kp.requiredGroupSizeZ == z,
	       "%s: required group size %ux%ux%u, expected %ux%ux%u", what, kp.requiredGroupSizeX,
	       kp.requiredGroupSizeY, kp.requiredGroupSizeZ, x, y, z);
}

/* reqd_work_group_size(8, 4, 1): reported, enforced, the default. */
static void test_reqd(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t plain = e2e_kernel(m, "builtins"), k = e2e_kernel(m, "reqd");
	expect_reqd(plain, 0, 0, 0, "builtins");
	expect_reqd(k, 8, 4, 1, "reqd");
	/* Suggested: the required size, whatever the global size. */
	static const uint32_t global[][3] = {{64, 64, 1}, {1024, 1, 1}, {8, 4, 1}, {7, 3, 5}};
	for (size_t i = 0; i < sizeof(global) / sizeof(global[0]); i++) {
		uint32_t sx = 0, sy = 0, sz = 0;
		CHECK(zeKernelSuggestGroupSize(k, global[i][0], global[i][1], global[i][2], &sx, &sy, &sz));
		EXPECT(sx == 8 && sy == 4 && sz == 1, "suggested %ux%ux%u for %ux%ux%u, expected 8x4x1", sx, sy, sz,
		       global[i][0], global[i][1], global[i][2]);
	}
	/* Without the attribute the suggestion is still the largest divisor. */
	uint32_t sx = 0, sy = 0, sz = 0;
	CHECK(zeKernelSuggestGroupSize(plain, 16, 1, 1, &sx, &sy, &sz));
	EXPECT(sx == 16 && sy == 1 && sz == 1, "builtins: suggested %ux%ux%u for 16x1x1", sx, sy, sz);
	/* Any other size fails (also one of the same number of work items) and
	 * leaves the required one in place; the first launch uses the default. */
	static const uint32_t bad[][3] = {{16, 1, 1}, {4, 8, 1}, {8, 4, 2}, {32, 1, 1}, {8, 2, 1}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
			     zeKernelSetGroupSize(k, bad[i][0], bad[i][1], bad[i][2]));
	run_reqd(e, k, (const uint32_t[3]){3, 2, 1});
	CHECK(zeKernelSetGroupSize(k, 8, 4, 1));
	run_reqd(e, k, (const uint32_t[3]){2, 3, 2});
	/* The kernel without the attribute takes other sizes. */
	CHECK(zeKernelSetGroupSize(plain, 16, 1, 1));
	CHECK(zeKernelDestroy(k));
	CHECK(zeKernelDestroy(plain));

	/* The module's native binary keeps it (kernel note version 2). */
	size_t size = 0;
	CHECK(zeModuleGetNativeBinary(m, &size, NULL));
	uint8_t *native = malloc(size);
	CHECK(zeModuleGetNativeBinary(m, &size, native));
	ze_module_handle_t m2;
	char log[1024];
	CHECK(spirv_build(e, ZE_MODULE_FORMAT_NATIVE, native, size, &m2, log, sizeof(log)));
	free(native);
	plain = e2e_kernel(m2, "builtins");
	k = e2e_kernel(m2, "reqd");
	expect_reqd(plain, 0, 0, 0, "builtins (native)");
	expect_reqd(k, 8, 4, 1, "reqd (native)");
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 16, 1, 1));
	run_reqd(e, k, (const uint32_t[3]){1, 1, 3});
	CHECK(zeKernelDestroy(k));
	CHECK(zeKernelDestroy(plain));
	CHECK(zeModuleDestroy(m2));
}

static void test_builtins(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "builtins");
	/* The hidden group-count argument is not visible. */
	EXPECT(props(k).numKernelArgs == 1, "%u arguments", props(k).numKernelArgs);
	const uint32_t L[3] = {8, 3, 2}, N[3] = {3, 2, 4};
	const uint32_t G[3] = {L[0] * N[0], L[1] * N[1], L[2] * N[2]}, total = G[0] * G[1] * G[2];
	uint32_t *out = e2e_alloc_shared(e, total * 16 * 4);
	memset(out, 0xee, total * 16 * 4);
	const e2e_arg_t args[] = {{8, &out}};
	e2e_set_args(k, 1, args);
	launch(e, k, L[0], L[1], L[2], N[0], N[1], N[2]);
	for (uint32_t z = 0; z < G[2]; z++)
		for (uint32_t y = 0; y < G[1]; y++)
			for (uint32_t x = 0; x < G[0]; x++) {
				const uint32_t *o = out + ((z * G[1] + y) * G[0] + x) * 16;
				const uint32_t g[3] = {x, y, z};
				for (int d = 0; d < 3; d++) {
					EXPECT(o[d] == g[d], "(%u,%u,%u): global id %d = %u", x, y, z, d, o[d]);
					EXPECT(o[3 + d] == g[d] % L[d], "(%u,%u,%u): local id %d = %u", x, y, z, d, o[3 + d]);
					EXPECT(o[6 + d] == g[d] / L[d], "(%u,%u,%u): group id %d = %u", x, y, z, d, o[6 + d]);
					EXPECT(o[9 + d] == L[d], "(%u,%u,%u): local size %d = %u", x, y, z, d, o[9 + d]);
					EXPECT(o[12 + d] == N[d], "(%u,%u,%u): num groups %d = %u", x, y, z, d, o[12 + d]);
				}
				EXPECT(o[15] == G[2], "(%u,%u,%u): global size 2 = %u", x, y, z, o[15]);
			}
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
	/* get_work_dim: the highest dimension whose global size exceeds 1 */
	k = e2e_kernel(m, "work_dim");
	static const uint32_t cfg[][7] = {
		/* L[3], N[3], expected */
		{8, 1, 1, 4, 1, 1, 1}, {4, 2, 1, 2, 1, 1, 2}, {4, 1, 1, 2, 3, 1, 2},
		{2, 2, 2, 2, 1, 1, 3}, {4, 1, 1, 1, 1, 2, 3}, {1, 1, 1, 1, 1, 1, 1},
	};
	for (size_t c = 0; c < sizeof(cfg) / sizeof(cfg[0]); c++) {
		const uint32_t *q = cfg[c], n = q[0] * q[1] * q[2] * q[3] * q[4] * q[5];
		uint32_t *wd = e2e_alloc_shared(e, n * 4);
		memset(wd, 0xee, n * 4);
		const e2e_arg_t wargs[] = {{8, &wd}};
		e2e_set_args(k, 1, wargs);
		launch(e, k, q[0], q[1], q[2], q[3], q[4], q[5]);
		for (uint32_t i = 0; i < n; i++)
			EXPECT(wd[i] == q[6], "work_dim with groups of %ux%ux%u, %ux%ux%u groups: item %u: %u, expected %u",
			       q[0], q[1], q[2], q[3], q[4], q[5], i, wd[i], q[6]);
		CHECK(zeMemFree(e->ctx, wd));
	}
	CHECK(zeKernelDestroy(k));
	test_reqd(e, m);
	CHECK(zeModuleDestroy(m));
	note("builtins: %u work items in 3-D; get_work_dim; reqd_work_group_size", total);
}

/* ---- specialization constants ------------------------------------------------- */

static void run_spec(e2e_t *e, const char *path, const ze_module_constants_t *sc, uint32_t scale, int flag,
		     uint64_t offset)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, bin, "", sc};
	ze_module_handle_t m;
	CHECK(zeModuleCreate(e->ctx, e->dev, &md, &m, NULL));
	free(bin);
	ze_kernel_handle_t k = e2e_kernel(m, "spec");
	const uint32_t n = 64;
	uint32_t *out = e2e_alloc_shared(e, n * 4);
	const e2e_arg_t args[] = {{8, &out}};
	e2e_set_args(k, 1, args);
	launch(e, k, 16, 1, 1, n / 16, 1, 1);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t want = i * scale * scale + (flag ? (uint32_t)offset : 0);
		EXPECT(out[i] == want, "out[%u] = %u, expected %u", i, out[i], want);
	}
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
}

static void test_spec(e2e_t *e, const char *path)
{
	run_spec(e, path, NULL, 3, 0, 100); /* the defaults */
	const uint32_t scale = 5;
	const uint8_t flag = 1;
	const uint64_t offset = 7;
	const uint32_t ids[3] = {1, 2, 3};
	const void *values[3] = {&scale, &flag, &offset};
	const ze_module_constants_t sc = {3, ids, values};
	run_spec(e, path, &sc, 5, 1, 7);
	const uint32_t one_id[1] = {3}; /* only the offset: the flag stays false */
	const void *one_value[1] = {&offset};
	const ze_module_constants_t sc1 = {1, one_id, one_value};
	run_spec(e, path, &sc1, 3, 0, 7);
	note("spec: specialization constants, defaults and overrides (32-bit, bool, 64-bit, OpSpecConstantOp)");
}

/* ---- every OpSpecConstantOp operation ---------------------------------------- */

/* The values of tests/kernels/spec_ops.spvasm's specialization constants. */
typedef struct {
	uint32_t a, b;	 /* SpecIds 10, 11 */
	uint8_t c;	 /* 12, bool */
	uint64_t d, e;	 /* 13, 14 */
	uint32_t s;	 /* 15, a shift amount below 8 */
	uint8_t n;	 /* 16, 8-bit */
} spec_vals_t;

#define SPEC_OPS 55

static const char *const spec_op_names[SPEC_OPS] = {
	"IAdd", "ISub", "IMul", "UDiv", "UMod", "SDiv", "SRem", "SNegate", "Not", "BitwiseAnd", "BitwiseOr",
	"BitwiseXor", "ShiftLeftLogical", "ShiftRightLogical", "ShiftRightArithmetic", "UConvert 32->64",
	"SConvert 32->64", "UConvert 64->32", "SConvert 64->32", "Select c a b", "IEqual", "INotEqual", "ULessThan",
	"UGreaterThan", "ULessThanEqual", "UGreaterThanEqual", "SLessThan", "SGreaterThan", "SLessThanEqual",
	"SGreaterThanEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "LogicalEqual", "LogicalNotEqual", "IAdd 64",
	"ISub 64", "IMul 64", "SDiv 64", "SRem 64", "UDiv 64", "UMod 64", "ShiftRightArithmetic 64",
	"ShiftLeftLogical 64", "ShiftRightLogical 64", "SNegate 64", "SLessThan 64", "ULessThan 64",
	"Select slt d e", "Select bool", "SConvert 8->32", "UConvert 8->32", "ShiftRightArithmetic 8", "IAdd 8",
	"IAdd (Select) (IMul)"};

/* The same expressions on the host, with C's fixed-width types: out[k] as
 * the kernel stores it (32- and 8-bit results zero-extended, booleans 1/0). */
static void spec_ops_host(const spec_vals_t *v, uint64_t *o)
{
	const uint32_t a = v->a, b = v->b, s = v->s;
	const int32_t sa = (int32_t)a, sb = (int32_t)b;
	const int c = v->c != 0;
	const uint64_t d = v->d, e = v->e;
	const int64_t sd = (int64_t)d, se = (int64_t)e;
	const int slt = sa < sb;
	o[0] = (uint32_t)(a + b);
	o[1] = (uint32_t)(a - b);
	o[2] = (uint32_t)(a * b);
	o[3] = a / b;
	o[4] = a % b;
	o[5] = sb == -1 ? 0u - a : (uint32_t)(sa / sb); /* INT_MIN / -1 wraps */
	o[6] = sb == -1 ? 0 : (uint32_t)(sa % sb);
	o[7] = (uint32_t)(0u - a);
	o[8] = (uint32_t)~a;
	o[9] = a & b;
	o[10] = a | b;
	o[11] = a ^ b;
	o[12] = (uint32_t)(a << s);
	o[13] = a >> s;
	o[14] = (uint32_t)(sa >> s);
	o[15] = a;
	o[16] = (uint64_t)(int64_t)sa;
	o[17] = (uint32_t)d;
	o[18] = (uint32_t)d;
	o[19] = c ? a : b;
	o[20] = a == b;
	o[21] = a != b;
	o[22] = a < b;
	o[23] = a > b;
	o[24] = a <= b;
	o[25] = a >= b;
	o[26] = sa < sb;
	o[27] = sa > sb;
	o[28] = sa <= sb;
	o[29] = sa >= sb;
	o[30] = c && slt;
	o[31] = c || slt;
	o[32] = !c;
	o[33] = c == slt;
	o[34] = c != slt;
	o[35] = d + e;
	o[36] = d - e;
	o[37] = d * e;
	o[38] = se == -1 ? 0 - d : (uint64_t)(sd / se); /* INT64_MIN / -1 wraps */
	o[39] = se == -1 ? 0 : (uint64_t)(sd % se);
	o[40] = d / e;
	o[41] = d % e;
	o[42] = (uint64_t)(sd >> s);
	o[43] = d << s;
	o[44] = d >> s;
	o[45] = 0 - d;
	o[46] = sd < se;
	o[47] = d < e;
	o[48] = slt ? d : e;
	o[49] = c ? a == b : a < b;
	o[50] = (uint32_t)(int32_t)(int8_t)v->n;
	o[51] = v->n;
	o[52] = (uint8_t)((int8_t)v->n >> s);
	o[53] = (uint8_t)(v->n + v->n);
	o[54] = (uint32_t)((c ? a : b) + a * b);
}

static void run_spec_ops(e2e_t *e, const char *path, const spec_vals_t *v, uint32_t mask, const char *what)
{
	/* mask: which constants are overridden (bit 0 = a ... bit 6 = n); the
	 * others keep their defaults, which v must then hold. */
	const uint32_t all_ids[7] = {10, 11, 12, 13, 14, 15, 16};
	const void *all_values[7] = {&v->a, &v->b, &v->c, &v->d, &v->e, &v->s, &v->n};
	uint32_t ids[7];
	const void *values[7];
	uint32_t count = 0;
	for (uint32_t i = 0; i < 7; i++)
		if (mask >> i & 1) {
			ids[count] = all_ids[i];
			values[count++] = all_values[i];
		}
	const ze_module_constants_t sc = {count, ids, values};
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, bin, "",
			       count ? &sc : NULL};
	ze_module_handle_t m;
	CHECK(zeModuleCreate(e->ctx, e->dev, &md, &m, NULL));
	free(bin);
	ze_kernel_handle_t k = e2e_kernel(m, "spec_ops");
	uint64_t *out = e2e_alloc_shared(e, SPEC_OPS * 8);
	for (uint32_t i = 0; i < SPEC_OPS; i++)
		out[i] = 0xdeadbeefdeadbeefull;
	const e2e_arg_t args[] = {{8, &out}};
	e2e_set_args(k, 1, args);
	launch(e, k, 1, 1, 1, 1, 1, 1);
	uint64_t want[SPEC_OPS];
	spec_ops_host(v, want);
	for (uint32_t i = 0; i < SPEC_OPS; i++)
		EXPECT(out[i] == want[i], "%s: out[%u] (%s) = 0x%llx, expected 0x%llx (a=%d b=%d c=%u d=%lld e=%lld s=%u n=0x%x)",
		       what, i, spec_op_names[i], (unsigned long long)out[i], (unsigned long long)want[i], (int32_t)v->a,
		       (int32_t)v->b, v->c, (long long)v->d, (long long)v->e, v->s, v->n);
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
}

static void test_spec_ops(e2e_t *e, const char *path)
{
	const spec_vals_t def = {7, 3, 0, 0x100000005ull, 2, 5, 240};
	run_spec_ops(e, path, &def, 0, "defaults");
	/* Only the bool: every condition on c flips, the rest stays. */
	spec_vals_t v = def;
	v.c = 1;
	run_spec_ops(e, path, &v, 1u << 2, "c overridden alone");
	/* Signs flipped: a negative (signed and unsigned orders now differ), d
	 * negative, the 8-bit value positive. */
	const spec_vals_t neg_a = {(uint32_t)-7, 3, 1, (uint64_t)-0x100000005ll, 2, 3, 0x7f};
	run_spec_ops(e, path, &neg_a, 0x7f, "a, d negative");
	const spec_vals_t neg_b = {7, (uint32_t)-3, 0, 0x100000005ull, (uint64_t)-3, 1, 0x81};
	run_spec_ops(e, path, &neg_b, 0x7f, "b, e negative");
	const spec_vals_t both = {(uint32_t)-100, (uint32_t)-7, 1, 0x7ffffffffffffff1ull, (uint64_t)-16, 7, 0x80};
	run_spec_ops(e, path, &both, 0x7f, "both negative");
	const spec_vals_t equal = {0x80000000u, 0x80000000u, 0, (uint64_t)-5, (uint64_t)-5, 0, 1};
	run_spec_ops(e, path, &equal, 0x7f, "equal operands");
	const spec_vals_t big = {0xfffffff0u, 0x10u, 1, 0x8000000000000000ull, 0x7fffffffffffffffull, 4, 0xff};
	run_spec_ops(e, path, &big, 0x7f, "extremes");
	/* The one signed 64-bit division that overflows: the result is
	 * undefined in SPIR-V, but the build must not trap (the evaluator wraps:
	 * INT64_MIN / -1 = INT64_MIN, INT64_MIN % -1 = 0, as spec_ops_host). */
	const spec_vals_t ovf = {0x80000000u, 0xffffffffu, 0, 0x8000000000000000ull, (uint64_t)-1, 6, 0x80};
	run_spec_ops(e, path, &ovf, 0x7f, "INT_MIN / -1");
	note("spec_ops: %u OpSpecConstantOp expressions (every operation the evaluator handles), defaults and 7 "
	     "override sets, against the host",
	     SPEC_OPS);
}

/* A module of functions and data only: it builds (an empty log), has no
 * kernels and no native binary. */
static void test_nokernels(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	uint32_t count = 7;
	CHECK(zeModuleGetKernelNames(m, &count, NULL));
	EXPECT(count == 0, "%u kernels in a module of functions only", count);
	const char *name = "weigh";
	count = 1;
	CHECK(zeModuleGetKernelNames(m, &count, &name));
	EXPECT(count == 0, "%u kernel names returned", count);
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "weigh"};
	ze_kernel_handle_t k = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(m, &kd, &k));
	size_t size = 1;
	CHECK(zeModuleGetNativeBinary(m, &size, NULL));
	EXPECT(size == 0, "a native binary of %zu bytes", size);
	CHECK(zeModuleDestroy(m));
	/* It is checked all the same: with 32-bit addressing it is refused. */
	size_t bytes;
	uint32_t *w = (uint32_t *)read_file(path, &bytes);
	int found = 0;
	for (size_t i = 5; i < bytes / 4 && !found; i += w[i] >> 16 ? w[i] >> 16 : bytes)
		if (w[i] == (3u << 16 | 14u)) { /* OpMemoryModel Physical64 OpenCL */
			w[i + 1] = 1; /* Physical32 */
			found = 1;
		}
	EXPECT(found, "no OpMemoryModel in %s", path);
	char log[2048];
	m = NULL;
	const ze_result_t r = spirv_build(e, ZE_MODULE_FORMAT_IL_SPIRV, w, bytes, &m, log, sizeof(log));
	EXPECT(r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE && strstr(log, "addressing model Physical32"),
	       "a module of functions only with 32-bit addressing: 0x%x, %s", (unsigned)r, log);
	free(w);
	note("nokernels: built, 0 kernels, no native binary; refused with 32-bit addressing");
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: test_spirv KERNEL MODULE.spv");
	e2e_t e;
	e2e_init(&e);
	const char *which = argv[1], *path = argv[2];
	if (strcmp(which, "vadd") == 0)
		test_vadd(&e, path);
	else if (strcmp(which, "saxpy") == 0)
		test_saxpy(&e, path);
	else if (strcmp(which, "elementwise") == 0)
		test_elementwise(&e, path);
	else if (strcmp(which, "reduce") == 0)
		test_reduce(&e, path);
	else if (strcmp(which, "histogram") == 0)
		test_histogram(&e, path);
	else if (strcmp(which, "builtins") == 0)
		test_builtins(&e, path);
	else if (strcmp(which, "spec") == 0)
		test_spec(&e, path);
	else if (strcmp(which, "spec_ops") == 0)
		test_spec_ops(&e, path);
	else if (strcmp(which, "nokernels") == 0)
		test_nokernels(&e, path);
	else
		EXPECT(0, "unknown kernel %s", which);
	e2e_fini(&e);
	return 0;
}
