/* Byte-exact marshalling of the preload library (tests/kmd/test_marshal.py runs
 * this under LD_PRELOAD against a daemon).  Every ioctl that writes back (its
 * argument, _IOC_READ, or an out buffer of uapi/zesim_ioctl_table.h) is made
 * twice: through the shim on the render node, and directly on a KMD linked into
 * this process on the fake hardware interface (tests/kmd/fake_hw.c), set up with
 * the daemon's device parameters (read through the shim: topology, clocks, SLM,
 * memory size).  Out buffers are filled beforehand with a pattern (0xa5, then
 * 0x5a) and extend 64 guard bytes past the length the call names; after the call
 * the whole buffer, guard included, and the argument must be identical byte for
 * byte between the two, and so must the return value: every byte the KMD writes
 * is copied back, none past what it writes.  The time fields of ENGINE_CYCLES
 * differ by nature: there only "written" (not the pattern) is checked.
 * OBSERVATION's buffers (a property chain, a config and its nested register array,
 * a config id, by op) are found from the table as the preload finds them; its
 * results are compared (ids, errno; a stream fd against 0), and the stream fd's
 * _IOR ioctls (STATUS, INFO) and CONFIG through the shim against the KMD's.
 * Prints one line per call; exits 1 with a message on the first difference. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "fake_hw.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_ioctl_table.h"
#include "zs/hw_if.h"
#include "zs/oa_report.h"

#define GUARD 64
#define MAXBUF 4096

static int fd;
static zk_kmd_t *k;
static zk_file_t *kf;
static unsigned ncalls;
/* Of a buffer the KMD reads and writes (DEVICE_QUERY's), how many leading bytes
 * of the caller's are input; the rest is the pattern, as in the caller's memory
 * (a calloc'ed buffer would hide bytes not copied back). */
static uint32_t inout_input;
/* The first fd an ioctl made (an OA stream): through the shim, in the KMD. */
static int last_fd_shim;
static zk_fd_t *last_fd_kmd;

#define FAIL(...)                                                                                                     \
	do {                                                                                                          \
		fprintf(stderr, "kmd_marshal: ");                                                                     \
		fprintf(stderr, __VA_ARGS__);                                                                         \
		fprintf(stderr, "\n");                                                                                \
		exit(1);                                                                                              \
	} while (0)

/* Bytes [skip_off, skip_off + skip_len) of out buffer 0 are not compared (time). */
typedef struct skip {
	uint32_t off, len;
} skip_t;

static void hexdiff(const char *what, const uint8_t *shim, const uint8_t *kmd, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (shim[i] != kmd[i]) {
			fprintf(stderr, "kmd_marshal:   %s byte %zu: through the shim 0x%02x, from the KMD 0x%02x\n", what, i,
				shim[i], kmd[i]);
		}
}

/* One call both ways; `label` names it.  arg is the argument as the program
 * passes it (its user pointers are replaced by this function's buffers). */
static int both(const char *label, unsigned long cmd, const void *arg0, const skip_t *skips, unsigned nskips)
{
	const struct zesim_ioctl_desc *d = zesim_ioctl_find(cmd);
	if (!d)
		FAIL("%s: not in the table", label);
	const uint32_t size = (uint32_t)_IOC_SIZE(cmd);
	int rc_first = 0;
	for (int pass = 0; pass < 2; pass++) {
		const uint8_t pat = pass ? 0x5a : 0xa5;
		static uint8_t sbuf[3][MAXBUF + GUARD], kbuf[3][MAXBUF + GUARD];
		uint8_t sarg[512], karg[512];
		memcpy(sarg, arg0, size);
		/* The user buffers: in buffers are the program's (the caller's pointers),
		 * out buffers (and in/out ones) are ours, prefilled. */
		zk_blob_t in[4];
		zk_out_blob_t out[4];
		unsigned nin = 0, nout = 0;
		uint32_t outlen[4] = {0};
		int at[4] = {-1, -1, -1, -1};
		static uint8_t chain[4][MAXBUF];
		for (unsigned i = 0; i < d->nuptr; i++) {
			const struct zesim_uptr *u = &d->uptr[i];
			if (!zesim_uptr_selected(u, sarg))
				continue;
			const void *from = sarg;
			uint32_t from_len = size;
			if (u->flags & ZESIM_UPTR_NESTED) {
				if (at[u->parent] < 0)
					continue;
				from = in[at[u->parent]].data;
				from_len = in[at[u->parent]].len;
			}
			int present;
			uint64_t addr;
			uint32_t len;
			if (zesim_uptr_resolve_in(u, from, from_len, &present, &addr, &len))
				FAIL("%s: buffer too large", label);
			if (!(u->flags & ZESIM_UPTR_OUT)) {
				if (present && (u->flags & ZESIM_UPTR_CHAIN)) {
					len = 0;
					for (uint32_t l = 0; addr && l <= u->max_links; l++) {
						memcpy(chain[nin] + len, (const void *)(uintptr_t)addr, u->elem);
						memcpy(&addr, chain[nin] + len, 8);
						len += u->elem;
					}
					at[i] = (int)nin;
					in[nin++] = (zk_blob_t){chain[at[i]], len};
				} else if (present) {
					at[i] = (int)nin;
					in[nin++] = (zk_blob_t){(const uint8_t *)(uintptr_t)addr, len};
				}
				continue;
			}
			if (len > MAXBUF)
				FAIL("%s: out buffer larger than the test's", label);
			memset(sbuf[nout], pat, sizeof(sbuf[nout]));
			memset(kbuf[nout], pat, sizeof(kbuf[nout]));
			if (present && (u->flags & ZESIM_UPTR_IN) && addr) {
				static uint8_t kin[3][MAXBUF];
				const uint32_t keep = inout_input < len ? inout_input : len;
				memcpy(sbuf[nout], (const void *)(uintptr_t)addr, keep);
				memcpy(kbuf[nout], (const void *)(uintptr_t)addr, keep);
				memcpy(kin[nout], kbuf[nout], len);
				in[nin++] = (zk_blob_t){kin[nout], len};
			}
			if (addr) {
				const uint64_t p = (uintptr_t)sbuf[nout];
				memcpy(sarg + u->ptr, &p, 8);
			}
			outlen[nout] = present ? len : 0;
			out[nout] = (zk_out_blob_t){kbuf[nout], present ? len : 0};
			nout++;
		}
		memcpy(karg, sarg, size);
		errno = 0;
		int srv = ioctl(fd, cmd, sarg);
		int src = srv >= 0 ? srv : -errno;
		int krc = zk_ioctl(kf, cmd, karg, size, in, nin, nout ? out : NULL, nout);
		if (krc == ZK_PENDING)
			krc = -ETIME;
		zk_fd_t *made = zk_fd_take_new(k);
		if (made && krc == 0) { /* an fd: the shim's is a number of the program's */
			if (src < 0)
				FAIL("%s: the KMD made an fd, the shim returned %d", label, src);
			if (!last_fd_shim) {
				last_fd_shim = src, last_fd_kmd = made;
				zk_fd_attach(made, &last_fd_shim);
			} else {
				close(src);
				zk_fd_close(made);
			}
			src = 0;
		} else if (made) {
			zk_fd_close(made);
		}
		if (src != krc)
			FAIL("%s: through the shim %d (%s), from the KMD %d (%s)", label, src, strerror(-src), krc,
			     strerror(-krc));
		if ((_IOC_DIR(cmd) & _IOC_READ) && memcmp(sarg, karg, size)) {
			hexdiff("argument", sarg, karg, size);
			FAIL("%s: the argument differs (pattern %#x)", label, pat);
		}
		for (unsigned o = 0; o < nout; o++) {
			/* Bytes the KMD must write whatever the time: not compared, but written. */
			for (unsigned s = 0; s < nskips && o == 0 && krc == 0; s++) {
				int all_pat = 1;
				for (uint32_t i = 0; i < skips[s].len; i++)
					all_pat &= sbuf[o][skips[s].off + i] == pat;
				if (all_pat)
					FAIL("%s: out buffer bytes %u..%u not written through the shim", label, skips[s].off,
					     skips[s].off + skips[s].len - 1);
				memcpy(kbuf[o] + skips[s].off, sbuf[o] + skips[s].off, skips[s].len);
			}
			if (memcmp(sbuf[o], kbuf[o], outlen[o] + GUARD)) {
				hexdiff("out buffer", sbuf[o], kbuf[o], outlen[o] + GUARD);
				FAIL("%s: out buffer %u (%u bytes + %u guard) differs (pattern %#x)", label, o, outlen[o],
				     GUARD, pat);
			}
		}
		if (pass == 0)
			rc_first = krc;
		/* A call that creates something creates another on its second pass,
		 * identically in both KMDs, so it is still compared. */
		ncalls++;
	}
	printf("kmd_marshal: %-40s rc %d, identical through the shim and from the KMD\n", label, rc_first);
	return rc_first;
}

static void query(const char *name, uint32_t q, void *data, uint32_t *size_out, const skip_t *sk, unsigned nsk)
{
	char label[96];
	struct drm_zesim_device_query a = {.query = q};
	snprintf(label, sizeof(label), "DEVICE_QUERY %s size", name);
	both(label, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a, NULL, 0);
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
		FAIL("DEVICE_QUERY %s size: %s", name, strerror(errno));
	*size_out = a.size;
	a.data = (uintptr_t)data;
	snprintf(label, sizeof(label), "DEVICE_QUERY %s (%u bytes)", name, a.size);
	both(label, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a, sk, nsk);
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
		FAIL("DEVICE_QUERY %s: %s", name, strerror(errno));
	/* A wrong size is refused and writes nothing. */
	a.size -= 8;
	snprintf(label, sizeof(label), "DEVICE_QUERY %s (8 bytes short)", name);
	both(label, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a, NULL, 0);
}

/* A stream fd ioctl both ways, the argument prefilled with a pattern. */
static void fd_both(const char *label, unsigned long cmd, const void *arg0)
{
	const uint32_t size = (uint32_t)_IOC_SIZE(cmd);
	for (int pass = 0; pass < 2; pass++) {
		uint8_t sarg[256], karg[256];
		memset(sarg, pass ? 0x5a : 0xa5, sizeof(sarg));
		if (arg0)
			memcpy(sarg, arg0, size);
		memcpy(karg, sarg, sizeof(karg));
		errno = 0;
		const int srv = ioctl(last_fd_shim, cmd, size ? sarg : NULL);
		const int src = srv >= 0 ? srv : -errno;
		const int krc = zk_fd_ioctl(last_fd_kmd, cmd, size ? karg : NULL, size, NULL, 0, NULL, 0);
		if (src != krc)
			FAIL("%s: through the shim %d, from the KMD %d", label, src, krc);
		if (memcmp(sarg, karg, sizeof(sarg))) {
			hexdiff("argument", sarg, karg, sizeof(sarg));
			FAIL("%s: the argument (and what follows it) differs", label);
		}
		ncalls++;
	}
	printf("kmd_marshal: %-40s identical through the shim and from the KMD\n", label);
}

/* OBSERVATION: the variants of its param, and the stream fd's ioctls. */
static void observation(void)
{
	static uint8_t q[MAXBUF];
	uint32_t n;
	query("OA_UNITS", ZESIM_QUERY_OA_UNITS, q, &n, NULL, 0);
	const uint32_t regs[3][2] = {{ZS_REG_OA_BC_SEL0, 4}, {ZS_REG_OA_BC_SEL8, 0x00010020}, {ZS_REG_OA_BC_SEL15, 1}};
	struct drm_zesim_oa_config c = {.n_regs = 3, .regs_ptr = (uintptr_t)regs};
	memcpy(c.uuid, "01234567-89ab-cdef-0123-456789abcdef", 36);
	struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG,
						.param = (uintptr_t)&c};
	both("OBSERVATION ADD_CONFIG (id, then in use)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	c.uuid[0] = '1';
	c.n_regs = 65;
	both("OBSERVATION ADD_CONFIG (65 registers)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	c.n_regs = 0;
	both("OBSERVATION ADD_CONFIG (no register)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	c.n_regs = 1;
	c.regs_ptr = 0;
	both("OBSERVATION ADD_CONFIG (regs_ptr NULL)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	uint64_t id = 77;
	p = (struct drm_zesim_observation_param){.observation_op = ZESIM_OBSERVATION_OP_REMOVE_CONFIG,
						 .param = (uintptr_t)&id};
	both("OBSERVATION REMOVE_CONFIG (unknown)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	struct drm_zesim_ext_set_property props[18];
	memset(props, 0, sizeof(props));
	const uint64_t vals[][2] = {{ZESIM_OA_PROPERTY_SAMPLE_OA, 1},
				    {ZESIM_OA_PROPERTY_OA_METRIC_SET, 1},
				    {ZESIM_OA_PROPERTY_OA_FORMAT, ZS_OA_FORMAT_A32u40_A4u32_B8_C8},
				    {ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, 20},
				    {ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, 128u << 10},
				    {ZESIM_OA_PROPERTY_OA_DISABLED, 1}};
	for (unsigned i = 0; i < 18; i++) {
		props[i].property = i < 6 ? (uint32_t)vals[i][0] : ZESIM_OA_PROPERTY_OA_UNIT_ID;
		props[i].value = i < 6 ? vals[i][1] : 0;
		props[i].base.next_extension = i + 1 < 17 ? (uintptr_t)&props[i + 1] : 0;
	}
	p = (struct drm_zesim_observation_param){.observation_op = ZESIM_OBSERVATION_OP_STREAM_OPEN,
						 .param = (uintptr_t)props};
	both("OBSERVATION STREAM_OPEN (17 links)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	props[15].base.next_extension = 0;
	props[3].pad = 1;
	both("OBSERVATION STREAM_OPEN (pad of link 3)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	props[3].pad = 0;
	both("OBSERVATION STREAM_OPEN (16 links: fd, EBUSY)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	p.param = 0;
	both("OBSERVATION STREAM_OPEN (param NULL)", DRM_IOCTL_ZESIM_OBSERVATION, &p, NULL, 0);
	if (!last_fd_shim) {
		printf("kmd_marshal: no OA unit: the stream fd's ioctls not checked\n");
		return;
	}
	struct drm_zesim_oa_stream_info info = {0};
	fd_both("stream INFO", ZESIM_OBSERVATION_IOCTL_INFO, &info);
	struct drm_zesim_oa_stream_status st = {0};
	fd_both("stream STATUS", ZESIM_OBSERVATION_IOCTL_STATUS, &st);
	struct drm_zesim_ext_set_property cp = {.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 1};
	fd_both("stream CONFIG (previous id)", ZESIM_OBSERVATION_IOCTL_CONFIG, &cp);
	cp.value = 5;
	fd_both("stream CONFIG (unknown id)", ZESIM_OBSERVATION_IOCTL_CONFIG, &cp);
	fd_both("stream ENABLE", ZESIM_OBSERVATION_IOCTL_ENABLE, NULL);
	fd_both("stream DISABLE", ZESIM_OBSERVATION_IOCTL_DISABLE, NULL);
	fd_both("stream unknown ioctl", _IOR('i', 0x7, struct drm_zesim_oa_stream_info), &info);
	close(last_fd_shim);
	zk_fd_close(last_fd_kmd);
}

int main(void)
{
	fd = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		FAIL("open %s: %s", ZESIM_RENDER_NODE, strerror(errno));

	/* The daemon's device, through the shim, for the KMD in this process. */
	uint64_t cfg[64] = {0};
	uint8_t gt[512] = {0}, topo[512] = {0};
	uint32_t n;
	struct drm_zesim_device_query a = {.query = ZESIM_QUERY_CONFIG};
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a) || a.size > sizeof(cfg))
		FAIL("CONFIG size");
	a.data = (uintptr_t)cfg;
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
		FAIL("CONFIG");
	const uint64_t *info = cfg + offsetof(struct drm_zesim_query_config, info) / 8;
	a = (struct drm_zesim_device_query){.query = ZESIM_QUERY_GT_LIST};
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a) || a.size > sizeof(gt))
		FAIL("GT_LIST size");
	a.data = (uintptr_t)gt;
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
		FAIL("GT_LIST");
	const struct drm_zesim_gt *g = &((struct drm_zesim_query_gt_list *)gt)->gt_list[0];
	a = (struct drm_zesim_device_query){.query = ZESIM_QUERY_GT_TOPOLOGY};
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a) || a.size > sizeof(topo))
		FAIL("GT_TOPOLOGY size");
	a.data = (uintptr_t)topo;
	if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
		FAIL("GT_TOPOLOGY");
	uint32_t nss = 0, neu = 0;
	for (uint32_t off = 0; off + sizeof(struct drm_zesim_query_topology_mask) <= a.size;) {
		const struct drm_zesim_query_topology_mask *t = (const void *)(topo + off);
		uint32_t bits = 0;
		for (uint32_t i = 0; i < t->num_bytes; i++)
			bits += (uint32_t)__builtin_popcount(t->mask[i]);
		if (t->type == ZESIM_TOPO_DSS_COMPUTE)
			nss = bits;
		if (t->type == ZESIM_TOPO_EU_PER_DSS)
			neu = bits;
		off += (uint32_t)sizeof(*t) + ((t->num_bytes + 7) & ~7u);
	}
	const uint32_t per_slice = (uint32_t)info[ZESIM_CONFIG_SUBSLICES_PER_SLICE];
	if (!per_slice || !nss || !neu)
		FAIL("the daemon's topology: %u sub-slices, %u per slice, %u EUs", nss, per_slice, neu);
	zs_hw_t *hw = fake_hw_create(info[ZESIM_CONFIG_VRAM_BYTES] + 0x10000);
	zs_hw_mmio_write(hw, ZS_REG_GT_TOPOLOGY,
			 ZS_FIELD_PREP(GT_TOPOLOGY, SLICES, nss / per_slice) |
				 ZS_FIELD_PREP(GT_TOPOLOGY, SUBSLICES, per_slice) | ZS_FIELD_PREP(GT_TOPOLOGY, EUS, neu) |
				 ZS_FIELD_PREP(GT_TOPOLOGY, THREADS, info[ZESIM_CONFIG_THREADS_PER_EU]));
	zs_hw_mmio_write(hw, ZS_REG_GT_CORE_MHZ, (uint32_t)(g->core_clock / 1000000));
	zs_hw_mmio_write(hw, ZS_REG_GT_TIMESTAMP_KHZ, g->reference_clock / 1000);
	zs_hw_mmio_write(hw, ZS_REG_GT_SLM_KB, (uint32_t)(info[ZESIM_CONFIG_SLM_BYTES_PER_SUBSLICE] / 1024));
	/* The OA block as the daemon has it (OA_UNITS: none when its config says off). */
	{
		uint8_t units[256] = {0};
		a = (struct drm_zesim_device_query){.query = ZESIM_QUERY_OA_UNITS};
		if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a) || a.size > sizeof(units))
			FAIL("OA_UNITS size");
		a.data = (uintptr_t)units;
		if (ioctl(fd, DRM_IOCTL_ZESIM_DEVICE_QUERY, &a))
			FAIL("OA_UNITS");
		fake_hw_set_units(hw, ((struct drm_zesim_query_oa_units *)units)->num_oa_units ? 1 : 0);
	}
	k = zk_create(hw);
	if (!k)
		FAIL("zk_create refused the fake device");
	kf = zk_open(k, (int)getpid());

	/* VERSION: no buffers, short ones, exact, long; a NULL pointer with a length. */
	static char vb[3][128];
	const uint32_t lens[] = {0, 3, 5, 8, 28, 100};
	for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct drm_zesim_version v = {.name_len = lens[i], .date_len = lens[i], .desc_len = lens[i]};
		if (lens[i])
			v.name = vb[0], v.date = vb[1], v.desc = vb[2];
		char label[64];
		snprintf(label, sizeof(label), "VERSION (buffers of %u)", lens[i]);
		both(label, DRM_IOCTL_ZESIM_VERSION, &v, NULL, 0);
	}
	struct drm_zesim_version v = {.name_len = 16, .date = vb[1], .date_len = 4};
	both("VERSION (NULL name of 16, date of 4)", DRM_IOCTL_ZESIM_VERSION, &v, NULL, 0);

	/* Every device query: its size, its data, a wrong size. */
	static uint8_t qdata[MAXBUF];
	memset(qdata, 0, sizeof(qdata));
	query("ENGINES", ZESIM_QUERY_ENGINES, qdata, &n, NULL, 0);
	query("CONFIG", ZESIM_QUERY_CONFIG, qdata, &n, NULL, 0);
	query("GT_LIST", ZESIM_QUERY_GT_LIST, qdata, &n, NULL, 0);
	query("GT_TOPOLOGY", ZESIM_QUERY_GT_TOPOLOGY, qdata, &n, NULL, 0);
	struct drm_zesim_query_engine_cycles *c = (void *)qdata;
	memset(c, 0, sizeof(*c));
	c->eci.engine_class = ZESIM_ENGINE_CLASS_COMPUTE;
	c->clockid = CLOCK_MONOTONIC_RAW;
	const skip_t times[] = {
		{offsetof(struct drm_zesim_query_engine_cycles, engine_cycles), 8},
		{offsetof(struct drm_zesim_query_engine_cycles, cpu_timestamp), 8},
		{offsetof(struct drm_zesim_query_engine_cycles, cpu_delta), 8},
	};
	inout_input = offsetof(struct drm_zesim_query_engine_cycles, width);
	query("ENGINE_CYCLES", ZESIM_QUERY_ENGINE_CYCLES, qdata, &n, times, 3);
	inout_input = 0;
	struct drm_zesim_device_query bad = {.query = 99};
	both("DEVICE_QUERY unknown", DRM_IOCTL_ZESIM_DEVICE_QUERY, &bad, NULL, 0);

	/* The argument-only ioctls that write back: fresh objects in both. */
	struct drm_zesim_vm_create vc = {0};
	both("VM_CREATE", DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0);
	struct drm_zesim_gem_create gc = {.size = 65536, .placement = 1};
	both("GEM_CREATE", DRM_IOCTL_ZESIM_GEM_CREATE, &gc, NULL, 0);
	struct drm_zesim_gem_mmap_offset mo = {.handle = 1};
	both("GEM_MMAP_OFFSET", DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo, NULL, 0);
	struct drm_zesim_vm_bind bind = {.vm_id = 1, .num_binds = 1};
	bind.bind = (struct drm_zesim_vm_bind_op){.obj = 1, .range = 65536, .addr = 0x100000, .op = ZESIM_VM_BIND_OP_MAP};
	both("VM_BIND", DRM_IOCTL_ZESIM_VM_BIND, &bind, NULL, 0); /* second pass: -EEXIST in both */
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = 1,
						 .instances = (uintptr_t)&eci};
	both("EXEC_QUEUE_CREATE", DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, NULL, 0);
	struct drm_zesim_wait_user_fence w = {.addr = 0x100000, .op = ZESIM_UFENCE_OP_EQ, .mask = ~0ull,
					      .exec_queue_id = 1};
	both("WAIT_USER_FENCE (satisfied)", DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w, NULL, 0);
	w.value = 1;
	both("WAIT_USER_FENCE (timeout 0, not satisfied)", DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w, NULL, 0);

	observation();
	printf("kmd_marshal: %u calls, each with two patterns, identical byte for byte\n", ncalls);
	zk_close(kf);
	zk_destroy(k);
	fake_hw_destroy(hw);
	close(fd);
	return 0;
}
