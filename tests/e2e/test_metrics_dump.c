/* Collects metrics through the loader for the end-to-end check (metrics_e2e.py), which
 * compares them with the reference evaluator and with the daemon's ledger.
 *   e2e_metrics_dump misc.elf vadd.elf reduce.elf OUTDIR
 * Four kernels: compute-bound (busy), memory (vadd), SLM and barriers (reduce), global
 * atomics (inc).  For every event-based OA group: one query around each kernel (the
 * CommandTimestamps group active beside it, domain 1); for every time-based OA group: a
 * streamer over the four kernels with markers between them.  Writes OUTDIR/env (EUs,
 * sub-slices, threads per EU, timestamp Hz, core MHz), and per query or streamer the raw
 * data (.raw) and the values CalculateMetricValues gave (.vals: zet_typed_value_t).
 * Exits 77 (skip) when the device has no OA unit. */
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/zet_api.h>

#include "e2e.h"

#define NKERNELS 4

static e2e_t e;
static ze_kernel_handle_t kernels[NKERNELS];
static ze_group_count_t grids[NKERNELS];
static const char *const knames[NKERNELS] = {"busy", "vadd", "reduce", "inc"};

static void write_file(const char *dir, const char *name, const void *data, size_t size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	EXPECT(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
}

static void setup_kernels(char **argv)
{
	ze_module_handle_t misc = e2e_module(&e, argv[1]), vadd = e2e_module(&e, argv[2]), red = e2e_module(&e, argv[3]);
	kernels[0] = e2e_kernel(misc, "busy");
	kernels[1] = e2e_kernel(vadd, "vadd");
	kernels[2] = e2e_kernel(red, "reduce");
	kernels[3] = e2e_kernel(misc, "inc");
	/* busy: 2 groups of 8 spinning 200 times. */
	uint32_t *out = e2e_alloc_shared(&e, 4096), iters = 200;
	CHECK(zeKernelSetGroupSize(kernels[0], 8, 1, 1));
	const e2e_arg_t bargs[] = {{8, &out}, {4, &iters}};
	e2e_set_args(kernels[0], 2, bargs);
	grids[0] = (ze_group_count_t){2, 1, 1};
	/* vadd: 512 floats. */
	const uint32_t n = 512;
	float *a = e2e_alloc_shared(&e, n * 4), *b = e2e_alloc_shared(&e, n * 4), *c = e2e_alloc_shared(&e, n * 4);
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 1.0f;
	}
	CHECK(zeKernelSetGroupSize(kernels[1], 64, 1, 1));
	const e2e_arg_t vargs[] = {{8, &a}, {8, &b}, {8, &c}, {4, &n}};
	e2e_set_args(kernels[1], 4, vargs);
	grids[1] = (ze_group_count_t){n / 64, 1, 1};
	/* reduce: 512 values in groups of 64 (SLM, barriers). */
	uint32_t *in = e2e_alloc_shared(&e, n * 4), *rout = e2e_alloc_shared(&e, 64), *offs = e2e_alloc_shared(&e, 8);
	for (uint32_t i = 0; i < n; i++)
		in[i] = i;
	CHECK(zeKernelSetGroupSize(kernels[2], 64, 1, 1));
	const e2e_arg_t rargs[] = {{8, &in}, {8, &rout}, {8, &offs}, {10, NULL}, {64 * 4, NULL}, {4, &n}};
	e2e_set_args(kernels[2], 6, rargs);
	grids[2] = (ze_group_count_t){n / 64, 1, 1};
	/* inc: 16 groups of 8 atomics on one counter. */
	uint32_t *counter = e2e_alloc_shared(&e, 64);
	CHECK(zeKernelSetGroupSize(kernels[3], 8, 1, 1));
	const e2e_arg_t iargs[] = {{8, &counter}};
	e2e_set_args(kernels[3], 1, iargs);
	grids[3] = (ze_group_count_t){16, 1, 1};
}

static zet_metric_group_properties_t gprops(zet_metric_group_handle_t g)
{
	zet_metric_group_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
	CHECK(zetMetricGroupGetProperties(g, &p));
	return p;
}

/* Calculates the raw data and writes both files. */
static void calc_and_write(const char *dir, zet_metric_group_handle_t g, const char *stem, const uint8_t *raw,
			   size_t size, uint32_t want_sets)
{
	const uint32_t mc = gprops(g).metricCount;
	uint32_t count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(g, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, size, raw, &count,
						  NULL));
	EXPECT(count % mc == 0 && (!want_sets || count == want_sets * mc), "%s: %u values, metricCount %u", stem, count,
	       mc);
	zet_typed_value_t *v = malloc((count ? count : 1) * sizeof(*v));
	CHECK(zetMetricGroupCalculateMetricValues(g, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, size, raw, &count,
						  v));
	char name[256];
	snprintf(name, sizeof(name), "%s.raw", stem);
	write_file(dir, name, raw, size);
	snprintf(name, sizeof(name), "%s.vals", stem);
	write_file(dir, name, v, count * sizeof(*v));
	free(v);
}

/* Two processes (metrics_e2e.py --cross-process): "work" runs the kernels five times with
 * 200 ms of idle host time between; "stream SECONDS" samples ComputeBasic meanwhile (1 ms
 * period, notification event) and needs reports during kernels (GpuBusy > 0) and between
 * them (GpuBusy 0: simulated time follows host time while the device is idle). */
static int work(void)
{
	for (int round = 0; round < 5; round++) {
		CHECK(zeCommandListReset(e.list));
		for (uint32_t k = 0; k < NKERNELS; k++)
			CHECK(zeCommandListAppendLaunchKernel(e.list, kernels[k], &grids[k], NULL, 0, NULL));
		CHECK(zeCommandListClose(e.list));
		CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
		CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
		usleep(200000);
	}
	return 0;
}

static int stream(double seconds)
{
	zet_metric_group_handle_t groups[64], cb = NULL;
	uint32_t n = 64;
	CHECK(zetMetricGroupGet(e.dev, &n, groups));
	for (uint32_t i = 0; i < n; i++) {
		const zet_metric_group_properties_t p = gprops(groups[i]);
		if (!strcmp(p.name, "ComputeBasic") && p.samplingType == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)
			cb = groups[i];
	}
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, &cb));
	ze_event_pool_desc_t epd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				    .count = 1};
	ze_event_pool_handle_t epool;
	CHECK(zeEventPoolCreate(e.ctx, &epd, 1, &e.dev, &epool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
			      .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t notify;
	CHECK(zeEventCreate(epool, &ed, &notify));
	zet_metric_streamer_desc_t sd = {.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, .notifyEveryNReports = 8,
					 .samplingPeriod = 1000000};
	zet_metric_streamer_handle_t st;
	const ze_result_t opened = zetMetricStreamerOpen(e.ctx, e.dev, cb, &sd, notify, &st);
	if (opened == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) {
		printf("no OA unit: skipped\n");
		return 77;
	}
	CHECK(opened);
	printf("streaming\n"); /* the other processes may start */
	fflush(stdout);
	static uint8_t raw[8 << 20];
	size_t total = 0;
	unsigned events = 0;
	/* At least `seconds`, and until the harness closes stdin (the other processes are
	 * done: however slow they start on a loaded machine, they find the streamer
	 * open); at most 10 minutes. */
	const uint64_t end = (uint64_t)(seconds * 1e9), cap = 600000000000ull;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int input_open = 1;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		const uint64_t ns = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)(t.tv_nsec - t0.tv_nsec);
		struct pollfd pin = {.fd = 0, .events = POLLIN};
		char c;
		if (input_open && poll(&pin, 1, 0) == 1 && read(0, &c, 1) <= 0)
			input_open = 0;
		if ((ns > end && !input_open) || ns > cap)
			break;
		/* As pti's collector: wait for the event up to 50 ms, then read whatever is there. */
		const ze_result_t w = zeEventHostSynchronize(notify, 50000000ull);
		EXPECT(w == ZE_RESULT_SUCCESS || w == ZE_RESULT_NOT_READY, "event wait 0x%x", w);
		events += w == ZE_RESULT_SUCCESS;
		size_t size = sizeof(raw) - total;
		const ze_result_t r = zetMetricStreamerReadData(st, UINT32_MAX, &size, raw + total);
		EXPECT(r == ZE_RESULT_SUCCESS, "ReadData 0x%x", r);
		total += size;
	}
	CHECK(zetMetricStreamerClose(st));
	const uint32_t mc = gprops(cb).metricCount;
	uint32_t count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(cb, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, total, raw,
						  &count, NULL));
	zet_typed_value_t *v = malloc((count + 1) * sizeof(*v));
	CHECK(zetMetricGroupCalculateMetricValues(cb, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, total, raw,
						  &count, v));
	zet_metric_handle_t m[64];
	uint32_t nm = 64, busy_idx = 0;
	CHECK(zetMetricGet(cb, &nm, m));
	for (uint32_t i = 0; i < nm; i++) {
		zet_metric_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES};
		CHECK(zetMetricGetProperties(m[i], &p));
		if (!strcmp(p.name, "GpuBusy"))
			busy_idx = i;
	}
	unsigned busy = 0, idle = 0;
	for (uint32_t s = 0; s < count / mc; s++)
		if (v[s * mc + busy_idx].value.fp32 > 0.0f)
			busy++;
		else
			idle++;
	printf("cross-process streamer: %zu reports in %.1f s, %u with GpuBusy > 0, %u idle, %u notifications\n",
	       total / 256, (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9, busy, idle,
	       events);
	EXPECT(busy > 0 && idle > 0 && events > 0, "reports during kernels (%u) and between them (%u), events %u", busy,
	       idle, events);
	free(v);
	return 0;
}

/* While another process streams: the one OA unit is taken, a streamer or OA queries here
 * get HANDLE_OBJECT_IN_USE (the KMD's EBUSY). */
static int expect_busy(void)
{
	zet_metric_group_handle_t groups[64], cb_t = NULL, cb_e = NULL;
	uint32_t n = 64;
	CHECK(zetMetricGroupGet(e.dev, &n, groups));
	for (uint32_t i = 0; i < n; i++) {
		const zet_metric_group_properties_t p = gprops(groups[i]);
		if (!strcmp(p.name, "ComputeBasic"))
			*(p.samplingType == ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED ? &cb_t : &cb_e) = groups[i];
	}
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, &cb_t));
	zet_metric_streamer_desc_t sd = {.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, .notifyEveryNReports = 8,
					 .samplingPeriod = 1000000};
	zet_metric_streamer_handle_t st;
	CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zetMetricStreamerOpen(e.ctx, e.dev, cb_t, &sd, NULL, &st));
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, &cb_e));
	zet_metric_query_pool_desc_t qd = {.stype = ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC,
					   .type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, .count = 1};
	zet_metric_query_pool_handle_t pool;
	zet_metric_query_handle_t q;
	CHECK(zetMetricQueryPoolCreate(e.ctx, e.dev, cb_e, &qd, &pool));
	CHECK(zetMetricQueryCreate(pool, 0, &q));
	ze_event_handle_t no_wait = NULL;
	CHECK(zetCommandListAppendMetricQueryBegin(e.list, q));
	CHECK(zeCommandListAppendLaunchKernel(e.list, kernels[0], &grids[0], NULL, 0, NULL));
	CHECK(zetCommandListAppendMetricQueryEnd(e.list, q, NULL, 0, &no_wait));
	CHECK(zeCommandListClose(e.list));
	CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK(zetMetricQueryDestroy(q));
	CHECK(zetMetricQueryPoolDestroy(pool));
	printf("another process: the OA unit is in use (streamer and OA queries refused)\n");
	return 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 5, "usage: e2e_metrics_dump misc.elf vadd.elf reduce.elf OUTDIR|work|stream SECONDS");
	const char *dir = argv[4];
	setenv("ZET_ENABLE_METRICS", "1", 1);
	e2e_init(&e);
	setup_kernels(argv);
	if (!strcmp(argv[4], "work"))
		return work();
	if (!strcmp(argv[4], "expect-busy"))
		return expect_busy();
	if (!strcmp(argv[4], "stream"))
		return stream(argc > 5 ? atof(argv[5]) : 3.0);

	ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	CHECK(zeDeviceGetProperties(e.dev, &dp));
	char env[256];
	snprintf(env, sizeof(env), "%u,%u,%u,%llu,%u\n", dp.numSlices * dp.numSubslicesPerSlice * dp.numEUsPerSubslice,
		 dp.numSlices * dp.numSubslicesPerSlice, dp.numThreadsPerEU, (unsigned long long)dp.timerResolution,
		 dp.coreClockRate);
	write_file(dir, "env", env, strlen(env));

	zet_metric_group_handle_t groups[64];
	uint32_t ngroups = 64;
	CHECK(zetMetricGroupGet(e.dev, &ngroups, groups));
	zet_metric_group_handle_t tsg = NULL;
	for (uint32_t i = 0; i < ngroups; i++)
		if (strcmp(gprops(groups[i]).name, "CommandTimestamps") == 0)
			tsg = groups[i];
	EXPECT(tsg, "no CommandTimestamps");
	ze_event_handle_t no_wait = NULL;

	/* ---- queries ---- */
	for (uint32_t gi = 0; gi < ngroups; gi++) {
		const zet_metric_group_properties_t p = gprops(groups[gi]);
		if (p.samplingType != ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED || p.domain != 0)
			continue;
		zet_metric_group_handle_t act[2] = {groups[gi], tsg};
		CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 2, act));
		zet_metric_query_pool_desc_t qd = {.stype = ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC,
						   .type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, .count = NKERNELS};
		zet_metric_query_pool_handle_t pool, tpool;
		CHECK(zetMetricQueryPoolCreate(e.ctx, e.dev, groups[gi], &qd, &pool));
		CHECK(zetMetricQueryPoolCreate(e.ctx, e.dev, tsg, &qd, &tpool));
		zet_metric_query_handle_t q[NKERNELS], tq[NKERNELS];
		CHECK(zeCommandListReset(e.list));
		for (uint32_t k = 0; k < NKERNELS; k++) {
			CHECK(zetMetricQueryCreate(pool, k, &q[k]));
			CHECK(zetMetricQueryCreate(tpool, k, &tq[k]));
			CHECK(zetCommandListAppendMetricQueryBegin(e.list, tq[k]));
			CHECK(zetCommandListAppendMetricQueryBegin(e.list, q[k]));
			CHECK(zeCommandListAppendLaunchKernel(e.list, kernels[k], &grids[k], NULL, 0, NULL));
			CHECK(zetCommandListAppendMetricQueryEnd(e.list, q[k], NULL, 0, &no_wait));
			CHECK(zetCommandListAppendMetricQueryEnd(e.list, tq[k], NULL, 0, &no_wait));
		}
		CHECK(zeCommandListClose(e.list));
		ze_result_t r = zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL);
		if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) {
			printf("no OA unit: skipped\n");
			return 77;
		}
		CHECK(r);
		CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
		for (uint32_t k = 0; k < NKERNELS; k++) {
			uint8_t raw[512];
			size_t size = sizeof(raw);
			CHECK(zetMetricQueryGetData(q[k], &size, raw));
			EXPECT(size == 512, "query raw size %zu", size);
			char stem[128];
			snprintf(stem, sizeof(stem), "q_%u_%s", gi, knames[k]);
			calc_and_write(dir, groups[gi], stem, raw, size, 1);
			uint8_t traw[16];
			size = sizeof(traw);
			CHECK(zetMetricQueryGetData(tq[k], &size, traw));
			for (uint32_t ti = 0; ti < ngroups; ti++)
				if (groups[ti] == tsg)
					snprintf(stem, sizeof(stem), "q_%u_%s_beside%u", ti, knames[k], gi);
			calc_and_write(dir, tsg, stem, traw, size, 1);
			CHECK(zetMetricQueryDestroy(q[k]));
			CHECK(zetMetricQueryDestroy(tq[k]));
		}
		CHECK(zetMetricQueryPoolDestroy(pool));
		CHECK(zetMetricQueryPoolDestroy(tpool));
	}

	/* ---- streamers ---- */
	ze_event_pool_desc_t epd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				    .count = 1};
	ze_event_pool_handle_t epool;
	CHECK(zeEventPoolCreate(e.ctx, &epd, 1, &e.dev, &epool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
			      .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t notify;
	CHECK(zeEventCreate(epool, &ed, &notify));
	static uint8_t raw[4 << 20];
	for (uint32_t gi = 0; gi < ngroups; gi++) {
		const zet_metric_group_properties_t p = gprops(groups[gi]);
		if (p.samplingType != ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED)
			continue;
		CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, &groups[gi]));
		/* 2^11 ticks: a report every 2048 cycles on the test's 1 GHz timestamp. */
		zet_metric_streamer_desc_t sd = {.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC,
						 .notifyEveryNReports = 4,
						 .samplingPeriod = (uint32_t)(2048ull * 1000000000ull / dp.timerResolution)};
		zet_metric_streamer_handle_t st;
		CHECK(zeEventHostReset(notify));
		CHECK(zetMetricStreamerOpen(e.ctx, e.dev, groups[gi], &sd, notify, &st));
		CHECK(zeCommandListReset(e.list));
		for (uint32_t k = 0; k < NKERNELS; k++) {
			CHECK(zetCommandListAppendMetricStreamerMarker(e.list, st, 100 + k));
			CHECK(zeCommandListAppendLaunchKernel(e.list, kernels[k], &grids[k], NULL, 0, NULL));
		}
		CHECK(zetCommandListAppendMetricStreamerMarker(e.list, st, 200));
		CHECK(zeCommandListClose(e.list));
		CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
		CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
		/* More than notifyEveryNReports reports were taken: the event must come. */
		CHECK(zeEventHostSynchronize(notify, 10000000000ull));
		size_t total = 0;
		for (int tries = 0; tries < 50; tries++) {
			size_t size = 0;
			CHECK(zetMetricStreamerReadData(st, UINT32_MAX, &size, NULL));
			if (size > sizeof(raw) - total)
				size = sizeof(raw) - total;
			const ze_result_t r = zetMetricStreamerReadData(st, UINT32_MAX, &size, raw + total);
			EXPECT(r == ZE_RESULT_SUCCESS, "ReadData 0x%x", r);
			total += size;
			if (size == 0 && total)
				break;
		}
		EXPECT(total >= 2 * 256, "streamer: %zu bytes", total);
		char stem[128];
		snprintf(stem, sizeof(stem), "s_%u", gi);
		calc_and_write(dir, groups[gi], stem, raw, total, (uint32_t)(total / 256 - 1));
		CHECK(zetMetricStreamerClose(st));
		note("%s streamer: %zu reports, period %u ns", p.name, total / 256, sd.samplingPeriod);
	}

	/* ---- a slow reader: the smallest buffer (512 reports), a report every 2 cycles,
	 * nothing read until the work is done: reports are lost, ReadData says so, and what
	 * it returns are whole, consistent reports (checked against the ledger like the rest). */
	for (uint32_t gi = 0; gi < ngroups; gi++) {
		const zet_metric_group_properties_t p = gprops(groups[gi]);
		if (p.samplingType != ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED || strcmp(p.name, "ComputeBasic"))
			continue;
		CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, &groups[gi]));
		zet_metric_streamer_desc_t sd = {.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC,
						 .notifyEveryNReports = 1, .samplingPeriod = 1};
		zet_metric_streamer_handle_t st;
		CHECK(zetMetricStreamerOpen(e.ctx, e.dev, groups[gi], &sd, NULL, &st));
		CHECK(zeCommandListReset(e.list));
		for (uint32_t k = 0; k < NKERNELS; k++)
			CHECK(zeCommandListAppendLaunchKernel(e.list, kernels[k], &grids[k], NULL, 0, NULL));
		CHECK(zeCommandListClose(e.list));
		CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
		CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
		size_t size = 0;
		CHECK(zetMetricStreamerReadData(st, UINT32_MAX, &size, NULL));
		EXPECT(size >= 512 * 256 && size <= sizeof(raw), "size query %zu", size);
		const ze_result_t r = zetMetricStreamerReadData(st, UINT32_MAX, &size, raw);
		EXPECT(r == ZE_RESULT_WARNING_DROPPED_DATA, "a slow reader: ReadData 0x%x, want WARNING_DROPPED_DATA", r);
		EXPECT(size % 256 == 0 && size >= 2 * 256, "slow reader: %zu bytes", size);
		char stem[128];
		snprintf(stem, sizeof(stem), "s_%u_slow", gi);
		calc_and_write(dir, groups[gi], stem, raw, size, (uint32_t)(size / 256 - 1));
		note("slow reader: %zu reports after the loss, period %u ns", size / 256, sd.samplingPeriod);
		/* Later reads: no loss reported again for the same one. */
		size = sizeof(raw);
		const ze_result_t r2 = zetMetricStreamerReadData(st, UINT32_MAX, &size, raw);
		EXPECT(r2 == ZE_RESULT_SUCCESS, "the next ReadData 0x%x", r2);
		CHECK(zetMetricStreamerClose(st));
	}
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 0, NULL));
	return 0;
}
