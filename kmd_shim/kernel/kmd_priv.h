/* The fake KMD's private header (docs/kmd.md): the objects every feature file
 * shares and the functions one file offers the others.  The KMD is laid out as the
 * Linux xe driver is, a file per feature:
 *   kmd.c    device and files: zk_create/destroy, zk_open/close, settings, statistics
 *   mem.c    physical memory, handles, GEM objects (GEM_CREATE, GEM_MMAP_OFFSET, GEM_CLOSE, mmap, PRIME)
 *   vm.c     VMs and page tables (VM_CREATE, VM_DESTROY, VM_BIND)
 *   exec.c   exec queues, jobs, the scheduler on the ring, faults, time slices, timeouts,
 *            user fences (EXEC_QUEUE_CREATE/DESTROY, EXEC, WAIT_USER_FENCE)
 *   query.c  VERSION, DEVICE_QUERY
 *   ioctl.c  the ioctl table (uapi/zesim_ioctl_table.h) and its handlers
 *   fds.c    fd objects: what an ioctl returns as a new fd (fds.h, docs/kmd.md §12)
 *   testfd.c the test-only test fd kind (TEST_FD_OPEN, TEST_FD_PRODUCE)
 *   oa.c     OA streams: the OA_UNITS query, OBSERVATION, the stream fd (docs/kmd.md §13)
 *   debug.c  EU debug: CONNECT, the debug fd and the VM fd, module metadata, the debug area (SIP + SSA),
 *            attention interrupts (docs/kmd.md §14)
 * Object lifetimes follow a Linux DRM driver: handles hold references, VM mappings
 * hold their GEM objects, exec queues hold their VM, jobs hold their queue; an object
 * is freed at its last reference.  Every ioctl validates its whole argument before
 * changing anything, and returns the errno a Linux KMD would. */
#ifndef ZESIM_KMD_PRIV_H
#define ZESIM_KMD_PRIV_H

#include <stdint.h>

#include "fds.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "zs/pt_format.h"

#define PAGE ZS_PT_PAGE
#define PAGE64K ZS_PT_PAGE_64K
#define VA_LIMIT (1ull << 47)
#define RING_PA 0x1000ull
#define RING_SIZE 4096u
#define PHYS_RESERVED 0x10000ull /* ring and scratch below this */
#define MAX_BINDS 512u
#define MAX_SYNCS 64u
#define MAX_BO_BYTES (1ull << 32)
#define CHECK_RESERVED(a) (zk_all_zero((a)->reserved, sizeof((a)->reserved)))

typedef struct zk_bo {
	uint32_t refs;
	uint64_t size, pa;
	int memfd;
	uint64_t mmap_offset;
	zk_file_t *owner; /* the file that created it, charged for it (limits); NULL once it closed */
	uint64_t ino, dev; /* the memfd's identity: PRIME_FD_TO_HANDLE finds the object by it */
	struct zk_bo *prev, *next; /* every live object of the device (zk_kmd_t.bos) */
} zk_bo_t;

typedef struct zk_mapping {
	uint64_t addr, range, offset;
	zk_bo_t *bo;
	struct zk_mapping *next;
} zk_mapping_t;

typedef struct zk_vm {
	uint32_t refs;
	uint64_t root;
	uint64_t *tables; /* page-table pages, root first */
	size_t ntables;
	zk_mapping_t *maps;
	zk_file_t *owner; /* charged for the VM and its page tables (limits) */
	uint64_t stamp;	  /* creation order (debug.c: replayed events) */
	int debug_mapped; /* the debug area is mapped at ZESIM_DEBUG_AREA_VA (debug.c) */
} zk_vm_t;

typedef struct zk_queue {
	uint32_t refs;
	zk_vm_t *vm;
	uint32_t ctx_id;
	int banned; /* a job of this queue failed */
	zk_file_t *owner; /* charged for the queue (limits) */
	uint64_t stamp;	  /* creation order (debug.c) */
} zk_queue_t;

typedef struct zk_job {
	zk_file_t *file;
	zk_queue_t *q;
	uint64_t batch;
	uint32_t nsyncs;
	uint64_t sync_addr[MAX_SYNCS], sync_value[MAX_SYNCS];
	uint64_t busy_ns; /* host time charged by the job timeout (§6), over all its submissions */
	int batch_done;	  /* preempted after its batch ended: only the fences remain */
	struct zk_job *next;
} zk_job_t;

/* A handle table: index + 1 is the handle. */
typedef struct handles {
	void **slot;
	uint32_t n;
} handles_t;

struct zk_file {
	zk_kmd_t *kmd;
	int pid;
	handles_t bos, vms, queues;
	uint64_t next_mmap;
	uint64_t job_timeout_ns; /* this client's job timeout; ~0: the KMD's (zk_set_file_job_timeout) */
	/* What the file created and is charged for (zk_set_limits): objects are
	 * counted until freed, also when only a VM binding or a job still holds
	 * them.  Nothing outlives its file (zk_close), so these end at 0. */
	uint32_t nbos, nvms, nqueues;
	uint64_t bytes; /* GEM objects + page tables */
	/* EU debug (debug.c) */
	uint64_t serial, stamp; /* unique per file; creation order */
	int debuggable;		/* has or had a debugger: its jobs run with the SIP */
	struct zk_dbg_module *modules; /* DEBUG_METADATA_CREATE, newest first */
	uint32_t next_module;
};

typedef struct extent {
	uint64_t start, size;
} extent_t;

struct zk_kmd {
	zs_hw_t *hw;
	uint8_t *phys;
	uint64_t phys_size;
	extent_t *free;
	size_t nfree;
	uint32_t ring_tail;
	zk_file_t **files;
	size_t nfiles;
	zk_job_t *head, *tail, *running;
	uint32_t next_ctx;
	uint64_t job_timeout_ns; /* 0: no watchdog */
	zk_fault_mode_t fault_mode;
	uint32_t irq_seen; /* interrupts delivered since the last zk_service (the handler's "top half") */
	uint64_t timeslice_cycles; /* 0: no time slicing */
	uint64_t slice_start;	   /* GT cycle when the running job last got the engine */
	uint64_t charged_at;	 /* clock when the running job was last charged */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	zk_stats_t st;
	zk_limits_t limits;
	uint32_t slices, subslices, eus, threads, core_mhz, ts_khz, slm_kb;
	zk_fds_t fds; /* fd objects ioctls return (fds.c) */
	zk_bo_t *bos;	  /* every live GEM object (PRIME import, owners that close) */
	int prime_fd;	  /* the fd PRIME_HANDLE_TO_FD gives, until the daemon takes it (-1: none) */
	struct zk_oa *oa; /* OA configs and the OA unit's stream (oa.c) */
	struct zk_dbg *dbg; /* EU debug connections and the debug area (debug.c) */
};

/* Every ioctl handler: the argument (its size checked against the table), the
 * buffers its user pointers name (in: read, out: written), docs/uapi.md. */
#define ZK_IOCTL_ARGS                                                                                     \
	zk_file_t *f __attribute__((unused)), void *arg, const zk_blob_t *in __attribute__((unused)),       \
		unsigned nin __attribute__((unused)), zk_out_blob_t *out __attribute__((unused)),            \
		unsigned nout __attribute__((unused))

/* Shared between the feature files. */
int zk_all_zero(const void *p, size_t n);
void zk_bo_unref(zk_kmd_t *k, zk_bo_t *bo);
void zk_cancel_queued(zk_kmd_t *k, const zk_queue_t *q, const zk_file_t *f);
int zk_check_syncs(const struct drm_zesim_sync *s, uint32_t n);
int zk_handle_add(handles_t *h, void *obj, uint32_t *out);
void *zk_handle_get(handles_t *h, uint32_t id);
void *zk_handle_take(handles_t *h, uint32_t id);
void zk_irq_handler(void *ctx, uint32_t pending);
void zk_job_free(zk_kmd_t *k, zk_job_t *j);
uint64_t zk_now_ns(zk_kmd_t *k);
int zk_phys_alloc(zk_kmd_t *k, uint64_t size, uint64_t align, uint64_t *pa);
void zk_phys_free(zk_kmd_t *k, uint64_t pa, uint64_t size);
void zk_queue_unref(zk_kmd_t *k, zk_queue_t *q);
uint64_t zk_rd64(zk_kmd_t *k, uint64_t pa);
uint64_t zk_read_counter(zk_kmd_t *k, uint32_t lo_reg);
void zk_reset_engine(zk_kmd_t *k);
uint8_t *zk_vm_ptr(zk_kmd_t *k, zk_vm_t *vm, uint64_t va, int write);
void zk_vm_unref(zk_kmd_t *k, zk_vm_t *vm);
void zk_wr64(zk_kmd_t *k, uint64_t pa, uint64_t v);

/* oa.c */
int zk_oa_init(zk_kmd_t *k);
void zk_oa_fini(zk_kmd_t *k);
int zk_oa_present(zk_kmd_t *k);
uint32_t zk_oa_units_size(zk_kmd_t *k);
void zk_oa_units_fill(zk_kmd_t *k, uint8_t *d);
void zk_oa_irq(zk_kmd_t *k);

/* debug.c */
int zk_debug_init(zk_kmd_t *k);
void zk_debug_fini(zk_kmd_t *k);
void zk_debug_file_opened(zk_file_t *f);
void zk_debug_file_closing(zk_file_t *f); /* after its fds hung up, before its objects go */
int zk_debug_vm_created(zk_file_t *f, uint32_t id, zk_vm_t *vm); /* maps the debug area */
void zk_debug_vm_destroyed(zk_file_t *f, uint32_t id);
void zk_debug_queue_created(zk_file_t *f, uint32_t id, zk_queue_t *q);
void zk_debug_queue_destroyed(zk_file_t *f, uint32_t id);
int zk_debug_va_reserved(uint64_t addr, uint64_t range); /* VM_BIND must not touch the debug area */
void zk_debug_submit(zk_kmd_t *k, const zk_job_t *j);    /* program the debug registers for j */
void zk_debug_irq(zk_kmd_t *k);				   /* IRQ_STATUS.DEBUG */
int zk_debug_hold(zk_kmd_t *k); /* threads in attention: no time slice, no job timeout; also ends halts */
/* vm.c: map [pa, pa+size) read-write at va (no GEM object; the VM's tables are freed with it). */
int zk_vm_map_pages(zk_kmd_t *k, zk_vm_t *vm, uint64_t va, uint64_t size, uint64_t pa);

/* The ioctl table: 0, or -1 (with a message) when a table entry has no handler
 * or a handler no entry. */
int zk_ioctl_table_check(void);

/* The ioctl handlers (ioctl.c's table). */
int zk_ioctl_device_query(ZK_IOCTL_ARGS);
int zk_ioctl_exec(ZK_IOCTL_ARGS);
int zk_ioctl_exec_queue_create(ZK_IOCTL_ARGS);
int zk_ioctl_exec_queue_destroy(ZK_IOCTL_ARGS);
int zk_ioctl_gem_close(ZK_IOCTL_ARGS);
int zk_ioctl_gem_create(ZK_IOCTL_ARGS);
int zk_ioctl_gem_mmap_offset(ZK_IOCTL_ARGS);
int zk_ioctl_prime_handle_to_fd(ZK_IOCTL_ARGS);
int zk_ioctl_prime_fd_to_handle(ZK_IOCTL_ARGS);
void zk_bos_file_closed(zk_kmd_t *k, zk_file_t *f);
int zk_ioctl_version(ZK_IOCTL_ARGS);
int zk_ioctl_vm_bind(ZK_IOCTL_ARGS);
int zk_ioctl_vm_create(ZK_IOCTL_ARGS);
int zk_ioctl_vm_destroy(ZK_IOCTL_ARGS);
int zk_ioctl_wait_user_fence(ZK_IOCTL_ARGS);
int zk_ioctl_observation(ZK_IOCTL_ARGS);
int zk_ioctl_eudebug_connect(ZK_IOCTL_ARGS);
int zk_ioctl_debug_metadata_create(ZK_IOCTL_ARGS);
int zk_ioctl_debug_metadata_destroy(ZK_IOCTL_ARGS);
int zk_ioctl_test_fd_open(ZK_IOCTL_ARGS);
int zk_ioctl_test_fd_produce(ZK_IOCTL_ARGS);

#endif
