/* Error codes: bad handles (NULL, destroyed, of the wrong type), NULL
 * pointers, bad enumerations and sizes, malformed modules with their build
 * logs, misuse of lists, queues, events and fences, descriptors and
 * properties of the wrong stype or with a bad pNext chain.  Runs without the
 * validation layer, so every code comes from the driver.  At the end the
 * driver must still run a kernel correctly.  argv[1]: vadd.elf */
#include "e2e.h"

/* Creates a module from bytes; returns the result and the build log text. */
static ze_result_t build(e2e_t *e, ze_module_format_t fmt, const void *bin, size_t size, char *logtext, size_t len)
{
	ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = fmt, .inputSize = size,
			       .pInputModule = bin};
	ze_module_handle_t m = NULL;
	ze_module_build_log_handle_t log = NULL;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, &m, &log);
	logtext[0] = '\0';
	EXPECT(log != NULL, "no build log (result %#x)", r);
	size_t n = 0;
	CHECK(zeModuleBuildLogGetString(log, &n, NULL));
	EXPECT(n >= 1 && n <= len, "log size %zu", n);
	CHECK(zeModuleBuildLogGetString(log, &n, logtext));
	EXPECT(strlen(logtext) + 1 == n, "log size %zu for %zu characters", n, strlen(logtext));
	CHECK(zeModuleBuildLogDestroy(log));
	if (r == ZE_RESULT_SUCCESS)
		CHECK(zeModuleDestroy(m));
	else
		EXPECT(m == NULL, "a failed build returned a module");
	return r;
}

#define EXPECT_LOG(text, what) EXPECT(strstr(text, what) != NULL, "build log \"%s\" does not say \"%s\"", text, what)

/* stype and pNext (driver/README.md "Descriptors"): a descriptor or properties
 * structure of the wrong type is an invalid argument; an extension the driver
 * does not know is ignored, a chain element that is no structure type is not. */
#define BAD_STYPE ((ze_structure_type_t)0x7fff0000)
#define UNKNOWN_EXT ((ze_structure_type_t)0x000fff00) /* below the validation layer's 0x00100000 */

static void stype_checks(e2e_t *e, const char *module_path)
{
	const ze_base_desc_t unknown = {.stype = UNKNOWN_EXT}, bad = {.stype = BAD_STYPE};
	void *p;

	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	ze_context_handle_t ctx;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeContextCreate(e->drv, &cd, &ctx));
	cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
	cd.pNext = &bad;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeContextCreate(e->drv, &cd, &ctx));
	cd.pNext = &unknown;
	CHECK(zeContextCreate(e->drv, &cd, &ctx));
	CHECK(zeContextDestroy(ctx));
	/* A cyclic chain ends too. */
	ze_base_desc_t loop = {.stype = UNKNOWN_EXT};
	loop.pNext = &loop;
	cd.pNext = &loop;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeContextCreate(e->drv, &cd, &ctx));

	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
	ze_command_queue_handle_t q;
	ze_command_list_handle_t l;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueCreate(e->ctx, e->dev, &qd, &q));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &l));
	qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
	qd.pNext = &bad;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueCreate(e->ctx, e->dev, &qd, &q));
	qd.pNext = &unknown;
	CHECK(zeCommandQueueCreate(e->ctx, e->dev, &qd, &q));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
	ze_fence_handle_t f;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeFenceCreate(q, &fd, &f));
	fd.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
	CHECK(zeFenceCreate(q, &fd, &f));
	CHECK(zeFenceDestroy(f));
	CHECK(zeCommandQueueDestroy(q));
	ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListCreate(e->ctx, e->dev, &ld, &l));

	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .count = 1};
	ze_event_pool_handle_t pool;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventPoolCreate(e->ctx, &pd, 0, NULL, &pool));
	pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
	CHECK(zeEventPoolCreate(e->ctx, &pd, 0, NULL, &pool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC};
	ze_event_handle_t ev;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &ed, &ev));
	CHECK(zeEventPoolDestroy(pool));

	ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemAllocDevice(e->ctx, &dd, 64, 0, e->dev, &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemAllocHost(e->ctx, &hd, 64, 0, &p));
	dd.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemAllocShared(e->ctx, &dd, &hd, 64, 0, e->dev, &p));
	hd.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
	dd.pNext = &unknown;
	CHECK(zeMemAllocShared(e->ctx, &dd, &hd, 64, 0, e->dev, &p));
	ze_memory_allocation_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
	ze_device_handle_t dev;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemGetAllocProperties(e->ctx, p, &mp, &dev));
	ze_memory_free_ext_desc_t fe = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFreeExt(e->ctx, &fe, p));
	CHECK(zeMemFree(e->ctx, p));

	size_t size;
	uint8_t *bin = read_file(module_path, &size);
	ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .format = ZE_MODULE_FORMAT_NATIVE,
			       .inputSize = size, .pInputModule = bin, .pBuildFlags = ""};
	ze_module_handle_t m;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeModuleCreate(e->ctx, e->dev, &md, &m, NULL));
	md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
	CHECK(zeModuleCreate(e->ctx, e->dev, &md, &m, NULL));
	free(bin);
	ze_module_properties_t modp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeModuleGetProperties(m, &modp));
	ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .pKernelName = "vadd"};
	ze_kernel_handle_t k;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelCreate(m, &kd, &k));
	kd.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
	CHECK(zeKernelCreate(m, &kd, &k));
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelGetProperties(k, &kp));
	kp.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
	kp.pNext = (void *)&bad;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelGetProperties(k, &kp));
	kp.pNext = (void *)&unknown;
	CHECK(zeKernelGetProperties(k, &kp));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));

	/* Properties: zero-initialised structures (stype 0 is no type). */
	ze_driver_properties_t drp = {0};
	ze_driver_ipc_properties_t ipc = {0};
	ze_device_properties_t dp = {0};
	ze_device_compute_properties_t cp = {0};
	ze_device_module_properties_t dmp = {0};
	ze_command_queue_group_properties_t gp = {0};
	ze_device_memory_properties_t memp = {0};
	ze_device_memory_access_properties_t ap = {0};
	ze_device_image_properties_t ip = {0};
	ze_device_external_memory_properties_t xp = {0};
	ze_device_p2p_properties_t p2p = {0};
	ze_pci_ext_properties_t pci = {0};
	uint32_t one = 1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDriverGetProperties(e->drv, &drp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDriverGetIpcProperties(e->drv, &ipc));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetProperties(e->dev, &dp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetComputeProperties(e->dev, &cp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetModuleProperties(e->dev, &dmp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetCommandQueueGroupProperties(e->dev, &one, &gp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetMemoryProperties(e->dev, &one, &memp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetMemoryAccessProperties(e->dev, &ap));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetImageProperties(e->dev, &ip));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetExternalMemoryProperties(e->dev, &xp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetP2PProperties(e->dev, e->dev, &p2p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDevicePciGetPropertiesExt(e->dev, &pci));
	/* Both device-properties types are accepted; an unknown extension is left alone. */
	ze_base_properties_t ext = {.stype = UNKNOWN_EXT};
	dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
	dp.pNext = &ext;
	CHECK(zeDeviceGetProperties(e->dev, &dp));
	EXPECT(ext.stype == UNKNOWN_EXT && ext.pNext == NULL, "an unknown extension was written");
	dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
	CHECK(zeDeviceGetProperties(e->dev, &dp));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_errors vadd.elf");
	e2e_t e;
	e2e_init(&e);
	char text[2048];

	/* ---- handles and pointers ---- */
	ze_api_version_t v;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDriverGetApiVersion(NULL, &v));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDriverGetApiVersion(e.drv, NULL));
	ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties((ze_device_handle_t)e.ctx, &dp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties((ze_device_handle_t)&dp, &dp));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGetProperties(e.dev, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeCommandListClose((ze_command_list_handle_t)e.queue));
	uint32_t count = 7;
	ze_device_handle_t devs[7];
	CHECK(zeDeviceGet(e.drv, &count, devs));
	EXPECT(count == 1, "zeDeviceGet corrects the count to %u", count);
	void *fn;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDriverGetExtensionFunctionAddress(e.drv, "zeNope", &fn));

	/* ---- descriptors ---- */
	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC, .flags = 2};
	ze_context_handle_t ctx2;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeContextCreate(e.drv, &cd, &ctx2));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeContextCreate(e.drv, NULL, &ctx2));
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .mode = 7};
	ze_command_queue_handle_t q;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeCommandQueueCreate(e.ctx, e.dev, &qd, &q));
	qd.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;
	qd.ordinal = 1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueCreate(e.ctx, e.dev, &qd, &q));
	ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, .flags = 8};
	ze_command_list_handle_t l;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeCommandListCreate(e.ctx, e.dev, &ld, &l));
	ld.flags = 0;
	ld.commandQueueGroupOrdinal = 3;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListCreate(e.ctx, e.dev, &ld, &l));

	/* ---- memory ---- */
	ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	void *p;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, zeMemAllocDevice(e.ctx, &dd, 0, 0, e.dev, &p));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT, zeMemAllocDevice(e.ctx, &dd, 64, 3, e.dev, &p));
	CHECK(zeDeviceGetProperties(e.dev, &dp));
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
		     zeMemAllocDevice(e.ctx, &dd, dp.maxMemAllocSize + 1, 0, e.dev, &p));
	dd.ordinal = 1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemAllocDevice(e.ctx, &dd, 64, 0, e.dev, &p));
	dd.ordinal = 0;
	dd.flags = 0x10;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeMemAllocDevice(e.ctx, &dd, 64, 0, e.dev, &p));
	dd.flags = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemAllocDevice(e.ctx, NULL, 64, 0, e.dev, &p));
	uint8_t *buf = e2e_alloc_device(&e, 4096);
	char *heap = malloc(64);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(e.ctx, buf + 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(e.ctx, heap));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemFree(e.ctx, NULL));
	void *base;
	size_t size;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemGetAddressRange(e.ctx, heap, &base, &size));
	ze_context_handle_t other;
	cd.flags = 0;
	CHECK(zeContextCreate(e.drv, &cd, &other));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(other, buf)); /* not this context's */
	void *twice = e2e_alloc_host(&e, 64);
	CHECK(zeMemFree(e.ctx, twice));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(e.ctx, twice));

	/* ---- malformed modules, with build logs ---- */
	size_t vsize;
	uint8_t *vbin = read_file(argv[1], &vsize);
	uint8_t junk[256];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 31 + 7);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
		     build(&e, ZE_MODULE_FORMAT_NATIVE, junk, sizeof(junk), text, sizeof(text)));
	EXPECT_LOG(text, "not an ELF file");
	size_t xsize;
	uint8_t *x86 = read_file("/proc/self/exe", &xsize); /* an ELF for another machine */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY,
		     build(&e, ZE_MODULE_FORMAT_NATIVE, x86, xsize, text, sizeof(text)));
	EXPECT_LOG(text, "machine 0x3e is not ZE-ISA");
	free(x86);
	CHECK_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
		     build(&e, ZE_MODULE_FORMAT_NATIVE, vbin, vsize / 2, text, sizeof(text)));
	EXPECT_LOG(text, "module build failed: ");
	uint8_t *bad = malloc(vsize);
	memcpy(bad, vbin, vsize);
	uint8_t *name = memmem(bad, vsize, "ZESIM", 6);
	EXPECT(name != NULL, "no note name in %s", argv[1]);
	name[4] = 'X'; /* the kernel-attribute note's name */
	CHECK_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
		     build(&e, ZE_MODULE_FORMAT_NATIVE, bad, vsize, text, sizeof(text)));
	EXPECT_LOG(text, "module build failed: ");
	note("malformed note: %s", text);
	/* A header-only SPIR-V module: valid words, but no memory model. */
	const uint32_t spirv[5] = {0x07230203, 0x00010000, 0, 1, 0};
	CHECK_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
		     build(&e, ZE_MODULE_FORMAT_IL_SPIRV, spirv, sizeof(spirv), text, sizeof(text)));
	EXPECT_LOG(text, "SPIR-V");
	EXPECT_LOG(text, "OpMemoryModel");
	CHECK_RESULT(ZE_RESULT_SUCCESS, build(&e, ZE_MODULE_FORMAT_NATIVE, vbin, vsize, text, sizeof(text)));
	EXPECT(text[0] == '\0', "log of a good module: %s", text);
	ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_NATIVE,
			       .inputSize = 0, .pInputModule = vbin};
	ze_module_handle_t m;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zeModuleCreate(e.ctx, e.dev, &md, &m, NULL));
	md.inputSize = vsize;
	md.format = 5;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeModuleCreate(e.ctx, e.dev, &md, &m, NULL));
	md.format = ZE_MODULE_FORMAT_NATIVE;
	md.pInputModule = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeModuleCreate(e.ctx, e.dev, &md, &m, NULL));
	free(bad);

	/* ---- kernels ---- */
	m = e2e_module(&e, argv[1]);
	ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "vsub"};
	ze_kernel_handle_t k;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(m, &kd, &k));
	kd.pKernelName = "vadd";
	kd.flags = 8;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeKernelCreate(m, &kd, &k));
	k = e2e_kernel(m, "vadd");
	uint32_t n32 = 1;
	uint64_t n64 = 1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, zeKernelSetArgumentValue(k, 4, 4, &n32));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(k, 0, 4, &n32));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(k, 3, 8, &n64));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeKernelSetArgumentValue(k, 3, 4, NULL));
	CHECK(zeKernelSetArgumentValue(k, 0, 8, NULL)); /* a NULL device pointer is a value */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 0, 1, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 4096, 1, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 64, 64, 1));
	uint32_t gx, gy, gz;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION, zeKernelSuggestGroupSize(k, 0, 1, 1, &gx, &gy, &gz));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeKernelSuggestGroupSize(k, 8, 1, 1, NULL, &gy, &gz));
	ze_kernel_handle_t dead = e2e_kernel(m, "vadd");
	CHECK(zeKernelDestroy(dead));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeKernelSetGroupSize(dead, 1, 1, 1));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeKernelDestroy(dead));

	/* ---- command lists and queues ---- */
	const ze_group_count_t one = {1, 1, 1}, huge = {65536, 65536, 1};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
		     zeCommandListAppendLaunchKernel(e.list, k, NULL, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandListAppendLaunchKernel(e.list, k, &one, NULL, 1, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendLaunchKernel(e.list, k, &huge, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
		     zeCommandListAppendLaunchKernel(e.list, dead, &one, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_OVERLAPPING_REGIONS,
		     zeCommandListAppendMemoryCopy(e.list, buf + 8, buf, 64, NULL, 0, NULL));
	/* Host memory (heap) is accepted (tests/e2e/test_hostmem.c); a range
	 * that starts in an allocation and runs past its end is not. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendMemoryCopy(e.list, heap, buf + 4000, 200, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendMemoryCopy(e.list, buf + 4000, buf, 200, NULL, 0, NULL)); /* past the end */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
		     zeCommandListAppendMemoryFill(e.list, buf, "abc", 3, 64, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
		     zeCommandListAppendMemoryFill(e.list, buf, text, 256, 512, NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendWriteGlobalTimestamp(e.list, (uint64_t *)(buf + 4), NULL, 0, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendWriteGlobalTimestamp(e.list, (uint64_t *)(heap + 4), NULL, 0, NULL));
	/* Not closed yet. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zeCommandQueueExecuteCommandLists(e.queue, 0, &e.list, NULL));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeCommandQueueExecuteCommandLists(e.queue, 1, NULL, NULL));
	CHECK(zeCommandListClose(e.list));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendBarrier(e.list, NULL, 0, NULL));
	ze_command_queue_desc_t iqd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e.ctx, e.dev, &iqd, &imm));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueExecuteCommandLists(e.queue, 1, &imm, NULL));
	ze_command_queue_handle_t q2;
	qd.ordinal = 0;
	CHECK(zeCommandQueueCreate(e.ctx, e.dev, &qd, &q2));
	ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
	ze_fence_handle_t f2;
	CHECK(zeFenceCreate(q2, &fd, &f2));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT,
		     zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, f2));
	fd.flags = 2;
	ze_fence_handle_t f3;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeFenceCreate(q2, &fd, &f3));
	CHECK(zeFenceDestroy(f2));
	CHECK(zeCommandQueueDestroy(q2));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeCommandQueueSynchronize(q2, 0));
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeCommandListReset(e.list));

	/* ---- events ---- */
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 0};
	ze_event_pool_handle_t pool;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	pd.count = 4;
	pd.flags = 8;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	pd.flags = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE, zeEventPoolCreate(e.ctx, &pd, 1, NULL, &pool));
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 4};
	ze_event_handle_t ev;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &ed, &ev));
	ed.index = 0;
	ed.signal = 8;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeEventCreate(pool, &ed, &ev));
	ed.signal = 0;
	CHECK(zeEventCreate(pool, &ed, &ev));
	ze_kernel_timestamp_result_t ts;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventQueryKernelTimestamp(ev, &ts)); /* no timestamps */
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev, 1000));
	/* An event of another context. */
	ze_event_pool_handle_t opool;
	CHECK(zeEventPoolCreate(other, &pd, 0, NULL, &opool));
	ze_event_handle_t oev;
	CHECK(zeEventCreate(opool, &ed, &oev));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT,
		     zeCommandListAppendSignalEvent(e.list, oev));
	CHECK(zeEventDestroy(oev));
	CHECK(zeEventPoolDestroy(opool));
	CHECK(zeEventDestroy(ev));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSignal(ev));
	CHECK(zeEventPoolDestroy(pool));

	/* ---- not implemented (no image hardware): the loader reports it ---- */
	ze_image_desc_t id = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC, .type = ZE_IMAGE_TYPE_2D, .width = 4,
			      .height = 4, .depth = 1};
	ze_image_handle_t img;
	CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, zeImageCreate(e.ctx, e.dev, &id, &img));

	/* ---- after all that, the driver still computes ---- */
	stype_checks(&e, argv[1]);

	const uint32_t n = 256;
	float *a = e2e_alloc_shared(&e, n * 4), *c = e2e_alloc_shared(&e, n * 4);
	for (uint32_t i = 0; i < n; i++)
		a[i] = (float)i;
	CHECK(zeKernelSetGroupSize(k, 64, 1, 1));
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &a));
	CHECK(zeKernelSetArgumentValue(k, 1, 8, &a));
	CHECK(zeKernelSetArgumentValue(k, 2, 8, &c));
	CHECK(zeKernelSetArgumentValue(k, 3, 4, &n));
	ze_group_count_t groups = {n / 64, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c[i] == 2.0f * (float)i, "c[%u] = %g", i, (double)c[i]);
	CHECK(zeDeviceGetStatus(e.dev));

	CHECK(zeMemFree(e.ctx, a));
	CHECK(zeMemFree(e.ctx, c));
	CHECK(zeMemFree(e.ctx, buf));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	CHECK(zeContextDestroy(other));
	free(heap);
	free(vbin);
	e2e_fini(&e);
	note("errors: every misuse reported with its code");
	return 0;
}
