/* OS layer: the DRM render node, its queries, GEM objects mapped at the same
 * address on the host and in the GPU VM, exec queues, exec and user-fence
 * waits. */
#define _GNU_SOURCE
#include "zs_os.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ull
#define VA_LIMIT (1ull << 47) /* the KMD's VM covers 47 bits */
#define WAIT_SLICE_NS 10000000ull

static int xioctl(zs_os_t *os, unsigned long cmd, void *arg)
{
	atomic_fetch_add(&os->queued, 1);
	int rc;
	do
		rc = ioctl(os->fd, cmd, arg);
	while (rc == -1 && (errno == EINTR || errno == EAGAIN));
	const int err = errno;
	atomic_fetch_sub(&os->queued, 1);
	return rc == -1 ? -err : 0;
}

int zs_os_open(zs_os_t *os)
{
	memset(os, 0, sizeof(*os));
	atomic_init(&os->queued, 0);
	os->fd = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	if (os->fd < 0)
		return -errno;
	/* Make sure this really is our KMD before trusting its ioctl numbers. */
	char name[16] = "";
	struct drm_zesim_version v = {.name = name, .name_len = sizeof(name) - 1};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_VERSION, &v);
	if (!rc && strcmp(name, ZESIM_DRIVER_NAME) != 0)
		rc = -ENODEV;
	struct drm_zesim_vm_create vc = {0};
	if (!rc)
		rc = xioctl(os, DRM_IOCTL_ZESIM_VM_CREATE, &vc);
	if (!rc) {
		os->vm_id = vc.vm_id;
		rc = zs_os_queue_create(os, &os->wait_queue);
	}
	if (rc) {
		close(os->fd);
		os->fd = -1;
	}
	return rc;
}

void zs_os_close(zs_os_t *os)
{
	if (os->fd < 0)
		return;
	zs_os_queue_destroy(os, os->wait_queue);
	struct drm_zesim_vm_destroy vd = {.vm_id = os->vm_id};
	xioctl(os, DRM_IOCTL_ZESIM_VM_DESTROY, &vd);
	close(os->fd);
	os->fd = -1;
}

/* Two-step device query: size first, then the data (malloc'ed). */
static int query(zs_os_t *os, uint32_t what, void **out, uint32_t *size)
{
	struct drm_zesim_device_query q = {.query = what};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q);
	if (rc)
		return rc;
	void *d = calloc(1, q.size);
	if (!d)
		return -ENOMEM;
	q.data = (uintptr_t)d;
	rc = xioctl(os, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q);
	if (rc) {
		free(d);
		return rc;
	}
	*out = d;
	*size = q.size;
	return 0;
}

static uint32_t popcount_bytes(const uint8_t *m, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += (uint32_t)__builtin_popcount(m[i]);
	return c;
}

int zs_os_query_info(zs_os_t *os, zs_os_info_t *info)
{
	memset(info, 0, sizeof(*info));
	void *d;
	uint32_t size;
	int rc = query(os, ZESIM_QUERY_CONFIG, &d, &size);
	if (rc)
		return rc;
	const struct drm_zesim_query_config *c = d;
	if (size < sizeof(*c) || c->num_params < ZESIM_CONFIG_NUM_PARAMS ||
	    size < sizeof(*c) + c->num_params * sizeof(uint64_t)) {
		free(d);
		return -EPROTO;
	}
	info->device_id = (uint32_t)(c->info[ZESIM_CONFIG_REV_AND_DEVICE_ID] & 0xffff);
	info->revision = (uint32_t)((c->info[ZESIM_CONFIG_REV_AND_DEVICE_ID] >> 16) & 0xffff);
	info->min_alignment = c->info[ZESIM_CONFIG_MIN_ALIGNMENT];
	info->va_bits = c->info[ZESIM_CONFIG_VA_BITS];
	info->threads_per_eu = (uint32_t)c->info[ZESIM_CONFIG_THREADS_PER_EU];
	info->grf_per_thread = (uint32_t)c->info[ZESIM_CONFIG_GRF_PER_THREAD];
	info->slm_per_subslice = c->info[ZESIM_CONFIG_SLM_BYTES_PER_SUBSLICE];
	info->max_simd = (uint32_t)c->info[ZESIM_CONFIG_MAX_SIMD];
	info->vram_bytes = c->info[ZESIM_CONFIG_VRAM_BYTES];
	info->subslices_per_slice = (uint32_t)c->info[ZESIM_CONFIG_SUBSLICES_PER_SLICE];
	free(d);

	if ((rc = query(os, ZESIM_QUERY_GT_LIST, &d, &size)))
		return rc;
	const struct drm_zesim_query_gt_list *g = d;
	if (size < sizeof(*g) + sizeof(g->gt_list[0]) || g->num_gt < 1) {
		free(d);
		return -EPROTO;
	}
	info->timestamp_hz = g->gt_list[0].reference_clock;
	info->core_hz = g->gt_list[0].core_clock;
	free(d);

	if ((rc = query(os, ZESIM_QUERY_GT_TOPOLOGY, &d, &size)))
		return rc;
	/* A sequence of masks, each padded to 8 bytes. */
	for (uint32_t off = 0; off + sizeof(struct drm_zesim_query_topology_mask) <= size;) {
		const struct drm_zesim_query_topology_mask *t = (const void *)((const uint8_t *)d + off);
		const uint32_t body = sizeof(*t) + t->num_bytes;
		if (off + body > size)
			break;
		if (t->gt_id == 0 && t->type == ZESIM_TOPO_DSS_COMPUTE)
			info->num_subslices = popcount_bytes(t->mask, t->num_bytes);
		else if (t->gt_id == 0 && t->type == ZESIM_TOPO_EU_PER_DSS)
			info->eus_per_subslice = popcount_bytes(t->mask, t->num_bytes);
		off += sizeof(*t) + ((t->num_bytes + 7) & ~7u);
	}
	free(d);
	if (!info->num_subslices || !info->eus_per_subslice || !info->threads_per_eu || !info->timestamp_hz)
		return -EPROTO;
	return 0;
}

int zs_os_engine_cycles(zs_os_t *os, uint64_t *gpu_ticks, uint64_t *cpu_ns)
{
	struct drm_zesim_query_engine_cycles c = {.eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE},
						  .clockid = CLOCK_MONOTONIC_RAW};
	struct drm_zesim_device_query q = {.query = ZESIM_QUERY_ENGINE_CYCLES, .size = sizeof(c),
					   .data = (uintptr_t)&c};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q);
	if (rc)
		return rc;
	*gpu_ticks = c.width >= 64 ? c.engine_cycles : c.engine_cycles & ((1ull << c.width) - 1);
	*cpu_ns = c.cpu_timestamp;
	return 0;
}

static int vm_bind(zs_os_t *os, uint32_t op, uint32_t obj, uint64_t addr, uint64_t range)
{
	struct drm_zesim_vm_bind b = {.vm_id = os->vm_id, .num_binds = 1};
	b.bind.obj = obj;
	b.bind.range = range;
	b.bind.addr = addr;
	b.bind.op = op;
	return xioctl(os, DRM_IOCTL_ZESIM_VM_BIND, &b);
}

static void gem_close(zs_os_t *os, uint32_t handle)
{
	struct drm_zesim_gem_close c = {.handle = handle};
	xioctl(os, DRM_IOCTL_ZESIM_GEM_CLOSE, &c);
}

int zs_os_bo_create(zs_os_t *os, uint64_t size, uint64_t align, zs_bo_t *bo)
{
	memset(bo, 0, sizeof(*bo));
	if (!size || size > UINT64_MAX - 2 * PAGE)
		return -EINVAL;
	size = (size + PAGE - 1) & ~(PAGE - 1);
	if (align < PAGE)
		align = PAGE;
	struct drm_zesim_gem_create c = {.size = size, .placement = 1};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_GEM_CREATE, &c);
	if (rc)
		return rc;
	struct drm_zesim_gem_mmap_offset mo = {.handle = c.handle};
	if ((rc = xioctl(os, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo))) {
		gem_close(os, c.handle);
		return rc;
	}
	/* Reserve an aligned range of host VA, then map the object over it:
	 * the GPU VA is chosen to be the host address, so both agree. */
	uint8_t *map;
	if (align == PAGE) {
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, os->fd, (off_t)mo.offset);
	} else {
		if (align > (1ull << 40)) {
			gem_close(os, c.handle);
			return -EINVAL;
		}
		uint8_t *r = mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED) {
			gem_close(os, c.handle);
			return -ENOMEM;
		}
		uint8_t *a = (uint8_t *)(((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1));
		map = mmap(a, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, os->fd, (off_t)mo.offset);
		if (map == MAP_FAILED) {
			munmap(r, size + align);
		} else {
			if (a > r)
				munmap(r, (size_t)(a - r));
			if (r + size + align > a + size)
				munmap(a + size, (size_t)((r + size + align) - (a + size)));
		}
	}
	if (map == MAP_FAILED) {
		rc = -errno;
		gem_close(os, c.handle);
		return rc ? rc : -ENOMEM;
	}
	if ((uintptr_t)map + size > VA_LIMIT) {
		munmap(map, size);
		gem_close(os, c.handle);
		return -ENOMEM;
	}
	if ((rc = vm_bind(os, ZESIM_VM_BIND_OP_MAP, c.handle, (uintptr_t)map, size))) {
		munmap(map, size);
		gem_close(os, c.handle);
		return rc;
	}
	bo->handle = c.handle;
	bo->size = size;
	bo->ptr = map;
	return 0;
}

void zs_os_bo_destroy(zs_os_t *os, zs_bo_t *bo)
{
	if (!bo->ptr)
		return;
	/* Unbind first: once the host mapping is gone the address may be reused. */
	vm_bind(os, ZESIM_VM_BIND_OP_UNMAP, 0, (uintptr_t)bo->ptr, bo->size);
	munmap(bo->ptr, bo->size);
	gem_close(os, bo->handle);
	memset(bo, 0, sizeof(*bo));
}

int zs_os_bo_export(zs_os_t *os, const zs_bo_t *bo, int *fd)
{
	struct drm_zesim_prime_handle p = {.handle = bo->handle, .flags = ZESIM_PRIME_CLOEXEC | ZESIM_PRIME_RDWR};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, &p);
	if (!rc)
		*fd = p.fd;
	return rc;
}

int zs_os_bo_import(zs_os_t *os, int fd, zs_bo_t *bo)
{
	memset(bo, 0, sizeof(*bo));
	struct drm_zesim_prime_handle p = {.fd = fd};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &p);
	if (rc)
		return rc;
	/* The object's size is the fd's; its pages are mapped from the fd itself
	 * (an imported handle has no mmap offset in this file, docs/uapi.md §4). */
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		gem_close(os, p.handle);
		return -EINVAL;
	}
	const uint64_t size = (uint64_t)st.st_size;
	uint8_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = errno ? -errno : -ENOMEM;
		gem_close(os, p.handle);
		return rc;
	}
	if ((uintptr_t)map + size > VA_LIMIT ||
	    (rc = vm_bind(os, ZESIM_VM_BIND_OP_MAP, p.handle, (uintptr_t)map, size))) {
		munmap(map, size);
		gem_close(os, p.handle);
		return rc ? rc : -ENOMEM;
	}
	bo->handle = p.handle;
	bo->size = size;
	bo->ptr = map;
	return 0;
}

int zs_os_gem_create(zs_os_t *os, uint64_t size, uint32_t *handle, uint8_t **host)
{
	struct drm_zesim_gem_create c = {.size = size, .placement = 1};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_GEM_CREATE, &c);
	if (rc)
		return rc;
	struct drm_zesim_gem_mmap_offset mo = {.handle = c.handle};
	if ((rc = xioctl(os, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo))) {
		gem_close(os, c.handle);
		return rc;
	}
	uint8_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, os->fd, (off_t)mo.offset);
	if (map == MAP_FAILED) {
		rc = errno ? -errno : -ENOMEM;
		gem_close(os, c.handle);
		return rc;
	}
	*handle = c.handle;
	*host = map;
	return 0;
}

void zs_os_gem_destroy(zs_os_t *os, uint32_t handle, uint8_t *host, uint64_t size)
{
	munmap(host, size);
	gem_close(os, handle);
}

int zs_os_bind(zs_os_t *os, uint32_t handle, uint64_t obj_offset, uint64_t va, uint64_t range, int readonly)
{
	struct drm_zesim_vm_bind b = {.vm_id = os->vm_id, .num_binds = 1};
	b.bind.obj = handle;
	b.bind.obj_offset = obj_offset;
	b.bind.range = range;
	b.bind.addr = va;
	b.bind.op = ZESIM_VM_BIND_OP_MAP;
	b.bind.flags = readonly ? ZESIM_VM_BIND_FLAG_READONLY : 0;
	return xioctl(os, DRM_IOCTL_ZESIM_VM_BIND, &b);
}

int zs_os_unbind(zs_os_t *os, uint64_t va, uint64_t range) { return vm_bind(os, ZESIM_VM_BIND_OP_UNMAP, 0, va, range); }

int zs_os_queue_create(zs_os_t *os, uint32_t *id)
{
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = os->vm_id,
						  .instances = (uintptr_t)&eci};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc);
	if (!rc)
		*id = qc.exec_queue_id;
	return rc;
}

void zs_os_queue_destroy(zs_os_t *os, uint32_t id)
{
	struct drm_zesim_exec_queue_destroy d = {.exec_queue_id = id};
	xioctl(os, DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, &d);
}

int zs_os_exec(zs_os_t *os, uint32_t queue, uint64_t batch_va, uint64_t fence_va, uint64_t value)
{
	struct drm_zesim_sync s = {.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
				   .addr = fence_va, .timeline_value = value};
	struct drm_zesim_exec e = {.exec_queue_id = queue, .num_syncs = 1, .syncs = (uintptr_t)&s,
				   .address = batch_va, .num_batch_buffer = 1};
	return xioctl(os, DRM_IOCTL_ZESIM_EXEC, &e);
}

static uint64_t zs_now_ns_os(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int compare(uint64_t v, uint16_t op, uint64_t want)
{
	switch (op) {
	case ZESIM_UFENCE_OP_EQ: return v == want;
	case ZESIM_UFENCE_OP_NEQ: return v != want;
	case ZESIM_UFENCE_OP_GT: return v > want;
	case ZESIM_UFENCE_OP_GTE: return v >= want;
	case ZESIM_UFENCE_OP_LT: return v < want;
	default: return v <= want;
	}
}

int zs_os_wait(zs_os_t *os, uint32_t queue, const volatile uint64_t *va, uint16_t op, uint64_t value, uint64_t mask,
	       uint64_t timeout_ns)
{
	/* The memory is mapped here too: no round trip when it is already done. */
	if (compare(__atomic_load_n(va, __ATOMIC_ACQUIRE) & mask, op, value & mask))
		return 0;
	/* Even with a zero timeout ask the KMD once: it reports a banned queue
	 * (EIO) where memory alone would only say "not yet". */
	const uint64_t start = zs_now_ns_os();
	for (;;) {
		uint64_t slice = WAIT_SLICE_NS;
		const uint64_t slice_start = zs_now_ns_os();
		if (timeout_ns != UINT64_MAX) {
			const uint64_t spent = slice_start - start;
			const uint64_t left = spent >= timeout_ns ? 0 : timeout_ns - spent;
			if (left < slice)
				slice = left;
		}
		/* Let threads that need the fd (to submit the very work we wait
		 * for, perhaps) go first: a pending wait holds the connection.
		 * Not beyond this slice: one of them may be stuck on a daemon
		 * that does not answer (the preload then ends our wait on time). */
		for (unsigned n = 0; atomic_load(&os->queued) > 0; n++) {
			const uint64_t spent = zs_now_ns_os() - slice_start;
			if (spent >= slice) {
				slice = 0;
				break;
			}
			if (n < 1000) {
				sched_yield();
			} else {
				struct timespec ts = {0, 200000};
				nanosleep(&ts, NULL);
			}
		}
		if (slice) {
			const uint64_t spent = zs_now_ns_os() - slice_start;
			slice = spent >= slice ? 0 : slice - spent;
		}
		struct drm_zesim_wait_user_fence w = {.addr = (uintptr_t)va, .op = op, .value = value, .mask = mask,
						      .timeout = (int64_t)slice,
						      .exec_queue_id = queue ? queue : os->wait_queue};
		int rc;
		do
			rc = ioctl(os->fd, DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w);
		while (rc == -1 && errno == EINTR);
		if (rc == 0)
			return 0;
		if (errno != ETIME)
			return -errno;
		if (timeout_ns != UINT64_MAX && zs_now_ns_os() - start >= timeout_ns)
			return -ETIME;
	}
}

/* ---- observation ------------------------------------------------------------------ */

int zs_os_oa_unit(zs_os_t *os, uint64_t *timestamp_hz, uint64_t *caps)
{
	void *d;
	uint32_t size;
	int rc = query(os, ZESIM_QUERY_OA_UNITS, &d, &size);
	if (rc)
		return rc;
	const struct drm_zesim_query_oa_units *q = d;
	const struct drm_zesim_oa_unit *u = (const void *)q->oa_units;
	if (size < sizeof(*q) + sizeof(*u) || q->num_oa_units < 1) {
		free(d);
		return -ENODEV;
	}
	*timestamp_hz = u->oa_timestamp_freq;
	*caps = u->capabilities;
	free(d);
	return 0;
}

static int observation(zs_os_t *os, uint64_t op, void *param)
{
	struct drm_zesim_observation_param p = {.observation_type = ZESIM_OBSERVATION_TYPE_OA,
						 .observation_op = op, .param = (uintptr_t)param};
	atomic_fetch_add(&os->queued, 1);
	int rc;
	do
		rc = ioctl(os->fd, DRM_IOCTL_ZESIM_OBSERVATION, &p);
	while (rc == -1 && (errno == EINTR || errno == EAGAIN));
	const int err = errno;
	atomic_fetch_sub(&os->queued, 1);
	return rc < 0 ? -err : rc; /* ADD_CONFIG: the id, STREAM_OPEN: the fd */
}

int zs_os_oa_add_config(zs_os_t *os, const char uuid[36], const uint32_t (*regs)[2], uint32_t n, uint64_t *id)
{
	struct drm_zesim_oa_config c = {.n_regs = n, .regs_ptr = (uintptr_t)regs};
	memcpy(c.uuid, uuid, sizeof(c.uuid));
	int rc = observation(os, ZESIM_OBSERVATION_OP_ADD_CONFIG, &c);
	if (rc < 0)
		return rc;
	*id = (uint64_t)rc;
	return 0;
}

int zs_os_oa_remove_config(zs_os_t *os, uint64_t id)
{
	int rc = observation(os, ZESIM_OBSERVATION_OP_REMOVE_CONFIG, &id);
	return rc < 0 ? rc : 0;
}

int zs_os_oa_stream_open(zs_os_t *os, const uint64_t (*props)[2], uint32_t n, int *fd)
{
	struct drm_zesim_ext_set_property p[ZESIM_MAX_USER_EXTENSIONS];
	if (!n || n > ZESIM_MAX_USER_EXTENSIONS)
		return -EINVAL;
	memset(p, 0, sizeof(p));
	for (uint32_t i = 0; i < n; i++) {
		p[i].base.name = ZESIM_OA_EXTENSION_SET_PROPERTY;
		p[i].base.next_extension = i + 1 < n ? (uintptr_t)&p[i + 1] : 0;
		p[i].property = (uint32_t)props[i][0];
		p[i].value = props[i][1];
	}
	int rc = observation(os, ZESIM_OBSERVATION_OP_STREAM_OPEN, &p[0]);
	if (rc < 0)
		return rc;
	*fd = rc;
	return 0;
}

int zs_os_oa_stream_ioctl(int fd, unsigned long cmd, void *arg)
{
	int rc;
	do
		rc = ioctl(fd, cmd, arg);
	while (rc == -1 && errno == EINTR);
	return rc < 0 ? -errno : 0;
}

long zs_os_oa_read(int fd, void *buf, size_t n)
{
	ssize_t r;
	do
		r = read(fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return (long)r;
}

void zs_os_oa_stream_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* ---- EU debug ------------------------------------------------------------------ */

int zs_os_debug_metadata_create(zs_os_t *os, const void *elf, uint64_t len, uint64_t load_addr, uint64_t load_size,
				uint64_t fence_va, uint64_t fence_value, uint32_t *id)
{
	struct drm_zesim_debug_metadata_create c = {.type = ZESIM_DEBUG_METADATA_ELF_BINARY,
						    .user_addr = (uintptr_t)elf, .len = len, .vm_id = os->vm_id,
						    .load_addr = load_addr, .load_size = load_size,
						    .ack_fence_addr = fence_va, .ack_fence_value = fence_value};
	int rc = xioctl(os, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &c);
	if (!rc)
		*id = c.metadata_id;
	return rc;
}

int zs_os_debug_metadata_destroy(zs_os_t *os, uint32_t id)
{
	struct drm_zesim_debug_metadata_destroy d = {.metadata_id = id};
	return xioctl(os, DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, &d);
}

int zs_os_eudebug_ioctl(int fd, unsigned long cmd, void *arg)
{
	int rc;
	do
		rc = ioctl(fd, cmd, arg);
	while (rc == -1 && errno == EINTR);
	return rc < 0 ? -errno : rc;
}

int zs_os_eudebug_connect(uint64_t pid, uint32_t flags, int *drm_fd, int *debug_fd)
{
	const int fd = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct drm_zesim_eudebug_connect c = {.pid = pid, .flags = flags};
	const int rc = zs_os_eudebug_ioctl(fd, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	*drm_fd = fd;
	*debug_fd = rc;
	return 0;
}

int zs_os_vm_read(int vm_fd, uint64_t va, void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		const ssize_t r = pread(vm_fd, (uint8_t *)buf + done, n - done, (off_t)(va + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EFAULT;
		done += (size_t)r;
	}
	return 0;
}

int zs_os_vm_write(int vm_fd, uint64_t va, const void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		const ssize_t r = pwrite(vm_fd, (const uint8_t *)buf + done, n - done, (off_t)(va + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EFAULT;
		done += (size_t)r;
	}
	return 0;
}
