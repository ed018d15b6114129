// The EU debug unit's C++ twin: the golden model of rtl/debug/zs_debug.sv, written from
// the same rules (docs/debug.md section 1); tests/rtl/test_debug.cc runs both and
// compares every clock (model/debug_rtl.h: DebugChecked).  Not wired into the model yet.
#ifndef ZESIM_MODEL_DEBUG_TWIN_H
#define ZESIM_MODEL_DEBUG_TWIN_H

#include <array>
#include <cstdint>

#include "zs/hw_if.h"

namespace zesim {

// Stop reasons (DBG_REASON.REASON and the stop_reason line).
enum DebugReason : uint32_t {
    kDbgNone = 0,
    kDbgBreakpoint = 1,
    kDbgPageFault = 2,
    kDbgHalt = 3,
    kDbgException = 4,
};

// The inputs of one clock.
struct DebugIn {
    bool reg_we = false;
    uint32_t reg_addr = 0, reg_wdata = 0;
    bool stop_valid = false;
    uint32_t stop_tid = 0, stop_reason = 0;
    bool end_valid = false;
    uint32_t end_tid = 0;
};

struct DebugTwin {
    static constexpr uint32_t kThreads = 1u << ZS_DBG_THREAD_INDEX_WIDTH;
    static constexpr uint32_t kWords = 1u << ZS_DBG_WORD_INDEX_WIDTH;
    static_assert(kThreads == 32 * kWords, "DBG_WORD and DBG_THREAD disagree");
    using Bits = std::array<uint32_t, kWords>;

    Bits attn{}, halt{}, exc{};
    std::array<uint8_t, kThreads> reason{};
    bool ctl = false, irq = false;
    uint32_t word = 0, thr = 0, stopped = 0;

    static bool bit(const Bits &b, uint32_t t) { return (b[t / 32] >> (t % 32)) & 1; }
    static void set(Bits &b, uint32_t t) { b[t / 32] |= 1u << (t % 32); }

    void reset()
    {
        attn = {}, halt = {}, exc = {}, reason = {};
        ctl = irq = false;
        word = thr = stopped = 0;
    }

    uint32_t attn_count() const
    {
        uint32_t n = 0;
        for (uint32_t w : attn)
            n += uint32_t(__builtin_popcount(w));
        return n;
    }

    // MMIO read: the state before the next clock.
    uint32_t read(uint32_t off) const
    {
        switch (off) {
        case ZS_REG_DBG_CTL: return ctl;
        case ZS_REG_DBG_INFO: return kThreads;
        case ZS_REG_DBG_ATTN_COUNT: return attn_count();
        case ZS_REG_DBG_STOPPED: return stopped;
        case ZS_REG_DBG_WORD: return word;
        case ZS_REG_DBG_ATTN: return attn[word];
        case ZS_REG_DBG_HALT: return halt[word];
        case ZS_REG_DBG_EXC: return exc[word];
        case ZS_REG_DBG_THREAD: return thr;
        case ZS_REG_DBG_REASON: {
            const bool a = bit(attn, thr);
            return ZS_FIELD_PREP(DBG_REASON, REASON, a ? reason[thr] : 0) | ZS_FIELD_PREP(DBG_REASON, ATTN, a) |
                   ZS_FIELD_PREP(DBG_REASON, HALT_REQ, bit(halt, thr)) |
                   ZS_FIELD_PREP(DBG_REASON, EXC_REQ, bit(exc, thr));
        }
        default: return 0;
        }
    }

    // One clock: the inputs of this cycle take effect at its end.
    void step(const DebugIn &in)
    {
        const uint32_t tmask = kThreads - 1;
        const bool we = in.reg_we;
        const uint32_t a = in.reg_addr, d = in.reg_wdata;
        const bool wr_all = we && a == ZS_REG_DBG_ALL;
        const uint32_t st = in.stop_tid & tmask, et = in.end_tid & tmask;

        Bits resume{};
        if (we && a == ZS_REG_DBG_RESUME)
            resume[word] = d;
        if (wr_all && (d & ZS_FIELD_MASK(DBG_ALL, RESUME)))
            resume.fill(~0u);
        const uint32_t sr = in.stop_reason & 7;  // the 3-bit line
        const bool reason_ok = sr >= 1 && sr <= 4;
        const bool acc = in.stop_valid && reason_ok && !(in.end_valid && et == st) &&
                         (!bit(attn, st) || bit(resume, st));

        Bits na = attn;
        for (uint32_t w = 0; w < kWords; w++)
            na[w] &= ~resume[w];
        if (acc)
            set(na, st);
        if (in.end_valid)
            na[et / 32] &= ~(1u << (et % 32));

        Bits nh = halt, ne = exc;
        if (we && a == ZS_REG_DBG_HALT)
            nh[word] = d;
        if (wr_all && (d & ZS_FIELD_MASK(DBG_ALL, HALT)))
            nh.fill(~0u);
        if (wr_all && (d & ZS_FIELD_MASK(DBG_ALL, CANCEL_HALT)))
            nh.fill(0);
        if (we && a == ZS_REG_DBG_EXC)
            ne[word] = d;
        if (wr_all && (d & ZS_FIELD_MASK(DBG_ALL, CANCEL_EXC)))
            ne.fill(0);
        for (uint32_t w = 0; w < kWords; w++) {
            nh[w] &= ~na[w];
            ne[w] &= ~na[w];
        }
        if (in.end_valid) {
            nh[et / 32] &= ~(1u << (et % 32));
            ne[et / 32] &= ~(1u << (et % 32));
        }

        if (acc) {
            reason[st] = uint8_t(sr);
            stopped++;
        }
        irq = acc && ctl;
        if (we && a == ZS_REG_DBG_CTL)
            ctl = d & ZS_FIELD_MASK(DBG_CTL, IRQ_EN);
        if (we && a == ZS_REG_DBG_WORD)
            word = ZS_FIELD_GET(d, DBG_WORD, INDEX);
        if (we && a == ZS_REG_DBG_THREAD)
            thr = ZS_FIELD_GET(d, DBG_THREAD, INDEX);
        attn = na, halt = nh, exc = ne;
    }
};

}  // namespace zesim

#endif
