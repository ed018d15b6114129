/* Exec queues, jobs and the scheduler on the ring: in-order queues, parking at semaphores, time
 * slices, EU faults, engine errors, the job timeout, user fences (docs/kmd.md §5-§8; docs/uapi.md §7-§9). */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void zk_queue_unref(zk_kmd_t *k, zk_queue_t *q)
{
	if (--q->refs)
		return;
	zk_vm_unref(k, q->vm);
	k->st.queues--;
	q->owner->nqueues--;
	free(q);
}

void zk_job_free(zk_kmd_t *k, zk_job_t *j)
{
	/* The device may still hold a saved state of this job (it was preempted
	 * and then cancelled, or killed before its CTX_ID load restored it):
	 * drop it.  Only the oldest job of a queue ever runs, so a state saved
	 * for the queue's context can only be this job's. */
	zs_hw_mmio_write(k->hw, ZS_REG_CTX_DISCARD, j->q->ctx_id);
	zk_queue_unref(k, j->q);
	k->st.jobs--;
	free(j);
}

int zk_ioctl_exec(ZK_IOCTL_ARGS)
{
	struct drm_zesim_exec *e = arg;
	zk_kmd_t *k = f->kmd;
	if (e->extensions || !zk_all_zero(e->pad, sizeof(e->pad)) || !CHECK_RESERVED(e))
		return -EINVAL;
	zk_queue_t *q = zk_handle_get(&f->queues, e->exec_queue_id);
	if (!q)
		return -ENOENT;
	if (q->banned)
		return -ECANCELED;
	if (e->num_batch_buffer != 1 || !e->address || (e->address & 3) || e->address >= VA_LIMIT ||
	    e->num_syncs > MAX_SYNCS)
		return -EINVAL;
	const struct drm_zesim_sync *syncs = NULL;
	if (e->num_syncs) {
		if (nin < 1 || in[0].len != e->num_syncs * sizeof(*syncs))
			return -EFAULT;
		syncs = (const void *)in[0].data;
		int rc = zk_check_syncs(syncs, e->num_syncs);
		if (rc)
			return rc;
	}
	zk_job_t *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->file = f;
	j->q = q;
	q->refs++;
	j->batch = e->address;
	j->nsyncs = e->num_syncs;
	for (uint32_t i = 0; i < e->num_syncs; i++) {
		j->sync_addr[i] = syncs[i].addr;
		j->sync_value[i] = syncs[i].timeline_value;
	}
	if (k->tail)
		k->tail->next = j;
	else
		k->head = j;
	k->tail = j;
	k->st.jobs++;
	zk_service(k);
	return 0;
}

static int fence_check(zk_kmd_t *k, zk_queue_t *q, const struct drm_zesim_wait_user_fence *w)
{
	const uint8_t *p = zk_vm_ptr(k, q->vm, w->addr, 0);
	if (!p)
		return -EFAULT;
	uint64_t v = __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE) & w->mask;
	uint64_t want = w->value & w->mask;
	int ok;
	switch (w->op) {
	case ZESIM_UFENCE_OP_EQ: ok = v == want; break;
	case ZESIM_UFENCE_OP_NEQ: ok = v != want; break;
	case ZESIM_UFENCE_OP_GT: ok = v > want; break;
	case ZESIM_UFENCE_OP_GTE: ok = v >= want; break;
	case ZESIM_UFENCE_OP_LT: ok = v < want; break;
	default: ok = v <= want; break;
	}
	if (ok)
		return 0;
	return q->banned ? -EIO : ZK_PENDING;
}

int zk_ioctl_wait_user_fence(ZK_IOCTL_ARGS)
{
	struct drm_zesim_wait_user_fence *w = arg;
	if (w->extensions || w->flags || w->pad || w->pad2 || !CHECK_RESERVED(w) || w->op > ZESIM_UFENCE_OP_LTE ||
	    (w->addr & 7) || !w->addr || w->addr >= VA_LIMIT)
		return -EINVAL;
	zk_queue_t *q = zk_handle_get(&f->queues, w->exec_queue_id);
	if (!q)
		return -ENOENT;
	return fence_check(f->kmd, q, w);
}

int zk_wait_check(zk_file_t *f, const void *arg)
{
	const struct drm_zesim_wait_user_fence *w = arg;
	zk_queue_t *q = zk_handle_get(&f->queues, w->exec_queue_id);
	if (!q)
		return -ENOENT;
	return fence_check(f->kmd, q, w);
}

static void ring_emit(zk_kmd_t *k, const uint32_t *dw, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		memcpy(k->phys + RING_PA + k->ring_tail, &dw[i], 4);
		k->ring_tail = (k->ring_tail + 4) % RING_SIZE;
	}
}

uint64_t zk_now_ns(zk_kmd_t *k)
{
	if (k->clock)
		return k->clock(k->clock_ctx);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void submit(zk_kmd_t *k, zk_job_t *j)
{
	const uint64_t root = j->q->vm->root;
	zk_debug_submit(k, j); /* the debug registers (debug.c) */
	const uint32_t head[] = {
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_PT_ROOT_LO, (uint32_t)root,
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_PT_ROOT_HI, (uint32_t)(root >> 32),
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_ID, j->q->ctx_id,
		ZS_CMD_HEADER(ZS_CMD_BATCH_START, 3), (uint32_t)j->batch, (uint32_t)(j->batch >> 32),
	};
	ring_emit(k, head, sizeof(head) / 4 - (j->batch_done ? 3 : 0));
	for (uint32_t i = 0; i < j->nsyncs; i++) {
		const uint32_t st[] = {ZS_CMD_HEADER(ZS_CMD_STORE_DATA64, 5), (uint32_t)j->sync_addr[i],
				       (uint32_t)(j->sync_addr[i] >> 32), (uint32_t)j->sync_value[i],
				       (uint32_t)(j->sync_value[i] >> 32)};
		ring_emit(k, st, 5);
	}
	zs_hw_mmio_write(k->hw, ZS_REG_RING_TAIL, k->ring_tail);
	k->running = j;
	k->charged_at = zk_now_ns(k);
	k->slice_start = zk_read_counter(k, ZS_REG_GT_CYCLES_LO);
}

void zk_reset_engine(zk_kmd_t *k)
{
	zs_hw_mmio_write(k->hw, ZS_REG_ENGINE_RESET, 1); /* ring disabled */
	k->ring_tail = 0;
	zs_hw_mmio_write(k->hw, ZS_REG_RING_TAIL, 0);
	zs_hw_mmio_write(k->hw, ZS_REG_RING_CTL, 1); /* enabling sets HEAD = 0 = TAIL */
	k->st.engine_resets++;
}

/* Cancel the jobs in the FIFO of queue q, or else of file f. */
void zk_cancel_queued(zk_kmd_t *k, const zk_queue_t *q, const zk_file_t *f)
{
	for (zk_job_t **pj = &k->head; *pj;) {
		zk_job_t *j = *pj;
		if (q ? j->q == q : j->file == f) {
			*pj = j->next;
			zk_job_free(k, j);
			k->st.jobs_cancelled++;
		} else {
			pj = &j->next;
		}
	}
	k->tail = k->head;
	while (k->tail && k->tail->next)
		k->tail = k->tail->next;
}

static uint32_t queue_handle(const zk_job_t *j)
{
	for (uint32_t i = 0; i < j->file->queues.n; i++)
		if (j->file->queues.slot[i] == j->q)
			return i + 1;
	return 0;
}

/* Fail the running job (an engine error or the job timeout, §7): ban its
 * queue, reset the engine, cancel the queue's jobs in the FIFO.  Its fences
 * stay unwritten, so waiters on them get -EIO. */
static void fail_running(zk_kmd_t *k)
{
	zk_queue_t *q = k->running->q;
	q->banned = 1;
	zk_reset_engine(k);
	k->st.jobs_cancelled++;
	zk_cancel_queued(k, q, NULL);
	zk_job_free(k, k->running);
	k->running = NULL;
}

static int gt_busy(zk_kmd_t *k)
{
	return ZS_FIELD_GET(zs_hw_mmio_read(k->hw, ZS_REG_GT_STATUS), GT_STATUS, BUSY);
}

/* The job timeout that applies to j: its client's, else the KMD's. */
static uint64_t timeout_ns(const zk_kmd_t *k, const zk_job_t *j)
{
	return j->file->job_timeout_ns != ~0ull ? j->file->job_timeout_ns : k->job_timeout_ns;
}

/* The job timeout (§6): charge the running job for the host time since it
 * was last charged, unless it is blocked (stopped at a false SEMAPHORE_WAIT
 * with the GT idle: waiting, not working); true when it is over the limit. */
static int charge_running(zk_kmd_t *k, uint32_t status)
{
	const uint64_t t = zk_now_ns(k);
	zk_job_t *j = k->running;
	if (status != ZS_ENGINE_WAITING || gt_busy(k))
		j->busy_ns += t - k->charged_at;
	k->charged_at = t;
	return timeout_ns(k, j) && j->busy_ns > timeout_ns(k, j);
}

/* One line on the daemon's stderr (the kernel log of this KMD). */
static void report_timeout(zk_kmd_t *k)
{
	const zk_job_t *j = k->running;
	const uint32_t handle = queue_handle(j);
	const uint64_t kernel = zk_read_counter(k, ZS_REG_WALKER_KERNEL_LO);
	char where[64] = "";
	if (kernel)
		snprintf(where, sizeof(where), " in the kernel at 0x%llx", (unsigned long long)kernel);
	fprintf(stderr,
		"zesim-gpu: job timeout: pid %d, exec queue %u, context %u: the job kept the engine busy%s for more "
		"than job_timeout_ms = %llu ms; queue banned, engine reset (raise the limit with `zesim run --timeout "
		"SECONDS`, ZESIM_JOB_TIMEOUT_MS in the program's environment, or the daemon's job_timeout_ms; 0 = none)\n",
		j->file->pid, handle, j->q->ctx_id, where, (unsigned long long)(timeout_ns(k, j) / 1000000));
	fflush(stderr);
}

/* Whether the FIFO holds a job of another queue than q: only then is it
 * worth taking the engine from q's job. */
static int other_queue_waits(const zk_kmd_t *k, const zk_queue_t *q)
{
	for (const zk_job_t *j = k->head; j; j = j->next)
		if (j->q != q)
			return 1;
	return 0;
}

/* Put job j (just taken off the engine) back in the FIFO without letting any
 * later job of its own queue pass it (docs/kmd.md §5): j and every queued job
 * of its queue move, in their order, to the tail.  Other queues' jobs keep
 * their places ahead of them. */
static void requeue_in_order(zk_kmd_t *k, zk_job_t *j)
{
	zk_job_t *mine = j, **mt = &j->next;
	j->next = NULL;
	for (zk_job_t **pj = &k->head; *pj;) {
		zk_job_t *x = *pj;
		if (x->q == j->q) {
			*pj = x->next;
			x->next = NULL;
			*mt = x;
			mt = &x->next;
		} else {
			pj = &x->next;
		}
	}
	zk_job_t **pt = &k->head;
	while (*pt)
		pt = &(*pt)->next;
	*pt = mine;
	k->tail = mine;
	while (k->tail->next)
		k->tail = k->tail->next;
}

/* An EU fault (§8): the device latched the first exception that ended a
 * thread in FAULT_*; log it (the kernel log of this KMD) and, in the default
 * mode, fail the job that caused it.  Returns 1 when the running job failed. */
static int handle_eu_fault(zk_kmd_t *k)
{
	const uint32_t st = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_STATUS);
	if (!ZS_FIELD_GET(st, FAULT_STATUS, VALID))
		return 0;
	static const char *const exc_names[] = {"breakpoint", "illegal instruction", "page fault", "misaligned access",
						 "stack overflow/underflow", "SLM out of bounds"};
	static const char *const pf_reasons[] = {"", "not present", "read-only", "bad physical address",
						 "non-canonical address"};
	const uint32_t bits = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_EXCEPTION);
	const uint64_t addr = zk_read_counter(k, ZS_REG_FAULT_ADDR_LO);
	const uint64_t kernel = zk_read_counter(k, ZS_REG_FAULT_KERNEL_LO);
	const uint64_t ib = zk_read_counter(k, ZS_REG_FAULT_IB_LO);
	const uint32_t ip = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_IP), thread = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_THREAD);
	const uint32_t ctx = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_CTX), reason = ZS_FIELD_GET(st, FAULT_STATUS, REASON);
	zs_hw_mmio_write(k->hw, ZS_REG_FAULT_STATUS, st);
	k->st.eu_faults++;
	const char *what = "exception";
	for (unsigned b = 0; b < sizeof(exc_names) / sizeof(exc_names[0]); b++)
		if (bits >> b & 1) {
			what = exc_names[b];
			break;
		}
	char detail[96] = "";
	if (bits >> 2 & 1)
		snprintf(detail, sizeof(detail), " (%s, %s)", reason < 5 ? pf_reasons[reason] : "?",
			 ZS_FIELD_GET(st, FAULT_STATUS, WRITE) ? "write" : "read");
	const zk_job_t *j = k->running && k->running->q->ctx_id == ctx ? k->running : NULL;
	const int fail = j && k->fault_mode == ZK_FAULT_FAIL;
	/* The thread may have been in code it reached by calla (docs/isa.md 3.5). */
	char where[96];
	if (ib == kernel || ib == 0) /* 0: hardware without the register */
		snprintf(where, sizeof(where), "kernel at 0x%llx + 0x%x", (unsigned long long)kernel, ip);
	else
		snprintf(where, sizeof(where), "kernel at 0x%llx, in code at 0x%llx + 0x%x", (unsigned long long)kernel,
			 (unsigned long long)ib, ip);
	char who[96] = "no running job";
	if (j)
		snprintf(who, sizeof(who), "pid %d, exec queue %u", j->file->pid, queue_handle(j));
	fprintf(stderr,
		"zesim-gpu: GPU fault: %s%s at address 0x%llx, %s, EU %u thread %u, context %u "
		"(%s), engine compute0%s: %s\n",
		what, detail, (unsigned long long)addr, where, ZS_FIELD_GET(thread, FAULT_THREAD, EU),
		ZS_FIELD_GET(thread, FAULT_THREAD, SLOT), ctx, who, ZS_FIELD_GET(st, FAULT_STATUS, MORE) ? ", more faults followed" : "",
		fail ? "job failed, queue banned, engine reset (fault_mode fail)"
		     : "the job goes on without the thread (fault_mode continue)");
	fflush(stderr);
	if (!fail)
		return 0;
	k->st.jobs_faulted++;
	fail_running(k);
	return 1;
}

/* The interrupt handler (installed at zk_create): it only notes what fired;
 * zk_service does the work, as a Linux KMD's handler defers to a worker. */
void zk_irq_handler(void *ctx, uint32_t pending)
{
	zk_kmd_t *k = ctx;
	k->irq_seen |= pending;
}

/* Park the running job after a preemption (the engine is idle): it and its
 * queue's queued jobs go to the tail of the FIFO. */
static void park_running(zk_kmd_t *k)
{
	zk_job_t *j = k->running;
	k->running = NULL;
	requeue_in_order(k, j);
	k->ring_tail = zs_hw_mmio_read(k->hw, ZS_REG_RING_HEAD);
}

void zk_service(zk_kmd_t *k)
{
	/* Interrupts: acknowledge what fired, then act on it. */
	const uint32_t irqs = k->irq_seen;
	k->irq_seen = 0;
	if (irqs)
		zs_hw_mmio_write(k->hw, ZS_REG_IRQ_STATUS, irqs);
	if (irqs & ZS_IRQ_DEBUG)
		zk_debug_irq(k); /* before the fault: a page-fault stop's address is in FAULT_* */
	if (irqs & ZS_IRQ_PAGE_FAULT)
		handle_eu_fault(k);
	if (irqs & ZS_IRQ_OA_BUFFER)
		zk_oa_irq(k);
	if (k->running && (irqs & ZS_IRQ_ENGINE_ERROR) &&
	    zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS) == ZS_ENGINE_ERROR) {
		fail_running(k);
	} else if (k->running && (irqs & ZS_IRQ_ENGINE_IDLE) &&
		   zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS) == ZS_ENGINE_IDLE &&
		   zs_hw_mmio_read(k->hw, ZS_REG_RING_HEAD) == k->ring_tail) {
		/* The ring drained and every piece of work completed. */
		k->st.jobs_completed++;
		zk_job_free(k, k->running);
		k->running = NULL;
	}
	if (k->running) {
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		if (status == ZS_ENGINE_WAITING && other_queue_waits(k, k->running->q) && !gt_busy(k)) {
			/* The job waits on a semaphore that another queue's work may
			 * release (as Xe time-slices), and none of its walkers runs:
			 * park it at its SEMAPHORE_WAIT and run the other work.  Its
			 * own queue's later jobs stay behind it (in-order queues). */
			zs_hw_mmio_write(k->hw, ZS_REG_CS_PREEMPT, ZS_FIELD_MASK(CS_PREEMPT, AT_SEMAPHORE));
			const uint64_t at = zk_read_counter(k, ZS_REG_PREEMPT_ADDR_LO);
			if (at) {
				k->running->batch = at;
				park_running(k);
				k->st.preemptions++;
			}
		}
	}
	if (k->running && zk_debug_hold(k)) {
		/* Threads stopped for the debugger (docs/kmd.md §14): neither the time
		 * slice nor the job timeout runs while any of them is in attention. */
		k->charged_at = zk_now_ns(k);
		k->slice_start = zk_read_counter(k, ZS_REG_GT_CYCLES_LO);
		return;
	}
	if (k->running && k->timeslice_cycles && other_queue_waits(k, k->running->q)) {
		/* Time slicing: the job has had the engine for a quantum of
		 * simulated work while another queue's job waits.  Preempt it where
		 * it stands (its GT state saved for its context) and requeue it. */
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		const uint64_t cycles = zk_read_counter(k, ZS_REG_GT_CYCLES_LO);
		if (status != ZS_ENGINE_ERROR && cycles - k->slice_start >= k->timeslice_cycles &&
		    zs_hw_mmio_read(k->hw, ZS_REG_CTX_IMAGES) < ZK_MAX_SAVED_CONTEXTS) {
			zs_hw_mmio_write(k->hw, ZS_REG_CS_PREEMPT, ZS_FIELD_MASK(CS_PREEMPT, ANYWHERE));
			const uint32_t where = zs_hw_mmio_read(k->hw, ZS_REG_PREEMPT_STATUS);
			if (where) {
				zk_job_t *j = k->running;
				if (where == 1)
					j->batch = zk_read_counter(k, ZS_REG_PREEMPT_ADDR_LO);
				else if (where == 2)
					j->batch_done = 1;
				charge_running(k, status);
				park_running(k);
				k->st.timeslices++;
			} else {
				k->slice_start = cycles; /* idle or halted already: nothing to preempt */
			}
		}
	}
	if (k->running) {
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		if (status != ZS_ENGINE_ERROR && charge_running(k, status)) {
			report_timeout(k);
			k->st.jobs_timed_out++;
			fail_running(k);
		} else {
			return; /* busy, waiting on a semaphore, or halted until its interrupt is seen */
		}
	}
	if (!k->head)
		return;
	zk_job_t *j = k->head;
	k->head = j->next;
	if (!k->head)
		k->tail = NULL;
	submit(k, j);
}

int zk_idle(zk_kmd_t *k) { return !k->running && !k->head; }

int zk_ioctl_exec_queue_create(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_exec_queue_create *c = arg;
	if (c->extensions || c->flags || c->exec_queue_id || !CHECK_RESERVED(c) || c->width != 1 ||
	    c->num_placements != 1)
		return -EINVAL;
	zk_vm_t *vm = zk_handle_get(&f->vms, c->vm_id);
	if (!vm)
		return -ENOENT;
	if (nin < 1 || in[0].len != sizeof(struct drm_zesim_engine_class_instance))
		return -EFAULT;
	const struct drm_zesim_engine_class_instance *e = (const void *)in[0].data;
	if (e->engine_class != ZESIM_ENGINE_CLASS_COMPUTE || e->engine_instance || e->gt_id || e->pad)
		return -EINVAL;
	if (k->limits.queues_per_file && f->nqueues >= k->limits.queues_per_file)
		return -EMFILE;
	zk_queue_t *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->refs = 1;
	q->vm = vm;
	q->owner = f;
	q->ctx_id = ++k->next_ctx;
	int rc = zk_handle_add(&f->queues, q, &c->exec_queue_id);
	if (rc) {
		free(q);
		return rc;
	}
	vm->refs++;
	k->st.queues++;
	f->nqueues++;
	zk_debug_queue_created(f, c->exec_queue_id, q);
	return 0;
}

int zk_ioctl_exec_queue_destroy(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_exec_queue_destroy *d = arg;
	if (d->pad || !CHECK_RESERVED(d))
		return -EINVAL;
	zk_queue_t *q = zk_handle_take(&f->queues, d->exec_queue_id);
	if (!q)
		return -ENOENT;
	zk_debug_queue_destroyed(f, d->exec_queue_id);
	zk_queue_unref(k, q);
	return 0;
}
