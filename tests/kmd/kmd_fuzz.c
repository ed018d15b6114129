/* Random and boundary arguments on every ioctl of the fake KMD, run under
 * ASan/UBSan against a fake hardware interface.  Every call must return 0
 * or one of the errno values docs/uapi.md lists, never crash, and once all
 * files are closed every object and byte of memory must be back.  The oracle
 * also knows which inputs must fail: a call whose argument, or a struct it
 * points to, has a non-zero byte in a must-be-zero field (tests/kmd/
 * ioctl_reserved.h) must not succeed.  In 1 of 4 calls a twin of the call
 * with one such byte set is made first, so that the check bites whenever the
 * call itself would have succeeded.
 *   kmd_fuzz [SEED [ITERATIONS]] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hw.h"
#include "ioctl_reserved.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "zs/oa_report.h"

static uint64_t state;
static zk_kmd_t *f_kmd; /* the KMD of the files */
static uint64_t oa_ids[4] = {1, 1, 1, 1}; /* ids ADD_CONFIG returned lately */
static long must_fail_calls;

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
	DRM_IOCTL_ZESIM_OBSERVATION, DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE,
	DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY,
};

/* EU debug (docs/uapi.md §16): the pids the files have (this process, a child that only
 * exists, fake ones), and the debug and VM fds CONNECT and VM_OPEN made, kept (attached,
 * as the daemon would) and fuzzed until replaced or the end. */
static int pids[4];
#define NDBG 4
static zk_fd_t *dbg_fds[NDBG], *vm_fds[NDBG];
static int dummy_user;
static long dbg_calls, dbg_ok, dbg_connects, vm_ios;

static void keep_fd(zk_fd_t **slot, zk_fd_t *nf)
{
	if (*slot)
		zk_fd_close(*slot);
	zk_fd_attach(nf, &dummy_user);
	*slot = nf;
}

/* The last fd PRIME_HANDLE_TO_FD gave (the KMD's own memfd, this is its process:
 * closed by the KMD when its object goes, the number perhaps reused since). */
static int prime_fd = -1;

static int allowed(int rc)
{
	return rc == 0 || rc == ZK_PENDING || rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM || rc == -EFAULT ||
	       rc == -EEXIST || rc == -ENOTTY || rc == -ECANCELED || rc == -ENOSPC || rc == -EIO ||
	       rc == -EMFILE || rc == -E2BIG || rc == -EADDRINUSE || rc == -EBUSY || rc == -EBADF ||
	       rc == -ESRCH || rc == -EACCES || rc == -EOPNOTSUPP || rc == -ENOTCONN || rc == -EMSGSIZE ||
	       rc == -EAGAIN || rc == -ESPIPE ||
	       (rc > 0 && rc < 1000000);
	/* rc > 0: an OA config id (OBSERVATION ADD_CONFIG) */
}

/* OBSERVATION STREAM_OPEN: a property chain of n links as the preload sends it. */
static uint32_t fill_props(uint8_t *buf, uint32_t n)
{
	static const uint64_t sizes[] = {128u << 10, 256u << 10, 1u << 20, 16u << 20, 100000, 0};
	static const uint32_t base[] = {ZESIM_OA_PROPERTY_SAMPLE_OA, ZESIM_OA_PROPERTY_OA_METRIC_SET,
					ZESIM_OA_PROPERTY_OA_FORMAT, ZESIM_OA_PROPERTY_OA_BUFFER_SIZE};
	const int plausible = rnd() % 2; /* starts as a valid sampling stream would */
	for (uint32_t i = 0; i < n; i++) {
		struct drm_zesim_ext_set_property *p = (void *)(buf + i * sizeof(*p));
		memset(p, 0, sizeof(*p));
		p->base.next_extension = i + 1 < n ? 0x6000 + (i + 1) * sizeof(*p) : 0;
		if (rnd() % 64 == 0)
			p->base.next_extension = val(p->base.next_extension);
		p->property = plausible && i < 4 ? base[i] : (uint32_t)val(1 + rnd() % 13);
		switch (p->property) {
		case ZESIM_OA_PROPERTY_OA_METRIC_SET: p->value = plausible ? oa_ids[rnd() % 4] : val(1 + rnd() % 8); break;
		case ZESIM_OA_PROPERTY_OA_FORMAT:
			p->value = plausible ? ZS_OA_FORMAT_A32u40_A4u32_B8_C8 : val(ZS_OA_FORMAT_A32u40_A4u32_B8_C8);
			break;
		case ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT: p->value = val(rnd() % 34); break;
		case ZESIM_OA_PROPERTY_OA_BUFFER_SIZE: p->value = plausible ? 128u << 10 : val(pick(sizes, 6)); break;
		case ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS: p->value = val(rnd() % 600); break;
		case ZESIM_OA_PROPERTY_EXEC_QUEUE_ID: p->value = handle(); break;
		case ZESIM_OA_PROPERTY_SAMPLE_OA: p->value = plausible ? 1 : val(rnd() % 2); break;
		default: p->value = val(rnd() % 2); break;
		}
		if (!plausible || rnd() % 4 == 0)
			corrupt(p, sizeof(*p));
	}
	return n * (uint32_t)sizeof(struct drm_zesim_ext_set_property);
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

/* The nested struct kind r->where of a call: its element size and where in
 * the buffer the field's struct starts. */
static size_t rsv_elem(const struct zesim_rsv *r, size_t len)
{
	return r->where == RSV_OPS     ? sizeof(struct drm_zesim_vm_bind_op)
	       : r->where == RSV_SYNCS ? sizeof(struct drm_zesim_sync)
	       : r->where == RSV_PROPS ? sizeof(struct drm_zesim_ext_set_property)
				       : len;
}

static size_t rsv_base(const struct zesim_rsv *r)
{
	return r->where == RSV_ECI ? offsetof(struct drm_zesim_query_engine_cycles, eci) : 0;
}

/* The oracle's "must fail": a must-be-zero byte set that the KMD has to look at
 * (the inline op only with one op, arrays only when their length is right, the
 * eci only when the query reads its buffer). */
static int must_fail(unsigned long cmd, const void *arg, const zk_blob_t *in, const int *blob_of)
{
	const struct drm_zesim_vm_bind *vb = arg;
	const struct drm_zesim_exec *ex = arg;
	const struct drm_zesim_device_query *q = arg;
	const struct drm_zesim_observation_param *obs = arg;
	for (size_t i = 0; i < ZESIM_NR_RSV; i++) {
		const struct zesim_rsv *r = &zesim_rsv_fields[i];
		if (r->cmd != cmd)
			continue;
		if (r->where == RSV_ARG || r->where == RSV_INLINE_OP) {
			if ((r->where == RSV_ARG || vb->num_binds == 1) && zesim_rsv_nonzero(arg, r->off, r->size))
				return 1;
			continue;
		}
		if (blob_of[r->where] < 0)
			continue;
		const zk_blob_t *b = &in[blob_of[r->where]];
		uint64_t want = r->where == RSV_OPS	  ? (uint64_t)vb->num_binds * sizeof(struct drm_zesim_vm_bind_op)
				: r->where == RSV_SYNCS	  ? (uint64_t)(cmd == DRM_IOCTL_ZESIM_EXEC ? ex->num_syncs : vb->num_syncs) *
								sizeof(struct drm_zesim_sync)
				: r->where == RSV_INSTANCE ? sizeof(struct drm_zesim_engine_class_instance)
				/* the chain: every link the KMD was sent is looked at before it succeeds */
				: r->where == RSV_PROPS ? (obs->observation_op == ZESIM_OBSERVATION_OP_STREAM_OPEN ? b->len : ~0ull)
				: r->where == RSV_OA_CONFIG ? (obs->observation_op == ZESIM_OBSERVATION_OP_ADD_CONFIG
								   ? sizeof(struct drm_zesim_oa_config) : ~0ull)
				: q->query == ZESIM_QUERY_ENGINE_CYCLES && q->size ? sizeof(struct drm_zesim_query_engine_cycles)
										   : ~0ull;
		if (b->len != want)
			continue;
		const size_t el = rsv_elem(r, b->len);
		for (size_t e = 0; e + el <= b->len; e += el)
			if (zesim_rsv_nonzero(b->data, e + rsv_base(r) + r->off, r->size))
				return 1;
	}
	return 0;
}

/* Set one bit of one must-be-zero field of the call (or nothing, when the
 * field picked is not in it). */
static void set_rsv_byte(unsigned long cmd, void *arg, const zk_blob_t *in, const int *blob_of)
{
	const struct zesim_rsv *r = &zesim_rsv_fields[rnd() % ZESIM_NR_RSV];
	if (r->cmd != cmd)
		return;
	uint8_t *p = NULL;
	if (r->where == RSV_ARG || r->where == RSV_INLINE_OP) {
		p = (uint8_t *)arg + r->off;
	} else if (blob_of[r->where] >= 0 && in[blob_of[r->where]].len) {
		const zk_blob_t *b = &in[blob_of[r->where]];
		const size_t el = rsv_elem(r, b->len), n = b->len / el;
		const size_t at = (n ? rnd() % n : 0) * el + rsv_base(r) + r->off;
		if (at + r->size <= b->len)
			p = (uint8_t *)b->data + at;
	}
	if (p)
		p[rnd() % r->size] |= (uint8_t)(1u << (rnd() % 8));
}

static int one_ioctl(zk_file_t *f)
{
	unsigned long cmd = rnd() % 16 ? cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))] : (unsigned long)rnd();
	union zesim_ioctl_arg a;
	memset(&a, 0, sizeof(a));
	static uint8_t inbuf[4][16384], outbuf[4][16384];
	zk_blob_t in[4];
	zk_out_blob_t out[4];
	unsigned nin = 0, nout = 0;
	int ops_blob = -1, syncs_blob = -1, inst_blob = -1, eci_blob = -1; /* which in[] holds what */
	int props_blob = -1, oacfg_blob = -1;
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
			eci_blob = (int)nin;
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
	case DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD:
		a.ph.handle = (uint32_t)handle();
		a.ph.flags = (uint32_t)val(ZESIM_PRIME_CLOEXEC | ZESIM_PRIME_RDWR);
		break;
	case DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE:
		a.ph.fd = rnd() % 4 ? prime_fd : (int32_t)val(rnd() % 64);
		a.ph.flags = (uint32_t)val(0);
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
			ops_blob = (int)nin;
			in[nin++] = (zk_blob_t){inbuf[0], (uint32_t)(n * sizeof(struct drm_zesim_vm_bind_op))};
		}
		if (a.vb.num_syncs) {
			uint32_t n = rnd() % 8 ? a.vb.num_syncs : (uint32_t)(rnd() % 5);
			if (n > 200)
				n = 200;
			for (uint32_t i = 0; i < n; i++)
				fill_sync((struct drm_zesim_sync *)inbuf[1] + i);
			syncs_blob = (int)nin;
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
		inst_blob = (int)nin;
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
			syncs_blob = (int)nin;
			in[nin++] = (zk_blob_t){inbuf[0], (uint32_t)(n * sizeof(struct drm_zesim_sync))};
		}
		break;
	case DRM_IOCTL_ZESIM_OBSERVATION: {
		static const char *uuids[] = {"01234567-89ab-cdef-0123-456789abcdef", "11111111-2222-3333-4444-555555555555",
					      "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "01234567-89ab-cdef-0123-456789abcdeX"};
		a.obs.observation_type = val(0);
		a.obs.observation_op = val(rnd() % 3);
		a.obs.param = rnd() % 16 ? 0x6000 : 0;
		if (!a.obs.param)
			break;
		if (a.obs.observation_op == ZESIM_OBSERVATION_OP_STREAM_OPEN) {
			uint32_t n = rnd() % 8 ? 3 + rnd() % 4 : 15 + rnd() % 4;
			props_blob = (int)nin;
			in[nin++] = (zk_blob_t){inbuf[0], fill_props(inbuf[0], n)};
		} else if (a.obs.observation_op == ZESIM_OBSERVATION_OP_ADD_CONFIG) {
			struct drm_zesim_oa_config *c = (void *)inbuf[0];
			memset(c, 0, sizeof(*c));
			memcpy(c->uuid, uuids[rnd() % 4], 36);
			c->n_regs = (uint32_t)val(1 + rnd() % 4);
			c->regs_ptr = rnd() % 16 ? 0x7000 : 0;
			corrupt(c, sizeof(*c));
			oacfg_blob = (int)nin;
			in[nin++] = (zk_blob_t){inbuf[0], rnd() % 16 ? (uint32_t)sizeof(*c) : (uint32_t)(rnd() % 64)};
			if (c->regs_ptr && c->n_regs) {
				uint32_t n = rnd() % 8 ? c->n_regs : (uint32_t)(rnd() % 5);
				if (n > 100)
					n = 100;
				uint32_t *r = (void *)inbuf[1];
				for (uint32_t i = 0; i < n; i++) {
					r[2 * i] = (uint32_t)val(ZS_REG_OA_BC_SEL0 + 4 * (rnd() % 16));
					r[2 * i + 1] = (uint32_t)rnd();
				}
				in[nin++] = (zk_blob_t){inbuf[1], n * 8};
			}
		} else {
			uint64_t *id = (void *)inbuf[0];
			*id = val(1 + rnd() % 4);
			in[nin++] = (zk_blob_t){inbuf[0], rnd() % 16 ? 8u : (uint32_t)(rnd() % 16)};
		}
		break;
	}
	case DRM_IOCTL_ZESIM_EUDEBUG_CONNECT:
		a.dc.pid = rnd() % 8 ? (uint64_t)pids[rnd() % 4] : val(rnd() % 4);
		a.dc.flags = (uint32_t)val(rnd() % 2);
		break;
	case DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE: {
		const uint32_t len = (uint32_t)(rnd() % 8 ? 1 + rnd() % 256 : rnd() % 16384);
		a.mc.type = val(0);
		a.mc.user_addr = 0x9000;
		a.mc.len = rnd() % 16 ? len : val(len);
		a.mc.vm_id = (uint32_t)handle();
		a.mc.load_addr = va();
		a.mc.load_size = val(4096);
		a.mc.ack_fence_addr = va();
		a.mc.ack_fence_value = rnd();
		in[nin++] = (zk_blob_t){inbuf[0], rnd() % 16 ? len : (uint32_t)(rnd() % 16384)};
		break;
	}
	case DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY:
		a.md.metadata_id = (uint32_t)handle();
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
	const int blob_of[] = {[RSV_ARG] = -1, [RSV_INLINE_OP] = -1, [RSV_OPS] = ops_blob,
			       [RSV_SYNCS] = syncs_blob, [RSV_INSTANCE] = inst_blob, [RSV_ECI] = eci_blob,
			       [RSV_PROPS] = props_blob, [RSV_OA_CONFIG] = oacfg_blob};
	uint32_t size = (uint32_t)_IOC_SIZE(cmd);
	if (size > sizeof(a) || rnd() % 16 == 0)
		size = (uint32_t)(rnd() % sizeof(a));
	/* The must-fail twin: in 1 of 4 calls, first the same call with one
	 * must-be-zero byte set (in the argument or a struct it points to); it
	 * must fail, and so change nothing, whatever the call itself returns. */
	if (size == (uint32_t)_IOC_SIZE(cmd) && rnd() % 4 == 0) {
		static uint8_t twin_in[4][16384];
		uint8_t twin[sizeof(a)];
		zk_blob_t tin[4];
		memcpy(twin, &a, sizeof(a));
		for (unsigned i = 0; i < nin; i++) {
			memcpy(twin_in[i], in[i].data, in[i].len);
			tin[i] = (zk_blob_t){twin_in[i], in[i].len};
		}
		for (int tries = 0; tries < 8 && !must_fail(cmd, twin, tin, blob_of); tries++)
			set_rsv_byte(cmd, twin, tin, blob_of);
		if (must_fail(cmd, twin, tin, blob_of)) {
			int rc = zk_ioctl(f, cmd, twin, size, tin, nin, out, nout);
			if (rc == ZK_PENDING && cmd == DRM_IOCTL_ZESIM_WAIT_USER_FENCE)
				rc = zk_wait_check(f, twin);
			zk_fd_t *nf = zk_fd_take_new(f_kmd);
			if (nf)
				zk_fd_close(nf);
			must_fail_calls++;
			if (rc >= 0) {
				fprintf(stderr, "kmd_fuzz: ioctl %s with a non-zero must-be-zero field returned %d, must fail\n",
					zesim_ioctl_find(cmd)->name, rc);
				abort();
			}
		}
	}
	const int fail = size == (uint32_t)_IOC_SIZE(cmd) && must_fail(cmd, &a, in, blob_of);
	int rc = zk_ioctl(f, cmd, &a, size, in, nin, out, nout);
	if (rc == ZK_PENDING && cmd == DRM_IOCTL_ZESIM_WAIT_USER_FENCE)
		rc = zk_wait_check(f, &a);
	/* An fd the call made (an OA stream): the daemon would hand it out; here it is
	 * closed at once or left to its file's close. */
	if (cmd == DRM_IOCTL_ZESIM_OBSERVATION && rc > 0)
		oa_ids[rnd() % 4] = (uint64_t)rc;
	zk_fd_t *nf = zk_fd_take_new(f_kmd);
	dbg_connects += cmd == DRM_IOCTL_ZESIM_EUDEBUG_CONNECT && rc == 0;
	if (nf && cmd == DRM_IOCTL_ZESIM_EUDEBUG_CONNECT && rc == 0 && rnd() % 4)
		keep_fd(&dbg_fds[rnd() % NDBG], nf);
	else if (nf && rnd() % 8)
		zk_fd_close(nf);
	const int pf = zk_prime_take_fd(f_kmd); /* as the daemon takes it */
	if (pf >= 0)
		prime_fd = pf;
	if (!allowed(rc)) {
		fprintf(stderr, "kmd_fuzz: ioctl 0x%lx returned %d\n", cmd, rc);
		abort();
	}
	if (fail) {
		must_fail_calls++;
		if (rc >= 0) {
			fprintf(stderr, "kmd_fuzz: ioctl %s with a non-zero must-be-zero field returned %d, must fail\n",
				zesim_ioctl_find(cmd) ? zesim_ioctl_find(cmd)->name : "?", rc);
			abort();
		}
	}
	return rc;
}

/* A random call on a kept debug fd (its six ioctls, an unknown one, read) or VM fd. */
static void one_fd_op(void)
{
	static uint8_t buf[16384], bits[256];
	zk_fd_t *fd = dbg_fds[rnd() % NDBG];
	zk_fd_t *vfd = vm_fds[rnd() % NDBG];
	long rc;
	if (vfd && rnd() % 3 == 0) {
		const uint32_t len = (uint32_t)(rnd() % 2 ? rnd() % 64 : rnd() % sizeof(buf));
		const uint64_t off = rnd() % 2 ? va() + rnd() % 8192 : val(ZESIM_DEBUG_AREA_VA + rnd() % (1u << 20));
		rc = rnd() % 2 ? zk_fd_pread(vfd, buf, len, off) : zk_fd_pwrite(vfd, buf, len, off);
		vm_ios++;
		if (!(rc >= 0 && rc <= len) && rc != -EFAULT && rc != -EIO) {
			fprintf(stderr, "kmd_fuzz: VM fd pread/pwrite of %u bytes at 0x%llx returned %ld\n", len,
				(unsigned long long)off, rc);
			abort();
		}
		return;
	}
	if (!fd)
		return;
	union {
		struct drm_zesim_eudebug_read_event r;
		struct drm_zesim_eudebug_ack_event a;
		struct drm_zesim_eudebug_vm_open v;
		struct drm_zesim_eudebug_eu_control c;
		struct drm_zesim_eudebug_read_metadata m;
		struct drm_zesim_eudebug_info i;
		uint8_t raw[128];
	} a;
	memset(&a, 0, sizeof(a));
	static const unsigned long fcmds[] = {ZESIM_EUDEBUG_IOCTL_READ_EVENT, ZESIM_EUDEBUG_IOCTL_ACK_EVENT,
					      ZESIM_EUDEBUG_IOCTL_VM_OPEN, ZESIM_EUDEBUG_IOCTL_EU_CONTROL,
					      ZESIM_EUDEBUG_IOCTL_READ_METADATA, ZESIM_EUDEBUG_IOCTL_INFO};
	const unsigned long cmd = rnd() % 16 ? fcmds[rnd() % 6] : (unsigned long)rnd();
	zk_blob_t in = {bits, 0};
	zk_out_blob_t out = {buf, (uint32_t)(rnd() % 1024)};
	unsigned nin = 0, nout = rnd() % 8 ? 1 : 0;
	const uint64_t client = rnd() % 4 ? 1 + rnd() % 12 : val(0); /* serials are small */
	switch (cmd) {
	case ZESIM_EUDEBUG_IOCTL_READ_EVENT:
		a.r.event_size = (uint32_t)(rnd() % 2 ? out.len : val(64));
		a.r.flags = (uint32_t)val(0);
		break;
	case ZESIM_EUDEBUG_IOCTL_ACK_EVENT:
		a.a.type = (uint32_t)val(ZESIM_EUDEBUG_EVENT_MODULE);
		a.a.seqno = val(rnd() % 32);
		break;
	case ZESIM_EUDEBUG_IOCTL_VM_OPEN:
		a.v.client_handle = client;
		a.v.vm_handle = handle();
		a.v.flags = val(0);
		break;
	case ZESIM_EUDEBUG_IOCTL_EU_CONTROL:
		a.c.client_handle = client;
		a.c.cmd = (uint32_t)val(rnd() % 4);
		a.c.bitmask_size = (uint32_t)val(4 * (rnd() % 5));
		a.c.exec_queue_handle = rnd() % 2 ? 0 : handle();
		for (unsigned i = 0; i < sizeof(bits); i++)
			bits[i] = rnd() % 4 ? 0 : (uint8_t)rnd();
		in.len = rnd() % 8 ? (a.c.bitmask_size < sizeof(bits) ? a.c.bitmask_size : 0) : (uint32_t)(rnd() % 64);
		nin = in.len ? 1 : 0;
		break;
	case ZESIM_EUDEBUG_IOCTL_READ_METADATA:
		a.m.client_handle = client;
		a.m.metadata_handle = handle();
		a.m.size = val(out.len);
		break;
	default:
		break;
	}
	corrupt(&a, sizeof(a));
	uint32_t size = (uint32_t)_IOC_SIZE(cmd);
	if (size > sizeof(a) || rnd() % 16 == 0)
		size = (uint32_t)(rnd() % sizeof(a));
	rc = zk_fd_ioctl(fd, cmd, &a, size, &in, nin, &out, nout);
	dbg_calls++;
	dbg_ok += rc == 0;
	zk_fd_t *nf = zk_fd_take_new(f_kmd);
	if (nf && rc == 0 && cmd == ZESIM_EUDEBUG_IOCTL_VM_OPEN)
		keep_fd(&vm_fds[rnd() % NDBG], nf);
	else if (nf)
		zk_fd_close(nf);
	if (!allowed((int)rc) || (rc > 0 && rc != ZK_PENDING && cmd != ZESIM_EUDEBUG_IOCTL_VM_OPEN && rc < 1000000 && rc)) {
		fprintf(stderr, "kmd_fuzz: debug fd ioctl 0x%lx returned %ld\n", cmd, rc);
		abort();
	}
	if (nout && out.len > 1024) {
		fprintf(stderr, "kmd_fuzz: debug fd ioctl 0x%lx wrote %u bytes into a smaller buffer\n", cmd, out.len);
		abort();
	}
	(void)zk_fd_poll(fd);
}

int main(int argc, char **argv)
{
	state = argc > 1 ? strtoull(argv[1], NULL, 0) * 2654435761u + 1 : 1;
	const long iterations = argc > 2 ? atol(argv[2]) : 200000;
	zs_hw_t *hw = fake_hw_create(64ull << 20);
	zk_kmd_t *k = zk_create(hw);
	f_kmd = k;
	if (!k) {
		fprintf(stderr, "kmd_fuzz: the KMD refused the fake device\n");
		return 1;
	}
	/* The pids of the files: this process, a child that only exists (a target CONNECT
	 * may reach), two fake ones.  One connection first makes the debug area (kept until
	 * zk_destroy, outside the leak check). */
	const pid_t child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		for (;;)
			pause();
	}
	pids[0] = getpid(), pids[1] = child, pids[2] = 1000, pids[3] = 1001;
	{
		zk_file_t *t = zk_open(k, child), *d = zk_open(k, getpid());
		struct drm_zesim_eudebug_connect c = {.pid = (uint64_t)child};
		if (zk_ioctl(d, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c, sizeof(c), NULL, 0, NULL, 0)) {
			fprintf(stderr, "kmd_fuzz: CONNECT to a child process failed\n");
			kill(child, SIGKILL);
			return 1;
		}
		zk_close(d);
		zk_close(t);
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
			*f = zk_open(k, pids[rnd() % 4]);
			continue;
		}
		if (rnd() % 4 == 0) {
			one_fd_op();
			zk_service(k);
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
	for (int i = 0; i < NDBG; i++) {
		if (dbg_fds[i])
			zk_fd_close(dbg_fds[i]);
		if (vm_fds[i])
			zk_fd_close(vm_fds[i]);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	zk_stats_t end;
	zk_get_stats(k, &end);
	printf("kmd_fuzz: EU debug: %ld connections, %ld debug fd ioctls (%ld accepted), %ld VM fd reads/writes\n",
	       dbg_connects, dbg_calls, dbg_ok, vm_ios);
	printf("kmd_fuzz: %ld ioctls accepted, %ld rejected; %ld calls with a must-be-zero field set, all failed; peak objects in the last state: %u BOs, %u VMs, %u queues; "
	       "%llu jobs completed\n",
	       ok, rejected, must_fail_calls, mid.bos, mid.vms, mid.queues, (unsigned long long)end.jobs_completed);
	if (end.files || end.bos || end.vms || end.queues || end.jobs || end.bo_bytes || end.pt_bytes ||
	    end.free_bytes != start.free_bytes) {
		fprintf(stderr, "kmd_fuzz: leak after closing every file: %u BOs %u VMs %u queues %u jobs, %llu bytes\n",
			end.bos, end.vms, end.queues, end.jobs, (unsigned long long)(start.free_bytes - end.free_bytes));
		return 1;
	}
	if (must_fail_calls == 0) {
		fprintf(stderr, "kmd_fuzz: no call had a must-be-zero field set: the generator is broken\n");
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
