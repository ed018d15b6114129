// Device configuration: presets, config files and command-line overrides.
#ifndef ZESIM_SIM_CONFIG_H
#define ZESIM_SIM_CONFIG_H

#include <string>

#include "gt.h"

namespace zesim {

// Settings of the daemon's fake KMD (docs/config.md §3); not part of a preset.
struct KmdConfig {
    uint32_t job_timeout_ms = 600000;  // ZK_DEFAULT_JOB_TIMEOUT_MS; 0 = no watchdog
    bool fault_continue = false;       // fault_mode "continue" (ZK_FAULT_CONTINUE); default "fail"
    uint64_t timeslice_cycles = 100000;  // ZK_DEFAULT_TIMESLICE_CYCLES; 0 = no time slicing
    // While the device is idle and the OA block sends periodic reports, simulated time
    // follows host time at this ratio (docs/oa.md §4.5); 0 skips idle time (deterministic).
    double idle_time_ratio = 1.0;
    // The ledger's retention for test-channel readers (docs/oa.md §3.5).
    uint64_t ledger_keep = Ledger::kDefaultKeepWindows;           // windows
    uint64_t ledger_keep_kb = Ledger::kDefaultKeepBytes >> 10;    // KiB of JSON text
    // Per-client limits (docs/config.md, docs/daemon.md §5); as ServerOptions.
    uint32_t max_objects_per_file = 4096;
    int64_t max_memory_mb_per_file = -1;  // -1: half the device's memory; 0: no limit
    uint32_t max_vms_per_file = 256;
    uint32_t max_queues_per_file = 1024;
    uint64_t max_output_mb = 16;  // unread replies before a client is dropped; 0 = no limit
    uint32_t max_clients = 0;     // 0: half of the fds left after the reserve
    uint32_t fd_reserve = 256;
};

// Throws std::runtime_error with a clear message on an unknown preset.
GtConfig preset_config(const std::string &name);
// Apply a JSON config file (keys as in docs/config.md) on top of `cfg` and `kmd`.
void load_config_file(const std::string &path, GtConfig &cfg, KmdConfig &kmd);
// Parse "SxSSxEUxT", e.g. 2x4x8x8.
void parse_topology(const std::string &text, Topology &t);
std::string describe(const GtConfig &cfg);

}  // namespace zesim

#endif
