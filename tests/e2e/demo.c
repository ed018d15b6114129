/* The zesim demo: an ordinary Level Zero program (nothing zesim-specific),
 * run by `./zesim demo` on the simulated GPU through the Debian loader, our
 * driver, the fake KMD and the SystemC model.  It prints the device, runs a
 * vector add with kernel timestamps and checks it against the host.
 * argv[1]: a module with a kernel `vadd`: vadd.spv (OpenCL C compiled to SPIR-V
 * at build time, translated by the driver) or vadd.elf (ZE-ISA, assembled at
 * build time); the format is told by the SPIR-V magic number. */
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		ze_result_t r_ = (call);                                                           \
		if (r_ != ZE_RESULT_SUCCESS) {                                                     \
			fprintf(stderr, "demo: %s failed: 0x%x\n", #call, (unsigned)r_);          \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*size);
	if (!b || fread(b, 1, *size, f) != *size)
		exit(1);
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: demo vadd.spv|vadd.elf\n");
		return 2;
	}
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	ze_driver_handle_t drv;
	CHECK(zeDriverGet(&n, &drv));
	ze_device_handle_t dev;
	n = 1;
	CHECK(zeDeviceGet(drv, &n, &dev));
	ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	CHECK(zeDeviceGetProperties(dev, &p));
	printf("device: %s (type %s)\n", p.name, p.type == ZE_DEVICE_TYPE_GPU ? "GPU" : "other");
	/* With this stype the timer resolution is in nanoseconds per tick. */
	printf("  %u slice(s) x %u sub-slices x %u EUs x %u threads, %u MHz core clock, timer tick %llu ns\n",
	       p.numSlices, p.numSubslicesPerSlice, p.numEUsPerSubslice, p.numThreadsPerEU, p.coreClockRate,
	       (unsigned long long)p.timerResolution);

	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_context_handle_t ctx;
	CHECK(zeContextCreate(drv, &cd, &ctx));
	size_t size;
	uint8_t *bin = read_file(argv[1], &size);
	const int spirv = size >= 4 && bin[0] == 0x03 && bin[1] == 0x02 && bin[2] == 0x23 && bin[3] == 0x07;
	printf("module: %s (%s)\n", argv[1], spirv ? "SPIR-V from OpenCL C, translated by the driver" : "ZE-ISA");
	ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
			       .format = spirv ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE,
			       .inputSize = size, .pInputModule = bin};
	ze_module_handle_t mod;
	CHECK(zeModuleCreate(ctx, dev, &md, &mod, NULL));
	ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "vadd"};
	ze_kernel_handle_t k;
	CHECK(zeKernelCreate(mod, &kd, &k));

	const uint32_t count = 4096;
	ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
	float *a, *b, *c;
	CHECK(zeMemAllocShared(ctx, &dd, &hd, count * sizeof(float), 64, dev, (void **)&a));
	CHECK(zeMemAllocShared(ctx, &dd, &hd, count * sizeof(float), 64, dev, (void **)&b));
	CHECK(zeMemAllocShared(ctx, &dd, &hd, count * sizeof(float), 64, dev, (void **)&c));
	for (uint32_t i = 0; i < count; i++) {
		a[i] = 0.25f * (float)i;
		b[i] = 1000.0f - (float)i;
	}
	uint32_t gx, gy, gz;
	CHECK(zeKernelSuggestGroupSize(k, count, 1, 1, &gx, &gy, &gz));
	CHECK(zeKernelSetGroupSize(k, gx, gy, gz));
	CHECK(zeKernelSetArgumentValue(k, 0, sizeof(a), &a));
	CHECK(zeKernelSetArgumentValue(k, 1, sizeof(b), &b));
	CHECK(zeKernelSetArgumentValue(k, 2, sizeof(c), &c));
	ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
	CHECK(zeKernelGetProperties(k, &kp));
	if (kp.numKernelArgs == 4) /* the ZE-ISA vadd checks a count; the OpenCL C one covers the grid exactly */
		CHECK(zeKernelSetArgumentValue(k, 3, sizeof(count), &count));

	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				   .count = 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(ctx, &pd, 1, &dev, &pool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .signal = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));

	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	ze_command_list_handle_t list;
	CHECK(zeCommandListCreateImmediate(ctx, dev, &qd, &list));
	ze_group_count_t groups = {(count + gx - 1) / gx, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(list, k, &groups, ev, 0, NULL));
	CHECK(zeEventHostSynchronize(ev, UINT64_MAX));
	ze_kernel_timestamp_result_t ts;
	CHECK(zeEventQueryKernelTimestamp(ev, &ts));

	uint32_t bad = 0;
	for (uint32_t i = 0; i < count; i++)
		bad += c[i] != a[i] + b[i];
	printf("vadd of %u floats in %u groups of %u:\n", count, groups.groupCountX, gx);
	for (uint32_t i = 0; i < 4; i++)
		printf("  c[%u] = %8.2f + %8.2f = %8.2f\n", i, (double)a[i], (double)b[i], (double)c[i]);
	printf("  c[%u] = %8.2f + %8.2f = %8.2f\n", count - 1, (double)a[count - 1], (double)b[count - 1],
	       (double)c[count - 1]);
	const uint64_t ticks = ts.global.kernelEnd - ts.global.kernelStart;
	printf("kernel time: %llu timestamp ticks = %.2f us of simulated GPU time\n", (unsigned long long)ticks,
	       (double)ticks * (double)p.timerResolution / 1000.0);
	printf("%s: %u of %u results match the host\n", bad ? "FAILED" : "OK", count - bad, count);

	CHECK(zeEventDestroy(ev));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeCommandListDestroy(list));
	CHECK(zeMemFree(ctx, a));
	CHECK(zeMemFree(ctx, b));
	CHECK(zeMemFree(ctx, c));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(mod));
	CHECK(zeContextDestroy(ctx));
	free(bin);
	return bad ? 1 : 0;
}
