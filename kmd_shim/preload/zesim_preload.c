/* LD_PRELOAD library: a fake DRM render node backed by the zesim daemon
 * (docs/preload.md).  Opening /dev/dri/renderD128 connects to the daemon's
 * socket ($ZESIM_SOCKET); the socket is the file descriptor the program
 * gets.  ioctl() on it is marshalled to the fake KMD from the ioctl table
 * it shares with the KMD (uapi/zesim_ioctl_table.h: the user buffers of each
 * ioctl and their lengths), mmap() maps the GEM object's memfd,
 * fstat()/stat() describe a character device 226:128, and /dev/dri and a
 * few sysfs files exist even on a machine without a GPU.  An ioctl that
 * returns a new fd (a secondary fd: test fd, later OA stream, debug
 * connection) gives the program one end of a socketpair from the daemon;
 * read/pread/pwrite/ioctl on it are marshalled on that socket, and
 * poll/select/epoll work natively on it (docs/preload.md §3.1).  Every other
 * file and fd passes through untouched. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_drm.h"
#include "uapi/zesim_ioctl_table.h"
#include "uapi/zesim_wire.h"

#define EXPORT __attribute__((visibility("default")))

enum { W_MAGIC = ZESIM_WIRE_MAGIC, W_ERROR = ZESIM_WIRE_ERROR, W_OPEN = ZESIM_WIRE_OPEN, W_IOCTL = ZESIM_WIRE_IOCTL,
       W_MMAP = ZESIM_WIRE_MMAP };
#define MAX_FDS 65536
/* How long past its own timeout a WAIT_USER_FENCE waits for the daemon's
 * reply (docs/preload.md §5): the daemon re-checks a wait every 1 ms while
 * idle, or after each simulation quantum. */
#define WAIT_GRACE_NS 50000000ull
/* Timeouts beyond a year are forever, as in the daemon. */
#define FOREVER_NS (365ll * 24 * 3600 * 1000000000ll)

/* ---- the real functions ----------------------------------------------------- */

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_fstat)(int, struct stat *);
static int (*real_fstat64)(int, struct stat64 *);
static int (*real_stat)(const char *, struct stat *);
static int (*real_stat64)(const char *, struct stat64 *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_lstat64)(const char *, struct stat64 *);
static int (*real_fstatat)(int, const char *, struct stat *, int);
static int (*real_fstatat64)(int, const char *, struct stat64 *, int);
static int (*real_access)(const char *, int);
static int (*real_faccessat)(int, const char *, int, int);
static DIR *(*real_opendir)(const char *);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static ssize_t (*real_readlink)(const char *, char *, size_t);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static ssize_t (*real_pread64)(int, void *, size_t, off64_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
#define R(n) *(void **)(&real_##n) = dlsym(RTLD_NEXT, #n)
	R(open); R(open64); R(openat); R(openat64); R(close); R(ioctl); R(mmap); R(mmap64);
	R(fstat); R(fstat64); R(stat); R(stat64); R(lstat); R(lstat64); R(fstatat); R(fstatat64);
	R(access); R(faccessat); R(opendir); R(dup); R(dup2); R(dup3); R(fcntl); R(read); R(pread);
	R(pwrite); R(fopen); R(fopen64); R(readlink); R(fcntl64); R(write); R(recvmsg); R(pread64); R(pwrite64);
#undef R
}

static void init(void) { pthread_once(&init_once, resolve); }

/* ---- fake files ------------------------------------------------------------- */

typedef struct conn {
	pthread_mutex_t lock; /* held for a request and its reply */
	int refs;	      /* fds (dups) that refer to this connection */
	/* A secondary fd's socket (§3.1), not a DRM connection: only `lock`,
	 * `refs` and `broken` (the daemon hung it up) are used. */
	int secondary;
	/* Under `lock`: a WAIT_USER_FENCE gave up on its reply, which the daemon
	 * still sends; it is read and dropped before the next request. */
	int owed;
	int broken; /* the daemon went away or the stream is out of step: EIO */
	/* The daemon missed a reply deadline and has not answered since: further
	 * waits get no grace, so a series of them costs their timeouts only. */
	int late;
} conn_t;

static conn_t *fds[MAX_FDS];
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;

/* Either kind of tracked fd. */
static conn_t *obj_of(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return NULL;
	pthread_mutex_lock(&fds_lock);
	conn_t *c = fds[fd];
	pthread_mutex_unlock(&fds_lock);
	return c;
}

/* A DRM connection (the device fd). */
static conn_t *conn_of(int fd)
{
	conn_t *c = obj_of(fd);
	return c && !c->secondary ? c : NULL;
}


static void track(int fd, conn_t *c)
{
	pthread_mutex_lock(&fds_lock);
	if (fd >= 0 && fd < MAX_FDS) {
		fds[fd] = c;
		c->refs++;
	}
	pthread_mutex_unlock(&fds_lock);
}

static void untrack(int fd)
{
	pthread_mutex_lock(&fds_lock);
	conn_t *c = fd >= 0 && fd < MAX_FDS ? fds[fd] : NULL;
	if (c) {
		fds[fd] = NULL;
		if (--c->refs == 0) {
			pthread_mutex_destroy(&c->lock);
			free(c);
		}
	}
	pthread_mutex_unlock(&fds_lock);
}

static const char *const device_paths[] = {ZESIM_RENDER_NODE, "/dev/dri/by-path/pci-0000:00:02.0-render"};

/* The device exists only when a simulator is configured ($ZESIM_SOCKET
 * names a socket), so tools probing /dev/dri see the truth. */
static int device_present(void)
{
	const char *s = getenv("ZESIM_SOCKET");
	struct stat st;
	return s && *s && real_stat && real_stat(s, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int is_device_path(const char *path)
{
	for (size_t i = 0; path && i < sizeof(device_paths) / sizeof(device_paths[0]); i++)
		if (strcmp(path, device_paths[i]) == 0)
			return 1;
	return 0;
}

static int is_device(const char *path) { return path && device_present() && is_device_path(path); }

/* sysfs files a driver or a tool reads to identify the device. */
static const struct {
	const char *path, *content;
} sysfs[] = {
	{"/sys/class/drm/renderD128/dev", "226:128\n"},
	{"/sys/class/drm/renderD128/device/vendor", "0x8086\n"},
	{"/sys/class/drm/renderD128/device/device", "0x5a45\n"},
	{"/sys/class/drm/renderD128/device/subsystem_vendor", "0x8086\n"},
	{"/sys/class/drm/renderD128/device/subsystem_device", "0x0000\n"},
	{"/sys/class/drm/renderD128/device/revision", "0x00\n"},
	{"/sys/class/drm/renderD128/device/driver/module/name", "zesim\n"},
	{"/sys/dev/char/226:128/device/vendor", "0x8086\n"},
	{"/sys/dev/char/226:128/device/device", "0x5a45\n"},
	{"/sys/dev/char/226:128/dev", "226:128\n"},
};

static const char *sysfs_content(const char *path)
{
	if (!path || !device_present())
		return NULL;
	for (size_t i = 0; path && i < sizeof(sysfs) / sizeof(sysfs[0]); i++)
		if (strcmp(path, sysfs[i].path) == 0)
			return sysfs[i].content;
	return NULL;
}

static int sysfs_open(const char *content)
{
	int fd = memfd_create("zesim-sysfs", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(content);
	if (write(fd, content, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0) {
		real_close(fd);
		errno = EIO;
		return -1;
	}
	return fd;
}

/* A real directory that looks like /dev/dri: opendir/readdir work natively. */
static char fake_dri[PATH_MAX];
static pthread_once_t dri_once = PTHREAD_ONCE_INIT;

static void remove_fake_dri(void)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/by-path/pci-0000:00:02.0-render", fake_dri);
	unlink(p);
	snprintf(p, sizeof(p), "%s/by-path", fake_dri);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/renderD128", fake_dri);
	unlink(p);
	rmdir(fake_dri);
}

static void make_fake_dri(void)
{
	char tmpl[] = "/tmp/zesim-dri-XXXXXX";
	if (!mkdtemp(tmpl))
		return;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/renderD128", tmpl);
	int fd = real_open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0)
		real_close(fd);
	snprintf(p, sizeof(p), "%s/by-path", tmpl);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/by-path/pci-0000:00:02.0-render", tmpl);
	if (symlink("../renderD128", p) != 0 && errno != EEXIST)
		return;
	snprintf(fake_dri, sizeof(fake_dri), "%s", tmpl);
	atexit(remove_fake_dri);
}

static void device_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(ZESIM_DRM_MAJOR, ZESIM_DRM_MINOR);
	st->st_nlink = 1;
	st->st_blksize = 4096;
}

static void dir_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_blksize = 4096;
}

static int is_dri_dir(const char *path)
{
	return path && device_present() && (strcmp(path, "/dev/dri") == 0 || strcmp(path, "/dev/dri/") == 0 ||
			strcmp(path, "/dev/dri/by-path") == 0);
}

/* ---- talking to the daemon --------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int wait_io(int fd, short ev)
{
	struct pollfd p = {.fd = fd, .events = ev};
	int k;
	do
		k = poll(&p, 1, -1);
	while (k < 0 && errno == EINTR);
	return k < 0 ? -1 : 0;
}

/* All of buf; a non-blocking socket (a secondary fd the program made
 * O_NONBLOCK) is waited for.  0, or -1 when the peer is gone. */
static int send_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && !wait_io(fd, POLLOUT))))
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Until fd has something to read (or was closed) or `deadline` (ns of
 * CLOCK_MONOTONIC; 0: none) passes.  0 or -ETIME. */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		int ms = -1;
		if (deadline) {
			const uint64_t now = now_ns();
			if (now >= deadline)
				ms = 0;
			else
				ms = (int)((deadline - now + 999999) / 1000000 < INT_MAX ? (deadline - now + 999999) / 1000000
											: INT_MAX);
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		const int k = poll(&p, 1, ms);
		if (k > 0)
			return 0;
		if (k < 0 && errno != EINTR)
			return 0; /* let recv report it */
		if (deadline && now_ns() >= deadline)
			return -ETIME;
	}
}

/* One message from the daemon.  The deadline holds until its first bytes
 * arrive; the daemon writes a message at once, so the rest follows.  The
 * payload is malloc'ed into *out; a passed fd (SCM_RIGHTS) lands in *rfd, or
 * is closed without rfd.  Returns the message type, -ETIME (nothing read) or
 * -EIO (connection closed or not our protocol). */
static int recv_msg(int fd, uint64_t deadline, uint8_t **out, uint32_t *out_len, int *rfd)
{
	if (rfd)
		*rfd = -1;
	/* Without a deadline the receive itself blocks: no poll first (one
	 * system call less on every ioctl). */
	if (deadline && wait_readable(fd, deadline))
		return -ETIME;
	uint32_t hdr[3];
	struct iovec iov = {hdr, sizeof(hdr)};
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctrl;
	mh.msg_controllen = sizeof(ctrl);
	ssize_t k;
	do
		k = real_recvmsg(fd, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	while (k < 0 && errno == EINTR);
	int passed = -1;
	if (k > 0)
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(&passed, CMSG_DATA(c), sizeof(int));
	if (k != (ssize_t)sizeof(hdr) || hdr[0] != W_MAGIC)
		goto bad;
	*out = malloc(hdr[2] ? hdr[2] : 1);
	if (!*out || recv_all(fd, *out, hdr[2])) {
		free(*out);
		*out = NULL;
		goto bad;
	}
	*out_len = hdr[2];
	if (rfd)
		*rfd = passed;
	else if (passed >= 0)
		real_close(passed);
	return (int)hdr[1];
bad:
	if (passed >= 0)
		real_close(passed);
	return -EIO;
}

/* Read and drop the reply an earlier wait gave up on, waiting until
 * `wait_end` (0: as long as it takes).  0, -ETIME (still owed) or -EIO. */
static int drain_owed(int fd, conn_t *c, uint64_t wait_end)
{
	if (c->broken)
		return -EIO;
	if (!c->owed)
		return 0;
	uint8_t *late = NULL;
	uint32_t n;
	const int t = recv_msg(fd, wait_end, &late, &n, NULL);
	free(late);
	if (t == -ETIME)
		return -ETIME;
	if (t < 0) {
		c->broken = 1;
		return -EIO;
	}
	c->owed = 0;
	__atomic_store_n(&c->late, 0, __ATOMIC_RELAXED);
	return 0;
}

/* One request and its reply on connection c (held locked by the caller).
 * The reply payload is malloc'ed into *out; a passed fd lands in *rfd.
 * `wait_end` (0: none) is when the caller's wait times out: a reply owed
 * from an earlier wait is waited for until then, this request's reply until
 * then plus the grace (none while the daemon is late).  Returns the reply
 * type, -ETIME (the reply is then owed: later requests drop it first) or
 * -EIO (the daemon is gone or out of step; the connection stays broken). */
static int transact_fd(int fd, conn_t *c, uint32_t type, const void *payload, uint32_t len, uint8_t **out,
		       uint32_t *out_len, int *rfd, uint64_t wait_end, int send_fd);

static int transact(int fd, conn_t *c, uint32_t type, const void *payload, uint32_t len, uint8_t **out,
		    uint32_t *out_len, int *rfd, uint64_t wait_end)
{
	return transact_fd(fd, c, type, payload, len, out, out_len, rfd, wait_end, -1);
}

/* The first bytes of buf with `pass` attached (SCM_RIGHTS), then the rest. */
static int send_all_fd(int fd, const void *buf, size_t n, int pass)
{
	if (pass < 0)
		return send_all(fd, buf, n);
	struct iovec iov = {(void *)buf, n};
	char ctrl[CMSG_SPACE(sizeof(int))];
	memset(ctrl, 0, sizeof(ctrl));
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctrl;
	mh.msg_controllen = sizeof(ctrl);
	struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &pass, sizeof(int));
	ssize_t k;
	do
		k = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (k < 0 && errno == EINTR);
	if (k <= 0)
		return -1;
	return send_all(fd, (const uint8_t *)buf + k, n - (size_t)k);
}

/* As transact, with `send_fd` (if >= 0) travelling with the request. */
static int transact_fd(int fd, conn_t *c, uint32_t type, const void *payload, uint32_t len, uint8_t **out,
		       uint32_t *out_len, int *rfd, uint64_t wait_end, int send_fd)
{
	*out = NULL;
	int rc = drain_owed(fd, c, wait_end);
	if (rc)
		return rc; /* nothing sent */
	uint32_t hdr[3] = {W_MAGIC, type, len};
	/* One message per request: the daemon wakes once for it.  Only one
	 * request is ever in flight, so the socket buffer has room for it and
	 * a send does not block even if the daemon is stopped. */
	uint8_t small[512];
	int sent;
	if (len <= sizeof(small) - sizeof(hdr)) {
		memcpy(small, hdr, sizeof(hdr));
		memcpy(small + sizeof(hdr), payload, len);
		sent = send_all_fd(fd, small, sizeof(hdr) + len, send_fd) == 0;
	} else {
		sent = send_all_fd(fd, hdr, sizeof(hdr), send_fd) == 0 && send_all(fd, payload, len) == 0;
	}
	if (!sent) {
		c->broken = 1; /* EPIPE, ECONNRESET: the daemon is gone */
		return -EIO;
	}
	uint64_t deadline = 0;
	if (wait_end)
		deadline = wait_end + (__atomic_load_n(&c->late, __ATOMIC_RELAXED) ? 0 : WAIT_GRACE_NS);
	const int t = recv_msg(fd, deadline, out, out_len, rfd);
	if (t == -ETIME) {
		c->owed = 1;
		__atomic_store_n(&c->late, 1, __ATOMIC_RELAXED);
	} else if (t < 0) {
		c->broken = 1;
	} else {
		__atomic_store_n(&c->late, 0, __ATOMIC_RELAXED);
	}
	return t;
}

/* Lock c for a request; a wait (wait_end != 0) gives up at wait_end plus the
 * grace: another thread's request may be stuck on a stopped daemon. */
static int conn_lock(conn_t *c, uint64_t wait_end)
{
	if (!wait_end) {
		pthread_mutex_lock(&c->lock);
		return 0;
	}
	const uint64_t d = wait_end + (__atomic_load_n(&c->late, __ATOMIC_RELAXED) ? 0 : WAIT_GRACE_NS);
	const struct timespec ts = {(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)};
	if (pthread_mutex_clocklock(&c->lock, CLOCK_MONOTONIC, &ts) == 0)
		return 0;
	__atomic_store_n(&c->late, 1, __ATOMIC_RELAXED);
	return -ETIME;
}

/* Why the device cannot be opened, on stderr, once per process: without it
 * a program only learns that Level Zero found no device. */
static void explain(const char *fmt, ...)
{
	static int said;
	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char line[600];
	const int n = snprintf(line, sizeof(line), "zesim: no simulated GPU: %s\n", msg);
	if (n > 0)
		real_write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* The device path was opened but $ZESIM_SOCKET names no socket. */
static void explain_no_socket(void)
{
	const char *path = getenv("ZESIM_SOCKET");
	struct stat st;
	if (!path || !*path)
		explain("ZESIM_SOCKET is not set (./zesim run sets it and starts a daemon)");
	else if (real_stat(path, &st) != 0)
		explain("daemon socket %s: %s (is the daemon running?)", path, strerror(errno));
	else
		explain("daemon socket %s is not a socket", path);
}

static int open_device(int flags)
{
	const char *path = getenv("ZESIM_SOCKET");
	if (!path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		if (path && *path)
			explain("daemon socket path %s is too long (max %zu bytes)", path,
				sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		errno = ENOENT; /* no simulator: no device */
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | ((flags & O_CLOEXEC) ? SOCK_CLOEXEC : 0), 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un a = {0};
	a.sun_family = AF_UNIX;
	memcpy(a.sun_path, path, strlen(path));
	/* OPEN: the pid, and the program's own job timeout if it has one
	 * (ZESIM_JOB_TIMEOUT_MS, set by `zesim run --timeout`; docs/kmd.md §6). */
	uint32_t open_arg[2] = {(uint32_t)getpid(), 0};
	uint32_t open_len = 4;
	const char *jt = getenv("ZESIM_JOB_TIMEOUT_MS");
	if (jt && *jt) {
		char *end;
		unsigned long ms = strtoul(jt, &end, 10);
		if (*end || ms > 0xffffffffu) {
			fprintf(stderr, "zesim: ZESIM_JOB_TIMEOUT_MS=%s is not a number of milliseconds: ignored\n", jt);
		} else {
			open_arg[1] = (uint32_t)ms;
			open_len = 8;
		}
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		explain("cannot connect to the daemon socket %s: %s", path, strerror(errno));
		real_close(fd);
		errno = ENODEV;
		return -1;
	}
	conn_t *c = calloc(1, sizeof(*c));
	if (!c || fd >= MAX_FDS) {
		free(c);
		real_close(fd);
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	uint8_t *reply = NULL;
	uint32_t rlen = 0;
	const int t = transact(fd, c, W_OPEN, open_arg, open_len, &reply, &rlen, NULL, 0);
	if (t != W_OPEN) {
		if (t == W_ERROR)
			explain("the daemon at %s refused the connection: %.*s", path, (int)(rlen < 400 ? rlen : 400),
				(const char *)reply);
		else
			explain("the daemon at %s closed the connection", path);
		free(reply);
		pthread_mutex_destroy(&c->lock);
		free(c);
		real_close(fd);
		errno = ENODEV;
		return -1;
	}
	free(reply);
	track(fd, c);
	return fd;
}

/* ---- ioctl marshalling ------------------------------------------------------------ */

typedef struct blob {
	uint64_t addr; /* user pointer (of a chain: its first link) */
	uint32_t len;
	int in, out;
	uint8_t *data; /* an in buffer, read from the program (malloc'ed) */
} blob_t;

/* Safe copies from/to the program's memory: a bad pointer gives EFAULT, as
 * from a kernel, instead of a crash inside the shim. */
static int copy_in(void *dst, uint64_t src, size_t n)
{
	if (!n)
		return 0;
	struct iovec l = {dst, n}, r = {(void *)(uintptr_t)src, n};
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static int copy_out(uint64_t dst, const void *src, size_t n)
{
	if (!n)
		return 0;
	struct iovec l = {(void *)src, n}, r = {(void *)(uintptr_t)dst, n};
	return process_vm_writev(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* ---- secondary fds (docs/preload.md §3.1) ------------------------------------------- */

/* The program's fd is one end of a socketpair whose other end is the
 * daemon's endpoint for the KMD fd object.  On it: our FD_* requests and
 * their replies, and the daemon's FD_READY, sent while the object is
 * readable and no reply has followed it yet: so the socket is readable
 * (poll/select/epoll, natively) while records are there, and the daemon
 * closing its end (the owner's DRM file closed) is POLLHUP and end of file.
 * The program may have made the socket non-blocking (O_NONBLOCK on "its"
 * fd): every wait here is a poll. */

static int track_secondary(int fd)
{
	conn_t *c = calloc(1, sizeof(*c));
	if (!c || fd >= MAX_FDS) {
		free(c);
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->secondary = 1;
	track(fd, c);
	return 0;
}

/* An fd another process passed us (SCM_RIGHTS): the daemon names its end
 * of a secondary fd's socketpair "\0zesim-fd/<pid>/<id>". */
static int is_secondary_socket(int fd)
{
	struct sockaddr_un a;
	socklen_t n = sizeof(a);
	const size_t pre = sizeof(ZESIM_WIRE_FD_NAME) - 1;
	if (getpeername(fd, (struct sockaddr *)&a, &n) != 0 || a.sun_family != AF_UNIX ||
	    n < offsetof(struct sockaddr_un, sun_path) + 1 + pre)
		return 0;
	return a.sun_path[0] == 0 && memcmp(a.sun_path + 1, ZESIM_WIRE_FD_NAME, pre) == 0;
}



/* Exactly n bytes; an fd passed with them lands in *rfd (closed without
 * rfd).  0, or -1 at end of file or an error. */
static int sfd_recv(int fd, void *buf, size_t n, int *rfd)
{
	uint8_t *p = buf;
	while (n) {
		struct iovec iov = {p, n};
		char ctrl[CMSG_SPACE(sizeof(int))];
		struct msghdr mh = {0};
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctrl;
		mh.msg_controllen = sizeof(ctrl);
		ssize_t k = real_recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (k < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && !wait_io(fd, POLLIN))))
			continue;
		if (k > 0)
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
					int got;
					memcpy(&got, CMSG_DATA(c), sizeof(int));
					if (rfd && *rfd < 0)
						*rfd = got;
					else
						real_close(got);
				}
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* One request and its reply on a secondary fd, skipping FD_READY messages.
 * Returns the reply type (payload malloc'ed into *out), -EPIPE when the
 * daemon hung the fd up (or went away), -EIO when the stream is not ours. */
static int sfd_transact(int fd, conn_t *c, uint32_t type, const void *payload, uint32_t len, uint8_t **out,
			uint32_t *out_len, int *rfd)
{
	*out = NULL;
	if (rfd)
		*rfd = -1;
	pthread_mutex_lock(&c->lock);
	int t = -EPIPE;
	if (c->broken)
		goto done;
	uint8_t small[512];
	const uint32_t hdr[3] = {W_MAGIC, type, len};
	int bad;
	if (len <= sizeof(small) - sizeof(hdr)) {
		memcpy(small, hdr, sizeof(hdr));
		memcpy(small + sizeof(hdr), payload, len);
		bad = send_all(fd, small, sizeof(hdr) + len);
	} else {
		bad = send_all(fd, hdr, sizeof(hdr)) || send_all(fd, payload, len);
	}
	if (bad)
		goto broken;
	for (;;) {
		uint32_t h[3];
		if (sfd_recv(fd, h, sizeof(h), rfd))
			goto broken;
		if (h[0] != W_MAGIC) {
			t = -EIO;
			goto broken;
		}
		uint8_t *b = malloc(h[2] ? h[2] : 1);
		if (!b || sfd_recv(fd, b, h[2], rfd)) {
			free(b);
			goto broken;
		}
		if (h[1] == ZESIM_WIRE_FD_READY) {
			free(b);
			continue;
		}
		*out = b;
		*out_len = h[2];
		t = (int)h[1];
		goto done;
	}
broken:
	c->broken = 1;
done:
	pthread_mutex_unlock(&c->lock);
	if (t < 0 && rfd && *rfd >= 0) {
		real_close(*rfd);
		*rfd = -1;
	}
	return t;
}

/* read(): whole records, as the KMD object gives them.  A blocking read
 * waits for the socket to become readable (FD_READY, or the hang-up) and
 * asks again. */
static ssize_t sfd_io(int fd, conn_t *c, void *buf, size_t n, int pos, off_t off, const void *wbuf)
{
	for (;;) {
		uint8_t req[12];
		uint32_t rl, type;
		uint8_t *wreq = NULL;
		const uint32_t want = n > ZESIM_WIRE_MAX_FD_IO ? ZESIM_WIRE_MAX_FD_IO : (uint32_t)n;
		const uint64_t o = (uint64_t)off;
		if (pos && off < 0) {
			errno = EINVAL;
			return -1;
		}
		if (wbuf) { /* pwrite */
			type = ZESIM_WIRE_FD_PWRITE;
			rl = 8 + want;
			wreq = malloc(rl);
			if (!wreq) {
				errno = ENOMEM;
				return -1;
			}
			memcpy(wreq, &o, 8);
			if (copy_in(wreq + 8, (uintptr_t)wbuf, want)) {
				free(wreq);
				errno = EFAULT;
				return -1;
			}
		} else if (pos) {
			type = ZESIM_WIRE_FD_PREAD;
			memcpy(req, &o, 8);
			memcpy(req + 8, &want, 4);
			rl = 12;
		} else {
			type = ZESIM_WIRE_FD_READ;
			memcpy(req, &want, 4);
			rl = 4;
		}
		uint8_t *rep;
		uint32_t rlen;
		int t = sfd_transact(fd, c, type, wreq ? wreq : req, rl, &rep, &rlen, NULL);
		free(wreq);
		if (t == -EPIPE && type == ZESIM_WIRE_FD_READ)
			return 0; /* hung up: end of file */
		int32_t ret = -EIO;
		if (t == W_ERROR)
			ret = -EINVAL;
		else if (t == (int)type && rlen >= 4) {
			memcpy(&ret, rep, 4);
			if (ret > 0 && (wbuf ? (uint32_t)ret > want : (rlen - 4 != (uint32_t)ret || (uint32_t)ret > want)))
				ret = -EIO;
			else if (ret > 0 && !wbuf && copy_out((uintptr_t)buf, rep + 4, (size_t)ret))
				ret = -EFAULT;
		}
		free(rep);
		if (ret == -EAGAIN && !pos && !(real_fcntl(fd, F_GETFL) & O_NONBLOCK)) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			if (poll(&p, 1, -1) < 0) {
				if (errno != EINTR)
					errno = EIO;
				return -1;
			}
			continue;
		}
		if (ret < 0) {
			errno = -ret;
			return -1;
		}
		return ret;
	}
}

static void blobs_free(blob_t *b, unsigned nb)
{
	for (unsigned i = 0; i < nb; i++)
		free(b[i].data);
}

/* A chain (ZESIM_UPTR_CHAIN): its links read one by one, following the pointer
 * at offset 0 of each, into one buffer; at most max_links + 1 of them. */
static int read_chain(const struct zesim_uptr *u, uint64_t addr, blob_t *b)
{
	b->data = NULL;
	b->len = 0;
	for (uint32_t n = 0; addr && n <= u->max_links; n++) {
		uint8_t *nd = realloc(b->data, (size_t)(n + 1) * u->elem);
		if (!nd)
			return -ENOMEM;
		b->data = nd;
		if (copy_in(nd + (size_t)n * u->elem, addr, u->elem))
			return -EFAULT;
		b->len += u->elem;
		memcpy(&addr, nd + (size_t)n * u->elem, 8);
	}
	return 0;
}

/* The user buffers of a call, from the ioctl table shared with the KMD
 * (uapi/zesim_ioctl_table.h): where each is, how long, which way it goes; the in
 * buffers are read here (a nested buffer's pointer is in an earlier one). */
static int blobs_for(unsigned long cmd, const void *arg, blob_t *b, unsigned *nb, int secondary)
{
	*nb = 0;
	/* A secondary fd's ioctls: their own table (the EU debug fd's). */
	const struct zesim_ioctl_desc *d = secondary ? zesim_fd_ioctl_find(cmd) : zesim_ioctl_find(cmd);
	if (d && d->arg_size != _IOC_SIZE(cmd))
		d = NULL;
	if (!d)
		return 0; /* unknown: the KMD answers EINVAL */
	int at[4] = {-1, -1, -1, -1}; /* the blob of each uptr */
	for (unsigned i = 0; i < d->nuptr; i++) {
		const struct zesim_uptr *u = &d->uptr[i];
		if (!zesim_uptr_selected(u, arg))
			continue;
		const void *from = arg;
		uint32_t from_len = _IOC_SIZE(cmd);
		if (u->flags & ZESIM_UPTR_NESTED) {
			if (at[u->parent] < 0)
				continue;
			from = b[at[u->parent]].data;
			from_len = b[at[u->parent]].len;
		}
		int present;
		uint64_t addr;
		uint32_t len;
		if (zesim_uptr_resolve_in(u, from, from_len, &present, &addr, &len)) {
			blobs_free(b, *nb);
			return -EINVAL;
		}
		if (!present)
			continue;
		blob_t *x = &b[*nb];
		*x = (blob_t){addr, len, !!(u->flags & ZESIM_UPTR_IN), !!(u->flags & ZESIM_UPTR_OUT), NULL};
		int rc = 0;
		if (u->flags & ZESIM_UPTR_CHAIN)
			rc = read_chain(u, addr, x);
		else if (x->in && len && !(x->data = malloc(len)))
			rc = -ENOMEM;
		else if (x->in)
			rc = copy_in(x->data, addr, len);
		at[i] = (int)(*nb)++;
		if (rc) {
			blobs_free(b, *nb);
			return rc;
		}
	}
	return 0;
}

static void put32(uint8_t **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

/* An ioctl on the device fd, or on a secondary fd (c->secondary: any type, user
 * buffers from zesim_fd_ioctls; the KMD object checks the command). */
static int device_ioctl(int fd, conn_t *c, unsigned long cmd, void *argp)
{
	if (!c->secondary && _IOC_TYPE(cmd) != ZESIM_DRM_IOCTL_BASE)
		return -ENOTTY;
	const uint32_t size = _IOC_SIZE(cmd);
	uint8_t arg[4096];
	if (size > sizeof(arg))
		return -EINVAL;
	if (size && copy_in(arg, (uintptr_t)argp, size))
		return -EFAULT;
	/* An ioctl that carries an fd (PRIME, docs/uapi.md §12). */
	const struct zesim_ioctl_desc *fdd = c->secondary ? NULL : zesim_ioctl_find(cmd);
	const uint32_t fd_flags = fdd && fdd->arg_size == size ? fdd->fd_flags : 0;
	int send_fd = -1;
	if (fd_flags & ZESIM_IOCTL_FD_IN) {
		memcpy(&send_fd, arg + fdd->fd_field, sizeof(send_fd));
		if (send_fd < 0 || real_fcntl(send_fd, F_GETFD) < 0)
			return -EBADF;
	}
	blob_t b[4];
	unsigned nb = 0;
	int rc = blobs_for(cmd, arg, b, &nb, c->secondary);
	if (rc)
		return rc;
	size_t total = 16 + size + 8;
	for (unsigned i = 0; i < nb; i++)
		total += 4 + (b[i].in ? b[i].len : 0);
	uint8_t *req = malloc(total), *p = req;
	if (!req) {
		blobs_free(b, nb);
		return -ENOMEM;
	}
	unsigned nin = 0, nout = 0;
	for (unsigned i = 0; i < nb; i++) {
		nin += b[i].in;
		nout += b[i].out;
	}
	put32(&p, (uint32_t)cmd);
	put32(&p, size);
	memcpy(p, arg, size);
	p += size;
	put32(&p, nin);
	put32(&p, nout);
	for (unsigned i = 0; i < nb; i++)
		if (b[i].in) {
			put32(&p, b[i].len);
			if (b[i].len)
				memcpy(p, b[i].data, b[i].len);
			p += b[i].len;
		}
	blobs_free(b, nb);
	for (unsigned i = 0; i < nb; i++)
		if (b[i].out)
			put32(&p, b[i].len);
	/* A fence wait ends at its timeout even if the daemon does not answer
	 * (stopped, or busy for long): docs/preload.md §5. */
	uint64_t wait_end = 0;
	struct drm_zesim_wait_user_fence *w = NULL;
	int64_t timeout = 0;
	if (cmd == DRM_IOCTL_ZESIM_WAIT_USER_FENCE) {
		w = (struct drm_zesim_wait_user_fence *)(req + 8);
		memcpy(&timeout, &w->timeout, sizeof(timeout));
		if (timeout >= 0 && timeout <= FOREVER_NS)
			wait_end = now_ns() + (uint64_t)timeout;
	}
	uint8_t *rep = NULL;
	uint32_t rlen = 0;
	int newfd = -1; /* an fd the ioctl returns */
	const int want = c->secondary ? ZESIM_WIRE_FD_IOCTL : W_IOCTL;
	int t = c->secondary ? 0 : conn_lock(c, wait_end);
	if (c->secondary) {
		t = sfd_transact(fd, c, ZESIM_WIRE_FD_IOCTL, req, (uint32_t)(p - req), &rep, &rlen, &newfd);
		if (t == -EPIPE)
			t = _IOC_TYPE(cmd) == ZESIM_EUDEBUG_IOCTL_BASE ? -ENOTCONN : -EIO; /* hung up: detached */
	} else if (t == 0 && wait_end) {
		/* The daemon counts the timeout from when it reads the request,
		 * which may be later than the call: send what is left. */
		if (!(t = drain_owed(fd, c, wait_end))) {
			const uint64_t now = now_ns();
			const int64_t left = now >= wait_end ? 0 : (int64_t)(wait_end - now);
			memcpy(&w->timeout, &left, sizeof(left));
		} else {
			pthread_mutex_unlock(&c->lock);
		}
	}
	if (t == 0 && !c->secondary) {
		t = transact_fd(fd, c, W_IOCTL, req, (uint32_t)(p - req), &rep, &rlen, &newfd, wait_end, send_fd);
		pthread_mutex_unlock(&c->lock);
	}
	free(req);
	if (t != want || rlen < 8) {
		free(rep);
		if (newfd >= 0)
			real_close(newfd);
		return t == -ETIME ? -ETIME : t == -ENOTCONN ? -ENOTCONN : t == W_ERROR ? -EINVAL : -EIO; /* -EIO: the daemon went away */
	}
	if (w && size >= sizeof(*w) && rlen >= 8 + sizeof(*w))
		memcpy(rep + 8 + offsetof(struct drm_zesim_wait_user_fence, timeout), &timeout, sizeof(timeout));
	int32_t ret;
	uint32_t asz;
	memcpy(&ret, rep, 4);
	memcpy(&asz, rep + 4, 4);
	const uint8_t *q = rep + 8;
	rc = 0;
	if (asz != size || rlen < 8 + asz + 4) {
		rc = -EIO;
	} else {
		if (fd_flags & ZESIM_IOCTL_FD_OUT) {
			/* The fd came with the reply: a plain file of this process
			 * (no secondary fd), its number in the argument. */
			if (ret == 0 && newfd < 0)
				rc = -EIO;
			if (ret == 0 && newfd >= 0) {
				uint32_t flags;
				memcpy(&flags, rep + 8 + offsetof(struct drm_zesim_prime_handle, flags), sizeof(flags));
				if (!(flags & ZESIM_PRIME_CLOEXEC))
					real_fcntl(newfd, F_SETFD, 0);
				memcpy(rep + 8 + fdd->fd_field, &newfd, sizeof(newfd));
			}
		}
		if ((_IOC_DIR(cmd) & _IOC_READ) && copy_out((uintptr_t)argp, q, size))
			rc = -EFAULT;
		q += size;
		uint32_t n;
		memcpy(&n, q, 4);
		q += 4;
		for (unsigned i = 0, o = 0; i < nb && !rc && o < n; i++) {
			if (!b[i].out)
				continue;
			uint32_t len;
			if (q + 4 > rep + rlen) {
				rc = -EIO;
				break;
			}
			memcpy(&len, q, 4);
			q += 4;
			if (len > b[i].len || q + len > rep + rlen)
				rc = -EIO;
			else if (ret == 0 && b[i].addr && copy_out(b[i].addr, q, len))
				rc = -EFAULT;
			q += len;
			o++;
		}
	}
	free(rep);
	if (newfd >= 0 && (fd_flags & ZESIM_IOCTL_FD_OUT)) {
		if (rc || ret)
			real_close(newfd);
		return rc ? rc : ret;
	}
	if (newfd >= 0) {
		/* The ioctl made a secondary fd: it is the call's result. */
		if (rc || ret || track_secondary(newfd)) {
			real_close(newfd);
			return rc ? rc : ret ? ret : -ENOMEM;
		}
		return newfd;
	}
	return rc ? rc : ret;
}

/* ---- interposed functions ------------------------------------------------------------ */

static int open_common(const char *path, int flags, mode_t mode, int dirfd, int at,
		       int (*real)(const char *, int, ...))
{
	init();
	if (is_device(path))
		return open_device(flags);
	if (is_device_path(path))
		explain_no_socket();
	const char *content = sysfs_content(path);
	if (content)
		return sysfs_open(content);
	if (at)
		return real_openat(dirfd, path, flags, mode);
	return real(path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	init();
	return open_common(path, flags, m, 0, 0, real_open);
}

EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	init();
	return open_common(path, flags, m, 0, 0, real_open64 ? real_open64 : real_open);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	return open_common(path, flags, m, dirfd, 1, NULL);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	return open_common(path, flags, m, dirfd, 1, NULL);
}

EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
EXPORT int __open64_2(const char *path, int flags) { return open64(path, flags); }

EXPORT FILE *fopen(const char *path, const char *mode)
{
	init();
	const char *content = sysfs_content(path);
	if (content) {
		int fd = sysfs_open(content);
		return fd < 0 ? NULL : fdopen(fd, "r");
	}
	return real_fopen(path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	init();
	if (sysfs_content(path))
		return fopen(path, mode);
	return (real_fopen64 ? real_fopen64 : real_fopen)(path, mode);
}

/* A secondary fd's fsync (the EU debug VM fd's: its writes are in GPU memory at once). */
EXPORT int fsync(int fd)
{
	init();
	conn_t *c = obj_of(fd);
	if (c && c->secondary)
		return 0;
	static int (*real_fsync)(int);
	if (!real_fsync)
		real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	return real_fsync(fd);
}

EXPORT int fdatasync(int fd)
{
	init();
	conn_t *c = obj_of(fd);
	if (c && c->secondary)
		return 0;
	static int (*real_fdatasync)(int);
	if (!real_fdatasync)
		real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	return real_fdatasync(fd);
}

EXPORT int close(int fd)
{
	init();
	if (obj_of(fd))
		untrack(fd);
	return real_close(fd);
}

/* READ_EVENT of the EU debug fd waits here (the daemon does not block an fd's
 * ioctl): until the fd is readable (an event, or the hang-up) and asks again, at
 * most timeout_ns, capped at 5 s as Xe's (docs/uapi.md "EU debug"). */
#define READ_EVENT_MAX_WAIT_NS 5000000000ull
static int read_event_wait(int fd, conn_t *c, void *argp)
{
	struct drm_zesim_eudebug_read_event r;
	if (copy_in(&r, (uintptr_t)argp, sizeof(r)))
		return -EFAULT;
	const uint64_t wait = r.timeout_ns > READ_EVENT_MAX_WAIT_NS ? READ_EVENT_MAX_WAIT_NS : r.timeout_ns;
	const uint64_t end = now_ns() + wait;
	int rc = -EAGAIN;
	while (rc == -EAGAIN && wait) {
		const uint64_t now = now_ns();
		if (now >= end)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		const int ms = (int)((end - now + 999999) / 1000000);
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			return -EIO;
		rc = device_ioctl(fd, c, ZESIM_EUDEBUG_IOCTL_READ_EVENT, argp);
	}
	return rc;
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	init();
	conn_t *c = obj_of(fd);
	if (!c)
		return real_ioctl(fd, request, arg);
	int rc = device_ioctl(fd, c, request, arg);
	if (rc == -EAGAIN && c->secondary && request == ZESIM_EUDEBUG_IOCTL_READ_EVENT)
		rc = read_event_wait(fd, c, arg);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

static void *device_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	conn_t *c = conn_of(fd);
	uint64_t req[2] = {(uint64_t)off, len};
	uint8_t *rep = NULL;
	uint32_t rlen;
	int memfd = -1;
	conn_lock(c, 0);
	int t = transact(fd, c, W_MMAP, req, sizeof(req), &rep, &rlen, &memfd, 0);
	pthread_mutex_unlock(&c->lock);
	int32_t ret = -EIO;
	if (t == W_MMAP && rlen == 4)
		memcpy(&ret, rep, 4);
	free(rep);
	if (ret || memfd < 0) {
		if (memfd >= 0)
			real_close(memfd);
		errno = ret ? -ret : EIO;
		return MAP_FAILED;
	}
	void *p = real_mmap(addr, len, prot, flags, memfd, 0);
	real_close(memfd);
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	init();
	if (conn_of(fd))
		return device_mmap(addr, len, prot, flags, fd, off);
	return real_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	init();
	if (conn_of(fd))
		return device_mmap(addr, len, prot, flags, fd, (off_t)off);
	return (real_mmap64 ? real_mmap64 : (void *(*)(void *, size_t, int, int, int, off64_t))real_mmap)(addr, len, prot,
												      flags, fd, off);
}

EXPORT int fstat(int fd, struct stat *st)
{
	init();
	if (conn_of(fd)) {
		device_stat(st);
		return 0;
	}
	return real_fstat(fd, st);
}

EXPORT int fstat64(int fd, struct stat64 *st)
{
	init();
	if (conn_of(fd)) {
		device_stat((struct stat *)st);
		return 0;
	}
	return real_fstat64(fd, st);
}

static int path_stat(const char *path, struct stat *st)
{
	if (is_device(path)) {
		device_stat(st);
		return 1;
	}
	if (is_dri_dir(path)) {
		dir_stat(st);
		return 1;
	}
	return 0;
}

EXPORT int stat(const char *path, struct stat *st)
{
	init();
	return path_stat(path, st) ? 0 : real_stat(path, st);
}

EXPORT int stat64(const char *path, struct stat64 *st)
{
	init();
	return path_stat(path, (struct stat *)st) ? 0 : real_stat64(path, st);
}

static const char by_path_link[] = "/dev/dri/by-path/pci-0000:00:02.0-render";

static int link_stat(const char *path, struct stat *st)
{
	if (!is_device(path) || strcmp(path, by_path_link) != 0)
		return path_stat(path, st);
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_size = (off_t)strlen("../renderD128");
	return 1;
}

EXPORT int lstat(const char *path, struct stat *st)
{
	init();
	return link_stat(path, st) ? 0 : real_lstat(path, st);
}

EXPORT int lstat64(const char *path, struct stat64 *st)
{
	init();
	return link_stat(path, (struct stat *)st) ? 0 : real_lstat64(path, st);
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	init();
	if (path[0] == '/' && path_stat(path, st))
		return 0;
	if (!path[0] && (flags & AT_EMPTY_PATH) && conn_of(dirfd)) {
		device_stat(st);
		return 0;
	}
	return real_fstatat(dirfd, path, st, flags);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	init();
	if (path[0] == '/' && path_stat(path, (struct stat *)st))
		return 0;
	if (!path[0] && (flags & AT_EMPTY_PATH) && conn_of(dirfd)) {
		device_stat((struct stat *)st);
		return 0;
	}
	return real_fstatat64(dirfd, path, st, flags);
}

EXPORT int access(const char *path, int mode)
{
	init();
	if (is_device(path) || is_dri_dir(path) || sysfs_content(path))
		return 0;
	return real_access(path, mode);
}

EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	init();
	if (is_device(path) || is_dri_dir(path) || sysfs_content(path))
		return 0;
	return real_faccessat(dirfd, path, mode, flags);
}

EXPORT DIR *opendir(const char *path)
{
	init();
	if (is_dri_dir(path)) {
		pthread_once(&dri_once, make_fake_dri);
		if (fake_dri[0]) {
			char p[PATH_MAX + 16];
			snprintf(p, sizeof(p), "%s%s", fake_dri, strstr(path, "by-path") ? "/by-path" : "");
			return real_opendir(p);
		}
	}
	return real_opendir(path);
}

EXPORT ssize_t readlink(const char *path, char *buf, size_t n)
{
	init();
	if (is_device(path) && strcmp(path, by_path_link) == 0) {
		const char *t = "../renderD128";
		size_t l = strlen(t) < n ? strlen(t) : n;
		memcpy(buf, t, l);
		return (ssize_t)l;
	}
	return real_readlink(path, buf, n);
}

static int dup_track(int oldfd, int newfd)
{
	conn_t *c = obj_of(oldfd);
	if (newfd >= 0 && c)
		track(newfd, c);
	return newfd;
}

EXPORT int dup(int fd)
{
	init();
	return dup_track(fd, real_dup(fd));
}

EXPORT int dup2(int fd, int fd2)
{
	init();
	if (fd == fd2)
		return real_dup2(fd, fd2); /* no new descriptor */
	if (obj_of(fd2))
		untrack(fd2);
	return dup_track(fd, real_dup2(fd, fd2));
}

EXPORT int dup3(int fd, int fd2, int flags)
{
	init();
	if (obj_of(fd2) && fd2 != fd)
		untrack(fd2);
	return dup_track(fd, real_dup3(fd, fd2, flags));
}

EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	init();
	int r = real_fcntl(fd, cmd, arg);
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0)
		dup_track(fd, r);
	return r;
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	init();
	int r = (real_fcntl64 ? real_fcntl64 : real_fcntl)(fd, cmd, arg);
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0)
		dup_track(fd, r);
	return r;
}

/* Writing to a render node is not a DRM operation (and must not reach the
 * daemon's byte stream). */
EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	init();
	if (obj_of(fd)) {
		errno = EINVAL;
		return -1;
	}
	return real_write(fd, buf, n);
}

/* A render node has no read/write data path: DRM events are not modelled. */
EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	init();
	conn_t *c = obj_of(fd);
	if (c && c->secondary)
		return sfd_io(fd, c, buf, n, 0, 0, NULL);
	if (c) {
		errno = EAGAIN;
		return -1;
	}
	return real_read(fd, buf, n);
}

/* _FORTIFY_SOURCE's read(). */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	if (n > buflen) {
		static const char msg[] = "*** buffer overflow detected ***: terminated\n";
		real_write(2, msg, sizeof(msg) - 1);
		abort();
	}
	return read(fd, buf, n);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	init();
	conn_t *c = obj_of(fd);
	if (c && c->secondary)
		return sfd_io(fd, c, buf, n, 1, off, NULL);
	if (c) {
		errno = EINVAL;
		return -1;
	}
	return real_pread(fd, buf, n, off);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	init();
	conn_t *c = obj_of(fd);
	if (c && c->secondary)
		return sfd_io(fd, c, NULL, n, 1, off, buf);
	if (c) {
		errno = EINVAL;
		return -1;
	}
	return real_pwrite(fd, buf, n, off);
}

EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	init();
	if (obj_of(fd))
		return pread(fd, buf, n, (off_t)off);
	return (real_pread64 ? real_pread64 : (ssize_t(*)(int, void *, size_t, off64_t))real_pread)(fd, buf, n, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	init();
	if (obj_of(fd))
		return pwrite(fd, buf, n, (off_t)off);
	return (real_pwrite64 ? real_pwrite64 : (ssize_t(*)(int, const void *, size_t, off64_t))real_pwrite)(fd, buf, n,
													 off);
}

/* A secondary fd another process passes over a unix socket becomes one
 * here too (recognised by the daemon's name for its end). */
EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	init();
	const ssize_t r = real_recvmsg(fd, msg, flags);
	if (r < 0 || !msg || !msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return r;
	const int err = errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (!obj_of(got) && is_secondary_socket(got))
				track_secondary(got);
		}
	}
	errno = err;
	return r;
}
