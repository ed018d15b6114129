/* The OpenCL.std functions the SPIR-V front end computes by code sequences
 * (driver/spirv/spv_math.c), their host references and the inputs they are
 * tested on: shared by the device test (test_spirv_math.c, the kernels of
 * tests/kernels/math.cl) and the host test of the sequences
 * (test_spirv_math_host.c).
 *
 * References: glibc in double precision (exp, sin, pow, ...; the error is
 * measured against the double result in ulps of fp32 at that value), exact
 * fp32 or integer results computed on the host (floor, fmod, clz, ...: bit
 * for bit).  Bounds: OpenCL C 1.2, full profile, section 7.4. */
#ifndef SPIRV_MATH_REF_H
#define SPIRV_MATH_REF_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <spirv/unified1/OpenCL.std.h>

enum mref_arg { MA_F, MA_I };	     /* an operand: fp32 or 32-bit integer */
enum mref_dom {			     /* where the random inputs come from, besides special values */
	MD_ANY,			     /* any bit pattern */
	MD_SMALL,		     /* |x| < 128 */
	MD_UNIT,		     /* |x| <= 1.2 */
	MD_POS,			     /* x > 0, any magnitude */
	MD_POW,			     /* pow: x around 1 and anywhere, y so that x^y stays near the range */
	MD_INT,			     /* any integer */
};

#define MREF_EXACT 0.0	/* bit-exact fp32 (NaN: any NaN) */
#define MREF_BITS (-1.0) /* bit-exact integer */

typedef struct mref_fn {
	const char *name;	/* kernel k_<name> in math.cl */
	uint32_t op;		/* OpenCLstd_* */
	int nargs;
	uint8_t arg[3];
	uint8_t dom;
	double ulp;		/* the bound, or MREF_EXACT / MREF_BITS */
} mref_fn_t;

static const mref_fn_t MREF_FNS[] = {
	{"exp", OpenCLstd_Exp, 1, {MA_F}, MD_SMALL, 3},
	{"exp10", OpenCLstd_Exp10, 1, {MA_F}, MD_SMALL, 3},
	{"expm1", OpenCLstd_Expm1, 1, {MA_F}, MD_SMALL, 3},
	{"log", OpenCLstd_Log, 1, {MA_F}, MD_POS, 3},
	{"log10", OpenCLstd_Log10, 1, {MA_F}, MD_POS, 3},
	{"log1p", OpenCLstd_Log1p, 1, {MA_F}, MD_ANY, 3},
	{"pow", OpenCLstd_Pow, 2, {MA_F, MA_F}, MD_POW, 16},
	{"pown", OpenCLstd_Pown, 2, {MA_F, MA_I}, MD_POW, 16},
	{"powr", OpenCLstd_Powr, 2, {MA_F, MA_F}, MD_POW, 16},
	{"rootn", OpenCLstd_Rootn, 2, {MA_F, MA_I}, MD_POW, 16},
	{"sin", OpenCLstd_Sin, 1, {MA_F}, MD_ANY, 4},
	{"cos", OpenCLstd_Cos, 1, {MA_F}, MD_ANY, 4},
	{"tan", OpenCLstd_Tan, 1, {MA_F}, MD_ANY, 4},
	{"asin", OpenCLstd_Asin, 1, {MA_F}, MD_UNIT, 4},
	{"acos", OpenCLstd_Acos, 1, {MA_F}, MD_UNIT, 4},
	{"atan", OpenCLstd_Atan, 1, {MA_F}, MD_ANY, 5},
	{"atan2", OpenCLstd_Atan2, 2, {MA_F, MA_F}, MD_ANY, 6},
	{"sinh", OpenCLstd_Sinh, 1, {MA_F}, MD_SMALL, 4},
	{"cosh", OpenCLstd_Cosh, 1, {MA_F}, MD_SMALL, 4},
	{"tanh", OpenCLstd_Tanh, 1, {MA_F}, MD_SMALL, 5},
	{"asinh", OpenCLstd_Asinh, 1, {MA_F}, MD_ANY, 4},
	{"acosh", OpenCLstd_Acosh, 1, {MA_F}, MD_POS, 4},
	{"atanh", OpenCLstd_Atanh, 1, {MA_F}, MD_UNIT, 5},
	{"logb", OpenCLstd_Logb, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"ilogb", OpenCLstd_Ilogb, 1, {MA_F}, MD_ANY, MREF_BITS},
	{"nan", OpenCLstd_Nan, 1, {MA_I}, MD_INT, MREF_EXACT},
	{"cbrt", OpenCLstd_Cbrt, 1, {MA_F}, MD_ANY, 2},
	{"hypot", OpenCLstd_Hypot, 2, {MA_F, MA_F}, MD_ANY, 4},
	{"erf", OpenCLstd_Erf, 1, {MA_F}, MD_SMALL, 16},
	{"erfc", OpenCLstd_Erfc, 1, {MA_F}, MD_SMALL, 16},
	{"floor", OpenCLstd_Floor, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"ceil", OpenCLstd_Ceil, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"trunc", OpenCLstd_Trunc, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"round", OpenCLstd_Round, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"rint", OpenCLstd_Rint, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"fmod", OpenCLstd_Fmod, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"remainder", OpenCLstd_Remainder, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"fdim", OpenCLstd_Fdim, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"ldexp", OpenCLstd_Ldexp, 2, {MA_F, MA_I}, MD_ANY, MREF_EXACT},
	{"nextafter", OpenCLstd_Nextafter, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"maxmag", OpenCLstd_Maxmag, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"minmag", OpenCLstd_Minmag, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"sign", OpenCLstd_Sign, 1, {MA_F}, MD_ANY, MREF_EXACT},
	{"step", OpenCLstd_Step, 2, {MA_F, MA_F}, MD_ANY, MREF_EXACT},
	{"degrees", OpenCLstd_Degrees, 1, {MA_F}, MD_ANY, 2},
	{"radians", OpenCLstd_Radians, 1, {MA_F}, MD_ANY, 2},
	{"smoothstep", OpenCLstd_Smoothstep, 3, {MA_F, MA_F, MA_F}, MD_SMALL, 4},
	{"native_sin", OpenCLstd_Native_sin, 1, {MA_F}, MD_SMALL, 8192},
	{"native_cos", OpenCLstd_Native_cos, 1, {MA_F}, MD_SMALL, 8192},
	{"native_tan", OpenCLstd_Native_tan, 1, {MA_F}, MD_SMALL, 8192},
	{"native_powr", OpenCLstd_Native_powr, 2, {MA_F, MA_F}, MD_POW, 8192},
	{"clz", OpenCLstd_Clz, 1, {MA_I}, MD_INT, MREF_BITS},
	{"ctz", OpenCLstd_Ctz, 1, {MA_I}, MD_INT, MREF_BITS},
	{"popcount", OpenCLstd_Popcount, 1, {MA_I}, MD_INT, MREF_BITS},
	{"rotate", OpenCLstd_Rotate, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_add_sat", OpenCLstd_SAdd_sat, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_add_sat", OpenCLstd_UAdd_sat, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_sub_sat", OpenCLstd_SSub_sat, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_sub_sat", OpenCLstd_USub_sat, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_hadd", OpenCLstd_SHadd, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_hadd", OpenCLstd_UHadd, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_rhadd", OpenCLstd_SRhadd, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_rhadd", OpenCLstd_URhadd, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_mul_hi", OpenCLstd_SMul_hi, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_mad_hi", OpenCLstd_SMad_hi, 3, {MA_I, MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_mad_hi", OpenCLstd_UMad_hi, 3, {MA_I, MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_abs_diff", OpenCLstd_SAbs_diff, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_abs_diff", OpenCLstd_UAbs_diff, 2, {MA_I, MA_I}, MD_INT, MREF_BITS},
	{"s_mad_sat", OpenCLstd_SMad_sat, 3, {MA_I, MA_I, MA_I}, MD_INT, MREF_BITS},
	{"u_mad_sat", OpenCLstd_UMad_sat, 3, {MA_I, MA_I, MA_I}, MD_INT, MREF_BITS},
};

#define MREF_NFNS (sizeof(MREF_FNS) / sizeof(MREF_FNS[0]))

static inline float mref_f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline uint32_t mref_u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline uint32_t mref_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* ---- references -------------------------------------------------------------- */

static inline double mref_powr(double x, double y)
{
	if (isnan(x) || isnan(y) || x < 0 || (x == 0 && y == 0) || (isinf(x) && y == 0) || (x == 1 && isinf(y)))
		return NAN;
	return pow(fabs(x), y); /* powr(-0, y) is powr(+0, y) */
}

static inline double mref_rootn(double x, int32_t n)
{
	if (n == 0 || (x < 0 && (n & 1) == 0))
		return NAN;
	const double r = pow(fabs(x), 1.0 / n);
	return (n & 1) && signbit(x) ? -r : r;
}

/* fmax / fmin as OpenCL C has them: a NaN operand is ignored; -0 < +0 */
static inline float mref_fmax(float x, float y, int big)
{
	if (isnan(x) || isnan(y))
		return isnan(x) ? y : x;
	if (x == y)
		return (signbit(x) != 0) == big ? y : x;
	return (x > y) == big ? x : y;
}

static inline float mref_mag(float x, float y, int big)
{
	const float ax = fabsf(x), ay = fabsf(y);
	if (big ? ax > ay : ax < ay)
		return x;
	if (big ? ay > ax : ay < ax)
		return y;
	return mref_fmax(x, y, big);
}

/* smoothstep as the spec writes it, in fp32 operations */
static inline float mref_smoothstep(float e0, float e1, float x)
{
	float t = (x - e0) / (e1 - e0);
	t = fminf(fmaxf(t, 0.0f), 1.0f);
	return t * t * (3.0f - 2.0f * t);
}

static inline uint32_t mref_sat(int64_t v)
{
	return (uint32_t)(int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}

/* Fills *d (a double to compare within the bound) or *bits (an exact fp32 or
 * integer result), as the function's bound says. */
static inline void mref_eval(const mref_fn_t *f, const uint32_t *in, double *d, uint32_t *bits)
{
	const float x = mref_f(in[0]), y = mref_f(in[1]), z = mref_f(in[2]);
	const double dx = x, dy = y;
	const int32_t ix = (int32_t)in[0], iy = (int32_t)in[1], iz = (int32_t)in[2];
	const uint32_t ux = in[0], uy = in[1], uz = in[2];
	*d = 0;
	*bits = 0;
	switch (f->op) {
	case OpenCLstd_Exp: *d = exp(dx); break;
	case OpenCLstd_Exp10: *d = exp10(dx); break;
	case OpenCLstd_Expm1: *d = expm1(dx); break;
	case OpenCLstd_Log: *d = log(dx); break;
	case OpenCLstd_Log10: *d = log10(dx); break;
	case OpenCLstd_Log1p: *d = log1p(dx); break;
	case OpenCLstd_Pow: *d = pow(dx, dy); break;
	case OpenCLstd_Pown: *d = pow(dx, (double)iy); break;
	case OpenCLstd_Powr:
	case OpenCLstd_Native_powr: *d = mref_powr(dx, dy); break;
	case OpenCLstd_Rootn: *d = mref_rootn(dx, iy); break;
	case OpenCLstd_Sin:
	case OpenCLstd_Native_sin: *d = sin(dx); break;
	case OpenCLstd_Cos:
	case OpenCLstd_Native_cos: *d = cos(dx); break;
	case OpenCLstd_Tan:
	case OpenCLstd_Native_tan: *d = tan(dx); break;
	case OpenCLstd_Asin: *d = asin(dx); break;
	case OpenCLstd_Acos: *d = acos(dx); break;
	case OpenCLstd_Atan: *d = atan(dx); break;
	case OpenCLstd_Atan2: *d = atan2(dx, dy); break;
	case OpenCLstd_Sinh: *d = sinh(dx); break;
	case OpenCLstd_Cosh: *d = cosh(dx); break;
	case OpenCLstd_Tanh: *d = tanh(dx); break;
	case OpenCLstd_Cbrt: *d = cbrt(dx); break;
	case OpenCLstd_Asinh: *d = asinh(dx); break;
	case OpenCLstd_Acosh: *d = acosh(dx); break;
	case OpenCLstd_Atanh: *d = atanh(dx); break;
	case OpenCLstd_Logb: *bits = mref_u(logbf(x)); break;
	case OpenCLstd_Ilogb: /* OpenCL C: FP_ILOGB0 = INT_MIN, FP_ILOGBNAN = INT_MAX (also for inf) */
		*bits = x == 0.0f ? 0x80000000u : !isfinite(x) ? 0x7fffffffu : (uint32_t)ilogbf(x);
		break;
	case OpenCLstd_Nan: *bits = 0x7fc00000u; break; /* a NaN: any NaN matches */
	case OpenCLstd_Hypot: *d = hypot(dx, dy); break;
	case OpenCLstd_Erf: *d = erf(dx); break;
	case OpenCLstd_Erfc: *d = erfc(dx); break;
	case OpenCLstd_Degrees: *d = dx * (180.0 / M_PI); break;
	case OpenCLstd_Radians: *d = dx * (M_PI / 180.0); break;
	case OpenCLstd_Smoothstep: *d = mref_smoothstep(x, y, z); break;
	case OpenCLstd_Floor: *bits = mref_u(floorf(x)); break;
	case OpenCLstd_Ceil: *bits = mref_u(ceilf(x)); break;
	case OpenCLstd_Trunc: *bits = mref_u(truncf(x)); break;
	case OpenCLstd_Round: *bits = mref_u(roundf(x)); break;
	case OpenCLstd_Rint: *bits = mref_u(rintf(x)); break;
	case OpenCLstd_Fmod: *bits = mref_u(fmodf(x, y)); break;
	case OpenCLstd_Remainder: *bits = mref_u(remainderf(x, y)); break;
	case OpenCLstd_Fdim: *bits = mref_u(isnan(x) || isnan(y) ? NAN : x > y ? x - y : 0.0f); break;
	case OpenCLstd_Ldexp: *bits = mref_u(ldexpf(x, iy)); break;
	case OpenCLstd_Nextafter: *bits = mref_u(nextafterf(x, y)); break;
	case OpenCLstd_Maxmag: *bits = mref_u(mref_mag(x, y, 1)); break;
	case OpenCLstd_Minmag: *bits = mref_u(mref_mag(x, y, 0)); break;
	case OpenCLstd_Sign: *bits = mref_u(isnan(x) ? 0.0f : x > 0 ? 1.0f : x < 0 ? -1.0f : x); break;
	case OpenCLstd_Step: *bits = mref_u(y < x ? 0.0f : 1.0f); break;
	case OpenCLstd_Clz: *bits = ux ? (uint32_t)__builtin_clz(ux) : 32; break;
	case OpenCLstd_Ctz: *bits = ux ? (uint32_t)__builtin_ctz(ux) : 32; break;
	case OpenCLstd_Popcount: *bits = (uint32_t)__builtin_popcount(ux); break;
	case OpenCLstd_Rotate: *bits = uy & 31 ? ux << (uy & 31) | ux >> (32 - (uy & 31)) : ux; break;
	case OpenCLstd_SAdd_sat: *bits = mref_sat((int64_t)ix + iy); break;
	case OpenCLstd_UAdd_sat: *bits = (uint64_t)ux + uy > UINT32_MAX ? UINT32_MAX : ux + uy; break;
	case OpenCLstd_SSub_sat: *bits = mref_sat((int64_t)ix - iy); break;
	case OpenCLstd_USub_sat: *bits = ux > uy ? ux - uy : 0; break;
	case OpenCLstd_SHadd: *bits = (uint32_t)(int32_t)(((int64_t)ix + iy) >> 1); break;
	case OpenCLstd_UHadd: *bits = (uint32_t)(((uint64_t)ux + uy) >> 1); break;
	case OpenCLstd_SRhadd: *bits = (uint32_t)(int32_t)(((int64_t)ix + iy + 1) >> 1); break;
	case OpenCLstd_URhadd: *bits = (uint32_t)(((uint64_t)ux + uy + 1) >> 1); break;
	case OpenCLstd_SMul_hi: *bits = (uint32_t)(((int64_t)ix * iy) >> 32); break;
	case OpenCLstd_SMad_hi: *bits = (uint32_t)(((int64_t)ix * iy) >> 32) + uz; break;
	case OpenCLstd_UMad_hi: *bits = (uint32_t)(((uint64_t)ux * uy) >> 32) + uz; break;
	case OpenCLstd_SAbs_diff: *bits = (uint32_t)(ix > iy ? (int64_t)ix - iy : (int64_t)iy - ix); break;
	case OpenCLstd_UAbs_diff: *bits = ux > uy ? ux - uy : uy - ux; break;
	case OpenCLstd_SMad_sat: *bits = mref_sat((int64_t)ix * iy + iz); break;
	case OpenCLstd_UMad_sat: {
		const uint64_t p = (uint64_t)ux * uy;
		*bits = p + uz > UINT32_MAX || p + uz < p ? UINT32_MAX : (uint32_t)(p + uz);
		break;
	}
	default: break;
	}
}

/* Whether the function is tested at this input: native_* only within
 * 2^16 (sin, cos, tan) or for a positive x and a normal result (powr): the
 * accuracy of native_* is implementation-defined, and these are the ranges
 * driver/README.md gives one for. */
static inline int mref_tested(const mref_fn_t *f, const uint32_t *in, double d)
{
	const float x = mref_f(in[0]), y = mref_f(in[1]);
	switch (f->op) {
	case OpenCLstd_Native_sin:
	case OpenCLstd_Native_cos:
	case OpenCLstd_Native_tan: return fabsf(x) <= 65536.0f;
	case OpenCLstd_Native_powr:
		return x > 0 && isfinite(x) && isfinite(y) && fabs(d) >= FLT_MIN && fabs(d) <= FLT_MAX;
	default: return 1;
	}
}

/* The error of fp32 `got` against the reference: in ulps of fp32 at the
 * reference (2^-149 below 2^-126; an infinite result counts as 2^128); 0 for
 * matching NaNs or infinities, INFINITY when one is NaN and the other not, or
 * an infinity is wrong.  For exact functions (MREF_EXACT) 0 or INFINITY. */
static inline double mref_error(const mref_fn_t *f, uint32_t got, double d, uint32_t bits)
{
	if (f->ulp == MREF_BITS)
		return got == bits ? 0 : INFINITY;
	const float g = mref_f(got);
	if (f->ulp == MREF_EXACT) {
		const float w = mref_f(bits);
		if (isnan(w) || isnan(g))
			return isnan(w) && isnan(g) ? 0 : INFINITY;
		return got == bits ? 0 : INFINITY;
	}
	if (isnan(d) || isnan(g))
		return isnan(d) && isnan(g) ? 0 : INFINITY;
	if (isinf(d) || isinf(g)) {
		if (isinf(d) && isinf(g))
			return !signbit(d) == !signbit(g) ? 0 : INFINITY;
		if (isinf(d))
			return INFINITY;
		/* an infinite result for a finite reference: right if that rounds
		 * to inf in fp32, else counted as 2^128 */
		if (isinf((float)d) && !signbit(d) == !signbit(g))
			return 0;
		return fabs(copysign(0x1p128, g) - d) / 0x1p104;
	}
	if (d == 0 && g == 0 && !signbit(d) != !signbit(g))
		return INFINITY; /* the sign of zero is part of the result */
	int e;
	frexp(d, &e); /* |d| in [2^(e-1), 2^e) */
	if (e - 1 < -126)
		e = -125;
	if (e - 1 > 127)
		e = 128;
	return fabs((double)g - d) / ldexp(1.0, e - 1 - 23);
}

/* ---- inputs ---------------------------------------------------------------- */

/* fp32 special values and binade boundaries (2^k and its two neighbours for
 * every k, both signs), then up to `max` values in all */
static inline uint32_t mref_specials(uint32_t *v, uint32_t max)
{
	static const uint32_t fixed[] = {
		0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
		0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu,
		0x3f800000u, 0xbf800000u, 0x3f000000u, 0xbf000000u, 0x3fc90fdbu, 0xbfc90fdbu, 0x40490fdbu,
		0x3f490fdbu, 0x40c90fdbu, 0x3fb504f3u, 0x42b17218u, 0xc2b17218u, 0x42b17217u, 0x42b2d4fcu,
		0xc2ce8ed0u, 0xc2cff1b5u, 0x421a209bu, 0x4b000000u, 0x4b000001u, 0x4affffffu, 0x3effffffu,
		0x3f000001u, 0x3fc00000u, 0x40200000u, 0xbfc00000u, 0x5a800000u, 0x7effffffu, 0x3e800000u,
	};
	uint32_t n = 0;
	for (uint32_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && n < max; i++)
		v[n++] = fixed[i];
	for (uint32_t e = 1; e < 255 && n + 6 <= max; e++)
		for (uint32_t s = 0; s < 2; s++) {
			const uint32_t b = e << 23 | s << 31;
			v[n++] = b;
			v[n++] = b - 1;
			v[n++] = b + 1;
		}
	return n;
}

/* a random fp32 value from the function's domain */
static inline uint32_t mref_random(uint8_t dom, uint32_t *seed)
{
	const uint32_t r = mref_rand(seed), sign = mref_rand(seed) & 0x80000000u;
	const double u = (r >> 8) * 0x1p-24; /* [0, 1) */
	switch (dom) {
	case MD_SMALL: return mref_u((float)(u * 128.0)) | sign;
	case MD_UNIT: return mref_u((float)(u * 1.2)) | sign;
	case MD_POS: return r & 0x7fffffffu;
	case MD_POW:
		/* half near 1, half anywhere positive or negative */
		return r & 1 ? mref_u((float)(0.5 + u * 1.5)) : r;
	default: return r;
	}
}

/* operand j of input i (n in all): special values crossed with each other for
 * the first ones, then random values; integers get edge values and random
 * bits (shifted, so that small magnitudes come up too). */
static inline void mref_inputs(const mref_fn_t *f, uint32_t n, uint32_t seed, uint32_t *in[3])
{
	static const uint32_t iedge[] = {0, 1, 2, 3, 31, 32, 33, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu,
					 0xfffffffeu, 0x10000u, 0xffffu, 0x55555555u, 0xaaaaaaaau, 0x00800000u};
	const uint32_t ne = sizeof(iedge) / sizeof(iedge[0]);
	uint32_t sp[1700];
	const uint32_t nsp = mref_specials(sp, 1700);
	for (int j = 0; j < f->nargs; j++) {
		uint32_t s = seed * 7919u + (uint32_t)j * 104729u + 1u;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t v;
			if (f->arg[j] == MA_I) {
				const uint32_t r = mref_rand(&s);
				if (i < ne * ne && f->nargs > 1)
					v = iedge[j == 0 ? i / ne : i % ne];
				else if (i < ne)
					v = iedge[i];
				else if (f->op == OpenCLstd_Ldexp || f->op == OpenCLstd_Pown || f->op == OpenCLstd_Rootn)
					v = i & 1 ? (uint32_t)((int32_t)r >> (r & 31)) : (uint32_t)((int32_t)(r % 301) - 150);
				else
					v = (r & 3) ? (uint32_t)((int32_t)r >> (mref_rand(&s) & 31)) : r;
			} else if (f->nargs == 1) {
				v = i < nsp ? sp[i] : mref_random(f->dom, &s);
			} else if (i < 40 * 40) {
				v = sp[j == 0 ? i / 40 : i % 40]; /* the fixed values crossed */
			} else if (i < 40 * 40 + nsp) {
				v = j == 0 ? sp[i - 1600] : mref_random(f->dom, &s);
			} else if (i < 40 * 40 + 2 * nsp) {
				v = j == 1 ? sp[i - 1600 - nsp] : mref_random(f->dom, &s);
			} else {
				v = mref_random(f->dom, &s);
			}
			in[j][i] = v;
		}
	}
	if (f->op == OpenCLstd_Smoothstep)
		for (uint32_t i = 0; i < n; i++) { /* edge0 < edge1 (else undefined) */
			const float a = mref_f(in[0][i]), b = mref_f(in[1][i]);
			if (!(a < b) || isinf(b - a))
				in[0][i] = mref_u(-1.0f - (float)(i % 7)), in[1][i] = mref_u(2.0f + (float)(i % 5));
		}
	if (f->op == OpenCLstd_Pow || f->op == OpenCLstd_Powr || f->op == OpenCLstd_Native_powr) {
		/* y such that |y log2 x| <= 140 (a result in range), an integer every other time */
		uint32_t s = seed + 17u;
		for (uint32_t i = 40 * 40 + 2 * nsp; i < n; i++) {
			const float x = mref_f(in[0][i]);
			const double l = fabs(log2(fabs((double)x)));
			if (!isfinite(l))
				continue;
			double y = ((mref_rand(&s) >> 8) * 0x1p-23 - 1.0) * 140.0 / (l > 1e-3 ? l : 1e-3);
			in[1][i] = mref_u((float)(i & 1 ? y : nearbyint(y)));
		}
	}
}

#endif
