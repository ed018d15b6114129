/* Every must-be-zero field of every ioctl (tests/kmd/ioctl_reserved.h, driven by the
 * ioctl table uapi/zesim_ioctl_table.h) against the KMD on the fake hardware
 * interface.  For each ioctl a valid call is built in a fresh file (a VM, two GEM
 * objects, one bound, an exec queue); it must succeed.  Then, for every byte of
 * every reserved/pad/extensions/flags field, in the argument and in the structs it
 * points to (VM_BIND's inline op, its op array, sync arrays, the engine instance,
 * the ENGINE_CYCLES query's eci, OBSERVATION's property chain links and OA
 * config), the same call with that one byte set to 0x01 and
 * then 0x80 must return exactly -EINVAL.  Every table entry must have a row in
 * ioctl_reserved.h or be listed as having none, and every row must be exercised.
 * Prints one line per ioctl; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_hw.h"
#include "ioctl_reserved.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "zs/oa_report.h"

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_reserved:%d: %s: ", __LINE__, #cond);                                    \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

#define BATCH_VA 0x100000ull
#define FENCE_VA 0x100800ull
#define BIND_VA 0x200000ull

static zk_kmd_t *k;
static pid_t target_pid; /* a live process with a DRM file: CONNECT's target */

/* A fresh file with the objects a valid call of any ioctl needs. */
typedef struct env {
	zk_file_t *f;
	uint32_t vm, bo_mapped, bo_free, queue;
	int memfd; /* bo_free's memfd (the KMD's own fd, this is its process): a PRIME fd */
} env_t;

static int io(zk_file_t *f, unsigned long cmd, void *arg, const zk_blob_t *in, unsigned nin)
{
	return zk_ioctl(f, cmd, arg, (uint32_t)_IOC_SIZE(cmd), in, nin, NULL, 0);
}

static env_t env_open(void)
{
	env_t e = {zk_open(k, getpid()), 0, 0, 0, 0, -1}; /* a real pid: CONNECT reads its credentials */
	EXPECT(e.f, "zk_open");
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	e.vm = vc.vm_id;
	struct drm_zesim_gem_create g = {.size = 4096, .placement = 1};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_GEM_CREATE, &g, NULL, 0) == 0, "GEM_CREATE");
	e.bo_mapped = g.handle;
	g = (struct drm_zesim_gem_create){.size = 65536, .placement = 1};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_GEM_CREATE, &g, NULL, 0) == 0, "GEM_CREATE");
	e.bo_free = g.handle;
	struct drm_zesim_gem_mmap_offset mo = {.handle = e.bo_free};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo, NULL, 0) == 0, "GEM_MMAP_OFFSET");
	EXPECT(zk_mmap_lookup(e.f, mo.offset, 65536, &e.memfd) == 0, "the memfd of a GEM object");
	struct drm_zesim_vm_bind b = {.vm_id = e.vm, .num_binds = 1};
	b.bind = (struct drm_zesim_vm_bind_op){.obj = e.bo_mapped, .range = 4096, .addr = BATCH_VA,
					       .op = ZESIM_VM_BIND_OP_MAP};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_VM_BIND, &b, NULL, 0) == 0, "VM_BIND");
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = e.vm,
						 .instances = (uintptr_t)&eci};
	zk_blob_t in = {(const uint8_t *)&eci, sizeof(eci)};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, &in, 1) == 0, "EXEC_QUEUE_CREATE");
	e.queue = qc.exec_queue_id;
	/* module 1, for DEBUG_METADATA_DESTROY */
	static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
	struct drm_zesim_debug_metadata_create mc = {.user_addr = 0x9000, .len = 4, .vm_id = e.vm, .load_addr = BATCH_VA,
						     .load_size = 64, .ack_fence_addr = FENCE_VA};
	zk_blob_t eb = {elf, 4};
	EXPECT(io(e.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &mc, &eb, 1) == 0 && mc.metadata_id == 1, "METADATA_CREATE");
	return e;
}

/* One call: the argument and the buffers it points to. */
typedef struct call {
	unsigned long cmd;
	const char *variant;
	union zesim_ioctl_arg a;
	_Alignas(8) uint8_t buf[4][1024]; /* in buffers, in table order */
	uint32_t len[4];
	unsigned nin;
	_Alignas(8) uint8_t outbuf[1024];
	uint32_t outlen;
	/* where each kind of nested struct is: buffer index and element (-1: none) */
	int ops_buf, ops_n, syncs_buf, syncs_n, inst_buf, eci_buf, props_buf, props_n, oacfg_buf;
} call_t;

static void add_in(call_t *c, const void *p, uint32_t len)
{
	memcpy(c->buf[c->nin], p, len);
	c->len[c->nin++] = len;
}

static struct drm_zesim_sync sync_at(uint64_t addr, uint64_t v)
{
	return (struct drm_zesim_sync){.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
				       .addr = addr, .timeline_value = v};
}

/* The valid calls, as variants: each nested struct kind appears in at least one. */
enum {
	V_QUERY_SIZE, V_QUERY_CYCLES, V_GEM_CREATE, V_MMAP, V_GEM_CLOSE, V_VM_CREATE, V_VM_DESTROY, V_BIND_ONE,
	V_BIND_MANY, V_QUEUE_CREATE, V_QUEUE_DESTROY, V_EXEC, V_WAIT, V_TESTFD_OPEN, V_OBS_OPEN, V_OBS_ADD,
	V_OBS_REMOVE, V_PRIME_IMPORT, V_CONNECT, V_META_CREATE, V_META_DESTROY, NVARIANTS
};

static void build(int v, const env_t *e, call_t *c)
{
	memset(c, 0, sizeof(*c));
	c->ops_buf = c->syncs_buf = c->inst_buf = c->eci_buf = c->props_buf = c->oacfg_buf = -1;
	switch (v) {
	case V_QUERY_SIZE:
		c->cmd = DRM_IOCTL_ZESIM_DEVICE_QUERY, c->variant = "CONFIG size";
		c->a.q.query = ZESIM_QUERY_CONFIG;
		break;
	case V_QUERY_CYCLES: {
		c->cmd = DRM_IOCTL_ZESIM_DEVICE_QUERY, c->variant = "ENGINE_CYCLES data";
		struct drm_zesim_query_engine_cycles q = {.eci.engine_class = ZESIM_ENGINE_CLASS_COMPUTE,
							  .clockid = CLOCK_MONOTONIC_RAW};
		c->a.q.query = ZESIM_QUERY_ENGINE_CYCLES;
		c->a.q.size = sizeof(q);
		c->a.q.data = 0x1000;
		c->eci_buf = (int)c->nin;
		add_in(c, &q, sizeof(q));
		c->outlen = sizeof(q);
		break;
	}
	case V_GEM_CREATE:
		c->cmd = DRM_IOCTL_ZESIM_GEM_CREATE, c->variant = "4 KiB";
		c->a.gc.size = 4096, c->a.gc.placement = 1;
		break;
	case V_MMAP:
		c->cmd = DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, c->variant = "";
		c->a.mo.handle = e->bo_free;
		break;
	case V_GEM_CLOSE:
		c->cmd = DRM_IOCTL_ZESIM_GEM_CLOSE, c->variant = "";
		c->a.cl.handle = e->bo_free;
		break;
	case V_VM_CREATE:
		c->cmd = DRM_IOCTL_ZESIM_VM_CREATE, c->variant = "";
		break;
	case V_VM_DESTROY:
		c->cmd = DRM_IOCTL_ZESIM_VM_DESTROY, c->variant = "";
		c->a.vd.vm_id = e->vm;
		break;
	case V_BIND_ONE: {
		c->cmd = DRM_IOCTL_ZESIM_VM_BIND, c->variant = "one inline op, two syncs";
		c->a.vb.vm_id = e->vm, c->a.vb.num_binds = 1, c->a.vb.num_syncs = 2;
		c->a.vb.bind = (struct drm_zesim_vm_bind_op){.obj = e->bo_free, .range = 4096, .addr = BIND_VA,
							     .op = ZESIM_VM_BIND_OP_MAP};
		struct drm_zesim_sync s[2] = {sync_at(FENCE_VA, 1), sync_at(FENCE_VA + 8, 2)};
		c->a.vb.syncs = 0x2000;
		c->syncs_buf = (int)c->nin, c->syncs_n = 2;
		add_in(c, s, sizeof(s));
		break;
	}
	case V_BIND_MANY: {
		c->cmd = DRM_IOCTL_ZESIM_VM_BIND, c->variant = "op array of two, no sync";
		c->a.vb.vm_id = e->vm, c->a.vb.num_binds = 2;
		struct drm_zesim_vm_bind_op ops[2] = {
			{.obj = e->bo_free, .range = 4096, .addr = BIND_VA, .op = ZESIM_VM_BIND_OP_MAP},
			{.obj = e->bo_free, .obj_offset = 4096, .range = 8192, .addr = BIND_VA + 0x10000,
			 .op = ZESIM_VM_BIND_OP_MAP, .flags = ZESIM_VM_BIND_FLAG_READONLY}};
		c->a.vb.vector_of_binds = 0x3000;
		c->ops_buf = (int)c->nin, c->ops_n = 2;
		add_in(c, ops, sizeof(ops));
		break;
	}
	case V_QUEUE_CREATE: {
		c->cmd = DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, c->variant = "";
		struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
		c->a.qc.width = 1, c->a.qc.num_placements = 1, c->a.qc.vm_id = e->vm, c->a.qc.instances = 0x4000;
		c->inst_buf = (int)c->nin;
		add_in(c, &eci, sizeof(eci));
		break;
	}
	case V_QUEUE_DESTROY:
		c->cmd = DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, c->variant = "";
		c->a.qd.exec_queue_id = e->queue;
		break;
	case V_EXEC: {
		c->cmd = DRM_IOCTL_ZESIM_EXEC, c->variant = "two syncs";
		c->a.ex.exec_queue_id = e->queue, c->a.ex.address = BATCH_VA, c->a.ex.num_batch_buffer = 1;
		c->a.ex.num_syncs = 2, c->a.ex.syncs = 0x5000;
		struct drm_zesim_sync s[2] = {sync_at(FENCE_VA, 1), sync_at(FENCE_VA + 8, 2)};
		c->syncs_buf = (int)c->nin, c->syncs_n = 2;
		add_in(c, s, sizeof(s));
		break;
	}
	case V_WAIT:
		c->cmd = DRM_IOCTL_ZESIM_WAIT_USER_FENCE, c->variant = "already satisfied";
		c->a.w.addr = FENCE_VA, c->a.w.op = ZESIM_UFENCE_OP_EQ, c->a.w.value = 0, c->a.w.mask = ~0ull;
		c->a.w.exec_queue_id = e->queue;
		break;
	case V_TESTFD_OPEN:
		c->cmd = DRM_IOCTL_ZESIM_TEST_FD_OPEN, c->variant = "";
		break;
	case V_OBS_OPEN: {
		/* The chain as the preload sends it: the links back to back, each
		 * naming a next one but the last (the pointers are the caller's). */
		c->cmd = DRM_IOCTL_ZESIM_OBSERVATION, c->variant = "STREAM_OPEN, 4 links";
		c->a.obs.observation_op = ZESIM_OBSERVATION_OP_STREAM_OPEN, c->a.obs.param = 0x6000;
		struct drm_zesim_ext_set_property p[4] = {
			{.base.next_extension = 0x6028, .property = ZESIM_OA_PROPERTY_SAMPLE_OA, .value = 1},
			{.base.next_extension = 0x6050, .property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 1},
			{.base.next_extension = 0x6078, .property = ZESIM_OA_PROPERTY_OA_FORMAT,
			 .value = ZS_OA_FORMAT_A32u40_A4u32_B8_C8},
			{.property = ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, .value = 128u << 10}};
		c->props_buf = (int)c->nin, c->props_n = 4;
		add_in(c, p, sizeof(p));
		break;
	}
	case V_OBS_ADD: {
		c->cmd = DRM_IOCTL_ZESIM_OBSERVATION, c->variant = "ADD_CONFIG, 2 registers";
		c->a.obs.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG, c->a.obs.param = 0x7000;
		struct drm_zesim_oa_config cfg = {.n_regs = 2, .regs_ptr = 0x7100};
		memcpy(cfg.uuid, "a0000000-0000-0000-0000-000000000002", 36);
		const uint32_t regs[2][2] = {{ZS_REG_OA_BC_SEL0, 4}, {ZS_REG_OA_BC_SEL8, 5}};
		c->oacfg_buf = (int)c->nin;
		add_in(c, &cfg, sizeof(cfg));
		add_in(c, regs, sizeof(regs));
		break;
	}
	case V_PRIME_IMPORT:
		c->cmd = DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, c->variant = "an object of the file";
		c->a.ph.fd = e->memfd;
		break;
	case V_CONNECT:
		c->cmd = DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, c->variant = "a child process";
		c->a.dc.pid = (uint64_t)target_pid;
		c->a.dc.flags = ZESIM_EUDEBUG_CONNECT_ACK_MODULES;
		break;
	case V_META_CREATE: {
		c->cmd = DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, c->variant = "a 16-byte ELF";
		c->a.mc = (struct drm_zesim_debug_metadata_create){.user_addr = 0x9000, .len = 16, .vm_id = e->vm,
								   .load_addr = BATCH_VA, .load_size = 64,
								   .ack_fence_addr = FENCE_VA, .ack_fence_value = 1};
		const uint8_t elf[16] = {0x7f, 'E', 'L', 'F'};
		add_in(c, elf, sizeof(elf));
		break;
	}
	case V_META_DESTROY:
		c->cmd = DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, c->variant = "module 1";
		c->a.md.metadata_id = 1;
		break;
	case V_OBS_REMOVE: {
		c->cmd = DRM_IOCTL_ZESIM_OBSERVATION, c->variant = "REMOVE_CONFIG";
		c->a.obs.observation_op = ZESIM_OBSERVATION_OP_REMOVE_CONFIG, c->a.obs.param = 0x8000;
		const uint64_t id = 2;
		add_in(c, &id, sizeof(id));
		break;
	}
	}
}

static int run(const env_t *e, call_t *c)
{
	zk_blob_t in[4];
	for (unsigned i = 0; i < c->nin; i++)
		in[i] = (zk_blob_t){c->buf[i], c->len[i]};
	zk_out_blob_t out = {c->outbuf, c->outlen};
	return zk_ioctl(e->f, c->cmd, &c->a, (uint32_t)_IOC_SIZE(c->cmd), in, c->nin, c->outlen ? &out : NULL,
			c->outlen ? 1 : 0);
}

static const char *cmd_name(unsigned long cmd)
{
	const struct zesim_ioctl_desc *d = zesim_ioctl_find(cmd);
	return d ? d->name : "?";
}

/* The bytes of field r in call c (NULL when c has no such struct), element `el`. */
static uint8_t *field_at(call_t *c, const struct zesim_rsv *r, int el, int *nel)
{
	*nel = 1;
	switch (r->where) {
	case RSV_ARG:
		return c->a.raw + r->off;
	case RSV_INLINE_OP:
		return c->a.vb.num_binds == 1 ? c->a.raw + r->off : NULL;
	case RSV_OPS:
		if (c->ops_buf < 0)
			return NULL;
		*nel = c->ops_n;
		return c->buf[c->ops_buf] + (size_t)el * sizeof(struct drm_zesim_vm_bind_op) + r->off;
	case RSV_SYNCS:
		if (c->syncs_buf < 0)
			return NULL;
		*nel = c->syncs_n;
		return c->buf[c->syncs_buf] + (size_t)el * sizeof(struct drm_zesim_sync) + r->off;
	case RSV_INSTANCE:
		return c->inst_buf < 0 ? NULL : c->buf[c->inst_buf] + r->off;
	case RSV_ECI:
		return c->eci_buf < 0 ? NULL
				      : c->buf[c->eci_buf] + offsetof(struct drm_zesim_query_engine_cycles, eci) + r->off;
	case RSV_PROPS:
		if (c->props_buf < 0)
			return NULL;
		*nel = c->props_n;
		return c->buf[c->props_buf] + (size_t)el * sizeof(struct drm_zesim_ext_set_property) + r->off;
	case RSV_OA_CONFIG:
		return c->oacfg_buf < 0 ? NULL : c->buf[c->oacfg_buf] + r->off;
	default:
		break;
	}
	return NULL;
}

int main(void)
{
	zs_hw_t *hw = fake_hw_create(64ull << 20);
	k = zk_create(hw);
	EXPECT(k, "zk_create refused the fake device");
	zk_set_test_channel(k, 1);
	/* The OA metric set the STREAM_OPEN call names (id 1); the ADD_CONFIG call adds
	 * id 2, which the REMOVE_CONFIG call removes. */
	{
		zk_file_t *f = zk_open(k, 1);
		struct drm_zesim_oa_config cfg = {.n_regs = 1};
		memcpy(cfg.uuid, "a0000000-0000-0000-0000-000000000001", 36);
		const uint32_t regs[1][2] = {{ZS_REG_OA_BC_SEL0, 4}};
		cfg.regs_ptr = (uintptr_t)regs;
		struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG,
							.param = (uintptr_t)&cfg};
		zk_blob_t in[2] = {{(const uint8_t *)&cfg, sizeof(cfg)}, {(const uint8_t *)regs, sizeof(regs)}};
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), in, 2, NULL, 0) == 1, "ADD_CONFIG");
		zk_close(f);
	}
	/* CONNECT's target; a first connection makes the debug area (kept until zk_destroy). */
	target_pid = fork();
	EXPECT(target_pid >= 0, "fork");
	if (!target_pid) {
		for (;;)
			pause();
	}
	zk_file_t *target = zk_open(k, target_pid);
	{
		zk_file_t *f = zk_open(k, getpid());
		struct drm_zesim_eudebug_connect dc = {.pid = (uint64_t)target_pid};
		EXPECT(io(f, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &dc, NULL, 0) == 0, "CONNECT");
		zk_close(f);
	}
	zk_stats_t start;
	zk_get_stats(k, &start);

	/* Every table entry is described. */
	for (size_t i = 0; i < ZESIM_NR_IOCTLS; i++) {
		int found = 0;
		for (size_t r = 0; r < ZESIM_NR_RSV; r++)
			found |= zesim_rsv_fields[r].cmd == zesim_ioctls[i].cmd;
		for (size_t r = 0; r < sizeof(zesim_no_reserved) / sizeof(zesim_no_reserved[0]); r++)
			found |= zesim_no_reserved[r] == zesim_ioctls[i].cmd;
		EXPECT(found, "ioctl %s of zesim_ioctl_table.h has no row in ioctl_reserved.h", zesim_ioctls[i].name);
	}

	unsigned used[ZESIM_NR_RSV] = {0};
	unsigned long total = 0;
	for (int v = 0; v < NVARIANTS; v++) {
		call_t c;
		env_t e = env_open();
		build(v, &e, &c);
		int rc = run(&e, &c);
		/* 0, or an id (OBSERVATION ADD_CONFIG) */
		EXPECT(rc == 0 || (rc > 0 && rc != ZK_PENDING), "the valid %s (%s) returned %d: the test's call is wrong", cmd_name(c.cmd), c.variant,
		       rc);
		zk_close(e.f);
		zk_service(k);
		unsigned long n = 0;
		for (size_t r = 0; r < ZESIM_NR_RSV; r++) {
			const struct zesim_rsv *rf = &zesim_rsv_fields[r];
			if (rf->cmd != c.cmd)
				continue;
			int nel;
			if (!field_at(&c, rf, 0, &nel))
				continue;
			used[r]++;
			for (int el = 0; el < nel; el++)
				for (unsigned byte = 0; byte < rf->size; byte++)
					for (int bit = 0; bit < 2; bit++) {
						e = env_open();
						build(v, &e, &c);
						field_at(&c, rf, el, &nel)[byte] = bit ? 0x80 : 0x01;
						rc = run(&e, &c);
						EXPECT(rc == -EINVAL,
						       "%s (%s) with %s%s byte %u = %#x (element %d) returned %d (%s), "
						       "expected -EINVAL",
						       cmd_name(c.cmd), c.variant, rf->name,
						       rf->where == RSV_OPS ? " of the op array" :
						       rf->where == RSV_SYNCS ? " of the sync array" : "",
						       byte, bit ? 0x80 : 0x01, el, rc, rc < 0 ? strerror(-rc) : "success");
						zk_close(e.f);
						zk_service(k);
						n++;
					}
		}
		printf("kmd_reserved: %-18s %-26s valid call accepted; %lu calls with one reserved byte set, all -EINVAL\n",
		       cmd_name(c.cmd), c.variant, n);
		total += n;
	}
	for (size_t r = 0; r < ZESIM_NR_RSV; r++)
		EXPECT(used[r], "field %s of %s is in no valid call of the test", zesim_rsv_fields[r].name,
		       cmd_name(zesim_rsv_fields[r].cmd));
	zk_close(target);
	kill(target_pid, SIGKILL);
	waitpid(target_pid, NULL, 0);
	zk_stats_t end;
	zk_get_stats(k, &end);
	EXPECT(!end.files && !end.bos && !end.vms && !end.queues && end.free_bytes == start.free_bytes,
	       "objects left after closing every file");
	zk_destroy(k);
	fake_hw_destroy(hw);
	printf("kmd_reserved: %lu rejected calls, every must-be-zero field of %zu ioctls\n", total,
	       (size_t)ZESIM_NR_IOCTLS - sizeof(zesim_no_reserved) / sizeof(zesim_no_reserved[0]));
	return 0;
}
