// The Debug block of the device (docs/debug.md sections 1.7 and 2): the EU debug unit
// (rtl/debug/zs_debug.sv: the Verilated RTL, its C++ twin, or both compared every
// clock) behind the MMIO range 0x5000-0x503f, and the model-side registers at 0x5040
// (DBG_MODE, DBG_SIP, DBG_SSA, DBG_SLOT_SIZE).  The GT drives the unit's stop and end
// lines through the DebugPort interface and samples its request and attention
// bitmaps, which the block keeps after every clock.  The unit is clocked only when
// something happens (a stop, the end of a thread that has a request or attention, an
// MMIO write to its range): between those clocks its state does not change.
#ifndef ZESIM_MODEL_DEBUG_BLOCK_H
#define ZESIM_MODEL_DEBUG_BLOCK_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "debug_twin.h"
#include "gt.h"

namespace zesim {

// How the unit is simulated (config key debug_block, docs/config.md).
enum class DebugMode { Off, Twin, Rtl, Check };
DebugMode parse_debug_mode(const std::string &s);  // throws std::runtime_error
const char *debug_mode_name(DebugMode m);

class DebugRtl;
class DebugChecked;

class DebugBlock final : public DebugPort {
public:
    // `irq` raises interrupt bits (IRQ_STATUS.DEBUG).
    DebugBlock(const GtConfig &cfg, DebugMode mode, Gt &gt, std::function<void(uint32_t)> irq);
    ~DebugBlock() override;
    DebugBlock(const DebugBlock &) = delete;
    DebugBlock &operator=(const DebugBlock &) = delete;

    DebugMode mode() const { return mode_; }
    // The unit exists and the topology fits its thread index (docs/debug.md section 2.1).
    bool present() const { return mode_ != DebugMode::Off && indexable_; }

    // MMIO of the block's range (access types already checked by the device).
    uint32_t read(uint32_t off);
    void write(uint32_t off, uint32_t value);
    // Engine reset: the model-side registers keep their values (the KMD reprograms them).

    // FST waveform of the unit (RTL modes only; else false), time = 4 x GT cycle.
    bool open_trace(const std::string &path);
    void close_trace();
    uint64_t clocks() const { return clocks_; }

    // DebugPort
    bool sip_enabled() const override { return present() && (mode_reg_ & ZS_FIELD_MASK(DBG_MODE, SIP_EN)); }
    uint32_t exc_enables() const override { return ZS_FIELD_GET(mode_reg_, DBG_MODE, EXC_EN); }
    uint64_t sip_va() const override { return uint64_t(sip_hi_) << 32 | sip_lo_; }
    uint64_t ssa_va() const override { return uint64_t(ssa_hi_) << 32 | ssa_lo_; }
    uint32_t slot_size() const override { return slot_size_; }
    bool halt_request(uint32_t tid) const override { return DebugTwin::bit(halt_, tid); }
    bool exc_request(uint32_t tid) const override { return DebugTwin::bit(exc_, tid); }
    bool attention(uint32_t tid) const override { return DebugTwin::bit(attn_, tid); }
    void stop(uint64_t cycle, uint32_t tid, uint32_t reason) override;
    void end(uint64_t cycle, uint32_t tid) override;

private:
    void clock(const DebugIn &in, uint64_t cycle);  // an event (with a quiet clock after it while traced)
    void step(const DebugIn &in, uint64_t cycle);   // one clock of the unit

    DebugMode mode_;
    bool indexable_;
    Gt &gt_;
    std::function<void(uint32_t)> irq_;
    std::unique_ptr<DebugTwin> twin_;
    std::unique_ptr<DebugRtl> rtl_;
    std::unique_ptr<DebugChecked> chk_;
    DebugTwin::Bits attn_{}, halt_{}, exc_{};
    bool any_req_ = false;
    uint32_t mode_reg_ = 0, sip_lo_ = 0, sip_hi_ = 0, ssa_lo_ = 0, ssa_hi_ = 0, slot_size_ = 0;
    uint64_t clocks_ = 0, last_time_ = 0;
    bool traced_ = false;
};

}  // namespace zesim

#endif
