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

namespace zesim {

// Wire format: every message is a 12-byte header {magic, type, length} in
// little-endian u32s followed by `length` payload bytes.
constexpr uint32_t kWireMagic = 0x4d49535a;  // "ZSIM"
constexpr uint32_t kWireVersion = 1;
constexpr uint32_t kMaxPayload = 1u << 20;

enum WireType : uint32_t {
    kHello = 1,       // -> {version u32, description text}
    kShutdown = 2,    // -> empty; the daemon exits after replying
    kWaitIdle = 3,    // -> {cycles u64} once the device is idle
    // The fake KMD (one connection = one DRM file; docs/uapi.md "wire"):
    kOpen = 8,        // {pid u32} -> empty
    kIoctl = 9,       // {cmd u32, arg_size u32, arg, nin u32, nout u32, in blobs (len u32 + bytes), out lens u32}
                      // -> {ret i32, arg_size u32, arg, nout u32, out blobs (len u32 + bytes)}
    kMmap = 10,       // {offset u64, length u64} -> {ret i32} with the object's memfd (SCM_RIGHTS)
    // Test-only side channel (--test-channel):
    kMmioRead = 16,   // {offset u32} -> {value u32}
    kMmioWrite = 17,  // {offset u32, value u32} -> empty
    kGetPhys = 18,    // -> {size u64} with the physical-memory memfd (SCM_RIGHTS)
    kLedger = 19,     // -> ledger JSON lines closed so far
    kStimulus = 20,   // {path text} -> result JSON (as zesim-gpu --stimulus)
    kKmdStats = 21,   // -> KMD object and memory counts as JSON
    kError = 0xffff,  // reply: error text
};

struct ServerOptions {
    std::string socket_path;
    bool test_channel = false;
    uint64_t quantum = 4096;  // cycles per run-loop step while busy
    uint64_t max_cycles = 2000000000ull;  // per stimulus run
    uint32_t job_timeout_ms = 600000;     // the KMD's job timeout (docs/kmd.md §6); 0 = none
    bool fault_continue = false;          // the KMD's fault mode (docs/kmd.md §8): fail (default) or continue
    uint64_t timeslice_cycles = 100000;   // ZK_DEFAULT_TIMESLICE_CYCLES (docs/kmd.md §6); 0 = no time slicing
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
