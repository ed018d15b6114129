/* The driver and its device.  zeInit opens the DRM node once (the loader
 * calls zeInit at least twice), queries the device, creates the process VM
 * and loads the built-in kernels.  Properties come from the KMD's queries;
 * nothing about the topology or clocks is hard-coded here. */
#define _GNU_SOURCE
#include "zs_driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zs/zex_debug_notifier.h"
#include "zs_debug.h"
#include "zs_handle.h"
#include "zs_metrics.h"
#include "zs_module.h"
#include "zs_printf.h"

/* The built-in kernels, assembled from zs_builtins.zeasm at build time. */
extern const unsigned char zs_builtins_elf[];
extern const size_t zs_builtins_elf_size;

static const char *const builtin_names[ZS_BUILTIN_COUNT] = {
	[ZS_BUILTIN_COPY_DW] = "zs_copy_dw",
	[ZS_BUILTIN_COPY_BYTES] = "zs_copy_bytes",
	[ZS_BUILTIN_FILL_DW] = "zs_fill_dw",
	[ZS_BUILTIN_FILL_BYTES] = "zs_fill_bytes",
};

static zs_driver_t the_driver;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool init_done;
static ze_result_t init_result;

zs_driver_t *zs_driver(void) { return &the_driver; }

#define SLOT_BO_BYTES 65536u

static int load_builtins(zs_device_t *dev)
{
	char err[256];
	if (zm_module_read_mem(zs_builtins_elf, zs_builtins_elf_size, &dev->builtin_module, err, sizeof(err))) {
		fprintf(stderr, "zesim driver: built-in kernels: %s\n", err);
		return -EINVAL;
	}
	for (int i = 0; i < ZS_BUILTIN_COUNT; i++) {
		for (uint32_t k = 0; k < dev->builtin_module.nkernels; k++)
			if (strcmp(dev->builtin_module.kernels[k].name, builtin_names[i]) == 0)
				dev->builtin[i] = &dev->builtin_module.kernels[k];
		if (!dev->builtin[i]) {
			fprintf(stderr, "zesim driver: built-in kernel %s missing\n", builtin_names[i]);
			return -EINVAL;
		}
	}
	return zs_module_upload_text(&dev->os, &dev->builtin_module, &dev->builtin_text);
}

uint64_t zs_builtin_va(const zs_device_t *dev, zs_builtin_id_t id)
{
	return zs_bo_va(&dev->builtin_text) + dev->builtin[id]->addr;
}

static void device_free(zs_device_t *dev)
{
	zs_os_bo_destroy(&dev->os, &dev->builtin_text);
	zm_module_free(&dev->builtin_module);
	zs_os_bo_destroy(&dev->os, &dev->slot_bo);
	free(dev->slot_used);
	zs_os_close(&dev->os);
	pthread_mutex_destroy(&dev->slot_lock);
	free(dev);
}

static ze_result_t device_create(zs_device_t **out)
{
	zs_device_t *dev = calloc(1, sizeof(*dev));
	if (!dev)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	pthread_mutex_init(&dev->slot_lock, NULL);
	dev->os.fd = -1;
	if (zs_os_open(&dev->os) || zs_os_query_info(&dev->os, &dev->info)) {
		/* No simulator (ZESIM_SOCKET unset) or not our KMD: no device. */
		device_free(dev);
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	const zs_os_info_t *in = &dev->info;
	/* The DSS mask counts sub-slices; the config says how they group. */
	if (!in->subslices_per_slice || in->num_subslices % in->subslices_per_slice) {
		device_free(dev);
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	dev->slices = in->num_subslices / in->subslices_per_slice;
	dev->subslices_per_slice = in->subslices_per_slice;
	dev->eus_per_subslice = in->eus_per_subslice;
	dev->threads_per_eu = in->threads_per_eu;
	dev->max_group_threads = in->eus_per_subslice * in->threads_per_eu;
	/* Every kernel must accept the reported maximum, also a SIMD8 one. */
	dev->max_group_size = dev->max_group_threads * 8;
	/* The KMD caps one GEM object at 4 GiB. */
	dev->max_alloc = in->vram_bytes < (4ull << 30) ? in->vram_bytes : (4ull << 30);
	snprintf(dev->name, sizeof(dev->name), "zesim Xe-style GPU %ux%ux%ux%u", dev->slices, dev->subslices_per_slice,
		 dev->eus_per_subslice, dev->threads_per_eu);
	/* Stable across processes and runs: derived only from what identifies
	 * the simulated part. */
	const uint8_t id[16] = {0x86, 0x80, (uint8_t)in->device_id, (uint8_t)(in->device_id >> 8),
				(uint8_t)in->revision, (uint8_t)dev->slices, (uint8_t)dev->subslices_per_slice,
				(uint8_t)dev->eus_per_subslice, (uint8_t)dev->threads_per_eu, 'z', 'e', 's', 'i', 'm',
				0, 0};
	memcpy(dev->uuid.id, id, sizeof(id));

	dev->nslots = SLOT_BO_BYTES / 8;
	dev->slot_used = calloc(dev->nslots / 64, sizeof(uint64_t));
	int rc = dev->slot_used ? zs_os_bo_create(&dev->os, SLOT_BO_BYTES, 0, &dev->slot_bo) : -ENOMEM;
	if (!rc)
		rc = load_builtins(dev);
	if (rc) {
		device_free(dev);
		return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : ZE_RESULT_ERROR_UNINITIALIZED;
	}
	*out = dev;
	return ZE_RESULT_SUCCESS;
}

volatile uint64_t *zs_device_slot_alloc(zs_device_t *dev)
{
	volatile uint64_t *p = NULL;
	pthread_mutex_lock(&dev->slot_lock);
	for (uint32_t w = 0; w < dev->nslots / 64 && !p; w++) {
		if (dev->slot_used[w] == ~0ull)
			continue;
		const int b = __builtin_ctzll(~dev->slot_used[w]);
		dev->slot_used[w] |= 1ull << b;
		p = (volatile uint64_t *)(dev->slot_bo.ptr + (w * 64 + (uint32_t)b) * 8);
		*p = 0;
	}
	pthread_mutex_unlock(&dev->slot_lock);
	return p;
}

void zs_device_slot_free(zs_device_t *dev, volatile uint64_t *slot)
{
	if (!slot)
		return;
	const uint32_t i = (uint32_t)(((const volatile uint8_t *)slot - dev->slot_bo.ptr) / 8);
	pthread_mutex_lock(&dev->slot_lock);
	dev->slot_used[i / 64] &= ~(1ull << (i % 64));
	pthread_mutex_unlock(&dev->slot_lock);
}

ze_result_t zs_device_result(zs_device_t *dev, int err)
{
	switch (err) {
	case 0:
		return ZE_RESULT_SUCCESS;
	case -ETIME:
		return ZE_RESULT_NOT_READY;
	case -ENOMEM:
	case -ENOSPC: /* over the file's device-memory limit (docs/kmd.md §3) */
	case -EMFILE: /* over the file's or the daemon's object limit */
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	case -ECANCELED: /* exec on a queue the KMD banned after an engine error */
	case -EIO:	 /* a waited-for job failed, or the daemon went away */
	case -ENODEV:
		atomic_store(&dev->lost, true);
		return ZE_RESULT_ERROR_DEVICE_LOST;
	default:
		return ZE_RESULT_ERROR_UNKNOWN;
	}
}

/* ---- zeInit, driver ------------------------------------------------------------ */

ze_result_t ZE_APICALL zs_init(ze_init_flags_t flags)
{
	if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* This driver only has a GPU. */
	if (flags == ZE_INIT_FLAG_VPU_ONLY)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	pthread_mutex_lock(&init_lock);
	if (!init_done) {
		zs_device_t *dev = NULL;
		init_result = device_create(&dev);
		if (init_result == ZE_RESULT_SUCCESS) {
			if (zs_handle_add(&the_driver, ZS_T_DRIVER) || zs_handle_add(dev, ZS_T_DEVICE)) {
				device_free(dev);
				init_result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
			} else if ((init_result = zs_metrics_init(dev)) == ZE_RESULT_SUCCESS) {
				/* The tools' metrics when ZET_ENABLE_METRICS=1 (zs_metrics.c), program
				 * debugging when ZET_ENABLE_PROGRAM_DEBUGGING=1 (zs_debug.c). */
				zs_debug_init(dev);
				the_driver.device = dev;
			}
		}
		init_done = true;
	}
	const ze_result_t r = init_result;
	pthread_mutex_unlock(&init_lock);
	return r;
}

ze_result_t ZE_APICALL zs_driver_get(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
	ZS_CHECK_PTR(pCount);
	if (!the_driver.device)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	if (*pCount == 0 || !phDrivers) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	phDrivers[0] = (ze_driver_handle_t)&the_driver;
	*pCount = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_driver_get_api_version(ze_driver_handle_t hDriver, ze_api_version_t *version)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(version);
	*version = ZS_API_VERSION;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_driver_get_properties(ze_driver_handle_t hDriver, ze_driver_properties_t *p)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES);
	static const uint8_t uuid[ZE_MAX_DRIVER_UUID_SIZE] = {'z', 'e', 's', 'i', 'm', '-', 'l', '0',
							      0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(p->uuid.id, uuid, sizeof(uuid));
	p->driverVersion = ZS_DRIVER_VERSION;
	for (ze_base_properties_t *e = p->pNext; e; e = e->pNext)
		if (e->stype == ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES)
			((ze_driver_memory_free_ext_properties_t *)e)->freePolicies =
				ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
				ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_driver_get_ipc_properties(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t *p)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES);
	/* Memory and event pools, as PRIME fds (driver/README.md "IPC"). */
	p->flags = ZE_IPC_PROPERTY_FLAG_MEMORY | ZE_IPC_PROPERTY_FLAG_EVENT_POOL;
	return ZE_RESULT_SUCCESS;
}

static const ze_driver_extension_properties_t extensions[] = {
	{ZE_EU_COUNT_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
	{ZE_PCI_PROPERTIES_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
	{ZE_MEMORY_FREE_POLICIES_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
	{ZEX_PROGRAM_SNAPSHOT_EXP_NAME, ZEX_PROGRAM_SNAPSHOT_EXP_VERSION},
	{ZEX_DEBUG_EVENT_NOTIFIER_EXP_NAME, ZEX_DEBUG_EVENT_NOTIFIER_EXP_VERSION},
};

ze_result_t ZE_APICALL zs_driver_get_extension_properties(ze_driver_handle_t hDriver, uint32_t *pCount,
							  ze_driver_extension_properties_t *pExtensionProperties)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(pCount);
	const uint32_t n = sizeof(extensions) / sizeof(extensions[0]);
	if (*pCount == 0 || !pExtensionProperties) {
		*pCount = n;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > n)
		*pCount = n;
	memcpy(pExtensionProperties, extensions, *pCount * sizeof(extensions[0]));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_driver_get_extension_function_address(ze_driver_handle_t hDriver, const char *name,
								void **ppFunctionAddress)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(name);
	ZS_CHECK_PTR(ppFunctionAddress);
	/* Program snapshots add the one function outside the DDI tables. */
	if (strcmp(name, ZEX_MODULE_GET_SNAPSHOT_STAGES_EXP_NAME) == 0) {
		*ppFunctionAddress = (void *)zs_module_get_snapshot_stages;
		return ZE_RESULT_SUCCESS;
	}
	/* The debug session's pollable notifier (zs_debug.c). */
	if (strcmp(name, ZEX_DEBUG_GET_EVENT_NOTIFIER_EXP_NAME) == 0) {
		*ppFunctionAddress = (void *)zs_debug_get_event_notifier;
		return ZE_RESULT_SUCCESS;
	}
	*ppFunctionAddress = NULL;
	return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* ---- device queries ------------------------------------------------------------- */

#define DEV(h) ((zs_device_t *)(h))

ze_result_t ZE_APICALL zs_device_get(ze_driver_handle_t hDriver, uint32_t *pCount, ze_device_handle_t *phDevices)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !phDevices) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	phDevices[0] = (ze_device_handle_t)the_driver.device;
	*pCount = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_sub_devices(ze_device_handle_t hDevice, uint32_t *pCount,
						 ze_device_handle_t *phSubdevices)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	ZS_UNUSED(phSubdevices);
	*pCount = 0; /* one tile, no sub-devices */
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_properties(ze_device_handle_t hDevice, ze_device_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	{
		ze_result_t r_ = zs_check_stype(p, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2);
		if (r_)
			return r_;
	}
	const zs_device_t *d = DEV(hDevice);
	const ze_structure_type_t stype = p->stype;
	void *next = p->pNext;
	memset(p, 0, sizeof(*p));
	p->stype = stype;
	p->pNext = next;
	p->type = ZE_DEVICE_TYPE_GPU;
	p->vendorId = ZESIM_PCI_VENDOR;
	p->deviceId = d->info.device_id;
	/* Host and device share one memory: the GPU is integrated. */
	p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
	p->subdeviceId = 0;
	p->coreClockRate = (uint32_t)(d->info.core_hz / 1000000u);
	p->maxMemAllocSize = d->max_alloc;
	p->maxHardwareContexts = 65536; /* the KMD's exec-queue handle limit */
	p->maxCommandQueuePriority = 0;
	p->numThreadsPerEU = d->threads_per_eu;
	p->physicalEUSimdWidth = d->info.max_simd;
	p->numEUsPerSubslice = d->eus_per_subslice;
	p->numSubslicesPerSlice = d->subslices_per_slice;
	p->numSlices = d->slices;
	/* 1.0 structures take ns per tick, 1.2 ones ticks per second. */
	p->timerResolution = stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2
				     ? d->info.timestamp_hz
				     : (1000000000ull + d->info.timestamp_hz / 2) / d->info.timestamp_hz;
	p->timestampValidBits = 64;
	p->kernelTimestampValidBits = 64;
	p->uuid = d->uuid;
	snprintf(p->name, sizeof(p->name), "%s", d->name);
	for (ze_base_properties_t *e = next; e; e = e->pNext)
		if (e->stype == ZE_STRUCTURE_TYPE_EU_COUNT_EXT)
			((ze_eu_count_ext_t *)e)->numTotalEUs = d->slices * d->subslices_per_slice * d->eus_per_subslice;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_compute_properties(ze_device_handle_t hDevice,
							ze_device_compute_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES);
	const zs_device_t *d = DEV(hDevice);
	p->maxTotalGroupSize = d->max_group_size;
	p->maxGroupSizeX = d->max_group_size;
	p->maxGroupSizeY = d->max_group_size;
	p->maxGroupSizeZ = d->max_group_size;
	/* Each count fits the walker's 32-bit fields; their product must stay
	 * below 2^32 (checked at launch). */
	p->maxGroupCountX = UINT32_MAX;
	p->maxGroupCountY = UINT32_MAX;
	p->maxGroupCountZ = UINT32_MAX;
	p->maxSharedLocalMemory = (uint32_t)d->info.slm_per_subslice;
	memset(p->subGroupSizes, 0, sizeof(p->subGroupSizes));
	p->numSubGroupSizes = 0;
	for (uint32_t s = 8; s <= d->info.max_simd; s *= 2)
		p->subGroupSizes[p->numSubGroupSizes++] = s;
	return ZE_RESULT_SUCCESS;
}

void zs_native_kernel_uuid(ze_native_kernel_uuid_t *u)
{
	static const uint8_t id[ZE_MAX_NATIVE_KERNEL_UUID_SIZE] = {
		'Z', 'E', '-', 'I', 'S', 'A', 0, 0, (uint8_t)ZE_EM_ZEISA, (uint8_t)(ZE_EM_ZEISA >> 8),
		(uint8_t)ZE_ISA_VERSION, 0, 0, 0, 0, 0};
	memcpy(u->id, id, sizeof(id));
}

ze_result_t ZE_APICALL zs_device_get_module_properties(ze_device_handle_t hDevice, ze_device_module_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES);
	p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2); /* OpenCL kernels in SPIR-V (driver/README.md); modules up to 1.6 are read */
	p->flags = 0;
	p->fp16flags = 0;
	/* docs/isa.md §3.2: RNE, denormals kept, IEEE inf/NaN, fused mad,
	 * correctly rounded inv and sqrt. */
	p->fp32flags = ZE_DEVICE_FP_FLAG_DENORM | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST |
		       ZE_DEVICE_FP_FLAG_FMA | ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
	p->fp64flags = 0;
	p->maxArgumentsSize = ZE_MAX_ARG_BYTES;
	p->printfBufferSize = zs_printf_buffer_size(); /* per module */
	zs_native_kernel_uuid(&p->nativeKernelSupported);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_command_queue_group_properties(ze_device_handle_t hDevice, uint32_t *pCount,
								    ze_command_queue_group_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !p) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES); /* the one element written */
	/* One engine, the compute streamer; copies and fills run on it as
	 * built-in kernels. */
	*pCount = 1;
	p->flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
		   ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
	p->maxMemoryFillPatternSize = ZS_MAX_FILL_PATTERN;
	p->numQueues = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_memory_properties(ze_device_handle_t hDevice, uint32_t *pCount,
						       ze_device_memory_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !p) {
		*pCount = 1;
		return ZE_RESULT_SUCCESS;
	}
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES); /* the one element written */
	*pCount = 1;
	p->flags = 0;
	p->maxClockRate = 0; /* not modelled */
	p->maxBusWidth = 128; /* bits: the dual-channel 64-bit memory of the modelled integrated part (README) */
	p->totalSize = DEV(hDevice)->info.vram_bytes;
	snprintf(p->name, sizeof(p->name), "zesim unified memory");
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_memory_access_properties(ze_device_handle_t hDevice,
							      ze_device_memory_access_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES);
	/* Every allocation is the same shared memory, mapped on both sides. */
	const ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
						 ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
						 ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
	p->hostAllocCapabilities = all;
	p->deviceAllocCapabilities = all;
	p->sharedSingleDeviceAllocCapabilities = all;
	p->sharedCrossDeviceAllocCapabilities = 0; /* one device */
	p->sharedSystemAllocCapabilities = 0;	   /* malloc'ed memory is not in the GPU VM */
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_cache_properties(ze_device_handle_t hDevice, uint32_t *pCount,
						      ze_device_cache_properties_t *pCacheProperties)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pCount);
	ZS_UNUSED(pCacheProperties);
	/* The uAPI does not report cache sizes. */
	*pCount = 0;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_image_properties(ze_device_handle_t hDevice, ze_device_image_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES);
	/* No sampler or image hardware: every limit is 0 (= unsupported). */
	const ze_structure_type_t stype = p->stype;
	void *next = p->pNext;
	memset(p, 0, sizeof(*p));
	p->stype = stype;
	p->pNext = next;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_external_memory_properties(ze_device_handle_t hDevice,
								ze_device_external_memory_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES);
	p->memoryAllocationImportTypes = 0;
	p->memoryAllocationExportTypes = 0;
	p->imageImportTypes = 0;
	p->imageExportTypes = 0;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_p2p_properties(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
						    ze_device_p2p_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_HANDLE(hPeerDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES);
	/* The only peer is the device itself. */
	p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS | ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_can_access_peer(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
						 ze_bool_t *value)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_HANDLE(hPeerDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(value);
	*value = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_status(ze_device_handle_t hDevice)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	return atomic_load(&DEV(hDevice)->lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_get_global_timestamps(ze_device_handle_t hDevice, uint64_t *hostTimestamp,
						       uint64_t *deviceTimestamp)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(hostTimestamp);
	ZS_CHECK_PTR(deviceTimestamp);
	zs_device_t *d = DEV(hDevice);
	/* The KMD samples the GPU timestamp and CLOCK_MONOTONIC_RAW together. */
	uint64_t gpu, cpu;
	int rc = zs_os_engine_cycles(&d->os, &gpu, &cpu);
	if (rc)
		return zs_device_result(d, rc);
	*hostTimestamp = cpu;
	*deviceTimestamp = gpu;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_device_pci_get_properties_ext(ze_device_handle_t hDevice, ze_pci_ext_properties_t *p)
{
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES);
	/* The fake node's sysfs path names 0000:00:02.0; link speed unknown. */
	p->address = (ze_pci_address_ext_t){0, 0, 2, 0};
	p->maxSpeed = (ze_pci_speed_ext_t){-1, -1, -1};
	return ZE_RESULT_SUCCESS;
}
