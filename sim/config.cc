#include "config.h"

#include "debug_block.h"
#include "oa_block.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace zesim {

GtConfig preset_config(const std::string &name)
{
    GtConfig c;
    c.name = name;
    if (name == "xe-lp") {
        c.topo = {1, 6, 16, 7};
    } else if (name == "tiny") {
        c.topo = {1, 1, 2, 4};
        c.phys_bytes = 64ull << 20;
        c.mem.l3_bytes = 64 * 1024;
        c.ledger_window = 1000;
    } else {
        throw std::runtime_error("unknown preset '" + name + "' (xe-lp, tiny)");
    }
    return c;
}

void parse_topology(const std::string &text, Topology &t)
{
    unsigned v[4];
    char x1, x2, x3, extra;
    std::istringstream in(text);
    if (!(in >> v[0] >> x1 >> v[1] >> x2 >> v[2] >> x3 >> v[3]) || x1 != 'x' || x2 != 'x' || x3 != 'x' ||
        (in >> extra))
        throw std::runtime_error("topology '" + text + "': expected SLICESxSUBSLICESxEUSxTHREADS, e.g. 1x6x16x7");
    for (unsigned k : v)
        if (k < 1 || k > 64)
            throw std::runtime_error("topology '" + text + "': each count must be 1-64");
    t = {v[0], v[1], v[2], v[3]};
}

void load_config_file(const std::string &path, GtConfig &cfg, KmdConfig &kmd)
{
    std::ifstream f(path);
    if (!f)
        throw std::runtime_error(path + ": cannot open");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(f);
    } catch (const nlohmann::json::exception &e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    if (!j.is_object())
        throw std::runtime_error(path + ": expected a JSON object");
    try {
        if (j.contains("preset"))
            cfg = preset_config(j["preset"].get<std::string>());
        for (auto &[key, val] : j.items()) {
            if (key == "preset")
                continue;
            else if (key == "topology")
                parse_topology(val.get<std::string>(), cfg.topo);
            else if (key == "core_mhz")
                cfg.core_mhz = val.get<uint32_t>();
            else if (key == "timestamp_khz")
                cfg.timestamp_khz = val.get<uint32_t>();
            else if (key == "slm_kb")
                cfg.slm_bytes_per_subslice = val.get<uint32_t>() * 1024;
            else if (key == "phys_mb")
                cfg.phys_bytes = val.get<uint64_t>() << 20;
            else if (key == "oa_block") {
                cfg.oa_block = val.get<std::string>();
                parse_oa_mode(cfg.oa_block);  // throws with the accepted values
            } else if (key == "debug_block") {
                cfg.debug_block = val.get<std::string>();
                parse_debug_mode(cfg.debug_block);  // throws with the accepted values
            } else if (key == "ledger_window")
                cfg.ledger_window = val.get<uint64_t>();
            else if (key == "l3_kb")
                cfg.mem.l3_bytes = val.get<uint32_t>() * 1024;
            else if (key == "l3_latency")
                cfg.mem.l3_latency = val.get<uint32_t>();
            else if (key == "dram_latency")
                cfg.mem.dram_latency = val.get<uint32_t>();
            else if (key == "dram_bytes_per_cycle")
                cfg.mem.dram_bytes_per_cycle = val.get<uint32_t>();
            else if (key == "slm_latency")
                cfg.mem.slm_latency = val.get<uint32_t>();
            else if (key == "dispatch_cycles")
                cfg.dispatch_cycles = val.get<uint32_t>();
            else if (key == "job_timeout_ms")
                kmd.job_timeout_ms = val.get<uint32_t>();
            else if (key == "idle_time_ratio") {
                kmd.idle_time_ratio = val.get<double>();
                if (!(kmd.idle_time_ratio >= 0 && kmd.idle_time_ratio <= 1000))
                    throw std::runtime_error("idle_time_ratio must be 0 to 1000");
            } else if (key == "timeslice_cycles")
                kmd.timeslice_cycles = val.get<uint64_t>();
            else if (key == "fault_mode") {
                const std::string m = val.get<std::string>();
                if (m != "fail" && m != "continue")
                    throw std::runtime_error("fault_mode must be \"fail\" or \"continue\", not \"" + m + "\"");
                kmd.fault_continue = m == "continue";
            }
            else if (key == "ledger_keep")
                kmd.ledger_keep = val.get<uint64_t>();
            else if (key == "ledger_keep_kb")
                kmd.ledger_keep_kb = val.get<uint64_t>();
            else if (key == "max_objects_per_file")
                kmd.max_objects_per_file = val.get<uint32_t>();
            else if (key == "max_memory_mb_per_file")
                kmd.max_memory_mb_per_file = val.get<int64_t>();
            else if (key == "max_vms_per_file")
                kmd.max_vms_per_file = val.get<uint32_t>();
            else if (key == "max_queues_per_file")
                kmd.max_queues_per_file = val.get<uint32_t>();
            else if (key == "max_output_mb")
                kmd.max_output_mb = val.get<uint64_t>();
            else if (key == "max_clients")
                kmd.max_clients = val.get<uint32_t>();
            else if (key == "fd_reserve")
                kmd.fd_reserve = val.get<uint32_t>();
            else
                throw std::runtime_error("unknown key '" + key + "'");
        }
    } catch (const nlohmann::json::exception &e) {
        throw std::runtime_error(path + ": " + e.what());
    } catch (const std::runtime_error &e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    if (kmd.max_memory_mb_per_file < -1 || kmd.fd_reserve < 32)
        throw std::runtime_error(path + ": max_memory_mb_per_file must be >= -1 and fd_reserve >= 32");
    if (cfg.core_mhz == 0 || cfg.timestamp_khz == 0 || cfg.mem.dram_bytes_per_cycle == 0 || cfg.phys_bytes < (16ull << 20))
        throw std::runtime_error(path + ": clocks and bandwidth must be > 0 and phys_mb >= 16");
}

std::string describe(const GtConfig &c)
{
    std::ostringstream s;
    s << c.name << ": " << c.topo.slices << "x" << c.topo.subslices << "x" << c.topo.eus << "x" << c.topo.threads
      << " (" << c.topo.total_eus() << " EUs, " << c.topo.total_eus() * c.topo.threads << " threads), core "
      << c.core_mhz << " MHz, timestamp " << c.timestamp_khz << " kHz, " << (c.phys_bytes >> 20) << " MiB";
    return s.str();
}

}  // namespace zesim
