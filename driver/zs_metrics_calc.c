/* Evaluation of the metric equations (docs/metrics.md "Equations").  The precision rule:
 * a stack value is a u64 or a double; F operations convert integers to double (round to
 * nearest even) and compute in double, U operations truncate doubles toward zero (NaN and
 * negatives 0, >= 2^64 saturate); the final value is converted once to the result type. */
#include "zs_metrics_calc.h"

#include <string.h>

#include "zs/oa_report.h"

#define NS_PER_S 1000000000ull
#define TWO64 18446744073709551616.0

typedef struct val {
	int isf;
	uint64_t u;
	double f;
} val_t;

static uint64_t to_u(val_t v)
{
	if (!v.isf)
		return v.u;
	if (!(v.f > 0.0))
		return 0;
	if (v.f >= TWO64)
		return UINT64_MAX;
	return (uint64_t)v.f;
}

static double to_f(val_t v) { return v.isf ? v.f : (double)v.u; }

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t hz)
{
	if (!hz)
		return 0;
	if (ticks <= UINT64_MAX / NS_PER_S) /* every 32-bit OA delta: no 128-bit division */
		return ticks * NS_PER_S / hz;
	return (uint64_t)((unsigned __int128)ticks * NS_PER_S / hz);
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

size_t zs_metric_raw_unit(const zs_metric_group_def_t *g)
{
	if (g->source == ZS_SOURCE_TIMESTAMP)
		return 16;
	return g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED ? ZS_OA_REPORT_BYTES
									     : 2 * ZS_OA_REPORT_BYTES;
}

uint32_t zs_metric_sets(const zs_metric_group_def_t *g, size_t size)
{
	const size_t n = size / zs_metric_raw_unit(g);
	if (g->source == ZS_SOURCE_OA && g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)
		return n ? (uint32_t)(n - 1) : 0;
	return (uint32_t)n;
}

void zs_metric_eval_set(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *raw, uint32_t i,
			zet_typed_value_t *out)
{
	if (g->source == ZS_SOURCE_OA && g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)
		zs_metric_eval(g, env, raw + (size_t)i * ZS_OA_REPORT_BYTES, raw + ((size_t)i + 1) * ZS_OA_REPORT_BYTES,
			       out);
	else if (g->source == ZS_SOURCE_OA)
		zs_metric_eval(g, env, raw + (size_t)i * 2 * ZS_OA_REPORT_BYTES,
			       raw + ((size_t)i * 2 + 1) * ZS_OA_REPORT_BYTES, out);
	else
		zs_metric_eval(g, env, raw + (size_t)i * 16, raw + (size_t)i * 16, out);
}

/* Operand values of the raw data. */
static uint64_t ts_delta(const zs_metric_group_def_t *g, const uint8_t *b, const uint8_t *e)
{
	if (g->source == ZS_SOURCE_TIMESTAMP)
		return u64_at(b + 8) - u64_at(b);
	return zs_oa_delta32(zs_oa_dw(b, ZS_OA_DW_TIMESTAMP), zs_oa_dw(e, ZS_OA_DW_TIMESTAMP));
}

static uint64_t ts_begin(const zs_metric_group_def_t *g, const uint8_t *b)
{
	return g->source == ZS_SOURCE_TIMESTAMP ? u64_at(b) : zs_oa_dw(b, ZS_OA_DW_TIMESTAMP);
}

static uint64_t ts_end(const zs_metric_group_def_t *g, const uint8_t *b, const uint8_t *e)
{
	return g->source == ZS_SOURCE_TIMESTAMP ? u64_at(b + 8) : zs_oa_dw(e, ZS_OA_DW_TIMESTAMP);
}

static val_t final_value(val_t v, uint32_t type, zet_typed_value_t *out)
{
	out->type = (zet_value_type_t)type;
	val_t keep = {0, 0, 0.0};
	switch (type) {
	case ZET_VALUE_TYPE_FLOAT32:
		out->value.fp32 = (float)to_f(v); /* an integer goes through double first */
		keep.isf = 1;
		keep.f = out->value.fp32;
		break;
	case ZET_VALUE_TYPE_UINT32:
		out->value.ui32 = (uint32_t)to_u(v);
		keep.u = out->value.ui32;
		break;
	case ZET_VALUE_TYPE_BOOL8:
		out->value.b8 = to_u(v) != 0;
		keep.u = out->value.b8;
		break;
	default:
		out->value.ui64 = to_u(v);
		keep.u = out->value.ui64;
		break;
	}
	return keep;
}

void zs_metric_eval(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *b, const uint8_t *e,
		    zet_typed_value_t *out)
{
	val_t results[256];
	const uint64_t hz = env->sys[ZS_SYS_TIMESTAMP_HZ];
	for (uint32_t m = 0; m < g->metric_count; m++) {
		const zs_metric_def_t *d = &g->metrics[m];
		val_t st[ZS_METRIC_STACK];
		uint32_t sp = 0;
		for (uint32_t k = 0; k < d->prog_len; k++) {
			const zs_metric_op_t *op = &d->prog[k];
			val_t v = {0, 0, 0.0};
			if (op->op >= ZS_MOP_UADD) {
				const val_t y = st[--sp], x = st[--sp];
				if (op->op >= ZS_MOP_FADD) {
					const double a = to_f(x), c = to_f(y);
					v.isf = 1;
					switch (op->op) {
					case ZS_MOP_FADD: v.f = a + c; break;
					case ZS_MOP_FSUB: v.f = a - c; break;
					case ZS_MOP_FMUL: v.f = a * c; break;
					case ZS_MOP_FDIV: v.f = c == 0.0 ? 0.0 : a / c; break;
					case ZS_MOP_FMIN: v.f = c < a ? c : a; break;
					default: v.f = c > a ? c : a; break;
					}
				} else {
					const uint64_t a = to_u(x), c = to_u(y);
					switch (op->op) {
					case ZS_MOP_UADD: v.u = a + c; break;
					case ZS_MOP_USUB: v.u = a - c; break;
					case ZS_MOP_UMUL: v.u = a * c; break;
					case ZS_MOP_UDIV: v.u = c ? a / c : 0; break;
					case ZS_MOP_UMIN: v.u = c < a ? c : a; break;
					case ZS_MOP_UMAX: v.u = c > a ? c : a; break;
					case ZS_MOP_AND: v.u = a & c; break;
					case ZS_MOP_OR: v.u = a | c; break;
					case ZS_MOP_SHL: v.u = c >= 64 ? 0 : a << c; break;
					default: v.u = c >= 64 ? 0 : a >> c; break;
					}
				}
				st[sp++] = v;
				continue;
			}
			switch (op->op) {
			case ZS_MOP_A:
				v.u = op->arg < ZS_OA_A40_COUNTERS ? zs_oa_delta40(zs_oa_a(b, op->arg), zs_oa_a(e, op->arg))
								   : zs_oa_delta32((uint32_t)zs_oa_a(b, op->arg),
										   (uint32_t)zs_oa_a(e, op->arg));
				break;
			case ZS_MOP_B: v.u = zs_oa_delta32(zs_oa_b(b, op->arg), zs_oa_b(e, op->arg)); break;
			case ZS_MOP_C: v.u = zs_oa_delta32(zs_oa_c(b, op->arg), zs_oa_c(e, op->arg)); break;
			case ZS_MOP_GPU_CLOCK:
				v.u = zs_oa_delta32(zs_oa_dw(b, ZS_OA_DW_TICKS), zs_oa_dw(e, ZS_OA_DW_TICKS));
				break;
			case ZS_MOP_TS: v.u = ts_delta(g, b, e); break;
			case ZS_MOP_GPU_TIME: v.u = ticks_to_ns(ts_delta(g, b, e), hz); break;
			case ZS_MOP_SYS: v.u = env->sys[op->arg]; break;
			case ZS_MOP_REF: v = results[op->arg]; break;
			case ZS_MOP_IMMU: v.u = op->imm; break;
			case ZS_MOP_IMMF:
				v.isf = 1;
				v.f = op->fimm;
				break;
			case ZS_MOP_REPORT_REASON: v.u = zs_oa_reason(e); break;
			case ZS_MOP_CONTEXT_ID: v.u = zs_oa_dw(e, ZS_OA_DW_CONTEXT); break;
			case ZS_MOP_STREAM_MARKER: v.u = zs_oa_dw(e, ZS_OA_DW_A + ZS_OA_MARKER_COUNTER); break;
			case ZS_MOP_QUERY_BEGIN: v.u = ticks_to_ns(ts_begin(g, b), hz); break;
			case ZS_MOP_QUERY_END: v.u = ticks_to_ns(ts_end(g, b, e), hz); break;
			default: break;
			}
			st[sp++] = v;
		}
		results[m] = final_value(st[0], d->value_type, &out[m]);
	}
}
