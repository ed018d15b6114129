// A waveform closed and opened again has the block's signals and their changes, for
// each of the three RTL wrappers (interrupt controller, OA block, EU debug unit): each
// writes DIR/<block>-1.fst, then (open again, which closes the first) DIR/<block>-2.fst,
// then, after an explicit close_trace, DIR/<block>-3.fst, 40 clocks each.  fst2vcd reads
// every file back: it must declare the block's clk and show clk changing at least once
// per clock of its part (the RTL models share model/rtl_harness.{h,cc}).
//   test_reopen FST2VCD DIR
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "debug_rtl.h"
#include "irq_block.h"
#include "oa_rtl.h"

namespace {

constexpr unsigned kClocks = 40;

// Times clk changes in the VCD fst2vcd makes of `fst` (-1: no clk declared).
long clk_changes(const std::string &fst2vcd, const std::string &fst)
{
    FILE *p = popen((fst2vcd + " '" + fst + "' 2>/dev/null").c_str(), "r");
    if (!p) {
        std::perror("popen");
        std::exit(1);
    }
    char line[4096];
    std::string id;
    long changes = -1;
    while (std::fgets(line, sizeof line, p)) {
        char code[64], name[256];
        unsigned width;
        // $var wire 1 ! clk $end  (the top-level clk: the first one declared)
        if (id.empty() && std::sscanf(line, "$var %*s %u %63s %255s", &width, code, name) == 3 &&
            std::string(name) == "clk") {
            id = code;
            changes = 0;
        } else if (!id.empty() && (line[0] == '0' || line[0] == '1') && std::string(line + 1) == id + "\n") {
            changes++;
        }
    }
    pclose(p);
    return changes;
}

bool check(const std::string &fst2vcd, const std::string &fst, const char *block)
{
    const long n = clk_changes(fst2vcd, fst);
    if (n < long(kClocks)) {
        std::printf("test_reopen: %s: %s has %s (want >= %u clk changes)\n", block, fst.c_str(),
                    n < 0 ? "no clk signal" : (std::to_string(n) + " clk changes").c_str(), kClocks);
        return false;
    }
    std::printf("%s: %s: %ld clk changes\n", block, fst.c_str(), n);
    return true;
}

// Three files through `open` / `close` around kClocks calls of `clock` each.
bool three_files(const std::string &fst2vcd, const std::string &dir, const char *block,
                 const std::function<void(const std::string &)> &open, const std::function<void()> &close,
                 const std::function<void(unsigned)> &clock)
{
    unsigned t = 0;
    for (int f = 1; f <= 3; f++) {
        if (f == 3)
            close();
        open(dir + "/" + block + "-" + std::to_string(f) + ".fst");
        for (unsigned i = 0; i < kClocks; i++)
            clock(t++);
    }
    close();
    bool ok = true;
    for (int f = 1; f <= 3; f++)
        ok &= check(fst2vcd, dir + "/" + block + "-" + std::to_string(f) + ".fst", block);
    return ok;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: test_reopen FST2VCD DIR\n");
        return 2;
    }
    const std::string fst2vcd = argv[1], dir = argv[2];
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        std::perror(dir.c_str());
        return 1;
    }
    bool ok = true;
    {
        zesim::IrqBlock irq;
        ok &= three_files(
            fst2vcd, dir, "irq", [&](const std::string &p) { irq.open_trace(p); }, [&] { irq.close_trace(); },
            [&](unsigned t) { irq.event(t % 3 == 0 ? 1u << (t % 8) : 0, t % 5 == 0, t % 7 == 0, t, t); });
    }
    {
        zesim::OaRtl oa;
        ok &= three_files(
            fst2vcd, dir, "oa", [&](const std::string &p) { oa.open_trace(p); }, [&] { oa.close_trace(); },
            [&](unsigned t) {
                zesim::OaIn in;
                in.adv_cycles = 1;
                in.inc[0] = t % 4;
                in.timestamp = t;
                oa.step(in, t);
            });
    }
    {
        zesim::DebugRtl dbg;
        ok &= three_files(
            fst2vcd, dir, "debug", [&](const std::string &p) { dbg.open_trace(p); }, [&] { dbg.close_trace(); },
            [&](unsigned t) {
                zesim::DebugIn in;
                in.stop_valid = t % 3 == 0;
                in.stop_tid = t % 16;
                in.stop_reason = 1;
                dbg.step(in);
            });
    }
    if (!ok)
        return 1;
    std::printf("test_reopen: every waveform, first or reopened, has the block's clock\n");
    return 0;
}
