/* The Level Zero metrics API on the OA block (docs/oa.md §4) through the observation uAPI
 * (kmd_shim/include/uapi/zesim_drm.h), with the metric groups as data (docs/metrics.md,
 * zs_metrics_calc.[ch]).
 *
 * - Enumeration is static: the groups of the table, in table order.
 * - Activation records one group per domain.  The OA programming of a group (its
 *   OA_BC_SEL registers) is given to the KMD (ADD_CONFIG) the first time a stream needs it.
 * - Streamer: an OA stream with SAMPLE_OA, the group's config, a period exponent from
 *   samplingPeriod, read() non-blocking; a thread polls the fd and signals the
 *   notification event when notifyEveryNReports are there (WAIT_NUM_REPORTS).
 * - Queries: a 576-byte slot per query (begin report, end report, an "available" qword
 *   the device sets after the end report); REPORT_PERF_COUNT needs the counters running,
 *   so a list with OA queries opens the query stream (EXEC_QUEUE_ID of the queue it runs
 *   on, no SAMPLE_OA) before it executes.  While a streamer is open its stream already
 *   runs the counters, with the streamer's group programming.  Domain 1 queries
 *   (CommandTimestamps) are two TIMESTAMP_WRITEs and need no stream. */
#define _GNU_SOURCE
#include "zs_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zs/gpu_cmds.h"
#include "zs/oa_report.h"
#include "zs_cmdlist.h"
#include "zs_context.h"
#include "zs_event.h"
#include "zs_handle.h"
#include "zs_metrics_calc.h"

#define MAX_DOMAINS 4u
#define OA_SLOT_BYTES 576u /* begin report, end report, flag, padded to 64 */
#define OA_SLOT_FLAG 512u
#define TS_SLOT_BYTES 64u
#define TS_SLOT_FLAG 16u
#define MIN_OA_BUFFER (128u << 10)
#define MAX_OA_BUFFER (128u << 20)

typedef struct zs_mgroup zs_mgroup_t;
typedef struct zs_metric {
	zs_mgroup_t *g;
	uint32_t index;
} zs_metric_t;

struct zs_mgroup {
	const zs_metric_group_def_t *def;
	uint32_t index;
	zs_metric_t *metrics;
	uint64_t config_id; /* 0: not given to the KMD yet */
};

typedef struct zs_streamer {
	zs_mgroup_t *g;
	int fd;
	ze_event_handle_t event;
	uint32_t notify;
	uint64_t buf_bytes;
	pthread_t thread;
	bool has_thread, stop, consumed;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} zs_streamer_t;

typedef struct zs_qpool {
	zs_context_t *ctx;
	zs_mgroup_t *g;
	uint32_t count, stride, live;
	zs_bo_t bo;
} zs_qpool_t;

typedef struct zs_query {
	zs_qpool_t *pool;
	uint32_t index;
} zs_query_t;

static struct {
	bool enabled;
	zs_device_t *dev;
	zs_metric_env_t env;
	zs_mgroup_t *groups;
	uint32_t ngroups;
	pthread_mutex_t lock;
	zs_mgroup_t *active[MAX_DOMAINS];
	zs_streamer_t *streamer;
	uint32_t oa_pools; /* live query pools of OA groups */
	int qfd;	   /* the query stream, or -1 */
	uint32_t qexec;
	zs_mgroup_t *qgroup;
	uint32_t config_seq;
} M = {.lock = PTHREAD_MUTEX_INITIALIZER, .qfd = -1};

#define CHECK_ENABLED()                                                                                               \
	do {                                                                                                          \
		if (!M.enabled)                                                                                       \
			return ZE_RESULT_ERROR_UNINITIALIZED;                                                         \
	} while (0)

#define GROUP(h) ((zs_mgroup_t *)(h))

ze_result_t zs_metrics_init(zs_device_t *dev)
{
	const char *e = getenv("ZET_ENABLE_METRICS");
	if (!e || strcmp(e, "1") != 0)
		return ZE_RESULT_SUCCESS;
	M.groups = calloc(zs_metric_group_count, sizeof(*M.groups));
	if (!M.groups)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < zs_metric_group_count; i++) {
		zs_mgroup_t *g = &M.groups[i];
		g->def = &zs_metric_groups[i];
		g->index = i;
		g->metrics = calloc(g->def->metric_count, sizeof(*g->metrics));
		if (!g->metrics || zs_handle_add(g, ZS_T_METRIC_GROUP))
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		for (uint32_t m = 0; m < g->def->metric_count; m++) {
			g->metrics[m].g = g;
			g->metrics[m].index = m;
			if (zs_handle_add(&g->metrics[m], ZS_T_METRIC))
				return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	M.ngroups = zs_metric_group_count;
	M.dev = dev;
	M.env.sys[ZS_SYS_EU_CORES] = (uint64_t)dev->slices * dev->subslices_per_slice * dev->eus_per_subslice;
	M.env.sys[ZS_SYS_SUBSLICES] = (uint64_t)dev->slices * dev->subslices_per_slice;
	M.env.sys[ZS_SYS_THREADS_PER_EU] = dev->threads_per_eu;
	M.env.sys[ZS_SYS_TIMESTAMP_HZ] = dev->info.timestamp_hz;
	M.env.sys[ZS_SYS_CORE_MHZ] = dev->info.core_hz / 1000000u;
	M.enabled = true;
	return ZE_RESULT_SUCCESS;
}

/* A failed observation call as a result. */
static ze_result_t oa_result(int err)
{
	switch (err) {
	case -EBUSY: return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE; /* one stream per OA unit */
	case -ENODEV:
	case -ENOTTY:
	case -EOPNOTSUPP:
	case -EINVAL: return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* no OA unit, or a KMD without OA */
	default: return zs_device_result(M.dev, err);
	}
}

/* The OA unit (under M.lock): its timestamp frequency and capabilities. */
static ze_result_t oa_unit(uint64_t *hz, uint64_t *caps)
{
	int rc = zs_os_oa_unit(&M.dev->os, hz, caps);
	return rc ? oa_result(rc) : ZE_RESULT_SUCCESS;
}

/* The group's register programming given to the KMD (under M.lock). */
static ze_result_t group_config(zs_mgroup_t *g, uint64_t *id)
{
	if (!g->config_id) {
		char uuid[40];
		snprintf(uuid, sizeof(uuid), "%08x-%04x-7a73-%04x-%012x", (unsigned)getpid() & 0xffffffffu,
			 g->index & 0xffffu, M.config_seq++ & 0xffffu, 0x6d6574u);
		int rc = zs_os_oa_add_config(&M.dev->os, uuid, g->def->regs, g->def->nregs, &g->config_id);
		if (rc) {
			g->config_id = 0;
			return oa_result(rc);
		}
	}
	*id = g->config_id;
	return ZE_RESULT_SUCCESS;
}

static void query_stream_close(void)
{
	if (M.qfd >= 0)
		zs_os_oa_stream_close(M.qfd);
	M.qfd = -1;
	M.qgroup = NULL;
}

ze_result_t zs_metrics_query_prepare(zs_device_t *dev, uint32_t exec_id, const void *group)
{
	ZS_UNUSED(dev);
	zs_mgroup_t *g = (zs_mgroup_t *)group;
	pthread_mutex_lock(&M.lock);
	ze_result_t r = ZE_RESULT_SUCCESS;
	if (M.streamer || (M.qfd >= 0 && M.qexec == exec_id && M.qgroup == g)) {
		pthread_mutex_unlock(&M.lock);
		return r; /* the counters already run */
	}
	query_stream_close();
	uint64_t hz, caps, id;
	if (!(r = oa_unit(&hz, &caps)) && !(r = group_config(g, &id))) {
		const uint64_t props[][2] = {
			{ZESIM_OA_PROPERTY_OA_UNIT_ID, 0},
			{ZESIM_OA_PROPERTY_OA_METRIC_SET, id},
			{ZESIM_OA_PROPERTY_EXEC_QUEUE_ID, exec_id},
		};
		int rc = zs_os_oa_stream_open(&M.dev->os, props, sizeof(props) / sizeof(props[0]), &M.qfd);
		if (rc) {
			M.qfd = -1;
			r = oa_result(rc);
		} else {
			M.qexec = exec_id;
			M.qgroup = g;
		}
	}
	pthread_mutex_unlock(&M.lock);
	return r;
}

/* ---- groups and metrics -------------------------------------------------------------- */

ze_result_t ZE_APICALL zs_metric_group_get(zet_device_handle_t hDevice, uint32_t *pCount,
					   zet_metric_group_handle_t *phMetricGroups)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !phMetricGroups) {
		*pCount = M.ngroups;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > M.ngroups)
		*pCount = M.ngroups;
	for (uint32_t i = 0; i < *pCount; i++)
		phMetricGroups[i] = (zet_metric_group_handle_t)&M.groups[i];
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_group_get_properties(zet_metric_group_handle_t hMetricGroup,
						      zet_metric_group_properties_t *p)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, (ze_structure_type_t)ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES);
	const zs_metric_group_def_t *d = GROUP(hMetricGroup)->def;
	snprintf(p->name, sizeof(p->name), "%s", d->name);
	snprintf(p->description, sizeof(p->description), "%s", d->description);
	p->samplingType = d->sampling;
	p->domain = d->domain;
	p->metricCount = d->metric_count;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_get(zet_metric_group_handle_t hMetricGroup, uint32_t *pCount,
				     zet_metric_handle_t *phMetrics)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(pCount);
	zs_mgroup_t *g = GROUP(hMetricGroup);
	const uint32_t n = g->def->metric_count;
	if (*pCount == 0 || !phMetrics) {
		*pCount = n;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > n)
		*pCount = n;
	for (uint32_t i = 0; i < *pCount; i++)
		phMetrics[i] = (zet_metric_handle_t)&g->metrics[i];
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_get_properties(zet_metric_handle_t hMetric, zet_metric_properties_t *p)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetric, ZS_T_METRIC);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, (ze_structure_type_t)ZET_STRUCTURE_TYPE_METRIC_PROPERTIES);
	const zs_metric_t *m = (const zs_metric_t *)hMetric;
	const zs_metric_def_t *d = &m->g->def->metrics[m->index];
	snprintf(p->name, sizeof(p->name), "%s", d->name);
	snprintf(p->description, sizeof(p->description), "%s", d->description);
	snprintf(p->component, sizeof(p->component), "%s", d->component);
	snprintf(p->resultUnits, sizeof(p->resultUnits), "%s", d->units);
	p->tierNumber = 1;
	p->metricType = (zet_metric_type_t)d->type;
	p->resultType = (zet_value_type_t)d->value_type;
	return ZE_RESULT_SUCCESS;
}

/* ---- calculation ------------------------------------------------------------------------ */

/* The values of raw data: total values, and up to *n of them written. */
static ze_result_t calculate(zs_mgroup_t *g, zet_metric_group_calculation_type_t type, size_t size,
			     const uint8_t *raw, uint32_t *total, uint32_t want, zet_typed_value_t *out,
			     uint32_t *written)
{
	if (type > ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (type == ZET_METRIC_GROUP_CALCULATION_TYPE_MAX_METRIC_VALUES)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* no maximum values (driver/README.md) */
	const zs_metric_group_def_t *d = g->def;
	if (size % zs_metric_raw_unit(d))
		return ZE_RESULT_ERROR_INVALID_SIZE;
	const uint64_t sets = zs_metric_sets(d, size), all = sets * d->metric_count;
	if (all > UINT32_MAX)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	*total = (uint32_t)all;
	if (!out) {
		*written = 0;
		return ZE_RESULT_SUCCESS;
	}
	const uint32_t n = want < all ? want : (uint32_t)all, mc = d->metric_count;
	uint32_t done = 0;
	for (uint32_t s = 0; done < n; s++) {
		if (n - done >= mc) {
			zs_metric_eval_set(d, &M.env, raw, s, out + done);
			done += mc;
		} else {
			zet_typed_value_t tmp[256];
			zs_metric_eval_set(d, &M.env, raw, s, tmp);
			memcpy(out + done, tmp, (n - done) * sizeof(tmp[0]));
			done = n;
		}
	}
	*written = n;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_group_calculate_metric_values(zet_metric_group_handle_t hMetricGroup,
							       zet_metric_group_calculation_type_t type,
							       size_t rawDataSize, const uint8_t *pRawData,
							       uint32_t *pMetricValueCount,
							       zet_typed_value_t *pMetricValues)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(pRawData);
	ZS_CHECK_PTR(pMetricValueCount);
	uint32_t total, written;
	const bool size_only = *pMetricValueCount == 0 || !pMetricValues;
	ze_result_t r = calculate(GROUP(hMetricGroup), type, rawDataSize, pRawData, &total, *pMetricValueCount,
				  size_only ? NULL : pMetricValues, &written);
	if (r)
		return r;
	*pMetricValueCount = size_only ? total : written;
	return ZE_RESULT_SUCCESS;
}

/* One device without sub-devices: one set holding every value (as a root device without
 * implicit scaling reports it). */
ze_result_t ZE_APICALL zs_metric_group_calculate_multiple_metric_values_exp(
	zet_metric_group_handle_t hMetricGroup, zet_metric_group_calculation_type_t type, size_t rawDataSize,
	const uint8_t *pRawData, uint32_t *pSetCount, uint32_t *pTotalMetricValueCount, uint32_t *pMetricCounts,
	zet_typed_value_t *pMetricValues)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(pRawData);
	ZS_CHECK_PTR(pSetCount);
	ZS_CHECK_PTR(pTotalMetricValueCount);
	uint32_t total, written;
	const bool size_only = *pSetCount == 0 || *pTotalMetricValueCount == 0 || !pMetricValues;
	ze_result_t r = calculate(GROUP(hMetricGroup), type, rawDataSize, pRawData, &total,
				  *pTotalMetricValueCount, size_only ? NULL : pMetricValues, &written);
	if (r)
		return r;
	*pSetCount = 1;
	*pTotalMetricValueCount = size_only ? total : written;
	if (!size_only && pMetricCounts)
		pMetricCounts[0] = written;
	return ZE_RESULT_SUCCESS;
}

/* ---- activation ------------------------------------------------------------------------ */

ze_result_t ZE_APICALL zs_context_activate_metric_groups(zet_context_handle_t hContext, zet_device_handle_t hDevice,
							 uint32_t count, zet_metric_group_handle_t *phMetricGroups)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	if (count && !phMetricGroups)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	zs_mgroup_t *want[MAX_DOMAINS] = {0};
	for (uint32_t i = 0; i < count; i++) {
		ZS_CHECK_HANDLE(phMetricGroups[i], ZS_T_METRIC_GROUP);
		zs_mgroup_t *g = GROUP(phMetricGroups[i]);
		if (g->def->domain >= MAX_DOMAINS)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		if (want[g->def->domain])
			return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* two groups (or one twice) in one domain */
		want[g->def->domain] = g;
	}
	pthread_mutex_lock(&M.lock);
	for (uint32_t d = 0; d < MAX_DOMAINS; d++) {
		zs_mgroup_t *old = M.active[d];
		/* A deactivated group's programming is withdrawn unless a stream still uses it
		 * (deactivating a group in use is undefined behaviour; we keep it working). */
		if (old && old != want[d] && old->config_id && old != M.qgroup &&
		    !(M.streamer && M.streamer->g == old)) {
			zs_os_oa_remove_config(&M.dev->os, old->config_id);
			old->config_id = 0;
		}
		M.active[d] = want[d];
	}
	pthread_mutex_unlock(&M.lock);
	return ZE_RESULT_SUCCESS;
}

static bool is_active(const zs_mgroup_t *g)
{
	pthread_mutex_lock(&M.lock);
	const bool a = g->def->domain < MAX_DOMAINS && M.active[g->def->domain] == g;
	pthread_mutex_unlock(&M.lock);
	return a;
}

/* ---- streamer --------------------------------------------------------------------------- */

/* Signals the notification event when at least notifyEveryNReports are readable (the
 * stream's WAIT_NUM_REPORTS makes poll say so), then waits until the reader read. */
static void *notify_thread(void *arg)
{
	zs_streamer_t *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		const bool stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
		struct pollfd p = {.fd = s->fd, .events = POLLIN};
		const int n = poll(&p, 1, 20);
		if (n <= 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		zs_event_host_signal(s->event);
		pthread_mutex_lock(&s->lock);
		while (!s->stop && !s->consumed)
			pthread_cond_wait(&s->cond, &s->lock);
		s->consumed = false;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/* The largest period 2^(e+1) ticks not above period_ns (e = 0 if even that is above). */
static uint32_t period_exponent(uint64_t period_ns, uint64_t hz, uint64_t *actual_ns)
{
	uint32_t e = 0;
	for (uint32_t k = 0; k < 32; k++) {
		const unsigned __int128 ns = ((unsigned __int128)2 << k) * 1000000000u / (hz ? hz : 1);
		if (ns <= period_ns)
			e = k;
	}
	*actual_ns = (uint64_t)(((unsigned __int128)2 << e) * 1000000000u / (hz ? hz : 1));
	return e;
}

ze_result_t ZE_APICALL zs_metric_streamer_open(zet_context_handle_t hContext, zet_device_handle_t hDevice,
					       zet_metric_group_handle_t hMetricGroup, zet_metric_streamer_desc_t *desc,
					       ze_event_handle_t hNotificationEvent,
					       zet_metric_streamer_handle_t *phMetricStreamer)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phMetricStreamer);
	ZS_CHECK_STYPE(desc, (ze_structure_type_t)ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC);
	if (hNotificationEvent) {
		ZS_CHECK_HANDLE(hNotificationEvent, ZS_T_EVENT);
		const zs_event_t *e = (const zs_event_t *)hNotificationEvent;
		if (!(e->pool->flags & ZE_EVENT_POOL_FLAG_HOST_VISIBLE))
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	}
	zs_mgroup_t *g = GROUP(hMetricGroup);
	if (g->def->sampling != ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED || g->def->source != ZS_SOURCE_OA)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* streamers sample time-based OA groups */
	if (!is_active(g))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* "must use activated metric groups" */
	zs_streamer_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	s->g = g;
	s->fd = -1;
	s->event = hNotificationEvent;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);

	pthread_mutex_lock(&M.lock);
	ze_result_t r = ZE_RESULT_SUCCESS;
	uint64_t hz = 0, caps = 0, id = 0, period_ns = 0;
	if (M.streamer)
		r = ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE; /* one OA unit, one streamer */
	if (!r)
		r = oa_unit(&hz, &caps);
	if (!r)
		r = group_config(g, &id);
	if (!r) {
		/* The query stream gives way: the streamer's stream runs the counters now. */
		query_stream_close();
		const uint32_t exp = period_exponent(desc->samplingPeriod, hz, &period_ns);
		uint32_t notify = desc->notifyEveryNReports ? desc->notifyEveryNReports : 1;
		uint64_t buf = MIN_OA_BUFFER;
		while (buf < (uint64_t)notify * ZS_OA_REPORT_BYTES * 2 && buf < MAX_OA_BUFFER)
			buf *= 2;
		if (notify > buf / ZS_OA_REPORT_BYTES / 2)
			notify = (uint32_t)(buf / ZS_OA_REPORT_BYTES / 2); /* notify at half full at most */
		uint64_t props[8][2] = {
			{ZESIM_OA_PROPERTY_OA_UNIT_ID, 0},
			{ZESIM_OA_PROPERTY_SAMPLE_OA, 1},
			{ZESIM_OA_PROPERTY_OA_METRIC_SET, id},
			{ZESIM_OA_PROPERTY_OA_FORMAT, ZS_OA_FORMAT_A32u40_A4u32_B8_C8},
			{ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, exp},
		};
		uint32_t n = 5;
		if (caps & ZESIM_OA_CAPS_OA_BUFFER_SIZE) {
			props[n][0] = ZESIM_OA_PROPERTY_OA_BUFFER_SIZE;
			props[n++][1] = buf;
		}
		if (caps & ZESIM_OA_CAPS_WAIT_NUM_REPORTS) {
			props[n][0] = ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS;
			props[n++][1] = notify;
		}
		int rc = zs_os_oa_stream_open(&M.dev->os, (const uint64_t(*)[2])props, n, &s->fd);
		if (rc) {
			s->fd = -1;
			r = oa_result(rc);
		} else {
			struct drm_zesim_oa_stream_info info = {0};
			s->buf_bytes = zs_os_oa_stream_ioctl(s->fd, ZESIM_OBSERVATION_IOCTL_INFO, &info) == 0 &&
						       info.oa_buf_size
					       ? info.oa_buf_size
					       : (caps & ZESIM_OA_CAPS_OA_BUFFER_SIZE ? buf : 16u << 20);
			fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
			s->notify = notify;
			desc->notifyEveryNReports = notify;
			desc->samplingPeriod = (uint32_t)(period_ns > UINT32_MAX ? UINT32_MAX : period_ns);
		}
	}
	if (!r && s->event) {
		if (pthread_create(&s->thread, NULL, notify_thread, s))
			r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		else
			s->has_thread = true;
	}
	if (!r && zs_handle_add(s, ZS_T_METRIC_STREAMER))
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (!r)
		M.streamer = s;
	pthread_mutex_unlock(&M.lock);
	if (r) {
		if (s->has_thread) {
			pthread_mutex_lock(&s->lock);
			s->stop = true;
			pthread_cond_signal(&s->cond);
			pthread_mutex_unlock(&s->lock);
			pthread_join(s->thread, NULL);
		}
		zs_os_oa_stream_close(s->fd);
		free(s);
		return r;
	}
	*phMetricStreamer = (zet_metric_streamer_handle_t)s;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_streamer_close(zet_metric_streamer_handle_t hMetricStreamer)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricStreamer, ZS_T_METRIC_STREAMER);
	zs_streamer_t *s = (zs_streamer_t *)hMetricStreamer;
	zs_handle_remove(s);
	if (s->has_thread) {
		pthread_mutex_lock(&s->lock);
		s->stop = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	pthread_mutex_lock(&M.lock);
	zs_os_oa_stream_close(s->fd);
	M.streamer = NULL;
	pthread_mutex_unlock(&M.lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_streamer_read_data(zet_metric_streamer_handle_t hMetricStreamer,
						    uint32_t maxReportCount, size_t *pRawDataSize, uint8_t *pRawData)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricStreamer, ZS_T_METRIC_STREAMER);
	ZS_CHECK_PTR(pRawDataSize);
	zs_streamer_t *s = (zs_streamer_t *)hMetricStreamer;
	const uint64_t buf_reports = s->buf_bytes / ZS_OA_REPORT_BYTES;
	const uint64_t cap = maxReportCount < buf_reports ? maxReportCount : buf_reports;
	if (*pRawDataSize == 0 || !pRawData) {
		/* What a read could return at most: the buffer's reports (the KMD does not say
		 * how many are there without reading them). */
		*pRawDataSize = (size_t)(cap * ZS_OA_REPORT_BYTES);
		return ZE_RESULT_SUCCESS;
	}
	uint64_t want = *pRawDataSize / ZS_OA_REPORT_BYTES;
	if (want > cap)
		want = cap;
	uint64_t got = 0;
	bool dropped = false;
	for (unsigned lost = 0; got < want;) {
		const long n = zs_os_oa_read(s->fd, pRawData + got * ZS_OA_REPORT_BYTES,
					     (size_t)((want - got) * ZS_OA_REPORT_BYTES));
		if (n == -EIO && lost++ < 4) {
			/* Reports were lost: STATUS says how (and clears it), then read on. */
			struct drm_zesim_oa_stream_status st = {0};
			zs_os_oa_stream_ioctl(s->fd, ZESIM_OBSERVATION_IOCTL_STATUS, &st);
			dropped = true;
			continue;
		}
		if (n == -EAGAIN || n == 0)
			break;
		if (n < 0) {
			*pRawDataSize = (size_t)(got * ZS_OA_REPORT_BYTES);
			return n == -EIO ? ZE_RESULT_WARNING_DROPPED_DATA : zs_device_result(M.dev, (int)n);
		}
		got += (uint64_t)n / ZS_OA_REPORT_BYTES;
	}
	*pRawDataSize = (size_t)(got * ZS_OA_REPORT_BYTES);
	if (s->event) {
		/* The reader took reports: the event goes down until the next N are there. */
		zs_event_host_reset(s->event);
		pthread_mutex_lock(&s->lock);
		s->consumed = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	return dropped ? ZE_RESULT_WARNING_DROPPED_DATA : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_append_metric_streamer_marker(zet_command_list_handle_t hCommandList,
								     zet_metric_streamer_handle_t hMetricStreamer,
								     uint32_t value)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hMetricStreamer, ZS_T_METRIC_STREAMER);
	/* A write of OA_MARKER: a report with reason MARKER, and A35 = value from then on. */
	const uint32_t dw[] = {ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, ZS_CMD_LEN_LOAD_REGISTER_IMM), zs_oa_marker_reg,
			       value};
	return zs_cmdlist_append_commands(hCommandList, dw, ZS_CMD_LEN_LOAD_REGISTER_IMM, NULL, NULL, 0, NULL);
}

/* ---- queries ---------------------------------------------------------------------------- */

ze_result_t ZE_APICALL zs_metric_query_pool_create(zet_context_handle_t hContext, zet_device_handle_t hDevice,
						   zet_metric_group_handle_t hMetricGroup,
						   const zet_metric_query_pool_desc_t *desc,
						   zet_metric_query_pool_handle_t *phMetricQueryPool)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_HANDLE(hMetricGroup, ZS_T_METRIC_GROUP);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phMetricQueryPool);
	ZS_CHECK_STYPE(desc, (ze_structure_type_t)ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC);
	if ((uint32_t)desc->type > ZET_METRIC_QUERY_POOL_TYPE_EXECUTION)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->type != ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* execution queries: not implemented */
	if (desc->count == 0 || desc->count > (1u << 20))
		return ZE_RESULT_ERROR_INVALID_SIZE;
	zs_mgroup_t *g = GROUP(hMetricGroup);
	if (g->def->sampling != ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_EVENT_BASED)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* queries take event-based groups */
	zs_qpool_t *p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	p->ctx = (zs_context_t *)hContext;
	p->g = g;
	p->count = desc->count;
	p->stride = g->def->source == ZS_SOURCE_OA ? OA_SLOT_BYTES : TS_SLOT_BYTES;
	int rc = zs_os_bo_create(&M.dev->os, (uint64_t)p->count * p->stride, 0, &p->bo);
	if (rc) {
		free(p);
		return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : zs_device_result(M.dev, rc);
	}
	if (zs_handle_add(p, ZS_T_METRIC_QUERY_POOL)) {
		zs_os_bo_destroy(&M.dev->os, &p->bo);
		free(p);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(p->ctx);
	if (g->def->source == ZS_SOURCE_OA) {
		pthread_mutex_lock(&M.lock);
		M.oa_pools++;
		pthread_mutex_unlock(&M.lock);
	}
	*phMetricQueryPool = (zet_metric_query_pool_handle_t)p;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_query_pool_destroy(zet_metric_query_pool_handle_t hMetricQueryPool)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricQueryPool, ZS_T_METRIC_QUERY_POOL);
	zs_qpool_t *p = (zs_qpool_t *)hMetricQueryPool;
	if (p->live)
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE; /* its queries first */
	zs_handle_remove(p);
	if (p->g->def->source == ZS_SOURCE_OA) {
		pthread_mutex_lock(&M.lock);
		if (--M.oa_pools == 0)
			query_stream_close(); /* no query can run any more */
		pthread_mutex_unlock(&M.lock);
	}
	zs_os_bo_destroy(&M.dev->os, &p->bo);
	zs_context_unref(p->ctx);
	free(p);
	return ZE_RESULT_SUCCESS;
}

static uint8_t *slot(const zs_query_t *q) { return q->pool->bo.ptr + (size_t)q->index * q->pool->stride; }
static uint32_t flag_offset(const zs_qpool_t *p) { return p->g->def->source == ZS_SOURCE_OA ? OA_SLOT_FLAG : TS_SLOT_FLAG; }

ze_result_t ZE_APICALL zs_metric_query_create(zet_metric_query_pool_handle_t hMetricQueryPool, uint32_t index,
					      zet_metric_query_handle_t *phMetricQuery)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricQueryPool, ZS_T_METRIC_QUERY_POOL);
	ZS_CHECK_PTR(phMetricQuery);
	zs_qpool_t *p = (zs_qpool_t *)hMetricQueryPool;
	if (index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	zs_query_t *q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->pool = p;
	q->index = index;
	if (zs_handle_add(q, ZS_T_METRIC_QUERY)) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	memset(slot(q), 0, p->stride);
	__atomic_add_fetch(&p->live, 1, __ATOMIC_RELAXED);
	*phMetricQuery = (zet_metric_query_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_query_destroy(zet_metric_query_handle_t hMetricQuery)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricQuery, ZS_T_METRIC_QUERY);
	zs_query_t *q = (zs_query_t *)hMetricQuery;
	zs_handle_remove(q);
	__atomic_sub_fetch(&q->pool->live, 1, __ATOMIC_RELAXED);
	free(q);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_metric_query_reset(zet_metric_query_handle_t hMetricQuery)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricQuery, ZS_T_METRIC_QUERY);
	zs_query_t *q = (zs_query_t *)hMetricQuery;
	memset(slot(q), 0, q->pool->stride);
	return ZE_RESULT_SUCCESS;
}

static uint32_t *put_store(uint32_t *d, uint64_t va, uint32_t value)
{
	*d++ = ZS_CMD_HEADER(ZS_CMD_STORE_DATA, ZS_CMD_LEN_STORE_DATA);
	*d++ = (uint32_t)va;
	*d++ = (uint32_t)(va >> 32);
	*d++ = value;
	return d;
}

/* The command that records one end of a query: a report or a timestamp. */
static uint32_t *put_record(uint32_t *d, const zs_query_t *q, uint32_t end)
{
	const uint64_t va = (uint64_t)(uintptr_t)slot(q);
	if (q->pool->g->def->source == ZS_SOURCE_OA) {
		const uint64_t at = va + end * ZS_OA_REPORT_BYTES;
		*d++ = ZS_CMD_HEADER(ZS_CMD_REPORT_PERF_COUNT, ZS_CMD_LEN_REPORT_PERF_COUNT);
		*d++ = (uint32_t)at;
		*d++ = (uint32_t)(at >> 32);
		*d++ = q->index & 0xfffu; /* report id: the query's index */
	} else {
		const uint64_t at = va + end * 8u;
		*d++ = ZS_CMD_HEADER(ZS_CMD_TIMESTAMP_WRITE, ZS_CMD_LEN_TIMESTAMP_WRITE);
		*d++ = (uint32_t)at;
		*d++ = (uint32_t)(at >> 32);
	}
	return d;
}

static ze_result_t check_query_list(zet_command_list_handle_t hCommandList, zet_metric_query_handle_t hMetricQuery)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hMetricQuery, ZS_T_METRIC_QUERY);
	const zs_query_t *q = (const zs_query_t *)hMetricQuery;
	if (((const zs_cmdlist_t *)hCommandList)->ctx != q->pool->ctx)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* list and query of different contexts */
	if (!is_active(q->pool->g))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* the pool's group is not activated */
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_append_metric_query_begin(zet_command_list_handle_t hCommandList,
								 zet_metric_query_handle_t hMetricQuery)
{
	CHECK_ENABLED();
	ze_result_t r = check_query_list(hCommandList, hMetricQuery);
	if (r)
		return r;
	const zs_query_t *q = (const zs_query_t *)hMetricQuery;
	uint32_t dw[16], *d = dw;
	d = put_store(d, (uint64_t)(uintptr_t)slot(q) + flag_offset(q->pool), 0);
	d = put_record(d, q, 0);
	const bool oa = q->pool->g->def->source == ZS_SOURCE_OA;
	return zs_cmdlist_append_commands(hCommandList, dw, (size_t)(d - dw), oa ? q->pool->g : NULL, NULL, 0, NULL);
}

ze_result_t ZE_APICALL zs_command_list_append_metric_query_end(zet_command_list_handle_t hCommandList,
							       zet_metric_query_handle_t hMetricQuery,
							       ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							       ze_event_handle_t *phWaitEvents)
{
	CHECK_ENABLED();
	ze_result_t r = check_query_list(hCommandList, hMetricQuery);
	if (r)
		return r;
	if (numWaitEvents && !phWaitEvents)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	const zs_query_t *q = (const zs_query_t *)hMetricQuery;
	uint32_t dw[16], *d = dw;
	d = put_record(d, q, 1);
	/* Executed after the record (post-sync commands wait for earlier work): GetData
	 * sees the flag only once both records are in memory. */
	d = put_store(d, (uint64_t)(uintptr_t)slot(q) + flag_offset(q->pool), 1);
	const bool oa = q->pool->g->def->source == ZS_SOURCE_OA;
	return zs_cmdlist_append_commands(hCommandList, dw, (size_t)(d - dw), oa ? q->pool->g : NULL, hSignalEvent,
					  numWaitEvents, phWaitEvents);
}

ze_result_t ZE_APICALL zs_command_list_append_metric_memory_barrier(zet_command_list_handle_t hCommandList)
{
	CHECK_ENABLED();
	/* Every append is a barrier and reports are written to memory when taken. */
	return zs_cmdlist_append_commands(hCommandList, NULL, 0, NULL, NULL, 0, NULL);
}

ze_result_t ZE_APICALL zs_metric_query_get_data(zet_metric_query_handle_t hMetricQuery, size_t *pRawDataSize,
						uint8_t *pRawData)
{
	CHECK_ENABLED();
	ZS_CHECK_HANDLE(hMetricQuery, ZS_T_METRIC_QUERY);
	ZS_CHECK_PTR(pRawDataSize);
	const zs_query_t *q = (const zs_query_t *)hMetricQuery;
	const size_t unit = zs_metric_raw_unit(q->pool->g->def);
	const volatile uint32_t *flag = (const volatile uint32_t *)(slot(q) + flag_offset(q->pool));
	if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1)
		return ZE_RESULT_NOT_READY;
	if (*pRawDataSize == 0 || !pRawData) {
		*pRawDataSize = unit;
		return ZE_RESULT_SUCCESS;
	}
	if (*pRawDataSize < unit) {
		*pRawDataSize = 0; /* no whole result fits */
		return ZE_RESULT_SUCCESS;
	}
	memcpy(pRawData, slot(q), unit);
	*pRawDataSize = unit;
	return ZE_RESULT_SUCCESS;
}
