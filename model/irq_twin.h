// The interrupt controller's C++ twin: the golden model of rtl/irq/zs_irq.sv, written
// from the same rules (docs/mmio.md "Interrupt controller"); tests run both and
// compare every cycle's outputs (tests/rtl/test_irq.cc, and model/irq_block.h in every
// run of the model).
#ifndef ZESIM_MODEL_IRQ_TWIN_H
#define ZESIM_MODEL_IRQ_TWIN_H

#include <cstdint>

#include "zs/hw_if.h"

namespace zesim {

struct IrqTwin {
    static constexpr uint32_t kMask = (1u << ZS_IRQ_SOURCES) - 1;
    uint32_t status = 0, enable = 0, raised = 0;

    void reset() { status = enable = raised = 0; }
    // One clock: the inputs of this cycle take effect at its end.
    void step(uint32_t src, bool status_we, bool enable_we, uint32_t wdata)
    {
        src &= kMask;
        const uint32_t clear = status_we ? wdata & kMask : 0;
        status = (status & ~clear) | src;  // a source in the clearing cycle wins
        if (enable_we)
            enable = wdata & kMask;
        if (src)
            raised++;
    }
    bool irq() const { return (status & enable) != 0; }
};

}  // namespace zesim

#endif
