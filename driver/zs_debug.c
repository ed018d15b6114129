/* Program debugging: the zet debug API (driver/README.md "Program debugging",
 * docs/debug.md section 4).
 *
 * A session is one debug connection of the KMD (docs/debug.md section 3): its own
 * DRM file, the debug fd, the target VM's fd (memory and the state save area), and a
 * reader thread that turns the KMD's events into zet events in one queue.  Threads
 * are {slice, subslice, eu, thread} of the topology; a thread is stopped when its
 * attention bit is set and its SSA slot's sr_ident.count is odd and differs from
 * the count of its previous stop (NEO's rule: a stale attention bit after a resume is
 * no new stop).  Everything of a session is under its lock, the KMD calls included
 * (the reader and the API threads take turns). */
#define _GNU_SOURCE
#include "zs_debug.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_ssa.h"
#include "zs/zex_debug_notifier.h"
#include "zs_handle.h"
#include "zs_module.h"

#define MAX_BITMAP 128u	 /* bytes: 1024 threads, one byte per EU */
#define MAX_REQUESTS 64u /* interrupt requests in flight */
#define RESUME_WAIT_NS 2000000000ull
#define SLM_WAIT_NS 2000000000ull
#define DEFAULT_INTERRUPT_TIMEOUT_MS 1000u

/* cr0.1: exception bits 0-6 (docs/isa.md section 7), forced exception 26, external halt 30. */
#define CR1_EXCEPTIONS 0x7fu
#define CR1_INTERRUPTED ((1u << 26) | (1u << 30))

static bool enabled;
static uint64_t interrupt_timeout_ns;

bool zs_debug_enabled(void) { return enabled; }

void zs_debug_init(zs_device_t *dev)
{
	ZS_UNUSED(dev);
	const char *e = getenv("ZET_ENABLE_PROGRAM_DEBUGGING");
	enabled = e && strcmp(e, "1") == 0;
	const char *t = getenv("ZESIM_DEBUG_INTERRUPT_TIMEOUT_MS");
	const long ms = t ? strtol(t, NULL, 10) : 0;
	interrupt_timeout_ns = (uint64_t)(ms > 0 ? ms : DEFAULT_INTERRUPT_TIMEOUT_MS) * 1000000ull;
}

/* ---- register sets (kmd_shim/include/uapi/zesim_ssa.h) ---------------------------- */

typedef struct regset {
	uint32_t type, offset, num, bits, bytes;
	bool writable;
} regset_t;

static const regset_t regsets[] = {
	{ZEX_DEBUG_REGSET_TYPE_GRF, ZESIM_SSA_GRF_OFFSET, 128, 256, 32, true},
	{ZEX_DEBUG_REGSET_TYPE_ADDR, ZESIM_SSA_ADDR_OFFSET, 1, 256, 32, true},
	{ZEX_DEBUG_REGSET_TYPE_FLAG, ZESIM_SSA_FLAG_OFFSET, 2, 32, 4, true},
	{ZEX_DEBUG_REGSET_TYPE_CE, ZESIM_SSA_CE_OFFSET, 1, 32, 4, false},
	{ZEX_DEBUG_REGSET_TYPE_SR, ZESIM_SSA_SR_OFFSET, 1, 128, 16, false},
	{ZEX_DEBUG_REGSET_TYPE_CR, ZESIM_SSA_CR_OFFSET, 1, 128, 16, true},
	{ZEX_DEBUG_REGSET_TYPE_TDR, ZESIM_SSA_TDR_OFFSET, 1, 256, 32, true}, /* tdr is written by mov (docs/isa.md 1.1) */
	{ZEX_DEBUG_REGSET_TYPE_ACC, ZESIM_SSA_ACC_OFFSET, 2, 256, 32, true},
	{ZEX_DEBUG_REGSET_TYPE_SP, ZESIM_SSA_SP_OFFSET, 1, 128, 16, false},
	{ZEX_DEBUG_REGSET_TYPE_SBA, ZESIM_SSA_SBA_OFFSET, 1, 64, 8, false},
	{ZEX_DEBUG_REGSET_TYPE_DBG, ZESIM_SSA_DBG_OFFSET, 1, 64, 8, true},
};
#define NREGSETS (sizeof(regsets) / sizeof(regsets[0]))

static const regset_t *regset_find(uint32_t type)
{
	for (uint32_t i = 0; i < NREGSETS; i++)
		if (regsets[i].type == type)
			return &regsets[i];
	return NULL;
}

/* ---- the session ------------------------------------------------------------------- */

typedef struct qevent {
	zet_debug_event_t ev;
	struct qevent *next;
} qevent_t;

typedef struct dmodule {
	uint64_t handle, load, seqno;
	uint8_t *elf;
	uint64_t size;
	bool ack_pending;
	struct dmodule *next;
} dmodule_t;

typedef struct dthread {
	bool stopped;	  /* in the SIP, reported (or being resumed silently) */
	bool have_count;  /* stop_count is valid */
	uint8_t stop_count; /* sr_ident.count of its last stop */
} dthread_t;

typedef struct irq_request {
	ze_device_thread_t thread;
	uint8_t map[MAX_BITMAP];
	uint64_t deadline;
	bool any_stopped;
} irq_request_t;

typedef struct zs_dbg {
	zs_device_t *dev;
	uint64_t pid;
	int drm_fd, fd, vm_fd, efd;
	pthread_t reader;
	atomic_bool quit;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	qevent_t *head, *tail;
	bool detached;
	uint64_t client, vm, exec_queue;
	uint32_t opens;
	struct drm_zesim_eudebug_info info;
	uint32_t eus, nthreads, bytes; /* global EUs, thread slots, bitmap bytes */
	bool hdr_ok;
	struct zesim_ssa_header hdr;
	dthread_t *t;
	dmodule_t *mods;
	irq_request_t req[MAX_REQUESTS];
	uint32_t nreq;
	bool unsettled; /* attention seen without a new stop yet: look again */
	uint8_t *evbuf;
	uint32_t evcap;
} zs_dbg_t;

static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void) { return zs_now_ns(); }

static void push(zs_dbg_t *s, const zet_debug_event_t *ev)
{
	qevent_t *q = calloc(1, sizeof(*q));
	if (!q)
		return; /* out of memory: the event is lost (nothing better to do in the reader) */
	q->ev = *ev;
	if (s->tail)
		s->tail->next = q;
	else
		s->head = q;
	s->tail = q;
	const uint64_t one = 1;
	if (write(s->efd, &one, sizeof(one)) < 0) {
		/* cannot happen below 2^64-1 pending events */
	}
	pthread_cond_broadcast(&s->cond);
}

static void push_simple(zs_dbg_t *s, zet_debug_event_type_t type)
{
	zet_debug_event_t ev = {.type = type};
	push(s, &ev);
}

/* Thread index (dense, as the SSA slots) <-> API thread and bitmap bit. */
static uint32_t tindex(const zs_dbg_t *s, uint32_t slice, uint32_t ss, uint32_t eu, uint32_t th)
{
	const uint32_t geu = (slice * s->info.subslices_per_slice + ss) * s->info.eus_per_subslice + eu;
	return geu * s->info.threads_per_eu + th;
}

static ze_device_thread_t tthread(const zs_dbg_t *s, uint32_t i)
{
	const uint32_t tpe = s->info.threads_per_eu, eus = s->info.eus_per_subslice,
		       sss = s->info.subslices_per_slice;
	const uint32_t geu = i / tpe;
	ze_device_thread_t t = {.slice = geu / eus / sss, .subslice = geu / eus % sss, .eu = geu % eus,
				.thread = i % tpe};
	return t;
}

static bool bit_get(const uint8_t *map, const zs_dbg_t *s, uint32_t i)
{
	return map[i / s->info.threads_per_eu] >> (i % s->info.threads_per_eu) & 1;
}

static void bit_set(uint8_t *map, const zs_dbg_t *s, uint32_t i)
{
	map[i / s->info.threads_per_eu] |= (uint8_t)(1u << (i % s->info.threads_per_eu));
}

static bool is_all(ze_device_thread_t t)
{
	return t.slice == UINT32_MAX && t.subslice == UINT32_MAX && t.eu == UINT32_MAX && t.thread == UINT32_MAX;
}

static bool is_single(ze_device_thread_t t)
{
	return t.slice != UINT32_MAX && t.subslice != UINT32_MAX && t.eu != UINT32_MAX && t.thread != UINT32_MAX;
}

/* The bitmap of the threads t names (UINT32_MAX fields: every value); false if a
 * coordinate is out of range. */
static bool thread_map(const zs_dbg_t *s, ze_device_thread_t t, uint8_t *map)
{
	const uint32_t lim[4] = {s->info.slices, s->info.subslices_per_slice, s->info.eus_per_subslice,
				 s->info.threads_per_eu};
	const uint32_t v[4] = {t.slice, t.subslice, t.eu, t.thread};
	for (int k = 0; k < 4; k++)
		if (v[k] != UINT32_MAX && v[k] >= lim[k])
			return false;
	memset(map, 0, MAX_BITMAP);
	for (uint32_t a = 0; a < lim[0]; a++)
		for (uint32_t b = 0; b < lim[1]; b++)
			for (uint32_t c = 0; c < lim[2]; c++)
				for (uint32_t d = 0; d < lim[3]; d++)
					if ((v[0] == UINT32_MAX || v[0] == a) && (v[1] == UINT32_MAX || v[1] == b) &&
					    (v[2] == UINT32_MAX || v[2] == c) && (v[3] == UINT32_MAX || v[3] == d))
						bit_set(map, s, tindex(s, a, b, c, d));
	return true;
}

/* ---- the KMD ---------------------------------------------------------------------- */

static int vm_fd(zs_dbg_t *s)
{
	if (s->vm_fd >= 0)
		return s->vm_fd;
	if (!s->vm)
		return -ENOENT;
	struct drm_zesim_eudebug_vm_open o = {.client_handle = s->client, .vm_handle = s->vm,
					      .timeout_ns = 1000000000ull};
	const int rc = zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &o);
	if (rc < 0)
		return rc;
	s->vm_fd = rc;
	return rc;
}

static int ssa_header(zs_dbg_t *s)
{
	if (s->hdr_ok)
		return 0;
	int fd = vm_fd(s);
	if (fd < 0)
		return fd;
	struct zesim_ssa_magic_header m;
	int rc = zs_os_vm_read(fd, s->info.ssa_addr, &m, sizeof(m));
	if (!rc)
		rc = zs_os_vm_read(fd, s->info.ssa_addr + sizeof(m), &s->hdr, sizeof(s->hdr));
	if (rc)
		return rc;
	if (memcmp(m.magic, "tssarea", 8) != 0 || m.version.major != 2 || !s->hdr.state_save_size)
		return -EPROTO;
	s->hdr_ok = true;
	return 0;
}

static uint64_t slot_va(const zs_dbg_t *s, uint32_t i)
{
	return s->info.ssa_addr + s->hdr.state_area_offset + (uint64_t)i * s->hdr.state_save_size;
}

static int eu_control(zs_dbg_t *s, uint32_t cmd, uint8_t *map)
{
	struct drm_zesim_eudebug_eu_control c = {.client_handle = s->client, .cmd = cmd,
						 .exec_queue_handle = s->exec_queue,
						 .bitmask_size = map ? s->bytes : 0, .bitmask_ptr = (uintptr_t)map};
	return zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c);
}

static ze_result_t errno_result(int rc)
{
	switch (rc) {
	case 0:
		return ZE_RESULT_SUCCESS;
	case -EFAULT:
	case -ENOENT:
		return ZE_RESULT_ERROR_NOT_AVAILABLE;
	case -ENOMEM:
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	case -EINVAL:
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	case -ENOTCONN:
	case -EIO:
	case -ENODEV:
	case -EPIPE:
		return ZE_RESULT_ERROR_NOT_AVAILABLE;
	default:
		return ZE_RESULT_ERROR_UNKNOWN;
	}
}

/* ---- stops ------------------------------------------------------------------------- */

static bool requested(const zs_dbg_t *s, uint32_t i, irq_request_t **which)
{
	for (uint32_t r = 0; r < s->nreq; r++)
		if (bit_get(s->req[r].map, s, i)) {
			if (which)
				*which = (irq_request_t *)&s->req[r];
			return true;
		}
	return false;
}

/* Resume the threads of map (each stopped): cmd RESUME in their slots, EU_CONTROL
 * RESUME; with wait, until each slot's count moved on. */
static int resume_map(zs_dbg_t *s, uint8_t *map, bool wait)
{
	int fd = vm_fd(s);
	if (fd < 0)
		return fd;
	const uint32_t cmd = ZESIM_SIP_CMD_RESUME;
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (bit_get(map, s, i)) {
			int rc = zs_os_vm_write(fd, slot_va(s, i) + ZESIM_SSA_CMD_OFFSET, &cmd, sizeof(cmd));
			if (rc)
				return rc;
		}
	int rc = eu_control(s, ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME, map);
	if (rc < 0)
		return rc;
	uint32_t lo = UINT32_MAX, hi = 0;
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (bit_get(map, s, i)) {
			s->t[i].stopped = false;
			if (lo == UINT32_MAX)
				lo = i;
			hi = i;
		}
	if (!wait || lo == UINT32_MAX)
		return 0;
	/* Until every slot's count moved on: one read of all their slots per look (the
	 * resumed threads keep the device busy, and each request waits its turn). */
	const uint64_t size = s->hdr.state_save_size, span = (uint64_t)(hi - lo + 1) * size;
	const bool bulk = hi - lo >= 4;
	uint8_t *buf = bulk ? malloc(span) : NULL;
	const uint64_t end = now_ns() + RESUME_WAIT_NS;
	for (;;) {
		bool done = true;
		if (bulk && (!buf || zs_os_vm_read(fd, slot_va(s, lo), buf, span)))
			break;
		for (uint32_t i = lo; i <= hi && done; i++) {
			if (!bit_get(map, s, i))
				continue;
			struct zesim_ssa_sr_ident id;
			if (bulk)
				memcpy(&id, buf + (uint64_t)(i - lo) * size + s->hdr.sr_magic_offset, sizeof(id));
			else if (zs_os_vm_read(fd, slot_va(s, i) + s->hdr.sr_magic_offset, &id, sizeof(id)))
				break;
			done = id.count != s->t[i].stop_count;
		}
		if (done || now_ns() > end)
			break;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	free(buf);
	return 0;
}

/* The threads of map that are in attention: new stops become THREAD_STOPPED (or,
 * stopped by a halt nobody asked for, are resumed at once). */
static void scan(zs_dbg_t *s, const uint8_t *map)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (bit_get(map, s, i) && !s->t[i].stopped) {
			if (lo == UINT32_MAX)
				lo = i;
			hi = i;
		}
	if (lo == UINT32_MAX)
		return;
	int fd = vm_fd(s);
	if (fd < 0 || ssa_header(s)) {
		s->unsettled = true;
		return;
	}
	/* One read of the slots concerned (NEO reads the whole area too). */
	const uint64_t size = s->hdr.state_save_size;
	const uint64_t span = (uint64_t)(hi - lo + 1) * size;
	uint8_t *buf = malloc(span);
	if (!buf || zs_os_vm_read(fd, slot_va(s, lo), buf, span)) {
		free(buf);
		s->unsettled = true;
		return;
	}
	uint8_t accidental[MAX_BITMAP] = {0};
	bool any_accidental = false;
	for (uint32_t i = lo; i <= hi; i++) {
		if (!bit_get(map, s, i) || s->t[i].stopped)
			continue;
		const uint8_t *slot = buf + (uint64_t)(i - lo) * size;
		struct zesim_ssa_sr_ident id;
		memcpy(&id, slot + s->hdr.sr_magic_offset, sizeof(id));
		if (memcmp(id.magic, "srmagic", 8) != 0 || !(id.count & 1) ||
		    (s->t[i].have_count && id.count == s->t[i].stop_count)) {
			s->unsettled = true; /* the SIP has not got there yet, or a stale attention bit */
			continue;
		}
		s->t[i].stopped = true;
		s->t[i].have_count = true;
		s->t[i].stop_count = id.count;
		uint32_t cr[4];
		memcpy(cr, slot + ZESIM_SSA_CR_OFFSET, sizeof(cr));
		irq_request_t *rq = NULL;
		const bool asked = requested(s, i, &rq);
		if (!(cr[1] & CR1_EXCEPTIONS) && (cr[1] & CR1_INTERRUPTED) && !asked) {
			bit_set(accidental, s, i); /* a halt request left over from an earlier interrupt */
			any_accidental = true;
			continue;
		}
		if (rq)
			rq->any_stopped = true;
		zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_THREAD_STOPPED};
		ev.info.thread.thread = tthread(s, i);
		push(s, &ev);
	}
	free(buf);
	if (any_accidental)
		resume_map(s, accidental, false);
	/* A single-thread request is answered by its stop; a group's when all of it stopped. */
	for (uint32_t r = 0; r < s->nreq;) {
		bool done = true;
		for (uint32_t i = 0; i < s->nthreads && done; i++)
			if (bit_get(s->req[r].map, s, i) && !s->t[i].stopped)
				done = false;
		if (done)
			s->req[r] = s->req[--s->nreq];
		else
			r++;
	}
}

/* Interrupt requests past their time: THREAD_UNAVAILABLE for those none of whose
 * threads stopped (the threads ended or never ran). */
static void expire(zs_dbg_t *s)
{
	const uint64_t now = now_ns();
	for (uint32_t r = 0; r < s->nreq;) {
		if (now < s->req[r].deadline) {
			r++;
			continue;
		}
		if (!s->req[r].any_stopped) {
			zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_THREAD_UNAVAILABLE};
			ev.info.thread.thread = s->req[r].thread;
			push(s, &ev);
		}
		s->req[r] = s->req[--s->nreq];
	}
}

static void poll_stopped(zs_dbg_t *s)
{
	uint8_t map[MAX_BITMAP] = {0};
	struct drm_zesim_eudebug_eu_control c = {.client_handle = s->client,
						 .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED,
						 .exec_queue_handle = s->exec_queue, .bitmask_size = s->bytes,
						 .bitmask_ptr = (uintptr_t)map};
	if (zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c) < 0)
		return;
	s->unsettled = false;
	scan(s, map);
}

/* ---- events ------------------------------------------------------------------------ */

static void module_event(zs_dbg_t *s, const struct drm_zesim_eudebug_event_module *e)
{
	if (e->base.flags & ZESIM_EUDEBUG_EVENT_CREATE) {
		dmodule_t *m = calloc(1, sizeof(*m));
		if (!m)
			return;
		m->handle = e->metadata_handle;
		m->load = e->load_addr;
		m->seqno = e->base.seqno;
		m->size = e->elf_size;
		m->elf = malloc(m->size ? m->size : 1);
		struct drm_zesim_eudebug_read_metadata r = {.client_handle = e->client_handle,
							    .metadata_handle = e->metadata_handle,
							    .ptr = (uintptr_t)m->elf, .size = m->size};
		if (!m->elf || zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &r) < 0)
			m->size = 0; /* still reported: the load address is known */
		else
			m->size = r.size;
		m->ack_pending = (e->base.flags & ZESIM_EUDEBUG_EVENT_NEED_ACK) != 0;
		m->next = s->mods;
		s->mods = m;
		zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_MODULE_LOAD,
					.flags = m->ack_pending ? ZET_DEBUG_EVENT_FLAG_NEED_ACK : 0};
		ev.info.module.format = ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF;
		ev.info.module.moduleBegin = (uintptr_t)m->elf;
		ev.info.module.moduleEnd = (uintptr_t)m->elf + m->size;
		ev.info.module.load = m->load;
		push(s, &ev);
	} else if (e->base.flags & ZESIM_EUDEBUG_EVENT_DESTROY) {
		for (dmodule_t *m = s->mods; m; m = m->next)
			if (m->handle == e->metadata_handle) {
				m->ack_pending = false;
				zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_MODULE_UNLOAD};
				ev.info.module.format = ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF;
				ev.info.module.moduleBegin = (uintptr_t)m->elf;
				ev.info.module.moduleEnd = (uintptr_t)m->elf + m->size;
				ev.info.module.load = m->load;
				push(s, &ev);
				break;
			}
	}
}

static void handle_event(zs_dbg_t *s, const struct drm_zesim_eudebug_event *e)
{
	const bool create = e->flags & ZESIM_EUDEBUG_EVENT_CREATE, destroy = e->flags & ZESIM_EUDEBUG_EVENT_DESTROY;
	switch (e->type) {
	case ZESIM_EUDEBUG_EVENT_OPEN: {
		const struct drm_zesim_eudebug_event_open *o = (const void *)e;
		if (create) {
			if (!s->client)
				s->client = o->client_handle;
			if (s->opens++ == 0)
				push_simple(s, ZET_DEBUG_EVENT_TYPE_PROCESS_ENTRY);
		} else if (destroy && s->opens) {
			if (--s->opens == 0)
				push_simple(s, ZET_DEBUG_EVENT_TYPE_PROCESS_EXIT);
		}
		break;
	}
	case ZESIM_EUDEBUG_EVENT_VM: {
		const struct drm_zesim_eudebug_event_vm *v = (const void *)e;
		if (create && !s->vm) {
			s->vm = v->vm_handle;
			s->client = v->client_handle;
		} else if (destroy && v->vm_handle == s->vm) {
			s->vm = 0;
			if (s->vm_fd >= 0)
				close(s->vm_fd);
			s->vm_fd = -1;
		}
		break;
	}
	case ZESIM_EUDEBUG_EVENT_EXEC_QUEUE: {
		const struct drm_zesim_eudebug_event_exec_queue *q = (const void *)e;
		if (create)
			s->exec_queue = q->exec_queue_handle;
		break;
	}
	case ZESIM_EUDEBUG_EVENT_EU_ATTENTION: {
		const struct drm_zesim_eudebug_event_eu_attention *a = (const void *)e;
		uint8_t map[MAX_BITMAP] = {0};
		memcpy(map, a->bitmask, a->bitmask_size < MAX_BITMAP ? a->bitmask_size : MAX_BITMAP);
		scan(s, map);
		break;
	}
	case ZESIM_EUDEBUG_EVENT_PAGEFAULT: {
		const struct drm_zesim_eudebug_event_pagefault *p = (const void *)e;
		zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_PAGE_FAULT};
		ev.info.page_fault.address = p->pagefault_address;
		ev.info.page_fault.mask = ~(uint64_t)4095; /* the page of the address */
		ev.info.page_fault.reason = ZET_DEBUG_PAGE_FAULT_REASON_MAPPING_ERROR;
		push(s, &ev);
		uint8_t map[MAX_BITMAP] = {0};
		memcpy(map, p->bitmask, p->bitmask_size < MAX_BITMAP ? p->bitmask_size : MAX_BITMAP);
		scan(s, map);
		break;
	}
	case ZESIM_EUDEBUG_EVENT_MODULE:
		module_event(s, (const void *)e);
		break;
	default:
		break;
	}
}

static void detach_event(zs_dbg_t *s, zet_debug_detach_reason_t reason)
{
	if (s->detached)
		return;
	s->detached = true;
	/* Nothing of the target can stop or be reported any more. */
	for (uint32_t i = 0; i < s->nthreads; i++)
		s->t[i].stopped = false;
	s->nreq = 0;
	zet_debug_event_t ev = {.type = ZET_DEBUG_EVENT_TYPE_DETACHED};
	ev.info.detached.reason = reason;
	push(s, &ev);
}

/* Read every queued KMD event; false once the connection is over. */
static bool drain(zs_dbg_t *s)
{
	for (;;) {
		struct drm_zesim_eudebug_event *e = (void *)s->evbuf;
		memset(e, 0, sizeof(*e));
		e->type = ZESIM_EUDEBUG_EVENT_READ;
		e->len = s->evcap;
		struct drm_zesim_eudebug_read_event r = {.timeout_ns = 0, .event_ptr = (uintptr_t)s->evbuf,
							 .event_size = s->evcap};
		const int rc = zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_READ_EVENT, &r);
		if (rc == -EMSGSIZE && r.event_size > s->evcap) {
			uint8_t *b = realloc(s->evbuf, r.event_size);
			if (!b)
				return true;
			s->evbuf = b;
			s->evcap = r.event_size;
			continue;
		}
		if (rc == -EAGAIN || rc == -ETIME)
			return true;
		if (rc == -ENOTCONN) {
			detach_event(s, ZET_DEBUG_DETACH_REASON_HOST_EXIT);
			return false;
		}
		if (rc < 0) {
			detach_event(s, ZET_DEBUG_DETACH_REASON_INVALID);
			return false;
		}
		handle_event(s, e);
	}
}

static void *reader(void *arg)
{
	zs_dbg_t *s = arg;
	while (!atomic_load(&s->quit)) {
		pthread_mutex_lock(&s->lock);
		const bool busy = s->nreq || s->unsettled;
		pthread_mutex_unlock(&s->lock);
		struct pollfd p = {.fd = s->fd, .events = POLLIN};
		const int k = poll(&p, 1, busy ? 2 : 20);
		pthread_mutex_lock(&s->lock);
		bool alive = true;
		if (k > 0 && (p.revents & POLLIN))
			alive = drain(s);
		if (alive && k > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {
			/* Gone: the events before the hang-up first. */
			if (drain(s))
				detach_event(s, (p.revents & POLLHUP) ? ZET_DEBUG_DETACH_REASON_HOST_EXIT
								      : ZET_DEBUG_DETACH_REASON_INVALID);
			alive = false;
		}
		/* New stops come as EU_ATTENTION events; the bitmap is polled only while an
		 * attention was seen without its stop in the slot yet. */
		if (alive && s->unsettled)
			poll_stopped(s);
		if (alive && s->nreq)
			expire(s);
		pthread_mutex_unlock(&s->lock);
		if (!alive)
			break;
	}
	return NULL;
}

/* ---- entry points -------------------------------------------------------------------- */

#define SESSION(h) ((zs_dbg_t *)(h))

ze_result_t ZE_APICALL zs_device_get_debug_properties(zet_device_handle_t hDevice, zet_device_debug_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, (ze_structure_type_t)ZET_STRUCTURE_TYPE_DEVICE_DEBUG_PROPERTIES);
	p->flags = enabled ? ZET_DEVICE_DEBUG_PROPERTY_FLAG_ATTACH : 0;
	return ZE_RESULT_SUCCESS;
}

static void session_free(zs_dbg_t *s)
{
	if (s->vm_fd >= 0)
		close(s->vm_fd);
	if (s->fd >= 0)
		close(s->fd);
	if (s->drm_fd >= 0)
		close(s->drm_fd);
	if (s->efd >= 0)
		close(s->efd);
	while (s->head) {
		qevent_t *q = s->head;
		s->head = q->next;
		free(q);
	}
	while (s->mods) {
		dmodule_t *m = s->mods;
		s->mods = m->next;
		free(m->elf);
		free(m);
	}
	free(s->t);
	free(s->evbuf);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}

static ze_result_t connect_result(int rc)
{
	switch (rc) {
	case -ESRCH:
	case -EINVAL:
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* no such process with the device open, or itself */
	case -EACCES:
	case -EPERM:
		return ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS;
	case -EBUSY:
		return ZE_RESULT_ERROR_NOT_AVAILABLE; /* a debugger is already attached */
	case -ENOTTY:
	case -EOPNOTSUPP:
	case -ENODEV:
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	case -ENOMEM:
	case -EMFILE:
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	default:
		return ZE_RESULT_ERROR_UNKNOWN;
	}
}

ze_result_t ZE_APICALL zs_debug_attach(zet_device_handle_t hDevice, const zet_debug_config_t *config,
				       zet_debug_session_handle_t *phDebug)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(config);
	ZS_CHECK_PTR(phDebug);
	if (!enabled)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (config->pid == 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	zs_dbg_t *s = calloc(1, sizeof(*s));
	if (!s)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	s->dev = (zs_device_t *)hDevice;
	s->pid = config->pid;
	s->drm_fd = s->fd = s->vm_fd = s->efd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&s->quit, false);
	pthread_mutex_lock(&sessions_lock);
	int rc = zs_os_eudebug_connect(config->pid, ZESIM_EUDEBUG_CONNECT_ACK_MODULES, &s->drm_fd, &s->fd);
	pthread_mutex_unlock(&sessions_lock);
	if (rc) {
		session_free(s);
		return connect_result(rc);
	}
	if (zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_INFO, &s->info) < 0 || !s->info.threads_per_eu ||
	    s->info.threads_per_eu > 8 || s->info.bitmask_size > MAX_BITMAP) {
		session_free(s);
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	s->eus = s->info.slices * s->info.subslices_per_slice * s->info.eus_per_subslice;
	s->nthreads = s->eus * s->info.threads_per_eu;
	s->bytes = s->info.bitmask_size;
	s->t = calloc(s->nthreads ? s->nthreads : 1, sizeof(*s->t));
	s->evcap = 4096;
	s->evbuf = malloc(s->evcap);
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (!s->t || !s->evbuf || s->efd < 0 || s->eus > s->bytes) {
		session_free(s);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	/* The events the KMD replayed at the connection (the target's files, VMs, queues,
	 * modules) before attach returns: the target's handles are known from here on. */
	pthread_mutex_lock(&s->lock);
	drain(s);
	pthread_mutex_unlock(&s->lock);
	if (zs_handle_add(s, ZS_T_DEBUG_SESSION)) {
		session_free(s);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (pthread_create(&s->reader, NULL, reader, s)) {
		zs_handle_remove(s);
		session_free(s);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*phDebug = (zet_debug_session_handle_t)s;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_debug_detach(zet_debug_session_handle_t hDebug)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	zs_dbg_t *s = SESSION(hDebug);
	zs_handle_remove(s);
	atomic_store(&s->quit, true);
	pthread_join(s->reader, NULL);
	/* Closing the connection resumes the stopped threads and releases the module
	 * acks (docs/debug.md section 3). */
	session_free(s);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_debug_read_event(zet_debug_session_handle_t hDebug, uint64_t timeout,
					   zet_debug_event_t *event)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	ZS_CHECK_PTR(event);
	zs_dbg_t *s = SESSION(hDebug);
	struct timespec until;
	if (timeout && timeout != UINT64_MAX) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		const uint64_t ns = (uint64_t)until.tv_nsec + (timeout % 1000u) * 1000000ull;
		until.tv_sec += (time_t)(timeout / 1000u + ns / 1000000000ull);
		until.tv_nsec = (long)(ns % 1000000000ull);
	}
	pthread_mutex_lock(&s->lock);
	while (!s->head) {
		/* Detached and drained: nothing will come (no wait, even "forever"). */
		if (!timeout || s->detached) {
			pthread_mutex_unlock(&s->lock);
			return ZE_RESULT_NOT_READY;
		}
		if (timeout == UINT64_MAX)
			pthread_cond_wait(&s->cond, &s->lock);
		else if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT && !s->head) {
			pthread_mutex_unlock(&s->lock);
			return ZE_RESULT_NOT_READY;
		}
	}
	qevent_t *q = s->head;
	s->head = q->next;
	if (!s->head)
		s->tail = NULL;
	uint64_t v;
	if (read(s->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN cannot happen: one count per queued event */
	}
	pthread_mutex_unlock(&s->lock);
	*event = q->ev;
	free(q);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_debug_acknowledge_event(zet_debug_session_handle_t hDebug, const zet_debug_event_t *event)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	ZS_CHECK_PTR(event);
	zs_dbg_t *s = SESSION(hDebug);
	if (event->type != ZET_DEBUG_EVENT_TYPE_MODULE_LOAD || !(event->flags & ZET_DEBUG_EVENT_FLAG_NEED_ACK))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&s->lock);
	ze_result_t r = ZE_RESULT_ERROR_INVALID_ARGUMENT; /* no such event waiting for its ack */
	for (dmodule_t *m = s->mods; m; m = m->next)
		if (m->ack_pending && m->load == event->info.module.load &&
		    (uintptr_t)m->elf == event->info.module.moduleBegin) {
			struct drm_zesim_eudebug_ack_event a = {.type = ZESIM_EUDEBUG_EVENT_MODULE, .seqno = m->seqno};
			const int rc = zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a);
			m->ack_pending = false;
			/* -EINVAL: the KMD released it already (the module was destroyed) */
			r = rc < 0 && rc != -EINVAL ? errno_result(rc) : ZE_RESULT_SUCCESS;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return r;
}

ze_result_t ZE_APICALL zs_debug_interrupt(zet_debug_session_handle_t hDebug, ze_device_thread_t thread)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	zs_dbg_t *s = SESSION(hDebug);
	uint8_t map[MAX_BITMAP];
	if (!thread_map(s, thread, map))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&s->lock);
	ze_result_t r = ZE_RESULT_SUCCESS;
	bool any_running = false, pending = false;
	for (uint32_t i = 0; i < s->nthreads; i++) {
		if (!bit_get(map, s, i))
			continue;
		if (!s->t[i].stopped)
			any_running = true;
		if (requested(s, i, NULL))
			pending = true;
	}
	if (s->detached || !any_running)
		r = ZE_RESULT_ERROR_NOT_AVAILABLE; /* already stopped (or nothing left to stop) */
	else if (pending)
		r = ZE_RESULT_NOT_READY; /* an interrupt of these threads is pending: no second one */
	else if (s->nreq == MAX_REQUESTS)
		r = ZE_RESULT_NOT_READY;
	if (!r) {
		irq_request_t *q = &s->req[s->nreq];
		memset(q, 0, sizeof(*q));
		q->thread = thread;
		for (uint32_t i = 0; i < s->nthreads; i++)
			if (bit_get(map, s, i) && !s->t[i].stopped)
				bit_set(q->map, s, i);
		q->deadline = now_ns() + interrupt_timeout_ns;
		const int rc = is_all(thread) ? eu_control(s, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL, NULL)
					      : eu_control(s, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT, q->map);
		if (rc < 0)
			r = errno_result(rc);
		else
			s->nreq++;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

ze_result_t ZE_APICALL zs_debug_resume(zet_debug_session_handle_t hDebug, ze_device_thread_t thread)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	zs_dbg_t *s = SESSION(hDebug);
	uint8_t map[MAX_BITMAP], stopped[MAX_BITMAP] = {0};
	if (!thread_map(s, thread, map))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&s->lock);
	bool any = false;
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (bit_get(map, s, i) && s->t[i].stopped) {
			bit_set(stopped, s, i);
			any = true;
		}
	ze_result_t r = ZE_RESULT_ERROR_NOT_AVAILABLE; /* running or unavailable */
	if (any && !s->detached)
		r = errno_result(resume_map(s, stopped, true));
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* A single stopped thread (registers, SLM) or, with may_all, the all-threads id
 * (default memory).  Returns its index in *idx (UINT32_MAX for all). */
static ze_result_t stopped_thread(zs_dbg_t *s, ze_device_thread_t t, bool may_all, uint32_t *idx)
{
	if (may_all && is_all(t)) {
		*idx = UINT32_MAX;
		return ZE_RESULT_SUCCESS;
	}
	uint8_t map[MAX_BITMAP];
	if (!is_single(t) || !thread_map(s, t, map))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const uint32_t i = tindex(s, t.slice, t.subslice, t.eu, t.thread);
	if (!s->t[i].stopped || s->detached)
		return ZE_RESULT_ERROR_NOT_AVAILABLE;
	*idx = i;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t check_space(const zet_debug_memory_space_desc_t *desc, const void *buffer)
{
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(buffer);
	if (desc->stype != ZET_STRUCTURE_TYPE_DEBUG_MEMORY_SPACE_DESC)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (desc->type > ZET_DEBUG_MEMORY_SPACE_TYPE_SLM)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	return ZE_RESULT_SUCCESS;
}

/* One SIP command of a stopped thread: cmd into its slot, resume it alone, wait for
 * READY and its attention again. */
static int sip_command(zs_dbg_t *s, uint32_t i, struct zesim_ssa_sip_command *c)
{
	const int fd = vm_fd(s);
	if (fd < 0)
		return fd;
	const uint64_t va = slot_va(s, i) + ZESIM_SSA_CMD_OFFSET;
	int rc = zs_os_vm_write(fd, va, c, sizeof(*c));
	uint8_t map[MAX_BITMAP] = {0};
	bit_set(map, s, i);
	if (!rc)
		rc = eu_control(s, ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME, map);
	if (rc < 0)
		return rc;
	const uint64_t end = now_ns() + SLM_WAIT_NS;
	bool ready = false;
	while (now_ns() < end) {
		if (!ready) {
			uint32_t cmd;
			if ((rc = zs_os_vm_read(fd, va, &cmd, sizeof(cmd))))
				return rc;
			ready = cmd == ZESIM_SIP_CMD_READY;
		}
		if (ready) {
			uint8_t att[MAX_BITMAP] = {0};
			struct drm_zesim_eudebug_eu_control q = {.client_handle = s->client,
								 .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED,
								 .exec_queue_handle = s->exec_queue,
								 .bitmask_size = s->bytes, .bitmask_ptr = (uintptr_t)att};
			if ((rc = zs_os_eudebug_ioctl(s->fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &q)) < 0)
				return rc;
			if (bit_get(att, s, i))
				return zs_os_vm_read(fd, va, c, sizeof(*c));
		}
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
	return -ETIME;
}

/* SLM of a stopped thread's group, in chunks of the SIP's buffer (dword-aligned;
 * a write's partial dwords are read first). */
static int slm_access(zs_dbg_t *s, uint32_t i, uint64_t addr, size_t size, uint8_t *rbuf, const uint8_t *wbuf)
{
	uint64_t a = addr & ~3ull;
	const uint64_t end = addr + size;
	while (a < end) {
		uint64_t n = ((end + 3) & ~3ull) - a;
		if (n > ZESIM_SIP_CMD_BUFFER)
			n = ZESIM_SIP_CMD_BUFFER;
		struct zesim_ssa_sip_command c = {.command = ZESIM_SIP_CMD_SLM_READ, .size = (uint32_t)n, .offset = a};
		const uint64_t lo = a > addr ? a : addr, hi = a + n < end ? a + n : end;
		int rc;
		if (!wbuf || lo > a || hi < a + n) { /* a read, or a write of part of a dword */
			if ((rc = sip_command(s, i, &c)))
				return rc;
			if (c.size != n)
				return -EFAULT; /* refused: past the group's SLM */
		}
		if (rbuf)
			memcpy(rbuf + (lo - addr), c.buffer + (lo - a), hi - lo);
		if (wbuf) {
			memcpy(c.buffer + (lo - a), wbuf + (lo - addr), hi - lo);
			c.command = ZESIM_SIP_CMD_SLM_WRITE;
			c.size = (uint32_t)n;
			c.offset = a;
			if ((rc = sip_command(s, i, &c)))
				return rc;
			if (c.size != n)
				return -EFAULT;
		}
		a += n;
	}
	return 0;
}

static ze_result_t memory_access(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
				 const zet_debug_memory_space_desc_t *desc, size_t size, uint8_t *rbuf,
				 const uint8_t *wbuf)
{
	zs_dbg_t *s = SESSION(hDebug);
	pthread_mutex_lock(&s->lock);
	uint32_t i;
	ze_result_t r = stopped_thread(s, thread, desc->type == ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT, &i);
	if (!r && desc->type == ZET_DEBUG_MEMORY_SPACE_TYPE_DEFAULT) {
		const int fd = vm_fd(s);
		int rc = fd < 0 ? fd : 0;
		if (!rc)
			rc = rbuf ? zs_os_vm_read(fd, desc->address, rbuf, size)
				  : zs_os_vm_write(fd, desc->address, wbuf, size);
		r = errno_result(rc);
	} else if (!r) {
		int rc = ssa_header(s);
		if (!rc)
			rc = slm_access(s, i, desc->address, size, rbuf, wbuf);
		r = rc == -ETIME ? ZE_RESULT_ERROR_UNKNOWN : errno_result(rc);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

ze_result_t ZE_APICALL zs_debug_read_memory(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					    const zet_debug_memory_space_desc_t *desc, size_t size, void *buffer)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	ze_result_t r = check_space(desc, buffer);
	return r ? r : memory_access(hDebug, thread, desc, size, buffer, NULL);
}

ze_result_t ZE_APICALL zs_debug_write_memory(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					     const zet_debug_memory_space_desc_t *desc, size_t size, const void *buffer)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	ze_result_t r = check_space(desc, buffer);
	return r ? r : memory_access(hDebug, thread, desc, size, NULL, buffer);
}

ze_result_t ZE_APICALL zs_debug_get_register_set_properties(zet_device_handle_t hDevice, uint32_t *pCount,
							    zet_debug_regset_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !p) {
		*pCount = NREGSETS;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > NREGSETS)
		*pCount = NREGSETS;
	for (uint32_t i = 0; i < *pCount; i++) {
		const regset_t *g = &regsets[i];
		p[i].stype = ZET_STRUCTURE_TYPE_DEBUG_REGSET_PROPERTIES;
		p[i].type = g->type;
		p[i].version = 0;
		p[i].generalFlags = ZET_DEBUG_REGSET_FLAG_READABLE | (g->writable ? ZET_DEBUG_REGSET_FLAG_WRITEABLE : 0);
		p[i].deviceFlags = 0;
		p[i].count = g->num;
		p[i].bitSize = g->bits;
		p[i].byteSize = g->bytes;
	}
	return ZE_RESULT_SUCCESS;
}

static ze_result_t registers(zet_debug_session_handle_t hDebug, ze_device_thread_t thread, uint32_t type,
			     uint32_t start, uint32_t count, void *values, bool write)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	zs_dbg_t *s = SESSION(hDebug);
	const regset_t *g = regset_find(type);
	if (!g || start >= g->num || count > g->num - start)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (write && !g->writable)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* read-only register set */
	if (count && !values)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	pthread_mutex_lock(&s->lock);
	uint32_t i;
	ze_result_t r = stopped_thread(s, thread, false, &i);
	if (!r && count) {
		int rc = ssa_header(s);
		const int fd = rc ? rc : vm_fd(s);
		if (fd < 0)
			rc = fd;
		if (!rc) {
			const uint64_t va = slot_va(s, i) + g->offset + (uint64_t)start * g->bytes;
			rc = write ? zs_os_vm_write(fd, va, values, (size_t)count * g->bytes)
				   : zs_os_vm_read(fd, va, values, (size_t)count * g->bytes);
		}
		r = errno_result(rc);
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}

ze_result_t ZE_APICALL zs_debug_read_registers(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
					       uint32_t type, uint32_t start, uint32_t count, void *pRegisterValues)
{
	return registers(hDebug, thread, type, start, count, pRegisterValues, false);
}

ze_result_t ZE_APICALL zs_debug_write_registers(zet_debug_session_handle_t hDebug, ze_device_thread_t thread,
						uint32_t type, uint32_t start, uint32_t count, void *pRegisterValues)
{
	return registers(hDebug, thread, type, start, count, pRegisterValues, true);
}

ze_result_t ZE_APICALL zs_debug_get_event_notifier(zet_debug_session_handle_t hDebug, int *pFd)
{
	ZS_CHECK_HANDLE(hDebug, ZS_T_DEBUG_SESSION);
	ZS_CHECK_PTR(pFd);
	*pFd = SESSION(hDebug)->efd;
	return ZE_RESULT_SUCCESS;
}

/* ---- the target side ------------------------------------------------------------------ */

ze_result_t zs_debug_module_loaded(zs_module_t *mod)
{
	if (!enabled || !mod->native || !mod->text.size)
		return ZE_RESULT_SUCCESS;
	zs_device_t *dev = mod->dev;
	volatile uint64_t *fence = zs_device_slot_alloc(dev);
	if (!fence)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	uint32_t id = 0;
	const int rc = zs_os_debug_metadata_create(&dev->os, mod->native, mod->native_size, zs_bo_va(&mod->text),
						   mod->text.size, (uint64_t)(uintptr_t)fence, 1, &id);
	if (rc) {
		zs_device_slot_free(dev, fence);
		/* A KMD without the debug connection: the module just runs. */
		return rc == -ENOTTY || rc == -EOPNOTSUPP || rc == -EINVAL ? ZE_RESULT_SUCCESS : zs_device_result(dev, rc);
	}
	mod->dbg_id = id;
	mod->dbg_fence = fence;
	atomic_store(&mod->dbg_acked, false);
	return ZE_RESULT_SUCCESS;
}

ze_result_t zs_debug_module_wait(zs_module_t *mod)
{
	if (!mod->dbg_fence || atomic_load(&mod->dbg_acked))
		return ZE_RESULT_SUCCESS;
	/* Until the debugger acknowledged the module (or went away, or never asked). */
	const int rc = zs_os_wait(&mod->dev->os, 0, mod->dbg_fence, ZESIM_UFENCE_OP_EQ, 1, ~0ull, UINT64_MAX);
	if (rc)
		return zs_device_result(mod->dev, rc);
	atomic_store(&mod->dbg_acked, true);
	return ZE_RESULT_SUCCESS;
}

void zs_debug_module_unloaded(zs_module_t *mod)
{
	if (!mod->dbg_id)
		return;
	zs_os_debug_metadata_destroy(&mod->dev->os, mod->dbg_id);
	zs_device_slot_free(mod->dev, mod->dbg_fence);
	mod->dbg_id = 0;
	mod->dbg_fence = NULL;
}
