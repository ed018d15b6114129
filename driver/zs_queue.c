/* Command queues and fences. */
#define _GNU_SOURCE
#include "zs_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "zs_cmdlist.h"
#include "zs_handle.h"
#include "zs_hostop.h"
#include "zs_metrics.h"
#include "zs_printf.h"

#define QUEUE(h) ((zs_queue_t *)(h))
#define FENCE(h) ((zs_fence_t *)(h))

/* All live queues, for "wait for everything" (blocking frees). */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static zs_queue_t *queues;

ze_result_t zs_queue_check_desc(const ze_command_queue_desc_t *desc)
{
	ZS_CHECK_PTR(desc);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
	if (desc->flags > ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY || desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
	    desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* One group (the compute engine) with one queue index. */
	if (desc->ordinal != 0 || desc->index != 0)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

ze_result_t zs_queue_new(zs_context_t *ctx, zs_device_t *dev, const ze_command_queue_desc_t *desc, zs_queue_t **out)
{
	zs_queue_t *q = calloc(1, sizeof(*q));
	if (!q)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	q->timeline = zs_device_slot_alloc(dev);
	if (!q->timeline) {
		free(q);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	int rc = zs_os_queue_create(&dev->os, &q->exec_id);
	if (rc) {
		zs_device_slot_free(dev, q->timeline);
		free(q);
		return zs_device_result(dev, rc);
	}
	atomic_init(&q->refs, 1);
	pthread_mutex_init(&q->lock, NULL);
	q->ctx = ctx;
	q->dev = dev;
	q->ordinal = desc->ordinal;
	q->index = desc->index;
	q->flags = desc->flags;
	q->mode = desc->mode;
	q->priority = desc->priority;
	zs_context_ref(ctx);
	pthread_mutex_lock(&list_lock);
	q->next = queues;
	queues = q;
	pthread_mutex_unlock(&list_lock);
	*out = q;
	return ZE_RESULT_SUCCESS;
}

void zs_queue_release(zs_queue_t *q)
{
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	/* The KMD writes the timeline when a batch ends: keep the slot (and
	 * the batches) until then. */
	zs_queue_wait_idle(q, ZS_FOREVER);
	zs_hostop_stop(q);
	pthread_mutex_lock(&list_lock);
	for (zs_queue_t **p = &queues; *p; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	pthread_mutex_unlock(&list_lock);
	zs_os_queue_destroy(&q->dev->os, q->exec_id);
	zs_device_slot_free(q->dev, q->timeline);
	pthread_mutex_destroy(&q->lock);
	zs_context_unref(q->ctx);
	free(q);
}

ze_result_t zs_queue_submit(zs_queue_t *q, uint64_t batch_va, uint64_t *value)
{
	pthread_mutex_lock(&q->lock);
	const uint64_t v = q->submitted + 1;
	int rc = zs_os_exec(&q->dev->os, q->exec_id, batch_va, (uint64_t)(uintptr_t)q->timeline, v);
	if (!rc)
		q->submitted = v;
	pthread_mutex_unlock(&q->lock);
	if (rc)
		return zs_device_result(q->dev, rc);
	*value = v;
	return ZE_RESULT_SUCCESS;
}

bool zs_queue_done(const zs_queue_t *q, uint64_t value)
{
	return __atomic_load_n(q->timeline, __ATOMIC_ACQUIRE) >= value;
}

ze_result_t zs_queue_wait(zs_queue_t *q, uint64_t value, uint64_t timeout_ns)
{
	/* Waiting on the queue's own exec queue: a failed job ends the wait
	 * with -EIO (device lost) instead of never signalling. */
	int rc = zs_os_wait(&q->dev->os, q->exec_id, q->timeline, ZESIM_UFENCE_OP_GTE, value, ~0ull, timeout_ns);
	return zs_device_result(q->dev, rc);
}

ze_result_t zs_queue_wait_idle(zs_queue_t *q, uint64_t timeout_ns)
{
	pthread_mutex_lock(&q->lock);
	const uint64_t v = q->submitted;
	pthread_mutex_unlock(&q->lock);
	return v ? zs_queue_wait(q, v, timeout_ns) : ZE_RESULT_SUCCESS;
}

ze_result_t zs_queue_wait_all(zs_device_t *dev)
{
	/* Take references under the list lock, wait without it: a wait can be
	 * long, and other threads need the lock to create or destroy queues
	 * (perhaps to submit the very work we wait for). */
	pthread_mutex_lock(&list_lock);
	size_t n = 0;
	for (zs_queue_t *q = queues; q; q = q->next)
		n += q->dev == dev;
	zs_queue_t **held = calloc(n ? n : 1, sizeof(*held));
	if (!held) {
		pthread_mutex_unlock(&list_lock);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	size_t k = 0;
	for (zs_queue_t *q = queues; q; q = q->next)
		if (q->dev == dev) {
			atomic_fetch_add(&q->refs, 1);
			held[k++] = q;
		}
	pthread_mutex_unlock(&list_lock);
	ze_result_t r = ZE_RESULT_SUCCESS;
	for (size_t i = 0; i < k; i++) {
		if (!r)
			r = zs_queue_wait_idle(held[i], ZS_FOREVER);
		zs_queue_release(held[i]);
	}
	free(held);
	return r;
}

bool zs_queue_any_lost(zs_device_t *dev)
{
	if (atomic_load(&dev->lost))
		return true;
	pthread_mutex_lock(&list_lock);
	for (zs_queue_t *q = queues; q; q = q->next) {
		pthread_mutex_lock(&q->lock);
		const uint64_t v = q->submitted;
		pthread_mutex_unlock(&q->lock);
		if (q->dev != dev || zs_queue_done(q, v))
			continue;
		/* A zero-timeout wait on the queue's own timeline: EIO if banned. */
		if (zs_queue_wait(q, v, 0) == ZE_RESULT_ERROR_DEVICE_LOST)
			break;
	}
	pthread_mutex_unlock(&list_lock);
	return atomic_load(&dev->lost);
}

/* A host synchronization that succeeded is where kernels' printf output
 * appears (zs_printf.c). */
static ze_result_t synchronized(zs_device_t *dev, ze_result_t r)
{
	if (r == ZE_RESULT_SUCCESS)
		zs_printf_flush(dev);
	return r;
}

bool zs_queue_all_idle(zs_device_t *dev)
{
	bool idle = true;
	pthread_mutex_lock(&list_lock);
	for (zs_queue_t *q = queues; q && idle; q = q->next) {
		if (q->dev != dev)
			continue;
		pthread_mutex_lock(&q->lock);
		const uint64_t v = q->submitted;
		pthread_mutex_unlock(&q->lock);
		idle = zs_queue_done(q, v);
	}
	pthread_mutex_unlock(&list_lock);
	return idle;
}

/* ---- entry points -------------------------------------------------------------- */

ze_result_t ZE_APICALL zs_command_queue_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					       const ze_command_queue_desc_t *desc,
					       ze_command_queue_handle_t *phCommandQueue)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phCommandQueue);
	ze_result_t r = zs_queue_check_desc(desc);
	if (r)
		return r;
	zs_queue_t *q;
	if ((r = zs_queue_new((zs_context_t *)hContext, (zs_device_t *)hDevice, desc, &q)))
		return r;
	if (zs_handle_add(q, ZS_T_QUEUE)) {
		zs_queue_release(q);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*phCommandQueue = (ze_command_queue_handle_t)q;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_queue_destroy(ze_command_queue_handle_t hCommandQueue)
{
	ZS_CHECK_HANDLE(hCommandQueue, ZS_T_QUEUE);
	zs_handle_remove(hCommandQueue);
	zs_queue_release(QUEUE(hCommandQueue));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_queue_execute_command_lists(ze_command_queue_handle_t hCommandQueue,
							      uint32_t numCommandLists,
							      ze_command_list_handle_t *phCommandLists,
							      ze_fence_handle_t hFence)
{
	ZS_CHECK_HANDLE(hCommandQueue, ZS_T_QUEUE);
	ZS_CHECK_PTR(phCommandLists);
	if (numCommandLists == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	zs_queue_t *q = QUEUE(hCommandQueue);
	if (hFence) {
		ZS_CHECK_HANDLE(hFence, ZS_T_FENCE);
		if (FENCE(hFence)->q != q)
			return ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT; /* a fence of another queue */
	}
	/* Check every list before submitting any. */
	uint64_t batch;
	for (uint32_t i = 0; i < numCommandLists; i++) {
		ZS_CHECK_HANDLE(phCommandLists[i], ZS_T_CMDLIST);
		ze_result_t r = zs_cmdlist_batch_for((const zs_cmdlist_t *)phCommandLists[i], q, &batch);
		if (r)
			return r;
	}
	/* Lists with OA query reports need the OA counters running (zs_metrics.c). */
	for (uint32_t i = 0; i < numCommandLists; i++) {
		const zs_cmdlist_t *cl = (const zs_cmdlist_t *)phCommandLists[i];
		if (cl->oa_group) {
			ze_result_t r = zs_metrics_query_prepare(q->dev, q->exec_id, cl->oa_group);
			if (r)
				return r;
		}
	}
	uint64_t value = 0;
	for (uint32_t i = 0; i < numCommandLists; i++) {
		const zs_cmdlist_t *cl = (const zs_cmdlist_t *)phCommandLists[i];
		zs_cmdlist_batch_for(cl, q, &batch);
		ze_result_t r = zs_queue_submit(q, batch, &value);
		if (!r)
			r = zs_hostop_push(q, cl->hostops, cl->nhostops);
		if (r)
			return r;
	}
	if (hFence) {
		atomic_store(&FENCE(hFence)->value, value);
		atomic_store(&FENCE(hFence)->state, ZS_FENCE_PENDING);
	}
	if (q->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
		return synchronized(q->dev, zs_queue_wait(q, value, ZS_FOREVER));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_command_queue_synchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout)
{
	ZS_CHECK_HANDLE(hCommandQueue, ZS_T_QUEUE);
	return synchronized(QUEUE(hCommandQueue)->dev, zs_queue_wait_idle(QUEUE(hCommandQueue), timeout));
}

/* ---- fences ------------------------------------------------------------------- */

ze_result_t ZE_APICALL zs_fence_create(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t *desc,
				       ze_fence_handle_t *phFence)
{
	ZS_CHECK_HANDLE(hCommandQueue, ZS_T_QUEUE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phFence);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_FENCE_DESC);
	if (desc->flags > ZE_FENCE_FLAG_SIGNALED)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	zs_fence_t *f = calloc(1, sizeof(*f));
	if (!f)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	f->q = QUEUE(hCommandQueue);
	atomic_init(&f->state, (desc->flags & ZE_FENCE_FLAG_SIGNALED) ? ZS_FENCE_SIGNALED : ZS_FENCE_UNSIGNALED);
	atomic_init(&f->value, 0);
	if (zs_handle_add(f, ZS_T_FENCE)) {
		free(f);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	atomic_fetch_add(&f->q->refs, 1);
	*phFence = (ze_fence_handle_t)f;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_fence_destroy(ze_fence_handle_t hFence)
{
	ZS_CHECK_HANDLE(hFence, ZS_T_FENCE);
	zs_fence_t *f = FENCE(hFence);
	zs_handle_remove(f);
	zs_queue_release(f->q);
	free(f);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_fence_query_status(ze_fence_handle_t hFence)
{
	ZS_CHECK_HANDLE(hFence, ZS_T_FENCE);
	zs_fence_t *f = FENCE(hFence);
	switch (atomic_load(&f->state)) {
	case ZS_FENCE_SIGNALED:
		return ZE_RESULT_SUCCESS;
	case ZS_FENCE_PENDING:
		/* Asks the KMD when not done yet: a banned queue is a lost device. */
		return zs_queue_wait(f->q, atomic_load(&f->value), 0);
	default:
		return ZE_RESULT_NOT_READY;
	}
}

ze_result_t ZE_APICALL zs_fence_host_synchronize(ze_fence_handle_t hFence, uint64_t timeout)
{
	ZS_CHECK_HANDLE(hFence, ZS_T_FENCE);
	zs_fence_t *f = FENCE(hFence);
	const uint64_t start = zs_now_ns();
	/* A reset fence is signalled only once another thread executes lists
	 * with it: nothing on the device to wait on until then. */
	while (atomic_load(&f->state) == ZS_FENCE_UNSIGNALED) {
		const uint64_t spent = zs_now_ns() - start;
		if (timeout != ZS_FOREVER && spent >= timeout)
			return ZE_RESULT_NOT_READY;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	if (atomic_load(&f->state) == ZS_FENCE_SIGNALED)
		return synchronized(f->q->dev, ZE_RESULT_SUCCESS);
	uint64_t left = timeout;
	if (timeout != ZS_FOREVER) {
		const uint64_t spent = zs_now_ns() - start;
		left = spent >= timeout ? 0 : timeout - spent;
	}
	return synchronized(f->q->dev, zs_queue_wait(f->q, atomic_load(&f->value), left));
}

ze_result_t ZE_APICALL zs_fence_reset(ze_fence_handle_t hFence)
{
	ZS_CHECK_HANDLE(hFence, ZS_T_FENCE);
	atomic_store(&FENCE(hFence)->state, ZS_FENCE_UNSIGNALED);
	return ZE_RESULT_SUCCESS;
}
