#include "oa_rtl.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "Vzs_oa.h"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace zesim {

namespace {

// Bits [lsb, lsb + width) of a packed port (width <= 64).
template <typename W>
uint64_t bits(const W &w, unsigned nwords, unsigned lsb, unsigned width)
{
    const unsigned i = lsb / 32, b = lsb % 32;
    uint64_t v = w[i];
    if (i + 1 < nwords)
        v |= uint64_t(w[i + 1]) << 32;
    v >>= b;
    if (b + width > 64 && i + 2 < nwords)
        v |= uint64_t(w[i + 2]) << (64 - b);
    return width == 64 ? v : v & ((1ull << width) - 1);
}

constexpr unsigned kAWords = (ZS_OA_A_COUNTERS * 40 + 31) / 32;

const uint32_t kRegs[] = {ZS_REG_OA_CTL,       ZS_REG_OA_BUF_BASE_LO, ZS_REG_OA_BUF_BASE_HI, ZS_REG_OA_BUF_SIZE,
                          ZS_REG_OA_HEAD,      ZS_REG_OA_TAIL,        ZS_REG_OA_STATUS,      ZS_REG_OA_THRESHOLD,
                          ZS_REG_OA_REPORTS,   ZS_REG_OA_LOST};

std::string reasons(uint32_t r)
{
    static const char *const names[] = {"TIMER", "MARKER", "MMIO", "CTX_SWITCH", "bit4", "bit5"};
    std::string s;
    for (unsigned i = 0; i < 6; i++)
        if (r >> i & 1)
            s += (s.empty() ? "" : "|") + std::string(names[i]);
    return s.empty() ? "none" : s;
}

uint64_t report_a(const uint32_t *dw, unsigned i)
{
    return zs_oa_a(reinterpret_cast<const uint8_t *>(dw), i);
}

}  // namespace

OaState OaState::of(const OaTwin &t)
{
    OaState s;
    s.ctl = t.ctl;
    s.base_lo = t.base_lo;
    s.base_hi = t.base_hi;
    s.size_log2 = t.size_log2;
    s.head = t.head;
    s.tail = t.tail;
    s.status = t.status;
    s.threshold = t.threshold;
    s.reports = t.reports;
    s.lost = t.lost;
    std::copy(t.sel, t.sel + ZS_OA_BC_COUNTERS, s.sel);
    std::copy(t.a, t.a + ZS_OA_A_COUNTERS, s.a);
    std::copy(t.bc, t.bc + ZS_OA_BC_COUNTERS, s.bc);
    s.ticks = t.ticks;
    return s;
}

// ---------------------------------------------------------------------------------------
// OaRtl

OaRtl::OaRtl()
{
    rtl_ = std::make_unique<Vzs_oa>(harness_.context(), "oa");
    harness_.set_attach([this](VerilatedFstC *f) { rtl_->trace(f, 99); });
    reset();
}

OaRtl::~OaRtl()
{
    close_trace();
    rtl_->final();
}

void OaRtl::reset()
{
    Vzs_oa &r = *rtl_;
    r.clk = 0;
    r.reg_we = 0;
    r.reg_addr = r.reg_wdata = 0;
    r.adv_cycles = 0;
    for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
        r.inc[k] = 0;
    for (unsigned k = 0; k < ZS_OA_MAX_SUBSLICES * 3; k++)
        r.ss_inc[k] = 0;
    r.timestamp = 0;
    r.rpc = 0;
    r.rpc_addr = 0;
    r.rpc_id = r.ctx_id = 0;
    r.ctx_switch = 0;
    r.clock_ratio = 0;
    // An edge of rst_n (the asynchronous reset), whatever its initial value.
    r.rst_n = 1;
    r.eval();
    r.rst_n = 0;
    r.eval();
    r.rst_n = 1;
    r.eval();
}

void OaRtl::open_trace(const std::string &path, uint64_t from, uint64_t to)
{
    harness_.open(path);
    from_ = from;
    to_ = to;
    dumped_ = 0;
}

void OaRtl::close_trace() { harness_.close(); }

OaOut OaRtl::step(const OaIn &in, uint64_t cycle)
{
    Vzs_oa &r = *rtl_;
    r.reg_we = in.reg_we;
    r.reg_addr = in.reg_addr;
    r.reg_wdata = in.reg_wdata;
    r.adv_cycles = in.adv_cycles;
    for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
        r.inc[k] = in.inc[k];
    for (unsigned s = 0; s < ZS_OA_MAX_SUBSLICES; s++)
        for (unsigned j = 0; j < 3; j++)
            r.ss_inc[s * 3 + j] = in.ss_inc[s][j];
    r.timestamp = in.timestamp;
    r.rpc = in.rpc;
    r.rpc_addr = in.rpc_addr;
    r.rpc_id = in.rpc_id;
    r.ctx_id = in.ctx_id;
    r.ctx_switch = in.ctx_switch;
    r.clock_ratio = in.clock_ratio & ZS_OA_ID_CLOCK_RATIO_MASK;
    r.clk = 0;
    r.eval();
    rdata_before_ = r.reg_rdata;
    const bool dump = harness_.tracing() && cycle >= from_ && cycle < to_;
    if (dump) {
        time_ = std::max(time_ + 1, 2 * cycle);
        if (dumped_++ == 0)
            first_dump_ = time_;
        harness_.dump(time_++);
    }
    r.clk = 1;
    r.eval();
    if (dump)
        harness_.dump(time_);
    clocks_++;

    OaOut out;
    out.buf_wr = r.buf_wr;
    out.buf_addr = r.buf_addr;
    out.rpc_wr = r.rpc_wr;
    out.rpc_addr = r.rpc_addr_o;
    out.irq = r.irq;
    for (unsigned k = 0; k < ZS_OA_REPORT_DWORDS; k++) {
        out.buf_data[k] = r.buf_data[k];
        out.rpc_data[k] = r.rpc_data[k];
    }
    return out;
}

uint32_t OaRtl::read(uint32_t off) const
{
    rtl_->reg_we = 0;
    rtl_->reg_addr = off;
    rtl_->eval();
    return rtl_->reg_rdata;
}

void OaRtl::counters(uint64_t *a, uint32_t *bc, uint32_t *ticks) const
{
    const Vzs_oa &r = *rtl_;
    for (unsigned k = 0; k < ZS_OA_A_COUNTERS; k++)
        a[k] = bits(r.a, kAWords, 40 * k, 40);
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
        bc[i] = r.bc[i];
    *ticks = r.ticks;
}

uint32_t OaRtl::head() const { return rtl_->head; }
uint32_t OaRtl::tail() const { return rtl_->tail; }
uint32_t OaRtl::status() const { return rtl_->status; }
uint32_t OaRtl::trig() const { return rtl_->trig; }
uint32_t OaRtl::last_reason() const { return rtl_->reason; }

OaState OaRtl::state_full()
{
    OaState s;
    s.ctl = read(ZS_REG_OA_CTL);
    s.base_lo = read(ZS_REG_OA_BUF_BASE_LO);
    s.base_hi = read(ZS_REG_OA_BUF_BASE_HI);
    s.size_log2 = read(ZS_REG_OA_BUF_SIZE);
    s.head = read(ZS_REG_OA_HEAD);
    s.tail = read(ZS_REG_OA_TAIL);
    s.status = read(ZS_REG_OA_STATUS);
    s.threshold = read(ZS_REG_OA_THRESHOLD);
    s.reports = read(ZS_REG_OA_REPORTS);
    s.lost = read(ZS_REG_OA_LOST);
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
        s.sel[i] = read(ZS_REG_OA_BC_SEL0 + 4 * i);
    counters(s.a, s.bc, &s.ticks);
    return s;
}

// ---------------------------------------------------------------------------------------
// Printing

void oa_print_report(std::FILE *f, const char *who, const uint32_t *dw, bool query)
{
    const uint32_t id = dw[ZS_OA_DW_REPORT_ID];
    if (query)
        std::fprintf(f, "  %-6s report id 0x%08x", who, id);
    else
        std::fprintf(f, "  %-6s reason %s, context valid %u, clock ratio %u", who,
                     reasons(id >> ZS_OA_ID_REASON_SHIFT & ZS_OA_ID_REASON_MASK).c_str(),
                     (id & ZS_OA_ID_CONTEXT_VALID) ? 1u : 0u, id & ZS_OA_ID_CLOCK_RATIO_MASK);
    std::fprintf(f, "; timestamp 0x%08x context 0x%08x ticks %u\n", dw[ZS_OA_DW_TIMESTAMP], dw[ZS_OA_DW_CONTEXT],
                 dw[ZS_OA_DW_TICKS]);
    for (unsigned i = 0; i < ZS_OA_A_COUNTERS; i++)
        std::fprintf(f, "%s A%-2u 0x%010" PRIx64 "%s", i % 6 == 0 ? "         " : "  ", i, report_a(dw, i),
                     i % 6 == 5 ? "\n" : "");
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
        std::fprintf(f, "%s %c%u 0x%08x%s", i % 8 == 0 ? "         " : "  ", i < 8 ? 'B' : 'C', i % 8,
                     dw[ZS_OA_DW_B + i], i % 8 == 7 ? "\n" : "");
}

void oa_print_report_diff(std::FILE *f, const uint32_t *rtl, const uint32_t *twin)
{
    auto line = [&](const char *name, uint64_t a, uint64_t b) {
        if (a != b)
            std::fprintf(f, "    %-12s RTL 0x%010" PRIx64 "  twin 0x%010" PRIx64 "\n", name, a, b);
    };
    line("report id", rtl[0], twin[0]);
    line("timestamp", rtl[1], twin[1]);
    line("context", rtl[2], twin[2]);
    line("ticks", rtl[3], twin[3]);
    char name[16];
    for (unsigned i = 0; i < ZS_OA_A_COUNTERS; i++) {
        std::snprintf(name, sizeof name, "A%u", i);
        line(name, report_a(rtl, i), report_a(twin, i));
    }
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++) {
        std::snprintf(name, sizeof name, "%c%u", i < 8 ? 'B' : 'C', i % 8);
        line(name, rtl[ZS_OA_DW_B + i], twin[ZS_OA_DW_B + i]);
    }
}

static void print_state(std::FILE *f, const char *who, const OaState &s, const OaState &other)
{
    std::fprintf(f,
                 "  %-5s ctl 0x%03x base 0x%08x_%08x size 2^%u head 0x%x tail 0x%x status 0x%x threshold %u "
                 "reports %u lost %u ticks %u\n",
                 who, s.ctl, s.base_hi, s.base_lo, s.size_log2, s.head, s.tail, s.status, s.threshold, s.reports,
                 s.lost, s.ticks);
    std::fprintf(f, "        ");
    unsigned n = 0;
    for (unsigned i = 0; i < ZS_OA_A_COUNTERS; i++)
        if (s.a[i] != other.a[i])
            std::fprintf(f, "%sA%u 0x%010" PRIx64, n++ ? "  " : "", i, s.a[i]);
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++) {
        if (s.bc[i] != other.bc[i])
            std::fprintf(f, "%s%c%u 0x%08x", n++ ? "  " : "", i < 8 ? 'B' : 'C', i % 8, s.bc[i]);
        if (s.sel[i] != other.sel[i])
            std::fprintf(f, "%sBC_SEL%u 0x%08x", n++ ? "  " : "", i, s.sel[i]);
    }
    std::fprintf(f, "%s\n", n ? "" : "(counters and selects equal)");
}

// ---------------------------------------------------------------------------------------
// OaChecked

OaChecked::OaChecked() { twin_.reset(); }

void OaChecked::mismatch(const char *what, const OaIn *in, const OaOut *ro, const OaOut *to)
{
    std::FILE *f = log_;
    std::fprintf(f, "zesim: OA block: RTL and C++ twin differ after clock %" PRIu64 " (cycle %" PRIu64 "): %s\n",
                 clocks_, cycle_, what);
    if (in) {
        std::fprintf(f,
                     "  inputs: reg_we %d reg_addr 0x%04x reg_wdata 0x%08x adv_cycles %u timestamp 0x%" PRIx64
                     " ctx_id 0x%x ctx_switch %d rpc %d rpc_addr 0x%" PRIx64 " rpc_id 0x%x clock_ratio %u\n  inc:",
                     int(in->reg_we), in->reg_addr, in->reg_wdata, in->adv_cycles, in->timestamp, in->ctx_id,
                     int(in->ctx_switch), int(in->rpc), in->rpc_addr, in->rpc_id, in->clock_ratio);
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
            std::fprintf(f, " %u", in->inc[k]);
        std::fprintf(f, "\n");
    }
    if (ro && to) {
        std::fprintf(f, "  outputs: RTL buf_wr %d buf_addr 0x%" PRIx64 " rpc_wr %d rpc_addr 0x%" PRIx64
                        " irq %d | twin buf_wr %d buf_addr 0x%" PRIx64 " rpc_wr %d rpc_addr 0x%" PRIx64 " irq %d\n",
                     int(ro->buf_wr), ro->buf_addr, int(ro->rpc_wr), ro->rpc_addr, int(ro->irq), int(to->buf_wr),
                     to->buf_addr, int(to->rpc_wr), to->rpc_addr, int(to->irq));
        auto both = [&](const char *what, bool rw, const uint32_t *rd, bool tw, const uint32_t *td, bool query) {
            if (!rw && !tw)
                return;
            std::fprintf(f, " %s:\n", what);
            if (rw)
                oa_print_report(f, "RTL", rd, query);
            else
                std::fprintf(f, "  RTL    none\n");
            if (tw)
                oa_print_report(f, "twin", td, query);
            else
                std::fprintf(f, "  twin   none\n");
            if (rw && tw && std::memcmp(rd, td, ZS_OA_REPORT_BYTES) != 0) {
                std::fprintf(f, "  fields that differ:\n");
                oa_print_report_diff(f, rd, td);
            }
        };
        both("buffer report", ro->buf_wr, ro->buf_data, to->buf_wr, to->buf_data, false);
        both("query report", ro->rpc_wr, ro->rpc_data, to->rpc_wr, to->rpc_data, true);
        static const uint32_t zero[ZS_OA_REPORT_DWORDS] = {};
        if (!ro->buf_wr && std::memcmp(ro->buf_data, zero, ZS_OA_REPORT_BYTES) != 0)
            std::fprintf(f, "  RTL buf_data is not 0 without buf_wr\n");
        if (!ro->rpc_wr && std::memcmp(ro->rpc_data, zero, ZS_OA_REPORT_BYTES) != 0)
            std::fprintf(f, "  RTL rpc_data is not 0 without rpc_wr\n");
    }
    const OaState rs = rtl_.state_full(), ts = OaState::of(twin_);
    std::fprintf(f, " state after the clock (counters: only those that differ):\n");
    print_state(f, "RTL", rs, ts);
    print_state(f, "twin", ts, rs);
    std::fflush(f);
    ok_ = false;
}

bool OaChecked::step(const OaIn &in, OaOut &out, uint64_t cycle)
{
    const uint32_t want_read = twin_.read(in.reg_addr);
    out = rtl_.step(in, cycle);
    const OaOut t = twin_.step(in);
    clocks_++;
    cycle_ = cycle;
    if (!ok_)
        return false;  // report the first difference only
    const char *what = nullptr;
    if (rtl_.read_before() != want_read)
        what = "the MMIO read of reg_addr before the clock";
    else if (out.buf_wr != t.buf_wr || out.buf_addr != t.buf_addr)
        what = "buf_wr / buf_addr";
    else if (std::memcmp(out.buf_data, t.buf_data, sizeof t.buf_data) != 0)
        what = "buf_data (the buffer report)";
    else if (out.rpc_wr != t.rpc_wr || out.rpc_addr != t.rpc_addr)
        what = "rpc_wr / rpc_addr";
    else if (std::memcmp(out.rpc_data, t.rpc_data, sizeof t.rpc_data) != 0)
        what = "rpc_data (the query report)";
    else if (out.irq != t.irq)
        what = "irq";
    else if (rtl_.head() != twin_.head || rtl_.tail() != twin_.tail || rtl_.status() != twin_.status)
        what = "head / tail / status";
    else if (t.buf_wr && rtl_.last_reason() != (t.buf_data[0] >> ZS_OA_ID_REASON_SHIFT & ZS_OA_ID_REASON_MASK))
        what = "the reason of the last report (observation port)";
    else {
        uint64_t a[ZS_OA_A_COUNTERS];
        uint32_t bc[ZS_OA_BC_COUNTERS], ticks;
        rtl_.counters(a, bc, &ticks);
        if (std::memcmp(a, twin_.a, sizeof a) != 0 || std::memcmp(bc, twin_.bc, sizeof bc) != 0 ||
            ticks != twin_.ticks)
            what = "the counters";
    }
    if (what) {
        if (rtl_.read_before() != want_read)
            std::fprintf(log_, "zesim: OA block: read of 0x%04x before the clock: RTL 0x%08x twin 0x%08x\n",
                         in.reg_addr, rtl_.read_before(), want_read);
        mismatch(what, &in, &out, &t);
    }
    return ok_;
}

OaOut OaChecked::step(const OaIn &in, uint64_t cycle)
{
    OaOut out;
    step(in, out, cycle);
    return out;
}

bool OaChecked::read(uint32_t off, uint32_t &value)
{
    value = rtl_.read(off);
    const uint32_t t = twin_.read(off);
    if (value != t && ok_) {
        std::fprintf(log_, "zesim: OA block: read of 0x%04x: RTL 0x%08x twin 0x%08x\n", off, value, t);
        mismatch("an MMIO read", nullptr, nullptr, nullptr);
    }
    return ok_;
}

uint32_t OaChecked::read(uint32_t off)
{
    uint32_t v;
    read(off, v);
    return v;
}

bool OaChecked::compare_registers()
{
    uint32_t v;
    for (uint32_t off : kRegs)
        if (!read(off, v))
            return false;
    for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
        if (!read(ZS_REG_OA_BC_SEL0 + 4 * i, v))
            return false;
    return true;
}

}  // namespace zesim
