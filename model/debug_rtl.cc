// The EU debug unit's Verilated RTL and its checker (debug_rtl.h).
#include "debug_rtl.h"

#include <stdexcept>

#include "Vzs_debug.h"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace zesim {

DebugState DebugState::of(const DebugTwin &t)
{
    DebugState s;
    s.attn = t.attn, s.halt = t.halt, s.exc = t.exc;
    s.irq = t.irq;
    s.stopped = t.stopped;
    s.attn_count = t.attn_count();
    return s;
}

DebugRtl::DebugRtl() : ctx_(std::make_unique<VerilatedContext>())
{
    ctx_->traceEverOn(true);
    rtl_ = std::make_unique<Vzs_debug>(ctx_.get(), "dbg");
    reset();
}

DebugRtl::~DebugRtl()
{
    close_trace();
    rtl_->final();
}

void DebugRtl::reset()
{
    Vzs_debug &r = *rtl_;
    r.clk = 0;
    r.reg_we = 0;
    r.reg_addr = r.reg_wdata = 0;
    r.stop_valid = 0;
    r.stop_tid = 0;
    r.stop_reason = 0;
    r.end_valid = 0;
    r.end_tid = 0;
    r.rst_n = 1;
    r.eval();
    r.rst_n = 0;
    r.eval();
    r.rst_n = 1;
    r.eval();
}

void DebugRtl::open_trace(const std::string &path)
{
    close_trace();
    fst_ = std::make_unique<VerilatedFstC>();
    if (!traced_) {
        rtl_->trace(fst_.get(), 99);
        traced_ = true;
    }
    fst_->open(path.c_str());
    if (!fst_->isOpen())
        throw std::runtime_error("cannot write the waveform " + path);
}

void DebugRtl::close_trace()
{
    if (fst_) {
        fst_->close();
        fst_.reset();
    }
}

void DebugRtl::step(const DebugIn &in)
{
    Vzs_debug &r = *rtl_;
    const uint32_t tmask = DebugTwin::kThreads - 1;
    r.reg_we = in.reg_we;
    r.reg_addr = in.reg_addr;
    r.reg_wdata = in.reg_wdata;
    r.stop_valid = in.stop_valid;
    r.stop_tid = in.stop_tid & tmask;
    r.stop_reason = in.stop_reason & 7;
    r.end_valid = in.end_valid;
    r.end_tid = in.end_tid & tmask;
    r.clk = 0;
    r.eval();
    rdata_before_ = r.reg_rdata;
    const uint64_t t = time_ >= 0 ? uint64_t(time_) : 2 * clocks_;
    if (fst_)
        fst_->dump(t);
    r.clk = 1;
    r.eval();
    if (fst_)
        fst_->dump(t + 1);
    clocks_++;
}

uint32_t DebugRtl::read(uint32_t off) const
{
    Vzs_debug &r = *rtl_;
    r.reg_we = 0;
    r.stop_valid = 0;
    r.end_valid = 0;
    r.reg_addr = off;
    r.eval();
    return r.reg_rdata;
}

DebugState DebugRtl::state() const
{
    const Vzs_debug &r = *rtl_;
    DebugState s;
    for (uint32_t w = 0; w < DebugTwin::kWords; w++) {
        s.attn[w] = r.attn[w];
        s.halt[w] = r.halt_req[w];
        s.exc[w] = r.exc_req[w];
    }
    s.irq = r.irq;
    s.stopped = r.stopped;
    s.attn_count = r.attn_count;
    return s;
}

static void print_state(FILE *f, const char *side, const DebugState &s, const DebugState &other)
{
    std::fprintf(f, "  %s: irq %d stopped %u attn_count %u\n", side, int(s.irq), s.stopped, s.attn_count);
    // Every differing word, and the first few other non-zero ones.
    unsigned others = 0;
    for (uint32_t w = 0; w < DebugTwin::kWords; w++) {
        const bool differs = s.attn[w] != other.attn[w] || s.halt[w] != other.halt[w] || s.exc[w] != other.exc[w];
        if (!differs && !(s.attn[w] || s.halt[w] || s.exc[w]))
            continue;
        if (!differs && others++ >= 4)
            continue;
        std::fprintf(f, "    word %2u (threads %4u-%4u): attn %08x halt %08x exc %08x%s\n", w, 32 * w,
                         32 * w + 31, s.attn[w], s.halt[w], s.exc[w],
                         (s.attn[w] != other.attn[w] || s.halt[w] != other.halt[w] || s.exc[w] != other.exc[w])
                             ? "  <-- differs"
                             : "");
    }
    if (others > 4)
        std::fprintf(f, "    (%u more non-zero words alike on both sides)\n", others - 4);
}

void DebugChecked::report(const char *what, const DebugIn *in, uint32_t rtl_read, uint32_t twin_read)
{
    ok_ = false;
    if (!log_)
        return;
    std::fprintf(log_, "debug RTL vs twin: %s differs after clock %llu\n", what,
                 (unsigned long long)rtl_.clocks());
    if (in)
        std::fprintf(log_,
                     "  inputs: reg_we %d reg_addr 0x%x reg_wdata 0x%08x stop_valid %d stop_tid %u stop_reason %u"
                     " end_valid %d end_tid %u\n",
                     int(in->reg_we), in->reg_addr, in->reg_wdata, int(in->stop_valid), in->stop_tid,
                     in->stop_reason, int(in->end_valid), in->end_tid);
    std::fprintf(log_, "  read: rtl 0x%08x twin 0x%08x\n", rtl_read, twin_read);
    const DebugState r = rtl_.state(), t = DebugState::of(twin_);
    print_state(log_, "rtl ", r, t);
    print_state(log_, "twin", t, r);
    std::fprintf(log_, "  twin registers: ctl %d word %u thread %u\n", int(twin_.ctl), twin_.word, twin_.thr);
}

bool DebugChecked::step(const DebugIn &in)
{
    const uint32_t tr = twin_.read(in.reg_addr);
    rtl_.step(in);
    twin_.step(in);
    if (!ok_)
        return false;
    if (rtl_.read_before() != tr)
        report("the read before the clock", &in, rtl_.read_before(), tr);
    else if (!(rtl_.state() == DebugState::of(twin_)))
        report("the state", &in, 0, 0);
    return ok_;
}

uint32_t DebugChecked::read(uint32_t off)
{
    const uint32_t r = rtl_.read(off), t = twin_.read(off);
    if (ok_ && r != t)
        report("a read", nullptr, r, t);
    return t;
}

}  // namespace zesim
