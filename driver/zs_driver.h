/* The driver and its one device: zeInit, driver and device queries, global
 * timestamps.  The device owns the DRM file (zs_os_t), the process VM, the
 * built-in kernels and the slots that hold the queues' timelines. */
#ifndef ZS_DRIVER_H
#define ZS_DRIVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs/ze_module.h"
#include "zs_os.h"

#define ZS_API_VERSION ZE_API_VERSION_1_4
#define ZS_DRIVER_VERSION ((0u << 24) | (1u << 16) | 0u) /* 0.1.0 */
#define ZS_MAX_FILL_PATTERN 128u

/* Built-in kernels (driver/zs_builtins.zeasm), used for copies and fills. */
typedef enum zs_builtin_id {
	ZS_BUILTIN_COPY_DW,    /* dword copy, all addresses and sizes 4-byte aligned */
	ZS_BUILTIN_COPY_BYTES, /* byte copy of a 3-D region (a flat copy is 1 row) */
	ZS_BUILTIN_FILL_DW,    /* dword fill from a power-of-two pattern of dwords */
	ZS_BUILTIN_FILL_BYTES, /* byte fill from a power-of-two pattern */
	ZS_BUILTIN_COUNT
} zs_builtin_id_t;

typedef struct zs_device {
	zs_os_t os;
	zs_os_info_t info;
	/* Topology as reported by the KMD (see zs_driver.c on slices). */
	uint32_t slices, subslices_per_slice, eus_per_subslice, threads_per_eu;
	uint32_t max_group_size;     /* work items of a group at the widest SIMD */
	uint32_t max_group_threads;  /* hardware threads of one sub-slice */
	uint64_t max_alloc;
	ze_device_uuid_t uuid;
	char name[ZE_MAX_DEVICE_NAME];

	zm_module_t builtin_module;
	zs_bo_t builtin_text;
	const zm_kernel_t *builtin[ZS_BUILTIN_COUNT];

	/* 8-byte slots in one GEM object for queue timelines: a GEM object costs
	 * 64 KiB of the device's physical memory, a timeline 8 bytes. */
	pthread_mutex_t slot_lock;
	zs_bo_t slot_bo;
	uint64_t *slot_used; /* bitmap */
	uint32_t nslots;

	atomic_bool lost; /* a submission failed: the KMD banned a queue */
} zs_device_t;

typedef struct zs_driver {
	zs_device_t *device; /* NULL until zeInit succeeded */
} zs_driver_t;

/* The driver singleton (the one ze_driver_handle_t). */
zs_driver_t *zs_driver(void);

/* Timeline slots; the slot is zero when handed out. */
volatile uint64_t *zs_device_slot_alloc(zs_device_t *dev);
void zs_device_slot_free(zs_device_t *dev, volatile uint64_t *slot);

/* GPU address of a built-in kernel. */
uint64_t zs_builtin_va(const zs_device_t *dev, zs_builtin_id_t id);

/* The identity of the native binary format (ZE-ISA ELF, docs/module-format.md). */
void zs_native_kernel_uuid(ze_native_kernel_uuid_t *u);

/* Maps a failed ioctl to a result; marks the device lost on a banned queue. */
ze_result_t zs_device_result(zs_device_t *dev, int err);

/* Entry points */
ze_result_t ZE_APICALL zs_init(ze_init_flags_t flags);
ze_result_t ZE_APICALL zs_driver_get(uint32_t *pCount, ze_driver_handle_t *phDrivers);
ze_result_t ZE_APICALL zs_driver_get_api_version(ze_driver_handle_t hDriver, ze_api_version_t *version);
ze_result_t ZE_APICALL zs_driver_get_properties(ze_driver_handle_t hDriver, ze_driver_properties_t *pDriverProperties);
ze_result_t ZE_APICALL zs_driver_get_ipc_properties(ze_driver_handle_t hDriver,
						    ze_driver_ipc_properties_t *pIpcProperties);
ze_result_t ZE_APICALL zs_driver_get_extension_properties(ze_driver_handle_t hDriver, uint32_t *pCount,
							  ze_driver_extension_properties_t *pExtensionProperties);
ze_result_t ZE_APICALL zs_driver_get_extension_function_address(ze_driver_handle_t hDriver, const char *name,
								void **ppFunctionAddress);

ze_result_t ZE_APICALL zs_device_get(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices);
ze_result_t ZE_APICALL zs_device_get_sub_devices(ze_device_handle_t hDevice, uint32_t *pCount,
						 ze_device_handle_t *phSubdevices);
ze_result_t ZE_APICALL zs_device_get_properties(ze_device_handle_t hDevice, ze_device_properties_t *pDeviceProperties);
ze_result_t ZE_APICALL zs_device_get_compute_properties(ze_device_handle_t hDevice,
							ze_device_compute_properties_t *pComputeProperties);
ze_result_t ZE_APICALL zs_device_get_module_properties(ze_device_handle_t hDevice,
						       ze_device_module_properties_t *pModuleProperties);
ze_result_t ZE_APICALL zs_device_get_command_queue_group_properties(
	ze_device_handle_t hDevice, uint32_t *pCount, ze_command_queue_group_properties_t *pCommandQueueGroupProperties);
ze_result_t ZE_APICALL zs_device_get_memory_properties(ze_device_handle_t hDevice, uint32_t *pCount,
						       ze_device_memory_properties_t *pMemProperties);
ze_result_t ZE_APICALL zs_device_get_memory_access_properties(ze_device_handle_t hDevice,
							      ze_device_memory_access_properties_t *pMemAccessProperties);
ze_result_t ZE_APICALL zs_device_get_cache_properties(ze_device_handle_t hDevice, uint32_t *pCount,
						      ze_device_cache_properties_t *pCacheProperties);
ze_result_t ZE_APICALL zs_device_get_image_properties(ze_device_handle_t hDevice,
						      ze_device_image_properties_t *pImageProperties);
ze_result_t ZE_APICALL zs_device_get_external_memory_properties(
	ze_device_handle_t hDevice, ze_device_external_memory_properties_t *pExternalMemoryProperties);
ze_result_t ZE_APICALL zs_device_get_p2p_properties(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
						    ze_device_p2p_properties_t *pP2PProperties);
ze_result_t ZE_APICALL zs_device_can_access_peer(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
						 ze_bool_t *value);
ze_result_t ZE_APICALL zs_device_get_status(ze_device_handle_t hDevice);
ze_result_t ZE_APICALL zs_device_get_global_timestamps(ze_device_handle_t hDevice, uint64_t *hostTimestamp,
						       uint64_t *deviceTimestamp);
ze_result_t ZE_APICALL zs_device_pci_get_properties_ext(ze_device_handle_t hDevice,
							ze_pci_ext_properties_t *pPciProperties);

#endif
