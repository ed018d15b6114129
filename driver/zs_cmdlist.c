/* Command lists: encoding of batch-buffer commands (docs/commands.md).
 *
 * Every append is one "operation": SEMAPHORE_WAITs for its wait events, a
 * TIMESTAMP_WRITE of the start if its signal event records timestamps, the
 * body (walkers, or nothing for barriers), the end timestamp, and a
 * STORE_DATA of the signal event.  The streamer runs walkers one after the
 * other and performs STORE_DATA / TIMESTAMP_WRITE only after all earlier
 * work has completed, so execution is in order and every append is a
 * barrier; events and timestamps need no further care. */
#include "zs_cmdlist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "zs/gpu_cmds.h"
#include "zs_event.h"
#include "zs_handle.h"
#include "zs_memory.h"
#include "zs_metrics.h"
#include "zs_module.h"
#include "zs_printf.h"
#include "zs_vmem.h"

#define CL(h) ((zs_cmdlist_t *)(h))
#define CHUNK_BYTES (64ull << 10) /* the KMD's physical allocation granule */
#define PENDING UINT64_MAX	  /* chunk used by an append not yet submitted */
#define MAX_ITEMS (1ull << 30)	  /* per built-in launch: byte offsets stay 32-bit */

static uint32_t lo32(uint64_t v) { return (uint32_t)v; }
static uint32_t hi32(uint64_t v) { return (uint32_t)(v >> 32); }

/* ---- GPU memory for command data ------------------------------------------------ */

static void chunks_free(zs_cmdlist_t *cl, zs_chunk_t *c)
{
	while (c) {
		zs_chunk_t *n = c->next;
		zs_os_bo_destroy(&cl->dev->os, &c->bo);
		free(c);
		c = n;
	}
}

/* Makes a chunk with room for `need` bytes the current one. */
static ze_result_t chunk_next(zs_cmdlist_t *cl, uint64_t need)
{
	if (cl->immediate) {
		/* Chunks whose last reader has completed can be reused. */
		for (zs_chunk_t **p = &cl->used; *p;) {
			zs_chunk_t *c = *p;
			if (c->retire != PENDING && zs_queue_done(cl->queue, c->retire)) {
				*p = c->next;
				c->next = cl->free;
				cl->free = c;
			} else {
				p = &c->next;
			}
		}
	}
	zs_chunk_t *c = NULL;
	for (zs_chunk_t **p = &cl->free; *p; p = &(*p)->next)
		if ((*p)->bo.size >= need) {
			c = *p;
			*p = c->next;
			break;
		}
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		const uint64_t size = need <= CHUNK_BYTES ? CHUNK_BYTES : (need + 4095) & ~4095ull;
		int rc = zs_os_bo_create(&cl->dev->os, size, 0, &c->bo);
		if (rc) {
			free(c);
			return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : zs_device_result(cl->dev, rc);
		}
	}
	c->used = 0;
	c->retire = PENDING;
	if (cl->cur) {
		cl->cur->next = cl->used;
		cl->used = cl->cur;
	}
	c->next = NULL;
	cl->cur = c;
	return ZE_RESULT_SUCCESS;
}

/* size bytes of GPU memory, aligned (≤ 4 KiB), readable by this list's commands. */
static ze_result_t arena_alloc(zs_cmdlist_t *cl, uint64_t size, uint64_t align, uint8_t **ptr)
{
	zs_chunk_t *c = cl->cur;
	uint64_t off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off + size > c->bo.size) {
		ze_result_t r = chunk_next(cl, size);
		if (r)
			return r;
		c = cl->cur;
		off = 0;
	}
	c->used = off + size;
	c->retire = PENDING;
	*ptr = c->bo.ptr + off;
	return ZE_RESULT_SUCCESS;
}

/* Every chunk returns to the free list (the list's data is dropped). */
static void arena_reset(zs_cmdlist_t *cl)
{
	if (cl->cur) {
		cl->cur->next = cl->used;
		cl->used = cl->cur;
		cl->cur = NULL;
	}
	while (cl->used) {
		zs_chunk_t *c = cl->used;
		cl->used = c->next;
		c->next = cl->free;
		cl->free = c;
	}
}

/* ---- command encoding -------------------------------------------------------------- */

static ze_result_t emit(zs_cmdlist_t *cl, const uint32_t *dw, size_t n)
{
	if (cl->ncmd + n + 1 > cl->capcmd) { /* + 1: room for BATCH_END */
		size_t cap = cl->capcmd ? cl->capcmd : 256;
		while (cap < cl->ncmd + n + 1)
			cap *= 2;
		uint32_t *nc = realloc(cl->cmd, cap * sizeof(uint32_t));
		if (!nc)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		cl->cmd = nc;
		cl->capcmd = cap;
	}
	memcpy(cl->cmd + cl->ncmd, dw, n * sizeof(uint32_t));
	cl->ncmd += n;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t emit_store(zs_cmdlist_t *cl, uint64_t va, uint32_t value)
{
	const uint32_t d[] = {ZS_CMD_HEADER(ZS_CMD_STORE_DATA, ZS_CMD_LEN_STORE_DATA), lo32(va), hi32(va), value};
	return emit(cl, d, ZS_CMD_LEN_STORE_DATA);
}

static ze_result_t emit_timestamp(zs_cmdlist_t *cl, uint64_t va)
{
	const uint32_t d[] = {ZS_CMD_HEADER(ZS_CMD_TIMESTAMP_WRITE, ZS_CMD_LEN_TIMESTAMP_WRITE), lo32(va), hi32(va)};
	return emit(cl, d, ZS_CMD_LEN_TIMESTAMP_WRITE);
}

static ze_result_t emit_wait_event(zs_cmdlist_t *cl, const zs_event_t *e)
{
	const uint64_t va = zs_event_va(e) + ZS_EVENT_STATE;
	const uint32_t d[] = {ZS_CMD_HEADER(ZS_CMD_SEMAPHORE_WAIT, ZS_CMD_LEN_SEMAPHORE_WAIT), lo32(va), hi32(va),
			      ZS_EVENT_SIGNALED, 0 /* mem == value */};
	return emit(cl, d, ZS_CMD_LEN_SEMAPHORE_WAIT);
}

static ze_result_t emit_walker(zs_cmdlist_t *cl, const zs_dispatch_t *d)
{
	/* An empty grid runs nothing (the walker requires counts >= 1). */
	if (!d->count[0] || !d->count[1] || !d->count[2])
		return ZE_RESULT_SUCCESS;
	uint64_t args = 0;
	if (d->arg_bytes) {
		uint8_t *p;
		ze_result_t r = arena_alloc(cl, d->arg_bytes, 64, &p);
		if (r)
			return r;
		memcpy(p, d->args, d->arg_bytes);
		args = (uint64_t)(uintptr_t)p;
	}
	const uint32_t w[] = {ZS_CMD_HEADER(ZS_CMD_COMPUTE_WALKER, ZS_CMD_LEN_COMPUTE_WALKER),
			      lo32(d->kernel_va), hi32(d->kernel_va), d->simd, d->grf, d->slm,
			      d->group[0], d->group[1], d->group[2], d->count[0], d->count[1], d->count[2],
			      lo32(args), hi32(args), d->arg_bytes, 0};
	return emit(cl, w, ZS_CMD_LEN_COMPUTE_WALKER);
}

/* A host operation at this point of the batch (zs_hostop.h): the
 * rendezvous commands, and the operation for the queue's worker. */
static ze_result_t emit_hostop(zs_cmdlist_t *cl, zs_hostop_t *op)
{
	if (cl->nhostops == cl->caphostops) {
		const size_t cap = cl->caphostops ? 2 * cl->caphostops : 8;
		zs_hostop_t *n = realloc(cl->hostops, cap * sizeof(*n));
		if (!n)
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		cl->hostops = n;
		cl->caphostops = cap;
	}
	uint8_t *slot;
	ze_result_t r = arena_alloc(cl, 8, 8, &slot);
	if (r)
		return r;
	memset(slot, 0, 8);
	const uint64_t va = (uint64_t)(uintptr_t)slot;
	const uint32_t wait[] = {ZS_CMD_HEADER(ZS_CMD_SEMAPHORE_WAIT, ZS_CMD_LEN_SEMAPHORE_WAIT), lo32(va), hi32(va),
				 ZS_HOSTOP_RELEASED, 0 /* mem == value */};
	if ((r = emit_store(cl, va, ZS_HOSTOP_REACHED)) || (r = emit(cl, wait, ZS_CMD_LEN_SEMAPHORE_WAIT)))
		return r;
	op->slot = (volatile uint64_t *)slot;
	cl->hostops[cl->nhostops++] = *op;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t host_copy(zs_cmdlist_t *cl, void *dst, const void *src, uint64_t width, uint32_t rows,
			     uint32_t slices, uint64_t dpitch, uint64_t spitch, uint64_t dslice, uint64_t sslice)
{
	zs_hostop_t op = {.kind = ZS_HOSTOP_COPY, .dst = dst, .src = src, .width = width, .rows = rows,
			  .slices = slices, .dpitch = dpitch, .spitch = spitch, .dslice = dslice, .sslice = sslice};
	return emit_hostop(cl, &op);
}

/* ---- submission ---------------------------------------------------------------------- */

/* Copies the encoded commands plus BATCH_END into GPU memory. */
static ze_result_t finish_batch(zs_cmdlist_t *cl, uint64_t *va)
{
	const uint32_t end = ZS_CMD_HEADER(ZS_CMD_BATCH_END, ZS_CMD_LEN_BATCH_END);
	ze_result_t r = emit(cl, &end, 1);
	if (r)
		return r;
	uint8_t *p;
	if ((r = arena_alloc(cl, cl->ncmd * 4, 64, &p))) {
		cl->ncmd--;
		return r;
	}
	memcpy(p, cl->cmd, cl->ncmd * 4);
	*va = (uint64_t)(uintptr_t)p;
	return ZE_RESULT_SUCCESS;
}

/* Immediate lists: submit what the append encoded. */
static ze_result_t flush_immediate(zs_cmdlist_t *cl)
{
	uint64_t batch, value = 0;
	ze_result_t r = finish_batch(cl, &batch);
	if (!r)
		r = zs_queue_submit(cl->queue, batch, &value);
	if (!r)
		r = zs_hostop_push(cl->queue, cl->hostops, cl->nhostops);
	cl->nhostops = 0;
	/* Chunks this append used are read until its batch completes; if
	 * nothing was submitted they are free at once. */
	const uint64_t retire = r ? cl->queue->submitted : value;
	if (cl->cur && cl->cur->retire == PENDING)
		cl->cur->retire = retire;
	for (zs_chunk_t *c = cl->used; c; c = c->next)
		if (c->retire == PENDING)
			c->retire = retire;
	cl->ncmd = 0;
	if (!r && cl->queue->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) {
		r = zs_queue_wait(cl->queue, value, ZS_FOREVER);
		if (!r)
			zs_printf_flush(cl->dev); /* a synchronous append is a host synchronization */
	}
	return r;
}

ze_result_t zs_cmdlist_batch_for(const zs_cmdlist_t *cl, const zs_queue_t *q, uint64_t *batch_va)
{
	if (cl->immediate || !cl->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* only closed regular lists execute */
	if (cl->ordinal != q->ordinal)
		return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
	if (cl->ctx != q->ctx)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	*batch_va = cl->batch_va;
	return ZE_RESULT_SUCCESS;
}

/* ---- operations ------------------------------------------------------------------------ */

typedef struct op {
	zs_cmdlist_t *cl;
	zs_event_t *signal;
	size_t mark;	 /* command count before the append, to undo a failed one */
	size_t hostmark; /* host operations before it */
} op_t;

static ze_result_t op_begin(op_t *op, ze_command_list_handle_t h, ze_event_handle_t signal, uint32_t nwait,
			    ze_event_handle_t *wait)
{
	ZS_CHECK_HANDLE(h, ZS_T_CMDLIST);
	zs_cmdlist_t *cl = CL(h);
	if (cl->closed)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* appending to a closed list */
	ze_result_t r = zs_event_check_list(cl->ctx, signal, nwait, wait);
	if (r)
		return r;
	op->cl = cl;
	op->signal = (zs_event_t *)signal;
	op->mark = cl->ncmd;
	op->hostmark = cl->nhostops;
	for (uint32_t i = 0; i < nwait && !r; i++)
		r = emit_wait_event(cl, (zs_event_t *)wait[i]);
	if (!r && op->signal && zs_event_timestamped(op->signal))
		r = emit_timestamp(cl, zs_event_va(op->signal) + ZS_EVENT_TS_START);
	if (r)
		cl->ncmd = op->mark;
	return r;
}

/* Ends an operation whose body returned r. */
static ze_result_t op_end(op_t *op, ze_result_t r)
{
	zs_cmdlist_t *cl = op->cl;
	if (!r && op->signal) {
		if (zs_event_timestamped(op->signal))
			r = emit_timestamp(cl, zs_event_va(op->signal) + ZS_EVENT_TS_END);
		if (!r)
			r = emit_store(cl, zs_event_va(op->signal) + ZS_EVENT_STATE, ZS_EVENT_SIGNALED);
	}
	if (r) {
		cl->ncmd = op->mark;
		cl->nhostops = op->hostmark;
		return r;
	}
	return cl->immediate ? flush_immediate(cl) : ZE_RESULT_SUCCESS;
}

ze_result_t zs_cmdlist_append_commands(ze_command_list_handle_t h, const uint32_t *dw, size_t n, const void *oa_group,
				       ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait)
{
	op_t op;
	ze_result_t r = op_begin(&op, h, signal, nwait, wait);
	if (r)
		return r;
	zs_cmdlist_t *cl = op.cl;
	if (n)
		r = emit(cl, dw, n);
	if (!r && oa_group) {
		if (cl->immediate)
			r = zs_metrics_query_prepare(cl->dev, cl->queue->exec_id, oa_group);
		else
			cl->oa_group = oa_group;
	}
	return op_end(&op, r);
}

/* ---- built-in kernels --------------------------------------------------------------------- */

static void builtin_init(zs_dispatch_t *d, const zs_device_t *dev, zs_builtin_id_t id)
{
	const zm_kernel_t *k = dev->builtin[id];
	memset(d, 0, sizeof(*d));
	d->kernel_va = zs_builtin_va(dev, id);
	d->simd = k->simd;
	d->grf = k->grf;
	d->slm = k->slm;
	d->arg_bytes = k->arg_bytes;
}

static void builtin_arg(zs_dispatch_t *d, const zs_device_t *dev, zs_builtin_id_t id, uint32_t i, uint64_t v)
{
	const zm_arg_t *a = &dev->builtin[id]->args[i];
	memcpy(d->args + a->offset, &v, a->size); /* little-endian: the low bytes */
}

/* A 1-D grid of n items (x), times rows and slices (y, z). */
static void builtin_grid(zs_dispatch_t *d, const zs_device_t *dev, uint64_t n, uint32_t rows, uint32_t slices)
{
	const uint32_t threads = dev->max_group_threads < 4 ? dev->max_group_threads : 4;
	const uint32_t g = d->simd * threads;
	d->group[0] = g;
	d->group[1] = d->group[2] = 1;
	d->count[0] = (uint32_t)((n + g - 1) / g);
	d->count[1] = rows;
	d->count[2] = slices;
}

static ze_result_t copy_region_bytes(zs_cmdlist_t *cl, uint64_t dst, uint64_t src, uint32_t width, uint32_t rows,
				     uint32_t slices, uint32_t dpitch, uint32_t spitch, uint32_t dslice,
				     uint32_t sslice)
{
	if (!width || !rows || !slices)
		return ZE_RESULT_SUCCESS;
	const zs_builtin_id_t id = ZS_BUILTIN_COPY_BYTES;
	zs_dispatch_t d;
	builtin_init(&d, cl->dev, id);
	builtin_arg(&d, cl->dev, id, 0, dst & ~3ull);
	builtin_arg(&d, cl->dev, id, 1, src & ~3ull);
	builtin_arg(&d, cl->dev, id, 2, width);
	builtin_arg(&d, cl->dev, id, 3, dpitch);
	builtin_arg(&d, cl->dev, id, 4, spitch);
	builtin_arg(&d, cl->dev, id, 5, dslice);
	builtin_arg(&d, cl->dev, id, 6, sslice);
	builtin_arg(&d, cl->dev, id, 7, dst & 3);
	builtin_arg(&d, cl->dev, id, 8, src & 3);
	builtin_grid(&d, cl->dev, width, rows, slices);
	return emit_walker(cl, &d);
}

static ze_result_t copy_bytes(zs_cmdlist_t *cl, uint64_t dst, uint64_t src, uint64_t n)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
	for (uint64_t off = 0; off < n && !r; off += MAX_ITEMS) {
		const uint64_t len = n - off < MAX_ITEMS ? n - off : MAX_ITEMS;
		r = copy_region_bytes(cl, dst + off, src + off, (uint32_t)len, 1, 1, 0, 0, 0, 0);
	}
	return r;
}

static ze_result_t copy_dwords(zs_cmdlist_t *cl, uint64_t dst, uint64_t src, uint64_t bytes)
{
	const zs_builtin_id_t id = ZS_BUILTIN_COPY_DW;
	ze_result_t r = ZE_RESULT_SUCCESS;
	const uint64_t n = bytes / 4;
	for (uint64_t i = 0; i < n && !r; i += MAX_ITEMS) {
		const uint64_t len = n - i < MAX_ITEMS ? n - i : MAX_ITEMS;
		zs_dispatch_t d;
		builtin_init(&d, cl->dev, id);
		builtin_arg(&d, cl->dev, id, 0, dst + 4 * i);
		builtin_arg(&d, cl->dev, id, 1, src + 4 * i);
		builtin_arg(&d, cl->dev, id, 2, len);
		builtin_grid(&d, cl->dev, len, 1, 1);
		r = emit_walker(cl, &d);
	}
	return r;
}

/* A linear copy: bytes up to dword alignment, dwords, the remaining bytes
 * (all bytes when source and destination are aligned differently). */
static ze_result_t append_copy(zs_cmdlist_t *cl, uint64_t dst, uint64_t src, uint64_t size)
{
	if ((dst & 3) != (src & 3))
		return copy_bytes(cl, dst, src, size);
	uint64_t head = (4 - (dst & 3)) & 3;
	if (head > size)
		head = size;
	const uint64_t body = (size - head) & ~3ull, tail = size - head - body;
	ze_result_t r = copy_bytes(cl, dst, src, head);
	if (!r)
		r = copy_dwords(cl, dst + head, src + head, body);
	if (!r)
		r = copy_bytes(cl, dst + head + body, src + head + body, tail);
	return r;
}

/* The pattern starting at byte `phase`, repeated to at least 4 bytes, in
 * GPU memory; *len is its (power-of-two) length. */
static ze_result_t pattern_at(zs_cmdlist_t *cl, const uint8_t *pat, size_t psize, uint64_t phase, uint64_t *va,
			      uint32_t *len)
{
	const uint32_t n = psize < 4 ? 4 : (uint32_t)psize;
	uint8_t *p;
	ze_result_t r = arena_alloc(cl, n, 64, &p);
	if (r)
		return r;
	for (uint32_t i = 0; i < n; i++)
		p[i] = pat[(phase + i) % psize];
	*va = (uint64_t)(uintptr_t)p;
	*len = n;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t fill_part(zs_cmdlist_t *cl, uint64_t dst, uint64_t n, const uint8_t *pat, size_t psize,
			     uint64_t phase, bool dwords)
{
	ze_result_t r = ZE_RESULT_SUCCESS;
	const zs_builtin_id_t id = dwords ? ZS_BUILTIN_FILL_DW : ZS_BUILTIN_FILL_BYTES;
	const uint64_t unit = dwords ? 4 : 1, items = n / unit;
	for (uint64_t i = 0; i < items && !r; i += MAX_ITEMS) {
		const uint64_t len = items - i < MAX_ITEMS ? items - i : MAX_ITEMS;
		uint64_t pva;
		uint32_t plen;
		if ((r = pattern_at(cl, pat, psize, phase + i * unit, &pva, &plen)))
			break;
		zs_dispatch_t d;
		builtin_init(&d, cl->dev, id);
		const uint64_t at = dst + i * unit;
		builtin_arg(&d, cl->dev, id, 0, at & ~3ull);
		builtin_arg(&d, cl->dev, id, 1, pva);
		builtin_arg(&d, cl->dev, id, 2, len);
		builtin_arg(&d, cl->dev, id, 3, plen / unit - 1);
		if (!dwords)
			builtin_arg(&d, cl->dev, id, 4, at & 3);
		builtin_grid(&d, cl->dev, len, 1, 1);
		r = emit_walker(cl, &d);
	}
	return r;
}

/* ---- memory checks ------------------------------------------------------------------------- */

/* [p, p + n) must lie in one allocation: the device sees nothing else (a
 * command touching unmapped memory would fault, or kill the queue). */
static bool device_range(const void *p, uint64_t n)
{
	zs_alloc_info_t a;
	if (!zs_memory_lookup(NULL, p, &a))
		return false;
	const uint64_t off = (uint64_t)((const uint8_t *)p - (const uint8_t *)a.base);
	return off <= a.size && n <= a.size - off; /* no wrap-around for huge n */
}

static bool overlap(uint64_t a, uint64_t b, uint64_t n) { return a < b + n && b < a + n; }

/* Memory a command may name: a range inside one allocation or one virtual
 * memory reservation (the GPU reaches it), or host memory of the process that no allocation holds (malloc,
 * stack, static data, module globals: the CPU does that command, at its
 * place in the queue, zs_hostop.h).  A range that starts in an allocation
 * and runs past its end is neither. */
typedef enum mem_kind { MEM_DEVICE, MEM_HOST, MEM_BAD } mem_kind_t;

static mem_kind_t mem_kind(const void *p, uint64_t n)
{
	const int v = zs_vmem_range(p, n); /* virtual memory: device memory */
	if (v)
		return v > 0 ? MEM_DEVICE : MEM_BAD;
	if (!zs_memory_lookup(NULL, p, NULL))
		return MEM_HOST;
	return device_range(p, n) ? MEM_DEVICE : MEM_BAD;
}

/* ---- list objects ---------------------------------------------------------------------------- */

static ze_result_t cmdlist_new(zs_context_t *ctx, zs_device_t *dev, zs_cmdlist_t **out)
{
	zs_cmdlist_t *cl = calloc(1, sizeof(*cl));
	if (!cl)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	cl->ctx = ctx;
	cl->dev = dev;
	*out = cl;
	return ZE_RESULT_SUCCESS;
}

static void cmdlist_free(zs_cmdlist_t *cl)
{
	if (cl->queue)
		zs_queue_release(cl->queue); /* waits for the list's work */
	chunks_free(cl, cl->cur);
	chunks_free(cl, cl->used);
	chunks_free(cl, cl->free);
	free(cl->cmd);
	free(cl->hostops);
	zs_context_unref(cl->ctx);
	free(cl);
}

ze_result_t ZE_APICALL zs_command_list_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      const ze_command_list_desc_t *desc,
					      ze_command_list_handle_t *phCommandList)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phCommandList);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC);
	if (desc->flags > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->commandQueueGroupOrdinal != 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* one queue group */
	zs_cmdlist_t *cl;
	ze_result_t r = cmdlist_new((zs_context_t *)hContext, (zs_device_t *)hDevice, &cl);
	if (r)
		return r;
	cl->ordinal = desc->commandQueueGroupOrdinal;
	cl->flags = desc->flags;
	if (zs_handle_add(cl, ZS_T_CMDLIST)) {
		free(cl);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(cl->ctx);
	*phCommandList = (ze_command_list_handle_t)cl;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_create_immediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
							const ze_command_queue_desc_t *altdesc,
							ze_command_list_handle_t *phCommandList)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(altdesc);
	ZS_CHECK_PTR(phCommandList);
	ze_result_t r = zs_queue_check_desc(altdesc);
	if (r)
		return r;
	zs_cmdlist_t *cl;
	if ((r = cmdlist_new((zs_context_t *)hContext, (zs_device_t *)hDevice, &cl)))
		return r;
	cl->immediate = true;
	cl->ordinal = altdesc->ordinal;
	zs_context_ref(cl->ctx);
	if ((r = zs_queue_new(cl->ctx, cl->dev, altdesc, &cl->queue)) || (r = zs_handle_add(cl, ZS_T_CMDLIST))) {
		cmdlist_free(cl);
		return r;
	}
	*phCommandList = (ze_command_list_handle_t)cl;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_destroy(ze_command_list_handle_t hCommandList)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	zs_handle_remove(hCommandList);
	cmdlist_free(CL(hCommandList));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_close(ze_command_list_handle_t hCommandList)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	zs_cmdlist_t *cl = CL(hCommandList);
	if (cl->immediate || cl->closed)
		return ZE_RESULT_SUCCESS; /* immediate lists have nothing to close */
	ze_result_t r = finish_batch(cl, &cl->batch_va);
	if (r)
		return r;
	cl->closed = true;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_reset(ze_command_list_handle_t hCommandList)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	zs_cmdlist_t *cl = CL(hCommandList);
	if (cl->immediate) {
		ze_result_t r = zs_queue_wait_idle(cl->queue, ZS_FOREVER);
		if (r)
			return r;
	}
	arena_reset(cl);
	cl->ncmd = 0;
	cl->oa_group = NULL;
	cl->nhostops = 0;
	cl->closed = false;
	cl->batch_va = 0;
	return ZE_RESULT_SUCCESS;
}

/* ---- appends --------------------------------------------------------------------------------- */

ze_result_t ZE_APICALL zs_command_list_append_write_global_timestamp(ze_command_list_handle_t hCommandList,
								     uint64_t *dstptr, ze_event_handle_t hSignalEvent,
								     uint32_t numWaitEvents,
								     ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(dstptr);
	const mem_kind_t kind = mem_kind(dstptr, 8);
	if (((uintptr_t)dstptr & 7) || kind == MEM_BAD)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	if (kind == MEM_DEVICE)
		return op_end(&op, emit_timestamp(op.cl, (uint64_t)(uintptr_t)dstptr));
	/* Into GPU memory of the list, then by the CPU to the host memory. */
	uint8_t *tmp;
	if (!(r = arena_alloc(op.cl, 8, 8, &tmp)) && !(r = emit_timestamp(op.cl, (uint64_t)(uintptr_t)tmp)))
		r = host_copy(op.cl, dstptr, tmp, 8, 1, 1, 0, 0, 0, 0);
	return op_end(&op, r);
}

ze_result_t ZE_APICALL zs_command_list_append_barrier(ze_command_list_handle_t hCommandList,
						      ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
						      ze_event_handle_t *phWaitEvents)
{
	/* Commands already execute in order, each after the previous one
	 * completed: a barrier is its waits and its signal. */
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	return op_end(&op, ZE_RESULT_SUCCESS);
}

ze_result_t ZE_APICALL zs_command_list_append_memory_ranges_barrier(ze_command_list_handle_t hCommandList,
								    uint32_t numRanges, const size_t *pRangeSizes,
								    const void **pRanges,
								    ze_event_handle_t hSignalEvent,
								    uint32_t numWaitEvents,
								    ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(pRangeSizes);
	ZS_CHECK_PTR(pRanges);
	for (uint32_t i = 0; i < numRanges; i++)
		ZS_CHECK_PTR(pRanges[i]);
	return zs_command_list_append_barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t ZE_APICALL zs_command_list_append_memory_copy(ze_command_list_handle_t hCommandList, void *dstptr,
							  const void *srcptr, size_t size,
							  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							  ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(dstptr);
	ZS_CHECK_PTR(srcptr);
	const uint64_t dst = (uintptr_t)dstptr, src = (uintptr_t)srcptr;
	const mem_kind_t dk = size ? mem_kind(dstptr, size) : MEM_DEVICE, sk = size ? mem_kind(srcptr, size) : MEM_DEVICE;
	if (dk == MEM_BAD || sk == MEM_BAD)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (size && overlap(dst, src, size))
		return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	if (dk == MEM_HOST || sk == MEM_HOST)
		return op_end(&op, host_copy(op.cl, dstptr, srcptr, size, 1, 1, 0, 0, 0, 0));
	return op_end(&op, append_copy(op.cl, dst, src, size));
}

ze_result_t ZE_APICALL zs_command_list_append_memory_copy_from_context(
	ze_command_list_handle_t hCommandList, void *dstptr, ze_context_handle_t hContextSrc, const void *srcptr,
	size_t size, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hContextSrc, ZS_T_CONTEXT);
	ZS_CHECK_PTR(srcptr);
	/* All contexts share one address space: the source context only
	 * selects where srcptr was allocated (host memory belongs to none). */
	if (size && zs_memory_lookup(NULL, srcptr, NULL) && !zs_memory_lookup((zs_context_t *)hContextSrc, srcptr, NULL))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return zs_command_list_append_memory_copy(hCommandList, dstptr, srcptr, size, hSignalEvent, numWaitEvents,
						  phWaitEvents);
}

ze_result_t ZE_APICALL zs_command_list_append_memory_fill(ze_command_list_handle_t hCommandList, void *ptr,
							  const void *pattern, size_t pattern_size, size_t size,
							  ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							  ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(ptr);
	ZS_CHECK_PTR(pattern);
	if (!pattern_size || (pattern_size & (pattern_size - 1)) || pattern_size > ZS_MAX_FILL_PATTERN)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	const mem_kind_t kind = size ? mem_kind(ptr, size) : MEM_DEVICE;
	if (kind == MEM_BAD)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	if (kind == MEM_HOST) {
		zs_hostop_t h = {.kind = ZS_HOSTOP_FILL, .dst = ptr, .width = size, .psize = (uint32_t)pattern_size};
		memcpy(h.pattern, pattern, pattern_size);
		return op_end(&op, emit_hostop(op.cl, &h));
	}
	/* Bytes up to dword alignment, dwords, the rest; each part's pattern
	 * starts where the previous part left off. */
	const uint64_t dst = (uintptr_t)ptr;
	uint64_t head = (4 - (dst & 3)) & 3;
	if (head > size)
		head = size;
	const uint64_t body = (size - head) & ~3ull, tail = size - head - body;
	r = fill_part(op.cl, dst, head, pattern, pattern_size, 0, false);
	if (!r)
		r = fill_part(op.cl, dst + head, body, pattern, pattern_size, head, true);
	if (!r)
		r = fill_part(op.cl, dst + head + body, tail, pattern, pattern_size, head + body, false);
	return op_end(&op, r);
}

/* Slices of a region: depth 0 means a 2-D copy (one slice), as the spec says. */
static uint32_t region_slices(const ze_copy_region_t *g) { return g->depth ? g->depth : 1; }

/* Byte offset of a region's origin, and its extent (last byte + 1). */
static bool region_span(const ze_copy_region_t *g, uint32_t pitch, uint32_t slice, uint64_t *origin, uint64_t *extent)
{
	const uint32_t slices = region_slices(g);
	if (!g->width || !g->height) {
		*origin = *extent = 0;
		return true;
	}
	if ((uint64_t)g->originX + g->width > pitch && g->height > 1)
		return false; /* rows would overlap */
	if (slices > 1 && (uint64_t)g->height * pitch > slice)
		return false; /* slices would overlap */
	*origin = g->originX + (uint64_t)g->originY * pitch + (uint64_t)g->originZ * slice;
	*extent = (uint64_t)(g->height - 1) * pitch + (uint64_t)(slices - 1) * slice + g->width;
	return true;
}

ze_result_t ZE_APICALL zs_command_list_append_memory_copy_region(
	ze_command_list_handle_t hCommandList, void *dstptr, const ze_copy_region_t *dstRegion, uint32_t dstPitch,
	uint32_t dstSlicePitch, const void *srcptr, const ze_copy_region_t *srcRegion, uint32_t srcPitch,
	uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
	ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(dstptr);
	ZS_CHECK_PTR(dstRegion);
	ZS_CHECK_PTR(srcptr);
	ZS_CHECK_PTR(srcRegion);
	if (dstRegion->width != srcRegion->width || dstRegion->height != srcRegion->height ||
	    dstRegion->depth != srcRegion->depth)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* both regions must have the same size */
	uint64_t dorg, dext, sorg, sext;
	if (!region_span(dstRegion, dstPitch, dstSlicePitch, &dorg, &dext) ||
	    !region_span(srcRegion, srcPitch, srcSlicePitch, &sorg, &sext))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	const uint8_t *d = (const uint8_t *)dstptr + dorg, *s = (const uint8_t *)srcptr + sorg;
	mem_kind_t dk = MEM_DEVICE, sk = MEM_DEVICE;
	if (dext) {
		/* The kernel computes row offsets in 32 bits. */
		if (dext > UINT32_MAX || sext > UINT32_MAX)
			return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
		dk = mem_kind(d, dext);
		sk = mem_kind(s, sext);
		if (dk == MEM_BAD || sk == MEM_BAD)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		/* The walker's grid (at least ceil(width / 16) groups x rows x slices) < 2^32. */
		const uint64_t groups = ((uint64_t)dstRegion->width + 15) / 16 * dstRegion->height *
					region_slices(dstRegion);
		if (groups >> 32)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		if (dstptr == srcptr && overlap((uintptr_t)d, (uintptr_t)s, dext > sext ? dext : sext))
			return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
	}
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	if (dext && (dk == MEM_HOST || sk == MEM_HOST))
		return op_end(&op, host_copy(op.cl, (void *)d, s, dstRegion->width, dstRegion->height,
					     region_slices(dstRegion), dstPitch, srcPitch, dstSlicePitch, srcSlicePitch));
	return op_end(&op, copy_region_bytes(op.cl, (uintptr_t)d, (uintptr_t)s, dstRegion->width, dstRegion->height,
					     region_slices(dstRegion), dstPitch, srcPitch, dstSlicePitch, srcSlicePitch));
}

ze_result_t ZE_APICALL zs_command_list_append_memory_prefetch(ze_command_list_handle_t hCommandList,
							      const void *ptr, size_t size)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(ptr);
	ZS_UNUSED(size);
	/* A hint: memory is unified and always resident. */
	return CL(hCommandList)->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_append_mem_advise(ze_command_list_handle_t hCommandList,
							 ze_device_handle_t hDevice, const void *ptr, size_t size,
							 ze_memory_advice_t advice)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(ptr);
	ZS_UNUSED(size);
	if (advice > ZE_MEMORY_ADVICE_BIAS_UNCACHED)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* A hint: there is no migration or caching policy to steer. */
	return CL(hCommandList)->closed ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_list_append_signal_event(ze_command_list_handle_t hCommandList,
							   ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	return zs_command_list_append_barrier(hCommandList, hEvent, 0, NULL);
}

ze_result_t ZE_APICALL zs_command_list_append_wait_on_events(ze_command_list_handle_t hCommandList,
							     uint32_t numEvents, ze_event_handle_t *phEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(phEvents);
	return zs_command_list_append_barrier(hCommandList, NULL, numEvents, phEvents);
}

ze_result_t ZE_APICALL zs_command_list_append_event_reset(ze_command_list_handle_t hCommandList,
							  ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, NULL, 0, NULL);
	if (r)
		return r;
	if (((zs_event_t *)hEvent)->pool->ctx != op.cl->ctx)
		return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	return op_end(&op, emit_store(op.cl, zs_event_va((zs_event_t *)hEvent) + ZS_EVENT_STATE, 0));
}

ze_result_t ZE_APICALL zs_command_list_append_query_kernel_timestamps(
	ze_command_list_handle_t hCommandList, uint32_t numEvents, ze_event_handle_t *phEvents, void *dstptr,
	const size_t *pOffsets, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
	ze_event_handle_t *phWaitEvents)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_PTR(phEvents);
	ZS_CHECK_PTR(dstptr);
	const size_t rsize = sizeof(ze_kernel_timestamp_result_t);
	bool host = false;
	for (uint32_t i = 0; i < numEvents; i++) {
		ZS_CHECK_HANDLE(phEvents[i], ZS_T_EVENT);
		if (!zs_event_timestamped((zs_event_t *)phEvents[i]))
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		const mem_kind_t kind = mem_kind((uint8_t *)dstptr + (pOffsets ? pOffsets[i] : i * rsize), rsize);
		if (kind == MEM_BAD)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		host |= kind == MEM_HOST;
	}
	op_t op;
	ze_result_t r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
	if (r)
		return r;
	/* At execution time, copy each event's start/end into both the global
	 * and the context halves of its result; with host memory among the
	 * destinations, into GPU memory of the list first, then by the CPU. */
	uint8_t *tmp = NULL;
	if (host && numEvents && (r = arena_alloc(op.cl, (uint64_t)numEvents * rsize, 64, &tmp)))
		return op_end(&op, r);
	for (uint32_t i = 0; i < numEvents && !r; i++) {
		uint8_t *const out = (uint8_t *)dstptr + (pOffsets ? pOffsets[i] : i * rsize);
		const uint64_t dst = (uintptr_t)(tmp ? tmp + i * rsize : out);
		const uint64_t src = zs_event_va((zs_event_t *)phEvents[i]) + ZS_EVENT_TS_START;
		r = append_copy(op.cl, dst, src, 16);
		if (!r)
			r = append_copy(op.cl, dst + 16, src, 16);
	}
	if (tmp && !r) {
		if (!pOffsets)
			r = host_copy(op.cl, dstptr, tmp, (uint64_t)numEvents * rsize, 1, 1, 0, 0, 0, 0);
		for (uint32_t i = 0; pOffsets && i < numEvents && !r; i++)
			r = host_copy(op.cl, (uint8_t *)dstptr + pOffsets[i], tmp + i * rsize, rsize, 1, 1, 0, 0, 0, 0);
	}
	return op_end(&op, r);
}

static ze_result_t launch(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
			  const ze_group_count_t *args, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
			  ze_event_handle_t *phWaitEvents, bool cooperative)
{
	ZS_CHECK_HANDLE(hCommandList, ZS_T_CMDLIST);
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(args);
	const zs_kernel_t *k = (const zs_kernel_t *)hKernel;
	if (cooperative &&
	    (uint64_t)args->groupCountX * args->groupCountY * args->groupCountZ > zs_kernel_max_cooperative_groups(k))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* the groups could not all run at once */
	zs_dispatch_t d;
	ze_result_t r = zs_kernel_dispatch(k, args, &d);
	if (r)
		return r;
	op_t op;
	if ((r = op_begin(&op, hCommandList, hSignalEvent, numWaitEvents, phWaitEvents)))
		return r;
	return op_end(&op, emit_walker(op.cl, &d));
}

ze_result_t ZE_APICALL zs_command_list_append_launch_kernel(ze_command_list_handle_t hCommandList,
							    ze_kernel_handle_t hKernel,
							    const ze_group_count_t *pLaunchFuncArgs,
							    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
							    ze_event_handle_t *phWaitEvents)
{
	return launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents, phWaitEvents, false);
}

ze_result_t ZE_APICALL zs_command_list_append_launch_cooperative_kernel(ze_command_list_handle_t hCommandList,
									ze_kernel_handle_t hKernel,
									const ze_group_count_t *pLaunchFuncArgs,
									ze_event_handle_t hSignalEvent,
									uint32_t numWaitEvents,
									ze_event_handle_t *phWaitEvents)
{
	return launch(hCommandList, hKernel, pLaunchFuncArgs, hSignalEvent, numWaitEvents, phWaitEvents, true);
}
