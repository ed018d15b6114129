/* A raw-ioctl client of the fake KMD, run under the preload library:
 *   kmd_client vadd MODULE.elf GROUPS   vector add through GEM/VM/exec/user fence, checked
 *   kmd_client spin MODULE.elf          submit a kernel that never ends, then wait forever
 *   kmd_client probe                    stat, /dev/dri listing, sysfs, version, queries
 *   kmd_client fuzz SEED COUNT          random ioctls with random and bad pointers through the shim
 *   kmd_client isolation                reach for objects of other clients: every attempt must fail
 *   kmd_client preempt                  a batch waiting on a semaphore that a later batch (another
 *                                       queue) releases: both must complete
 *   kmd_client latency MODULE.elf N     N launches of a one-group vector add, each submit to
 *                                       completion timed; prints the median (us) and checks results
 *   kmd_client hog gem|vm|queue [SIZE]  create objects until the KMD refuses; print how many and
 *                                       the errno, then hold them until standard input ends
 *   kmd_client oa MODULE.elf GROUPS EXP BUFSIZE OUT [FIRST]
 *                                       an OA stream (docs/uapi.md "Observation"): add a metric set,
 *                                       open a periodic stream (exponent EXP, BUFSIZE bytes), run the
 *                                       vector add of GROUPS groups, read FIRST reports (default 10)
 *                                       with blocking reads while it runs, disable (final report),
 *                                       then read every report (non-blocking; -EIO: STATUS, go on);
 *                                       all the reports into OUT
 *   kmd_client oa-query MODULE.elf GROUPS OUT
 *                                       a query-mode stream (no SAMPLE_OA, the exec queue): the batch
 *                                       takes REPORT_PERF_COUNT query reports (ids 0x1000, 0x1001)
 *                                       before and after the vector add; both into OUT
 *   kmd_client oa-hold                  open a stream and hold it until standard input ends
 *   kmd_client oa-open                  open a stream, print the errno (or "opened"), close it
 * Prints one line per step; exits non-zero with a message on any failure. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_drm.h"
#include "zs/gpu_cmds.h"
#include "zs/hw_if.h"
#include "zs/oa_report.h"
#include "zs/ze_module.h"

static int fd;

static void die(const char *what)
{
	fprintf(stderr, "kmd_client: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void xioctl(unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg) != 0)
		die(what);
}

typedef struct bo {
	uint32_t handle;
	uint64_t size, va;
	uint8_t *map;
} bo_t;

static bo_t new_bo(uint32_t vm, uint64_t size, uint64_t va)
{
	bo_t b = {0, (size + 4095) & ~4095ull, va, NULL};
	struct drm_zesim_gem_create c = {.size = b.size, .placement = 1};
	xioctl(DRM_IOCTL_ZESIM_GEM_CREATE, &c, "GEM_CREATE");
	b.handle = c.handle;
	struct drm_zesim_gem_mmap_offset m = {.handle = b.handle};
	xioctl(DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &m, "GEM_MMAP_OFFSET");
	b.map = mmap(NULL, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
	if (b.map == MAP_FAILED)
		die("mmap");
	struct drm_zesim_vm_bind bind = {.vm_id = vm, .num_binds = 1};
	bind.bind.obj = b.handle;
	bind.bind.range = b.size;
	bind.bind.addr = va;
	bind.bind.op = ZESIM_VM_BIND_OP_MAP;
	xioctl(DRM_IOCTL_ZESIM_VM_BIND, &bind, "VM_BIND");
	return b;
}

static void probe(void)
{
	struct stat st;
	if (stat(ZESIM_RENDER_NODE, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != ZESIM_DRM_MAJOR)
		die("stat of the render node");
	DIR *d = opendir("/dev/dri");
	if (!d)
		die("opendir /dev/dri");
	int found = 0;
	for (struct dirent *e; (e = readdir(d));)
		found |= strcmp(e->d_name, "renderD128") == 0;
	closedir(d);
	if (!found)
		die("renderD128 not listed in /dev/dri");
	FILE *f = fopen("/sys/class/drm/renderD128/device/vendor", "r");
	char vendor[32] = "";
	if (!f || !fgets(vendor, sizeof(vendor), f))
		die("sysfs vendor");
	fclose(f);
	if (fstat(fd, &st) || minor(st.st_rdev) != ZESIM_DRM_MINOR)
		die("fstat of the device fd");
	char name[16] = "";
	struct drm_zesim_version v = {.name = name, .name_len = sizeof(name) - 1};
	xioctl(DRM_IOCTL_ZESIM_VERSION, &v, "VERSION");
	struct drm_zesim_device_query q = {.query = ZESIM_QUERY_GT_LIST};
	xioctl(DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, "DEVICE_QUERY size");
	struct drm_zesim_query_gt_list *gl = calloc(1, q.size);
	q.data = (uintptr_t)gl;
	xioctl(DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, "DEVICE_QUERY GT_LIST");
	int bad = ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, (void *)16) == 0 || errno != EFAULT;
	printf("probe: driver %s, vendor %s", name, vendor);
	printf("probe: timestamp %u Hz, core %llu Hz, bad pointer gives %s\n", gl->gt_list[0].reference_clock,
	       (unsigned long long)gl->gt_list[0].core_clock, bad ? "something else" : "EFAULT");
	free(gl);
	if (bad)
		exit(1);
}

/* Random commands and arguments, including pointers the shim must refuse
 * with EFAULT; the call must fail cleanly or succeed, never crash. */
static int fuzz(unsigned seed, long count)
{
	srand(seed);
	static const unsigned long cmds[] = {
		DRM_IOCTL_ZESIM_VERSION, DRM_IOCTL_ZESIM_DEVICE_QUERY, DRM_IOCTL_ZESIM_GEM_CREATE,
		DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, DRM_IOCTL_ZESIM_GEM_CLOSE, DRM_IOCTL_ZESIM_VM_CREATE,
		DRM_IOCTL_ZESIM_VM_DESTROY, DRM_IOCTL_ZESIM_VM_BIND, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE,
		DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, DRM_IOCTL_ZESIM_EXEC, DRM_IOCTL_ZESIM_WAIT_USER_FENCE,
		DRM_IOCTL_ZESIM_OBSERVATION};
	static uint64_t arg[512];
	long ok = 0, failed = 0;
	for (long i = 0; i < count; i++) {
		unsigned long cmd = rand() % 8 ? cmds[rand() % 13] : ((unsigned long)rand() << 16 | (unsigned)rand());
		for (unsigned w = 0; w < 16; w++) {
			const uint64_t choices[] = {0, 1, (uint64_t)rand() % 8, 16, 4096, (uintptr_t)arg, ~0ull,
						    (uint64_t)rand() << 32 | (unsigned)rand()};
			arg[w] = choices[rand() % 8];
		}
		if (cmd == DRM_IOCTL_ZESIM_OBSERVATION && rand() % 2) {
			/* a plausible head: type OA, an op, param into arg (a chain that may loop
			 * through arg itself, a config whose regs_ptr is garbage, an id) */
			arg[0] = arg[1] = 0;
			arg[2] = (uint64_t)(rand() % 3);
			arg[3] = (uintptr_t)&arg[4 + rand() % 4];
		}
		void *p = rand() % 8 == 0 ? (void *)(uintptr_t)(rand() % 3 ? 16 : 0xdead0000) : (void *)arg;
		const uint64_t op = arg[2];
		int rc = ioctl(fd, cmd, p);
		if (rc > 0 && cmd == DRM_IOCTL_ZESIM_OBSERVATION && p == (void *)arg &&
		    op == ZESIM_OBSERVATION_OP_STREAM_OPEN)
			close(rc); /* an OA stream */
		if (rc >= 0) {
			ok++;
			continue;
		}
		failed++;
		if (errno != EINVAL && errno != ENOENT && errno != EFAULT && errno != ENOTTY && errno != ENOMEM &&
		    errno != EEXIST && errno != ECANCELED && errno != ETIME && errno != ENOSPC &&
		    errno != EMFILE && errno != E2BIG && errno != EADDRINUSE && errno != EBUSY && errno != ENODEV) {
			fprintf(stderr, "kmd_client: ioctl 0x%lx gave errno %d (%s)\n", cmd, errno, strerror(errno));
			return 1;
		}
	}
	printf("fuzz: %ld ioctls succeeded, %ld failed with a valid errno\n", ok, failed);
	return 0;
}

/* A new client owns nothing: handles and mmap offsets of other clients
 * (which start at the same numbers) must not reach their objects. */
static int isolation(void)
{
	struct drm_zesim_gem_mmap_offset mo = {.handle = 1};
	int e1 = ioctl(fd, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo) == 0 ? 0 : errno;
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 1ll << 32);
	int e2 = p == MAP_FAILED ? errno : 0;
	struct drm_zesim_vm_create vc = {0};
	if (ioctl(fd, DRM_IOCTL_ZESIM_VM_CREATE, &vc))
		die("VM_CREATE");
	struct drm_zesim_vm_bind b = {.vm_id = vc.vm_id, .num_binds = 1};
	b.bind.obj = 1;
	b.bind.range = 4096;
	b.bind.addr = 0x100000;
	int e3 = ioctl(fd, DRM_IOCTL_ZESIM_VM_BIND, &b) == 0 ? 0 : errno;
	struct drm_zesim_gem_close c = {.handle = 1};
	int e4 = ioctl(fd, DRM_IOCTL_ZESIM_GEM_CLOSE, &c) == 0 ? 0 : errno;
	printf("isolation: mmap-offset %s, mmap %s, bind %s, close %s\n", strerror(e1), strerror(e2), strerror(e3),
	       strerror(e4));
	return e1 == ENOENT && e2 == EINVAL && e3 == ENOENT && e4 == ENOENT ? 0 : 1;
}

static uint32_t make_queue(uint32_t vm)
{
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vm,
						  .instances = (uintptr_t)&eci};
	xioctl(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, "EXEC_QUEUE_CREATE");
	return qc.exec_queue_id;
}

static void exec_with_fence(uint32_t q, uint64_t batch, uint64_t fence, uint64_t value)
{
	struct drm_zesim_sync sync = {.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
				      .addr = fence, .timeline_value = value};
	struct drm_zesim_exec ex = {.exec_queue_id = q, .num_syncs = 1, .syncs = (uintptr_t)&sync, .address = batch,
				    .num_batch_buffer = 1};
	xioctl(DRM_IOCTL_ZESIM_EXEC, &ex, "EXEC");
}

static void wait_fence(uint32_t q, uint64_t fence, uint64_t value)
{
	struct drm_zesim_wait_user_fence w = {.addr = fence, .op = ZESIM_UFENCE_OP_EQ, .value = value, .mask = ~0ull,
					      .timeout = 20000000000ll, .exec_queue_id = q};
	xioctl(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w, "WAIT_USER_FENCE");
}

/* Queue 1's batch waits for a flag that queue 2's batch, submitted later,
 * sets: the KMD must park the first at its SEMAPHORE_WAIT to run the second. */
static int preempt(void)
{
	struct drm_zesim_vm_create vc = {0};
	xioctl(DRM_IOCTL_ZESIM_VM_CREATE, &vc, "VM_CREATE");
	const uint32_t q1 = make_queue(vc.vm_id), q2 = make_queue(vc.vm_id);
	bo_t flags = new_bo(vc.vm_id, 4096, 0x100000), b1 = new_bo(vc.vm_id, 4096, 0x200000),
	     b2 = new_bo(vc.vm_id, 4096, 0x300000);
	const uint32_t waiter[] = {ZS_CMD_HEADER(ZS_CMD_SEMAPHORE_WAIT, 5), 0x100000, 0, 1, 0,
				   ZS_CMD_HEADER(ZS_CMD_STORE_DATA, 4), 0x100008, 0, 7,
				   ZS_CMD_HEADER(ZS_CMD_BATCH_END, 1)};
	const uint32_t releaser[] = {ZS_CMD_HEADER(ZS_CMD_STORE_DATA, 4), 0x100000, 0, 1,
				     ZS_CMD_HEADER(ZS_CMD_BATCH_END, 1)};
	memcpy(b1.map, waiter, sizeof(waiter));
	memcpy(b2.map, releaser, sizeof(releaser));
	exec_with_fence(q1, b1.va, 0x100010, 1);
	exec_with_fence(q2, b2.va, 0x100018, 2);
	wait_fence(q2, 0x100018, 2);
	wait_fence(q1, 0x100010, 1);
	uint32_t after;
	memcpy(&after, flags.map + 8, 4);
	printf("preempt: both batches completed, the waiter wrote %u after its semaphore\n", after);
	return after == 7 ? 0 : 1;
}

/* Create objects of one kind until the KMD refuses (docs/kmd.md §3 limits). */
static int hog(const char *kind, uint64_t size)
{
	struct drm_zesim_vm_create vc = {0};
	xioctl(DRM_IOCTL_ZESIM_VM_CREATE, &vc, "VM_CREATE");
	long n = 0;
	uint64_t bytes = 0;
	int err = 0;
	for (;;) {
		int rc;
		if (strcmp(kind, "gem") == 0) {
			struct drm_zesim_gem_create c = {.size = size, .placement = 1};
			rc = ioctl(fd, DRM_IOCTL_ZESIM_GEM_CREATE, &c);
		} else if (strcmp(kind, "vm") == 0) {
			struct drm_zesim_vm_create v = {0};
			rc = ioctl(fd, DRM_IOCTL_ZESIM_VM_CREATE, &v);
		} else {
			struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
			struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vc.vm_id,
								  .instances = (uintptr_t)&eci};
			rc = ioctl(fd, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc);
		}
		if (rc) {
			err = errno;
			break;
		}
		n++;
		bytes += strcmp(kind, "gem") == 0 ? size : 0;
		if (n > 10000000)
			break;
	}
	printf("hog: %ld %s objects (%llu bytes of GEM), then %s (%s)\n", n, kind, (unsigned long long)bytes,
	       err == EMFILE ? "EMFILE" : err == ENOSPC ? "ENOSPC" : err == ENOMEM ? "ENOMEM" : "other", strerror(err));
	fflush(stdout);
	char buf[64];
	while (fread(buf, 1, sizeof(buf), stdin) > 0) {
	}
	return 0;
}

/* OA: a metric set (B0 = GPU_BUSY, B1 = LANE_OPS, C0 = EU active cycles of sub-slice 0,
 * C1 = EU stall of every sub-slice), once per daemon; then a periodic sampling stream. */
static int oa_open(uint32_t exponent, uint64_t bufsize, uint32_t query_queue)
{
	static const uint32_t regs[4][2] = {{ZS_REG_OA_BC_SEL0, 0},
					    {ZS_REG_OA_BC_SEL1, 13},
					    {ZS_REG_OA_BC_SEL8, 32 | 0x1u << 16},
					    {ZS_REG_OA_BC_SEL9, 33 | 0xffffu << 16}};
	struct drm_zesim_oa_config c = {.n_regs = 4, .regs_ptr = (uintptr_t)regs};
	memcpy(c.uuid, "5a45534d-0000-4000-8000-0000000000a1", 36);
	struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG,
						.param = (uintptr_t)&c};
	int id = ioctl(fd, DRM_IOCTL_ZESIM_OBSERVATION, &p);
	if (id < 0 && errno == EADDRINUSE)
		id = 1; /* added by an earlier client of this daemon: the first id */
	if (id < 0)
		die("OBSERVATION ADD_CONFIG");
	struct drm_zesim_ext_set_property props[6] = {
		{.property = ZESIM_OA_PROPERTY_SAMPLE_OA, .value = 1},
		{.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = (uint64_t)id},
		{.property = ZESIM_OA_PROPERTY_OA_FORMAT, .value = ZS_OA_FORMAT_A32u40_A4u32_B8_C8},
		{.property = ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, .value = exponent},
		{.property = ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, .value = bufsize},
		{.property = ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS, .value = 1}};
	if (query_queue) { /* query mode: the queue instead of sampling */
		props[0] = (struct drm_zesim_ext_set_property){.property = ZESIM_OA_PROPERTY_EXEC_QUEUE_ID,
								.value = query_queue};
		props[2] = props[3] = props[4] = props[5] = props[0];
	}
	for (int i = 0; i < 5; i++)
		props[i].base.next_extension = (uintptr_t)&props[i + 1];
	p = (struct drm_zesim_observation_param){.observation_op = ZESIM_OBSERVATION_OP_STREAM_OPEN,
						 .param = (uintptr_t)props};
	return ioctl(fd, DRM_IOCTL_ZESIM_OBSERVATION, &p);
}

/* Every report of the stream into `f`; prints what happened on the way. */
static int oa_drain(int s, FILE *f)
{
	if (fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK))
		die("fcntl O_NONBLOCK");
	struct pollfd pf = {.fd = s, .events = POLLIN};
	printf("oa: poll says %s\n", poll(&pf, 1, 2000) == 1 && (pf.revents & POLLIN) ? "readable" : "not readable");
	static uint8_t buf[64 * ZS_OA_REPORT_BYTES];
	long reports = 0, eio = 0;
	uint64_t lost = 0;
	for (;;) {
		ssize_t r = read(s, buf, sizeof(buf));
		if (r < 0 && errno == EIO) {
			eio++;
			struct drm_zesim_oa_stream_status st = {0};
			if (ioctl(s, ZESIM_OBSERVATION_IOCTL_STATUS, &st))
				die("STATUS");
			lost |= st.oa_status;
			printf("oa: read -EIO after %ld reports, STATUS %#llx\n", reports, (unsigned long long)st.oa_status);
			continue;
		}
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0 || r % ZS_OA_REPORT_BYTES)
			die("read of the OA stream");
		fwrite(buf, 1, (size_t)r, f);
		reports += r / ZS_OA_REPORT_BYTES;
		if (reports > 1000000) {
			fprintf(stderr, "kmd_client: the OA stream never runs dry (OA_HEAD not moving?)\n");
			exit(1);
		}
	}
	fclose(f);
	char small[100];
	printf("oa: short read %s\n", read(s, small, sizeof(small)) < 0 && errno == ENOSPC ? "ENOSPC" : "other");
	printf("oa: %ld reports, %ld EIO, status %#llx\n", reports, eio, (unsigned long long)lost);
	return 0;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: kmd_client vadd|spin|probe [MODULE [GROUPS]]\n");
		return 2;
	}
	fd = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open " ZESIM_RENDER_NODE);
	if (strcmp(argv[1], "probe") == 0) {
		probe();
		return 0;
	}
	if (strcmp(argv[1], "isolation") == 0)
		return isolation();
	if (strcmp(argv[1], "preempt") == 0)
		return preempt();
	if (strcmp(argv[1], "fuzz") == 0 && argc > 3)
		return fuzz((unsigned)atoi(argv[2]), atol(argv[3]));
	if (strcmp(argv[1], "hog") == 0 && argc > 2)
		return hog(argv[2], argc > 3 ? strtoull(argv[3], NULL, 0) : 4096);
	if (strcmp(argv[1], "oa-hold") == 0 || strcmp(argv[1], "oa-open") == 0) {
		const int s = oa_open(10, 128u << 10, 0);
		printf("oa: %s\n", s >= 0 ? "opened" : errno == EBUSY ? "EBUSY" : strerror(errno));
		fflush(stdout);
		char buf[64];
		while (s >= 0 && argv[1][3] == 'h' && fread(buf, 1, sizeof(buf), stdin) > 0) {
		}
		return s >= 0 ? 0 : 1;
	}
	const int oa = strcmp(argv[1], "oa") == 0, oa_query = strcmp(argv[1], "oa-query") == 0;
	if ((oa && argc < 7) || (oa_query && argc < 5))
		return 2;
	if (argc < 3)
		return 2;
	const int spin = strcmp(argv[1], "spin") == 0, latency = strcmp(argv[1], "latency") == 0;
	const int launches = latency && argc > 3 ? atoi(argv[3]) : 1;
	const uint32_t groups = latency ? 1 : argc > 3 ? (uint32_t)atoi(argv[3]) : 4, n = groups * 16;
	zm_module_t m;
	char err[512];
	if (zm_module_read_file(argv[2], &m, err, sizeof(err))) {
		fprintf(stderr, "kmd_client: %s\n", err);
		return 1;
	}
	const zm_kernel_t *k = &m.kernels[0];

	struct drm_zesim_vm_create vc = {0};
	xioctl(DRM_IOCTL_ZESIM_VM_CREATE, &vc, "VM_CREATE");
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vc.vm_id,
						  .instances = (uintptr_t)&eci};
	xioctl(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, "EXEC_QUEUE_CREATE");

	bo_t text = new_bo(vc.vm_id, k->text_size, 0x100000);
	memcpy(text.map, k->text, k->text_size);
	bo_t a = new_bo(vc.vm_id, 4ull * n, 0x200000), b = new_bo(vc.vm_id, 4ull * n, 0x300000);
	bo_t c = new_bo(vc.vm_id, 4ull * n, 0x400000), args = new_bo(vc.vm_id, 4096, 0x500000);
	bo_t batch = new_bo(vc.vm_id, 4096, 0x600000), fence = new_bo(vc.vm_id, 4096, 0x700000);
	for (uint32_t i = 0; i < n; i++) {
		float x = (float)i * 0.5f, y = 3.0f - (float)i;
		memcpy(a.map + 4 * i, &x, 4);
		memcpy(b.map + 4 * i, &y, 4);
	}
	uint64_t ptrs[3] = {a.va, b.va, c.va};
	memcpy(args.map, ptrs, sizeof(ptrs));
	uint32_t cmd[] = {ZS_CMD_HEADER(ZS_CMD_COMPUTE_WALKER, ZS_CMD_LEN_COMPUTE_WALKER),
			  (uint32_t)text.va, (uint32_t)(text.va >> 32), k->simd, k->grf, k->slm, 16, 1, 1, groups, 1, 1,
			  (uint32_t)args.va, 0, k->arg_bytes, 0,
			  ZS_CMD_HEADER(ZS_CMD_BATCH_END, 1)};
	memcpy(batch.map, cmd, sizeof(cmd));
	bo_t query = {0};
	int stream = -1;
	if (oa_query) {
		/* REPORT_PERF_COUNT, the walker, REPORT_PERF_COUNT, BATCH_END */
		query = new_bo(vc.vm_id, 4096, 0x800000);
		const uint32_t rpc0[] = {ZS_CMD_HEADER(ZS_CMD_REPORT_PERF_COUNT, ZS_CMD_LEN_REPORT_PERF_COUNT),
					 (uint32_t)query.va, 0, 0x1000};
		const uint32_t rpc1[] = {ZS_CMD_HEADER(ZS_CMD_REPORT_PERF_COUNT, ZS_CMD_LEN_REPORT_PERF_COUNT),
					 (uint32_t)query.va + 256, 0, 0x1001};
		uint8_t *p = batch.map;
		memcpy(p, rpc0, sizeof(rpc0));
		memcpy(p + sizeof(rpc0), cmd, sizeof(cmd) - 4);
		memcpy(p + sizeof(rpc0) + sizeof(cmd) - 4, rpc1, sizeof(rpc1));
		memcpy(p + sizeof(rpc0) + sizeof(cmd) - 4 + sizeof(rpc1), &cmd[sizeof(cmd) / 4 - 1], 4);
		stream = oa_open(0, 0, qc.exec_queue_id);
		if (stream < 0)
			die("OBSERVATION STREAM_OPEN (query mode)");
		struct drm_zesim_oa_stream_info info = {0};
		char rb[256];
		printf("oa-query: stream open, INFO buffer %llu, read %s\n",
		       ioctl(stream, ZESIM_OBSERVATION_IOCTL_INFO, &info) ? ~0ull : (unsigned long long)info.oa_buf_size,
		       read(stream, rb, sizeof(rb)) < 0 && errno == EINVAL ? "EINVAL" : "other");
	}
	struct drm_zesim_sync sync = {.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
				      .addr = fence.va, .timeline_value = 0x1234};
	struct drm_zesim_exec ex = {.exec_queue_id = qc.exec_queue_id, .num_syncs = 1, .syncs = (uintptr_t)&sync,
				    .address = batch.va, .num_batch_buffer = 1};
	if (latency) {
		/* Each launch: EXEC with a new fence value, WAIT for it; host time of the pair. */
		double *t = calloc((size_t)launches, sizeof(double));
		if (!t || launches < 1)
			return 2;
		for (int i = 0; i < launches; i++) {
			sync.timeline_value = 0x1000 + (uint64_t)i;
			struct drm_zesim_wait_user_fence lw = {.addr = fence.va, .op = ZESIM_UFENCE_OP_EQ,
							       .value = sync.timeline_value, .mask = ~0ull,
							       .timeout = 60000000000ll,
							       .exec_queue_id = qc.exec_queue_id};
			const double t0 = now_us();
			xioctl(DRM_IOCTL_ZESIM_EXEC, &ex, "EXEC");
			xioctl(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &lw, "WAIT_USER_FENCE");
			t[i] = now_us() - t0;
		}
		qsort(t, (size_t)launches, sizeof(double), cmp_double);
		printf("latency: %d launches, median %.1f us, max %.1f us\n", launches, t[launches / 2],
		       t[launches - 1]);
		free(t);
		sync.timeline_value = 0x1234;
	}
	if (oa) {
		struct drm_zesim_device_query q = {.query = ZESIM_QUERY_GT_LIST};
		uint8_t gt[256];
		xioctl(DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, "GT_LIST size");
		q.data = (uintptr_t)gt;
		xioctl(DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, "GT_LIST");
		const struct drm_zesim_gt *g = &((struct drm_zesim_query_gt_list *)gt)->gt_list[0];
		printf("oa: core %llu Hz, timestamp %u Hz\n", (unsigned long long)g->core_clock, g->reference_clock);
		stream = oa_open((uint32_t)atoi(argv[4]), strtoull(argv[5], NULL, 0), 0);
		if (stream < 0)
			die("OBSERVATION STREAM_OPEN");
		struct drm_zesim_oa_stream_info info = {0};
		if (ioctl(stream, ZESIM_OBSERVATION_IOCTL_INFO, &info))
			die("INFO");
		printf("oa: stream open, buffer %llu bytes\n", (unsigned long long)info.oa_buf_size);
	}
	if (getenv("KMD_CLIENT_GO_ON_STDIN")) {
		/* A debugger attaches first (tests/kmd/test_debug.py): say so, wait for a line. */
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		char go[16];
		if (!fgets(go, sizeof(go), stdin))
			die("no go on standard input");
	}
	xioctl(DRM_IOCTL_ZESIM_EXEC, &ex, "EXEC");
	printf("%s: submitted %u work items\n", argv[1], n);
	FILE *oa_out = NULL;
	if (oa) {
		/* Blocking reads while the kernel runs, until 10 reports came: the reader soon
		 * catches up with the simulation and waits; the OA-buffer interrupt wakes it. */
		oa_out = fopen(argv[6], "wb");
		if (!oa_out)
			die(argv[6]);
		static uint8_t first[64 * ZS_OA_REPORT_BYTES];
		const size_t want = (argc > 7 ? (size_t)atoi(argv[7]) : 10) * ZS_OA_REPORT_BYTES;
		size_t got = 0;
		int reads = 0;
		while (got < want && want <= sizeof(first)) {
			const ssize_t r = read(stream, first + got, want - got);
			if (r <= 0 || r % ZS_OA_REPORT_BYTES)
				die("blocking read of the OA stream");
			got += (size_t)r;
			reads++;
		}
		fwrite(first, 1, got, oa_out);
		printf("oa: blocking reads: %zu reports in %d reads\n", got / ZS_OA_REPORT_BYTES, reads);
	}
	fflush(stdout);
	struct drm_zesim_wait_user_fence w = {.addr = fence.va, .op = ZESIM_UFENCE_OP_EQ, .value = 0x1234,
					      .mask = ~0ull, .timeout = spin ? -1 : 60000000000ll,
					      .exec_queue_id = qc.exec_queue_id};
	xioctl(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w, "WAIT_USER_FENCE");
	uint64_t fv;
	memcpy(&fv, fence.map, 8);
	for (uint32_t i = 0; i < n; i++) {
		float x, y, z;
		memcpy(&x, a.map + 4 * i, 4);
		memcpy(&y, b.map + 4 * i, 4);
		memcpy(&z, c.map + 4 * i, 4);
		if (z != x + y) {
			fprintf(stderr, "kmd_client: c[%u] = %g, expected %g\n", i, (double)z, (double)(x + y));
			return 1;
		}
	}
	printf("%s: %u results correct, fence 0x%llx\n", argv[1], n, (unsigned long long)fv);
	if (oa_query) {
		FILE *f = fopen(argv[4], "wb");
		if (!f || fwrite(query.map, 1, 512, f) != 512)
			die(argv[4]);
		fclose(f);
		close(stream);
	}
	if (oa) {
		if (ioctl(stream, ZESIM_OBSERVATION_IOCTL_DISABLE, 0))
			die("DISABLE");
		oa_drain(stream, oa_out);
		close(stream);
	}
	zm_module_free(&m);
	close(fd);
	return 0;
}
