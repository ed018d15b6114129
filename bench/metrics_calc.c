/* bench/metrics_calc: zetMetricGroupCalculateMetricValues throughput through the loader,
 * ComputeBasic (time-based), one core: reports per second (issue 13 goal: >= 5 M/s).
 * Run on a daemon with ZET_ENABLE_METRICS=1 (bench/metrics.py --calc, or
 * `ZET_ENABLE_METRICS=1 ./zesim run -- build/tests/metrics_calc`).  The raw data are
 * 20001 synthetic reports with counters that grow as a busy GPU's do; the best of 30
 * calculations of all of them is reported (speed is printed, never asserted). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#define CALL(x)                                                                                                       \
	do {                                                                                                          \
		ze_result_t r_ = (x);                                                                                 \
		if (r_) {                                                                                             \
			fprintf(stderr, "metrics_calc: %s = 0x%x\n", #x, (unsigned)r_);                              \
			return 1;                                                                                     \
		}                                                                                                     \
	} while (0)

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	CALL(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	uint32_t n = 1;
	CALL(zeDriverGet(&n, &drv));
	n = 1;
	CALL(zeDeviceGet(drv, &n, &dev));
	zet_metric_group_handle_t groups[64], cb = NULL;
	n = 64;
	CALL(zetMetricGroupGet(dev, &n, groups));
	uint32_t mc = 0;
	for (uint32_t i = 0; i < n; i++) {
		zet_metric_group_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
		CALL(zetMetricGroupGetProperties(groups[i], &p));
		if (!strcmp(p.name, "ComputeBasic") && p.samplingType == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED) {
			cb = groups[i];
			mc = p.metricCount;
		}
	}
	if (!cb) {
		fprintf(stderr, "metrics_calc: no time-based ComputeBasic group\n");
		return 1;
	}
	enum { REPORTS = 20001, ROUNDS = 30 };
	uint8_t *raw = calloc(REPORTS, 256);
	zet_typed_value_t *vals = malloc(sizeof(*vals) * (size_t)(REPORTS - 1) * mc);
	if (!raw || !vals)
		return 1;
	uint32_t seed = 1;
	for (uint32_t i = 0; i < REPORTS; i++) {
		uint8_t *r = raw + (size_t)i * 256;
		const uint32_t ts = i * 64, ticks = i * 64 * 80;
		memcpy(r + 4, &ts, 4);
		memcpy(r + 12, &ticks, 4);
		for (uint32_t a = 0; a < 36; a++) {
			seed = seed * 1103515245u + 12345u;
			const uint64_t v = (uint64_t)i * (seed >> 20);
			const uint32_t lo = (uint32_t)v;
			memcpy(r + 16 + 4 * a, &lo, 4);
			if (a < 32)
				r[160 + a] = (uint8_t)(v >> 32);
		}
	}
	double best = 1e9;
	uint32_t count = 0;
	for (int round = 0; round < ROUNDS; round++) {
		count = (REPORTS - 1) * mc;
		const double t0 = now();
		CALL(zetMetricGroupCalculateMetricValues(cb, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
							 (size_t)REPORTS * 256, raw, &count, vals));
		const double t = now() - t0;
		if (t < best)
			best = t;
	}
	if (count != (REPORTS - 1) * mc) {
		fprintf(stderr, "metrics_calc: %u values, want %u\n", count, (REPORTS - 1) * mc);
		return 1;
	}
	printf("ComputeBasic (%u metrics): %.2f M reports/s (best of %d calculations of %u report pairs)\n", mc,
	       (REPORTS - 1) / best / 1e6, ROUNDS, REPORTS - 1);
	free(raw);
	free(vals);
	return 0;
}
