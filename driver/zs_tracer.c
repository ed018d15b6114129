/* The driver-level API tracer: tracers, snapshots and their reclamation
 * (zs_tracer.h; the wrappers are generated into zs_tracer_gen.c).
 *
 * Writers (create, set, enable, destroy) serialise on one mutex.  Enabling or
 * disabling, or changing an enabled tracer's callbacks, builds a new snapshot
 * and publishes it in zs_trace_active; the old one is retired and freed once no
 * thread's hazard pointer names it.  A call publishes the snapshot it read in
 * its thread's hazard pointer and reads zs_trace_active again: if it is still
 * the same, the writer that replaces it will see the hazard (all sequentially
 * consistent), so a snapshot in use is never freed.  Nothing on the call path
 * takes a lock. */
#define _GNU_SOURCE
#include "zs_tracer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zs_handle.h"

struct zs_tracer {
	zs_tracer_t *next; /* creation order */
	bool enabled;
	void *user;
	ze_callbacks_t pro, epi;
};

zs_trace_snap_t zs_trace_none;
_Atomic(zs_trace_snap_t *) zs_trace_active = &zs_trace_none;

/* One record per thread that made a traced call; records are reused after
 * their thread ends and never freed, so a writer can walk the list without a
 * lock. */
typedef struct zs_trace_thread {
	_Atomic(zs_trace_snap_t *) hazard;
	atomic_bool used;
	struct zs_trace_thread *next;
	void **inst; /* instance-data slots of the thread's traced call */
	uint32_t ninst;
} zs_trace_thread_t;

static _Atomic(zs_trace_thread_t *) threads;
static _Thread_local zs_trace_thread_t *self;
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static zs_tracer_t *tracers;     /* creation order; under lock */
static zs_trace_snap_t *retired; /* replaced snapshots not yet freed; under lock */

bool zs_tracer_requested(void)
{
	static atomic_int requested = -1;
	int r = atomic_load_explicit(&requested, memory_order_relaxed);
	if (r < 0) {
		const char *v = getenv("ZET_ENABLE_API_TRACING_EXP");
		r = v && strcmp(v, "1") == 0;
		atomic_store_explicit(&requested, r, memory_order_relaxed);
	}
	return r;
}

/* --- The call path ---------------------------------------------------------------------------------------- */

static void thread_end(void *p)
{
	zs_trace_thread_t *t = p;
	atomic_store(&t->hazard, NULL);
	self = NULL;
	atomic_store_explicit(&t->used, false, memory_order_release);
}

static void make_thread_key(void)
{
	(void)pthread_key_create(&thread_key, thread_end);
}

static zs_trace_thread_t *thread_register(void)
{
	pthread_once(&thread_key_once, make_thread_key);
	zs_trace_thread_t *t;
	for (t = atomic_load(&threads); t; t = t->next) {
		bool free_ = false;
		if (!atomic_load_explicit(&t->used, memory_order_relaxed) &&
		    atomic_compare_exchange_strong(&t->used, &free_, true))
			break;
	}
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		atomic_init(&t->used, true);
		zs_trace_thread_t *head = atomic_load(&threads);
		do
			t->next = head;
		while (!atomic_compare_exchange_weak(&threads, &head, t));
	}
	if (pthread_setspecific(thread_key, t)) {
		atomic_store(&t->used, false);
		return NULL;
	}
	self = t;
	return t;
}

zs_trace_snap_t *zs_trace_enter_slow(void ***inst)
{
	zs_trace_thread_t *t = self ? self : thread_register();
	if (!t || atomic_load_explicit(&t->hazard, memory_order_relaxed))
		return NULL;
	zs_trace_snap_t *s;
	for (;;) {
		s = atomic_load(&zs_trace_active);
		if (s == &zs_trace_none) {
			atomic_store_explicit(&t->hazard, NULL, memory_order_relaxed);
			return NULL;
		}
		atomic_store(&t->hazard, s);
		if (atomic_load(&zs_trace_active) == s)
			break;
	}
	if (s->n > t->ninst) {
		void **p = realloc(t->inst, s->n * sizeof(*p));
		if (!p) {
			/* Untraced, prologues and epilogues alike. */
			atomic_store(&t->hazard, NULL);
			return NULL;
		}
		t->inst = p;
		t->ninst = s->n;
	}
	*inst = t->inst;
	return s;
}

void zs_trace_leave(void)
{
	atomic_store_explicit(&self->hazard, NULL, memory_order_release);
}

/* --- Writers (under lock) --------------------------------------------------------------------------------- */

static bool hazard_on(const zs_trace_snap_t *s)
{
	for (zs_trace_thread_t *t = atomic_load(&threads); t; t = t->next)
		if (atomic_load(&t->hazard) == s)
			return true;
	return false;
}

static void reclaim(void)
{
	for (zs_trace_snap_t **p = &retired; *p;) {
		zs_trace_snap_t *s = *p;
		if (hazard_on(s)) {
			p = &s->next_retired;
		} else {
			*p = s->next_retired;
			free(s);
		}
	}
}

/* A new snapshot of the enabled tracers in creation order, made current. */
static ze_result_t publish(void)
{
	uint32_t n = 0;
	for (zs_tracer_t *t = tracers; t; t = t->next)
		n += t->enabled;
	zs_trace_snap_t *s = &zs_trace_none;
	if (n) {
		s = malloc(sizeof(*s) + n * sizeof(s->e[0]));
		if (!s)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		s->next_retired = NULL;
		s->n = 0;
		for (zs_tracer_t *t = tracers; t; t = t->next)
			if (t->enabled)
				s->e[s->n++] = (zs_trace_entry_t){t->pro, t->epi, t->user, t};
	}
	zs_trace_snap_t *old = atomic_exchange(&zs_trace_active, s);
	if (old != &zs_trace_none) {
		old->next_retired = retired;
		retired = old;
	}
	reclaim();
	return ZE_RESULT_SUCCESS;
}

/* Whether a thread is still inside a call whose snapshot names t. */
static bool in_flight(const zs_tracer_t *t)
{
	for (const zs_trace_snap_t *s = retired; s; s = s->next_retired)
		for (uint32_t i = 0; i < s->n; i++)
			if (s->e[i].owner == t && hazard_on(s))
				return true;
	return false;
}

/* --- zetTracerExp* ---------------------------------------------------------------------------------------- */

#define CHECK_REQUESTED()                                                                                             \
	do {                                                                                                          \
		if (!zs_tracer_requested())                                                                           \
			return ZE_RESULT_ERROR_UNINITIALIZED;                                                         \
	} while (0)

ze_result_t ZE_APICALL zs_tracer_create(zet_context_handle_t hContext, const zet_tracer_exp_desc_t *desc,
					zet_tracer_exp_handle_t *phTracer)
{
	CHECK_REQUESTED();
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(desc->pUserData);
	ZS_CHECK_PTR(phTracer);
	ZS_CHECK_STYPE(desc, (ze_structure_type_t)ZET_STRUCTURE_TYPE_TRACER_EXP_DESC);
	zs_tracer_t *t = calloc(1, sizeof(*t));
	if (!t)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	t->user = desc->pUserData;
	if (zs_handle_add(t, ZS_T_TRACER)) {
		free(t);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	pthread_mutex_lock(&lock);
	zs_tracer_t **p = &tracers;
	while (*p)
		p = &(*p)->next;
	*p = t;
	pthread_mutex_unlock(&lock);
	*phTracer = (zet_tracer_exp_handle_t)t;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_tracer_destroy(zet_tracer_exp_handle_t hTracer)
{
	CHECK_REQUESTED();
	zs_tracer_t *t = (zs_tracer_t *)hTracer;
	pthread_mutex_lock(&lock);
	if (!t || !zs_handle_is(t, ZS_T_TRACER)) {
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	}
	if (t->enabled) {
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	}
	zs_handle_remove(t);
	/* Calls that took a snapshot while t was enabled may still be running its
	 * callbacks; no new call can (t is in no current snapshot). */
	while (in_flight(t)) {
		pthread_mutex_unlock(&lock);
		nanosleep(&(struct timespec){0, 50000}, NULL);
		pthread_mutex_lock(&lock);
	}
	zs_tracer_t **p = &tracers;
	while (*p != t)
		p = &(*p)->next;
	*p = t->next;
	reclaim();
	pthread_mutex_unlock(&lock);
	free(t);
	return ZE_RESULT_SUCCESS;
}

static ze_result_t set_callbacks(zet_tracer_exp_handle_t hTracer, const zet_core_callbacks_t *cbs, bool epilogues)
{
	CHECK_REQUESTED();
	zs_tracer_t *t = (zs_tracer_t *)hTracer;
	if (!t)
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	ZS_CHECK_PTR(cbs);
	ze_result_t r = ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&lock);
	if (!t || !zs_handle_is(t, ZS_T_TRACER)) {
		r = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else {
		ze_callbacks_t *dst = epilogues ? &t->epi : &t->pro;
		ze_callbacks_t old = *dst;
		*dst = *cbs;
		/* An enabled tracer's new callbacks apply to calls that start from now on. */
		if (t->enabled && (r = publish()))
			*dst = old;
	}
	pthread_mutex_unlock(&lock);
	return r;
}

ze_result_t ZE_APICALL zs_tracer_set_prologues(zet_tracer_exp_handle_t hTracer, zet_core_callbacks_t *pCoreCbs)
{
	return set_callbacks(hTracer, pCoreCbs, false);
}

ze_result_t ZE_APICALL zs_tracer_set_epilogues(zet_tracer_exp_handle_t hTracer, zet_core_callbacks_t *pCoreCbs)
{
	return set_callbacks(hTracer, pCoreCbs, true);
}

ze_result_t ZE_APICALL zs_tracer_set_enabled(zet_tracer_exp_handle_t hTracer, ze_bool_t enable)
{
	CHECK_REQUESTED();
	zs_tracer_t *t = (zs_tracer_t *)hTracer;
	ze_result_t r = ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&lock);
	if (!t || !zs_handle_is(t, ZS_T_TRACER)) {
		r = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	} else if (t->enabled != (enable != 0)) {
		t->enabled = enable != 0;
		if ((r = publish()))
			t->enabled = !t->enabled;
	}
	pthread_mutex_unlock(&lock);
	return r;
}
