/* Secondary fds through the preload library (docs/preload.md §3.1), with the
 * test fd kind (docs/uapi.md §13).  Run under LD_PRELOAD with ZESIM_SOCKET
 * naming a daemon started with --test-channel; driven by test_fds.py.
 *
 *   fd_client basic          read/pread/pwrite/ioctl semantics, whole records, EINVAL, EAGAIN
 *   fd_client latency N      poll/select/epoll wake-up after records are produced from another
 *                            DRM connection (another thread): prints median and max, fails over 50 ms
 *   fd_client block          a blocking read waits for records produced later
 *   fd_client dup            dup, dup2, dup3, F_DUPFD copies work after the original is closed
 *   fd_client fork           children that do not use the fd (exit, close it, are killed) leave it working
 *   fd_client ownerclose     closing the DRM fd hangs the fd up: POLLHUP, EOF, EIO; never hangs
 *   fd_client send PATH      open a test fd, produce 3 records, pass it over the unix socket PATH, wait
 *   fd_client recv PATH      receive a test fd on PATH, read the 3 records, wait for the hang-up
 *   fd_client stream SECS    produce and read records for SECS seconds (a bystander)
 *   fd_client noperm         without --test-channel: TEST_FD_OPEN is EPERM
 * Prints "ok ..." lines; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_drm.h"

#define REC ((int)sizeof(struct drm_zesim_test_fd_record))

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));                                  \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int open_drm(void)
{
	int d = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open the render node");
	return d;
}

static int test_fd(int drm, uint32_t *id)
{
	struct drm_zesim_test_fd_open o = {0};
	int fd = ioctl(drm, DRM_IOCTL_ZESIM_TEST_FD_OPEN, &o);
	CHECK(fd >= 0 && fd != drm, "TEST_FD_OPEN returns a new fd");
	CHECK(o.id != 0, "TEST_FD_OPEN returns an id");
	if (id)
		*id = o.id;
	return fd;
}

static int produce(int fd, uint32_t n)
{
	struct drm_zesim_test_fd_produce p = {.count = n};
	return ioctl(fd, ZESIM_TEST_FD_IOCTL_PRODUCE, &p);
}

static int produce_by_id(int drm, uint32_t id, uint32_t n)
{
	struct drm_zesim_test_fd_produce p = {.id = id, .count = n};
	return ioctl(drm, DRM_IOCTL_ZESIM_TEST_FD_PRODUCE, &p);
}

static short poll1(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int k = poll(&p, 1, ms);
	CHECK(k >= 0, "poll");
	return k ? p.revents : 0;
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);
	CHECK(fl >= 0 && fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) == 0, "F_SETFL");
}

/* Read `n` records and check their sequence numbers start at `seq`. */
static void expect_records(int fd, uint32_t id, uint64_t seq, int n)
{
	struct drm_zesim_test_fd_record r[64];
	CHECK(n <= 64, "at most 64");
	ssize_t k = read(fd, r, sizeof(r));
	CHECK(k == (ssize_t)n * REC, "read %d records, got %zd bytes", n, k);
	for (int i = 0; i < n; i++)
		CHECK(r[i].seqno == seq + (uint64_t)i && r[i].magic == ZESIM_TEST_FD_MAGIC && r[i].id == id,
		      "record %d: seqno %llu id %u magic %#x", i, (unsigned long long)r[i].seqno, r[i].id, r[i].magic);
}

static void basic(void)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	char small[REC];
	set_nonblock(fd, 1);
	CHECK(read(fd, small, sizeof(small)) < 0 && errno == EAGAIN, "empty, O_NONBLOCK: EAGAIN");
	CHECK(!(poll1(fd, 0) & POLLIN), "empty: not readable");
	CHECK(produce(fd, 5) == 0, "PRODUCE 5");
	CHECK(poll1(fd, 1000) & POLLIN, "readable after PRODUCE");
	CHECK(read(fd, small, REC - 1) < 0 && errno == EINVAL, "a buffer smaller than a record: EINVAL");
	/* 40 bytes: two whole records, not 2.5 */
	struct drm_zesim_test_fd_record r[4];
	CHECK(read(fd, r, 40) == 2 * REC, "whole records only");
	CHECK(r[0].seqno == 0 && r[1].seqno == 1 && r[0].id == id, "seqno 0, 1");
	CHECK(poll1(fd, 1000) & POLLIN, "still readable: 3 left");
	expect_records(fd, id, 2, 3);
	CHECK(!(poll1(fd, 0) & POLLIN), "drained: not readable");
	CHECK(read(fd, r, sizeof(r)) < 0 && errno == EAGAIN, "drained: EAGAIN");
	/* errors of the fd's ioctl */
	struct drm_zesim_test_fd_produce p = {.count = 0};
	CHECK(ioctl(fd, ZESIM_TEST_FD_IOCTL_PRODUCE, &p) < 0 && errno == EINVAL, "count 0: EINVAL");
	p.count = ZESIM_TEST_FD_MAX_RECORDS + 1;
	CHECK(ioctl(fd, ZESIM_TEST_FD_IOCTL_PRODUCE, &p) < 0 && errno == ENOSPC, "too many: ENOSPC");
	p = (struct drm_zesim_test_fd_produce){.id = id + 1000, .count = 1};
	CHECK(ioctl(fd, ZESIM_TEST_FD_IOCTL_PRODUCE, &p) < 0 && errno == EINVAL, "another id: EINVAL");
	CHECK(ioctl(fd, _IO('T', 0x7f), 0) < 0 && errno == ENOTTY, "unknown fd ioctl: ENOTTY");
	CHECK(ioctl(fd, ZESIM_TEST_FD_IOCTL_PRODUCE, (void *)8) < 0 && errno == EFAULT, "bad pointer: EFAULT");
	/* the DRM ioctl by id */
	CHECK(produce_by_id(drm, id, 2) == 0, "PRODUCE by id");
	expect_records(fd, id, 5, 2);
	CHECK(produce_by_id(drm, id + 1000, 1) < 0 && errno == ENOENT, "unknown id: ENOENT");
	/* pread / pwrite: the scratch area */
	const char msg[] = "hello, secondary fd";
	CHECK(pwrite(fd, msg, sizeof(msg), 100) == (ssize_t)sizeof(msg), "pwrite");
	char back[64] = {0};
	CHECK(pread(fd, back, sizeof(msg), 100) == (ssize_t)sizeof(msg) && !memcmp(back, msg, sizeof(msg)), "pread");
	CHECK(pread(fd, back, 64, ZESIM_TEST_FD_SCRATCH - 10) == 10, "pread at the end: short");
	CHECK(pread(fd, back, 64, ZESIM_TEST_FD_SCRATCH) == 0, "pread past the end: 0");
	CHECK(pwrite(fd, msg, 4, ZESIM_TEST_FD_SCRATCH) < 0 && errno == ENOSPC, "pwrite past the end: ENOSPC");
	CHECK(write(fd, msg, 4) < 0 && errno == EINVAL, "write: EINVAL");
	/* blocking read of queued records */
	set_nonblock(fd, 0);
	CHECK(produce(fd, 1) == 0, "PRODUCE 1");
	expect_records(fd, id, 7, 1);
	/* two test fds of one file are independent */
	uint32_t id2;
	int fd2 = test_fd(drm, &id2);
	CHECK(id2 != id, "distinct ids");
	CHECK(produce(fd2, 1) == 0, "PRODUCE on the second");
	CHECK(!(poll1(fd, 0) & POLLIN) && (poll1(fd2, 1000) & POLLIN), "only the second is readable");
	expect_records(fd2, id2, 0, 1);
	close(fd2);
	close(fd);
	/* the closed fd's object is gone: its id is unknown */
	for (int i = 0; i < 100 && produce_by_id(drm, id, 1) == 0; i++)
		usleep(10000);
	CHECK(produce_by_id(drm, id, 1) < 0 && errno == ENOENT, "closed fd: its id is gone");
	close(drm);
	printf("ok basic\n");
}

struct producer {
	uint32_t id;
	int rounds;
	double *t_produce; /* when each PRODUCE was issued */
	volatile int *go;  /* round the poller is ready for */
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	int drm = open_drm(); /* its own DRM connection: the wake-up must come from the daemon */
	for (int i = 0; i < p->rounds; i++) {
		while (__atomic_load_n(p->go, __ATOMIC_ACQUIRE) != i)
			usleep(100);
		usleep(2000); /* the poller is asleep in poll by now */
		p->t_produce[i] = now_ms();
		CHECK(produce_by_id(drm, p->id, 1) == 0, "PRODUCE by id");
	}
	close(drm);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void latency(int rounds)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	set_nonblock(fd, 1);
	double *tp = calloc((size_t)rounds, sizeof(double)), *lat = calloc((size_t)rounds, sizeof(double));
	volatile int go = -1;
	struct producer pr = {id, rounds, tp, &go};
	pthread_t th;
	pthread_create(&th, NULL, producer_main, &pr);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl");
	const char *how[] = {"poll", "select", "epoll"};
	for (int i = 0; i < rounds; i++) {
		__atomic_store_n(&go, i, __ATOMIC_RELEASE);
		int m = i % 3, ready = 0;
		if (m == 0) {
			ready = (poll1(fd, 5000) & POLLIN) != 0;
		} else if (m == 1) {
			fd_set rs;
			FD_ZERO(&rs);
			FD_SET(fd, &rs);
			struct timeval tv = {5, 0};
			ready = select(fd + 1, &rs, NULL, NULL, &tv) == 1 && FD_ISSET(fd, &rs);
		} else {
			struct epoll_event out;
			ready = epoll_wait(ep, &out, 1, 5000) == 1 && (out.events & EPOLLIN) && out.data.fd == fd;
		}
		const double t = now_ms();
		CHECK(ready, "round %d: %s did not report the fd readable within 5 s", i, how[m]);
		lat[i] = t - tp[i];
		struct drm_zesim_test_fd_record r;
		CHECK(read(fd, &r, sizeof(r)) == REC && r.seqno == (uint64_t)i, "round %d: the record", i);
	}
	pthread_join(th, NULL);
	qsort(lat, (size_t)rounds, sizeof(double), cmp_d);
	printf("ok latency rounds %d median_ms %.3f max_ms %.3f\n", rounds, lat[rounds / 2], lat[rounds - 1]);
	CHECK(lat[rounds - 1] < 50.0, "wake-up took %.3f ms (limit 50)", lat[rounds - 1]);
	close(ep);
	close(fd);
	close(drm);
}

struct later {
	uint32_t id;
	int ms;
};

static void *later_main(void *arg)
{
	struct later *l = arg;
	int drm = open_drm();
	usleep((useconds_t)l->ms * 1000);
	CHECK(produce_by_id(drm, l->id, 3) == 0, "PRODUCE later");
	close(drm);
	return NULL;
}

static void block(void)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	struct later l = {id, 200};
	pthread_t th;
	pthread_create(&th, NULL, later_main, &l);
	const double t0 = now_ms();
	struct drm_zesim_test_fd_record r[8];
	ssize_t k = read(fd, r, sizeof(r)); /* blocks until the producer's records */
	const double dt = now_ms() - t0;
	CHECK(k == 3 * REC, "blocking read got %zd bytes", k);
	CHECK(dt >= 150 && dt < 5000, "blocking read returned after %.1f ms", dt);
	pthread_join(th, NULL);
	close(fd);
	close(drm);
	printf("ok block %.1f ms\n", dt);
}

static void dups(void)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	int a = dup(fd);
	int b = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	int c = dup2(fd, 200);
	int d = dup3(fd, 201, O_CLOEXEC);
	CHECK(a >= 0 && b >= 100 && c == 200 && d == 201, "dups");
	CHECK(close(fd) == 0, "close the original");
	uint64_t seq = 0;
	int copies[] = {a, b, c, d};
	for (int i = 0; i < 4; i++) {
		CHECK(produce(copies[i], 2) == 0, "PRODUCE on copy %d", i);
		CHECK(poll1(copies[(i + 1) % 4], 1000) & POLLIN, "another copy sees it");
		expect_records(copies[(i + 2) % 4], id, seq, 2);
		seq += 2;
	}
	/* dup2 over a copy: the old number now names another file */
	int pipefd[2];
	CHECK(pipe(pipefd) == 0, "pipe");
	CHECK(dup2(pipefd[0], c) == c, "dup2 a pipe over a copy");
	CHECK(write(pipefd[1], "x", 1) == 1, "write the pipe");
	char ch;
	CHECK(read(c, &ch, 1) == 1 && ch == 'x', "the number is the pipe now");
	close(c);
	close(pipefd[0]);
	close(pipefd[1]);
	CHECK(produce(a, 1) == 0, "the rest still work");
	expect_records(d, id, seq, 1);
	close(a);
	close(b);
	close(d);
	close(drm);
	printf("ok dup\n");
}

static void forks(void)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	uint64_t seq = 0;
	for (int mode = 0; mode < 3; mode++) {
		CHECK(produce(fd, 1) == 0, "PRODUCE before fork");
		pid_t pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			if (mode == 1) {
				close(fd); /* the child closes its copy */
				close(drm);
			}
			if (mode == 2)
				pause(); /* killed */
			_exit(0);
		}
		if (mode == 2) {
			usleep(20000);
			kill(pid, SIGKILL);
		}
		int st;
		CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
		CHECK(poll1(fd, 1000) & POLLIN, "mode %d: still readable after the child", mode);
		expect_records(fd, id, seq, 1);
		seq++;
		CHECK(produce(fd, 2) == 0, "mode %d: PRODUCE after the child", mode);
		expect_records(fd, id, seq, 2);
		seq += 2;
	}
	close(fd);
	close(drm);
	printf("ok fork\n");
}

static void ownerclose(void)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	int copy = dup(fd);
	CHECK(produce(fd, 2) == 0, "PRODUCE");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl");
	const double t0 = now_ms();
	close(drm); /* the owner: its DRM file closes */
	short re = 0;
	while (now_ms() - t0 < 2000 && !((re = poll1(fd, 100)) & POLLHUP)) {
	}
	const double dt = now_ms() - t0;
	CHECK(re & POLLHUP, "POLLHUP within 2 s of the owner's close (revents %#x)", re);
	struct epoll_event out;
	CHECK(epoll_wait(ep, &out, 1, 1000) == 1 && (out.events & EPOLLHUP), "epoll: EPOLLHUP");
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(copy, &rs);
	struct timeval tv = {1, 0};
	CHECK(select(copy + 1, &rs, NULL, NULL, &tv) == 1, "select: readable (end of file)");
	char buf[64];
	CHECK(read(fd, buf, sizeof(buf)) == 0, "read: end of file (blocking)");
	set_nonblock(copy, 1);
	CHECK(read(copy, buf, sizeof(buf)) == 0, "read on a copy: end of file");
	CHECK(produce(fd, 1) < 0 && errno == EIO, "ioctl: EIO");
	CHECK(pread(fd, buf, 8, 0) < 0 && errno == EIO, "pread: EIO");
	close(ep);
	close(fd);
	close(copy);
	printf("ok ownerclose hup_after_ms %.3f\n", dt);
}

static int unix_addr(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	CHECK(strlen(path) < sizeof(a->sun_path), "path length");
	strcpy(a->sun_path, path);
	return 0;
}

static void send_fd(const char *path)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	CHECK(produce(fd, 3) == 0, "PRODUCE 3");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a;
	unix_addr(path, &a);
	int ok = -1;
	for (int i = 0; i < 500 && (ok = connect(s, (struct sockaddr *)&a, sizeof(a))) != 0; i++)
		usleep(10000);
	CHECK(ok == 0, "connect %s", path);
	char byte = 'f';
	struct iovec iov = {&byte, 1};
	char ctrl[CMSG_SPACE(sizeof(int))] = {0};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl, .msg_controllen = sizeof(ctrl)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(s, &mh, 0) == 1, "sendmsg");
	close(fd); /* only the receiver holds it now; the owner is this DRM file */
	printf("ok sent id %u\n", id);
	fflush(stdout);
	for (;;)
		pause(); /* until killed */
}

static void recv_fd(const char *path)
{
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a;
	unix_addr(path, &a);
	unlink(path);
	CHECK(bind(l, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(l, 1) == 0, "listen on %s", path);
	printf("ok listening\n");
	fflush(stdout);
	int s = accept(l, NULL, NULL);
	CHECK(s >= 0, "accept");
	char byte;
	struct iovec iov = {&byte, 1};
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl, .msg_controllen = sizeof(ctrl)};
	CHECK(recvmsg(s, &mh, 0) == 1, "recvmsg");
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	CHECK(c && c->cmsg_type == SCM_RIGHTS, "an fd came");
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	/* This process never opened the device: the fd is known by its peer's name. */
	struct drm_zesim_test_fd_record r[8];
	CHECK(poll1(fd, 2000) & POLLIN, "the passed fd is readable");
	ssize_t k = read(fd, r, sizeof(r));
	CHECK(k == 3 * REC && r[0].seqno == 0 && r[2].seqno == 2 && r[0].magic == ZESIM_TEST_FD_MAGIC,
	      "the 3 records through the passed fd (got %zd bytes)", k);
	CHECK(produce(fd, 1) == 0, "PRODUCE through the passed fd");
	k = read(fd, r, sizeof(r));
	CHECK(k == REC && r[0].seqno == 3, "the record produced here");
	printf("ok received\n");
	fflush(stdout);
	/* Now the owner is killed: wait for the hang-up (bounded). */
	const double t0 = now_ms();
	short re = 0;
	while (now_ms() - t0 < 20000 && !((re = poll1(fd, 200)) & POLLHUP)) {
	}
	CHECK(re & POLLHUP, "POLLHUP after the owner died (revents %#x)", re);
	CHECK(read(fd, r, sizeof(r)) == 0, "read: end of file");
	close(fd);
	printf("ok hup\n");
}

static void stream(int secs)
{
	int drm = open_drm();
	uint32_t id;
	int fd = test_fd(drm, &id);
	const double end = now_ms() + secs * 1000.0;
	uint64_t seq = 0;
	while (now_ms() < end) {
		CHECK(produce(fd, 4) == 0, "PRODUCE");
		CHECK(poll1(fd, 2000) & POLLIN, "readable");
		expect_records(fd, id, seq, 4);
		seq += 4;
		usleep(1000);
	}
	close(fd);
	close(drm);
	printf("ok stream %llu records\n", (unsigned long long)seq);
}

static void noperm(void)
{
	int drm = open_drm();
	struct drm_zesim_test_fd_open o = {0};
	CHECK(ioctl(drm, DRM_IOCTL_ZESIM_TEST_FD_OPEN, &o) < 0 && errno == EPERM, "TEST_FD_OPEN: EPERM");
	struct drm_zesim_test_fd_produce p = {.id = 1, .count = 1};
	CHECK(ioctl(drm, DRM_IOCTL_ZESIM_TEST_FD_PRODUCE, &p) < 0 && errno == EPERM, "TEST_FD_PRODUCE: EPERM");
	close(drm);
	printf("ok noperm\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *cmd = argc > 1 ? argv[1] : "";
	if (!strcmp(cmd, "basic"))
		basic();
	else if (!strcmp(cmd, "latency"))
		latency(argc > 2 ? atoi(argv[2]) : 60);
	else if (!strcmp(cmd, "block"))
		block();
	else if (!strcmp(cmd, "dup"))
		dups();
	else if (!strcmp(cmd, "fork"))
		forks();
	else if (!strcmp(cmd, "ownerclose"))
		ownerclose();
	else if (!strcmp(cmd, "send") && argc > 2)
		send_fd(argv[2]);
	else if (!strcmp(cmd, "recv") && argc > 2)
		recv_fd(argv[2]);
	else if (!strcmp(cmd, "stream"))
		stream(argc > 2 ? atoi(argv[2]) : 2);
	else if (!strcmp(cmd, "noperm"))
		noperm();
	else {
		fprintf(stderr, "usage: fd_client basic|latency N|block|dup|fork|ownerclose|send PATH|recv PATH|stream S|noperm\n");
		return 2;
	}
	return 0;
}
