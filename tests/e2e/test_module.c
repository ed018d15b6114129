/* Modules and kernels: names, properties, native binary, function pointers,
 * build and link logs, group-size suggestions, indirect access flags, a
 * kernel calling a function, a cooperative launch.
 * argv[1]: misc.elf (kernels busy, inc, calls; function square 80 bytes into calls)
 * argv[2]: vadd.elf (a SIMD16 kernel: it could run groups larger than the
 * device's maxGroupSizeX, which suggestions must not exceed) */
#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: test_module misc.elf vadd.elf");
	e2e_t e;
	e2e_init(&e);
	size_t size;
	uint8_t *bin = read_file(argv[1], &size);
	ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_NATIVE,
			       .inputSize = size, .pInputModule = bin, .pBuildFlags = "-ze-opt-disable"};
	ze_module_handle_t m;
	ze_module_build_log_handle_t log;
	CHECK(zeModuleCreate(e.ctx, e.dev, &md, &m, &log));
	size_t n = 0;
	CHECK(zeModuleBuildLogGetString(log, &n, NULL));
	EXPECT(n == 1, "a successful build logs nothing (%zu bytes)", n);
	CHECK(zeModuleBuildLogDestroy(log));

	uint32_t count = 0;
	CHECK(zeModuleGetKernelNames(m, &count, NULL));
	EXPECT(count == 4, "%u kernels", count);
	const char *names[4];
	CHECK(zeModuleGetKernelNames(m, &count, names));
	EXPECT(strcmp(names[0], "busy") == 0 && strcmp(names[1], "inc") == 0 && strcmp(names[2], "calls") == 0 &&
		       strcmp(names[3], "poke") == 0,
	       "kernel names %s %s %s %s", names[0], names[1], names[2], names[3]);
	ze_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES};
	CHECK(zeModuleGetProperties(m, &mp));
	EXPECT(mp.flags == 0, "no unresolved imports");

	size_t nsize = 0;
	CHECK(zeModuleGetNativeBinary(m, &nsize, NULL));
	EXPECT(nsize == size, "native binary of %zu bytes, input %zu", nsize, size);
	uint8_t *native = malloc(nsize);
	CHECK(zeModuleGetNativeBinary(m, &nsize, native));
	EXPECT(memcmp(native, bin, size) == 0, "native binary differs from the input");
	/* A module built from its own native binary works the same. */
	ze_module_desc_t md2 = md;
	md2.pInputModule = native;
	ze_module_handle_t m2;
	CHECK(zeModuleCreate(e.ctx, e.dev, &md2, &m2, NULL));
	ze_module_handle_t both[2] = {m, m2};
	ze_module_build_log_handle_t link;
	CHECK(zeModuleDynamicLink(2, both, &link));
	CHECK(zeModuleBuildLogDestroy(link));

	void *fk, *ff, *fk2;
	CHECK(zeModuleGetFunctionPointer(m, "calls", &fk));
	CHECK(zeModuleGetFunctionPointer(m, "square", &ff));
	CHECK(zeModuleGetFunctionPointer(m2, "calls", &fk2));
	EXPECT((uintptr_t)ff - (uintptr_t)fk == 80, "square is %td bytes into calls", (uint8_t *)ff - (uint8_t *)fk);
	EXPECT(fk != fk2, "two modules share an address");
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(m, "nope", &ff));
	void *g;
	size_t gsize;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, zeModuleGetGlobalPointer(m, "x", &gsize, &g));

	ze_kernel_handle_t calls = e2e_kernel(m2, "calls"), busy = e2e_kernel(m, "busy");
	char kname[16];
	size_t kn = 0;
	CHECK(zeKernelGetName(calls, &kn, NULL));
	EXPECT(kn == 6, "name size %zu", kn);
	CHECK(zeKernelGetName(calls, &kn, kname));
	EXPECT(strcmp(kname, "calls") == 0, "name %s", kname);
	ze_kernel_preferred_group_size_properties_t pg = {
		.stype = ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES};
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES, .pNext = &pg};
	CHECK(zeKernelGetProperties(busy, &kp));
	EXPECT(kp.numKernelArgs == 2 && kp.maxSubgroupSize == 8 && pg.preferredMultiple == 8,
	       "busy: %u args, sub-group %u, multiple %u", kp.numKernelArgs, kp.maxSubgroupSize,
	       pg.preferredMultiple);
	ze_kernel_properties_t kp2 = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(calls, &kp2));
	EXPECT(memcmp(&kp.uuid, &kp2.uuid, sizeof(kp.uuid)) != 0, "kernel uuids");
	uint32_t attr_size = 0;
	char *attrs = NULL;
	CHECK(zeKernelGetSourceAttributes(busy, &attr_size, &attrs));
	EXPECT(attr_size == 1, "attributes %u", attr_size);
	/* pString NULL asks for the size only (the spec from 1.5 on, and Intel's
	 * driver); the validation layer of loader 1.8.12 still follows the 1.4
	 * header, where pString is required, and refuses it before the driver. */
	attr_size = 0;
	const char *vl = getenv("ZE_ENABLE_VALIDATION_LAYER");
	if (vl && strcmp(vl, "1") == 0) {
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeKernelGetSourceAttributes(busy, &attr_size, NULL));
	} else {
		CHECK(zeKernelGetSourceAttributes(busy, &attr_size, NULL));
		EXPECT(attr_size == 1, "attributes %u (pString NULL)", attr_size);
	}
	char attr_buf[4] = "xyz";
	attrs = attr_buf;
	attr_size = sizeof(attr_buf);
	CHECK(zeKernelGetSourceAttributes(busy, &attr_size, &attrs));
	EXPECT(attr_size == 1 && attr_buf[0] == '\0', "attributes %u \"%s\"", attr_size, attr_buf);

	ze_kernel_indirect_access_flags_t ia = 0;
	CHECK(zeKernelSetIndirectAccess(busy, ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE));
	CHECK(zeKernelGetIndirectAccess(busy, &ia));
	EXPECT(ia == ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE, "indirect access %#x", ia);
	CHECK(zeKernelSetCacheConfig(busy, ZE_CACHE_CONFIG_FLAG_LARGE_SLM));

	/* Suggestions divide the global size and fit the device. */
	ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
	CHECK(zeDeviceGetComputeProperties(e.dev, &cp));
	const uint32_t globals[][3] = {{1024, 1, 1}, {1000, 3, 1}, {7, 9, 11},	 {640, 480, 1},
				       {1, 1, 1},    {1, 1024, 1}, {1, 1, 4096}, {1785, 1, 1}};
	size_t vsize;
	uint8_t *vbin = read_file(argv[2], &vsize);
	ze_module_desc_t vmd = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = ZE_MODULE_FORMAT_NATIVE,
				.inputSize = vsize, .pInputModule = vbin};
	ze_module_handle_t vm;
	CHECK(zeModuleCreate(e.ctx, e.dev, &vmd, &vm, NULL));
	free(vbin);
	ze_kernel_handle_t vadd = e2e_kernel(vm, "vadd");
	ze_kernel_handle_t suggest[] = {busy, vadd};
	for (size_t kk = 0; kk < 2; kk++)
		for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++) {
			uint32_t x, y, z;
			CHECK(zeKernelSuggestGroupSize(suggest[kk], globals[i][0], globals[i][1], globals[i][2], &x, &y,
						       &z));
			EXPECT(globals[i][0] % x == 0 && globals[i][1] % y == 0 && globals[i][2] % z == 0 &&
				       x <= cp.maxGroupSizeX && y <= cp.maxGroupSizeY && z <= cp.maxGroupSizeZ &&
				       x * y * z <= cp.maxTotalGroupSize,
			       "%s: suggested %ux%ux%u for %ux%ux%u (device maximum %u, %ux%ux%u)",
			       kk ? "vadd" : "busy", x, y, z, globals[i][0], globals[i][1], globals[i][2],
			       cp.maxTotalGroupSize, cp.maxGroupSizeX, cp.maxGroupSizeY, cp.maxGroupSizeZ);
			CHECK(zeKernelSetGroupSize(suggest[kk], x, y, z));
		}
	CHECK(zeKernelDestroy(vadd));
	CHECK(zeModuleDestroy(vm));

	/* A kernel that calls a function. */
	float *out = e2e_alloc_shared(&e, 8 * sizeof(float));
	CHECK(zeKernelSetGroupSize(calls, 8, 1, 1));
	CHECK(zeKernelSetArgumentValue(calls, 0, 8, &out));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, calls, &one, NULL, 0, NULL));
	e2e_run(&e);
	for (int i = 0; i < 8; i++)
		EXPECT(out[i] == (float)(i * i), "out[%d] = %g", i, (double)out[i]);

	/* A cooperative launch of as many groups as fit at once. */
	ze_kernel_handle_t inc = e2e_kernel(m, "inc");
	uint32_t *counter = e2e_alloc_shared(&e, 4);
	*counter = 0;
	CHECK(zeKernelSetGroupSize(inc, 8, 1, 1));
	CHECK(zeKernelSetArgumentValue(inc, 0, 8, &counter));
	uint32_t max_groups = 0;
	CHECK(zeKernelSuggestMaxCooperativeGroupCount(inc, &max_groups));
	EXPECT(max_groups >= 1, "cooperative groups %u", max_groups);
	ze_group_count_t coop = {max_groups, 1, 1};
	CHECK(zeCommandListAppendLaunchCooperativeKernel(e.list, inc, &coop, NULL, 0, NULL));
	ze_group_count_t too_many = {max_groups + 1, 1, 1};
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendLaunchCooperativeKernel(e.list, inc, &too_many, NULL, 0, NULL));
	e2e_run(&e);
	EXPECT(*counter == 8 * max_groups, "counter %u after %u groups of 8", *counter, max_groups);

	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeMemFree(e.ctx, counter));
	CHECK(zeKernelDestroy(inc));
	CHECK(zeKernelDestroy(calls));
	CHECK(zeKernelDestroy(busy));
	CHECK(zeModuleDestroy(m2));
	CHECK(zeModuleDestroy(m));
	free(native);
	free(bin);
	e2e_fini(&e);
	note("module: names, binary, function pointers, properties, calls, cooperative launch of %u groups",
	     max_groups);
	return 0;
}
