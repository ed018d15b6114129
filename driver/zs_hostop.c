/* Host operations (zs_hostop.h): the per-queue worker that performs them at
 * their rendezvous. */
#define _GNU_SOURCE
#include "zs_hostop.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "zs_queue.h"

/* How long one wait for a rendezvous lasts before the worker looks at its
 * stop flag again. */
#define WAIT_NS 100000000ull
/* Before that, the worker sleeps on the slot itself for up to WATCH_NS: the device
 * wakes it when its STORE_DATA reaches the slot (zs_os_sleep). */
#define WATCH_NS 2000000ull

typedef struct zs_hostq {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	zs_hostop_t *ops; /* FIFO: ops[head, tail) */
	size_t head, tail, cap;
	bool stop;
} zs_hostq_t;

void zs_hostop_run(const zs_hostop_t *op)
{
	if (op->kind == ZS_HOSTOP_FILL) {
		for (uint64_t i = 0; i < op->width; i++)
			op->dst[i] = op->pattern[i % op->psize];
		return;
	}
	for (uint32_t z = 0; z < op->slices; z++)
		for (uint32_t y = 0; y < op->rows; y++)
			memcpy(op->dst + z * op->dslice + y * op->dpitch, op->src + z * op->sslice + y * op->spitch,
			       op->width);
}

static void *worker(void *arg)
{
	zs_queue_t *q = arg;
	zs_hostq_t *h = q->hostq;
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (h->head == h->tail && !h->stop)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->head == h->tail)
			break; /* stopped, nothing left */
		const zs_hostop_t op = h->ops[h->head];
		const bool stopping = h->stop;
		pthread_mutex_unlock(&h->lock);
		/* First sleep on the slot for a while without the device connection
		 * (the application's own waits hold it in slices); then wait in the
		 * KMD on the queue's own exec queue: a banned queue ends the wait
		 * (EIO), and nothing after the rendezvous will run. */
		zs_os_sleep(op.slot, ZS_HOSTOP_REACHED, WATCH_NS);
		int rc = zs_os_wait(&q->dev->os, q->exec_id, op.slot, ZESIM_UFENCE_OP_EQ, ZS_HOSTOP_REACHED,
				    0xffffffffull, WAIT_NS);
		pthread_mutex_lock(&h->lock);
		if (rc == -ETIME && !stopping)
			continue;
		if (rc == 0) {
			pthread_mutex_unlock(&h->lock);
			zs_hostop_run(&op);
			__atomic_store_n(op.slot, ZS_HOSTOP_RELEASED, __ATOMIC_RELEASE);
			zs_os_wake(op.slot); /* the engine waits for it in SEMAPHORE_WAIT */
			pthread_mutex_lock(&h->lock);
			h->head++;
		} else {
			h->head = h->tail; /* the queue is lost (or gone): none will be reached */
		}
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* The batch was submitted but nobody can do its operations: let the engine
 * pass the rendezvous (the caller gets the error, the operations are not
 * done) rather than wait there forever. */
static void release_all(const zs_hostop_t *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(ops[i].slot, ZS_HOSTOP_RELEASED, __ATOMIC_RELEASE);
}

ze_result_t zs_hostop_push(zs_queue_t *q, const zs_hostop_t *ops, size_t n)
{
	if (!n)
		return ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&q->lock);
	zs_hostq_t *h = q->hostq;
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h) {
			pthread_mutex_unlock(&q->lock);
			release_all(ops, n);
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->cond, NULL);
		q->hostq = h;
		if (pthread_create(&h->thread, NULL, worker, q)) {
			q->hostq = NULL;
			pthread_cond_destroy(&h->cond);
			pthread_mutex_destroy(&h->lock);
			free(h);
			pthread_mutex_unlock(&q->lock);
			release_all(ops, n);
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	pthread_mutex_unlock(&q->lock);
	ze_result_t r = ZE_RESULT_SUCCESS;
	pthread_mutex_lock(&h->lock);
	if (h->head == h->tail)
		h->head = h->tail = 0;
	if (h->tail + n > h->cap) {
		/* Compact first, then grow. */
		memmove(h->ops, h->ops + h->head, (h->tail - h->head) * sizeof(*h->ops));
		h->tail -= h->head;
		h->head = 0;
		size_t cap = h->cap ? h->cap : 16;
		while (cap < h->tail + n)
			cap *= 2;
		zs_hostop_t *nops = cap > h->cap ? realloc(h->ops, cap * sizeof(*nops)) : h->ops;
		if (nops) {
			h->ops = nops;
			h->cap = cap;
		} else {
			r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
	}
	if (!r) {
		memcpy(h->ops + h->tail, ops, n * sizeof(*ops));
		h->tail += n;
		pthread_cond_signal(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	if (r)
		release_all(ops, n);
	return r;
}

void zs_hostop_stop(zs_queue_t *q)
{
	zs_hostq_t *h = q->hostq;
	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stop = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	free(h->ops);
	free(h);
	q->hostq = NULL;
}
