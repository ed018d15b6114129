/* SPDX-License-Identifier: MIT */
/*
 * zesim uAPI: the ioctl interface of the fake KMD, shaped on the Linux Xe
 * uAPI (device query, GEM, VM bind, exec queues, exec with syncs, user-fence
 * wait) with our own prefix.  docs/uapi.md documents every ioctl, its
 * validation and its errno values.  The L0 driver includes only this header
 * (and the Level Zero headers).
 *
 * Conventions, as in Xe: every struct starts with `extensions` (must be 0:
 * no extensions are defined yet), `pad` and `reserved` fields must be zero
 * (else -EINVAL), sizes and offsets are in bytes, pointers are u64.
 */
#ifndef ZESIM_UAPI_ZESIM_DRM_H
#define ZESIM_UAPI_ZESIM_DRM_H

#include <linux/ioctl.h>
#include <linux/posix_types.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZESIM_DRM_IOCTL_BASE 'd'
#define ZESIM_DRM_COMMAND_BASE 0x40
#define ZESIM_IOWR(nr, type) _IOWR(ZESIM_DRM_IOCTL_BASE, ZESIM_DRM_COMMAND_BASE + (nr), type)
#define ZESIM_IOW(nr, type) _IOW(ZESIM_DRM_IOCTL_BASE, ZESIM_DRM_COMMAND_BASE + (nr), type)

/* The fake device node and its identity (sysfs and DRM_IOCTL_VERSION). */
#define ZESIM_RENDER_NODE "/dev/dri/renderD128"
#define ZESIM_DRM_MAJOR 226
#define ZESIM_DRM_MINOR 128
#define ZESIM_DRIVER_NAME "zesim"
#define ZESIM_PCI_VENDOR 0x8086
#define ZESIM_PCI_DEVICE 0x5a45

enum {
	ZESIM_DRM_DEVICE_QUERY = 0x00,
	ZESIM_DRM_GEM_CREATE = 0x01,
	ZESIM_DRM_GEM_MMAP_OFFSET = 0x02,
	ZESIM_DRM_VM_CREATE = 0x03,
	ZESIM_DRM_VM_DESTROY = 0x04,
	ZESIM_DRM_VM_BIND = 0x05,
	ZESIM_DRM_EXEC_QUEUE_CREATE = 0x06,
	ZESIM_DRM_EXEC_QUEUE_DESTROY = 0x07,
	ZESIM_DRM_EXEC = 0x09,
	ZESIM_DRM_WAIT_USER_FENCE = 0x0a,
	ZESIM_DRM_OBSERVATION = 0x0b,
	ZESIM_DRM_EUDEBUG_CONNECT = 0x0c,
	ZESIM_DRM_DEBUG_METADATA_CREATE = 0x0d,
	ZESIM_DRM_DEBUG_METADATA_DESTROY = 0x0e,
};

/* ---- device query (two calls: size 0 returns the size, then the data) ---- */

enum {
	ZESIM_QUERY_ENGINES = 0,
	ZESIM_QUERY_CONFIG = 2,
	ZESIM_QUERY_GT_LIST = 3,
	ZESIM_QUERY_GT_TOPOLOGY = 5,
	ZESIM_QUERY_ENGINE_CYCLES = 6,
	ZESIM_QUERY_OA_UNITS = 8,
};

struct drm_zesim_device_query {
	__u64 extensions;
	__u32 query;
	__u32 size;
	__u64 data;
	__u64 reserved[2];
};

/* ZESIM_QUERY_CONFIG: num_params u32, pad, then info[num_params] u64. */
enum {
	ZESIM_CONFIG_REV_AND_DEVICE_ID = 0, /* revision << 16 | PCI device id */
	ZESIM_CONFIG_FLAGS = 1,
	ZESIM_CONFIG_MIN_ALIGNMENT = 2,	/* of GEM sizes and VM addresses */
	ZESIM_CONFIG_VA_BITS = 3,	/* usable GPU VA bits: addresses below 2^47 */
	ZESIM_CONFIG_MAX_EXEC_QUEUE_PRIORITY = 4,
	/* zesim additions */
	ZESIM_CONFIG_THREADS_PER_EU = 5,
	ZESIM_CONFIG_GRF_PER_THREAD = 6,
	ZESIM_CONFIG_SLM_BYTES_PER_SUBSLICE = 7,
	ZESIM_CONFIG_MAX_SIMD = 8,
	ZESIM_CONFIG_VRAM_BYTES = 9, /* size of the memory GEM objects come from */
	ZESIM_CONFIG_SUBSLICES_PER_SLICE = 10, /* how the DSS mask groups into slices */
	ZESIM_CONFIG_NUM_PARAMS = 11,
};

struct drm_zesim_query_config {
	__u32 num_params;
	__u32 pad;
	__u64 info[];
};

/* ZESIM_QUERY_GT_LIST */
struct drm_zesim_gt {
	__u16 type; /* 0 = main GT */
	__u16 tile_id;
	__u16 gt_id;
	__u16 pad[3];
	__u32 reference_clock; /* timestamp frequency in Hz */
	__u64 core_clock;      /* core frequency in Hz (zesim addition) */
	__u64 reserved[7];
};

struct drm_zesim_query_gt_list {
	__u32 num_gt;
	__u32 pad;
	struct drm_zesim_gt gt_list[];
};

/* ZESIM_QUERY_GT_TOPOLOGY: a sequence of these, each followed by num_bytes
 * of mask, padded to 8 bytes. */
enum {
	ZESIM_TOPO_DSS_GEOMETRY = 1,
	ZESIM_TOPO_DSS_COMPUTE = 2,  /* one bit per sub-slice: slice s, sub-slice k at bit s*per_slice+k */
	ZESIM_TOPO_EU_PER_DSS = 4,   /* one bit per EU of a sub-slice */
};

struct drm_zesim_query_topology_mask {
	__u16 gt_id;
	__u16 type;
	__u32 num_bytes;
	__u8 mask[];
};

/* ZESIM_QUERY_ENGINES */
enum { ZESIM_ENGINE_CLASS_COMPUTE = 4 };

struct drm_zesim_engine_class_instance {
	__u16 engine_class;
	__u16 engine_instance;
	__u16 gt_id;
	__u16 pad;
};

struct drm_zesim_query_engines {
	__u32 num_engines;
	__u32 pad;
	struct drm_zesim_engine_class_instance engines[];
};

/* ZESIM_QUERY_ENGINE_CYCLES: the caller fills `eci`; the KMD returns the
 * GPU timestamp and CLOCK_MONOTONIC_RAW sampled together. */
struct drm_zesim_query_engine_cycles {
	struct drm_zesim_engine_class_instance eci;
	__s32 clockid; /* must be CLOCK_MONOTONIC_RAW (4) */
	__u32 width;   /* valid bits of engine_cycles */
	__u64 engine_cycles;
	__u64 engine_frequency;
	__u64 cpu_timestamp; /* ns */
	__u64 cpu_delta;
};

/* ---- GEM ------------------------------------------------------------------ */

struct drm_zesim_gem_create {
	__u64 extensions;
	__u64 size; /* multiple of ZESIM_CONFIG_MIN_ALIGNMENT */
	__u32 placement; /* must be 1 (the device memory region) */
	__u32 flags;	 /* none defined: 0 */
	__u32 vm_id;	 /* 0: shareable; else private to that VM (accepted, not enforced further) */
	__u32 handle;	 /* out */
	__u64 reserved[2];
};

struct drm_zesim_gem_mmap_offset {
	__u64 extensions;
	__u32 handle;
	__u32 flags; /* 0 */
	__u64 offset; /* out: pass to mmap() on the device fd */
	__u64 reserved[2];
};

struct drm_zesim_gem_close {
	__u32 handle;
	__u32 pad;
};

/* PRIME (DRM core ioctls, the layout of Linux's struct drm_prime_handle): a GEM
 * object as a file descriptor another process (or DRM file) can import.  The fd
 * is the object's memfd (docs/uapi.md §4): it can be passed with SCM_RIGHTS and
 * mmap'ed directly; PRIME_FD_TO_HANDLE in any DRM file of the device gives a
 * handle to the same object. */
#define ZESIM_PRIME_CLOEXEC 02000000u /* O_CLOEXEC, as DRM_CLOEXEC */
#define ZESIM_PRIME_RDWR 02u	      /* O_RDWR, as DRM_RDWR */

struct drm_zesim_prime_handle {
	__u32 handle; /* HANDLE_TO_FD: in; FD_TO_HANDLE: out */
	__u32 flags;  /* HANDLE_TO_FD: ZESIM_PRIME_CLOEXEC | ZESIM_PRIME_RDWR; FD_TO_HANDLE: 0 */
	__s32 fd;     /* HANDLE_TO_FD: out; FD_TO_HANDLE: in */
};

/* ---- VM --------------------------------------------------------------------- */

struct drm_zesim_vm_create {
	__u64 extensions;
	__u32 flags; /* 0 */
	__u32 vm_id; /* out */
	__u64 reserved[2];
};

struct drm_zesim_vm_destroy {
	__u32 vm_id;
	__u32 pad;
	__u64 reserved[2];
};

enum { ZESIM_VM_BIND_OP_MAP = 0, ZESIM_VM_BIND_OP_UNMAP = 1 };
#define ZESIM_VM_BIND_FLAG_READONLY (1u << 0)
#define ZESIM_VM_BIND_FLAG_64K (1u << 1) /* map with 64 KiB pages (addr, range, offset 64 KiB aligned) */

struct drm_zesim_vm_bind_op {
	__u64 extensions;
	__u32 obj; /* GEM handle (MAP); 0 for UNMAP */
	__u32 pad;
	__u64 obj_offset;
	__u64 range;
	__u64 addr;
	__u32 op;
	__u32 flags;
	__u64 reserved[3];
};

/* User fence: the KMD writes `timeline_value` (u64) to GPU address `addr`
 * once the operation has completed. */
enum { ZESIM_SYNC_TYPE_USER_FENCE = 2 };
#define ZESIM_SYNC_FLAG_SIGNAL (1u << 0)

struct drm_zesim_sync {
	__u64 extensions;
	__u32 type;
	__u32 flags; /* must include SIGNAL */
	__u64 addr;  /* 8-byte aligned GPU VA in the queue's VM */
	__u64 timeline_value;
	__u64 reserved[2];
};

struct drm_zesim_vm_bind {
	__u64 extensions;
	__u32 vm_id;
	__u32 num_binds; /* >= 1; more than 1: binds points to an array */
	union {
		struct drm_zesim_vm_bind_op bind; /* num_binds == 1 */
		__u64 vector_of_binds;		  /* num_binds > 1 */
	};
	__u32 num_syncs;
	__u32 pad;
	__u64 syncs; /* array of drm_zesim_sync, signalled when the binds are done */
	__u64 reserved[2];
};

/* ---- exec queues and exec ------------------------------------------------------- */

struct drm_zesim_exec_queue_create {
	__u64 extensions;
	__u16 width;	      /* 1 */
	__u16 num_placements; /* 1 */
	__u32 vm_id;
	__u32 flags; /* 0 */
	__u32 exec_queue_id; /* out */
	__u64 instances;     /* pointer to one drm_zesim_engine_class_instance */
	__u64 reserved[2];
};

struct drm_zesim_exec_queue_destroy {
	__u32 exec_queue_id;
	__u32 pad;
	__u64 reserved[2];
};

struct drm_zesim_exec {
	__u64 extensions;
	__u32 exec_queue_id;
	__u32 num_syncs;
	__u64 syncs;   /* array of drm_zesim_sync */
	__u64 address; /* GPU VA of the batch buffer (commands of docs/commands.md, ending with BATCH_END) */
	__u16 num_batch_buffer; /* 1 */
	__u16 pad[3];
	__u64 reserved[2];
};

enum {
	ZESIM_UFENCE_OP_EQ = 0,
	ZESIM_UFENCE_OP_NEQ = 1,
	ZESIM_UFENCE_OP_GT = 2,
	ZESIM_UFENCE_OP_GTE = 3,
	ZESIM_UFENCE_OP_LT = 4,
	ZESIM_UFENCE_OP_LTE = 5,
};

struct drm_zesim_wait_user_fence {
	__u64 extensions;
	__u64 addr; /* GPU VA in the VM of exec_queue_id, 8-byte aligned */
	__u16 op;
	__u16 flags; /* 0 */
	__u32 pad;
	__u64 value;
	__u64 mask;
	__s64 timeout; /* ns; < 0 waits forever; returns -ETIME when it expires */
	__u32 exec_queue_id;
	__u32 pad2;
	__u64 reserved[2];
};

/* ---- observation: OA streams (docs/uapi.md "Observation") -------------------
 * Shaped on Xe's DRM_IOCTL_XE_OBSERVATION.  One OA unit (id 0, the GT's OA block,
 * docs/oa.md section 4); one stream at a time per unit (-EBUSY).  The report format
 * is include/zs/oa_report.h (256 bytes, ZS_OA_FORMAT_A32u40_A4u32_B8_C8). */

/* ZESIM_QUERY_OA_UNITS: num_oa_units, pad, then the units, each followed by its
 * num_engines engine instances (walk: sizeof(unit) + num_engines * sizeof(eci)). */
#define ZESIM_OA_CAPS_BASE (1u << 0)
#define ZESIM_OA_CAPS_OA_BUFFER_SIZE (1u << 2)
#define ZESIM_OA_CAPS_WAIT_NUM_REPORTS (1u << 3)

enum { ZESIM_OA_UNIT_TYPE_OAG = 0 };

struct drm_zesim_oa_unit {
	__u64 extensions;
	__u32 oa_unit_id;
	__u32 oa_unit_type;
	__u64 capabilities;
	__u64 oa_timestamp_freq; /* Hz */
	__u16 gt_id;
	__u16 reserved1[3];
	__u64 reserved[3];
	__u64 num_engines;
	struct drm_zesim_engine_class_instance eci[];
};

struct drm_zesim_query_oa_units {
	__u64 extensions;
	__u32 num_oa_units;
	__u32 pad;
	__u64 oa_units[];
};

enum { ZESIM_OBSERVATION_TYPE_OA = 0 };
enum {
	ZESIM_OBSERVATION_OP_STREAM_OPEN = 0,	/* param: first drm_zesim_ext_set_property; returns the stream fd */
	ZESIM_OBSERVATION_OP_ADD_CONFIG = 1,	/* param: drm_zesim_oa_config; returns the config id (>= 1) */
	ZESIM_OBSERVATION_OP_REMOVE_CONFIG = 2, /* param: pointer to a u64 config id */
};

struct drm_zesim_observation_param {
	__u64 extensions;
	__u64 observation_type;
	__u64 observation_op;
	__u64 param;
};

/* A chain of properties: each names the next (0 ends it); at most
 * ZESIM_MAX_USER_EXTENSIONS links (-E2BIG). */
#define ZESIM_MAX_USER_EXTENSIONS 16
#define ZESIM_OA_EXTENSION_SET_PROPERTY 0

struct drm_zesim_user_extension {
	__u64 next_extension;
	__u32 name; /* ZESIM_OA_EXTENSION_SET_PROPERTY */
	__u32 pad;
};

struct drm_zesim_ext_set_property {
	struct drm_zesim_user_extension base;
	__u32 property; /* enum zesim_oa_property_id */
	__u32 pad;
	__u64 value;
	__u64 reserved[2];
};

enum zesim_oa_property_id {
	ZESIM_OA_PROPERTY_OA_UNIT_ID = 1,	  /* default 0 */
	ZESIM_OA_PROPERTY_SAMPLE_OA = 2,	  /* 1: reports go to the OA buffer, read() returns them */
	ZESIM_OA_PROPERTY_OA_METRIC_SET = 3,	  /* config id from ADD_CONFIG (required) */
	ZESIM_OA_PROPERTY_OA_FORMAT = 4,	  /* ZS_OA_FORMAT_A32u40_A4u32_B8_C8 (required with SAMPLE_OA) */
	ZESIM_OA_PROPERTY_OA_PERIOD_EXPONENT = 5, /* 0-31: periodic, 2^(exp+1) timestamp ticks; needs SAMPLE_OA */
	ZESIM_OA_PROPERTY_OA_DISABLED = 6,	  /* 1: open disabled (ENABLE ioctl starts it) */
	ZESIM_OA_PROPERTY_EXEC_QUEUE_ID = 7,	  /* query mode: REPORT_PERF_COUNT in that queue's batches */
	ZESIM_OA_PROPERTY_OA_ENGINE_INSTANCE = 8, /* 0 */
	ZESIM_OA_PROPERTY_NO_PREEMPT = 9,	  /* not supported: -EINVAL */
	ZESIM_OA_PROPERTY_NUM_SYNCS = 10,	  /* not supported: must be 0 */
	ZESIM_OA_PROPERTY_SYNCS = 11,		  /* not supported: -EINVAL */
	ZESIM_OA_PROPERTY_OA_BUFFER_SIZE = 12,	  /* power of two, 128 KiB - 128 MiB; default 16 MiB */
	ZESIM_OA_PROPERTY_WAIT_NUM_REPORTS = 13,  /* poll/read threshold in reports (default 1) */
	ZESIM_OA_PROPERTY_MAX = 14,
};

/* ADD_CONFIG: register programming of a metric set: n_regs {u32 address, u32 value}
 * pairs; only the OA block's source-select registers (OA_BC_SEL0-15) are accepted. */
struct drm_zesim_oa_config {
	__u64 extensions;
	char uuid[36]; /* "%08x-%04x-%04x-%04x-%012x"; the same uuid twice: -EADDRINUSE */
	__u32 n_regs;  /* 1 .. ZESIM_OA_CONFIG_MAX_REGS */
	__u64 regs_ptr;
};
#define ZESIM_OA_CONFIG_MAX_REGS 64u

/* The stream fd's ioctls.  CONFIG takes one property (OA_METRIC_SET; next_extension
 * 0) and returns the previous config id. */
struct drm_zesim_oa_stream_status {
	__u64 extensions;
	__u64 oa_status; /* ZESIM_OASTATUS_*, cleared by the read */
	__u64 reserved[3];
};
#define ZESIM_OASTATUS_REPORT_LOST (1u << 0)
#define ZESIM_OASTATUS_BUFFER_OVERFLOW (1u << 1)

struct drm_zesim_oa_stream_info {
	__u64 extensions;
	__u64 oa_buf_size;
	__u64 reserved[3];
};

#define ZESIM_OBSERVATION_IOCTL_BASE 'i'
#define ZESIM_OBSERVATION_IOCTL_ENABLE _IO(ZESIM_OBSERVATION_IOCTL_BASE, 0x0)
#define ZESIM_OBSERVATION_IOCTL_DISABLE _IO(ZESIM_OBSERVATION_IOCTL_BASE, 0x1)
#define ZESIM_OBSERVATION_IOCTL_CONFIG _IOW(ZESIM_OBSERVATION_IOCTL_BASE, 0x2, struct drm_zesim_ext_set_property)
#define ZESIM_OBSERVATION_IOCTL_STATUS _IOR(ZESIM_OBSERVATION_IOCTL_BASE, 0x3, struct drm_zesim_oa_stream_status)
#define ZESIM_OBSERVATION_IOCTL_INFO _IOR(ZESIM_OBSERVATION_IOCTL_BASE, 0x4, struct drm_zesim_oa_stream_info)

/* DRM core: DRM_IOCTL_VERSION (same layout and number as drm.h). */
struct drm_zesim_version {
	int version_major;
	int version_minor;
	int version_patchlevel;
	__kernel_size_t name_len;
	char *name;
	__kernel_size_t date_len;
	char *date;
	__kernel_size_t desc_len;
	char *desc;
};
#define DRM_IOCTL_ZESIM_VERSION _IOWR(ZESIM_DRM_IOCTL_BASE, 0x00, struct drm_zesim_version)

#define DRM_IOCTL_ZESIM_DEVICE_QUERY ZESIM_IOWR(ZESIM_DRM_DEVICE_QUERY, struct drm_zesim_device_query)
#define DRM_IOCTL_ZESIM_GEM_CREATE ZESIM_IOWR(ZESIM_DRM_GEM_CREATE, struct drm_zesim_gem_create)
#define DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET ZESIM_IOWR(ZESIM_DRM_GEM_MMAP_OFFSET, struct drm_zesim_gem_mmap_offset)
/* GEM_CLOSE is a DRM core ioctl, as on Linux: DRM_IOCTL_GEM_CLOSE. */
#define DRM_IOCTL_ZESIM_GEM_CLOSE _IOW(ZESIM_DRM_IOCTL_BASE, 0x09, struct drm_zesim_gem_close)
/* PRIME_HANDLE_TO_FD / PRIME_FD_TO_HANDLE are DRM core ioctls, numbered as on Linux. */
#define DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD _IOWR(ZESIM_DRM_IOCTL_BASE, 0x2d, struct drm_zesim_prime_handle)
#define DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE _IOWR(ZESIM_DRM_IOCTL_BASE, 0x2e, struct drm_zesim_prime_handle)
#define DRM_IOCTL_ZESIM_VM_CREATE ZESIM_IOWR(ZESIM_DRM_VM_CREATE, struct drm_zesim_vm_create)
#define DRM_IOCTL_ZESIM_VM_DESTROY ZESIM_IOW(ZESIM_DRM_VM_DESTROY, struct drm_zesim_vm_destroy)
#define DRM_IOCTL_ZESIM_VM_BIND ZESIM_IOW(ZESIM_DRM_VM_BIND, struct drm_zesim_vm_bind)
#define DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE ZESIM_IOWR(ZESIM_DRM_EXEC_QUEUE_CREATE, struct drm_zesim_exec_queue_create)
#define DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY ZESIM_IOW(ZESIM_DRM_EXEC_QUEUE_DESTROY, struct drm_zesim_exec_queue_destroy)
#define DRM_IOCTL_ZESIM_EXEC ZESIM_IOW(ZESIM_DRM_EXEC, struct drm_zesim_exec)
#define DRM_IOCTL_ZESIM_WAIT_USER_FENCE ZESIM_IOWR(ZESIM_DRM_WAIT_USER_FENCE, struct drm_zesim_wait_user_fence)
#define DRM_IOCTL_ZESIM_OBSERVATION ZESIM_IOW(ZESIM_DRM_OBSERVATION, struct drm_zesim_observation_param)

/* ---- EU debug (docs/debug.md section 3) -------------------------------------
 * Shaped on Xe's eudebug uAPI (the eudebug-dev variant: connect by pid, client
 * handles in the events), reduced to what this device has.  A debugger opens its own
 * DRM file and connects to a target process by pid; the returned debug fd carries
 * events (READ_EVENT, poll) and the debug ioctls below.  Resource handles in events
 * (client_handle, vm_handle, exec_queue_handle) are the target's own ids (the
 * client_handle is a per-connection id of one of the target's DRM files). */

#define ZESIM_EUDEBUG_VERSION 1u

/* ZESIM_DRM_EUDEBUG_CONNECT: returns the debug fd.
 * -ESRCH: pid is not a live process with an open zesim DRM file; -EINVAL: pid is the
 * caller itself, flags/extensions invalid; -EACCES: the caller may not ptrace the target
 * (different uid and no CAP_SYS_PTRACE, checked at the call); -EBUSY: the target has a
 * debugger already. */
#define ZESIM_EUDEBUG_CONNECT_ACK_MODULES (1u << 0) /* MODULE CREATE events are NEED_ACK */
struct drm_zesim_eudebug_connect {
	__u64 extensions; /* 0 */
	__u64 pid;
	__u32 flags;
	__u32 version; /* out: ZESIM_EUDEBUG_VERSION */
};

/* ZESIM_DRM_DEBUG_METADATA_CREATE: the target's driver announces a module loaded
 * in a VM: its ELF (copied by the KMD) and the GPU VA range of its code.  A debugger
 * connected now or later gets a MODULE CREATE event.  The KMD writes ack_fence_value
 * (a u64) at the GPU VA ack_fence_addr of vm_id when the module may run: at once, or,
 * when a connected debugger asked for ACK_MODULES, when it acknowledged the event (or
 * went away).  The driver waits with WAIT_USER_FENCE before the module's first launch. */
enum { ZESIM_DEBUG_METADATA_ELF_BINARY = 0 };
struct drm_zesim_debug_metadata_create {
	__u64 extensions; /* 0 */
	__u64 type;	  /* ZESIM_DEBUG_METADATA_ELF_BINARY */
	__u64 user_addr;  /* the ELF */
	__u64 len;	  /* 1 .. ZESIM_DEBUG_METADATA_MAX */
	__u32 vm_id;
	__u32 metadata_id; /* out, >= 1 */
	__u64 load_addr;   /* GPU VA of the module's code in vm_id */
	__u64 load_size;
	__u64 ack_fence_addr; /* 8-byte aligned GPU VA in vm_id */
	__u64 ack_fence_value;
	__u64 reserved[2];
};
#define ZESIM_DEBUG_METADATA_MAX (64u << 20)

/* ZESIM_DRM_DEBUG_METADATA_DESTROY: the module is unloaded (MODULE DESTROY event). */
struct drm_zesim_debug_metadata_destroy {
	__u64 extensions;
	__u32 metadata_id;
	__u32 pad;
	__u64 reserved[2];
};

/* Events (READ_EVENT).  Every event starts with this. */
enum {
	ZESIM_EUDEBUG_EVENT_NONE = 0,
	ZESIM_EUDEBUG_EVENT_READ = 1,
	ZESIM_EUDEBUG_EVENT_OPEN = 2,	     /* a DRM file of the target: CREATE / DESTROY */
	ZESIM_EUDEBUG_EVENT_VM = 3,	     /* CREATE / DESTROY */
	ZESIM_EUDEBUG_EVENT_EXEC_QUEUE = 4,  /* CREATE / DESTROY */
	ZESIM_EUDEBUG_EVENT_EU_ATTENTION = 5, /* STATE_CHANGE: the attention bitmap changed (new stops) */
	ZESIM_EUDEBUG_EVENT_MODULE = 6,	     /* CREATE (maybe NEED_ACK) / DESTROY */
	ZESIM_EUDEBUG_EVENT_PAGEFAULT = 7,   /* a thread stopped on a page fault */
};
#define ZESIM_EUDEBUG_EVENT_CREATE (1u << 0)
#define ZESIM_EUDEBUG_EVENT_DESTROY (1u << 1)
#define ZESIM_EUDEBUG_EVENT_STATE_CHANGE (1u << 2)
#define ZESIM_EUDEBUG_EVENT_NEED_ACK (1u << 3)

struct drm_zesim_eudebug_event {
	__u32 len; /* of the whole event */
	__u16 type;
	__u16 flags;
	__u64 seqno; /* per connection, from 1, in delivery order */
	__u64 reserved;
};

struct drm_zesim_eudebug_event_open {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 pid;
};

struct drm_zesim_eudebug_event_vm {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 vm_handle;
};

struct drm_zesim_eudebug_event_exec_queue {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 vm_handle;
	__u64 exec_queue_handle;
	__u32 engine_class;
	__u32 width;
};

/* The attention bitmap (also EU_CONTROL's): byte e is global EU e
 * ((slice * subslices + subslice) * eus + eu), bit t its thread t; bitmask_size is
 * ZESIM_EUDEBUG_INFO.bitmask_size (all EUs). */
struct drm_zesim_eudebug_event_eu_attention {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 exec_queue_handle;
	__u32 flags;
	__u32 bitmask_size;
	__u8 bitmask[];
};

struct drm_zesim_eudebug_event_module {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 vm_handle;
	__u64 metadata_handle; /* READ_METADATA */
	__u64 load_addr;
	__u64 load_size;
	__u64 elf_size;
};

struct drm_zesim_eudebug_event_pagefault {
	struct drm_zesim_eudebug_event base;
	__u64 client_handle;
	__u64 exec_queue_handle;
	__u64 pagefault_address;
	__u32 flags;
	__u32 bitmask_size;
	__u8 bitmask[]; /* the threads that faulted */
};

/* ioctls of the debug fd.  read() is -EINVAL; poll: POLLIN while events are queued,
 * POLLHUP once the target is gone and the queue is drained. */
#define ZESIM_EUDEBUG_IOCTL_BASE 'j'

/* READ_EVENT: the oldest event into event_ptr.  -EMSGSIZE (event_size set to the
 * needed size) if it does not fit; -EAGAIN if none came within timeout_ns (0: do not
 * wait; the wait is capped at 5 s as Xe's); -ENOTCONN once the target is gone and
 * every event was read. */
struct drm_zesim_eudebug_read_event {
	__u64 timeout_ns;
	__u64 event_ptr;
	__u32 event_size; /* in: capacity; out: the event's len */
	__u32 flags;	  /* 0 */
};

/* ACK_EVENT: acknowledge a NEED_ACK event by seqno (-EINVAL: no such pending ack). */
struct drm_zesim_eudebug_ack_event {
	__u32 type;
	__u32 flags; /* 0 */
	__u64 seqno;
};

/* VM_OPEN: returns a fd whose pread/pwrite at offset = GPU VA read and write the
 * target VM's memory (through its page tables: unmapped pages -EFAULT, a short count
 * at the first unmapped page; writes to read-only pages are allowed, as a debugger's
 * breakpoints need); fsync is accepted. */
struct drm_zesim_eudebug_vm_open {
	__u64 extensions;
	__u64 client_handle;
	__u64 vm_handle;
	__u64 flags; /* 0 */
	__u64 timeout_ns;
};

/* EU_CONTROL */
enum {
	ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT_ALL = 0, /* bitmask_size 0 */
	ZESIM_EUDEBUG_EU_CONTROL_CMD_STOPPED = 1,	/* out: the attention bitmap */
	ZESIM_EUDEBUG_EU_CONTROL_CMD_RESUME = 2,	/* the bitmap's threads; each must be stopped (-EINVAL) */
	ZESIM_EUDEBUG_EU_CONTROL_CMD_INTERRUPT = 3,	/* halt requests for the bitmap's threads */
};
struct drm_zesim_eudebug_eu_control {
	__u64 client_handle;
	__u32 cmd;
	__u32 flags; /* 0 */
	__u64 seqno; /* out: a new seqno of the connection (orders the command among the events) */
	__u64 exec_queue_handle;
	__u32 reserved;
	__u32 bitmask_size; /* in/out, a multiple of 4 */
	__u64 bitmask_ptr;
};

/* READ_METADATA: copy a module's ELF (from its MODULE event). */
struct drm_zesim_eudebug_read_metadata {
	__u64 client_handle;
	__u64 metadata_handle;
	__u32 flags; /* 0 */
	__u32 reserved;
	__u64 ptr;
	__u64 size; /* in: capacity; out: the ELF's size (-ENOSPC if it did not fit) */
};

/* INFO: where the SSA and the SIP are (the same GPU VA in every VM of the target),
 * and the geometry of the attention bitmap. */
struct drm_zesim_eudebug_info {
	__u64 ssa_addr; /* struct zesim_ssa_magic_header, uapi/zesim_ssa.h */
	__u64 ssa_size;
	__u64 sip_addr;
	__u32 bitmask_size;
	__u32 slices, subslices_per_slice, eus_per_subslice, threads_per_eu;
	__u32 pad;
	__u64 reserved[4];
};

/* The debug area (SIP + SSA) is mapped read-write in every VM at this range; VM_BIND
 * there is -EINVAL. */
#define ZESIM_DEBUG_AREA_VA 0x7fffff000000ull
#define ZESIM_DEBUG_AREA_SIZE (16ull << 20)

#define ZESIM_EUDEBUG_IOCTL_READ_EVENT _IOWR(ZESIM_EUDEBUG_IOCTL_BASE, 0x0, struct drm_zesim_eudebug_read_event)
#define ZESIM_EUDEBUG_IOCTL_ACK_EVENT _IOW(ZESIM_EUDEBUG_IOCTL_BASE, 0x1, struct drm_zesim_eudebug_ack_event)
#define ZESIM_EUDEBUG_IOCTL_VM_OPEN _IOW(ZESIM_EUDEBUG_IOCTL_BASE, 0x2, struct drm_zesim_eudebug_vm_open)
#define ZESIM_EUDEBUG_IOCTL_EU_CONTROL _IOWR(ZESIM_EUDEBUG_IOCTL_BASE, 0x3, struct drm_zesim_eudebug_eu_control)
#define ZESIM_EUDEBUG_IOCTL_READ_METADATA _IOWR(ZESIM_EUDEBUG_IOCTL_BASE, 0x4, struct drm_zesim_eudebug_read_metadata)
#define ZESIM_EUDEBUG_IOCTL_INFO _IOR(ZESIM_EUDEBUG_IOCTL_BASE, 0x5, struct drm_zesim_eudebug_info)

#define DRM_IOCTL_ZESIM_EUDEBUG_CONNECT ZESIM_IOWR(ZESIM_DRM_EUDEBUG_CONNECT, struct drm_zesim_eudebug_connect)
#define DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE                                                                   \
	ZESIM_IOWR(ZESIM_DRM_DEBUG_METADATA_CREATE, struct drm_zesim_debug_metadata_create)
#define DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY                                                                  \
	ZESIM_IOW(ZESIM_DRM_DEBUG_METADATA_DESTROY, struct drm_zesim_debug_metadata_destroy)

/* ---- test-only: a secondary fd that produces records on demand ----------
 * (docs/uapi.md §13).  For testing how fds returned by ioctls travel (the
 * OA stream, EU-debug connection and VM fds reuse the same path).  Refused
 * with -EPERM unless the daemon runs with --test-channel. */
#define ZESIM_DRM_TEST_FD_OPEN 0x30
#define ZESIM_DRM_TEST_FD_PRODUCE 0x31

struct drm_zesim_test_fd_open {
	__u64 extensions;
	__u32 flags;	/* must be 0 */
	__u32 id;	/* out: the fd's id, for TEST_FD_PRODUCE from any DRM file */
	__u64 reserved[2];
};

/* DRM ioctl: queue `count` records on the test fd `id` (of any file); the
 * same struct is the test fd's own PRODUCE ioctl, where `id` is 0 or the
 * fd's id. */
struct drm_zesim_test_fd_produce {
	__u32 id;
	__u32 count; /* 1 .. ZESIM_TEST_FD_MAX_RECORDS - queued, else -EINVAL / -ENOSPC */
};

/* What read() returns: whole records only. */
struct drm_zesim_test_fd_record {
	__u64 seqno; /* 0, 1, 2 ... per fd */
	__u32 id;    /* the fd's id */
	__u32 magic; /* ZESIM_TEST_FD_MAGIC */
};
#define ZESIM_TEST_FD_MAGIC 0x4446545au /* "ZTFD" */
#define ZESIM_TEST_FD_MAX_RECORDS 4096u
#define ZESIM_TEST_FD_SCRATCH 4096u /* bytes of the fd's pread/pwrite area */

/* ioctls of the test fd itself. */
#define ZESIM_TEST_FD_IOCTL_BASE 'T'
#define ZESIM_TEST_FD_IOCTL_PRODUCE _IOW(ZESIM_TEST_FD_IOCTL_BASE, 0x00, struct drm_zesim_test_fd_produce)

#define DRM_IOCTL_ZESIM_TEST_FD_OPEN ZESIM_IOWR(ZESIM_DRM_TEST_FD_OPEN, struct drm_zesim_test_fd_open)
#define DRM_IOCTL_ZESIM_TEST_FD_PRODUCE ZESIM_IOW(ZESIM_DRM_TEST_FD_PRODUCE, struct drm_zesim_test_fd_produce)

#ifdef __cplusplus
}
#endif

#endif
