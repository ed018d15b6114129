/* A hardware interface with no model behind it, for testing the KMD alone:
 * registers are plain storage, physical memory is a memfd mapping, and the
 * engine finishes every submission at once (HEAD follows TAIL).  A test
 * stands for a running engine by writing ENGINE_STATUS (plain storage too)
 * and fake_hw_set_busy (GT_STATUS), and for the device's interrupts with
 * fake_hw_raise_irq (IRQ_STATUS, write 1 to clear; the KMD's handler).
 *
 * The OA block (0x4000, docs/oa.md §4) follows the rules of its golden model,
 * model/oa_twin.h, for everything the KMD touches: OA_CTL (a 0-to-1 ENABLE clears
 * the counters), OA_BUF_BASE / OA_BUF_SIZE (reset OA_HEAD and OA_TAIL; the size
 * clamped to 2^12..2^27), OA_HEAD (masked to a report boundary), OA_STATUS (write 1
 * to clear), OA_THRESHOLD, OA_TRIGGER (a report with reason MMIO), OA_MARKER, the 16
 * OA_BC_SEL.  No event lines: the test makes a report (fake_hw_oa_report) with
 * counters of its choosing; it goes to the buffer at OA_TAIL when ENABLE and BUFFER
 * are set, is lost when the buffer is full (OA_LOST, REPORT_LOST), sets OVERFLOW
 * when it fills the last slot and raises IRQ_STATUS.OA_BUFFER at the threshold.
 *
 * The EU debug unit (0x5000, docs/debug.md §1.2), by its rules for what the KMD
 * touches: the DBG_WORD window over attention and halt-request bitmaps, DBG_HALT
 * (a write replaces the window's requests, not of threads in attention),
 * DBG_RESUME, DBG_ALL (resume all, then halt all, then cancel), DBG_THREAD /
 * DBG_REASON, DBG_ATTN_COUNT, DBG_STOPPED.  No threads: the test stops one with
 * fake_hw_dbg_stop (IRQ_STATUS.DEBUG with DBG_CTL.IRQ_EN). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_hw.h"
#include "zs/oa_report.h"

#define OA_LOG_MAX 4096

struct zs_hw {
	uint32_t regs[0x6000 / 4];
	uint8_t *mem;
	uint64_t size;
	int fd;
	unsigned tlb_invalidations;
	unsigned discards; /* writes of a context id to CTX_DISCARD */
	zs_irq_fn irq_fn;
	void *irq_ctx;
	/* OA block */
	uint64_t oa_a[ZS_OA_A_COUNTERS];
	uint32_t oa_bc[ZS_OA_BC_COUNTERS];
	uint32_t oa_ticks;
	uint64_t oa_ts;
	int log_on;
	unsigned nlog;
	uint32_t log[OA_LOG_MAX][2];
	/* debug unit */
	uint32_t attn[32], halt[32];
	uint8_t reason[1024];
};

static uint32_t *R(zs_hw_t *hw, uint32_t off) { return &hw->regs[off / 4]; }

static uint32_t oa_size(zs_hw_t *hw) { return 1u << *R(hw, ZS_REG_OA_BUF_SIZE); }

static uint32_t oa_unread(zs_hw_t *hw)
{
	return (*R(hw, ZS_REG_OA_TAIL) - *R(hw, ZS_REG_OA_HEAD)) & (oa_size(hw) - 1);
}

/* A buffer report with these reason bits (oa_twin.h step 4). */
static void oa_report(zs_hw_t *hw, uint32_t reason)
{
	const uint32_t ctl = *R(hw, ZS_REG_OA_CTL);
	if (!reason || !(ctl & ZS_FIELD_MASK(OA_CTL, ENABLE)) || !(ctl & ZS_FIELD_MASK(OA_CTL, BUFFER)))
		return;
	if (oa_unread(hw) == oa_size(hw) - ZS_OA_REPORT_BYTES) {
		++*R(hw, ZS_REG_OA_LOST);
		*R(hw, ZS_REG_OA_STATUS) |= ZS_FIELD_MASK(OA_STATUS, REPORT_LOST);
		return;
	}
	uint32_t d[ZS_OA_REPORT_DWORDS] = {0};
	d[ZS_OA_DW_REPORT_ID] = reason << ZS_OA_ID_REASON_SHIFT | zs_oa_clock_ratio(*R(hw, ZS_REG_GT_CORE_MHZ));
	d[ZS_OA_DW_TIMESTAMP] = (uint32_t)hw->oa_ts;
	d[ZS_OA_DW_TICKS] = hw->oa_ticks;
	uint8_t *bytes = (uint8_t *)d;
	for (unsigned i = 0; i < ZS_OA_A_COUNTERS; i++) {
		d[ZS_OA_DW_A + i] = (uint32_t)hw->oa_a[i];
		if (i < ZS_OA_A40_COUNTERS)
			bytes[ZS_OA_BYTE_A_HIGH + i] = (uint8_t)(hw->oa_a[i] >> 32);
	}
	for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
		d[ZS_OA_DW_B + i] = hw->oa_bc[i];
	const uint64_t base = (uint64_t)*R(hw, ZS_REG_OA_BUF_BASE_HI) << 32 | (*R(hw, ZS_REG_OA_BUF_BASE_LO) & ~0xfffu);
	const uint32_t tail = *R(hw, ZS_REG_OA_TAIL);
	if (base + tail + ZS_OA_REPORT_BYTES <= hw->size)
		memcpy(hw->mem + base + tail, d, ZS_OA_REPORT_BYTES);
	*R(hw, ZS_REG_OA_TAIL) = (tail + ZS_OA_REPORT_BYTES) & (oa_size(hw) - 1);
	++*R(hw, ZS_REG_OA_REPORTS);
	if (oa_unread(hw) == oa_size(hw) - ZS_OA_REPORT_BYTES)
		*R(hw, ZS_REG_OA_STATUS) |= ZS_FIELD_MASK(OA_STATUS, OVERFLOW);
	const uint32_t th = *R(hw, ZS_REG_OA_THRESHOLD);
	if (th && oa_unread(hw) / ZS_OA_REPORT_BYTES >= th)
		fake_hw_raise_irq(hw, ZS_IRQ_OA_BUFFER);
}

/* MMIO writes to the OA block; 1 when handled. */
static int oa_write(zs_hw_t *hw, uint32_t off, uint32_t v)
{
	switch (off) {
	case ZS_REG_OA_CTL:
		if (!(*R(hw, off) & ZS_FIELD_MASK(OA_CTL, ENABLE)) && (v & ZS_FIELD_MASK(OA_CTL, ENABLE))) {
			memset(hw->oa_a, 0, sizeof(uint64_t) * ZS_OA_MARKER_COUNTER);
			memset(hw->oa_bc, 0, sizeof(hw->oa_bc));
			hw->oa_ticks = 0;
		}
		*R(hw, off) = v & 0x1ff;
		return 1;
	case ZS_REG_OA_BUF_BASE_LO:
		*R(hw, off) = v;
		*R(hw, ZS_REG_OA_HEAD) = *R(hw, ZS_REG_OA_TAIL) = 0;
		return 1;
	case ZS_REG_OA_BUF_SIZE: {
		const uint32_t l = v & 0x1f;
		*R(hw, off) = l < 12 ? 12 : l > 27 ? 27 : l;
		*R(hw, ZS_REG_OA_HEAD) = *R(hw, ZS_REG_OA_TAIL) = 0;
		return 1;
	}
	case ZS_REG_OA_HEAD:
		*R(hw, off) = v & (oa_size(hw) - 1) & ~(ZS_OA_REPORT_BYTES - 1);
		return 1;
	case ZS_REG_OA_TAIL:
	case ZS_REG_OA_REPORTS:
	case ZS_REG_OA_LOST:
		return 1; /* read-only */
	case ZS_REG_OA_STATUS:
		*R(hw, off) &= ~v;
		return 1;
	case ZS_REG_OA_MARKER:
		hw->oa_a[ZS_OA_MARKER_COUNTER] = v;
		oa_report(hw, ZS_OA_REASON_MARKER);
		return 1;
	case ZS_REG_OA_TRIGGER:
		if (v & 1)
			oa_report(hw, ZS_OA_REASON_MMIO);
		return 1;
	default:
		return 0; /* BASE_HI, THRESHOLD, BC_SEL: plain storage */
	}
}

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
	hw->regs[ZS_REG_GT_UNITS / 4] = ZS_FIELD_MASK(GT_UNITS, OA);
	hw->regs[ZS_REG_OA_BUF_SIZE / 4] = 12;
	hw->regs[ZS_REG_OA_THRESHOLD / 4] = 1;
	for (unsigned i = 0; i < ZS_OA_BC_COUNTERS; i++)
		hw->regs[ZS_REG_OA_BC_SEL0 / 4 + i] = 0xff;
	return hw;
}

void fake_hw_destroy(zs_hw_t *hw)
{
	munmap(hw->mem, hw->size);
	close(hw->fd);
	free(hw);
}

static uint32_t dbg_count(const zs_hw_t *hw)
{
	uint32_t n = 0;
	for (int w = 0; w < 32; w++)
		n += (uint32_t)__builtin_popcount(hw->attn[w]);
	return n;
}

uint32_t zs_hw_mmio_read(zs_hw_t *hw, uint32_t off)
{
	const uint32_t w = hw->regs[ZS_REG_DBG_WORD / 4] & 31, t = hw->regs[ZS_REG_DBG_THREAD / 4] & 1023;
	switch (off) {
	case ZS_REG_DBG_ATTN: return hw->attn[w];
	case ZS_REG_DBG_HALT: return hw->halt[w];
	case ZS_REG_DBG_ATTN_COUNT: return dbg_count(hw);
	case ZS_REG_DBG_REASON: {
		const uint32_t a = hw->attn[t / 32] >> (t % 32) & 1, h = hw->halt[t / 32] >> (t % 32) & 1;
		return (a ? hw->reason[t] : 0) | a << 8 | h << 9;
	}
	default: break;
	}
	return off < sizeof(hw->regs) && !(off & 3) ? hw->regs[off / 4] : 0;
}

/* A debug-unit write (docs/debug.md §1.4); 1 when handled. */
static int dbg_write(zs_hw_t *hw, uint32_t off, uint32_t v)
{
	const uint32_t w = hw->regs[ZS_REG_DBG_WORD / 4] & 31;
	switch (off) {
	case ZS_REG_DBG_HALT: hw->halt[w] = v & ~hw->attn[w]; return 1;
	case ZS_REG_DBG_RESUME: hw->attn[w] &= ~v; return 1;
	case ZS_REG_DBG_ALL:
		for (int i = 0; i < 32; i++) {
			if (v & 4)
				hw->attn[i] = 0;
			if (v & 1)
				hw->halt[i] = ~hw->attn[i];
			if (v & 2)
				hw->halt[i] = 0;
		}
		return 1;
	case ZS_REG_DBG_ATTN:
	case ZS_REG_DBG_ATTN_COUNT:
	case ZS_REG_DBG_REASON: return 1; /* read only */
	default: return 0;
	}
}

int fake_hw_dbg_stop(zs_hw_t *hw, uint32_t tid, uint32_t reason)
{
	const uint32_t w = tid / 32, bit = 1u << (tid % 32);
	if (tid >= 1024 || (hw->attn[w] & bit))
		return 0;
	hw->attn[w] |= bit;
	hw->halt[w] &= ~bit;
	hw->reason[tid] = (uint8_t)reason;
	hw->regs[ZS_REG_DBG_STOPPED / 4]++;
	if (hw->regs[ZS_REG_DBG_CTL / 4] & 1)
		fake_hw_raise_irq(hw, ZS_IRQ_DEBUG);
	return 1;
}

void zs_hw_mmio_write(zs_hw_t *hw, uint32_t off, uint32_t v)
{
	if (off >= sizeof(hw->regs) || (off & 3))
		return;
	if (hw->log_on && off >= 0x4000 && off < 0x5000 && hw->nlog < OA_LOG_MAX) {
		hw->log[hw->nlog][0] = off;
		hw->log[hw->nlog++][1] = v;
	}
	if (off == ZS_REG_IRQ_STATUS) {
		hw->regs[off / 4] &= ~v;
		return;
	}
	if (off >= 0x4000 && off < 0x5000 && oa_write(hw, off, v))
		return;
	if (off >= 0x5000 && off < 0x5100 && dbg_write(hw, off, v))
		return;
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

void fake_hw_set_units(zs_hw_t *hw, uint32_t units) { hw->regs[ZS_REG_GT_UNITS / 4] = units; }

void fake_hw_oa_report(zs_hw_t *hw, uint32_t reason, uint64_t timestamp, const uint64_t *a, const uint32_t *bc)
{
	hw->oa_ts = timestamp;
	if (*R(hw, ZS_REG_OA_CTL) & ZS_FIELD_MASK(OA_CTL, ENABLE)) {
		for (unsigned i = 0; a && i < ZS_OA_MARKER_COUNTER; i++)
			hw->oa_a[i] = (hw->oa_a[i] + a[i]) & ((1ull << 40) - 1);
		for (unsigned i = 0; bc && i < ZS_OA_BC_COUNTERS; i++)
			hw->oa_bc[i] += bc[i];
		hw->oa_ticks += 100;
	}
	oa_report(hw, reason);
}

void fake_hw_mmio_log(zs_hw_t *hw, int on)
{
	hw->log_on = on;
	hw->nlog = 0;
}

unsigned fake_hw_mmio_log_get(zs_hw_t *hw, const uint32_t (**log)[2])
{
	*log = (const uint32_t (*)[2])hw->log;
	return hw->nlog;
}
