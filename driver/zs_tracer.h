/* The driver-level API tracer (zetTracerExp*, driver/README.md "Driver tracer").
 *
 * Active only when ZET_ENABLE_API_TRACING_EXP=1 when the loader first asks for
 * the dispatch tables (inside the application's first zeInit).  Then every entry
 * that ze_callbacks_t names is a generated wrapper (zs_tracer_gen.c, from
 * gen_tracer.py) that expands ZS_TRACE_CALL; otherwise the tables hold the
 * driver's functions and tracing costs nothing.
 *
 * A call takes a snapshot of the enabled tracers at entry: an immutable array,
 * in creation order, of each enabled tracer's prologues, epilogues and user data.
 * It runs every prologue of the snapshot, the driver's function, then every
 * epilogue of the same snapshot, so the two come in pairs whatever another
 * thread enables or disables meanwhile.  The snapshot is protected by a hazard
 * pointer of the calling thread; zetTracerExpDestroy waits until no thread
 * holds a snapshot that names the tracer. */
#ifndef ZS_TRACER_H
#define ZS_TRACER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

typedef struct zs_tracer zs_tracer_t;

typedef struct zs_trace_entry {
	ze_callbacks_t pro, epi;
	void *user;
	zs_tracer_t *owner;
} zs_trace_entry_t;

typedef struct zs_trace_snap {
	struct zs_trace_snap *next_retired;
	uint32_t n;
	zs_trace_entry_t e[];
} zs_trace_snap_t;

/* The snapshot new calls take; &zs_trace_none (n = 0) while no tracer is enabled. */
extern _Atomic(zs_trace_snap_t *) zs_trace_active __attribute__((visibility("hidden")));
extern zs_trace_snap_t zs_trace_none __attribute__((visibility("hidden")));

/* ZET_ENABLE_API_TRACING_EXP=1, read once. */
bool zs_tracer_requested(void);

/* The calling thread's snapshot, published in its hazard pointer, and its
 * per-tracer instance-data slots (*inst, s->n of them, the thread's own: calls
 * made from inside a callback are not traced, so a thread is in at most one
 * traced call); or NULL: no tracer enabled, a call from inside a callback (as
 * in the loader's layer), or no memory for the thread's record. */
zs_trace_snap_t *zs_trace_enter_slow(void ***inst);
void zs_trace_leave(void);

/* No tracer enabled: the wrapper goes straight to the driver's function (a
 * relaxed load, so a call that races with the first enable may go untraced,
 * as if it had started before it). */
static inline bool zs_trace_idle(void)
{
	return atomic_load_explicit(&zs_trace_active, memory_order_relaxed) == &zs_trace_none;
}

/* The traced part of a wrapper, kept out of the idle path. */
#define ZS_TRACE_SLOW __attribute__((noinline, cold)) ZE_APICALL

/* The body of a wrapper: `params` points at the wrapper's own arguments, and CALL
 * reads those arguments, so a prologue that changes a parameter changes the call.
 * Prologues get ZE_RESULT_SUCCESS as the result (as in the loader's layer). */
#define ZS_TRACE_CALL(params, DOM, FN, CALL)                                                                          \
	do {                                                                                                          \
		void **inst_;                                                                                         \
		zs_trace_snap_t *s_ = zs_trace_enter_slow(&inst_);                                                    \
		if (!s_)                                                                                              \
			return CALL;                                                                                  \
		for (uint32_t i_ = 0; i_ < s_->n; i_++) {                                                             \
			inst_[i_] = NULL;                                                                             \
			if (s_->e[i_].pro.DOM.pfn##FN##Cb)                                                            \
				s_->e[i_].pro.DOM.pfn##FN##Cb(&(params), ZE_RESULT_SUCCESS, s_->e[i_].user,          \
							       &inst_[i_]);                                           \
		}                                                                                                     \
		ze_result_t r_ = CALL;                                                                                \
		for (uint32_t i_ = 0; i_ < s_->n; i_++)                                                               \
			if (s_->e[i_].epi.DOM.pfn##FN##Cb)                                                            \
				s_->e[i_].epi.DOM.pfn##FN##Cb(&(params), r_, s_->e[i_].user, &inst_[i_]);            \
		zs_trace_leave();                                                                                     \
		return r_;                                                                                            \
	} while (0)

/* Save the driver's entry and put the wrapper in its place (entries the driver
 * leaves NULL stay NULL: the loader answers those itself). */
#define ZS_TRACE_WRAP(t, DOM, FN)                                                                                     \
	do {                                                                                                          \
		if ((t)->pfn##FN) {                                                                                   \
			direct.DOM.pfn##FN = (t)->pfn##FN;                                                            \
			(t)->pfn##FN = trace_##DOM##_##FN;                                                            \
		}                                                                                                     \
	} while (0)

/* zetTracerExp*: without ZET_ENABLE_API_TRACING_EXP=1 they return
 * ZE_RESULT_ERROR_UNINITIALIZED (the tracing support was not initialised at zeInit). */
ze_result_t ZE_APICALL zs_tracer_create(zet_context_handle_t hContext, const zet_tracer_exp_desc_t *desc,
					zet_tracer_exp_handle_t *phTracer);
ze_result_t ZE_APICALL zs_tracer_destroy(zet_tracer_exp_handle_t hTracer);
ze_result_t ZE_APICALL zs_tracer_set_prologues(zet_tracer_exp_handle_t hTracer, zet_core_callbacks_t *pCoreCbs);
ze_result_t ZE_APICALL zs_tracer_set_epilogues(zet_tracer_exp_handle_t hTracer, zet_core_callbacks_t *pCoreCbs);
ze_result_t ZE_APICALL zs_tracer_set_enabled(zet_tracer_exp_handle_t hTracer, ze_bool_t enable);

#endif
