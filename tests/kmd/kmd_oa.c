/* OA streams (kmd_shim/kernel/oa.c, docs/uapi.md "Observation", docs/kmd.md §13)
 * against the fake hardware interface, whose OA block follows model/oa_twin.h's
 * rules (tests/kmd/fake_hw.c): the test makes the reports the block would write.
 * The OBSERVATION argument is marshalled from the ioctl table as the preload library
 * does (variants by op, the nested register array, the property chain).  Checked:
 *   - the OA_UNITS query with and without the OA block (-ENODEV then);
 *   - every errno of ADD_CONFIG, REMOVE_CONFIG and STREAM_OPEN's property chain;
 *   - the register programming of a sampling, a query-mode and a disabled stream
 *     against an expectation written here (final values, and what comes before
 *     the enabling OA_CTL write);
 *   - read(): whole raw reports in order across the buffer's wrap, OA_HEAD moved,
 *     -EAGAIN, -ENOSPC, -EINVAL without SAMPLE_OA; poll at wait_num_reports and the
 *     OA_BUFFER interrupt waking the fd;
 *   - a slow reader: -EIO once, STATUS returns REPORT_LOST|OVERFLOW and clears
 *     them, the reports left in the buffer read intact;
 *   - ENABLE, DISABLE (final MMIO report), CONFIG (previous id), STATUS, INFO;
 *   - a removed config stays valid for its stream; the stream torn down when its fd
 *     closes or its file does (counters off, buffer freed), then a new one opens.
 * Prints one line per scenario; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hw.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "uapi/zesim_ioctl_table.h"
#include "zs/oa_report.h"

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_oa:%d: %s: ", __LINE__, #cond);                                          \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

#define PROP struct drm_zesim_ext_set_property
#define REP ZS_OA_REPORT_BYTES
#define FMT ZS_OA_FORMAT_A32u40_A4u32_B8_C8
#define UUID1 "01234567-89ab-cdef-0123-456789abcdef"
#define UUID2 "11111111-2222-3333-4444-555555555555"

static zs_hw_t *hw;
static zk_kmd_t *k;
static int dummy_user;

static uint32_t reg(uint32_t off) { return zs_hw_mmio_read(hw, off); }

/* The argument's buffers, from the table, as the preload library finds them. */
static int obs(zk_file_t *f, struct drm_zesim_observation_param *p)
{
	const struct zesim_ioctl_desc *d = zesim_ioctl_find(DRM_IOCTL_ZESIM_OBSERVATION);
	EXPECT(d, "OBSERVATION is not in the ioctl table");
	zk_blob_t in[4] = {{0}};
	uint8_t *owned[4] = {0};
	unsigned nin = 0;
	int at[4] = {-1, -1, -1, -1};
	for (unsigned i = 0; i < d->nuptr; i++) {
		const struct zesim_uptr *u = &d->uptr[i];
		if (!zesim_uptr_selected(u, p))
			continue;
		const void *from = p;
		uint32_t from_len = sizeof(*p);
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
			return -EINVAL;
		if (!present)
			continue;
		if (u->flags & ZESIM_UPTR_CHAIN) {
			uint8_t *b = NULL;
			len = 0;
			for (uint32_t n = 0; addr && n <= u->max_links; n++) {
				b = realloc(b, len + u->elem);
				memcpy(b + len, (const void *)(uintptr_t)addr, u->elem);
				memcpy(&addr, b + len, 8);
				len += u->elem;
			}
			owned[nin] = b;
			in[nin] = (zk_blob_t){b, len};
		} else {
			in[nin] = (zk_blob_t){(const uint8_t *)(uintptr_t)addr, len};
		}
		at[i] = (int)nin++;
	}
	int rc = zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, p, sizeof(*p), in, nin, NULL, 0);
	for (unsigned i = 0; i < nin; i++)
		free(owned[i]);
	return rc;
}

static int add_config(zk_file_t *f, const char *uuid, uint32_t n, const uint32_t (*regs)[2])
{
	struct drm_zesim_oa_config c = {.n_regs = n, .regs_ptr = (uintptr_t)regs};
	memcpy(c.uuid, uuid, 36);
	struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG,
						.param = (uintptr_t)&c};
	return obs(f, &p);
}

static int remove_config(zk_file_t *f, uint64_t id)
{
	struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_REMOVE_CONFIG,
						.param = (uintptr_t)&id};
	return obs(f, &p);
}

/* A property list, linked as a chain. */
typedef struct props {
	PROP p[24];
	unsigned n;
} props_t;

static void add(props_t *l, uint32_t property, uint64_t value)
{
	l->p[l->n++] = (PROP){.property = property, .value = value};
}

static props_t sampling(uint64_t config, uint32_t exponent, uint64_t size, uint64_t wait)
{
	props_t l = {.n = 0};
	add(&l, ZESIM_OA_PROPERTY_SAMPLE_OA, 1);
	add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, config);
	add(&l, ZESIM_OA_PROPERTY_OA_FORMAT, FMT);
	add(&l, ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, exponent);
	if (size)
		add(&l, ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, size);
	if (wait)
		add(&l, ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS, wait);
	return l;
}

/* STREAM_OPEN; 0 and the stream's fd object (attached, as the daemon does), or -errno. */
static int open_stream(zk_file_t *f, props_t *l, zk_fd_t **out)
{
	for (unsigned i = 0; i < l->n; i++)
		l->p[i].base.next_extension = i + 1 < l->n ? (uintptr_t)&l->p[i + 1] : 0;
	struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_STREAM_OPEN,
						.param = l->n ? (uintptr_t)&l->p[0] : 0};
	int rc = obs(f, &p);
	zk_fd_t *fd = zk_fd_take_new(k);
	if (rc) {
		EXPECT(!fd, "a failed STREAM_OPEN made an fd");
		return rc;
	}
	EXPECT(fd, "STREAM_OPEN made no fd");
	zk_fd_attach(fd, &dummy_user);
	while (zk_fd_next_event(k))
		;
	if (out)
		*out = fd;
	else
		zk_fd_close(fd);
	return 0;
}

static int sioctl(zk_fd_t *fd, unsigned long cmd, void *arg)
{
	return zk_fd_ioctl(fd, cmd, arg, (uint32_t)_IOC_SIZE(cmd), NULL, 0, NULL, 0);
}

static uint64_t status(zk_fd_t *fd)
{
	struct drm_zesim_oa_stream_status s;
	memset(&s, 0xa5, sizeof(s));
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_STATUS, &s) == 0, "STATUS");
	EXPECT(!s.extensions && !s.reserved[0] && !s.reserved[1] && !s.reserved[2], "STATUS left bytes");
	return s.oa_status;
}

/* A timer report at timestamp ts whose A counters grow by a known amount. */
static void timer_report(uint64_t ts)
{
	uint64_t a[ZS_OA_A_COUNTERS] = {0};
	uint32_t bc[ZS_OA_BC_COUNTERS] = {0};
	for (unsigned i = 0; i < ZS_OA_MARKER_COUNTER; i++)
		a[i] = i + 1;
	a[0] = 0x10000000ull; /* A0 passes 2^32 after 16 reports: the 40-bit high byte */
	bc[3] = 7;
	fake_hw_oa_report(hw, ZS_OA_REASON_TIMER, ts, a, bc);
	zk_service(k);
}

static void check_report(const uint8_t *r, uint32_t reason, uint64_t ts, uint64_t nth)
{
	const uint32_t id = zs_oa_dw(r, ZS_OA_DW_REPORT_ID);
	EXPECT(id >> ZS_OA_ID_REASON_SHIFT == reason, "report %llu reason %#x", (unsigned long long)nth, id);
	EXPECT(zs_oa_dw(r, ZS_OA_DW_TIMESTAMP) == (uint32_t)ts, "report %llu timestamp %u, expected %llu",
	       (unsigned long long)nth, zs_oa_dw(r, ZS_OA_DW_TIMESTAMP), (unsigned long long)ts);
	EXPECT(zs_oa_a(r, 0) == nth * 0x10000000ull, "report %llu A0 %llx", (unsigned long long)nth,
	       (unsigned long long)zs_oa_a(r, 0));
	EXPECT(zs_oa_a(r, 5) == nth * 6, "report %llu A5", (unsigned long long)nth);
	EXPECT(zs_oa_dw(r, ZS_OA_DW_B + 3) == nth * 7, "report %llu B3", (unsigned long long)nth);
}

static zs_hw_t *fresh(int units)
{
	if (k)
		zk_destroy(k);
	if (hw)
		fake_hw_destroy(hw);
	hw = fake_hw_create(64ull << 20);
	fake_hw_set_units(hw, units);
	k = zk_create(hw);
	EXPECT(k, "zk_create");
	return hw;
}

static zk_stats_t stats(void)
{
	zk_stats_t s;
	zk_get_stats(k, &s);
	return s;
}

static const uint32_t regs1[2][2] = {{ZS_REG_OA_BC_SEL3, 0x00030020}, {ZS_REG_OA_BC_SEL9, 7}};

static void test_query(void)
{
	fresh(0);
	zk_file_t *f = zk_open(k, 1);
	struct drm_zesim_device_query q = {.query = ZESIM_QUERY_OA_UNITS};
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, sizeof(q), NULL, 0, NULL, 0) == 0, "size");
	EXPECT(q.size == sizeof(struct drm_zesim_query_oa_units), "no unit: size %u", q.size);
	uint8_t buf[256];
	memset(buf, 0xa5, sizeof(buf));
	zk_out_blob_t out = {buf, q.size};
	q.data = (uintptr_t)buf;
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, sizeof(q), NULL, 0, &out, 1) == 0, "data");
	EXPECT(((struct drm_zesim_query_oa_units *)buf)->num_oa_units == 0, "no unit: units");
	EXPECT(add_config(f, UUID1, 2, regs1) == -ENODEV, "ADD_CONFIG without OA");
	props_t l = sampling(1, 5, 0, 0);
	EXPECT(open_stream(f, &l, NULL) == -ENODEV, "STREAM_OPEN without OA");
	EXPECT(!(reg(ZS_REG_IRQ_ENABLE) & ZS_IRQ_OA_BUFFER), "OA interrupt enabled without the block");
	zk_close(f);

	fresh(1);
	f = zk_open(k, 1);
	q = (struct drm_zesim_device_query){.query = ZESIM_QUERY_OA_UNITS};
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, sizeof(q), NULL, 0, NULL, 0) == 0, "size");
	const uint32_t want = sizeof(struct drm_zesim_query_oa_units) + sizeof(struct drm_zesim_oa_unit) +
			      sizeof(struct drm_zesim_engine_class_instance);
	EXPECT(q.size == want, "size %u, expected %u", q.size, want);
	memset(buf, 0xa5, sizeof(buf));
	out = (zk_out_blob_t){buf, q.size};
	q.data = (uintptr_t)buf;
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_DEVICE_QUERY, &q, sizeof(q), NULL, 0, &out, 1) == 0, "data");
	const struct drm_zesim_query_oa_units *us = (const void *)buf;
	const struct drm_zesim_oa_unit *u = (const void *)(buf + sizeof(*us));
	EXPECT(us->num_oa_units == 1 && !us->extensions && !us->pad, "units %u", us->num_oa_units);
	EXPECT(u->oa_unit_id == 0 && u->oa_unit_type == ZESIM_OA_UNIT_TYPE_OAG, "unit id/type");
	EXPECT(u->capabilities ==
		       (ZESIM_OA_CAPS_BASE | ZESIM_OA_CAPS_OA_BUFFER_SIZE | ZESIM_OA_CAPS_WAIT_NUM_REPORTS),
	       "caps %llx", (unsigned long long)u->capabilities);
	EXPECT(u->oa_timestamp_freq == 12500000ull, "timestamp freq %llu", (unsigned long long)u->oa_timestamp_freq);
	EXPECT(u->num_engines == 1 && u->eci[0].engine_class == ZESIM_ENGINE_CLASS_COMPUTE && !u->eci[0].engine_instance,
	       "engines");
	EXPECT(!u->gt_id && !u->reserved1[0] && !u->reserved[0] && !u->reserved[2] && !u->extensions, "zero fields");
	EXPECT(reg(ZS_REG_IRQ_ENABLE) & ZS_IRQ_OA_BUFFER, "OA interrupt not enabled");
	zk_close(f);
	printf("OA_UNITS query: none without the block (OBSERVATION -ENODEV), one OAG unit with it\n");
}

static void test_configs(void)
{
	fresh(1);
	zk_file_t *f = zk_open(k, 1);
	EXPECT(add_config(f, "01234567-89ab-cdef-0123-456789abcdeg", 2, regs1) == -EINVAL, "bad hex");
	EXPECT(add_config(f, "01234567_89ab-cdef-0123-456789abcdef", 2, regs1) == -EINVAL, "bad dash");
	EXPECT(add_config(f, "0123456789ab-cdef-0123-456789abcdef-", 2, regs1) == -EINVAL, "dash moved");
	EXPECT(add_config(f, UUID1, 0, regs1) == -EINVAL, "n_regs 0");
	uint32_t many[65][2];
	for (unsigned i = 0; i < 65; i++)
		many[i][0] = ZS_REG_OA_BC_SEL0 + 4 * (i % 16), many[i][1] = i;
	EXPECT(add_config(f, UUID1, 65, many) == -EINVAL, "n_regs 65");
	EXPECT(add_config(f, UUID1, 2000000, many) == -EINVAL, "n_regs over the table's limit");
	const uint32_t bad_addr[] = {ZS_REG_OA_CTL, ZS_REG_OA_BUF_BASE_LO, ZS_REG_OA_BC_SEL0 - 4, ZS_REG_OA_BC_SEL15 + 4,
				     ZS_REG_OA_BC_SEL0 + 2, ZS_REG_RING_TAIL, 0};
	for (unsigned i = 0; i < sizeof(bad_addr) / 4; i++) {
		const uint32_t r[2][2] = {{ZS_REG_OA_BC_SEL0, 1}, {bad_addr[i], 1}};
		EXPECT(add_config(f, UUID1, 2, r) == -EINVAL, "register %#x accepted", bad_addr[i]);
	}
	{
		struct drm_zesim_oa_config c = {.extensions = 1, .n_regs = 2, .regs_ptr = (uintptr_t)regs1};
		memcpy(c.uuid, UUID1, 36);
		struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_ADD_CONFIG,
							.param = (uintptr_t)&c};
		EXPECT(obs(f, &p) == -EINVAL, "config extensions");
		c.extensions = 0;
		c.regs_ptr = 0;
		EXPECT(obs(f, &p) == -EFAULT, "regs_ptr 0");
		p.param = 0;
		EXPECT(obs(f, &p) == -EFAULT, "param 0");
		p.param = (uintptr_t)&c;
		c.regs_ptr = (uintptr_t)regs1;
		p.extensions = 1;
		EXPECT(obs(f, &p) == -EINVAL, "param extensions");
		p.extensions = 0;
		p.observation_type = 1;
		EXPECT(obs(f, &p) == -EINVAL, "observation type 1");
		p.observation_type = 0;
		p.observation_op = 3;
		EXPECT(obs(f, &p) == -EINVAL, "op 3");
	}
	EXPECT(stats().oa_configs == 0, "failed adds left configs");
	EXPECT(add_config(f, UUID1, 2, regs1) == 1, "first id");
	EXPECT(add_config(f, UUID1, 2, regs1) == -EADDRINUSE, "same uuid");
	EXPECT(add_config(f, "01234567-89AB-CDEF-0123-456789ABCDEF", 1, regs1) == 2, "upper-case uuid");
	EXPECT(add_config(f, UUID2, 64, many) == 3, "64 registers");
	EXPECT(stats().oa_configs == 3, "configs %u", stats().oa_configs);
	EXPECT(remove_config(f, 9) == -ENOENT, "remove unknown");
	EXPECT(remove_config(f, 0) == -ENOENT, "remove 0");
	EXPECT(remove_config(f, 2) == 0, "remove");
	EXPECT(remove_config(f, 2) == -ENOENT, "remove twice");
	EXPECT(add_config(f, "01234567-89AB-CDEF-0123-456789ABCDEF", 1, regs1) == 4, "ids are not reused");
	{
		struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_REMOVE_CONFIG};
		EXPECT(obs(f, &p) == -EFAULT, "REMOVE_CONFIG param 0");
	}
	/* Buffers that do not match the table (what the daemon could be sent). */
	{
		uint64_t id = 1;
		struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_REMOVE_CONFIG,
							.param = (uintptr_t)&id};
		zk_blob_t in[2] = {{(const uint8_t *)&id, 4}, {(const uint8_t *)&id, 8}};
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), in, 1, NULL, 0) == -EINVAL, "short id");
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), in + 1, 0, NULL, 0) == -EINVAL, "no id");
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), in, 2, NULL, 0) == -EINVAL, "two ids");
	}
	zk_close(f);
	printf("ADD_CONFIG / REMOVE_CONFIG: uuid, n_regs 1..64, OA_BC_SEL only, EADDRINUSE, ENOENT, EFAULT, ids from 1\n");
}

static void test_open_errors(void)
{
	fresh(1);
	zk_file_t *f = zk_open(k, 1), *g = zk_open(k, 2);
	EXPECT(add_config(f, UUID1, 2, regs1) == 1, "config");
	/* queue of g */
	struct drm_zesim_vm_create vc = {0};
	EXPECT(zk_ioctl(g, DRM_IOCTL_ZESIM_VM_CREATE, &vc, sizeof(vc), NULL, 0, NULL, 0) == 0, "VM_CREATE");
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vc.vm_id,
						 .instances = (uintptr_t)&eci};
	zk_blob_t ein = {(const uint8_t *)&eci, sizeof(eci)};
	EXPECT(zk_ioctl(g, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, sizeof(qc), &ein, 1, NULL, 0) == 0, "queue");
	const uint64_t free0 = stats().free_bytes;

	struct {
		const char *what;
		uint32_t prop;
		uint64_t value;
		int err;
	} one[] = {
		{"property 0", 0, 0, -EINVAL},
		{"property MAX", ZESIM_OA_PROPERTY_MAX, 0, -EINVAL},
		{"unit 1", ZESIM_OA_PROPERTY_OA_UNIT_ID, 1, -EINVAL},
		{"SAMPLE_OA 2", ZESIM_OA_PROPERTY_SAMPLE_OA, 2, -EINVAL},
		{"metric set 0", ZESIM_OA_PROPERTY_OA_METRIC_SET, 0, -EINVAL},
		{"metric set 9", ZESIM_OA_PROPERTY_OA_METRIC_SET, 9, -EINVAL},
		{"format A12", ZESIM_OA_PROPERTY_OA_FORMAT, 2u << 8, -EINVAL},
		{"exponent 32", ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, 32, -EINVAL},
		{"disabled 2", ZESIM_OA_PROPERTY_OA_DISABLED, 2, -EINVAL},
		{"another file's queue", ZESIM_OA_PROPERTY_EXEC_QUEUE_ID, qc.exec_queue_id, -ENOENT},
		{"engine instance 1", ZESIM_OA_PROPERTY_OA_ENGINE_INSTANCE, 1, -EINVAL},
		{"NO_PREEMPT", ZESIM_OA_PROPERTY_NO_PREEMPT, 1, -EINVAL},
		{"NUM_SYNCS 1", ZESIM_OA_PROPERTY_NUM_SYNCS, 1, -EINVAL},
		{"SYNCS", ZESIM_OA_PROPERTY_SYNCS, 0, -EINVAL},
		{"buffer 64 KiB", ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, 64u << 10, -EINVAL},
		{"buffer 384 KiB", ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, 384u << 10, -EINVAL},
		{"buffer 256 MiB", ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, 256u << 20, -EINVAL},
		{"buffer 128 MiB (64 MiB of memory)", ZESIM_OA_PROPERTY_OA_BUFFER_SIZE, 128u << 20, -ENOMEM},
		{"wait 0", ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS, 0, -EINVAL},
		{"wait > size/256", ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS, (16u << 20) / 256 + 1, -EINVAL},
	};
	for (unsigned i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		props_t l = sampling(1, 5, 0, 0);
		add(&l, one[i].prop, one[i].value);
		const int rc = open_stream(f, &l, NULL);
		EXPECT(rc == one[i].err, "%s: %d, expected %d", one[i].what, rc, one[i].err);
	}
	/* Must-be-zero fields of a link, at the first and at the last link. */
	for (int last = 0; last < 2; last++)
		for (unsigned field = 0; field < 5; field++) {
			props_t l = sampling(1, 5, 0, 0);
			PROP *p = &l.p[last ? l.n - 1 : 0];
			if (field == 0)
				p->base.name = 1;
			else if (field == 1)
				p->base.pad = 1;
			else if (field == 2)
				p->pad = 0x100;
			else
				p->reserved[field - 3] = 1ull << 63;
			EXPECT(open_stream(f, &l, NULL) == -EINVAL, "field %u of link %s", field, last ? "last" : "0");
		}
	/* Combinations. */
	{
		props_t l = {.n = 0};
		add(&l, ZESIM_OA_PROPERTY_SAMPLE_OA, 1);
		add(&l, ZESIM_OA_PROPERTY_OA_FORMAT, FMT);
		EXPECT(open_stream(f, &l, NULL) == -EINVAL, "no metric set");
		l = (props_t){.n = 0};
		add(&l, ZESIM_OA_PROPERTY_SAMPLE_OA, 1);
		add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, 1);
		EXPECT(open_stream(f, &l, NULL) == -EINVAL, "SAMPLE_OA without a format");
		l = (props_t){.n = 0};
		add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, 1);
		add(&l, ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT, 3);
		add(&l, ZESIM_OA_PROPERTY_EXEC_QUEUE_ID, 1);
		EXPECT(open_stream(g, &l, NULL) == -EINVAL, "exponent without SAMPLE_OA");
		l = (props_t){.n = 0};
		add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, 1);
		EXPECT(open_stream(f, &l, NULL) == -EINVAL, "neither SAMPLE_OA nor a queue");
		l = sampling(1, 5, 128u << 10, 513);
		EXPECT(open_stream(f, &l, NULL) == -EINVAL, "wait 513 of a 128 KiB buffer");
		l = (props_t){.n = 0};
		EXPECT(open_stream(f, &l, NULL) == -EFAULT, "param 0");
	}
	/* The chain: 16 links open, 17 are too many. */
	{
		props_t l = sampling(1, 5, 0, 0);
		while (l.n < 16)
			add(&l, ZESIM_OA_PROPERTY_OA_UNIT_ID, 0);
		zk_fd_t *fd;
		EXPECT(open_stream(f, &l, &fd) == 0, "16 links");
		zk_fd_close(fd);
		l = sampling(1, 5, 0, 0);
		while (l.n < 17)
			add(&l, ZESIM_OA_PROPERTY_OA_UNIT_ID, 0);
		EXPECT(open_stream(f, &l, NULL) == -E2BIG, "17 links");
		while (l.n < 24)
			add(&l, ZESIM_OA_PROPERTY_OA_UNIT_ID, 0);
		EXPECT(open_stream(f, &l, NULL) == -E2BIG, "24 links");
		/* A loop is a chain without end. */
		l = sampling(1, 5, 0, 0);
		for (unsigned i = 0; i < l.n; i++)
			l.p[i].base.next_extension = (uintptr_t)&l.p[(i + 1) % l.n];
		struct drm_zesim_observation_param p = {.observation_op = ZESIM_OBSERVATION_OP_STREAM_OPEN,
							.param = (uintptr_t)&l.p[0]};
		EXPECT(obs(f, &p) == -E2BIG, "a loop");
		EXPECT(!zk_fd_take_new(k), "fd");
		/* Buffers not as the table says: a torn link, a link ending early, a
		 * chain that goes on past what travelled. */
		l = sampling(1, 5, 0, 0);
		for (unsigned i = 0; i < l.n; i++)
			l.p[i].base.next_extension = i + 1 < l.n ? 1 : 0;
		zk_blob_t in = {(const uint8_t *)l.p, (uint32_t)(l.n * sizeof(PROP) - 8)};
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), &in, 1, NULL, 0) == -EINVAL, "torn");
		in.len = (uint32_t)(l.n * sizeof(PROP));
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), &in, 1, NULL, 0) == 0, "whole");
		zk_fd_close(zk_fd_take_new(k));
		l.p[1].base.next_extension = 0;
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), &in, 1, NULL, 0) == -EINVAL, "early end");
		l.p[1].base.next_extension = 1;
		l.p[l.n - 1].base.next_extension = 1;
		EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_OBSERVATION, &p, sizeof(p), &in, 1, NULL, 0) == -EINVAL, "goes on");
	}
	/* One stream per unit, whoever opens it. */
	{
		props_t l = sampling(1, 5, 0, 0);
		zk_fd_t *fd;
		EXPECT(open_stream(f, &l, &fd) == 0, "open");
		l = sampling(1, 5, 0, 0);
		EXPECT(open_stream(f, &l, NULL) == -EBUSY, "second stream");
		l = (props_t){.n = 0};
		add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, 1);
		add(&l, ZESIM_OA_PROPERTY_EXEC_QUEUE_ID, qc.exec_queue_id);
		EXPECT(open_stream(g, &l, NULL) == -EBUSY, "second stream (query mode, other file)");
		zk_fd_close(fd);
		EXPECT(open_stream(g, &l, &fd) == 0, "query mode on g's queue");
		zk_fd_close(fd);
	}
	EXPECT(stats().oa_streams == 0 && stats().free_bytes == free0, "leak: streams %u free %llu", stats().oa_streams,
	       (unsigned long long)stats().free_bytes);
	zk_close(g);
	zk_close(f);
	printf("STREAM_OPEN: every property's errno, must-be-zero link fields, 16 links / 17 E2BIG, EBUSY\n");
}

/* The writes of `log` to `off`: how many, the value of the last, the index of the last. */
static unsigned writes_to(const uint32_t (*log)[2], unsigned n, uint32_t off, uint32_t *last, int *at)
{
	unsigned c = 0;
	*at = -1;
	for (unsigned i = 0; i < n; i++)
		if (log[i][0] == off) {
			c++;
			*last = log[i][1];
			*at = (int)i;
		}
	return c;
}

static void test_programming(void)
{
	fresh(1);
	zk_file_t *f = zk_open(k, 1);
	EXPECT(add_config(f, UUID1, 2, regs1) == 1, "config");
	const uint64_t free0 = stats().free_bytes;
	fake_hw_mmio_log(hw, 1);
	props_t l = sampling(1, 5, 128u << 10, 4);
	zk_fd_t *fd;
	EXPECT(open_stream(f, &l, &fd) == 0, "open");
	const uint32_t(*log)[2];
	unsigned n = fake_hw_mmio_log_get(hw, &log);
	/* Expected: counters enabled with the timer at exponent 5, context-switch
	 * reports and the buffer; the buffer of 2^17 bytes, 4 KiB aligned, in memory
	 * the allocator gave (free bytes down by 128 KiB); threshold 4; B3 and C1 as
	 * the config says, the others counting nothing. */
	const uint32_t ctl = 1u << 0 | 1u << 1 | 5u << 2 | 1u << 7 | 1u << 8;
	EXPECT(reg(ZS_REG_OA_CTL) == ctl, "OA_CTL %#x, expected %#x", reg(ZS_REG_OA_CTL), ctl);
	EXPECT(reg(ZS_REG_OA_BUF_SIZE) == 17, "OA_BUF_SIZE %u", reg(ZS_REG_OA_BUF_SIZE));
	const uint64_t base = (uint64_t)reg(ZS_REG_OA_BUF_BASE_HI) << 32 | reg(ZS_REG_OA_BUF_BASE_LO);
	EXPECT(base >= 0x10000 && base + (128u << 10) <= (64ull << 20) && !(base & 0xfff), "base %#llx",
	       (unsigned long long)base);
	EXPECT(free0 - stats().free_bytes == 128u << 10, "buffer not allocated");
	EXPECT(reg(ZS_REG_OA_THRESHOLD) == 4, "OA_THRESHOLD %u", reg(ZS_REG_OA_THRESHOLD));
	for (unsigned i = 0; i < 16; i++) {
		const uint32_t want = i == 3 ? 0x00030020 : i == 9 ? 7 : 0xff;
		EXPECT(reg(ZS_REG_OA_BC_SEL0 + 4 * i) == want, "OA_BC_SEL%u %#x", i, reg(ZS_REG_OA_BC_SEL0 + 4 * i));
	}
	EXPECT(reg(ZS_REG_OA_HEAD) == 0 && reg(ZS_REG_OA_TAIL) == 0 && reg(ZS_REG_OA_STATUS) == 0, "head/tail/status");
	/* Order: one write sets ENABLE, after everything else. */
	int enable_at = -1, enables = 0;
	for (unsigned i = 0; i < n; i++)
		if (log[i][0] == ZS_REG_OA_CTL && (log[i][1] & 1))
			enable_at = (int)i, enables++;
	EXPECT(enables == 1, "%d writes enable the counters", enables);
	for (unsigned i = 0; i < n; i++)
		EXPECT((int)i <= enable_at || log[i][0] == ZS_REG_OA_CTL, "write of %#x after enabling", log[i][0]);
	uint32_t last;
	int at;
	EXPECT(writes_to(log, n, ZS_REG_OA_BUF_BASE_LO, &last, &at) >= 1 && at < enable_at, "base");
	EXPECT(writes_to(log, n, ZS_REG_OA_BUF_SIZE, &last, &at) >= 1 && at < enable_at, "size");
	EXPECT(writes_to(log, n, ZS_REG_OA_TRIGGER, &last, &at) == 0, "a trigger at open");
	struct drm_zesim_oa_stream_info info;
	memset(&info, 0xa5, sizeof(info));
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_INFO, &info) == 0 && info.oa_buf_size == 128u << 10 &&
		       !info.extensions && !info.reserved[0] && !info.reserved[2],
	       "INFO");
	/* DISABLE: a final report with reason MMIO, then the counters off. */
	timer_report(64);
	fake_hw_mmio_log(hw, 1);
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_DISABLE, NULL) == 0, "DISABLE");
	n = fake_hw_mmio_log_get(hw, &log);
	EXPECT(n == 2 && log[0][0] == ZS_REG_OA_TRIGGER && log[0][1] == 1 && log[1][0] == ZS_REG_OA_CTL && !(log[1][1] & 1),
	       "DISABLE wrote %u registers", n);
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_DISABLE, NULL) == 0, "DISABLE twice");
	uint8_t buf[4 * REP];
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == 2 * REP, "reports after disable");
	check_report(buf, ZS_OA_REASON_TIMER, 64, 1);
	EXPECT(zs_oa_dw(buf + REP, 0) >> ZS_OA_ID_REASON_SHIFT == ZS_OA_REASON_MMIO, "final report reason");
	/* ENABLE: counters from 0 again. */
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_ENABLE, NULL) == 0 && reg(ZS_REG_OA_CTL) == ctl, "ENABLE");
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_ENABLE, NULL) == 0, "ENABLE twice");
	timer_report(128);
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == REP, "read after ENABLE");
	check_report(buf, ZS_OA_REASON_TIMER, 128, 1);
	/* CONFIG */
	const uint32_t regs2[1][2] = {{ZS_REG_OA_BC_SEL0, 0x22}};
	EXPECT(add_config(f, UUID2, 1, regs2) == 2, "config 2");
	PROP p = {.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 2};
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == 1, "CONFIG returns the previous id");
	EXPECT(reg(ZS_REG_OA_BC_SEL0) == 0x22 && reg(ZS_REG_OA_BC_SEL3) == 0xff && reg(ZS_REG_OA_BC_SEL9) == 0xff,
	       "CONFIG programming");
	p.value = 9;
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == -EINVAL, "CONFIG unknown id");
	p = (PROP){.property = ZESIM_OA_PROPERTY_OA_FORMAT, .value = FMT};
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == -EINVAL, "CONFIG other property");
	p = (PROP){.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 1, .base.next_extension = 8};
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == -EINVAL, "CONFIG with a chain");
	p = (PROP){.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 1, .reserved[1] = 1};
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == -EINVAL, "CONFIG reserved");
	/* The config in use survives its removal. */
	EXPECT(remove_config(f, 2) == 0, "remove the stream's config");
	EXPECT(stats().oa_configs == 2, "removed config in use freed");
	p = (PROP){.property = ZESIM_OA_PROPERTY_OA_METRIC_SET, .value = 1};
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_CONFIG, &p) == 2, "CONFIG after removal: previous 2");
	EXPECT(stats().oa_configs == 1, "removed config kept after its stream let go");
	EXPECT(reg(ZS_REG_OA_BC_SEL3) == 0x00030020, "back to config 1");
	EXPECT(zk_fd_ioctl(fd, _IO('i', 0x9), NULL, 0, NULL, 0, NULL, 0) == -ENOTTY, "unknown fd ioctl");
	EXPECT(zk_fd_ioctl(fd, ZESIM_OBSERVATION_IOCTL_INFO, &info, 8, NULL, 0, NULL, 0) == -EINVAL, "short INFO");
	/* Closing the fd tears the stream down. */
	zk_fd_close(fd);
	EXPECT(reg(ZS_REG_OA_CTL) == 0 && stats().free_bytes == free0 && stats().oa_streams == 0, "teardown at close");
	EXPECT(reg(ZS_REG_OA_BC_SEL3) == 0xff, "counters still selected");

	/* Query mode: no buffer, counters on, nothing to the buffer. */
	struct drm_zesim_vm_create vc = {0};
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_VM_CREATE, &vc, sizeof(vc), NULL, 0, NULL, 0) == 0, "VM_CREATE");
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vc.vm_id,
						 .instances = (uintptr_t)&eci};
	zk_blob_t ein = {(const uint8_t *)&eci, sizeof(eci)};
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, sizeof(qc), &ein, 1, NULL, 0) == 0, "queue");
	fake_hw_mmio_log(hw, 1);
	const uint64_t free1 = stats().free_bytes;
	l = (props_t){.n = 0};
	add(&l, ZESIM_OA_PROPERTY_OA_METRIC_SET, 1);
	add(&l, ZESIM_OA_PROPERTY_EXEC_QUEUE_ID, qc.exec_queue_id);
	add(&l, ZESIM_OA_PROPERTY_SAMPLE_OA, 0);
	EXPECT(open_stream(f, &l, &fd) == 0, "query mode");
	n = fake_hw_mmio_log_get(hw, &log);
	EXPECT(reg(ZS_REG_OA_CTL) == 1, "query mode OA_CTL %#x", reg(ZS_REG_OA_CTL));
	EXPECT(writes_to(log, n, ZS_REG_OA_BUF_BASE_LO, &last, &at) == 0 &&
		       writes_to(log, n, ZS_REG_OA_BUF_SIZE, &last, &at) == 0,
	       "query mode programmed a buffer");
	EXPECT(reg(ZS_REG_OA_THRESHOLD) == 0, "query mode threshold");
	EXPECT(stats().free_bytes == free1, "query mode allocated");
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == -EINVAL, "read without SAMPLE_OA");
	EXPECT(zk_fd_poll(fd) == 0, "poll without SAMPLE_OA");
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_INFO, &info) == 0 && info.oa_buf_size == 0, "INFO query mode");
	/* Destroying the queue does not free it under the stream. */
	struct drm_zesim_exec_queue_destroy qd = {.exec_queue_id = qc.exec_queue_id};
	EXPECT(zk_ioctl(f, DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, &qd, sizeof(qd), NULL, 0, NULL, 0) == 0, "destroy");
	EXPECT(stats().queues == 1, "queue freed under its stream");
	zk_fd_close(fd);
	EXPECT(stats().queues == 0, "queue reference leaked");

	/* Open disabled: nothing enabled until ENABLE. */
	l = sampling(1, 5, 0, 0);
	add(&l, ZESIM_OA_PROPERTY_OA_DISABLED, 1);
	EXPECT(open_stream(f, &l, &fd) == 0, "open disabled");
	EXPECT(!(reg(ZS_REG_OA_CTL) & 1), "disabled stream enabled the counters");
	timer_report(10);
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == -EAGAIN, "report while disabled");
	EXPECT(sioctl(fd, ZESIM_OBSERVATION_IOCTL_ENABLE, NULL) == 0, "ENABLE");
	EXPECT(reg(ZS_REG_OA_CTL) == ctl, "ENABLE OA_CTL %#x", reg(ZS_REG_OA_CTL));
	/* The owner closing tears it down too (the client died). */
	zk_close(f);
	EXPECT(reg(ZS_REG_OA_CTL) == 0 && stats().oa_streams == 0, "teardown at the file's close");
	EXPECT(zk_fd_poll(fd) == ZK_POLLHUP, "hung up");
	zk_fd_close(fd);
	f = zk_open(k, 3);
	l = sampling(1, 5, 0, 0);
	EXPECT(open_stream(f, &l, &fd) == 0, "open after the client died");
	zk_fd_close(fd);
	zk_close(f);
	printf("programming: sampling (OA_CTL %#x, buffer, threshold, OA_BC_SEL), query mode, disabled; ENABLE, "
	       "DISABLE (final MMIO report), CONFIG, INFO; teardown at fd close and at file close\n",
	       ctl);
}

static void test_read(void)
{
	fresh(1);
	zk_file_t *f = zk_open(k, 1);
	EXPECT(add_config(f, UUID1, 2, regs1) == 1, "config");
	props_t l = sampling(1, 2, 128u << 10, 2);
	zk_fd_t *fd;
	EXPECT(open_stream(f, &l, &fd) == 0, "open");
	static uint8_t buf[600 * REP];
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == -EAGAIN, "empty read");
	EXPECT(zk_fd_poll(fd) == 0, "empty poll");
	uint64_t nth = 0, got = 0;
	timer_report(8 * ++nth);
	EXPECT(zk_fd_poll(fd) == 0, "poll below wait_num_reports");
	EXPECT(!zk_fd_next_event(k), "wake-up below the threshold");
	EXPECT(zk_fd_read(fd, buf, REP - 1) == -ENOSPC, "read of 255 bytes");
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == REP, "available report");
	got++;
	check_report(buf, ZS_OA_REASON_TIMER, 8 * got, got);
	EXPECT(reg(ZS_REG_OA_HEAD) == REP, "OA_HEAD %u", reg(ZS_REG_OA_HEAD));
	timer_report(8 * ++nth);
	timer_report(8 * ++nth);
	EXPECT(zk_fd_next_event(k) == fd, "OA_BUFFER interrupt did not wake the fd");
	EXPECT(zk_fd_poll(fd) == ZK_POLLIN, "poll at wait_num_reports");
	EXPECT(stats().oa_irqs >= 1, "irqs");
	EXPECT(zk_fd_read(fd, buf, 2 * REP - 1) == REP, "whole reports only");
	got++;
	check_report(buf, ZS_OA_REASON_TIMER, 8 * got, got);
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == REP, "the rest");
	got++;
	check_report(buf, ZS_OA_REASON_TIMER, 8 * got, got);
	/* Across the wrap: 2000 reports in reads of up to 7. */
	while (got < 2000) {
		for (int i = 0; i < 5; i++)
			timer_report(8 * ++nth);
		long r;
		while ((r = zk_fd_read(fd, buf, 7 * REP)) > 0) {
			EXPECT(r % REP == 0, "partial report");
			for (long i = 0; i < r / REP; i++) {
				got++;
				check_report(buf + i * REP, ZS_OA_REASON_TIMER, 8 * got, got);
			}
		}
		EXPECT(r == -EAGAIN, "read %ld", r);
	}
	EXPECT(stats().oa_reports_read == got, "reports read %llu", (unsigned long long)stats().oa_reports_read);
	/* A slow reader: 600 reports into 511 free slots. */
	for (int i = 0; i < 600; i++)
		timer_report(8 * ++nth);
	EXPECT(reg(ZS_REG_OA_LOST) == 89, "lost %u", reg(ZS_REG_OA_LOST));
	EXPECT(zk_fd_poll(fd) == ZK_POLLIN, "poll");
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == -EIO, "lost reports: EIO");
	long r = zk_fd_read(fd, buf, 10 * REP);
	EXPECT(r == 10 * REP, "read after EIO: %ld", r);
	for (long i = 0; i < 10; i++) {
		got++;
		check_report(buf + i * REP, ZS_OA_REASON_TIMER, 8 * got, got);
	}
	EXPECT(status(fd) == (ZESIM_OASTATUS_REPORT_LOST | ZESIM_OASTATUS_BUFFER_OVERFLOW), "STATUS");
	EXPECT(status(fd) == 0, "STATUS cleared");
	EXPECT(reg(ZS_REG_OA_STATUS) == 0, "OA_STATUS not cleared");
	r = zk_fd_read(fd, buf, sizeof(buf));
	EXPECT(r == 501 * REP, "the reports left: %ld", r);
	for (long i = 0; i < 501; i++) {
		got++;
		check_report(buf + i * REP, ZS_OA_REASON_TIMER, 8 * got, got);
	}
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == -EAGAIN, "drained");
	/* Later reports continue (the lost ones are a gap in the counters). */
	timer_report(8 * ++nth);
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == REP, "after the loss");
	check_report(buf, ZS_OA_REASON_TIMER, 8 * nth, nth);
	/* STATUS straight away after a loss, then the read: no EIO owed. */
	for (int i = 0; i < 520; i++)
		timer_report(8 * ++nth);
	EXPECT(status(fd) == (ZESIM_OASTATUS_REPORT_LOST | ZESIM_OASTATUS_BUFFER_OVERFLOW), "STATUS first");
	EXPECT(zk_fd_read(fd, buf, sizeof(buf)) == 511 * REP, "read after STATUS");
	zk_close(f);
	zk_fd_close(fd);
	printf("read: whole raw reports across the wrap, -EAGAIN, -ENOSPC, poll at wait_num_reports, the OA_BUFFER "
	       "interrupt; slow reader: -EIO once, STATUS REPORT_LOST|OVERFLOW, the rest intact\n");
}

int main(void)
{
	test_query();
	test_configs();
	test_open_errors();
	test_programming();
	test_read();
	zk_destroy(k);
	fake_hw_destroy(hw);
	printf("kmd_oa: all passed\n");
	return 0;
}
