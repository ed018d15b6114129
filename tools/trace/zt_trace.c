/* libzesim_trace.so: the tool library of `zesim trace` (tools/trace/README.md).
 *
 * Preloaded into a Level Zero program beside the zesim preload library, with the
 * loader's tracing layer on (ZE_ENABLE_TRACING_LAYER=1).  It interposes zeInit:
 * after the loader's zeInit it creates one zel tracer with a prologue and an
 * epilogue for every API the loader can trace (zt_apis.h, generated from the
 * installed headers), and so records every call: CLOCK_MONOTONIC_RAW at entry and
 * exit, thread id, result.  Appends that run work on the device (kernel launches,
 * copies, fills, timestamp queries) get a kernel-timestamp event: the application's
 * own if it is one, else one of ours, the application's event then signalled by an
 * appended zeCommandListAppendSignalEvent right after (every append is in order).
 * When the host can know the work completed (synchronisations, status queries,
 * resets and destroys, exit), the events are read with zeEventQueryKernelTimestamp.
 * Global-timestamp pairs (zeDeviceGetGlobalTimestamps) are sampled at each
 * submission.  At exit the record is written as JSON to $ZESIM_TRACE_DIR/<pid>.json;
 * tools/trace/zesim_trace.py turns it into Chrome trace events and the summary. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ZT_EXPORT __attribute__((visibility("default")))

enum {
#define ZT_API(name, params) ZT_##name,
#define ZT_RESULT(name, value)
#include "zt_apis.h"
#undef ZT_API
#undef ZT_RESULT
	ZT_NAPI
};

static const char *const api_names[] = {
#define ZT_API(name, params) "ze" #name,
#define ZT_RESULT(name, value)
#include "zt_apis.h"
#undef ZT_API
#undef ZT_RESULT
};

static const char *result_name(ze_result_t r)
{
	switch ((uint32_t)r) {
#define ZT_API(name, params)
#define ZT_RESULT(name, value)                                                                                         \
	case (uint32_t)(value):                                                                                        \
		return #name;
#include "zt_apis.h"
#undef ZT_API
#undef ZT_RESULT
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die_oom(void)
{
	fputs("zesim trace: out of memory\n", stderr);
	abort();
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die_oom();
	return p;
}

#define VEC_PUSH(v, n, cap, x)                                                                                         \
	do {                                                                                                           \
		if ((n) == (cap)) {                                                                                    \
			(cap) = (cap) ? 2 * (cap) : 16;                                                                \
			(v) = xrealloc((v), (cap) * sizeof(*(v)));                                                     \
		}                                                                                                      \
		(v)[(n)++] = (x);                                                                                      \
	} while (0)

/* ---- API calls: per-thread chunks, appended by their thread only ---------------------------- */

typedef struct {
	uint64_t t0, t1;
	uint32_t api;
	ze_result_t result;
} call_t;

#define CHUNK 4096
typedef struct chunk {
	call_t calls[CHUNK];
	_Atomic uint32_t n;
	struct chunk *_Atomic next;
} chunk_t;

typedef struct thread_rec {
	pid_t tid;
	chunk_t *head, *tail;
	struct thread_rec *next;
} thread_rec_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* threads list and all device state below */
static thread_rec_t *g_threads;
static _Thread_local thread_rec_t *t_self;

/* What one traced call of this thread carries from its prologue to its epilogue (a
 * thread is in at most one traced call: calls made inside callbacks are not traced). */
static _Thread_local struct {
	uint64_t t0;
	ze_event_handle_t app_signal; /* the application's event we replaced by ours */
	ze_event_handle_t ours;	      /* our event put in its place, or NULL */
	bool timed;		      /* the append is recorded as device work */
} t_call;

static thread_rec_t *self(void)
{
	if (t_self)
		return t_self;
	thread_rec_t *t = calloc(1, sizeof(*t));
	chunk_t *c = calloc(1, sizeof(*c));
	if (!t || !c)
		die_oom();
	t->tid = (pid_t)syscall(SYS_gettid);
	t->head = t->tail = c;
	pthread_mutex_lock(&g_lock);
	t->next = g_threads;
	g_threads = t;
	pthread_mutex_unlock(&g_lock);
	return t_self = t;
}

static void record_call(uint32_t api, uint64_t t0, uint64_t t1, ze_result_t r)
{
	thread_rec_t *t = self();
	chunk_t *c = t->tail;
	uint32_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (n == CHUNK) {
		chunk_t *d = calloc(1, sizeof(*d));
		if (!d)
			die_oom();
		atomic_store_explicit(&c->next, d, memory_order_release);
		t->tail = c = d;
		n = 0;
	}
	c->calls[n] = (call_t){t0, t1, api, r};
	atomic_store_explicit(&c->n, n + 1, memory_order_release);
}

/* ---- objects the tool follows --------------------------------------------------------------- */

typedef struct {
	ze_device_handle_t h;
	uint64_t freq; /* timestamp ticks per second */
	uint32_t valid_bits;
} device_t;

typedef struct {
	uint32_t dev;
	uint64_t host, ticks;
} pair_t;

typedef struct {
	ze_event_pool_handle_t h;
	bool timestamps;
} pool_t;

typedef struct {
	ze_event_handle_t h;
	ze_event_pool_handle_t pool;
} event_t;

typedef struct {
	ze_kernel_handle_t h;
	char *name;
} kernel_t;

typedef struct {
	void *h; /* a queue, or an immediate list */
	uint32_t track;
	uint32_t dev;
	bool immediate;
} queue_t;

/* One append that runs work on the device, with the event that times it. */
typedef struct op {
	uint32_t api;
	char *name;
	ze_event_handle_t ev;
	bool own;	   /* ev is ours (reset after each read, recycled with the list) */
	uint32_t groups[3]; /* kernel launches */
} op_t;

typedef struct {
	ze_command_list_handle_t h;
	ze_context_handle_t ctx;
	uint32_t dev;
	bool immediate;
	op_t **ops;
	size_t nops, capops;
} list_t;

/* One execution of an op: pending until its event is read. */
typedef struct {
	op_t *op;
	list_t *list; /* NULL once the list was reset or destroyed */
	uint32_t track, dev;
	uint64_t start, end;
	int state; /* 0 pending, 1 read, 2 lost */
} inst_t;

typedef struct {
	ze_context_handle_t ctx;
	ze_event_pool_handle_t *pools;
	size_t npools, cappools;
	ze_event_handle_t *free;
	size_t nfree, capfree;
	uint32_t made;
} ctx_pool_t;

static device_t *g_devs;
static size_t g_ndevs, g_capdevs;
static pair_t *g_pairs;
static size_t g_npairs, g_cappairs;
static pool_t *g_pools;
static size_t g_npools, g_cappools;
static event_t *g_events;
static size_t g_nevents, g_capevents;
static kernel_t *g_kernels;
static size_t g_nkernels, g_capkernels;
static queue_t *g_queues;
static size_t g_nqueues, g_capqueues;
static list_t **g_lists;
static size_t g_nlists, g_caplists;
static inst_t **g_insts; /* every execution, in submission order */
static size_t g_ninsts, g_capinsts;
static size_t g_first_pending; /* g_insts before it are all read or lost */
static ctx_pool_t *g_ctxpools;
static size_t g_nctxpools, g_capctxpools;
static uint32_t g_ntracks;
static unsigned g_lost_unread, g_tool_errors;
static zel_tracer_handle_t g_tracer;
static bool g_enabled;

static void tool_error(const char *what, ze_result_t r)
{
	if (g_tool_errors++ < 5)
		fprintf(stderr, "zesim trace: %s failed (%s, 0x%x): the trace may miss device times\n", what,
			result_name(r) ? result_name(r) : "?", (unsigned)r);
}

static uint32_t device_index(ze_device_handle_t h)
{
	for (size_t i = 0; i < g_ndevs; i++)
		if (g_devs[i].h == h)
			return (uint32_t)i;
	device_t d = {.h = h};
	ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	ze_result_t r = zeDeviceGetProperties(h, &p);
	if (r)
		tool_error("zeDeviceGetProperties", r);
	d.freq = p.timerResolution;
	d.valid_bits = p.kernelTimestampValidBits;
	VEC_PUSH(g_devs, g_ndevs, g_capdevs, d);
	return (uint32_t)(g_ndevs - 1);
}

static void sample_pair(uint32_t dev)
{
	uint64_t host = 0, ticks = 0;
	ze_result_t r = zeDeviceGetGlobalTimestamps(g_devs[dev].h, &host, &ticks);
	if (r) {
		tool_error("zeDeviceGetGlobalTimestamps", r);
		return;
	}
	pair_t p = {dev, host, ticks};
	VEC_PUSH(g_pairs, g_npairs, g_cappairs, p);
}

static queue_t *find_queue(void *h)
{
	for (size_t i = g_nqueues; i-- > 0;)
		if (g_queues[i].h == h)
			return &g_queues[i];
	return NULL;
}

static queue_t *add_queue(void *h, ze_device_handle_t dev, bool immediate)
{
	queue_t q = {h, g_ntracks++, device_index(dev), immediate};
	VEC_PUSH(g_queues, g_nqueues, g_capqueues, q);
	return &g_queues[g_nqueues - 1];
}

static list_t *find_list(ze_command_list_handle_t h)
{
	for (size_t i = g_nlists; i-- > 0;)
		if (g_lists[i]->h == h)
			return g_lists[i];
	return NULL;
}

static bool event_is_timestamped(ze_event_handle_t h)
{
	for (size_t i = g_nevents; i-- > 0;)
		if (g_events[i].h == h) {
			for (size_t j = g_npools; j-- > 0;)
				if (g_pools[j].h == g_events[i].pool)
					return g_pools[j].timestamps;
			return false;
		}
	return false;
}

/* Our events: host-visible kernel-timestamp pools of 256, per context. */
static ze_event_handle_t own_event(ze_context_handle_t ctx, ze_device_handle_t dev)
{
	ctx_pool_t *cp = NULL;
	for (size_t i = 0; i < g_nctxpools; i++)
		if (g_ctxpools[i].ctx == ctx)
			cp = &g_ctxpools[i];
	if (!cp) {
		ctx_pool_t n = {.ctx = ctx};
		VEC_PUSH(g_ctxpools, g_nctxpools, g_capctxpools, n);
		cp = &g_ctxpools[g_nctxpools - 1];
	}
	if (cp->nfree)
		return cp->free[--cp->nfree];
	if (cp->made % 256 == 0) {
		ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
					   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
					   .count = 256};
		ze_event_pool_handle_t pool;
		ze_result_t r = zeEventPoolCreate(ctx, &pd, 1, &dev, &pool);
		if (r) {
			tool_error("zeEventPoolCreate", r);
			return NULL;
		}
		VEC_PUSH(cp->pools, cp->npools, cp->cappools, pool);
	}
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
			      .index = cp->made % 256,
			      .signal = ZE_EVENT_SCOPE_FLAG_HOST,
			      .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	ze_result_t r = zeEventCreate(cp->pools[cp->npools - 1], &ed, &ev);
	if (r) {
		tool_error("zeEventCreate", r);
		return NULL;
	}
	cp->made++;
	return ev;
}

static void release_own_event(ze_context_handle_t ctx, ze_event_handle_t ev)
{
	for (size_t i = 0; i < g_nctxpools; i++)
		if (g_ctxpools[i].ctx == ctx) {
			zeEventHostReset(ev);
			VEC_PUSH(g_ctxpools[i].free, g_ctxpools[i].nfree, g_ctxpools[i].capfree, ev);
			return;
		}
}

/* Reads every pending execution whose event is signalled. */
static void poll_pending(void)
{
	for (size_t i = g_first_pending; i < g_ninsts; i++) {
		inst_t *in = g_insts[i];
		if (in->state)
			continue;
		if (zeEventQueryStatus(in->op->ev) != ZE_RESULT_SUCCESS)
			continue;
		ze_kernel_timestamp_result_t ts;
		ze_result_t r = zeEventQueryKernelTimestamp(in->op->ev, &ts);
		if (r) {
			tool_error("zeEventQueryKernelTimestamp", r);
			in->state = 2;
		} else {
			in->start = ts.context.kernelStart;
			in->end = ts.context.kernelEnd;
			in->state = 1;
		}
		/* Our event is reset for the list's next execution (or recycled). */
		if (in->op->own) {
			if (in->list && !in->list->immediate)
				zeEventHostReset(in->op->ev);
			else if (in->list)
				release_own_event(in->list->ctx, in->op->ev);
		}
	}
	while (g_first_pending < g_ninsts && g_insts[g_first_pending]->state)
		g_first_pending++;
}

/* The pending executions of `list` (all lists when NULL) are waited for (at most
 * `timeout` ns each) and read; those still unread are counted as lost if `give_up`. */
static void drain(list_t *list, uint64_t timeout, bool give_up)
{
	poll_pending();
	for (size_t i = g_first_pending; i < g_ninsts; i++) {
		inst_t *in = g_insts[i];
		if (in->state || (list && in->list != list))
			continue;
		ze_event_handle_t ev = in->op->ev;
		pthread_mutex_unlock(&g_lock);
		zeEventHostSynchronize(ev, timeout);
		pthread_mutex_lock(&g_lock);
		poll_pending();
		if (!in->state && give_up) {
			in->state = 2;
			g_lost_unread++;
		}
	}
}

/* A list that is reset or destroyed gives up its ops: executions not read by now are
 * lost, and our events go back to the pool. */
static void list_drop_ops(list_t *l)
{
	drain(l, 1000000000ull, true);
	for (size_t i = g_first_pending; i < g_ninsts; i++)
		if (g_insts[i]->list == l)
			g_insts[i]->list = NULL;
	for (size_t i = 0; i < l->nops; i++) {
		op_t *op = l->ops[i];
		if (op->own)
			release_own_event(l->ctx, op->ev);
		/* Executions keep pointing at the op for its name: it is never freed. */
	}
	l->nops = 0;
}

/* ---- hooks ---------------------------------------------------------------------------------- */

/* The API's id if it is an append whose work is timed; its list and signal event. */
#define TIMED_APPENDS(X)                                                                                               \
	X(CommandListAppendLaunchKernel, ze_command_list_append_launch_kernel_params_t)                                \
	X(CommandListAppendLaunchCooperativeKernel, ze_command_list_append_launch_cooperative_kernel_params_t)          \
	X(CommandListAppendMemoryCopy, ze_command_list_append_memory_copy_params_t)                                    \
	X(CommandListAppendMemoryFill, ze_command_list_append_memory_fill_params_t)                                    \
	X(CommandListAppendMemoryCopyRegion, ze_command_list_append_memory_copy_region_params_t)                        \
	X(CommandListAppendMemoryCopyFromContext, ze_command_list_append_memory_copy_from_context_params_t)              \
	X(CommandListAppendQueryKernelTimestamps, ze_command_list_append_query_kernel_timestamps_params_t)

static bool timed_append(uint32_t api, void *params, ze_command_list_handle_t *list, ze_event_handle_t **signal)
{
	switch (api) {
#define X(name, type)                                                                                                  \
	case ZT_##name:                                                                                                \
		*list = *((type *)params)->phCommandList;                                                              \
		*signal = ((type *)params)->phSignalEvent;                                                             \
		return true;
		TIMED_APPENDS(X)
#undef X
	}
	return false;
}

static void append_prologue(ze_command_list_handle_t h, ze_event_handle_t *signal)
{
	list_t *l = find_list(h);
	if (!l)
		return;
	if (l->immediate)
		sample_pair(l->dev); /* the append is its submission */
	t_call.timed = true;
	if (*signal && event_is_timestamped(*signal))
		return; /* the application's own timestamp event times it */
	ze_event_handle_t ev = own_event(l->ctx, g_devs[l->dev].h);
	if (!ev) {
		t_call.timed = false;
		return;
	}
	t_call.app_signal = *signal;
	t_call.ours = ev;
	*signal = ev;
}

static void append_epilogue(uint32_t api, void *params, ze_command_list_handle_t h, ze_event_handle_t *signal,
			    ze_result_t result)
{
	list_t *l = find_list(h);
	if (!l || !t_call.timed)
		return;
	if (result != ZE_RESULT_SUCCESS) {
		if (t_call.ours)
			release_own_event(l->ctx, t_call.ours);
		return;
	}
	op_t *op = calloc(1, sizeof(*op));
	if (!op)
		die_oom();
	op->api = api;
	op->ev = t_call.ours ? t_call.ours : *signal;
	op->own = t_call.ours != NULL;
	const char *name = api_names[api];
	if (api == ZT_CommandListAppendLaunchKernel || api == ZT_CommandListAppendLaunchCooperativeKernel) {
		ze_kernel_handle_t k = api == ZT_CommandListAppendLaunchKernel
					       ? *((ze_command_list_append_launch_kernel_params_t *)params)->phKernel
					       : *((ze_command_list_append_launch_cooperative_kernel_params_t *)params)->phKernel;
		const ze_group_count_t *g = api == ZT_CommandListAppendLaunchKernel
			? *((ze_command_list_append_launch_kernel_params_t *)params)->ppLaunchFuncArgs
			: *((ze_command_list_append_launch_cooperative_kernel_params_t *)params)->ppLaunchFuncArgs;
		for (size_t i = g_nkernels; i-- > 0;)
			if (g_kernels[i].h == k) {
				name = g_kernels[i].name;
				break;
			}
		if (g) {
			op->groups[0] = g->groupCountX;
			op->groups[1] = g->groupCountY;
			op->groups[2] = g->groupCountZ;
		}
	}
	op->name = strdup(name);
	if (!op->name)
		die_oom();
	/* The application's event, if it had one, is signalled right after: every append
	 * runs after all earlier work of the list, so it means the same. */
	if (t_call.ours && t_call.app_signal) {
		ze_result_t r = zeCommandListAppendSignalEvent(h, t_call.app_signal);
		if (r)
			tool_error("zeCommandListAppendSignalEvent", r);
	}
	if (l->immediate) {
		inst_t *in = calloc(1, sizeof(*in));
		if (!in)
			die_oom();
		queue_t *q = find_queue(l->h);
		*in = (inst_t){.op = op, .list = l, .track = q ? q->track : 0, .dev = l->dev};
		VEC_PUSH(g_insts, g_ninsts, g_capinsts, in);
	} else {
		VEC_PUSH(l->ops, l->nops, l->capops, op);
	}
}

static void on_prologue(uint32_t api, void *params)
{
	ze_command_list_handle_t h;
	ze_event_handle_t *signal;
	if (timed_append(api, params, &h, &signal)) {
		pthread_mutex_lock(&g_lock);
		append_prologue(h, signal);
		pthread_mutex_unlock(&g_lock);
		return;
	}
	switch (api) {
	case ZT_CommandQueueExecuteCommandLists: {
		ze_command_queue_execute_command_lists_params_t *p = params;
		pthread_mutex_lock(&g_lock);
		queue_t *q = find_queue(*p->phCommandQueue);
		if (q && *p->pphCommandLists) { /* prologues see the arguments before any check */
			/* An execution of a list not yet read would be overwritten by this one. */
			for (uint32_t i = 0; i < *p->pnumCommandLists; i++) {
				list_t *l = find_list((*p->pphCommandLists)[i]);
				if (l)
					drain(l, UINT64_MAX, false);
			}
			sample_pair(q->dev);
		}
		pthread_mutex_unlock(&g_lock);
		break;
	}
	case ZT_EventHostReset:
	case ZT_EventDestroy:
	case ZT_EventPoolDestroy:
	case ZT_CommandListAppendEventReset:
	case ZT_ContextDestroy:
		/* The last chance to read an application's timestamp event. */
		pthread_mutex_lock(&g_lock);
		poll_pending();
		pthread_mutex_unlock(&g_lock);
		break;
	case ZT_CommandListReset:
	case ZT_CommandListDestroy: {
		ze_command_list_handle_t lh = api == ZT_CommandListReset
						      ? *((ze_command_list_reset_params_t *)params)->phCommandList
						      : *((ze_command_list_destroy_params_t *)params)->phCommandList;
		pthread_mutex_lock(&g_lock);
		list_t *l = find_list(lh);
		if (l)
			list_drop_ops(l);
		pthread_mutex_unlock(&g_lock);
		break;
	}
	}
}

static void on_epilogue(uint32_t api, void *params, ze_result_t result)
{
	ze_command_list_handle_t h;
	ze_event_handle_t *signal;
	if (timed_append(api, params, &h, &signal)) {
		pthread_mutex_lock(&g_lock);
		append_epilogue(api, params, h, signal, result);
		pthread_mutex_unlock(&g_lock);
		return;
	}
	if (result != ZE_RESULT_SUCCESS)
		return;
	pthread_mutex_lock(&g_lock);
	switch (api) {
	case ZT_CommandQueueCreate: {
		ze_command_queue_create_params_t *p = params;
		add_queue(**p->pphCommandQueue, *p->phDevice, false);
		break;
	}
	case ZT_CommandListCreate:
	case ZT_CommandListCreateImmediate: {
		list_t *l = calloc(1, sizeof(*l));
		if (!l)
			die_oom();
		if (api == ZT_CommandListCreate) {
			ze_command_list_create_params_t *p = params;
			*l = (list_t){.h = **p->pphCommandList, .ctx = *p->phContext, .dev = device_index(*p->phDevice)};
		} else {
			ze_command_list_create_immediate_params_t *p = params;
			*l = (list_t){.h = **p->pphCommandList,
				      .ctx = *p->phContext,
				      .dev = device_index(*p->phDevice),
				      .immediate = true};
			add_queue(l->h, *p->phDevice, true);
		}
		VEC_PUSH(g_lists, g_nlists, g_caplists, l);
		break;
	}
	case ZT_CommandQueueExecuteCommandLists: {
		ze_command_queue_execute_command_lists_params_t *p = params;
		queue_t *q = find_queue(*p->phCommandQueue);
		for (uint32_t i = 0; q && i < *p->pnumCommandLists; i++) {
			list_t *l = find_list((*p->pphCommandLists)[i]);
			for (size_t j = 0; l && j < l->nops; j++) {
				inst_t *in = calloc(1, sizeof(*in));
				if (!in)
					die_oom();
				*in = (inst_t){.op = l->ops[j], .list = l, .track = q->track, .dev = q->dev};
				VEC_PUSH(g_insts, g_ninsts, g_capinsts, in);
			}
		}
		break;
	}
	case ZT_CommandListDestroy: {
		ze_command_list_handle_t lh = *((ze_command_list_destroy_params_t *)params)->phCommandList;
		for (size_t i = 0; i < g_nlists; i++)
			if (g_lists[i]->h == lh) {
				g_lists[i] = g_lists[--g_nlists];
				break;
			}
		/* Executions still name it (as their op's owner) only while unread: none now. */
		break;
	}
	case ZT_EventPoolCreate: {
		ze_event_pool_create_params_t *p = params;
		pool_t pl = {**p->pphEventPool, ((*p->pdesc)->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0};
		VEC_PUSH(g_pools, g_npools, g_cappools, pl);
		break;
	}
	case ZT_EventCreate: {
		ze_event_create_params_t *p = params;
		event_t e = {**p->pphEvent, *p->phEventPool};
		VEC_PUSH(g_events, g_nevents, g_capevents, e);
		break;
	}
	case ZT_KernelCreate: {
		ze_kernel_create_params_t *p = params;
		const char *n = (*p->pdesc)->pKernelName;
		kernel_t k = {**p->pphKernel, strdup(n ? n : "?")};
		if (!k.name)
			die_oom();
		VEC_PUSH(g_kernels, g_nkernels, g_capkernels, k);
		break;
	}
	case ZT_CommandQueueSynchronize:
	case ZT_FenceHostSynchronize:
	case ZT_FenceQueryStatus:
	case ZT_EventHostSynchronize:
	case ZT_EventQueryStatus:
		poll_pending();
		break;
	}
	pthread_mutex_unlock(&g_lock);
}

/* ---- the callbacks: one pair per API, generated ------------------------------------------- */

#define ZT_RESULT(name, value)
#define ZT_API(name, params)                                                                                           \
	static void pro_##name(params *p, ze_result_t r, void *u, void **inst)                                         \
	{                                                                                                              \
		(void)r, (void)u, (void)inst;                                                                          \
		t_call.timed = false;                                                                                  \
		t_call.ours = t_call.app_signal = NULL;                                                                \
		on_prologue(ZT_##name, p);                                                                             \
		t_call.t0 = now_ns();                                                                                  \
	}                                                                                                              \
	static void epi_##name(params *p, ze_result_t r, void *u, void **inst)                                         \
	{                                                                                                              \
		const uint64_t t1 = now_ns();                                                                          \
		(void)u, (void)inst;                                                                                   \
		record_call(ZT_##name, t_call.t0, t1, r);                                                              \
		on_epilogue(ZT_##name, p, r);                                                                          \
	}
#include "zt_apis.h"
#undef ZT_API
#undef ZT_RESULT

static ze_result_t register_all(zel_tracer_handle_t t)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
#define ZT_RESULT(name, value)
#define ZT_API(name, params)                                                                                           \
	if (!r)                                                                                                        \
		r = zelTracer##name##RegisterCallback(t, ZEL_REGISTER_PROLOGUE, pro_##name);                           \
	if (!r)                                                                                                        \
		r = zelTracer##name##RegisterCallback(t, ZEL_REGISTER_EPILOGUE, epi_##name);
#include "zt_apis.h"
#undef ZT_API
#undef ZT_RESULT
	return r;
}

/* ---- output --------------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_trace(void)
{
	const char *dir = getenv("ZESIM_TRACE_DIR");
	if (!dir || !*dir)
		return;
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/%d.json", dir, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "zesim trace: cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	char exe[1024] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	fprintf(f, "{\"pid\":%d,\"program\":", (int)getpid());
	json_string(f, exe);
	fprintf(f, ",\n\"apis\":[");
	for (size_t i = 0; i < ZT_NAPI; i++)
		fprintf(f, "%s\"%s\"", i ? "," : "", api_names[i]);
	fprintf(f, "],\n\"calls\":[");
	bool first = true;
	for (thread_rec_t *t = g_threads; t; t = t->next)
		for (chunk_t *c = t->head; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
			uint32_t m = atomic_load_explicit(&c->n, memory_order_acquire);
			for (uint32_t i = 0; i < m; i++) {
				const call_t *k = &c->calls[i];
				const char *rn = result_name(k->result);
				fprintf(f, "%s\n[%d,%u,%" PRIu64 ",%" PRIu64 ",", first ? "" : ",", (int)t->tid, k->api,
					k->t0, k->t1);
				if (rn)
					fprintf(f, "\"%s\"]", rn);
				else
					fprintf(f, "\"0x%x\"]", (unsigned)k->result);
				first = false;
			}
		}
	fprintf(f, "],\n\"devices\":[");
	for (size_t i = 0; i < g_ndevs; i++)
		fprintf(f, "%s{\"freq\":%" PRIu64 ",\"valid_bits\":%u}", i ? "," : "", g_devs[i].freq, g_devs[i].valid_bits);
	fprintf(f, "],\n\"pairs\":[");
	for (size_t i = 0; i < g_npairs; i++)
		fprintf(f, "%s[%u,%" PRIu64 ",%" PRIu64 "]", i ? "," : "", g_pairs[i].dev, g_pairs[i].host,
			g_pairs[i].ticks);
	fprintf(f, "],\n\"tracks\":[");
	for (size_t i = 0; i < g_nqueues; i++)
		fprintf(f, "%s{\"id\":%u,\"dev\":%u,\"kind\":\"%s\"}", i ? "," : "", g_queues[i].track, g_queues[i].dev,
			g_queues[i].immediate ? "immediate command list" : "command queue");
	fprintf(f, "],\n\"device_work\":[");
	unsigned lost = 0;
	first = true;
	for (size_t i = 0; i < g_ninsts; i++) {
		const inst_t *in = g_insts[i];
		if (in->state != 1) {
			lost++;
			continue;
		}
		fprintf(f, "%s\n{\"name\":", first ? "" : ",");
		json_string(f, in->op->name);
		fprintf(f, ",\"api\":\"%s\",\"track\":%u,\"dev\":%u,\"start\":%" PRIu64 ",\"end\":%" PRIu64, api_names[in->op->api],
			in->track, in->dev, in->start, in->end);
		if (in->op->api == ZT_CommandListAppendLaunchKernel || in->op->api == ZT_CommandListAppendLaunchCooperativeKernel)
			fprintf(f, ",\"groups\":[%u,%u,%u]", in->op->groups[0], in->op->groups[1], in->op->groups[2]);
		fprintf(f, ",\"own_event\":%s}", in->op->own ? "true" : "false");
		first = false;
	}
	fprintf(f, "],\n\"unread\":%u,\"tool_errors\":%u}\n", lost, g_tool_errors);
	if (fclose(f) || rename(tmp, path))
		fprintf(stderr, "zesim trace: cannot write %s: %s\n", path, strerror(errno));
}

static void at_exit(void)
{
	if (g_enabled)
		zelTracerSetEnabled(g_tracer, false);
	pthread_mutex_lock(&g_lock);
	drain(NULL, 2000000000ull, true);
	for (uint32_t d = 0; d < g_ndevs; d++)
		sample_pair(d);
	write_trace();
	pthread_mutex_unlock(&g_lock);
}

/* ---- zeInit: the tracer is set up once the loader is ---------------------------------------- */

ZT_EXPORT ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags)
{
	static ze_result_t (*real)(ze_init_flags_t);
	static _Atomic int started;
	if (!real)
		real = (ze_result_t(*)(ze_init_flags_t))dlsym(RTLD_NEXT, "zeInit");
	if (!real) {
		fprintf(stderr, "zesim trace: the Level Zero loader's zeInit is not found\n");
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	if (atomic_load(&started))
		return real(flags); /* traced by the layer like any call */
	const uint64_t t0 = now_ns();
	ze_result_t r = real(flags);
	const uint64_t t1 = now_ns();
	if (r != ZE_RESULT_SUCCESS || atomic_exchange(&started, 1)) {
		record_call(ZT_Init, t0, t1, r);
		return r;
	}
	record_call(ZT_Init, t0, t1, r);
	/* The callbacks keep their state in globals; pUserData only has to be non-NULL. */
	zel_tracer_desc_t d = {.stype = ZEL_STRUCTURE_TYPE_TRACER_EXP_DESC, .pUserData = &g_lock};
	ze_result_t tr = zelTracerCreate(&d, &g_tracer);
	if (tr == ZE_RESULT_SUCCESS)
		tr = register_all(g_tracer);
	if (tr == ZE_RESULT_SUCCESS)
		tr = zelTracerSetEnabled(g_tracer, true);
	if (tr != ZE_RESULT_SUCCESS) {
		fprintf(stderr,
			"zesim trace: cannot enable the loader's tracing layer (%s, 0x%x): is ZE_ENABLE_TRACING_LAYER=1 set? "
			"Only zeInit is recorded\n",
			result_name(tr) ? result_name(tr) : "?", (unsigned)tr);
	} else {
		g_enabled = true;
	}
	atexit(at_exit);
	return r;
}
