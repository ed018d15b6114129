#include "debug_block.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "debug_rtl.h"

namespace zesim {

DebugMode parse_debug_mode(const std::string &s)
{
    if (s == "off")
        return DebugMode::Off;
    if (s == "twin")
        return DebugMode::Twin;
    if (s == "rtl")
        return DebugMode::Rtl;
    if (s == "check")
        return DebugMode::Check;
    throw std::runtime_error("debug_block must be \"rtl\", \"check\", \"twin\" or \"off\", not \"" + s + "\"");
}

const char *debug_mode_name(DebugMode m)
{
    switch (m) {
    case DebugMode::Off: return "off";
    case DebugMode::Twin: return "twin";
    case DebugMode::Rtl: return "rtl";
    case DebugMode::Check: return "check";
    }
    return "?";
}

DebugBlock::DebugBlock(const GtConfig &cfg, DebugMode mode, Gt &gt, std::function<void(uint32_t)> irq)
    : mode_(mode), indexable_(Gt::debug_indexable(cfg.topo)), gt_(gt), irq_(std::move(irq))
{
    switch (mode_) {
    case DebugMode::Off: break;
    case DebugMode::Twin: twin_ = std::make_unique<DebugTwin>(); break;
    case DebugMode::Rtl: rtl_ = std::make_unique<DebugRtl>(); break;
    case DebugMode::Check: chk_ = std::make_unique<DebugChecked>(); break;
    }
    if (present())
        gt_.set_debug(this);
}

DebugBlock::~DebugBlock()
{
    gt_.set_debug(nullptr);
    gt_.set_debug_requests(false);
    close_trace();
}

void DebugBlock::clock(const DebugIn &in, uint64_t cycle)
{
    step(in, cycle);
    // In a waveform every event is a pulse: a quiet clock follows it (no input, so the
    // state is unchanged and only the interrupt pulse ends).
    if (traced_)
        step(DebugIn{}, cycle);
}

void DebugBlock::step(const DebugIn &in, uint64_t cycle)
{
    // Waveform time: 4 x the GT cycle (an event and its quiet clock), or later when one
    // cycle has several events.
    const uint64_t t = std::max<uint64_t>(4 * cycle, clocks_ ? last_time_ + 2 : 0);
    last_time_ = t;
    clocks_++;
    bool irq;
    if (twin_) {
        twin_->step(in);
        attn_ = twin_->attn, halt_ = twin_->halt, exc_ = twin_->exc;
        irq = twin_->irq;
    } else {
        DebugRtl &r = rtl_ ? *rtl_ : chk_->rtl();
        r.set_time(t);
        if (chk_ && !chk_->step(in)) {
            std::fprintf(stderr, "zesim: stopping: the EU debug unit's RTL disagrees with its twin (GT cycle %llu)\n",
                         (unsigned long long)cycle);
            std::abort();
        }
        if (rtl_)
            rtl_->step(in);
        const DebugState s = r.state();
        attn_ = s.attn, halt_ = s.halt, exc_ = s.exc;
        irq = s.irq;
    }
    any_req_ = false;
    for (uint32_t w = 0; w < DebugTwin::kWords; w++)
        any_req_ |= (halt_[w] | exc_[w]) != 0;
    gt_.set_debug_requests(any_req_);
    if (irq)
        irq_(ZS_FIELD_MASK(IRQ_STATUS, DEBUG));
}

uint32_t DebugBlock::read(uint32_t off)
{
    switch (off) {
    case ZS_REG_DBG_MODE: return mode_reg_;
    case ZS_REG_DBG_SIP_LO: return sip_lo_;
    case ZS_REG_DBG_SIP_HI: return sip_hi_;
    case ZS_REG_DBG_SSA_LO: return ssa_lo_;
    case ZS_REG_DBG_SSA_HI: return ssa_hi_;
    case ZS_REG_DBG_SLOT_SIZE: return slot_size_;
    default: break;
    }
    if (!present())
        return 0;
    if (twin_)
        return twin_->read(off);
    if (chk_)
        return chk_->read(off);
    return rtl_->read(off);
}

void DebugBlock::write(uint32_t off, uint32_t value)
{
    switch (off) {
    case ZS_REG_DBG_MODE:
        // SIP_EN cannot be set without the unit (docs/debug.md section 2.1).
        mode_reg_ = value & (ZS_FIELD_MASK(DBG_MODE, EXC_EN) | (present() ? ZS_FIELD_MASK(DBG_MODE, SIP_EN) : 0));
        return;
    case ZS_REG_DBG_SIP_LO: sip_lo_ = value & ~15u; return;
    case ZS_REG_DBG_SIP_HI: sip_hi_ = value; return;
    case ZS_REG_DBG_SSA_LO: ssa_lo_ = value & ~31u; return;
    case ZS_REG_DBG_SSA_HI: ssa_hi_ = value; return;
    case ZS_REG_DBG_SLOT_SIZE: slot_size_ = value & ~31u; return;
    default: break;
    }
    if (!present())
        return;
    DebugIn in;
    in.reg_we = true;
    in.reg_addr = off;
    in.reg_wdata = value;
    clock(in, gt_.now());
    if (off == ZS_REG_DBG_RESUME || off == ZS_REG_DBG_ALL)
        gt_.debug_resumed();
}

void DebugBlock::stop(uint64_t cycle, uint32_t tid, uint32_t reason)
{
    DebugIn in;
    in.stop_valid = true;
    in.stop_tid = tid;
    in.stop_reason = reason;
    clock(in, cycle);
}

void DebugBlock::end(uint64_t cycle, uint32_t tid)
{
    // Only an end that changes the unit's state is clocked.
    if (!DebugTwin::bit(attn_, tid) && !DebugTwin::bit(halt_, tid) && !DebugTwin::bit(exc_, tid))
        return;
    DebugIn in;
    in.end_valid = true;
    in.end_tid = tid;
    clock(in, cycle);
}

bool DebugBlock::open_trace(const std::string &path)
{
    DebugRtl *r = rtl_ ? rtl_.get() : chk_ ? &chk_->rtl() : nullptr;
    if (!r || !present())
        return false;
    r->open_trace(path);
    traced_ = true;
    return true;
}

void DebugBlock::close_trace()
{
    if (!traced_)
        return;
    (rtl_ ? *rtl_ : chk_->rtl()).close_trace();
    traced_ = false;
}

}  // namespace zesim
