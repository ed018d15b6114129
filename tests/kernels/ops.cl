// Coverage of the SPIR-V front end beyond the five basic kernels, one kernel
// per area; tests/e2e/test_spirv_ops.c computes every result on the host.
#pragma OPENCL FP_CONTRACT OFF

// 64-bit integers: add, sub, mul, shifts by variable and constant counts,
// comparisons, conversions from and to 32 bits.
__kernel void int64_ops(__global const long *a, __global const long *b, __global long *out)
{
	size_t i = get_global_id(0);
	long x = a[i], y = b[i];
	int s = (int)(y & 63);
	__global long *o = out + i * 12;
	o[0] = x + y;
	o[1] = x - y;
	o[2] = x * y;
	o[3] = x << s;
	o[4] = x >> s;
	o[5] = (long)((ulong)x >> s);
	o[6] = (x < y) + 2 * (x <= y) + 4 * ((ulong)x < (ulong)y) + 8 * (x == y) + 16 * (x != y);
	o[7] = (long)(int)x + (long)(uint)y;
	o[8] = x >> 40 ^ x << 3;
	o[9] = ~x & (y | 0x0f0f0f0f0f0fL);
	o[10] = -x;
	o[11] = x * 12345 + (y >> 63);
}

// 32-bit division and remainder, signed and unsigned, by values and constants.
// (x / y and x % y of the same operands become a freeze that llvm-spirv-14
// cannot translate, so the remainders use other divisors.)
__kernel void div_ops(__global const int *a, __global const int *b, __global int *out)
{
	size_t i = get_global_id(0);
	int x = a[i], y = b[i];
	uint ux = (uint)x, uy = (uint)y;
	__global int *o = out + i * 8;
	o[0] = x / y;
	o[1] = x % (y | 1);
	o[2] = (int)(ux / uy);
	o[3] = (int)(ux % (uy | 2u));
	o[4] = x / 7;
	o[5] = x % -3;
	o[6] = (int)(ux / 1000u);
	o[7] = (int)(ux % 16u) + (int)(ux / 64u);
}

// Unstructured control flow: a switch, an early return, a loop with break and
// continue, nested loops with divergent trip counts.
__kernel void control(__global const int *in, __global int *out)
{
	size_t i = get_global_id(0);
	int x = in[i];
	int r = 0;
	switch (x) { /* on x itself: clang narrows "x & 7" to an i3 llvm-spirv-14 cannot encode */
	case 0: r = 10; break;
	case 1: r = x * 2; break;
	case 3:
	case 4: r = -x; break;
	case 6: out[i] = 12345; return;
	default: r = x ^ 0x3c; break;
	}
	for (int j = 0; j < 40; j++) {
		if (j == (x & 31))
			break;
		if ((j & 3) == 1)
			continue;
		r += j;
		for (int k = 0; k < (j & 3); k++)
			r = r * 3 + k;
	}
	if (r < 0 && (x & 8))
		r = -r;
	out[i] = r;
}

// Vectors: float4 arithmetic, swizzles, built-ins (fmin, fmax, clamp, sqrt,
// fabs, mad, dot), comparisons and select, conversions.
__kernel void vec_ops(__global const float4 *a, __global const float4 *b, __global float4 *out, __global int4 *iout)
{
	size_t i = get_global_id(0);
	float4 x = a[i], y = b[i];
	float4 s = x + y * 2.0f;
	float4 t = fmin(x, y) - fmax(x, y) + clamp(x, -1.0f, 1.0f);
	float4 u = sqrt(fabs(x)) + y.wzyx;
	out[i * 4] = s;
	out[i * 4 + 1] = t;
	out[i * 4 + 2] = u;
	out[i * 4 + 3] = (float4)(dot(x, y), x.x * y.y, (float)(int)x.z, native_recip(4.0f) * y.w);
	int4 c = x < y;
	iout[i * 2] = c;
	iout[i * 2 + 1] = select((int4)(1, 2, 3, 4), (int4)(-1, -2, -3, -4), c) + convert_int4(y);
}

// Structs in global memory, helper functions (not inlined by clang) with
// pointer arguments and results.
typedef struct {
	int a;
	float b;
	long c;
	int d[3];
} rec_t;

__attribute__((noinline)) static int weigh(__global const rec_t *r, int k)
{
	int s = 0;
	for (int j = 0; j < 3; j++)
		s += r->d[j] * (j + k);
	return s + r->a;
}

__attribute__((noinline)) static void store_pair(__global int *p, int x, int y)
{
	p[0] = x;
	p[1] = y;
}

__kernel void struct_calls(__global const rec_t *in, __global rec_t *out, __global int *pairs)
{
	size_t i = get_global_id(0);
	rec_t r = in[i];
	rec_t o;
	o.a = weigh(&in[i], 2);
	o.b = r.b * 0.5f;
	o.c = r.c + r.a;
	o.d[0] = r.d[2];
	o.d[1] = r.d[1];
	o.d[2] = weigh(&in[i], -1);
	out[i] = o;
	store_pair(pairs + 2 * i, r.a, (int)r.c);
}

// Atomics on global and local memory: min, max, and, or, xor, xchg, cmpxchg,
// dec, with and without using the old value.
__kernel void atomic_ops(__global const int *in, __global int *g, __global int *old, __global int *slots)
{
	__local int l[4];
	size_t i = get_global_id(0);
	uint lid = get_local_id(0);
	if (lid < 4)
		l[lid] = lid == 1 ? 0x7fffffff : 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	int x = in[i];
	atomic_min(&g[0], x);
	atomic_max(&g[1], x);
	atomic_and(&g[2], x | 0x0ff0);
	atomic_or(&g[3], x & 0x0f0f);
	atomic_xor(&g[4], x);
	old[2 * i] = atomic_dec(&g[5]);
	old[2 * i + 1] = atomic_cmpxchg(&slots[i], (int)i, -(int)i - 1);
	atomic_add(&l[0], x);
	atomic_min(&l[1], x);
	atomic_xchg(&l[2], 7);
	barrier(CLK_LOCAL_MEM_FENCE);
	if (lid == 0) {
		atomic_add(&g[7], l[0]);
		atomic_min(&g[8], l[1]);
		atomic_add(&g[9], l[2]);
	}
}
