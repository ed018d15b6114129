/* The KMD's job timeout (docs/kmd.md §6, §7) against the fake hardware
 * interface, on a clock the test moves by hand: no sleeping, no model.
 * The test holds a job on the ring by writing ENGINE_STATUS (the fake's
 * registers are plain storage) and says whether the device is busy with
 * fake_hw_set_busy.  Checked:
 *   - a job busy for more than the timeout is failed like an engine error:
 *     queue banned (EXEC -> ECANCELED, its fence waits -> EIO), engine
 *     reset, the queue's jobs in the FIFO cancelled; the next job of another
 *     file runs, and gets a full timeout of its own;
 *   - time stopped at a false semaphore with the device idle is not charged,
 *     time waiting on a semaphore while walkers run is;
 *   - a preempted job keeps what it was charged, and is not charged while
 *     parked in the FIFO; a job whose walkers still run is not preempted;
 *     (the fake engine writes no fences: completions are counted in the
 *     statistics, and a fence of a queue not banned stays pending)
 *   - timeout 0 is no watchdog;
 *   - closing every file frees everything.
 * Prints one line per scenario; exits 1 with a message on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hw.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"

#define MS 1000000ull
#define BATCH_VA 0x100000ull
#define FENCE_VA 0x100800ull

static uint64_t now;
static zs_hw_t *hw;
static zk_kmd_t *k;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return now;
}

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_timeout:%d: %s: ", __LINE__, #cond);                                     \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

static int io(zk_file_t *f, unsigned long cmd, void *arg, const void *in, uint32_t in_len)
{
	zk_blob_t blob = {in, in_len};
	return zk_ioctl(f, cmd, arg, (uint32_t)_IOC_SIZE(cmd), &blob, in ? 1 : 0, NULL, 0);
}

typedef struct client {
	zk_file_t *f;
	uint32_t vm;
} client_t;

/* A file with a VM in which one 4 KiB object holds the batch and the fences. */
static client_t client(int pid)
{
	client_t c = {zk_open(k, pid), 0};
	EXPECT(c.f, "zk_open");
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(c.f, DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	c.vm = vc.vm_id;
	struct drm_zesim_gem_create g = {.size = 4096, .placement = 1};
	EXPECT(io(c.f, DRM_IOCTL_ZESIM_GEM_CREATE, &g, NULL, 0) == 0, "GEM_CREATE");
	struct drm_zesim_vm_bind b = {.vm_id = c.vm, .num_binds = 1};
	b.bind = (struct drm_zesim_vm_bind_op){.obj = g.handle, .range = 4096, .addr = BATCH_VA,
					       .op = ZESIM_VM_BIND_OP_MAP};
	EXPECT(io(c.f, DRM_IOCTL_ZESIM_VM_BIND, &b, NULL, 0) == 0, "VM_BIND");
	return c;
}

static uint32_t queue(client_t c)
{
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = c.vm};
	EXPECT(io(c.f, DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, &eci, sizeof(eci)) == 0, "EXEC_QUEUE_CREATE");
	return qc.exec_queue_id;
}

/* EXEC of a batch that signals fence slot `slot` with `value`. */
static int exec(client_t c, uint32_t q, unsigned slot, uint64_t value)
{
	struct drm_zesim_sync s = {.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
				   .addr = FENCE_VA + 8 * slot, .timeline_value = value};
	struct drm_zesim_exec e = {.exec_queue_id = q, .num_syncs = 1, .address = BATCH_VA, .num_batch_buffer = 1};
	return io(c.f, DRM_IOCTL_ZESIM_EXEC, &e, &s, sizeof(s));
}

/* A zero-timeout look at a fence: 0, ZK_PENDING or -errno. */
static int fence(client_t c, uint32_t q, unsigned slot, uint64_t value)
{
	struct drm_zesim_wait_user_fence w = {.addr = FENCE_VA + 8 * slot, .op = ZESIM_UFENCE_OP_EQ, .value = value,
					      .mask = ~0ull, .exec_queue_id = q};
	return io(c.f, DRM_IOCTL_ZESIM_WAIT_USER_FENCE, &w, NULL, 0);
}

static zk_stats_t stats(void)
{
	zk_stats_t s;
	zk_get_stats(k, &s);
	return s;
}

/* Let `ms` of host time pass with the engine in `status`, then service. */
static void run(uint32_t status, int busy, uint64_t ms)
{
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, status);
	fake_hw_set_busy(hw, busy);
	zk_service(k);
	now += ms * MS;
	zk_service(k);
}

/* The engine finishes whatever is on the ring. */
static void finish(void)
{
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_IDLE);
	fake_hw_set_busy(hw, 0);
	fake_hw_raise_irq(hw, ZS_IRQ_ENGINE_IDLE); /* completion reaches the KMD as an interrupt */
	zk_service(k);
}

static void timeout_fails_like_an_engine_error(void)
{
	zk_set_job_timeout(k, 1000);
	const zk_stats_t s0 = stats();
	client_t a = client(101), b = client(202);
	const uint32_t qa = queue(a), qb = queue(b);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY); /* a kernel that never ends */
	EXPECT(exec(a, qa, 0, 1) == 0, "first exec");
	EXPECT(exec(a, qa, 1, 2) == 0, "second exec of the same queue");
	EXPECT(exec(b, qb, 0, 7) == 0, "exec of another file");
	run(ZS_ENGINE_BUSY, 1, 1000);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out, "timed out at exactly the limit");
	EXPECT(fence(a, qa, 0, 1) == ZK_PENDING, "fence before the timeout: %d", fence(a, qa, 0, 1));
	run(ZS_ENGINE_BUSY, 1, 1);
	zk_stats_t s1 = stats();
	EXPECT(s1.jobs_timed_out == s0.jobs_timed_out + 1, "jobs_timed_out %llu", (unsigned long long)s1.jobs_timed_out);
	EXPECT(s1.jobs_cancelled == s0.jobs_cancelled + 2, "the job and the queue's queued job cancelled: %llu",
	       (unsigned long long)(s1.jobs_cancelled - s0.jobs_cancelled));
	EXPECT(s1.engine_resets == s0.engine_resets + 1, "one engine reset");
	EXPECT(s1.jobs == s0.jobs + 1, "the other file's job left: %u", s1.jobs - s0.jobs);
	EXPECT(fence(a, qa, 0, 1) == -EIO, "wait on the timed-out job: %d", fence(a, qa, 0, 1));
	EXPECT(fence(a, qa, 1, 2) == -EIO, "wait on the cancelled job: %d", fence(a, qa, 1, 2));
	EXPECT(exec(a, qa, 2, 3) == -ECANCELED, "exec on the banned queue");
	/* The other file's job is on the ring now, with a clock of its own. */
	run(ZS_ENGINE_BUSY, 1, 1000);
	EXPECT(stats().jobs_timed_out == s1.jobs_timed_out, "the next job inherited the charge");
	finish();
	EXPECT(stats().jobs_completed == s0.jobs_completed + 1, "the other file's job did not complete");
	EXPECT(fence(b, qb, 0, 7) == ZK_PENDING, "the other file's queue: %d", fence(b, qb, 0, 7));
	/* A new queue of the same file runs. */
	const uint32_t qa2 = queue(a);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	EXPECT(exec(a, qa2, 3, 9) == 0, "exec on a new queue");
	run(ZS_ENGINE_BUSY, 1, 500);
	finish();
	EXPECT(stats().jobs_completed == s0.jobs_completed + 2, "the new queue's job did not complete");
	zk_close(a.f);
	zk_close(b.f);
	printf("kmd_timeout: a job busy for more than 1000 ms is failed; the other file's work and a new queue run\n");
}

static void semaphore_waits(void)
{
	zk_set_job_timeout(k, 1000);
	const zk_stats_t s0 = stats();
	client_t a = client(303);
	const uint32_t q = queue(a);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_WAITING);
	EXPECT(exec(a, q, 0, 1) == 0, "exec");
	run(ZS_ENGINE_WAITING, 0, 3600 * 1000); /* blocked an hour: waiting, not working */
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out, "timed out while blocked at a semaphore");
	run(ZS_ENGINE_BUSY, 1, 600);
	run(ZS_ENGINE_WAITING, 0, 5000);
	run(ZS_ENGINE_WAITING, 1, 300); /* its walkers run while the streamer waits: charged */
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out, "timed out after 900 ms of work");
	run(ZS_ENGINE_BUSY, 1, 101);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out + 1, "not timed out after 1001 ms of work in pieces");
	EXPECT(fence(a, q, 0, 1) == -EIO, "wait");
	zk_close(a.f);
	printf("kmd_timeout: time blocked at a semaphore with the device idle is not charged, work in pieces is\n");
}

static void preemption(void)
{
	zk_set_job_timeout(k, 1000);
	const zk_stats_t s0 = stats();
	client_t a = client(404), b = client(505);
	const uint32_t qa = queue(a), qb = queue(b);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	EXPECT(exec(a, qa, 0, 1) == 0, "exec a");
	run(ZS_ENGINE_BUSY, 1, 700);
	/* Waiting on a semaphore with its walkers still running: not parked. */
	zs_hw_mmio_write(hw, ZS_REG_PREEMPT_ADDR_LO, (uint32_t)BATCH_VA + 0x40);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_WAITING);
	fake_hw_set_busy(hw, 1);
	EXPECT(exec(b, qb, 0, 2) == 0, "exec b");
	EXPECT(stats().preemptions == s0.preemptions, "parked while its walkers run");
	run(ZS_ENGINE_WAITING, 1, 100); /* 800 ms charged */
	/* Blocked with the device idle: parked, b runs. */
	fake_hw_set_busy(hw, 0);
	zk_service(k);
	EXPECT(stats().preemptions == s0.preemptions + 1, "not parked when blocked");
	run(ZS_ENGINE_BUSY, 1, 900); /* b's time, not a's */
	finish();
	EXPECT(stats().jobs_completed == s0.jobs_completed + 1, "b did not complete");
	zs_hw_mmio_write(hw, ZS_REG_PREEMPT_ADDR_LO, 0);
	/* a is back on the ring with its 800 ms. */
	run(ZS_ENGINE_BUSY, 1, 150);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out, "a was charged for time parked or for b's work");
	run(ZS_ENGINE_BUSY, 1, 100);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out + 1, "a's charge was not kept across the preemption");
	EXPECT(fence(a, qa, 0, 1) == -EIO, "wait a");
	zk_close(a.f);
	zk_close(b.f);
	printf("kmd_timeout: a preempted job keeps its charge and is not charged while parked\n");
}

static void no_watchdog(void)
{
	zk_set_job_timeout(k, 0);
	const zk_stats_t s0 = stats();
	client_t a = client(606);
	const uint32_t q = queue(a);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	EXPECT(exec(a, q, 0, 1) == 0, "exec");
	run(ZS_ENGINE_BUSY, 1, 1000ull * 1000 * 1000);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out && fence(a, q, 0, 1) == ZK_PENDING, "timeout 0 timed out");
	/* Turning it on applies to the running job. */
	zk_set_job_timeout(k, 1000);
	run(ZS_ENGINE_BUSY, 1, 1);
	EXPECT(stats().jobs_timed_out == s0.jobs_timed_out + 1, "a timeout set later does not apply");
	zk_close(a.f);
	printf("kmd_timeout: job_timeout_ms 0 is no watchdog\n");
}

/* Completion and engine errors reach the KMD as interrupts (docs/kmd.md):
 * an idle engine without the interrupt is not a completed job, and an
 * error is acted on when its interrupt arrives; the handler acknowledges
 * (clears IRQ_STATUS). */
static void interrupts(void)
{
	zk_set_job_timeout(k, 0);
	const zk_stats_t s0 = stats();
	client_t a = client(707);
	const uint32_t q = queue(a);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	EXPECT(exec(a, q, 0, 1) == 0, "exec 1");
	EXPECT(exec(a, q, 1, 2) == 0, "exec 2");
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_IDLE);
	fake_hw_set_busy(hw, 0);
	zk_service(k);
	EXPECT(stats().jobs_completed == s0.jobs_completed, "completed without the engine-idle interrupt");
	fake_hw_raise_irq(hw, ZS_IRQ_ENGINE_IDLE);
	EXPECT(zs_hw_mmio_read(hw, ZS_REG_IRQ_STATUS) == ZS_IRQ_ENGINE_IDLE, "interrupt not pending");
	zk_service(k);
	EXPECT(stats().jobs_completed == s0.jobs_completed + 1, "the interrupt did not complete the job (no handler?)");
	EXPECT(zs_hw_mmio_read(hw, ZS_REG_IRQ_STATUS) == 0, "the interrupt was not acknowledged");
	EXPECT(stats().jobs == s0.jobs + 1, "the second job is not on the ring");
	/* An engine error: acted on at its interrupt. */
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_ERROR);
	fake_hw_raise_irq(hw, ZS_IRQ_ENGINE_ERROR);
	zk_service(k);
	EXPECT(stats().jobs_cancelled == s0.jobs_cancelled + 1 && stats().engine_resets == s0.engine_resets + 1,
	       "the engine-error interrupt did not fail the job");
	EXPECT(fence(a, q, 1, 2) == -EIO, "wait on the failed job");
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_IDLE);
	zk_close(a.f);
	printf("kmd_timeout: completion and engine errors arrive as interrupts\n");
}

/* Time slicing: a job that has run a time slice while another queue's job
 * waits is preempted where it stands (CS_PREEMPT bit 1) and requeued; when
 * its file closes while it is preempted, the device is told to drop its
 * saved GT state (CTX_DISCARD), so no state outlives its job. */
static void time_slices(void)
{
	zk_set_job_timeout(k, 0);
	zk_set_timeslice(k, 1000);
	const zk_stats_t s0 = stats();
	client_t a = client(808), b = client(909);
	const uint32_t qa = queue(a), qb = queue(b);
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_BUSY);
	fake_hw_set_busy(hw, 1);
	zs_hw_mmio_write(hw, ZS_REG_GT_CYCLES_LO, 0);
	EXPECT(exec(a, qa, 0, 1) == 0, "exec a");
	EXPECT(exec(b, qb, 0, 2) == 0, "exec b");
	zs_hw_mmio_write(hw, ZS_REG_GT_CYCLES_LO, 999);
	zk_service(k);
	EXPECT(stats().timeslices == s0.timeslices, "preempted before its slice ended");
	/* The slice is over; the device stops the job inside its batch. */
	zs_hw_mmio_write(hw, ZS_REG_GT_CYCLES_LO, 1000);
	zs_hw_mmio_write(hw, ZS_REG_PREEMPT_STATUS, 1);
	zs_hw_mmio_write(hw, ZS_REG_PREEMPT_ADDR_LO, (uint32_t)BATCH_VA + 0x20);
	zk_service(k);
	EXPECT(stats().timeslices == s0.timeslices + 1, "not preempted at the end of its slice");
	const unsigned d0 = fake_hw_discards(hw);
	zk_close(a.f); /* a is parked with a saved state */
	EXPECT(fake_hw_discards(hw) > d0, "the preempted job's saved state was not dropped when its file closed");
	zs_hw_mmio_write(hw, ZS_REG_PREEMPT_STATUS, 0);
	zk_set_timeslice(k, 0);
	finish();
	zk_close(b.f);
	printf("kmd_timeout: a time slice preempts the job; its saved state is dropped with its file\n");
}

int main(void)
{
	hw = fake_hw_create(64ull << 20);
	k = zk_create(hw);
	EXPECT(k, "the KMD refused the fake device");
	zk_set_clock(k, fake_clock, NULL);
	const zk_stats_t start = stats();
	timeout_fails_like_an_engine_error();
	semaphore_waits();
	preemption();
	no_watchdog();
	interrupts();
	time_slices();
	const zk_stats_t end = stats();
	EXPECT(!end.files && !end.bos && !end.vms && !end.queues && !end.jobs && !end.bo_bytes && !end.pt_bytes &&
		       end.free_bytes == start.free_bytes,
	       "leak after closing every file");
	EXPECT(end.jobs_timed_out == 4, "jobs_timed_out %llu", (unsigned long long)end.jobs_timed_out);
	zk_destroy(k);
	fake_hw_destroy(hw);
	return 0;
}
