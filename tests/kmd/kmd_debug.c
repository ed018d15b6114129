/* The EU debug connection of the fake KMD (kmd_shim/kernel/debug.c, docs/kmd.md §14,
 * docs/uapi.md "EU debug") against the fake hardware, whose debug unit follows the
 * rules of docs/debug.md §1.4 for what the KMD touches (tests/kmd/fake_hw.c): the
 * test stops threads itself (fake_hw_dbg_stop).  Real processes stand for the target
 * and for debuggers of other uids (fork, setresuid): CONNECT reads their credentials
 * in /proc.  Expected values are written here from the uAPI and docs/debug.md §2.
 * Checked:
 *   - CONNECT: self -EINVAL, no such pid / not a client -ESRCH, bad flags -EINVAL,
 *     another uid -EACCES (both ways), a second debugger -EBUSY;
 *   - the replay: OPEN, VM, EXEC_QUEUE, MODULE CREATE in creation order across two
 *     files, seqnos 1..n; live CREATE/DESTROY events after it;
 *   - READ_EVENT: -EAGAIN, -EMSGSIZE (the needed size, the event kept), flags; poll;
 *   - DEBUG_METADATA_CREATE: the ack fence written at once without ACK_MODULES, only at
 *     ACK_EVENT with it (wrong seqno -EINVAL), and when the debugger goes away;
 *     READ_METADATA (-ENOSPC with the size, -ENOENT); DESTROY events;
 *   - INFO; the debug area in the target's VM: the SSA header and every slot's sr_ident
 *     through the VM fd; VM_BIND into the area -EINVAL;
 *   - the VM fd: pread of what the target wrote (through its mmap), a short count at the
 *     first unmapped page, -EFAULT, pwrite into a read-only mapping;
 *   - the debug registers of a debuggable job (DBG_MODE, DBG_SIP, DBG_SSA, DBG_SLOT_SIZE,
 *     DBG_CTL) and DBG_MODE 0 for another client's;
 *   - attention: EU_ATTENTION with the whole bitmap, PAGEFAULT with the address and the
 *     faulting thread; EU_CONTROL STOPPED, RESUME (bits not stopped -EINVAL), INTERRUPT
 *     (halt requests, a thread that does not exist -EINVAL), INTERRUPT_ALL and the
 *     bounded cancel of unanswered halts; seqnos of EU_CONTROL among the events;
 *   - the job timeout does not run while a thread is stopped;
 *   - attention without a debugger: resumed with cmd RESUME in the slot;
 *   - detach: the target's last file closes: DESTROY events, OPEN DESTROY, then
 *     -ENOTCONN and POLLHUP; the debugger's file closing: acks released, halts
 *     cancelled, stopped threads resumed;
 *   - every ioctl's bad arguments.
 * Prints one line per scenario; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_hw.h"
#include "kids.h"
#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "uapi/zesim_ioctl_table.h"
#include "uapi/zesim_ssa.h"

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_debug:%d: %s: ", __LINE__, #cond);                                       \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

#define MS 1000000ull
/* docs/debug.md §2.2 (model-side registers of the Debug block) */
#define R_DBG_MODE 0x5040u
#define R_DBG_SIP_LO 0x5044u
#define R_DBG_SIP_HI 0x5048u
#define R_DBG_SSA_LO 0x504cu
#define R_DBG_SSA_HI 0x5050u
#define R_DBG_SLOT_SIZE 0x5054u
#define BATCH_VA 0x100000ull
#define DATA_VA 0x200000ull
#define RO_VA 0x300000ull
/* fake_hw's topology: 1 slice x 2 sub-slices x 4 EUs x 4 threads */
#define EUS 8u
#define THREADS 4u
#define BITMASK 8u

static zs_hw_t *hw;
static zk_kmd_t *k;
static uint64_t now;
static int user;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return now;
}

static uint32_t reg(uint32_t off) { return zs_hw_mmio_read(hw, off); }

static zk_stats_t stats(void)
{
	zk_stats_t s;
	zk_get_stats(k, &s);
	return s;
}

static int io(zk_file_t *f, unsigned long cmd, void *arg, const void *in, uint32_t in_len)
{
	zk_blob_t blob = {in, in_len};
	return zk_ioctl(f, cmd, arg, (uint32_t)_IOC_SIZE(cmd), &blob, in ? 1 : 0, NULL, 0);
}


/* A process that only exists (a target or a debugger of some uid). */
static pid_t spawn(uid_t uid)
{
	pid_t p = fork();
	EXPECT(p >= 0, "fork");
	kids_track(p);
	if (!p) {
		if (uid && setresuid(uid, uid, uid))
			_exit(2);
		for (;;)
			pause();
	}
	usleep(20000); /* its credentials are in place */
	return p;
}

static void reap(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

typedef struct target {
	zk_file_t *f;
	uint32_t vm, bo, q;
	uint8_t *map; /* the data object, as the target's mmap */
} target_t;

static uint32_t vm_create(zk_file_t *f)
{
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(f, DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	return vc.vm_id;
}

static uint32_t bo_create(zk_file_t *f, uint64_t size)
{
	struct drm_zesim_gem_create g = {.size = size, .placement = 1};
	EXPECT(io(f, DRM_IOCTL_ZESIM_GEM_CREATE, &g, NULL, 0) == 0, "GEM_CREATE");
	return g.handle;
}

static int bind(zk_file_t *f, uint32_t vm, uint32_t bo, uint64_t va, uint64_t range, uint32_t flags)
{
	struct drm_zesim_vm_bind b = {.vm_id = vm, .num_binds = 1};
	b.bind = (struct drm_zesim_vm_bind_op){
		.obj = bo, .range = range, .addr = va, .op = ZESIM_VM_BIND_OP_MAP, .flags = flags};
	return io(f, DRM_IOCTL_ZESIM_VM_BIND, &b, NULL, 0);
}

static uint32_t queue_create(zk_file_t *f, uint32_t vm)
{
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vm};
	EXPECT(io(f, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, &eci, sizeof(eci)) == 0, "EXEC_QUEUE_CREATE");
	return qc.exec_queue_id;
}

static uint8_t *bo_map(zk_file_t *f, uint32_t bo, uint64_t size)
{
	struct drm_zesim_gem_mmap_offset mo = {.handle = bo};
	EXPECT(io(f, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo, NULL, 0) == 0, "GEM_MMAP_OFFSET");
	int memfd;
	EXPECT(zk_mmap_lookup(f, mo.offset, size, &memfd) == 0, "mmap lookup");
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	EXPECT(p != MAP_FAILED, "mmap");
	return p;
}

/* A file with a VM: batch page, an 8 KiB data object, a read-only page; a queue. */
static target_t target(int pid)
{
	target_t t = {zk_open(k, pid), 0, 0, 0, NULL};
	EXPECT(t.f, "zk_open");
	t.vm = vm_create(t.f);
	EXPECT(bind(t.f, t.vm, bo_create(t.f, 4096), BATCH_VA, 4096, 0) == 0, "bind batch");
	t.bo = bo_create(t.f, 8192);
	EXPECT(bind(t.f, t.vm, t.bo, DATA_VA, 8192, 0) == 0, "bind data");
	t.map = bo_map(t.f, t.bo, 8192);
	EXPECT(bind(t.f, t.vm, bo_create(t.f, 4096), RO_VA, 4096, ZESIM_VM_BIND_FLAG_READONLY) == 0, "bind ro");
	t.q = queue_create(t.f, t.vm);
	return t;
}

static int connect_pid(zk_file_t *dbgr, uint64_t pid, uint32_t flags, zk_fd_t **fd)
{
	struct drm_zesim_eudebug_connect c = {.pid = pid, .flags = flags};
	int rc = io(dbgr, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c, NULL, 0);
	zk_fd_t *nf = zk_fd_take_new(k);
	if (rc) {
		EXPECT(!nf, "a failed CONNECT made an fd");
		return rc;
	}
	EXPECT(nf && c.version == ZESIM_EUDEBUG_VERSION, "CONNECT: fd %p version %u", (void *)nf, c.version);
	zk_fd_attach(nf, &user);
	*fd = nf;
	return 0;
}

static int fdio(zk_fd_t *fd, unsigned long cmd, void *arg, const void *in, uint32_t in_len, void *out, uint32_t *out_len)
{
	zk_blob_t b = {in, in_len};
	zk_out_blob_t o = {out, out_len ? *out_len : 0};
	int rc = zk_fd_ioctl(fd, cmd, arg, (uint32_t)_IOC_SIZE(cmd), &b, in ? 1 : 0, &o, out ? 1 : 0);
	if (out_len)
		*out_len = o.len;
	return rc;
}

typedef union event {
	struct drm_zesim_eudebug_event base;
	struct drm_zesim_eudebug_event_open open;
	struct drm_zesim_eudebug_event_vm vm;
	struct drm_zesim_eudebug_event_exec_queue q;
	struct drm_zesim_eudebug_event_module mod;
	struct drm_zesim_eudebug_event_eu_attention attn;
	struct drm_zesim_eudebug_event_pagefault pf;
	uint8_t raw[512];
} event_t;

static int read_event(zk_fd_t *fd, event_t *e, uint32_t cap)
{
	memset(e, 0xee, sizeof(*e));
	struct drm_zesim_eudebug_read_event r = {.event_size = cap, .event_ptr = (uintptr_t)e};
	uint32_t n = cap;
	int rc = fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_EVENT, &r, NULL, 0, e, &n);
	if (!rc)
		EXPECT(n == e->base.len && r.event_size == e->base.len, "READ_EVENT sizes %u %u %u", n, r.event_size,
		       e->base.len);
	return rc;
}

static uint64_t seq; /* the last seqno seen on the connection under test */

static void expect_event(zk_fd_t *fd, event_t *e, uint16_t type, uint16_t flags, const char *what)
{
	int rc = read_event(fd, e, sizeof(*e));
	EXPECT(rc == 0, "%s: READ_EVENT %d", what, rc);
	EXPECT(e->base.type == type && e->base.flags == flags, "%s: type %u flags %#x, expected %u %#x", what,
	       e->base.type, e->base.flags, type, flags);
	EXPECT(e->base.seqno == seq + 1, "%s: seqno %llu after %llu", what, (unsigned long long)e->base.seqno,
	       (unsigned long long)seq);
	EXPECT(!e->base.reserved, "%s: reserved", what);
	seq = e->base.seqno;
}

static void expect_no_event(zk_fd_t *fd)
{
	event_t e;
	int rc = read_event(fd, &e, sizeof(e));
	EXPECT(rc == -EAGAIN, "an unexpected event (rc %d type %u flags %#x)", rc, e.base.type, e.base.flags);
}

static int metadata(zk_file_t *f, uint32_t vm, const void *elf, uint64_t len, uint64_t fence_va, uint64_t value,
		    uint32_t *id)
{
	struct drm_zesim_debug_metadata_create m = {.type = ZESIM_DEBUG_METADATA_ELF_BINARY, .user_addr = (uintptr_t)elf,
						    .len = len, .vm_id = vm, .load_addr = BATCH_VA, .load_size = 256,
						    .ack_fence_addr = fence_va, .ack_fence_value = value};
	int rc = io(f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, (uint32_t)len);
	if (id)
		*id = m.metadata_id;
	return rc;
}

static uint64_t fence_at(const target_t *t, uint64_t va)
{
	uint64_t v;
	memcpy(&v, t->map + (va - DATA_VA), 8);
	return v;
}

static int eu_control(zk_fd_t *fd, uint64_t client, uint32_t cmd, uint8_t *bits, uint32_t size, uint64_t *seqno)
{
	struct drm_zesim_eudebug_eu_control c = {.client_handle = client, .cmd = cmd, .bitmask_size = size,
						 .bitmask_ptr = (uintptr_t)bits};
	uint32_t n = size;
	int rc = fdio(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c, bits && cmd != ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED ? bits : NULL,
		      size, bits, &n);
	if (!rc && seqno)
		*seqno = c.seqno;
	return rc;
}

/* Start a job of t (it stays on the engine until the test raises ENGINE_IDLE). */
static void start_job(const target_t *t)
{
	struct drm_zesim_exec e = {.exec_queue_id = t->q, .address = BATCH_VA, .num_batch_buffer = 1};
	EXPECT(io(t->f, DRM_IOCTL_ZESIM_EXEC, &e, NULL, 0) == 0, "EXEC");
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	zk_service(k);
}

static void end_job(void)
{
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_IDLE);
	fake_hw_raise_irq(hw, ZS_IRQ_ENGINE_IDLE);
	zk_service(k);
	EXPECT(zk_idle(k), "the job did not complete");
}

static uint32_t attn_word(uint32_t w)
{
	zs_hw_mmio_write(hw, ZS_REG_DBG_WORD, w);
	return reg(ZS_REG_DBG_ATTN);
}

static uint32_t halt_word(uint32_t w)
{
	zs_hw_mmio_write(hw, ZS_REG_DBG_WORD, w);
	return reg(ZS_REG_DBG_HALT);
}

/* ---- scenarios ---- */

static void connect_rules(zk_file_t *me)
{
	zk_fd_t *fd;
	pid_t t = spawn(0), other = spawn(65534), other2 = spawn(65534);
	zk_file_t *tf = zk_open(k, t);
	EXPECT(connect_pid(me, (uint64_t)getpid(), 0, &fd) == -EINVAL, "connect to itself");
	EXPECT(connect_pid(me, 0x7ffffff0, 0, &fd) == -ESRCH, "no such pid");
	EXPECT(connect_pid(me, (uint64_t)getppid(), 0, &fd) == -ESRCH, "a live process that is not a client");
	EXPECT(connect_pid(me, 1ull << 40, 0, &fd) == -ESRCH, "a pid beyond pid_t");
	EXPECT(connect_pid(me, (uint64_t)t, 2, &fd) == -EINVAL, "unknown flag");
	struct drm_zesim_eudebug_connect c = {.pid = (uint64_t)t, .extensions = 1};
	EXPECT(io(me, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c, NULL, 0) == -EINVAL, "extensions");
	c = (struct drm_zesim_eudebug_connect){.pid = (uint64_t)t, .version = 1};
	EXPECT(io(me, DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, &c, NULL, 0) == -EINVAL, "version in");
	/* another uid: the caller (uid 65534, no capabilities) may not trace a root process */
	zk_file_t *of = zk_open(k, other), *of2 = zk_open(k, other2);
	EXPECT(connect_pid(of, (uint64_t)t, 0, &fd) == -EACCES, "uid 65534 debugging root");
	/* ... but a process of its own uid */
	zk_fd_t *ofd;
	EXPECT(connect_pid(of, (uint64_t)other2, 0, &ofd) == 0, "same uid");
	EXPECT(connect_pid(me, (uint64_t)other2, 0, &fd) == -EBUSY, "a second debugger");
	zk_close(of); /* its debug fd hangs up: the target is free again */
	EXPECT(zk_fd_poll(ofd) == ZK_POLLHUP, "the debugger's fd after its file closed");
	zk_fd_close(ofd);
	EXPECT(connect_pid(me, (uint64_t)other2, 0, &fd) == 0, "after the first debugger went away");
	zk_fd_close(fd);
	/* root (CAP_SYS_PTRACE) traces anyone */
	EXPECT(connect_pid(me, (uint64_t)t, 0, &fd) == 0, "root");
	zk_fd_close(fd);
	EXPECT(stats().debug_connections == 0, "connections left: %u", stats().debug_connections);
	zk_close(of2);
	zk_close(tf);
	reap(t);
	reap(other);
	reap(other2);
	printf("ok connect: self, no such pid, not a client, flags, -EACCES across uids, same uid, -EBUSY\n");
}

static void replay_and_events(zk_file_t *me)
{
	pid_t pid = spawn(0);
	/* creation order: f1, vm1, q1, f2, vm2 (f2), module (f1) */
	zk_file_t *f1 = zk_open(k, pid);
	const uint32_t vm1 = vm_create(f1);
	const uint32_t q1 = queue_create(f1, vm1);
	zk_file_t *f2 = zk_open(k, pid);
	const uint32_t vm2 = vm_create(f2);
	const uint32_t data = bo_create(f1, 4096);
	EXPECT(bind(f1, vm1, data, DATA_VA, 4096, 0) == 0, "bind");
	static const char elf[] = "\177ELF module one";
	uint32_t mid;
	EXPECT(metadata(f1, vm1, elf, sizeof(elf), DATA_VA + 8, 77, &mid) == 0 && mid >= 1, "METADATA_CREATE");
	zk_fd_t *fd;
	EXPECT(connect_pid(me, (uint64_t)pid, 0, &fd) == 0, "connect");
	EXPECT(zk_fd_poll(fd) == ZK_POLLIN, "poll with replayed events: %#x", zk_fd_poll(fd));
	event_t e;
	seq = 0;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "replay OPEN f1");
	const uint64_t c1 = e.open.client_handle;
	EXPECT(c1 && e.open.pid == (uint64_t)pid, "OPEN: handle %llu pid %llu", (unsigned long long)c1,
	       (unsigned long long)e.open.pid);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "replay VM1");
	EXPECT(e.vm.client_handle == c1 && e.vm.vm_handle == vm1, "VM1 handles");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "replay queue");
	EXPECT(e.q.client_handle == c1 && e.q.vm_handle == vm1 && e.q.exec_queue_handle == q1 &&
		       e.q.engine_class == ZESIM_ENGINE_CLASS_COMPUTE && e.q.width == 1,
	       "queue event fields");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "replay OPEN f2");
	const uint64_t c2 = e.open.client_handle;
	EXPECT(c2 && c2 != c1, "f2's handle");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "replay VM2");
	EXPECT(e.vm.client_handle == c2 && e.vm.vm_handle == vm2, "VM2 handles");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_CREATE, "replay MODULE");
	EXPECT(e.mod.client_handle == c1 && e.mod.vm_handle == vm1 && e.mod.metadata_handle == mid &&
		       e.mod.load_addr == BATCH_VA && e.mod.load_size == 256 && e.mod.elf_size == sizeof(elf),
	       "module event fields");
	expect_no_event(fd);
	EXPECT(zk_fd_poll(fd) == 0, "poll when drained: %#x", zk_fd_poll(fd));
	/* READ_METADATA */
	char buf[64];
	struct drm_zesim_eudebug_read_metadata rm = {.client_handle = c1, .metadata_handle = mid, .ptr = (uintptr_t)buf,
						     .size = 4};
	uint32_t n = 4;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == -ENOSPC && rm.size == sizeof(elf),
	       "READ_METADATA too small: size %llu", (unsigned long long)rm.size);
	n = sizeof(buf);
	rm.size = sizeof(buf);
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == 0 && rm.size == sizeof(elf) &&
		       n == sizeof(elf) && !memcmp(buf, elf, sizeof(elf)),
	       "READ_METADATA");
	rm.metadata_handle = mid + 1;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == -ENOENT, "no such module");
	rm.metadata_handle = mid;
	rm.client_handle = c2;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == -ENOENT, "module of another file");
	rm.client_handle = 12345;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == -EINVAL, "no such client");
	rm.client_handle = c1;
	rm.flags = 1;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_METADATA, &rm, NULL, 0, buf, &n) == -EINVAL, "flags");
	/* live events */
	const uint32_t vm3 = vm_create(f2);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "live VM3");
	EXPECT(e.vm.client_handle == c2 && e.vm.vm_handle == vm3, "VM3 handles");
	const uint32_t q2 = queue_create(f2, vm3);
	struct drm_zesim_exec_queue_destroy qd = {.exec_queue_id = q2};
	EXPECT(io(f2, DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, &qd, NULL, 0) == 0, "queue destroy");
	struct drm_zesim_vm_destroy vd = {.vm_id = vm3};
	EXPECT(io(f2, DRM_IOCTL_ZESIM_VM_DESTROY, &vd, NULL, 0) == 0, "VM destroy");
	struct drm_zesim_debug_metadata_destroy md = {.metadata_id = mid};
	EXPECT(io(f1, DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, &md, NULL, 0) == 0, "METADATA_DESTROY");
	EXPECT(io(f1, DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, &md, NULL, 0) == -ENOENT, "METADATA_DESTROY twice");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "live queue");
	EXPECT(e.q.exec_queue_handle == q2 && e.q.vm_handle == vm3, "queue handles");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_DESTROY, "live queue destroy");
	EXPECT(e.q.exec_queue_handle == q2, "queue destroy handle");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_DESTROY, "live VM destroy");
	EXPECT(e.vm.vm_handle == vm3, "VM destroy handle");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_DESTROY, "module destroy");
	EXPECT(e.mod.metadata_handle == mid, "module destroy handle");
	/* READ_EVENT's sizes */
	zk_file_t *f3 = zk_open(k, pid);
	EXPECT(zk_fd_poll(fd) == ZK_POLLIN, "poll after a live event");
	struct drm_zesim_eudebug_read_event r = {.event_size = 8, .event_ptr = (uintptr_t)&e};
	n = 8;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_EVENT, &r, NULL, 0, &e, &n) == -EMSGSIZE &&
		       r.event_size == sizeof(struct drm_zesim_eudebug_event_open),
	       "EMSGSIZE: event_size %u", r.event_size);
	r = (struct drm_zesim_eudebug_read_event){.event_size = sizeof(e), .event_ptr = (uintptr_t)&e, .flags = 1};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_READ_EVENT, &r, NULL, 0, &e, &n) == -EINVAL, "flags");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "the event kept after EMSGSIZE");
	const uint64_t c3 = e.open.client_handle;
	/* the target's files close: destroy events, then detached */
	zk_close(f3);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_DESTROY, "f3 closed");
	EXPECT(e.open.client_handle == c3, "f3's handle");
	expect_no_event(fd);
	zk_close(f2);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_DESTROY, "f2's VM at close");
	EXPECT(e.vm.vm_handle == vm2, "VM2 at close");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_DESTROY, "f2 closed");
	zk_close(f1);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_DESTROY, "f1's queue at close");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_DESTROY, "f1's VM at close");
	EXPECT(zk_fd_poll(fd) == ZK_POLLIN, "detached with events: POLLIN %#x", zk_fd_poll(fd));
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_DESTROY, "f1 closed");
	EXPECT(e.open.client_handle == c1, "f1's handle");
	EXPECT(read_event(fd, &e, sizeof(e)) == -ENOTCONN, "ENOTCONN after detach");
	EXPECT(zk_fd_poll(fd) == ZK_POLLHUP, "POLLHUP after detach: %#x", zk_fd_poll(fd));
	uint8_t bits[BITMASK];
	EXPECT(eu_control(fd, c1, ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED, bits, BITMASK, NULL) == -ENOTCONN,
	       "EU_CONTROL after detach");
	zk_fd_close(fd);
	reap(pid);
	printf("ok events: replay in creation order over 2 files, live create/destroy, EMSGSIZE, detach, ENOTCONN, POLLHUP\n");
}

static void modules_and_acks(zk_file_t *me)
{
	pid_t pid = spawn(0);
	target_t t = target(pid);
	static const char elf[] = "\177ELF";
	uint32_t id;
	/* no debugger: the fence at once */
	EXPECT(metadata(t.f, t.vm, elf, 4, DATA_VA, 11, &id) == 0 && fence_at(&t, DATA_VA) == 11, "fence without debugger");
	/* bad arguments */
	EXPECT(metadata(t.f, t.vm, elf, 4, DATA_VA + 4, 1, NULL) == -EINVAL, "fence misaligned");
	EXPECT(metadata(t.f, t.vm, elf, 4, 0, 1, NULL) == -EINVAL, "no fence");
	EXPECT(metadata(t.f, t.vm, elf, 4, 0x900000, 1, NULL) == -EFAULT, "fence not mapped");
	EXPECT(metadata(t.f, t.vm + 9, elf, 4, DATA_VA, 1, NULL) == -ENOENT, "no such VM");
	EXPECT(metadata(t.f, t.vm, elf, 0, DATA_VA, 1, NULL) == -EINVAL, "empty ELF");
	struct drm_zesim_debug_metadata_create m = {.type = 1, .user_addr = (uintptr_t)elf, .len = 4, .vm_id = t.vm,
						    .load_size = 1, .ack_fence_addr = DATA_VA};
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, 4) == -EINVAL, "type");
	m.type = 0;
	m.reserved[1] = 1;
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, 4) == -EINVAL, "reserved");
	m.reserved[1] = 0;
	m.load_size = 0;
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, 4) == -EINVAL, "load_size 0");
	m.load_size = 1;
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, 3) == -EFAULT, "the ELF did not travel whole");
	m.len = ZESIM_DEBUG_METADATA_MAX + 1ull;
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, &m, elf, 4) == -EINVAL, "too large");
	struct drm_zesim_debug_metadata_destroy md = {.metadata_id = id, .pad = 1};
	EXPECT(io(t.f, DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, &md, NULL, 0) == -EINVAL, "destroy pad");
	/* ACK_MODULES: held until the ack */
	zk_fd_t *fd;
	EXPECT(connect_pid(me, (uint64_t)pid, ZESIM_EUDEBUG_CONNECT_ACK_MODULES, &fd) == 0, "connect");
	event_t e;
	seq = 0;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "OPEN");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "VM");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "queue");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_CREATE, "replayed module: no ack needed");
	EXPECT(metadata(t.f, t.vm, elf, 4, DATA_VA + 16, 22, &id) == 0, "module 2");
	EXPECT(fence_at(&t, DATA_VA + 16) == 0, "fence written before the ack");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_MODULE, ZESIM_EUDEBUG_EVENT_CREATE | ZESIM_EUDEBUG_EVENT_NEED_ACK,
		     "module 2 NEED_ACK");
	const uint64_t ack_seq = e.base.seqno;
	struct drm_zesim_eudebug_ack_event a = {.type = ZESIM_EUDEBUG_EVENT_MODULE, .seqno = ack_seq - 1};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a, NULL, 0, NULL, NULL) == -EINVAL, "ack of an event without ack");
	a = (struct drm_zesim_eudebug_ack_event){.type = ZESIM_EUDEBUG_EVENT_MODULE, .seqno = ack_seq, .flags = 1};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a, NULL, 0, NULL, NULL) == -EINVAL, "ack flags");
	a = (struct drm_zesim_eudebug_ack_event){.type = ZESIM_EUDEBUG_EVENT_VM, .seqno = ack_seq};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a, NULL, 0, NULL, NULL) == -EINVAL, "ack of the wrong type");
	EXPECT(fence_at(&t, DATA_VA + 16) == 0, "fence written by a refused ack");
	a.type = ZESIM_EUDEBUG_EVENT_MODULE;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a, NULL, 0, NULL, NULL) == 0, "ack");
	EXPECT(fence_at(&t, DATA_VA + 16) == 22, "fence after the ack: %llu", (unsigned long long)fence_at(&t, DATA_VA + 16));
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_ACK_EVENT, &a, NULL, 0, NULL, NULL) == -EINVAL, "second ack");
	/* a module whose debugger goes away before the ack */
	EXPECT(metadata(t.f, t.vm, elf, 4, DATA_VA + 24, 33, &id) == 0, "module 3");
	EXPECT(fence_at(&t, DATA_VA + 24) == 0, "fence 3 early");
	zk_fd_close(fd);
	EXPECT(fence_at(&t, DATA_VA + 24) == 33, "fence 3 not released by the debugger's close");
	zk_close(t.f);
	reap(pid);
	printf("ok modules: fence at once, NEED_ACK held until ACK_EVENT, released when the debugger goes away, bad args\n");
}

static void area_and_vm_fd(zk_file_t *me)
{
	pid_t pid = spawn(0);
	target_t t = target(pid);
	zk_fd_t *fd, *vfd;
	EXPECT(connect_pid(me, (uint64_t)pid, 0, &fd) == 0, "connect");
	event_t e;
	seq = 0;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "OPEN");
	const uint64_t client = e.open.client_handle;
	struct drm_zesim_eudebug_info info;
	memset(&info, 0xff, sizeof(info));
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_INFO, &info, NULL, 0, NULL, NULL) == 0, "INFO");
	EXPECT(info.sip_addr == ZESIM_DEBUG_AREA_VA && info.ssa_addr > info.sip_addr &&
		       info.ssa_addr + info.ssa_size <= ZESIM_DEBUG_AREA_VA + ZESIM_DEBUG_AREA_SIZE &&
		       info.bitmask_size == BITMASK && info.slices == 1 && info.subslices_per_slice == 2 &&
		       info.eus_per_subslice == 4 && info.threads_per_eu == THREADS && !info.pad &&
		       !info.reserved[0] && !info.reserved[3],
	       "INFO fields");
	/* VM_OPEN's arguments */
	struct drm_zesim_eudebug_vm_open vo = {.client_handle = client, .vm_handle = t.vm};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &vo, NULL, 0, NULL, NULL) == 0, "VM_OPEN");
	vfd = zk_fd_take_new(k);
	EXPECT(vfd && vfd != fd, "VM_OPEN made an fd");
	zk_fd_attach(vfd, &user);
	struct drm_zesim_eudebug_vm_open bad = vo;
	bad.vm_handle = t.vm + 5;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &bad, NULL, 0, NULL, NULL) == -EINVAL, "no such VM");
	bad = vo;
	bad.client_handle = client + 100;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &bad, NULL, 0, NULL, NULL) == -EINVAL, "no such client");
	bad = vo;
	bad.flags = 1;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &bad, NULL, 0, NULL, NULL) == -EINVAL, "flags");
	EXPECT(!zk_fd_take_new(k), "a refused VM_OPEN made an fd");
	/* The SSA header, read through the target's VM (docs/debug.md §2, uapi/zesim_ssa.h). */
	struct zesim_ssa_magic_header mh;
	struct zesim_ssa_header h;
	EXPECT(zk_fd_pread(vfd, (uint8_t *)&mh, sizeof(mh), info.ssa_addr) == sizeof(mh), "pread SSA magic");
	EXPECT(!memcmp(mh.magic, "tssarea", 8) && mh.version.major == 2 && mh.version.minor == 0 && mh.version.patch == 0 &&
		       mh.size * 8u == sizeof(mh) + sizeof(h),
	       "SSA magic header: %.8s %u.%u.%u size %u", mh.magic, mh.version.major, mh.version.minor, mh.version.patch,
	       mh.size);
	EXPECT(zk_fd_pread(vfd, (uint8_t *)&h, sizeof(h), info.ssa_addr + sizeof(mh)) == sizeof(h), "pread SSA header");
	EXPECT(h.num_slices == 1 && h.num_subslices_per_slice == 2 && h.num_eus_per_subslice == 4 &&
		       h.num_threads_per_eu == THREADS && h.state_save_size == ZESIM_SSA_SLOT_SIZE &&
		       h.sr_magic_offset == ZESIM_SSA_SR_IDENT_OFFSET && h.state_area_offset >= sizeof(mh) + sizeof(h) &&
		       !h.slm_area_offset,
	       "SSA header fields");
	EXPECT(h.grf.offset == 0 && h.grf.num == 128 && h.grf.bytes == 32 && h.cr.offset == ZESIM_SSA_CR_OFFSET &&
		       h.dbg.offset == ZESIM_SSA_DBG_OFFSET && h.cmd.offset == ZESIM_SSA_CMD_OFFSET &&
		       h.cmd.bytes == sizeof(struct zesim_ssa_sip_command) && h.acc.num == 2 && h.flag.num == 2 &&
		       h.sp.offset == ZESIM_SSA_SP_OFFSET && h.tdr.offset == ZESIM_SSA_TDR_OFFSET &&
		       h.addr.offset == ZESIM_SSA_ADDR_OFFSET && !h.mme.num && !h.notification.num,
	       "regset descriptors");
	EXPECT(info.ssa_size >= h.state_area_offset + EUS * THREADS * h.state_save_size, "SSA size %llu",
	       (unsigned long long)info.ssa_size);
	for (uint32_t s = 0; s < EUS * THREADS; s++) {
		struct zesim_ssa_sr_ident id;
		EXPECT(zk_fd_pread(vfd, (uint8_t *)&id, sizeof(id),
				   info.ssa_addr + h.state_area_offset + s * h.state_save_size + h.sr_magic_offset) ==
			       sizeof(id),
		       "pread sr_ident");
		EXPECT(!memcmp(id.magic, "srmagic", 8) && id.count == 0, "slot %u: sr_ident %.8s count %u", s, id.magic,
		       id.count);
	}
	/* VM_BIND into the area */
	EXPECT(bind(t.f, t.vm, t.bo, ZESIM_DEBUG_AREA_VA + ZESIM_DEBUG_AREA_SIZE - 8192, 8192, 0) == -EINVAL,
	       "VM_BIND into the debug area");
	EXPECT(bind(t.f, t.vm, t.bo, ZESIM_DEBUG_AREA_VA - 4096, 8192, 0) == -EINVAL, "VM_BIND across its start");
	EXPECT(bind(t.f, t.vm, t.bo, ZESIM_DEBUG_AREA_VA - 8192, 8192, 0) == 0, "VM_BIND just below it");
	/* The VM fd against what the target wrote through its mmap */
	for (int i = 0; i < 8192; i++)
		t.map[i] = (uint8_t)(i * 7 + 3);
	uint8_t buf[12288];
	EXPECT(zk_fd_pread(vfd, buf, 100, DATA_VA + 4000) == 100 && !memcmp(buf, t.map + 4000, 100),
	       "pread across a page boundary");
	EXPECT(zk_fd_pread(vfd, buf, sizeof(buf), DATA_VA + 4096) == 4096 && !memcmp(buf, t.map + 4096, 4096),
	       "short count at the first unmapped page");
	EXPECT(zk_fd_pread(vfd, buf, 16, DATA_VA + 8192) == -EFAULT, "unmapped: EFAULT");
	EXPECT(zk_fd_pread(vfd, buf, 16, 1ull << 47) == -EFAULT, "beyond the VA space");
	EXPECT(zk_fd_pread(vfd, buf, 0, DATA_VA) == 0, "zero bytes");
	memset(buf, 0x5a, 32);
	EXPECT(zk_fd_pwrite(vfd, buf, 32, DATA_VA + 100) == 32 && t.map[100] == 0x5a && t.map[131] == 0x5a &&
		       t.map[132] == (uint8_t)(132 * 7 + 3),
	       "pwrite seen by the target");
	EXPECT(zk_fd_pwrite(vfd, buf, 8, RO_VA) == 8, "pwrite into a read-only mapping");
	EXPECT(zk_fd_pread(vfd, buf + 100, 8, RO_VA) == 8 && !memcmp(buf + 100, buf, 8), "read back");
	EXPECT(zk_fd_read(vfd, buf, 8) == -EINVAL && zk_fd_ioctl(vfd, ZESIM_EUDEBUG_IOCTL_INFO, &info, sizeof(info), NULL,
								     0, NULL, 0) == -ENOTTY,
	       "read/ioctl on the VM fd");
	/* the debug fd's other operations */
	EXPECT(zk_fd_read(fd, buf, 8) == -EINVAL, "read() on the debug fd");
	EXPECT(zk_fd_ioctl(fd, ZESIM_EUDEBUG_IOCTL_INFO, &info, 8, NULL, 0, NULL, 0) == -EINVAL, "INFO size");
	EXPECT(zk_fd_ioctl(fd, _IO('j', 0x40), NULL, 0, NULL, 0, NULL, 0) == -ENOTTY, "unknown");
	/* the target closes: the VM fd fails */
	zk_close(t.f);
	EXPECT(zk_fd_pread(vfd, buf, 8, DATA_VA) == -EIO, "pread after the target closed");
	zk_fd_close(vfd);
	zk_fd_close(fd);
	reap(pid);
	printf("ok debug area + VM fd: INFO, SSA header and %u slots, VM_BIND refused, pread/pwrite, short count, EFAULT\n",
	       EUS * THREADS);
}

static void attention(zk_file_t *me)
{
	pid_t pid = spawn(0);
	target_t t = target(pid);
	/* another client's job runs without the SIP */
	pid_t pid2 = spawn(0);
	target_t o = target(pid2);
	zk_fd_t *fd;
	EXPECT(connect_pid(me, (uint64_t)pid, 0, &fd) == 0, "connect");
	event_t e;
	seq = 0;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "OPEN");
	const uint64_t client = e.open.client_handle;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "VM");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "queue");
	struct drm_zesim_eudebug_info info;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_INFO, &info, NULL, 0, NULL, NULL) == 0, "INFO");
	const uint64_t slot0 = info.ssa_addr + 4096; /* state_area_offset, checked in area_and_vm_fd */
	start_job(&t);
	EXPECT(reg(R_DBG_MODE) == (1u | 0x45u << 8), "DBG_MODE %#x", reg(R_DBG_MODE));
	EXPECT(((uint64_t)reg(R_DBG_SIP_HI) << 32 | reg(R_DBG_SIP_LO)) == info.sip_addr, "DBG_SIP");
	EXPECT(((uint64_t)reg(R_DBG_SSA_HI) << 32 | reg(R_DBG_SSA_LO)) == slot0, "DBG_SSA");
	EXPECT(reg(R_DBG_SLOT_SIZE) == ZESIM_SSA_SLOT_SIZE && (reg(ZS_REG_DBG_CTL) & 1), "DBG_SLOT_SIZE, DBG_CTL");
	EXPECT(reg(ZS_REG_IRQ_ENABLE) & ZS_IRQ_DEBUG, "DEBUG interrupt not enabled");
	/* thread 9 = EU 1, thread 1 stops at a breakpoint */
	EXPECT(fake_hw_dbg_stop(hw, 9, 1), "stop");
	zk_service(k);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "EU_ATTENTION");
	EXPECT(e.base.len == sizeof(e.attn) + BITMASK && e.attn.bitmask_size == BITMASK && e.attn.client_handle == client &&
		       e.attn.exec_queue_handle == t.q,
	       "attention fields: len %u size %u", e.base.len, e.attn.bitmask_size);
	static const uint8_t want9[BITMASK] = {0, 2};
	EXPECT(!memcmp(e.attn.bitmask, want9, BITMASK), "attention bitmap %02x %02x", e.attn.bitmask[0], e.attn.bitmask[1]);
	/* a second thread: the whole bitmap again */
	EXPECT(fake_hw_dbg_stop(hw, 8 * 7 + 3, 3), "stop 2");
	zk_service(k);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "EU_ATTENTION 2");
	static const uint8_t want2[BITMASK] = {0, 2, 0, 0, 0, 0, 0, 8};
	EXPECT(!memcmp(e.attn.bitmask, want2, BITMASK), "bitmap 2");
	/* an interrupt that stops nothing new: no event */
	fake_hw_raise_irq(hw, ZS_IRQ_DEBUG);
	zk_service(k);
	expect_no_event(fd);
	/* STOPPED */
	uint8_t bits[BITMASK];
	uint64_t s1, s2;
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED, bits, BITMASK, &s1) == 0 &&
		       !memcmp(bits, want2, BITMASK) && s1 == seq + 1,
	       "STOPPED: seqno %llu", (unsigned long long)s1);
	seq = s1;
	/* the job timeout does not run while threads are stopped */
	zk_set_clock(k, fake_clock, NULL);
	zk_set_job_timeout(k, 1);
	now += 1000 * MS;
	zk_service(k);
	EXPECT(!stats().jobs_timed_out && !zk_idle(k), "job timed out while stopped");
	/* RESUME: only stopped threads */
	uint8_t r[BITMASK] = {0, 3};
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME, r, BITMASK, NULL) == -EINVAL,
	       "RESUME of a running thread");
	EXPECT(attn_word(0) == (1u << 9), "refused RESUME changed attention");
	r[1] = 2;
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME, r, BITMASK, &s2) == 0 && s2 == seq + 1,
	       "RESUME");
	seq = s2;
	EXPECT(attn_word(0) == 0 && attn_word(1) == 1u << 27, "attention after RESUME: %#x %#x", attn_word(0),
	       attn_word(1));
	/* INTERRUPT a bitmap; a thread that does not exist (slot 4 of 4) */
	uint8_t ib[BITMASK] = {0x10};
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT, ib, BITMASK, NULL) == -EINVAL,
	       "INTERRUPT of thread slot 4");
	uint8_t ib8[12] = {[8] = 1};
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT, ib8, 12, NULL) == -EINVAL,
	       "INTERRUPT of EU 8");
	ib[0] = 0x5;
	ib[2] = 0x1;
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT, ib, BITMASK, &s1) == 0 && s1 == seq + 1,
	       "INTERRUPT");
	seq = s1;
	EXPECT(halt_word(0) == (0x5u | 1u << 16), "halt requests %#x", halt_word(0));
	EXPECT(fake_hw_dbg_stop(hw, 0, 3), "thread 0 answers");
	zk_service(k);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "halted thread");
	/* unanswered requests are cancelled after the bound (GT cycles and host time) */
	now += 1000 * MS;
	zk_service(k);
	EXPECT(halt_word(0) == (0x4u | 1u << 16), "cancelled before the cycles passed: %#x", halt_word(0));
	zs_hw_mmio_write(hw, ZS_REG_GT_CYCLES_LO, reg(ZS_REG_GT_CYCLES_LO) + 30000);
	zk_service(k);
	EXPECT(halt_word(0) == 0, "halt requests not cancelled: %#x", halt_word(0));
	/* INTERRUPT_ALL */
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL, bits, 4, NULL) == -EINVAL,
	       "INTERRUPT_ALL with a bitmap");
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL, NULL, 0, &s1) == 0, "INTERRUPT_ALL");
	seq = s1;
	EXPECT(halt_word(0) == ~attn_word(0) && halt_word(1) == ~attn_word(1), "halt all: %#x", halt_word(0));
	now += 1000 * MS;
	zs_hw_mmio_write(hw, ZS_REG_GT_CYCLES_LO, reg(ZS_REG_GT_CYCLES_LO) + 30000);
	zk_service(k);
	EXPECT(halt_word(0) == 0 && halt_word(1) == 0, "halt all not cancelled");
	/* PAGEFAULT: the address from the fault registers, then the attention */
	zs_hw_mmio_write(hw, ZS_REG_FAULT_ADDR_LO, 0xdead000);
	zs_hw_mmio_write(hw, ZS_REG_FAULT_ADDR_HI, 0x12);
	zs_hw_mmio_write(hw, ZS_REG_FAULT_STATUS, ZS_FIELD_MASK(FAULT_STATUS, VALID));
	EXPECT(fake_hw_dbg_stop(hw, 25, 2), "page-fault stop");
	zk_service(k);
	zs_hw_mmio_write(hw, ZS_REG_FAULT_STATUS, 0);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_PAGEFAULT, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "PAGEFAULT");
	static const uint8_t wantpf[BITMASK] = {0, 0, 0, 2};
	EXPECT(e.pf.pagefault_address == 0x120dead000ull && e.pf.bitmask_size == BITMASK && e.pf.client_handle == client &&
		       !memcmp(e.pf.bitmask, wantpf, BITMASK),
	       "PAGEFAULT: address %#llx bitmap %02x", (unsigned long long)e.pf.pagefault_address, e.pf.bitmask[3]);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "attention after PF");
	/* bad EU_CONTROL arguments */
	EXPECT(eu_control(fd, client, 4, NULL, 0, NULL) == -EINVAL, "cmd");
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED, bits, 6, NULL) == -EINVAL, "size 6");
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED, bits, 4, NULL) == -EINVAL, "size too small");
	EXPECT(eu_control(fd, client + 1000, ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED, bits, BITMASK, NULL) == -EINVAL,
	       "client");
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME, NULL, 0, NULL) == -EINVAL, "RESUME nothing");
	struct drm_zesim_eudebug_eu_control c = {.client_handle = client, .cmd = 1, .bitmask_size = BITMASK,
						 .bitmask_ptr = (uintptr_t)bits, .flags = 1};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c, NULL, 0, bits, NULL) == -EINVAL, "flags");
	c.flags = 0;
	c.exec_queue_handle = 99;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c, NULL, 0, bits, NULL) == -EINVAL, "exec queue");
	c.exec_queue_handle = 0;
	c.reserved = 1;
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_EU_CONTROL, &c, NULL, 0, bits, NULL) == -EINVAL, "reserved");
	/* the debugger goes away with threads stopped and halts pending: all resumed with cmd RESUME */
	const uint32_t ready = ZESIM_SIP_CMD_READY;
	zk_fd_t *vfd;
	struct drm_zesim_eudebug_vm_open vo = {.client_handle = client, .vm_handle = t.vm};
	EXPECT(fdio(fd, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &vo, NULL, 0, NULL, NULL) == 0, "VM_OPEN");
	vfd = zk_fd_take_new(k);
	zk_fd_attach(vfd, &user);
	/* slot of thread 25 (EU 3, thread 1) = 3 * 4 + 1 */
	const uint64_t cmd13 = slot0 + (3 * THREADS + 1) * ZESIM_SSA_SLOT_SIZE + ZESIM_SSA_CMD_OFFSET;
	EXPECT(zk_fd_pwrite(vfd, (const uint8_t *)&ready, 4, cmd13) == 4, "cmd READY");
	/* a page fault without FAULT_* (the fault registers hold another): the address the
	 * hardware saved in the slot's SP dwords 2-3 (docs/debug.md §2.3); thread 26 = EU 3,
	 * thread 2, slot 3 * 4 + 2 */
	const uint64_t fva = 0x345678a000ull;
	EXPECT(zk_fd_pwrite(vfd, (const uint8_t *)&fva, 8,
			    slot0 + (3 * THREADS + 2) * ZESIM_SSA_SLOT_SIZE + ZESIM_SSA_SP_OFFSET + 8) == 8,
	       "SP dwords");
	EXPECT(fake_hw_dbg_stop(hw, 26, 2), "page-fault stop 2");
	zk_service(k);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_PAGEFAULT, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "PAGEFAULT from the slot");
	EXPECT(e.pf.pagefault_address == fva && e.pf.bitmask[3] == 4, "PAGEFAULT from the slot: %#llx %02x",
	       (unsigned long long)e.pf.pagefault_address, e.pf.bitmask[3]);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "attention after PF 2");
	EXPECT(eu_control(fd, client, ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL, NULL, 0, NULL) == 0, "INTERRUPT_ALL");
	const uint64_t resumes = stats().debug_resumes;
	zk_fd_close(vfd);
	zk_fd_close(fd);
	uint32_t cmd = 7;
	zk_fd_t *fd2;
	EXPECT(attn_word(0) == 0 && attn_word(1) == 0 && halt_word(0) == 0 && halt_word(1) == 0,
	       "after the debugger left: attention %#x %#x halts %#x", attn_word(0), attn_word(1), halt_word(0));
	EXPECT(stats().debug_resumes - resumes == 4, "resumed %llu threads, expected 4 (0, 25, 26, 59)",
	       (unsigned long long)(stats().debug_resumes - resumes));
	/* read the slot's cmd back through a new connection's VM fd */
	EXPECT(connect_pid(me, (uint64_t)pid, 0, &fd2) == 0, "reconnect");
	EXPECT(fdio(fd2, ZESIM_EUDEBUG_IOCTL_VM_OPEN, &vo, NULL, 0, NULL, NULL) == 0, "VM_OPEN 2");
	vfd = zk_fd_take_new(k);
	zk_fd_attach(vfd, &user);
	EXPECT(zk_fd_pread(vfd, (uint8_t *)&cmd, 4, cmd13) == 4 && cmd == ZESIM_SIP_CMD_RESUME, "cmd %u after resume", cmd);
	zk_fd_close(vfd);
	zk_fd_close(fd2);
	/* no debugger now: a stop is resumed by the KMD (the client had a debugger: SIP on) */
	EXPECT(fake_hw_dbg_stop(hw, 2, 1), "stop without debugger");
	zk_service(k);
	EXPECT(attn_word(0) == 0 && stats().debug_resumes - resumes == 5, "not resumed without a debugger");
	end_job();
	zk_set_job_timeout(k, 0);
	zk_set_clock(k, NULL, NULL);
	/* the other client's job: DBG_MODE 0 */
	start_job(&o);
	EXPECT(reg(R_DBG_MODE) == 0, "DBG_MODE for a client never debugged: %#x", reg(R_DBG_MODE));
	end_job();
	start_job(&t);
	EXPECT(reg(R_DBG_MODE) == (1u | 0x45u << 8), "a client that had a debugger keeps the SIP");
	end_job();
	zk_close(o.f);
	zk_close(t.f);
	reap(pid);
	reap(pid2);
	printf("ok attention: debug registers, EU_ATTENTION bitmaps, STOPPED/RESUME/INTERRUPT/INTERRUPT_ALL, bounded "
	       "halt cancel, PAGEFAULT, no timeout while stopped, resume when the debugger leaves or is absent\n");
}

/* The target dies with a thread stopped (its file closes: the engine is reset). */
static void target_exit(zk_file_t *me)
{
	pid_t pid = spawn(0);
	target_t t = target(pid);
	zk_fd_t *fd;
	EXPECT(connect_pid(me, (uint64_t)pid, 0, &fd) == 0, "connect");
	start_job(&t);
	EXPECT(fake_hw_dbg_stop(hw, 1, 1), "stop");
	zk_service(k);
	reap(pid);
	zk_close(t.f);
	event_t e;
	int n = 0, rc;
	uint16_t last = 0, lastflags = 0;
	while ((rc = read_event(fd, &e, sizeof(e))) == 0) {
		n++;
		last = e.base.type;
		lastflags = e.base.flags;
	}
	EXPECT(rc == -ENOTCONN && last == ZESIM_EUDEBUG_EVENT_OPEN && lastflags == ZESIM_EUDEBUG_EVENT_DESTROY,
	       "after the target died: rc %d, last event %u %#x", rc, last, lastflags);
	EXPECT(zk_idle(k), "the dead target's job still runs");
	zk_fd_close(fd);
	/* The fake unit knows no engine reset: thread 1 is still in attention.  The next job
	 * starts with it resumed, and a thread stopping in that slot is reported again. */
	EXPECT(attn_word(0) == 2, "the fake unit's attention %#x", attn_word(0));
	pid_t pid2 = spawn(0);
	target_t t2 = target(pid2);
	EXPECT(connect_pid(me, (uint64_t)pid2, 0, &fd) == 0, "connect 2");
	seq = 0;
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_OPEN, ZESIM_EUDEBUG_EVENT_CREATE, "OPEN");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_VM, ZESIM_EUDEBUG_EVENT_CREATE, "VM");
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EXEC_QUEUE, ZESIM_EUDEBUG_EVENT_CREATE, "queue");
	start_job(&t2);
	EXPECT(attn_word(0) == 0, "stale attention not resumed at the next job: %#x", attn_word(0));
	EXPECT(fake_hw_dbg_stop(hw, 1, 1), "stop in the same slot");
	zk_service(k);
	expect_event(fd, &e, ZESIM_EUDEBUG_EVENT_EU_ATTENTION, ZESIM_EUDEBUG_EVENT_STATE_CHANGE, "the new stop");
	EXPECT(e.attn.bitmask[0] == 2, "bitmap %#x", e.attn.bitmask[0]);
	zk_fd_close(fd); /* resumes it */
	EXPECT(attn_word(0) == 0, "not resumed");
	end_job();
	zk_close(t2.f);
	reap(pid2);
	printf("ok target exit: %d events then OPEN DESTROY, -ENOTCONN, its job gone; stale attention resumed at the "
	       "next job, a new stop in that slot reported\n", n);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	kids_init();
	hw = fake_hw_create(64u << 20);
	k = zk_create(hw);
	EXPECT(k, "zk_create");
	static const uint8_t sip[32] = {1, 2, 3};
	EXPECT(zk_set_sip(k, sip, 17) == -EINVAL && zk_set_sip(k, sip, 0) == -EINVAL, "zk_set_sip sizes");
	EXPECT(zk_set_sip(k, sip, sizeof(sip)) == 0, "zk_set_sip");
	const uint64_t free0 = stats().free_bytes;
	zk_file_t *me = zk_open(k, getpid());
	connect_rules(me);
	EXPECT(zk_set_sip(k, sip, sizeof(sip)) == -EBUSY, "zk_set_sip after the area was made");
	replay_and_events(me);
	modules_and_acks(me);
	area_and_vm_fd(me);
	attention(me);
	target_exit(me);
	zk_close(me);
	const zk_stats_t s = stats();
	EXPECT(!s.files && !s.vms && !s.bos && !s.queues && !s.pt_bytes && !s.debug_connections && !zk_fd_count(k),
	       "left: files %u vms %u bos %u queues %u pt %llu conns %u fds %u", s.files, s.vms, s.bos, s.queues,
	       (unsigned long long)s.pt_bytes, s.debug_connections, zk_fd_count(k));
	EXPECT(free0 - s.free_bytes <= ZESIM_DEBUG_AREA_SIZE, "leak: %llu bytes", (unsigned long long)(free0 - s.free_bytes));
	zk_destroy(k);
	fake_hw_destroy(hw);
	printf("kmd_debug: all passed\n");
	return 0;
}
