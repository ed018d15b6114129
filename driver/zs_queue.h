/* Command queues and fences.  A queue is a KMD exec queue plus a timeline:
 * an 8-byte slot the KMD sets to the submission's number when a batch has
 * completed (a user-fence sync on every exec).  A fence remembers the
 * timeline value of the execution it was passed to. */
#ifndef ZS_QUEUE_H
#define ZS_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs_context.h"

typedef struct zs_queue {
	atomic_uint refs; /* the handle (or immediate list) and each fence */
	zs_context_t *ctx;
	zs_device_t *dev;
	uint32_t exec_id;
	volatile uint64_t *timeline;
	uint64_t submitted; /* last value submitted; under lock */
	pthread_mutex_t lock;
	uint32_t ordinal, index;
	ze_command_queue_flags_t flags;
	ze_command_queue_mode_t mode;
	ze_command_queue_priority_t priority;
	struct zs_queue *next; /* all queues of the device */
	struct zs_hostq *hostq; /* worker for host operations (zs_hostop.c), made on first use */
} zs_queue_t;

typedef enum zs_fence_state { ZS_FENCE_UNSIGNALED, ZS_FENCE_SIGNALED, ZS_FENCE_PENDING } zs_fence_state_t;

typedef struct zs_fence {
	zs_queue_t *q;
	_Atomic(zs_fence_state_t) state;
	atomic_uint_fast64_t value; /* timeline value when PENDING */
} zs_fence_t;

/* Checks a queue descriptor (also used by immediate command lists). */
ze_result_t zs_queue_check_desc(const ze_command_queue_desc_t *desc);
ze_result_t zs_queue_new(zs_context_t *ctx, zs_device_t *dev, const ze_command_queue_desc_t *desc, zs_queue_t **out);
/* Waits for the queue's work, then drops a reference. */
void zs_queue_release(zs_queue_t *q);

/* Submits a batch (its last command BATCH_END); *value is its timeline value. */
ze_result_t zs_queue_submit(zs_queue_t *q, uint64_t batch_va, uint64_t *value);
bool zs_queue_done(const zs_queue_t *q, uint64_t value);
ze_result_t zs_queue_wait(zs_queue_t *q, uint64_t value, uint64_t timeout_ns);
ze_result_t zs_queue_wait_idle(zs_queue_t *q, uint64_t timeout_ns);
/* Waits for all work submitted on any queue of the device. */
ze_result_t zs_queue_wait_all(zs_device_t *dev);
/* Whether a queue of the device with work outstanding was banned by the KMD
 * (its job hit an engine error): the device is then lost, and waits on
 * events that job would have signalled must not block forever. */
bool zs_queue_any_lost(zs_device_t *dev);
/* Whether every queue of the device has completed all it was given (a
 * look at the timelines, no wait). */
bool zs_queue_all_idle(zs_device_t *dev);

ze_result_t ZE_APICALL zs_command_queue_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					       const ze_command_queue_desc_t *desc,
					       ze_command_queue_handle_t *phCommandQueue);
ze_result_t ZE_APICALL zs_command_queue_destroy(ze_command_queue_handle_t hCommandQueue);
ze_result_t ZE_APICALL zs_command_queue_execute_command_lists(ze_command_queue_handle_t hCommandQueue,
							      uint32_t numCommandLists,
							      ze_command_list_handle_t *phCommandLists,
							      ze_fence_handle_t hFence);
ze_result_t ZE_APICALL zs_command_queue_synchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout);

ze_result_t ZE_APICALL zs_fence_create(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t *desc,
				       ze_fence_handle_t *phFence);
ze_result_t ZE_APICALL zs_fence_destroy(ze_fence_handle_t hFence);
ze_result_t ZE_APICALL zs_fence_host_synchronize(ze_fence_handle_t hFence, uint64_t timeout);
ze_result_t ZE_APICALL zs_fence_query_status(ze_fence_handle_t hFence);
ze_result_t ZE_APICALL zs_fence_reset(ze_fence_handle_t hFence);

#endif
