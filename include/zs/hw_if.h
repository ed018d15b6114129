/* The hardware interface: the only door into the simulated GPU.  The fake
 * KMD (and the standalone stimulus runner) program the device through MMIO
 * registers (include/zs/gpu_regs.def), receive interrupts, and share its
 * physical memory (a memfd).  Nothing else of the model is visible here. */
#ifndef ZESIM_HW_IF_H
#define ZESIM_HW_IF_H

#include <stdint.h>

#include "zs/gpu_cmds.h"

#ifdef __cplusplus
extern "C" {
#endif

enum zs_reg {
#define ZE_REG(name, off, access, reset, desc) ZS_REG_##name = off,
#include "zs/gpu_regs.def"
#undef ZE_REG
};

/* Register fields: ZS_<REG>_<FIELD>_SHIFT and _WIDTH (gpu_regs.def). */
enum zs_reg_field {
#define ZE_FIELD(reg, name, lsb, width, desc) ZS_##reg##_##name##_SHIFT = lsb, ZS_##reg##_##name##_WIDTH = width,
#include "zs/gpu_regs.def"
#undef ZE_FIELD
};
#define ZS_FIELD_MASK(reg, name)                                                                                    \
	((uint32_t)((((uint64_t)1 << ZS_##reg##_##name##_WIDTH) - 1) << ZS_##reg##_##name##_SHIFT))
#define ZS_FIELD_GET(value, reg, name) (((uint32_t)(value)&ZS_FIELD_MASK(reg, name)) >> ZS_##reg##_##name##_SHIFT)
#define ZS_FIELD_PREP(reg, name, x) (((uint32_t)(x) << ZS_##reg##_##name##_SHIFT) & ZS_FIELD_MASK(reg, name))

/* IRQ_STATUS / IRQ_ENABLE bits */
#define ZS_IRQ_USER ZS_FIELD_MASK(IRQ_STATUS, USER)
#define ZS_IRQ_ENGINE_ERROR ZS_FIELD_MASK(IRQ_STATUS, ENGINE_ERROR)
#define ZS_IRQ_PAGE_FAULT ZS_FIELD_MASK(IRQ_STATUS, EU_FAULT) /* any EU fault (FAULT_STATUS) */
#define ZS_IRQ_ENGINE_IDLE ZS_FIELD_MASK(IRQ_STATUS, ENGINE_IDLE)
#define ZS_IRQ_OA_BUFFER ZS_FIELD_MASK(IRQ_STATUS, OA_BUFFER)
#define ZS_IRQ_DEBUG ZS_FIELD_MASK(IRQ_STATUS, DEBUG)
#define ZS_IRQ_SOURCES 8 /* IRQ_STATUS bits 7:0 */

/* ENGINE_STATUS values */
enum zs_engine_status { ZS_ENGINE_IDLE = 0, ZS_ENGINE_BUSY = 1, ZS_ENGINE_WAITING = 2, ZS_ENGINE_ERROR = 3 };

/* ENGINE_ERROR reasons (docs/commands.md) */
enum zs_engine_error {
	ZS_ERR_NONE = 0,
	ZS_ERR_UNKNOWN_OPCODE = 1,
	ZS_ERR_BAD_LENGTH = 2,
	ZS_ERR_RESERVED_BITS = 3,
	ZS_ERR_FETCH_FAULT = 4,
	ZS_ERR_NESTED_BATCH = 5,
	ZS_ERR_BAD_REGISTER = 6,
	ZS_ERR_BAD_WALKER = 7,
	ZS_ERR_BAD_RING = 8,
	ZS_ERR_BAD_ADDRESS = 9,
	ZS_ERR_BAD_OPERAND = 10,
	ZS_ERR_EU_FAULT = 11,
};

typedef struct zs_hw zs_hw_t;

uint32_t zs_hw_mmio_read(zs_hw_t *hw, uint32_t offset);
void zs_hw_mmio_write(zs_hw_t *hw, uint32_t offset, uint32_t value);

/* Interrupt delivery: called from the simulation loop with IRQ_STATUS &
 * IRQ_ENABLE whenever an enabled interrupt is raised (even if already
 * pending), and when IRQ_ENABLE is written while enabled bits are pending. */
typedef void (*zs_irq_fn)(void *ctx, uint32_t pending);
void zs_hw_set_irq_handler(zs_hw_t *hw, zs_irq_fn fn, void *ctx);

/* Physical memory: base of the daemon's mapping, its size, and the memfd a
 * client may map. */
uint8_t *zs_hw_phys(zs_hw_t *hw, uint64_t *size);
int zs_hw_phys_fd(zs_hw_t *hw);

/* Back physical pages [pa, pa+bytes) with the memfd `fd` (from offset 0), so
 * a client that maps that memfd shares exactly those pages with the device;
 * detach restores the device's own backing.  Page-aligned; 0 or -1. */
int zs_hw_phys_attach(zs_hw_t *hw, uint64_t pa, int fd, uint64_t bytes);
int zs_hw_phys_detach(zs_hw_t *hw, uint64_t pa, uint64_t bytes);

/* Whether the device has work (time advances only while it does). */
int zs_hw_busy(zs_hw_t *hw);

#ifdef __cplusplus
}
#endif

#endif
