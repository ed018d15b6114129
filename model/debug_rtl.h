// The EU debug unit in RTL: the Verilated rtl/debug/zs_debug.sv behind the interface of
// its C++ twin (model/debug_twin.h): step(const DebugIn &) is one clock, read(off) the
// combinational MMIO read of the state before the next clock.  DebugChecked runs the RTL
// and the twin side by side: after every clock it compares the attention, halt-request
// and exception-request bitmaps, the interrupt pulse, DBG_STOPPED, DBG_ATTN_COUNT and
// the read of the clock's reg_addr (sampled before the edge); read() compares too.  The
// first difference prints both sides (the clock's inputs, the differing words, the
// registers) and makes ok() false.  Not wired into model/device.cc yet (docs/debug.md).
//
// Waveforms: open_trace(path) writes an FST of every clock from then on, one time unit
// per half clock (clock n: 2n before its edge, 2n+1 after it).
#ifndef ZESIM_MODEL_DEBUG_RTL_H
#define ZESIM_MODEL_DEBUG_RTL_H

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "debug_twin.h"

class Vzs_debug;
class VerilatedContext;
class VerilatedFstC;

namespace zesim {

// What the block shows after a clock.
struct DebugState {
    DebugTwin::Bits attn{}, halt{}, exc{};
    bool irq = false;
    uint32_t stopped = 0, attn_count = 0;

    static DebugState of(const DebugTwin &t);
    bool operator==(const DebugState &o) const
    {
        return attn == o.attn && halt == o.halt && exc == o.exc && irq == o.irq && stopped == o.stopped &&
               attn_count == o.attn_count;
    }
};

class DebugRtl {
public:
    DebugRtl();
    ~DebugRtl();
    DebugRtl(const DebugRtl &) = delete;
    DebugRtl &operator=(const DebugRtl &) = delete;

    void step(const DebugIn &in);
    uint32_t read(uint32_t off) const;
    uint32_t read_before() const { return rdata_before_; }
    DebugState state() const;
    void reset();

    // The waveform time of the next clock's two halves (t, t + 1); without it, 2n and 2n + 1.
    void set_time(uint64_t t) { time_ = int64_t(t); }
    void open_trace(const std::string &path);
    void close_trace();
    uint64_t clocks() const { return clocks_; }

private:
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vzs_debug> rtl_;
    std::unique_ptr<VerilatedFstC> fst_;
    bool traced_ = false;
    uint64_t clocks_ = 0;
    int64_t time_ = -1;
    uint32_t rdata_before_ = 0;
};

class DebugChecked {
public:
    explicit DebugChecked(FILE *log = stderr) : log_(log) {}
    // One clock on both; false (and a report) on the first difference.
    bool step(const DebugIn &in);
    uint32_t read(uint32_t off);
    bool ok() const { return ok_; }
    uint64_t clocks() const { return rtl_.clocks(); }
    const DebugTwin &twin() const { return twin_; }
    DebugRtl &rtl() { return rtl_; }
    void reset()
    {
        rtl_.reset();
        twin_.reset();
    }

private:
    void report(const char *what, const DebugIn *in, uint32_t rtl_read, uint32_t twin_read);
    DebugRtl rtl_;
    DebugTwin twin_;
    FILE *log_;
    bool ok_ = true;
};

}  // namespace zesim

#endif
