/* Command-streamer commands (include/zs/gpu_cmds.def, docs/commands.md):
 * the batch-buffer format user space writes.  Shared by the model, the fake
 * KMD and the Level Zero driver. */
#ifndef ZESIM_GPU_CMDS_H
#define ZESIM_GPU_CMDS_H

#include <stdint.h>

enum zs_cmd {
#define ZE_CMD(name, op, dwords, desc) ZS_CMD_##name = op,
#include "zs/gpu_cmds.def"
#undef ZE_CMD
};

enum zs_cmd_len {
#define ZE_CMD(name, op, dwords, desc) ZS_CMD_LEN_##name = dwords,
#include "zs/gpu_cmds.def"
#undef ZE_CMD
};

#define ZS_CMD_HEADER(op, dwords) ((uint32_t)(op) << 24 | (uint32_t)(dwords))

#endif
