// Standalone mode: run a command-buffer stimulus file with no driver
// (docs/stimulus.md).  This file plays a minimal KMD: it allocates physical
// pages, builds page tables, loads modules, writes a batch buffer and rings
// the doorbell.  It programs the device and reaches its memory only through
// the hardware interface (include/zs/hw_if.h: MMIO and zs_hw_phys), with the
// shared page-table format and walk (include/zs/pt_format.h).  Of the model
// it uses only what runs the simulation (GtTop::run_until_idle, the GT's
// clock) and the ground-truth ledger it reports (thread records, page faults,
// the engine error's text) -- never its memory or MMU.
#include "stimulus.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "zs/hw_if.h"
#include "zs/pt_format.h"
#include "zs/sip.h"
#include "zs/ze_module.h"

namespace zesim {

namespace {

using json = nlohmann::json;

constexpr uint64_t kPage = ZS_PT_PAGE;
constexpr uint64_t kPage64 = ZS_PT_PAGE_64K;
constexpr uint64_t kRingPhys = 0x1000;
constexpr uint32_t kRingSize = 4096;
constexpr uint64_t kBatchVa = 0x7f0000000000ull;
constexpr uint64_t kArgsVa = 0x7e0000000000ull;
constexpr uint32_t kLocalArgAlign = 4;
// The debug section (docs/stimulus.md): the SIP and the state save area.
constexpr uint64_t kSipVa = 0x7d0000000000ull;
constexpr uint64_t kSsaVa = 0x7c0000000000ull;
constexpr uint32_t kSlotSize = 5120;  // ZESIM_SSA_SLOT_SIZE

struct Mapping {
    uint64_t va, size;
};

class MiniKmd {
public:
    explicit MiniKmd(zs_hw_t *hw) : hw_(hw)
    {
        mem_ = zs_hw_phys(hw, &size_);
        next_phys_ = 0x10000;
        root_ = alloc_page();
    }

    uint64_t root() const { return root_; }
    uint8_t *phys() { return mem_; }

    uint64_t alloc(uint64_t bytes)
    {
        const uint64_t pa = (next_phys_ + bytes - 1) & ~(bytes - 1);
        if (pa + bytes > size_)
            throw std::runtime_error("stimulus needs more physical memory than the device has");
        next_phys_ = pa + bytes;
        std::memset(mem_ + pa, 0, bytes);
        return pa;
    }

    uint64_t alloc_page() { return alloc(kPage); }

    // Map [va, va+size) to fresh zeroed pages of `page` bytes (4 KiB or
    // 64 KiB; a 2 MiB region holds pages of one size, docs/memory.md).
    void map(uint64_t va, uint64_t size, bool writable, uint64_t page = kPage)
    {
        if (page != kPage && page != kPage64)
            throw std::runtime_error("page size must be 4096 or 65536");
        if (va % page || size % page || va >> 47)
            throw std::runtime_error("buffer address " + hex(va) + " and size must be " +
                                     std::to_string(page / 1024) + " KiB aligned, below 2^47");
        for (const Mapping &m : maps_)
            if (va < m.va + m.size && m.va < va + size)
                throw std::runtime_error("buffer at " + hex(va) + " overlaps another at " + hex(m.va));
        maps_.push_back({va, size});
        const bool big = page == kPage64;
        for (uint64_t off = 0; off < size; off += page) {
            uint64_t table = root_;
            const uint64_t a = va + off;
            for (int level = ZS_PT_LEVELS - 1; level > 0; level--) {
                const uint64_t slot = table + zs_pt_index(a, level) * ZS_PT_ENTRY_BYTES;
                uint64_t e = rd64(slot);
                if (!(e & ZS_PTE_PRESENT)) {
                    e = zs_pt_table_entry(alloc_page(), level == 1 && big);
                    wr64(slot, e);
                } else if (level == 1 && bool(e & ZS_PDE_64K) != big) {
                    throw std::runtime_error("buffer at " + hex(va) + ": 4 KiB and 64 KiB pages mixed in one 2 MiB region");
                }
                table = e & ZS_PTE_ADDR_MASK;
            }
            wr64(table + zs_pt_leaf_index(a, big) * ZS_PT_ENTRY_BYTES, zs_pt_leaf_entry(alloc(page), writable));
        }
    }

    // Physical address of `va` as the device would translate it (for a
    // read: the runner writes read-only buffers too).
    uint64_t translate(uint64_t va)
    {
        zs_pt_walk_result_t r;
        const uint64_t pa = zs_pt_walk(mem_, size_, root_, va, 0, &r);
        if (r.fault != ZS_PT_OK)
            throw std::runtime_error("address " + hex(va) + " is not mapped");
        return pa;
    }

    // Copy through the page tables, one 4 KiB piece at a time.
    void write(uint64_t va, const uint8_t *src, size_t n)
    {
        while (n) {
            const size_t chunk = std::min<uint64_t>(n, kPage - (va & (kPage - 1)));
            std::memcpy(mem_ + translate(va), src, chunk);
            va += chunk, src += chunk, n -= chunk;
        }
    }

    void read(uint64_t va, uint8_t *dst, size_t n)
    {
        while (n) {
            const size_t chunk = std::min<uint64_t>(n, kPage - (va & (kPage - 1)));
            std::memcpy(dst, mem_ + translate(va), chunk);
            va += chunk, dst += chunk, n -= chunk;
        }
    }

    static std::string hex(uint64_t v)
    {
        char b[32];
        snprintf(b, sizeof(b), "0x%llx", (unsigned long long)v);
        return b;
    }

private:
    uint64_t rd64(uint64_t pa) const
    {
        uint64_t v;
        std::memcpy(&v, mem_ + pa, 8);
        return v;
    }
    void wr64(uint64_t pa, uint64_t v) { std::memcpy(mem_ + pa, &v, 8); }

    zs_hw_t *hw_;
    uint8_t *mem_;
    uint64_t size_ = 0, next_phys_, root_;
    std::vector<Mapping> maps_;
};

uint64_t number(const json &j, const char *what)
{
    if (j.is_number_unsigned())
        return j.get<uint64_t>();
    if (j.is_string()) {
        // Decimal, or hex with 0x (never octal: "010" is ten).
        const std::string t = j.get<std::string>();
        const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
        const char *digits = t.c_str() + (hex ? 2 : 0);
        bool clean = *digits != 0;
        for (const char *d = digits; *d; d++)
            clean &= hex ? std::isxdigit(static_cast<unsigned char>(*d)) != 0 : (*d >= '0' && *d <= '9');
        char *end = nullptr;
        errno = 0;
        const unsigned long long v = clean ? std::strtoull(digits, &end, hex ? 16 : 10) : 0;
        if (!clean || *end || errno == ERANGE)
            throw std::runtime_error(std::string(what) + ": '" + t + "' is not a 64-bit unsigned number");
        return v;
    }
    throw std::runtime_error(std::string(what) + ": expected a number or a \"0x...\" string");
}

std::vector<uint8_t> unhex(const std::string &s, const char *what)
{
    if (s.size() % 2)
        throw std::runtime_error(std::string(what) + ": odd number of hex digits");
    std::vector<uint8_t> out(s.size() / 2);
    for (size_t i = 0; i < out.size(); i++) {
        const std::string byte = s.substr(2 * i, 2);
        char *end;
        out[i] = uint8_t(strtoul(byte.c_str(), &end, 16));
        if (*end)
            throw std::runtime_error(std::string(what) + ": bad hex digits '" + byte + "'");
    }
    return out;
}

std::string tohex(const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789abcdef";
    std::string s(n * 2, '0');
    for (size_t i = 0; i < n; i++) {
        s[2 * i] = d[p[i] >> 4];
        s[2 * i + 1] = d[p[i] & 15];
    }
    return s;
}

const char *status_name(ThreadStatus s)
{
    switch (s) {
    case ThreadStatus::Done: return "eot";
    case ThreadStatus::Halted: return "halt";
    case ThreadStatus::Exception: return "exception";
    default: return "running";
    }
}

struct LoadedModule {
    zm_module_t m{};
    uint64_t va = 0;
    ~LoadedModule() { zm_module_free(&m); }
};

}  // namespace

std::string run_stimulus(Device &dev, GtTop &top, const std::string &path, const StimulusOptions &opt)
{
    std::ifstream f(path);
    if (!f)
        throw std::runtime_error(path + ": cannot open");
    json s;
    try {
        s = json::parse(f);
    } catch (const json::exception &e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
    zs_hw_t *hw = &dev;
    // Each run starts from a quiet device: no leftover work, errors or interrupts.
    zs_hw_mmio_write(hw, ZS_REG_ENGINE_RESET, 1);
    zs_hw_mmio_write(hw, ZS_REG_IRQ_STATUS, ~0u);
    MiniKmd kmd(hw);
    dev.gt().clear_records();
    json out = json::object();
    const uint64_t snaps_before = dev.gt().ledger().debug_snapshots_total();  // the result has this run's
    try {
        std::vector<Mapping> buffers;
        for (const json &b : s.value("buffers", json::array())) {
            const uint64_t va = number(b.at("address"), "buffer address");
            std::vector<uint8_t> data = unhex(b.value("data", std::string()), "buffer data");
            const uint64_t size = b.contains("size") ? number(b["size"], "buffer size") : data.size();
            if (!size || data.size() > size)
                throw std::runtime_error("buffer at " + MiniKmd::hex(va) + ": size must be > 0 and hold its data");
            const uint64_t page = b.contains("page_size") ? number(b["page_size"], "page_size") : kPage;
            kmd.map(va, (size + page - 1) & ~(page - 1), b.value("writable", true), page);
            kmd.write(va, data.data(), data.size());
            buffers.push_back({va, size});
        }
        std::vector<std::unique_ptr<LoadedModule>> modules;
        for (const json &m : s.value("modules", json::array())) {
            auto lm = std::make_unique<LoadedModule>();
            std::string mpath = m.at("path").get<std::string>();
            if (mpath[0] != '/')
                mpath = dir + "/" + mpath;
            char err[512];
            if (zm_module_read_file(mpath.c_str(), &lm->m, err, sizeof(err)))
                throw std::runtime_error(err);
            lm->va = number(m.at("address"), "module address");
            uint64_t end = 0;
            for (uint32_t k = 0; k < lm->m.nkernels; k++)
                end = std::max(end, lm->m.kernels[k].addr + lm->m.kernels[k].text_size);
            kmd.map(lm->va, (end + kPage - 1) & ~(kPage - 1), false);
            for (uint32_t k = 0; k < lm->m.nkernels; k++)
                kmd.write(lm->va + lm->m.kernels[k].addr, lm->m.kernels[k].text, lm->m.kernels[k].text_size);
            modules.push_back(std::move(lm));
        }

        // Encode the commands into one batch buffer.
        std::vector<uint32_t> batch;
        uint64_t args_next = kArgsVa;
        for (const json &c : s.value("commands", json::array())) {
            const std::string cmd = c.at("cmd").get<std::string>();
            auto lo = [](uint64_t v) { return uint32_t(v); };
            auto hi = [](uint64_t v) { return uint32_t(v >> 32); };
            if (cmd == "compute_walker") {
                const size_t mi = c.value("module", 0);
                if (mi >= modules.size())
                    throw std::runtime_error("compute_walker: no module " + std::to_string(mi));
                const zm_module_t &m = modules[mi]->m;
                const std::string kname = c.at("kernel").get<std::string>();
                const zm_kernel_t *k = nullptr;
                for (uint32_t i = 0; i < m.nkernels; i++)
                    if (kname == m.kernels[i].name)
                        k = &m.kernels[i];
                if (!k)
                    throw std::runtime_error("compute_walker: no kernel '" + kname + "'");
                std::vector<uint8_t> args = unhex(c.value("args", std::string()), "args");
                if (args.size() != k->arg_bytes)
                    throw std::runtime_error("kernel " + kname + " takes " + std::to_string(k->arg_bytes) +
                                             " argument bytes, got " + std::to_string(args.size()));
                // The driver's job: place local arguments after the static SLM.
                uint32_t slm_end = k->slm;
                json locals = c.value("local_sizes", json::object());
                for (uint32_t i = 0; i < k->nargs; i++) {
                    if (k->args[i].kind != ZM_ARG_LOCAL)
                        continue;
                    if (!locals.contains(k->args[i].name))
                        throw std::runtime_error("no size for local argument '" + std::string(k->args[i].name) + "'");
                    const uint32_t off = (slm_end + kLocalArgAlign - 1) / kLocalArgAlign * kLocalArgAlign;
                    std::memcpy(args.data() + k->args[i].offset, &off, 4);
                    slm_end = off + locals[k->args[i].name].get<uint32_t>();
                }
                const uint64_t args_va = args_next;
                if (!args.empty()) {
                    kmd.map(args_va, (args.size() + kPage - 1) & ~(kPage - 1), false);
                    kmd.write(args_va, args.data(), args.size());
                    args_next += (args.size() + kPage - 1) & ~(kPage - 1);
                }
                const uint64_t kva = modules[mi]->va + k->addr;
                const json gs = c.at("group_size"), gc = c.at("groups");
                batch.insert(batch.end(),
                             {ZS_CMD_HEADER(ZS_CMD_COMPUTE_WALKER, ZS_CMD_LEN_COMPUTE_WALKER), lo(kva), hi(kva),
                              k->simd, k->grf, slm_end, gs.at(0).get<uint32_t>(), gs.at(1).get<uint32_t>(),
                              gs.at(2).get<uint32_t>(), gc.at(0).get<uint32_t>(), gc.at(1).get<uint32_t>(),
                              gc.at(2).get<uint32_t>(), lo(args_va), hi(args_va), uint32_t(args.size()), 0});
            } else if (cmd == "store_data") {
                const uint64_t a = number(c.at("address"), "address");
                batch.insert(batch.end(), {ZS_CMD_HEADER(ZS_CMD_STORE_DATA, 4), lo(a), hi(a),
                                           uint32_t(number(c.at("value"), "value"))});
            } else if (cmd == "timestamp_write") {
                const uint64_t a = number(c.at("address"), "address");
                batch.insert(batch.end(), {ZS_CMD_HEADER(ZS_CMD_TIMESTAMP_WRITE, 3), lo(a), hi(a)});
            } else if (cmd == "user_interrupt") {
                batch.push_back(ZS_CMD_HEADER(ZS_CMD_USER_INTERRUPT, 1));
            } else if (cmd == "load_register_imm") {
                batch.insert(batch.end(), {ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3),
                                           uint32_t(number(c.at("register"), "register")),
                                           uint32_t(number(c.at("value"), "value"))});
            } else if (cmd == "raw") {
                for (const json &d : c.at("dwords"))
                    batch.push_back(uint32_t(number(d, "dword")));
            } else {
                throw std::runtime_error("unknown command '" + cmd + "'");
            }
        }
        batch.push_back(ZS_CMD_HEADER(ZS_CMD_BATCH_END, 1));
        const uint64_t bytes = batch.size() * 4;
        kmd.map(kBatchVa, (bytes + kPage - 1) & ~(kPage - 1), false);
        kmd.write(kBatchVa, reinterpret_cast<const uint8_t *>(batch.data()), bytes);

        // The debug section: the embedded SIP and the state save area mapped, the Debug
        // block programmed (docs/stimulus.md, docs/debug.md section 2).
        const json dbg = s.value("debug", json());
        uint32_t slots = 0;
        if (!dbg.is_null()) {
            const uint32_t topo = zs_hw_mmio_read(hw, ZS_REG_GT_TOPOLOGY);
            slots = ZS_FIELD_GET(topo, GT_TOPOLOGY, SLICES) * ZS_FIELD_GET(topo, GT_TOPOLOGY, SUBSLICES) *
                    ZS_FIELD_GET(topo, GT_TOPOLOGY, EUS) * ZS_FIELD_GET(topo, GT_TOPOLOGY, THREADS);
            if (!(zs_hw_mmio_read(hw, ZS_REG_GT_UNITS) & ZS_FIELD_MASK(GT_UNITS, DEBUG)))
                throw std::runtime_error(
                    "debug: the device has no EU debug unit (debug_block off, or a topology past 1024 threads)");
            kmd.map(kSipVa, (zs_sip_size + kPage - 1) & ~(kPage - 1), false);
            kmd.write(kSipVa, zs_sip_bin, zs_sip_size);
            const uint64_t ssa_bytes = uint64_t(slots) * kSlotSize;
            kmd.map(kSsaVa, (ssa_bytes + kPage - 1) & ~(kPage - 1), true);
            const uint32_t exc_en = uint32_t(number(dbg.value("exc_en", json(uint64_t(0x45))), "debug exc_en"));
            zs_hw_mmio_write(hw, ZS_REG_DBG_SIP_LO, uint32_t(kSipVa));
            zs_hw_mmio_write(hw, ZS_REG_DBG_SIP_HI, uint32_t(kSipVa >> 32));
            zs_hw_mmio_write(hw, ZS_REG_DBG_SSA_LO, uint32_t(kSsaVa));
            zs_hw_mmio_write(hw, ZS_REG_DBG_SSA_HI, uint32_t(kSsaVa >> 32));
            zs_hw_mmio_write(hw, ZS_REG_DBG_SLOT_SIZE, kSlotSize);
            zs_hw_mmio_write(hw, ZS_REG_DBG_MODE, ZS_FIELD_PREP(DBG_MODE, SIP_EN, dbg.value("sip_en", true)) |
                                                      ZS_FIELD_PREP(DBG_MODE, EXC_EN, exc_en));
            zs_hw_mmio_write(hw, ZS_REG_DBG_CTL, ZS_FIELD_MASK(DBG_CTL, IRQ_EN));
            zs_hw_mmio_write(hw, ZS_REG_DBG_ALL, ZS_FIELD_MASK(DBG_ALL, CANCEL_HALT) | ZS_FIELD_MASK(DBG_ALL, RESUME) |
                                                     ZS_FIELD_MASK(DBG_ALL, CANCEL_EXC));
        }

        // Register writes the stimulus asks for (e.g. programming the OA block), in order.
        for (const json &w : s.value("mmio", json::array()))
            zs_hw_mmio_write(hw, uint32_t(number(w.at("register"), "mmio register")),
                             uint32_t(number(w.at("value"), "mmio value")));

        // Ring: one BATCH_START, then ring the doorbell.
        const uint32_t ring[3] = {ZS_CMD_HEADER(ZS_CMD_BATCH_START, 3), uint32_t(kBatchVa), uint32_t(kBatchVa >> 32)};
        std::memcpy(kmd.phys() + kRingPhys, ring, sizeof(ring));
        zs_hw_mmio_write(hw, ZS_REG_CTX_PT_ROOT_LO, uint32_t(kmd.root()));
        zs_hw_mmio_write(hw, ZS_REG_CTX_PT_ROOT_HI, uint32_t(kmd.root() >> 32));
        zs_hw_mmio_write(hw, ZS_REG_TLB_INVALIDATE, 1);
        zs_hw_mmio_write(hw, ZS_REG_RING_BASE_LO, uint32_t(kRingPhys));
        zs_hw_mmio_write(hw, ZS_REG_RING_BASE_HI, 0);
        zs_hw_mmio_write(hw, ZS_REG_RING_SIZE, kRingSize);
        zs_hw_mmio_write(hw, ZS_REG_RING_CTL, 1);
        zs_hw_mmio_write(hw, ZS_REG_RING_TAIL, sizeof(ring));

        const uint64_t start = dev.gt().now();
        bool idle;
        json stops = json::array();
        if (dbg.is_null()) {
            idle = top.run_until_idle(opt.max_cycles);
        } else {
            // The debugger's part: run a quantum at a time; at each new attention bit
            // record the stop (DBG_REASON, IRQ_STATUS.DEBUG, the slot's bytes), do the
            // stimulus's actions for it, resume it.  Timed register writes ("mmio_at":
            // GT cycles from the start) go in when their cycle has passed.
            const json timed_in = dbg.value("mmio_at", json::array());
            std::vector<json> timed(timed_in.begin(), timed_in.end());
            const json actions = dbg.value("on_stop", json::array());
            const uint64_t stop_limit = dbg.contains("max_stops") ? number(dbg["max_stops"], "max_stops") : 10000;
            idle = false;
            for (;;) {
                for (auto it = timed.begin(); it != timed.end();)
                    if (dev.gt().now() - start >= number(it->at("at"), "mmio_at at")) {
                        zs_hw_mmio_write(hw, uint32_t(number(it->at("register"), "mmio_at register")),
                                         uint32_t(number(it->at("value"), "mmio_at value")));
                        it = timed.erase(it);
                    } else {
                        ++it;
                    }
                std::vector<uint32_t> attn;
                for (uint32_t w = 0; w < 32 && zs_hw_mmio_read(hw, ZS_REG_DBG_ATTN_COUNT); w++) {
                    zs_hw_mmio_write(hw, ZS_REG_DBG_WORD, w);
                    const uint32_t a = zs_hw_mmio_read(hw, ZS_REG_DBG_ATTN);
                    for (uint32_t b = 0; b < 32; b++)
                        if (a >> b & 1)
                            attn.push_back(32 * w + b);
                }
                for (uint32_t tid : attn) {
                    if (stops.size() >= stop_limit)
                        throw std::runtime_error("debug: more than " + std::to_string(stop_limit) + " stops");
                    zs_hw_mmio_write(hw, ZS_REG_DBG_THREAD, tid);
                    const uint32_t geu = tid / 8, slot = tid % 8;
                    const uint32_t tpe = ZS_FIELD_GET(zs_hw_mmio_read(hw, ZS_REG_GT_TOPOLOGY), GT_TOPOLOGY, THREADS);
                    const uint64_t slot_va = kSsaVa + (uint64_t(geu) * tpe + slot) * kSlotSize;
                    std::vector<uint8_t> bytes(kSlotSize);
                    kmd.read(slot_va, bytes.data(), bytes.size());
                    const uint32_t irq = zs_hw_mmio_read(hw, ZS_REG_IRQ_STATUS);
                    zs_hw_mmio_write(hw, ZS_REG_IRQ_STATUS, ZS_FIELD_MASK(IRQ_STATUS, DEBUG));
                    json st = {{"tid", tid},
                               {"cycle", dev.gt().now() - start},
                               {"dbg_reason", zs_hw_mmio_read(hw, ZS_REG_DBG_REASON)},
                               {"irq_debug", bool(irq & ZS_FIELD_MASK(IRQ_STATUS, DEBUG))},
                               {"stopped", zs_hw_mmio_read(hw, ZS_REG_DBG_STOPPED)},
                               {"slot", tohex(bytes.data(), bytes.size())}};
                    const size_t k = stops.size();
                    const json act = k < actions.size() ? actions[k] : json::object();
                    for (const json &w : act.value("write", json::array())) {
                        const std::vector<uint8_t> d = unhex(w.at("data").get<std::string>(), "on_stop write data");
                        const uint64_t off = number(w.at("offset"), "on_stop write offset");
                        if (off + d.size() > kSlotSize)
                            throw std::runtime_error("on_stop write past the slot");
                        kmd.write(slot_va + off, d.data(), d.size());
                    }
                    if (act.value("resume", true)) {
                        zs_hw_mmio_write(hw, ZS_REG_DBG_WORD, tid / 32);
                        zs_hw_mmio_write(hw, ZS_REG_DBG_RESUME, 1u << (tid % 32));
                    }
                    stops.push_back(st);
                }
                if (!dev.busy()) {
                    idle = true;
                    break;
                }
                if (dev.gt().now() - start >= opt.max_cycles)
                    break;
                const uint64_t before = dev.gt().now();
                top.run_until_idle(1);  // one quantum
                if (dev.gt().now() == before && dev.busy() && attn.empty())
                    break;  // no progress: waiting on a semaphore the host must release
            }
        }
        const uint64_t cycles = dev.gt().now() - start;
        dev.gt().flush_ledger();

        out["cycles"] = cycles;
        out["idle"] = idle;
        out["engine_status"] = zs_hw_mmio_read(hw, ZS_REG_ENGINE_STATUS);
        out["engine_error"] = zs_hw_mmio_read(hw, ZS_REG_ENGINE_ERROR);
        if (zs_hw_mmio_read(hw, ZS_REG_ENGINE_ERROR))
            out["error_text"] = dev.error_text();
        out["irq_status"] = zs_hw_mmio_read(hw, ZS_REG_IRQ_STATUS);
        json bufs = json::array();
        for (const Mapping &b : buffers) {
            std::vector<uint8_t> data(b.size);
            kmd.read(b.va, data.data(), data.size());
            bufs.push_back({{"address", MiniKmd::hex(b.va)}, {"data", tohex(data.data(), data.size())}});
        }
        out["buffers"] = bufs;
        json threads = json::array();
        for (const ThreadRecord &r : dev.gt().records()) {
            json grf = json::array();
            for (unsigned g = 0; g < ZE_GRF_COUNT; g++)
                grf.push_back(std::vector<uint32_t>(r.grf[g], r.grf[g] + 8));
            json t = {{"group", {r.group[0], r.group[1], r.group[2]}},
                      {"thread", r.thread},
                      {"status", status_name(r.status)},
                      {"f0", r.f[0]},
                      {"f1", r.f[1]},
                      {"grf", grf}};
            if (r.status == ThreadStatus::Exception)
                t["exception"] = {{"bits", r.exception_bits}, {"ip", r.exception_ip}, {"address", r.exception_addr}};
            threads.push_back(t);
        }
        out["threads"] = threads;
        json faults = json::array();
        for (const PageFault &p : dev.gt().faults())
            faults.push_back({{"address", MiniKmd::hex(p.va)}, {"reason", uint32_t(p.reason)}, {"write", p.write}});
        out["faults"] = faults;
        if (!dbg.is_null()) {
            json snaps = json::array();
            for (const DebugSnapshot &sn : dev.gt().ledger().debug_snapshots())
                if (sn.seq > snaps_before)  // left for the test channel's DEBUG_SNAPSHOTS too
                    snaps.push_back(json::parse(sn.json()));
            out["debug"] = {{"stops", stops},
                            {"snapshots", snaps},
                            {"stopped", zs_hw_mmio_read(hw, ZS_REG_DBG_STOPPED)},
                            {"attn_count", zs_hw_mmio_read(hw, ZS_REG_DBG_ATTN_COUNT)}};
        }
    } catch (const json::exception &e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return out.dump() + "\n";
}

}  // namespace zesim
