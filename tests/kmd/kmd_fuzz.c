/* Random and boundary arguments on every ioctl of the fake KMD, run under
 * ASan/UBSan against a fake hardware interface.  Every call must return 0
 * or one of the errno values docs/uapi.md lists, never crash, and once all
 * files are closed every object and byte of memory must be back.
 *   kmd_fuzz [SEED [ITERATIONS]] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hw.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"

static uint64_t state;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static uint64_t pick(const uint64_t *v, size_t n) { return v[rnd() % n]; }

static const uint64_t edges[] = {0, 1, 2, 3, 4, 7, 8, 16, 4095, 4096, 4097, 65535, 65536, 1ull << 21, 1ull << 32,
				 (1ull << 47) - 4096, 1ull << 47, 0x7fffffff, 0x80000000, 0xffffffff, ~0ull,
				 ~0ull - 4095};

/* Mostly plausible, sometimes extreme. */
static uint64_t val(uint64_t plausible)
{
	switch (rnd() % 6) {
	case 0: return pick(edges, sizeof(edges) / sizeof(edges[0]));
	case 1: return rnd();
	default: return plausible;
	}
}

static uint64_t handle(void) { return val(1 + rnd() % 4); }
static uint64_t size4k(void) { return val(4096 * (1 + rnd() % 16)); }
static uint64_t va(void) { return val(0x100000 * (1 + rnd() % 16) + 4096 * (rnd() % 4)); }

static void corrupt(void *p, size_t n)
{
	if (rnd() % 4 == 0) {
		uint8_t *b = p;
		b[rnd() % n] = (uint8_t)rnd();
	}
}

static const unsigned long cmds[] = {
	DRM_IOCTL_ZESIM_VERSION, DRM_IOCTL_ZESIM_DEVICE_QUERY, DRM_IOCTL_ZESIM_GEM_CREATE,
	DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, DRM_IOCTL_ZESIM_GEM_CLOSE, DRM_IOCTL_ZESIM_VM_CREATE,
	DRM_IOCTL_ZESIM_VM_DESTROY, DRM_IOCTL_ZESIM_VM_BIND, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE,
	DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, DRM_IOCTL_ZESIM_EXEC, DRM_IOCTL_ZESIM_WAIT_USER_FENCE,
};

static int allowed(int rc)
{
	return rc == 0 || rc == ZK_PENDING || rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM || rc == -EFAULT ||
	       rc == -EEXIST || rc == -ENOTTY || rc == -ECANCELED || rc == -ENOSPC || rc == -EIO ||
	       rc == -EMFILE;
}

static void fill_sync(struct drm_zesim_sync *s)
{
	memset(s, 0, sizeof(*s));
	s->type = (uint32_t)val(ZESIM_SYNC_TYPE_USER_FENCE);
	s->flags = (uint32_t)val(ZESIM_SYNC_FLAG_SIGNAL);
	s->addr = va();
	s->timeline_value = rnd();
	corrupt(s, sizeof(*s));
}

static void fill_op(struct drm_zesim_vm_bind_op *o)
{
	memset(o, 0, sizeof(*o));
	o->op = (uint32_t)val(rnd() % 2);
	o->obj = o->op ? (uint32_t)val(0) : (uint32_t)handle();
	o->obj_offset = val(0);
	o->range = size4k();
	o->addr = va();
	o->flags = (uint32_t)val(rnd() % 3 == 0 ? ZESIM_VM_BIND_FLAG_64K : rnd() % 4 == 0 ? ZESIM_VM_BIND_FLAG_READONLY : 0);
	corrupt(o, sizeof(*o));
}

static int one_ioctl(zk_file_t *f)
{
	unsigned long cmd = rnd() % 16 ? cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))] : (unsigned long)rnd();
	union {
		uint8_t raw[512];
		struct drm_zesim_version ver;
		struct drm_zesim_device_query q;
		struct drm_zesim_gem_create gc;
		struct drm_zesim_gem_mmap_offset mo;
		struct drm_zesim_gem_close cl;
		struct drm_zesim_vm_create vc;
		struct drm_zesim_vm_destroy vd;
		struct drm_zesim_vm_bind vb;
		struct drm_zesim_exec_queue_create qc;
		struct drm_zesim_exec_queue_destroy qd;
		struct drm_zesim_exec ex;
		struct drm_zesim_wait_user_fence w;
	} a;
	memset(&a, 0, sizeof(a));
	static uint8_t inbuf[4][16384], outbuf[4][16384];
	zk_blob_t in[4];
	zk_out_blob_t out[4];
	unsigned nin = 0, nout = 0;
	switch (cmd) {
	case DRM_IOCTL_ZESIM_VERSION:
		for (nout = 0; nout < 3; nout++)
			out[nout] = (zk_out_blob_t){outbuf[nout], (uint32_t)(rnd() % 64)};
		break;
	case DRM_IOCTL_ZESIM_DEVICE_QUERY: {
		a.q.query = (uint32_t)val(rnd() % 7);
		uint32_t sizes[] = {0, 16, 24, 48, 64, 96, 40, (uint32_t)(rnd() % 200)};
		a.q.size = sizes[rnd() % 8];
		a.q.data = a.q.size ? 0x1000 : 0;
		if (a.q.size) {
			uint32_t n = rnd() % 8 ? a.q.size : (uint32_t)(rnd() % 300);
			for (uint32_t i = 0; i < n; i++)
				inbuf[0][i] = (uint8_t)(rnd() % 3 == 0 ? rnd() : 0);
			if (rnd() % 2) { /* a plausible ENGINE_CYCLES request */
				struct drm_zesim_query_engine_cycles *c = (void *)inbuf[0];
				c->eci.engine_class = ZESIM_ENGINE_CLASS_COMPUTE;
				c->clockid = 4;
			}
			in[nin++] = (zk_blob_t){inbuf[0], n};
			out[nout++] = (zk_out_blob_t){outbuf[0], rnd() % 8 ? a.q.size : (uint32_t)(rnd() % 300)};
		}
		break;
	}
	case DRM_IOCTL_ZESIM_GEM_CREATE:
		a.gc.size = size4k();
		a.gc.placement = (uint32_t)val(1);
		a.gc.vm_id = (uint32_t)(rnd() % 4 ? 0 : handle());
		break;
	case DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET:
		a.mo.handle = (uint32_t)handle();
		break;
	case DRM_IOCTL_ZESIM_GEM_CLOSE:
		a.cl.handle = (uint32_t)handle();
		break;
	case DRM_IOCTL_ZESIM_VM_CREATE:
		break;
	case DRM_IOCTL_ZESIM_VM_DESTROY:
		a.vd.vm_id = (uint32_t)handle();
		break;
	case DRM_IOCTL_ZESIM_VM_BIND: {
		a.vb.vm_id = (uint32_t)handle();
		a.vb.num_binds = (uint32_t)val(1 + rnd() % 3);
		a.vb.num_syncs = (uint32_t)val(rnd() % 3);
		fill_op(&a.vb.bind);
		if (a.vb.num_binds > 1) {
			uint32_t n = rnd() % 8 ? a.vb.num_binds : (uint32_t)(rnd() % 5);
			if (n > 200)
				n = 200;
			for (uint32_t i = 0; i < n; i++)
				fill_op((struct drm_zesim_vm_bind_op *)inbuf[0] + i);
			in[nin++] = (zk_blob_t){inbuf[0], (uint32_t)(n * sizeof(struct drm_zesim_vm_bind_op))};
		}
		if (a.vb.num_syncs) {
			uint32_t n = rnd() % 8 ? a.vb.num_syncs : (uint32_t)(rnd() % 5);
			if (n > 200)
				n = 200;
			for (uint32_t i = 0; i < n; i++)
				fill_sync((struct drm_zesim_sync *)inbuf[1] + i);
			in[nin++] = (zk_blob_t){inbuf[1], (uint32_t)(n * sizeof(struct drm_zesim_sync))};
		}
		break;
	}
	case DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE: {
		a.qc.width = (uint16_t)val(1);
		a.qc.num_placements = (uint16_t)val(1);
		a.qc.vm_id = (uint32_t)handle();
		struct drm_zesim_engine_class_instance *e = (void *)inbuf[0];
		memset(e, 0, sizeof(*e));
		e->engine_class = (uint16_t)val(ZESIM_ENGINE_CLASS_COMPUTE);
		corrupt(e, sizeof(*e));
		in[nin++] = (zk_blob_t){inbuf[0], rnd() % 8 ? (uint32_t)sizeof(*e) : (uint32_t)(rnd() % 32)};
		break;
	}
	case DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY:
		a.qd.exec_queue_id = (uint32_t)handle();
		break;
	case DRM_IOCTL_ZESIM_EXEC:
		a.ex.exec_queue_id = (uint32_t)handle();
		a.ex.num_batch_buffer = (uint16_t)val(1);
		a.ex.address = va();
		a.ex.num_syncs = (uint32_t)val(rnd() % 3);
		if (a.ex.num_syncs) {
			uint32_t n = a.ex.num_syncs < 100 ? a.ex.num_syncs : 3;
			for (uint32_t i = 0; i < n; i++)
				fill_sync((struct drm_zesim_sync *)inbuf[0] + i);
			in[nin++] = (zk_blob_t){inbuf[0], (uint32_t)(n * sizeof(struct drm_zesim_sync))};
		}
		break;
	case DRM_IOCTL_ZESIM_WAIT_USER_FENCE:
		a.w.addr = va();
		a.w.op = (uint16_t)val(rnd() % 6);
		a.w.value = rnd() % 4;
		a.w.mask = val(~0ull);
		a.w.timeout = 0;
		a.w.exec_queue_id = (uint32_t)handle();
		break;
	default:
		break;
	}
	corrupt(&a, 64);
	uint32_t size = (uint32_t)_IOC_SIZE(cmd);
	if (size > sizeof(a) || rnd() % 16 == 0)
		size = (uint32_t)(rnd() % sizeof(a));
	int rc = zk_ioctl(f, cmd, &a, size, in, nin, out, nout);
	if (rc == ZK_PENDING && cmd == DRM_IOCTL_ZESIM_WAIT_USER_FENCE)
		rc = zk_wait_check(f, &a);
	if (!allowed(rc)) {
		fprintf(stderr, "kmd_fuzz: ioctl 0x%lx returned %d\n", cmd, rc);
		abort();
	}
	return rc;
}

int main(int argc, char **argv)
{
	state = argc > 1 ? strtoull(argv[1], NULL, 0) * 2654435761u + 1 : 1;
	const long iterations = argc > 2 ? atol(argv[2]) : 200000;
	zs_hw_t *hw = fake_hw_create(64ull << 20);
	zk_kmd_t *k = zk_create(hw);
	if (!k) {
		fprintf(stderr, "kmd_fuzz: the KMD refused the fake device\n");
		return 1;
	}
	zk_stats_t start;
	zk_get_stats(k, &start);
	zk_file_t *files[3] = {0};
	long ok = 0, rejected = 0;
	for (long i = 0; i < iterations; i++) {
		zk_file_t **f = &files[rnd() % 3];
		if (!*f || rnd() % 5000 == 0) {
			if (*f)
				zk_close(*f);
			*f = zk_open(k, 1000 + (int)(rnd() % 3));
			continue;
		}
		if (rnd() % 64 == 0) {
			int memfd;
			if (zk_mmap_lookup(*f, val(1ull << 32), size4k(), &memfd) == 0 && fcntl(memfd, F_GETFD) < 0)
				abort();
		}
		if (one_ioctl(*f) == 0)
			ok++;
		else
			rejected++;
		zk_service(k);
	}
	zk_stats_t mid;
	zk_get_stats(k, &mid);
	for (int i = 0; i < 3; i++)
		if (files[i])
			zk_close(files[i]);
	zk_stats_t end;
	zk_get_stats(k, &end);
	printf("kmd_fuzz: %ld ioctls accepted, %ld rejected; peak objects in the last state: %u BOs, %u VMs, %u queues; "
	       "%llu jobs completed\n",
	       ok, rejected, mid.bos, mid.vms, mid.queues, (unsigned long long)end.jobs_completed);
	if (end.files || end.bos || end.vms || end.queues || end.jobs || end.bo_bytes || end.pt_bytes ||
	    end.free_bytes != start.free_bytes) {
		fprintf(stderr, "kmd_fuzz: leak after closing every file: %u BOs %u VMs %u queues %u jobs, %llu bytes\n",
			end.bos, end.vms, end.queues, end.jobs, (unsigned long long)(start.free_bytes - end.free_bytes));
		return 1;
	}
	if (ok == 0) {
		fprintf(stderr, "kmd_fuzz: no ioctl succeeded: the generator is broken\n");
		return 1;
	}
	zk_destroy(k);
	fake_hw_destroy(hw);
	return 0;
}
