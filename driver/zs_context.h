/* Contexts.  A context is reference counted: the objects created in it
 * (allocations, modules, queues, lists, event pools) keep it alive, so
 * destroying a context before its children never leaves them dangling. */
#ifndef ZS_CONTEXT_H
#define ZS_CONTEXT_H

#include <stdatomic.h>

#include <level_zero/ze_api.h>

#include "zs_driver.h"

typedef struct zs_context {
	atomic_uint refs;
	zs_device_t *dev; /* the driver's one device */
} zs_context_t;

void zs_context_ref(zs_context_t *ctx);
void zs_context_unref(zs_context_t *ctx);

ze_result_t ZE_APICALL zs_context_create(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
					 ze_context_handle_t *phContext);
ze_result_t ZE_APICALL zs_context_create_ex(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
					    uint32_t numDevices, ze_device_handle_t *phDevices,
					    ze_context_handle_t *phContext);
ze_result_t ZE_APICALL zs_context_destroy(ze_context_handle_t hContext);
ze_result_t ZE_APICALL zs_context_get_status(ze_context_handle_t hContext);
ze_result_t ZE_APICALL zs_context_system_barrier(ze_context_handle_t hContext, ze_device_handle_t hDevice);
ze_result_t ZE_APICALL zs_context_make_memory_resident(ze_context_handle_t hContext, ze_device_handle_t hDevice,
						       void *ptr, size_t size);
ze_result_t ZE_APICALL zs_context_evict_memory(ze_context_handle_t hContext, ze_device_handle_t hDevice, void *ptr,
					       size_t size);

#endif
