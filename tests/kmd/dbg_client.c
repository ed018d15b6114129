/* The EU debug connection through the preload library and the daemon (docs/uapi.md
 * "EU debug", docs/kmd.md §14): real processes, a target and debuggers, forked here,
 * each with its own DRM connection.  Run under LD_PRELOAD with ZESIM_SOCKET; driven
 * by tests/kmd/test_debug.py.
 *
 *   dbg_client rules   CONNECT's rules (itself, no such pid, not a client, a debugger
 *                      that dropped to uid 65534 after opening the device: -EACCES,
 *                      a second debugger: -EBUSY); the replay with seqnos; blocking
 *                      READ_EVENT (-EAGAIN after its timeout), poll; -EMSGSIZE; the VM
 *                      fd against what the target wrote through its mmap, and the
 *                      target reading what the debugger wrote; the SSA header; a
 *                      module held until ACK_EVENT (the target waits on its fence);
 *                      READ_METADATA; the target killed: OPEN DESTROY, then
 *                      -ENOTCONN and POLLHUP
 *   dbg_client death   a debugger killed (SIGKILL) with a module ack pending: the
 *                      target's fence wait completes; the target can be debugged again
 *   dbg_client attach PID  debug a running program: print every stopped thread's SSA
 *                      slot read through the VM fd ("stop TID HEX"), check STOPPED,
 *                      RESUME it; until the program exits (-ENOTCONN)
 *   dbg_client interrupt PID  the same, after INTERRUPT_ALL (every 2 ms until threads
 *                      stop); a thread slot stopping twice is an error
 *   dbg_client die PID attach, and at the first EU_ATTENTION kill itself (SIGKILL) with
 *                      the threads stopped
 * Prints "ok ..." lines; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kids.h"
#include "uapi/zesim_drm.h"
#include "uapi/zesim_ssa.h"

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			fprintf(stderr, "FAIL %s:%d (pid %d): %s: ", __FILE__, __LINE__, (int)getpid(), #cond);        \
			fprintf(stderr, __VA_ARGS__);                                                                  \
			fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));                                  \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

#define DATA_VA 0x200000ull
#define FENCE_VA (DATA_VA + 4096)
#define S 1000000000ull

static int open_drm(void)
{
	int d = open(ZESIM_RENDER_NODE, O_RDWR | O_CLOEXEC);
	CHECK(d >= 0, "open the render node");
	return d;
}

/* ioctl's result: 0 or a new fd, else -errno. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int rc = ioctl(fd, cmd, arg);
	return rc < 0 ? -errno : rc;
}

static int connect_pid(int drm, pid_t pid, uint32_t flags)
{
	struct drm_zesim_eudebug_connect c = {.pid = (uint64_t)pid, .flags = flags};
	int rc = xioctl(drm, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c);
	if (rc >= 0)
		CHECK(rc != drm && c.version == ZESIM_EUDEBUG_VERSION, "CONNECT: fd %d version %u", rc, c.version);
	return rc;
}


/* ---- the target ---- */

typedef struct target {
	int drm, cmd, ans; /* commands in, answers out (pipes) */
	uint32_t vm, q;
	uint8_t *data; /* 8 KiB at DATA_VA: 4 KiB pattern, then fences */
} target_t;

static void say(int fd, char c) { CHECK(write(fd, &c, 1) == 1, "pipe write"); }

static char hear(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	char c = 0;
	return read(fd, &c, 1) == 1 ? c : 0;
}

static void target_setup(target_t *t)
{
	t->drm = open_drm();
	struct drm_zesim_vm_create vc = {0};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_VM_CREATE, &vc) == 0, "VM_CREATE");
	t->vm = vc.vm_id;
	struct drm_zesim_gem_create g = {.size = 8192, .placement = 1};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_GEM_CREATE, &g) == 0, "GEM_CREATE");
	struct drm_zesim_vm_bind b = {.vm_id = t->vm, .num_binds = 1};
	b.bind = (struct drm_zesim_vm_bind_op){.obj = g.handle, .range = 8192, .addr = DATA_VA, .op = ZESIM_VM_BIND_OP_MAP};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_VM_BIND, &b) == 0, "VM_BIND");
	struct drm_zesim_gem_mmap_offset mo = {.handle = g.handle};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo) == 0, "MMAP_OFFSET");
	t->data = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, t->drm, (off_t)mo.offset);
	CHECK(t->data != MAP_FAILED, "mmap");
	for (int i = 0; i < 4096; i++)
		t->data[i] = (uint8_t)(i * 13 + 1);
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = t->vm,
						 .instances = (uintptr_t)&eci};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc) == 0, "EXEC_QUEUE_CREATE");
	t->q = qc.exec_queue_id;
}

static const char elf_text[] = "\177ELF this is module";

/* A module whose ack fence is fence slot n; the wait for it (10 s). */
static int target_module(target_t *t, int n, uint64_t *waited_ms)
{
	struct drm_zesim_debug_metadata_create m = {.type = ZESIM_DEBUG_METADATA_ELF_BINARY,
						    .user_addr = (uintptr_t)elf_text, .len = sizeof(elf_text),
						    .vm_id = t->vm, .load_addr = DATA_VA, .load_size = 4096,
						    .ack_fence_addr = FENCE_VA + 8 * (uint64_t)n, .ack_fence_value = 100 + n};
	CHECK(xioctl(t->drm, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m) == 0 && m.metadata_id >= 1, "METADATA_CREATE");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	struct drm_zesim_wait_user_fence w = {.addr = FENCE_VA + 8 * (uint64_t)n, .op = ZESIM_UFENCE_OP_EQ,
					      .value = 100 + n, .mask = ~0ull, .timeout = 10 * (int64_t)S,
					      .exec_queue_id = t->q};
	int rc = xioctl(t->drm, DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (waited_ms)
		*waited_ms = (uint64_t)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
	return rc;
}

/* The target process: commands on `cmd`: m = a module (answers 'f' when its fence
 * came), c = check the debugger's write (answers 'w' if seen), q = exit. */
static pid_t spawn_target(target_t *t)
{
	int c[2], a[2];
	CHECK(pipe(c) == 0 && pipe(a) == 0, "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	kids_track(pid);
	if (!pid) {
		close(c[1]);
		close(a[0]);
		t->cmd = c[0];
		t->ans = a[1];
		target_setup(t);
		/* one module before any debugger: replayed */
		CHECK(target_module(t, 0, NULL) == 0, "the first module's fence");
		say(t->ans, 'r');
		int n = 1;
		for (;;) {
			char x = hear(t->cmd, -1);
			if (x == 'm')
				say(t->ans, target_module(t, n++, NULL) == 0 ? 'f' : 'x');
			else if (x == 'c')
				say(t->ans, t->data[100] == 0xab && t->data[101] == 0xcd ? 'w' : 'x');
			else
				_exit(0);
		}
	}
	close(c[0]);
	close(a[1]);
	t->cmd = c[1];
	t->ans = a[0];
	CHECK(hear(t->ans, 20000) == 'r', "the target did not get ready");
	return pid;
}

/* ---- the debugger's side ---- */

typedef union event {
	struct drm_zesim_eudebug_event base;
	struct drm_zesim_eudebug_event_open open;
	struct drm_zesim_eudebug_event_vm vm;
	struct drm_zesim_eudebug_event_exec_queue q;
	struct drm_zesim_eudebug_event_module mod;
	uint8_t raw[512];
} event_t;

static int read_event(int fd, event_t *e, uint32_t cap, uint64_t timeout_ns, uint32_t *size)
{
	memset(e, 0, sizeof(*e));
	struct drm_zesim_eudebug_read_event r = {.timeout_ns = timeout_ns, .event_ptr = (uintptr_t)e, .event_size = cap};
	int rc = xioctl(fd, ZESIM_EUDEBUG_IOCTL_READ_EVENT, &r);
	if (size)
		*size = r.event_size;
	return rc;
}

static uint64_t seq;

static void expect_event(int fd, event_t *e, uint16_t type, uint16_t flags, const char *what)
{
	uint32_t size;
	int rc = read_event(fd, e, sizeof(*e), 5 * S, &size);
	CHECK(rc == 0, "%s: READ_EVENT %d", what, rc);
	CHECK(e->base.type == type && e->base.flags == flags && size == e->base.len, "%s: type %u flags %#x len %u/%u",
	      what, e->base.type, e->base.flags, e->base.len, size);
	CHECK(e->base.seqno == seq + 1, "%s: seqno %llu after %llu", what, (unsigned long long)e->base.seqno,
	      (unsigned long long)seq);
	seq = e->base.seqno;
}

static short poll1(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, ms);
	CHECK(n >= 0, "poll");
	return n ? p.revents : 0;
}

/* A child that opens the device, then runs fn and exits with its result. */
static int in_child(int (*fn)(pid_t), pid_t arg)
{
	pid_t p = fork();
	CHECK(p >= 0, "fork");
	if (!p)
		_exit(fn(arg));
	int st;
	CHECK(waitpid(p, &st, 0) == p, "waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static int dropped_connect(pid_t target)
{
	int drm = open_drm(); /* connected to the daemon as root */
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 2;
	return connect_pid(drm, target, 0) == -EACCES ? 0 : 1;
}

static int second_connect(pid_t target) { return connect_pid(open_drm(), target, 0) == -EBUSY ? 0 : 1; }

static void rules(void)
{
	target_t t;
	const pid_t tp = spawn_target(&t);
	int drm = open_drm();
	CHECK(connect_pid(drm, getpid(), 0) == -EINVAL, "connect to itself");
	CHECK(connect_pid(drm, 0x7ffffff0, 0) == -ESRCH, "no such pid");
	CHECK(connect_pid(drm, getppid(), 0) == -ESRCH, "not a zesim client");
	CHECK(in_child(dropped_connect, tp) == 0, "a debugger that dropped to uid 65534 was not refused with EACCES");
	const int fd = connect_pid(drm, tp, ZESIM_EUDEBUG_CONNECT_ACK_MODULES);
	CHECK(fd >= 0, "connect: %d", fd);
	CHECK(in_child(second_connect, tp) == 0, "a second debugger was not refused with EBUSY");
	printf("ok connect: itself EINVAL, no such pid / not a client ESRCH, dropped privileges EACCES, second EBUSY\n");

	event_t e;
	seq = 0;
	CHECK(poll1(fd, 2000) & POLLIN, "poll with replayed events");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "OPEN");
	const uint64_t client = e.open.client_handle;
	CHECK(e.open.pid == (uint64_t)tp, "OPEN pid %llu", (unsigned long long)e.open.pid);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "VM");
	const uint64_t vm = e.vm.vm_handle;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "EXEC_QUEUE");
	CHECK(e.q.vm_handle == vm, "queue's VM");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_CREATE, "replayed MODULE");
	CHECK(e.mod.load_addr == DATA_VA && e.mod.elf_size == sizeof(elf_text), "module fields");
	CHECK(read_event(fd, &e, sizeof(e), 100000000, NULL) == -EAGAIN, "READ_EVENT after its timeout: not EAGAIN");
	CHECK(read_event(fd, &e, sizeof(e), 0, NULL) == -EAGAIN, "READ_EVENT without waiting");
	CHECK(!(poll1(fd, 0) & POLLIN), "poll when drained");
	printf("ok events: replay OPEN, VM, EXEC_QUEUE, MODULE with seqnos 1-4; EAGAIN after the timeout; poll\n");

	/* the VM fd */
	struct drm_zesim_eudebug_vm_open vo = {.client_handle = client, .vm_handle = vm};
	const int vfd = xioctl(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &vo);
	CHECK(vfd >= 0, "VM_OPEN %d", vfd);
	uint8_t buf[8192];
	CHECK(pread(vfd, buf, 4096, DATA_VA) == 4096, "pread");
	for (int i = 0; i < 4096; i++)
		CHECK(buf[i] == (uint8_t)(i * 13 + 1), "byte %d: %#x", i, buf[i]);
	CHECK(pread(vfd, buf, 8192, DATA_VA + 4096) == 4096, "short count at the first unmapped page");
	CHECK(pread(vfd, buf, 16, DATA_VA + 8192) < 0 && errno == EFAULT, "unmapped: EFAULT");
	const uint8_t w[2] = {0xab, 0xcd};
	CHECK(pwrite(vfd, w, 2, DATA_VA + 100) == 2 && fsync(vfd) == 0, "pwrite, fsync");
	say(t.cmd, 'c');
	CHECK(hear(t.ans, 10000) == 'w', "the target did not see the debugger's write");
	struct drm_zesim_eudebug_info info;
	CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_INFO, &info) == 0, "INFO");
	struct zesim_ssa_magic_header mh;
	CHECK(pread(vfd, &mh, sizeof(mh), info.ssa_addr) == sizeof(mh) && !memcmp(mh.magic, "tssarea", 8) &&
		      mh.version.major == 2,
	      "SSA magic through the VM fd");
	uint8_t bits[128];
	struct drm_zesim_eudebug_eu_control ec = {.client_handle = client, .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED,
						  .bitmask_size = info.bitmask_size, .bitmask_ptr = (uintptr_t)bits};
	memset(bits, 0xff, sizeof(bits));
	CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &ec) == 0 && ec.seqno == seq + 1 &&
		      ec.bitmask_size == info.bitmask_size,
	      "STOPPED");
	seq = ec.seqno;
	for (uint32_t i = 0; i < info.bitmask_size; i++)
		CHECK(!bits[i], "a stopped thread with nothing running");
	CHECK(bits[info.bitmask_size] == 0xff, "STOPPED wrote past bitmask_size");
	printf("ok VM fd: pread of the target's memory, short count, EFAULT, pwrite seen by the target, SSA header; "
	       "STOPPED\n");

	/* a module held until the ack */
	say(t.cmd, 'm');
	CHECK(poll1(fd, 5000) & POLLIN, "poll did not wake for the module event");
	uint32_t need;
	CHECK(read_event(fd, &e, 16, 0, &need) == -EMSGSIZE && need == sizeof(struct drm_zesim_eudebug_event_module),
	      "EMSGSIZE: %u", need);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_CREATE | ZESIM_EUDEBUG_EVENT_NEED_ACK,
		     "MODULE NEED_ACK");
	char elf[64];
	struct drm_zesim_eudebug_read_metadata rm = {.client_handle = client, .metadata_handle = e.mod.metadata_handle,
						     .ptr = (uintptr_t)elf, .size = sizeof(elf)};
	CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm) == 0 && rm.size == sizeof(elf_text) &&
		      !memcmp(elf, elf_text, sizeof(elf_text)),
	      "READ_METADATA");
	CHECK(hear(t.ans, 300) == 0, "the target's fence came before the ack");
	struct drm_zesim_eudebug_ack_event ack = {.type = ZESIM_EUDEBUG_EVENT_MODULE, .seqno = e.base.seqno};
	CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &ack) == 0, "ACK_EVENT");
	CHECK(hear(t.ans, 10000) == 'f', "the target's fence did not come after the ack");
	printf("ok module: poll woke, EMSGSIZE, NEED_ACK, READ_METADATA, the target waited for the ack\n");

	/* the target killed */
	kill(tp, SIGKILL);
	waitpid(tp, NULL, 0);
	int rc, n = 0;
	uint16_t last = 0, flags = 0;
	while ((rc = read_event(fd, &e, sizeof(e), 5 * S, NULL)) == 0) {
		CHECK(e.base.seqno == seq + 1, "seqno %llu after %llu", (unsigned long long)e.base.seqno,
		      (unsigned long long)seq);
		seq = e.base.seqno;
		last = e.base.type, flags = e.base.flags;
		n++;
	}
	CHECK(rc == -ENOTCONN && last == ZESIM_EUDEBUG_EVENT_OPEN && flags == ZESIM_EUDEBUG_EVENT_DESTROY,
	      "after the target died: rc %d, %d events, last %u %#x", rc, n, last, flags);
	CHECK(poll1(fd, 1000) & POLLHUP, "POLLHUP after detach");
	CHECK(pread(vfd, buf, 8, DATA_VA) < 0, "the VM fd after the target died");
	close(vfd);
	close(fd);
	close(drm);
	printf("ok detach: the target killed: %d events ending with OPEN DESTROY, then ENOTCONN, POLLHUP\n", n);
}

static void death(void)
{
	target_t t;
	const pid_t tp = spawn_target(&t);
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t d = fork();
	CHECK(d >= 0, "fork");
	kids_track(d);
	if (!d) {
		int fd = connect_pid(open_drm(), tp, ZESIM_EUDEBUG_CONNECT_ACK_MODULES);
		CHECK(fd >= 0, "connect");
		event_t e;
		say(p[1], 'c');
		for (;;) {
			int rc = read_event(fd, &e, sizeof(e), 5 * S, NULL);
			CHECK(rc == 0 || rc == -EAGAIN, "READ_EVENT %d", rc);
			if (!rc && (e.base.flags & ZESIM_EUDEBUG_EVENT_NEED_ACK))
				break;
		}
		say(p[1], 'n');
		for (;;)
			pause(); /* never acknowledges */
	}
	CHECK(hear(p[0], 10000) == 'c', "the debugger did not connect");
	say(t.cmd, 'm');
	CHECK(hear(p[0], 10000) == 'n', "the debugger did not see the module");
	CHECK(hear(t.ans, 300) == 0, "the fence came without an ack");
	kill(d, SIGKILL);
	waitpid(d, NULL, 0);
	CHECK(hear(t.ans, 10000) == 'f', "the target's fence wait did not complete after the debugger died");
	int drm = open_drm();
	int fd = -EBUSY;
	for (int i = 0; i < 100 && fd == -EBUSY; i++) { /* the daemon sees the death when it reads the socket */
		fd = connect_pid(drm, tp, 0);
		if (fd == -EBUSY)
			usleep(20000);
	}
	CHECK(fd >= 0, "connect after the first debugger died: %d", fd);
	say(t.cmd, 'q');
	waitpid(tp, NULL, 0);
	close(fd);
	close(drm);
	printf("ok debugger death: the pending ack released, the target's wait completed, a new debugger connects\n");
}

/* A debugger of a running program: connect, then for every EU_ATTENTION the new threads'
 * SSA slots through the VM fd ("stop TID HEX"), then RESUME them; until the target
 * detaches. */
static void attach(pid_t tp, int interrupt, int die)
{
	int drm = open_drm();
	const int fd = connect_pid(drm, tp, 0);
	CHECK(fd >= 0, "connect: %d", fd);
	struct drm_zesim_eudebug_info info;
	CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_INFO, &info) == 0, "INFO");
	const uint32_t tpe = info.threads_per_eu, bs = info.bitmask_size;
	const uint64_t slot0 = info.ssa_addr + 4096; /* the header's state_area_offset, checked below */
	struct zesim_ssa_magic_header mh;
	struct zesim_ssa_header h;
	event_t e;
	uint64_t client = 0, vm = 0;
	int vfd = -1, rc, stops = 0, attentions = 0;
	uint8_t done[128] = {0};
	printf("connected\n");
	fflush(stdout);
	/* interrupt: INTERRUPT_ALL every 2 ms until the first attention */
	while ((rc = read_event(fd, &e, sizeof(e), interrupt && !attentions ? 2000000 : 5 * S, NULL)) == 0 ||
	       rc == -EAGAIN) {
		if (rc && interrupt && !attentions && client) {
			struct drm_zesim_eudebug_eu_control ia = {.client_handle = client,
								  .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL};
			CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &ia) == 0, "INTERRUPT_ALL");
		}
		if (rc)
			continue;
		if (e.base.type == ZESIM_EUDEBUG_EVENT_VM && (e.base.flags & ZESIM_EUDEBUG_EVENT_CREATE) && vfd < 0) {
			client = e.vm.client_handle;
			vm = e.vm.vm_handle;
			struct drm_zesim_eudebug_vm_open vo = {.client_handle = client, .vm_handle = vm};
			vfd = xioctl(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &vo);
			CHECK(vfd >= 0, "VM_OPEN");
			CHECK(pread(vfd, &mh, sizeof(mh), info.ssa_addr) == sizeof(mh) &&
				      pread(vfd, &h, sizeof(h), info.ssa_addr + sizeof(mh)) == sizeof(h) &&
				      h.state_area_offset == 4096 && h.state_save_size == ZESIM_SSA_SLOT_SIZE,
			      "SSA header");
		}
		if (e.base.type != ZESIM_EUDEBUG_EVENT_EU_ATTENTION)
			continue;
		const struct drm_zesim_eudebug_event_eu_attention *a = (const void *)e.raw;
		CHECK(a->bitmask_size == bs && vfd >= 0, "attention: size %u", a->bitmask_size);
		attentions++;
		if (die) {
			/* a debugger that dies with threads stopped: the KMD resumes them */
			printf("dying with threads stopped\n");
			fflush(stdout);
			kill(getpid(), SIGKILL);
		}
		uint8_t resume[128] = {0};
		for (uint32_t eu = 0; eu < bs; eu++)
			for (uint32_t t = 0; t < 8; t++) {
				if (!(a->bitmask[eu] >> t & 1) || (done[eu] >> t & 1))
					continue;
				CHECK(t < tpe, "attention of thread %u of EU %u (%u threads per EU)", t, eu, tpe);
				static uint8_t slot[ZESIM_SSA_SLOT_SIZE];
				const uint64_t at = slot0 + (uint64_t)(eu * tpe + t) * ZESIM_SSA_SLOT_SIZE;
				CHECK(pread(vfd, slot, sizeof(slot), at) == (ssize_t)sizeof(slot), "pread slot");
				printf("stop %u ", eu * 8 + t);
				for (size_t i = 0; i < sizeof(slot); i++)
					printf("%02x", slot[i]);
				printf("\n");
				resume[eu] |= (uint8_t)(1u << t);
				stops++;
			}
		uint8_t now[128];
		struct drm_zesim_eudebug_eu_control ec = {.client_handle = client,
							  .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED,
							  .bitmask_size = bs, .bitmask_ptr = (uintptr_t)now};
		CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &ec) == 0, "STOPPED");
		for (uint32_t i = 0; i < bs; i++) {
			CHECK((now[i] & resume[i]) == resume[i], "STOPPED misses a thread of EU %u", i);
			/* a thread resumed before that is stopped again: a second stop */
			CHECK(!(now[i] & done[i] & ~resume[i]), "a thread of EU %u stopped twice (%#x)", i, now[i] & done[i]);
		}
		if (interrupt)
			for (uint32_t i = 0; i < bs; i++)
				done[i] |= resume[i]; /* one stop per thread slot: the kernel's threads are all resident */
		ec = (struct drm_zesim_eudebug_eu_control){.client_handle = client,
							   .cmd = ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME,
							   .bitmask_size = bs, .bitmask_ptr = (uintptr_t)resume};
		CHECK(xioctl(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &ec) == 0, "RESUME");
		fflush(stdout);
	}
	CHECK(rc == -ENOTCONN, "READ_EVENT %d", rc);
	printf("detached: %d stops in %d attention events\n", stops, attentions);
	if (vfd >= 0)
		close(vfd);
	close(fd);
	close(drm);
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	kids_init();
	if (argc == 2 && !strcmp(argv[1], "rules"))
		rules();
	else if (argc == 2 && !strcmp(argv[1], "death"))
		death();
	else if (argc == 3 && !strcmp(argv[1], "attach"))
		attach((pid_t)atoi(argv[2]), 0, 0);
	else if (argc == 3 && !strcmp(argv[1], "interrupt"))
		attach((pid_t)atoi(argv[2]), 1, 0);
	else if (argc == 3 && !strcmp(argv[1], "die"))
		attach((pid_t)atoi(argv[2]), 0, 1);
	else {
		fprintf(stderr, "usage: dbg_client rules|death|attach PID|interrupt PID|die PID (under the preload, ZESIM_SOCKET set)\n");
		return 2;
	}
	return 0;
}
