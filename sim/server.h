// The daemon's unix-socket server and run loop (docs/daemon.md).  The loop
// alternates serving client requests with advancing simulated time; time only
// advances while the device has work, so idle gaps between submissions are
// skipped and runs stay deterministic.
#ifndef ZESIM_SIM_SERVER_H
#define ZESIM_SIM_SERVER_H

#include <cstdint>
#include <string>

#include "device.h"
#include "gt_top.h"
#include "uapi/zesim_wire.h"

namespace zesim {

// Wire format (docs/daemon.md §2): the one definition is the C header
// uapi/zesim_wire.h, shared with the preload library and the benches.
constexpr uint32_t kWireMagic = ZESIM_WIRE_MAGIC;
constexpr uint32_t kWireVersion = ZESIM_WIRE_VERSION;
constexpr uint32_t kMaxPayload = ZESIM_WIRE_MAX_PAYLOAD;

enum WireType : uint32_t {
    kHello = ZESIM_WIRE_HELLO,
    kShutdown = ZESIM_WIRE_SHUTDOWN,
    kWaitIdle = ZESIM_WIRE_WAIT_IDLE,
    // The fake KMD (one connection = one DRM file; docs/uapi.md §12):
    kOpen = ZESIM_WIRE_OPEN,
    kIoctl = ZESIM_WIRE_IOCTL,
    kMmap = ZESIM_WIRE_MMAP,
    // Test-only side channel (--test-channel):
    kMmioRead = ZESIM_WIRE_MMIO_READ,
    kMmioWrite = ZESIM_WIRE_MMIO_WRITE,
    kGetPhys = ZESIM_WIRE_GET_PHYS,
    kLedger = ZESIM_WIRE_LEDGER,
    kStimulus = ZESIM_WIRE_STIMULUS,
    kKmdStats = ZESIM_WIRE_KMD_STATS,
    kDebugSnapshots = ZESIM_WIRE_DEBUG_SNAPSHOTS,
    // A secondary fd's socket (docs/daemon.md §2.1):
    kFdRead = ZESIM_WIRE_FD_READ,
    kFdPread = ZESIM_WIRE_FD_PREAD,
    kFdPwrite = ZESIM_WIRE_FD_PWRITE,
    kFdIoctl = ZESIM_WIRE_FD_IOCTL,
    kFdPoll = ZESIM_WIRE_FD_POLL,
    kFdReady = ZESIM_WIRE_FD_READY,
    kError = ZESIM_WIRE_ERROR,
};

struct ServerOptions {
    std::string socket_path;
    bool test_channel = false;
    uint64_t quantum = 4096;  // cycles per run-loop step while busy
    uint64_t max_cycles = 2000000000ull;  // per stimulus run
    uint32_t job_timeout_ms = 600000;     // the KMD's job timeout (docs/kmd.md §6); 0 = none
    bool fault_continue = false;          // the KMD's fault mode (docs/kmd.md §8): fail (default) or continue
    uint64_t timeslice_cycles = 100000;   // ZK_DEFAULT_TIMESLICE_CYCLES (docs/kmd.md §6); 0 = no time slicing
    double idle_time_ratio = 1.0;         // idle simulated time per host time with periodic OA reports (docs/oa.md §4.5)
    // Per client (docs/daemon.md §5): replies a client has not read beyond
    // this many bytes disconnect it (0 = no limit).
    uint64_t max_output_bytes = 16ull << 20;
    // File descriptors (docs/daemon.md §5): `fd_reserve` of RLIMIT_NOFILE stay
    // for the daemon itself; of the rest, at most `max_clients` connections
    // (0: half of the rest) and the other fds for GEM objects of all clients.
    uint32_t fd_reserve = 256;
    uint32_t max_clients = 0;
    // Per DRM file (zk_limits_t, docs/kmd.md §3); 0 = no limit.
    uint32_t max_objects_per_file = 4096;  // at most half the GEM fd budget
    int64_t max_memory_per_file = -1;      // bytes; -1 = half the device's memory
    uint32_t max_vms_per_file = 256;
    uint32_t max_queues_per_file = 1024;
};

// Runs until a kShutdown request or SIGTERM/SIGINT.  Throws on set-up errors
// (socket path, directory permissions); client errors never end it.
void serve(Device &dev, GtTop &top, const ServerOptions &opt);

}  // namespace zesim

#endif
