// Ground-truth ledger: the events the model generated, per cycle window and
// per unit, following the increment rules of docs/oa.md.  The OA block counts
// the same events; tests compare its reports and the metrics API against
// these numbers.  Written as JSON lines.
#ifndef ZESIM_MODEL_LEDGER_H
#define ZESIM_MODEL_LEDGER_H

#include <cstdint>
#include <string>
#include <vector>

#include "events.h"
#include "zs/ze_isa.h"

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

// Listens to the event lines and sums them per window of `window` cycles.
class Ledger final : public EventSink {
public:
    void configure(size_t eus, uint64_t window);
    uint64_t window() const { return window_; }
    // All closed windows as JSON lines, and those closed since the last call.
    const std::string &lines() const { return lines_; }
    std::string take_new();

    void gt_span(uint64_t from, uint64_t to, bool busy, uint64_t resident) override;
    void eu_span(uint32_t eu, uint64_t from, uint64_t to, bool holding) override;
    void eu_issue(uint64_t, uint32_t eu) override { cur_.eu_active[eu]++; }
    void instruction(uint64_t, enum ze_lat cls, uint32_t lanes) override
    {
        cur_.inst[cls]++;
        cur_.lane_ops += lanes;
    }
    void send(uint64_t, unsigned msg) override { cur_.sends[msg & 15]++; }
    void bytes(uint64_t, MemBytes level, uint64_t n) override;
    void thread_dispatched(uint64_t) override { cur_.threads_dispatched++; }
    void thread_retired(uint64_t) override { cur_.threads_retired++; }
    void barrier_release(uint64_t) override { cur_.barriers++; }
    // Closes the windows that end at or before `cycle`.
    void sync(uint64_t cycle) override;
    uint64_t next_sync() const override { return cur_.end; }
    // Closes a partial window at `cycle` (end of a run), if it is not empty.
    void flush(uint64_t cycle) override;

private:
    size_t eus_ = 0;
    uint64_t window_ = 10000;
    LedgerWindow cur_;
    std::string lines_;
    size_t taken_ = 0;
};

}  // namespace zesim

#endif
