// The SystemC top: one process ticks the whole device (plain C++ units
// inside, see docs/model.md) in quanta of simulated time.  Requests from the
// daemon are served between sc_start() calls, so simulated time advances only
// while the device has work: idle gaps between submissions are skipped.
#ifndef ZESIM_MODEL_GT_TOP_H
#define ZESIM_MODEL_GT_TOP_H

#include <systemc>

#include "device.h"

namespace zesim {

class GtTop : public sc_core::sc_module {
public:
    GtTop(sc_core::sc_module_name name, Device &dev, uint64_t quantum_cycles);
    // Run until the device is idle or `limit` cycles pass; true when idle.
    // With `hold_for_ledger`, also stop (before the next quantum) while the
    // ledger's subscribed consumer has a full backlog (Ledger::full()).
    bool run_until_idle(uint64_t limit, bool hold_for_ledger = false);
    // Let `cycles` of idle time pass (the device must not be busy), SystemC time with it.
    void pass_idle(uint64_t cycles);

private:
    void clock_process();

    Device &dev_;
    uint64_t quantum_;
    sc_core::sc_time period_;
    sc_core::sc_event kick_;
};

}  // namespace zesim

#endif
