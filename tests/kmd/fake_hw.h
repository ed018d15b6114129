/* Test double of the hardware interface (tests/kmd/fake_hw.c). */
#ifndef ZESIM_TESTS_FAKE_HW_H
#define ZESIM_TESTS_FAKE_HW_H

#include "zs/hw_if.h"

zs_hw_t *fake_hw_create(uint64_t bytes);
void fake_hw_destroy(zs_hw_t *hw);
/* What zs_hw_busy returns (0 at creation). */
void fake_hw_set_busy(zs_hw_t *hw, int busy);
/* The device raising interrupts (IRQ_STATUS bits): calls the installed
 * handler when an enabled bit is raised. */
void fake_hw_raise_irq(zs_hw_t *hw, uint32_t bits);
/* How many times a context's saved state was dropped (CTX_DISCARD written). */
unsigned fake_hw_discards(zs_hw_t *hw);
/* GT_UNITS (bit 0: the OA block; set at creation); before zk_create. */
void fake_hw_set_units(zs_hw_t *hw, uint32_t units);
/* The OA block: add these increments (a[0..34], bc[0..15]; NULL: none) to the
 * counters while enabled, then make a report with these reason bits
 * (ZS_OA_REASON_*) at this timestamp, as model/oa_twin.h does: to the buffer at
 * OA_TAIL, or lost when it is full; IRQ_STATUS.OA_BUFFER at the threshold. */
void fake_hw_oa_report(zs_hw_t *hw, uint32_t reason, uint64_t timestamp, const uint64_t *a, const uint32_t *bc);
/* Record the MMIO writes to the OA block (0x4000-0x4fff) from now (on), or stop;
 * the log restarts empty. */
void fake_hw_mmio_log(zs_hw_t *hw, int on);
unsigned fake_hw_mmio_log_get(zs_hw_t *hw, const uint32_t (**log)[2]);

/* The debug unit: thread tid stops (enters attention) with this reason (1 breakpoint,
 * 2 page fault, 3 halt, 4 exception), its halt request ends, IRQ_STATUS.DEBUG is raised
 * with DBG_CTL.IRQ_EN.  0 when it was in attention already (not a second stop). */
int fake_hw_dbg_stop(zs_hw_t *hw, uint32_t tid, uint32_t reason);

#endif
