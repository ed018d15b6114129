// Standalone stimulus runner (docs/stimulus.md).
#ifndef ZESIM_SIM_STIMULUS_H
#define ZESIM_SIM_STIMULUS_H

#include <string>

#include "device.h"
#include "gt_top.h"

namespace zesim {

struct StimulusOptions {
    uint64_t max_cycles = 2000000000ull;
};

// Run the stimulus file at `path`; returns the result as one line of JSON.
// Throws std::runtime_error with a clear message on malformed input.
std::string run_stimulus(Device &dev, GtTop &top, const std::string &path, const StimulusOptions &opt);

}  // namespace zesim

#endif
