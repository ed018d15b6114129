// The OA block's RTL cores for model/oa_block (config oa_block: rtl / check): the
// Verilated block alone (OaRtl) or beside its twin (OaChecked), behind OaCore.  Built
// into the model with ZESIM_OA_RTL, which replaces oa_block.cc's "no RTL" stand-in.
#include <memory>
#include <string>

#include "oa_block.h"
#include "oa_rtl.h"

namespace zesim {

namespace {

class RtlCore final : public OaCore {
public:
    bool step(const OaIn &in, uint64_t cycle, OaOut &out) override
    {
        out = rtl_.step(in, cycle);
        return true;
    }
    uint32_t read(uint32_t off) override { return rtl_.read(off); }
    bool open_trace(const std::string &path, uint64_t from, uint64_t to) override
    {
        rtl_.open_trace(path, from, to);
        return true;
    }
    void close_trace() override { rtl_.close_trace(); }

private:
    OaRtl rtl_;
};

class CheckedCore final : public OaCore {
public:
    bool step(const OaIn &in, uint64_t cycle, OaOut &out) override { return chk_.step(in, out, cycle); }
    uint32_t read(uint32_t off) override { return chk_.read(off); }
    bool open_trace(const std::string &path, uint64_t from, uint64_t to) override
    {
        chk_.open_trace(path, from, to);
        return true;
    }
    void close_trace() override { chk_.close_trace(); }

private:
    OaChecked chk_;
};

}  // namespace

std::unique_ptr<OaCore> make_oa_rtl_core(bool check)
{
    if (check)
        return std::make_unique<CheckedCore>();
    return std::make_unique<RtlCore>();
}

}  // namespace zesim
