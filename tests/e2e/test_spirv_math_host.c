/* The code sequences of driver/spirv/spv_math.c run on the host: the IR
 * builder they call is replaced here by an interpreter of one lane (every
 * operand an immediate, docs/isa.md 3.2 semantics: fused mad, NaN-ignoring
 * min/max, correctly rounded inv and sqrt, exp2 and log2 as glibc's double
 * results rounded, truncating saturating conversions), so that each function
 * can be checked on many more inputs than the simulator runs in the time
 * (tests/e2e/spirv_math_ref.h: glibc within OpenCL's ulp bounds, or exact).
 * The interpreter also checks what the sequences must not do: modifiers on
 * logic, shifts and sel, a flag read that no compare wrote.
 *
 *     test_spirv_math_host [INPUTS_PER_FUNCTION] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spv_internal.h"
#include "spirv_math_ref.h"

static int failed;

#define MOCK_FAIL(...)                                                                                                \
	do {                                                                                                          \
		printf("spv_math: ");                                                                                 \
		printf(__VA_ARGS__);                                                                                  \
		printf("\n");                                                                                         \
		exit(1);                                                                                              \
	} while (0)

/* flag value, and whether a compare wrote it in this sequence */
static int flag[2], flag_set[2];

static uint32_t src(opnd_t o, uint8_t t)
{
	if (o.k == O_NULL)
		return 0;
	if (o.k != O_I)
		MOCK_FAIL("an operand of kind %u (only immediates here)", o.k);
	uint32_t v = o.v;
	if (t == ZE_TYPE_F) {
		if (o.abs)
			v &= 0x7fffffffu;
		if (o.neg)
			v ^= 0x80000000u;
	} else {
		if (o.abs && t == ZE_TYPE_D && (int32_t)v < 0)
			v = 0u - v;
		if (o.neg)
			v = 0u - v;
	}
	return v;
}

static float fmin_isa(float a, float b)
{
	if (isnan(a))
		return b;
	if (isnan(b) || a < b)
		return a;
	if (a == b)
		return signbit(a) ? a : b;
	return b;
}

static float fmax_isa(float a, float b)
{
	if (isnan(a))
		return b;
	if (isnan(b) || a > b)
		return a;
	if (a == b)
		return signbit(a) ? b : a;
	return b;
}

static int compare(uint8_t cmod, uint8_t t, uint32_t a, uint32_t b)
{
	int lt, eq, unordered = 0;
	if (t == ZE_TYPE_F) {
		const float x = mref_f(a), y = mref_f(b);
		unordered = isnan(x) || isnan(y);
		lt = x < y;
		eq = x == y;
	} else if (t == ZE_TYPE_D) {
		lt = (int32_t)a < (int32_t)b;
		eq = a == b;
	} else {
		lt = a < b;
		eq = a == b;
	}
	switch (cmod) {
	case ZE_CMOD_EQ: return eq;
	case ZE_CMOD_NE: return !eq;
	case ZE_CMOD_LT: return lt;
	case ZE_CMOD_LE: return lt || eq;
	case ZE_CMOD_GT: return !lt && !eq && !unordered;
	case ZE_CMOD_GE: return !lt && !unordered;
	default: MOCK_FAIL("condition modifier %u", cmod);
	}
}

/* fp32 to a d/ud destination: truncation, saturation, NaN to 0 */
static uint32_t from_float(float f, uint8_t dt)
{
	if (isnan(f))
		return 0;
	if (dt == ZE_TYPE_D)
		return f <= -0x1p31f ? 0x80000000u : f >= 0x1p31f ? 0x7fffffffu : (uint32_t)(int32_t)f;
	return f <= 0 ? 0 : f >= 0x1p32f ? 0xffffffffu : (uint32_t)f;
}

opnd_t spv_alu(spv_ctx_t *c, uint8_t op, uint8_t dt, uint8_t st, opnd_t a, opnd_t b, opnd_t cc)
{
	(void)c;
	const int logic = op == ZE_OP_NOT || op == ZE_OP_AND || op == ZE_OP_OR || op == ZE_OP_XOR ||
			  op == ZE_OP_SHL || op == ZE_OP_SHR || op == ZE_OP_ASR;
	if (logic && st == ZE_TYPE_F)
		MOCK_FAIL("logic instruction %u on type f", op);
	const uint32_t x = src(a, st), y = src(b, st), z = src(cc, st);
	if (st == ZE_TYPE_F) {
		const float fx = mref_f(x), fy = mref_f(y), fz = mref_f(z);
		float r;
		switch (op) {
		case ZE_OP_MOV: r = fx; break;
		case ZE_OP_ADD: r = fx + fy; break;
		case ZE_OP_MUL: r = fx * fy; break;
		case ZE_OP_MAD: r = fmaf(fx, fy, fz); break;
		case ZE_OP_MIN: r = fmin_isa(fx, fy); break;
		case ZE_OP_MAX: r = fmax_isa(fx, fy); break;
		case ZE_OP_INV: r = 1.0f / fx; break;
		case ZE_OP_SQRT: r = sqrtf(fx); break;
		case ZE_OP_EXP: r = (float)exp2((double)fx); break;
		case ZE_OP_LOG: r = (float)log2((double)fx); break;
		default: MOCK_FAIL("instruction %u on type f", op);
		}
		if (dt != ZE_TYPE_F)
			return o_imm(from_float(r, dt));
		return o_imm(isnan(r) ? 0x7fc00000u : mref_u(r));
	}
	uint32_t r;
	switch (op) {
	case ZE_OP_MOV: r = x; break;
	case ZE_OP_NOT: r = ~x; break;
	case ZE_OP_AND: r = x & y; break;
	case ZE_OP_OR: r = x | y; break;
	case ZE_OP_XOR: r = x ^ y; break;
	case ZE_OP_SHL: r = x << (y & 31); break;
	case ZE_OP_SHR: r = x >> (y & 31); break;
	case ZE_OP_ASR: r = (uint32_t)((int32_t)x >> (y & 31)); break;
	case ZE_OP_ADD: r = x + y; break;
	case ZE_OP_MUL: r = x * y; break;
	case ZE_OP_MAD: r = x * y + z; break;
	case ZE_OP_MIN: r = st == ZE_TYPE_D ? ((int32_t)x < (int32_t)y ? x : y) : (x < y ? x : y); break;
	case ZE_OP_MAX: r = st == ZE_TYPE_D ? ((int32_t)x > (int32_t)y ? x : y) : (x > y ? x : y); break;
	default: MOCK_FAIL("instruction %u on an integer type", op);
	}
	if (dt == ZE_TYPE_F)
		return o_imm(mref_u(st == ZE_TYPE_D ? (float)(int32_t)r : (float)r));
	return o_imm(r);
}

opnd_t spv_mov(spv_ctx_t *c, uint8_t t, opnd_t a)
{
	return spv_alu(c, ZE_OP_MOV, t, t, a, o_null(), o_null());
}

void spv_cmp_flag(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t f)
{
	(void)c;
	flag[f] = compare(cmod, t, src(a, t), src(b, t));
	flag_set[f] = 1;
}

/* a predicated compare: a lane whose flag bit is clear keeps it clear */
void spv_cmp_flag_and(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t f)
{
	(void)c;
	if (!flag_set[f])
		MOCK_FAIL("compare-and into f%u, which no compare wrote", f);
	if (flag[f])
		flag[f] = compare(cmod, t, src(a, t), src(b, t));
}

/* a mask; the compare writes f0 too, which no sequence may then read */
opnd_t spv_cmp_bool(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b)
{
	(void)c;
	const int r = compare(cmod, t, src(a, t), src(b, t));
	flag[0] = r;
	flag_set[0] = 0;
	return o_imm(r ? 0xffffffffu : 0);
}

opnd_t spv_sel(spv_ctx_t *c, uint8_t f, uint8_t inv, opnd_t a, opnd_t b)
{
	(void)c;
	if (a.neg || a.abs || b.neg || b.abs)
		MOCK_FAIL("a source modifier on sel (it moves bits)");
	if (!flag_set[f])
		MOCK_FAIL("sel on f%u, which no compare of this sequence wrote last", f);
	return (flag[f] ^ inv) ? a : b;
}

opnd_t spv_mulhu(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	(void)c;
	return o_imm((uint32_t)(((uint64_t)src(a, ZE_TYPE_UD) * src(b, ZE_TYPE_UD)) >> 32));
}

static uint32_t eval(const mref_fn_t *f, const uint32_t *in)
{
	opnd_t x[3], o;
	for (int j = 0; j < 3; j++)
		x[j] = j < f->nargs ? o_imm(in[j]) : o_null();
	flag_set[0] = flag_set[1] = 0;
	const int is_float = f->ulp != MREF_BITS;
	if (!spv_math_ocl(NULL, f->op, x, is_float, &o))
		MOCK_FAIL("%s is not handled", f->name);
	if (o.k != O_I || o.neg || o.abs)
		MOCK_FAIL("%s: the result is not a plain value", f->name);
	return o.v;
}

int main(int argc, char **argv)
{
	const uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 100000;
	if (n < 4096) {
		printf("usage: test_spirv_math_host [INPUTS_PER_FUNCTION >= 4096]\n");
		return 2;
	}
	uint32_t *in[3];
	for (int j = 0; j < 3; j++) {
		in[j] = calloc(n, 4);
		if (!in[j])
			MOCK_FAIL("out of memory");
	}
	printf("spv_math on the host, %u inputs per function: worst error in ulps (0 = exact)\n", n);
	char line[128] = "";
	size_t len = 0;
	for (size_t fi = 0; fi < MREF_NFNS; fi++) {
		const mref_fn_t *f = &MREF_FNS[fi];
		mref_inputs(f, n, 1000 + (uint32_t)fi, in);
		double worst = 0;
		for (uint32_t i = 0; i < n; i++) {
			const uint32_t v[3] = {in[0][i], in[1][i], in[2][i]};
			const uint32_t got = eval(f, v);
			double d;
			uint32_t bits;
			mref_eval(f, v, &d, &bits);
			if (!mref_tested(f, v, d))
				continue;
			const double err = mref_error(f, got, d, bits);
			if (err > (f->ulp > 0 ? f->ulp : 0)) {
				if (failed++ < 20)
					printf("FAIL %s(%#x, %#x, %#x) = %#x (%.9g); expected %.9g (%#x), error %g ulp\n",
					       f->name, v[0], v[1], v[2], got, (double)mref_f(got),
					       f->ulp > 0 ? d : (double)mref_f(bits), bits, err);
			}
			worst = err > worst ? err : worst;
		}
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %.2f", len ? ", " : "", f->name, worst);
		if (len > 80) {
			printf("  %s\n", line);
			len = 0;
		}
	}
	if (len)
		printf("  %s\n", line);
	for (int j = 0; j < 3; j++)
		free(in[j]);
	return failed ? 1 : 0;
}
