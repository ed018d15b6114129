/* The kernels of tests/kernels/ops.cl (six kernels in one module), ops2.cl and
 * cl2.cl, each checked against the host: 64-bit integers, 32-bit division,
 * unstructured control flow, vectors and built-ins, structs and function
 * calls, atomics, math and integer built-ins, conversions, classification,
 * dynamic vector indexing, pointers chosen at run time, a struct holding a
 * pointer to its own type (OpTypeForwardPointer), OpenCL 2.0 work-item
 * functions, SIMD8, (asm_ops.spvasm) instructions OpenCL C does not
 * produce, and (returns.spvasm) returns before, inside and after a loop.  Compiled with -ffp-contract=off like the kernels.
 *
 *     test_spirv_ops KERNEL_DIR */
#include <math.h>

#include "spirv.h"

static uint64_t rand64(uint32_t *seed)
{
	uint64_t v = (uint64_t)e2e_rand(seed) << 32 | e2e_rand(seed);
	return v >> (e2e_rand(seed) % 48);
}

static void int64_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "int64_ops");
	const uint32_t n = 512;
	int64_t *a = e2e_alloc_shared(e, n * 8), *b = e2e_alloc_shared(e, n * 8), *o = e2e_alloc_shared(e, n * 12 * 8);
	uint32_t seed = 64;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (int64_t)rand64(&seed) * ((e2e_rand(&seed) & 1) ? -1 : 1);
		b[i] = (int64_t)rand64(&seed) * ((e2e_rand(&seed) & 1) ? -1 : 1);
		if (i % 7 == 0)
			b[i] = a[i]; /* equal values for the comparisons */
		if (i % 11 == 0)
			b[i] = (int64_t)((uint64_t)a[i] + 1);
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o}};
	spirv_launch(e, k, 32, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		const int64_t x = a[i], y = b[i];
		const int s = (int)(y & 63);
		const uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
		const int64_t want[12] = {
			(int64_t)(ux + uy),
			(int64_t)(ux - uy),
			(int64_t)(ux * uy),
			(int64_t)(ux << s),
			x >> s,
			(int64_t)(ux >> s),
			(x < y) + 2 * (x <= y) + 4 * (ux < uy) + 8 * (x == y) + 16 * (x != y),
			(int64_t)(int32_t)x + (int64_t)(uint32_t)y,
			(x >> 40) ^ (int64_t)(ux << 3),
			~x & (y | 0x0f0f0f0f0f0fLL),
			(int64_t)(0 - ux),
			(int64_t)(ux * 12345u) + (y >> 63),
		};
		for (int j = 0; j < 12; j++)
			EXPECT(o[i * 12 + j] == want[j], "int64_ops item %u result %d: %#llx, expected %#llx (x %#llx y %#llx)",
			       i, j, (unsigned long long)o[i * 12 + j], (unsigned long long)want[j], (unsigned long long)x,
			       (unsigned long long)y);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeKernelDestroy(k));
}

static void div_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "div_ops");
	const uint32_t n = 1024;
	int32_t *a = e2e_alloc_shared(e, n * 4), *b = e2e_alloc_shared(e, n * 4), *o = e2e_alloc_shared(e, n * 8 * 4);
	uint32_t seed = 1234;
	static const int32_t edges[] = {1, -1, 2, 3, 7, -7, 1000, 65536, 0x7fffffff, -0x7fffffff};
	for (uint32_t i = 0; i < n; i++) {
		int32_t x = (int32_t)e2e_rand(&seed), y = (int32_t)e2e_rand(&seed);
		if (x == INT32_MIN)
			x++;
		switch (i % 4) {
		case 0:
			y = edges[(i / 4) % (sizeof(edges) / sizeof(edges[0]))];
			break;
		case 1:
			y >>= e2e_rand(&seed) % 31;
			break;
		case 2:
			x >>= e2e_rand(&seed) % 31;
			break;
		default:
			break;
		}
		if (y == 0)
			y = 5;
		a[i] = x;
		b[i] = y;
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o}};
	spirv_launch(e, k, 64, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		const int32_t x = a[i], y = b[i];
		const uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
		const int32_t want[8] = {
			x / y, x % (y | 1), (int32_t)(ux / uy), (int32_t)(ux % (uy | 2u)),
			x / 7, x % -3,      (int32_t)(ux / 1000u), (int32_t)(ux % 16u) + (int32_t)(ux / 64u),
		};
		for (int j = 0; j < 8; j++)
			EXPECT(o[i * 8 + j] == want[j], "div_ops item %u result %d: %d, expected %d (x %d y %d)", i, j,
			       o[i * 8 + j], want[j], x, y);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeKernelDestroy(k));
}

static int control_host(int x, int *early)
{
	int r = 0;
	*early = 0;
	switch (x) {
	case 0: r = 10; break;
	case 1: r = x * 2; break;
	case 3:
	case 4: r = -x; break;
	case 6: *early = 1; return 12345;
	default: r = x ^ 0x3c; break;
	}
	for (int j = 0; j < 40; j++) {
		if (j == (x & 31))
			break;
		if ((j & 3) == 1)
			continue;
		r = (int)((uint32_t)r + (uint32_t)j);
		for (int kk = 0; kk < (j & 3); kk++)
			r = (int)((uint32_t)r * 3u + (uint32_t)kk);
	}
	if (r < 0 && (x & 8))
		r = (int)(0u - (uint32_t)r);
	return r;
}

static void control(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "control");
	const uint32_t n = 1024;
	int32_t *in = e2e_alloc_shared(e, n * 4), *out = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 77;
	for (uint32_t i = 0; i < n; i++)
		in[i] = (i % 3) ? (int32_t)(e2e_rand(&seed) % 12) - 2 : (int32_t)(e2e_rand(&seed) % 200) - 100;
	const e2e_arg_t args[] = {{8, &in}, {8, &out}};
	spirv_launch(e, k, 64, n, 2, args);
	for (uint32_t i = 0; i < n; i++) {
		int early;
		const int want = control_host(in[i], &early);
		EXPECT(out[i] == want, "control item %u (x %d): %d, expected %d", i, in[i], out[i], want);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void vec_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "vec_ops");
	const uint32_t n = 256;
	float *a = e2e_alloc_shared(e, n * 16), *b = e2e_alloc_shared(e, n * 16), *o = e2e_alloc_shared(e, n * 4 * 16);
	int32_t *io = e2e_alloc_shared(e, n * 2 * 16);
	uint32_t seed = 4444;
	for (uint32_t i = 0; i < n * 4; i++) {
		a[i] = (float)((int32_t)(e2e_rand(&seed) % 200001) - 100000) / 997.0f;
		b[i] = (i % 5 == 0) ? a[i] : (float)((int32_t)(e2e_rand(&seed) % 200001) - 100000) / 1009.0f;
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o}, {8, &io}};
	spirv_launch(e, k, 16, n, 4, args);
	for (uint32_t i = 0; i < n; i++) {
		const float *x = a + 4 * i, *y = b + 4 * i;
		float want[16];
		int32_t iwant[8];
		for (int c = 0; c < 4; c++) {
			const float y2 = y[c] * 2.0f;
			want[c] = x[c] + y2;
			const float mm = fminf(x[c], y[c]) - fmaxf(x[c], y[c]);
			want[4 + c] = mm + fminf(fmaxf(x[c], -1.0f), 1.0f);
			want[8 + c] = sqrtf(fabsf(x[c])) + y[3 - c];
			iwant[c] = x[c] < y[c] ? -1 : 0;
			iwant[4 + c] = (iwant[c] ? -(c + 1) : c + 1) + (int32_t)y[c];
		}
		float d = x[0] * y[0];
		for (int c = 1; c < 4; c++)
			d = fmaf(x[c], y[c], d);
		want[12] = d;
		want[13] = x[0] * y[1];
		want[14] = (float)(int32_t)x[2];
		want[15] = 0.25f * y[3];
		for (int j = 0; j < 16; j++)
			EXPECT(float_bits(o[i * 16 + j]) == float_bits(want[j]), "vec_ops item %u float %d: %a, expected %a", i,
			       j, (double)o[i * 16 + j], (double)want[j]);
		for (int j = 0; j < 8; j++)
			EXPECT(io[i * 8 + j] == iwant[j], "vec_ops item %u int %d: %d, expected %d", i, j, io[i * 8 + j],
			       iwant[j]);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeMemFree(e->ctx, io));
	CHECK(zeKernelDestroy(k));
}

typedef struct {
	int32_t a;
	float b;
	int64_t c;
	int32_t d[3];
} rec_t;

static int32_t weigh(const rec_t *r, int k)
{
	uint32_t s = 0;
	for (int j = 0; j < 3; j++)
		s += (uint32_t)r->d[j] * (uint32_t)(j + k);
	return (int32_t)(s + (uint32_t)r->a);
}

static void struct_calls(e2e_t *e, ze_module_handle_t m)
{
	_Static_assert(sizeof(rec_t) == 32, "the OpenCL struct layout");
	ze_kernel_handle_t k = e2e_kernel(m, "struct_calls");
	const uint32_t n = 128;
	rec_t *in = e2e_alloc_shared(e, n * sizeof(rec_t)), *out = e2e_alloc_shared(e, n * sizeof(rec_t));
	int32_t *pairs = e2e_alloc_shared(e, n * 8);
	uint32_t seed = 5;
	for (uint32_t i = 0; i < n; i++) {
		in[i].a = (int32_t)(e2e_rand(&seed) % 20001) - 10000;
		in[i].b = (float)(e2e_rand(&seed) % 1000) / 8.0f;
		in[i].c = (int64_t)rand64(&seed) - (int64_t)rand64(&seed);
		for (int j = 0; j < 3; j++)
			in[i].d[j] = (int32_t)(e2e_rand(&seed) % 2001) - 1000;
	}
	const e2e_arg_t args[] = {{8, &in}, {8, &out}, {8, &pairs}};
	spirv_launch(e, k, 32, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		const rec_t *r = &in[i], *o = &out[i];
		EXPECT(o->a == weigh(r, 2), "struct item %u: a %d, expected %d", i, o->a, weigh(r, 2));
		EXPECT(float_bits(o->b) == float_bits(r->b * 0.5f), "struct item %u: b", i);
		EXPECT(o->c == (int64_t)((uint64_t)r->c + (uint64_t)(int64_t)r->a), "struct item %u: c", i);
		EXPECT(o->d[0] == r->d[2] && o->d[1] == r->d[1] && o->d[2] == weigh(r, -1), "struct item %u: d", i);
		EXPECT(pairs[2 * i] == r->a && pairs[2 * i + 1] == (int32_t)r->c, "struct item %u: pair", i);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, pairs));
	CHECK(zeKernelDestroy(k));
}

static int cmp_int(const void *a, const void *b)
{
	const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static void atomic_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "atomic_ops");
	const uint32_t n = 640, group = 64;
	int32_t *in = e2e_alloc_shared(e, n * 4), *g = e2e_alloc_shared(e, 10 * 4);
	int32_t *old = e2e_alloc_shared(e, n * 2 * 4), *slots = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 9;
	for (uint32_t i = 0; i < n; i++) {
		in[i] = (int32_t)(e2e_rand(&seed) % 2000001) - 1000000;
		slots[i] = i % 3 ? (int32_t)i + 7 : (int32_t)i;
	}
	const int32_t init[10] = {INT32_MAX, INT32_MIN, -1, 0, 0, 1000000, 0, 0, INT32_MAX, 0};
	memcpy(g, init, sizeof(init));
	const e2e_arg_t args[] = {{8, &in}, {8, &g}, {8, &old}, {8, &slots}};
	spirv_launch(e, k, group, n, 4, args);
	int32_t mn = INT32_MAX, mx = INT32_MIN, and_ = -1, or_ = 0, xor_ = 0;
	uint32_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		const int32_t x = in[i];
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
		and_ &= x | 0x0ff0;
		or_ |= x & 0x0f0f;
		xor_ ^= x;
		sum += (uint32_t)x;
	}
	EXPECT(g[0] == mn && g[1] == mx, "min %d max %d, expected %d %d", g[0], g[1], mn, mx);
	EXPECT(g[2] == and_ && g[3] == or_ && g[4] == xor_, "and/or/xor %#x %#x %#x", g[2], g[3], g[4]);
	EXPECT(g[5] == 1000000 - (int32_t)n, "dec: %d", g[5]);
	EXPECT(g[6] == 0, "untouched: %d", g[6]);
	EXPECT(g[7] == (int32_t)sum && g[8] == mn && g[9] == 7 * (int32_t)(n / group), "local atomics: %d %d %d", g[7],
	       g[8], g[9]);
	/* atomic_dec returned each value from 1000000 down exactly once. */
	int32_t *dec = malloc(n * 4);
	for (uint32_t i = 0; i < n; i++)
		dec[i] = old[2 * i];
	qsort(dec, n, 4, cmp_int);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(dec[i] == 1000000 - (int32_t)n + 1 + (int32_t)i, "atomic_dec results are not a permutation");
	free(dec);
	for (uint32_t i = 0; i < n; i++) {
		const int32_t before = i % 3 ? (int32_t)i + 7 : (int32_t)i;
		EXPECT(old[2 * i + 1] == before, "cmpxchg item %u returned %d, expected %d", i, old[2 * i + 1], before);
		EXPECT(slots[i] == (i % 3 ? before : -(int32_t)i - 1), "cmpxchg item %u left %d", i, slots[i]);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, g));
	CHECK(zeMemFree(e->ctx, old));
	CHECK(zeMemFree(e->ctx, slots));
	CHECK(zeKernelDestroy(k));
}

/* ---- ops2.cl --------------------------------------------------------------------- */

static void math_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "math_ops");
	const uint32_t n = 512;
	float *a = e2e_alloc_shared(e, n * 4), *b = e2e_alloc_shared(e, n * 4), *f = e2e_alloc_shared(e, n * 16 * 4);
	int32_t *o = e2e_alloc_shared(e, n * 12 * 4);
	uint32_t seed = 271828;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)((int32_t)(e2e_rand(&seed) % 8000001) - 4000000) / 1000.0f; /* |x| <= 4000 */
		b[i] = (float)((int32_t)(e2e_rand(&seed) % 2000001) - 1000000) / 1000.0f;
		if (b[i] == 0.0f)
			b[i] = 0.5f;
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &f}, {8, &o}};
	spirv_launch(e, k, 32, n, 4, args);
	for (uint32_t i = 0; i < n; i++) {
		const float x = a[i], y = b[i];
		float want[16];
		want[0] = 1.0f / sqrtf(fabsf(x) + 1.0f);
		want[1] = (float)exp2((double)(y * 0.125f));
		want[2] = (float)log2((double)(fabsf(x) + 0.5f));
		want[3] = (float)exp2((double)((y * 0.25f) * 1.44269502f));
		want[4] = (float)log2((double)(fabsf(y) + 2.0f)) * 0.693147182f;
		want[5] = fmaf(y - x, 0.375f, x);
		want[6] = copysignf(x, y);
		want[7] = x * (1.0f / y);
		want[8] = x * (1.0f / y);
		want[9] = (float)(uint32_t)(fabsf(x) * 1000.0f);
		want[10] = (float)(int64_t)(x * 1.0e6f);
		want[11] = (float)((uint64_t)(fabsf(y) * 1.0e9f) >> 3);
		want[12] = fmaf(x, y, 0.5f);
		want[13] = sqrtf(fabsf(y));
		want[14] = 1.0f / y;
		const uint32_t sel_bits = (float_bits(x) & 0x7fffffffu) | (float_bits(y) & 0x80000000u);
		memcpy(&want[15], &sel_bits, 4);
		for (int j = 0; j < 16; j++)
			EXPECT(float_bits(f[i * 16 + j]) == float_bits(want[j]), "math_ops item %u float %d: %a, expected %a (x %a y %a)",
			       i, j, (double)f[i * 16 + j], (double)want[j], (double)x, (double)y);
		const int32_t ix = (int32_t)x, iy = (int32_t)y;
		const float inf = x * (1.0f / (y - y));
		const float tiny = y * 1e-38f;
		int32_t iw[12];
		iw[0] = (ix < iy ? ix : iy) + (ix > iy ? ix : iy) * 3;
		iw[1] = (ix < -5 ? -5 : ix > 5 ? 5 : ix) + (iy < 0 ? -iy : iy);
		iw[2] = (int32_t)(((uint64_t)(uint32_t)ix * (uint32_t)iy) >> 32);
		iw[3] = ix * iy + 7;
		iw[4] = isnan(inf) + 2 * (isinf(inf) != 0) + 4 * (isfinite(x) != 0) + 8 * (signbit(y) != 0) +
			16 * (isnormal(tiny) != 0);
		iw[5] = (int32_t)((uint32_t)ix / 3u) ^ (int32_t)((uint32_t)ix < (uint32_t)iy ? (uint32_t)ix : (uint32_t)iy);
		iw[6] = (int32_t)(int64_t)(x * 1.0e9f);
		iw[7] = (int32_t)((int64_t)(x * 1.0e9f) >> 32);
		iw[8] = (int32_t)((uint32_t)ix > (uint32_t)iy ? (uint32_t)ix : (uint32_t)iy);
		iw[9] = (int32_t)((uint32_t)ix < 10u ? 10u : (uint32_t)ix > 1000u ? 1000u : (uint32_t)ix);
		iw[10] = ix * iy;
		iw[11] = (int32_t)((uint32_t)ix * 3u + 1u);
		for (int j = 0; j < 12; j++)
			EXPECT(o[i * 12 + j] == iw[j], "math_ops item %u int %d: %d, expected %d (x %a y %a)", i, j, o[i * 12 + j],
			       iw[j], (double)x, (double)y);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, f));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeKernelDestroy(k));
}

static void misc_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "misc_ops");
	const uint32_t n = 256, nbuf = 4 * 4000 + 2 * n + 1000;
	int32_t *v = e2e_alloc_shared(e, n * 16), *idx = e2e_alloc_shared(e, n * 4), *out = e2e_alloc_shared(e, n * 16);
	int32_t *buf = e2e_alloc_shared(e, nbuf * 4);
	uint32_t seed = 8080;
	for (uint32_t i = 0; i < n * 4; i++)
		v[i] = (int32_t)(e2e_rand(&seed) % 3001) - (i % 3 ? 500 : 2500);
	for (uint32_t i = 0; i < n; i++)
		idx[i] = (int32_t)e2e_rand(&seed);
	memset(buf, 0xff, nbuf * 4);
	const e2e_arg_t args[] = {{8, &v}, {8, &idx}, {8, &out}, {8, &buf}};
	spirv_launch(e, k, 16, n, 4, args);
	for (uint32_t i = 0; i < n; i++) {
		const int32_t *x = v + 4 * i;
		const int kk = idx[i] & 3;
		int32_t y[4] = {x[0], x[1], x[2], x[3]};
		y[kk] = 100;
		int any = 0, all = 1;
		for (int c = 0; c < 4; c++) {
			any |= x[c] > 0;
			all &= x[c] > -1000;
		}
		const int32_t at = (int32_t)((i & 1) ? i : 2 * i + 1000) + 4000 * kk;
		const int32_t want[4] = {x[kk], y[0] + y[1] * 10 + y[2] * 100 + y[3] * 1000, any + 2 * all, at};
		for (int j = 0; j < 4; j++)
			EXPECT(out[i * 4 + j] == want[j], "misc_ops item %u result %d: %d, expected %d", i, j, out[i * 4 + j],
			       want[j]);
		EXPECT(buf[at] == (int32_t)i, "misc_ops item %u: buf[%d] = %d", i, at, buf[at]);
	}
	CHECK(zeMemFree(e->ctx, v));
	CHECK(zeMemFree(e->ctx, idx));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, buf));
	CHECK(zeKernelDestroy(k));
}

static int cmp_uint(const void *a, const void *b)
{
	const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void atomic_ops2(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "atomic_ops2");
	const uint32_t n = 384;
	uint32_t *g = e2e_alloc_shared(e, 4 * 4), *ret = e2e_alloc_shared(e, n * 4);
	g[0] = 10;
	g[1] = 0;
	g[2] = 0xffffffffu;
	g[3] = 0;
	const e2e_arg_t args[] = {{8, &g}, {8, &ret}};
	spirv_launch(e, k, 64, n, 2, args);
	EXPECT(g[0] == 10 + n, "inc: %u", g[0]);
	EXPECT(g[1] == 0u - n * (n - 1) / 2, "sub: %u", g[1]);
	EXPECT(g[2] == 3, "umin: %u", g[2]);
	EXPECT(g[3] == (0x80000000u | (n - 1)), "umax: %#x", g[3]);
	qsort(ret, n, 4, cmp_uint);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(ret[i] == 10 + i, "atomic_inc results are not a permutation");
	CHECK(zeMemFree(e->ctx, g));
	CHECK(zeMemFree(e->ctx, ret));
	CHECK(zeKernelDestroy(k));
}

/* struct node of ops2.cl: a struct holding a pointer to its own type. */
struct node {
	int32_t value;
	void *next;
	float weight;
};

static void node_fields(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "node_fields");
	const uint32_t n = 96;
	struct node *nodes = e2e_alloc_shared(e, (n + 1) * sizeof(struct node));
	int32_t *out = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 77;
	for (uint32_t i = 0; i <= n; i++) {
		nodes[i].value = (int32_t)(e2e_rand(&seed) % 2001) - 1000;
		nodes[i].next = &nodes[(i + 1) % (n + 1)];
		nodes[i].weight = (float)(e2e_rand(&seed) % 200) - 99.5f;
	}
	const e2e_arg_t args[] = {{8, &nodes}, {8, &out}};
	spirv_launch(e, k, 32, n, 2, args);
	for (uint32_t i = 0; i < n; i++) {
		const int32_t want = nodes[i].value * 3 + (int32_t)nodes[i].weight - nodes[i + 1].value;
		EXPECT(out[i] == want, "node_fields[%u] = %d, expected %d", i, out[i], want);
	}
	CHECK(zeMemFree(e->ctx, nodes));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void swap_loop(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "swap_loop");
	const uint32_t n = 128;
	int32_t *io = e2e_alloc_shared(e, n * 8), *want = malloc(n * 8);
	uint32_t seed = 31;
	for (uint32_t i = 0; i < 2 * n; i++)
		io[i] = (int32_t)(e2e_rand(&seed) % 1000);
	for (uint32_t i = 0; i < n; i++) {
		int32_t a = io[2 * i], b = io[2 * i + 1];
		for (int j = 0; j < (int)(i & 7) + 1; j++) {
			const int32_t t = a;
			a = b + j;
			b = t;
			if (a == 12345)
				break;
		}
		want[2 * i] = a;
		want[2 * i + 1] = b;
	}
	const e2e_arg_t args[] = {{8, &io}};
	spirv_launch(e, k, 32, n, 1, args);
	for (uint32_t i = 0; i < 2 * n; i++)
		EXPECT(io[i] == want[i], "swap_loop word %u: %d, expected %d", i, io[i], want[i]);
	free(want);
	CHECK(zeMemFree(e->ctx, io));
	CHECK(zeKernelDestroy(k));
}

/* ---- cl2.cl ----------------------------------------------------------------------- */

static void ids2(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ids2");
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	const uint32_t simd = kp.maxSubgroupSize;
	const uint32_t L[2] = {20, 3}, N[2] = {2, 3}, G[2] = {L[0] * N[0], L[1] * N[1]};
	uint32_t *out = e2e_alloc_shared(e, G[0] * G[1] * 8 * 4);
	const e2e_arg_t args[] = {{8, &out}};
	e2e_set_args(k, 1, args);
	CHECK(zeKernelSetGroupSize(k, L[0], L[1], 1));
	ze_group_count_t groups = {N[0], N[1], 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
	const uint32_t per_group = L[0] * L[1], threads = (per_group + simd - 1) / simd;
	for (uint32_t y = 0; y < G[1]; y++)
		for (uint32_t x = 0; x < G[0]; x++) {
			const uint32_t g = y * G[0] + x, local = (y % L[1]) * L[0] + x % L[0];
			const uint32_t *o = out + g * 8;
			const uint32_t want[8] = {local, simd, local / simd, local % simd, threads, simd, L[0] + 100 * L[1], g};
			for (int j = 0; j < 8; j++)
				EXPECT(o[j] == want[j], "ids2 (%u,%u) result %d: %u, expected %u", x, y, j, o[j], want[j]);
		}
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void ids8(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ids8");
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	EXPECT(kp.maxSubgroupSize == 8 && kp.numKernelArgs == 3, "sub-group %u, %u arguments", kp.maxSubgroupSize,
	       kp.numKernelArgs);
	const uint32_t n = 100;
	uint32_t *out = e2e_alloc_shared(e, 2 * n * 4);
	int32_t *a = e2e_alloc_shared(e, n * 4);
	const e2e_arg_t args[] = {{8, &out}, {8, &a}, {4, &n}};
	e2e_set_args(k, 3, args);
	CHECK(zeKernelSetGroupSize(k, 20, 1, 1));
	ze_group_count_t groups = {n / 20, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
	for (uint32_t g = 0; g < n; g++) {
		EXPECT(out[g] == 8000 + (g % 20) % 8, "ids8 %u: %u", g, out[g]);
		EXPECT(out[n + g] == 3 * g && a[g] == (int32_t)(3 * g), "ids8 %u: atomics %u %d", g, out[n + g], a[g]);
	}
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeKernelDestroy(k));
}

/* ---- asm_ops.spvasm ---------------------------------------------------------------- */

static void asm_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "asm_ops");
	const uint32_t n = 256;
	int32_t *ints = e2e_alloc_shared(e, n * 8), *iout = e2e_alloc_shared(e, n * 16);
	float *floats = e2e_alloc_shared(e, n * 8), *vin = e2e_alloc_shared(e, n * 16);
	float *vout = e2e_alloc_shared(e, n * 32);
	uint32_t seed = 6502;
	for (uint32_t i = 0; i < n; i++) {
		int32_t x = (int32_t)(e2e_rand(&seed) % 2001) - 1000, y = (int32_t)(e2e_rand(&seed) % 41) - 20;
		if (i % 5 == 0)
			x = 5 + 2 * (int32_t)(i % 3); /* the switch cases */
		ints[2 * i] = x;
		ints[2 * i + 1] = y ? y : 3;
		float f = (float)(int32_t)(e2e_rand(&seed) % 9) - 4.0f, g = (float)(int32_t)(e2e_rand(&seed) % 9) - 4.0f;
		if (i % 7 == 1)
			f = NAN;
		if (i % 11 == 2)
			g = NAN;
		floats[2 * i] = f;
		floats[2 * i + 1] = g;
		for (int c = 0; c < 4; c++)
			vin[4 * i + c] = (float)(int32_t)(e2e_rand(&seed) % 2001) / 16.0f;
	}
	const e2e_arg_t args[] = {{8, &ints}, {8, &floats}, {8, &vin}, {8, &iout}, {8, &vout}};
	spirv_launch(e, k, 32, n, 5, args);
	for (uint32_t i = 0; i < n; i++) {
		const int32_t x = ints[2 * i], y = ints[2 * i + 1];
		const float f = floats[2 * i], g = floats[2 * i + 1];
		int32_t smod = x % y;
		if (smod != 0 && ((smod < 0) != (y < 0)))
			smod += y;
		const int uno = isnan(f) || isnan(g);
		const int lt = uno || f < g, eq = uno || f == g, ne = !uno && f != g, le = uno || f <= g;
		const int gt = uno || f > g, ge = uno || f >= g;
		const int32_t cmps = lt | eq << 1 | ne << 2 | !uno << 3 | uno << 4 | le << 5 | gt << 6 | ge << 7;
		const int32_t logic = (lt && !uno) | (eq || uno) << 1 | !ne << 2 | (lt == gt) << 3 | (lt != ge) << 4;
		const int32_t sw = x == 5 ? 11 : x == 7 ? 22 : 44;
		const int32_t want[4] = {smod, cmps, logic, sw};
		for (int j = 0; j < 4; j++)
			EXPECT(iout[4 * i + j] == want[j], "asm_ops item %u result %d: %d, expected %d (x %d y %d f %g g %g)", i,
			       j, iout[4 * i + j], want[j], x, y, (double)f, (double)g);
		for (int c = 0; c < 4; c++) {
			const float p = vin[4 * i + c] * f;
			EXPECT(float_bits(vout[8 * i + c]) == float_bits(p) || (isnan(p) && isnan(vout[8 * i + c])),
			       "asm_ops item %u: vector times scalar", i);
			EXPECT(float_bits(vout[8 * i + 4 + c]) == float_bits(vin[4 * i + c]), "asm_ops item %u: copy", i);
		}
	}
	CHECK(zeMemFree(e->ctx, ints));
	CHECK(zeMemFree(e->ctx, floats));
	CHECK(zeMemFree(e->ctx, vin));
	CHECK(zeMemFree(e->ctx, iout));
	CHECK(zeMemFree(e->ctx, vout));
	CHECK(zeKernelDestroy(k));
}

/* div64.cl: 64-bit division and remainder, unsigned and signed, on edge values. */
static void div64(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "div64");
	const uint32_t n = 1024;
	uint64_t *a = e2e_alloc_shared(e, n * 8), *b = e2e_alloc_shared(e, n * 8), *o = e2e_alloc_shared(e, n * 5 * 8);
	static const uint64_t edges[] = {1, 2, 3, 7, 10, 0xffffffffull, 0x100000000ull, 0x100000001ull,
					 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
					 0xfffffffffffffffeull, 12345678901234567ull, 0x8000000000000001ull,
					 0xffffffff00000000ull, 0x00000000fffffffeull};
	uint32_t seed = 6464;
	for (uint32_t i = 0; i < n; i++) {
		if (i < 256) {
			a[i] = edges[i % 16];
			b[i] = edges[i / 16];
		} else {
			a[i] = rand64(&seed) ^ ((uint64_t)e2e_rand(&seed) << 63);
			b[i] = rand64(&seed) >> (e2e_rand(&seed) % 60);
			if (!b[i])
				b[i] = 3;
			if (i % 5 == 0)
				a[i] = b[i] * (e2e_rand(&seed) % 1000) + (e2e_rand(&seed) % 3); /* near multiples */
		}
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o}};
	spirv_launch(e, k, 64, n, 3, args);
	ze_kernel_handle_t k2 = e2e_kernel(m, "rem64");
	spirv_launch(e, k2, 64, n, 3, args);
	CHECK(zeKernelDestroy(k2));
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t x = a[i], y = b[i];
		const int64_t sx = (int64_t)x, sy = (int64_t)y;
		const int ub = sx == INT64_MIN && sy == -1;
		const uint64_t want[5] = {x / y, x % y, ub ? 0 : (uint64_t)(sx / sy), ub ? 0 : (uint64_t)(sx % sy),
					  i / (y | 1)};
		for (int j = 0; j < 5; j++)
			EXPECT(o[i * 5 + j] == want[j], "div64 item %u result %d: %#llx, expected %#llx (x %#llx y %#llx)", i,
			       j, (unsigned long long)o[i * 5 + j], (unsigned long long)want[j], (unsigned long long)x,
			       (unsigned long long)y);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeKernelDestroy(k));
}

static uint32_t ulp_diff(float a, double want)
{
	const float w = (float)want;
	if (isnan(a) || isnan(w))
		return isnan(a) && isnan(w) ? 0 : UINT32_MAX;
	int32_t ia, iw;
	memcpy(&ia, &a, 4);
	memcpy(&iw, &w, 4);
	if ((ia < 0) != (iw < 0))
		return a == w ? 0 : UINT32_MAX;
	return (uint32_t)(ia > iw ? ia - iw : iw - ia);
}

static int same_float(float a, float b)
{
	return (isnan(a) && isnan(b)) || float_bits(a) == float_bits(b);
}

/* math_ptr.cl: sincos (within OpenCL's 4 ulp of the double result), fract,
 * modf, frexp (exact, against C99's modff and frexpf and OpenCL's fract). */
static void math_ptr(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "math_ptr");
	const uint32_t n = 512;
	float *x = e2e_alloc_shared(e, n * 4), *o = e2e_alloc_shared(e, n * 8 * 4);
	int32_t *ex = e2e_alloc_shared(e, n * 2 * 4);
	static const float edges[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-45f, 0.5f, 1.0f, -1.5f,
				      123.75f, -1e30f, 8388609.0f, -0.25f, 3.0e38f, 1.17549435e-38f};
	uint32_t seed = 314;
	for (uint32_t i = 0; i < n; i++) {
		if (i < 16) {
			x[i] = edges[i];
		} else {
			const uint32_t r = e2e_rand(&seed);
			float f;
			const uint32_t bits = (r & 0x80000000u) | ((100u + (r >> 8) % 60u) << 23) | (e2e_rand(&seed) & 0x7fffff);
			memcpy(&f, &bits, 4);
			x[i] = f;
		}
	}
	const e2e_arg_t args[] = {{8, &x}, {8, &o}, {8, &ex}};
	spirv_launch(e, k, 32, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		const float v = x[i];
		EXPECT(ulp_diff(o[i * 8 + 0], sin((double)v)) <= 4 && ulp_diff(o[i * 8 + 1], cos((double)v)) <= 4,
		       "math_ptr item %u: sincos(%a) = %a, %a", i, v, o[i * 8 + 0], o[i * 8 + 1]);
		const float fl = floorf(v);
		float fr = isinf(v) ? copysignf(0.0f, v) : fminf(v - fl, 0x1.fffffep-1f);
		if (v == 0.0f || isnan(v))
			fr = v;
		EXPECT(same_float(o[i * 8 + 2], fr) && same_float(o[i * 8 + 3], fl), "math_ptr item %u: fract(%a) = %a, %a; "
		       "expected %a, %a", i, v, o[i * 8 + 2], o[i * 8 + 3], fr, fl);
		float t;
		const float mf = modff(v, &t);
		EXPECT(same_float(o[i * 8 + 4], mf) && same_float(o[i * 8 + 5], t), "math_ptr item %u: modf(%a) = %a, %a; "
		       "expected %a, %a", i, v, o[i * 8 + 4], o[i * 8 + 5], mf, t);
		int fe;
		const float fm = frexpf(v, &fe);
		EXPECT(same_float(o[i * 8 + 6], fm) && (!isfinite(v) || ex[i * 2] == fe), "math_ptr item %u: frexp(%a) = %a, "
		       "%d; expected %a, %d", i, v, o[i * 8 + 6], ex[i * 2], fm, fe);
		const float nv = -v, nfl = floorf(nv);
		float nfr = isinf(nv) ? copysignf(0.0f, nv) : fminf(nv - nfl, 0x1.fffffep-1f);
		if (nv == 0.0f || isnan(nv))
			nfr = nv;
		const float w7 = nfr + fl;
		EXPECT(same_float(o[i * 8 + 7], w7), "math_ptr item %u: vector fract: %a, expected %a", i, o[i * 8 + 7], w7);
		int fe3;
		frexpf(v * 3.0f, &fe3);
		if (isfinite(v * 3.0f))
			EXPECT(ex[i * 2 + 1] == fe3 + 2, "math_ptr item %u: vector frexp exponent %d, expected %d", i,
			       ex[i * 2 + 1], fe3 + 2);
	}
	CHECK(zeMemFree(e->ctx, x));
	CHECK(zeMemFree(e->ctx, o));
	CHECK(zeMemFree(e->ctx, ex));
	CHECK(zeKernelDestroy(k));
}

/* regress.cl cond_chains, cond_chains2: the kernels' own code, on the host. */
static uint32_t ref_chains(const uint32_t *a, const float *f, int i, int n, int trips)
{
	const int j = i & 7, k = (i >> 3) & 7;
	const float x = f[i];
	uint32_t r = 0;
	for (int t = 0; t < trips; t++) {
		r = r * 5u + (j < n && k + t < 6 ? a[i + t] : 0u);
		r = r * 5u + (j > 2 || x < 0.5f ? a[i + t + 1] : 7u);
		r = r * 5u + (j != 3 && (k & 1) && t != 1 ? a[i + 2] : r & 3u);
		r = r * 5u + (!(x < 0.5f) && k < 5 ? a[i + t + 3] : 11u);
	}
	return r;
}

static uint32_t ref_chains2(const uint32_t *a, const float *f, int i)
{
	const int j = i & 7, k = (i >> 3) & 7;
	const float x = f[i];
	const int64_t w = (int64_t)a[i] * 3000000000LL;
	const uint64_t sh = (uint64_t)a[i + 3] << ((j * 9 + k) & 63);
	uint32_t r = a[i + 7];
	r = r * 5u + ((j < 4 && x > 0.25f) || k == 6 ? a[i + 4] : 1u);
	r = r * 5u + (w > 6000000000LL && j < 6 ? a[i + 5] : 2u);
	r = r * 5u + (j < 2 || (k > 3 && x != x) ? a[i + 1] : 3u);
	r = r * 5u + (sh != 0 && k < 7 ? a[i + 2] : 9u);
	r = r * 5u + ((sh >> 40) == 0 || j == 1 ? a[i + 6] : r);
	if ((j < 3 && k > 1) || x > 2.0f)
		r += a[i + 6];
	if (j > 4 && (w < 9000000000LL || x == x))
		r ^= 0x55u;
	return r;
}

/* Conditions chained into flags, loads starting as the other side's value,
 * a fence before a barrier with a shared-memory read in flight. */
static void regress_chains(e2e_t *e, ze_module_handle_t m)
{
	const uint32_t n = 256, pad = 16;
	uint32_t *a = e2e_alloc_shared(e, (n + pad) * 4), *out = e2e_alloc_shared(e, n * 4);
	float *f = e2e_alloc_shared(e, n * 4);
	for (uint32_t i = 0; i < n + pad; i++)
		a[i] = (i * 7919u) % 997u; /* a[i] * 3e9 stays in 64 bits */
	for (uint32_t i = 0; i < n; i++) {
		static const float fv[] = {0.0f, 0.25f, 0.5f, 0.75f, 2.0f, 3.0f, -1.0f, NAN, 0.3f, 2.5f, NAN};
		f[i] = fv[(i * 5u + i / 16u) % (sizeof(fv) / sizeof(fv[0]))];
	}
	ze_kernel_handle_t k = e2e_kernel(m, "cond_chains");
	for (int trips = 0; trips <= 3; trips += 3) {
		for (uint32_t i = 0; i < n; i++)
			out[i] = 0xdeadbeefu;
		const int32_t nn = 5;
		const e2e_arg_t args[] = {{8, &out}, {8, &a}, {8, &f}, {4, &nn}, {4, &trips}};
		spirv_launch(e, k, 32, n, 5, args);
		for (uint32_t i = 0; i < n; i++) {
			const uint32_t want = ref_chains(a, f, (int)i, nn, trips);
			EXPECT(out[i] == want, "cond_chains (trips %d) item %u: 0x%08x, expected 0x%08x", trips, i, out[i],
			       want);
		}
	}
	CHECK(zeKernelDestroy(k));
	k = e2e_kernel(m, "cond_chains2");
	for (uint32_t i = 0; i < n; i++)
		out[i] = 0xdeadbeefu;
	const e2e_arg_t args2[] = {{8, &out}, {8, &a}, {8, &f}};
	spirv_launch(e, k, 32, n, 3, args2);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t want = ref_chains2(a, f, (int)i);
		EXPECT(out[i] == want, "cond_chains2 item %u: 0x%08x, expected 0x%08x", i, out[i], want);
	}
	CHECK(zeKernelDestroy(k));
	k = e2e_kernel(m, "slm_war");
	int32_t *in = e2e_alloc_shared(e, n * 4), *o = (int32_t *)out;
	for (uint32_t i = 0; i < n; i++) {
		in[i] = (int32_t)((i * 37u) % 101u);
		o[i] = -7;
	}
	const e2e_arg_t args3[] = {{8, &o}, {8, &in}};
	spirv_launch(e, k, 64, n, 2, args3);
	for (uint32_t g = 0; g < n; g++) {
		const uint32_t l = g % 64, base = g - l;
		const int32_t want = in[base + 63 - l] * 1000 + (int32_t)(((l + 1) & 63) * 3);
		EXPECT(o[g] == want, "slm_war item %u: %d, expected %d", g, o[g], want);
	}
	CHECK(zeKernelDestroy(k));
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, f));
	CHECK(zeMemFree(e->ctx, out));
}

/* regress.cl: kernels that once miscompiled. */
static void regress(e2e_t *e, ze_module_handle_t m)
{
	const uint32_t n = 64, live = 32;
	ze_kernel_handle_t k = e2e_kernel(m, "latch_loop");
	int32_t *out = e2e_alloc_shared(e, n * 4), *in = e2e_alloc_shared(e, n * 4);
	for (uint32_t i = 0; i < n; i++) {
		in[i] = (int32_t)(i % 5 + 1);
		out[i] = -7;
	}
	const int32_t nn = (int32_t)live;
	const e2e_arg_t args[] = {{8, &out}, {8, &in}, {4, &nn}};
	spirv_launch(e, k, 32, n, 3, args);
	static const int32_t s_of[4] = {0, 1, 4, 13};
	for (uint32_t i = 0; i < n; i++) {
		const int32_t want_in = i < live ? 0 : (int32_t)(i % 5 + 1), want_out = i < live ? s_of[i & 3] : -7;
		EXPECT(in[i] == want_in && out[i] == want_out, "latch_loop item %u: in %d out %d, expected %d %d", i, in[i],
		       out[i], want_in, want_out);
	}
	CHECK(zeKernelDestroy(k));
	k = e2e_kernel(m, "merged_loads");
	int32_t *p = e2e_alloc_shared(e, n * 128 * 4);
	for (uint32_t i = 0; i < n * 128; i++)
		p[i] = (int32_t)((i * 7919u) % 97u);
	int32_t *before = malloc(n * 128 * 4);
	EXPECT(before != NULL, "out of memory");
	memcpy(before, p, n * 128 * 4);
	for (uint32_t i = 0; i < n; i++)
		out[i] = -7;
	const e2e_arg_t args2[] = {{8, &out}, {8, &p}};
	spirv_launch(e, k, 32, n, 2, args2);
	for (uint32_t g = 0; g < n; g++) {
		const int32_t *q = before + g * 128;
		const int32_t a = q[0] + q[1] + q[2];
		const int32_t want = a > 50 ? (q[50] + 1) * 1000 + (q[25] + 1) : -7;
		EXPECT(out[g] == want, "merged_loads item %u: %d, expected %d", g, out[g], want);
	}
	free(before);
	CHECK(zeMemFree(e->ctx, p));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeKernelDestroy(k));
}

/* returns.spvasm: returns before, inside and after a loop, lanes diverging. */
static void returns(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "k");
	const uint32_t n = 256;
	uint32_t *in = e2e_alloc_shared(e, n * 4), *out = e2e_alloc_shared(e, n * 4);
	for (uint32_t i = 0; i < n; i++)
		in[i] = (i * 37u) % 131u;
	const uint32_t nn = n;
	const e2e_arg_t args[] = {{8, &out}, {8, &in}, {4, &nn}};
	spirv_launch(e, k, 32, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t x = in[i], want = x > 100 ? 7 : x % 4 < 3 ? 200 + x % 4 : 3;
		EXPECT(out[i] == want, "returns item %u: %u, expected %u (in %u)", i, out[i], want, x);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static ze_module_handle_t load(e2e_t *e, const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return spirv_module(e, path);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_ops KERNEL_DIR");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = load(&e, argv[1], "ops.spv");
	uint32_t count = 0;
	CHECK(zeModuleGetKernelNames(m, &count, NULL));
	EXPECT(count == 6, "%u kernels", count);
	int64_ops(&e, m);
	div_ops(&e, m);
	control(&e, m);
	vec_ops(&e, m);
	struct_calls(&e, m);
	atomic_ops(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "ops2.spv");
	math_ops(&e, m);
	misc_ops(&e, m);
	atomic_ops2(&e, m);
	swap_loop(&e, m);
	node_fields(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "cl2.spv");
	ids2(&e, m);
	ids8(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "asm_ops.spv");
	asm_ops(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "div64.spv");
	div64(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "math_ptr.spv");
	math_ptr(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "regress.spv");
	regress(&e, m);
	regress_chains(&e, m);
	CHECK(zeModuleDestroy(m));
	m = load(&e, argv[1], "returns.spv");
	returns(&e, m);
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("ops: int64, division, control flow, vectors, structs and calls, atomics, math, conversions, "
	     "OpenCL 2.0 ids");
	return 0;
}
