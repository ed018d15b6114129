/* The fake KMD: per-client DRM files, GEM objects, VMs and page tables, exec
 * queues, a job scheduler on the engine ring, user fences (docs/uapi.md,
 * docs/kmd.md).  It runs inside the daemon and reaches the device only
 * through the hardware interface (include/zs/hw_if.h). */
#ifndef ZESIM_KMD_H
#define ZESIM_KMD_H

#include <stddef.h>
#include <stdint.h>

#include "zs/hw_if.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zk_kmd zk_kmd_t;
typedef struct zk_file zk_file_t;

/* Buffers a user pointer of an ioctl argument refers to, marshalled by the
 * preload library: `in` holds what the KMD reads, `out` what it writes. */
typedef struct zk_blob {
	const uint8_t *data;
	uint32_t len;
} zk_blob_t;

typedef struct zk_out_blob {
	uint8_t *data;
	uint32_t len;
} zk_out_blob_t;

#define ZK_MAX_BLOBS 4
/* zk_ioctl: the call waits (WAIT_USER_FENCE); re-check with zk_wait_check.  Not a
 * small number: OBSERVATION ADD_CONFIG returns an id, the stream's CONFIG one too. */
#define ZK_PENDING 0x7fffffff

typedef struct zk_stats {
	uint32_t files, bos, vms, queues, jobs;
	uint64_t bo_bytes;	/* bytes of live GEM objects */
	uint64_t pt_bytes;	/* bytes of page tables */
	uint64_t free_bytes;	/* physical memory not allocated */
	uint64_t jobs_completed, jobs_cancelled, engine_resets;
	uint64_t preemptions; /* jobs parked at a semaphore wait to let later work run */
	uint64_t jobs_timed_out; /* of jobs_cancelled: stopped by the job timeout */
	uint64_t timeslices;	 /* jobs preempted at the end of their time slice (§6) */
	uint64_t jobs_faulted;	 /* of jobs_cancelled: failed by an EU fault (page fault, misaligned access ...) */
	uint64_t eu_faults;	 /* EU faults reported by the device, whatever the fault mode */
	uint32_t oa_configs;	 /* OA metric sets (ADD_CONFIG; removed ones while a stream uses them) */
	uint32_t oa_streams;	 /* open OA streams (0 or 1) */
	uint64_t oa_reports_read; /* reports copied to OA stream readers */
	uint64_t oa_irqs;	 /* IRQ_STATUS.OA_BUFFER interrupts handled */
	uint32_t debug_connections; /* live EU debug connections (debug fds) */
	uint64_t debug_events;	    /* EU debug events queued, all connections */
	uint64_t debug_irqs;	    /* IRQ_STATUS.DEBUG interrupts handled */
	uint64_t debug_resumes;	    /* threads the KMD resumed itself (no debugger, or it went away) */
} zk_stats_t;

/* What an EU fault (a thread ended by a page fault or another exception, §8)
 * does to its job: fail it like an engine error (the default: the program
 * sees ZE_RESULT_ERROR_DEVICE_LOST), or only log it and let the job go on
 * (the other threads run, the kernel "succeeds" without the faulting
 * thread's work: the behaviour before faults were reported). */
typedef enum zk_fault_mode { ZK_FAULT_FAIL = 0, ZK_FAULT_CONTINUE = 1 } zk_fault_mode_t;
void zk_set_fault_mode(zk_kmd_t *kmd, zk_fault_mode_t mode);

/* The job timeout (docs/kmd.md §6) unless zk_set_job_timeout says otherwise. */
#define ZK_DEFAULT_JOB_TIMEOUT_MS 600000u

zk_kmd_t *zk_create(zs_hw_t *hw);
void zk_destroy(zk_kmd_t *kmd);

zk_file_t *zk_open(zk_kmd_t *kmd, int pid);
/* Cancels the file's work (resetting the engine if its job runs) and frees
 * every object it owns. */
void zk_close(zk_file_t *file);

/* One ioctl.  `arg` (arg_size bytes) is read and updated in place; `in`
 * and `out` are the user buffers the argument points to, in the order
 * docs/uapi.md gives per ioctl (an out blob's len becomes the bytes
 * written).  Returns 0, -errno, or ZK_PENDING. */
int zk_ioctl(zk_file_t *file, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in,
	     unsigned nin, zk_out_blob_t *out, unsigned nout);
/* Re-check a pending WAIT_USER_FENCE (arg as passed to zk_ioctl); returns
 * 0 when satisfied, ZK_PENDING, or -errno (the queue's job failed). */
int zk_wait_check(zk_file_t *file, const void *arg);

/* The memfd behind an mmap offset of this file: 0, or -EINVAL for an
 * unknown offset or a length beyond the object. */
int zk_mmap_lookup(zk_file_t *file, uint64_t offset, uint64_t length, int *memfd);

/* PRIME (docs/uapi.md §4): the fd the last PRIME_HANDLE_TO_FD gave (the object's
 * memfd, still the KMD's: send a copy), once; -1 if none.  For PRIME_FD_TO_HANDLE
 * the caller puts the fd it received with the request, an fd of its own process,
 * in the argument's `fd` before zk_ioctl. */
int zk_prime_take_fd(zk_kmd_t *kmd);

/* Scheduler: retire finished jobs, submit the next; call after the device
 * has run and whenever a client changed something. */
void zk_service(zk_kmd_t *kmd);
int zk_idle(zk_kmd_t *kmd); /* no job running or queued */

void zk_get_stats(zk_kmd_t *kmd, zk_stats_t *out);

/* Job timeout (TDR, docs/kmd.md §6): a job that has kept the engine busy for
 * more than `ms` of host time is failed like an engine error (§7); 0 turns
 * the watchdog off.  Applies to running and later jobs. */
void zk_set_job_timeout(zk_kmd_t *kmd, uint32_t ms);
/* The job timeout of one client (the program's ZESIM_JOB_TIMEOUT_MS, sent at
 * OPEN); 0 = none.  Without it the KMD's applies. */
void zk_set_file_job_timeout(zk_file_t *file, uint32_t ms);

/* Time slicing (§6): a job that has run this many GT cycles while another
 * queue's job waits is preempted where it stands and requeued; 0 = off. */
#define ZK_DEFAULT_TIMESLICE_CYCLES 100000u
/* A saved GT state takes megabytes (every thread's registers, the SLM): while
 * this many are held, no further job is sliced (it runs on, or waits for its
 * semaphore to be parked), so many queues cannot grow the daemon without bound. */
#define ZK_MAX_SAVED_CONTEXTS 32u
void zk_set_timeslice(zk_kmd_t *kmd, uint64_t cycles);
/* The watchdog's clock in ns: CLOCK_MONOTONIC, or `now` (tests); NULL
 * restores CLOCK_MONOTONIC. */
void zk_set_clock(zk_kmd_t *kmd, uint64_t (*now)(void *ctx), void *ctx);

/* Per-file limits, so that one client cannot take the daemon's fds or the
 * device's memory (docs/kmd.md §3).  0 = no limit.  An object counts against
 * the file that created it until it is freed (a VM binding or a job may keep
 * it alive after its handle is closed).  Over a limit: GEM_CREATE, VM_CREATE,
 * EXEC_QUEUE_CREATE fail with -EMFILE (too many objects) or -ENOSPC (bytes);
 * VM_BIND with -ENOSPC when a page table would exceed `bytes_per_file`. */
typedef struct zk_limits {
	uint32_t bos_per_file;	  /* live GEM objects created by the file */
	uint64_t bytes_per_file;  /* bytes of its GEM objects + page tables of its VMs */
	uint32_t vms_per_file;	  /* live VMs */
	uint32_t queues_per_file; /* live exec queues */
	uint32_t bos_total;	  /* GEM objects of all files (each holds a memfd in the daemon) */
} zk_limits_t;

/* zk_create's limits; bytes_per_file defaults to half the physical memory,
 * bos_total to none (the daemon sets it from its fd budget). */
#define ZK_DEFAULT_MAX_BOS_PER_FILE 4096u
#define ZK_DEFAULT_MAX_VMS_PER_FILE 256u
#define ZK_DEFAULT_MAX_QUEUES_PER_FILE 1024u

/* Apply to later calls (objects that exist stay). */
void zk_set_limits(zk_kmd_t *kmd, const zk_limits_t *limits);
void zk_get_limits(zk_kmd_t *kmd, zk_limits_t *out);

/* EU debug (docs/kmd.md §14): the system routine the KMD installs in the debug
 * area (the daemon's embedded firmware/sip.zeasm binary), copied; before the first
 * CONNECT.  Without it, debugging works without stops: jobs run without the SIP
 * (DBG_MODE 0), events and the VM fd work.  0, -EINVAL (empty, larger than the
 * area's SIP part or not a multiple of 16 bytes), -EBUSY (the area is in use). */
int zk_set_sip(zk_kmd_t *kmd, const void *code, size_t bytes);

/* Reprogram the ring after something else used the device directly (the
 * daemon's test-only stimulus runner; only allowed with no file open). */
void zk_reclaim_engine(zk_kmd_t *kmd);

#ifdef __cplusplus
}
#endif

#endif
