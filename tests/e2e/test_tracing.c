/* Every driver entry point goes through the dispatch table the loader's
 * tracing layer wraps (run with ZE_ENABLE_TRACING_LAYER=1): each API call
 * shows up exactly once, with its result, and the driver's own work (the
 * built-in copy kernel) never shows up as an application launch.
 * argv[1]: vadd.elf */
#include <level_zero/layers/zel_tracing_api.h>

#include "e2e.h"

typedef struct counts {
	int launch_pro, launch_epi, copy_pro, copy_epi, exec_pro, exec_epi, setarg_pro, alloc_pro;
	ze_result_t last_launch;
} counts_t;

static void on_launch_pro(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->launch_pro++;
}
static void on_launch_epi(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)inst;
	((counts_t *)user)->launch_epi++;
	((counts_t *)user)->last_launch = r;
}
static void on_copy_pro(ze_command_list_append_memory_copy_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->copy_pro++;
}
static void on_copy_epi(ze_command_list_append_memory_copy_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->copy_epi++;
}
static void on_exec_pro(ze_command_queue_execute_command_lists_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->exec_pro++;
}
static void on_exec_epi(ze_command_queue_execute_command_lists_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->exec_epi++;
}
static void on_setarg_pro(ze_kernel_set_argument_value_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->setarg_pro++;
}
static void on_alloc_pro(ze_mem_alloc_shared_params_t *p, ze_result_t r, void *user, void **inst)
{
	(void)p, (void)r, (void)inst;
	((counts_t *)user)->alloc_pro++;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_tracing vadd.elf");
	e2e_t e;
	e2e_init(&e);
	counts_t c = {0};
	zel_tracer_desc_t td = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, &c};
	zel_tracer_handle_t tracer;
	CHECK(zelTracerCreate(&td, &tracer));
	zel_core_callbacks_t pro = {0}, epi = {0};
	pro.CommandList.pfnAppendLaunchKernelCb = on_launch_pro;
	epi.CommandList.pfnAppendLaunchKernelCb = on_launch_epi;
	pro.CommandList.pfnAppendMemoryCopyCb = on_copy_pro;
	epi.CommandList.pfnAppendMemoryCopyCb = on_copy_epi;
	pro.CommandQueue.pfnExecuteCommandListsCb = on_exec_pro;
	epi.CommandQueue.pfnExecuteCommandListsCb = on_exec_epi;
	pro.Kernel.pfnSetArgumentValueCb = on_setarg_pro;
	pro.Mem.pfnAllocSharedCb = on_alloc_pro;
	CHECK(zelTracerSetPrologues(tracer, &pro));
	CHECK(zelTracerSetEpilogues(tracer, &epi));
	CHECK(zelTracerSetEnabled(tracer, 1));

	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	const uint32_t n = 128;
	float *a = e2e_alloc_shared(&e, n * 4), *b = e2e_alloc_shared(&e, n * 4), *c2 = e2e_alloc_shared(&e, n * 4);
	for (uint32_t i = 0; i < n; i++)
		a[i] = b[i] = (float)i;
	CHECK(zeKernelSetGroupSize(k, 64, 1, 1));
	CHECK(zeKernelSetArgumentValue(k, 0, 8, &a));
	CHECK(zeKernelSetArgumentValue(k, 1, 8, &b));
	CHECK(zeKernelSetArgumentValue(k, 2, 8, &c2));
	CHECK(zeKernelSetArgumentValue(k, 3, 4, &n));
	ze_group_count_t groups = {n / 64, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, a, c2, n * 4, NULL, 0, NULL)); /* a built-in kernel inside */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
		     zeCommandListAppendLaunchKernel(e.list, k, NULL, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(a[i] == 2.0f * (float)i, "a[%u] = %g", i, (double)a[i]);

	CHECK(zelTracerSetEnabled(tracer, 0));
	EXPECT(c.launch_pro == 2 && c.launch_epi == 2, "launch callbacks %d/%d", c.launch_pro, c.launch_epi);
	EXPECT(c.last_launch == ZE_RESULT_ERROR_INVALID_NULL_POINTER, "the epilogue saw result %#x", c.last_launch);
	EXPECT(c.copy_pro == 1 && c.copy_epi == 1, "copy callbacks %d/%d", c.copy_pro, c.copy_epi);
	EXPECT(c.exec_pro == 1 && c.exec_epi == 1, "execute callbacks %d/%d", c.exec_pro, c.exec_epi);
	EXPECT(c.setarg_pro == 4 && c.alloc_pro == 3, "set-argument %d, allocation %d", c.setarg_pro, c.alloc_pro);
	CHECK(zelTracerDestroy(tracer));

	CHECK(zeMemFree(e.ctx, a));
	CHECK(zeMemFree(e.ctx, b));
	CHECK(zeMemFree(e.ctx, c2));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("tracing: every call seen once by the tracing layer");
	return 0;
}
