#include "oa_block.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "gt.h"
#include "memory.h"

namespace zesim {

OaMode parse_oa_mode(const std::string &s)
{
    if (s == "off")
        return OaMode::Off;
    if (s == "twin")
        return OaMode::Twin;
    if (s == "rtl")
        return OaMode::Rtl;
    if (s == "check")
        return OaMode::Check;
    throw std::runtime_error("oa_block must be \"rtl\", \"check\", \"twin\" or \"off\", not \"" + s + "\"");
}

const char *oa_mode_name(OaMode m)
{
    switch (m) {
    case OaMode::Off: return "off";
    case OaMode::Twin: return "twin";
    case OaMode::Rtl: return "rtl";
    case OaMode::Check: return "check";
    }
    return "?";
}

namespace {

class TwinCore final : public OaCore {
public:
    bool step(const OaIn &in, uint64_t, OaOut &out) override
    {
        out = twin_.step(in);
        return true;
    }
    uint32_t read(uint32_t off) override { return twin_.read(off); }

private:
    OaTwin twin_;
};

std::unique_ptr<OaCore> make_core(OaMode m)
{
    switch (m) {
    case OaMode::Off: return nullptr;
    case OaMode::Twin: return std::make_unique<TwinCore>();
    case OaMode::Rtl:
    case OaMode::Check: break;
    }
    return make_oa_rtl_core(m == OaMode::Check);
}

}  // namespace


OaBlock::OaBlock(const GtConfig &cfg, OaMode mode, Gt &gt, PhysMem &mem, std::function<void(uint32_t)> irq,
                 std::function<uint32_t()> context)
    : cfg_(cfg), mode_(mode), gt_(gt), mem_(mem), irq_(std::move(irq)), context_(std::move(context)),
      core_(make_core(mode))
{
    eus_per_ss_ = cfg.topo.eus;
    subslices_ = std::min<uint32_t>(cfg.topo.total_subslices(), ZS_OA_MAX_SUBSLICES);
    if (core_)
        gt_.events().attach(this);
}

OaBlock::~OaBlock() { close_trace(); }

uint64_t OaBlock::timestamp(uint64_t cycle) const
{
    return uint64_t((unsigned __int128)cycle * cfg_.timestamp_khz / (uint64_t(cfg_.core_mhz) * 1000));
}

// The next timer boundary after the last clock: the first cycle whose timestamp
// reaches the next multiple of the period.
void OaBlock::plan_timer()
{
    next_timer_ = ~0ull;
    if (!enabled() || !(ctl_ & ZS_FIELD_MASK(OA_CTL, TIMER)))
        return;
    const unsigned exp = ZS_FIELD_GET(ctl_, OA_CTL, EXPONENT) + 1;
    const unsigned __int128 k = (last_ts_ >> exp) + 1;
    const unsigned __int128 ticks = k << exp, per = uint64_t(cfg_.core_mhz) * 1000;
    const unsigned __int128 c = (ticks * per + cfg_.timestamp_khz - 1) / cfg_.timestamp_khz;
    next_timer_ = c > ~0ull ? ~0ull : uint64_t(c);
}

bool OaBlock::periodic() const { return core_ && enabled() && (ctl_ & ZS_FIELD_MASK(OA_CTL, TIMER)); }

OaBlock::Bucket &OaBlock::bucket_slow(uint64_t cycle)
{
    auto it = events_.end();
    while (it != events_.begin() && (it - 1)->cycle > cycle)
        --it;
    if (it != events_.begin() && (it - 1)->cycle == cycle)
        return *(it - 1);
    Bucket b;
    std::memset(&b, 0, sizeof b);
    b.cycle = cycle;
    return *events_.insert(it, b);
}

void OaBlock::event(uint64_t cycle, uint32_t line, uint64_t n)
{
    if (!enabled() || !n)
        return;
    uint32_t &slot = bucket(cycle).inc[line];
    // One clock's increment is 32 bits: a larger one (it cannot happen in one cycle of
    // this GT) would be cut, so say so.
    if (n > 0xffffffffull - slot)
        std::fprintf(stderr, "zesim: OA block: event line %u: increment beyond 32 bits in cycle %llu\n", line,
                     (unsigned long long)cycle);
    slot += uint32_t(n);
}

void OaBlock::gt_span(uint64_t from, uint64_t to, bool busy, uint64_t resident)
{
    if (enabled() && to > from)
        segs_.push_back(GtSeg{from, to, resident, busy});
}

void OaBlock::eu_span(uint32_t eu, uint64_t from, uint64_t to, bool holding)
{
    if (!enabled() || to <= from)
        return;
    spans_.push_back(Span{from, to, eu / eus_per_ss_, holding});
}

void OaBlock::eu_issue(uint64_t cycle, uint32_t eu)
{
    if (!enabled())
        return;
    Bucket &b = bucket(cycle);
    b.inc[kEU_ACTIVE]++;
    b.ss_active[std::min<uint32_t>(eu / eus_per_ss_, ZS_OA_MAX_SUBSLICES - 1)]++;
}

void OaBlock::instruction(uint64_t cycle, enum ze_lat cls, uint32_t lanes)
{
    if (!enabled())
        return;
    Bucket &b = bucket(cycle);
    b.inc[kINST_CTRL + uint32_t(cls)]++;
    b.inc[kLANE_OPS] += lanes;  // at most 16 per instruction: no overflow within a cycle
}

void OaBlock::send(uint64_t cycle, unsigned msg) { event(cycle, kSEND_LOAD + msg, 1); }

void OaBlock::bytes(uint64_t cycle, MemBytes level, uint64_t n)
{
    static const uint32_t line[] = {kBYTES_L3_READ, kBYTES_L3_WRITE, kBYTES_DRAM, kBYTES_SLM_READ, kBYTES_SLM_WRITE};
    event(cycle, line[unsigned(level)], n);
}

OaOut OaBlock::clock(OaIn &in, uint64_t cycle)
{
    in.timestamp = timestamp(cycle);
    in.ctx_id = context_();
    in.clock_ratio = zs_oa_clock_ratio(cfg_.core_mhz);
    OaOut out;
    if (!core_->step(in, cycle, out)) {
        std::fprintf(stderr, "zesim: stopping at cycle %llu: the OA block's RTL disagrees with its twin\n",
                     (unsigned long long)cycle);
        std::abort();
    }
    clocks_++;
    last_ts_ = in.timestamp;
    if (out.buf_wr) {
        if (mem_.contains(out.buf_addr, ZS_OA_REPORT_BYTES)) {
            for (unsigned i = 0; i < ZS_OA_REPORT_DWORDS; i++)
                mem_.write32(out.buf_addr + 4 * i, out.buf_data[i]);
        } else if (!lost_write_noted_) {
            lost_write_noted_ = true;
            std::fprintf(stderr, "zesim: OA block: report to physical 0x%llx outside memory dropped\n",
                         (unsigned long long)out.buf_addr);
        }
    }
    if (out.irq)
        irq_(ZS_IRQ_OA_BUFFER);
    plan_timer();
    return out;
}

void OaBlock::feed(uint64_t to)
{
    if (!core_ || to <= fed_)
        return;
    if (!enabled()) {
        events_.clear();
        spans_.clear();
        segs_.clear();
        fed_ = to;
        return;
    }
    if (fold_ && feed_folded(to))
        return;
    // EU spans as breaks within [fed_, to); what lies beyond `to` waits for the next feed.
    breaks_.clear();
    for (const Span &sp : spans_) {
        const uint64_t a = std::max(sp.from, fed_), b = std::min(sp.to, to);
        if (a < b) {
            breaks_.push_back(Break{a, sp.ss, sp.holding, +1});
            breaks_.push_back(Break{b, sp.ss, sp.holding, -1});
        }
    }
    std::sort(breaks_.begin(), breaks_.end(), [](const Break &a, const Break &b) { return a.cycle < b.cycle; });

    int32_t stall[ZS_OA_MAX_SUBSLICES] = {}, idle[ZS_OA_MAX_SUBSLICES] = {};
    uint32_t nstall = 0, nidle = 0;
    size_t ei = 0, bi = 0, si = 0;
    uint64_t t = fed_;
    const uint64_t total_eus = cfg_.topo.total_eus();
    while (t < to) {
        for (; ei < events_.size() && events_[ei].cycle < t; ei++)  // cannot happen: lines come in time
            std::fprintf(stderr, "zesim: OA block: a line of cycle %llu came after cycle %llu was clocked\n",
                         (unsigned long long)events_[ei].cycle, (unsigned long long)t);
        // Rates at t: apply the breaks at t, find the GT segment holding t.
        for (; bi < breaks_.size() && breaks_[bi].cycle <= t; bi++) {
            const Break &b = breaks_[bi];
            const uint32_t ss = std::min<uint32_t>(b.ss, ZS_OA_MAX_SUBSLICES - 1);
            int32_t &slot = b.holding ? stall[ss] : idle[ss];
            slot += b.d;
            (b.holding ? nstall : nidle) += uint32_t(b.d);
        }
        while (si < segs_.size() && segs_[si].to <= t)
            si++;
        bool busy = false;
        uint64_t resident = 0, seg_end = to;
        if (si < segs_.size() && segs_[si].from <= t) {
            busy = segs_[si].busy;
            resident = segs_[si].resident;
            seg_end = segs_[si].to;
        } else if (si < segs_.size()) {
            seg_end = segs_[si].from;
        }
        // The run of identical cycles: up to the next break, segment edge or event.
        uint64_t end = std::min(to, seg_end);
        if (bi < breaks_.size())
            end = std::min(end, breaks_[bi].cycle);
        const bool has_events = ei < events_.size() && events_[ei].cycle == t;
        if (has_events)
            end = t + 1;
        else if (ei < events_.size())
            end = std::min(end, events_[ei].cycle);
        // Increments are 32-bit per clock.
        const uint64_t rate = std::max<uint64_t>({resident, total_eus, 1});
        end = std::min<uint64_t>(end, t + 0xffffffffull / rate);
        const uint64_t n = end - t;

        // This run's increments, 64-bit.
        uint64_t inc[ZS_OA_EVENT_LINES] = {}, ss[ZS_OA_MAX_SUBSLICES][3] = {};
        inc[kGPU_BUSY] = busy ? n : 0;
        inc[kTHREAD_CYCLES] = resident * n;
        inc[kEU_STALL] = nstall * n;
        inc[kEU_IDLE] = nidle * n;
        for (uint32_t s = 0; s < subslices_; s++) {
            ss[s][1] = uint64_t(stall[s]) * n;
            ss[s][2] = uint64_t(idle[s]) * n;
        }
        if (has_events) {
            const Bucket &b = events_[ei++];
            for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
                inc[k] += b.inc[k];
            for (uint32_t s = 0; s < subslices_; s++)
                ss[s][0] = b.ss_active[s];
        }
        // Fold the run into the pending clock, or clock what is pending first when the
        // sums would not fit the block's 32-bit inputs (or when every run is a clock).
        bool fits = fold_ && acc_cycles_ + n <= 0xffffffffull;
        for (unsigned k = 0; fits && k < ZS_OA_EVENT_LINES; k++)
            fits = acc_[k] + inc[k] <= 0xffffffffull;
        for (uint32_t s = 0; fits && s < subslices_; s++)
            for (unsigned j = 0; j < 3; j++)
                fits = fits && acc_ss_[s][j] + ss[s][j] <= 0xffffffffull;
        if (!fits)
            clock_pending(t);
        acc_cycles_ += n;
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
            acc_[k] += inc[k];
        for (uint32_t s = 0; s < subslices_; s++)
            for (unsigned j = 0; j < 3; j++)
                acc_ss_[s][j] += ss[s][j];
        t = end;
        if (!fold_)
            clock_pending(t);
    }
    clock_pending(to);
    consume(to, ei);
}

// The lines before `to` are clocked: drop them (the first `events` buckets), keep what
// lies beyond for the next feed.
void OaBlock::consume(uint64_t to, size_t events)
{
    events_.erase(events_.begin(), events_.begin() + ptrdiff_t(events));
    size_t keep = 0;
    for (const Span &sp : spans_)
        if (sp.to > to)
            spans_[keep++] = Span{std::max(sp.from, to), sp.to, sp.ss, sp.holding};
    spans_.resize(keep);
    keep = 0;
    for (const GtSeg &g : segs_)
        if (g.to > to)
            segs_[keep++] = GtSeg{std::max(g.from, to), g.to, g.resident, g.busy};
    segs_.resize(keep);
    fed_ = to;
}

// The block's inputs for `cycles` cycles with these (64-bit, fitting) totals.
OaIn OaBlock::inputs(uint64_t cycles, const uint64_t *inc, const uint64_t (*ss)[3]) const
{
    OaIn in;
    in.adv_cycles = uint32_t(cycles);
    for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
        in.inc[k] = uint32_t(inc[k]);
    for (uint32_t k = 0; k < subslices_; k++)
        for (unsigned j = 0; j < 3; j++)
            in.ss_inc[k][j] = uint32_t(ss[k][j]);
    return in;
}

// The lines of [fed_, to) as one clock, summed without walking the runs: when every sum
// fits the block's 32-bit inputs (else false: feed() walks the runs and splits).
bool OaBlock::feed_folded(uint64_t to)
{
    if (to - fed_ > 0xffffffffull)
        return false;
    uint64_t inc[ZS_OA_EVENT_LINES] = {}, ss[ZS_OA_MAX_SUBSLICES][3] = {};
    for (const GtSeg &g : segs_) {
        const uint64_t a = std::max(g.from, fed_), b = std::min(g.to, to);
        if (a < b) {
            inc[kGPU_BUSY] += g.busy ? b - a : 0;
            inc[kTHREAD_CYCLES] += g.resident * (b - a);
        }
    }
    for (const Span &sp : spans_) {
        const uint64_t a = std::max(sp.from, fed_), b = std::min(sp.to, to);
        if (a < b) {
            inc[sp.holding ? kEU_STALL : kEU_IDLE] += b - a;
            ss[std::min<uint32_t>(sp.ss, ZS_OA_MAX_SUBSLICES - 1)][sp.holding ? 1 : 2] += b - a;
        }
    }
    size_t ei = 0;
    for (; ei < events_.size() && events_[ei].cycle < to; ei++) {
        const Bucket &b = events_[ei];
        for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
            inc[k] += b.inc[k];
        for (uint32_t k = 0; k < subslices_; k++)
            ss[k][0] += b.ss_active[k];
    }
    for (unsigned k = 0; k < ZS_OA_EVENT_LINES; k++)
        if (inc[k] > 0xffffffffull)
            return false;
    for (uint32_t k = 0; k < subslices_; k++)
        for (unsigned j = 0; j < 3; j++)
            if (ss[k][j] > 0xffffffffull)
                return false;
    OaIn in = inputs(to - fed_, inc, ss);
    consume(to, ei);
    clock(in, to);
    return true;
}

// One clock with the runs folded since the last one: the cycles before `at`.
void OaBlock::clock_pending(uint64_t at)
{
    if (!acc_cycles_)
        return;
    OaIn in = inputs(acc_cycles_, acc_, acc_ss_);
    acc_cycles_ = 0;
    std::memset(acc_, 0, sizeof acc_);
    std::memset(acc_ss_, 0, sizeof acc_ss_);
    clock(in, at);
}

void OaBlock::sync_now() { gt_.deliver_lines(); }

uint32_t OaBlock::read(uint32_t off)
{
    if (!core_)
        return 0;
    sync_now();
    return core_->read(off);
}

void OaBlock::write(uint32_t off, uint32_t value)
{
    if (!core_)
        return;
    sync_now();
    const uint64_t now = gt_.now();
    fed_ = std::max(fed_, now);
    // The block saw no clock since the last one it was fed: bring its timestamp up to
    // date first, so that enabling the timer counts periods from now.
    if (timestamp(now) != last_ts_) {
        OaIn in;
        clock(in, now);
    }
    OaIn in;
    in.reg_we = true;
    in.reg_addr = off;
    in.reg_wdata = value;
    const bool was = enabled();
    if (off == ZS_REG_OA_CTL)
        ctl_ = value;
    if (!was && enabled())
        fed_ = now;  // counting starts at this boundary
    clock(in, now);
}

void OaBlock::context_switch()
{
    if (!core_)
        return;
    sync_now();
    OaIn in;
    in.ctx_switch = true;
    clock(in, gt_.now());
}

void OaBlock::query_report(uint32_t id, uint32_t out[ZS_OA_REPORT_DWORDS])
{
    if (!core_) {  // no OA block: the id and the timestamp, no counters
        std::fill(out, out + ZS_OA_REPORT_DWORDS, 0u);
        out[ZS_OA_DW_REPORT_ID] = id;
        out[ZS_OA_DW_TIMESTAMP] = uint32_t(timestamp(gt_.now()));
        out[ZS_OA_DW_CONTEXT] = context_();
        return;
    }
    sync_now();
    OaIn in;
    in.rpc = true;
    in.rpc_id = id;
    const OaOut o = clock(in, gt_.now());
    std::copy(o.rpc_data, o.rpc_data + ZS_OA_REPORT_DWORDS, out);
    plan_timer();
}

bool OaBlock::open_trace(const std::string &path, uint64_t from, uint64_t to)
{
    fold_ = !(core_ && core_->open_trace(path, from, to));
    return !fold_;
}

void OaBlock::close_trace()
{
    if (core_)
        core_->close_trace();
}

}  // namespace zesim
