/* The driver's dispatch tables: the only symbols the library exports.
 *
 * The loader (1.8.12) dlsym's all 53 getters and fails zeInit if a
 * non-"Exp" one is missing or returns an error, so every table is
 * exported; unimplemented entries are NULL (the loader's lib and layers then
 * return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE).  These tables are the single
 * path into the driver: the tracing and validation layers wrap exactly these
 * pointers, and no driver code calls a public ze* name (internal functions
 * are zs_*), so nothing bypasses a tracer. */
#include <string.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "zs_cmdlist.h"
#include "zs_context.h"
#include "zs_debug.h"
#include "zs_driver.h"
#include "zs_event.h"
#include "zs_memory.h"
#include "zs_metrics.h"
#include "zs_module.h"
#include "zs_queue.h"
#include "zs_tracer.h"
#include "zs_tracer_gen.h"
#include "zs_vmem.h"

/* Any 1.x request is served; entries newer than the requested version stay
 * NULL, as the loader expects from a driver of that version. */
static ze_result_t check(ze_api_version_t version, const void *table)
{
	if (!table)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZS_API_VERSION))
		return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
	return ZE_RESULT_SUCCESS;
}

#define SINCE(v) (version >= (v))

ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnInit = zs_init;
	zs_tracer_wrap_Global(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnGet = zs_driver_get;
	t->pfnGetApiVersion = zs_driver_get_api_version;
	t->pfnGetProperties = zs_driver_get_properties;
	t->pfnGetIpcProperties = zs_driver_get_ipc_properties;
	t->pfnGetExtensionProperties = zs_driver_get_extension_properties;
	t->pfnGetExtensionFunctionAddress = zs_driver_get_extension_function_address;
	zs_tracer_wrap_Driver(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnGet = zs_device_get;
	t->pfnGetSubDevices = zs_device_get_sub_devices;
	t->pfnGetProperties = zs_device_get_properties;
	t->pfnGetComputeProperties = zs_device_get_compute_properties;
	t->pfnGetModuleProperties = zs_device_get_module_properties;
	t->pfnGetCommandQueueGroupProperties = zs_device_get_command_queue_group_properties;
	t->pfnGetMemoryProperties = zs_device_get_memory_properties;
	t->pfnGetMemoryAccessProperties = zs_device_get_memory_access_properties;
	t->pfnGetCacheProperties = zs_device_get_cache_properties;
	t->pfnGetImageProperties = zs_device_get_image_properties;
	t->pfnGetExternalMemoryProperties = zs_device_get_external_memory_properties;
	t->pfnGetP2PProperties = zs_device_get_p2p_properties;
	t->pfnCanAccessPeer = zs_device_can_access_peer;
	t->pfnGetStatus = zs_device_get_status;
	if (SINCE(ZE_API_VERSION_1_1))
		t->pfnGetGlobalTimestamps = zs_device_get_global_timestamps;
	if (SINCE(ZE_API_VERSION_1_3))
		t->pfnPciGetPropertiesExt = zs_device_pci_get_properties_ext;
	zs_tracer_wrap_Device(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_context_create;
	t->pfnDestroy = zs_context_destroy;
	t->pfnGetStatus = zs_context_get_status;
	t->pfnSystemBarrier = zs_context_system_barrier;
	t->pfnMakeMemoryResident = zs_context_make_memory_resident;
	t->pfnEvictMemory = zs_context_evict_memory;
	if (SINCE(ZE_API_VERSION_1_1))
		t->pfnCreateEx = zs_context_create_ex;
	zs_tracer_wrap_Context(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version, ze_command_queue_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_command_queue_create;
	t->pfnDestroy = zs_command_queue_destroy;
	t->pfnExecuteCommandLists = zs_command_queue_execute_command_lists;
	t->pfnSynchronize = zs_command_queue_synchronize;
	zs_tracer_wrap_CommandQueue(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_command_list_create;
	t->pfnCreateImmediate = zs_command_list_create_immediate;
	t->pfnDestroy = zs_command_list_destroy;
	t->pfnClose = zs_command_list_close;
	t->pfnReset = zs_command_list_reset;
	t->pfnAppendWriteGlobalTimestamp = zs_command_list_append_write_global_timestamp;
	t->pfnAppendBarrier = zs_command_list_append_barrier;
	t->pfnAppendMemoryRangesBarrier = zs_command_list_append_memory_ranges_barrier;
	t->pfnAppendMemoryCopy = zs_command_list_append_memory_copy;
	t->pfnAppendMemoryFill = zs_command_list_append_memory_fill;
	t->pfnAppendMemoryCopyRegion = zs_command_list_append_memory_copy_region;
	t->pfnAppendMemoryCopyFromContext = zs_command_list_append_memory_copy_from_context;
	t->pfnAppendMemoryPrefetch = zs_command_list_append_memory_prefetch;
	t->pfnAppendMemAdvise = zs_command_list_append_mem_advise;
	t->pfnAppendSignalEvent = zs_command_list_append_signal_event;
	t->pfnAppendWaitOnEvents = zs_command_list_append_wait_on_events;
	t->pfnAppendEventReset = zs_command_list_append_event_reset;
	t->pfnAppendQueryKernelTimestamps = zs_command_list_append_query_kernel_timestamps;
	t->pfnAppendLaunchKernel = zs_command_list_append_launch_kernel;
	t->pfnAppendLaunchCooperativeKernel = zs_command_list_append_launch_cooperative_kernel;
	zs_tracer_wrap_CommandList(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_fence_create;
	t->pfnDestroy = zs_fence_destroy;
	t->pfnHostSynchronize = zs_fence_host_synchronize;
	t->pfnQueryStatus = zs_fence_query_status;
	t->pfnReset = zs_fence_reset;
	zs_tracer_wrap_Fence(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version, ze_event_pool_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_event_pool_create;
	t->pfnDestroy = zs_event_pool_destroy;
	t->pfnGetIpcHandle = zs_event_pool_get_ipc_handle;
	t->pfnOpenIpcHandle = zs_event_pool_open_ipc_handle;
	t->pfnCloseIpcHandle = zs_event_pool_close_ipc_handle;
	zs_tracer_wrap_EventPool(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_event_create;
	t->pfnDestroy = zs_event_destroy;
	t->pfnHostSignal = zs_event_host_signal;
	t->pfnHostSynchronize = zs_event_host_synchronize;
	t->pfnQueryStatus = zs_event_query_status;
	t->pfnHostReset = zs_event_host_reset;
	t->pfnQueryKernelTimestamp = zs_event_query_kernel_timestamp;
	zs_tracer_wrap_Event(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetModuleProcAddrTable(ze_api_version_t version, ze_module_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_module_create;
	t->pfnDestroy = zs_module_destroy;
	t->pfnDynamicLink = zs_module_dynamic_link;
	t->pfnGetNativeBinary = zs_module_get_native_binary;
	t->pfnGetGlobalPointer = zs_module_get_global_pointer;
	t->pfnGetKernelNames = zs_module_get_kernel_names;
	t->pfnGetProperties = zs_module_get_properties;
	t->pfnGetFunctionPointer = zs_module_get_function_pointer;
	zs_tracer_wrap_Module(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetModuleBuildLogProcAddrTable(ze_api_version_t version, ze_module_build_log_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnDestroy = zs_module_build_log_destroy;
	t->pfnGetString = zs_module_build_log_get_string;
	zs_tracer_wrap_ModuleBuildLog(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetKernelProcAddrTable(ze_api_version_t version, ze_kernel_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_kernel_create;
	t->pfnDestroy = zs_kernel_destroy;
	t->pfnSetCacheConfig = zs_kernel_set_cache_config;
	t->pfnSetGroupSize = zs_kernel_set_group_size;
	t->pfnSuggestGroupSize = zs_kernel_suggest_group_size;
	t->pfnSuggestMaxCooperativeGroupCount = zs_kernel_suggest_max_cooperative_group_count;
	t->pfnSetArgumentValue = zs_kernel_set_argument_value;
	t->pfnSetIndirectAccess = zs_kernel_set_indirect_access;
	t->pfnGetIndirectAccess = zs_kernel_get_indirect_access;
	t->pfnGetSourceAttributes = zs_kernel_get_source_attributes;
	t->pfnGetProperties = zs_kernel_get_properties;
	t->pfnGetName = zs_kernel_get_name;
	zs_tracer_wrap_Kernel(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnAllocShared = zs_mem_alloc_shared;
	t->pfnAllocDevice = zs_mem_alloc_device;
	t->pfnAllocHost = zs_mem_alloc_host;
	t->pfnFree = zs_mem_free;
	t->pfnGetAllocProperties = zs_mem_get_alloc_properties;
	t->pfnGetAddressRange = zs_mem_get_address_range;
	t->pfnGetIpcHandle = zs_mem_get_ipc_handle;
	t->pfnOpenIpcHandle = zs_mem_open_ipc_handle;
	t->pfnCloseIpcHandle = zs_mem_close_ipc_handle;
	if (SINCE(ZE_API_VERSION_1_3))
		t->pfnFreeExt = zs_mem_free_ext;
	zs_tracer_wrap_Mem(t);
	return ZE_RESULT_SUCCESS;
}

/* The driver tracer's own table (zs_tracer.c): always filled; without
 * ZET_ENABLE_API_TRACING_EXP=1 its functions return ZE_RESULT_ERROR_UNINITIALIZED. */
ze_result_t ZE_APICALL zetGetTracerExpProcAddrTable(ze_api_version_t version, zet_tracer_exp_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_tracer_create;
	t->pfnDestroy = zs_tracer_destroy;
	t->pfnSetPrologues = zs_tracer_set_prologues;
	t->pfnSetEpilogues = zs_tracer_set_epilogues;
	t->pfnSetEnabled = zs_tracer_set_enabled;
	return ZE_RESULT_SUCCESS;
}

/* ---- tools: metrics (zs_metrics.c; they answer ZE_RESULT_ERROR_UNINITIALIZED unless
 * ZET_ENABLE_METRICS=1 at zeInit) ---- */

ze_result_t ZE_APICALL zetGetContextProcAddrTable(ze_api_version_t version, zet_context_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnActivateMetricGroups = zs_context_activate_metric_groups;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetCommandListProcAddrTable(ze_api_version_t version, zet_command_list_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnAppendMetricStreamerMarker = zs_command_list_append_metric_streamer_marker;
	t->pfnAppendMetricQueryBegin = zs_command_list_append_metric_query_begin;
	t->pfnAppendMetricQueryEnd = zs_command_list_append_metric_query_end;
	t->pfnAppendMetricMemoryBarrier = zs_command_list_append_metric_memory_barrier;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricGroupProcAddrTable(ze_api_version_t version, zet_metric_group_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnGet = zs_metric_group_get;
	t->pfnGetProperties = zs_metric_group_get_properties;
	t->pfnCalculateMetricValues = zs_metric_group_calculate_metric_values;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricGroupExpProcAddrTable(ze_api_version_t version,
							 zet_metric_group_exp_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCalculateMultipleMetricValuesExp = zs_metric_group_calculate_multiple_metric_values_exp;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricProcAddrTable(ze_api_version_t version, zet_metric_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnGet = zs_metric_get;
	t->pfnGetProperties = zs_metric_get_properties;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricStreamerProcAddrTable(ze_api_version_t version, zet_metric_streamer_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnOpen = zs_metric_streamer_open;
	t->pfnClose = zs_metric_streamer_close;
	t->pfnReadData = zs_metric_streamer_read_data;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricQueryPoolProcAddrTable(ze_api_version_t version,
							  zet_metric_query_pool_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_metric_query_pool_create;
	t->pfnDestroy = zs_metric_query_pool_destroy;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetMetricQueryProcAddrTable(ze_api_version_t version, zet_metric_query_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_metric_query_create;
	t->pfnDestroy = zs_metric_query_destroy;
	t->pfnReset = zs_metric_query_reset;
	t->pfnGetData = zs_metric_query_get_data;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetPhysicalMemProcAddrTable(ze_api_version_t version, ze_physical_mem_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnCreate = zs_physical_mem_create;
	t->pfnDestroy = zs_physical_mem_destroy;
	zs_tracer_wrap_PhysicalMem(t);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zeGetVirtualMemProcAddrTable(ze_api_version_t version, ze_virtual_mem_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnReserve = zs_virtual_mem_reserve;
	t->pfnFree = zs_virtual_mem_free;
	t->pfnQueryPageSize = zs_virtual_mem_query_page_size;
	t->pfnMap = zs_virtual_mem_map;
	t->pfnUnmap = zs_virtual_mem_unmap;
	t->pfnSetAccessAttribute = zs_virtual_mem_set_access_attribute;
	t->pfnGetAccessAttribute = zs_virtual_mem_get_access_attribute;
	zs_tracer_wrap_VirtualMem(t);
	return ZE_RESULT_SUCCESS;
}

/* ---- tools: program debugging (zs_debug.c; off unless ZET_ENABLE_PROGRAM_DEBUGGING=1 at
 * zeInit: no ATTACH flag, zetDebugAttach answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) ---- */

ze_result_t ZE_APICALL zetGetDeviceProcAddrTable(ze_api_version_t version, zet_device_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnGetDebugProperties = zs_device_get_debug_properties;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zetGetDebugProcAddrTable(ze_api_version_t version, zet_debug_dditable_t *t)
{
	ze_result_t r = check(version, t);
	if (r)
		return r;
	memset(t, 0, sizeof(*t));
	t->pfnAttach = zs_debug_attach;
	t->pfnDetach = zs_debug_detach;
	t->pfnReadEvent = zs_debug_read_event;
	t->pfnAcknowledgeEvent = zs_debug_acknowledge_event;
	t->pfnInterrupt = zs_debug_interrupt;
	t->pfnResume = zs_debug_resume;
	t->pfnReadMemory = zs_debug_read_memory;
	t->pfnWriteMemory = zs_debug_write_memory;
	t->pfnGetRegisterSetProperties = zs_debug_get_register_set_properties;
	t->pfnReadRegisters = zs_debug_read_registers;
	t->pfnWriteRegisters = zs_debug_write_registers;
	return ZE_RESULT_SUCCESS;
}

/* Tables with no implemented entry: images, samplers, the experimental ze tables, the rest of zet (debug, instrumentation)
 * and all of zes. */
#define EMPTY_TABLE(getter, type)                                                                                     \
	ze_result_t ZE_APICALL getter(ze_api_version_t version, type *t)                                              \
	{                                                                                                             \
		ze_result_t r = check(version, t);                                                                    \
		if (r)                                                                                                \
			return r;                                                                                     \
		memset(t, 0, sizeof(*t));                                                                             \
		return ZE_RESULT_SUCCESS;                                                                             \
	}

EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)

EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)

EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
