#include "gt_top.h"

namespace zesim {

GtTop::GtTop(sc_core::sc_module_name name, Device &dev, uint64_t quantum_cycles)
    : sc_core::sc_module(name), dev_(dev), quantum_(quantum_cycles ? quantum_cycles : 4096),
      period_(1000.0 / dev.gt().config().core_mhz, sc_core::SC_NS)
{
    SC_HAS_PROCESS(GtTop);
    SC_THREAD(clock_process);
}

void GtTop::clock_process()
{
    for (;;) {
        if (!dev_.busy()) {
            wait(kick_);
            continue;
        }
        // Simulated SystemC time follows the device's cycle count exactly.
        const uint64_t before = dev_.gt().now();
        dev_.run(quantum_);
        const uint64_t spent = dev_.gt().now() - before;
        if (spent)
            wait(period_ * double(spent));
        else
            wait(kick_);
    }
}

bool GtTop::run_until_idle(uint64_t limit, bool hold_for_ledger)
{
    const uint64_t start = dev_.gt().now();
    while (dev_.busy() && dev_.gt().now() - start < limit && !(hold_for_ledger && dev_.gt().ledger().full())) {
        kick_.notify(sc_core::SC_ZERO_TIME);
        const uint64_t before = dev_.gt().now();
        sc_core::sc_start(period_ * double(quantum_));
        if (dev_.gt().now() == before && dev_.busy())
            return false;  // no progress: waiting on a semaphore the host must release
    }
    return !dev_.busy();
}

void GtTop::pass_idle(uint64_t cycles)
{
    if (!cycles || dev_.busy())
        return;
    dev_.gt().idle_until(dev_.gt().now() + cycles);
    sc_core::sc_start(period_ * double(cycles));
}

}  // namespace zesim
