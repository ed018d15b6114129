/* Application kernels compiled from OpenCL C (tests/kernels/matmul.cl, scan.cl,
 * iterate.cl, black_scholes.cl) through the driver's SPIR-V front end, each
 * run on several sizes and checked against a host computation: bit for bit
 * where the host can do the same operations in the same order, within a
 * stated error bound against double precision for Black-Scholes.
 *
 *     test_spirv_corpus KERNEL MODULE.spv [long]
 *
 * KERNEL: matmul (naive and tiled), scan (multi-group inclusive prefix sum),
 * iterate (a long data-dependent loop; `long` runs the large configuration),
 * black_scholes. */
#include <math.h>

#include "spirv.h"

static ze_kernel_properties_t props(ze_kernel_handle_t k)
{
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	return kp;
}

static void launch(e2e_t *e, ze_kernel_handle_t k, uint32_t gx, uint32_t gy, uint32_t nx, uint32_t ny)
{
	CHECK(zeKernelSetGroupSize(k, gx, gy, 1));
	ze_group_count_t groups = {nx, ny, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
}

static float rand_float(uint32_t *seed, float lo, float hi)
{
	return lo + (hi - lo) * (float)(e2e_rand(seed) >> 8) / 16777216.0f;
}

/* ---- matmul ------------------------------------------------------------------ */

enum { TILE = 8 }; /* TILE of matmul.cl */

/* The kernels' computation: acc = fma(a, b, acc) in k order from +0, because
 * clang contracts `acc += a * b` into OpenCL's mad and the driver fuses it.
 * This file is compiled with -ffp-contract=off, so fmaf is the only fusion.
 * The tiled kernel's extra steps past k multiply zeros and add exactly +0,
 * which leaves any acc (never -0: it starts at +0) unchanged. */
static void matmul_host(const float *a, const float *b, float *c, uint32_t m, uint32_t n, uint32_t k)
{
	for (uint32_t row = 0; row < m; row++)
		for (uint32_t col = 0; col < n; col++) {
			float acc = 0.0f;
			for (uint32_t i = 0; i < k; i++)
				acc = fmaf(a[row * k + i], b[i * n + col], acc);
			c[row * n + col] = acc;
		}
}

static void run_matmul(e2e_t *e, ze_kernel_handle_t kn, ze_kernel_handle_t kt, uint32_t m, uint32_t n, uint32_t k)
{
	float *a = e2e_alloc_shared(e, (size_t)m * k * 4), *b = e2e_alloc_shared(e, (size_t)k * n * 4);
	float *c = e2e_alloc_shared(e, ((size_t)m * n + 1) * 4), *want = malloc((size_t)m * n * 4);
	EXPECT(want != NULL, "out of memory");
	uint32_t seed = 1000 + m * 7 + n * 3 + k;
	for (uint32_t i = 0; i < m * k; i++)
		a[i] = rand_float(&seed, -2.0f, 2.0f);
	for (uint32_t i = 0; i < k * n; i++)
		b[i] = rand_float(&seed, -2.0f, 2.0f);
	matmul_host(a, b, want, m, n, k);
	const char *names[2] = {"matmul_naive", "matmul_tiled"};
	for (int v = 0; v < 2; v++) {
		ze_kernel_handle_t kk = v ? kt : kn;
		for (uint32_t i = 0; i <= m * n; i++)
			c[i] = -7.0f; /* c[m * n]: just past the matrix, must stay */
		const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}, {4, &m}, {4, &n}, {4, &k}};
		e2e_set_args(kk, 6, args);
		if (v)
			launch(e, kk, TILE, TILE, (n + TILE - 1) / TILE, (m + TILE - 1) / TILE);
		else
			launch(e, kk, 16, 4, (n + 15) / 16, (m + 3) / 4);
		for (uint32_t i = 0; i < m * n; i++)
			EXPECT(float_bits(c[i]) == float_bits(want[i]), "%s %ux%ux%u: c[%u][%u] = %a, expected %a",
			       names[v], m, n, k, i / n, i % n, (double)c[i], (double)want[i]);
		EXPECT(c[m * n] == -7.0f, "%s %ux%ux%u: written past the matrix", names[v], m, n, k);
	}
	free(want);
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, c));
}

static void test_matmul(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t kn = e2e_kernel(m, "matmul_naive"), kt = e2e_kernel(m, "matmul_tiled");
	const ze_kernel_properties_t pn = props(kn), pt = props(kt);
	EXPECT(pn.numKernelArgs == 6 && pn.localMemSize == 0, "naive: %u arguments, %u bytes of SLM", pn.numKernelArgs,
	       pn.localMemSize);
	EXPECT(pt.numKernelArgs == 6 && pt.localMemSize == 2 * TILE * TILE * 4, "tiled: %u arguments, %u bytes of SLM",
	       pt.numKernelArgs, pt.localMemSize);
	uint32_t count = 0;
	CHECK(zeModuleGetKernelNames(m, &count, NULL));
	EXPECT(count == 2, "%u kernels in the module", count);
	/* Sizes are checked: pointers take 8 bytes, the uint arguments 4. */
	const uint64_t wide = 1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(kn, 0, 4, &wide));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(kt, 5, 8, &wide));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, zeKernelSetArgumentValue(kt, 6, 4, &wide));
	/* Square and tile multiples; then every dimension off the tile and group grid. */
	const uint32_t sizes[][3] = {{32, 32, 32}, {37, 29, 23}, {8, 48, 61}, {1, 1, 1}};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		run_matmul(e, kn, kt, sizes[i][0], sizes[i][1], sizes[i][2]);
	CHECK(zeKernelDestroy(kn));
	CHECK(zeKernelDestroy(kt));
	CHECK(zeModuleDestroy(m));
	note("matmul: naive and %ux%u-tiled, 4 shapes, bit-exact (fused multiply-add in k order)", TILE, TILE);
}

/* ---- scan -------------------------------------------------------------------- */

/* Inclusive scan of n values of in (device memory) into out, group by group on
 * the device, the block totals scanned recursively by the same kernels. */
static void scan_device(e2e_t *e, ze_kernel_handle_t kg, ze_kernel_handle_t ka, uint32_t *in, uint32_t *out,
			uint32_t n, uint32_t group)
{
	const uint32_t groups = (n + group - 1) / group;
	uint32_t *sums = e2e_alloc_device(e, groups * 4);
	const e2e_arg_t args[] = {{8, &in}, {8, &out}, {8, &sums}, {4, &n}, {group * 4, NULL}};
	e2e_set_args(kg, 5, args);
	launch(e, kg, group, 1, groups, 1);
	if (groups > 1) {
		uint32_t *scanned = e2e_alloc_device(e, groups * 4);
		scan_device(e, kg, ka, sums, scanned, groups, group);
		const e2e_arg_t add[] = {{8, &out}, {8, &scanned}, {4, &n}};
		e2e_set_args(ka, 3, add);
		launch(e, ka, group, 1, groups, 1);
		CHECK(zeMemFree(e->ctx, scanned));
	}
	CHECK(zeMemFree(e->ctx, sums));
}

static void run_scan(e2e_t *e, ze_kernel_handle_t kg, ze_kernel_handle_t ka, uint32_t n, uint32_t group)
{
	uint32_t *host = e2e_alloc_host(e, (n + 1) * 4), *in = e2e_alloc_device(e, n * 4);
	uint32_t *out = e2e_alloc_shared(e, (n + 1) * 4);
	uint32_t seed = 555 + n + group;
	for (uint32_t i = 0; i < n; i++)
		host[i] = e2e_rand(&seed); /* full 32-bit values: the sums wrap */
	CHECK(zeCommandListAppendMemoryCopy(e->list, in, host, n * 4, NULL, 0, NULL));
	memset(out, 0xab, (n + 1) * 4);
	scan_device(e, kg, ka, in, out, n, group);
	uint32_t want = 0;
	for (uint32_t i = 0; i < n; i++) {
		want += host[i];
		EXPECT(out[i] == want, "n %u, group %u: out[%u] = %#x, expected %#x", n, group, i, out[i], want);
	}
	EXPECT(out[n] == 0xabababab, "n %u, group %u: written past n", n, group);
	CHECK(zeMemFree(e->ctx, host));
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
}

static void test_scan(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t kg = e2e_kernel(m, "scan_groups"), ka = e2e_kernel(m, "scan_add");
	const ze_kernel_properties_t pg = props(kg);
	EXPECT(pg.numKernelArgs == 5 && pg.localMemSize == 0, "scan_groups: %u arguments, %u bytes of SLM",
	       pg.numKernelArgs, pg.localMemSize);
	EXPECT(props(ka).numKernelArgs == 3, "scan_add: %u arguments", props(ka).numKernelArgs);
	/* One partial group, exact groups, one level of totals, two levels. */
	const uint32_t sizes[] = {1, 63, 64, 65, 1000, 4097, 9000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		run_scan(e, kg, ka, sizes[i], 64);
	run_scan(e, kg, ka, 3001, 16);
	run_scan(e, kg, ka, 777, 128);
	CHECK(zeKernelDestroy(kg));
	CHECK(zeKernelDestroy(ka));
	CHECK(zeModuleDestroy(m));
	note("scan: inclusive prefix sums of 1 to 9000 values, groups of 16, 64 and 128");
}

/* ---- iterate ------------------------------------------------------------------ */

static void iterate_host(uint32_t i, uint32_t seed, uint32_t modulus, uint32_t limit, uint32_t *steps,
			 uint32_t *acc_out)
{
	uint32_t x = seed, acc = i, n = 0;
	do {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (x & 1)
			acc = acc * 3 + (x >> 7);
		else
			acc = (acc >> 1) ^ x;
		n++;
	} while (x % modulus != 0 && n < limit);
	*steps = n;
	*acc_out = acc;
}

/* Returns the largest number of steps of a work item. */
static uint32_t run_iterate(e2e_t *e, ze_kernel_handle_t k, uint32_t n, uint32_t group, uint32_t modulus,
			    uint32_t limit)
{
	uint32_t *seed = e2e_alloc_shared(e, n * 4), *steps = e2e_alloc_shared(e, n * 4);
	uint32_t *acc = e2e_alloc_shared(e, n * 4);
	uint32_t s = 4711 + n;
	for (uint32_t i = 0; i < n; i++)
		seed[i] = e2e_rand(&s) | 1; /* xorshift: a zero state would stay zero */
	memset(steps, 0, n * 4);
	memset(acc, 0, n * 4);
	const e2e_arg_t args[] = {{8, &seed}, {8, &steps}, {8, &acc}, {4, &modulus}, {4, &limit}};
	e2e_set_args(k, 5, args);
	launch(e, k, group, 1, n / group, 1);
	uint32_t most = 0, least = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ws, wa;
		iterate_host(i, seed[i], modulus, limit, &ws, &wa);
		EXPECT(steps[i] == ws && acc[i] == wa, "item %u (seed %#x): %u steps, acc %#x; expected %u, %#x", i,
		       seed[i], steps[i], acc[i], ws, wa);
		most = ws > most ? ws : most;
		least = ws < least ? ws : least;
	}
	/* The configuration must really diverge and reach the limit somewhere. */
	EXPECT(most == limit && least < limit / 4, "steps from %u to %u (limit %u): not divergent", least, most, limit);
	CHECK(zeMemFree(e->ctx, seed));
	CHECK(zeMemFree(e->ctx, steps));
	CHECK(zeMemFree(e->ctx, acc));
	return most;
}

static void test_iterate(e2e_t *e, const char *path, int long_run)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "iterate");
	EXPECT(props(k).numKernelArgs == 5, "%u arguments", props(k).numKernelArgs);
	uint32_t most;
	if (long_run) {
		run_iterate(e, k, 512, 64, 20000, 60000);
		most = run_iterate(e, k, 256, 32, 30000, 100000);
	} else {
		run_iterate(e, k, 64, 16, 300, 1000);
		most = run_iterate(e, k, 128, 64, 3000, 10000);
	}
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("iterate: divergent loops of up to %u iterations, bit-exact", most);
}

/* ---- black_scholes ---------------------------------------------------------- */

static double cnd_host(double d)
{
	const double a1 = 0.31938153, a2 = -0.356563782, a3 = 1.781477937, a4 = -1.821255978, a5 = 1.330274429;
	const double rsqrt2pi = 0.39894228040143267794;
	const double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
	const double c = rsqrt2pi * exp(-0.5 * d * d) * (k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5)))));
	return d > 0.0 ? 1.0 - c : c;
}

static void run_black_scholes(e2e_t *e, ze_kernel_handle_t k, uint32_t n, uint32_t group, double *worst)
{
	const float r = 0.02f, v = 0.30f;
	float *s = e2e_alloc_shared(e, n * 4), *x = e2e_alloc_shared(e, n * 4), *t = e2e_alloc_shared(e, n * 4);
	const uint32_t padded = (n + group - 1) / group * group;
	float *call = e2e_alloc_shared(e, padded * 4), *put = e2e_alloc_shared(e, padded * 4);
	uint32_t seed = 8080 + n;
	for (uint32_t i = 0; i < n; i++) {
		s[i] = rand_float(&seed, 5.0f, 30.0f);
		x[i] = rand_float(&seed, 1.0f, 100.0f);
		t[i] = rand_float(&seed, 0.25f, 10.0f);
	}
	for (uint32_t i = 0; i < padded; i++)
		call[i] = put[i] = -1.0f;
	const e2e_arg_t args[] = {{8, &s}, {8, &x}, {8, &t}, {8, &call}, {8, &put}, {4, &r}, {4, &v}, {4, &n}};
	e2e_set_args(k, 8, args);
	launch(e, k, group, 1, padded / group, 1);
	for (uint32_t i = 0; i < n; i++) {
		const double S = s[i], X = x[i], T = t[i], R = r, V = v;
		const double sqrt_t = sqrt(T);
		const double d1 = (log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrt_t), d2 = d1 - V * sqrt_t;
		const double disc = X * exp(-R * T);
		const double wc = S * cnd_host(d1) - disc * cnd_host(d2);
		const double wp = disc * (1.0 - cnd_host(d2)) - S * (1.0 - cnd_host(d1));
		/* Both prices are differences of terms of at most S and X in size,
		 * each computed in fp32 through about twenty operations (exp and
		 * log within a few ulp, the division within 2.5 ulp): their
		 * relative error stays below ~2e-6, i.e. an absolute error of
		 * 2e-6 * (S + X) in the price.  d1 and d2 carry an absolute error
		 * of about 1e-6 / (v * sqrt(t)) <= 7e-6 (v * sqrt(t) >= 0.15),
		 * which the normal density (<= 0.4) passes on scaled by S or X.
		 * So 1e-5 * (S + X) bounds the error with a margin, and 1e-4 of
		 * the price itself covers the rounding of the result. */
		const double tol = 1e-5 * (S + X) + 1e-4 * fabs(wc);
		const double tolp = 1e-5 * (S + X) + 1e-4 * fabs(wp);
		const double ec = fabs(call[i] - wc), ep = fabs(put[i] - wp);
		EXPECT(ec <= tol && ep <= tolp, "option %u (s %g, x %g, t %g): call %.9g put %.9g, expected %.9g %.9g",
		       i, S, X, T, (double)call[i], (double)put[i], wc, wp);
		const double rel = (ec > ep ? ec : ep) / (S + X);
		*worst = rel > *worst ? rel : *worst;
	}
	for (uint32_t i = n; i < padded; i++)
		EXPECT(call[i] == -1.0f && put[i] == -1.0f, "option %u past n written", i);
	CHECK(zeMemFree(e->ctx, s));
	CHECK(zeMemFree(e->ctx, x));
	CHECK(zeMemFree(e->ctx, t));
	CHECK(zeMemFree(e->ctx, call));
	CHECK(zeMemFree(e->ctx, put));
}

static void test_black_scholes(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "black_scholes");
	EXPECT(props(k).numKernelArgs == 8, "%u arguments", props(k).numKernelArgs);
	double worst = 0.0;
	run_black_scholes(e, k, 1024, 64, &worst);
	run_black_scholes(e, k, 3001, 128, &worst);
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	note("black_scholes: 4025 options within the bound; worst error %.2e of s + x", worst);
}

/* ---- invariant ----------------------------------------------------------------- */

/* invariant.cl on 256 work items (groups of 64), each with its own trip count
 * (in[g] % 41), against the same loops on the host; OpenCL's float division
 * is x * (1 / s), the reciprocal correctly rounded (docs/isa.md). */
static void test_invariant(e2e_t *e, const char *path)
{
	enum { N = 256 };
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t ku = e2e_kernel(m, "invariant_udiv"), kf = e2e_kernel(m, "invariant_fdiv");
	uint32_t *in = e2e_alloc_shared(e, N * 4), *out = e2e_alloc_shared(e, N * 4);
	float *fin = e2e_alloc_shared(e, N * 4), *fout = e2e_alloc_shared(e, N * 4);
	uint32_t seed = 77;
	const uint32_t divisors[] = {1, 3, 7, 41, 1000, 65537, 0x7fffffffu, 0xfffffffbu};
	for (size_t t = 0; t < sizeof(divisors) / sizeof(divisors[0]); t++) {
		for (uint32_t i = 0; i < N; i++) {
			in[i] = e2e_rand(&seed) ^ (t & 1 ? 0x80000000u : 0);
			fin[i] = rand_float(&seed, -100.0f, 100.0f);
		}
		uint32_t d = divisors[t], row = e2e_rand(&seed);
		float s = rand_float(&seed, 0.25f, 9.0f) * (t & 1 ? -1.0f : 1.0f);
		const e2e_arg_t ua[] = {{8, &out}, {8, &in}, {4, &d}, {4, &row}};
		e2e_set_args(ku, 4, ua);
		launch(e, ku, 64, 1, N / 64, 1);
		for (uint32_t g = 0; g < N; g++) {
			uint32_t acc = 0, trips = in[g] % 41u;
			for (uint32_t i = 0; i < trips; i++)
				acc += (in[(g + i) & 255u] + row * 7u) / d + i % d;
			EXPECT(out[g] == acc, "invariant_udiv d=%u: out[%u] = %u, expected %u (%u trips)", d, g, out[g], acc,
			       trips);
		}
		const e2e_arg_t fa[] = {{8, &fout}, {8, &fin}, {8, &in}, {4, &s}};
		e2e_set_args(kf, 4, fa);
		launch(e, kf, 64, 1, N / 64, 1);
		const float r = 1.0f / s;
		for (uint32_t g = 0; g < N; g++) {
			float acc = 0.0f;
			const uint32_t trips = in[g] % 41u;
			for (uint32_t i = 0; i < trips; i++)
				acc = acc * 0.5f + fin[(g + i) & 255u] * r;
			EXPECT(float_bits(fout[g]) == float_bits(acc), "invariant_fdiv s=%a: out[%u] = %a, expected %a", (double)s,
			       g, (double)fout[g], (double)acc);
		}
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, fin));
	CHECK(zeMemFree(e->ctx, fout));
	CHECK(zeKernelDestroy(ku));
	CHECK(zeKernelDestroy(kf));
	CHECK(zeModuleDestroy(m));
	note("invariant: udiv and fdiv by kernel arguments in loops, 8 divisors x 256 work items, exact");
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3 || (argc == 4 && strcmp(argv[3], "long") == 0),
	       "usage: test_spirv_corpus KERNEL MODULE.spv [long]");
	e2e_t e;
	e2e_init(&e);
	const char *which = argv[1], *path = argv[2];
	if (strcmp(which, "matmul") == 0)
		test_matmul(&e, path);
	else if (strcmp(which, "scan") == 0)
		test_scan(&e, path);
	else if (strcmp(which, "iterate") == 0)
		test_iterate(&e, path, argc == 4);
	else if (strcmp(which, "black_scholes") == 0)
		test_black_scholes(&e, path);
	else if (strcmp(which, "invariant") == 0)
		test_invariant(&e, path);
	else
		EXPECT(0, "unknown kernel %s", which);
	e2e_fini(&e);
	return 0;
}
