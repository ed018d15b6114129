/* KMD fd objects: owner, lifetime, readiness events (fds.h, docs/kmd.md §12). */
#include "fds.h"

#include "kmd_priv.h"

#include <errno.h>
#include <stdlib.h>

struct zk_fd {
	const zk_fd_ops_t *ops;
	void *priv;
	zk_kmd_t *kmd;
	zk_file_t *owner; /* NULL once hung up (the owner closed) */
	uint32_t id;
	void *user;	  /* the daemon's endpoint, once attached */
	int attached;
	int queued;	  /* on the event list */
	zk_fd_t *next;	  /* on zk_fds_t.all */
	zk_fd_t *next_event;
};

static void unlink_all(zk_fds_t *s, zk_fd_t *fd)
{
	for (zk_fd_t **p = &s->all; *p; p = &(*p)->next)
		if (*p == fd) {
			*p = fd->next;
			break;
		}
	if (fd->queued) {
		zk_fd_t *prev = NULL;
		for (zk_fd_t *e = s->events; e; prev = e, e = e->next_event)
			if (e == fd) {
				if (prev)
					prev->next_event = e->next_event;
				else
					s->events = e->next_event;
				if (s->events_tail == e)
					s->events_tail = prev;
				break;
			}
		fd->queued = 0;
	}
	if (s->made == fd)
		s->made = NULL;
	s->count--;
}

static void release(zk_fd_t *fd)
{
	if (fd->ops->release)
		fd->ops->release(fd);
	fd->priv = NULL;
}

int zk_fd_create(zk_file_t *owner, const zk_fd_ops_t *ops, void *priv, zk_fd_t **out)
{
	zk_kmd_t *k = owner->kmd;
	zk_fds_t *s = &k->fds;
	uint32_t mine = 0;
	for (zk_fd_t *f = s->all; f; f = f->next)
		mine += f->owner == owner;
	if (mine >= ZK_MAX_FDS_PER_FILE)
		return -EMFILE;
	zk_fd_t *fd = calloc(1, sizeof(*fd));
	if (!fd)
		return -ENOMEM;
	fd->ops = ops;
	fd->priv = priv;
	fd->kmd = k;
	fd->owner = owner;
	do
		fd->id = ++s->next_id;
	while (!fd->id);
	fd->next = s->all;
	s->all = fd;
	s->count++;
	s->made = fd;
	*out = fd;
	return 0;
}

void *zk_fd_priv(const zk_fd_t *fd) { return fd->priv; }
uint32_t zk_fd_id(const zk_fd_t *fd) { return fd->id; }
zk_file_t *zk_fd_owner(const zk_fd_t *fd) { return fd->owner; }
void *zk_fd_user(const zk_fd_t *fd) { return fd->user; }
const char *zk_fd_name(const zk_fd_t *fd) { return fd->ops->name; }
uint32_t zk_fd_count(zk_kmd_t *k) { return k->fds.count; }
int zk_test_channel(zk_kmd_t *k) { return k->fds.test_channel; }
void zk_set_test_channel(zk_kmd_t *k, int on) { k->fds.test_channel = on != 0; }

zk_fd_t *zk_fd_find(zk_kmd_t *k, uint32_t id, const zk_fd_ops_t *ops)
{
	for (zk_fd_t *f = k->fds.all; f; f = f->next)
		if (f->id == id)
			return f->owner && f->ops == ops ? f : NULL;
	return NULL;
}

void zk_fd_notify(zk_fd_t *fd)
{
	zk_fds_t *s = &fd->kmd->fds;
	if (fd->queued || !fd->attached)
		return; /* not given to a program yet: it polls it when attached */
	fd->queued = 1;
	fd->next_event = NULL;
	if (s->events_tail)
		s->events_tail->next_event = fd;
	else
		s->events = fd;
	s->events_tail = fd;
}

zk_fd_t *zk_fd_next_event(zk_kmd_t *k)
{
	zk_fds_t *s = &k->fds;
	zk_fd_t *fd = s->events;
	if (!fd)
		return NULL;
	s->events = fd->next_event;
	if (!s->events)
		s->events_tail = NULL;
	fd->queued = 0;
	return fd;
}

zk_fd_t *zk_fd_take_new(zk_kmd_t *k)
{
	zk_fds_t *s = &k->fds;
	zk_fd_t *fd = s->made;
	s->made = NULL;
	return fd;
}

void zk_fd_attach(zk_fd_t *fd, void *user)
{
	fd->user = user;
	fd->attached = 1;
	zk_fd_notify(fd); /* readable already? */
}

void zk_fd_close(zk_fd_t *fd)
{
	zk_fds_t *s = &fd->kmd->fds;
	unlink_all(s, fd);
	if (fd->owner)
		release(fd);
	free(fd);
}

unsigned zk_fd_poll(zk_fd_t *fd)
{
	if (!fd->owner)
		return ZK_POLLHUP;
	return fd->ops->poll ? fd->ops->poll(fd) : 0;
}

long zk_fd_read(zk_fd_t *fd, uint8_t *buf, uint32_t len)
{
	if (!fd->owner)
		return -EIO;
	return fd->ops->read ? fd->ops->read(fd, buf, len) : -EINVAL;
}

long zk_fd_pread(zk_fd_t *fd, uint8_t *buf, uint32_t len, uint64_t off)
{
	if (!fd->owner)
		return -EIO;
	return fd->ops->pread ? fd->ops->pread(fd, buf, len, off) : -ESPIPE;
}

long zk_fd_pwrite(zk_fd_t *fd, const uint8_t *buf, uint32_t len, uint64_t off)
{
	if (!fd->owner)
		return -EIO;
	return fd->ops->pwrite ? fd->ops->pwrite(fd, buf, len, off) : -ESPIPE;
}

int zk_fd_ioctl(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		zk_out_blob_t *out, unsigned nout)
{
	if (!fd->owner)
		return -EIO;
	return fd->ops->ioctl ? fd->ops->ioctl(fd, cmd, arg, arg_size, in, nin, out, nout) : -ENOTTY;
}

void zk_fds_file_closed(zk_kmd_t *k, zk_file_t *file)
{
	zk_fds_t *s = &k->fds;
	for (zk_fd_t **p = &s->all; *p;) {
		zk_fd_t *fd = *p;
		if (fd->owner != file) {
			p = &fd->next;
			continue;
		}
		release(fd);
		fd->owner = NULL;
		if (fd->attached) {
			zk_fd_notify(fd); /* the daemon hangs up its endpoint */
			p = &fd->next;
		} else {
			unlink_all(s, fd); /* never given out: nobody else refers to it */
			free(fd);
		}
	}
}

void zk_fds_fini(zk_kmd_t *k)
{
	zk_fds_t *s = &k->fds;
	while (s->all) {
		zk_fd_t *fd = s->all;
		if (fd->owner)
			release(fd);
		unlink_all(s, fd);
		free(fd);
	}
}
