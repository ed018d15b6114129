// Ground-truth ledger: the events the model generated, per cycle window and
// per unit, following the increment rules of docs/oa.md.  The OA block counts
// the same events; tests compare its reports and the metrics API against
// these numbers.  Written as JSON lines.
#ifndef ZESIM_MODEL_LEDGER_H
#define ZESIM_MODEL_LEDGER_H

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
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
//
// Closed windows go to the ledger's consumers (docs/oa.md §3.5), never to an
// ever-growing buffer:
//  - a file (`--ledger FILE`) gets every line as its window closes;
//  - a retention queue keeps the windows not yet handed over by drain(), at
//    most `keep_windows` windows and `keep_bytes` bytes of text (the oldest
//    are dropped first, and counted); keep_windows = 0 keeps nothing;
//  - while a consumer is subscribed, nothing is dropped: instead full() tells
//    the daemon's run loop to hold simulated time until the consumer drains.
// With no file, no retention and no subscriber a window's text is never
// formatted.  Memory is bounded by the limits (plus, while subscribed, the
// windows of one run-loop quantum).
// A thread's whole architectural state when it entered the system routine (a stop,
// `resume` false) or left it with `sipret` (`resume` true): the ground truth a test
// compares the state save area and a debugger's register reads with (docs/debug.md
// section 2.6).  Registers are the values before the hardware's entry writes.
struct DebugSnapshot {
    uint64_t seq = 0;      // from 1, stops and resumes in one sequence
    bool resume = false;
    uint32_t tid = 0;      // the debug unit's thread index (docs/debug.md section 2.1)
    uint32_t eu = 0, slot = 0;  // global EU index, thread slot in it
    uint32_t slice = 0, subslice = 0, eu_in_subslice = 0;
    uint32_t slot_index = 0;    // of the state save area
    uint32_t reason = 0;        // the stop's reason (debug unit encoding); 0 for a resume
    uint64_t slot_va = 0, kernel_va = 0, cycle = 0;
    uint32_t ip = 0;            // cr0.2 for a stop; the ip it resumes at for a resume
    uint64_t ib = 0;            // the instruction base ip counts from (docs/isa.md section 3.5)
    uint32_t grf[128][8] = {};
    uint32_t a0[8] = {}, f[2] = {}, sr0[4] = {}, cr0[4] = {}, ce = 0, tdr[8] = {}, acc[2][8] = {};
    uint32_t dbg0[2] = {}, tm0[2] = {};
    uint32_t cf_depth = 0, ret_depth = 0;
    uint64_t fault_va = 0;      // a page-fault stop: the whole faulting address

    std::string json() const;  // one line, no newline
};

class Ledger final : public EventSink {
public:
    static constexpr size_t kDefaultKeepWindows = 4096;
    static constexpr size_t kDefaultKeepBytes = 16u << 20;

    Ledger() = default;
    Ledger(const Ledger &) = delete;
    Ledger &operator=(const Ledger &) = delete;
    ~Ledger() override;

    void configure(size_t eus, uint64_t window);
    uint64_t window() const { return window_; }

    // Stream every closed window to `path` (created or truncated); throws on
    // error.  The file is flushed at the end of each run (flush()), on drain(),
    // at least every 100 ms of host time while windows close, and by
    // close_file() / the destructor.  close_file() throws if a write failed.
    void open_file(const std::string &path);
    void close_file();

    void set_retention(size_t keep_windows, size_t keep_bytes);
    size_t keep_windows() const { return keep_windows_; }
    // While subscribed, retained windows are never dropped (see full()).
    void set_subscribed(bool on);
    bool subscribed() const { return subscribed_; }
    // Subscribed and the retained windows reached a limit: the run loop
    // should not advance time until drain() is called.
    bool full() const
    {
        return subscribed_ && !retained_.empty() &&
               (retained_.size() >= std::max<size_t>(keep_windows_, 1) || retained_bytes_ >= keep_bytes_);
    }

    struct Batch {
        std::string lines;    // the retained windows, oldest first, as JSON lines
        uint64_t windows = 0; // how many
        uint64_t dropped = 0; // windows closed since the previous drain and not in `lines`
    };
    // Hand over (and forget) the retained windows.
    Batch drain();

    // Debug snapshots (the last kKeepSnapshots are kept until taken).
    static constexpr size_t kKeepSnapshots = 4096;
    void debug_snapshot(DebugSnapshot s);
    std::vector<DebugSnapshot> take_debug_snapshots();
    const std::deque<DebugSnapshot> &debug_snapshots() const { return snaps_; }
    uint64_t debug_snapshots_total() const { return snap_seq_; }

    uint64_t closed() const { return closed_; }    // windows closed so far
    uint64_t dropped() const { return dropped_total_; }
    size_t retained_windows() const { return retained_.size(); }
    size_t retained_bytes() const { return retained_bytes_; }

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
    void close_window();  // hand cur_ to the consumers
    void trim();          // drop the oldest retained windows beyond the limits
    void flush_file();

    size_t eus_ = 0;
    uint64_t window_ = 10000;
    LedgerWindow cur_;
    uint64_t closed_ = 0;
    // Consumers.
    std::FILE *file_ = nullptr;
    std::string file_path_;
    bool file_failed_ = false;
    std::chrono::steady_clock::time_point file_flushed_{};
    size_t keep_windows_ = 0, keep_bytes_ = kDefaultKeepBytes;
    bool subscribed_ = false;
    std::deque<std::string> retained_;
    size_t retained_bytes_ = 0;
    uint64_t dropped_ = 0, dropped_total_ = 0;  // since the last drain / ever
    std::deque<DebugSnapshot> snaps_;
    uint64_t snap_seq_ = 0;
};

}  // namespace zesim

#endif
