/* OA streams (docs/uapi.md "Observation", docs/kmd.md §13): the OA_UNITS query, the
 * OBSERVATION ioctl (ADD_CONFIG, REMOVE_CONFIG, STREAM_OPEN) and the stream fd
 * (read, poll, ENABLE, DISABLE, CONFIG, STATUS, INFO), shaped on Linux xe_oa.c.
 *
 * The hardware is the OA block of docs/oa.md §4: the KMD gives it a physically
 * contiguous buffer (OA_BUF_BASE / OA_BUF_SIZE), the block writes 256-byte reports
 * at OA_TAIL, the KMD copies them to the reader from OA_HEAD and writes OA_HEAD
 * forward.  IRQ_STATUS.OA_BUFFER (a report written while at least OA_THRESHOLD =
 * wait_num_reports are unread) wakes the readers: the fd becomes readable. */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/zesim_ioctl_table.h"
#include "zs/oa_report.h"

#define REPORT ZS_OA_REPORT_BYTES
#define OA_BUF_MIN (128u << 10)
#define OA_BUF_MAX (128u << 20)
#define OA_BUF_DEFAULT (16u << 20)
#define OA_EXPONENT_MAX 31u
#define OA_STATUS_BITS (ZS_FIELD_MASK(OA_STATUS, REPORT_LOST) | ZS_FIELD_MASK(OA_STATUS, OVERFLOW))

typedef struct oa_config {
	uint32_t id, refs;
	int removed; /* REMOVE_CONFIG: gone from the list, alive while a stream uses it */
	char uuid[36];
	uint32_t n_regs;
	uint32_t regs[ZESIM_OA_CONFIG_MAX_REGS][2];
	struct oa_config *next;
} oa_config_t;

typedef struct oa_stream {
	zk_kmd_t *k;
	zk_fd_t *fd;
	oa_config_t *cfg;
	zk_queue_t *q; /* query mode: the exec queue (a reference), or NULL */
	int sample, periodic, enabled;
	uint32_t exponent, wait_num;
	uint64_t buf_pa;
	uint32_t buf_size; /* 0 without SAMPLE_OA */
	uint32_t status;   /* OA_STATUS bits taken by read's -EIO, until STATUS returns them */
	uint64_t reports_read;
	int pid;
	int eio_owed;	   /* the next read returns -EIO */
	uint32_t lost0;	   /* OA_LOST at open */
} oa_stream_t;

struct zk_oa {
	int present; /* GT_UNITS.OA */
	oa_config_t *configs;
	uint32_t next_id;
	oa_stream_t *stream; /* the unit's one stream */
};

static void wr(zk_kmd_t *k, uint32_t reg, uint32_t v) { zs_hw_mmio_write(k->hw, reg, v); }
static uint32_t rd(zk_kmd_t *k, uint32_t reg) { return zs_hw_mmio_read(k->hw, reg); }

int zk_oa_init(zk_kmd_t *k)
{
	k->oa = calloc(1, sizeof(*k->oa));
	if (!k->oa)
		return -ENOMEM;
	k->oa->present = ZS_FIELD_GET(rd(k, ZS_REG_GT_UNITS), GT_UNITS, OA);
	return 0;
}

static void config_unref(zk_kmd_t *k, oa_config_t *c)
{
	if (--c->refs)
		return;
	k->st.oa_configs--;
	free(c);
}

void zk_oa_fini(zk_kmd_t *k)
{
	if (!k->oa)
		return;
	/* Streams are fds: zk_fds_fini released them. */
	while (k->oa->configs) {
		oa_config_t *c = k->oa->configs;
		k->oa->configs = c->next;
		config_unref(k, c);
	}
	free(k->oa);
	k->oa = NULL;
}

int zk_oa_present(zk_kmd_t *k) { return k->oa && k->oa->present; }

/* ---- OA_UNITS query ---- */

uint32_t zk_oa_units_size(zk_kmd_t *k)
{
	return (uint32_t)(sizeof(struct drm_zesim_query_oa_units) +
			  (zk_oa_present(k) ? sizeof(struct drm_zesim_oa_unit) +
						      sizeof(struct drm_zesim_engine_class_instance)
					    : 0));
}

void zk_oa_units_fill(zk_kmd_t *k, uint8_t *d)
{
	struct drm_zesim_query_oa_units *q = (void *)d;
	if (!zk_oa_present(k))
		return;
	q->num_oa_units = 1;
	struct drm_zesim_oa_unit *u = (void *)(d + sizeof(*q));
	u->oa_unit_id = 0;
	u->oa_unit_type = ZESIM_OA_UNIT_TYPE_OAG;
	u->capabilities = ZESIM_OA_CAPS_BASE | ZESIM_OA_CAPS_OA_BUFFER_SIZE | ZESIM_OA_CAPS_WAIT_NUM_REPORTS;
	u->oa_timestamp_freq = k->ts_khz * 1000ull;
	u->num_engines = 1;
	u->eci[0].engine_class = ZESIM_ENGINE_CLASS_COMPUTE;
}

/* ---- configs ---- */

static int uuid_valid(const char *u)
{
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (u[i] != '-')
				return 0;
		} else if (!((u[i] >= '0' && u[i] <= '9') || (u[i] >= 'a' && u[i] <= 'f') ||
			     (u[i] >= 'A' && u[i] <= 'F'))) {
			return 0;
		}
	}
	return 1;
}

static int reg_allowed(uint32_t addr)
{
	return addr >= ZS_REG_OA_BC_SEL0 && addr <= ZS_REG_OA_BC_SEL15 && !(addr & 3);
}

static oa_config_t *config_find(zk_kmd_t *k, uint64_t id)
{
	for (oa_config_t *c = k->oa->configs; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static int add_config(zk_file_t *f, const uint8_t *cfg_blob, const uint8_t *regs, uint32_t regs_len)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_oa_config c;
	memcpy(&c, cfg_blob, sizeof(c));
	if (c.extensions || !uuid_valid(c.uuid) || !c.n_regs || c.n_regs > ZESIM_OA_CONFIG_MAX_REGS)
		return -EINVAL;
	if (!regs)
		return -EFAULT; /* regs_ptr 0 */
	if (regs_len != c.n_regs * 8u)
		return -EINVAL;
	oa_config_t *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	memcpy(n->regs, regs, regs_len);
	for (uint32_t i = 0; i < c.n_regs; i++)
		if (!reg_allowed(n->regs[i][0])) {
			free(n);
			return -EINVAL;
		}
	for (oa_config_t *o = k->oa->configs; o; o = o->next)
		if (!memcmp(o->uuid, c.uuid, 36)) {
			free(n);
			return -EADDRINUSE;
		}
	memcpy(n->uuid, c.uuid, 36);
	n->n_regs = c.n_regs;
	n->refs = 1;
	n->id = ++k->oa->next_id;
	n->next = k->oa->configs;
	k->oa->configs = n;
	k->st.oa_configs++;
	return (int)n->id;
}

static int remove_config(zk_file_t *f, const uint8_t *blob)
{
	zk_kmd_t *k = f->kmd;
	uint64_t id;
	memcpy(&id, blob, 8);
	for (oa_config_t **p = &k->oa->configs; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			oa_config_t *c = *p;
			*p = c->next;
			c->removed = 1;
			config_unref(k, c); /* a stream using it keeps it */
			return 0;
		}
	return -ENOENT;
}

/* ---- the stream ---- */

static void program_config(zk_kmd_t *k, const oa_config_t *c)
{
	for (uint32_t i = 0; i < ZS_OA_BC_COUNTERS; i++)
		wr(k, ZS_REG_OA_BC_SEL0 + 4 * i, 0xff); /* counts nothing */
	for (uint32_t i = 0; i < c->n_regs; i++)
		wr(k, c->regs[i][0], c->regs[i][1]);
}

static uint32_t ctl_value(const oa_stream_t *s)
{
	uint32_t v = ZS_FIELD_MASK(OA_CTL, ENABLE);
	if (s->periodic)
		v |= ZS_FIELD_MASK(OA_CTL, TIMER) | ZS_FIELD_PREP(OA_CTL, EXPONENT, s->exponent);
	if (s->sample)
		v |= ZS_FIELD_MASK(OA_CTL, CTX_SWITCH) | ZS_FIELD_MASK(OA_CTL, BUFFER);
	return v;
}

/* (Re)start the buffer: base and size (which reset OA_HEAD and OA_TAIL), status. */
static void init_buffer(oa_stream_t *s)
{
	zk_kmd_t *k = s->k;
	if (!s->sample)
		return;
	wr(k, ZS_REG_OA_BUF_BASE_HI, (uint32_t)(s->buf_pa >> 32));
	wr(k, ZS_REG_OA_BUF_BASE_LO, (uint32_t)s->buf_pa);
	wr(k, ZS_REG_OA_BUF_SIZE, (uint32_t)__builtin_ctz(s->buf_size));
	wr(k, ZS_REG_OA_STATUS, OA_STATUS_BITS);
	s->status = 0;
	s->eio_owed = 0;
}

static void stream_enable(oa_stream_t *s)
{
	if (s->enabled)
		return;
	init_buffer(s);
	wr(s->k, ZS_REG_OA_CTL, ctl_value(s)); /* 0 to 1: the counters start from 0 */
	s->enabled = 1;
}

static void stream_disable(oa_stream_t *s)
{
	if (!s->enabled)
		return;
	if (s->sample)
		wr(s->k, ZS_REG_OA_TRIGGER, 1); /* a final report (reason MMIO) */
	wr(s->k, ZS_REG_OA_CTL, 0);
	s->enabled = 0;
	zk_fd_notify(s->fd);
}

static uint32_t unread(const oa_stream_t *s)
{
	const uint32_t head = rd(s->k, ZS_REG_OA_HEAD), tail = rd(s->k, ZS_REG_OA_TAIL);
	return (tail - head) & (s->buf_size - 1);
}

static long s_read(zk_fd_t *fd, uint8_t *buf, uint32_t len)
{
	oa_stream_t *s = zk_fd_priv(fd);
	zk_kmd_t *k = s->k;
	if (!s->sample)
		return -EINVAL;
	const uint32_t st = rd(k, ZS_REG_OA_STATUS) & OA_STATUS_BITS;
	if (st) {
		/* Lost reports: say so once; STATUS returns the bits. */
		wr(k, ZS_REG_OA_STATUS, st);
		s->status |= st;
		s->eio_owed = 1;
	}
	if (s->eio_owed) {
		s->eio_owed = 0;
		return -EIO;
	}
	if (len < REPORT)
		return -ENOSPC;
	uint32_t head = rd(k, ZS_REG_OA_HEAD);
	const uint32_t n = unread(s) / REPORT < len / REPORT ? unread(s) / REPORT : len / REPORT;
	if (!n)
		return -EAGAIN;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(buf + (size_t)i * REPORT, k->phys + s->buf_pa + head, REPORT);
		head = (head + REPORT) & (s->buf_size - 1);
	}
	wr(k, ZS_REG_OA_HEAD, head);
	k->st.oa_reports_read += n;
	s->reports_read += n;
	return (long)n * REPORT;
}

static unsigned s_poll(zk_fd_t *fd)
{
	oa_stream_t *s = zk_fd_priv(fd);
	if (!s->sample)
		return 0;
	if (s->eio_owed || (rd(s->k, ZS_REG_OA_STATUS) & OA_STATUS_BITS))
		return ZK_POLLIN; /* the read reports the loss */
	return unread(s) >= s->wait_num * REPORT ? ZK_POLLIN : 0;
}

static int ext_check(const struct drm_zesim_ext_set_property *p)
{
	if (p->base.name != ZESIM_OA_EXTENSION_SET_PROPERTY || p->base.pad || p->pad || !CHECK_RESERVED(p))
		return -EINVAL;
	if (!p->property || p->property >= ZESIM_OA_PROPERTY_MAX)
		return -EINVAL;
	return 0;
}

static int s_ioctl(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		   zk_out_blob_t *out, unsigned nout)
{
	(void)in, (void)nin, (void)out, (void)nout;
	oa_stream_t *s = zk_fd_priv(fd);
	zk_kmd_t *k = s->k;
	if (arg_size != _IOC_SIZE(cmd))
		return -EINVAL;
	switch (cmd) {
	case ZESIM_OBSERVATION_IOCTL_ENABLE:
		stream_enable(s);
		return 0;
	case ZESIM_OBSERVATION_IOCTL_DISABLE:
		stream_disable(s);
		return 0;
	case ZESIM_OBSERVATION_IOCTL_CONFIG: {
		const struct drm_zesim_ext_set_property *p = arg;
		if (ext_check(p) || p->base.next_extension || p->property != ZESIM_OA_PROPERTY_OA_METRIC_SET)
			return -EINVAL;
		oa_config_t *c = config_find(k, p->value);
		if (!c)
			return -EINVAL;
		oa_config_t *old = s->cfg;
		c->refs++;
		s->cfg = c;
		program_config(k, c);
		const int prev = (int)old->id;
		config_unref(k, old);
		return prev;
	}
	case ZESIM_OBSERVATION_IOCTL_STATUS: {
		struct drm_zesim_oa_stream_status *st = arg;
		const uint32_t hw = rd(k, ZS_REG_OA_STATUS) & OA_STATUS_BITS;
		if (hw)
			wr(k, ZS_REG_OA_STATUS, hw);
		memset(st, 0, sizeof(*st));
		st->oa_status = s->status | hw;
		s->status = 0;
		s->eio_owed = 0;
		return 0;
	}
	case ZESIM_OBSERVATION_IOCTL_INFO: {
		struct drm_zesim_oa_stream_info *i = arg;
		memset(i, 0, sizeof(*i));
		i->oa_buf_size = s->buf_size;
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

static void s_release(zk_fd_t *fd)
{
	oa_stream_t *s = zk_fd_priv(fd);
	zk_kmd_t *k = s->k;
	wr(k, ZS_REG_OA_CTL, 0); /* counters off, no more reports */
	for (uint32_t i = 0; i < ZS_OA_BC_COUNTERS; i++)
		wr(k, ZS_REG_OA_BC_SEL0 + 4 * i, 0xff);
	wr(k, ZS_REG_OA_THRESHOLD, 1);
	if (s->buf_size)
		zk_phys_free(k, s->buf_pa, s->buf_size);
	if (s->q)
		zk_queue_unref(k, s->q);
	config_unref(k, s->cfg);
	if (k->oa && k->oa->stream == s)
		k->oa->stream = NULL;
	k->st.oa_streams--;
	fprintf(stderr, "zesim-gpu: OA stream of pid %d closed: %llu reports read, %u lost in the buffer's life\n",
		s->pid, (unsigned long long)s->reports_read, rd(k, ZS_REG_OA_LOST) - s->lost0);
	free(s);
}

static const zk_fd_ops_t oa_stream_ops = {
	.name = "[zesim_oa]",
	.read = s_read,
	.ioctl = s_ioctl,
	.poll = s_poll,
	.release = s_release,
};

/* The properties of STREAM_OPEN, once the chain is parsed. */
typedef struct open_param {
	uint32_t unit;
	int sample, disabled, has_exponent, has_format;
	uint64_t metric_set, format, exec_queue;
	uint32_t exponent, buf_size, wait_num;
} open_param_t;

static int parse_property(zk_file_t *f, const struct drm_zesim_ext_set_property *p, open_param_t *o)
{
	(void)f;
	const uint64_t v = p->value;
	switch (p->property) {
	case ZESIM_OA_PROPERTY_OA_UNIT_ID:
		if (v != 0)
			return -EINVAL;
		o->unit = (uint32_t)v;
		return 0;
	case ZESIM_OA_PROPERTY_SAMPLE_OA:
		if (v > 1)
			return -EINVAL;
		o->sample = (int)v;
		return 0;
	case ZESIM_OA_PROPERTY_OA_METRIC_SET:
		o->metric_set = v;
		return 0;
	case ZESIM_OA_PROPERTY_OA_FORMAT:
		if (v != ZS_OA_FORMAT_A32u40_A4u32_B8_C8)
			return -EINVAL;
		o->format = v;
		o->has_format = 1;
		return 0;
	case ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT:
		if (v > OA_EXPONENT_MAX)
			return -EINVAL;
		o->exponent = (uint32_t)v;
		o->has_exponent = 1;
		return 0;
	case ZESIM_OA_PROPERTY_OA_DISABLED:
		if (v > 1)
			return -EINVAL;
		o->disabled = (int)v;
		return 0;
	case ZESIM_OA_PROPERTY_EXEC_QUEUE_ID:
		o->exec_queue = v;
		return 0;
	case ZESIM_OA_PROPERTY_OA_ENGINE_INSTANCE:
		return v ? -EINVAL : 0;
	case ZESIM_OA_PROPERTY_NUM_SYNCS:
		return v ? -EINVAL : 0;
	case ZESIM_OA_PROPERTY_OA_BUFFER_SIZE:
		if (v < OA_BUF_MIN || v > OA_BUF_MAX || (v & (v - 1)))
			return -EINVAL;
		o->buf_size = (uint32_t)v;
		return 0;
	case ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS:
		if (!v || v > OA_BUF_MAX / REPORT)
			return -EINVAL;
		o->wait_num = (uint32_t)v;
		return 0;
	default: /* NO_PREEMPT, SYNCS: not supported */
		return -EINVAL;
	}
}

static int stream_open(zk_file_t *f, const uint8_t *chain, uint32_t chain_len)
{
	zk_kmd_t *k = f->kmd;
	open_param_t o = {.buf_size = OA_BUF_DEFAULT, .wait_num = 1};
	/* The chain came whole and checked against the table (≤ 16 links, linked). */
	for (uint32_t off = 0; off < chain_len; off += sizeof(struct drm_zesim_ext_set_property)) {
		struct drm_zesim_ext_set_property p;
		memcpy(&p, chain + off, sizeof(p));
		int rc = ext_check(&p);
		if (!rc)
			rc = parse_property(f, &p, &o);
		if (rc)
			return rc;
	}
	if (!o.metric_set)
		return -EINVAL;
	if (o.sample && !o.has_format)
		return -EINVAL;
	if (o.has_exponent && !o.sample)
		return -EINVAL;
	if (!o.sample && !o.exec_queue)
		return -EINVAL; /* neither reports nor a queue to take query reports in */
	if (o.wait_num > o.buf_size / REPORT)
		return -EINVAL;
	zk_queue_t *q = NULL;
	if (o.exec_queue) {
		q = o.exec_queue <= UINT32_MAX ? zk_handle_get(&f->queues, (uint32_t)o.exec_queue) : NULL;
		if (!q)
			return -ENOENT;
	}
	oa_config_t *c = config_find(k, o.metric_set);
	if (!c)
		return -EINVAL;
	if (k->oa->stream)
		return -EBUSY;
	oa_stream_t *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->k = k;
	s->pid = f->pid;
	s->lost0 = rd(k, ZS_REG_OA_LOST);
	s->sample = o.sample;
	s->periodic = o.has_exponent;
	s->exponent = o.exponent;
	s->wait_num = o.wait_num;
	if (s->sample) {
		int rc = zk_phys_alloc(k, o.buf_size, 4096, &s->buf_pa);
		if (rc) {
			free(s);
			return rc;
		}
		s->buf_size = o.buf_size;
	}
	int rc = zk_fd_create(f, &oa_stream_ops, s, &s->fd);
	if (rc) {
		if (s->buf_size)
			zk_phys_free(k, s->buf_pa, s->buf_size);
		free(s);
		return rc;
	}
	c->refs++;
	s->cfg = c;
	if (q) {
		q->refs++;
		s->q = q;
	}
	k->oa->stream = s;
	k->st.oa_streams++;
	/* Program the block: counters off, the metric set, the buffer, the threshold. */
	wr(k, ZS_REG_OA_CTL, 0);
	program_config(k, c);
	wr(k, ZS_REG_OA_THRESHOLD, s->sample ? s->wait_num : 0);
	if (!o.disabled)
		stream_enable(s);
	char what[128];
	if (s->sample)
		snprintf(what, sizeof(what), "sampling to %u KiB at 0x%llx, wakes at %u reports", s->buf_size >> 10,
			 (unsigned long long)s->buf_pa, s->wait_num);
	else
		snprintf(what, sizeof(what), "query mode (exec queue %llu)", (unsigned long long)o.exec_queue);
	char period[48] = "";
	if (s->periodic)
		snprintf(period, sizeof(period), ", timer exponent %u", s->exponent);
	fprintf(stderr, "zesim-gpu: OA stream opened: pid %d, metric set %u, %s%s%s\n", f->pid, c->id, what, period,
		o.disabled ? ", disabled" : "");
	return 0;
}

int zk_ioctl_observation(ZK_IOCTL_ARGS)
{
	struct drm_zesim_observation_param *p = arg;
	if (p->extensions || p->observation_type != ZESIM_OBSERVATION_TYPE_OA)
		return -EINVAL;
	if (p->observation_op > ZESIM_OBSERVATION_OP_REMOVE_CONFIG)
		return -EINVAL;
	if (!zk_oa_present(f->kmd))
		return -ENODEV;
	/* The buffers, as the table gives them for this op (uapi/zesim_ioctl_table.h). */
	const struct zesim_ioctl_desc *d = zesim_ioctl_find(DRM_IOCTL_ZESIM_OBSERVATION);
	uint32_t lens[ZK_MAX_BLOBS];
	const uint8_t *data[ZK_MAX_BLOBS];
	for (unsigned i = 0; i < nin && i < ZK_MAX_BLOBS; i++)
		lens[i] = in[i].len, data[i] = in[i].data;
	int idx[4];
	int rc = zesim_uptr_check(d, p, sizeof(*p), lens, data, nin, idx);
	if (rc)
		return rc;
	switch (p->observation_op) {
	case ZESIM_OBSERVATION_OP_STREAM_OPEN:
		return stream_open(f, in[idx[0]].data, in[idx[0]].len);
	case ZESIM_OBSERVATION_OP_ADD_CONFIG:
		return add_config(f, in[idx[1]].data, idx[2] >= 0 ? in[idx[2]].data : NULL,
				  idx[2] >= 0 ? in[idx[2]].len : 0);
	default:
		return remove_config(f, in[idx[3]].data);
	}
}

/* IRQ_STATUS.OA_BUFFER (zk_service): the readers of the stream wake up. */
void zk_oa_irq(zk_kmd_t *k)
{
	k->st.oa_irqs++;
	if (k->oa && k->oa->stream)
		zk_fd_notify(k->oa->stream->fd);
}
