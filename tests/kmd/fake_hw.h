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

#endif
