// The interrupt controller block of the device: the Verilated RTL (rtl/irq/zs_irq.sv)
// answers, its C++ twin (irq_twin.h) runs beside it and any difference stops the
// simulation with both states printed.  The model clocks the block only on cycles
// where an input changes (a source fires, IRQ_STATUS or IRQ_ENABLE is written): between
// those the block's state cannot change, so leaving the RTL on costs nothing.
#ifndef ZESIM_MODEL_IRQ_BLOCK_H
#define ZESIM_MODEL_IRQ_BLOCK_H

#include <cstdint>
#include <memory>
#include <string>

#include "irq_twin.h"
#include "rtl_harness.h"

class Vzs_irq;

namespace zesim {

class IrqBlock {
public:
    IrqBlock();
    ~IrqBlock();
    IrqBlock(const IrqBlock &) = delete;
    IrqBlock &operator=(const IrqBlock &) = delete;

    // One clocked event; returns false (after printing both states) on a mismatch
    // between the RTL and its twin.
    bool event(uint32_t src, bool status_we, bool enable_we, uint32_t wdata, uint64_t cycle = 0);
    uint32_t status() const { return twin_.status; }
    uint32_t enable() const { return twin_.enable; }
    bool irq() const { return twin_.irq(); }
    uint64_t events() const { return events_; }
    // FST waveform of the block's events, at their GT cycles (one time unit
    // per half cycle; several events in one cycle follow each other).
    void open_trace(const std::string &path);
    void close_trace();

private:
    bool compare(const char *when);
    RtlHarness harness_;
    std::unique_ptr<Vzs_irq> rtl_;
    IrqTwin twin_;
    uint64_t events_ = 0, time_ = 0;
};

}  // namespace zesim

#endif
