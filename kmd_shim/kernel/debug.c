/* EU debug (docs/kmd.md §14, docs/debug.md §2-§3, docs/uapi.md "EU debug"): CONNECT by
 * pid, the debug fd (an event queue with READ_EVENT / ACK_EVENT / poll, EU_CONTROL,
 * VM_OPEN, READ_METADATA, INFO), the VM fd (pread/pwrite on a GPU address space),
 * DEBUG_METADATA_CREATE / DESTROY with the module ack fence, the debug area (the
 * system routine + the state save area, mapped at ZESIM_DEBUG_AREA_VA), the debug
 * registers of jobs and the DEBUG interrupt.  Shaped on Linux xe_eudebug.c.
 *
 * A connection targets a pid: every DRM file of that process.  It lives while its
 * debug fd does (the debugger's file owns it); it is detached when the target's last
 * file closes (events already queued stay readable). */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/zesim_ssa.h"

/* The model-side registers of docs/debug.md §2.2 (until include/zs/gpu_regs.def has them). */
#ifndef ZS_REG_DBG_MODE
#define ZS_REG_DBG_MODE 0x5040u
#define ZS_REG_DBG_SIP_LO 0x5044u
#define ZS_REG_DBG_SIP_HI 0x5048u
#define ZS_REG_DBG_SSA_LO 0x504cu
#define ZS_REG_DBG_SSA_HI 0x5050u
#define ZS_REG_DBG_SLOT_SIZE 0x5054u
#endif
#define DBG_MODE_SIP_EN 1u
/* cr0.0 exceptions a debugged thread starts with (docs/isa.md §7): breakpoint (0),
 * page fault (2), the halt instruction (6). */
#define DBG_EXC_EN ((1u << 0) | (1u << 2) | (1u << 6))
#define DBG_ALL_HALT 1u
#define DBG_ALL_CANCEL_HALT 2u
#define DBG_ALL_RESUME 4u
#define DBG_ALL_CANCEL_EXC 8u

#define MAX_THREADS 1024u
#define MAX_WORDS (MAX_THREADS / 32)
#define SIP_BYTES (64u << 10)	       /* the SIP's part of the area */
#define SSA_OFFSET SIP_BYTES	       /* the SSA header */
#define STATE_AREA_OFFSET 4096u	       /* first slot, from the SSA's start */
#define MAX_QUEUED_EVENTS 65536u       /* a debugger that reads nothing is cut off */
#define READ_EVENT_MAX 4096u	       /* no event is larger */
/* Halt requests (INTERRUPT_ALL, INTERRUPT) of threads that do not answer (not
 * resident) are cancelled once both have passed: docs/kmd.md §14.5. */
#define HALT_CANCEL_CYCLES 20000ull
#define HALT_CANCEL_NS 20000000ull

typedef struct dbg_event {
	struct dbg_event *next;
	uint32_t len;
	uint8_t data[];
} dbg_event_t;

typedef struct zk_dbg_conn {
	zk_kmd_t *k;
	zk_fd_t *fd;
	int pid; /* the target */
	int detached;
	uint32_t flags;
	uint64_t seqno;
	dbg_event_t *head, *tail;
	uint32_t queued;
	struct zk_dbg_conn *next;
} conn_t;

typedef struct zk_dbg_module {
	uint32_t id, vm_id;
	uint64_t stamp;
	uint8_t *elf;
	uint64_t elf_size, load_addr, load_size, fence_addr, fence_value;
	conn_t *ack_conn; /* the connection whose ack it waits for, or NULL */
	uint64_t ack_seqno;
	struct zk_dbg_module *next;
} module_t;

struct zk_dbg {
	conn_t *conns;
	uint64_t next_serial, next_stamp;
	int supported; /* the topology fits the debug unit (docs/debug.md §2.1) */
	uint32_t global_eus, nslots, nwords;
	uint8_t *sip;
	uint32_t sip_len;
	uint64_t area_pa, area_size; /* area_pa 0: not allocated yet (first CONNECT) */
	int mode_on;		     /* DBG_MODE was programmed for the last job */
	uint32_t reported[MAX_WORDS]; /* attention bits already reported (or resumed) */
	/* pending halt requests (INTERRUPT_ALL / INTERRUPT): cancelled after a bound */
	int halts, halt_all;
	uint32_t halt_bits[MAX_WORDS];
	uint64_t halt_cycles, halt_ns;
};

static void wr(zk_kmd_t *k, uint32_t reg, uint32_t v) { zs_hw_mmio_write(k->hw, reg, v); }
static uint32_t rd(zk_kmd_t *k, uint32_t reg) { return zs_hw_mmio_read(k->hw, reg); }

int zk_debug_init(zk_kmd_t *k)
{
	struct zk_dbg *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	k->dbg = d;
	d->global_eus = k->slices * k->subslices * k->eus;
	d->nslots = d->global_eus * k->threads;
	d->nwords = (d->global_eus * 8 + 31) / 32;
	d->area_size = (SSA_OFFSET + STATE_AREA_OFFSET + (uint64_t)d->nslots * ZESIM_SSA_SLOT_SIZE + PAGE64K - 1) &
		       ~(uint64_t)(PAGE64K - 1); /* allocated at the first CONNECT (area_pa) */
	d->supported = k->threads && k->threads <= 8 && d->global_eus && d->global_eus * 8 <= MAX_THREADS &&
		       d->area_size <= ZESIM_DEBUG_AREA_SIZE;
	return 0;
}

void zk_debug_fini(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	if (!d)
		return;
	/* Connections are fds (zk_fds_fini released them); files closed before. */
	if (d->area_pa)
		zk_phys_free(k, d->area_pa, d->area_size);
	free(d->sip);
	free(d);
	k->dbg = NULL;
}

int zk_set_sip(zk_kmd_t *k, const void *code, size_t bytes)
{
	struct zk_dbg *d = k->dbg;
	if (!bytes || bytes > SIP_BYTES || bytes % 16)
		return -EINVAL;
	if (d->area_pa)
		return -EBUSY;
	uint8_t *c = malloc(bytes);
	if (!c)
		return -ENOMEM;
	memcpy(c, code, bytes);
	free(d->sip);
	d->sip = c;
	d->sip_len = (uint32_t)bytes;
	return 0;
}

/* ---- the debug area ---- */

static uint64_t ssa_pa(const struct zk_dbg *d) { return d->area_pa + SSA_OFFSET; }

static void regset(struct zesim_ssa_regset_desc *r, uint32_t offset, uint16_t num, uint16_t bits)
{
	*r = (struct zesim_ssa_regset_desc){offset, num, bits, (uint16_t)(bits / 8), 0};
}

/* SIP, SSA header and every slot's sr_ident (docs/debug.md §2, uapi/zesim_ssa.h). */
static void area_fill(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	uint8_t *a = k->phys + d->area_pa;
	memset(a, 0, d->area_size);
	if (d->sip)
		memcpy(a, d->sip, d->sip_len);
	struct zesim_ssa_magic_header m = {.version = {2, 0, 0}};
	memcpy(m.magic, "tssarea", 8);
	m.size = (uint8_t)((sizeof(m) + sizeof(struct zesim_ssa_header)) / 8);
	struct zesim_ssa_header h = {
		.num_slices = k->slices,
		.num_subslices_per_slice = k->subslices,
		.num_eus_per_subslice = k->eus,
		.num_threads_per_eu = k->threads,
		.state_area_offset = STATE_AREA_OFFSET,
		.state_save_size = ZESIM_SSA_SLOT_SIZE,
		.sr_magic_offset = ZESIM_SSA_SR_IDENT_OFFSET,
	};
	regset(&h.grf, ZESIM_SSA_GRF_OFFSET, 128, 256);
	regset(&h.addr, ZESIM_SSA_ADDR_OFFSET, 1, 256);
	regset(&h.flag, ZESIM_SSA_FLAG_OFFSET, 2, 32);
	regset(&h.ce, ZESIM_SSA_CE_OFFSET, 1, 32);
	regset(&h.sr, ZESIM_SSA_SR_OFFSET, 1, 128);
	regset(&h.cr, ZESIM_SSA_CR_OFFSET, 1, 128);
	regset(&h.tdr, ZESIM_SSA_TDR_OFFSET, 1, 256);
	regset(&h.acc, ZESIM_SSA_ACC_OFFSET, 2, 256);
	regset(&h.sp, ZESIM_SSA_SP_OFFSET, 1, 128);
	regset(&h.dbg, ZESIM_SSA_DBG_OFFSET, 1, 64);
	regset(&h.tm, ZESIM_SSA_TM_OFFSET, 1, 64);
	regset(&h.cmd, ZESIM_SSA_CMD_OFFSET, 1, 1024);
	uint8_t *s = a + SSA_OFFSET;
	memcpy(s, &m, sizeof(m));
	memcpy(s + sizeof(m), &h, sizeof(h));
	struct zesim_ssa_sr_ident id = {.version = {2, 0, 0}, .count = 0};
	memcpy(id.magic, "srmagic", 8);
	for (uint32_t i = 0; i < d->nslots; i++)
		memcpy(s + STATE_AREA_OFFSET + (size_t)i * ZESIM_SSA_SLOT_SIZE + ZESIM_SSA_SR_IDENT_OFFSET, &id, sizeof(id));
}

static int area_alloc(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	if (d->area_pa)
		return 0;
	const uint64_t size = d->area_size;
	uint64_t pa;
	int rc = zk_phys_alloc(k, size, PAGE64K, &pa);
	if (rc)
		return rc;
	d->area_pa = pa;
	area_fill(k);
	wr(k, ZS_REG_IRQ_ENABLE, rd(k, ZS_REG_IRQ_ENABLE) | ZS_IRQ_DEBUG);
	fprintf(stderr, "zesim-gpu: debug area: %llu KiB at 0x%llx (SIP %u bytes%s, %u state-save slots)\n",
		(unsigned long long)(size >> 10), (unsigned long long)pa, d->sip_len,
		d->sip ? "" : ": none installed, threads never stop", d->nslots);
	fflush(stderr);
	return 0;
}

int zk_debug_va_reserved(uint64_t addr, uint64_t range)
{
	return addr < ZESIM_DEBUG_AREA_VA + ZESIM_DEBUG_AREA_SIZE && ZESIM_DEBUG_AREA_VA < addr + range;
}

static int map_area(zk_kmd_t *k, zk_vm_t *vm)
{
	struct zk_dbg *d = k->dbg;
	if (vm->debug_mapped || !d->area_pa)
		return 0;
	int rc = zk_vm_map_pages(k, vm, ZESIM_DEBUG_AREA_VA, d->area_size, d->area_pa);
	if (!rc)
		vm->debug_mapped = 1;
	return rc;
}

/* The slot of hardware thread tid (docs/debug.md §2.1), in physical memory. */
static uint8_t *slot_of(zk_kmd_t *k, uint32_t tid)
{
	struct zk_dbg *d = k->dbg;
	const uint32_t index = tid / 8 * k->threads + tid % 8;
	return k->phys + ssa_pa(d) + STATE_AREA_OFFSET + (uint64_t)index * ZESIM_SSA_SLOT_SIZE;
}

/* ---- files, connections, events ---- */

static conn_t *conn_of_pid(zk_kmd_t *k, int pid)
{
	for (conn_t *c = k->dbg->conns; c; c = c->next)
		if (!c->detached && c->pid == pid)
			return c;
	return NULL;
}

static zk_file_t *file_of_serial(zk_kmd_t *k, uint64_t serial)
{
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i]->serial == serial)
			return k->files[i];
	return NULL;
}

/* A target file of connection c by client handle (its serial). */
static zk_file_t *target_file(conn_t *c, uint64_t handle)
{
	zk_file_t *f = handle ? file_of_serial(c->k, handle) : NULL;
	return f && f->pid == c->pid ? f : NULL;
}

static void conn_detach(conn_t *c, const char *why)
{
	if (c->detached)
		return;
	c->detached = 1;
	fprintf(stderr, "zesim-gpu: EU debug: connection to pid %d detached (%s)\n", c->pid, why);
	fflush(stderr);
	zk_fd_notify(c->fd);
}

/* Queue an event (its base filled here); its seqno. */
static uint64_t push(conn_t *c, uint16_t type, uint16_t flags, void *ev, uint32_t len)
{
	if (c->detached)
		return 0;
	if (c->queued >= MAX_QUEUED_EVENTS) {
		conn_detach(c, "the debugger did not read its events");
		return 0;
	}
	dbg_event_t *e = malloc(sizeof(*e) + len);
	if (!e) {
		conn_detach(c, "out of memory");
		return 0;
	}
	struct drm_zesim_eudebug_event *b = ev;
	b->len = len;
	b->type = type;
	b->flags = flags;
	b->seqno = ++c->seqno;
	b->reserved = 0;
	memcpy(e->data, ev, len);
	e->len = len;
	e->next = NULL;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	c->queued++;
	c->k->st.debug_events++;
	zk_fd_notify(c->fd);
	return b->seqno;
}

static void ev_open(conn_t *c, zk_file_t *f, uint16_t flags)
{
	struct drm_zesim_eudebug_event_open e = {.client_handle = f->serial, .pid = (uint64_t)f->pid};
	push(c, ZESIM_EUDEBUG_EVENT_OPEN, flags, &e, sizeof(e));
}

static void ev_vm(conn_t *c, zk_file_t *f, uint32_t id, uint16_t flags)
{
	struct drm_zesim_eudebug_event_vm e = {.client_handle = f->serial, .vm_handle = id};
	push(c, ZESIM_EUDEBUG_EVENT_VM, flags, &e, sizeof(e));
}

static uint32_t vm_id_of(zk_file_t *f, const zk_vm_t *vm)
{
	for (uint32_t i = 0; i < f->vms.n; i++)
		if (f->vms.slot[i] == vm)
			return i + 1;
	return 0;
}

static void ev_queue(conn_t *c, zk_file_t *f, uint32_t id, const zk_queue_t *q, uint16_t flags)
{
	struct drm_zesim_eudebug_event_exec_queue e = {.client_handle = f->serial,
							.vm_handle = q ? vm_id_of(f, q->vm) : 0,
							.exec_queue_handle = id,
							.engine_class = ZESIM_ENGINE_CLASS_COMPUTE,
							.width = 1};
	push(c, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, flags, &e, sizeof(e));
}

static uint64_t ev_module(conn_t *c, zk_file_t *f, const module_t *m, uint16_t flags)
{
	struct drm_zesim_eudebug_event_module e = {.client_handle = f->serial,
						    .vm_handle = m->vm_id,
						    .metadata_handle = m->id,
						    .load_addr = m->load_addr,
						    .load_size = m->load_size,
						    .elf_size = m->elf_size};
	return push(c, ZESIM_EUDEBUG_EVENT_MODULE, flags, &e, sizeof(e));
}

/* The module may run: its ack fence is written (if its VM still maps it). */
static void fence_signal(zk_kmd_t *k, zk_file_t *f, module_t *m)
{
	m->ack_conn = NULL;
	m->ack_seqno = 0;
	zk_vm_t *vm = zk_handle_get(&f->vms, m->vm_id);
	uint8_t *p = vm ? zk_vm_ptr(k, vm, m->fence_addr, 0) : NULL;
	if (p)
		__atomic_store_n((uint64_t *)p, m->fence_value, __ATOMIC_RELEASE);
}

static void module_free(module_t *m)
{
	free(m->elf);
	free(m);
}

void zk_debug_file_opened(zk_file_t *f)
{
	struct zk_dbg *d = f->kmd->dbg;
	f->serial = ++d->next_serial;
	f->stamp = ++d->next_stamp;
	conn_t *c = conn_of_pid(f->kmd, f->pid);
	if (c) {
		f->debuggable = 1;
		ev_open(c, f, ZESIM_EUDEBUG_EVENT_CREATE);
	}
}

void zk_debug_file_closing(zk_file_t *f)
{
	zk_kmd_t *k = f->kmd;
	conn_t *c = conn_of_pid(k, f->pid);
	while (f->modules) {
		module_t *m = f->modules;
		f->modules = m->next;
		if (c)
			ev_module(c, f, m, ZESIM_EUDEBUG_EVENT_DESTROY);
		module_free(m);
	}
	if (!c)
		return;
	for (uint32_t i = 0; i < f->queues.n; i++)
		if (f->queues.slot[i])
			ev_queue(c, f, i + 1, f->queues.slot[i], ZESIM_EUDEBUG_EVENT_DESTROY);
	for (uint32_t i = 0; i < f->vms.n; i++)
		if (f->vms.slot[i])
			ev_vm(c, f, i + 1, ZESIM_EUDEBUG_EVENT_DESTROY);
	ev_open(c, f, ZESIM_EUDEBUG_EVENT_DESTROY);
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i] != f && k->files[i]->pid == f->pid)
			return; /* the process still has a DRM file */
	conn_detach(c, "the target closed its last DRM file");
}

int zk_debug_vm_created(zk_file_t *f, uint32_t id, zk_vm_t *vm)
{
	vm->stamp = ++f->kmd->dbg->next_stamp;
	if (f->debuggable) {
		int rc = map_area(f->kmd, vm);
		if (rc)
			return rc;
	}
	conn_t *c = conn_of_pid(f->kmd, f->pid);
	if (c)
		ev_vm(c, f, id, ZESIM_EUDEBUG_EVENT_CREATE);
	return 0;
}

void zk_debug_vm_destroyed(zk_file_t *f, uint32_t id)
{
	conn_t *c = conn_of_pid(f->kmd, f->pid);
	if (c)
		ev_vm(c, f, id, ZESIM_EUDEBUG_EVENT_DESTROY);
}

void zk_debug_queue_created(zk_file_t *f, uint32_t id, zk_queue_t *q)
{
	q->stamp = ++f->kmd->dbg->next_stamp;
	conn_t *c = conn_of_pid(f->kmd, f->pid);
	if (c)
		ev_queue(c, f, id, q, ZESIM_EUDEBUG_EVENT_CREATE);
}

void zk_debug_queue_destroyed(zk_file_t *f, uint32_t id)
{
	conn_t *c = conn_of_pid(f->kmd, f->pid);
	if (c)
		ev_queue(c, f, id, NULL, ZESIM_EUDEBUG_EVENT_DESTROY);
}

/* ---- the hardware: attention, halts, resume ---- */

static void read_attention(zk_kmd_t *k, uint32_t *attn)
{
	for (uint32_t w = 0; w < k->dbg->nwords; w++) {
		wr(k, ZS_REG_DBG_WORD, w);
		attn[w] = rd(k, ZS_REG_DBG_ATTN);
	}
}

/* Resume threads in attention (bits per word) with cmd RESUME in their slots. */
static void resume_threads(zk_kmd_t *k, const uint32_t *bits, int force_cmd)
{
	struct zk_dbg *d = k->dbg;
	for (uint32_t w = 0; w < d->nwords; w++) {
		if (!bits[w])
			continue;
		if (force_cmd)
			for (uint32_t b = 0; b < 32; b++)
				if (bits[w] >> b & 1) {
					const uint32_t cmd = ZESIM_SIP_CMD_RESUME;
					memcpy(slot_of(k, w * 32 + b) + ZESIM_SSA_CMD_OFFSET, &cmd, 4);
					k->st.debug_resumes++;
				}
		wr(k, ZS_REG_DBG_WORD, w);
		wr(k, ZS_REG_DBG_RESUME, bits[w]);
		d->reported[w] &= ~bits[w];
	}
}

static void cancel_halts(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	if (!d->halts)
		return;
	if (d->halt_all)
		wr(k, ZS_REG_DBG_ALL, DBG_ALL_CANCEL_HALT);
	else
		for (uint32_t w = 0; w < d->nwords; w++)
			if (d->halt_bits[w]) {
				wr(k, ZS_REG_DBG_WORD, w);
				wr(k, ZS_REG_DBG_HALT, rd(k, ZS_REG_DBG_HALT) & ~d->halt_bits[w]);
			}
	memset(d->halt_bits, 0, sizeof(d->halt_bits));
	d->halts = d->halt_all = 0;
}

static void halts_started(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	d->halts = 1;
	d->halt_cycles = zk_read_counter(k, ZS_REG_GT_CYCLES_LO);
	d->halt_ns = zk_now_ns(k);
}

int zk_debug_hold(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	if (!d->area_pa)
		return 0;
	if (d->halts && zk_read_counter(k, ZS_REG_GT_CYCLES_LO) - d->halt_cycles >= HALT_CANCEL_CYCLES &&
	    zk_now_ns(k) - d->halt_ns >= HALT_CANCEL_NS)
		cancel_halts(k);
	return rd(k, ZS_REG_DBG_ATTN_COUNT) != 0;
}

void zk_debug_submit(zk_kmd_t *k, const zk_job_t *j)
{
	struct zk_dbg *d = k->dbg;
	if (!d->area_pa)
		return;
	/* Nothing runs between jobs: attention left in the unit is stale (its job was
	 * failed or cancelled without the unit seeing its threads end): resume it, and
	 * forget what was reported, so a thread stopping in the same slot is news. */
	uint32_t stale[MAX_WORDS] = {0};
	read_attention(k, stale);
	resume_threads(k, stale, 0);
	memset(d->reported, 0, sizeof(d->reported));
	cancel_halts(k);
	const int on = d->sip && j->file->debuggable;
	if (on) {
		const uint64_t sip = ZESIM_DEBUG_AREA_VA, ssa = ZESIM_DEBUG_AREA_VA + SSA_OFFSET + STATE_AREA_OFFSET;
		wr(k, ZS_REG_DBG_SIP_LO, (uint32_t)sip);
		wr(k, ZS_REG_DBG_SIP_HI, (uint32_t)(sip >> 32));
		wr(k, ZS_REG_DBG_SSA_LO, (uint32_t)ssa);
		wr(k, ZS_REG_DBG_SSA_HI, (uint32_t)(ssa >> 32));
		wr(k, ZS_REG_DBG_SLOT_SIZE, ZESIM_SSA_SLOT_SIZE);
		wr(k, ZS_REG_DBG_CTL, ZS_FIELD_MASK(DBG_CTL, IRQ_EN));
		wr(k, ZS_REG_DBG_MODE, DBG_MODE_SIP_EN | DBG_EXC_EN << 8);
	} else if (d->mode_on) {
		wr(k, ZS_REG_DBG_MODE, 0);
	}
	d->mode_on = on;
}

static uint32_t queue_id_of(const zk_job_t *j)
{
	for (uint32_t i = 0; i < j->file->queues.n; i++)
		if (j->file->queues.slot[i] == j->q)
			return i + 1;
	return 0;
}

static uint32_t bitmask_size(const struct zk_dbg *d) { return (d->global_eus + 3) & ~3u; }

void zk_debug_irq(zk_kmd_t *k)
{
	struct zk_dbg *d = k->dbg;
	k->st.debug_irqs++;
	if (!d->area_pa)
		return;
	uint32_t attn[MAX_WORDS] = {0}, fresh[MAX_WORDS] = {0}, faulted[MAX_WORDS] = {0};
	read_attention(k, attn);
	int any = 0, pf = 0;
	for (uint32_t w = 0; w < d->nwords; w++) {
		fresh[w] = attn[w] & ~d->reported[w];
		d->reported[w] = attn[w];
		any |= fresh[w] != 0;
	}
	if (!any)
		return;
	const zk_job_t *j = k->running;
	conn_t *c = j ? conn_of_pid(k, j->file->pid) : NULL;
	if (!c) {
		resume_threads(k, fresh, 1); /* nobody to tell: the threads go on */
		return;
	}
	for (uint32_t w = 0; w < d->nwords; w++)
		for (uint32_t b = 0; b < 32; b++)
			if (fresh[w] >> b & 1) {
				wr(k, ZS_REG_DBG_THREAD, w * 32 + b);
				if (ZS_FIELD_GET(rd(k, ZS_REG_DBG_REASON), DBG_REASON, REASON) == 2) {
					faulted[w] |= 1u << b;
					pf = 1;
				}
			}
	const uint32_t bs = bitmask_size(d);
	uint8_t buf[sizeof(struct drm_zesim_eudebug_event_pagefault) + MAX_THREADS / 8];
	if (pf) {
		/* The address: the fault registers (docs/memory.md §5) when they hold one, else
		 * what the hardware saved in the first faulting thread's slot (the SP dwords 2-3
		 * of a page-fault stop: the whole address, docs/debug.md §2.3). */
		uint64_t addr = 0;
		if (ZS_FIELD_GET(rd(k, ZS_REG_FAULT_STATUS), FAULT_STATUS, VALID)) {
			addr = zk_read_counter(k, ZS_REG_FAULT_ADDR_LO);
		} else {
			for (uint32_t w = 0; w < d->nwords && !addr; w++)
				if (faulted[w])
					memcpy(&addr,
					       slot_of(k, w * 32 + (uint32_t)__builtin_ctz(faulted[w])) + ZESIM_SSA_SP_OFFSET + 8, 8);
		}
		struct drm_zesim_eudebug_event_pagefault *e = (void *)buf;
		memset(buf, 0, sizeof(buf));
		e->client_handle = j->file->serial;
		e->exec_queue_handle = queue_id_of(j);
		e->pagefault_address = addr;
		e->bitmask_size = bs;
		memcpy(e->bitmask, faulted, bs);
		push(c, ZESIM_EUDEBUG_EVENT_PAGEFAULT, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, e, (uint32_t)sizeof(*e) + bs);
	}
	struct drm_zesim_eudebug_event_eu_attention *e = (void *)buf;
	memset(buf, 0, sizeof(buf));
	e->client_handle = j->file->serial;
	e->exec_queue_handle = queue_id_of(j);
	e->bitmask_size = bs;
	memcpy(e->bitmask, attn, bs); /* words as little-endian bytes: byte = EU, bit = thread */
	push(c, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, e, (uint32_t)sizeof(*e) + bs);
}

/* ---- the VM fd ---- */

typedef struct vmfd {
	zk_kmd_t *k;
	uint64_t serial; /* the target file */
	uint32_t vm_id;
	zk_vm_t *vm;
} vmfd_t;

static zk_vm_t *vmfd_vm(vmfd_t *v)
{
	zk_file_t *f = file_of_serial(v->k, v->serial);
	zk_vm_t *vm = f ? zk_handle_get(&f->vms, v->vm_id) : NULL;
	return vm == v->vm ? vm : NULL;
}

static long vm_io(zk_fd_t *fd, uint8_t *rbuf, const uint8_t *wbuf, uint32_t len, uint64_t off)
{
	vmfd_t *v = zk_fd_priv(fd);
	zk_kmd_t *k = v->k;
	zk_vm_t *vm = vmfd_vm(v);
	if (!vm)
		return -EIO; /* the VM or its process is gone */
	uint32_t done = 0;
	while (done < len) {
		const uint64_t va = off + done;
		if (va < off || va >= VA_LIMIT)
			break;
		zs_pt_walk_result_t r;
		/* A read walk for writes too: the debugger writes read-only code (breakpoints). */
		const uint64_t pa = zs_pt_walk(k->phys, k->phys_size, vm->root, va, 0, &r);
		if (r.fault != ZS_PT_OK)
			break;
		uint64_t n = PAGE - (va & (PAGE - 1));
		if (n > len - done)
			n = len - done;
		if (pa + n > k->phys_size)
			break;
		if (rbuf)
			memcpy(rbuf + done, k->phys + pa, n);
		else
			memcpy(k->phys + pa, wbuf + done, n);
		done += (uint32_t)n;
	}
	if (!done && len)
		return -EFAULT;
	return done;
}

static long vm_pread(zk_fd_t *fd, uint8_t *buf, uint32_t len, uint64_t off) { return vm_io(fd, buf, NULL, len, off); }

static long vm_pwrite(zk_fd_t *fd, const uint8_t *buf, uint32_t len, uint64_t off)
{
	const long n = vm_io(fd, NULL, buf, len, off);
	/* The bytes may be code of a running kernel (a breakpoint set after an interrupt):
	 * the hardware decodes again what it fetches next (docs/mmio.md 5).  Not for the
	 * debug area (register writes and commands in the slots; the SIP is decoded at
	 * each fetch), which every resume writes. */
	if (n > 0 && (off < ZESIM_DEBUG_AREA_VA || off + (uint64_t)n > ZESIM_DEBUG_AREA_VA + ZESIM_DEBUG_AREA_SIZE)) {
		zk_kmd_t *k = ((vmfd_t *)zk_fd_priv(fd))->k;
		zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 2);
	}
	return n;
}

static void vm_release(zk_fd_t *fd) { free(zk_fd_priv(fd)); }

static const zk_fd_ops_t vmfd_ops = {
	.name = "[zesim_eudebug_vm]",
	.pread = vm_pread,
	.pwrite = vm_pwrite,
	.release = vm_release,
};

/* ---- the debug fd ---- */

static unsigned c_poll(zk_fd_t *fd)
{
	conn_t *c = zk_fd_priv(fd);
	if (c->head)
		return ZK_POLLIN;
	return c->detached ? ZK_POLLHUP : 0;
}

/* The debugger goes away: acks released, halts cancelled, the target's stopped
 * threads resumed (docs/debug.md §3). */
static void c_release(zk_fd_t *fd)
{
	conn_t *c = zk_fd_priv(fd);
	zk_kmd_t *k = c->k;
	struct zk_dbg *d = k->dbg;
	for (size_t i = 0; i < k->nfiles; i++)
		for (module_t *m = k->files[i]->modules; m; m = m->next)
			if (m->ack_conn == c)
				fence_signal(k, k->files[i], m);
	if (!c->detached && k->running && k->running->file->pid == c->pid) {
		cancel_halts(k);
		uint32_t attn[MAX_WORDS] = {0};
		read_attention(k, attn);
		resume_threads(k, attn, 1);
	}
	for (conn_t **p = &d->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	while (c->head) {
		dbg_event_t *e = c->head;
		c->head = e->next;
		free(e);
	}
	k->st.debug_connections--;
	fprintf(stderr, "zesim-gpu: EU debug: connection to pid %d closed\n", c->pid);
	fflush(stderr);
	free(c);
}

/* The whole of `len` bytes into the call's out buffer (-EFAULT: none, or too small). */
static int copy_to_out(zk_out_blob_t *out, unsigned nout, const void *src, uint32_t len)
{
	if (nout < 1 || !out[0].data || out[0].len < len)
		return -EFAULT;
	memcpy(out[0].data, src, len);
	out[0].len = len;
	return 0;
}

static int read_event(conn_t *c, struct drm_zesim_eudebug_read_event *r, zk_out_blob_t *out, unsigned nout)
{
	if (r->flags)
		return -EINVAL;
	dbg_event_t *e = c->head;
	if (!e)
		return c->detached ? -ENOTCONN : -EAGAIN;
	if (r->event_size < e->len) {
		r->event_size = e->len;
		return -EMSGSIZE;
	}
	const int rc = copy_to_out(out, nout, e->data, e->len);
	if (rc)
		return rc;
	r->event_size = e->len;
	c->head = e->next;
	if (!c->head)
		c->tail = NULL;
	c->queued--;
	free(e);
	return 0;
}

static int ack_event(conn_t *c, const struct drm_zesim_eudebug_ack_event *a)
{
	if (a->flags || !a->seqno)
		return -EINVAL;
	zk_kmd_t *k = c->k;
	for (size_t i = 0; i < k->nfiles; i++)
		for (module_t *m = k->files[i]->modules; m; m = m->next)
			if (m->ack_conn == c && m->ack_seqno == a->seqno) {
				if (a->type != ZESIM_EUDEBUG_EVENT_MODULE)
					return -EINVAL;
				fence_signal(k, k->files[i], m);
				return 0;
			}
	return -EINVAL;
}

static int vm_open(conn_t *c, zk_fd_t *fd, const struct drm_zesim_eudebug_vm_open *o)
{
	if (o->extensions || o->flags)
		return -EINVAL;
	if (c->detached)
		return -ENOTCONN;
	zk_file_t *f = target_file(c, o->client_handle);
	if (!f || !o->vm_handle || o->vm_handle > UINT32_MAX)
		return -EINVAL;
	zk_vm_t *vm = zk_handle_get(&f->vms, (uint32_t)o->vm_handle);
	if (!vm)
		return -EINVAL;
	vmfd_t *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*v = (vmfd_t){c->k, f->serial, (uint32_t)o->vm_handle, vm};
	zk_fd_t *nf;
	int rc = zk_fd_create(zk_fd_owner(fd), &vmfd_ops, v, &nf);
	if (rc)
		free(v);
	return rc;
}

/* A bitmap argument (EU_CONTROL): whole words; only threads that exist. */
static int bitmap_in(const struct zk_dbg *d, zk_kmd_t *k, const uint8_t *p, uint32_t size, uint32_t *words)
{
	memset(words, 0, MAX_WORDS * 4);
	for (uint32_t i = 0; i < size; i++) {
		if (!p[i])
			continue;
		if (i >= d->global_eus || (k->threads < 8 && (p[i] >> k->threads)))
			return -EINVAL; /* no such EU or thread */
		words[i / 4] |= (uint32_t)p[i] << (8 * (i % 4));
	}
	return 0;
}

static int eu_control(conn_t *c, struct drm_zesim_eudebug_eu_control *e, const zk_blob_t *in, unsigned nin,
		      zk_out_blob_t *out, unsigned nout)
{
	zk_kmd_t *k = c->k;
	struct zk_dbg *d = k->dbg;
	if (e->flags || e->reserved || e->cmd > ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT || e->bitmask_size % 4 ||
	    e->bitmask_size > MAX_THREADS / 8)
		return -EINVAL;
	if (c->detached)
		return -ENOTCONN;
	zk_file_t *f = target_file(c, e->client_handle);
	if (!f)
		return -EINVAL;
	if (e->exec_queue_handle && (e->exec_queue_handle > UINT32_MAX ||
				     !zk_handle_get(&f->queues, (uint32_t)e->exec_queue_handle)))
		return -EINVAL;
	const uint32_t bs = bitmask_size(d);
	uint32_t bits[MAX_WORDS] = {0}, attn[MAX_WORDS] = {0};
	const int mine = k->running && k->running->file == f; /* the hardware runs this client's job */
	switch (e->cmd) {
	case ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL:
		if (e->bitmask_size)
			return -EINVAL;
		if (mine) {
			wr(k, ZS_REG_DBG_ALL, DBG_ALL_HALT);
			d->halt_all = 1;
			halts_started(k);
		}
		break;
	case ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED: {
		if (e->bitmask_size < bs)
			return -EINVAL;
		if (mine)
			read_attention(k, attn);
		const int rc = copy_to_out(out, nout, attn, bs);
		if (rc)
			return rc;
		e->bitmask_size = bs;
		break;
	}
	case ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME:
	case ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT: {
		if (!e->bitmask_size)
			return -EINVAL;
		if (nin < 1 || in[0].len != e->bitmask_size)
			return -EFAULT;
		int rc = bitmap_in(d, k, in[0].data, e->bitmask_size, bits);
		if (rc)
			return rc;
		if (e->cmd == ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME) {
			if (mine)
				read_attention(k, attn);
			for (uint32_t w = 0; w < d->nwords; w++)
				if (bits[w] & ~attn[w])
					return -EINVAL; /* a thread that is not stopped */
			resume_threads(k, bits, 0);
		} else if (mine) {
			for (uint32_t w = 0; w < d->nwords; w++)
				if (bits[w]) {
					wr(k, ZS_REG_DBG_WORD, w);
					wr(k, ZS_REG_DBG_HALT, rd(k, ZS_REG_DBG_HALT) | bits[w]);
					d->halt_bits[w] |= bits[w];
				}
			halts_started(k);
		}
		if (nout)
			out[0].len = 0;
		break;
	}
	}
	e->seqno = ++c->seqno;
	return 0;
}

static int read_metadata(conn_t *c, struct drm_zesim_eudebug_read_metadata *r, zk_out_blob_t *out, unsigned nout)
{
	if (r->flags || r->reserved)
		return -EINVAL;
	zk_file_t *f = target_file(c, r->client_handle);
	if (!f)
		return -EINVAL;
	module_t *m = f->modules;
	while (m && m->id != r->metadata_handle)
		m = m->next;
	if (!m)
		return -ENOENT;
	if (r->size < m->elf_size) {
		r->size = m->elf_size;
		return -ENOSPC;
	}
	if (m->elf_size > UINT32_MAX)
		return -EFAULT; /* larger than any out buffer */
	const int rc = copy_to_out(out, nout, m->elf, (uint32_t)m->elf_size);
	if (!rc)
		r->size = m->elf_size;
	return rc;
}

static int info(conn_t *c, struct drm_zesim_eudebug_info *i)
{
	zk_kmd_t *k = c->k;
	struct zk_dbg *d = k->dbg;
	memset(i, 0, sizeof(*i));
	i->ssa_addr = ZESIM_DEBUG_AREA_VA + SSA_OFFSET;
	i->ssa_size = d->area_size - SSA_OFFSET;
	i->sip_addr = ZESIM_DEBUG_AREA_VA;
	i->bitmask_size = bitmask_size(d);
	i->slices = k->slices;
	i->subslices_per_slice = k->subslices;
	i->eus_per_subslice = k->eus;
	i->threads_per_eu = k->threads;
	return 0;
}

static int c_ioctl(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		   zk_out_blob_t *out, unsigned nout)
{
	conn_t *c = zk_fd_priv(fd);
	if (_IOC_TYPE(cmd) != ZESIM_EUDEBUG_IOCTL_BASE)
		return -ENOTTY;
	if (arg_size != _IOC_SIZE(cmd))
		return -EINVAL;
	switch (cmd) {
	case ZESIM_EUDEBUG_IOCTL_READ_EVENT:
		return read_event(c, arg, out, nout);
	case ZESIM_EUDEBUG_IOCTL_ACK_EVENT:
		return ack_event(c, arg);
	case ZESIM_EUDEBUG_IOCTL_VM_OPEN:
		return vm_open(c, fd, arg);
	case ZESIM_EUDEBUG_IOCTL_EU_CONTROL:
		return eu_control(c, arg, in, nin, out, nout);
	case ZESIM_EUDEBUG_IOCTL_READ_METADATA:
		return read_metadata(c, arg, out, nout);
	case ZESIM_EUDEBUG_IOCTL_INFO:
		return info(c, arg);
	default:
		return -ENOTTY;
	}
}

static const zk_fd_ops_t conn_ops = {
	.name = "[zesim_eudebug]",
	.ioctl = c_ioctl,
	.poll = c_poll,
	.release = c_release,
};

/* ---- CONNECT ---- */

/* Uid (real, effective, saved) and CapEff of a process, from /proc/<pid>/status. */
static int proc_creds(int pid, unsigned *uid, unsigned long long *cap)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *fp = fopen(path, "re");
	if (!fp)
		return -1;
	int got = 0;
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "Uid: %u %u %u", &uid[0], &uid[1], &uid[2]) == 3)
			got |= 1;
		else if (sscanf(line, "CapEff: %llx", cap) == 1)
			got |= 2;
	}
	fclose(fp);
	return got == 3 ? 0 : -1;
}

#define CAP_SYS_PTRACE_BIT 19

/* Linux's ptrace access rule, reduced: the caller's uid is the target's real,
 * effective and saved uid, or the caller has CAP_SYS_PTRACE.  Read at the call. */
static int may_ptrace(int caller, int target)
{
	unsigned cu[3], tu[3];
	unsigned long long ccap = 0, tcap = 0;
	if (proc_creds(target, tu, &tcap))
		return -ESRCH;
	if (proc_creds(caller, cu, &ccap))
		return -EACCES;
	if (ccap >> CAP_SYS_PTRACE_BIT & 1)
		return 0;
	return cu[0] == tu[0] && cu[0] == tu[1] && cu[0] == tu[2] ? 0 : -EACCES;
}

typedef struct replay {
	uint64_t stamp;
	int kind; /* 0 open, 1 vm, 2 queue, 3 module */
	zk_file_t *f;
	uint32_t id;
	void *obj;
} replay_t;

static int replay_cmp(const void *a, const void *b)
{
	const uint64_t x = ((const replay_t *)a)->stamp, y = ((const replay_t *)b)->stamp;
	return x < y ? -1 : x > y;
}

/* The target's resources as CREATE events, in creation order. */
static int replay(conn_t *c)
{
	zk_kmd_t *k = c->k;
	size_t n = 0, cap = 0;
	replay_t *r = NULL;
#define ADD(...)                                                                                                      \
	do {                                                                                                          \
		if (n == cap) {                                                                                       \
			cap = cap ? 2 * cap : 64;                                                                     \
			replay_t *nr = realloc(r, cap * sizeof(*r));                                                  \
			if (!nr) {                                                                                    \
				free(r);                                                                              \
				return -ENOMEM;                                                                       \
			}                                                                                             \
			r = nr;                                                                                       \
		}                                                                                                     \
		r[n++] = (replay_t){__VA_ARGS__};                                                                     \
	} while (0)
	for (size_t i = 0; i < k->nfiles; i++) {
		zk_file_t *f = k->files[i];
		if (f->pid != c->pid)
			continue;
		ADD(f->stamp, 0, f, 0, NULL);
		for (uint32_t j = 0; j < f->vms.n; j++)
			if (f->vms.slot[j])
				ADD(((zk_vm_t *)f->vms.slot[j])->stamp, 1, f, j + 1, f->vms.slot[j]);
		for (uint32_t j = 0; j < f->queues.n; j++)
			if (f->queues.slot[j])
				ADD(((zk_queue_t *)f->queues.slot[j])->stamp, 2, f, j + 1, f->queues.slot[j]);
		for (module_t *m = f->modules; m; m = m->next)
			ADD(m->stamp, 3, f, m->id, m);
	}
#undef ADD
	qsort(r, n, sizeof(*r), replay_cmp);
	for (size_t i = 0; i < n; i++) {
		switch (r[i].kind) {
		case 0: ev_open(c, r[i].f, ZESIM_EUDEBUG_EVENT_CREATE); break;
		case 1: ev_vm(c, r[i].f, r[i].id, ZESIM_EUDEBUG_EVENT_CREATE); break;
		case 2: ev_queue(c, r[i].f, r[i].id, r[i].obj, ZESIM_EUDEBUG_EVENT_CREATE); break;
		default: ev_module(c, r[i].f, r[i].obj, ZESIM_EUDEBUG_EVENT_CREATE); break; /* its fence was written */
		}
	}
	free(r);
	return 0;
}

int zk_ioctl_eudebug_connect(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct zk_dbg *d = k->dbg;
	struct drm_zesim_eudebug_connect *a = arg;
	if (a->extensions || a->version || (a->flags & ~ZESIM_EUDEBUG_CONNECT_ACK_MODULES))
		return -EINVAL;
	if (!a->pid || a->pid > INT32_MAX)
		return -ESRCH;
	const int pid = (int)a->pid;
	if (pid == f->pid)
		return -EINVAL;
	int client = 0;
	for (size_t i = 0; i < k->nfiles; i++)
		client |= k->files[i]->pid == pid;
	if (!client)
		return -ESRCH; /* no live zesim client with that pid */
	int rc = may_ptrace(f->pid, pid);
	if (rc)
		return rc;
	if (conn_of_pid(k, pid))
		return -EBUSY;
	if (!d->supported)
		return -EOPNOTSUPP;
	if ((rc = area_alloc(k)))
		return rc;
	for (size_t i = 0; i < k->nfiles; i++) /* the area in every VM of the target */
		if (k->files[i]->pid == pid)
			for (uint32_t j = 0; j < k->files[i]->vms.n; j++)
				if (k->files[i]->vms.slot[j] && (rc = map_area(k, k->files[i]->vms.slot[j])))
					return rc;
	conn_t *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->k = k;
	c->pid = pid;
	c->flags = a->flags;
	if ((rc = zk_fd_create(f, &conn_ops, c, &c->fd))) {
		free(c);
		return rc;
	}
	c->next = d->conns;
	d->conns = c;
	k->st.debug_connections++;
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i]->pid == pid)
			k->files[i]->debuggable = 1;
	if ((rc = replay(c)))
		return rc; /* the fd is freed by the caller's zk_fd_take_new path (not given out) */
	zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 1);
	a->version = ZESIM_EUDEBUG_VERSION;
	fprintf(stderr, "zesim-gpu: EU debug: pid %d connected to pid %d%s, %llu events replayed\n", f->pid, pid,
		(a->flags & ZESIM_EUDEBUG_CONNECT_ACK_MODULES) ? " (module acks)" : "", (unsigned long long)c->seqno);
	fflush(stderr);
	return 0;
}

/* ---- DEBUG_METADATA_CREATE / DESTROY (the target's driver) ---- */

int zk_ioctl_debug_metadata_create(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_debug_metadata_create *a = arg;
	if (a->extensions || a->metadata_id || !CHECK_RESERVED(a) || a->type != ZESIM_DEBUG_METADATA_ELF_BINARY)
		return -EINVAL;
	if (!a->len || a->len > ZESIM_DEBUG_METADATA_MAX)
		return -EINVAL;
	if (!a->load_size || a->load_addr >= VA_LIMIT || a->load_size > VA_LIMIT - a->load_addr)
		return -EINVAL;
	if (!a->ack_fence_addr || (a->ack_fence_addr & 7) || a->ack_fence_addr >= VA_LIMIT)
		return -EINVAL;
	zk_vm_t *vm = zk_handle_get(&f->vms, a->vm_id);
	if (!vm)
		return -ENOENT;
	if (nin < 1 || in[0].len != a->len)
		return -EFAULT;
	if (!zk_vm_ptr(k, vm, a->ack_fence_addr, 0))
		return -EFAULT; /* the fence is not mapped */
	module_t *m = calloc(1, sizeof(*m));
	uint8_t *elf = malloc(a->len);
	if (!m || !elf) {
		free(m);
		free(elf);
		return -ENOMEM;
	}
	memcpy(elf, in[0].data, a->len);
	*m = (module_t){.id = ++f->next_module, .vm_id = a->vm_id, .stamp = ++k->dbg->next_stamp, .elf = elf,
			.elf_size = a->len, .load_addr = a->load_addr, .load_size = a->load_size,
			.fence_addr = a->ack_fence_addr, .fence_value = a->ack_fence_value, .next = f->modules};
	f->modules = m;
	a->metadata_id = m->id;
	conn_t *c = conn_of_pid(k, f->pid);
	const int need_ack = c && (c->flags & ZESIM_EUDEBUG_CONNECT_ACK_MODULES);
	const uint64_t seq = c ? ev_module(c, f, m, ZESIM_EUDEBUG_EVENT_CREATE |
							   (need_ack ? ZESIM_EUDEBUG_EVENT_NEED_ACK : 0))
			       : 0;
	if (need_ack && seq) {
		m->ack_conn = c;
		m->ack_seqno = seq;
	} else {
		fence_signal(k, f, m);
	}
	return 0;
}

int zk_ioctl_debug_metadata_destroy(ZK_IOCTL_ARGS)
{
	struct drm_zesim_debug_metadata_destroy *a = arg;
	if (a->extensions || a->pad || !CHECK_RESERVED(a))
		return -EINVAL;
	for (module_t **p = &f->modules; *p; p = &(*p)->next)
		if ((*p)->id == a->metadata_id) {
			module_t *m = *p;
			*p = m->next;
			if (m->ack_conn)
				fence_signal(f->kmd, f, m); /* nobody waits for a module that is gone */
			conn_t *c = conn_of_pid(f->kmd, f->pid);
			if (c)
				ev_module(c, f, m, ZESIM_EUDEBUG_EVENT_DESTROY);
			module_free(m);
			return 0;
		}
	return -ENOENT;
}
