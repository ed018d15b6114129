/* Event pools and events.  An event is 64 bytes of pool memory (a GEM
 * object, host-mapped): a state qword the device sets with STORE_DATA after
 * the work it follows, and two timestamps TIMESTAMP_WRITE fills around a
 * kernel.  The host polls or, to block, waits on it with WAIT_USER_FENCE. */
#ifndef ZS_EVENT_H
#define ZS_EVENT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs_context.h"

#define ZS_EVENT_STRIDE 64u
#define ZS_EVENT_STATE 0u     /* u64: low dword 1 = signalled, 0 = not */
#define ZS_EVENT_TS_START 8u  /* u64 GPU timestamp before the work */
#define ZS_EVENT_TS_END 16u   /* u64 GPU timestamp after the work */
#define ZS_EVENT_SIGNALED 1u

typedef struct zs_event_pool {
	atomic_uint refs; /* the handle and each event */
	zs_context_t *ctx;
	ze_event_pool_flags_t flags;
	uint32_t count;
	zs_bo_t bo;
	int ipc_fd;    /* the PRIME fd zeEventPoolGetIpcHandle gave, until the pool goes; -1: none */
	bool imported; /* opened from another process's handle: its events' state is that pool's */
} zs_event_pool_t;

typedef struct zs_event {
	zs_event_pool_t *pool;
	uint32_t index;
	uint8_t *mem; /* host pointer = GPU address of the 64-byte slot */
	ze_event_scope_flags_t signal, wait;
} zs_event_t;

static inline uint64_t zs_event_va(const zs_event_t *e) { return (uint64_t)(uintptr_t)e->mem; }
static inline bool zs_event_timestamped(const zs_event_t *e)
{
	return (e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0;
}

/* Checks a list of wait events (and an optional signal event) for an append
 * to a command list of ctx. */
ze_result_t zs_event_check_list(zs_context_t *ctx, ze_event_handle_t signal, uint32_t nwait,
				ze_event_handle_t *wait);

ze_result_t ZE_APICALL zs_event_pool_create(ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
					    uint32_t numDevices, ze_device_handle_t *phDevices,
					    ze_event_pool_handle_t *phEventPool);
ze_result_t ZE_APICALL zs_event_pool_destroy(ze_event_pool_handle_t hEventPool);
ze_result_t ZE_APICALL zs_event_pool_get_ipc_handle(ze_event_pool_handle_t hEventPool,
						    ze_ipc_event_pool_handle_t *phIpc);
ze_result_t ZE_APICALL zs_event_pool_open_ipc_handle(ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc,
						     ze_event_pool_handle_t *phEventPool);
ze_result_t ZE_APICALL zs_event_pool_close_ipc_handle(ze_event_pool_handle_t hEventPool);
ze_result_t ZE_APICALL zs_event_create(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
				       ze_event_handle_t *phEvent);
ze_result_t ZE_APICALL zs_event_destroy(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_event_host_signal(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_event_host_synchronize(ze_event_handle_t hEvent, uint64_t timeout);
ze_result_t ZE_APICALL zs_event_query_status(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_event_host_reset(ze_event_handle_t hEvent);
ze_result_t ZE_APICALL zs_event_query_kernel_timestamp(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t *dstptr);

#endif
