// What the Verilated RTL blocks of the model share (irq_block, oa_rtl, debug_rtl): a
// VerilatedContext of their own with tracing on, and one FST writer per block, attached
// to the Verilated model once (its trace() may be called once per writer) and closed and
// reopened for each waveform file, so that every file, not only the first, has the
// block's signals.
#ifndef ZESIM_MODEL_RTL_HARNESS_H
#define ZESIM_MODEL_RTL_HARNESS_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

class VerilatedContext;
class VerilatedFstC;

namespace zesim {

class RtlHarness {
public:
    RtlHarness();
    ~RtlHarness();
    RtlHarness(const RtlHarness &) = delete;
    RtlHarness &operator=(const RtlHarness &) = delete;

    VerilatedContext *context() { return ctx_.get(); }
    // How the block's model registers its signals with a writer, e.g.
    // [m](VerilatedFstC *f) { m->trace(f, 99); }; called once, at the first open().
    void set_attach(std::function<void(VerilatedFstC *)> attach) { attach_ = std::move(attach); }
    // Writes the waveform to `path` from now on (the file open before is closed first);
    // throws std::runtime_error when it cannot be written.
    void open(const std::string &path);
    void close();
    bool tracing() const { return open_; }
    // The signals' values now, at waveform time `time` (only while tracing).
    void dump(uint64_t time);

private:
    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<VerilatedFstC> fst_;
    std::function<void(VerilatedFstC *)> attach_;
    bool open_ = false;
};

}  // namespace zesim

#endif
