// The GT: thread dispatcher, sub-slices with SLM and barriers, EUs with
// hardware threads, the memory hierarchy, and the ground-truth ledger.
// Plain C++ objects; the SystemC wrapper (gt_top.h) ticks them from one
// process.  Idle EUs cost nothing: time jumps to the next ready thread.
#ifndef ZESIM_MODEL_GT_H
#define ZESIM_MODEL_GT_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ledger.h"
#include "memory.h"
#include "thread.h"

namespace zesim {

struct Topology {
    uint32_t slices = 1;
    uint32_t subslices = 6;  // per slice
    uint32_t eus = 16;       // per sub-slice
    uint32_t threads = 7;    // per EU
    uint32_t total_subslices() const { return slices * subslices; }
    uint32_t total_eus() const { return total_subslices() * eus; }
};

struct GtConfig {
    std::string name = "xe-lp";
    Topology topo;
    uint32_t core_mhz = 1000;
    uint32_t timestamp_khz = 12500;
    uint32_t slm_bytes_per_subslice = 64 * 1024;
    uint32_t dispatch_cycles = 8;   // per thread, serialized in the dispatcher
    uint32_t barrier_cycles = 8;    // release latency after the last arrival
    uint64_t phys_bytes = 4096ull << 20; // an integrated GPU's share; backed lazily (docs/kmd.md §2)
    uint64_t ledger_window = 10000; // cycles
    std::string oa_block = "rtl";  // rtl / check / twin / off (docs/oa.md §4.4)
    std::string debug_block = "rtl";  // rtl / check / twin / off (docs/debug.md §2)
    MemConfig mem;
};

// One COMPUTE_WALKER (docs/commands.md).
struct WalkerJob {
    uint64_t pt_root = 0;
    uint64_t kernel_va = 0;
    uint32_t simd = 16, grf = 128, slm = 0;
    uint32_t group_size[3] = {1, 1, 1};
    uint32_t group_count[3] = {1, 1, 1};
    uint64_t args_va = 0;
    uint32_t arg_bytes = 0;
};

// Final state of a thread, kept when capture is on (differential tests).
struct ThreadRecord {
    uint32_t group[3];
    uint32_t group_linear;
    uint32_t thread;  // index in its group
    ThreadStatus status;
    uint32_t exception_bits, exception_ip, exception_addr;
    uint32_t grf[ZE_GRF_COUNT][8];
    uint32_t f[2];
};

struct PageFault {
    uint64_t va;
    FaultReason reason;
    uint32_t eu, thread;  // global EU index, slot
    bool write;
};

// A thread ended by an exception (docs/isa.md §7), for the fault registers
// (docs/mmio.md): what the command streamer reports to the KMD.
struct EuException {
    uint32_t bits;          // cr0.1: exception status bits
    uint32_t ip;            // cr0.2: offset of the instruction in the kernel
    uint64_t va;            // page fault: the faulting address; else cr0.3
    FaultReason reason;     // page fault: why; else None
    bool write;
    uint64_t kernel_va;     // the walker's kernel
    uint64_t ib;            // the instruction base ip counts from (docs/isa.md section 3.5)
    uint32_t eu, thread;    // global EU index, slot
};

// What the GT needs of the Debug block (docs/debug.md section 2): the model-side
// registers, the debug unit's request and attention bitmaps, and its stop and end
// lines.  model/debug_block.h implements it.
class DebugPort {
public:
    virtual ~DebugPort() = default;
    virtual bool sip_enabled() const = 0;    // DBG_MODE.SIP_EN
    virtual uint32_t exc_enables() const = 0; // DBG_MODE.EXC_EN
    virtual uint64_t sip_va() const = 0;
    virtual uint64_t ssa_va() const = 0;
    virtual uint32_t slot_size() const = 0;
    virtual bool halt_request(uint32_t tid) const = 0;
    virtual bool exc_request(uint32_t tid) const = 0;
    virtual bool attention(uint32_t tid) const = 0;
    // The lines, at GT cycle `cycle`.
    virtual void stop(uint64_t cycle, uint32_t tid, uint32_t reason) = 0;
    virtual void end(uint64_t cycle, uint32_t tid) = 0;
};

class Gt {
public:
    struct Impl;

    Gt(const GtConfig &cfg, PhysMem &mem);
    ~Gt();

    const GtConfig &config() const { return cfg_; }
    uint64_t now() const { return now_; }
    Mmu &mmu() { return mmu_; }
    Ledger &ledger() { return ledger_; }
    // The event lines (docs/oa.md): attach further listeners (the OA block).
    EventLines &events() { return events_; }

    // Queue a walker; it starts when the previous one has completed.  Returns an
    // error message when the job cannot run at all (empty for success).
    std::string submit(const WalkerJob &job);
    bool busy() const;
    // Advance simulated time by at most `max_cycles`; returns cycles advanced.
    // Stops early (returning fewer) when the GT goes idle.
    uint64_t run(uint64_t max_cycles);
    // Run until idle; returns false if `limit` cycles pass first.
    bool run_to_idle(uint64_t limit);
    // Jump simulated time forward while idle (e.g. a command-streamer wait).
    void idle_until(uint64_t cycle);
    // Deliver every event line of the cycles before now() and sync the listeners
    // there (before a trigger or a register access of the OA block).
    void deliver_lines();

    // Close the ledger's current window after the present cycle (end of a run).
    void flush_ledger();
    // Abandon every thread, group and queued walker (engine reset).
    void reset();

    // Context switch (docs/model.md §8): take out the whole state of the
    // running context — resident threads with their registers and scoreboard,
    // thread groups with their SLM and barriers, queued walkers — leaving the
    // GT idle; and put such a state back (the GT must be idle), its threads
    // continuing from the present cycle.  Time does not pass for a saved state.
    using Image = std::shared_ptr<Impl>;
    Image save_context();
    void restore_context(Image img);
    // Kernel address of the walker now dispatching or running (0 if none).
    uint64_t current_kernel() const;
    // Drop every decoded instruction, of saved contexts too (TLB_INVALIDATE bit 1): code
    // changed under a running walker, e.g. a debugger's breakpoint, is fetched anew.
    void invalidate_code() { code_gen_++; }

    void set_capture(bool on) { capture_ = on; }
    const std::vector<ThreadRecord> &records() const { return records_; }
    void clear_records() { records_.clear(); faults_.clear(); }
    const std::vector<PageFault> &faults() const { return faults_; }
    // Exceptions that ended threads since the last call (taken by the device).
    std::vector<EuException> take_exceptions()
    {
        std::vector<EuException> e;
        e.swap(exceptions_);
        return e;
    }
    uint64_t walkers_completed() const { return walkers_completed_; }

    // The Debug block (docs/debug.md section 2); null: no debug unit.
    void set_debug(DebugPort *p) { debug_ = p; }
    // Some halt or exception request is pending in the unit (set by the Debug block after
    // each clock: the GT then looks at each thread's requests at its instruction boundary).
    void set_debug_requests(bool any) { debug_req_ = any; }
    // The debug unit's attention bits may have cleared: threads waiting in
    // attention whose bit is clear continue.
    void debug_resumed();
    // Whether the topology fits the debug unit's thread index (tid = global EU * 8 + slot).
    static bool debug_indexable(const Topology &t)
    {
        return t.threads <= 8 && uint64_t(t.total_eus()) * 8 <= 1024;
    }
    // Called whenever a walker finishes (the command streamer waits on it).
    std::function<void()> on_walker_done;

private:
    GtConfig cfg_;
    PhysMem &mem_;
    Mmu mmu_;
    MemTiming timing_;
    Ledger ledger_;
    EventLines events_;
    uint64_t now_ = 0;
    bool capture_ = false;
    uint64_t code_gen_ = 0;  // invalidate_code() count: a job's decoded code of an older one is dropped
    std::vector<ThreadRecord> records_;
    std::vector<PageFault> faults_;
    std::vector<EuException> exceptions_;
    uint64_t walkers_completed_ = 0;
    DebugPort *debug_ = nullptr;
    bool debug_req_ = false;
    std::shared_ptr<Impl> impl_;  // shared: a saved context outlives its turn on the GT
};

}  // namespace zesim

#endif
