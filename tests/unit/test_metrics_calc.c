/* The driver's metric calculation (driver/zs_metrics_calc.c, the code behind
 * zetMetricGroupCalculateMetricValues) against the independent Python reference
 * (tests/stimulus/metrics_ref.py) on synthetic raw data: for every group, reports (or
 * timestamps) built here from a fixed seed, with 40-bit and 32-bit counter wrap,
 * timestamp and tick wrap, zero clocks (divisions by zero), large values; the raw data go
 * to a file, the reference computes every result set from the table text, and every
 * value must agree bit for bit (integers exactly, float32 bits).
 *
 *   test_metrics_calc PYTHON METRICS_REF.PY TABLE EVENTS TMPDIR */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zs/oa_report.h"
#include "zs_metrics_calc.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random increment: often small, sometimes 0, sometimes huge. */
static uint64_t inc(uint64_t limit_mask)
{
	switch (next() % 8) {
	case 0: return 0;
	case 1: return next() & limit_mask;
	case 2: return next() % 16;
	default: return next() % 1000000;
	}
}

static void put_dw(uint8_t *r, unsigned dw, uint32_t v) { memcpy(r + 4 * dw, &v, 4); }
static void put_a(uint8_t *r, unsigned i, uint64_t v)
{
	put_dw(r, ZS_OA_DW_A + i, (uint32_t)v);
	if (i < ZS_OA_A40_COUNTERS)
		r[ZS_OA_BYTE_A_HIGH + i] = (uint8_t)(v >> 32);
}

/* State of a counting OA block: reports are snapshots of it. */
typedef struct block {
	uint64_t a[36];
	uint32_t b[16], ts, ticks, marker, ctx;
} block_t;

static void block_init(block_t *k)
{
	for (unsigned i = 0; i < 36; i++) {
		/* A third start just below the wrap point. */
		k->a[i] = next() % 3 == 0 ? (1ull << (i < 32 ? 40 : 32)) - (next() % 5000) : next() % 100000;
	}
	for (unsigned i = 0; i < 16; i++)
		k->b[i] = next() % 2 ? UINT32_MAX - (uint32_t)(next() % 3000) : (uint32_t)next();
	k->ts = next() % 2 ? UINT32_MAX - 20 : (uint32_t)next();
	k->ticks = next() % 2 ? UINT32_MAX - 500 : (uint32_t)next();
	k->marker = 0;
	k->ctx = 0;
}

static void block_step(block_t *k)
{
	for (unsigned i = 0; i < 36; i++) {
		const uint64_t m = i < 32 ? (1ull << 40) - 1 : UINT32_MAX;
		k->a[i] = (k->a[i] + inc(m)) & m;
	}
	for (unsigned i = 0; i < 16; i++)
		k->b[i] += (uint32_t)inc(UINT32_MAX);
	const uint32_t dt = next() % 6 == 0 ? 0 : (uint32_t)(next() % 100000);
	k->ts += dt;
	k->ticks += dt * 80u + (uint32_t)(next() % 80);
	if (next() % 3 == 0)
		k->marker = (uint32_t)next();
	if (next() % 4 == 0)
		k->ctx = (uint32_t)next() % 64;
}

static void block_report(const block_t *k, uint8_t *r, int query)
{
	memset(r, 0, ZS_OA_REPORT_BYTES);
	const uint32_t reason = (uint32_t)(next() % 16);
	put_dw(r, ZS_OA_DW_REPORT_ID,
	       query ? (uint32_t)next() % 4096 : reason << ZS_OA_ID_REASON_SHIFT | (k->ctx ? ZS_OA_ID_CONTEXT_VALID : 0) | 60);
	put_dw(r, ZS_OA_DW_TIMESTAMP, k->ts);
	put_dw(r, ZS_OA_DW_CONTEXT, k->ctx);
	put_dw(r, ZS_OA_DW_TICKS, k->ticks);
	for (unsigned i = 0; i < 35; i++)
		put_a(r, i, k->a[i]);
	put_a(r, 35, k->marker);
	for (unsigned i = 0; i < 16; i++)
		put_dw(r, ZS_OA_DW_B + i, k->b[i]);
}

/* Raw data of a group: n result sets' worth. */
static size_t make_raw(const zs_metric_group_def_t *g, uint8_t *raw, unsigned n)
{
	block_t k;
	block_init(&k);
	if (g->source == ZS_SOURCE_TIMESTAMP) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t b = next() % 4 == 0 ? UINT64_MAX - next() % 1000 : next() >> (next() % 40);
			uint64_t e = b + (next() % 5 == 0 ? 0 : next() % 100000000);
			memcpy(raw + 16 * i, &b, 8);
			memcpy(raw + 16 * i + 8, &e, 8);
		}
		return 16u * n;
	}
	if (g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED) {
		for (unsigned i = 0; i <= n; i++) {
			block_report(&k, raw + ZS_OA_REPORT_BYTES * i, 0);
			block_step(&k);
		}
		return ZS_OA_REPORT_BYTES * (n + 1);
	}
	for (unsigned i = 0; i < n; i++) {
		if (i % 3 == 0)
			block_init(&k);
		block_report(&k, raw + 2 * ZS_OA_REPORT_BYTES * i, 1);
		block_step(&k);
		if (i % 2)
			block_step(&k);
		block_report(&k, raw + 2 * ZS_OA_REPORT_BYTES * i + ZS_OA_REPORT_BYTES, 1);
	}
	return 2 * ZS_OA_REPORT_BYTES * n;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s PYTHON METRICS_REF.PY TABLE EVENTS TMPDIR\n", argv[0]);
		return 2;
	}
	/* xe-lp and tiny, and one with odd clocks. */
	static const zs_metric_env_t envs[] = {
		{{96, 6, 7, 12500000, 1000}},
		{{2, 1, 4, 12500000, 1000}},
		{{24, 3, 8, 19200000, 1350}},
	};
	enum { SETS = 40 };
	static uint8_t raw[2 * ZS_OA_REPORT_BYTES * (SETS + 1)];
	static zet_typed_value_t vals[256];
	unsigned failures = 0, checked = 0, floats = 0;
	char path[4096], cmd[16384];
	snprintf(path, sizeof(path), "%s/metrics_calc_raw.bin", argv[5]);
	for (unsigned e = 0; e < sizeof(envs) / sizeof(envs[0]); e++) {
		const zs_metric_env_t *env = &envs[e];
		for (uint32_t gi = 0; gi < zs_metric_group_count; gi++) {
			const zs_metric_group_def_t *g = &zs_metric_groups[gi];
			const size_t size = make_raw(g, raw, SETS);
			if (zs_metric_sets(g, size) != SETS) {
				fprintf(stderr, "FAIL %s: %u sets in %zu bytes, want %u\n", g->name, zs_metric_sets(g, size),
					size, SETS);
				return 1;
			}
			FILE *f = fopen(path, "wb");
			if (!f || fwrite(raw, 1, size, f) != size || fclose(f)) {
				perror(path);
				return 2;
			}
			snprintf(cmd, sizeof(cmd),
				 "'%s' '%s' --table '%s' --events '%s' --group %u --raw '%s' --env %" PRIu64 ",%" PRIu64
				 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
				 argv[1], argv[2], argv[3], argv[4], gi, path, env->sys[0], env->sys[1], env->sys[2],
				 env->sys[3], env->sys[4]);
			FILE *p = popen(cmd, "r");
			if (!p) {
				perror("popen");
				return 2;
			}
			for (uint32_t s = 0; s < SETS; s++) {
				zs_metric_eval_set(g, env, raw, s, vals);
				for (uint32_t m = 0; m < g->metric_count; m++) {
					char kind;
					char text[64];
					if (fscanf(p, " %c %63s", &kind, text) != 2) {
						fprintf(stderr, "FAIL %s: the reference gave too few values\n", g->name);
						pclose(p);
						return 1;
					}
					const uint64_t want = strtoull(text, NULL, kind == 'f' ? 16 : 10);
					uint64_t got;
					const zet_value_type_t t = vals[m].type;
					if (t == ZET_VALUE_TYPE_FLOAT32) {
						uint32_t bits;
						memcpy(&bits, &vals[m].value.fp32, 4);
						got = bits;
						floats++;
					} else if (t == ZET_VALUE_TYPE_UINT32) {
						got = vals[m].value.ui32;
					} else if (t == ZET_VALUE_TYPE_BOOL8) {
						got = vals[m].value.b8;
					} else {
						got = vals[m].value.ui64;
					}
					checked++;
					if ((kind == 'f') != (t == ZET_VALUE_TYPE_FLOAT32) || got != want) {
						if (failures++ < 20)
							fprintf(stderr,
								"FAIL env %u group %u %s (%s) set %u metric %s: driver %c %" PRIu64 " (hex %" PRIx64 ")"
								", reference %c %s\n",
								e, gi, g->name,
								g->sampling == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED
									? "TIME_BASED"
									: "EVENT_BASED",
								s, g->metrics[m].name, t == ZET_VALUE_TYPE_FLOAT32 ? 'f' : 'u', got, got,
								kind, text);
					}
				}
			}
			char extra[64];
			if (fscanf(p, " %63s", extra) == 1) {
				fprintf(stderr, "FAIL %s: the reference gave more values than the driver\n", g->name);
				failures++;
			}
			if (pclose(p) != 0) {
				fprintf(stderr, "FAIL %s: the reference failed\n", g->name);
				failures++;
			}
		}
	}
	printf("%u values compared (%u float32), %u mismatches, %u groups x %zu device settings\n", checked, floats,
	       failures, zs_metric_group_count, sizeof(envs) / sizeof(envs[0]));
	return failures ? 1 : 0;
}
