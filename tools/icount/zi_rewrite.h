/* zesim-icount's binary rewriter: a ZE-ISA module in, the same module with a
 * basic-block counter in front of every block out (README.md). */
#ifndef ZI_REWRITE_H
#define ZI_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "zs/ze_module.h"

/* A basic block of the original module: kernel index, offset of its first
 * instruction in the kernel's text section, and its instruction count. */
typedef struct zi_block {
	uint32_t kernel, offset, ninst;
} zi_block_t;

/* Instrument kernel `ki` of m in place: every basic block (a maximal run of
 * instructions entered only at its first and left only after its last) gets
 * an atomic add of 1 on dword `base + b` of the counter buffer whose address
 * ra.2-3 hold, b = the block's index in *blocks (module-wide), through two
 * free GRFs ra and rp; a kernel-entry prologue puts `buffer` in ra.2-3 (code
 * reached by `calla` runs no prologue: it counts into the caller's buffer).
 * Jumps, calls and function offsets are moved with their code.  Appends the
 * kernel's blocks to *blocks.  Returns 0, or -1 with a message in err. */
#define ZI_PROLOGUE_BYTES 32 /* the kernel-entry prologue: two instructions */
int zi_instrument_kernel(zm_kernel_t *k, uint32_t ki, unsigned ra, unsigned rp, uint64_t buffer, uint32_t base,
			 zi_block_t **blocks, uint32_t *nblocks, char *err, size_t errlen);

/* Source positions of a module's instructions from its DWARF .debug_line:
 * pos[addr / 16] = (file index into *files, line), line 0 where no row covers
 * the address.  Returns 0 (also when there is no line table: *npos = 0). */
typedef struct zi_pos {
	uint32_t file, line;
} zi_pos_t;
int zi_read_lines(const uint8_t *elf, size_t size, zi_pos_t **pos, uint32_t *npos, char ***files,
		  uint32_t *nfiles);

#endif
