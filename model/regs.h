// The register map as the model sees it (include/zs/gpu_regs.def): each register's
// access type and reset value, and the blocks that own the address ranges.
#ifndef ZESIM_MODEL_REGS_H
#define ZESIM_MODEL_REGS_H

#include <cstdint>

namespace zesim {

enum Access { RO, RW, W1C, WO };

struct RegInfo {
    uint32_t off;
    Access access;
    uint32_t reset;
    const char *name;
};

// nullptr for an offset that names no register.
const RegInfo *reg_info(uint32_t off);
// Every register, in map order, and their number.
const RegInfo *reg_table(unsigned *count);

// The block that owns an offset (docs/mmio.md "Blocks").
enum class Block { Gt, CommandStreamer, Mmu, Irq, Oa, Debug, None };
Block block_of(uint32_t off);

}  // namespace zesim

#endif
