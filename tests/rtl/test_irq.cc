// The interrupt controller: the Verilated RTL (rtl/irq/zs_irq.sv) against its C++ twin
// (model/irq_twin.h), every output compared after every cycle.
//   test_irq [CYCLES [SEED]]   (default 1,000,000 cycles, seed 1)
// Random cycles mix source pulses, IRQ_STATUS write-1-to-clear and IRQ_ENABLE writes;
// directed cycles cover every source alone and the race of a source firing in the
// cycle its bit is cleared (the source wins).  Exits 1 on the first difference, with
// both states printed.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "Vzs_irq.h"
#include "irq_twin.h"
#include "verilated.h"

using zesim::IrqTwin;

namespace {

struct Bench {
    VerilatedContext ctx;
    Vzs_irq rtl{&ctx, "irq"};
    IrqTwin twin;
    uint64_t cycle = 0;

    Bench()
    {
        rtl.clk = 0;
        rtl.rst_n = 0;
        rtl.eval();
        rtl.rst_n = 1;
        rtl.eval();
    }

    void step(uint32_t src, bool status_we, bool enable_we, uint32_t wdata)
    {
        rtl.src = uint8_t(src & IrqTwin::kMask);
        rtl.status_we = status_we;
        rtl.enable_we = enable_we;
        rtl.wdata = wdata;
        rtl.clk = 0;
        rtl.eval();
        rtl.clk = 1;
        rtl.eval();
        twin.step(src, status_we, enable_we, wdata);
        cycle++;
        if (rtl.status != twin.status || rtl.enable != twin.enable || bool(rtl.irq) != twin.irq() ||
            rtl.raised != twin.raised) {
            std::printf("test_irq: cycle %llu: inputs src 0x%02x status_we %d enable_we %d wdata 0x%08x\n"
                        "  RTL:  status 0x%02x enable 0x%02x irq %d raised %u\n"
                        "  twin: status 0x%02x enable 0x%02x irq %d raised %u\n",
                        (unsigned long long)cycle, src, status_we, enable_we, wdata, rtl.status, rtl.enable,
                        int(rtl.irq), rtl.raised, twin.status, twin.enable, int(twin.irq()), twin.raised);
            std::exit(1);
        }
    }
};

void expect(bool ok, const char *what)
{
    if (!ok) {
        std::printf("test_irq: FAILED: %s\n", what);
        std::exit(1);
    }
}

}  // namespace

int main(int argc, char **argv)
{
    const uint64_t cycles = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 1000000;
    const uint32_t seed = argc > 2 ? uint32_t(std::strtoul(argv[2], nullptr, 0)) : 1;
    Bench b;

    // Directed: each source alone sets its bit, raises the line only when enabled,
    // and is cleared by writing 1; the race: source and clear of the same bit in one
    // cycle leave it set; a clear of other bits leaves it.
    for (unsigned k = 0; k < 8; k++) {
        const uint32_t bit = 1u << k;
        b.step(0, false, true, 0);
        b.step(bit, false, false, 0);
        expect(b.twin.status == bit && !b.twin.irq(), "a source sets its bit; disabled: no interrupt");
        b.step(0, false, true, bit);
        expect(b.twin.irq(), "enabling a pending source raises the line");
        b.step(bit, true, false, bit);
        expect(b.twin.status == bit, "a source firing in its clearing cycle wins");
        b.step(0, true, false, ~bit);
        expect(b.twin.status == bit, "clearing other bits leaves it");
        b.step(0, true, false, bit);
        expect(b.twin.status == 0 && !b.twin.irq(), "write 1 clears, the line drops");
        b.step(0, true, false, 0xffffff00u);
        expect(b.twin.status == 0 && b.twin.enable == bit, "bits above the sources are ignored");
    }

    // Random: sources are rare or bursty, clears and enable writes now and then, and
    // races forced one cycle in eight.
    std::mt19937 rng(seed);
    uint64_t races = 0, fired[8] = {}, line_changes = 0;
    bool line = b.twin.irq();
    for (uint64_t i = 0; i < cycles; i++) {
        const uint32_t r = rng();
        uint32_t src = (r & 3) == 0 ? rng() & 0xff : 0;
        const bool status_we = (r >> 2 & 7) == 0;
        const bool enable_we = (r >> 5 & 31) == 0;
        uint32_t wdata = rng();
        if ((r >> 10 & 7) == 0 && status_we) {  // a race on purpose
            src |= 1u << (r >> 13 & 7);
            wdata |= src;
        }
        for (unsigned k = 0; k < 8; k++)
            fired[k] += src >> k & 1;
        const uint32_t before = b.twin.status;
        b.step(src, status_we, enable_we, wdata);
        if (status_we && (src & wdata & before & 0xff))
            races++;
        if (b.twin.irq() != line) {
            line = b.twin.irq();
            line_changes++;
        }
    }
    for (unsigned k = 0; k < 8; k++)
        expect(fired[k] > 0, "a source never fired in the random cycles");
    expect(races > 0 && line_changes > 0, "no race or no interrupt-line change in the random cycles");
    std::printf("test_irq: %llu cycles, RTL = twin on every output; %llu clear/source races, %llu line changes, "
                "sources fired %llu..%llu times each\n",
                (unsigned long long)b.cycle, (unsigned long long)races, (unsigned long long)line_changes,
                (unsigned long long)*std::min_element(fired, fired + 8),
                (unsigned long long)*std::max_element(fired, fired + 8));
    return 0;
}
