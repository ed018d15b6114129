// The EU debug unit (rtl/debug/zs_debug.sv) against its C++ twin (model/debug_twin.h),
// compared after every clock by DebugChecked (model/debug_rtl.h): directed cases whose
// expected values are written down here (so the twin is checked against docs/debug.md
// section 1, not only against the RTL), then randomized halt / resume / breakpoint /
// fault / exception / thread-end sequences with MMIO writes and reads.
//
//   test_debug [clocks [seed]] [--fst path [--log path]] [--random-only]   (exit 0: no difference)
// --log writes, per random clock n, the twin's state after it (the waveform at 2n+1):
// "n irq stopped attn_count attn halt exc" with the bitmaps in hex, thread 1023 first
// (tests/rtl/debug_waves.py reads the FST back against it).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "debug_rtl.h"

using namespace zesim;

namespace {

int failures = 0;

#define EXPECT(cond)                                                                                                \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                                \
            failures++;                                                                                             \
        }                                                                                                           \
    } while (0)

struct Bench {
    DebugChecked dc;
    bool clk(const DebugIn &in)
    {
        if (!dc.step(in)) {
            failures++;
            return false;
        }
        return true;
    }
    void idle() { clk(DebugIn{}); }
    void wr(uint32_t a, uint32_t d)
    {
        DebugIn in;
        in.reg_we = true, in.reg_addr = a, in.reg_wdata = d;
        clk(in);
    }
    void stop(uint32_t t, uint32_t reason)
    {
        DebugIn in;
        in.stop_valid = true, in.stop_tid = t, in.stop_reason = reason;
        clk(in);
    }
    void end(uint32_t t)
    {
        DebugIn in;
        in.end_valid = true, in.end_tid = t;
        clk(in);
    }
    uint32_t rd(uint32_t a) { return dc.read(a); }
    uint32_t reason(uint32_t t)
    {
        wr(ZS_REG_DBG_THREAD, t);
        return rd(ZS_REG_DBG_REASON);
    }
    bool attn(uint32_t t) const { return DebugTwin::bit(dc.twin().attn, t); }
    bool halt(uint32_t t) const { return DebugTwin::bit(dc.twin().halt, t); }
    bool exc(uint32_t t) const { return DebugTwin::bit(dc.twin().exc, t); }
    bool irq() const { return dc.twin().irq; }
    uint32_t stopped() const { return dc.twin().stopped; }
};

void directed()
{
    const uint32_t R_ATTN = ZS_FIELD_MASK(DBG_REASON, ATTN);
    {  // Reset values and the info register.
        Bench b;
        EXPECT(b.rd(ZS_REG_DBG_INFO) == DebugTwin::kThreads);
        EXPECT(b.rd(ZS_REG_DBG_ATTN_COUNT) == 0 && b.rd(ZS_REG_DBG_CTL) == 0);
    }
    {  // A breakpoint stop: attention, reason, counter, the interrupt pulse (one clock).
        Bench b;
        b.wr(ZS_REG_DBG_CTL, 1);
        b.stop(37, kDbgBreakpoint);
        EXPECT(b.attn(37) && b.irq() && b.stopped() == 1);
        b.idle();
        EXPECT(!b.irq());
        EXPECT(b.reason(37) == (kDbgBreakpoint | R_ATTN));
        b.wr(ZS_REG_DBG_WORD, 1);
        EXPECT(b.rd(ZS_REG_DBG_ATTN) == 1u << 5);
        // Interrupt disabled: attention without a pulse.
        b.wr(ZS_REG_DBG_CTL, 0);
        b.stop(1023, kDbgPageFault);
        EXPECT(b.attn(1023) && !b.irq() && b.stopped() == 2 && b.rd(ZS_REG_DBG_ATTN_COUNT) == 2);
    }
    {  // An attention already pending: a second stop of the thread is not a second stop.
        Bench b;
        b.wr(ZS_REG_DBG_CTL, 1);
        b.stop(5, kDbgBreakpoint);
        EXPECT(b.irq());
        b.stop(5, kDbgPageFault);
        EXPECT(!b.irq() && b.stopped() == 1);
        EXPECT(b.reason(5) == (kDbgBreakpoint | R_ATTN));
        // A halt request for a thread in attention is dropped.
        b.wr(ZS_REG_DBG_WORD, 0);
        b.wr(ZS_REG_DBG_HALT, 1u << 5 | 1u << 6);
        EXPECT(!b.halt(5) && b.halt(6));
        EXPECT(b.rd(ZS_REG_DBG_HALT) == 1u << 6);
        // Resumed, the thread can stop again: a new pulse, a new reason.
        b.wr(ZS_REG_DBG_RESUME, 1u << 5);
        EXPECT(!b.attn(5) && b.reason(5) == 0);
        b.stop(5, kDbgHalt);
        EXPECT(b.irq() && b.stopped() == 2 && b.reason(5) == (kDbgHalt | R_ATTN));
    }
    {  // Resume of a thread not stopped: ignored; invalid reasons are ignored too.
        Bench b;
        b.stop(3, kDbgException);
        b.wr(ZS_REG_DBG_RESUME, 1u << 7);
        EXPECT(b.attn(3) && !b.attn(7) && b.rd(ZS_REG_DBG_ATTN_COUNT) == 1 && b.stopped() == 1);
        b.stop(7, 0);
        b.stop(7, 5);
        EXPECT(!b.attn(7) && b.stopped() == 1);
        b.stop(7, kDbgBreakpoint);
        EXPECT(b.attn(7) && b.stopped() == 2);
        b.wr(ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, RESUME));
        EXPECT(!b.attn(3) && !b.attn(7) && b.rd(ZS_REG_DBG_ATTN_COUNT) == 0);
    }
    {  // A thread ending while a halt is pending: no request, no attention.
        Bench b;
        b.wr(ZS_REG_DBG_WORD, 2);
        b.wr(ZS_REG_DBG_HALT, 1u << 9);  // thread 73
        b.wr(ZS_REG_DBG_EXC, 1u << 9);
        EXPECT(b.halt(73) && b.exc(73));
        b.end(73);
        EXPECT(!b.halt(73) && !b.exc(73) && !b.attn(73));
        // The halt request and the end in one clock: the end wins.
        DebugIn in;
        in.reg_we = true, in.reg_addr = ZS_REG_DBG_HALT, in.reg_wdata = 1u << 10, in.end_valid = true,
        in.end_tid = 74;
        b.clk(in);
        EXPECT(!b.halt(74));
        // The halted stop and the end in one clock: the end wins (not attention, not counted).
        b.wr(ZS_REG_DBG_HALT, 1u << 11);
        in = DebugIn{};
        in.stop_valid = true, in.stop_tid = 75, in.stop_reason = kDbgHalt, in.end_valid = true, in.end_tid = 75;
        b.clk(in);
        EXPECT(!b.attn(75) && !b.halt(75) && b.stopped() == 0);
        // A stopped thread that ends leaves attention.
        b.stop(76, kDbgBreakpoint);
        b.end(76);
        EXPECT(!b.attn(76) && b.reason(76) == 0);
    }
    {  // Halt all: every thread not in attention; the stop answers it; cancel.
        Bench b;
        b.stop(0, kDbgBreakpoint);
        b.wr(ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, HALT));
        EXPECT(!b.halt(0) && b.halt(1) && b.halt(1023));
        b.stop(1, kDbgHalt);
        EXPECT(b.attn(1) && !b.halt(1));
        b.wr(ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, CANCEL_HALT));
        EXPECT(!b.halt(2) && !b.halt(1023));
        // Set and cancel in one write: cancel wins.
        b.wr(ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, HALT) | ZS_FIELD_MASK(DBG_ALL, CANCEL_HALT));
        EXPECT(!b.halt(2));
        // Resume all and halt all in one write: the resumed threads get requests.
        b.wr(ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, HALT) | ZS_FIELD_MASK(DBG_ALL, RESUME));
        EXPECT(!b.attn(0) && b.halt(0) && b.halt(1));
    }
    {  // Coincident events.
        Bench b;
        b.wr(ZS_REG_DBG_CTL, 1);
        b.stop(40, kDbgBreakpoint);
        // Resume and a new stop of the same thread in one clock: the stop wins, counted.
        b.wr(ZS_REG_DBG_WORD, 1);
        DebugIn in;
        in.reg_we = true, in.reg_addr = ZS_REG_DBG_RESUME, in.reg_wdata = 1u << 8, in.stop_valid = true,
        in.stop_tid = 40, in.stop_reason = kDbgPageFault;
        b.clk(in);
        EXPECT(b.attn(40) && b.irq() && b.stopped() == 2 && b.reason(40) == (kDbgPageFault | R_ATTN));
        // A stop and another thread's end; a halt-all write in the same clock.
        b.wr(ZS_REG_DBG_WORD, 1);
        b.wr(ZS_REG_DBG_HALT, 1u << 9);  // thread 41
        in = DebugIn{};
        in.reg_we = true, in.reg_addr = ZS_REG_DBG_ALL, in.reg_wdata = ZS_FIELD_MASK(DBG_ALL, HALT);
        in.stop_valid = true, in.stop_tid = 42, in.stop_reason = kDbgException;
        in.end_valid = true, in.end_tid = 41;
        b.clk(in);
        EXPECT(b.attn(42) && !b.halt(42) && !b.halt(41) && b.halt(43) && !b.attn(41));
        // The interrupt enable written in the clock of a stop: the old value decides.
        in = DebugIn{};
        in.reg_we = true, in.reg_addr = ZS_REG_DBG_CTL, in.reg_wdata = 0;
        in.stop_valid = true, in.stop_tid = 43, in.stop_reason = kDbgHalt;
        b.clk(in);
        EXPECT(b.irq() && b.attn(43));
        b.stop(44, kDbgHalt);
        EXPECT(!b.irq());
    }
}

uint32_t pick_thread(std::mt19937_64 &rng)
{
    const uint32_t r = uint32_t(rng());
    switch (r % 4) {
    case 0: return (r >> 8) % DebugTwin::kThreads;  // anywhere
    case 1: return 1023 - (r >> 8) % 8;             // the top word's edge
    default: return (r >> 8) % 48;                  // a few threads: collisions
    }
}

uint32_t pick_word(std::mt19937_64 &rng)
{
    const uint32_t r = uint32_t(rng());
    switch (r % 4) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 31;
    default: return (r >> 8) % 64;  // out-of-range bits are ignored
    }
}

const uint32_t kAddrs[] = {ZS_REG_DBG_CTL,   ZS_REG_DBG_INFO,   ZS_REG_DBG_ATTN_COUNT, ZS_REG_DBG_STOPPED,
                           ZS_REG_DBG_WORD,  ZS_REG_DBG_ATTN,   ZS_REG_DBG_HALT,       ZS_REG_DBG_EXC,
                           ZS_REG_DBG_RESUME, ZS_REG_DBG_ALL,   ZS_REG_DBG_THREAD,     ZS_REG_DBG_REASON,
                           0x5030,           0x4ffc};

bool random_run(uint64_t clocks, uint64_t seed, const char *fst, const char *log)
{
    std::mt19937_64 rng(seed);
    DebugChecked dc;
    if (fst)
        dc.rtl().open_trace(fst);
    FILE *lf = log ? std::fopen(log, "w") : nullptr;
    if (log && !lf) {
        std::perror(log);
        return false;
    }
    auto hex = [lf](const DebugTwin::Bits &b) {
        for (uint32_t w = DebugTwin::kWords; w-- > 0;)
            std::fprintf(lf, "%08x", b[w]);
    };
    uint64_t irqs = 0, max_attn = 0;
    for (uint64_t c = 0; c < clocks; c++) {
        DebugIn in;
        // Every fourth phase of 64 Ki clocks is a storm: stops anywhere, few ends, no
        // resume, so that most of the 1024 threads end up in attention.
        const bool storm = (c >> 16) % 4 == 3;
        const uint32_t r = uint32_t(rng());
        if (r % 100 < 35) {
            in.stop_valid = true;
            in.stop_tid = storm ? uint32_t(rng()) % DebugTwin::kThreads : pick_thread(rng);
            in.stop_reason = (r >> 8) % 16 ? 1 + (r >> 12) % 4 : (r >> 16) % 8;
        }
        if ((r >> 20) % 100 < (storm ? 1u : 12u)) {
            in.end_valid = true;
            in.end_tid = (r >> 28) % 4 == 0 && in.stop_valid ? in.stop_tid : pick_thread(rng);
        }
        const uint32_t m = uint32_t(rng());
        in.reg_addr = kAddrs[m % (sizeof kAddrs / sizeof kAddrs[0])];
        if ((m >> 8) % 100 < 45) {
            in.reg_we = true;
            const uint32_t k = m >> 16;
            switch (in.reg_addr) {
            case ZS_REG_DBG_WORD: in.reg_wdata = pick_word(rng); break;
            case ZS_REG_DBG_THREAD: in.reg_wdata = k % 2 ? pick_thread(rng) : uint32_t(rng()); break;
            case ZS_REG_DBG_ALL:
                // Rarely halt all (it floods the requests), often resume all or cancel;
                // sometimes any combination (halt and cancel in one write).
                in.reg_wdata = k % 8 == 0   ? 1u
                               : k % 8 < 3  ? 4u
                               : k % 24 == 7 ? uint32_t(rng()) & 0xf
                                             : uint32_t(rng()) & 0xe;
                break;
            default: in.reg_wdata = k % 3 ? uint32_t(rng()) : (k % 2 ? ~0u : 1u << ((k >> 2) % 32)); break;
            }
        }
        if (storm && (in.reg_addr == ZS_REG_DBG_RESUME || in.reg_addr == ZS_REG_DBG_ALL))
            in.reg_we = false;
        if (!dc.step(in))
            return false;
        if (lf) {
            const DebugTwin &t = dc.twin();
            std::fprintf(lf, "%llu %d %u %u ", (unsigned long long)c, int(t.irq), t.stopped, t.attn_count());
            hex(t.attn), std::fputc(' ', lf), hex(t.halt), std::fputc(' ', lf), hex(t.exc), std::fputc('\n', lf);
        }
        irqs += dc.twin().irq;
        max_attn = std::max<uint64_t>(max_attn, dc.twin().attn_count());
        if ((c & 0xffff) == 0)  // the idle reads of every register and thread
            for (uint32_t a : kAddrs)
                dc.read(a);
        if (!dc.ok())
            return false;
    }
    if (lf)
        std::fclose(lf);
    std::printf("test_debug: %llu clocks seed %llu: 0 differences (stops %u, interrupts %llu, most in attention %llu)\n",
                (unsigned long long)clocks, (unsigned long long)seed, dc.twin().stopped, (unsigned long long)irqs,
                (unsigned long long)max_attn);
    return true;
}

}  // namespace

int main(int argc, char **argv)
{
    uint64_t clocks = 1000000, seed = 1;
    const char *fst = nullptr, *log = nullptr;
    bool random_only = false;
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--fst") && i + 1 < argc)
            fst = argv[++i];
        else if (!std::strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!std::strcmp(argv[i], "--random-only"))
            random_only = true;
        else if (pos++ == 0)
            clocks = std::strtoull(argv[i], nullptr, 0);
        else
            seed = std::strtoull(argv[i], nullptr, 0);
    }
    if (!random_only)
        directed();
    if (failures) {
        std::fprintf(stderr, "test_debug: directed cases: %d failures\n", failures);
        return 1;
    }
    if (!random_only)
        std::printf("test_debug: directed cases passed\n");
    return random_run(clocks, seed, fst, log) ? 0 : 1;
}
