/* Event pools and events (layout in zs_event.h). */
#include "zs_event.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zs_handle.h"
#include "zs_printf.h"
#include "zs_queue.h"

#define LOST_CHECK_NS 100000000ull /* 100 ms */

#define EVENT(h) ((zs_event_t *)(h))

static void pool_unref(zs_event_pool_t *p)
{
	if (atomic_fetch_sub(&p->refs, 1) != 1)
		return;
	if (p->ipc_fd >= 0)
		close(p->ipc_fd);
	zs_os_bo_destroy(&p->ctx->dev->os, &p->bo);
	zs_context_unref(p->ctx);
	free(p);
}

/* The pool becomes a handle of its context (created or opened from an IPC handle). */
static ze_result_t publish_pool(zs_context_t *ctx, zs_event_pool_t *p, ze_event_pool_handle_t *phEventPool)
{
	if (zs_handle_add(p, ZS_T_EVENT_POOL)) {
		zs_os_bo_destroy(&ctx->dev->os, &p->bo);
		free(p);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(ctx);
	*phEventPool = (ze_event_pool_handle_t)p;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_event_pool_create(ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
					    uint32_t numDevices, ze_device_handle_t *phDevices,
					    ze_event_pool_handle_t *phEventPool)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phEventPool);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_EVENT_POOL_DESC);
	if (desc->flags > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->count == 0 || (numDevices && !phDevices))
		return ZE_RESULT_ERROR_INVALID_SIZE;
	for (uint32_t i = 0; i < numDevices; i++)
		ZS_CHECK_HANDLE(phDevices[i], ZS_T_DEVICE);
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_event_pool_t *p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	/* Every pool is host visible: its memory is mapped in the process. */
	int rc = zs_os_bo_create(&ctx->dev->os, (uint64_t)desc->count * ZS_EVENT_STRIDE, 0, &p->bo);
	if (rc) {
		free(p);
		return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : zs_device_result(ctx->dev, rc);
	}
	atomic_init(&p->refs, 1);
	p->ctx = ctx;
	p->flags = desc->flags;
	p->count = desc->count;
	p->ipc_fd = -1;
	return publish_pool(ctx, p, phEventPool);
}

ze_result_t ZE_APICALL zs_event_pool_destroy(ze_event_pool_handle_t hEventPool)
{
	ZS_CHECK_HANDLE(hEventPool, ZS_T_EVENT_POOL);
	zs_handle_remove(hEventPool);
	/* Events still alive keep the memory until they are destroyed. */
	pool_unref((zs_event_pool_t *)hEventPool);
	return ZE_RESULT_SUCCESS;
}

/* ---- IPC (driver/README.md "IPC") ------------------------------------------------------------ */

/* What a ze_ipc_event_pool_handle_t holds: the pool memory's PRIME fd first (passed
 * as for memory), then a tag, the event count and the pool's flags. */
typedef struct ipc_pool_data {
	int32_t fd;
	uint32_t magic;
	uint32_t count;
	uint32_t flags;
} ipc_pool_data_t;
#define IPC_POOL_MAGIC 0x4550495au /* "ZIPE" */

ze_result_t ZE_APICALL zs_event_pool_get_ipc_handle(ze_event_pool_handle_t hEventPool,
						    ze_ipc_event_pool_handle_t *phIpc)
{
	ZS_CHECK_HANDLE(hEventPool, ZS_T_EVENT_POOL);
	ZS_CHECK_PTR(phIpc);
	zs_event_pool_t *p = (zs_event_pool_t *)hEventPool;
	if (!(p->flags & ZE_EVENT_POOL_FLAG_IPC))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not created shareable */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	int rc = p->ipc_fd < 0 ? zs_os_bo_export(&p->ctx->dev->os, &p->bo, &p->ipc_fd) : 0;
	const ipc_pool_data_t d = {p->ipc_fd, IPC_POOL_MAGIC, p->count, p->flags};
	pthread_mutex_unlock(&lock);
	if (rc)
		return zs_device_result(p->ctx->dev, rc);
	memset(phIpc, 0, sizeof(*phIpc));
	memcpy(phIpc->data, &d, sizeof(d));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_event_pool_open_ipc_handle(ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc,
						     ze_event_pool_handle_t *phEventPool)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(phEventPool);
	ipc_pool_data_t d;
	memcpy(&d, hIpc.data, sizeof(d));
	if (d.magic != IPC_POOL_MAGIC || d.fd < 0 || !d.count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_event_pool_t *p = calloc(1, sizeof(*p));
	if (!p)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	int rc = zs_os_bo_import(&ctx->dev->os, d.fd, &p->bo);
	if (rc || p->bo.size < (uint64_t)d.count * ZS_EVENT_STRIDE) {
		if (!rc)
			zs_os_bo_destroy(&ctx->dev->os, &p->bo);
		free(p);
		return !rc || rc == -EBADF || rc == -EINVAL ? ZE_RESULT_ERROR_INVALID_ARGUMENT
							    : zs_device_result(ctx->dev, rc);
	}
	atomic_init(&p->refs, 1);
	p->ctx = ctx;
	p->flags = d.flags;
	p->count = d.count;
	p->ipc_fd = -1;
	p->imported = true;
	return publish_pool(ctx, p, phEventPool);
}

ze_result_t ZE_APICALL zs_event_pool_close_ipc_handle(ze_event_pool_handle_t hEventPool)
{
	ZS_CHECK_HANDLE(hEventPool, ZS_T_EVENT_POOL);
	if (!((zs_event_pool_t *)hEventPool)->imported)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not opened from a handle: zeEventPoolDestroy */
	return zs_event_pool_destroy(hEventPool);
}

static void clear(zs_event_t *e)
{
	/* Timestamps first: a reader that sees "not signalled" ignores them. */
	memset(e->mem + ZS_EVENT_TS_START, 0, ZS_EVENT_STRIDE - ZS_EVENT_TS_START);
	__atomic_store_n((uint64_t *)(e->mem + ZS_EVENT_STATE), 0, __ATOMIC_RELEASE);
}

ze_result_t ZE_APICALL zs_event_create(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
				       ze_event_handle_t *phEvent)
{
	ZS_CHECK_HANDLE(hEventPool, ZS_T_EVENT_POOL);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phEvent);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_EVENT_DESC);
	if (desc->signal > 0x7 || desc->wait > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	zs_event_pool_t *p = (zs_event_pool_t *)hEventPool;
	if (desc->index >= p->count)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	zs_event_t *e = calloc(1, sizeof(*e));
	if (!e)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	e->pool = p;
	e->index = desc->index;
	e->mem = p->bo.ptr + (size_t)desc->index * ZS_EVENT_STRIDE;
	e->signal = desc->signal;
	e->wait = desc->wait;
	if (zs_handle_add(e, ZS_T_EVENT)) {
		free(e);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (!p->imported) /* an opened pool's events are the exporter's: their state stays */
		clear(e);
	atomic_fetch_add(&p->refs, 1);
	*phEvent = (ze_event_handle_t)e;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_event_destroy(ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	zs_event_t *e = EVENT(hEvent);
	zs_handle_remove(e);
	pool_unref(e->pool);
	free(e);
	return ZE_RESULT_SUCCESS;
}

static uint32_t state(const zs_event_t *e)
{
	return (uint32_t)__atomic_load_n((const uint64_t *)(e->mem + ZS_EVENT_STATE), __ATOMIC_ACQUIRE);
}

ze_result_t ZE_APICALL zs_event_host_signal(ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	__atomic_store_n((uint64_t *)(EVENT(hEvent)->mem + ZS_EVENT_STATE), ZS_EVENT_SIGNALED, __ATOMIC_RELEASE);
	zs_os_wake(EVENT(hEvent)->mem + ZS_EVENT_STATE); /* a SEMAPHORE_WAIT may wait for it */
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_event_host_synchronize(ze_event_handle_t hEvent, uint64_t timeout)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	zs_event_t *e = EVENT(hEvent);
	zs_device_t *dev = e->pool->ctx->dev;
	const volatile uint64_t *state = (const volatile uint64_t *)(e->mem + ZS_EVENT_STATE);
	const uint64_t start = zs_now_ns();
	/* Any queue may signal the event, so the wait names none; it goes in
	 * slices, and between them checks that no job died (its signal would
	 * never come: the device is lost). */
	for (;;) {
		uint64_t slice = LOST_CHECK_NS;
		if (timeout != ZS_FOREVER) {
			const uint64_t spent = zs_now_ns() - start;
			slice = spent >= timeout ? 0 : timeout - spent < slice ? timeout - spent : slice;
		}
		int rc = zs_os_wait(&dev->os, 0, state, ZESIM_UFENCE_OP_EQ, ZS_EVENT_SIGNALED, 0xffffffffull, slice);
		if (rc == 0)
			zs_printf_flush(dev); /* the work it follows completed: its printf output */
		if (rc != -ETIME)
			return zs_device_result(dev, rc);
		/* Out of time: no more questions to the daemon, which may be
		 * the one not answering (a lost device found earlier counts). */
		if (timeout != ZS_FOREVER && zs_now_ns() - start >= timeout)
			return atomic_load(&dev->lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_NOT_READY;
		if (zs_queue_any_lost(dev))
			return ZE_RESULT_ERROR_DEVICE_LOST;
	}
}

ze_result_t ZE_APICALL zs_event_query_status(ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	return state(EVENT(hEvent)) == ZS_EVENT_SIGNALED ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t ZE_APICALL zs_event_host_reset(ze_event_handle_t hEvent)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	clear(EVENT(hEvent));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_event_query_kernel_timestamp(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t *dst)
{
	ZS_CHECK_HANDLE(hEvent, ZS_T_EVENT);
	ZS_CHECK_PTR(dst);
	const zs_event_t *e = EVENT(hEvent);
	if (!zs_event_timestamped(e))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* pool created without KERNEL_TIMESTAMP */
	if (state(e) != ZS_EVENT_SIGNALED)
		return ZE_RESULT_NOT_READY;
	uint64_t start, end;
	memcpy(&start, e->mem + ZS_EVENT_TS_START, 8);
	memcpy(&end, e->mem + ZS_EVENT_TS_END, 8);
	/* One context on one engine: the context view equals the global one. */
	dst->global.kernelStart = dst->context.kernelStart = start;
	dst->global.kernelEnd = dst->context.kernelEnd = end;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zs_event_check_list(zs_context_t *ctx, ze_event_handle_t signal, uint32_t nwait, ze_event_handle_t *wait)
{
	if (signal) {
		ZS_CHECK_HANDLE(signal, ZS_T_EVENT);
		if (EVENT(signal)->pool->ctx != ctx)
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	}
	if (nwait && !wait)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	for (uint32_t i = 0; i < nwait; i++) {
		ZS_CHECK_HANDLE(wait[i], ZS_T_EVENT);
		if (EVENT(wait[i])->pool->ctx != ctx)
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT;
	}
	return ZE_RESULT_SUCCESS;
}
