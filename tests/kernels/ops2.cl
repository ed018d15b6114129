// More coverage of the SPIR-V front end (tests/e2e/test_spirv_ops.c computes
// every result on the host): math and integer built-ins, conversions between
// floats and 32/64-bit integers, classification, dynamic vector indexing,
// any/all, pointers chosen at run time within one buffer, more atomics.
#pragma OPENCL FP_CONTRACT OFF

__kernel void math_ops(__global const float *a, __global const float *b, __global float *f, __global int *n)
{
	size_t i = get_global_id(0);
	float x = a[i], y = b[i];
	__global float *o = f + i * 16;
	o[0] = rsqrt(fabs(x) + 1.0f);
	o[1] = exp2(y * 0.125f);
	o[2] = log2(fabs(x) + 0.5f);
	o[3] = native_exp(y * 0.25f);
	o[4] = native_log(fabs(y) + 2.0f);
	o[5] = mix(x, y, 0.375f);
	o[6] = copysign(x, y);
	o[7] = native_divide(x, y);
	o[8] = x / y;
	o[9] = (float)(uint)(fabs(x) * 1000.0f);
	o[10] = (float)(long)(x * 1.0e6f);
	o[11] = (float)((ulong)(fabs(y) * 1.0e9f) >> 3);
	o[12] = mad(x, y, 0.5f);
	o[13] = native_sqrt(fabs(y));
	o[14] = half_recip(y);
	o[15] = bitselect(x, y, as_float(0x80000000u));
	__global int *p = n + i * 12;
	int ix = (int)x, iy = (int)y;
	p[0] = min(ix, iy) + max(ix, iy) * 3;
	p[1] = clamp(ix, -5, 5) + abs(iy);
	p[2] = (int)mul_hi((uint)ix, (uint)iy);
	p[3] = mad24(ix, iy, 7);
	p[4] = isnan(x / (y - y)) + 2 * isinf(x / (y - y)) + 4 * isfinite(x) + 8 * signbit(y) + 16 * isnormal(y * 1e-38f);
	p[5] = (int)((uint)ix / 3u) ^ (int)min((uint)ix, (uint)iy);
	p[6] = (int)(long)(x * 1.0e9f);
	p[7] = (int)((long)(x * 1.0e9f) >> 32);
	p[8] = (int)max((uint)ix, (uint)iy);
	p[9] = (int)clamp((uint)ix, 10u, 1000u);
	p[10] = mul24(ix, iy);
	p[11] = (int)mad24((uint)ix, 3u, 1u);
}

__kernel void misc_ops(__global const int4 *v, __global const int *idx, __global int *out, __global int *buf)
{
	size_t i = get_global_id(0);
	int4 x = v[i];
	int k = idx[i] & 3;
	int4 y = x;
	y[k] = 100;
	__global int *o = out + i * 4;
	o[0] = x[k];
	o[1] = y.x + y.y * 10 + y.z * 100 + y.w * 1000;
	o[2] = any(x > 0) + 2 * all(x > -1000);
	/* a pointer chosen at run time, within one buffer */
	__global int *p = (i & 1) ? buf + i : buf + 2 * i + 1000;
	for (int j = 0; j < k; j++)
		p += 4000;
	*p = (int)i;
	o[3] = (int)(p - buf);
}

__kernel void atomic_ops2(__global uint *g, __global uint *ret)
{
	size_t i = get_global_id(0);
	ret[i] = atomic_inc(&g[0]);
	atomic_sub(&g[1], (uint)i);
	atomic_min(&g[2], (uint)i * 7u + 3u); /* unsigned */
	atomic_max(&g[3], (uint)i ^ 0x80000000u);
}

// Phis that read each other (a swap in a loop): their copies are a parallel copy.
// (Without the break, llvm-spirv-14 lays the blocks out in an order spirv-val
// rejects: a use before its definition.)
__kernel void swap_loop(__global int *io)
{
	size_t i = get_global_id(0);
	int a = io[2 * i], b = io[2 * i + 1];
	for (int j = 0; j < (int)(i & 7) + 1; j++) {
		int t = a;
		a = b + j;
		b = t;
		if (a == 12345)
			break;
	}
	io[2 * i] = a;
	io[2 * i + 1] = b;
}

// A struct pointing to itself: llvm-spirv declares its pointer type ahead
// (OpTypeForwardPointer). Only the layout is used (int at 0, the pointer at 8,
// float at 16).
struct node {
	int value;
	__global struct node *next;
	float weight;
};

__kernel void node_fields(__global struct node *nodes, __global int *out)
{
	size_t i = get_global_id(0);
	out[i] = nodes[i].value * 3 + (int)nodes[i].weight - nodes[i + 1].value;
}
