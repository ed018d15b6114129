#include "rtl_harness.h"

#include <stdexcept>

#include "verilated.h"
#include "verilated_fst_c.h"

namespace zesim {

RtlHarness::RtlHarness() : ctx_(std::make_unique<VerilatedContext>()) { ctx_->traceEverOn(true); }

RtlHarness::~RtlHarness() { close(); }

void RtlHarness::open(const std::string &path)
{
    close();
    if (!fst_) {
        fst_ = std::make_unique<VerilatedFstC>();
        if (attach_)
            attach_(fst_.get());
    }
    fst_->open(path.c_str());
    if (!fst_->isOpen())
        throw std::runtime_error("cannot write the waveform " + path);
    open_ = true;
}

void RtlHarness::close()
{
    if (open_)
        fst_->close();
    open_ = false;
}

void RtlHarness::dump(uint64_t time)
{
    if (open_)
        fst_->dump(time);
}

}  // namespace zesim
