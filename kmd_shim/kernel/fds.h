/* KMD fd objects (docs/kmd.md §12): what an ioctl returns when it returns a
 * new fd (the test fd today; the OA stream, the EU-debug connection and the
 * VM fd of a debugged process later), as an anon-inode file of a Linux
 * driver.  A kind supplies its file operations (read, pread, pwrite, ioctl,
 * poll, release); this file keeps the objects, their owning DRM file and
 * the readiness events the daemon turns into wake-ups of the program's fd.
 *
 * Lifetime: an object is held by its owner (the DRM file whose ioctl made
 * it) and, once the daemon has given it to a program, by the daemon's
 * endpoint (zk_fd_attach).  When the owner closes, the kind's state is
 * released at once and the object is hung up (zk_fd_poll: ZK_POLLHUP): the
 * daemon then closes the endpoint.  When the endpoint closes (the program
 * closed the last copy of the fd), the object is freed. */
#ifndef ZESIM_KMD_FDS_H
#define ZESIM_KMD_FDS_H

#include <stddef.h>
#include <stdint.h>

#include "kmd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zk_fd zk_fd_t;

/* poll bits, the values of <poll.h>. */
#define ZK_POLLIN 0x001u
#define ZK_POLLOUT 0x004u
#define ZK_POLLERR 0x008u
#define ZK_POLLHUP 0x010u

#define ZK_MAX_FDS_PER_FILE 64u

/* File operations of a kind.  Every op runs in the daemon's thread and
 * never waits: read returns -EAGAIN when nothing is there (the daemon and
 * the preload library make a blocking read of it).  A NULL op: read ->
 * -EINVAL, pread/pwrite -> -ESPIPE, ioctl -> -ENOTTY, poll -> 0. */
typedef struct zk_fd_ops {
	const char *name; /* as an anon inode's, e.g. "[zesim_test]" */
	long (*read)(zk_fd_t *fd, uint8_t *buf, uint32_t len);
	long (*pread)(zk_fd_t *fd, uint8_t *buf, uint32_t len, uint64_t off);
	long (*pwrite)(zk_fd_t *fd, const uint8_t *buf, uint32_t len, uint64_t off);
	int (*ioctl)(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		     zk_out_blob_t *out, unsigned nout);
	unsigned (*poll)(zk_fd_t *fd);
	void (*release)(zk_fd_t *fd); /* free the kind's state (priv) */
} zk_fd_ops_t;

/* The KMD's fd bookkeeping: a member of the KMD (kmd.c), zeroed at start. */
typedef struct zk_fds {
	zk_fd_t *all;			/* every live object */
	zk_fd_t *events, *events_tail;	/* readiness may have changed (zk_fd_next_event) */
	zk_fd_t *made;			/* the fd the last ioctl returned (zk_fd_take_new) */
	uint32_t count, next_id;
	int test_channel;		/* test-only kinds allowed (zk_set_test_channel) */
} zk_fds_t;

/* ---- for kinds (inside the KMD) ---- */

/* A new fd owned by `owner` with the kind's ops and state; it becomes the
 * fd the current ioctl returns.  0, -ENOMEM, or -EMFILE (ZK_MAX_FDS_PER_FILE).
 * On failure `priv` is not released. */
int zk_fd_create(zk_file_t *owner, const zk_fd_ops_t *ops, void *priv, zk_fd_t **out);
void *zk_fd_priv(const zk_fd_t *fd);
uint32_t zk_fd_id(const zk_fd_t *fd);
zk_file_t *zk_fd_owner(const zk_fd_t *fd); /* NULL once hung up */
/* The live fd with this id and ops (NULL if none or hung up). */
zk_fd_t *zk_fd_find(zk_kmd_t *kmd, uint32_t id, const zk_fd_ops_t *ops);
/* Readiness may have changed (records queued, an event, a hang-up): the
 * daemon re-polls the fd in this loop iteration. */
void zk_fd_notify(zk_fd_t *fd);
int zk_test_channel(zk_kmd_t *kmd);

/* ---- for the daemon ---- */

/* Allow test-only kinds (the daemon's --test-channel); else they are -EPERM. */
void zk_set_test_channel(zk_kmd_t *kmd, int on);
/* The fd made by the last zk_ioctl / zk_fd_ioctl, once; NULL if none. */
zk_fd_t *zk_fd_take_new(zk_kmd_t *kmd);
/* The daemon's endpoint now refers to the fd (`user` is the daemon's). */
void zk_fd_attach(zk_fd_t *fd, void *user);
void *zk_fd_user(const zk_fd_t *fd);
/* The endpoint is gone (the last copy of the fd was closed, or the daemon
 * dropped it): the object is freed, and released if its owner still lives. */
void zk_fd_close(zk_fd_t *fd);
/* Next fd whose readiness may have changed, or NULL. */
zk_fd_t *zk_fd_next_event(zk_kmd_t *kmd);
unsigned zk_fd_poll(zk_fd_t *fd); /* ZK_POLL*; ZK_POLLHUP once the owner closed */
const char *zk_fd_name(const zk_fd_t *fd);
uint32_t zk_fd_count(zk_kmd_t *kmd);
/* The operations; -EIO once hung up. */
long zk_fd_read(zk_fd_t *fd, uint8_t *buf, uint32_t len);
long zk_fd_pread(zk_fd_t *fd, uint8_t *buf, uint32_t len, uint64_t off);
long zk_fd_pwrite(zk_fd_t *fd, const uint8_t *buf, uint32_t len, uint64_t off);
int zk_fd_ioctl(zk_fd_t *fd, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
		zk_out_blob_t *out, unsigned nout);

/* ---- for kmd.c ---- */
void zk_fds_file_closed(zk_kmd_t *kmd, zk_file_t *file); /* zk_close: hang up its fds */
void zk_fds_fini(zk_kmd_t *kmd);			   /* zk_destroy */

#ifdef __cplusplus
}
#endif

#endif
