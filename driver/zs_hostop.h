/* Host operations: copies, fills and timestamp stores that involve host
 * memory the device cannot reach (malloc, stack, static data, module
 * globals), done by the CPU at their place in a queue.
 *
 * The batch marks the place with a rendezvous on an 8-byte slot of GPU
 * memory: STORE_DATA slot = REACHED (performed only after all earlier work
 * completed), then SEMAPHORE_WAIT slot == RELEASED.  A worker thread of the
 * queue waits for REACHED, does the operation with the CPU, and stores
 * RELEASED; the engine then goes on to the operation's signal event.  So the
 * data is read when the operation executes, and written before its signal,
 * fence or timeline value. */
#ifndef ZS_HOSTOP_H
#define ZS_HOSTOP_H

#include <stdint.h>

#include <level_zero/ze_api.h>

#define ZS_HOSTOP_REACHED 1u
#define ZS_HOSTOP_RELEASED 2u
#define ZS_HOSTOP_MAX_PATTERN 128

typedef enum zs_hostop_kind { ZS_HOSTOP_COPY, ZS_HOSTOP_FILL } zs_hostop_kind_t;

typedef struct zs_hostop {
	zs_hostop_kind_t kind;
	volatile uint64_t *slot; /* the rendezvous, in GPU memory */
	uint8_t *dst;
	const uint8_t *src; /* copies */
	/* A copy of width bytes x rows x slices (a linear copy: 1 x 1); a fill
	 * of width bytes. */
	uint64_t width;
	uint32_t rows, slices;
	uint64_t dpitch, spitch, dslice, sslice;
	uint8_t pattern[ZS_HOSTOP_MAX_PATTERN]; /* fills */
	uint32_t psize;
} zs_hostop_t;

struct zs_queue;

/* Hands the operations of a batch just submitted to the queue's worker (in
 * the order the batch reaches them); the worker starts on first use. */
ze_result_t zs_hostop_push(struct zs_queue *q, const zs_hostop_t *ops, size_t n);
/* Stops the queue's worker (the queue is idle or lost). */
void zs_hostop_stop(struct zs_queue *q);
/* Does one operation now (the worker; exposed for the unit test). */
void zs_hostop_run(const zs_hostop_t *op);

#endif
