/* Device, host and shared allocations.  Each is one GEM object mapped into
 * the process and bound in the GPU VM at the same address, so a pointer is
 * valid on both sides; the three kinds differ only in what
 * zeMemGetAllocProperties reports (the memory is unified). */
#ifndef ZS_MEMORY_H
#define ZS_MEMORY_H

#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs_context.h"

typedef struct zs_alloc_info {
	void *base;
	size_t size; /* as requested */
	ze_memory_type_t type;
	uint64_t id;
	zs_context_t *ctx;
	zs_device_t *dev; /* NULL for host allocations */
} zs_alloc_info_t;

/* The allocation of `ctx` (any context if NULL) that contains ptr. */
bool zs_memory_lookup(zs_context_t *ctx, const void *ptr, zs_alloc_info_t *out);
/* Frees every allocation of the context (at its destruction). */
void zs_memory_free_context(zs_context_t *ctx);

ze_result_t ZE_APICALL zs_mem_alloc_shared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *device_desc,
					   const ze_host_mem_alloc_desc_t *host_desc, size_t size, size_t alignment,
					   ze_device_handle_t hDevice, void **pptr);
ze_result_t ZE_APICALL zs_mem_alloc_device(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *device_desc,
					   size_t size, size_t alignment, ze_device_handle_t hDevice, void **pptr);
ze_result_t ZE_APICALL zs_mem_alloc_host(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t *host_desc,
					 size_t size, size_t alignment, void **pptr);
ze_result_t ZE_APICALL zs_mem_free(ze_context_handle_t hContext, void *ptr);
ze_result_t ZE_APICALL zs_mem_free_ext(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t *pMemFreeDesc,
				       void *ptr);
ze_result_t ZE_APICALL zs_mem_get_alloc_properties(ze_context_handle_t hContext, const void *ptr,
						   ze_memory_allocation_properties_t *pMemAllocProperties,
						   ze_device_handle_t *phDevice);
ze_result_t ZE_APICALL zs_mem_get_ipc_handle(ze_context_handle_t hContext, const void *ptr,
					     ze_ipc_mem_handle_t *pIpcHandle);
ze_result_t ZE_APICALL zs_mem_open_ipc_handle(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      ze_ipc_mem_handle_t handle, ze_ipc_memory_flags_t flags, void **pptr);
ze_result_t ZE_APICALL zs_mem_close_ipc_handle(ze_context_handle_t hContext, const void *ptr);
ze_result_t ZE_APICALL zs_mem_get_address_range(ze_context_handle_t hContext, const void *ptr, void **pBase,
						size_t *pSize);

#endif
