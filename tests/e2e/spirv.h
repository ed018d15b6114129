/* Helpers of the SPIR-V front-end tests (test_spirv*.c): loading SPIR-V
 * modules through zeModuleCreate(ZE_MODULE_FORMAT_IL_SPIRV). */
#ifndef E2E_SPIRV_H
#define E2E_SPIRV_H

#include "e2e.h"

/* Build a module from `size` bytes in `format`; the result, with the build log
 * in log (always NUL-terminated). */
static inline ze_result_t spirv_build(e2e_t *e, ze_module_format_t format, const void *bin, size_t size,
				      ze_module_handle_t *m, char *log, size_t loglen)
{
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, format, size, bin, "", NULL};
	ze_module_build_log_handle_t bl = NULL;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, m, &bl);
	log[0] = '\0';
	if (bl) {
		size_t n = 0;
		CHECK(zeModuleBuildLogGetString(bl, &n, NULL));
		char *text = malloc(n ? n : 1);
		EXPECT(text != NULL, "out of memory");
		CHECK(zeModuleBuildLogGetString(bl, &n, text));
		snprintf(log, loglen, "%s", text);
		free(text);
		CHECK(zeModuleBuildLogDestroy(bl));
	}
	return r;
}

/* Loads a SPIR-V module; any failure ends the test with the build log. */
static inline ze_module_handle_t spirv_module(e2e_t *e, const char *path)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_handle_t m = NULL;
	char log[2048];
	ze_result_t r = spirv_build(e, ZE_MODULE_FORMAT_IL_SPIRV, bin, size, &m, log, sizeof(log));
	EXPECT(r == ZE_RESULT_SUCCESS, "zeModuleCreate(%s, SPIR-V) = 0x%x: %s", path, (unsigned)r, log);
	EXPECT(log[0] == '\0', "build log of a good module: %s", log);
	free(bin);
	return m;
}

/* Set the arguments, launch n work items in groups of `group` (1-D) and wait. */
static inline void spirv_launch(e2e_t *e, ze_kernel_handle_t k, uint32_t group, uint32_t n, uint32_t nargs,
				const e2e_arg_t *args)
{
	e2e_set_args(k, nargs, args);
	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	ze_group_count_t groups = {n / group, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
}

static inline uint32_t float_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

#endif
