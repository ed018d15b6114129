#include "regs.h"

#include "zs/hw_if.h"

namespace zesim {

namespace {

const RegInfo kRegs[] = {
#define ZE_REG(name, off, access, reset, desc) {off, access, reset, #name},
#include "zs/gpu_regs.def"
#undef ZE_REG
};

struct BlockRange {
    uint32_t base, size;
    Block block;
};

const BlockRange kBlocks[] = {
#define ZE_BLOCK(name, base, size, desc) {base, size, Block::name},
#include "zs/gpu_regs.def"
#undef ZE_BLOCK
};

}  // namespace

const RegInfo *reg_info(uint32_t off)
{
    for (const RegInfo &r : kRegs)
        if (r.off == off)
            return &r;
    return nullptr;
}

const RegInfo *reg_table(unsigned *count)
{
    *count = sizeof(kRegs) / sizeof(kRegs[0]);
    return kRegs;
}

Block block_of(uint32_t off)
{
    for (const BlockRange &b : kBlocks)
        if (off >= b.base && off - b.base < b.size)
            return b.block;
    return Block::None;
}

}  // namespace zesim
