/* Driver and device properties against what the daemon was started with.
 *   test_properties SxSSxEUxT    topology the preset gives (tiny 1x1x2x4, xe-lp 1x6x16x7)
 *   test_properties --uuid       print the device UUID (the test runs itself
 *                                this way to check that it is stable across processes) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "e2e.h"

static void uuid_hex(const ze_device_uuid_t *u, char *out)
{
	for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++)
		sprintf(out + 2 * i, "%02x", u->id[i]);
}

static uint64_t now_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2 || argc == 3, "usage: test_properties SxSSxEUxT [MEMORY_MIB] | --uuid");
	e2e_t e;
	e2e_init(&e);
	ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	CHECK(zeDeviceGetProperties(e.dev, &p));
	char uuid[2 * ZE_MAX_DEVICE_UUID_SIZE + 1];
	uuid_hex(&p.uuid, uuid);
	if (strcmp(argv[1], "--uuid") == 0) {
		printf("%s\n", uuid);
		e2e_fini(&e);
		return 0;
	}
	unsigned s, ss, eu, th;
	EXPECT(sscanf(argv[1], "%ux%ux%ux%u", &s, &ss, &eu, &th) == 4, "bad topology %s", argv[1]);

	ze_api_version_t v;
	CHECK(zeDriverGetApiVersion(e.drv, &v));
	EXPECT(v == ZE_API_VERSION_1_4, "API version %#x", v);
	ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
	CHECK(zeDriverGetProperties(e.drv, &dp));

	EXPECT(p.type == ZE_DEVICE_TYPE_GPU, "type %d", p.type);
	EXPECT(p.vendorId == 0x8086 && p.deviceId == 0x5a45, "ids %#x:%#x", p.vendorId, p.deviceId);
	EXPECT(p.numSlices == s && p.numSubslicesPerSlice == ss && p.numEUsPerSubslice == eu && p.numThreadsPerEU == th,
	       "topology %ux%ux%ux%u, the daemon has %s", p.numSlices, p.numSubslicesPerSlice, p.numEUsPerSubslice,
	       p.numThreadsPerEU, argv[1]);
	EXPECT(!(p.flags & ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE), "flags %#x", p.flags);
	EXPECT(p.coreClockRate == 1000, "core clock %u MHz", p.coreClockRate);
	EXPECT(p.timerResolution == 80, "timer resolution %llu ns (12.5 MHz is 80 ns)",
	       (unsigned long long)p.timerResolution);
	EXPECT(p.timestampValidBits == 64 && p.kernelTimestampValidBits == 64, "valid bits %u/%u",
	       p.timestampValidBits, p.kernelTimestampValidBits);
	EXPECT(p.maxMemAllocSize > 0 && p.physicalEUSimdWidth >= 8, "alloc %llu simd %u",
	       (unsigned long long)p.maxMemAllocSize, p.physicalEUSimdWidth);
	EXPECT(strlen(p.name) > 0, "no name");

	/* The 1.2 structure reports the timer in ticks per second. */
	ze_device_properties_t p12 = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	CHECK(zeDeviceGetProperties(e.dev, &p12));
	EXPECT(p12.timerResolution == 12500000, "1.2 timer resolution %llu Hz", (unsigned long long)p12.timerResolution);
	ze_eu_count_ext_t euc = {.stype = ZE_STRUCTURE_TYPE_EU_COUNT_EXT};
	ze_device_properties_t pe = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, .pNext = &euc};
	CHECK(zeDeviceGetProperties(e.dev, &pe));
	EXPECT(euc.numTotalEUs == s * ss * eu, "total EUs %u", euc.numTotalEUs);

	uint32_t n = 0;
	CHECK(zeDeviceGetSubDevices(e.dev, &n, NULL));
	EXPECT(n == 0, "%u sub-devices", n);

	ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
	CHECK(zeDeviceGetComputeProperties(e.dev, &cp));
	/* A group of up to every thread of a sub-slice, at the narrowest SIMD (8): the
	 * largest group every kernel accepts. */
	EXPECT(cp.maxTotalGroupSize == 8 * eu * th, "max group size %u", cp.maxTotalGroupSize);
	EXPECT(cp.numSubGroupSizes == 2 && cp.subGroupSizes[0] == 8 && cp.subGroupSizes[1] == 16, "sub-groups");
	EXPECT(cp.maxSharedLocalMemory == 65536, "SLM %u", cp.maxSharedLocalMemory);

	ze_device_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
	CHECK(zeDeviceGetModuleProperties(e.dev, &mp));
	EXPECT(mp.maxArgumentsSize == 1024 && mp.spirvVersionSupported == ZE_MAKE_VERSION(1, 2), "module properties");
	EXPECT(mp.fp32flags & ZE_DEVICE_FP_FLAG_FMA, "fp32 flags %#x", mp.fp32flags);

	n = 0;
	CHECK(zeDeviceGetCommandQueueGroupProperties(e.dev, &n, NULL));
	EXPECT(n == 1, "%u queue groups", n);
	ze_command_queue_group_properties_t qg = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
	CHECK(zeDeviceGetCommandQueueGroupProperties(e.dev, &n, &qg));
	EXPECT((qg.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) && qg.numQueues >= 1 &&
		       qg.maxMemoryFillPatternSize >= 4,
	       "queue group flags %#x", qg.flags);

	n = 0;
	CHECK(zeDeviceGetMemoryProperties(e.dev, &n, NULL));
	EXPECT(n == 1, "%u memories", n);
	ze_device_memory_properties_t mem = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
	CHECK(zeDeviceGetMemoryProperties(e.dev, &n, &mem));
	EXPECT(mem.totalSize > 0 && mem.totalSize >= p.maxMemAllocSize, "memory %llu",
	       (unsigned long long)mem.totalSize);
	/* The preset's physical memory less the KMD's reserved first 64 KiB. */
	if (argc == 3)
		EXPECT(mem.totalSize == (strtoull(argv[2], NULL, 0) << 20) - (64u << 10), "memory %llu, expected %s MiB",
		       (unsigned long long)mem.totalSize, argv[2]);
	EXPECT(mem.maxBusWidth == 128, "maxBusWidth %u", mem.maxBusWidth); /* driver/README.md "Properties" */
	ze_device_memory_access_properties_t ma = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES};
	CHECK(zeDeviceGetMemoryAccessProperties(e.dev, &ma));
	EXPECT((ma.hostAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC) &&
		       (ma.deviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW),
	       "memory access");
	ze_device_image_properties_t ip = {.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES};
	CHECK(zeDeviceGetImageProperties(e.dev, &ip));
	EXPECT(ip.maxImageDims2D == 0, "images are not supported");
	ze_bool_t peer = 0;
	CHECK(zeDeviceCanAccessPeer(e.dev, e.dev, &peer));
	EXPECT(peer, "a device reaches itself");
	CHECK(zeDeviceGetStatus(e.dev));
	CHECK(zeContextGetStatus(e.ctx));

	/* Host clock: CLOCK_MONOTONIC_RAW; device clock: monotonic. */
	uint64_t h0 = now_raw(), host1, dev1, host2, dev2;
	CHECK(zeDeviceGetGlobalTimestamps(e.dev, &host1, &dev1));
	CHECK(zeDeviceGetGlobalTimestamps(e.dev, &host2, &dev2));
	uint64_t h1 = now_raw();
	EXPECT(h0 <= host1 && host1 <= host2 && host2 <= h1, "host timestamps %llu %llu outside [%llu, %llu]",
	       (unsigned long long)host1, (unsigned long long)host2, (unsigned long long)h0, (unsigned long long)h1);
	EXPECT(dev1 <= dev2, "device timestamps go back: %llu %llu", (unsigned long long)dev1,
	       (unsigned long long)dev2);

	/* The same UUID in another process. */
	char cmd[4096], other[64] = "";
	snprintf(cmd, sizeof(cmd), "'%s' --uuid", argv[0]);
	FILE *f = popen(cmd, "r");
	EXPECT(f && fgets(other, sizeof(other), f), "running %s", cmd);
	pclose(f);
	other[strcspn(other, "\n")] = '\0';
	EXPECT(strcmp(other, uuid) == 0, "UUID %s here, %s in another process", uuid, other);

	e2e_fini(&e);
	note("properties: %s, %ux%ux%ux%u, uuid %s", p.name, s, ss, eu, th, uuid);
	return 0;
}
