/* The test fd kind (docs/uapi.md §13): test-only, allowed with the daemon's
 * --test-channel.  read() returns whole 16-byte records queued by
 * TEST_FD_PRODUCE (the fd's own ioctl, or the DRM ioctl by id from any
 * file), like an OA stream's reports; poll says POLLIN while records are
 * queued; pread/pwrite reach a 4 KiB scratch area, like a VM fd. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fds.h"
#include "kmd_priv.h"
#include "uapi/zesim_drm.h"

typedef struct testfd {
	uint64_t next_seq;		 /* seqno of the next record produced */
	uint64_t head;			 /* seqno of the first queued record */
	uint8_t scratch[ZESIM_TEST_FD_SCRATCH];
} testfd_t;

#define REC ((uint32_t)sizeof(struct drm_zesim_test_fd_record))

static uint32_t queued(const testfd_t *t) { return (uint32_t)(t->next_seq - t->head); }

static int produce(zk_fd_t *fd, uint32_t count)
{
	testfd_t *t = zk_fd_priv(fd);
	if (!count)
		return -EINVAL;
	if (count > ZESIM_TEST_FD_MAX_RECORDS - queued(t))
		return -ENOSPC;
	t->next_seq += count;
	zk_fd_notify(fd);
	return 0;
}

static long t_read(zk_fd_t *fd, uint8_t *buf, uint32_t len)
{
	testfd_t *t = zk_fd_priv(fd);
	if (len < REC)
		return -EINVAL; /* as an OA stream: no partial record */
	uint32_t n = queued(t);
	if (!n)
		return -EAGAIN;
	if (n > len / REC)
		n = len / REC;
	for (uint32_t i = 0; i < n; i++) {
		struct drm_zesim_test_fd_record r = {t->head++, zk_fd_id(fd), ZESIM_TEST_FD_MAGIC};
		memcpy(buf + i * REC, &r, REC);
	}
	return (long)n * REC;
}

static long t_pread(zk_fd_t *fd, uint8_t *buf, uint32_t len, uint64_t off)
{
	testfd_t *t = zk_fd_priv(fd);
	if (off >= ZESIM_TEST_FD_SCRATCH)
		return 0;
	if (len > ZESIM_TEST_FD_SCRATCH - off)
		len = (uint32_t)(ZESIM_TEST_FD_SCRATCH - off);
	memcpy(buf, t->scratch + off, len);
	return len;
}

static long t_pwrite(zk_fd_t *fd, const uint8_t *buf, uint32_t len, uint64_t off)
{
	testfd_t *t = zk_fd_priv(fd);
	if (off >= ZESIM_TEST_FD_SCRATCH)
		return len ? -ENOSPC : 0;
	if (len > ZESIM_TEST_FD_SCRATCH - off)
		len = (uint32_t)(ZESIM_TEST_FD_SCRATCH - off);
	memcpy(t->scratch + off, buf, len);
	return len;
}

static int t_ioctl(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		   zk_out_blob_t *out, unsigned nout)
{
	(void)in, (void)nin, (void)out, (void)nout;
	if (cmd != ZESIM_TEST_FD_IOCTL_PRODUCE)
		return -ENOTTY;
	if (arg_size != sizeof(struct drm_zesim_test_fd_produce))
		return -EINVAL;
	const struct drm_zesim_test_fd_produce *p = arg;
	if (p->id && p->id != zk_fd_id(fd))
		return -EINVAL;
	return produce(fd, p->count);
}

static unsigned t_poll(zk_fd_t *fd) { return queued(zk_fd_priv(fd)) ? ZK_POLLIN : 0; }

static void t_release(zk_fd_t *fd) { free(zk_fd_priv(fd)); }

static const zk_fd_ops_t testfd_ops = {
	.name = "[zesim_test]",
	.read = t_read,
	.pread = t_pread,
	.pwrite = t_pwrite,
	.ioctl = t_ioctl,
	.poll = t_poll,
	.release = t_release,
};

int zk_ioctl_test_fd_open(ZK_IOCTL_ARGS)
{
	if (!zk_test_channel(f->kmd))
		return -EPERM;
	struct drm_zesim_test_fd_open *o = arg;
	if (o->extensions || o->flags || o->id || !CHECK_RESERVED(o))
		return -EINVAL;
	testfd_t *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	zk_fd_t *fd;
	int rc = zk_fd_create(f, &testfd_ops, t, &fd);
	if (rc) {
		free(t);
		return rc;
	}
	o->id = zk_fd_id(fd);
	return 0;
}

int zk_ioctl_test_fd_produce(ZK_IOCTL_ARGS)
{
	if (!zk_test_channel(f->kmd))
		return -EPERM;
	const struct drm_zesim_test_fd_produce *p = arg;
	zk_fd_t *fd = zk_fd_find(f->kmd, p->id, &testfd_ops);
	return fd ? produce(fd, p->count) : -ENOENT;
}
