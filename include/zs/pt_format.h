/* The GPU page-table format and its walk (docs/memory.md §2): the one
 * definition shared by the model's MMU (model/memory.cc, which keeps its TLB
 * and calls zs_pt_walk on a miss), the fake KMD (kmd_shim/kernel/, which
 * builds the tables and reads user fences through them) and the standalone
 * stimulus runner (sim/stimulus.cc).  C11 and C++17.
 *
 * Four levels of 4 KiB tables, 512 little-endian 64-bit entries each, 9 VA
 * bits per level, 48-bit virtual addresses:
 *
 *   level 3 (root)  VA[47:39]   an entry maps 512 GiB
 *   level 2         VA[38:30]   1 GiB
 *   level 1         VA[29:21]   2 MiB: a level-0 table of 4 KiB pages, or of
 *                               64 KiB pages when ZS_PDE_64K is set
 *   level 0, 4 KiB  VA[20:12]   512 entries of 4 KiB pages
 *   level 0, 64 KiB VA[20:16]   entries 0-31 of the table, 64 KiB pages
 *
 * Entry bits: present (all levels); writable (checked in the level-0 entry
 * only); 64K (level-1 entries only); address bits 51:12 (the next table, or
 * the page: for a 64 KiB page bits 15:12 are ignored).  Other bits ignored. */
#ifndef ZESIM_PT_FORMAT_H
#define ZESIM_PT_FORMAT_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZS_PTE_PRESENT ((uint64_t)1 << 0)
#define ZS_PTE_WRITABLE ((uint64_t)1 << 1)
#define ZS_PDE_64K ((uint64_t)1 << 2) /* in a level-1 entry: its level-0 table maps 64 KiB pages */
#define ZS_PTE_ADDR_MASK ((uint64_t)0x000ffffffffff000ull)

#define ZS_PT_LEVELS 4
#define ZS_PT_LEVEL_BITS 9
#define ZS_PT_ENTRIES 512u	/* entries of a table (a 4 KiB page) */
#define ZS_PT_ENTRIES_64K 32u	/* entries used in a level-0 table of 64 KiB pages */
#define ZS_PT_ENTRY_BYTES 8u
#define ZS_PT_TABLE_BYTES 4096u
#define ZS_PT_PAGE_SHIFT 12
#define ZS_PT_PAGE_64K_SHIFT 16
#define ZS_PT_PAGE ((uint64_t)1 << ZS_PT_PAGE_SHIFT)
#define ZS_PT_PAGE_64K ((uint64_t)1 << ZS_PT_PAGE_64K_SHIFT)
#define ZS_PT_REGION_SHIFT 21 /* a level-1 entry maps 2 MiB: one page size per region */
#define ZS_PT_REGION ((uint64_t)1 << ZS_PT_REGION_SHIFT)
#define ZS_PT_VA_BITS 48

/* Why a translation failed: the FAULT_STATUS reason (docs/mmio.md). */
enum zs_pt_fault {
	ZS_PT_OK = 0,
	ZS_PT_NOT_PRESENT = 1,
	ZS_PT_READ_ONLY = 2,
	ZS_PT_BAD_PHYSICAL = 3,
	ZS_PT_NON_CANONICAL = 4,
};

/* VA bits 63:48 all zero (there is no sign extension). */
static inline int zs_pt_canonical(uint64_t va) { return (va >> ZS_PT_VA_BITS) == 0; }

/* Index into the level-`level` table (3..1; 0 for a table of 4 KiB pages). */
static inline unsigned zs_pt_index(uint64_t va, int level)
{
	return (unsigned)(va >> (ZS_PT_PAGE_SHIFT + ZS_PT_LEVEL_BITS * level)) & (ZS_PT_ENTRIES - 1);
}

/* Index into a level-0 table of 4 KiB (big = 0) or 64 KiB (big != 0) pages. */
static inline unsigned zs_pt_leaf_index(uint64_t va, int big)
{
	return big ? (unsigned)(va >> ZS_PT_PAGE_64K_SHIFT) & (ZS_PT_ENTRIES_64K - 1) : zs_pt_index(va, 0);
}

static inline uint64_t zs_pt_page_size(int big) { return big ? ZS_PT_PAGE_64K : ZS_PT_PAGE; }
static inline unsigned zs_pt_leaf_entries(int big) { return big ? ZS_PT_ENTRIES_64K : ZS_PT_ENTRIES; }

/* Physical address of `va` in the page a level-0 entry maps. */
static inline uint64_t zs_pt_leaf_pa(uint64_t pte, uint64_t va, int big)
{
	const uint64_t page = pte & ZS_PTE_ADDR_MASK;
	return big ? (page & ~(ZS_PT_PAGE_64K - 1)) | (va & (ZS_PT_PAGE_64K - 1)) : page | (va & (ZS_PT_PAGE - 1));
}

/* Entries as the KMD and the stimulus runner write them: a table entry
 * (levels 3-1; big marks a level-1 entry whose table maps 64 KiB pages),
 * and a leaf. */
static inline uint64_t zs_pt_table_entry(uint64_t table_pa, int big)
{
	return (table_pa & ZS_PTE_ADDR_MASK) | ZS_PTE_PRESENT | ZS_PTE_WRITABLE | (big ? ZS_PDE_64K : 0);
}
static inline uint64_t zs_pt_leaf_entry(uint64_t page_pa, int writable)
{
	return (page_pa & ZS_PTE_ADDR_MASK) | ZS_PTE_PRESENT | (writable ? ZS_PTE_WRITABLE : 0);
}

typedef struct zs_pt_walk_result {
	uint64_t pa;	 /* the translation (0 on a fault) */
	uint32_t fault;	 /* enum zs_pt_fault */
	uint32_t level;	 /* table level where the walk stopped (0 on success; 3 if non-canonical) */
	int writable;	 /* success: the leaf's writable bit */
	int big;	 /* the level-1 entry had ZS_PDE_64K (once the walk got past level 1) */
	uint64_t entry_pa[ZS_PT_LEVELS]; /* physical address of the entry read at each level visited */
	uint64_t entry[ZS_PT_LEVELS];	 /* ... and its value */
} zs_pt_walk_result_t;

/* Translate `va` through the tables rooted at physical address `root`, in
 * the physical memory [phys, phys + phys_size), for a read or (write != 0) a
 * write.  First failure wins:
 *   va bits 63:48 not zero                                   non-canonical (level 3)
 *   levels 3..0: the entry lies outside physical memory      bad physical
 *                the entry is not present                    not present
 *   level 0:     a write to an entry that is not writable    read-only
 *                the 4 KiB frame of the result lies outside   bad physical
 * Returns the physical address, or ~0 on a fault (out->fault says why).
 * Reads memory only; `out` may not be NULL. */
static inline uint64_t zs_pt_walk(const uint8_t *phys, uint64_t phys_size, uint64_t root, uint64_t va, int write,
				  zs_pt_walk_result_t *out)
{
	memset(out, 0, sizeof(*out));
	if (!zs_pt_canonical(va)) {
		out->fault = ZS_PT_NON_CANONICAL;
		out->level = 3;
		return ~(uint64_t)0;
	}
	uint64_t table = root;
	for (int level = ZS_PT_LEVELS - 1; level >= 0; level--) {
		const unsigned index = level == 0 ? zs_pt_leaf_index(va, out->big) : zs_pt_index(va, level);
		const uint64_t entry_pa = table + (uint64_t)index * ZS_PT_ENTRY_BYTES;
		out->level = (uint32_t)level;
		if (!(entry_pa <= phys_size && ZS_PT_ENTRY_BYTES <= phys_size - entry_pa)) {
			out->fault = ZS_PT_BAD_PHYSICAL;
			return ~(uint64_t)0;
		}
		uint64_t e;
		memcpy(&e, phys + entry_pa, sizeof(e));
		out->entry_pa[level] = entry_pa;
		out->entry[level] = e;
		if (!(e & ZS_PTE_PRESENT)) {
			out->fault = ZS_PT_NOT_PRESENT;
			return ~(uint64_t)0;
		}
		if (level == 1)
			out->big = (e & ZS_PDE_64K) != 0;
		if (level == 0) {
			if (write && !(e & ZS_PTE_WRITABLE)) {
				out->fault = ZS_PT_READ_ONLY;
				return ~(uint64_t)0;
			}
			const uint64_t pa = zs_pt_leaf_pa(e, va, out->big);
			const uint64_t frame = pa & ~(ZS_PT_PAGE - 1);
			if (!(frame <= phys_size && ZS_PT_PAGE <= phys_size - frame)) {
				out->fault = ZS_PT_BAD_PHYSICAL;
				return ~(uint64_t)0;
			}
			out->pa = pa;
			out->writable = (e & ZS_PTE_WRITABLE) != 0;
			return pa;
		}
		table = e & ZS_PTE_ADDR_MASK;
	}
	out->fault = ZS_PT_NOT_PRESENT; /* not reached */
	return ~(uint64_t)0;
}

#ifdef __cplusplus
}
#endif

#endif
