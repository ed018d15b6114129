// The OA block of the device (docs/oa.md §4): listens to the GT's event lines, like
// the ledger, and feeds the counter block (the Verilated RTL, its C++ twin, or both
// side by side) one clock per run of identical cycles.  It owns the block's MMIO
// range (0x4000), writes the reports the block produces into physical memory (buffer
// reports) or hands them to the command streamer (query reports), and raises the
// OA-buffer interrupt.
#ifndef ZESIM_MODEL_OA_BLOCK_H
#define ZESIM_MODEL_OA_BLOCK_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "events.h"
#include "oa_twin.h"

namespace zesim {

class Gt;
class PhysMem;
struct GtConfig;

// How the block is simulated (config key oa_block, docs/config.md).
enum class OaMode { Off, Twin, Rtl, Check };
class OaCore;
// The Verilated RTL, alone or checked against the twin (model/oa_rtl.cc).
std::unique_ptr<OaCore> make_oa_rtl_core(bool check);
OaMode parse_oa_mode(const std::string &s);  // throws std::runtime_error
const char *oa_mode_name(OaMode m);

// One implementation of the block's clock: the twin, the RTL, or both compared.
class OaCore {
public:
    virtual ~OaCore() = default;
    // One clock at GT cycle `cycle` (for waveforms); false: the RTL and the twin differ
    // (both states were printed), the simulation must stop.
    virtual bool step(const OaIn &in, uint64_t cycle, OaOut &out) = 0;
    virtual uint32_t read(uint32_t off) = 0;
    // FST waveform of the block for cycles [from, to) (RTL modes only; else false).
    virtual bool open_trace(const std::string &, uint64_t, uint64_t) { return false; }
    virtual void close_trace() {}
};

class OaBlock final : public EventSink {
public:
    // `irq` raises interrupt bits (IRQ_STATUS.OA_BUFFER); `context` is CTX_ID.
    OaBlock(const GtConfig &cfg, OaMode mode, Gt &gt, PhysMem &mem, std::function<void(uint32_t)> irq,
            std::function<uint32_t()> context);
    ~OaBlock() override;
    OaBlock(const OaBlock &) = delete;
    OaBlock &operator=(const OaBlock &) = delete;

    OaMode mode() const { return mode_; }
    bool present() const { return mode_ != OaMode::Off; }

    // MMIO of the block's range (access types already checked by the device).
    uint32_t read(uint32_t off);
    void write(uint32_t off, uint32_t value);
    // CTX_ID was loaded with a different value (after the load).
    void context_switch();
    // A query report (REPORT_PERF_COUNT) at the present cycle: the 64 dwords.
    void query_report(uint32_t id, uint32_t out[ZS_OA_REPORT_DWORDS]);
    // The counters are enabled with periodic reports (the daemon lets idle time pass).
    bool periodic() const;

    bool open_trace(const std::string &path, uint64_t from, uint64_t to);
    void close_trace();
    uint64_t clocks() const { return clocks_; }

    // EventSink
    void gt_span(uint64_t from, uint64_t to, bool busy, uint64_t resident) override;
    void eu_span(uint32_t eu, uint64_t from, uint64_t to, bool holding) override;
    void eu_issue(uint64_t cycle, uint32_t eu) override;
    void instruction(uint64_t cycle, enum ze_lat cls, uint32_t lanes) override;
    void send(uint64_t cycle, unsigned msg) override;
    void bytes(uint64_t cycle, MemBytes level, uint64_t n) override;
    void thread_dispatched(uint64_t cycle) override { event(cycle, kTHREADS_DISPATCHED, 1); }
    void thread_retired(uint64_t cycle) override { event(cycle, kTHREADS_RETIRED, 1); }
    void barrier_release(uint64_t cycle) override { event(cycle, kBARRIERS, 1); }
    void sync(uint64_t cycle) override { feed(cycle); }
    uint64_t next_sync() const override { return next_timer_; }
    void flush(uint64_t cycle) override { feed(cycle); }

private:
    // Event line numbers (include/zs/oa_events.def).
    enum : uint32_t {
#define ZE_OA_EVENT(name, line, key, desc) k##name = line,
#include "zs/oa_events.def"
#undef ZE_OA_EVENT
    };
    // The per-event lines of one cycle, summed as they arrive (they come in time order,
    // so this is almost always the last bucket).
    struct Bucket {
        uint64_t cycle;
        uint32_t inc[ZS_OA_EVENT_LINES];
        uint32_t ss_active[ZS_OA_MAX_SUBSLICES];
    };
    struct Span {  // an EU of sub-slice `ss` held threads (or none) without issuing
        uint64_t from, to;
        uint32_t ss;
        bool holding;
    };
    struct Break {  // an EU starts (+1) or stops (-1) holding / idling at `cycle`
        uint64_t cycle;
        uint32_t ss;
        bool holding;
        int32_t d;
    };
    struct GtSeg {
        uint64_t from, to, resident;
        bool busy;
    };

    void event(uint64_t cycle, uint32_t line, uint64_t n);
    Bucket &bucket(uint64_t cycle)
    {
        return !events_.empty() && events_.back().cycle == cycle ? events_.back() : bucket_slow(cycle);
    }
    Bucket &bucket_slow(uint64_t cycle);
    bool enabled() const { return ctl_ & ZS_FIELD_MASK(OA_CTL, ENABLE); }
    void feed(uint64_t to);  // clock the lines of cycles [fed_, to)
    bool feed_folded(uint64_t to);
    void consume(uint64_t to, size_t events);
    OaIn inputs(uint64_t cycles, const uint64_t *inc, const uint64_t (*ss)[3]) const;
    OaOut clock(OaIn &in, uint64_t cycle);
    void clock_pending(uint64_t at);
    void sync_now();         // deliver every line up to the present cycle
    uint64_t timestamp(uint64_t cycle) const;
    void plan_timer();

    const GtConfig &cfg_;
    OaMode mode_;
    Gt &gt_;
    PhysMem &mem_;
    std::function<void(uint32_t)> irq_;
    std::function<uint32_t()> context_;
    std::unique_ptr<OaCore> core_;
    uint32_t ctl_ = 0;        // OA_CTL as last written
    uint64_t fed_ = 0;        // lines of cycles before this have been clocked
    uint64_t next_timer_ = ~0ull;
    uint64_t last_ts_ = 0;    // timestamp of the last clock
    uint64_t clocks_ = 0;
    uint32_t eus_per_ss_ = 1, subslices_ = 1;
    bool lost_write_noted_ = false;
    // Lines since fed_.
    std::vector<Bucket> events_;  // by cycle
    std::vector<Span> spans_;
    std::vector<Break> breaks_;  // scratch of feed()
    std::vector<GtSeg> segs_;
    // Runs folded into the next clock (64-bit sums of the block's 32-bit inputs).
    bool fold_ = true;  // false while a waveform is open: a clock per run
    uint64_t acc_cycles_ = 0, acc_[ZS_OA_EVENT_LINES] = {}, acc_ss_[ZS_OA_MAX_SUBSLICES][3] = {};
};

}  // namespace zesim

#endif
