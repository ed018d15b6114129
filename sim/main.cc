// zesim-gpu: the simulated GPU daemon.  It serves clients on a unix socket
// (docs/daemon.md) or runs one standalone stimulus file (docs/stimulus.md).
#include <systemc>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "device.h"
#include "gt_top.h"
#include "server.h"
#include "stimulus.h"

namespace {

void usage(std::FILE *f)
{
    std::fprintf(f,
                 "usage: zesim-gpu [--preset xe-lp|tiny] [--config FILE] [--topology SxSSxEUxT]\n"
                 "                 [--ledger FILE] [--capture-threads] --stimulus FILE [--out FILE]\n"
                 "       zesim-gpu [--preset ...] [--config ...] [--topology ...] --socket PATH [--test-channel]\n"
                 "                 [--ledger FILE] [--ledger-keep N]\n"
                 "  --preset NAME       topology and clocks preset (default xe-lp = 1x6x16x7; tiny = 1x1x2x4)\n"
                 "  --config FILE       JSON config (docs/config.md), applied after --preset\n"
                 "  --topology T        slices x sub-slices x EUs x threads, e.g. 2x4x8x8\n"
                 "  --stimulus FILE     run a command-buffer stimulus with no driver (docs/stimulus.md)\n"
                 "  --socket PATH       serve clients on a unix socket (default $ZESIM_SOCKET); its\n"
                 "                      directory is created with mode 0700\n"
                 "  --test-channel      enable the test-only requests (MMIO, memory fd, ledger, stimulus)\n"
                 "  --out FILE          result JSON (default: standard output)\n"
                 "  --ledger FILE       write the ground-truth ledger to FILE as JSON lines, each window\n"
                 "                      as it closes (docs/oa.md)\n"
                 "  --ledger-keep N     ledger windows kept for the test channel's LEDGER reads\n"
                 "                      (default 4096; config key ledger_keep)\n"
                 "  --capture-threads   include every thread's final GRF in the result\n"
                 "  --waves DIR         dump the RTL blocks' waveforms as FST into DIR (created):\n"
                 "                      DIR/irq.fst, DIR/oa.fst and DIR/debug.fst; open with gtkwave -a waves/oa.gtkw DIR/oa.fst\n"
                 "  --waves-window A:B  only the OA block's clocks of GT cycles [A, B) (A: or :B open)\n"
                 "  --max-cycles N      stop a run after N GPU cycles (default 2e9)\n"
                 "Per-client limits of the daemon (docs/daemon.md section 5; override --config; 0 = none):\n"
                 "  --max-output MB               unread replies before a client is dropped (default 16)\n"
                 "  --max-objects-per-file N      GEM objects per DRM file (default 4096, at most half\n"
                 "                                of the daemon's GEM fd budget)\n"
                 "  --max-memory-per-file MB      GEM objects + page tables per DRM file (default: half\n"
                 "                                the device's memory)\n"
                 "  --max-vms-per-file N          (default 256)\n"
                 "  --max-queues-per-file N       exec queues (default 1024)\n"
                 "  --max-clients N               connections (default: half the fds after the reserve)\n"
                 "  --fd-reserve N                fds kept for the daemon itself (default 256, >= 32)\n");
}

}  // namespace

int sc_main(int argc, char **argv)
{
    using namespace zesim;
    std::string preset = "xe-lp", config, topology, stimulus, out, ledger, socket, waves, waves_window;
    bool capture = false, test_channel = false;
    long long ledger_keep = -1;
    if (const char *env = std::getenv("ZESIM_SOCKET"))
        socket = env;
    StimulusOptions opt;
    // Limits given on the command line, applied over --config's.
    std::vector<std::pair<std::string, uint64_t>> limits;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "zesim-gpu: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--preset")
            preset = value();
        else if (a == "--config")
            config = value();
        else if (a == "--topology")
            topology = value();
        else if (a == "--stimulus")
            stimulus = value();
        else if (a == "--out")
            out = value();
        else if (a == "--ledger")
            ledger = value();
        else if (a == "--waves")
            waves = value();
        else if (a == "--waves-window")
            waves_window = value();
        else if (a == "--ledger-keep") {
            const std::string v = value();
            char *end = nullptr;
            ledger_keep = std::strtoll(v.c_str(), &end, 0);
            if (v.empty() || *end || ledger_keep < 0) {
                std::fprintf(stderr, "zesim-gpu: --ledger-keep needs a number of windows, not '%s'\n", v.c_str());
                return 2;
            }
        } else if (a == "--socket")
            socket = value();
        else if (a == "--test-channel")
            test_channel = true;
        else if (a == "--capture-threads")
            capture = true;
        else if (a == "--max-cycles")
            opt.max_cycles = std::strtoull(value().c_str(), nullptr, 0);
        else if (a == "--max-output" || a == "--max-objects-per-file" || a == "--max-memory-per-file" ||
                 a == "--max-vms-per-file" || a == "--max-queues-per-file" || a == "--max-clients" ||
                 a == "--fd-reserve") {
            const std::string v = value();
            char *end = nullptr;
            errno = 0;
            const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end || errno || v[0] == '-' || n > UINT32_MAX) {
                std::fprintf(stderr, "zesim-gpu: %s takes a number (0 to 2^32-1), not '%s'\n", a.c_str(), v.c_str());
                return 2;
            }
            limits.emplace_back(a, n);
        }
        else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "zesim-gpu: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (stimulus.empty() && socket.empty()) {
        usage(stderr);
        return 2;
    }
    try {
        GtConfig cfg = preset_config(preset);
        KmdConfig kmd;
        if (!config.empty())
            load_config_file(config, cfg, kmd);
        if (!topology.empty())
            parse_topology(topology, cfg.topo);
        if (ledger_keep >= 0)
            kmd.ledger_keep = uint64_t(ledger_keep);
        for (const auto &[flag, n] : limits) {
            if (flag == "--max-output")
                kmd.max_output_mb = n;
            else if (flag == "--max-objects-per-file")
                kmd.max_objects_per_file = uint32_t(n);
            else if (flag == "--max-memory-per-file")
                kmd.max_memory_mb_per_file = int64_t(n);
            else if (flag == "--max-vms-per-file")
                kmd.max_vms_per_file = uint32_t(n);
            else if (flag == "--max-queues-per-file")
                kmd.max_queues_per_file = uint32_t(n);
            else if (flag == "--max-clients")
                kmd.max_clients = uint32_t(n);
            else if (flag == "--fd-reserve" && n < 32)
                throw std::runtime_error("--fd-reserve must be >= 32");
            else
                kmd.fd_reserve = uint32_t(n);
        }
        Device dev(cfg);
        if (!waves.empty()) {
            if (mkdir(waves.c_str(), 0755) != 0 && errno != EEXIST)
                throw std::runtime_error("cannot create the waves folder " + waves + ": " + std::strerror(errno));
            dev.irq_block().open_trace(waves + "/irq.fst");
            uint64_t from = 0, to = UINT64_MAX;
            if (!waves_window.empty()) {
                const size_t colon = waves_window.find(':');
                char *e1 = nullptr, *e2 = nullptr;
                const std::string a = waves_window.substr(0, colon), b = colon == std::string::npos ? "" : waves_window.substr(colon + 1);
                if (colon == std::string::npos)
                    throw std::runtime_error("--waves-window takes A:B (GT cycles), not " + waves_window);
                if (!a.empty())
                    from = std::strtoull(a.c_str(), &e1, 0);
                if (!b.empty())
                    to = std::strtoull(b.c_str(), &e2, 0);
                if ((e1 && *e1) || (e2 && *e2) || from >= to)
                    throw std::runtime_error("--waves-window " + waves_window + ": expected A:B with A < B, in GT cycles");
            }
            if (dev.debug_block().present() && !dev.debug_block().open_trace(waves + "/debug.fst"))
                std::fprintf(stderr, "zesim-gpu: --waves: the debug unit is simulated without RTL (debug_block %s): no %s/debug.fst\n",
                             debug_mode_name(dev.debug_block().mode()), waves.c_str());
            if (dev.oa_block().present() && !dev.oa_block().open_trace(waves + "/oa.fst", from, to))
                std::fprintf(stderr, "zesim-gpu: oa_block \"%s\" has no RTL: no %s/oa.fst\n",
                             oa_mode_name(dev.oa_block().mode()), waves.c_str());
        } else if (!waves_window.empty()) {
            throw std::runtime_error("--waves-window needs --waves DIR");
        }
        dev.gt().set_capture(capture);
        // The ledger keeps only what a consumer can take (docs/oa.md §3.5):
        // the file gets every window; the retention queue exists only for the
        // test channel's LEDGER reads.
        Ledger &led = dev.gt().ledger();
        if (!ledger.empty())
            led.open_file(ledger);
        if (stimulus.empty() && test_channel)
            led.set_retention(kmd.ledger_keep, kmd.ledger_keep_kb << 10);
        GtTop top("gt", dev, 4096);
        if (stimulus.empty()) {
            ServerOptions so;
            so.socket_path = socket;
            so.test_channel = test_channel;
            so.max_cycles = opt.max_cycles;
            so.job_timeout_ms = kmd.job_timeout_ms;
            so.fault_continue = kmd.fault_continue;
            so.timeslice_cycles = kmd.timeslice_cycles;
            so.idle_time_ratio = kmd.idle_time_ratio;
            so.max_output_bytes = kmd.max_output_mb << 20;
            so.max_objects_per_file = kmd.max_objects_per_file;
            so.max_memory_per_file = kmd.max_memory_mb_per_file < 0 ? -1 : kmd.max_memory_mb_per_file << 20;
            so.max_vms_per_file = kmd.max_vms_per_file;
            so.max_queues_per_file = kmd.max_queues_per_file;
            so.max_clients = kmd.max_clients;
            so.fd_reserve = kmd.fd_reserve;
            serve(dev, top, so);
            led.close_file();
            return 0;
        }
        std::string result = run_stimulus(dev, top, stimulus, opt);
        if (out.empty()) {
            std::cout << result;
        } else {
            std::ofstream o(out);
            o << result;
            if (!o)
                throw std::runtime_error(out + ": write failed");
        }
        led.close_file();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "zesim-gpu: %s\n", e.what());
        return 1;
    }
    return 0;
}
