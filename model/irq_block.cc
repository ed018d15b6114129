#include "irq_block.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>

#include "Vzs_irq.h"
#include "verilated.h"
#include "verilated_fst_c.h"

namespace zesim {

IrqBlock::IrqBlock()
{
    rtl_ = std::make_unique<Vzs_irq>(harness_.context(), "irq");
    harness_.set_attach([this](VerilatedFstC *f) { rtl_->trace(f, 99); });
    rtl_->clk = 0;
    rtl_->rst_n = 0;
    rtl_->src = 0;
    rtl_->status_we = rtl_->enable_we = 0;
    rtl_->wdata = 0;
    rtl_->eval();
    rtl_->rst_n = 1;
    rtl_->eval();
    twin_.reset();
    if (!compare("reset"))
        std::abort();
}

IrqBlock::~IrqBlock()
{
    close_trace();
    rtl_->final();
}

void IrqBlock::open_trace(const std::string &path)
{
    harness_.open(path);
    harness_.dump(time_);
}

void IrqBlock::close_trace() { harness_.close(); }

bool IrqBlock::compare(const char *when)
{
    if (rtl_->status == twin_.status && rtl_->enable == twin_.enable && bool(rtl_->irq) == twin_.irq() &&
        rtl_->raised == twin_.raised)
        return true;
    std::fprintf(stderr,
                 "zesim: interrupt controller: RTL and C++ twin differ after %s (event %llu):\n"
                 "  RTL:  status 0x%02x enable 0x%02x irq %d raised %u\n"
                 "  twin: status 0x%02x enable 0x%02x irq %d raised %u\n",
                 when, (unsigned long long)events_, rtl_->status, rtl_->enable, int(rtl_->irq), rtl_->raised,
                 twin_.status, twin_.enable, int(twin_.irq()), twin_.raised);
    return false;
}

bool IrqBlock::event(uint32_t src, bool status_we, bool enable_we, uint32_t wdata, uint64_t cycle)
{
    time_ = std::max(time_ + 1, 2 * cycle);
    rtl_->src = uint8_t(src & IrqTwin::kMask);
    rtl_->status_we = status_we;
    rtl_->enable_we = enable_we;
    rtl_->wdata = wdata;
    rtl_->clk = 0;
    rtl_->eval();
    if (harness_.tracing())
        harness_.dump(time_++);
    rtl_->clk = 1;
    rtl_->eval();
    harness_.dump(time_);
    rtl_->src = 0;
    rtl_->status_we = rtl_->enable_we = 0;
    twin_.step(src, status_we, enable_we, wdata);
    events_++;
    return compare("an event");
}

}  // namespace zesim
