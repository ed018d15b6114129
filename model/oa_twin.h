// The OA block's C++ twin: the golden model of rtl/oa/zs_oa.sv, written from the same
// rules (docs/oa.md section 4).  One step() is one clock of the block; tests run both
// and compare every output and register after every clock (tests/rtl/test_oa.cc, and
// model/oa_block.h when the config says oa_block: check).
//
// A clock, in order:
//  1. the MMIO write of the clock, if any (OA_CTL enable 0 to 1 clears the counters);
//  2. with the counters enabled: the step's increments (`inc` are totals over the
//     step's `adv_cycles` cycles, so a span of identical cycles is one clock);
//  3. triggers, evaluated at the boundary after the step: the timer (the timestamp
//     crossed a multiple of 2^(exponent+1) since the previous clock, and the timer was
//     already running before this clock's write), a marker or
//     OA_TRIGGER write of this clock, a context switch; coinciding triggers make one
//     report with all their reason bits;
//  4. that report to the OA buffer (or lost when it is full), and a query report
//     (REPORT_PERF_COUNT) to its own address.
#ifndef ZESIM_MODEL_OA_TWIN_H
#define ZESIM_MODEL_OA_TWIN_H

#include <cstdint>
#include <cstring>

#include "zs/hw_if.h"
#include "zs/oa_report.h"

namespace zesim {

struct OaIn {
    // MMIO (offset within the whole map; the block answers 0x4000-0x4fff).
    bool reg_we = false;
    uint32_t reg_addr = 0, reg_wdata = 0;
    // The event lines: totals over the step's cycles.
    uint32_t adv_cycles = 0;
    uint32_t inc[ZS_OA_EVENT_LINES] = {};
    uint32_t ss_inc[ZS_OA_MAX_SUBSLICES][3] = {};  // per sub-slice: EU active, stall, idle cycles
    // The timestamp at the boundary after this clock.
    uint64_t timestamp = 0;
    // Query report from the command streamer.
    bool rpc = false;
    uint64_t rpc_addr = 0;
    uint32_t rpc_id = 0;
    // Context of the command streamer; ctx_switch pulses when CTX_ID changes.
    uint32_t ctx_id = 0;
    bool ctx_switch = false;
    uint32_t clock_ratio = 0;  // DW0 bits 8:0 (zs_oa_clock_ratio)
};

struct OaOut {
    bool buf_wr = false;
    uint64_t buf_addr = 0;
    uint32_t buf_data[ZS_OA_REPORT_DWORDS] = {};
    bool rpc_wr = false;
    uint64_t rpc_addr = 0;
    uint32_t rpc_data[ZS_OA_REPORT_DWORDS] = {};
    bool irq = false;  // pulse: IRQ_STATUS.OA_BUFFER
};

struct OaTwin {
    static constexpr uint64_t kMask40 = (1ull << 40) - 1;
    static constexpr uint32_t kCtlMask = 0x1ff;

    uint32_t ctl = 0, base_lo = 0, base_hi = 0, size_log2 = 12, head = 0, tail = 0, status = 0;
    uint32_t threshold = 1, reports = 0, lost = 0, marker = 0;
    uint32_t sel[ZS_OA_BC_COUNTERS];
    uint64_t a[ZS_OA_A_COUNTERS] = {};
    uint32_t bc[ZS_OA_BC_COUNTERS] = {};
    uint32_t ticks = 0;
    uint64_t ts_last = 0;

    OaTwin() { reset(); }

    void reset()
    {
        ctl = base_lo = base_hi = head = tail = status = reports = lost = marker = ticks = 0;
        size_log2 = ZS_OA_BUF_LOG2_MIN;
        threshold = 1;
        ts_last = 0;
        for (uint32_t &s : sel)
            s = 0xff;
        std::memset(a, 0, sizeof a);
        std::memset(bc, 0, sizeof bc);
    }

    bool enabled() const { return ctl & ZS_FIELD_MASK(OA_CTL, ENABLE); }
    uint32_t size() const { return 1u << size_log2; }
    uint64_t base() const { return uint64_t(base_hi) << 32 | (base_lo & ~0xfffu); }
    uint32_t unread() const { return (tail - head) & (size() - 1); }

    // MMIO read of the block's registers (combinational: the state before the clock).
    uint32_t read(uint32_t off) const
    {
        switch (off) {
        case ZS_REG_OA_CTL: return ctl;
        case ZS_REG_OA_BUF_BASE_LO: return base_lo;
        case ZS_REG_OA_BUF_BASE_HI: return base_hi;
        case ZS_REG_OA_BUF_SIZE: return size_log2;
        case ZS_REG_OA_HEAD: return head;
        case ZS_REG_OA_TAIL: return tail;
        case ZS_REG_OA_STATUS: return status;
        case ZS_REG_OA_THRESHOLD: return threshold;
        case ZS_REG_OA_REPORTS: return reports;
        case ZS_REG_OA_LOST: return lost;
        default:
            if (off >= ZS_REG_OA_BC_SEL0 && off <= ZS_REG_OA_BC_SEL15 && off % 4 == 0)
                return sel[(off - ZS_REG_OA_BC_SEL0) / 4];
            return 0;
        }
    }

    void fill(uint32_t *d, uint32_t id, const OaIn &in) const
    {
        std::memset(d, 0, ZS_OA_REPORT_BYTES);
        d[ZS_OA_DW_REPORT_ID] = id;
        d[ZS_OA_DW_TIMESTAMP] = uint32_t(in.timestamp);
        d[ZS_OA_DW_CONTEXT] = in.ctx_id;
        d[ZS_OA_DW_TICKS] = ticks;
        uint8_t *bytes = reinterpret_cast<uint8_t *>(d);
        for (unsigned i = 0; i < ZS_OA_A_COUNTERS; i++) {
            d[ZS_OA_DW_A + i] = uint32_t(a[i]);
            if (i < ZS_OA_A40_COUNTERS)
                bytes[ZS_OA_BYTE_A_HIGH + i] = uint8_t(a[i] >> 32);
        }
        for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
            d[ZS_OA_DW_B + i] = bc[i];
    }

    uint32_t bc_source(uint32_t s, const OaIn &in) const
    {
        const uint32_t ev = ZS_FIELD_GET(s, OA_BC_SEL0, EVENT), mask = ZS_FIELD_GET(s, OA_BC_SEL0, SS_MASK);
        if (ev < ZS_OA_EVENT_LINES)
            return in.inc[ev];
        if (ev >= ZS_OA_BC_EU_ACTIVE && ev <= ZS_OA_BC_EU_IDLE) {
            uint32_t sum = 0;
            for (unsigned k = 0; k < ZS_OA_MAX_SUBSLICES; k++)
                if (mask >> k & 1)
                    sum += in.ss_inc[k][ev - ZS_OA_BC_EU_ACTIVE];
            return sum;
        }
        return 0;
    }

    OaOut step(const OaIn &in)
    {
        OaOut out;
        uint32_t reason = 0;
        // The timer counts crossings only while it runs: ENABLE and TIMER already set
        // before this clock's write (see step 3).
        const uint32_t timer_on = ZS_FIELD_MASK(OA_CTL, ENABLE) | ZS_FIELD_MASK(OA_CTL, TIMER);
        const bool timer_was_on = (ctl & timer_on) == timer_on;
        // 1. MMIO write.
        if (in.reg_we) {
            const uint32_t v = in.reg_wdata;
            switch (in.reg_addr) {
            case ZS_REG_OA_CTL:
                if (!enabled() && (v & ZS_FIELD_MASK(OA_CTL, ENABLE))) {
                    std::memset(a, 0, sizeof(uint64_t) * ZS_OA_MARKER_COUNTER);
                    std::memset(bc, 0, sizeof bc);
                    ticks = 0;
                }
                ctl = v & kCtlMask;
                break;
            case ZS_REG_OA_BUF_BASE_LO: base_lo = v; head = tail = 0; break;
            case ZS_REG_OA_BUF_BASE_HI: base_hi = v; break;
            case ZS_REG_OA_BUF_SIZE: {
                const uint32_t l = ZS_FIELD_GET(v, OA_BUF_SIZE, LOG2);
                size_log2 = l < ZS_OA_BUF_LOG2_MIN ? ZS_OA_BUF_LOG2_MIN : l > ZS_OA_BUF_LOG2_MAX ? ZS_OA_BUF_LOG2_MAX : l;
                head = tail = 0;
                break;
            }
            case ZS_REG_OA_HEAD: head = v & (size() - 1) & ~(ZS_OA_REPORT_BYTES - 1); break;
            case ZS_REG_OA_STATUS: status &= ~v; break;
            case ZS_REG_OA_THRESHOLD: threshold = v; break;
            case ZS_REG_OA_MARKER:
                marker = v;
                reason |= ZS_OA_REASON_MARKER;
                break;
            case ZS_REG_OA_TRIGGER:
                if (v & 1)
                    reason |= ZS_OA_REASON_MMIO;
                break;
            default:
                if (in.reg_addr >= ZS_REG_OA_BC_SEL0 && in.reg_addr <= ZS_REG_OA_BC_SEL15 && in.reg_addr % 4 == 0)
                    sel[(in.reg_addr - ZS_REG_OA_BC_SEL0) / 4] = v;
                break;
            }
        }
        a[ZS_OA_MARKER_COUNTER] = marker;
        // 2. Increments.
        if (enabled()) {
            ticks += in.adv_cycles;
            for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
                a[k] = (a[k] + in.inc[k]) & kMask40;
            for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
                bc[i] += bc_source(sel[i], in);
        }
        // 3. Triggers.
        const uint32_t exp = ZS_FIELD_GET(ctl, OA_CTL, EXPONENT) + 1;
        // ts_last is the timestamp of the previous clock, however long ago: the feeder does
        // not clock the block while the counters are disabled, so a clock that turns the
        // timer on (ENABLE or TIMER 0 to 1) must not see the crossings of that gap (they
        // would make a TIMER report at a boundary that is no multiple of the period).
        if (timer_was_on && (ctl & ZS_FIELD_MASK(OA_CTL, TIMER)) && (in.timestamp >> exp) != (ts_last >> exp))
            reason |= ZS_OA_REASON_TIMER;
        ts_last = in.timestamp;
        if ((ctl & ZS_FIELD_MASK(OA_CTL, CTX_SWITCH)) && in.ctx_switch)
            reason |= ZS_OA_REASON_CTX_SWITCH;
        if (!enabled())
            reason = 0;
        // 4. Reports.
        if (reason && (ctl & ZS_FIELD_MASK(OA_CTL, BUFFER))) {
            if (unread() == size() - ZS_OA_REPORT_BYTES) {
                lost++;
                status |= ZS_FIELD_MASK(OA_STATUS, REPORT_LOST);
            } else {
                out.buf_wr = true;
                out.buf_addr = base() + tail;
                fill(out.buf_data,
                     reason << ZS_OA_ID_REASON_SHIFT | (in.ctx_id ? ZS_OA_ID_CONTEXT_VALID : 0) |
                         (in.clock_ratio & ZS_OA_ID_CLOCK_RATIO_MASK),
                     in);
                tail = (tail + ZS_OA_REPORT_BYTES) & (size() - 1);
                reports++;
                if (unread() == size() - ZS_OA_REPORT_BYTES)
                    status |= ZS_FIELD_MASK(OA_STATUS, OVERFLOW);
                if (threshold && unread() / ZS_OA_REPORT_BYTES >= threshold)
                    out.irq = true;
            }
        }
        if (in.rpc) {
            out.rpc_wr = true;
            out.rpc_addr = in.rpc_addr;
            fill(out.rpc_data, in.rpc_id, in);
        }
        return out;
    }
};

}  // namespace zesim

#endif
