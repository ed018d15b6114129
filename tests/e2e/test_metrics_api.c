/* The metrics API through the loader (docs/metrics.md, driver/README.md "Metrics").
 * argv[1]: misc.elf; argv[2] (optional): "disabled" runs without ZET_ENABLE_METRICS and
 * expects ZE_RESULT_ERROR_UNINITIALIZED from every metrics call.
 *  - enumeration: the groups of the table, the two ComputeBasic groups (same name, both
 *    sampling types, domain 0), the names / types / units real tools look for, the count
 *    protocols, metricCount = zetMetricGet's count
 *  - activation: one group per domain (two domains together), duplicates refused
 *  - errors: NULL pointers, wrong stype, raw data not a multiple of the report size,
 *    calculation type, sampling type of streamer and query pool, pool and query limits
 *  - calculation of synthetic reports through the loader: N reports give N - 1 sets, a
 *    query's 512 bytes one set, exactly metricCount values each, known values
 *  - CommandTimestamps (domain 1) queries around a kernel through the whole stack:
 *    GetData before execution NOT_READY, then 16 bytes whose values agree with a kernel
 *    timestamp event around the same kernel
 *  - OA streamer and OA queries: run when the KMD has an OA unit, else must say
 *    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. */
#include <level_zero/zet_api.h>

#include "e2e.h"

static zet_metric_group_handle_t groups[64];
static uint32_t ngroups;

static zet_metric_group_properties_t gprops(zet_metric_group_handle_t g)
{
	zet_metric_group_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES};
	CHECK(zetMetricGroupGetProperties(g, &p));
	return p;
}

static zet_metric_group_handle_t find_group(const char *name, uint32_t sampling)
{
	for (uint32_t i = 0; i < ngroups; i++) {
		zet_metric_group_properties_t p = gprops(groups[i]);
		if (strcmp(p.name, name) == 0 && p.samplingType == sampling)
			return groups[i];
	}
	EXPECT(0, "no group %s with sampling %u", name, sampling);
	return NULL;
}

/* Index of a metric by name, its properties in *out; -1 if the group has none. */
static int find_metric(zet_metric_group_handle_t g, const char *name, zet_metric_properties_t *out)
{
	zet_metric_handle_t m[256];
	uint32_t n = 256;
	CHECK(zetMetricGet(g, &n, m));
	for (uint32_t i = 0; i < n; i++) {
		zet_metric_properties_t p = {.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES};
		CHECK(zetMetricGetProperties(m[i], &p));
		if (strcmp(p.name, name) == 0) {
			if (out)
				*out = p;
			return (int)i;
		}
	}
	return -1;
}

static void expect_metric(zet_metric_group_handle_t g, const char *name, zet_metric_type_t type,
			  zet_value_type_t value, const char *units)
{
	zet_metric_properties_t p;
	EXPECT(find_metric(g, name, &p) >= 0, "metric %s missing", name);
	EXPECT(p.metricType == type && p.resultType == value && strcmp(p.resultUnits, units) == 0,
	       "%s: type %d value %d units '%s', want %d %d '%s'", name, p.metricType, p.resultType, p.resultUnits,
	       type, value, units);
}

static void put_dw(uint8_t *r, unsigned dw, uint32_t v) { memcpy(r + 4 * dw, &v, 4); }

/* A report: ticks (DW3), timestamp (DW1), A4 = EU active (40-bit), A35 marker. */
static void report(uint8_t *r, uint32_t ts, uint32_t ticks, uint64_t a4, uint32_t marker, uint32_t reason)
{
	memset(r, 0, 256);
	put_dw(r, 0, reason << 19);
	put_dw(r, 1, ts);
	put_dw(r, 3, ticks);
	put_dw(r, 4 + 4, (uint32_t)a4);
	r[160 + 4] = (uint8_t)(a4 >> 32);
	put_dw(r, 4 + 35, marker);
}

static void disabled(void)
{
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	uint32_t n = 1;
	CHECK(zeDriverGet(&n, &drv));
	n = 1;
	CHECK(zeDeviceGet(drv, &n, &dev));
	n = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetMetricGroupGet(dev, &n, NULL));
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	ze_context_handle_t ctx;
	CHECK(zeContextCreate(drv, &cd, &ctx));
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetContextActivateMetricGroups(ctx, dev, 0, NULL));
	CHECK(zeContextDestroy(ctx));
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 2, "usage: test_metrics_api misc.elf [disabled]");
	if (argc > 2 && strcmp(argv[2], "disabled") == 0) {
		unsetenv("ZET_ENABLE_METRICS");
		disabled();
		return 0;
	}
	setenv("ZET_ENABLE_METRICS", "1", 1);
	e2e_t e;
	e2e_init(&e);
	const uint32_t TBS = ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED;
	const uint32_t EBS = ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED;

	/* ---- enumeration ---- */
	ngroups = 0;
	CHECK(zetMetricGroupGet(e.dev, &ngroups, NULL));
	EXPECT(ngroups == 7, "%u groups", ngroups);
	uint32_t two = 2;
	CHECK(zetMetricGroupGet(e.dev, &two, groups));
	EXPECT(two == 2, "partial get gave %u", two);
	uint32_t many = 64;
	CHECK(zetMetricGroupGet(e.dev, &many, groups));
	EXPECT(many == ngroups, "a larger count is corrected to %u, got %u", ngroups, many);
	zet_metric_group_handle_t cb_t = find_group("ComputeBasic", TBS), cb_e = find_group("ComputeBasic", EBS);
	zet_metric_group_handle_t mem_e = find_group("MemoryProfile", EBS);
	(void)find_group("EuActivityPerSubslice", TBS);
	zet_metric_group_handle_t ts_e = find_group("CommandTimestamps", EBS);
	EXPECT(cb_t != cb_e, "two ComputeBasic groups");
	uint32_t domains[2] = {0, 0};
	for (uint32_t i = 0; i < ngroups; i++) {
		zet_metric_group_properties_t p = gprops(groups[i]);
		EXPECT(p.domain < 2, "%s: domain %u", p.name, p.domain);
		domains[p.domain]++;
		EXPECT(p.samplingType == TBS || p.samplingType == EBS, "%s: sampling %u", p.name, p.samplingType);
		uint32_t mc = 0;
		CHECK(zetMetricGet(groups[i], &mc, NULL));
		EXPECT(mc == p.metricCount && mc > 0, "%s: metricCount %u, zetMetricGet %u", p.name, p.metricCount, mc);
	}
	EXPECT(domains[0] == 6 && domains[1] == 1, "domains %u %u", domains[0], domains[1]);
	EXPECT(gprops(ts_e).domain == 1 && gprops(cb_t).domain == 0 && gprops(cb_e).domain == 0, "domains");
	for (int s = 0; s < 2; s++) {
		zet_metric_group_handle_t g = s ? cb_e : cb_t;
		expect_metric(g, "GpuTime", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_UINT64, "ns");
		expect_metric(g, "GpuCoreClocks", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "cycles");
		expect_metric(g, "AvgGpuCoreFrequencyMHz", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "MHz");
		expect_metric(g, "GpuBusy", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "EuActive", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "EuStall", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "EuThreadOccupancy", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "XVE_ACTIVE", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "XVE_STALL", ZET_METRIC_TYPE_DURATION, ZET_VALUE_TYPE_FLOAT32, "percent");
		expect_metric(g, "SlmBytesRead", ZET_METRIC_TYPE_THROUGHPUT, ZET_VALUE_TYPE_UINT64, "bytes");
		expect_metric(g, "ShaderAtomics", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "messages");
		expect_metric(g, "ShaderBarriers", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "messages");
		expect_metric(g, "GtiReadThroughput", ZET_METRIC_TYPE_THROUGHPUT, ZET_VALUE_TYPE_UINT64, "bytes");
		expect_metric(g, "GtiWriteThroughput", ZET_METRIC_TYPE_THROUGHPUT, ZET_VALUE_TYPE_UINT64, "bytes");
		expect_metric(g, "QueryBeginTime", ZET_METRIC_TYPE_TIMESTAMP, ZET_VALUE_TYPE_UINT64, "ns");
		expect_metric(g, "CoreFrequencyMHz", ZET_METRIC_TYPE_RAW, ZET_VALUE_TYPE_UINT64, "MHz");
		EXPECT(find_metric(g, "GpuTime", NULL) == 0, "GpuTime first");
	}
	expect_metric(cb_t, "ReportReason", ZET_METRIC_TYPE_EVENT, ZET_VALUE_TYPE_UINT64, "-");
	expect_metric(cb_t, "ContextId", ZET_METRIC_TYPE_RAW, ZET_VALUE_TYPE_UINT64, "-");
	expect_metric(cb_t, "StreamMarker", ZET_METRIC_TYPE_RAW, ZET_VALUE_TYPE_UINT64, "-");
	EXPECT(find_metric(cb_e, "ReportReason", NULL) < 0 && find_metric(cb_e, "StreamMarker", NULL) < 0,
	       "time-based-only metrics in the event-based group");
	EXPECT(gprops(cb_t).metricCount == gprops(cb_e).metricCount + 3, "TBS has ReportReason, ContextId, StreamMarker");

	/* ---- errors ---- */
	zet_metric_group_properties_t bad = {.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetMetricGroupGetProperties(cb_t, &bad));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricGroupGetProperties(cb_t, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricGroupGet(e.dev, NULL, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricGet(cb_t, NULL, NULL));
	zet_metric_handle_t m0;
	uint32_t one = 1;
	CHECK(zetMetricGet(cb_t, &one, &m0));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricGetProperties(m0, NULL));

	/* ---- activation ---- */
	zet_metric_group_handle_t act[3] = {cb_e, ts_e, NULL};
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 2, act)); /* two domains together */
	act[1] = mem_e;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetContextActivateMetricGroups(e.ctx, e.dev, 2, act));
	act[1] = cb_e;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetContextActivateMetricGroups(e.ctx, e.dev, 2, act));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zetContextActivateMetricGroups(e.ctx, e.dev, 1, NULL));
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 0, NULL)); /* deactivates all */

	/* ---- calculation of synthetic reports ---- */
	static uint8_t raw[4 * 256];
	const uint32_t mc_t = gprops(cb_t).metricCount, mc_e = gprops(cb_e).metricCount;
	/* 800 ticks of 80 ns (12.5 MHz) = 64 us; 64000 core clocks; A4 wraps at 2^40. */
	report(raw, 0xffffff00u, 0xfffff000u, (1ull << 40) - 2 * 64000, 0, 0);
	report(raw + 256, 0xffffff00u + 800, 0xfffff000u + 64000, 0, 7, 2);
	report(raw + 512, 0xffffff00u + 1600, 0xfffff000u + 128000, 2 * 64000, 9, 1);
	uint32_t count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 3 * 256, raw,
						  &count, NULL));
	EXPECT(count == 2 * mc_t, "3 reports: %u values, want %u", count, 2 * mc_t);
	zet_typed_value_t vals[512];
	CHECK(zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 3 * 256, raw,
						  &count, vals));
	EXPECT(count == 2 * mc_t, "%u values", count);
	const int i_time = find_metric(cb_t, "GpuTime", NULL), i_clk = find_metric(cb_t, "GpuCoreClocks", NULL);
	const int i_freq = find_metric(cb_t, "AvgGpuCoreFrequencyMHz", NULL), i_marker = find_metric(cb_t, "StreamMarker", NULL);
	const int i_reason = find_metric(cb_t, "ReportReason", NULL);
	ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	CHECK(zeDeviceGetProperties(e.dev, &dp));
	const uint32_t eus = dp.numSlices * dp.numSubslicesPerSlice * dp.numEUsPerSubslice;
	const int i_active = find_metric(cb_t, "EuActive", NULL);
	/* 800 timestamp ticks at the device's timestamp frequency (12.5 MHz on the presets:
	 * 64000 ns; a daemon may run another clock, e.g. under zesim trace). */
	ze_device_properties_t dp12 = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	CHECK(zeDeviceGetProperties(e.dev, &dp12));
	const uint64_t want_ns = 800ull * 1000000000ull / dp12.timerResolution, want_mhz = 64000ull * 1000 / want_ns;
	for (uint32_t s = 0; s < 2; s++) {
		const zet_typed_value_t *v = vals + s * mc_t;
		EXPECT(v[i_time].type == ZET_VALUE_TYPE_UINT64 && v[i_time].value.ui64 == want_ns, "set %u GpuTime %llu", s,
		       (unsigned long long)v[i_time].value.ui64);
		EXPECT(v[i_clk].value.ui64 == 64000 && v[i_freq].value.ui64 == want_mhz, "set %u clocks %llu freq %llu", s,
		       (unsigned long long)v[i_clk].value.ui64, (unsigned long long)v[i_freq].value.ui64);
		/* A4 grew by 2 * 64000 EU cycles over 64000 clocks and `eus` EUs. */
		const float want = (float)(2.0 * 64000 * 100 / eus / 64000);
		EXPECT(v[i_active].type == ZET_VALUE_TYPE_FLOAT32 && v[i_active].value.fp32 == want,
		       "set %u EuActive %.9g want %.9g", s, v[i_active].value.fp32, want);
	}
	EXPECT(vals[i_marker].value.ui64 == 7 && vals[mc_t + i_marker].value.ui64 == 9, "markers");
	EXPECT(vals[i_reason].value.ui64 == 2 && vals[mc_t + i_reason].value.ui64 == 1, "reasons");
	count = 5; /* fewer values than there are: exactly those */
	CHECK(zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 3 * 256, raw,
						  &count, vals));
	EXPECT(count == 5, "count %u", count);
	count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 256, raw, &count,
						  NULL));
	EXPECT(count == 0, "one report: no set (%u)", count);
	count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(cb_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 512, raw, &count,
						  NULL));
	EXPECT(count == mc_e, "a query: one set (%u values)", count);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
		     zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 300, raw,
							 &count, vals));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
		     zetMetricGroupCalculateMetricValues(cb_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 768, raw,
							 &count, vals));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
		     zetMetricGroupCalculateMetricValues(ts_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 24, raw,
							 &count, vals));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
		     zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 512, NULL,
							 &count, vals));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
		     zetMetricGroupCalculateMetricValues(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 512, raw,
							 NULL, vals));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
		     zetMetricGroupCalculateMetricValues(cb_t, (zet_metric_group_calculation_type_t)2, 512, raw, &count,
							 vals));
	uint32_t sets = 0, total = 0, counts[4];
	CHECK(zetMetricGroupCalculateMultipleMetricValuesExp(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
							     3 * 256, raw, &sets, &total, NULL, NULL));
	EXPECT(sets == 1 && total == 2 * mc_t, "multiple: %u sets %u values", sets, total);
	CHECK(zetMetricGroupCalculateMultipleMetricValuesExp(cb_t, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
							     3 * 256, raw, &sets, &total, counts, vals + 100));
	EXPECT(sets == 1 && total == 2 * mc_t && counts[0] == total, "multiple: %u sets %u values", sets, total);
	EXPECT(vals[100 + i_time].value.ui64 == want_ns, "multiple: GpuTime");

	/* ---- streamer and query pool argument checks ---- */
	zet_metric_streamer_desc_t sd = {.stype = ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, .notifyEveryNReports = 64,
					 .samplingPeriod = 100000};
	zet_metric_streamer_handle_t st;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetMetricStreamerOpen(e.ctx, e.dev, cb_t, &sd, NULL, &st));
	act[0] = cb_t;
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 1, act));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetMetricStreamerOpen(e.ctx, e.dev, cb_e, &sd, NULL, &st));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetMetricStreamerOpen(e.ctx, e.dev, cb_t, NULL, NULL, &st));
	ze_result_t sr = zetMetricStreamerOpen(e.ctx, e.dev, cb_t, &sd, NULL, &st);
	EXPECT(sr == ZE_RESULT_SUCCESS || sr == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "streamer open 0x%x", sr);
	if (sr == ZE_RESULT_SUCCESS) {
		note("OA streamer: open, period %u ns", sd.samplingPeriod);
		zet_metric_streamer_handle_t st2;
		CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zetMetricStreamerOpen(e.ctx, e.dev, cb_t, &sd, NULL, &st2));
		CHECK(zetMetricStreamerClose(st));
	} else {
		note("OA streamer: no OA unit (UNSUPPORTED_FEATURE)");
	}

	zet_metric_query_pool_desc_t qd = {.stype = ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC,
					   .type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, .count = 4};
	zet_metric_query_pool_handle_t qp, tp;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetMetricQueryPoolCreate(e.ctx, e.dev, cb_t, &qd, &qp));
	qd.type = (zet_metric_query_pool_type_t)5;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zetMetricQueryPoolCreate(e.ctx, e.dev, cb_e, &qd, &qp));
	qd.type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE;
	qd.count = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zetMetricQueryPoolCreate(e.ctx, e.dev, cb_e, &qd, &qp));
	qd.count = 4;
	CHECK(zetMetricQueryPoolCreate(e.ctx, e.dev, cb_e, &qd, &qp));
	CHECK(zetMetricQueryPoolCreate(e.ctx, e.dev, ts_e, &qd, &tp));
	zet_metric_query_handle_t q, tq;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetMetricQueryCreate(qp, 4, &q));
	CHECK(zetMetricQueryCreate(qp, 3, &q));
	CHECK(zetMetricQueryCreate(tp, 0, &tq));
	CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zetMetricQueryPoolDestroy(qp));
	size_t qsize = 0;
	CHECK_RESULT(ZE_RESULT_NOT_READY, zetMetricQueryGetData(tq, &qsize, NULL));
	/* Not activated: cb_e and ts_e are not active now (cb_t is). */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zetCommandListAppendMetricQueryBegin(e.list, tq));

	/* ---- CommandTimestamps around a kernel, beside a kernel-timestamp event ---- */
	act[0] = cb_e;
	act[1] = ts_e;
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 2, act));
	ze_module_handle_t mod = e2e_module(&e, argv[1]);
	ze_kernel_handle_t busy = e2e_kernel(mod, "busy");
	CHECK(zeKernelSetGroupSize(busy, 8, 1, 1));
	uint32_t *out = e2e_alloc_shared(&e, 4096);
	uint32_t iters = 3000;
	CHECK(zeKernelSetArgumentValue(busy, 0, 8, &out));
	CHECK(zeKernelSetArgumentValue(busy, 1, 4, &iters));
	ze_event_pool_desc_t epd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				    .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				    .count = 2};
	ze_event_pool_handle_t epool;
	CHECK(zeEventPoolCreate(e.ctx, &epd, 1, &e.dev, &epool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
			      .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t kev, qev;
	CHECK(zeEventCreate(epool, &ed, &kev));
	ed.index = 1;
	CHECK(zeEventCreate(epool, &ed, &qev));
	const ze_group_count_t grid = {1, 1, 1};
	CHECK(zetCommandListAppendMetricQueryBegin(e.list, tq));
	CHECK(zeCommandListAppendLaunchKernel(e.list, busy, &grid, kev, 0, NULL));
	CHECK(zetCommandListAppendMetricMemoryBarrier(e.list));
	/* The 1.8.12 validation layer wants a non-NULL phWaitEvents even with 0 events. */
	ze_event_handle_t no_wait = NULL;
	CHECK(zetCommandListAppendMetricQueryEnd(e.list, tq, qev, 0, &no_wait));
	CHECK(zeCommandListClose(e.list));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
	CHECK(zeEventQueryStatus(qev));
	qsize = 0;
	CHECK(zetMetricQueryGetData(tq, &qsize, NULL));
	EXPECT(qsize == 16, "CommandTimestamps raw size %zu", qsize);
	uint64_t tsraw[2];
	CHECK(zetMetricQueryGetData(tq, &qsize, (uint8_t *)tsraw));
	ze_kernel_timestamp_result_t kts;
	CHECK(zeEventQueryKernelTimestamp(kev, &kts));
	EXPECT(tsraw[0] <= kts.global.kernelStart && kts.global.kernelEnd <= tsraw[1],
	       "query [%llu, %llu] around the kernel [%llu, %llu]", (unsigned long long)tsraw[0],
	       (unsigned long long)tsraw[1], (unsigned long long)kts.global.kernelStart,
	       (unsigned long long)kts.global.kernelEnd);
	const uint32_t mc_ts = gprops(ts_e).metricCount;
	count = 0;
	CHECK(zetMetricGroupCalculateMetricValues(ts_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, qsize,
						  (uint8_t *)tsraw, &count, NULL));
	EXPECT(count == mc_ts, "one set: %u values", count);
	CHECK(zetMetricGroupCalculateMetricValues(ts_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, qsize,
						  (uint8_t *)tsraw, &count, vals));
	ze_device_properties_t dp2 = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	CHECK(zeDeviceGetProperties(e.dev, &dp2));
	const uint64_t hz = dp2.timerResolution;
	const uint64_t ticks = tsraw[1] - tsraw[0];
	const int i_tticks = find_metric(ts_e, "GpuTimestampTicks", NULL), i_ttime = find_metric(ts_e, "GpuTime", NULL);
	const int i_tbegin = find_metric(ts_e, "QueryBeginTime", NULL);
	EXPECT(vals[i_tticks].value.ui64 == ticks && ticks > 0, "ticks %llu want %llu",
	       (unsigned long long)vals[i_tticks].value.ui64, (unsigned long long)ticks);
	EXPECT(vals[i_ttime].value.ui64 == (uint64_t)((unsigned __int128)ticks * 1000000000u / hz), "GpuTime %llu",
	       (unsigned long long)vals[i_ttime].value.ui64);
	EXPECT(vals[i_tbegin].value.ui64 == (uint64_t)((unsigned __int128)tsraw[0] * 1000000000u / hz),
	       "QueryBeginTime %llu", (unsigned long long)vals[i_tbegin].value.ui64);
	note("CommandTimestamps: %llu ticks = %llu ns around a %llu-tick kernel", (unsigned long long)ticks,
	     (unsigned long long)vals[i_ttime].value.ui64,
	     (unsigned long long)(kts.global.kernelEnd - kts.global.kernelStart));
	CHECK(zetMetricQueryReset(tq));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zetMetricQueryGetData(tq, &qsize, NULL));

	/* ---- OA query around the kernel ---- */
	CHECK(zeCommandListReset(e.list));
	CHECK(zetCommandListAppendMetricQueryBegin(e.list, q));
	CHECK(zeCommandListAppendLaunchKernel(e.list, busy, &grid, NULL, 0, NULL));
	CHECK(zetCommandListAppendMetricQueryEnd(e.list, q, NULL, 0, &no_wait));
	CHECK(zeCommandListClose(e.list));
	ze_result_t xr = zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL);
	EXPECT(xr == ZE_RESULT_SUCCESS || xr == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, "OA query execution 0x%x", xr);
	if (xr == ZE_RESULT_SUCCESS) {
		CHECK(zeCommandQueueSynchronize(e.queue, UINT64_MAX));
		qsize = 0;
		CHECK(zetMetricQueryGetData(q, &qsize, NULL));
		EXPECT(qsize == 512, "OA query raw size %zu", qsize);
		static uint8_t qraw[512];
		CHECK(zetMetricQueryGetData(q, &qsize, qraw));
		count = 0;
		CHECK(zetMetricGroupCalculateMetricValues(cb_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, qsize, qraw,
							  &count, NULL));
		EXPECT(count == mc_e, "one query, one set: %u values", count);
		CHECK(zetMetricGroupCalculateMetricValues(cb_e, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, qsize, qraw,
							  &count, vals));
		const int i_cs = find_metric(cb_e, "CsThreads", NULL);
		EXPECT(vals[i_cs].value.ui64 == 1, "CsThreads %llu (one SIMD8 thread)",
		       (unsigned long long)vals[i_cs].value.ui64);
		note("OA query: GpuTime %llu ns, CsThreads %llu", (unsigned long long)vals[0].value.ui64,
		     (unsigned long long)vals[i_cs].value.ui64);
	} else {
		note("OA query: no OA unit (UNSUPPORTED_FEATURE)");
	}

	/* ---- marker: encodes (not executed here) ---- */
	CHECK(zeCommandListReset(e.list));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetCommandListAppendMetricStreamerMarker(e.list, NULL, 1));

	CHECK(zetMetricQueryDestroy(q));
	CHECK(zetMetricQueryDestroy(tq));
	CHECK(zetMetricQueryPoolDestroy(qp));
	CHECK(zetMetricQueryPoolDestroy(tp));
	CHECK(zetContextActivateMetricGroups(e.ctx, e.dev, 0, NULL));
	CHECK(zeEventDestroy(kev));
	CHECK(zeEventDestroy(qev));
	CHECK(zeEventPoolDestroy(epool));
	CHECK(zeKernelDestroy(busy));
	CHECK(zeModuleDestroy(mod));
	e2e_fini(&e);
	return 0;
}
