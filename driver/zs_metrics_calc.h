/* The metric groups as data (driver/metrics/metrics.txt; C tables and the equations
 * compiled to C functions, generated at build time by driver/metrics/gen_metrics.py) and
 * the evaluation of those equations over raw data
 * (docs/metrics.md "Equations": operands, wrap rules, the precision rule).  No handles,
 * no device: the calculate path of zs_metrics.c and the unit test tests/unit/
 * test_metrics_calc.c use exactly this code. */
#ifndef ZS_METRICS_CALC_H
#define ZS_METRICS_CALC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <level_zero/zet_api.h>

#include "zs/oa_report.h"

#define ZS_METRIC_STACK 16u /* gen_metrics.py MAX_STACK */

/* System variables, in the order of gen_metrics.py SYSVARS. */
typedef enum zs_metric_sysvar {
	ZS_SYS_EU_CORES,
	ZS_SYS_SUBSLICES,
	ZS_SYS_THREADS_PER_EU,
	ZS_SYS_TIMESTAMP_HZ,
	ZS_SYS_CORE_MHZ,
	ZS_SYS_COUNT
} zs_metric_sysvar_t;

typedef enum zs_metric_source { ZS_SOURCE_OA = 0, ZS_SOURCE_TIMESTAMP = 1 } zs_metric_source_t;

/* The device's values of the system variables. */
typedef struct zs_metric_env {
	uint64_t sys[ZS_SYS_COUNT];
} zs_metric_env_t;

typedef struct zs_metric_def {
	const char *name, *description, *component, *units;
	uint32_t type;	     /* zet_metric_type_t */
	uint32_t value_type; /* zet_value_type_t */
	const char *equation; /* the table's RPN text (documentation) */
} zs_metric_def_t;

/* A group's equations, compiled to C at build time: one result set from the begin and
 * end records into out[0 .. metric_count). */
typedef void (*zs_metric_eval_fn)(const uint8_t *begin, const uint8_t *end, const zs_metric_env_t *env,
				  zet_typed_value_t *out);

typedef struct zs_metric_group_def {
	const char *name, *description;
	uint32_t sampling; /* one zet_metric_group_sampling_type_flag_t */
	uint32_t domain;
	uint32_t source; /* zs_metric_source_t */
	const zs_metric_def_t *metrics;
	uint32_t metric_count;
	const uint32_t (*regs)[2]; /* OA_BC_SEL {address, value} pairs (ADD_CONFIG) */
	uint32_t nregs;
	zs_metric_eval_fn eval;
} zs_metric_group_def_t;

extern const zs_metric_group_def_t zs_metric_groups[];
extern const uint32_t zs_metric_group_count;
extern const uint32_t zs_oa_marker_reg; /* MMIO offset of OA_MARKER (stream markers) */

/* ---- the operands and operations of docs/metrics.md "Equations", for the generated
 * code (the precision rule: uint64_t or double values; conversions explicit) ---- */

#define ZS_M_NS_PER_S 1000000000ull

static inline uint64_t zs_m_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* A<i>: 40-bit wrap for A0-A31, 32-bit for A32-A35. */
static inline uint64_t zs_m_a(const uint8_t *b, const uint8_t *e, unsigned i)
{
	return i < ZS_OA_A40_COUNTERS ? zs_oa_delta40(zs_oa_a(b, i), zs_oa_a(e, i))
				      : zs_oa_delta32((uint32_t)zs_oa_a(b, i), (uint32_t)zs_oa_a(e, i));
}
static inline uint64_t zs_m_b(const uint8_t *b, const uint8_t *e, unsigned i)
{
	return zs_oa_delta32(zs_oa_b(b, i), zs_oa_b(e, i));
}
static inline uint64_t zs_m_c(const uint8_t *b, const uint8_t *e, unsigned i)
{
	return zs_oa_delta32(zs_oa_c(b, i), zs_oa_c(e, i));
}
static inline uint64_t zs_m_clock(const uint8_t *b, const uint8_t *e)
{
	return zs_oa_delta32(zs_oa_dw(b, ZS_OA_DW_TICKS), zs_oa_dw(e, ZS_OA_DW_TICKS));
}
/* Timestamps: OA reports' DW1 (32-bit), or the timestamp source's one 16-byte record
 * (begin, end; passed as both b and e). */
static inline uint64_t zs_m_ts(int src, const uint8_t *b, const uint8_t *e)
{
	if (src == ZS_SOURCE_TIMESTAMP)
		return zs_m_u64(b + 8) - zs_m_u64(b);
	return zs_oa_delta32(zs_oa_dw(b, ZS_OA_DW_TIMESTAMP), zs_oa_dw(e, ZS_OA_DW_TIMESTAMP));
}
static inline uint64_t zs_m_ts_begin(int src, const uint8_t *b)
{
	return src == ZS_SOURCE_TIMESTAMP ? zs_m_u64(b) : zs_oa_dw(b, ZS_OA_DW_TIMESTAMP);
}
static inline uint64_t zs_m_ts_end(int src, const uint8_t *b, const uint8_t *e)
{
	return src == ZS_SOURCE_TIMESTAMP ? zs_m_u64(b + 8) : zs_oa_dw(e, ZS_OA_DW_TIMESTAMP);
}
/* floor(ticks * 10^9 / hz) exactly, mod 2^64; 0 for hz 0. */
static inline uint64_t zs_m_ns(uint64_t ticks, uint64_t hz)
{
	if (!hz)
		return 0;
	if (ticks <= UINT64_MAX / ZS_M_NS_PER_S) /* every 32-bit OA delta: no 128-bit division */
		return ticks * ZS_M_NS_PER_S / hz;
	return (uint64_t)((unsigned __int128)ticks * ZS_M_NS_PER_S / hz);
}
/* Double to integer: truncation toward zero, NaN and negatives 0, >= 2^64 saturate. */
static inline uint64_t zs_m_f2u(double f)
{
	if (!(f > 0.0))
		return 0;
	if (f >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)f;
}
static inline uint64_t zs_m_udiv(uint64_t a, uint64_t c) { return c ? a / c : 0; }
static inline uint64_t zs_m_umin(uint64_t a, uint64_t c) { return c < a ? c : a; }
static inline uint64_t zs_m_umax(uint64_t a, uint64_t c) { return c > a ? c : a; }
static inline uint64_t zs_m_shl(uint64_t a, uint64_t c) { return c >= 64 ? 0 : a << c; }
static inline uint64_t zs_m_shr(uint64_t a, uint64_t c) { return c >= 64 ? 0 : a >> c; }
static inline double zs_m_fdiv(double a, double c) { return c == 0.0 ? 0.0 : a / c; }
static inline double zs_m_fmin(double a, double c) { return c < a ? c : a; }
static inline double zs_m_fmax(double a, double c) { return c > a ? c : a; }

/* Bytes of raw data per unit: a streamer report (256: sets = reports - 1), a query's
 * begin + end reports (512: one set each) or a query's two timestamps (16). */
size_t zs_metric_raw_unit(const zs_metric_group_def_t *g);

/* Result sets in size bytes of raw data (size a multiple of the unit). */
uint32_t zs_metric_sets(const zs_metric_group_def_t *g, size_t size);

/* One result set: begin and end are the two raw records (reports, or for the timestamp
 * source one 16-byte record passed as both); writes metric_count values. */
void zs_metric_eval(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *begin,
		    const uint8_t *end, zet_typed_value_t *out);

/* Set i of raw data (i < zs_metric_sets). */
void zs_metric_eval_set(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *raw, uint32_t i,
			zet_typed_value_t *out);

#endif
