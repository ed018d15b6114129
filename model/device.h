// The device: physical memory, MMIO registers, the command streamer and the
// GT, behind the C hardware interface (include/zs/hw_if.h).
#ifndef ZESIM_MODEL_DEVICE_H
#define ZESIM_MODEL_DEVICE_H

#include <cstdint>
#include <map>
#include <string>

#include "gt.h"
#include "irq_block.h"
#include "memory.h"
#include "zs/hw_if.h"

struct zs_hw {
    virtual ~zs_hw() = default;
};

namespace zesim {

class Device : public zs_hw {
public:
    explicit Device(const GtConfig &cfg);

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
    bool busy();
    // Advance by at most max_cycles; returns the cycles advanced.
    uint64_t run(uint64_t max_cycles);
    // Human-readable last engine error (for logs and tests).
    const std::string &error_text() const { return error_text_; }
    IrqBlock &irq_block() { return irq_; }

private:
    enum class Cs { Idle, Fetch, WaitIdle, WaitSemaphore, Error };

    uint32_t reg(uint32_t off) const;
    void set_reg(uint32_t off, uint32_t v) { regs_[off] = v; }
    void raise_irq(uint32_t bits);
    void irq_clock(uint32_t src, bool status_we, bool enable_we, uint32_t wdata);
    void engine_error(uint32_t reason, uint64_t addr, const std::string &why);
    // Execute commands until the streamer must wait; returns cycles spent.
    uint64_t cs_step();
    bool ring_valid();
    bool semaphore_satisfied();
    bool fetch_dword(uint64_t addr, bool in_batch, uint32_t &out);
    bool write_va(uint64_t va, const uint32_t *dw, unsigned n);
    bool write_qword(uint64_t va, uint64_t v);
    bool read_va(uint64_t va, uint32_t &out);
    uint64_t pt_root() const;
    void note_faults();

    GtConfig cfg_;
    PhysMem mem_;
    Gt gt_;
    std::map<uint32_t, uint32_t> regs_;
    zs_irq_fn irq_fn_ = nullptr;
    void *irq_ctx_ = nullptr;
    uint32_t ts_hi_latch_ = 0, cyc_hi_latch_ = 0;
    Cs cs_ = Cs::Idle;
    bool in_batch_ = false;
    bool batch_ended_ = false;  // a BATCH_END ran since the ring's last BATCH_START
    uint64_t batch_addr_ = 0;
    uint64_t cmd_addr_ = 0;  // address of the command being executed
    uint32_t pending_[16] = {};
    unsigned pending_len_ = 0;
    bool was_busy_ = false;
    std::string error_text_;
    std::map<uint32_t, Gt::Image> images_;
    IrqBlock irq_;  // IRQ_STATUS / IRQ_ENABLE: the RTL interrupt controller with its twin  // contexts preempted with their GT state (CS_PREEMPT bit 1)
};

}  // namespace zesim

#endif
