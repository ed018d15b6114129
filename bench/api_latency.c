/* bench/api_latency: host-time costs of the fake-KMD path, in one run
 * (under the preload library, with ZESIM_SOCKET naming a daemon):
 *   1. a bare unix-socket round trip to the daemon (HELLO request)
 *   2. an ioctl through the shim (GEM_MMAP_OFFSET: marshal, daemon, KMD, reply)
 *   3. submit-to-completion of an empty kernel (EXEC + WAIT_USER_FENCE)
 * Usage: api_latency EMPTY_KERNEL.elf [ITERATIONS] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_drm.h"
#include "uapi/zesim_wire.h"
#include "zs/gpu_cmds.h"
#include "zs/ze_module.h"

#include "bench_stats.h"

static void die(const char *what)
{
	fprintf(stderr, "api_latency: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int drm;

static uint64_t bo(uint32_t vm, uint64_t size, uint64_t va, void **map)
{
	struct drm_zesim_gem_create c = {.size = size, .placement = 1};
	if (ioctl(drm, DRM_IOCTL_ZESIM_GEM_CREATE, &c))
		die("GEM_CREATE");
	struct drm_zesim_gem_mmap_offset m = {.handle = c.handle};
	if (ioctl(drm, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &m))
		die("GEM_MMAP_OFFSET");
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, drm, (off_t)m.offset);
	if (*map == MAP_FAILED)
		die("mmap");
	struct drm_zesim_vm_bind b = {.vm_id = vm, .num_binds = 1};
	b.bind.obj = c.handle;
	b.bind.range = size;
	b.bind.addr = va;
	if (ioctl(drm, DRM_IOCTL_ZESIM_VM_BIND, &b))
		die("VM_BIND");
	return c.handle;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: api_latency EMPTY_KERNEL.elf [ITERATIONS]\n");
		return 2;
	}
	const int n = argc > 2 ? atoi(argv[2]) : 2000;
	const char *path = getenv("ZESIM_SOCKET");
	if (!path)
		die("ZESIM_SOCKET is not set");

	/* 1 and 2 interleaved, so both see the same machine; medians resist the
	 * scheduler's noise (a cross-CPU wake-up in a VM can cost tens of us). */
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
	if (connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	drm = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	if (drm < 0)
		die("open the render node");
	struct drm_zesim_vm_create vc = {0};
	if (ioctl(drm, DRM_IOCTL_ZESIM_VM_CREATE, &vc))
		die("VM_CREATE");
	void *fence_map, *text_map, *batch_map;
	uint32_t fence = (uint32_t)bo(vc.vm_id, 4096, 0x100000, &fence_map);
	double *bare = calloc((size_t)n, sizeof(double)), *shim = calloc((size_t)n, sizeof(double));
	uint32_t hello[3] = {ZESIM_WIRE_MAGIC, ZESIM_WIRE_HELLO, 0}, reply[64];
	for (int i = 0; i < n; i++) {
		double t0 = bench_now_us();
		if (send(s, hello, sizeof(hello), 0) != sizeof(hello))
			die("send");
		uint32_t h[3];
		if (recv(s, h, sizeof(h), MSG_WAITALL) != sizeof(h) || h[2] > sizeof(reply) ||
		    recv(s, reply, h[2], MSG_WAITALL) != (ssize_t)h[2])
			die("recv");
		double t1 = bench_now_us();
		struct drm_zesim_gem_mmap_offset mo = {.handle = fence};
		if (ioctl(drm, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo))
			die("GEM_MMAP_OFFSET");
		double t2 = bench_now_us();
		bare[i] = t1 - t0;
		shim[i] = t2 - t1;
	}
	close(s);

	/* 3. empty kernel: submit to completion */
	zm_module_t m;
	char err[256];
	if (zm_module_read_file(argv[1], &m, err, sizeof(err))) {
		fprintf(stderr, "api_latency: %s\n", err);
		return 1;
	}
	bo(vc.vm_id, 4096, 0x200000, &text_map);
	memcpy(text_map, m.kernels[0].text, m.kernels[0].text_size);
	bo(vc.vm_id, 4096, 0x300000, &batch_map);
	const uint32_t cmd[] = {ZS_CMD_HEADER(ZS_CMD_COMPUTE_WALKER, ZS_CMD_LEN_COMPUTE_WALKER), 0x200000, 0,
				m.kernels[0].simd, m.kernels[0].grf, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
				ZS_CMD_HEADER(ZS_CMD_BATCH_END, 1)};
	memcpy(batch_map, cmd, sizeof(cmd));
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vc.vm_id,
						  .instances = (uintptr_t)&eci};
	if (ioctl(drm, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc))
		die("EXEC_QUEUE_CREATE");
	const int kernels = n / 4 > 0 ? n / 4 : 1;
	double *kern = calloc((size_t)kernels, sizeof(double));
	for (int i = 1; i <= kernels; i++) {
		double t0 = bench_now_us();
		struct drm_zesim_sync sync = {.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
					      .addr = 0x100000, .timeline_value = (uint64_t)i};
		struct drm_zesim_exec ex = {.exec_queue_id = qc.exec_queue_id, .num_syncs = 1,
					    .syncs = (uintptr_t)&sync, .address = 0x300000, .num_batch_buffer = 1};
		if (ioctl(drm, DRM_IOCTL_ZESIM_EXEC, &ex))
			die("EXEC");
		struct drm_zesim_wait_user_fence w = {.addr = 0x100000, .op = ZESIM_UFENCE_OP_GTE,
						      .value = (uint64_t)i, .mask = ~0ull, .timeout = 10000000000ll,
						      .exec_queue_id = qc.exec_queue_id};
		if (ioctl(drm, DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w))
			die("WAIT_USER_FENCE");
		kern[i - 1] = bench_now_us() - t0;
	}
	const double mb = bench_median(bare, n), ms = bench_median(shim, n), mk = bench_median(kern, kernels);
	printf("api_latency (%d round trips, %d empty kernels; host time, medians)\n", n, kernels);
	printf("  bare unix-socket round trip   %8.2f us\n", mb);
	printf("  ioctl through the shim        %8.2f us   ratio %.2fx (goal <= 1.5x)\n", ms, ms / mb);
	printf("  empty kernel, submit to done  %8.2f us   (goal <= 50 us)\n", mk);
	free(bare);
	free(shim);
	free(kern);
	zm_module_free(&m);
	close(drm);
	return 0;
}
