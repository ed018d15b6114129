/* SPDX-License-Identifier: MIT */
/*
 * zesim wire protocol: what travels on the daemon's unix sockets
 * (docs/daemon.md §2).  The one definition shared by the daemon
 * (sim/server.{h,cc}), the preload library (kmd_shim/preload/) and the
 * benches (bench/api_latency.c).  C11 and C++.
 *
 * Every message, both ways: a 12-byte header {magic u32, type u32, length
 * u32}, little-endian, then `length` payload bytes.  A reply has the
 * request's type, or ZESIM_WIRE_ERROR with a text payload.
 *
 * Two kinds of connection:
 *  - a client connection to the daemon's listening socket: HELLO, OPEN
 *    (it becomes a DRM file), IOCTL, MMAP and the test channel;
 *  - a secondary fd's socket: one end of a socketpair the daemon creates for
 *    each fd an ioctl returns (a test fd today; OA streams, EU-debug
 *    connections and VM fds later) and passes with that ioctl's reply
 *    (SCM_RIGHTS).  That end is the fd the program gets.  On it travel only
 *    the FD_* requests below and the daemon's unsolicited FD_READY; the
 *    socket closing (the last copy of the fd in any process) is the fd's
 *    close, and the daemon closing its end (the owning DRM file closed) is
 *    the hang-up the program sees as POLLHUP / end of file.
 */
#ifndef ZESIM_UAPI_ZESIM_WIRE_H
#define ZESIM_UAPI_ZESIM_WIRE_H

#ifdef __cplusplus
extern "C" {
#endif

#define ZESIM_WIRE_MAGIC 0x4d49535au /* "ZSIM" */
#define ZESIM_WIRE_VERSION 2u	     /* HELLO's answer; 2: secondary fds */
#define ZESIM_WIRE_HEADER 12u
#define ZESIM_WIRE_MAX_PAYLOAD (1u << 20)  /* of a request */
#define ZESIM_WIRE_MAX_IOCTL_ARG 4096u	   /* an ioctl's argument struct */
#define ZESIM_WIRE_MAX_BLOB (256u << 10)   /* one user buffer of an ioctl */
#define ZESIM_WIRE_MAX_BLOBS 4u		   /* in or out buffers of one ioctl */
#define ZESIM_WIRE_MAX_FD_IO (256u << 10)  /* bytes of one FD_READ / FD_PREAD / FD_PWRITE */

/* The daemon binds its end of a secondary fd's socketpair to the abstract
 * address "\0" ZESIM_WIRE_FD_NAME "<daemon pid>/<fd id>", so that the
 * preload library recognises such an fd when another process passes it
 * over a unix socket (getpeername). */
#define ZESIM_WIRE_FD_NAME "zesim-fd/"

enum zesim_wire_type {
	/* Client connection. */
	ZESIM_WIRE_HELLO = 1,	   /* -> {version u32, description text} */
	ZESIM_WIRE_SHUTDOWN = 2,   /* -> empty; the daemon exits (test channel) */
	ZESIM_WIRE_WAIT_IDLE = 3,  /* -> {cycles u64} once the device is idle */
	ZESIM_WIRE_OPEN = 8,	   /* {pid u32[, job timeout ms u32]} -> empty: the connection is a DRM file */
	ZESIM_WIRE_IOCTL = 9,	   /* {cmd u32, arg_size u32, arg, nin u32, nout u32, nin x {len u32, bytes}, nout x {len u32}}
				    * -> {ret i32, arg_size u32, arg, nout u32, nout x {len u32, bytes}}
				    * [+ a new secondary fd (SCM_RIGHTS) when the ioctl made one: docs/uapi.md §12] */
	ZESIM_WIRE_MMAP = 10,	   /* {offset u64, length u64} -> {ret i32} + the GEM object's memfd */
	/* Test-only side channel (the daemon's --test-channel). */
	ZESIM_WIRE_MMIO_READ = 16,  /* {offset u32} -> {value u32} */
	ZESIM_WIRE_MMIO_WRITE = 17, /* {offset u32, value u32} -> empty */
	ZESIM_WIRE_GET_PHYS = 18,   /* -> {size u64} + the physical-memory memfd */
	ZESIM_WIRE_LEDGER = 19,	    /* -> ledger JSON lines */
	ZESIM_WIRE_STIMULUS = 20,   /* {path text} -> result JSON */
	ZESIM_WIRE_KMD_STATS = 21,  /* -> KMD object counts as JSON */
	ZESIM_WIRE_DEBUG_SNAPSHOTS = 22, /* -> the model's debug stop / resume snapshots as JSON lines (drained) */
	/* Secondary fd socket (docs/daemon.md §2.1).  `ret` is a byte count or
	 * -errno, as the syscall's. */
	ZESIM_WIRE_FD_READ = 24,   /* {len u32} -> {ret i32, ret bytes}; never waits: -EAGAIN when empty */
	ZESIM_WIRE_FD_PREAD = 25,  /* {offset u64, len u32} -> {ret i32, ret bytes} */
	ZESIM_WIRE_FD_PWRITE = 26, /* {offset u64, bytes} -> {ret i32} */
	ZESIM_WIRE_FD_IOCTL = 27,  /* as IOCTL (request and reply, new fd included) */
	ZESIM_WIRE_FD_POLL = 28,   /* empty -> {revents u32}: POLLIN 0x1, POLLOUT 0x4, POLLERR 0x8, POLLHUP 0x10 */
	ZESIM_WIRE_FD_READY = 29,  /* daemon -> client, unsolicited, empty: the fd became readable */
	ZESIM_WIRE_ERROR = 0xffff, /* reply: error text */
};

#ifdef __cplusplus
}
#endif

#endif
