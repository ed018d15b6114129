// 64-bit division and remainder (tests/e2e/test_spirv_ops.c, div64): unsigned
// and signed, every C operator on long/ulong (the front end computes them
// with fp32 estimates and exact 64-bit corrections).  Quotients and
// remainders in kernels of their own: clang pairs x / y with x % y through a
// `freeze`, which llvm-spirv-14 cannot translate.
__kernel void div64(__global const ulong *a, __global const ulong *b, __global ulong *o)
{
	const size_t i = get_global_id(0);
	const ulong x = a[i], y = b[i];
	const long sx = (long)x, sy = (long)y;
	o[i * 5 + 0] = x / y;
	// (no LONG_MIN / -1: undefined)
	o[i * 5 + 2] = (sx == LONG_MIN && sy == -1) ? 0 : (ulong)(sx / sy);
	o[i * 5 + 4] = i / (y | 1); // size_t index arithmetic
}

__kernel void rem64(__global const ulong *a, __global const ulong *b, __global ulong *o)
{
	const size_t i = get_global_id(0);
	const ulong x = a[i], y = b[i];
	const long sx = (long)x, sy = (long)y;
	o[i * 5 + 1] = x % y;
	o[i * 5 + 3] = (sx == LONG_MIN && sy == -1) ? 0 : (ulong)(sx % sy);
}
