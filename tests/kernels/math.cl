// The OpenCL.std functions the SPIR-V front end computes by code sequences
// (driver/spirv/spv_math.c), one kernel per function, k_<name> as listed in
// tests/e2e/spirv_math_ref.h: o[i] = f(a[i], b[i], c[i]) on the bits (fp32 or
// 32-bit integers).  tests/e2e/test_spirv_math.c checks them against the host.
// (popcount reaches SPIR-V as OpBitCount, which the front end lowers with the
// same sequence.)
#pragma OPENCL FP_CONTRACT OFF

// ctz is OpenCL C 2.0; declared here, it becomes OpenCL.std ctz all the same.
uint __attribute__((overloadable)) ctz(uint x);

#define KERNEL(name, expr)                                                                         \
	__kernel void k_##name(__global const uint *a, __global const uint *b, __global const uint *c, \
			       __global uint *o)                                                   \
	{                                                                                          \
		size_t i = get_global_id(0);                                                       \
		o[i] = (expr);                                                                     \
	}

#define F(v) as_float(v[i])
#define I(v) as_int(v[i])
#define U(v) (v[i])
#define F1(name) KERNEL(name, as_uint(name(F(a))))
#define F2(name) KERNEL(name, as_uint(name(F(a), F(b))))

F1(exp)
F1(exp10)
F1(expm1)
F1(log)
F1(log10)
F1(log1p)
F2(pow)
KERNEL(pown, as_uint(pown(F(a), I(b))))
F2(powr)
KERNEL(rootn, as_uint(rootn(F(a), I(b))))
F1(sin)
F1(cos)
F1(tan)
F1(asin)
F1(acos)
F1(atan)
F2(atan2)
F1(sinh)
F1(cosh)
F1(tanh)
F1(asinh)
F1(acosh)
F1(atanh)
F1(logb)
KERNEL(ilogb, (uint)ilogb(F(a)))
KERNEL(nan, as_uint(nan(U(a))))
F1(cbrt)
F2(hypot)
F1(erf)
F1(erfc)
F1(floor)
F1(ceil)
F1(trunc)
F1(round)
F1(rint)
F2(fmod)
F2(remainder)
F2(fdim)
KERNEL(ldexp, as_uint(ldexp(F(a), I(b))))
F2(nextafter)
F2(maxmag)
F2(minmag)
F1(sign)
F2(step)
F1(degrees)
F1(radians)
KERNEL(smoothstep, as_uint(smoothstep(F(a), F(b), F(c))))
F1(native_sin)
F1(native_cos)
F1(native_tan)
F2(native_powr)
KERNEL(clz, clz(U(a)))
KERNEL(ctz, ctz(U(a)))
KERNEL(popcount, popcount(U(a)))
KERNEL(rotate, rotate(U(a), U(b)))
KERNEL(s_add_sat, as_uint(add_sat(I(a), I(b))))
KERNEL(u_add_sat, add_sat(U(a), U(b)))
KERNEL(s_sub_sat, as_uint(sub_sat(I(a), I(b))))
KERNEL(u_sub_sat, sub_sat(U(a), U(b)))
KERNEL(s_hadd, as_uint(hadd(I(a), I(b))))
KERNEL(u_hadd, hadd(U(a), U(b)))
KERNEL(s_rhadd, as_uint(rhadd(I(a), I(b))))
KERNEL(u_rhadd, rhadd(U(a), U(b)))
KERNEL(s_mul_hi, as_uint(mul_hi(I(a), I(b))))
KERNEL(s_mad_hi, as_uint(mad_hi(I(a), I(b), I(c))))
KERNEL(u_mad_hi, mad_hi(U(a), U(b), U(c)))
KERNEL(s_abs_diff, abs_diff(I(a), I(b)))
KERNEL(u_abs_diff, abs_diff(U(a), U(b)))
KERNEL(s_mad_sat, as_uint(mad_sat(I(a), I(b), I(c))))
KERNEL(u_mad_sat, mad_sat(U(a), U(b), U(c)))

// Vectors: each component on its own (a float4 sin, pow and fmod, an int4 clz).
__kernel void k_vec(__global const uint4 *a, __global const uint4 *b, __global uint4 *o)
{
	size_t i = get_global_id(0);
	float4 x = as_float4(a[i]), y = as_float4(b[i]);
	o[4 * i] = as_uint4(sin(x));
	o[4 * i + 1] = as_uint4(pow(x, y));
	o[4 * i + 2] = as_uint4(fmod(x, y));
	o[4 * i + 3] = clz(a[i]);
}
