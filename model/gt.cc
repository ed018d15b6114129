// GT timing and dispatch (docs/model.md).  Functional semantics come from
// thread.cc; this file decides when each instruction issues and performs the
// sends against memory.
#include "gt.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <limits>

#include "uapi/zesim_ssa.h"

namespace zesim {

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
constexpr int kFlagRegs = 2;  // f0, f1 tracked after the 128 GRFs in reg_ready

}  // namespace

struct Group;

// Code decoded lazily, indexed by ip / 16 from one instruction base.
struct CodeCache {
    std::vector<DecodedInst> code;
    std::vector<uint8_t> decoded;
};

struct Job {
    WalkerJob w;
    uint64_t groups_total = 0, next_group = 0, groups_done = 0;
    uint32_t threads_per_group = 0;
    CodeCache code;  // the kernel's code (ib = kernel_va)
    std::unordered_map<uint64_t, CodeCache> far;  // code reached by calla, by instruction base
    uint64_t code_gen = 0;                        // Gt::code_gen_ when they were filled
};

struct Group {
    Job *job;
    uint32_t id[3];
    uint32_t linear;
    uint32_t live, arrived;
    uint32_t subslice;
    uint32_t slm_base;
};

struct HwThread {
    ThreadState st;
    bool busy = false;
    uint64_t ready = kNever;       // earliest issue of its next instruction
    uint64_t sends_done = 0;       // completion of its latest send (fence)
    uint64_t reg_ready[ZE_GRF_COUNT + kFlagRegs];
    Group *group = nullptr;
    uint32_t index = 0;            // thread index in the group
    bool arg_fault = false;        // the argument area could not be read at dispatch
    uint64_t arg_fault_va = 0;
    FaultReason arg_fault_why = FaultReason::None;
    PageFault pf{};                // the page fault that ended it, if any
};

struct Eu {
    std::vector<HwThread> threads;
    uint32_t resident = 0;
    uint32_t rr = 0;
    uint64_t accounted = 0;  // cycles before this are classified
    uint64_t next = kNever;  // min ready over resident threads
};

struct SubSlice {
    std::vector<Eu> eus;
    uint32_t free_threads = 0;
    uint32_t next_eu = 0;  // threads spread over EUs round-robin
    std::vector<uint8_t> slm;
    std::vector<std::pair<uint32_t, uint32_t>> slm_used;  // (base, size), sorted
};

struct Gt::Impl {
    Gt &gt;
    std::vector<SubSlice> ss;
    std::deque<Job> jobs;  // front is dispatching; earlier ones may still run
    std::vector<std::unique_ptr<Group>> groups;
    uint32_t next_ss = 0;
    uint64_t dispatcher_free = 0;
    uint64_t resident_total = 0;
    uint64_t gt_accounted = 0;  // GT counters cover the cycles before this
    uint64_t debug_waiting = 0; // threads in ThreadStatus::DebugWait
    DecodedInst sip_inst{};     // the system routine's instruction being fetched (not cached)

    explicit Impl(Gt &g, uint64_t now = 0) : gt(g), dispatcher_free(now), gt_accounted(now)
    {
        const Topology &t = g.cfg_.topo;
        ss.resize(t.total_subslices());
        for (SubSlice &s : ss) {
            s.eus.resize(t.eus);
            for (Eu &e : s.eus) {
                e.threads.resize(t.threads);
                e.accounted = now;
            }
            s.free_threads = t.eus * t.threads;
            s.slm.assign(g.cfg_.slm_bytes_per_subslice, 0);
        }
    }

    // The cycles before `now` are accounted; nothing of this state issues earlier.
    void resume_at(uint64_t now)
    {
        gt_accounted = now;
        dispatcher_free = std::max(dispatcher_free, now);
        for (SubSlice &s : ss)
            for (Eu &e : s.eus) {
                e.accounted = now;
                if (e.resident && e.next < now)
                    e.next = now;
            }
    }

    uint32_t eu_index(uint32_t s, uint32_t e) const { return s * gt.cfg_.topo.eus + e; }

    // ---- accounting -------------------------------------------------------

    // Classify EU cycles [e.accounted, upto) as stalled (threads resident,
    // none issued) or idle (no thread).  Issue cycles are counted at issue.
    void account(Eu &e, uint32_t idx, uint64_t upto)
    {
        if (upto <= e.accounted)
            return;
        gt.events_.eu_span(idx, e.accounted, upto, e.resident != 0);
        e.accounted = upto;
    }

    void account_all(uint64_t upto)
    {
        for (uint32_t s = 0; s < ss.size(); s++)
            for (uint32_t e = 0; e < ss[s].eus.size(); e++)
                account(ss[s].eus[e], eu_index(s, e), upto);
    }

    // Per-cycle GT counters up to (not including) `to`: each cycle counts
    // the threads resident at its start, before its dispatches and EOTs
    // (docs/oa.md).  Between events the residency is constant.
    void account_gt(uint64_t to)
    {
        if (to <= gt_accounted)
            return;
        gt.events_.gt_span(gt_accounted, to, resident_total || !jobs.empty(), resident_total);
        gt_accounted = to;
    }

    // Advance time to `t`; at every boundary a listener asks for (a ledger
    // window, an OA report), deliver all lines up to it first.
    void advance_to(uint64_t t)
    {
        for (uint64_t b; (b = gt.events_.next_sync()) <= t;) {
            account_gt(b);
            account_all(b);
            gt.now_ = b;
            gt.events_.sync(b);
        }
        account_gt(t);  // skipped cycles had the state that holds now
        gt.now_ = t;
    }

    // Close the ledger at the end of a run: the last window ends after the
    // current cycle, whose events it already holds.
    void flush_ledger()
    {
        const uint64_t end = gt.now_ + 1;
        account_gt(end);
        account_all(end);
        gt.events_.flush(end);
        gt.now_ = end;
    }

    // Abandon all work (engine reset): threads, groups, queued walkers.
    void reset()
    {
        account_gt(gt.now_);
        account_all(gt.now_);
        for (uint32_t si = 0; si < ss.size(); si++) {
            SubSlice &s = ss[si];
            for (Eu &eu : s.eus) {
                for (HwThread &t : eu.threads) {
                    if (t.busy && gt.debug_)
                        gt.debug_->end(gt.now_, tid_of(si, uint32_t(&eu - s.eus.data()),
                                                       uint32_t(&t - eu.threads.data())));
                    t.busy = false;
                    t.group = nullptr;
                    t.ready = kNever;
                }
                eu.resident = 0;
                eu.next = kNever;
            }
            s.free_threads = uint32_t(s.eus.size() * gt.cfg_.topo.threads);
            s.slm_used.clear();
        }
        groups.clear();
        jobs.clear();
        resident_total = 0;
        debug_waiting = 0;
    }

    // ---- code fetch -------------------------------------------------------

    // GPU VA of the thread's current instruction.
    uint64_t code_va(const HwThread &t) const
    {
        return (t.st.in_sip ? gt.debug_->sip_va() : t.st.ib) + t.st.ip;
    }

    const DecodedInst *fetch(HwThread &t)
    {
        Job &j = *t.group->job;
        if (t.st.in_sip) {
            // The system routine runs rarely: decoded at each fetch (the KMD may rewrite it).
            if (t.st.ip % ZE_INST_BYTES)
                return nullptr;
            uint8_t bytes[ZE_INST_BYTES];
            for (unsigned i = 0; i < ZE_INST_BYTES; i += 4) {
                uint32_t v;
                if (!vm_read32(j, code_va(t) + i, v))
                    return nullptr;
                std::memcpy(bytes + i, &v, 4);
            }
            sip_inst = decode_for_model(bytes);
            return &sip_inst;
        }
        const uint64_t slot = t.st.ip / ZE_INST_BYTES;
        if (t.st.ip % ZE_INST_BYTES || slot > (16u << 20) / ZE_INST_BYTES)
            return nullptr;
        if (j.code_gen != gt.code_gen_) {  // TLB_INVALIDATE bit 1 since: decode again
            j.code = CodeCache{};
            j.far.clear();
            j.code_gen = gt.code_gen_;
        }
        CodeCache &c = t.st.ib == j.w.kernel_va ? j.code : j.far[t.st.ib];
        if (slot >= c.code.size()) {
            c.code.resize(slot + 64);
            c.decoded.resize(slot + 64, 0);
        }
        if (!c.decoded[slot]) {
            uint8_t bytes[ZE_INST_BYTES];
            for (unsigned i = 0; i < ZE_INST_BYTES; i += 4) {
                Translation tr = gt.mmu_.translate(j.w.pt_root, t.st.ib + t.st.ip + i, false);
                if (tr.fault != FaultReason::None)
                    return nullptr;
                const uint32_t v = gt.mem_.read32(tr.pa);
                std::memcpy(bytes + i, &v, 4);
            }
            c.code[slot] = decode_for_model(bytes);
            c.decoded[slot] = 1;
        }
        return &c.code[slot];
    }

    // Why an instruction fetch failed (for the fault registers).
    FaultReason fetch_fault(HwThread &t)
    {
        const Job &j = *t.group->job;
        if (t.st.ip % ZE_INST_BYTES)
            return FaultReason::BadPhysical;
        const Translation tr = gt.mmu_.translate(j.w.pt_root, code_va(t), false);
        return tr.fault == FaultReason::None ? FaultReason::NotPresent : tr.fault;
    }

    // Earliest issue of the thread's next instruction given its dependencies.
    void schedule(HwThread &t, uint64_t earliest)
    {
        const DecodedInst *d = t.st.status == ThreadStatus::Running ? fetch(t) : nullptr;
        uint64_t r = earliest;
        if (d && d->valid) {
            for (int s = 0; s < 3; s++)
                for (unsigned k = 0; k < d->rd_n[s]; k++)
                    r = std::max(r, t.reg_ready[(d->rd_lo[s] + k) & 127]);
            for (unsigned k = 0; k < d->wr_n; k++)
                r = std::max(r, t.reg_ready[(d->wr_lo + k) & 127]);
            for (int f = 0; f < kFlagRegs; f++)
                if ((d->flag_rd | d->flag_wr) >> f & 1)
                    r = std::max(r, t.reg_ready[ZE_GRF_COUNT + f]);
        }
        t.ready = r;
    }

    // ---- dispatch ---------------------------------------------------------

    bool slm_alloc(SubSlice &s, uint32_t bytes, uint32_t &base)
    {
        uint32_t at = 0;
        size_t i = 0;
        for (; i < s.slm_used.size(); i++) {
            if (s.slm_used[i].first - at >= bytes)
                break;
            at = s.slm_used[i].first + s.slm_used[i].second;
        }
        if (i == s.slm_used.size() && s.slm.size() - at < bytes)
            return false;
        s.slm_used.insert(s.slm_used.begin() + long(i), {at, bytes});
        base = at;
        return true;
    }

    void slm_free(SubSlice &s, uint32_t base)
    {
        for (size_t i = 0; i < s.slm_used.size(); i++)
            if (s.slm_used[i].first == base) {
                s.slm_used.erase(s.slm_used.begin() + long(i));
                return;
            }
    }

    void payload(HwThread &t, const Group &g, uint32_t s, uint32_t e, uint32_t slot)
    {
        const WalkerJob &w = g.job->w;
        ThreadState &st = t.st;
        st.reset();
        st.status = ThreadStatus::Running;
        st.ib = w.kernel_va;
        for (int i = 0; i < 3; i++) {
            st.grf[0][i] = g.id[i];
            st.grf[0][4 + i] = w.group_size[i];
        }
        st.grf[0][3] = t.index;
        st.grf[0][7] = g.job->threads_per_group;
        const uint32_t items = w.group_size[0] * w.group_size[1] * w.group_size[2];
        for (uint32_t i = 0; i < w.simd; i++) {
            const uint32_t l = t.index * w.simd + i;
            const uint32_t x = l % w.group_size[0];
            const uint32_t y = (l / w.group_size[0]) % w.group_size[1];
            const uint32_t z = l / (w.group_size[0] * w.group_size[1]);
            if (l < items) {
                st.ce |= 1u << i;
                st.grf[1 + i / 8][i % 8] = x;
                st.grf[3 + i / 8][i % 8] = y;
                st.grf[5 + i / 8][i % 8] = z;
            }
        }
        const Topology &tp = gt.cfg_.topo;
        st.sr0[0] = (s / tp.subslices) << 24 | (s % tp.subslices) << 16 | e << 8 | slot;
        st.sr0[1] = g.linear;
        st.sr0[2] = w.simd;
        if (gt.debug_ && gt.debug_->sip_enabled()) {
            st.sip_en = 1;
            st.cr0[0] = gt.debug_->exc_enables();
        }
    }

    // Copy the argument area into r7... through the MMU; false (and the
    // faulting address) on a fault, which the thread raises when it first issues.
    bool load_args(HwThread &t, const WalkerJob &w, uint64_t &fault_va, FaultReason &why)
    {
        for (uint32_t off = 0; off < w.arg_bytes; off += 4) {
            Translation tr = gt.mmu_.translate(w.pt_root, w.args_va + off, false);
            if (tr.fault != FaultReason::None) {
                fault_va = w.args_va + off;
                why = tr.fault;
                return false;
            }
            t.st.grf[7 + off / 32][(off / 4) % 8] = gt.mem_.read32(tr.pa);
        }
        return true;
    }

    // Try to place the next group of the front job; true when placed.
    bool dispatch_one()
    {
        if (jobs.empty())
            return false;
        Job &j = jobs.front();
        if (j.next_group >= j.groups_total)
            return false;
        const uint32_t nss = uint32_t(ss.size());
        for (uint32_t k = 0; k < nss; k++) {
            const uint32_t si = (next_ss + k) % nss;
            SubSlice &s = ss[si];
            uint32_t slm_base = 0;
            if (s.free_threads < j.threads_per_group)
                continue;
            if (j.w.slm && !slm_alloc(s, j.w.slm, slm_base))
                continue;
            auto g = std::make_unique<Group>();
            const uint64_t lin = j.next_group++;
            g->job = &j;
            g->linear = uint32_t(lin);
            g->id[0] = uint32_t(lin % j.w.group_count[0]);
            g->id[1] = uint32_t(lin / j.w.group_count[0] % j.w.group_count[1]);
            g->id[2] = uint32_t(lin / (uint64_t(j.w.group_count[0]) * j.w.group_count[1]));
            g->live = j.threads_per_group;
            g->arrived = 0;
            g->subslice = si;
            g->slm_base = slm_base;
            std::fill(s.slm.begin() + slm_base, s.slm.begin() + slm_base + j.w.slm, 0);
            uint32_t placed = 0, e = s.next_eu;
            while (placed < j.threads_per_group) {
                Eu &eu = s.eus[e % s.eus.size()];
                for (uint32_t slot = 0; slot < eu.threads.size(); slot++) {
                    HwThread &t = eu.threads[slot];
                    if (t.busy)
                        continue;
                    account(eu, eu_index(si, e % uint32_t(s.eus.size())), gt.now_);
                    t.busy = true;
                    t.pf = PageFault{};
                    t.group = g.get();
                    t.index = placed++;
                    payload(t, *g, si, e % uint32_t(s.eus.size()), slot);
                    std::fill(std::begin(t.reg_ready), std::end(t.reg_ready), 0);
                    t.sends_done = 0;
                    dispatcher_free = std::max(dispatcher_free, gt.now_) + gt.cfg_.dispatch_cycles;
                    t.arg_fault = !load_args(t, j.w, t.arg_fault_va, t.arg_fault_why);
                    schedule(t, dispatcher_free);
                    eu.resident++;
                    eu.next = std::min(eu.next, t.ready);
                    resident_total++;
                    s.free_threads--;
                    gt.events_.thread_dispatched(gt.now_);
                    break;
                }
                e++;
            }
            s.next_eu = e % uint32_t(s.eus.size());
            groups.push_back(std::move(g));
            next_ss = (si + 1) % nss;
            return true;
        }
        return false;
    }

    void dispatch()
    {
        while (dispatch_one()) {
        }
        while (!jobs.empty() && jobs.front().next_group >= jobs.front().groups_total &&
               jobs.front().groups_done == jobs.front().groups_total) {
            jobs.pop_front();
            gt.walkers_completed_++;
            if (gt.on_walker_done)
                gt.on_walker_done();
        }
    }

    // ---- thread end ---------------------------------------------------------

    void record(const HwThread &t)
    {
        ThreadRecord r{};
        std::memcpy(r.group, t.group->id, sizeof(r.group));
        r.group_linear = t.group->linear;
        r.thread = t.index;
        r.status = t.st.status;
        r.exception_bits = t.st.cr0[1];
        r.exception_ip = t.st.cr0[2];
        r.exception_addr = t.st.cr0[3];
        std::memcpy(r.grf, t.st.grf, sizeof(r.grf));
        r.f[0] = t.st.f[0];
        r.f[1] = t.st.f[1];
        gt.records_.push_back(r);
    }

    void release_barrier(Group &g, uint64_t at);

    void retire(uint32_t si, uint32_t ei, HwThread &t)
    {
        SubSlice &s = ss[si];
        Eu &eu = s.eus[ei];
        account(eu, eu_index(si, ei), gt.now_ + 1);
        if (gt.capture_)
            record(t);
        if (t.st.status == ThreadStatus::Exception) {
            const bool pf = t.st.cr0[1] >> ZE_EXC_PAGE_FAULT & 1;
            const bool full = pf || (t.st.cr0[1] >> ZE_EXC_MISALIGNED & 1);  // SLM: the offset
            gt.exceptions_.push_back(EuException{t.st.cr0[1], t.st.cr0[2], full ? t.pf.va : t.st.cr0[3],
                                                 pf ? t.pf.reason : FaultReason::None, pf && t.pf.write,
                                                 t.group->job->w.kernel_va, t.st.ib, eu_index(si, ei),
                                                 uint32_t(&t - eu.threads.data())});
            if (gt.exceptions_.size() > 64)  // the device takes them every step: keep a bounded tail
                gt.exceptions_.erase(gt.exceptions_.begin());
        }
        Group &g = *t.group;
        if (gt.debug_)
            gt.debug_->end(gt.now_, tid_of(si, ei, uint32_t(&t - eu.threads.data())));
        t.busy = false;
        t.ready = kNever;
        t.group = nullptr;
        eu.resident--;
        resident_total--;
        s.free_threads++;
        gt.events_.thread_retired(gt.now_);
        g.live--;
        if (g.live && g.arrived == g.live)
            release_barrier(g, gt.now_);
        if (!g.live) {
            if (g.job->w.slm)
                slm_free(s, g.slm_base);
            g.job->groups_done++;
            groups.erase(std::find_if(groups.begin(), groups.end(),
                                      [&](const std::unique_ptr<Group> &p) { return p.get() == &g; }));
        }
    }

    // ---- debug (docs/debug.md section 2) -------------------------------------

    uint32_t tid_of(uint32_t si, uint32_t ei, uint32_t slot) const { return eu_index(si, ei) * 8 + slot; }

    bool vm_read32(const Job &j, uint64_t va, uint32_t &v)
    {
        const Translation tr = gt.mmu_.translate(j.w.pt_root, va, false);
        if (tr.fault != FaultReason::None || (va & 3))
            return false;
        v = gt.mem_.read32(tr.pa);
        return true;
    }

    bool vm_write32(const Job &j, uint64_t va, uint32_t v)
    {
        const Translation tr = gt.mmu_.translate(j.w.pt_root, va, true);
        if (tr.fault != FaultReason::None || (va & 3))
            return false;
        gt.mem_.write32(tr.pa, v);
        return true;
    }

    // The stop's reason from cr0.1: breakpoint > page fault > halt > exception.
    static uint32_t stop_reason(uint32_t bits)
    {
        if (bits >> ZE_EXC_BREAKPOINT & 1)
            return 1;
        if (bits >> ZE_EXC_PAGE_FAULT & 1)
            return 2;
        if (bits & (1u << ZE_EXC_HALT | 1u << ZE_EXC_EXTERNAL_HALT))
            return 3;
        return 4;
    }

    uint64_t slot_va(uint32_t si, uint32_t ei, uint32_t slot) const
    {
        const uint64_t index = uint64_t(eu_index(si, ei)) * gt.cfg_.topo.threads + slot;
        return gt.debug_->ssa_va() + index * gt.debug_->slot_size();
    }

    void snapshot(const HwThread &t, uint32_t si, uint32_t ei, uint32_t slot, bool resume)
    {
        const Topology &tp = gt.cfg_.topo;
        const ThreadState &st = t.st;
        DebugSnapshot s;
        s.resume = resume;
        s.tid = tid_of(si, ei, slot);
        s.eu = eu_index(si, ei);
        s.slot = slot;
        s.slice = si / tp.subslices;
        s.subslice = si % tp.subslices;
        s.eu_in_subslice = ei;
        s.slot_index = s.eu * tp.threads + slot;
        s.reason = resume ? 0 : stop_reason(st.cr0[1]);
        s.slot_va = gt.debug_->ssa_va() + uint64_t(s.slot_index) * gt.debug_->slot_size();
        s.kernel_va = t.group->job->w.kernel_va;
        s.cycle = gt.now_;
        s.ip = resume ? st.ip : st.cr0[2];
        s.ib = st.ib;
        std::memcpy(s.grf, st.grf, sizeof(s.grf));
        std::memcpy(s.a0, st.a0, sizeof(s.a0));
        std::memcpy(s.f, st.f, sizeof(s.f));
        std::memcpy(s.sr0, st.sr0, sizeof(s.sr0));
        std::memcpy(s.cr0, st.cr0, sizeof(s.cr0));
        s.ce = st.ce;
        std::memcpy(s.tdr, st.tdr, sizeof(s.tdr));
        for (int a = 0; a < 2; a++)
            std::memcpy(s.acc[a], st.acc[a], sizeof(s.acc[a]));
        std::memcpy(s.dbg0, st.dbg0, sizeof(s.dbg0));
        s.tm0[0] = uint32_t(st.cycle);
        s.tm0[1] = uint32_t(st.cycle >> 32);
        s.fault_va = !resume && (st.cr0[1] >> ZE_EXC_PAGE_FAULT & 1) ? t.pf.va : 0;
        s.cf_depth = uint32_t(st.ncf);
        s.ret_depth = uint32_t(st.nret);
        gt.ledger_.debug_snapshot(s);
    }

    // Hardware entry into the system routine (docs/debug.md section 2.3), after cr0.1-3
    // were set.  False when the slot cannot be written: the thread then ends with its
    // exception, as without a SIP.
    bool enter_sip(uint32_t si, uint32_t ei, uint32_t slot, HwThread &t)
    {
        ThreadState &st = t.st;
        const Job &j = *t.group->job;
        const uint64_t va = slot_va(si, ei, slot);
        bool ok = true;
        auto w = [&](uint32_t off, uint32_t v) { ok = ok && vm_write32(j, va + off, v); };
        for (unsigned r = 126; r < 128; r++)
            for (unsigned k = 0; k < 8; k++)
                w(ZESIM_SSA_GRF_OFFSET + r * 32 + 4 * k, st.grf[r][k]);
        w(ZESIM_SSA_CE_OFFSET, st.ce);
        w(ZESIM_SSA_SP_OFFSET, uint32_t(st.ncf));
        w(ZESIM_SSA_SP_OFFSET + 4, uint32_t(st.nret));
        // A page fault's whole address (cr0.3 has its low 32 bits), else 0.
        const uint64_t fva = st.cr0[1] >> ZE_EXC_PAGE_FAULT & 1 ? t.pf.va : 0;
        w(ZESIM_SSA_SP_OFFSET + 8, uint32_t(fva));
        w(ZESIM_SSA_SP_OFFSET + 12, uint32_t(fva >> 32));
        // Hardware-private: the control-flow stack (12 bytes an entry), the return stack.
        for (int i = 0; i < kCfDepth; i++) {
            w(ZESIM_SSA_HW_OFFSET + 12 * i, st.cf[i].loop);
            w(ZESIM_SSA_HW_OFFSET + 12 * i + 4, st.cf[i].saved);
            w(ZESIM_SSA_HW_OFFSET + 12 * i + 8, st.cf[i].cont);
        }
        for (int i = 0; i < kRetDepth; i++) {
            w(ZESIM_SSA_HW_RET_IP_OFFSET + 4 * i, st.ret[i]);
            w(ZESIM_SSA_HW_RET_IB_OFFSET + 8 * i, uint32_t(st.ret_ib[i]));
            w(ZESIM_SSA_HW_RET_IB_OFFSET + 8 * i + 4, uint32_t(st.ret_ib[i] >> 32));
        }
        // The instruction base cr0.2 counts from (the "sba" set; docs/isa.md section 3.5).
        w(ZESIM_SSA_SBA_OFFSET, uint32_t(st.ib));
        w(ZESIM_SSA_SBA_OFFSET + 4, uint32_t(st.ib >> 32));
        if (!ok)
            return false;
        snapshot(t, si, ei, slot, false);
        const uint32_t r126[8] = {uint32_t(va), uint32_t(va >> 32), tid_of(si, ei, slot),
                                  eu_index(si, ei) * gt.cfg_.topo.threads + slot, j.w.slm, 0, 0, 0};
        std::memcpy(st.grf[126], r126, sizeof(r126));
        for (unsigned k = 0; k < 8; k++)
            st.grf[127][k] = 4 * k;
        st.ce = 0xffffu;
        st.ncf = 0;
        st.nret = 0;
        st.in_sip = 1;
        st.ip = 0;
        st.status = ThreadStatus::Running;
        // The hidden registers changed: no scoreboard wait on them.
        t.reg_ready[126] = t.reg_ready[127] = 0;
        return true;
    }

    // `sipret`: reload r126, r127, ce and the stacks from the slot; continue at cr0.2.
    // False when the slot cannot be read (the thread ends with a page fault).
    bool sip_return(uint32_t si, uint32_t ei, uint32_t slot, HwThread &t)
    {
        ThreadState &st = t.st;
        const Job &j = *t.group->job;
        const uint64_t va = slot_va(si, ei, slot);
        ThreadState n = st;
        bool ok = true;
        auto r = [&](uint32_t off) {
            uint32_t v = 0;
            ok = ok && vm_read32(j, va + off, v);
            return v;
        };
        for (unsigned g = 126; g < 128; g++)
            for (unsigned k = 0; k < 8; k++)
                n.grf[g][k] = r(ZESIM_SSA_GRF_OFFSET + g * 32 + 4 * k);
        n.ce = r(ZESIM_SSA_CE_OFFSET);
        n.ncf = int(std::min<uint32_t>(r(ZESIM_SSA_SP_OFFSET), kCfDepth));
        n.nret = int(std::min<uint32_t>(r(ZESIM_SSA_SP_OFFSET + 4), kRetDepth));
        for (int i = 0; i < kCfDepth; i++) {
            n.cf[i].loop = uint8_t(r(ZESIM_SSA_HW_OFFSET + 12 * i) != 0);
            n.cf[i].saved = r(ZESIM_SSA_HW_OFFSET + 12 * i + 4);
            n.cf[i].cont = r(ZESIM_SSA_HW_OFFSET + 12 * i + 8);
        }
        for (int i = 0; i < kRetDepth; i++) {
            n.ret[i] = r(ZESIM_SSA_HW_RET_IP_OFFSET + 4 * i);
            n.ret_ib[i] = r(ZESIM_SSA_HW_RET_IB_OFFSET + 8 * i);
            n.ret_ib[i] |= uint64_t(r(ZESIM_SSA_HW_RET_IB_OFFSET + 8 * i + 4)) << 32;
        }
        n.ib = r(ZESIM_SSA_SBA_OFFSET);
        n.ib |= uint64_t(r(ZESIM_SSA_SBA_OFFSET + 4)) << 32;
        if (!ok)
            return false;
        n.ip = st.cr0[2];
        n.in_sip = 0;
        st = n;
        t.reg_ready[126] = t.reg_ready[127] = 0;
        snapshot(t, si, ei, slot, true);
        return true;
    }

    // The thread waits in attention: the stop line (docs/debug.md section 2.3).
    void debug_stop(uint32_t si, uint32_t ei, uint32_t slot, HwThread &t, uint32_t reason)
    {
        const uint32_t tid = tid_of(si, ei, slot);
        gt.debug_->stop(gt.now_, tid, reason);
        if (!gt.debug_->attention(tid)) {  // not accepted (cannot happen for a running thread)
            t.st.status = ThreadStatus::Running;
            return;
        }
        t.st.status = ThreadStatus::DebugWait;
        t.ready = kNever;
        debug_waiting++;
    }

    // ---- sends --------------------------------------------------------------

    void fault(HwThread &t, uint32_t eu, uint32_t slot, uint64_t va, FaultReason why, bool write)
    {
        t.pf = PageFault{va, why, eu, slot, write};
        if (gt.faults_.size() < 65536)  // for the stimulus runner's report; bounded in a long-lived daemon
            gt.faults_.push_back(t.pf);
        t.st.raise(ZE_EXC_PAGE_FAULT, uint32_t(va));
    }

    // Performs a send; returns the cycle its result is ready.
    uint64_t send(uint32_t si, uint32_t ei, uint32_t slot, HwThread &t, const DecodedInst &d);
};

void Gt::Impl::release_barrier(Group &g, uint64_t at)
{
    SubSlice &s = ss[g.subslice];
    gt.events_.barrier_release(at);
    for (Eu &eu : s.eus)
        for (HwThread &t : eu.threads)
            if (t.busy && t.group == &g && t.st.status == ThreadStatus::Barrier) {
                t.st.status = ThreadStatus::Running;
                schedule(t, at + gt.cfg_.barrier_cycles);
                eu.next = std::min(eu.next, t.ready);
            }
    g.arrived = 0;
}

uint64_t Gt::Impl::send(uint32_t si, uint32_t ei, uint32_t slot, HwThread &t, const DecodedInst &d)
{
    const ze_inst_t &in = d.in;
    ThreadState &st = t.st;
    const unsigned msg = ze_send_msg(in.dw3);
    const uint64_t now = gt.now_;
    gt.events_.send(now, msg);
    const uint32_t geu = eu_index(si, ei);
    switch (msg) {
    case ZE_MSG_BARRIER: {
        Group &g = *t.group;
        st.ip += ZE_INST_BYTES;
        st.status = ThreadStatus::Barrier;
        if (++g.arrived == g.live)
            release_barrier(g, now);
        return now;
    }
    case ZE_MSG_FENCE:
        st.ip += ZE_INST_BYTES;
        return std::max(now + 1, t.sends_done);
    case ZE_MSG_EOT:
        st.status = ThreadStatus::Done;
        return now;
    case ZE_MSG_TIMESTAMP: {
        const ze_operand_t &o = in.dst;
        // tm0 of the model is the GT cycle counter (docs/isa.md §1.1).
        st.grf[o.reg][o.sub] = uint32_t(now);
        st.grf[o.reg][o.sub + 1] = uint32_t(now >> 32);
        st.ip += ZE_INST_BYTES;
        return now + 1;
    }
    default:
        break;
    }

    const bool slm = msg == ZE_MSG_SLM_LOAD || msg == ZE_MSG_SLM_STORE || msg == ZE_MSG_SLM_ATOMIC;
    const bool atomic = msg == ZE_MSG_ATOMIC || msg == ZE_MSG_SLM_ATOMIC;
    const bool store = msg == ZE_MSG_STORE || msg == ZE_MSG_SLM_STORE;
    const unsigned v = ze_send_vsize(in.dw3);
    const unsigned n = in.esize, span = n > 8 ? n / 8 : 1;
    const uint32_t lanes = enabled_lanes(st, in);
    uint64_t base = 0;
    if (!slm)
        base = uint64_t(st.grf[in.src[2].reg][in.src[2].sub]) |
               uint64_t(st.grf[in.src[2].reg][in.src[2].sub + 1]) << 32;
    const WalkerJob &job = t.group->job->w;

    // Check every channel and element before performing any (docs/isa.md §4).
    uint64_t where[ZE_MAX_SIMD][4];
    for (unsigned i = 0; i < n; i++) {
        if (!(lanes >> i & 1))
            continue;
        const uint32_t off = lane_dword(st, in.src[0].reg, i);
        for (unsigned e = 0; e < v; e++) {
            const uint64_t a = slm ? uint64_t(off) + 4 * e : base + off + 4 * e;
            if (a & 3) {
                t.pf = PageFault{a, FaultReason::None, geu, slot, store || atomic};  // the full address
                st.raise(ZE_EXC_MISALIGNED, uint32_t(a));
                return now;
            }
            if (slm) {
                if (a + 4 > job.slm) {
                    st.raise(ZE_EXC_SLM_BOUNDS, uint32_t(a));
                    return now;
                }
                where[i][e] = t.group->slm_base + a;
                continue;
            }
            Translation tr = gt.mmu_.translate(job.pt_root, a, store || atomic);
            if (tr.fault != FaultReason::None) {
                fault(t, geu, slot, a, tr.fault, store || atomic);
                return now;
            }
            where[i][e] = tr.pa;
        }
    }

    uint8_t *slm_mem = ss[si].slm.data();
    auto rd = [&](uint64_t a) {
        if (slm) {
            uint32_t x;
            std::memcpy(&x, slm_mem + a, 4);
            return x;
        }
        return gt.mem_.read32(a);
    };
    auto wr = [&](uint64_t a, uint32_t x) {
        if (slm)
            std::memcpy(slm_mem + a, &x, 4);
        else
            gt.mem_.write32(a, x);
    };
    const unsigned op = ze_send_atomic(in.dw3);
    uint32_t result[4][ZE_MAX_SIMD];
    for (unsigned i = 0; i < n; i++) {
        if (!(lanes >> i & 1))
            continue;
        for (unsigned e = 0; e < v; e++) {
            const uint64_t a = where[i][e];
            if (store) {
                wr(a, lane_dword(st, in.src[1].reg + e * span, i));
            } else if (!atomic) {
                result[e][i] = rd(a);
            } else {
                const uint32_t old = rd(a);
                const uint32_t p0 = in.src[1].kind ? lane_dword(st, in.src[1].reg, i) : 0;
                const uint32_t p1 = op == ZE_ATOMIC_CMPXCHG ? lane_dword(st, in.src[1].reg + span, i) : 0;
                uint32_t nv = old;
                switch (op) {
                case ZE_ATOMIC_ADD: nv = old + p0; break;
                case ZE_ATOMIC_SUB: nv = old - p0; break;
                case ZE_ATOMIC_MIN: nv = int32_t(p0) < int32_t(old) ? p0 : old; break;
                case ZE_ATOMIC_MAX: nv = int32_t(p0) > int32_t(old) ? p0 : old; break;
                case ZE_ATOMIC_UMIN: nv = std::min(old, p0); break;
                case ZE_ATOMIC_UMAX: nv = std::max(old, p0); break;
                case ZE_ATOMIC_AND: nv = old & p0; break;
                case ZE_ATOMIC_OR: nv = old | p0; break;
                case ZE_ATOMIC_XOR: nv = old ^ p0; break;
                case ZE_ATOMIC_XCHG: nv = p0; break;
                case ZE_ATOMIC_CMPXCHG: nv = old == p0 ? p1 : old; break;
                case ZE_ATOMIC_INC: nv = old + 1; break;
                case ZE_ATOMIC_DEC: nv = old - 1; break;
                default: break;
                }
                wr(a, nv);
                result[0][i] = old;
            }
        }
    }
    if (!store && in.dst.kind == ZE_OPND_GRFV)
        for (unsigned i = 0; i < n; i++)
            if (lanes >> i & 1)
                for (unsigned e = 0; e < v; e++)
                    st.grf[(in.dst.reg + e * span + i / 8) & 127][i % 8] = result[e][i];
    st.ip += ZE_INST_BYTES;

    // Timing: lines touched (global) or dwords (SLM).
    const unsigned cnt = unsigned(__builtin_popcount(lanes)) * v;
    if (slm) {
        uint32_t dw[ZE_MAX_SIMD * 4];
        unsigned k = 0;
        for (unsigned i = 0; i < n; i++)
            if (lanes >> i & 1)
                for (unsigned e = 0; e < v; e++)
                    dw[k++] = uint32_t(where[i][e] / 4);
        const MemStats before = gt.timing_.stats();
        const uint64_t done = gt.timing_.slm_access(now, dw, k, store, atomic);
        gt.events_.bytes(now, MemBytes::SlmRead, gt.timing_.stats().slm_bytes_read - before.slm_bytes_read);
        gt.events_.bytes(now, MemBytes::SlmWrite, gt.timing_.stats().slm_bytes_written - before.slm_bytes_written);
        return done;
    }
    uint64_t lines[ZE_MAX_SIMD * 4];
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (lanes >> i & 1)
            for (unsigned e = 0; e < v; e++) {
                const uint64_t l = where[i][e] / kLineBytes;
                if (std::find(lines, lines + k, l) == lines + k)
                    lines[k++] = l;
            }
    const MemStats before = gt.timing_.stats();
    const uint64_t done = gt.timing_.global_access(now, lines, k, store, cnt * 4, atomic);
    const MemStats &after = gt.timing_.stats();
    gt.events_.bytes(now, MemBytes::L3Read, after.l3_bytes_read - before.l3_bytes_read);
    gt.events_.bytes(now, MemBytes::L3Write, after.l3_bytes_written - before.l3_bytes_written);
    gt.events_.bytes(now, MemBytes::Dram, after.dram_bytes - before.dram_bytes);
    return done;
}

Gt::Gt(const GtConfig &cfg, PhysMem &mem)
    : cfg_(cfg), mem_(mem), mmu_(mem), timing_(cfg.mem)
{
    ledger_.configure(cfg.topo.total_eus(), cfg.ledger_window);
    impl_ = std::make_shared<Impl>(*this);
    events_.attach(&ledger_);
}

Gt::Image Gt::save_context()
{
    impl_->account_gt(now_);
    impl_->account_all(now_);
    Image img = std::move(impl_);
    impl_ = std::make_shared<Impl>(*this, now_);
    return img;
}

void Gt::restore_context(Image img)
{
    impl_->account_gt(now_);
    impl_->account_all(now_);
    impl_ = std::move(img);
    impl_->resume_at(now_);
}

uint64_t Gt::current_kernel() const
{
    return impl_->jobs.empty() ? 0 : impl_->jobs.front().w.kernel_va;
}

Gt::~Gt() = default;

std::string Gt::submit(const WalkerJob &w)
{
    if (w.simd != 8 && w.simd != 16)
        return "SIMD width must be 8 or 16";
    uint64_t items = 1, groups = 1;
    for (int i = 0; i < 3; i++) {
        if (!w.group_size[i] || !w.group_count[i])
            return "zero group size or count";
        items *= w.group_size[i];
        groups *= w.group_count[i];
    }
    const uint64_t threads = (items + w.simd - 1) / w.simd;
    const Topology &t = cfg_.topo;
    if (threads > uint64_t(t.eus) * t.threads)
        return "thread group needs " + std::to_string(threads) + " threads; a sub-slice has " +
               std::to_string(t.eus * t.threads);
    if (w.slm > cfg_.slm_bytes_per_subslice)
        return "SLM size exceeds the sub-slice's " + std::to_string(cfg_.slm_bytes_per_subslice) + " bytes";
    if (w.arg_bytes > 1024 || w.arg_bytes % 4)
        return "argument area must be a multiple of 4 up to 1024 bytes";
    if (groups >> 32)
        return "too many thread groups";
    impl_->account_gt(now_);  // the cycles before the walker arrived
    Job j;
    j.w = w;
    j.groups_total = groups;
    j.threads_per_group = uint32_t(threads);
    impl_->jobs.push_back(std::move(j));
    return "";
}

bool Gt::busy() const { return !impl_->jobs.empty() || impl_->resident_total > 0; }

void Gt::idle_until(uint64_t cycle)
{
    if (cycle > now_)
        impl_->advance_to(cycle);
}

uint64_t Gt::run(uint64_t max_cycles)
{
    Impl &m = *impl_;
    const uint64_t start = now_, stop = now_ + max_cycles;
    const unsigned lat[ZE_LAT_COUNT] = {
#define ZE_LAT(e, cycles, name) cycles,
#include "zs/ze_isa.def"
#undef ZE_LAT
    };
    while (now_ < stop) {
        m.account_gt(now_ + 1);  // this cycle counts the threads resident at its start
        m.dispatch();
        if (!busy())
            break;
        uint64_t next = kNever;
        for (uint32_t si = 0; si < m.ss.size(); si++) {
            SubSlice &s = m.ss[si];
            for (uint32_t ei = 0; ei < s.eus.size(); ei++) {
                Eu &eu = s.eus[ei];
                if (!eu.resident || eu.next > now_) {
                    next = std::min(next, eu.next);
                    continue;
                }
                // Issue one instruction: the first ready thread after the last issuer.
                const uint32_t nt = uint32_t(eu.threads.size());
                HwThread *pick = nullptr;
                uint32_t slot = 0;
                for (uint32_t k = 1; k <= nt; k++) {
                    const uint32_t c = (eu.rr + k) % nt;
                    HwThread &t = eu.threads[c];
                    if (t.busy && t.st.status == ThreadStatus::Running && t.ready <= now_) {
                        pick = &t;
                        slot = c;
                        break;
                    }
                }
                const uint32_t gidx = m.eu_index(si, ei);
                if (pick) {
                    m.account(eu, gidx, now_);
                    eu.accounted = now_ + 1;
                    events_.eu_issue(now_, gidx);
                    eu.rr = slot;
                    HwThread &t = *pick;
                    t.st.cycle = now_;
                    uint64_t after = now_ + 1;
                    bool sipret = false;
                    const uint32_t tid = gidx * 8 + slot;
                    if (debug_req_ && !t.st.in_sip &&
                        (debug_->halt_request(tid) || debug_->exc_request(tid))) {
                        // A halt or exception request, answered at this instruction boundary
                        // (docs/debug.md section 2.3): into the SIP, or without one straight
                        // into attention (reason 3 or 4), to continue at the same instruction.
                        const bool h = debug_->halt_request(tid), x = debug_->exc_request(tid);
                        if (t.st.sip_en) {
                            t.st.cr0[1] |= (h ? 1u << ZE_EXC_EXTERNAL_HALT : 0) | (x ? 1u << ZE_EXC_FORCED : 0);
                            t.st.cr0[2] = t.st.ip;
                            t.st.cr0[3] = 0;
                            t.st.raised = uint8_t(h ? ZE_EXC_EXTERNAL_HALT : ZE_EXC_FORCED);
                            t.st.status = ThreadStatus::Exception;
                        } else {
                            m.debug_stop(si, ei, slot, t, h ? 3 : 4);
                        }
                    } else {
                        const DecodedInst *d = t.arg_fault ? nullptr : m.fetch(t);
                        if (t.arg_fault) {
                            m.fault(t, gidx, slot, t.arg_fault_va, t.arg_fault_why, false);
                        } else if (!d) {
                            const uint64_t va = m.code_va(t);
                            m.fault(t, gidx, slot, va, m.fetch_fault(t), false);
                        } else {
                            const uint32_t enabled = d->valid ? enabled_lanes(t.st, d->in) : 0;
                            const uint64_t calla_to =
                                d->valid && d->in.opcode == ZE_OP_CALLA ? calla_target(t.st, d->in) : 0;
                            StepResult r = execute(t.st, *d);
                            sipret = r == StepResult::SipRet;
                            if (r == StepResult::Stopped && t.st.raised == ZE_EXC_MISALIGNED &&
                                d->in.opcode == ZE_OP_CALLA)
                                t.pf = PageFault{calla_to, FaultReason::None, gidx, slot, false};  // the full target
                            if (d->valid && t.st.status != ThreadStatus::Exception) {
                                events_.instruction(now_, ze_lat(d->lat_class), unsigned(__builtin_popcount(enabled)));
                            }
                            uint64_t result = now_ + lat[d->lat_class];
                            if (r == StepResult::Send) {
                                result = m.send(si, ei, slot, t, *d);
                                t.sends_done = std::max(t.sends_done, result);
                                const unsigned msg = ze_send_msg(d->in.dw3);
                                if (msg == ZE_MSG_FENCE)
                                    after = result;
                                else if (msg == ZE_MSG_BARRIER)
                                    after = now_ + cfg_.barrier_cycles;  // the last arrival released all
                                result = msg == ZE_MSG_BARRIER ? now_ : result;
                            } else if (d->in.opcode == ZE_OP_WAIT) {
                                const ze_operand_t &o = d->in.src[0];
                                const uint32_t c = o.kind == ZE_OPND_IMM ? d->in.dw3 : t.st.grf[o.reg][o.sub];
                                after = now_ + std::max<uint64_t>(1, c);
                            } else if (d->lat_class == ZE_LAT_BRANCH) {
                                after = result;
                            }
                            for (unsigned k = 0; k < d->wr_n; k++)
                                t.reg_ready[(d->wr_lo + k) & 127] = std::max(t.reg_ready[(d->wr_lo + k) & 127], result);
                            for (int f = 0; f < kFlagRegs; f++)
                                if (d->flag_wr >> f & 1)
                                    t.reg_ready[ZE_GRF_COUNT + f] = result;
                        }
                    }
                    // The system routine (docs/debug.md section 2.3): an enabled exception or a
                    // request enters it; its `halt` is the stop; `sipret` leaves it.
                    ThreadState &ts = t.st;
                    if (ts.status == ThreadStatus::Exception && debug_ && ts.sip_en && !ts.in_sip &&
                        (ts.raised >= ZE_EXC_FORCED || (ts.cr0[0] >> ts.raised & 1)))
                        m.enter_sip(si, ei, slot, t);
                    else if (ts.status == ThreadStatus::DebugWait && ts.in_sip)
                        m.debug_stop(si, ei, slot, t, Impl::stop_reason(ts.cr0[1]));
                    else if (sipret && !m.sip_return(si, ei, slot, t))
                        m.fault(t, gidx, slot, m.slot_va(si, ei, slot), FaultReason::NotPresent, false);
                    if (t.st.status == ThreadStatus::Running)
                        m.schedule(t, after);
                    else if (t.st.status == ThreadStatus::Barrier || t.st.status == ThreadStatus::DebugWait)
                        t.ready = kNever;
                    else
                        m.retire(si, ei, t);
                }
                eu.next = kNever;
                for (HwThread &t : eu.threads)
                    if (t.busy && t.st.status == ThreadStatus::Running)
                        eu.next = std::min(eu.next, t.ready);
                if (eu.resident && eu.next <= now_)
                    eu.next = now_ + 1;
                next = std::min(next, eu.next);
            }
        }
        m.dispatch();
        if (!busy())
            break;
        if (next == kNever && m.debug_waiting) {
            // Threads wait in attention for the debugger: time passes.
            next = stop;
        } else if (next == kNever) {
            // Everything resident waits at a barrier that cannot complete, or
            // for a dispatch slot: both are stuck forever.
            next = std::max(now_ + 1, m.dispatcher_free);
            if (m.resident_total && next == now_ + 1 && m.jobs.empty())
                break;
        }
        m.advance_to(std::min(std::max(next, now_ + 1), stop));
    }
    return now_ - start;
}

void Gt::flush_ledger() { impl_->flush_ledger(); }

void Gt::debug_resumed()
{
    Impl &m = *impl_;
    if (!debug_ || !m.debug_waiting)
        return;
    for (uint32_t si = 0; si < m.ss.size(); si++)
        for (uint32_t ei = 0; ei < m.ss[si].eus.size(); ei++) {
            Eu &eu = m.ss[si].eus[ei];
            for (uint32_t slot = 0; slot < eu.threads.size(); slot++) {
                HwThread &t = eu.threads[slot];
                if (!t.busy || t.st.status != ThreadStatus::DebugWait || debug_->attention(m.tid_of(si, ei, slot)))
                    continue;
                t.st.status = ThreadStatus::Running;
                m.debug_waiting--;
                m.schedule(t, now_ + 1);
                eu.next = std::min(eu.next, t.ready);
            }
        }
}

void Gt::deliver_lines()
{
    impl_->account_gt(now_);
    impl_->account_all(now_);
    events_.sync(now_);
}

void Gt::reset() { impl_->reset(); }

bool Gt::run_to_idle(uint64_t limit)
{
    const uint64_t end = now_ + limit;
    while (busy() && now_ < end) {
        const uint64_t before = now_;
        run(end - now_);
        if (now_ == before && busy())
            return false;  // stuck (e.g. a barrier that can never complete)
    }
    return !busy();
}

}  // namespace zesim
