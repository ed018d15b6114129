/* LD_PRELOAD library: a fake DRM render node backed by the zesim daemon
 * (docs/preload.md).  Opening /dev/dri/renderD128 connects to the daemon's
 * socket ($ZESIM_SOCKET); the socket is the file descriptor the program
 * gets.  ioctl() on it is marshalled to the fake KMD (one handler table
 * entry per ioctl, as Mesa's drm-shim does), mmap() maps the GEM object's
 * memfd, fstat()/stat() describe a character device 226:128, and /dev/dri
 * and a few sysfs files exist even on a machine without a GPU.  Every other
 * file and fd passes through untouched. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
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
#include <unistd.h>

#include "uapi/zesim_drm.h"

#define EXPORT __attribute__((visibility("default")))

enum { W_MAGIC = 0x4d49535a, W_ERROR = 0xffff, W_OPEN = 8, W_IOCTL = 9, W_MMAP = 10 };
#define MAX_BLOB (256u << 10)
#define MAX_FDS 65536

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

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
#define R(n) *(void **)(&real_##n) = dlsym(RTLD_NEXT, #n)
	R(open); R(open64); R(openat); R(openat64); R(close); R(ioctl); R(mmap); R(mmap64);
	R(fstat); R(fstat64); R(stat); R(stat64); R(lstat); R(lstat64); R(fstatat); R(fstatat64);
	R(access); R(faccessat); R(opendir); R(dup); R(dup2); R(dup3); R(fcntl); R(read); R(pread);
	R(pwrite); R(fopen); R(fopen64); R(readlink); R(fcntl64); R(write);
#undef R
}

static void init(void) { pthread_once(&init_once, resolve); }

/* ---- fake files ------------------------------------------------------------- */

typedef struct conn {
	pthread_mutex_t lock;
	int refs; /* fds (dups) that refer to this connection */
} conn_t;

static conn_t *fds[MAX_FDS];
static pthread_mutex_t fds_lock = PTHREAD_MUTEX_INITIALIZER;

static conn_t *conn_of(int fd)
{
	if (fd < 0 || fd >= MAX_FDS)
		return NULL;
	pthread_mutex_lock(&fds_lock);
	conn_t *c = fds[fd];
	pthread_mutex_unlock(&fds_lock);
	return c;
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

static int is_device(const char *path)
{
	if (!path || !device_present())
		return 0;
	for (size_t i = 0; path && i < sizeof(device_paths) / sizeof(device_paths[0]); i++)
		if (strcmp(path, device_paths[i]) == 0)
			return 1;
	return 0;
}

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

static int send_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
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

/* One request and its reply.  The reply payload is malloc'ed into *out;
 * a passed fd (SCM_RIGHTS) lands in *rfd.  Returns the reply type or -1. */
static int transact(int fd, uint32_t type, const void *payload, uint32_t len, uint8_t **out, uint32_t *out_len,
		    int *rfd)
{
	uint32_t hdr[3] = {W_MAGIC, type, len};
	/* One message per request: the daemon wakes once for it. */
	uint8_t small[512];
	if (len <= sizeof(small) - sizeof(hdr)) {
		memcpy(small, hdr, sizeof(hdr));
		memcpy(small + sizeof(hdr), payload, len);
		if (send_all(fd, small, sizeof(hdr) + len))
			return -1;
	} else if (send_all(fd, hdr, sizeof(hdr)) || send_all(fd, payload, len)) {
		return -1;
	}
	struct iovec iov = {hdr, sizeof(hdr)};
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctrl;
	mh.msg_controllen = sizeof(ctrl);
	ssize_t k;
	do
		k = recvmsg(fd, &mh, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	while (k < 0 && errno == EINTR);
	if (k != (ssize_t)sizeof(hdr) || hdr[0] != W_MAGIC)
		return -1;
	if (rfd) {
		*rfd = -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(rfd, CMSG_DATA(c), sizeof(int));
	}
	*out = malloc(hdr[2] ? hdr[2] : 1);
	if (!*out || recv_all(fd, *out, hdr[2])) {
		free(*out);
		return -1;
	}
	*out_len = hdr[2];
	return (int)hdr[1];
}

static int open_device(int flags)
{
	const char *path = getenv("ZESIM_SOCKET");
	if (!path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
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
	uint8_t *reply = NULL;
	uint32_t rlen;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    transact(fd, W_OPEN, open_arg, open_len, &reply, &rlen, NULL) != W_OPEN) {
		free(reply);
		real_close(fd);
		errno = ENODEV;
		return -1;
	}
	free(reply);
	conn_t *c = calloc(1, sizeof(*c));
	if (!c || fd >= MAX_FDS) {
		free(c);
		real_close(fd);
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	track(fd, c);
	return fd;
}

/* ---- ioctl marshalling ------------------------------------------------------------ */

typedef struct blob {
	uint64_t addr; /* user pointer */
	uint32_t len;
	int in, out;
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

/* The user buffers an ioctl's argument points to (docs/uapi.md "wire"). */
static int blobs_for(unsigned long cmd, const void *arg, blob_t *b, unsigned *nb)
{
	*nb = 0;
	switch (cmd) {
	case DRM_IOCTL_ZESIM_VERSION: {
		const struct drm_zesim_version *v = arg;
		b[0] = (blob_t){(uintptr_t)v->name, (uint32_t)v->name_len, 0, 1};
		b[1] = (blob_t){(uintptr_t)v->date, (uint32_t)v->date_len, 0, 1};
		b[2] = (blob_t){(uintptr_t)v->desc, (uint32_t)v->desc_len, 0, 1};
		for (int i = 0; i < 3; i++)
			if (!b[i].addr)
				b[i].len = 0;
		if (v->name_len > MAX_BLOB || v->date_len > MAX_BLOB || v->desc_len > MAX_BLOB)
			return -EINVAL;
		*nb = 3;
		return 0;
	}
	case DRM_IOCTL_ZESIM_DEVICE_QUERY: {
		const struct drm_zesim_device_query *q = arg;
		if (q->size && q->data) {
			if (q->size > MAX_BLOB)
				return -EINVAL;
			b[0] = (blob_t){q->data, q->size, 1, 1};
			*nb = 1;
		}
		return 0;
	}
	case DRM_IOCTL_ZESIM_VM_BIND: {
		const struct drm_zesim_vm_bind *v = arg;
		if ((uint64_t)v->num_binds * sizeof(struct drm_zesim_vm_bind_op) > MAX_BLOB ||
		    (uint64_t)v->num_syncs * sizeof(struct drm_zesim_sync) > MAX_BLOB)
			return -EINVAL;
		if (v->num_binds > 1)
			b[(*nb)++] = (blob_t){v->vector_of_binds, v->num_binds * (uint32_t)sizeof(struct drm_zesim_vm_bind_op), 1, 0};
		if (v->num_syncs)
			b[(*nb)++] = (blob_t){v->syncs, v->num_syncs * (uint32_t)sizeof(struct drm_zesim_sync), 1, 0};
		return 0;
	}
	case DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE: {
		const struct drm_zesim_exec_queue_create *c = arg;
		uint64_t n = (uint64_t)c->width * c->num_placements * sizeof(struct drm_zesim_engine_class_instance);
		if (n > MAX_BLOB)
			return -EINVAL;
		b[(*nb)++] = (blob_t){c->instances, (uint32_t)n, 1, 0};
		return 0;
	}
	case DRM_IOCTL_ZESIM_EXEC: {
		const struct drm_zesim_exec *e = arg;
		if ((uint64_t)e->num_syncs * sizeof(struct drm_zesim_sync) > MAX_BLOB)
			return -EINVAL;
		if (e->num_syncs)
			b[(*nb)++] = (blob_t){e->syncs, e->num_syncs * (uint32_t)sizeof(struct drm_zesim_sync), 1, 0};
		return 0;
	}
	default:
		return 0;
	}
}

static void put32(uint8_t **p, uint32_t v)
{
	memcpy(*p, &v, 4);
	*p += 4;
}

static int device_ioctl(int fd, conn_t *c, unsigned long cmd, void *argp)
{
	if (_IOC_TYPE(cmd) != ZESIM_DRM_IOCTL_BASE)
		return -ENOTTY;
	const uint32_t size = _IOC_SIZE(cmd);
	uint8_t arg[4096];
	if (size > sizeof(arg))
		return -EINVAL;
	if (size && copy_in(arg, (uintptr_t)argp, size))
		return -EFAULT;
	blob_t b[4];
	unsigned nb;
	int rc = blobs_for(cmd, arg, b, &nb);
	if (rc)
		return rc;
	size_t total = 16 + size + 8;
	for (unsigned i = 0; i < nb; i++)
		total += 4 + (b[i].in ? b[i].len : 0);
	uint8_t *req = malloc(total), *p = req;
	if (!req)
		return -ENOMEM;
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
			if (copy_in(p, b[i].addr, b[i].len)) {
				free(req);
				return -EFAULT;
			}
			p += b[i].len;
		}
	for (unsigned i = 0; i < nb; i++)
		if (b[i].out)
			put32(&p, b[i].len);
	uint8_t *rep = NULL;
	uint32_t rlen = 0;
	pthread_mutex_lock(&c->lock);
	int t = transact(fd, W_IOCTL, req, (uint32_t)(p - req), &rep, &rlen, NULL);
	pthread_mutex_unlock(&c->lock);
	free(req);
	if (t != W_IOCTL || rlen < 8) {
		free(rep);
		return t == W_ERROR ? -EINVAL : -EIO; /* the daemon went away */
	}
	int32_t ret;
	uint32_t asz;
	memcpy(&ret, rep, 4);
	memcpy(&asz, rep + 4, 4);
	const uint8_t *q = rep + 8;
	rc = 0;
	if (asz != size || rlen < 8 + asz + 4) {
		rc = -EIO;
	} else {
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
	return rc ? rc : ret;
}

/* ---- interposed functions ------------------------------------------------------------ */

static int open_common(const char *path, int flags, mode_t mode, int dirfd, int at,
		       int (*real)(const char *, int, ...))
{
	init();
	if (is_device(path))
		return open_device(flags);
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

EXPORT int close(int fd)
{
	init();
	if (conn_of(fd))
		untrack(fd);
	return real_close(fd);
}

EXPORT int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	init();
	conn_t *c = conn_of(fd);
	if (!c)
		return real_ioctl(fd, request, arg);
	int rc = device_ioctl(fd, c, request, arg);
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
	pthread_mutex_lock(&c->lock);
	int t = transact(fd, W_MMAP, req, sizeof(req), &rep, &rlen, &memfd);
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
	conn_t *c = conn_of(oldfd);
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
	if (conn_of(fd2))
		untrack(fd2);
	return dup_track(fd, real_dup2(fd, fd2));
}

EXPORT int dup3(int fd, int fd2, int flags)
{
	init();
	if (conn_of(fd2) && fd2 != fd)
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
	if (conn_of(fd)) {
		errno = EINVAL;
		return -1;
	}
	return real_write(fd, buf, n);
}

/* A render node has no read/write data path: DRM events are not modelled. */
EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	init();
	if (conn_of(fd)) {
		errno = EAGAIN;
		return -1;
	}
	return real_read(fd, buf, n);
}

EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	init();
	if (conn_of(fd)) {
		errno = EINVAL;
		return -1;
	}
	return real_pread(fd, buf, n, off);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	init();
	if (conn_of(fd)) {
		errno = EINVAL;
		return -1;
	}
	return real_pwrite(fd, buf, n, off);
}
