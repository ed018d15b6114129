/* Tracers, one case per guarantee, for the driver's own tracer (zetTracerExp*,
 * driver/README.md "Driver tracer") and the loader's tracing layer (zelTracer*,
 * both ways of registering callbacks): tracers.h.
 *
 *   usage: e2e_tracer driver|loader|loader-register CASE vadd.elf
 *   off         without the enabling variable, creating a tracer is UNINITIALIZED
 *   disabled    a tracer is created disabled; enabling and disabling it
 *   callbacks   each callback gets the call's params, the result, the tracer's user
 *               data and its own per-call instance-data slot
 *   modify      a prologue that changes a parameter changes the call
 *   order       several tracers: the order of prologues and epilogues
 *   in_use      destroy is refused while the tracer is enabled
 *   destroy     destroy waits for callbacks in flight on another thread
 *   pairs       a tracer disabled (enabled) by another thread during a call still
 *               gets (still does not get) that call's epilogue
 *   newer       (loader-register) an API newer than the 1.0 callback table
 *   both        (driver) the driver tracer and the loader's layer together
 *
 * Where the loader's layer (1.8.12) differs from the driver tracer, the case says
 * so: it calls tracers in the order they were enabled, not created, and does not
 * check tracer handles. */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "tracers.h"

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Waits (10 s at most) until *f == v. */
static void wait_for(atomic_int *f, int v, const char *what)
{
	for (int i = 0; i < 10000 && atomic_load(f) != v; i++)
		sleep_ms(1);
	EXPECT(atomic_load(f) == v, "timed out waiting for %s", what);
}

/* The callbacks seen, as text: "A+" for tracer A's prologue, "A-" for its epilogue. */
static char seq[512];
static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_seq(const char *name, char sign)
{
	pthread_mutex_lock(&seq_lock);
	size_t n = strlen(seq);
	snprintf(seq + n, sizeof(seq) - n, "%s%s%c", n ? " " : "", name, sign);
	pthread_mutex_unlock(&seq_lock);
}

static void expect_seq(const char *want, int line)
{
	if (strcmp(seq, want) != 0) {
		printf("%s:%d: callbacks \"%s\", expected \"%s\"\n", __FILE__, line, seq, want);
		exit(1);
	}
	seq[0] = 0;
}
#define EXPECT_SEQ(want) expect_seq((want), __LINE__)

/* Per tracer: its name, counts and what its last callbacks saw. */
typedef struct rec {
	const char *name;
	atomic_int pro, epi;
	ze_result_t last_result;
	void *prologue_params, *epilogue_params;
	int inst_mismatch;
	atomic_int block_in_prologue; /* "destroy": park the call in its prologue */
	atomic_int parked, release, epilogue_done;
} rec_t;

static ze_kernel_handle_t the_kernel;
static ze_command_list_handle_t the_list;
static const ze_group_count_t *the_groups;

static void ZE_APICALL launch_pro(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
				  void **inst)
{
	rec_t *t = user;
	EXPECT(r == ZE_RESULT_SUCCESS, "a prologue got result %#x", (unsigned)r);
	EXPECT(*inst == NULL, "tracer %s: the instance slot is not fresh", t->name);
	*inst = p; /* this call's own value, checked by the epilogue */
	t->prologue_params = p;
	atomic_fetch_add(&t->pro, 1);
	log_seq(t->name, '+');
}

static void ZE_APICALL launch_epi(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
				  void **inst)
{
	rec_t *t = user;
	if (*inst != p)
		t->inst_mismatch++;
	t->epilogue_params = p;
	t->last_result = r;
	atomic_fetch_add(&t->epi, 1);
	log_seq(t->name, '-');
}

static void ZE_APICALL group_pro(ze_kernel_set_group_size_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	rec_t *t = user;
	atomic_fetch_add(&t->pro, 1);
	if (atomic_load(&t->block_in_prologue)) {
		atomic_store(&t->parked, 1);
		wait_for(&t->release, 1, "the release of the parked call");
	}
}

static void ZE_APICALL group_epi(ze_kernel_set_group_size_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	rec_t *t = user;
	if (atomic_load(&t->block_in_prologue))
		sleep_ms(50); /* destroy must still be waiting when this returns */
	atomic_fetch_add(&t->epi, 1);
	atomic_store(&t->epilogue_done, 1);
}

static void *tracer_tables(void *user, const ze_callbacks_t *pro, const ze_callbacks_t *epi)
{
	void *h;
	CHECK(tr_create(user, &h));
	CHECK(tr_set(h, pro, epi));
	return h;
}

/* A tracer with the recording callbacks above; `launch_prologue` replaces launch_pro. */
static void *tracer_with(rec_t *t, ze_pfnCommandListAppendLaunchKernelCb_t launch_prologue)
{
	ze_callbacks_t pro = {0}, epi = {0};
	pro.CommandList.pfnAppendLaunchKernelCb = launch_prologue;
	epi.CommandList.pfnAppendLaunchKernelCb = launch_epi;
	pro.Kernel.pfnSetGroupSizeCb = group_pro;
	epi.Kernel.pfnSetGroupSizeCb = group_epi;
	return tracer_tables(t, &pro, &epi);
}

static void *tracer(rec_t *t)
{
	return tracer_with(t, launch_pro);
}

static void off(void *h)
{
	CHECK(tr_enable(h, 0));
	CHECK(tr_destroy(h));
}

static ze_result_t launch(void)
{
	return zeCommandListAppendLaunchKernel(the_list, the_kernel, the_groups, NULL, 0, NULL);
}

static void counts(rec_t *t, int pro, int epi, int line)
{
	if (atomic_load(&t->pro) != pro || atomic_load(&t->epi) != epi) {
		printf("%s:%d: tracer %s: %d prologues and %d epilogues, expected %d and %d\n", __FILE__, line, t->name,
		       atomic_load(&t->pro), atomic_load(&t->epi), pro, epi);
		exit(1);
	}
}
#define COUNTS(t, pro, epi) counts((t), (pro), (epi), __LINE__)

/* Callbacks that check the values of their call's parameters, and may replace some. */
typedef struct check_rec {
	ze_command_list_handle_t list;
	ze_kernel_handle_t kernel;
	const ze_group_count_t *groups, *replace_groups;
	const void *replace_arg;
	int calls;
} check_rec_t;

static void ZE_APICALL check_launch_pro(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
					void **inst)
{
	(void)r, (void)inst;
	check_rec_t *c = user;
	EXPECT(*p->phCommandList == c->list && *p->phKernel == c->kernel && *p->ppLaunchFuncArgs == c->groups &&
		       *p->phSignalEvent == NULL && *p->pnumWaitEvents == 0 && *p->pphWaitEvents == NULL,
	       "the prologue's params are not the call's arguments");
	if (c->replace_groups)
		*p->ppLaunchFuncArgs = c->replace_groups;
	c->calls++;
}

static void ZE_APICALL check_launch_epi(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
					void **inst)
{
	(void)r, (void)inst;
	check_rec_t *c = user;
	EXPECT(*p->ppLaunchFuncArgs == (c->replace_groups ? c->replace_groups : c->groups),
	       "the epilogue does not see the parameter the call ran with");
}

static void ZE_APICALL check_setarg_pro(ze_kernel_set_argument_value_params_t *p, ze_result_t r, void *user,
					void **inst)
{
	(void)r, (void)inst;
	check_rec_t *c = user;
	if (*p->pargIndex == 1 && c->replace_arg)
		*p->ppArgValue = c->replace_arg;
}

static void *check_tracer(check_rec_t *c)
{
	ze_callbacks_t pro = {0}, epi = {0};
	pro.CommandList.pfnAppendLaunchKernelCb = check_launch_pro;
	epi.CommandList.pfnAppendLaunchKernelCb = check_launch_epi;
	pro.Kernel.pfnSetArgumentValueCb = check_setarg_pro;
	return tracer_tables(c, &pro, &epi);
}

/* ---- the cases ---- */

static void case_off(void)
{
	rec_t a = {.name = "A"};
	void *h = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, tr_create(&a, &h));
	EXPECT(h == NULL, "a handle came back");
	if (tr_api != TR_DRIVER)
		return;
	/* The driver's other entries say the same, whatever the handle. */
	zet_tracer_exp_handle_t bogus = (zet_tracer_exp_handle_t)&a;
	zet_core_callbacks_t cbs = {0};
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetTracerExpSetPrologues(bogus, &cbs));
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetTracerExpSetEpilogues(bogus, &cbs));
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetTracerExpSetEnabled(bogus, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetTracerExpDestroy(bogus));
}

static void case_disabled(void)
{
	rec_t a = {.name = "A"};
	void *h = tracer(&a);
	CHECK(launch());
	CHECK(zeKernelSetGroupSize(the_kernel, 64, 1, 1));
	COUNTS(&a, 0, 0);
	CHECK(tr_enable(h, 1));
	CHECK(launch());
	COUNTS(&a, 1, 1);
	CHECK(zeKernelSetGroupSize(the_kernel, 64, 1, 1));
	COUNTS(&a, 2, 2);
	CHECK(tr_enable(h, 1)); /* enabling twice is one enable */
	CHECK(launch());
	COUNTS(&a, 3, 3);
	CHECK(tr_enable(h, 0));
	CHECK(launch());
	COUNTS(&a, 3, 3);
	CHECK(tr_enable(h, 1));
	CHECK(launch());
	COUNTS(&a, 4, 4);
	CHECK(tr_enable(h, 0));
	CHECK(tr_destroy(h));
	if (tr_api != TR_DRIVER)
		return;
	/* The driver checks its arguments. */
	zet_tracer_exp_desc_t d = {ZET_STRUCTURE_TYPE_TRACER_EXP_DESC, NULL, NULL};
	zet_tracer_exp_handle_t h2;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetTracerExpCreate(tr_ctx, &d, &h2));
	d.pUserData = &a;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetTracerExpCreate(NULL, &d, &h2));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetTracerExpCreate(tr_ctx, &d, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetTracerExpSetEnabled(NULL, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetTracerExpDestroy(NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zetTracerExpSetPrologues((void *)1, NULL));
}

static void case_callbacks(void)
{
	rec_t a = {.name = "A"}, b = {.name = "B"};
	void *ha = tracer(&a), *hb = tracer(&b);
	/* A third checks the values its params point at; a fourth has no callbacks. */
	check_rec_t cr = {the_list, the_kernel, the_groups, NULL, NULL, 0};
	void *hc = check_tracer(&cr);
	static const ze_callbacks_t none;
	void *hd = tracer_tables(&cr, &none, &none);
	CHECK(tr_enable(ha, 1));
	CHECK(tr_enable(hb, 1));
	CHECK(tr_enable(hc, 1));
	CHECK(tr_enable(hd, 1));
	CHECK(launch());
	COUNTS(&a, 1, 1);
	COUNTS(&b, 1, 1);
	EXPECT(cr.calls == 1, "the checking prologue ran %d times", cr.calls);
	EXPECT(a.last_result == ZE_RESULT_SUCCESS && b.last_result == ZE_RESULT_SUCCESS, "epilogue results %#x %#x",
	       (unsigned)a.last_result, (unsigned)b.last_result);
	EXPECT(a.prologue_params == a.epilogue_params && a.prologue_params == b.prologue_params,
	       "prologues and epilogues of one call got different params");
	EXPECT(a.inst_mismatch == 0 && b.inst_mismatch == 0, "an epilogue did not get its prologue's instance data");
	off(hc);
	/* The result of a failing call reaches every epilogue (a grid of 2^32 groups:
	 * the driver's error, one the validation layer lets through). */
	const ze_group_count_t too_many = {65536, 65536, 1};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendLaunchKernel(the_list, the_kernel, &too_many, NULL, 0, NULL));
	EXPECT(a.last_result == ZE_RESULT_ERROR_INVALID_ARGUMENT && b.last_result == ZE_RESULT_ERROR_INVALID_ARGUMENT,
	       "epilogue results %#x %#x", (unsigned)a.last_result, (unsigned)b.last_result);
	COUNTS(&a, 2, 2);
	COUNTS(&b, 2, 2);
	EXPECT(a.inst_mismatch == 0 && b.inst_mismatch == 0, "an epilogue did not get its prologue's instance data");
	if (tr_api == TR_DRIVER) {
		/* The driver lets an enabled tracer's callbacks change: from the next call on. */
		CHECK(zetTracerExpSetPrologues(ha, (zet_core_callbacks_t *)&none));
		CHECK(launch());
		COUNTS(&a, 2, 3);
		COUNTS(&b, 3, 3);
	}
	off(ha);
	off(hb);
	off(hd);
}

static void case_modify(e2e_t *e, const char *elf)
{
	ze_module_handle_t m = e2e_module(e, elf);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	const uint32_t n = 256;
	float *a = e2e_alloc_shared(e, n * 4), *b = e2e_alloc_shared(e, n * 4), *b2 = e2e_alloc_shared(e, n * 4),
	      *c = e2e_alloc_shared(e, n * 4);
	for (uint32_t i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 1000.0f;
		b2[i] = (float)(3 * i);
		c[i] = -1.0f;
	}
	const ze_group_count_t one = {1, 1, 1}, all = {n / 64, 1, 1};
	check_rec_t cr = {e->list, k, &one, &all, &b2, 0};
	void *h = check_tracer(&cr);
	CHECK(tr_enable(h, 1));

	CHECK(zeKernelSetGroupSize(k, 64, 1, 1));
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &a));
	CHECK(zeKernelSetArgumentValue(k, 1, 8, &b)); /* the prologue makes it b2 */
	CHECK(zeKernelSetArgumentValue(k, 2, 8, &c));
	CHECK(zeKernelSetArgumentValue(k, 3, 4, &n));
	/* One group asked for, all n/64 launched. */
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &one, NULL, 0, NULL));
	e2e_run(e);
	EXPECT(cr.calls == 1, "%d prologue calls", cr.calls);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c[i] == (float)(4 * i), "c[%u] = %g, expected %g (a + b2 over all groups)", i, (double)c[i],
		       (double)(4 * i));
	off(h);
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, b2));
	CHECK(zeMemFree(e->ctx, c));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
}

static void case_order(void)
{
	const int driver = tr_api == TR_DRIVER;
	rec_t a = {.name = "A"}, b = {.name = "B"}, c = {.name = "C"}, d = {.name = "D"};
	void *ha = tracer(&a), *hb = tracer(&b), *hc = tracer(&c);
	/* Enabled in another order than created: the driver calls them in creation
	 * order, the loader's layer in enable order; epilogues in the same order as
	 * prologues. */
	CHECK(tr_enable(hc, 1));
	CHECK(tr_enable(ha, 1));
	CHECK(tr_enable(hb, 1));
	CHECK(launch());
	EXPECT_SEQ(driver ? "A+ B+ C+ A- B- C-" : "C+ A+ B+ C- A- B-");
	CHECK(tr_enable(hb, 0));
	CHECK(launch());
	EXPECT_SEQ(driver ? "A+ C+ A- C-" : "C+ A+ C- A-");
	void *hd = tracer(&d);
	CHECK(tr_enable(hd, 1));
	CHECK(launch());
	EXPECT_SEQ(driver ? "A+ C+ D+ A- C- D-" : "C+ A+ D+ C- A- D-");
	/* A destroyed tracer leaves the others' order alone. */
	CHECK(tr_destroy(hb));
	CHECK(tr_enable(ha, 0));
	CHECK(launch());
	EXPECT_SEQ("C+ D+ C- D-");
	CHECK(tr_destroy(ha));
	off(hc);
	off(hd);
}

static void case_in_use(void)
{
	rec_t a = {.name = "A"};
	void *h = tracer(&a);
	CHECK(tr_enable(h, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, tr_destroy(h));
	CHECK(launch()); /* still there, still enabled */
	COUNTS(&a, 1, 1);
	CHECK(tr_enable(h, 0));
	CHECK(tr_destroy(h));
	CHECK(launch());
	COUNTS(&a, 1, 1);
	if (tr_api != TR_DRIVER)
		return; /* the layer does not check its handles: a destroyed one is a dangling pointer */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetTracerExpSetEnabled(h, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zetTracerExpDestroy(h));
}

typedef struct destroyer {
	void *h;
	rec_t *rec;
	atomic_int done;
	int epilogue_done_at_return;
	ze_result_t result;
} destroyer_t;

static void *group_call(void *arg)
{
	(void)arg;
	CHECK(zeKernelSetGroupSize(the_kernel, 64, 1, 1));
	return NULL;
}

static void *destroy_thread(void *arg)
{
	destroyer_t *d = arg;
	d->result = tr_destroy(d->h);
	d->epilogue_done_at_return = atomic_load(&d->rec->epilogue_done);
	atomic_store(&d->done, 1);
	return NULL;
}

static void case_destroy(void)
{
	rec_t a = {.name = "A"};
	void *h = tracer(&a);
	CHECK(tr_enable(h, 1));
	atomic_store(&a.block_in_prologue, 1);
	pthread_t caller, killer;
	EXPECT(pthread_create(&caller, NULL, group_call, NULL) == 0, "pthread_create");
	wait_for(&a.parked, 1, "the call to reach its prologue");
	CHECK(tr_enable(h, 0));
	destroyer_t d = {h, &a, 0, 0, ZE_RESULT_ERROR_UNKNOWN};
	EXPECT(pthread_create(&killer, NULL, destroy_thread, &d) == 0, "pthread_create");
	sleep_ms(300);
	EXPECT(!atomic_load(&d.done), "the tracer's destroy returned while its prologue was running");
	atomic_store(&a.release, 1);
	pthread_join(caller, NULL);
	pthread_join(killer, NULL);
	EXPECT(d.result == ZE_RESULT_SUCCESS, "destroy returned %#x", (unsigned)d.result);
	EXPECT(d.epilogue_done_at_return, "the tracer's destroy returned before the call's epilogue had run");
	COUNTS(&a, 1, 1);
}

/* "pairs": a helper thread enables or disables a tracer while a call is inside
 * another tracer's prologue (the hook), then the call goes on. */
typedef struct toggle {
	void *target;
	ze_bool_t enable;
	atomic_int go, done;
} toggle_t;

static toggle_t *the_toggle;

static void *toggler(void *arg)
{
	toggle_t *t = arg;
	wait_for(&t->go, 1, "the hook");
	CHECK(tr_enable(t->target, t->enable));
	atomic_store(&t->done, 1);
	return NULL;
}

static void ZE_APICALL hook_pro(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
				void **inst)
{
	launch_pro(p, r, user, inst);
	if (the_toggle) {
		atomic_store(&the_toggle->go, 1);
		wait_for(&the_toggle->done, 1, "the other thread's enable or disable");
	}
}

static void toggle_during_call(void *target, ze_bool_t enable)
{
	toggle_t t = {target, enable, 0, 0};
	pthread_t th;
	the_toggle = &t;
	EXPECT(pthread_create(&th, NULL, toggler, &t) == 0, "pthread_create");
	CHECK(launch());
	pthread_join(th, NULL);
	the_toggle = NULL;
}

static void case_pairs(void)
{
	/* The hook H is created and enabled first, so its prologue runs before T's
	 * in either order. */
	rec_t hr = {.name = "H"}, tr = {.name = "T"}, ur = {.name = "U"};
	void *h = tracer_with(&hr, hook_pro), *t = tracer(&tr), *u = tracer(&ur);
	CHECK(tr_enable(h, 1));
	/* T enabled before the call, disabled during it: its epilogue still comes. */
	CHECK(tr_enable(t, 1));
	toggle_during_call(t, 0);
	EXPECT_SEQ("H+ T+ H- T-");
	COUNTS(&tr, 1, 1);
	CHECK(launch());
	EXPECT_SEQ("H+ H-");
	/* U disabled before the call, enabled during it: no epilogue without a prologue. */
	toggle_during_call(u, 1);
	EXPECT_SEQ("H+ H-");
	COUNTS(&ur, 0, 0);
	CHECK(launch());
	EXPECT_SEQ("H+ U+ H- U-");
	COUNTS(&ur, 1, 1);
	off(h);
	CHECK(tr_destroy(t));
	off(u);
}

static int newer_calls[2];

static void ZE_APICALL create_ex_cb(ze_context_create_ex_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)inst;
	newer_calls[r == ZE_RESULT_SUCCESS && *p->pphContext && **p->pphContext ? 1 : 0] += user != NULL;
}

static void case_newer(e2e_t *e)
{
	EXPECT(tr_api == TR_LOADER_REGISTER, "newer: loader-register only");
	void *h;
	CHECK(tr_create(newer_calls, &h));
	CHECK(zelTracerContextCreateExRegisterCallback(h, ZEL_REGISTER_PROLOGUE, create_ex_cb));
	CHECK(zelTracerContextCreateExRegisterCallback(h, ZEL_REGISTER_EPILOGUE, create_ex_cb));
	CHECK(tr_enable(h, 1));
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	ze_context_handle_t c = NULL;
	CHECK(zeContextCreateEx(e->drv, &cd, 1, &e->dev, &c));
	EXPECT(newer_calls[0] == 1 && newer_calls[1] == 1, "zeContextCreateEx callbacks: %d before, %d after",
	       newer_calls[0], newer_calls[1]);
	CHECK(zeContextDestroy(c));
	off(h);
}

/* "both": the loader's layer wraps the driver's wrappers. */
typedef struct loader_rec {
	rec_t rec; /* first: launch_epi takes the user data as a rec_t */
	const ze_group_count_t *replace_groups;
} loader_rec_t;

static void ZE_APICALL loader_pro(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
				  void **inst)
{
	loader_rec_t *l = user;
	launch_pro(p, r, &l->rec, inst);
	*p->ppLaunchFuncArgs = l->replace_groups;
}

static void case_both(void)
{
	EXPECT(tr_api == TR_DRIVER, "both: driver only");
	const ze_group_count_t one = {1, 1, 1}, two = {2, 1, 1};
	loader_rec_t lr = {{.name = "L"}, &two};
	zel_tracer_desc_t ld = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, &lr};
	zel_tracer_handle_t l;
	CHECK(zelTracerCreate(&ld, &l));
	zel_core_callbacks_t lpro = {0}, lepi = {0};
	lpro.CommandList.pfnAppendLaunchKernelCb = loader_pro;
	lepi.CommandList.pfnAppendLaunchKernelCb = launch_epi;
	CHECK(zelTracerSetPrologues(l, &lpro));
	CHECK(zelTracerSetEpilogues(l, &lepi));
	CHECK(zelTracerSetEnabled(l, 1));
	/* The driver tracer checks the arguments: the group count is the loader
	 * prologue's replacement. */
	check_rec_t dc = {the_list, the_kernel, &two, NULL, NULL, 0};
	void *d = check_tracer(&dc);
	rec_t dr = {.name = "D"};
	void *d2 = tracer(&dr);
	CHECK(tr_enable(d, 1));
	CHECK(tr_enable(d2, 1));
	the_groups = &one;
	CHECK(launch());
	EXPECT_SEQ("L+ D+ D- L-");
	EXPECT(dc.calls == 1, "the driver tracer's prologue ran %d times", dc.calls);
	/* Each side's enable is its own. */
	CHECK(tr_enable(d, 0));
	CHECK(tr_enable(d2, 0));
	CHECK(launch());
	EXPECT_SEQ("L+ L-");
	CHECK(zelTracerSetEnabled(l, 0));
	CHECK(tr_enable(d2, 1));
	CHECK(launch());
	EXPECT_SEQ("D+ D-");
	CHECK(tr_enable(d2, 0));
	CHECK(zelTracerDestroy(l));
	CHECK(tr_destroy(d));
	CHECK(tr_destroy(d2));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 4, "usage: e2e_tracer driver|loader|loader-register CASE vadd.elf");
	const char *c = argv[2];
	e2e_t e;
	e2e_init(&e);
	tr_select(argv[1], e.ctx);
	ze_module_handle_t m = e2e_module(&e, argv[3]);
	the_kernel = e2e_kernel(m, "vadd");
	the_list = e.list;
	static const ze_group_count_t one = {1, 1, 1};
	the_groups = &one;
	CHECK(zeKernelSetGroupSize(the_kernel, 64, 1, 1));

	if (strcmp(c, "off") == 0)
		case_off();
	else if (strcmp(c, "disabled") == 0)
		case_disabled();
	else if (strcmp(c, "callbacks") == 0)
		case_callbacks();
	else if (strcmp(c, "modify") == 0)
		case_modify(&e, argv[3]);
	else if (strcmp(c, "order") == 0)
		case_order();
	else if (strcmp(c, "in_use") == 0)
		case_in_use();
	else if (strcmp(c, "destroy") == 0)
		case_destroy();
	else if (strcmp(c, "pairs") == 0)
		case_pairs();
	else if (strcmp(c, "newer") == 0)
		case_newer(&e);
	else if (strcmp(c, "both") == 0)
		case_both();
	else
		EXPECT(0, "unknown case %s", c);

	/* The appended launches never ran: the list is just reset. */
	CHECK(zeCommandListReset(e.list));
	CHECK(zeKernelDestroy(the_kernel));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("tracer %s %s: passed", argv[1], c);
	return 0;
}
