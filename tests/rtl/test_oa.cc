// The OA block: the Verilated RTL (rtl/oa/zs_oa.sv) against its C++ twin
// (model/oa_twin.h) through OaChecked (model/oa_rtl.h): after every clock every output,
// the counters, head / tail / status and the MMIO read of the clock's reg_addr (a random
// register when the clock writes none) are compared; all registers every 4096 clocks.
//
//   test_oa [CLOCKS [SEED]]          directed cases, then CLOCKS random clocks
//   test_oa --random-only [CLOCKS [SEED]]   only the random clocks
//   test_oa --bench CLOCKS [SEED]    clocks/s of the twin, the RTL and both (one stimulus)
//   test_oa --waves FST --reports FILE [--window A:B] CLOCKS [SEED]
//                                    the same run with an FST of the RTL (cycles [A, B)),
//                                    and every buffer report with its waveform time
//                                    (tests/rtl/oa_waves.py reads both back)
//
// Directed: the 40-bit wrap, a full 4 KiB buffer (overflow, lost reports, status,
// threshold interrupts), every trigger in one clock with others (timer + marker or MMIO
// trigger + context switch + query report, and MMIO writes of other registers), the
// timer on its exact boundaries, a timer turned on after a gap.  Random: phases of small
// or huge increments, spans of up to 2^20 cycles, a KMD moving the head at random,
// enable / disable, B/C selects reprogrammed, threshold, buffer size and base writes,
// coincidences forced one clock in twenty.  Exits 1 on the first difference, with both
// sides printed; or when the run missed a case it must cover.
#include <chrono>
#include <cstdarg>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "oa_rtl.h"
#include "oa_twin.h"

using namespace zesim;

namespace {

constexpr uint32_t kEnable = ZS_FIELD_MASK(OA_CTL, ENABLE), kTimer = ZS_FIELD_MASK(OA_CTL, TIMER),
                   kCtxSw = ZS_FIELD_MASK(OA_CTL, CTX_SWITCH), kBuffer = ZS_FIELD_MASK(OA_CTL, BUFFER);
constexpr uint32_t kLost = ZS_FIELD_MASK(OA_STATUS, REPORT_LOST), kOverflow = ZS_FIELD_MASK(OA_STATUS, OVERFLOW);

uint32_t ctl_value(bool timer, uint32_t exponent, bool ctxsw, bool buffer = true)
{
    return kEnable | (timer ? kTimer : 0) | ZS_FIELD_PREP(OA_CTL, EXPONENT, exponent) | (ctxsw ? kCtxSw : 0) |
           (buffer ? kBuffer : 0);
}

struct Rng {  // xorshift64*: cheap enough for ~100 numbers a clock
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x1234567) {}
    uint64_t next()
    {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ull;
    }
    uint32_t u32() { return uint32_t(next() >> 32); }
    uint32_t below(uint32_t n) { return uint32_t((next() >> 32) * n >> 32); }
    bool chance(uint32_t percent) { return below(100) < percent; }
};

[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::printf("test_oa: FAILED: ");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
    std::exit(1);
}

void expect(bool ok, const char *what)
{
    if (!ok)
        fail("%s", what);
}

struct Coverage {
    uint64_t clocks = 0, reads = 0, reports = 0, lost = 0, overflows = 0, irqs = 0, rpcs = 0, rpc_with_buf = 0;
    uint64_t wraps = 0, enables = 0, disables = 0, sel_writes = 0, head_moves = 0, ctl_writes = 0;
    uint64_t timer_reports = 0, ctx_reports = 0, marker_reports = 0, mmio_reports = 0;
    uint64_t write_with_report = 0;  // a clock writing a non-trigger register and reporting
    uint32_t reason_masks = 0;       // bit m: a report with reason bits m
    uint64_t bc_kinds[3] = {};       // clocks counting an event line / a sub-slice sum / nothing
};

// The stimulus of one run, kept to replay it (--bench) or to drive the block.
struct Bench {
    OaChecked chk;
    Coverage cov;
    uint64_t cycle = 0;  // GT cycle at the boundary after the last clock
    uint64_t ts = 0, ts_frac = 0;
    uint32_t ts_num = 1, ts_den = 1;  // timestamp ticks per cycle
    uint32_t ctx = 0;
    std::FILE *reports = nullptr;
    bool record = false;
    std::vector<OaIn> recorded;

    Bench() { chk.set_log(stdout); }

    // Advance the timestamp over `adv` cycles.
    void advance(uint32_t adv)
    {
        cycle += adv;
        const uint64_t t = uint64_t(adv) * ts_num + ts_frac;
        ts += t / ts_den;
        ts_frac = t % ts_den;
    }

    OaOut clock(OaIn in)
    {
        const OaTwin &tw = chk.twin();
        advance(in.adv_cycles);
        in.timestamp = ts;
        if (record)
            recorded.push_back(in);
        uint64_t a_before[ZS_OA_EVENT_LINES];
        std::memcpy(a_before, tw.a, sizeof a_before);
        const bool was_enabled = tw.enabled();
        const uint32_t status_before = tw.status, head_before = tw.head, lost_before = tw.lost;
        OaOut out;
        if (!chk.step(in, out, cycle))
            fail("RTL and twin differ after clock %" PRIu64 " (cycle %" PRIu64 "), see above", cov.clocks + 1, cycle);
        cov.clocks++;
        cov.reads++;
        if ((cov.clocks & 4095) == 0 && !chk.compare_registers())
            fail("a register read differs at clock %" PRIu64, cov.clocks);
        // Coverage, from the twin (equal to the RTL by now).
        const bool clear = in.reg_we && in.reg_addr == ZS_REG_OA_CTL && !was_enabled && tw.enabled();
        if (tw.enabled() && !clear)
            for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
                cov.wraps += tw.a[k] < a_before[k];
        cov.enables += clear;
        cov.disables += was_enabled && !tw.enabled();
        if (in.reg_we) {
            cov.ctl_writes += in.reg_addr == ZS_REG_OA_CTL;
            cov.sel_writes += in.reg_addr >= ZS_REG_OA_BC_SEL0 && in.reg_addr <= ZS_REG_OA_BC_SEL15;
            cov.head_moves += in.reg_addr == ZS_REG_OA_HEAD && tw.head != head_before;
        }
        if (tw.enabled())
            for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++) {
                const uint32_t ev = ZS_FIELD_GET(tw.sel[i], OA_BC_SEL0, EVENT);
                cov.bc_kinds[ev < ZS_OA_EVENT_LINES ? 0 : ev >= ZS_OA_BC_EU_ACTIVE && ev <= ZS_OA_BC_EU_IDLE ? 1 : 2]++;
            }
        cov.lost += tw.lost != lost_before;
        cov.overflows += (tw.status & kOverflow) && !(status_before & kOverflow);
        cov.irqs += out.irq;
        if (out.buf_wr) {
            const uint32_t r = out.buf_data[0] >> ZS_OA_ID_REASON_SHIFT & ZS_OA_ID_REASON_MASK;
            cov.reports++;
            cov.reason_masks |= 1u << r;
            cov.timer_reports += r & ZS_OA_REASON_TIMER ? 1 : 0;
            cov.marker_reports += r & ZS_OA_REASON_MARKER ? 1 : 0;
            cov.mmio_reports += r & ZS_OA_REASON_MMIO ? 1 : 0;
            cov.ctx_reports += r & ZS_OA_REASON_CTX_SWITCH ? 1 : 0;
            if (in.reg_we && in.reg_addr != ZS_REG_OA_MARKER && in.reg_addr != ZS_REG_OA_TRIGGER)
                cov.write_with_report++;
            if (reports) {
                std::fprintf(reports, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %u", cycle, chk.rtl().dump_time(),
                             out.buf_addr, tw.tail);
                for (unsigned k = 0; k < ZS_OA_REPORT_DWORDS; k++)
                    std::fprintf(reports, " %08x", out.buf_data[k]);
                std::fprintf(reports, "\n");
            }
        }
        if (out.rpc_wr) {
            cov.rpcs++;
            cov.rpc_with_buf += out.buf_wr;
        }
        return out;
    }

    OaOut write(uint32_t off, uint32_t v, uint32_t adv = 0)
    {
        OaIn in;
        in.reg_we = true;
        in.reg_addr = off;
        in.reg_wdata = v;
        in.adv_cycles = adv;
        in.ctx_id = ctx;
        in.clock_ratio = 60;
        return clock(in);
    }
    OaOut idle(uint32_t adv)
    {
        OaIn in;
        in.adv_cycles = adv;
        in.ctx_id = ctx;
        in.clock_ratio = 60;
        in.reg_addr = ZS_REG_OA_TAIL;
        return clock(in);
    }
    // Cycles until the timestamp reaches the next multiple of 2^(exponent+1).
    uint64_t cycles_to_timer(uint32_t exponent) const
    {
        const uint64_t period = 1ull << (exponent + 1), next = (ts / period + 1) * period;
        // smallest n with floor(((n * num) + frac) / den) >= next - ts
        const uint64_t need = (next - ts) * ts_den;
        const uint64_t n = need > ts_frac ? (need - ts_frac + ts_num - 1) / ts_num : 0;
        return n;
    }
};

// ---------------------------------------------------------------------------------------
// Directed cases.

void directed(Bench &b)
{
    const OaTwin &tw = b.chk.twin();
    expect(b.chk.compare_registers(), "reset values");

    // 1. The 40-bit wrap: every line at 2^32 - 1 per clock wraps after 256 clocks.
    b.write(ZS_REG_OA_CTL, ctl_value(false, 0, false));
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
        b.write(ZS_REG_OA_BC_SEL0 + 4 * i, i < 8 ? i * 4 : (ZS_OA_BC_EU_ACTIVE + i % 3) | (0xffffu << 16));
    const uint64_t wraps0 = b.cov.wraps;
    for (unsigned c = 0; c < 300; c++) {
        OaIn in;
        in.adv_cycles = 0xffffffffu;
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
            in.inc[k] = 0xffffffffu - k;
        for (unsigned s = 0; s < ZS_OA_MAX_SUBSLICES; s++)
            for (unsigned j = 0; j < 3; j++)
                in.ss_inc[s][j] = 0x0fffffffu + s;
        in.clock_ratio = 60;
        b.clock(in);
    }
    expect(b.cov.wraps - wraps0 == ZS_OA_EVENT_LINES, "each of A0-A29 wrapped once at 2^40 in 300 clocks");
    OaOut o = b.write(ZS_REG_OA_TRIGGER, 1);
    expect(o.buf_wr && zs_oa_a(reinterpret_cast<const uint8_t *>(o.buf_data), 0) == tw.a[0] &&
               tw.a[0] == ((300ull * 0xffffffffu) & OaTwin::kMask40),
           "the report after the wrap holds A0 mod 2^40");

    // 2. A full 4 KiB buffer: 15 reports fit, the next 5 are lost; OVERFLOW at the 15th,
    // REPORT_LOST at the 16th; threshold 4: interrupts from the 4th unread report on.
    b.write(ZS_REG_OA_BUF_BASE_HI, 0x1);
    b.write(ZS_REG_OA_BUF_BASE_LO, 0x80000fffu);  // bits 11:0 ignored; head = tail = 0
    b.write(ZS_REG_OA_BUF_SIZE, 12);
    b.write(ZS_REG_OA_STATUS, ~0u);
    b.write(ZS_REG_OA_THRESHOLD, 4);
    const uint32_t reports0 = tw.reports, lost0 = tw.lost;
    unsigned irqs = 0;
    for (unsigned i = 0; i < 20; i++) {
        o = b.write(ZS_REG_OA_TRIGGER, 1, 7);
        irqs += o.irq;
        if (i < 15)
            expect(o.buf_wr && o.buf_addr == 0x180000000ull + 256 * i, "a report at base + tail");
        else
            expect(!o.buf_wr, "no report into a full buffer");
        if (i == 14)
            expect(tw.status == kOverflow, "OVERFLOW when the last slot fills, no loss yet");
    }
    expect(tw.reports - reports0 == 15 && tw.lost - lost0 == 5 && tw.status == (kLost | kOverflow) &&
               tw.tail == 15 * 256 && irqs == 12,
           "4 KiB buffer: 15 written, 5 lost, both status bits, 12 threshold interrupts");
    b.write(ZS_REG_OA_STATUS, kLost);
    expect(tw.status == kOverflow, "OA_STATUS is write-1-to-clear");
    b.write(ZS_REG_OA_HEAD, 15 * 256 + 0x7f);  // the KMD read everything (low bits ignored)
    o = b.write(ZS_REG_OA_TRIGGER, 1);
    expect(o.buf_wr && tw.tail == 0 && tw.unread() == 256 && !o.irq, "the tail wraps; below the threshold");
    // The buffer address is a 64-bit sum: base bits 31:12 all ones plus the tail carries.
    b.write(ZS_REG_OA_BUF_BASE_LO, 0xfffff000u);
    b.write(ZS_REG_OA_BUF_BASE_HI, 0x5);
    b.write(ZS_REG_OA_TRIGGER, 1);
    o = b.write(ZS_REG_OA_TRIGGER, 1);
    expect(o.buf_addr == 0x5fffff100ull, "base 0x5_fffff000 + tail 0x100");
    b.write(ZS_REG_OA_BUF_BASE_HI, 0x1);
    b.write(ZS_REG_OA_BUF_BASE_LO, 0x80000000u);

    // 3. Every trigger with others in one clock.  Timestamp = cycle; exponent 3: period 16.
    b.ts_num = b.ts_den = 1;
    b.write(ZS_REG_OA_THRESHOLD, 1);
    b.write(ZS_REG_OA_HEAD, tw.tail);
    b.write(ZS_REG_OA_CTL, ctl_value(true, 3, true));
    for (unsigned variant = 0; variant < 12; variant++) {
        OaIn in;
        in.adv_cycles = uint32_t(b.cycles_to_timer(3));
        in.reg_we = true;
        const uint32_t regs[] = {ZS_REG_OA_MARKER, ZS_REG_OA_TRIGGER, ZS_REG_OA_HEAD, ZS_REG_OA_STATUS,
                                 ZS_REG_OA_BC_SEL3, ZS_REG_OA_THRESHOLD};
        in.reg_addr = regs[variant % 6];
        in.reg_wdata = in.reg_addr == ZS_REG_OA_TRIGGER ? 1
                       : in.reg_addr == ZS_REG_OA_HEAD  ? tw.tail
                       : in.reg_addr == ZS_REG_OA_THRESHOLD ? 2
                                                        : 0x1234500 + variant;
        in.ctx_switch = variant < 6;
        b.ctx = in.ctx_switch ? b.ctx + 1 : b.ctx;
        in.ctx_id = b.ctx;
        in.rpc = true;
        in.rpc_addr = 0x2000 + 64 * variant;
        in.rpc_id = 0xabc0 + variant;
        in.clock_ratio = 60;
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
            in.inc[k] = k + variant;
        o = b.clock(in);
        uint32_t want = ZS_OA_REASON_TIMER | (variant < 6 ? ZS_OA_REASON_CTX_SWITCH : 0);
        want |= in.reg_addr == ZS_REG_OA_MARKER ? ZS_OA_REASON_MARKER : in.reg_addr == ZS_REG_OA_TRIGGER ? ZS_OA_REASON_MMIO : 0;
        expect(o.buf_wr && o.rpc_wr && (o.buf_data[0] >> ZS_OA_ID_REASON_SHIFT) == want &&
                   std::memcmp(o.buf_data + 1, o.rpc_data + 1, 252) == 0 && o.rpc_data[0] == in.rpc_id,
               "coinciding triggers: one buffer report with all reasons, the query report with the same counters");
        b.write(ZS_REG_OA_HEAD, tw.tail);
    }

    // 4. The timer on its exact boundaries: one cycle a clock, exponent 2 (period 8).
    b.write(ZS_REG_OA_CTL, ctl_value(true, 2, false));
    for (unsigned c = 0; c < 200; c++) {
        o = b.idle(1);
        expect(o.buf_wr == (b.ts % 8 == 0), "a timer report exactly when the timestamp is a multiple of 8");
        b.write(ZS_REG_OA_HEAD, tw.tail);
    }
    // With 3 timestamp ticks per cycle, a boundary crossed between clocks reports once.
    b.ts_num = 3;
    for (unsigned c = 0; c < 100; c++) {
        const uint64_t before = b.ts;
        o = b.idle(1);
        expect(o.buf_wr == (b.ts / 8 != before / 8), "a timer report at the first boundary past a multiple");
        b.write(ZS_REG_OA_HEAD, tw.tail);
    }
    // 5. Turned on after a gap the block did not see: no report in the enabling clock.
    b.ts_num = 1;
    b.write(ZS_REG_OA_CTL, 0);
    b.advance(100000);  // the feeder does not clock a disabled block
    o = b.write(ZS_REG_OA_CTL, ctl_value(true, 2, false));
    expect(!o.buf_wr, "enabling the timer makes no report of the gap");
    o = b.idle(uint32_t(b.cycles_to_timer(2)));
    expect(o.buf_wr && b.ts % 8 == 0, "the first timer report after enabling is on a boundary");
    // Turned off in a clock that crosses a boundary: nothing.
    o = b.write(ZS_REG_OA_CTL, ctl_value(false, 2, false), uint32_t(b.cycles_to_timer(2)));
    expect(!o.buf_wr, "no timer report in the clock that turns the timer off");
    // Disabled: the increments do not count, markers still load A35, triggers report nothing.
    b.write(ZS_REG_OA_CTL, kBuffer | kTimer);
    const uint64_t a3 = tw.a[3];
    OaIn in;
    in.reg_we = true;
    in.reg_addr = ZS_REG_OA_MARKER;
    in.reg_wdata = 0xfeedf00d;
    in.inc[3] = 5;
    in.adv_cycles = 9;
    o = b.clock(in);
    expect(!o.buf_wr && tw.a[3] == a3 && tw.a[ZS_OA_MARKER_COUNTER] == 0xfeedf00d, "disabled: marker only");
    std::printf("test_oa: directed cases passed (%" PRIu64 " clocks)\n", b.cov.clocks);
}

// ---------------------------------------------------------------------------------------
// Random clocks.

struct Phase {
    unsigned inc_mode = 0;   // 0 small, 1 huge (wraps), 2 mixed, 3 sparse events
    unsigned write_pct = 10;
    unsigned head_pct = 30;  // of the writes: the KMD moves the head
    unsigned left = 0;
};

uint32_t random_sel(Rng &r)
{
    static const uint32_t codes[] = {ZS_OA_BC_EU_ACTIVE, ZS_OA_BC_EU_STALL, ZS_OA_BC_EU_IDLE, 30, 31, 35, 0xff};
    uint32_t ev;
    switch (r.below(4)) {
    case 0:
    case 1: ev = r.below(ZS_OA_EVENT_LINES); break;
    case 2: ev = codes[r.below(7)]; break;
    default: ev = r.below(256); break;
    }
    return ev | (r.chance(20) ? r.u32() & 0xff00 : 0) | (r.chance(30) ? 0xffffu << 16 : r.u32() & 0xffff0000u);
}

void random_clocks(Bench &b, Rng &r, uint64_t n)
{
    const OaTwin &tw = b.chk.twin();
    static const uint32_t read_regs[] = {
        ZS_REG_OA_CTL,      ZS_REG_OA_BUF_BASE_LO, ZS_REG_OA_BUF_BASE_HI, ZS_REG_OA_BUF_SIZE, ZS_REG_OA_HEAD,
        ZS_REG_OA_TAIL,     ZS_REG_OA_STATUS,      ZS_REG_OA_THRESHOLD,   ZS_REG_OA_MARKER,   ZS_REG_OA_TRIGGER,
        ZS_REG_OA_REPORTS,  ZS_REG_OA_LOST,        0x4030,                0x403c,             ZS_REG_OA_BC_SEL0 + 2,
        ZS_REG_OA_BC_SEL15 + 4, 0x3000,            0x5040,                0x4fff,             0x14040};
    Phase ph;
    uint32_t exponent = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (ph.left-- == 0) {
            ph.left = 500 + r.below(20000);
            ph.inc_mode = r.below(4);
            ph.write_pct = 2 + r.below(40);
            ph.head_pct = 5 + r.below(60);
            if (r.chance(30)) {  // timestamp ticks per cycle: 1, 3, or 19.2 MHz at 1 GHz
                static const uint32_t num[] = {1, 3, 192, 1}, den[] = {1, 1, 10000, 7};
                const unsigned k = r.below(4);
                b.ts_num = num[k];
                b.ts_den = den[k];
            }
        }
        OaIn in;
        in.clock_ratio = r.chance(99) ? 60 : r.u32();
        // Time: write-only clocks, single cycles, spans, long idle spans.
        const uint32_t t = r.below(100);
        in.adv_cycles = t < 8 ? 0 : t < 60 ? 1 + r.below(8) : t < 95 ? 9 + r.below(2000) : r.below(1u << 20);
        // Increments.
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++) {
            switch (ph.inc_mode) {
            case 0: in.inc[k] = r.below(in.adv_cycles * 4 + 2); break;
            case 1: in.inc[k] = 0xffffffffu - r.below(1u << 24); break;
            case 2: in.inc[k] = r.chance(50) ? r.u32() : r.below(64); break;
            default: in.inc[k] = r.chance(10) ? r.below(100) : 0; break;
            }
        }
        for (unsigned s = 0; s < ZS_OA_MAX_SUBSLICES; s++)
            for (unsigned j = 0; j < 3; j++)
                in.ss_inc[s][j] = ph.inc_mode == 1 ? r.u32() : r.below(in.adv_cycles * 8 + 1);
        // Context switches and query reports.
        if (r.chance(3)) {
            in.ctx_switch = true;
            b.ctx = r.chance(20) ? 0 : r.chance(50) ? b.ctx + 1 : r.u32();
        }
        in.ctx_id = b.ctx;
        if (r.chance(3)) {
            in.rpc = true;
            in.rpc_addr = r.next() & ~63ull;
            in.rpc_id = r.u32();
        }
        // MMIO: a write, or a read of a random register.
        if (r.chance(ph.write_pct)) {
            in.reg_we = true;
            in.reg_wdata = r.u32();
            const uint32_t w = r.below(100);
            if (w < ph.head_pct) {  // the KMD reads some reports: head moves towards the tail
                in.reg_addr = ZS_REG_OA_HEAD;
                const uint32_t unread = tw.unread() / ZS_OA_REPORT_BYTES;
                in.reg_wdata = r.chance(5) ? r.u32()
                                           : (tw.head + ZS_OA_REPORT_BYTES * r.below(unread + 1)) & (tw.size() - 1);
            } else if (w < ph.head_pct + 12) {
                in.reg_addr = ZS_REG_OA_CTL;
                exponent = r.chance(80) ? r.below(6) : r.below(32);
                in.reg_wdata = (r.chance(85) ? kEnable : 0) | (r.chance(75) ? kTimer : 0) |
                               ZS_FIELD_PREP(OA_CTL, EXPONENT, exponent) | (r.chance(60) ? kCtxSw : 0) |
                               (r.chance(90) ? kBuffer : 0) | (r.chance(10) ? r.u32() & ~0x1ffu : 0);
            } else if (w < ph.head_pct + 24) {
                in.reg_addr = ZS_REG_OA_MARKER;
            } else if (w < ph.head_pct + 36) {
                in.reg_addr = ZS_REG_OA_TRIGGER;
                in.reg_wdata = r.chance(80) ? 1 : r.u32();
            } else if (w < ph.head_pct + 50) {
                in.reg_addr = ZS_REG_OA_BC_SEL0 + 4 * r.below(ZS_OA_BC_COUNTERS);
                in.reg_wdata = random_sel(r);
            } else if (w < ph.head_pct + 56) {
                in.reg_addr = ZS_REG_OA_STATUS;
            } else if (w < ph.head_pct + 61) {
                in.reg_addr = ZS_REG_OA_THRESHOLD;
                in.reg_wdata = r.chance(90) ? r.below(17) : r.u32();
            } else if (w < ph.head_pct + 63) {
                in.reg_addr = ZS_REG_OA_BUF_SIZE;
                in.reg_wdata = r.chance(70) ? 12 : r.chance(50) ? 13 : r.u32();
            } else if (w < ph.head_pct + 65) {
                in.reg_addr = r.chance(50) ? ZS_REG_OA_BUF_BASE_LO : ZS_REG_OA_BUF_BASE_HI;
            } else {
                in.reg_addr = read_regs[r.below(sizeof read_regs / sizeof *read_regs)];
            }
        } else {
            in.reg_addr = r.chance(70) ? read_regs[r.below(12)]
                          : r.chance(80) ? ZS_REG_OA_BC_SEL0 + 4 * r.below(ZS_OA_BC_COUNTERS)
                                         : read_regs[r.below(sizeof read_regs / sizeof *read_regs)];
        }
        // One clock in twenty: land on the next timer boundary with the other triggers.
        if (r.chance(5) && (tw.ctl & kTimer)) {
            const uint64_t n = b.cycles_to_timer(ZS_FIELD_GET(tw.ctl, OA_CTL, EXPONENT));
            if (n <= 0xffffffffu) {
                in.adv_cycles = uint32_t(n);
                in.ctx_switch = r.chance(70);
                if (in.ctx_switch)
                    in.ctx_id = b.ctx = b.ctx + 1;
                in.rpc = r.chance(70);
                if (!in.reg_we || r.chance(50)) {
                    in.reg_we = true;
                    in.reg_addr = r.chance(50) ? ZS_REG_OA_MARKER : ZS_REG_OA_TRIGGER;
                    in.reg_wdata = in.reg_addr == ZS_REG_OA_TRIGGER ? 1 : r.u32();
                }
            }
        }
        b.clock(in);
    }
}

void summary(const Bench &b, double secs)
{
    const Coverage &c = b.cov;
    unsigned masks = 0;
    for (unsigned m = 0; m < 32; m++)
        masks += c.reason_masks >> m & 1;
    std::printf("test_oa: %" PRIu64 " clocks (%" PRIu64 " GT cycles) in %.1f s (%.0f clocks/s), RTL = twin on every "
                "output, counter and read (%" PRIu64 " reads)\n"
                "  reports %" PRIu64 " (timer %" PRIu64 ", marker %" PRIu64 ", MMIO %" PRIu64 ", ctx switch %" PRIu64
                "; %u reason combinations), query reports %" PRIu64 " (%" PRIu64 " with a buffer report), lost %" PRIu64 ", "
                "overflows %" PRIu64 ", threshold irqs %" PRIu64 "\n"
                "  40-bit wraps %" PRIu64 ", enables %" PRIu64 ", disables %" PRIu64 ", OA_CTL writes %" PRIu64
                ", BC_SEL writes %" PRIu64 ", head moves %" PRIu64 ", reports in a clock writing another register %" PRIu64
                "\n  B/C counter-clocks: event line %" PRIu64 ", sub-slice sum %" PRIu64 ", nothing %" PRIu64 "\n",
                c.clocks, b.cycle, secs, c.clocks / secs, c.reads, c.reports, c.timer_reports, c.marker_reports,
                c.mmio_reports, c.ctx_reports, masks, c.rpcs, c.rpc_with_buf, c.lost, c.overflows, c.irqs,
                c.wraps, c.enables, c.disables, c.ctl_writes, c.sel_writes, c.head_moves, c.write_with_report,
                c.bc_kinds[0], c.bc_kinds[1], c.bc_kinds[2]);
}

void check_coverage(const Bench &b)
{
    const Coverage &c = b.cov;
    // Reason masks a report can carry: any of TIMER and CTX_SWITCH with none, MARKER or
    // MMIO (one MMIO write a clock): 11 non-empty combinations.
    for (uint32_t m = 1; m < 16; m++) {
        if ((m & ZS_OA_REASON_MARKER) && (m & ZS_OA_REASON_MMIO))
            continue;
        if (!(c.reason_masks >> m & 1))
            fail("no report with reason bits 0x%x", m);
    }
    expect(c.wraps > 1000 && c.lost > 100 && c.overflows > 100 && c.irqs > 1000 && c.enables > 100 &&
               c.disables > 100 && c.sel_writes > 1000 && c.head_moves > 1000 && c.rpc_with_buf > 100 &&
               c.write_with_report > 100 && c.bc_kinds[0] && c.bc_kinds[1] && c.bc_kinds[2],
           "the random run missed a case (see the counts above)");
}

// --bench: one recorded stimulus through the twin, the RTL, and both.
void bench(uint64_t n, uint32_t seed)
{
    Bench b;
    b.record = true;
    Rng r(seed);
    random_clocks(b, r, n);
    const std::vector<OaIn> &ins = b.recorded;
    auto rate = [&](auto &&run) {
        const auto t0 = std::chrono::steady_clock::now();
        uint64_t sink = run();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf(" %.0f clocks/s (%.2f s, %" PRIu64 ")", ins.size() / s, s, sink);
        return s;
    };
    std::printf("test_oa: bench, %zu recorded clocks:\n  twin:   ", ins.size());
    rate([&] {
        OaTwin t;
        uint64_t w = 0;
        for (const OaIn &in : ins)
            w += t.step(in).buf_wr;
        return w;
    });
    std::printf("\n  RTL:    ");
    rate([&] {
        OaRtl t;
        uint64_t w = 0;
        for (const OaIn &in : ins)
            w += t.step(in).buf_wr;
        return w;
    });
    std::printf("\n  checked:");
    rate([&] {
        OaChecked t;
        uint64_t w = 0;
        OaOut o;
        for (const OaIn &in : ins) {
            if (!t.step(in, o))
                fail("difference in the bench");
            w += o.buf_wr;
        }
        return w;
    });
    std::printf("\n");
}

}  // namespace

int main(int argc, char **argv)
{
    std::string waves, reports, window;
    bool do_bench = false, do_directed = true;
    std::vector<const char *> pos;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--waves" && i + 1 < argc)
            waves = argv[++i];
        else if (a == "--reports" && i + 1 < argc)
            reports = argv[++i];
        else if (a == "--window" && i + 1 < argc)
            window = argv[++i];
        else if (a == "--bench")
            do_bench = true;
        else if (a == "--random-only")
            do_directed = false;
        else if (a[0] == '-') {
            std::fprintf(stderr, "usage: test_oa [--bench | --random-only | --waves FST --reports FILE [--window A:B]] [CLOCKS [SEED]]\n");
            return 2;
        } else
            pos.push_back(argv[i]);
    }
    const uint64_t clocks = pos.size() > 0 ? std::strtoull(pos[0], nullptr, 0) : 10000000;
    const uint32_t seed = pos.size() > 1 ? uint32_t(std::strtoul(pos[1], nullptr, 0)) : 1;
    if (do_bench) {
        bench(clocks, seed);
        return 0;
    }
    Bench b;
    if (!waves.empty()) {
        uint64_t from = 0, to = UINT64_MAX;
        if (!window.empty() && std::sscanf(window.c_str(), "%" SCNu64 ":%" SCNu64, &from, &to) != 2)
            fail("--window A:B");
        b.chk.open_trace(waves, from, to);
        b.reports = std::fopen(reports.c_str(), "w");
        if (!b.reports)
            fail("cannot write %s", reports.c_str());
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (do_directed)
        directed(b);
    Rng r(seed);
    random_clocks(b, r, clocks);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!b.chk.compare_registers())
        fail("a register read differs at the end");
    if (!waves.empty())
        std::printf("test_oa: waves: %" PRIu64 " clocks dumped, times %" PRIu64 " to %" PRIu64 "\n",
                    b.chk.rtl().dumped(), b.chk.rtl().first_dump_time(), b.chk.rtl().dump_time());
    b.chk.close_trace();
    if (b.reports)
        std::fclose(b.reports);
    summary(b, secs);
    if (clocks >= 1000000)
        check_coverage(b);
    return 0;
}
