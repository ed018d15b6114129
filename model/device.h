// The device: physical memory, the register map routed by address range to
// its blocks (GT, command streamer, MMU, interrupt controller, OA; debug
// reserved), and the GT, behind the C hardware interface (include/zs/hw_if.h).
#ifndef ZESIM_MODEL_DEVICE_H
#define ZESIM_MODEL_DEVICE_H

#include <cstdint>
#include <map>
#include <string>

#include "cs.h"
#include "debug_block.h"
#include "gt.h"
#include "irq_block.h"
#include "oa_block.h"
#include "memory.h"
#include "zs/hw_if.h"

struct zs_hw {
    virtual ~zs_hw() = default;
};

namespace zesim {

class Device : public zs_hw {
public:
    explicit Device(const GtConfig &cfg);

    // MMIO: access types (docs/mmio.md) are enforced here, then the block
    // that owns the offset's range handles it.
    uint32_t mmio_read(uint32_t off);
    void mmio_write(uint32_t off, uint32_t value);
    void set_irq_handler(zs_irq_fn fn, void *ctx)
    {
        irq_fn_ = fn;
        irq_ctx_ = ctx;
    }

    PhysMem &mem() { return mem_; }
    Gt &gt() { return gt_; }

    // Whether simulated time has anything to do (engine busy, GT busy).
    bool busy() { return cs_.busy(); }
    // Advance by at most max_cycles; returns the cycles advanced.
    uint64_t run(uint64_t max_cycles);
    // Human-readable last engine error (for logs and tests).
    const std::string &error_text() const { return cs_.error_text(); }
    IrqBlock &irq_block() { return irq_; }
    OaBlock &oa_block() { return oa_; }
    DebugBlock &debug_block() { return dbg_; }

private:
    // The GT block (identity, clocks, timestamps, status) and the MMU block
    // (EU faults, TLB): small enough to live here.
    uint32_t gt_read(uint32_t off);
    uint32_t mmu_read(uint32_t off) const;
    void mmu_write(uint32_t off, uint32_t value);
    uint32_t reg(uint32_t off) const;
    void set_reg(uint32_t off, uint32_t v) { regs_[off] = v; }
    void raise_irq(uint32_t bits);
    void irq_clock(uint32_t src, bool status_we, bool enable_we, uint32_t wdata);
    void note_faults();

    GtConfig cfg_;
    PhysMem mem_;
    Gt gt_;
    std::map<uint32_t, uint32_t> regs_;  // the GT and MMU blocks' registers
    zs_irq_fn irq_fn_ = nullptr;
    void *irq_ctx_ = nullptr;
    uint32_t ts_hi_latch_ = 0, cyc_hi_latch_ = 0;
    IrqBlock irq_;  // IRQ_STATUS / IRQ_ENABLE: the RTL interrupt controller with its twin
    CommandStreamer cs_;
    OaBlock oa_;    // the OA counter block (0x4000), a second listener of the GT's event lines
    DebugBlock dbg_;  // the EU debug unit and the SIP registers (0x5000), fed by the GT
};

}  // namespace zesim

#endif
