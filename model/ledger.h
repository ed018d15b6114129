// Ground-truth ledger: the events the model generated, per cycle window and
// per unit, following the increment rules of docs/oa.md.  The OA block counts
// the same events; tests compare its reports and the metrics API against
// these numbers.  Written as JSON lines.
#ifndef ZESIM_MODEL_LEDGER_H
#define ZESIM_MODEL_LEDGER_H

#include <cstdint>
#include <string>
#include <vector>

#include "zesim/ze_isa.h"

namespace zesim {

struct LedgerWindow {
    uint64_t index = 0, start = 0, end = 0;
    uint64_t gpu_busy = 0;          // cycles with any thread resident or dispatch pending
    uint64_t thread_cycles = 0;     // sum over cycles of resident threads
    uint64_t threads_dispatched = 0;
    uint64_t threads_retired = 0;
    std::vector<uint64_t> eu_active, eu_stall, eu_idle;  // per EU
    uint64_t inst[ZE_LAT_COUNT] = {};  // by pipe (latency class)
    uint64_t lane_ops = 0;          // enabled channels summed over instructions
    uint64_t sends[16] = {};        // by message id
    uint64_t l3_read = 0, l3_write = 0, dram = 0, slm_read = 0, slm_write = 0;
    uint64_t barriers = 0;          // barrier releases (per thread group)

    void reset(uint64_t idx, uint64_t s, uint64_t e, size_t eus);
    std::string json() const;
};

class Ledger {
public:
    void configure(size_t eus, uint64_t window);
    uint64_t window() const { return window_; }
    LedgerWindow &cur() { return cur_; }
    // Close the current window at its end and open the next.
    void close();
    // All closed windows as JSON lines, and those closed since the last call.
    const std::string &lines() const { return lines_; }
    std::string take_new();
    // Close a partial window at `cycle` (end of a run), if it saw anything.
    void flush(uint64_t cycle);

private:
    size_t eus_ = 0;
    uint64_t window_ = 10000;
    LedgerWindow cur_;
    std::string lines_;
    size_t taken_ = 0;
};

}  // namespace zesim

#endif
