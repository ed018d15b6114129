// The device: the register map routed to its blocks by address range
// (docs/mmio.md), the GT and MMU blocks, interrupts, and the run loop that
// alternates the command streamer and the GT.
#include "device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "regs.h"

namespace zesim {

namespace {

constexpr uint64_t kGtChunk = 4096;  // GT cycles between command-streamer checks

}  // namespace

Device::Device(const GtConfig &cfg)
    : cfg_(cfg), mem_(cfg.phys_bytes), gt_(cfg_, mem_),
      cs_(cfg_, mem_, gt_, [this](uint32_t bits) { raise_irq(bits); },
          [this](uint32_t off, uint32_t v) { mmio_write(off, v); },
          [this](uint32_t id, uint32_t *report) { oa_.query_report(id, report); }),
      oa_(cfg_, parse_oa_mode(cfg.oa_block), gt_, mem_, [this](uint32_t bits) { raise_irq(bits); },
          [this] { return cs_.context(); }),
      dbg_(cfg_, parse_debug_mode(cfg.debug_block), gt_, [this](uint32_t bits) { raise_irq(bits); })
{
    unsigned n;
    const RegInfo *t = reg_table(&n);
    for (unsigned i = 0; i < n; i++)
        if (block_of(t[i].off) == Block::Gt || block_of(t[i].off) == Block::Mmu)
            regs_[t[i].off] = t[i].reset;
    const Topology &tp = cfg.topo;
    set_reg(ZS_REG_GT_TOPOLOGY, ZS_FIELD_PREP(GT_TOPOLOGY, SLICES, tp.slices) |
                                    ZS_FIELD_PREP(GT_TOPOLOGY, SUBSLICES, tp.subslices) |
                                    ZS_FIELD_PREP(GT_TOPOLOGY, EUS, tp.eus) | ZS_FIELD_PREP(GT_TOPOLOGY, THREADS, tp.threads));
    set_reg(ZS_REG_GT_CORE_MHZ, cfg.core_mhz);
    set_reg(ZS_REG_GT_TIMESTAMP_KHZ, cfg.timestamp_khz);
    set_reg(ZS_REG_GT_PHYS_MB, uint32_t(cfg.phys_bytes >> 20));
    set_reg(ZS_REG_GT_SLM_KB, cfg.slm_bytes_per_subslice / 1024);
    set_reg(ZS_REG_GT_UNITS, ZS_FIELD_PREP(GT_UNITS, OA, oa_.present()) | ZS_FIELD_PREP(GT_UNITS, DEBUG, dbg_.present()));
}

uint32_t Device::reg(uint32_t off) const
{
    auto it = regs_.find(off);
    return it == regs_.end() ? 0 : it->second;
}

uint32_t Device::mmio_read(uint32_t off)
{
    const RegInfo *r = reg_info(off);
    if (!r || r->access == WO)
        return 0;
    switch (block_of(off)) {
    case Block::Gt: return gt_read(off);
    case Block::CommandStreamer: return cs_.read(off);
    case Block::Mmu: return mmu_read(off);
    case Block::Irq: return off == ZS_REG_IRQ_STATUS ? irq_.status() : irq_.enable();
    case Block::Oa: return oa_.read(off);
    case Block::Debug: return dbg_.read(off);
    default: return 0;
    }
}

void Device::mmio_write(uint32_t off, uint32_t value)
{
    const RegInfo *r = reg_info(off);
    if (!r || r->access == RO)
        return;  // writes to read-only or unmapped registers are ignored, as on hardware
    switch (block_of(off)) {
    case Block::CommandStreamer: {
        const uint32_t ctx = cs_.context();
        cs_.write(off, value);
        if (off == ZS_REG_CTX_ID && cs_.context() != ctx)
            oa_.context_switch();
        return;
    }
    case Block::Oa:
        oa_.write(off, value);
        return;
    case Block::Debug:
        dbg_.write(off, value);
        return;
    case Block::Mmu:
        mmu_write(off, value);
        return;
    case Block::Irq:
        if (off == ZS_REG_IRQ_STATUS) {
            irq_clock(0, true, false, value);
        } else {
            irq_clock(0, false, true, value);
            raise_irq(0);
        }
        return;
    default:
        return;  // the GT block has no writable register
    }
}

uint32_t Device::gt_read(uint32_t off)
{
    const uint64_t ts = gt_.now() * cfg_.timestamp_khz / (uint64_t(cfg_.core_mhz) * 1000);
    switch (off) {
    case ZS_REG_GT_TIMESTAMP_LO:
        ts_hi_latch_ = uint32_t(ts >> 32);
        return uint32_t(ts);
    case ZS_REG_GT_TIMESTAMP_HI:
        return ts_hi_latch_;
    case ZS_REG_GT_CYCLES_LO:
        cyc_hi_latch_ = uint32_t(gt_.now() >> 32);
        return uint32_t(gt_.now());
    case ZS_REG_GT_CYCLES_HI:
        return cyc_hi_latch_;
    case ZS_REG_GT_STATUS:
        return ZS_FIELD_PREP(GT_STATUS, BUSY, gt_.busy());
    default:
        return reg(off);
    }
}

uint32_t Device::mmu_read(uint32_t off) const { return reg(off); }

void Device::mmu_write(uint32_t off, uint32_t value)
{
    switch (off) {
    case ZS_REG_FAULT_STATUS:  // write 1 to clear
        regs_[off] &= ~value;
        return;
    case ZS_REG_TLB_INVALIDATE:
        if (value & 1)
            gt_.mmu().invalidate();
        if (value & 2)
            gt_.invalidate_code();
        return;
    default:
        set_reg(off, value);
    }
}

void Device::irq_clock(uint32_t src, bool status_we, bool enable_we, uint32_t wdata)
{
    if (!irq_.event(src, status_we, enable_we, wdata, gt_.now())) {
        std::fprintf(stderr, "zesim: stopping: the interrupt controller RTL disagrees with its twin\n");
        std::abort();
    }
}

void Device::raise_irq(uint32_t bits)
{
    if (bits)
        irq_clock(bits, false, false, 0);
    const uint32_t enabled = irq_.enable(), pending = irq_.status() & enabled;
    // Delivered for an enabled bit being raised, or (bits == 0) on an IRQ_ENABLE write.
    if (pending && irq_fn_ && (!bits || (bits & enabled)))
        irq_fn_(irq_ctx_, pending);
}

void Device::note_faults()
{
    const std::vector<EuException> ex = gt_.take_exceptions();
    if (ex.empty())
        return;
    // The registers keep the first exception until the KMD clears FAULT_STATUS.
    size_t first = 0;
    if (reg(ZS_REG_FAULT_STATUS) & ZS_FIELD_MASK(FAULT_STATUS, VALID)) {
        regs_[ZS_REG_FAULT_STATUS] |= ZS_FIELD_MASK(FAULT_STATUS, MORE);
    } else {
        const EuException &p = ex[first];
        set_reg(ZS_REG_FAULT_STATUS, ZS_FIELD_PREP(FAULT_STATUS, VALID, 1) |
                                         ZS_FIELD_PREP(FAULT_STATUS, REASON, uint32_t(p.reason)) |
                                         ZS_FIELD_PREP(FAULT_STATUS, WRITE, p.write) |
                                         ZS_FIELD_PREP(FAULT_STATUS, MORE, ex.size() > 1));
        set_reg(ZS_REG_FAULT_ADDR_LO, uint32_t(p.va));
        set_reg(ZS_REG_FAULT_ADDR_HI, uint32_t(p.va >> 32));
        set_reg(ZS_REG_FAULT_THREAD, ZS_FIELD_PREP(FAULT_THREAD, EU, p.eu) | ZS_FIELD_PREP(FAULT_THREAD, SLOT, p.thread));
        set_reg(ZS_REG_FAULT_CTX, cs_.context());
        set_reg(ZS_REG_FAULT_EXCEPTION, p.bits);
        set_reg(ZS_REG_FAULT_IP, p.ip);
        set_reg(ZS_REG_FAULT_KERNEL_LO, uint32_t(p.kernel_va));
        set_reg(ZS_REG_FAULT_KERNEL_HI, uint32_t(p.kernel_va >> 32));
        set_reg(ZS_REG_FAULT_IB_LO, uint32_t(p.ib));
        set_reg(ZS_REG_FAULT_IB_HI, uint32_t(p.ib >> 32));
    }
    raise_irq(ZS_IRQ_PAGE_FAULT);
    if ((reg(ZS_REG_FAULT_CTL) & ZS_FIELD_MASK(FAULT_CTL, HALT)) && !cs_.halted())
        cs_.engine_error(ZS_ERR_EU_FAULT, ex[0].kernel_va, "a thread of the kernel ended by an exception (halt on EU fault)");
}


uint64_t Device::run(uint64_t max_cycles)
{
    const uint64_t start = gt_.now();
    cs_.note_busy();
    while (gt_.now() - start < max_cycles) {
        const uint64_t left = max_cycles - (gt_.now() - start);
        const uint64_t cs_cycles = cs_.step();
        note_faults();
        const uint64_t slice_start = gt_.now();
        if (gt_.busy()) {
            gt_.run(std::min(left, cs_cycles ? cs_cycles : kGtChunk));
            note_faults();
        }
        // The streamer's own cycles elapse even when the GT is (or went) idle.
        if (cs_cycles && gt_.now() < slice_start + std::min(left, cs_cycles))
            gt_.idle_until(slice_start + std::min(left, cs_cycles));
        if (!cs_cycles && !gt_.busy() && !cs_.waiting_idle())
            break;  // idle, waiting on a semaphore, or halted on an error
    }
    // Engine-idle interrupt: the ring drained and every piece of work completed.
    if (cs_.take_went_idle())
        raise_irq(ZS_IRQ_ENGINE_IDLE);
    return gt_.now() - start;
}

}  // namespace zesim

extern "C" {

uint32_t zs_hw_mmio_read(zs_hw_t *hw, uint32_t offset)
{
    return static_cast<zesim::Device *>(hw)->mmio_read(offset);
}

void zs_hw_mmio_write(zs_hw_t *hw, uint32_t offset, uint32_t value)
{
    static_cast<zesim::Device *>(hw)->mmio_write(offset, value);
}

void zs_hw_set_irq_handler(zs_hw_t *hw, zs_irq_fn fn, void *ctx)
{
    static_cast<zesim::Device *>(hw)->set_irq_handler(fn, ctx);
}

uint8_t *zs_hw_phys(zs_hw_t *hw, uint64_t *size)
{
    auto *d = static_cast<zesim::Device *>(hw);
    if (size)
        *size = d->mem().size();
    return d->mem().base();
}

int zs_hw_phys_fd(zs_hw_t *hw) { return static_cast<zesim::Device *>(hw)->mem().fd(); }

int zs_hw_phys_attach(zs_hw_t *hw, uint64_t pa, int fd, uint64_t bytes)
{
    return static_cast<zesim::Device *>(hw)->mem().attach(pa, fd, bytes) ? 0 : -1;
}

int zs_hw_phys_detach(zs_hw_t *hw, uint64_t pa, uint64_t bytes)
{
    return static_cast<zesim::Device *>(hw)->mem().detach(pa, bytes) ? 0 : -1;
}

int zs_hw_busy(zs_hw_t *hw) { return static_cast<zesim::Device *>(hw)->busy() ? 1 : 0; }
}
