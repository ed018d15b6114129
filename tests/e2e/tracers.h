/* The three ways of tracing the tests exercise, behind one face:
 *   driver           the driver's own tracer, zetTracerExp* (ZET_ENABLE_API_TRACING_EXP=1)
 *   loader           the loader's tracing layer, callbacks set with zelTracerSetPrologues/
 *                    Epilogues (ZE_ENABLE_TRACING_LAYER=1)
 *   loader-register  the same layer, callbacks set one by one with
 *                    zelTracer<Api>RegisterCallback
 * Tracer handles are void * here. */
#ifndef TRACERS_H
#define TRACERS_H

#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/zet_api.h>

#include "e2e.h"

typedef enum tr_api { TR_DRIVER, TR_LOADER, TR_LOADER_REGISTER } tr_api_t;

static tr_api_t tr_api;
static ze_context_handle_t tr_ctx; /* the driver tracer's context */

static inline void tr_select(const char *name, ze_context_handle_t ctx)
{
	if (strcmp(name, "driver") == 0)
		tr_api = TR_DRIVER;
	else if (strcmp(name, "loader") == 0)
		tr_api = TR_LOADER;
	else if (strcmp(name, "loader-register") == 0)
		tr_api = TR_LOADER_REGISTER;
	else
		EXPECT(0, "unknown tracing API %s (driver, loader, loader-register)", name);
	tr_ctx = ctx;
}

static inline ze_result_t tr_create(void *user, void **h)
{
	if (tr_api == TR_DRIVER) {
		zet_tracer_exp_desc_t d = {ZET_STRUCTURE_TYPE_TRACER_EXP_DESC, NULL, user};
		return zetTracerExpCreate(tr_ctx, &d, (zet_tracer_exp_handle_t *)h);
	}
	zel_tracer_desc_t d = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, user};
	return zelTracerCreate(&d, (zel_tracer_handle_t *)h);
}

/* Registers one callback table, entry by entry; only the entries the tests use
 * are known here, any other non-NULL one fails the test. */
static inline ze_result_t tr_register(void *h, zel_tracer_reg_t which, const ze_callbacks_t *cbs)
{
	ze_callbacks_t rest = *cbs;
	ze_result_t r = ZE_RESULT_SUCCESS;
#define TR_REG(DOM, FN)                                                                                               \
	if (cbs->DOM.pfn##FN##Cb && r == ZE_RESULT_SUCCESS)                                                           \
		r = zelTracer##DOM##FN##RegisterCallback(h, which, cbs->DOM.pfn##FN##Cb);                             \
	rest.DOM.pfn##FN##Cb = NULL;
	TR_REG(CommandList, AppendLaunchKernel)
	TR_REG(Kernel, SetGroupSize)
	TR_REG(Kernel, SetArgumentValue)
#undef TR_REG
	static const ze_callbacks_t none;
	EXPECT(memcmp(&rest, &none, sizeof(none)) == 0, "tr_register: a callback this test cannot register");
	return r;
}

static inline ze_result_t tr_set(void *h, const ze_callbacks_t *pro, const ze_callbacks_t *epi)
{
	ze_callbacks_t p = *pro, e = *epi;
	ze_result_t r;
	switch (tr_api) {
	case TR_DRIVER:
		r = zetTracerExpSetPrologues(h, &p);
		return r ? r : zetTracerExpSetEpilogues(h, &e);
	case TR_LOADER:
		r = zelTracerSetPrologues(h, &p);
		return r ? r : zelTracerSetEpilogues(h, &e);
	default:
		r = tr_register(h, ZEL_REGISTER_PROLOGUE, &p);
		return r ? r : tr_register(h, ZEL_REGISTER_EPILOGUE, &e);
	}
}

static inline ze_result_t tr_enable(void *h, ze_bool_t on)
{
	return tr_api == TR_DRIVER ? zetTracerExpSetEnabled(h, on) : zelTracerSetEnabled(h, on);
}

static inline ze_result_t tr_destroy(void *h)
{
	return tr_api == TR_DRIVER ? zetTracerExpDestroy(h) : zelTracerDestroy(h);
}

#endif
