/* OpenCL.std instructions computed by code sequences in ZE-ISA (the ISA has
 * only inv, sqrt, exp2 and log2 in hardware).  See spv_internal.h for the
 * contract and README.md ("SPIR-V front end") for the accuracy of each.
 *
 * Every sequence is straight-line code on one 32-bit component: all the cases
 * of a function (special values, ranges) are computed and the right result
 * selected, since the IR builder cannot branch inside an instruction.
 * Techniques: double-float arithmetic with the fused mad (products split as
 * hi + lo with mad(a, b, -hi)); exp and pow as 2^hi * (1 + lo ln 2) around
 * the hardware exp2, which the ISA defines as correctly rounded; log with an
 * extended-precision log2 for pow; sin/cos/tan with Payne-Hanek reduction for
 * every argument beyond pi/4 (exact integer products with the bits of 2/pi);
 * fmod by exact mad remainders on the mantissas; minimax polynomials fitted
 * for their ranges (coefficients as fp32 bit patterns).
 *
 * Flags: the sequences compare into f1 and read it right after, before any
 * other compare into f1; spv_cmp_bool (masks) writes f0, which they never
 * read, so the two can interleave. */
#include "spv_internal.h"

#include <string.h>

#include <spirv/unified1/OpenCL.std.h>

enum { F = ZE_TYPE_F, U = ZE_TYPE_UD, D = ZE_TYPE_D, FL = 1 };

/* fp32 constants (bit patterns) */
#define K_INF 0x7f800000u
#define K_NAN 0x7fc00000u
#define K_SIGN 0x80000000u
#define K_LOG2E_HI 0x3fb8aa3bu /* log2(e) = HI + LO */
#define K_LOG2E_LO 0x32a57060u
#define K_LOG2_10_HI 0x40549a78u
#define K_LOG2_10_LO 0x33979a37u
#define K_LN2 0x3f317218u /* ln 2 rounded */
/* HI + LO with LO > 0 (HI rounded down), so that +-inf * HI + inf * LO is
 * not inf - inf */
#define K_LN2_HI 0x3f317217u
#define K_LN2_LO 0x3377d1cfu
#define K_LOG10_2_HI 0x3e9a209au
#define K_LOG10_2_LO 0x3284fbd0u
#define K_PIO2_HI 0x3fc90fdbu
#define K_PIO2_LO 0xb33bbd2eu
#define K_PIO4_HI 0x3f490fdbu
#define K_PIO4_LO 0xb2bbbd2eu
#define K_PI_HI 0x40490fdbu
#define K_PI_LO 0xb3bbbd2eu
#define K_DEG_HI 0x42652ee0u /* 180/pi */
#define K_DEG_LO 0x36531e10u
#define K_RAD_HI 0x3c8efa35u /* pi/180 */
#define K_RAD_LO 0x2f14a74eu
#define K_TAN_PI8 0x3ed413cdu
#define K_SQRT2 0x3fb504f3u
#define K_THIRD 0x3eaaaaabu

/* ---- the builder, typed ------------------------------------------------------ */

static opnd_t kf(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return o_imm(u);
}

static opnd_t kb(uint32_t bits)
{
	return o_imm(bits);
}

static opnd_t ng(opnd_t a)
{
	a.neg ^= 1;
	return a;
}

static opnd_t ab_(opnd_t a)
{
	a.abs = 1;
	a.neg = 0;
	return a;
}

static opnd_t op1(spv_ctx_t *c, uint8_t op, uint8_t t, opnd_t a)
{
	return spv_alu(c, op, t, t, a, o_null(), o_null());
}

static opnd_t op2(spv_ctx_t *c, uint8_t op, uint8_t t, opnd_t a, opnd_t b)
{
	return spv_alu(c, op, t, t, a, b, o_null());
}

static opnd_t fadd(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_ADD, F, a, b); }
static opnd_t fsub(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_ADD, F, a, ng(b)); }
static opnd_t fmul(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_MUL, F, a, b); }
static opnd_t fmin_(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_MIN, F, a, b); }
static opnd_t fmax_(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_MAX, F, a, b); }
static opnd_t finv(spv_ctx_t *c, opnd_t a) { return op1(c, ZE_OP_INV, F, a); }
static opnd_t fsqrt(spv_ctx_t *c, opnd_t a) { return op1(c, ZE_OP_SQRT, F, a); }
static opnd_t fexp2(spv_ctx_t *c, opnd_t a) { return op1(c, ZE_OP_EXP, F, a); }
static opnd_t flog2(spv_ctx_t *c, opnd_t a) { return op1(c, ZE_OP_LOG, F, a); }

/* a * b + d, fused */
static opnd_t fma_(spv_ctx_t *c, opnd_t a, opnd_t b, opnd_t d)
{
	return spv_alu(c, ZE_OP_MAD, F, F, a, b, d);
}

static opnd_t iadd(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_ADD, U, a, b); }
static opnd_t isub(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_ADD, U, a, ng(b)); }
static opnd_t imul(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_MUL, U, a, b); }
static opnd_t iand(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_AND, U, a, b); }
static opnd_t ior(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_OR, U, a, b); }
static opnd_t ixor(spv_ctx_t *c, opnd_t a, opnd_t b) { return op2(c, ZE_OP_XOR, U, a, b); }
static opnd_t inot(spv_ctx_t *c, opnd_t a) { return op1(c, ZE_OP_NOT, U, a); }
static opnd_t ishl(spv_ctx_t *c, opnd_t a, uint32_t n) { return op2(c, ZE_OP_SHL, U, a, o_imm(n)); }
static opnd_t ishr(spv_ctx_t *c, opnd_t a, uint32_t n) { return op2(c, ZE_OP_SHR, U, a, o_imm(n)); }
static opnd_t iasr(spv_ctx_t *c, opnd_t a, uint32_t n) { return op2(c, ZE_OP_ASR, D, a, o_imm(n)); }

/* conversions: to F rounds to nearest even, from F truncates and saturates */
static opnd_t cvt(spv_ctx_t *c, uint8_t dt, uint8_t st, opnd_t a)
{
	return spv_alu(c, ZE_OP_MOV, dt, st, a, o_null(), o_null());
}

static opnd_t absbits(spv_ctx_t *c, opnd_t x) { return iand(c, x, kb(0x7fffffffu)); }
static opnd_t sgnbit(spv_ctx_t *c, opnd_t x) { return iand(c, x, kb(K_SIGN)); }
static opnd_t xsign(spv_ctx_t *c, opnd_t v, opnd_t x) { return ixor(c, v, sgnbit(c, x)); }

static void fcmp(spv_ctx_t *c, uint8_t cmod, opnd_t a, opnd_t b) { spv_cmp_flag(c, cmod, F, a, b, FL); }
static void fcmp_and(spv_ctx_t *c, uint8_t cmod, opnd_t a, opnd_t b) { spv_cmp_flag_and(c, cmod, F, a, b, FL); }
static void icmp(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b) { spv_cmp_flag(c, cmod, t, a, b, FL); }

/* A source sel can take: its float modifiers applied (sel moves bits). */
static opnd_t plain(spv_ctx_t *c, opnd_t a)
{
	if (!a.neg && !a.abs)
		return a;
	if (a.k == O_I) {
		uint32_t v = a.v;
		if (a.abs)
			v &= 0x7fffffffu;
		if (a.neg)
			v ^= K_SIGN;
		return o_imm(v);
	}
	return op1(c, ZE_OP_MOV, F, a);
}

/* f1 ? a : b */
static opnd_t sel(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	return spv_sel(c, FL, 0, plain(c, a), plain(c, b));
}

/* the mask's bits: a cmod b as 0 / ~0 */
static opnd_t fmask(spv_ctx_t *c, uint8_t cmod, opnd_t a, opnd_t b)
{
	return spv_cmp_bool(c, cmod, F, a, b);
}

/* p(z) = k[0] + k[1] z + ... + k[n-1] z^(n-1), Horner with fused steps */
static opnd_t horner(spv_ctx_t *c, opnd_t z, const uint32_t *k, int n)
{
	opnd_t p = kb(k[n - 1]);
	for (int i = n - 2; i >= 0; i--)
		p = fma_(c, p, z, kb(k[i]));
	return p;
}

/* ---- polynomial coefficients (minimax fits, relative error of the function) -- */

/* sin r = r + r^3 S(r^2), |r| <= pi/4 */
static const uint32_t SIN_S[] = {0xbe2aaaa9u, 0x3c088615u, 0xb94d6529u};
/* cos r = 1 - r^2/2 + r^4 C(r^2) */
static const uint32_t COS_C[] = {0x3d2aaaaau, 0xbab6096au, 0x37cdec84u};
/* expm1 x = x + x^2 Q(x), ln(3/4) <= x <= ln(3/2) */
static const uint32_t EXPM1_Q[] = {0x3f000000u, 0x3e2aaaacu, 0x3d2aaa8du, 0x3c08843du, 0x3ab67516u, 0x395a2ec7u};
/* atan t = t + t^3 A(t^2), |t| <= tan(pi/8) */
static const uint32_t ATAN_A[] = {0xbeaaaaaau, 0x3e4ccba5u, 0xbe12118cu, 0x3ddc22f1u, 0xbd8470c3u};
/* asin x = x + x^3 P(x^2), |x| <= 1/2 */
static const uint32_t ASIN_P[] = {0x3e2aaaaau, 0x3d999a24u, 0x3d36aaf3u, 0x3cff0866u, 0x3c8b4f9au, 0x3d0af0eau};
/* sinh x = x + x^3 H(x^2), |x| <= 1 */
static const uint32_t SINH_H[] = {0x3e2aaaabu, 0x3c08888fu, 0x3950047eu, 0x363c53e1u};
/* tanh x = x + x^3 T(x^2), |x| <= 0.55 */
static const uint32_t TANH_T[] = {0xbeaaaaaau, 0x3e0887fau, 0xbd5cd177u, 0x3cae9f13u, 0xbbd8f752u};
/* erf x = x + x Q(x^2), |x| <= 1/2 */
static const uint32_t ERF_Q[] = {0x3e0375d4u, 0xbec09399u, 0x3de71291u, 0xbcdb33ebu, 0x3b9aa99cu};
/* erfc x = exp(-x^2) G(t) / (1 + 2x), t = (x - 2) / (x + 2), 1/2 <= x <= 10.5 */
static const uint32_t ERFC_G[] = {0x3fa37407u, 0xbdbdfaedu, 0xbe2a03fcu, 0x3e27fc53u, 0xbd5e0cb3u,
				  0xbc031f60u, 0x3c0de1b4u, 0x3a950d3cu, 0xbaa60a01u, 0xb960c396u};
/* log m = u + u^3 L(u^2), u = 2 (m - 1) / (m + 1), sqrt(1/2) <= m <= sqrt(2) */
static const uint32_t LOG_L[] = {0x3daaaaabu, 0x3c4cccf6u, 0x3b122e07u, 0x39eeec2au};
/* 2/pi, bits 1-224, after 32 zero bits (the integer part and a margin) */
static const uint32_t TWO_OVER_PI[8] = {0,	     0xa2f9836eu, 0x4e441529u, 0xfc2757d1u,
					0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu};

#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- exp, log ---------------------------------------------------------------- */

/* 2^(th + tl) for |tl| <= 2^-10: 2^th from the hardware (correctly rounded)
 * times 1 + tl ln 2 (the square term is below 2^-24), one fused rounding.
 * From th >= 64 it is 2^(th - 1) * 2, so that no th rounded up to 128
 * overflows early (th < 129 then).  half: 2^(th + tl - 1), as 2^(th - 2) * 2
 * from 64 on (th < 130 then) and as a halving below. */
static opnd_t exp2_dd(spv_ctx_t *c, opnd_t th, opnd_t tl, int half)
{
	const opnd_t th1 = fadd(c, th, kf(half ? -2.0f : -1.0f));
	const opnd_t k = fmul(c, tl, kb(K_LN2));
	fcmp(c, ZE_CMOD_GE, th, kf(64.0f));
	const opnd_t e = fexp2(c, sel(c, th1, th));
	const opnd_t r = fma_(c, e, k, e);
	return sel(c, fadd(c, r, r), half ? fmul(c, r, kf(0.5f)) : r);
}

/* x * (L_HI + L_LO) as th + tl: th rounded, tl what it missed. */
static void mul_dd(spv_ctx_t *c, opnd_t x, uint32_t lhi, uint32_t llo, opnd_t *th, opnd_t *tl)
{
	*th = fmul(c, x, kb(lhi));
	*tl = fma_(c, x, kb(llo), fma_(c, x, kb(lhi), ng(*th)));
}

/* b^x for b = 2^(L_HI + L_LO); below xmin the result is 0, above xmax inf. */
static opnd_t exp_base(spv_ctx_t *c, opnd_t x, uint32_t lhi, uint32_t llo, float xmin, float xmax)
{
	const opnd_t xc = fmax_(c, fmin_(c, x, kf(xmax)), kf(xmin));
	opnd_t th, tl;
	mul_dd(c, xc, lhi, llo, &th, &tl);
	const opnd_t r = exp2_dd(c, th, tl, 0);
	fcmp(c, ZE_CMOD_NE, x, x); /* NaN, which the clamp lost */
	return sel(c, x, r);
}

/* e^x - 1: a polynomial around 0, else e^x's double-float pieces with the -1
 * folded into the last fused step (e - 1 is exact there). */
static opnd_t expm1_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t z = fmul(c, x, x);
	const opnd_t small = ior(c, fma_(c, z, horner(c, x, EXPM1_Q, NELEM(EXPM1_Q)), x), sgnbit(c, x));
	const opnd_t xc = fmax_(c, fmin_(c, x, kf(89.0f)), kf(-104.0f));
	opnd_t th, tl;
	mul_dd(c, xc, K_LOG2E_HI, K_LOG2E_LO, &th, &tl);
	const opnd_t th1 = fadd(c, th, kf(-1.0f));
	const opnd_t k = fmul(c, tl, kb(K_LN2));
	fcmp(c, ZE_CMOD_GE, th, kf(64.0f));
	const opnd_t e = fexp2(c, sel(c, th1, th));
	const opnd_t r = fma_(c, e, k, sel(c, e, fadd(c, e, kf(-1.0f))));
	const opnd_t big = sel(c, fadd(c, r, r), r);
	/* the polynomial on [ln 3/4, ln 3/2] = 0.0589 -+ 0.3466 (and for NaN) */
	fcmp(c, ZE_CMOD_GE, ab_(fadd(c, x, kf(-0.0589f))), kf(0.3465f));
	return sel(c, big, small);
}

/* log_b x = log2(x) * (L_HI + L_LO): the hardware log2 is correctly rounded,
 * so this stays within an ulp. */
static opnd_t log_base(spv_ctx_t *c, opnd_t x, uint32_t lhi, uint32_t llo)
{
	const opnd_t l = flog2(c, x);
	return fma_(c, l, kb(lhi), fmul(c, l, kb(llo)));
}

/* log(1 + x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the second
 * term is what the rounding of u lost.  The clamps keep the correction finite
 * for u = 0 and u = inf; the sign makes log1p(-0) = -0. */
static opnd_t log1p_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t u = fadd(c, x, kf(1.0f));
	const opnd_t cc = fsub(c, x, fadd(c, u, kf(-1.0f)));
	const opnd_t lg = log_base(c, u, K_LN2_HI, K_LN2_LO);
	const opnd_t iu = fmin_(c, finv(c, u), kf(0x1p100f));
	const opnd_t ccc = fmax_(c, fmin_(c, cc, kf(1.0f)), kf(-1.0f));
	return ior(c, fma_(c, ccc, iu, lg), sgnbit(c, x));
}

/* log2|a| as lh + ll to about 2^-31 relative (for pow; the rounding errors
 * of L(u^2) and its constant term remain, 2^-24 of u^3/12 <= 1% of log m):
 * a = 2^e m with
 * sqrt(1/2) <= m < sqrt(2), log m = u + u^3 L(u^2) for u = 2(m - 1)/(m + 1)
 * carried as a double-float, then times log2(e) as a double-float.  For a
 * zero, infinite or NaN (and, when used by powr, negative) the hardware log2
 * of a itself, with ll = 0. */
static void log2_dd(spv_ctx_t *c, opnd_t a, opnd_t *lh, opnd_t *ll)
{
	const opnd_t ua = absbits(c, a);
	fcmp(c, ZE_CMOD_LT, ua, kf(0x1p-126f));
	const opnd_t as = sel(c, fmul(c, ua, kf(0x1p24f)), ua);
	opnd_t e = iadd(c, ishr(c, as, 23), sel(c, kb((uint32_t)-151), kb((uint32_t)-127)));
	opnd_t m = ior(c, iand(c, as, kb(0x007fffffu)), kb(0x3f800000u));
	fcmp(c, ZE_CMOD_GT, m, kb(K_SQRT2));
	m = sel(c, fmul(c, m, kf(0.5f)), m);
	e = sel(c, iadd(c, e, o_imm(1)), e);
	const opnd_t ef = cvt(c, F, D, e);
	const opnd_t f = fadd(c, m, kf(-1.0f));
	const opnd_t d = fadd(c, f, kf(2.0f));
	const opnd_t dl = fsub(c, f, fadd(c, d, kf(-2.0f)));
	const opnd_t id = finv(c, d);
	const opnd_t f2 = fadd(c, f, f);
	const opnd_t uh = fmul(c, f2, id);
	const opnd_t rho = fma_(c, ng(uh), dl, fma_(c, ng(uh), d, f2));
	const opnd_t ul = fmul(c, rho, id);
	/* (uh + ul)^3 = p3 + p3l to double-float precision (3 uh^2 ul included),
	 * times L(u^2) */
	const opnd_t w = fmul(c, uh, uh);
	const opnd_t p3 = fmul(c, uh, w);
	opnd_t p3l = fma_(c, uh, fma_(c, uh, uh, ng(w)), fma_(c, uh, w, ng(p3)));
	p3l = fma_(c, fmul(c, w, ul), kf(3.0f), p3l);
	const opnd_t lp = horner(c, w, LOG_L, NELEM(LOG_L));
	const opnd_t alo = fma_(c, p3, lp, fma_(c, p3l, lp, ul));
	/* (uh + alo) log2(e) */
	const opnd_t bh = fmul(c, uh, kb(K_LOG2E_HI));
	const opnd_t bl = fma_(c, alo, kb(K_LOG2E_HI), fma_(c, uh, kb(K_LOG2E_LO), fma_(c, uh, kb(K_LOG2E_HI), ng(bh))));
	/* e + b, then normalized */
	const opnd_t sh = fadd(c, ef, bh);
	const opnd_t sl = fadd(c, fadd(c, fsub(c, ef, sh), bh), bl);
	const opnd_t h = fadd(c, sh, sl);
	const opnd_t l = fsub(c, sl, fsub(c, h, sh));
	const opnd_t hw = flog2(c, a);
	fcmp(c, ZE_CMOD_GT, a, kf(0.0f));
	fcmp_and(c, ZE_CMOD_LT, a, kb(K_INF));
	*lh = sel(c, h, hw);
	*ll = sel(c, l, kf(0.0f));
}

/* 2^(th + tl) for pow: th clamped so that 2^th is 0 or inf beyond the range,
 * tl clamped to stay finite (it is NaN when th is infinite); 1 + tl ln 2 is
 * rounded on its own so that inf * (1 + k) stays inf. */
static opnd_t pow_exp2(spv_ctx_t *c, opnd_t th, opnd_t tl)
{
	const opnd_t thc = fmax_(c, fmin_(c, th, kf(300.0f)), kf(-300.0f));
	const opnd_t tlc = fmax_(c, fmin_(c, tl, kf(1.0f)), kf(-1.0f));
	const opnd_t th1 = fadd(c, thc, kf(-1.0f));
	const opnd_t k1 = fma_(c, tlc, kb(K_LN2), kf(1.0f));
	fcmp(c, ZE_CMOD_GE, thc, kf(64.0f));
	const opnd_t r = fmul(c, fexp2(c, sel(c, th1, thc)), k1);
	return sel(c, fadd(c, r, r), r);
}

/* y * (lh + ll) as th + tl */
static void mul_dd2(spv_ctx_t *c, opnd_t y, opnd_t lh, opnd_t ll, opnd_t *th, opnd_t *tl)
{
	*th = fmul(c, y, lh);
	*tl = fma_(c, y, ll, fma_(c, y, lh, ng(*th)));
}

/* sign bit of x when n (an integer) is odd */
static opnd_t odd_sign(spv_ctx_t *c, opnd_t n, opnd_t x)
{
	return iand(c, ishl(c, n, 31), x);
}

static opnd_t pow_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t ax = absbits(c, x), ay = absbits(c, y);
	opnd_t lh, ll, th, tl;
	log2_dd(c, ax, &lh, &ll);
	mul_dd2(c, y, lh, ll, &th, &tl);
	opnd_t r = pow_exp2(c, th, tl);
	/* y an integer (every |y| >= 2^24 is an even one), odd */
	const opnd_t yc = fmin_(c, ay, kf(0x1p24f));
	const opnd_t yi = cvt(c, D, F, yc);
	const opnd_t yf = cvt(c, F, D, yi);
	r = ixor(c, r, iand(c, odd_sign(c, yi, x), fmask(c, ZE_CMOD_EQ, yf, yc)));
	/* NaN: finite x < 0 with y not an integer; 0 * inf and NaN operands */
	fcmp(c, ZE_CMOD_LT, x, kf(0.0f));
	fcmp_and(c, ZE_CMOD_GT, x, kb(K_INF | K_SIGN));
	fcmp_and(c, ZE_CMOD_NE, yf, yc);
	r = sel(c, kb(K_NAN), r);
	fcmp(c, ZE_CMOD_NE, th, th);
	r = sel(c, kb(K_NAN), r);
	/* 1: y = +-0, x = 1, x = -1 with y = +-inf */
	opnd_t one = ior(c, fmask(c, ZE_CMOD_EQ, y, kf(0.0f)), fmask(c, ZE_CMOD_EQ, x, kf(1.0f)));
	one = ior(c, one, iand(c, fmask(c, ZE_CMOD_EQ, ax, kf(1.0f)), fmask(c, ZE_CMOD_EQ, ay, kb(K_INF))));
	icmp(c, ZE_CMOD_NE, U, one, o_imm(0));
	return sel(c, kf(1.0f), r);
}

/* x^n: |n| = hi + lo (hi a multiple of 256, lo < 256) so that both are exact
 * floats and n log2|x| is exact to double-float precision for every n. */
static opnd_t pown_(spv_ctx_t *c, opnd_t x, opnd_t n)
{
	const opnd_t ax = absbits(c, x);
	opnd_t lh, ll;
	log2_dd(c, ax, &lh, &ll);
	opnd_t an = n;
	an.abs = 1;
	an = cvt(c, U, D, an); /* INT_MIN: 2^31 */
	const opnd_t hi = cvt(c, F, U, iand(c, an, kb(0xffffff00u)));
	const opnd_t lo = cvt(c, F, U, iand(c, an, kb(0xffu)));
	opnd_t p1, q1, p2, q2;
	mul_dd2(c, hi, lh, ll, &p1, &q1);
	mul_dd2(c, lo, lh, ll, &p2, &q2);
	const opnd_t s = fadd(c, p1, p2);
	const opnd_t t = fadd(c, fadd(c, fsub(c, p2, fsub(c, s, p1)), q1), q2);
	const opnd_t h = fadd(c, s, t);
	const opnd_t l = fsub(c, t, fsub(c, h, s));
	const opnd_t nsign = sgnbit(c, n);
	/* zero, infinite or NaN x: n * log2|x| directly (hi * inf would be NaN for hi = 0) */
	const opnd_t direct = fmul(c, cvt(c, F, D, n), lh);
	fcmp(c, ZE_CMOD_GT, ax, kf(0.0f));
	fcmp_and(c, ZE_CMOD_LT, ax, kb(K_INF));
	const opnd_t th = sel(c, ixor(c, h, nsign), direct);
	const opnd_t tl = sel(c, ixor(c, l, nsign), kf(0.0f));
	opnd_t r = ixor(c, pow_exp2(c, th, tl), odd_sign(c, n, x));
	fcmp(c, ZE_CMOD_NE, th, th);
	r = sel(c, kb(K_NAN), r);
	icmp(c, ZE_CMOD_EQ, U, n, o_imm(0));
	return sel(c, kf(1.0f), r);
}

static opnd_t powr_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	opnd_t lh, ll, th, tl;
	log2_dd(c, x, &lh, &ll); /* x < 0: NaN */
	mul_dd2(c, y, lh, ll, &th, &tl);
	const opnd_t r = pow_exp2(c, th, tl);
	fcmp(c, ZE_CMOD_NE, th, th);
	return sel(c, kb(K_NAN), r);
}

/* x^(1/n): log2|x| / n as a double-float (the remainder of the division by a
 * fused step), sign from odd n. */
static opnd_t rootn_(spv_ctx_t *c, opnd_t x, opnd_t n)
{
	opnd_t lh, ll;
	log2_dd(c, absbits(c, x), &lh, &ll);
	const opnd_t nf = cvt(c, F, D, n);
	const opnd_t rn = finv(c, nf);
	const opnd_t th = fmul(c, lh, rn);
	const opnd_t tl = fmul(c, fadd(c, fma_(c, ng(th), nf, lh), ll), rn);
	opnd_t r = ixor(c, pow_exp2(c, th, tl), odd_sign(c, n, x));
	const opnd_t odd = iand(c, n, o_imm(1));
	fcmp(c, ZE_CMOD_LT, x, kf(0.0f)); /* x < 0 with n even */
	spv_cmp_flag_and(c, ZE_CMOD_EQ, U, odd, o_imm(0), FL);
	r = sel(c, kb(K_NAN), r);
	fcmp(c, ZE_CMOD_NE, th, th);
	r = sel(c, kb(K_NAN), r);
	icmp(c, ZE_CMOD_EQ, U, n, o_imm(0));
	return sel(c, kb(K_NAN), r);
}

/* ---- sin, cos, tan ----------------------------------------------------------- */

/* The high 32 bits of m w for m = mh 2^16 + ml < 2^24 (mh < 2^8): with w in
 * 16-bit halves, mh's products are below 2^24 and add into the middle column
 * whole. */
static opnd_t mulhi24(spv_ctx_t *c, opnd_t ml, opnd_t mh, opnd_t w)
{
	const opnd_t wl = iand(c, w, kb(0xffffu)), wh = ishr(c, w, 16);
	const opnd_t lh = imul(c, ml, wh);
	opnd_t mid = iadd(c, ishr(c, imul(c, ml, wl), 16), iand(c, lh, kb(0xffffu)));
	mid = iadd(c, mid, imul(c, mh, wl));
	return iadd(c, iadd(c, imul(c, mh, wh), ishr(c, lh, 16)), ishr(c, mid, 16));
}

/* |x| = r + j pi/2 (j mod 4), |r| <= pi/4 (a little more at the rounding
 * boundary).  Below pi/4: r = |x|.  Above: Payne-Hanek.  |x| = mant 2^(ex-150)
 * and the bits of 2/pi whose products with mant are multiples of 4 do not
 * matter, so a 96-bit window of 2/pi from bit ex - 153 on is enough: mant *
 * window = P, and P's bits 93-92 are j, its bits 91-0 the fraction f, with
 * |x| * 2/pi = j + f (mod 4).  The window is picked from the 256-bit table by
 * word (5 candidates) and bit (a funnel shift); only the low 96 bits of the
 * 120-bit product are needed (mul for bits 64-95, mul-high for the carries).
 * f is rounded to [-1/2, 1/2) (j rounded with it), turned into a double-float
 * and multiplied by pi/2.  The 60 bits of f kept leave at least 30 significant
 * bits for every fp32 argument (|f| > 2^-30 for all of them). */
static void trig_reduce(spv_ctx_t *c, opnd_t ax, opnd_t *r_out, opnd_t *rl_out, opnd_t *j_out)
{
	const opnd_t ex = ishr(c, ax, 23);
	const opnd_t mant = ior(c, iand(c, ax, kb(0x007fffffu)), kb(0x00800000u));
	const opnd_t j0 = iadd(c, ex, kb((uint32_t)-122));
	const opnd_t q = ishr(c, j0, 5);
	const opnd_t s = iand(c, j0, kb(31));
	const opnd_t s1 = iadd(c, ng(s), kb(31));
	opnd_t a[4];
	for (int k = 0; k < 4; k++)
		a[k] = kb(TWO_OVER_PI[k]);
	for (uint32_t v = 1; v <= 4; v++) {
		icmp(c, ZE_CMOD_EQ, U, q, o_imm(v));
		for (int k = 0; k < 4; k++)
			a[k] = sel(c, kb(TWO_OVER_PI[v + (uint32_t)k]), a[k]);
	}
	opnd_t w[3];
	for (int k = 0; k < 3; k++)
		w[k] = ior(c, op2(c, ZE_OP_SHL, U, a[k], s), op2(c, ZE_OP_SHR, U, ishr(c, a[k + 1], 1), s1));
	/* P mod 2^96 = (mant w0 mod 2^32) 2^64 + mant w1 2^32 + mant w2 */
	const opnd_t ml = iand(c, mant, kb(0xffffu)), mh = ishr(c, mant, 16);
	const opnd_t l1 = imul(c, mant, w[1]);
	const opnd_t word1 = iadd(c, l1, mulhi24(c, ml, mh, w[2]));
	const opnd_t carry = spv_cmp_bool(c, ZE_CMOD_LT, U, word1, l1);
	const opnd_t word0 = iadd(c, iadd(c, imul(c, mant, w[0]), mulhi24(c, ml, mh, w[1])), ng(carry));
	/* round to the nearest quadrant: f in [-1/2, 1/2) */
	const opnd_t w0r = iadd(c, word0, kb(0x08000000u));
	const opnd_t j = ishr(c, w0r, 28);
	/* f as hi 2^-31 + lo 2^-63 (hi signed, |hi| <= 2^30) */
	const opnd_t hi = ior(c, iasr(c, ixor(c, ishl(c, w0r, 4), kb(K_SIGN)), 1), ishr(c, word1, 29));
	const opnd_t lo = ishl(c, word1, 3);
	/* hi rounded to a multiple of 256 (an exact float); the rest, with lo, in a
	 * second float: f = fh + fl to 2^-24 relative */
	const opnd_t hr = iand(c, iadd(c, hi, kb(128)), kb(0xffffff00u));
	const opnd_t rest = ior(c, ishl(c, isub(c, hi, hr), 24), ishr(c, lo, 8));
	const opnd_t fh = fmul(c, cvt(c, F, D, hr), kf(0x1p-31f));
	const opnd_t fl = fmul(c, cvt(c, F, D, rest), kf(0x1p-55f));
	/* r = f pi/2 */
	const opnd_t rh = fmul(c, fh, kb(K_PIO2_HI));
	const opnd_t rl = fma_(c, fl, kb(K_PIO2_HI), fma_(c, fh, kb(K_PIO2_LO), fma_(c, fh, kb(K_PIO2_HI), ng(rh))));
	const opnd_t r = fadd(c, rh, rl);
	const opnd_t rlo = fsub(c, rl, fsub(c, r, rh));
	fcmp(c, ZE_CMOD_LT, ax, kb(K_PIO4_HI));
	*r_out = sel(c, ax, r);
	*rl_out = sel(c, kf(0.0f), rlo);
	*j_out = sel(c, kb(0), j);
}

/* |x| = r + j pi/2 for native_*: Cody-Waite with pi/2 in two parts
 * (0x3fc90fda + 0x33a22169), j = rint(|x| 2/pi) by the 1.5 2^23 trick; for
 * |x| up to about 2^16. */
static void trig_reduce_fast(spv_ctx_t *c, opnd_t ax, opnd_t *r_out, opnd_t *j_out)
{
	const opnd_t k = fadd(c, fma_(c, ax, kf(0.636619772f), kf(12582912.0f)), kf(-12582912.0f));
	*r_out = fma_(c, ng(k), kb(0x33a22169u), fma_(c, ng(k), kb(0x3fc90fdau), ax));
	*j_out = cvt(c, D, F, k);
}

/* sin and cos of r + rl (rl: what r's rounding lost).  The sums' small
 * parts (r^3 S, the rounding error of 1 - z/2, the rl terms, z = r^2's
 * rounding error) are added last, in one rounding; has_rl = 0 (native_*):
 * plainly, with rl = 0. */
static void sin_cos_poly(spv_ctx_t *c, opnd_t r, opnd_t rl, int has_rl, opnd_t *s, opnd_t *co)
{
	const opnd_t z = fmul(c, r, r);
	const opnd_t rz = fmul(c, r, z);
	const opnd_t sp = horner(c, z, SIN_S, NELEM(SIN_S));
	const opnd_t cp = horner(c, z, COS_C, NELEM(COS_C));
	const opnd_t h = fma_(c, kf(-0.5f), z, kf(1.0f));
	if (!has_rl) {
		*s = fma_(c, rz, sp, r);
		*co = fma_(c, fmul(c, z, z), cp, h);
		return;
	}
	const opnd_t zl = fma_(c, r, r, ng(z));
	const opnd_t hl = fma_(c, kf(-0.5f), z, fsub(c, kf(1.0f), h));
	const opnd_t corr = fma_(c, ng(rl), r, fma_(c, kf(-0.5f), zl, hl));
	*co = fadd(c, h, fma_(c, fmul(c, z, z), cp, corr));
	*s = fadd(c, r, fma_(c, rz, sp, fmul(c, rl, h)));
}

enum trig { T_SIN, T_COS, T_TAN };

/* sin, cos or tan of r + j pi/2; the result's sign is then flipped by flip. */
static opnd_t trig_finish(spv_ctx_t *c, enum trig fn, opnd_t r, opnd_t rl, int has_rl, opnd_t j, opnd_t flip)
{
	opnd_t s, co, o;
	sin_cos_poly(c, r, rl, has_rl, &s, &co);
	icmp(c, ZE_CMOD_NE, U, iand(c, j, o_imm(1)), o_imm(0));
	switch (fn) {
	case T_SIN:
		o = sel(c, co, s);
		flip = ixor(c, flip, ishl(c, iand(c, j, o_imm(2)), 30));
		break;
	case T_COS:
		o = sel(c, s, co);
		flip = ishl(c, iand(c, iadd(c, j, o_imm(1)), o_imm(2)), 30);
		break;
	default: {
		/* odd j: -cos/sin; a division with one fused correction step */
		const opnd_t num = sel(c, ixor(c, co, kb(K_SIGN)), s);
		const opnd_t den = sel(c, s, co);
		const opnd_t id = finv(c, den);
		const opnd_t q = fmul(c, num, id);
		o = fma_(c, fma_(c, ng(q), den, num), id, q);
		break;
	}
	}
	return ixor(c, o, flip);
}

static opnd_t trig(spv_ctx_t *c, enum trig fn, opnd_t x)
{
	const opnd_t ax = absbits(c, x);
	opnd_t r, rl, j;
	trig_reduce(c, ax, &r, &rl, &j);
	const opnd_t o = trig_finish(c, fn, r, rl, 1, j, fn == T_COS ? kb(0) : sgnbit(c, x));
	fcmp(c, ZE_CMOD_LT, ax, kb(K_INF));
	return sel(c, o, kb(K_NAN));
}

static opnd_t trig_fast(spv_ctx_t *c, enum trig fn, opnd_t x)
{
	opnd_t r, j;
	trig_reduce_fast(c, absbits(c, x), &r, &j);
	return trig_finish(c, fn, r, o_null(), 0, j, fn == T_COS ? kb(0) : sgnbit(c, x));
}

/* ---- inverse trigonometric --------------------------------------------------- */

/* asin and acos share v + q = asin(v) for v <= 1/2: v = |x| (z = x^2) or,
 * above 1/2, v = sqrt((1 - |x|)/2) (z = v^2), since asin|x| = pi/2 - 2 asin v.
 * Each result is K - (m v + (m q - K_LO)) for a constant K = K_HI + K_LO and
 * a factor m, one rounding before the last subtraction. */
static opnd_t asin_acos(spv_ctx_t *c, opnd_t x, int is_acos)
{
	const opnd_t a = absbits(c, x);
	const opnd_t z1 = fmul(c, a, a);
	const opnd_t z2 = fma_(c, kf(-0.5f), a, kf(0.5f));
	const opnd_t s = fsqrt(c, z2);
	fcmp(c, ZE_CMOD_LE, a, kf(0.5f));
	const opnd_t z = sel(c, z1, z2);
	const opnd_t v = sel(c, a, s);
	const opnd_t q = fmul(c, fmul(c, v, z), horner(c, z, ASIN_P, NELEM(ASIN_P)));
	opnd_t m, kh, kl;
	if (!is_acos) {
		/* asin|x|: 0 - (-v - q), or pi/2 - (2v + 2q - PIO2_LO) */
		fcmp(c, ZE_CMOD_LE, a, kf(0.5f));
		m = sel(c, kf(-1.0f), kf(2.0f));
		kh = sel(c, kf(0.0f), kb(K_PIO2_HI));
		kl = sel(c, kf(0.0f), kb(K_PIO2_LO));
	} else {
		/* acos x: pi/2 - (x + (sign(x) q - PIO2_LO)); for x > 1/2 0 - (-2v - 2q),
		 * for x < -1/2 pi - (2v + 2q - PI_LO) */
		fcmp(c, ZE_CMOD_LT, x, kf(0.0f));
		const opnd_t ms = sel(c, kf(-1.0f), kf(1.0f));
		const opnd_t mb = sel(c, kf(2.0f), kf(-2.0f));
		const opnd_t kbh = sel(c, kb(K_PI_HI), kf(0.0f));
		const opnd_t kbl = sel(c, kb(K_PI_LO), kf(0.0f));
		fcmp(c, ZE_CMOD_LE, a, kf(0.5f));
		m = sel(c, ms, mb);
		kh = sel(c, kb(K_PIO2_HI), kbh);
		kl = sel(c, kb(K_PIO2_LO), kbl);
	}
	const opnd_t r = fsub(c, kh, fma_(c, m, v, fma_(c, m, q, ng(kl))));
	return is_acos ? r : xsign(c, r, x);
}

/* atan t for 0 <= t <= 1 (t NaN gives NaN): above tan(pi/8) it is
 * pi/4 + atan((t - 1)/(t + 1)); `flip` (0 or the sign bit) negates the
 * polynomial's argument.  Returns o_hi + (o_lo + atan(+-t2)), where the
 * offset is pi/4 for the reduced case and ohb + olb otherwise. */
static opnd_t atan_core(spv_ctx_t *c, opnd_t t, opnd_t flip, opnd_t ohb, opnd_t olb)
{
	const opnd_t t2m = fmul(c, fadd(c, t, kf(-1.0f)), finv(c, fadd(c, t, kf(1.0f))));
	fcmp(c, ZE_CMOD_GT, t, kb(K_TAN_PI8));
	const opnd_t t2 = ixor(c, sel(c, t2m, t), flip);
	const opnd_t oh = sel(c, kb(K_PIO4_HI), ohb);
	const opnd_t ol = sel(c, kb(K_PIO4_LO), olb);
	const opnd_t z = fmul(c, t2, t2);
	const opnd_t p = fma_(c, fmul(c, t2, z), horner(c, z, ATAN_A, NELEM(ATAN_A)), t2);
	return fadd(c, oh, fadd(c, ol, p));
}

/* atan|x| = pi/2 - atan(1/|x|) above 1 (with the pi/4 reduction: pi/4 - atan t2) */
static opnd_t atan_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	const opnd_t ia = finv(c, a);
	fcmp(c, ZE_CMOD_GT, a, kf(1.0f));
	const opnd_t t = sel(c, ia, a);
	const opnd_t flip = sel(c, kb(K_SIGN), kb(0));
	const opnd_t ohb = sel(c, kb(K_PIO2_HI), kf(0.0f));
	const opnd_t olb = sel(c, kb(K_PIO2_LO), kf(0.0f));
	return xsign(c, atan_core(c, t, flip, ohb, olb), x);
}

/* atan2(y, x): t = min/max of |x|, |y| (both scaled by a power of two so that
 * max is in [2, 4)), theta = atan t, then A + s theta for the octant. */
static opnd_t atan2_(spv_ctx_t *c, opnd_t y, opnd_t x)
{
	const opnd_t ax = absbits(c, x), ay = absbits(c, y);
	const opnd_t mx = fmax_(c, ax, ay), mn = fmin_(c, ax, ay);
	const opnd_t eb = op2(c, ZE_OP_MAX, D, ishr(c, mx, 23), o_imm(1));
	const opnd_t scale = ishl(c, isub(c, kb(255), eb), 23);
	opnd_t t = fmul(c, fmul(c, mn, scale), finv(c, fmul(c, mx, scale)));
	/* max 0: t = 0; max inf: t = 1 if both are inf, else 0 */
	fcmp(c, ZE_CMOD_EQ, mn, kb(K_INF));
	const opnd_t tsp = sel(c, kf(1.0f), kf(0.0f));
	fcmp(c, ZE_CMOD_GT, mx, kf(0.0f));
	fcmp_and(c, ZE_CMOD_LT, mx, kb(K_INF));
	t = sel(c, t, tsp);
	const opnd_t th = atan_core(c, t, kb(0), kf(0.0f), kf(0.0f));
	/* |y| > |x|: pi/2 - theta; x negative: pi - that */
	fcmp(c, ZE_CMOD_GT, ay, ax);
	const opnd_t aph = sel(c, kb(K_PIO2_HI), kf(0.0f));
	const opnd_t apl = sel(c, kb(K_PIO2_LO), kf(0.0f));
	const opnd_t anh = sel(c, kb(K_PIO2_HI), kb(K_PI_HI));
	const opnd_t anl = sel(c, kb(K_PIO2_LO), kb(K_PI_LO));
	const opnd_t sp = sel(c, kf(-1.0f), kf(1.0f));
	icmp(c, ZE_CMOD_LT, D, x, o_imm(0));
	const opnd_t ah = sel(c, anh, aph);
	const opnd_t al = sel(c, anl, apl);
	const opnd_t sg = xsign(c, sp, x);
	opnd_t r = ior(c, fadd(c, ah, fma_(c, sg, th, al)), sgnbit(c, y));
	fcmp(c, ZE_CMOD_EQ, x, x);
	fcmp_and(c, ZE_CMOD_EQ, y, y);
	return sel(c, r, kb(K_NAN));
}

/* ---- hyperbolic ---------------------------------------------------------------- */

/* e^a / 2 for 0 <= a <= 89.5 (beyond the range from 89.42) */
static opnd_t half_exp(spv_ctx_t *c, opnd_t a)
{
	opnd_t th, tl;
	mul_dd(c, a, K_LOG2E_HI, K_LOG2E_LO, &th, &tl);
	return exp2_dd(c, th, tl, 1);
}

static opnd_t sinh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	const opnd_t h = half_exp(c, fmin_(c, a, kf(89.5f)));
	const opnd_t big = fma_(c, kf(-0.25f), finv(c, h), h);
	const opnd_t z = fmul(c, a, a);
	const opnd_t small = fma_(c, fmul(c, a, z), horner(c, z, SINH_H, NELEM(SINH_H)), a);
	fcmp(c, ZE_CMOD_GE, a, kf(1.0f)); /* NaN: the polynomial */
	return xsign(c, sel(c, big, small), x);
}

static opnd_t cosh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	fcmp(c, ZE_CMOD_GT, a, kf(89.5f)); /* a clamp that keeps NaN */
	const opnd_t h = half_exp(c, sel(c, kf(89.5f), a));
	return fma_(c, kf(0.25f), finv(c, h), h);
}

/* tanh = 1 - 2/(e^2a + 1) from 0.55 on (exact 1 from 10) */
static opnd_t tanh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	const opnd_t a2 = fmul(c, fmin_(c, a, kf(10.0f)), kf(2.0f));
	opnd_t th, tl;
	mul_dd(c, a2, K_LOG2E_HI, K_LOG2E_LO, &th, &tl);
	const opnd_t e0 = fexp2(c, th);
	const opnd_t e = fma_(c, e0, fmul(c, tl, kb(K_LN2)), e0);
	const opnd_t big = fma_(c, kf(-2.0f), finv(c, fadd(c, e, kf(1.0f))), kf(1.0f));
	const opnd_t z = fmul(c, a, a);
	const opnd_t small = fma_(c, fmul(c, a, z), horner(c, z, TANH_T, NELEM(TANH_T)), a);
	fcmp(c, ZE_CMOD_GE, a, kf(0.55f));
	return xsign(c, sel(c, big, small), x);
}

/* ---- cbrt, hypot --------------------------------------------------------------- */

/* exp2(log2|x| / 3), then one Newton step y - (y^3 - a)/(3y^2) with y^3 - a
 * exact to double-float precision; |x| scaled into [2^-100, 2^100]. */
/* asinh |x| = log1p(a + a^2 / (1 + sqrt(1 + a^2))) up to 2^12 (the log1p form
 * keeps small results accurate), log(a) + ln 2 above (the rest is below
 * 2^-25 relative); below 2^-12, x itself (a^3/6 is below half an ulp). */
static opnd_t asinh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = ab_(x);
	const opnd_t a2 = fmul(c, a, a);
	const opnd_t t = fadd(c, a, fmul(c, a2, finv(c, fadd(c, kf(1.0f), fsqrt(c, fadd(c, kf(1.0f), a2))))));
	opnd_t r = log1p_(c, t);
	fcmp(c, ZE_CMOD_GT, a, kf(4096.0f));
	r = sel(c, fadd(c, log_base(c, a, K_LN2_HI, K_LN2_LO), kb(K_LN2)), r);
	r = xsign(c, r, x);
	fcmp(c, ZE_CMOD_LT, a, kf(0x1p-12f));
	return sel(c, x, r);
}

/* acosh x = log1p(u + sqrt(u (u + 2))), u = x - 1 (exact near 1), up to
 * 2^12; log(x) + ln 2 above; x < 1: NaN. */
static opnd_t acosh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t u = fadd(c, x, kf(-1.0f));
	opnd_t r = log1p_(c, fadd(c, u, fsqrt(c, fmul(c, u, fadd(c, u, kf(2.0f))))));
	fcmp(c, ZE_CMOD_GT, x, kf(4096.0f));
	r = sel(c, fadd(c, log_base(c, x, K_LN2_HI, K_LN2_LO), kb(K_LN2)), r);
	fcmp(c, ZE_CMOD_LT, x, kf(1.0f));
	return sel(c, kb(K_NAN), r);
}

/* atanh x = sign(x) log1p(2a / (1 - a)) / 2; below 2^-12, x itself; |x| = 1:
 * inf; |x| > 1: NaN (the log1p of a negative value below -1). */
static opnd_t atanh_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = ab_(x);
	const opnd_t q = fmul(c, fadd(c, a, a), finv(c, fsub(c, kf(1.0f), a)));
	opnd_t r = xsign(c, fmul(c, log1p_(c, q), kf(0.5f)), x);
	fcmp(c, ZE_CMOD_GT, a, kf(1.0f));
	r = sel(c, kb(K_NAN), r);
	fcmp(c, ZE_CMOD_LT, a, kf(0x1p-12f));
	return sel(c, x, r);
}

/* logb x: the exponent as a float (denormals scaled by 2^24 first); 0: -inf;
 * inf: +inf; NaN: NaN. */
static opnd_t logb_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	fcmp(c, ZE_CMOD_LT, ab_(x), kf(0x1p-126f));
	const opnd_t y = sel(c, fmul(c, a, kf(0x1p24f)), a);
	const opnd_t bias = sel(c, kb(127 + 24), kb(127));
	const opnd_t e = cvt(c, F, D, isub(c, ishr(c, y, 23), bias));
	opnd_t r = e;
	fcmp(c, ZE_CMOD_EQ, ab_(x), kf(0.0f));
	r = sel(c, kb(K_INF | K_SIGN), r);
	icmp(c, ZE_CMOD_GE, U, a, kb(K_INF));
	return sel(c, ab_(x), r); /* inf: +inf; NaN: a NaN */
}

/* ilogb x: the exponent as an integer; 0: FP_ILOGB0 (INT_MIN), inf and NaN:
 * FP_ILOGBNAN (INT_MAX), OpenCL C's values. */
static opnd_t ilogb_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	fcmp(c, ZE_CMOD_LT, ab_(x), kf(0x1p-126f));
	const opnd_t y = sel(c, fmul(c, a, kf(0x1p24f)), a);
	const opnd_t bias = sel(c, kb(127 + 24), kb(127));
	opnd_t r = isub(c, ishr(c, y, 23), bias);
	fcmp(c, ZE_CMOD_EQ, ab_(x), kf(0.0f));
	r = sel(c, kb(0x80000000u), r);
	icmp(c, ZE_CMOD_GE, U, a, kb(K_INF));
	return sel(c, kb(0x7fffffffu), r);
}

static opnd_t cbrt_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	fcmp(c, ZE_CMOD_LT, a, kf(0x1p-100f));
	const opnd_t as1 = sel(c, fmul(c, a, kf(0x1p120f)), a);
	const opnd_t sc1 = sel(c, kf(0x1p-40f), kf(1.0f));
	fcmp(c, ZE_CMOD_GT, a, kf(0x1p100f));
	const opnd_t as = sel(c, fmul(c, a, kf(0x1p-120f)), as1);
	const opnd_t sc = sel(c, kf(0x1p40f), sc1);
	const opnd_t y = fexp2(c, fmul(c, flog2(c, as), kb(K_THIRD)));
	const opnd_t p = fmul(c, y, y);
	const opnd_t pl = fma_(c, y, y, ng(p));
	const opnd_t q = fmul(c, p, y);
	const opnd_t ql = fma_(c, pl, y, fma_(c, p, y, ng(q)));
	const opnd_t res = fadd(c, fsub(c, q, as), ql);
	const opnd_t y1 = fsub(c, y, fmul(c, res, finv(c, fmul(c, p, kf(3.0f)))));
	const opnd_t r = ior(c, fmul(c, y1, sc), sgnbit(c, x));
	fcmp(c, ZE_CMOD_GT, a, kf(0.0f)); /* 0, inf, NaN: x */
	fcmp_and(c, ZE_CMOD_LT, a, kb(K_INF));
	return sel(c, r, x);
}

/* sqrt(X^2 + Y^2) / s with X = max s in [2, 4), Y = min s */
static opnd_t hypot_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t ax = absbits(c, x), ay = absbits(c, y);
	const opnd_t mx = fmax_(c, ax, ay), mn = fmin_(c, ax, ay);
	const opnd_t eb = op2(c, ZE_OP_MAX, D, ishr(c, mx, 23), o_imm(1));
	const opnd_t scale = ishl(c, isub(c, kb(255), eb), 23);
	const opnd_t X = fmul(c, mx, scale), Y = fmul(c, mn, scale);
	opnd_t r = fmul(c, fsqrt(c, fma_(c, X, X, fmul(c, Y, Y))), finv(c, scale));
	fcmp(c, ZE_CMOD_EQ, x, x);
	fcmp_and(c, ZE_CMOD_EQ, y, y);
	r = sel(c, r, kb(K_NAN));
	fcmp(c, ZE_CMOD_EQ, mx, kb(K_INF)); /* inf even with a NaN */
	return sel(c, kb(K_INF), r);
}

/* ---- erf, erfc ----------------------------------------------------------------- */

/* erf|x| below 1/2 as a + a Q(a^2); erfc|x| from 1/2 as
 * exp(-a^2) G((a - 2)/(a + 2)) / (1 + 2a), with a^2 exact as a double-float. */
static void erf_parts(spv_ctx_t *c, opnd_t a, opnd_t *small, opnd_t *tail)
{
	const opnd_t z = fmul(c, a, a);
	*small = fma_(c, a, horner(c, z, ERF_Q, NELEM(ERF_Q)), a);
	const opnd_t ac = fmin_(c, a, kf(10.5f));
	const opnd_t s = fmul(c, ac, ac);
	const opnd_t sl = fma_(c, ac, ac, ng(s));
	const opnd_t th = fmul(c, ng(s), kb(K_LOG2E_HI));
	opnd_t tl = fma_(c, ng(s), kb(K_LOG2E_LO), fma_(c, ng(s), kb(K_LOG2E_HI), ng(th)));
	tl = fma_(c, ng(sl), kb(K_LOG2E_HI), tl);
	const opnd_t e0 = fexp2(c, th);
	const opnd_t e = fma_(c, e0, fmul(c, tl, kb(K_LN2)), e0);
	const opnd_t t = fmul(c, fadd(c, ac, kf(-2.0f)), finv(c, fadd(c, ac, kf(2.0f))));
	const opnd_t g = horner(c, t, ERFC_G, NELEM(ERFC_G));
	*tail = fmul(c, fmul(c, e, g), finv(c, fma_(c, kf(2.0f), ac, kf(1.0f))));
}

static opnd_t erf_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	opnd_t small, tail;
	erf_parts(c, a, &small, &tail);
	fcmp(c, ZE_CMOD_GE, a, kf(0.5f)); /* NaN: the polynomial */
	return xsign(c, sel(c, fsub(c, kf(1.0f), tail), small), x);
}

static opnd_t erfc_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	opnd_t small, tail;
	erf_parts(c, a, &small, &tail);
	const opnd_t near = fsub(c, kf(1.0f), xsign(c, small, x));
	fcmp(c, ZE_CMOD_LT, x, kf(0.0f));
	const opnd_t far = sel(c, fsub(c, kf(2.0f), tail), tail);
	fcmp(c, ZE_CMOD_GE, a, kf(0.5f));
	return sel(c, far, near);
}

/* ---- rounding (exact) -------------------------------------------------------- */

/* x for |x| >= 2^23 (already an integer), inf and NaN; else v with x's sign */
static opnd_t int_or_x(spv_ctx_t *c, opnd_t v, opnd_t x)
{
	const opnd_t r = ior(c, v, sgnbit(c, x));
	fcmp(c, ZE_CMOD_LT, absbits(c, x), kf(0x1p23f));
	return sel(c, r, x);
}

/* |t| for |x| < 2^23, through an integer conversion (truncation) */
static opnd_t trunc_abs(spv_ctx_t *c, opnd_t x)
{
	return absbits(c, cvt(c, F, D, cvt(c, D, F, x)));
}

static opnd_t trunc_(spv_ctx_t *c, opnd_t x)
{
	return int_or_x(c, trunc_abs(c, x), x);
}

/* floor (up = 0): trunc - 1 where trunc > x; ceil (up = 1): trunc + 1 where trunc < x */
static opnd_t floor_ceil(spv_ctx_t *c, opnd_t x, int up)
{
	const opnd_t t = trunc_(c, x);
	fcmp(c, up ? ZE_CMOD_LT : ZE_CMOD_GT, t, x);
	return sel(c, fadd(c, t, kf(up ? 1.0f : -1.0f)), t);
}

/* halfway cases away from zero: trunc|x| + (|x| - trunc|x| >= 1/2) */
static opnd_t round_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	const opnd_t t = cvt(c, F, D, cvt(c, D, F, a));
	fcmp(c, ZE_CMOD_GE, fsub(c, a, t), kf(0.5f));
	return int_or_x(c, sel(c, fadd(c, t, kf(1.0f)), t), x);
}

/* to nearest even, by the rounding of (|x| + 2^23) - 2^23 */
static opnd_t rint_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t a = absbits(c, x);
	return int_or_x(c, fadd(c, fadd(c, a, kf(0x1p23f)), kf(-0x1p23f)), x);
}

/* ---- fmod, remainder (exact) --------------------------------------------------- */

/* v = M 2^E with M in [1, 2) as a float, for finite v > 0 (denormals too: their
 * integer significand converted to float has the right exponent). */
static void split_exp(spv_ctx_t *c, opnd_t v, opnd_t *m, opnd_t *e)
{
	icmp(c, ZE_CMOD_LT, U, v, kb(0x00800000u));
	const opnd_t vn = sel(c, cvt(c, F, U, v), v);
	const opnd_t bias = sel(c, kb((uint32_t)-276), kb((uint32_t)-127));
	*e = iadd(c, ishr(c, vn, 23), bias);
	*m = ior(c, iand(c, vn, kb(0x007fffffu)), kb(0x3f800000u));
}

/* fmod(a, b) for a >= 0, b > 0, both finite (or b = inf: a).  With
 * a = Ma 2^Ea, b = Mb 2^Eb: the result is ((Ma 2^(Ea-Eb)) mod Mb) 2^Eb.  The
 * power of two is brought in at most 20 bits at a time, each step X = X 2^s -
 * q Mb with q = rint(X 2^s / Mb) (|quotient| < 2^21; the estimate from the
 * reciprocal is within 1/8, so |X| < 0.57 Mb after the step), one exact fused
 * operation since X stays a multiple of 2^-23 below 2 in magnitude; X may be
 * negative until the end.  14 steps cover Ea - Eb <= 276. */
static opnd_t fmod_abs(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	opnd_t ma, ea, mb, eb;
	split_exp(c, a, &ma, &ea);
	split_exp(c, b, &mb, &eb);
	opnd_t rem = op2(c, ZE_OP_MAX, D, isub(c, ea, eb), o_imm(0));
	const opnd_t ib = finv(c, mb);
	opnd_t x = ma;
	for (int i = 0; i < 14; i++) {
		const opnd_t s = op2(c, ZE_OP_MIN, D, rem, o_imm(20));
		if (i < 13)
			rem = isub(c, rem, s);
		const opnd_t xs = fmul(c, x, iadd(c, ishl(c, s, 23), kb(0x3f800000u)));
		const opnd_t q = fadd(c, fma_(c, xs, ib, kf(12582912.0f)), kf(-12582912.0f));
		x = fma_(c, ng(q), mb, xs);
	}
	fcmp(c, ZE_CMOD_LT, x, kf(0.0f));
	x = sel(c, fadd(c, x, mb), x);
	/* x 2^Eb, in two exact steps when b is denormal (Eb < -126) */
	icmp(c, ZE_CMOD_LT, D, eb, kb((uint32_t)-126));
	const opnd_t e1 = iadd(c, eb, sel(c, kb(126), kb(0)));
	const opnd_t f2 = sel(c, kf(0x1p-126f), kf(1.0f));
	const opnd_t r = fmul(c, fmul(c, x, ishl(c, iadd(c, e1, kb(127)), 23)), f2);
	fcmp(c, ZE_CMOD_LT, a, b);
	return sel(c, a, r);
}

static opnd_t fmod_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t a = absbits(c, x), b = absbits(c, y);
	const opnd_t r = ior(c, fmod_abs(c, a, b), sgnbit(c, x));
	fcmp(c, ZE_CMOD_LT, a, kb(K_INF)); /* x finite, y neither 0 nor NaN */
	fcmp_and(c, ZE_CMOD_GT, b, kf(0.0f));
	return sel(c, r, kb(K_NAN));
}

/* r = fmod(|x|, 2|y|) in [0, 2|y|), then as fdlibm's remainderf: if 2r > |y|,
 * r - |y|, and again if that is still >= |y|/2 (ties to even).  2|y| may
 * overflow to inf: then r = |x| and the comparisons still hold, except for
 * y = inf itself (the result is x). */
static opnd_t remainder_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t a = absbits(c, x), b = absbits(c, y);
	const opnd_t r = fmod_abs(c, a, fadd(c, b, b));
	const opnd_t r1 = fsub(c, r, b);
	fcmp(c, ZE_CMOD_GE, fadd(c, r1, r1), b);
	const opnd_t r2 = sel(c, fsub(c, r1, b), r1);
	fcmp(c, ZE_CMOD_GT, fadd(c, r, r), b);
	opnd_t o = xsign(c, sel(c, r2, r), x);
	fcmp(c, ZE_CMOD_EQ, b, kb(K_INF));
	o = sel(c, x, o);
	fcmp(c, ZE_CMOD_LT, a, kb(K_INF));
	fcmp_and(c, ZE_CMOD_GT, b, kf(0.0f));
	return sel(c, o, kb(K_NAN));
}

/* ---- other float functions --------------------------------------------------- */

static opnd_t fdim_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t d = fsub(c, x, y);
	fcmp(c, ZE_CMOD_GT, x, y);
	const opnd_t r = sel(c, d, kf(0.0f));
	fcmp(c, ZE_CMOD_EQ, x, x);
	fcmp_and(c, ZE_CMOD_EQ, y, y);
	return sel(c, r, kb(K_NAN));
}

/* maxmag (big = 1) / minmag: the operand of larger (smaller) magnitude, else fmax (fmin) */
static opnd_t minmaxmag(spv_ctx_t *c, opnd_t x, opnd_t y, int big)
{
	const uint8_t cm = big ? ZE_CMOD_GT : ZE_CMOD_LT;
	opnd_t r = big ? fmax_(c, x, y) : fmin_(c, x, y);
	fcmp(c, cm, ab_(y), ab_(x));
	r = sel(c, y, r);
	fcmp(c, cm, ab_(x), ab_(y));
	return sel(c, x, r);
}

/* x * 2^n: the exponent added to the (normalized) significand's; results
 * below 2^-126 through two multiplications, the last one rounding. */
static opnd_t ldexp_(spv_ctx_t *c, opnd_t x, opnd_t n)
{
	const opnd_t ax = absbits(c, x);
	fcmp(c, ZE_CMOD_LT, ax, kf(0x1p-126f));
	const opnd_t y = sel(c, fmul(c, x, kf(0x1p64f)), x);
	const opnd_t bias = sel(c, kb((uint32_t)-191), kb((uint32_t)-127));
	const opnd_t e = iadd(c, ishr(c, absbits(c, y), 23), bias);
	const opnd_t m = ior(c, iand(c, y, kb(0x807fffffu)), kb(0x3f800000u));
	const opnd_t nc = op2(c, ZE_OP_MIN, D, op2(c, ZE_OP_MAX, D, n, kb((uint32_t)-400)), o_imm(400));
	const opnd_t t = op2(c, ZE_OP_MIN, D, op2(c, ZE_OP_MAX, D, iadd(c, e, nc), kb((uint32_t)-160)), o_imm(128));
	icmp(c, ZE_CMOD_LT, D, t, kb((uint32_t)-126));
	const opnd_t t1 = iadd(c, t, sel(c, kb(126), kb(0)));
	const opnd_t f2 = sel(c, kf(0x1p-126f), kf(1.0f));
	const opnd_t r = fmul(c, fmul(c, m, ishl(c, iadd(c, t1, kb(127)), 23)), f2);
	fcmp(c, ZE_CMOD_NE, x, kf(0.0f)); /* 0, inf, NaN: x */
	fcmp_and(c, ZE_CMOD_LT, ax, kb(K_INF));
	return sel(c, r, x);
}

/* the next float after x toward y: the bits +-1 (sign-magnitude) */
static opnd_t nextafter_(spv_ctx_t *c, opnd_t x, opnd_t y)
{
	const opnd_t m = ixor(c, fmask(c, ZE_CMOD_LT, x, y), spv_cmp_bool(c, ZE_CMOD_GE, D, x, o_imm(0)));
	opnd_t r = iadd(c, x, ior(c, ishl(c, m, 1), o_imm(1))); /* m ? -1 : +1 */
	fcmp(c, ZE_CMOD_GT, y, kf(0.0f));
	const opnd_t tiny = sel(c, kb(1), kb(0x80000001u));
	fcmp(c, ZE_CMOD_EQ, x, kf(0.0f));
	r = sel(c, tiny, r);
	fcmp(c, ZE_CMOD_EQ, x, y);
	r = sel(c, y, r);
	fcmp(c, ZE_CMOD_EQ, x, x);
	fcmp_and(c, ZE_CMOD_EQ, y, y);
	return sel(c, r, fadd(c, x, y));
}

static opnd_t sign_(spv_ctx_t *c, opnd_t x)
{
	fcmp(c, ZE_CMOD_GT, x, kf(0.0f));
	opnd_t r = sel(c, kf(1.0f), x);
	fcmp(c, ZE_CMOD_LT, x, kf(0.0f));
	r = sel(c, kf(-1.0f), r);
	fcmp(c, ZE_CMOD_NE, x, x);
	return sel(c, kf(0.0f), r);
}

static opnd_t smoothstep_(spv_ctx_t *c, opnd_t e0, opnd_t e1, opnd_t x)
{
	/* the quotient with one fused correction step (nearly correctly rounded) */
	const opnd_t num = fsub(c, x, e0), den = fsub(c, e1, e0);
	const opnd_t id = finv(c, den);
	const opnd_t q = fmul(c, num, id);
	const opnd_t t1 = fma_(c, fma_(c, ng(q), den, num), id, q);
	fcmp(c, ZE_CMOD_EQ, t1, t1); /* not for infinite quotients */
	const opnd_t t = fmin_(c, fmax_(c, sel(c, t1, q), kf(0.0f)), kf(1.0f));
	return fmul(c, fmul(c, t, t), fma_(c, kf(-2.0f), t, kf(3.0f)));
}

/* ---- integer ------------------------------------------------------------------- */

/* the top set bit isolated well enough that the conversion cannot round up
 * to the next power of two (no two adjacent ones), then its exponent */
static opnd_t clz_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t v = iand(c, x, inot(c, ishr(c, x, 1)));
	const opnd_t e = ishr(c, cvt(c, F, U, v), 23);
	return op2(c, ZE_OP_MIN, U, iadd(c, ng(e), kb(158)), o_imm(32));
}

static opnd_t ctz_(spv_ctx_t *c, opnd_t x)
{
	const opnd_t low = iand(c, x, isub(c, kb(0), x));
	const opnd_t e = ishr(c, cvt(c, F, U, low), 23);
	return op2(c, ZE_OP_MIN, U, iadd(c, e, kb((uint32_t)-127)), o_imm(32));
}

static opnd_t popcount_(spv_ctx_t *c, opnd_t x)
{
	opnd_t v = isub(c, x, iand(c, ishr(c, x, 1), kb(0x55555555u)));
	v = iadd(c, iand(c, v, kb(0x33333333u)), iand(c, ishr(c, v, 2), kb(0x33333333u)));
	v = iand(c, iadd(c, v, ishr(c, v, 4)), kb(0x0f0f0f0fu));
	return ishr(c, imul(c, v, kb(0x01010101u)), 24);
}

static opnd_t rotate_(spv_ctx_t *c, opnd_t v, opnd_t n)
{
	return ior(c, op2(c, ZE_OP_SHL, U, v, n), op2(c, ZE_OP_SHR, U, v, isub(c, kb(0), n)));
}

/* the signed high word of a*b: unsigned, minus b where a < 0, minus a where b < 0 */
static opnd_t mulhs(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	const opnd_t h = spv_mulhu(c, a, b);
	const opnd_t fa = iand(c, iasr(c, a, 31), b), fb = iand(c, iasr(c, b, 31), a);
	return isub(c, isub(c, h, fa), fb);
}

/* INT_MAX for s >= 0, INT_MIN for s < 0 */
static opnd_t sat_of(spv_ctx_t *c, opnd_t s)
{
	return ixor(c, iasr(c, s, 31), kb(0x7fffffffu));
}

static opnd_t add_sat_s(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	const opnd_t s = iadd(c, a, b);
	/* overflow: a and b of one sign, s of the other */
	icmp(c, ZE_CMOD_LT, D, iand(c, ixor(c, s, a), ixor(c, s, b)), o_imm(0));
	return sel(c, sat_of(c, a), s);
}

static opnd_t sub_sat_s(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	const opnd_t s = isub(c, a, b);
	icmp(c, ZE_CMOD_LT, D, iand(c, ixor(c, a, b), ixor(c, s, a)), o_imm(0));
	return sel(c, sat_of(c, a), s);
}

/* a*b + c saturated, with the 64-bit product */
static opnd_t mad_sat(spv_ctx_t *c, opnd_t a, opnd_t b, opnd_t d, int is_signed)
{
	const opnd_t lo = imul(c, a, b);
	const opnd_t l2 = iadd(c, lo, d);
	const opnd_t carry = spv_cmp_bool(c, ZE_CMOD_LT, U, l2, lo); /* ~0: carry out */
	if (!is_signed) {
		const opnd_t h2 = isub(c, spv_mulhu(c, a, b), carry);
		icmp(c, ZE_CMOD_NE, U, h2, o_imm(0));
		return sel(c, kb(0xffffffffu), l2);
	}
	const opnd_t h2 = isub(c, iadd(c, mulhs(c, a, b), iasr(c, d, 31)), carry);
	/* in range when the high word is the low word's sign */
	icmp(c, ZE_CMOD_NE, U, h2, iasr(c, l2, 31));
	return sel(c, sat_of(c, h2), l2);
}

/* ---- the dispatch ---------------------------------------------------------------- */

int spv_math_ocl(spv_ctx_t *c, uint32_t n, const opnd_t *xin, int is_float, opnd_t *o)
{
	/* operands with source modifiers applied (the sequences set and test
	 * modifiers and sign bits themselves): fp32 or integer semantics, by
	 * operand (n's second operand is an integer for pown, rootn, ldexp) */
	opnd_t x[3];
	for (int i = 0; i < 3; i++) {
		x[i] = xin[i];
		if (x[i].k == O_NULL || (!x[i].neg && !x[i].abs))
			continue;
		const int int_arg = !is_float || (i == 1 && (n == OpenCLstd_Pown || n == OpenCLstd_Rootn || n == OpenCLstd_Ldexp));
		x[i] = int_arg ? op1(c, ZE_OP_MOV, D, x[i]) : plain(c, x[i]);
	}
	switch (n) {
	case OpenCLstd_Exp: *o = exp_base(c, x[0], K_LOG2E_HI, K_LOG2E_LO, -104.0f, 89.0f); break;
	case OpenCLstd_Exp10: *o = exp_base(c, x[0], K_LOG2_10_HI, K_LOG2_10_LO, -46.0f, 38.6f); break;
	case OpenCLstd_Native_exp10:
	case OpenCLstd_Half_exp10: *o = fexp2(c, fmul(c, x[0], kb(K_LOG2_10_HI))); break;
	case OpenCLstd_Half_exp: *o = fexp2(c, fmul(c, x[0], kb(K_LOG2E_HI))); break;
	case OpenCLstd_Expm1: *o = expm1_(c, x[0]); break;
	case OpenCLstd_Log: *o = log_base(c, x[0], K_LN2_HI, K_LN2_LO); break;
	case OpenCLstd_Log10: *o = log_base(c, x[0], K_LOG10_2_HI, K_LOG10_2_LO); break;
	case OpenCLstd_Native_log10:
	case OpenCLstd_Half_log10: *o = fmul(c, flog2(c, x[0]), kb(K_LOG10_2_HI)); break;
	case OpenCLstd_Half_log: *o = fmul(c, flog2(c, x[0]), kb(K_LN2)); break;
	case OpenCLstd_Log1p: *o = log1p_(c, x[0]); break;
	case OpenCLstd_Pow: *o = pow_(c, x[0], x[1]); break;
	case OpenCLstd_Pown: *o = pown_(c, x[0], x[1]); break;
	case OpenCLstd_Powr: *o = powr_(c, x[0], x[1]); break;
	case OpenCLstd_Native_powr:
	case OpenCLstd_Half_powr: *o = fexp2(c, fmul(c, x[1], flog2(c, x[0]))); break;
	case OpenCLstd_Rootn: *o = rootn_(c, x[0], x[1]); break;
	case OpenCLstd_Sin: *o = trig(c, T_SIN, x[0]); break;
	case OpenCLstd_Cos: *o = trig(c, T_COS, x[0]); break;
	case OpenCLstd_Tan: *o = trig(c, T_TAN, x[0]); break;
	case OpenCLstd_Native_sin:
	case OpenCLstd_Half_sin: *o = trig_fast(c, T_SIN, x[0]); break;
	case OpenCLstd_Native_cos:
	case OpenCLstd_Half_cos: *o = trig_fast(c, T_COS, x[0]); break;
	case OpenCLstd_Native_tan:
	case OpenCLstd_Half_tan: *o = trig_fast(c, T_TAN, x[0]); break;
	case OpenCLstd_Asin: *o = asin_acos(c, x[0], 0); break;
	case OpenCLstd_Acos: *o = asin_acos(c, x[0], 1); break;
	case OpenCLstd_Atan: *o = atan_(c, x[0]); break;
	case OpenCLstd_Asinh: *o = asinh_(c, x[0]); break;
	case OpenCLstd_Acosh: *o = acosh_(c, x[0]); break;
	case OpenCLstd_Atanh: *o = atanh_(c, x[0]); break;
	case OpenCLstd_Logb: *o = logb_(c, x[0]); break;
	case OpenCLstd_Ilogb: *o = ilogb_(c, x[0]); break;
	case OpenCLstd_Nan: *o = ior(c, iand(c, x[0], kb(0x003fffffu)), kb(K_NAN)); break;
	case OpenCLstd_Atan2: *o = atan2_(c, x[0], x[1]); break;
	case OpenCLstd_Sinh: *o = sinh_(c, x[0]); break;
	case OpenCLstd_Cosh: *o = cosh_(c, x[0]); break;
	case OpenCLstd_Tanh: *o = tanh_(c, x[0]); break;
	case OpenCLstd_Cbrt: *o = cbrt_(c, x[0]); break;
	case OpenCLstd_Hypot: *o = hypot_(c, x[0], x[1]); break;
	case OpenCLstd_Erf: *o = erf_(c, x[0]); break;
	case OpenCLstd_Erfc: *o = erfc_(c, x[0]); break;
	case OpenCLstd_Floor: *o = floor_ceil(c, x[0], 0); break;
	case OpenCLstd_Ceil: *o = floor_ceil(c, x[0], 1); break;
	case OpenCLstd_Trunc: *o = trunc_(c, x[0]); break;
	case OpenCLstd_Round: *o = round_(c, x[0]); break;
	case OpenCLstd_Rint: *o = rint_(c, x[0]); break;
	case OpenCLstd_Fmod: *o = fmod_(c, x[0], x[1]); break;
	case OpenCLstd_Remainder: *o = remainder_(c, x[0], x[1]); break;
	case OpenCLstd_Fdim: *o = fdim_(c, x[0], x[1]); break;
	case OpenCLstd_Ldexp: *o = ldexp_(c, x[0], x[1]); break;
	case OpenCLstd_Nextafter: *o = nextafter_(c, x[0], x[1]); break;
	case OpenCLstd_Maxmag: *o = minmaxmag(c, x[0], x[1], 1); break;
	case OpenCLstd_Minmag: *o = minmaxmag(c, x[0], x[1], 0); break;
	case OpenCLstd_Degrees: *o = fma_(c, x[0], kb(K_DEG_HI), fmul(c, x[0], kb(K_DEG_LO))); break;
	case OpenCLstd_Radians: *o = fma_(c, x[0], kb(K_RAD_HI), fmul(c, x[0], kb(K_RAD_LO))); break;
	case OpenCLstd_Sign: *o = sign_(c, x[0]); break;
	case OpenCLstd_Step:
		fcmp(c, ZE_CMOD_LT, x[1], x[0]);
		*o = sel(c, kf(0.0f), kf(1.0f));
		break;
	case OpenCLstd_Smoothstep: *o = smoothstep_(c, x[0], x[1], x[2]); break;
	case OpenCLstd_Clz: *o = clz_(c, x[0]); break;
	case OpenCLstd_Ctz: *o = ctz_(c, x[0]); break;
	case OpenCLstd_Popcount: *o = popcount_(c, x[0]); break;
	case OpenCLstd_Rotate: *o = rotate_(c, x[0], x[1]); break;
	case OpenCLstd_SAdd_sat: *o = add_sat_s(c, x[0], x[1]); break;
	case OpenCLstd_UAdd_sat: /* min(a, ~b) + b */
		*o = iadd(c, op2(c, ZE_OP_MIN, U, x[0], inot(c, x[1])), x[1]);
		break;
	case OpenCLstd_SSub_sat: *o = sub_sat_s(c, x[0], x[1]); break;
	case OpenCLstd_USub_sat: *o = isub(c, op2(c, ZE_OP_MAX, U, x[0], x[1]), x[1]); break;
	case OpenCLstd_SHadd: /* (a & b) + (a ^ b) / 2, rounded down */
		*o = iadd(c, iand(c, x[0], x[1]), iasr(c, ixor(c, x[0], x[1]), 1));
		break;
	case OpenCLstd_UHadd: *o = iadd(c, iand(c, x[0], x[1]), ishr(c, ixor(c, x[0], x[1]), 1)); break;
	case OpenCLstd_SRhadd: /* (a | b) - (a ^ b) / 2 */
		*o = isub(c, ior(c, x[0], x[1]), iasr(c, ixor(c, x[0], x[1]), 1));
		break;
	case OpenCLstd_URhadd: *o = isub(c, ior(c, x[0], x[1]), ishr(c, ixor(c, x[0], x[1]), 1)); break;
	case OpenCLstd_SMul_hi: *o = mulhs(c, x[0], x[1]); break;
	case OpenCLstd_SMad_hi: *o = iadd(c, mulhs(c, x[0], x[1]), x[2]); break;
	case OpenCLstd_UMad_hi: *o = iadd(c, spv_mulhu(c, x[0], x[1]), x[2]); break;
	case OpenCLstd_SAbs_diff:
		*o = isub(c, op2(c, ZE_OP_MAX, D, x[0], x[1]), op2(c, ZE_OP_MIN, D, x[0], x[1]));
		break;
	case OpenCLstd_UAbs_diff:
		*o = isub(c, op2(c, ZE_OP_MAX, U, x[0], x[1]), op2(c, ZE_OP_MIN, U, x[0], x[1]));
		break;
	case OpenCLstd_SMad_sat: *o = mad_sat(c, x[0], x[1], x[2], 1); break;
	case OpenCLstd_UMad_sat: *o = mad_sat(c, x[0], x[1], x[2], 0); break;
	default: return 0;
	}
	return 1;
}
