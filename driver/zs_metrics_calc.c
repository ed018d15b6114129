/* Evaluation of the metric equations (docs/metrics.md "Equations"): the raw-data units
 * and result sets; each group's equations are C code generated from the table
 * (gen_metrics.py, zs_metrics_table.c) on the helpers of zs_metrics_calc.h, under the
 * precision rule: a value is a uint64_t or a double, F operations convert integers to
 * double (round to nearest even) and compute in double, U operations truncate doubles
 * toward zero (NaN and negatives 0, >= 2^64 saturate); the final value is converted once. */
#include "zs_metrics_calc.h"

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

void zs_metric_eval(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *b, const uint8_t *e,
		    zet_typed_value_t *out)
{
	g->eval(b, e, env, out);
}

void zs_metric_eval_set(const zs_metric_group_def_t *g, const zs_metric_env_t *env, const uint8_t *raw, uint32_t i,
			zet_typed_value_t *out)
{
	if (g->source == ZS_SOURCE_OA && g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)
		g->eval(raw + (size_t)i * ZS_OA_REPORT_BYTES, raw + ((size_t)i + 1) * ZS_OA_REPORT_BYTES, env, out);
	else if (g->source == ZS_SOURCE_OA)
		g->eval(raw + (size_t)i * 2 * ZS_OA_REPORT_BYTES, raw + ((size_t)i * 2 + 1) * ZS_OA_REPORT_BYTES, env,
			out);
	else
		g->eval(raw + (size_t)i * 16, raw + (size_t)i * 16, env, out);
}
