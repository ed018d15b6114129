/* zeInit is idempotent: the loader calls the driver's zeInit during its own
 * set-up and again for every application call; handles stay the same and
 * the driver keeps working.  Also checks the flags zeInit accepts. */
#include "e2e.h"

int main(void)
{
	CHECK(zeInit(0));
	ze_driver_handle_t drv[2];
	uint32_t n = 0;
	CHECK(zeDriverGet(&n, NULL));
	EXPECT(n == 1, "%u drivers", n);
	CHECK(zeDriverGet(&n, &drv[0]));
	ze_device_handle_t dev[2];
	n = 1;
	CHECK(zeDeviceGet(drv[0], &n, &dev[0]));

	for (int i = 0; i < 5; i++)
		CHECK(zeInit(i % 2 ? ZE_INIT_FLAG_GPU_ONLY : 0));
	n = 1;
	CHECK(zeDriverGet(&n, &drv[1]));
	EXPECT(drv[1] == drv[0], "driver handle changed across zeInit");
	n = 1;
	CHECK(zeDeviceGet(drv[1], &n, &dev[1]));
	EXPECT(dev[1] == dev[0], "device handle changed across zeInit");

	/* This driver has no VPU: a VPU-only init finds nothing, and leaves
	 * the GPU driver as it was. */
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zeInit(ZE_INIT_FLAG_VPU_ONLY));
	/* Unknown flag bits. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeInit(0x8));
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));

	/* Still fully usable. */
	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_context_handle_t ctx;
	CHECK(zeContextCreate(drv[0], &cd, &ctx));
	ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	void *p;
	CHECK(zeMemAllocHost(ctx, &hd, 4096, 0, &p));
	CHECK(zeMemFree(ctx, p));
	CHECK(zeContextDestroy(ctx));
	ze_api_version_t v;
	CHECK(zeDriverGetApiVersion(drv[0], &v));
	EXPECT(v == ZE_API_VERSION_1_4, "API version %#x", v);
	note("init: repeated zeInit keeps one driver and device");
	return 0;
}
