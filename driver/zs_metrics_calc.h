/* The metric groups as data (driver/metrics/metrics.txt, C tables generated at build time
 * by driver/metrics/gen_metrics.py) and the evaluation of their equations over raw data
 * (docs/metrics.md "Equations": operands, wrap rules, the precision rule).  No handles,
 * no device: the calculate path of zs_metrics.c and the unit test tests/unit/
 * test_metrics_calc.c use exactly this code. */
#ifndef ZS_METRICS_CALC_H
#define ZS_METRICS_CALC_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/zet_api.h>

#define ZS_METRIC_STACK 16u /* gen_metrics.py MAX_STACK */

typedef enum zs_metric_opcode {
	ZS_MOP_A, /* arg: counter */
	ZS_MOP_B,
	ZS_MOP_C,
	ZS_MOP_GPU_CLOCK,
	ZS_MOP_TS,
	ZS_MOP_GPU_TIME,
	ZS_MOP_SYS, /* arg: zs_metric_sysvar_t */
	ZS_MOP_REF, /* arg: index of an earlier metric of the group */
	ZS_MOP_IMMU,
	ZS_MOP_IMMF,
	ZS_MOP_REPORT_REASON,
	ZS_MOP_CONTEXT_ID,
	ZS_MOP_STREAM_MARKER,
	ZS_MOP_QUERY_BEGIN,
	ZS_MOP_QUERY_END,
	ZS_MOP_UADD,
	ZS_MOP_USUB,
	ZS_MOP_UMUL,
	ZS_MOP_UDIV,
	ZS_MOP_UMIN,
	ZS_MOP_UMAX,
	ZS_MOP_AND,
	ZS_MOP_OR,
	ZS_MOP_SHL,
	ZS_MOP_SHR,
	ZS_MOP_FADD,
	ZS_MOP_FSUB,
	ZS_MOP_FMUL,
	ZS_MOP_FDIV,
	ZS_MOP_FMIN,
	ZS_MOP_FMAX,
} zs_metric_opcode_t;

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

typedef struct zs_metric_op {
	uint8_t op;   /* zs_metric_opcode_t */
	uint8_t arg;
	uint64_t imm; /* ZS_MOP_IMMU */
	double fimm;  /* ZS_MOP_IMMF */
} zs_metric_op_t;

typedef struct zs_metric_def {
	const char *name, *description, *component, *units;
	uint32_t type;	     /* zet_metric_type_t */
	uint32_t value_type; /* zet_value_type_t */
	const zs_metric_op_t *prog;
	uint32_t prog_len;
} zs_metric_def_t;

typedef struct zs_metric_group_def {
	const char *name, *description;
	uint32_t sampling; /* one zet_metric_group_sampling_type_flag_t */
	uint32_t domain;
	uint32_t source; /* zs_metric_source_t */
	const zs_metric_def_t *metrics;
	uint32_t metric_count;
	const uint32_t (*regs)[2]; /* OA_BC_SEL {address, value} pairs (ADD_CONFIG) */
	uint32_t nregs;
} zs_metric_group_def_t;

extern const zs_metric_group_def_t zs_metric_groups[];
extern const uint32_t zs_metric_group_count;
extern const uint32_t zs_oa_marker_reg; /* MMIO offset of OA_MARKER (stream markers) */

/* The device's values of the system variables. */
typedef struct zs_metric_env {
	uint64_t sys[ZS_SYS_COUNT];
} zs_metric_env_t;

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
