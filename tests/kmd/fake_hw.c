/* A hardware interface with no model behind it, for testing the KMD alone:
 * registers are plain storage, physical memory is a memfd mapping, and the
 * engine finishes every submission at once (HEAD follows TAIL).  A test
 * stands for a running engine by writing ENGINE_STATUS (plain storage too)
 * and fake_hw_set_busy (GT_STATUS), and for the device's interrupts with
 * fake_hw_raise_irq (IRQ_STATUS, write 1 to clear; the KMD's handler). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_hw.h"

struct zs_hw {
	uint32_t regs[0x6000 / 4];
	uint8_t *mem;
	uint64_t size;
	int fd;
	unsigned tlb_invalidations;
	unsigned discards; /* writes of a context id to CTX_DISCARD */
	zs_irq_fn irq_fn;
	void *irq_ctx;
};

zs_hw_t *fake_hw_create(uint64_t bytes)
{
	zs_hw_t *hw = calloc(1, sizeof(*hw));
	hw->size = bytes;
	hw->fd = memfd_create("fake-phys", MFD_CLOEXEC);
	if (hw->fd < 0 || ftruncate(hw->fd, (off_t)bytes) != 0)
		abort();
	hw->mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, hw->fd, 0);
	if (hw->mem == MAP_FAILED)
		abort();
	hw->regs[ZS_REG_GT_ID / 4] = 0x5a455349;
	hw->regs[ZS_REG_GT_VERSION / 4] = 3;
	hw->regs[ZS_REG_GT_TOPOLOGY / 4] = 1u << 24 | 2u << 16 | 4u << 8 | 4u;
	hw->regs[ZS_REG_GT_CORE_MHZ / 4] = 1000;
	hw->regs[ZS_REG_GT_TIMESTAMP_KHZ / 4] = 12500;
	hw->regs[ZS_REG_GT_SLM_KB / 4] = 64;
	return hw;
}

void fake_hw_destroy(zs_hw_t *hw)
{
	munmap(hw->mem, hw->size);
	close(hw->fd);
	free(hw);
}

uint32_t zs_hw_mmio_read(zs_hw_t *hw, uint32_t off)
{
	return off < sizeof(hw->regs) && !(off & 3) ? hw->regs[off / 4] : 0;
}

void zs_hw_mmio_write(zs_hw_t *hw, uint32_t off, uint32_t v)
{
	if (off >= sizeof(hw->regs) || (off & 3))
		return;
	if (off == ZS_REG_IRQ_STATUS) {
		hw->regs[off / 4] &= ~v;
		return;
	}
	hw->regs[off / 4] = v;
	if (off == ZS_REG_RING_TAIL || off == ZS_REG_ENGINE_RESET)
		hw->regs[ZS_REG_RING_HEAD / 4] = hw->regs[ZS_REG_RING_TAIL / 4];
	if (off == ZS_REG_RING_CTL && (v & 1))
		hw->regs[ZS_REG_RING_HEAD / 4] = 0;
	if (off == ZS_REG_TLB_INVALIDATE)
		hw->tlb_invalidations++;
	if (off == ZS_REG_CTX_DISCARD && v)
		hw->discards++;
}

void zs_hw_set_irq_handler(zs_hw_t *hw, zs_irq_fn fn, void *ctx)
{
	hw->irq_fn = fn;
	hw->irq_ctx = ctx;
}

void fake_hw_raise_irq(zs_hw_t *hw, uint32_t bits)
{
	hw->regs[ZS_REG_IRQ_STATUS / 4] |= bits;
	const uint32_t pending = hw->regs[ZS_REG_IRQ_STATUS / 4] & hw->regs[ZS_REG_IRQ_ENABLE / 4];
	if ((bits & pending) && hw->irq_fn)
		hw->irq_fn(hw->irq_ctx, pending);
}

uint8_t *zs_hw_phys(zs_hw_t *hw, uint64_t *size)
{
	if (size)
		*size = hw->size;
	return hw->mem;
}

int zs_hw_phys_fd(zs_hw_t *hw) { return hw->fd; }

int zs_hw_phys_attach(zs_hw_t *hw, uint64_t pa, int fd, uint64_t bytes)
{
	if ((pa | bytes) & 0xfff || pa + bytes > hw->size)
		return -1;
	return mmap(hw->mem + pa, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ? -1 : 0;
}

int zs_hw_phys_detach(zs_hw_t *hw, uint64_t pa, uint64_t bytes)
{
	if ((pa | bytes) & 0xfff || pa + bytes > hw->size)
		return -1;
	return mmap(hw->mem + pa, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, hw->fd, (off_t)pa) ==
			       MAP_FAILED
		       ? -1
		       : 0;
}

int zs_hw_busy(zs_hw_t *hw) { return hw->regs[ZS_REG_GT_STATUS / 4] != 0; }

void fake_hw_set_busy(zs_hw_t *hw, int busy) { hw->regs[ZS_REG_GT_STATUS / 4] = busy ? 1 : 0; }

unsigned fake_hw_discards(zs_hw_t *hw) { return hw->discards; }
