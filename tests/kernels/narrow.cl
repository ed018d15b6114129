// 8- and 16-bit integers (tests/e2e/test_spirv_narrow.c): arithmetic that
// wraps at the type's width, signed and unsigned comparisons, division,
// shifts, conversions both ways, bitcasts between uchar4/short2 and int,
// built-ins whose result depends on the width, byte and short stores by
// neighbouring work items into the same dword, vectors of chars in memory,
// arguments of narrow types by value.

__kernel void char_ops(__global const char *a, __global const uchar *b, __global char *o8, __global uchar *u8,
		       __global int *o32, char k, uchar ku)
{
	const size_t i = get_global_id(0);
	const char x = a[i];
	const uchar y = b[i];
	o8[i * 8 + 0] = (char)(x + k);
	o8[i * 8 + 1] = (char)(x * (char)y);
	o8[i * 8 + 2] = (char)(x >> 3);
	o8[i * 8 + 3] = y != 0 ? (char)(x / (char)(y | 1)) : 0;
	o8[i * 8 + 4] = y != 0 ? (char)(x % (char)(y | 3)) : 0; // (not y | 1: llvm-spirv-14 cannot translate the freeze clang emits for x / d, x % d)
	o8[i * 8 + 5] = (char)-x;
	o8[i * 8 + 6] = (char)~x;
	o8[i * 8 + 7] = add_sat(x, k);
	u8[i * 8 + 0] = (uchar)(y + ku);
	u8[i * 8 + 1] = (uchar)(y << (x & 7));
	u8[i * 8 + 2] = (uchar)(y >> (x & 7));
	u8[i * 8 + 3] = y / (uchar)(ku | 1);
	u8[i * 8 + 4] = sub_sat(y, ku);
	u8[i * 8 + 5] = mul_hi(y, ku);
	u8[i * 8 + 6] = rotate(y, (uchar)(x & 15));
	u8[i * 8 + 7] = abs(x);
	o32[i * 6 + 0] = x;          // sign extension
	o32[i * 6 + 1] = y;          // zero extension
	o32[i * 6 + 2] = (x < (char)y) | (y < (uchar)x) << 1 | (x == -1) << 2 | (x >= k) << 3;
	o32[i * 6 + 3] = (int)(float)x + (int)(float)y;
	o32[i * 6 + 4] = max(x, (char)y) + min(y, (uchar)x) * 1000;
	o32[i * 6 + 5] = mad_sat(x, (char)y, k) + hadd(x, (char)y) * 1000;
}

__kernel void short_ops(__global const short *a, __global const ushort *b, __global short *o16,
			__global ushort *u16, __global long *o64, short k)
{
	const size_t i = get_global_id(0);
	const short x = a[i];
	const ushort y = b[i];
	o16[i * 6 + 0] = (short)(x * k);
	o16[i * 6 + 1] = (short)(x >> (y & 15));
	o16[i * 6 + 2] = sub_sat(x, (short)y);
	o16[i * 6 + 3] = mul_hi(x, (short)y);
	o16[i * 6 + 4] = (short)(float)(x / 3);
	o16[i * 6 + 5] = clamp(x, (short)-1000, k);
	u16[i * 4 + 0] = (ushort)(y * y);
	u16[i * 4 + 1] = add_sat(y, (ushort)x);
	u16[i * 4 + 2] = (ushort)(y - x);
	u16[i * 4 + 3] = abs_diff(x, (short)y);
	o64[i * 3 + 0] = x;
	o64[i * 3 + 1] = (long)y * x;
	o64[i * 3 + 2] = (short)(long)(x * 65537L); // long -> short truncation
}

__kernel void vec_bytes(__global const uchar4 *p, __global uchar4 *q, __global uint *w, __global char3 *c3,
			__global short2 *s2)
{
	const size_t i = get_global_id(0);
	const uchar4 v = p[i];
	q[i] = v.wzyx + (uchar4)(1, 2, 3, 250);
	w[i * 3 + 0] = as_uint(v);
	w[i * 3 + 1] = as_uint(convert_char4(v) >> 1);
	const char4 c = as_char4(w[i * 3 + 0] * 3u);
	w[i * 3 + 2] = (uint)(c.x + c.y * 3 + c.z * 5 + c.w * 7);
	c3[i] = (char3)(v.x, -(char)v.y, (char)(v.z + v.w));
	s2[i] = as_short2(as_uint(v) ^ 0x80018002u);
}

// Neighbouring work items store neighbouring bytes and shorts, through
// dynamic offsets, in global and local memory.
__kernel void scatter(__global const uint *idx, __global uchar *bytes, __global ushort *shorts,
		      __global uchar *out_local)
{
	__local uchar tile[128];
	__local ushort half_tile[64];
	const size_t i = get_global_id(0), l = get_local_id(0);
	const uint j = idx[i];
	bytes[j] = (uchar)(i * 7 + 1);
	shorts[j] = (ushort)(i * 1001 + 3);
	tile[(l * 37) & 127] = (uchar)(l + 100);
	if (l < 64)
		half_tile[(l * 5) & 63] = (ushort)(l * 300);
	barrier(CLK_LOCAL_MEM_FENCE);
	out_local[i] = (uchar)(tile[(l * 37) & 127] + tile[127 - l] + (uchar)half_tile[l & 63]);
}

// vloadn / vstoren at element (not vector) alignment: floats, chars, shorts,
// and from local memory.
__kernel void vloads(__global const float *f, __global const uchar *b, __global const short *h, __global float *of,
		     __global uchar *ob, __global short *oh)
{
	__local float tile[64 + 8];
	const size_t i = get_global_id(0), l = get_local_id(0);
	tile[l] = f[i];
	if (l < 8)
		tile[64 + l] = f[i + 64];
	barrier(CLK_LOCAL_MEM_FENCE);
	const float4 a = vload4(0, f + i + 1);           // element-aligned: i + 1
	const float8 t = vload8(0, tile + l);
	const uchar3 c = vload3(i, b + 1);               // 3 bytes at 3 i + 1
	const short2 s = vload2(0, h + 2 * i + 1);
	vstore4(a * 2.0f + t.lo, i, of + 1);             // 16 bytes at 16 i + 4
	vstore3(c + (uchar3)(1, 2, 3), 0, ob + 3 * i + 2); // neighbouring items' bytes share dwords
	vstore2(s.yx, 0, oh + 2 * i + 1);
	of[4 * 64 + 1 + i] = t.s7 + t.hi.s0;
}

// shuffle and shuffle2 with masks known only at run time.
__kernel void shuffles(__global const int4 *a, __global const uchar8 *b, __global const uint *m,
		       __global int4 *o4, __global uchar4 *o8)
{
	const size_t i = get_global_id(0);
	const uint w = m[i];
	const uint4 mask = (uint4)(w, w >> 3, w >> 6, w >> 9);
	o4[i] = shuffle(a[i], mask);
	o4[i + 64] = shuffle2(a[i], a[i] * 3, mask);
	o8[i] = shuffle(b[i], convert_uchar4(mask >> 1));
}

// prefetch is a hint: no effect on the results.
__kernel void prefetched(__global const float4 *a, __global float4 *o)
{
	const size_t i = get_global_id(0);
	prefetch(a + i, 1);
	o[i] = a[i] * 2.0f;
}
