/* OS layer: everything that talks to the KMD through the DRM render node
 * (kmd_shim/include/uapi/zesim_drm.h).  The rest of the driver never issues
 * an ioctl itself. */
#ifndef ZS_OS_H
#define ZS_OS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/zesim_drm.h"

/* One open DRM file with the process's GPU address space.  The driver uses a
 * single VM per device: every allocation is mapped at its host address, so
 * host and device pointers are the same number in every context. */
typedef struct zs_os {
	int fd;
	uint32_t vm_id;
	uint32_t wait_queue; /* exec queue used only to name the VM in fence waits */
	/* Threads queued for the device fd.  A fence wait holds the fd (the
	 * preload library serialises requests per connection), so it waits in
	 * short slices and lets these threads go first. */
	atomic_int queued;
} zs_os_t;

/* What the KMD reports about the device. */
typedef struct zs_os_info {
	uint32_t device_id, revision;
	uint64_t min_alignment, va_bits;
	uint32_t threads_per_eu, grf_per_thread, max_simd;
	uint64_t slm_per_subslice, vram_bytes;
	uint32_t num_subslices;	  /* bits set in the DSS compute mask */
	uint32_t subslices_per_slice;
	uint32_t eus_per_subslice; /* bits set in the EU-per-DSS mask */
	uint64_t timestamp_hz, core_hz;
} zs_os_info_t;

/* A GEM object mapped into the process and bound in the VM at the same
 * address.  `ptr` is both the host pointer and the GPU virtual address. */
typedef struct zs_bo {
	uint32_t handle;
	uint64_t size;
	uint8_t *ptr;
} zs_bo_t;

static inline uint64_t zs_bo_va(const zs_bo_t *bo) { return (uint64_t)(uintptr_t)bo->ptr; }

/* All functions return 0 or a negative errno. */
int zs_os_open(zs_os_t *os);
void zs_os_close(zs_os_t *os);
int zs_os_query_info(zs_os_t *os, zs_os_info_t *info);
/* GPU timestamp (ticks) and CLOCK_MONOTONIC_RAW (ns), sampled together. */
int zs_os_engine_cycles(zs_os_t *os, uint64_t *gpu_ticks, uint64_t *cpu_ns);

/* size is rounded up to 4 KiB; align is a power of two (0: page). */
int zs_os_bo_create(zs_os_t *os, uint64_t size, uint64_t align, zs_bo_t *bo);
void zs_os_bo_destroy(zs_os_t *os, zs_bo_t *bo);

/* IPC (driver/README.md "IPC"): the object of `bo` as a PRIME fd (the caller
 * owns it, close-on-exec); and the object an fd of another process names, bound
 * in this VM at the address where it is now mapped into this process (same
 * address for host and device, as every allocation).  Import: -EINVAL when the
 * fd names no live GEM object of the device, -EBADF when it is no fd. */
int zs_os_bo_export(zs_os_t *os, const zs_bo_t *bo, int *fd);
int zs_os_bo_import(zs_os_t *os, int fd, zs_bo_t *bo);

/* A GEM object that is not bound anywhere (virtual memory's physical memory,
 * driver/README.md "Virtual memory"): created and mapped into the process at
 * an address of the kernel's choosing, its host view. */
int zs_os_gem_create(zs_os_t *os, uint64_t size, uint32_t *handle, uint8_t **host);
void zs_os_gem_destroy(zs_os_t *os, uint32_t handle, uint8_t *host, uint64_t size);
/* VM_BIND of [obj_offset, obj_offset + range) of a GEM object at `va`
 * (read-only: GPU writes fault), or the unbinding of [va, va + range). */
int zs_os_bind(zs_os_t *os, uint32_t handle, uint64_t obj_offset, uint64_t va, uint64_t range, int readonly);
int zs_os_unbind(zs_os_t *os, uint64_t va, uint64_t range);

int zs_os_queue_create(zs_os_t *os, uint32_t *id);
void zs_os_queue_destroy(zs_os_t *os, uint32_t id);

/* Submit a batch; the KMD writes `value` to the 8-byte `fence_va` when the
 * batch has completed. */
int zs_os_exec(zs_os_t *os, uint32_t queue, uint64_t batch_va, uint64_t fence_va, uint64_t value);

/* Wait until (*(u64 *)va & mask) compares true (op: ZESIM_UFENCE_OP_*) with
 * value, at most timeout_ns (UINT64_MAX: forever).  queue names the VM and
 * the job whose failure ends the wait with -EIO; 0 uses the wait queue.
 * Returns 0, -ETIME or another -errno. */
int zs_os_wait(zs_os_t *os, uint32_t queue, const volatile uint64_t *va, uint16_t op, uint64_t value, uint64_t mask,
	       uint64_t timeout_ns);

/* ---- observation (OA streams, docs/uapi.md "Observation") ---- */

/* The OA unit: 0 and its timestamp frequency and capabilities, or -errno (a KMD
 * without the query, or no unit: -ENODEV). */
int zs_os_oa_unit(zs_os_t *os, uint64_t *timestamp_hz, uint64_t *caps);
/* ADD_CONFIG of n {address, value} pairs; *id the config id. */
int zs_os_oa_add_config(zs_os_t *os, const char uuid[36], const uint32_t (*regs)[2], uint32_t n, uint64_t *id);
int zs_os_oa_remove_config(zs_os_t *os, uint64_t id);
/* STREAM_OPEN with n {property, value} pairs; *fd the stream fd. */
int zs_os_oa_stream_open(zs_os_t *os, const uint64_t (*props)[2], uint32_t n, int *fd);
/* A stream fd's ioctl (ZESIM_OBSERVATION_IOCTL_*). */
int zs_os_oa_stream_ioctl(int fd, unsigned long cmd, void *arg);
/* read() of whole reports: bytes read, or -errno (-EAGAIN: nothing now; -EIO: reports
 * were lost, STATUS tells). */
long zs_os_oa_read(int fd, void *buf, size_t n);
void zs_os_oa_stream_close(int fd);

/* ---- EU debug (docs/debug.md sections 3 and 4) ---- */

/* The target side: announce a module's ELF and code range in the VM (*id its
 * metadata id); the KMD writes `fence_value` at `fence_va` when it may run. */
int zs_os_debug_metadata_create(zs_os_t *os, const void *elf, uint64_t len, uint64_t load_addr, uint64_t load_size,
				uint64_t fence_va, uint64_t fence_value, uint32_t *id);
int zs_os_debug_metadata_destroy(zs_os_t *os, uint32_t id);

/* The debugger side: opens a DRM file of its own (*drm_fd) and connects it to
 * process `pid`; *debug_fd the connection. */
int zs_os_eudebug_connect(uint64_t pid, uint32_t flags, int *drm_fd, int *debug_fd);
/* An ioctl of the debug fd or of the VM fd (EINTR retried). */
int zs_os_eudebug_ioctl(int fd, unsigned long cmd, void *arg);
/* pread / pwrite of a VM fd at a GPU VA: 0, or -errno (a short count: -EFAULT). */
int zs_os_vm_read(int vm_fd, uint64_t va, void *buf, size_t n);
int zs_os_vm_write(int vm_fd, uint64_t va, const void *buf, size_t n);

#endif
