/* zesim-metrics-collect: the collector behind `zesim metrics` (tools/metrics/zesim_metrics.py).
 * A Level Zero program on the public API alone (nothing zesim-specific): it opens a
 * time-based metric streamer on the first GPU for one metric group, reads reports until
 * its standard input closes (or SIGINT/SIGTERM), then computes the metric values and
 * writes them as CSV, one row per report.  It runs in its own process beside the
 * workload, as a profiler does; the OA stream sees the workload's kernels and the idle
 * time between them.
 *
 *   zesim-metrics-collect --group NAME --period NS --csv FILE [--raw FILE]
 *
 * Prints "ready" on standard output once the streamer is open, and a progress line
 * (reports so far) on standard error every second. */
#define _POSIX_C_SOURCE 200809L
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void die(const char *what, ze_result_t r)
{
	fprintf(stderr, "zesim-metrics-collect: %s failed: 0x%x\n", what, (unsigned)r);
	exit(1);
}

#define CALL(x)                                                                                    \
	do {                                                                                       \
		ze_result_t r_ = (x);                                                              \
		if (r_ != ZE_RESULT_SUCCESS)                                                       \
			die(#x, r_);                                                               \
	} while (0)

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void csv_value(FILE *f, const zet_typed_value_t *v)
{
	switch (v->type) {
	case ZET_VALUE_TYPE_UINT32: fprintf(f, "%u", v->value.ui32); break;
	case ZET_VALUE_TYPE_UINT64: fprintf(f, "%llu", (unsigned long long)v->value.ui64); break;
	case ZET_VALUE_TYPE_FLOAT32: fprintf(f, "%.9g", (double)v->value.fp32); break;
	case ZET_VALUE_TYPE_FLOAT64: fprintf(f, "%.17g", v->value.fp64); break;
	case ZET_VALUE_TYPE_BOOL8: fprintf(f, "%u", (unsigned)v->value.b8); break;
	default: fprintf(f, "?"); break;
	}
}

int main(int argc, char **argv)
{
	const char *group_name = "ComputeBasic", *csv_path = NULL, *raw_path = NULL;
	uint32_t period_ns = 100000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--group") && i + 1 < argc)
			group_name = argv[++i];
		else if (!strcmp(argv[i], "--period") && i + 1 < argc)
			period_ns = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv_path = argv[++i];
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc)
			raw_path = argv[++i];
		else {
			fprintf(stderr, "usage: zesim-metrics-collect --group NAME --period NS --csv FILE [--raw FILE]\n");
			return 2;
		}
	}
	if (!csv_path || !period_ns) {
		fprintf(stderr, "zesim-metrics-collect: --csv FILE and a period > 0 are required\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	CALL(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	ze_driver_handle_t drv;
	CALL(zeDriverGet(&n, &drv));
	ze_device_handle_t dev;
	n = 1;
	CALL(zeDeviceGet(drv, &n, &dev));
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	ze_context_handle_t ctx;
	CALL(zeContextCreate(drv, &cd, &ctx));

	uint32_t ng = 0;
	CALL(zetMetricGroupGet(dev, &ng, NULL));
	zet_metric_group_handle_t *groups = calloc(ng ? ng : 1, sizeof *groups);
	CALL(zetMetricGroupGet(dev, &ng, groups));
	zet_metric_group_handle_t group = NULL;
	zet_metric_group_properties_t gp = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
	for (uint32_t i = 0; i < ng && !group; i++) {
		zet_metric_group_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
		CALL(zetMetricGroupGetProperties(groups[i], &p));
		if (!strcmp(p.name, group_name) && (p.samplingType & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)) {
			group = groups[i];
			gp = p;
		}
	}
	if (!group) {
		fprintf(stderr, "zesim-metrics-collect: no time-based metric group '%s'; the groups are:", group_name);
		for (uint32_t i = 0; i < ng; i++) {
			zet_metric_group_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
			if (zetMetricGroupGetProperties(groups[i], &p) == ZE_RESULT_SUCCESS &&
			    (p.samplingType & ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED))
				fprintf(stderr, " %s", p.name);
		}
		fprintf(stderr, "\n");
		return 1;
	}
	CALL(zetContextActivateMetricGroups(ctx, dev, 1, &group));

	ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
	ze_event_pool_handle_t pool;
	CALL(zeEventPoolCreate(ctx, &pd, 1, &dev, &pool));
	ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CALL(zeEventCreate(pool, &ed, &ev));
	/* notify at 32768 reports (as pti-gpu's streamer): a 16 MiB buffer, seconds of reports. */
	zet_metric_streamer_desc_t sd = {ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, NULL, 32768, period_ns};
	zet_metric_streamer_handle_t streamer;
	CALL(zetMetricStreamerOpen(ctx, dev, group, &sd, ev, &streamer));
	printf("ready\n");
	fflush(stdout);

	uint8_t *raw = NULL;
	size_t raw_len = 0, raw_cap = 0;
	int dropped = 0;
	double last = now_s();
	struct pollfd in = {0, POLLIN, 0};
	for (int done = 0; !done;) {
		done = g_stop;
		if (!done && poll(&in, 1, 0) > 0) {
			char b[256];
			ssize_t k = read(0, b, sizeof b);
			done = k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN);
		}
		ze_result_t w = zeEventHostSynchronize(ev, 50000000ull);
		if (w != ZE_RESULT_SUCCESS && w != ZE_RESULT_NOT_READY)
			die("zeEventHostSynchronize", w);
		if (w == ZE_RESULT_SUCCESS)
			CALL(zeEventHostReset(ev));
		/* What is there now: the size query gives the most one read can return; a full
		 * read may leave more, so read again, but at most a few times before looking
		 * at standard input again (a stream may never run dry). */
		for (int k = 0; k < 4; k++) {
			size_t size = 0;
			CALL(zetMetricStreamerReadData(streamer, UINT32_MAX, &size, NULL));
			if (!size)
				break;
			if (raw_len + size > raw_cap) {
				raw_cap = (raw_len + size) * 2;
				raw = realloc(raw, raw_cap);
				if (!raw) {
					fprintf(stderr, "zesim-metrics-collect: out of memory\n");
					return 1;
				}
			}
			const size_t asked = size;
			ze_result_t r = zetMetricStreamerReadData(streamer, UINT32_MAX, &size, raw + raw_len);
			if (r == ZE_RESULT_WARNING_DROPPED_DATA)
				dropped = 1;
			else if (r != ZE_RESULT_SUCCESS)
				die("zetMetricStreamerReadData", r);
			raw_len += size;
			if (size < asked)
				break;
		}
		if (now_s() - last >= 1.0) {
			last = now_s();
			fprintf(stderr, "\rzesim metrics: %zu bytes of reports collected", raw_len);
		}
	}
	CALL(zetMetricStreamerClose(streamer));
	fprintf(stderr, "\rzesim metrics: %zu bytes of reports collected%s\n", raw_len,
		dropped ? " (the stream dropped reports: a reader too slow)" : "");
	if (raw_path) {
		FILE *f = fopen(raw_path, "wb");
		if (!f || fwrite(raw, 1, raw_len, f) != raw_len || fclose(f)) {
			perror(raw_path);
			return 1;
		}
	}

	uint32_t nm = gp.metricCount;
	zet_metric_handle_t *metrics = calloc(nm ? nm : 1, sizeof *metrics);
	CALL(zetMetricGet(group, &nm, metrics));
	FILE *csv = fopen(csv_path, "w");
	if (!csv) {
		perror(csv_path);
		return 1;
	}
	for (uint32_t i = 0; i < nm; i++) {
		zet_metric_properties_t mp = {.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES};
		CALL(zetMetricGetProperties(metrics[i], &mp));
		fprintf(csv, "%s%s", i ? "," : "", mp.name);
	}
	fprintf(csv, "\n");
	uint32_t nv = 0;
	if (raw_len) {
		CALL(zetMetricGroupCalculateMetricValues(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw_len,
							 raw, &nv, NULL));
		zet_typed_value_t *vals = calloc(nv ? nv : 1, sizeof *vals);
		CALL(zetMetricGroupCalculateMetricValues(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw_len,
							 raw, &nv, vals));
		for (uint32_t i = 0; nm && i + nm <= nv; i += nm) {
			for (uint32_t k = 0; k < nm; k++) {
				if (k)
					fputc(',', csv);
				csv_value(csv, &vals[i + k]);
			}
			fputc('\n', csv);
		}
		free(vals);
	}
	if (fclose(csv)) {
		perror(csv_path);
		return 1;
	}
	fprintf(stderr, "zesim metrics: %u reports of %u metrics written to %s\n", nm ? nv / nm : 0, nm, csv_path);
	zeEventDestroy(ev);
	zeEventPoolDestroy(pool);
	zetContextActivateMetricGroups(ctx, dev, 0, NULL);
	zeContextDestroy(ctx);
	free(metrics);
	free(groups);
	free(raw);
	return 0;
}
