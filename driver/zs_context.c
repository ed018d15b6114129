/* Contexts.  All contexts share the device's one VM (addresses are process
 * addresses, unique anyway); a context scopes allocations and objects. */
#include "zs_context.h"

#include <stdlib.h>

#include "zs_handle.h"
#include "zs_memory.h"

void zs_context_ref(zs_context_t *ctx) { atomic_fetch_add(&ctx->refs, 1); }

void zs_context_unref(zs_context_t *ctx)
{
	if (atomic_fetch_sub(&ctx->refs, 1) == 1)
		free(ctx);
}

ze_result_t ZE_APICALL zs_context_create_ex(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
					    uint32_t numDevices, ze_device_handle_t *phDevices,
					    ze_context_handle_t *phContext)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phContext);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_CONTEXT_DESC);
	if (desc->flags > ZE_CONTEXT_FLAG_TBD)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (numDevices && !phDevices)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	for (uint32_t i = 0; i < numDevices; i++)
		ZS_CHECK_HANDLE(phDevices[i], ZS_T_DEVICE);
	zs_context_t *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	atomic_init(&ctx->refs, 1);
	ctx->dev = zs_driver()->device;
	if (zs_handle_add(ctx, ZS_T_CONTEXT)) {
		free(ctx);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*phContext = (ze_context_handle_t)ctx;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_context_create(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
					 ze_context_handle_t *phContext)
{
	return zs_context_create_ex(hDriver, desc, 0, NULL, phContext);
}

ze_result_t ZE_APICALL zs_context_destroy(ze_context_handle_t hContext)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_handle_remove(ctx);
	/* Allocations die with their context (the spec's lifetime rule); other
	 * children hold references and go when the application destroys them. */
	zs_memory_free_context(ctx);
	zs_context_unref(ctx);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_context_get_status(ze_context_handle_t hContext)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	zs_context_t *ctx = (zs_context_t *)hContext;
	return atomic_load(&ctx->dev->lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_context_system_barrier(ze_context_handle_t hContext, ze_device_handle_t hDevice)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	/* Memory is coherent between host and device (one shared mapping, and
	 * post-sync writes land after all earlier work): nothing to flush. */
	return ZE_RESULT_SUCCESS;
}

static ze_result_t residency(ze_context_handle_t hContext, ze_device_handle_t hDevice, void *ptr, size_t size)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(ptr);
	/* Allocations are bound in the VM for their whole life, so they are
	 * always resident; the range must still be one of this context's. */
	zs_alloc_info_t a;
	if (!zs_memory_lookup((zs_context_t *)hContext, ptr, &a) ||
	    (uint8_t *)ptr + size > (uint8_t *)a.base + a.size)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_context_make_memory_resident(ze_context_handle_t hContext, ze_device_handle_t hDevice,
						       void *ptr, size_t size)
{
	return residency(hContext, hDevice, ptr, size);
}

ze_result_t ZE_APICALL zs_context_evict_memory(ze_context_handle_t hContext, ze_device_handle_t hDevice, void *ptr,
					       size_t size)
{
	return residency(hContext, hDevice, ptr, size);
}
