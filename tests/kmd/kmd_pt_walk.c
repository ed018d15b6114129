/* The KMD's page tables, walked as the device walks them (docs/memory.md §2,
 * docs/kmd.md §4), against the fake hardware interface: no model.
 *
 * The KMD builds the tables (zk_ioctl VM_CREATE / GEM_CREATE / VM_BIND) for
 * 4 KiB and 64 KiB pages: binds across 2 MiB regions, 64 KiB binds whose last
 * page is entry 31 of a table, entry 0 or 1 of the next table, a single
 * 64 KiB page, object offsets and read-only binds.  The root is taken from
 * the ring, as the device takes it (the LOAD_REGISTER_IMMs of CTX_PT_ROOT
 * before an EXEC's batch), and physical memory from zs_hw_phys.  Then every
 * page (and a few addresses inside it) is translated twice -- by the shared
 * walker zs_pt_walk (include/zs/pt_format.h) and by an independent walker
 * written here from docs/memory.md -- and checked:
 *   - both walkers agree (address, fault, level);
 *   - the page holds the object's own bytes at that offset (each 4 KiB piece
 *     of an object carries a tag written through the object's memfd), and
 *     the physical address is the object's base + the offset;
 *   - reads succeed everywhere, writes fault read-only where bound READONLY;
 *   - the unmapped neighbours of every bind fault not-present;
 *   - a user fence the KMD signals (VM_BIND sync, vm_ptr) lands where the
 *     walk says, and WAIT_USER_FENCE reads it back;
 *   - after UNMAP every page of the binding faults not-present.
 * A second VM (one_gib_boundaries) takes binds across 1 GiB boundaries (4 KiB and
 * 64 KiB pages, single and multi-page, one across 512 GiB), rebinds of the same range
 * to other objects (also 4 KiB pages where 64 KiB ones were), a refused UNMAP of the
 * middle of a mapping and the UNMAP and rebind of the middle one of three adjacent
 * mappings; after each step all its tables are enumerated independently and compared
 * with the expected leaves, pages and table count (check_vm).
 * Finally both walkers are compared on random tables (garbage entries,
 * addresses beyond memory, 64K bits, non-canonical VAs): same result, bit
 * for bit.  Prints a line per part; exits 1 with a message at the first
 * failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_hw.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"
#include "zs/pt_format.h"

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_pt_walk:%d: %s: ", __LINE__, #cond);                                     \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

#define KB ((uint64_t)1024)
#define MB (1024 * KB)

static zs_hw_t *hw;
static zk_kmd_t *k;
static zk_file_t *f;
static const uint8_t *phys;
static uint64_t phys_size;

/* ---- the independent walker (docs/memory.md §2, written without pt_format.h) -- */

typedef struct ref_result {
	uint64_t pa;
	unsigned fault, level;
} ref_result_t;

static int ref_inside(uint64_t pa, uint64_t n) { return pa <= phys_size && phys_size - pa >= n; }

static ref_result_t ref_walk(const uint8_t *mem, uint64_t root, uint64_t va, int write)
{
	/* lowest VA bit indexing each level, and the index width */
	static const unsigned lsb[4] = {12, 21, 30, 39};
	if (va >> 48)
		return (ref_result_t){0, 4, 3};
	uint64_t table = root;
	int pages64k = 0;
	for (int level = 3; level >= 0; level--) {
		uint64_t index = level == 0 && pages64k ? (va >> 16) % 32 : (va >> lsb[level]) % 512;
		uint64_t at = table + 8 * index;
		if (!ref_inside(at, 8))
			return (ref_result_t){0, 3, (unsigned)level};
		uint64_t e = 0;
		for (int b = 7; b >= 0; b--) /* little endian */
			e = e << 8 | mem[at + (uint64_t)b];
		if (!(e & 1))
			return (ref_result_t){0, 1, (unsigned)level};
		const uint64_t addr = e & (((1ull << 52) - 1) & ~0xfffull);
		if (level == 1)
			pages64k = (e >> 2) & 1;
		if (level > 0) {
			table = addr;
			continue;
		}
		if (write && !(e & 2))
			return (ref_result_t){0, 2, 0};
		const uint64_t pa = pages64k ? addr - addr % (64 * KB) + va % (64 * KB) : addr + va % (4 * KB);
		if (!ref_inside(pa - pa % (4 * KB), 4 * KB))
			return (ref_result_t){0, 3, 0};
		return (ref_result_t){pa, 0, 0};
	}
	return (ref_result_t){0, 1, 0};
}

/* Both walkers, which must agree; returns the shared walker's answer. */
static zs_pt_walk_result_t walk2(uint64_t root, uint64_t va, int write)
{
	zs_pt_walk_result_t r;
	const uint64_t pa = zs_pt_walk(phys, phys_size, root, va, write, &r);
	const ref_result_t x = ref_walk(phys, root, va, write);
	EXPECT(r.fault == x.fault && r.level == x.level && (r.fault || (pa == x.pa && r.pa == x.pa)),
	       "root 0x%" PRIx64 " va 0x%" PRIx64 " %s: zs_pt_walk pa 0x%" PRIx64 " fault %u level %u, "
	       "independent walker pa 0x%" PRIx64 " fault %u level %u",
	       root, va, write ? "write" : "read", r.pa, r.fault, r.level, x.pa, x.fault, x.level);
	return r;
}

/* ---- the KMD through its ioctls ----------------------------------------------- */

static int io(unsigned long cmd, void *arg, const void *in, uint32_t in_len)
{
	zk_blob_t blob = {in, in_len};
	return zk_ioctl(f, cmd, arg, (uint32_t)_IOC_SIZE(cmd), &blob, in ? 1 : 0, NULL, 0);
}

typedef struct object {
	uint32_t handle;
	uint64_t size;
	uint8_t *cpu; /* the client's mapping of its memfd */
} object_t;

static uint64_t tag(const object_t *o, uint64_t offset) { return 0x7a50000000000000ull | (uint64_t)o->handle << 32 | offset; }

/* An object whose every 4 KiB piece starts with its tag. */
static object_t object(uint64_t size)
{
	object_t o = {0, size, NULL};
	struct drm_zesim_gem_create g = {.size = size, .placement = 1};
	EXPECT(io(DRM_IOCTL_ZESIM_GEM_CREATE, &g, NULL, 0) == 0, "GEM_CREATE %" PRIu64, size);
	o.handle = g.handle;
	struct drm_zesim_gem_mmap_offset m = {.handle = g.handle};
	EXPECT(io(DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &m, NULL, 0) == 0, "GEM_MMAP_OFFSET");
	int memfd = -1;
	EXPECT(zk_mmap_lookup(f, m.offset, size, &memfd) == 0, "zk_mmap_lookup");
	o.cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	EXPECT(o.cpu != MAP_FAILED, "mmap: %s", strerror(errno));
	for (uint64_t off = 0; off < size; off += 4 * KB) {
		const uint64_t t = tag(&o, off);
		memcpy(o.cpu + off, &t, 8);
	}
	return o;
}

typedef struct binding {
	const char *what;
	object_t *o;
	uint64_t obj_offset, range, addr;
	uint32_t flags;
} binding_t;

static int bind(uint32_t vm, const binding_t *b, uint32_t op, const struct drm_zesim_sync *syncs, uint32_t nsyncs)
{
	struct drm_zesim_vm_bind vb = {.vm_id = vm, .num_binds = 1, .num_syncs = nsyncs};
	vb.bind = (struct drm_zesim_vm_bind_op){.obj = op == ZESIM_VM_BIND_OP_MAP ? b->o->handle : 0,
						.obj_offset = op == ZESIM_VM_BIND_OP_MAP ? b->obj_offset : 0,
						.range = b->range,
						.addr = b->addr,
						.op = op,
						.flags = op == ZESIM_VM_BIND_OP_MAP ? b->flags : 0};
	return io(DRM_IOCTL_ZESIM_VM_BIND, &vb, syncs, nsyncs * (uint32_t)sizeof(*syncs));
}

/* The root the device would load for this VM: EXEC a batch on a queue of the
 * VM and read CTX_PT_ROOT_LO/HI from the LOAD_REGISTER_IMMs the KMD put on
 * the ring (RING_BASE, physical).  The fake engine completes it at once. */
static uint64_t root_from_ring(uint32_t vm, uint64_t batch_va)
{
	struct drm_zesim_engine_class_instance eci = {.engine_class = ZESIM_ENGINE_CLASS_COMPUTE};
	struct drm_zesim_exec_queue_create qc = {.width = 1, .num_placements = 1, .vm_id = vm};
	EXPECT(io(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, &qc, &eci, sizeof(eci)) == 0, "EXEC_QUEUE_CREATE");
	const uint32_t tail0 = zs_hw_mmio_read(hw, ZS_REG_RING_TAIL);
	struct drm_zesim_exec e = {.exec_queue_id = qc.exec_queue_id, .address = batch_va, .num_batch_buffer = 1};
	EXPECT(io(DRM_IOCTL_ZESIM_EXEC, &e, NULL, 0) == 0, "EXEC");
	const uint64_t ring = zs_hw_mmio_read(hw, ZS_REG_RING_BASE_LO) | (uint64_t)zs_hw_mmio_read(hw, ZS_REG_RING_BASE_HI) << 32;
	const uint32_t ring_size = zs_hw_mmio_read(hw, ZS_REG_RING_SIZE);
	const uint32_t tail = zs_hw_mmio_read(hw, ZS_REG_RING_TAIL);
	EXPECT(ring_size && ring + ring_size <= phys_size && tail != tail0, "ring 0x%" PRIx64 " size %u", ring, ring_size);
	uint32_t lo = 0, hi = 0, seen = 0;
	for (uint32_t at = tail0; at != tail; at = (at + 4) % ring_size) {
		uint32_t dw[3];
		for (int i = 0; i < 3; i++)
			memcpy(&dw[i], phys + ring + (at + 4u * (uint32_t)i) % ring_size, 4);
		if (dw[0] != ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3))
			continue;
		if (dw[1] == ZS_REG_CTX_PT_ROOT_LO)
			lo = dw[2], seen |= 1;
		if (dw[1] == ZS_REG_CTX_PT_ROOT_HI)
			hi = dw[2], seen |= 2;
	}
	EXPECT(seen == 3, "no CTX_PT_ROOT load on the ring");
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_STATUS, ZS_ENGINE_IDLE);
	fake_hw_set_busy(hw, 0);
	fake_hw_raise_irq(hw, ZS_IRQ_ENGINE_IDLE);
	zk_service(k);
	return lo | (uint64_t)hi << 32;
}

/* Every page of a binding, and addresses inside pages, through both walkers. */
static void check_binding(uint64_t root, const binding_t *b)
{
	const int big = !!(b->flags & ZESIM_VM_BIND_FLAG_64K);
	const int ro = !!(b->flags & ZESIM_VM_BIND_FLAG_READONLY);
	const uint64_t page = big ? 64 * KB : 4 * KB;
	uint64_t base = 0; /* the object's physical base, from the first page */
	for (uint64_t off = 0; off < b->range; off += 4 * KB) {
		const uint64_t va = b->addr + off, obj_off = b->obj_offset + off;
		const zs_pt_walk_result_t r = walk2(root, va, 0);
		EXPECT(r.fault == ZS_PT_OK, "%s: page at +0x%" PRIx64 " (va 0x%" PRIx64 ", %s page %" PRIu64 " of %" PRIu64
		       ") does not translate: fault %u at level %u",
		       b->what, off, va, big ? "64 KiB" : "4 KiB", off / page + 1, b->range / page, r.fault, r.level);
		EXPECT(r.big == big, "%s: va 0x%" PRIx64 ": level-1 entry 64K bit %d", b->what, va, r.big);
		if (!off)
			base = r.pa - obj_off;
		EXPECT(r.pa == base + obj_off, "%s: va 0x%" PRIx64 " (page %" PRIu64 " of %" PRIu64 ") -> pa 0x%" PRIx64
		       ", expected object base 0x%" PRIx64 " + 0x%" PRIx64,
		       b->what, va, off / page + 1, b->range / page, r.pa, base, obj_off);
		uint64_t t;
		memcpy(&t, phys + r.pa, 8);
		EXPECT(t == tag(b->o, obj_off), "%s: va 0x%" PRIx64 " (page %" PRIu64 " of %" PRIu64 ") holds tag 0x%" PRIx64
		       ", not the object's bytes at 0x%" PRIx64 " (0x%" PRIx64 ")",
		       b->what, va, off / page + 1, b->range / page, t, obj_off, tag(b->o, obj_off));
		const zs_pt_walk_result_t w = walk2(root, va + 8, 1);
		EXPECT(ro ? w.fault == ZS_PT_READ_ONLY && w.level == 0 : w.fault == ZS_PT_OK && w.pa == r.pa + 8,
		       "%s: write to va 0x%" PRIx64 ": fault %u (read-only bind: %d)", b->what, va + 8, w.fault, ro);
		const zs_pt_walk_result_t last = walk2(root, va + 4 * KB - 4, 0);
		EXPECT(last.fault == ZS_PT_OK && last.pa == r.pa + 4 * KB - 4, "%s: va 0x%" PRIx64, b->what, va + 4 * KB - 4);
	}
	/* the neighbours are not mapped */
	const uint64_t before = b->addr - 4, after = b->addr + b->range;
	const zs_pt_walk_result_t nb = walk2(root, before, 0), na = walk2(root, after, 0);
	EXPECT(nb.fault == ZS_PT_NOT_PRESENT, "%s: va 0x%" PRIx64 " just below the bind: fault %u", b->what, before, nb.fault);
	EXPECT(na.fault == ZS_PT_NOT_PRESENT, "%s: va 0x%" PRIx64 " just above the bind: fault %u", b->what, after, na.fault);
}

/* ---- whole tables against an independent expectation ------------------------------
 *
 * A second VM gets binds across 1 GiB boundaries (and one across 512 GiB), rebinds of
 * the same range to other objects, UNMAPs of the middle mapping of three adjacent ones
 * and a refused UNMAP of the middle of one mapping.  After each step every table of the
 * VM is enumerated by code written here from docs/memory.md §2 (not pt_format.h) and
 * compared with the expectation the test keeps itself -- the live mappings, and the
 * tables docs/kmd.md §4 says exist (levels 3-1 created on first use and kept, a leaf
 * table per 2 MiB region holding a live mapping) -- and every page, live or removed, is
 * translated by zs_pt_walk (and the independent walker): each present leaf is a page
 * of the expected mapping holding its object's bytes, and nothing else is present. */

#define GB (1024 * MB)
#define MAX_LEAVES 4096
#define MAX_LIVE 64

typedef struct leaf {
	uint64_t va, pa;
	int big, writable;
} leaf_t;

static leaf_t found[MAX_LEAVES];
static unsigned nfound, ntables_found, nstray;
static uint64_t stray_at;

static uint64_t ref_rd64(uint64_t pa)
{
	uint64_t e = 0;
	for (int b = 7; b >= 0; b--)
		e = e << 8 | phys[pa + (uint64_t)b];
	return e;
}

/* Every table reachable from `table` (a level-`level` table mapping VAs from
 * va_base): count it, and record each present leaf.  A non-zero entry that is not
 * present, or an entry beyond 31 of a table of 64 KiB pages, is a stray entry (the
 * KMD writes 0 where nothing is mapped). */
static void enum_tables(uint64_t table, int level, uint64_t va_base, int big)
{
	static const unsigned lsb[4] = {12, 21, 30, 39};
	EXPECT(table % 4096 == 0 && ref_inside(table, 4096), "level-%d table at 0x%" PRIx64 " outside memory", level, table);
	ntables_found++;
	for (uint64_t i = 0; i < 512; i++) {
		const uint64_t e = ref_rd64(table + 8 * i);
		if (!e)
			continue;
		if (!(e & 1) || (level == 0 && big && i >= 32)) {
			if (!nstray++)
				stray_at = table + 8 * i;
			continue;
		}
		const uint64_t addr = e & 0x000ffffffffff000ull;
		const uint64_t va = va_base + (i << (level == 0 && big ? 16 : lsb[level]));
		if (level > 0) {
			enum_tables(addr, level - 1, va, level == 1 ? (int)(e >> 2 & 1) : 0);
			continue;
		}
		EXPECT(nfound < MAX_LEAVES, "too many leaves");
		found[nfound++] = (leaf_t){va, big ? addr & ~(64 * KB - 1) : addr, big, (int)(e >> 1 & 1)};
	}
}

static int leaf_order(const void *a, const void *b)
{
	const leaf_t *x = a, *y = b;
	return x->va < y->va ? -1 : x->va > y->va;
}

static binding_t live[MAX_LIVE];
static unsigned nlive;
static binding_t dead[MAX_LIVE]; /* removed mappings: their pages must not translate (unless live again) */
static unsigned ndead;
static uint64_t l2_ever[MAX_LIVE], l1_ever[MAX_LIVE]; /* tables of levels 2 and 1 created so far (VA >> 39, >> 30) */
static unsigned nl2, nl1;
static uint64_t pt_bytes_before; /* page-table bytes of everything but the second VM */

static void add_unique(uint64_t *set, unsigned *n, uint64_t x)
{
	for (unsigned i = 0; i < *n; i++)
		if (set[i] == x)
			return;
	EXPECT(*n < MAX_LIVE, "set full");
	set[(*n)++] = x;
}

static const binding_t *live_at(uint64_t va)
{
	for (unsigned i = 0; i < nlive; i++)
		if (va >= live[i].addr && va - live[i].addr < live[i].range)
			return &live[i];
	return NULL;
}

/* The whole VM against the expectation. */
static void check_vm(uint64_t root, const char *step)
{
	nfound = ntables_found = nstray = 0;
	enum_tables(root, 3, 0, 0);
	EXPECT(!nstray, "%s: %u stray entries (first at pa 0x%" PRIx64 ": 0x%" PRIx64 ")", step, nstray, stray_at,
	       ref_rd64(stray_at));
	qsort(found, nfound, sizeof(found[0]), leaf_order);

	/* the leaves the live mappings give, in VA order */
	static leaf_t want[MAX_LEAVES];
	static const binding_t *owner[MAX_LEAVES];
	unsigned nwant = 0;
	uint64_t leaf_tables[MAX_LEAVES];
	unsigned nleaf_tables = 0;
	for (unsigned i = 0; i < nlive; i++) {
		const binding_t *b = &live[i];
		const int big = !!(b->flags & ZESIM_VM_BIND_FLAG_64K);
		const uint64_t page = big ? 64 * KB : 4 * KB;
		for (uint64_t off = 0; off < b->range; off += page) {
			EXPECT(nwant < MAX_LEAVES, "too many pages");
			owner[nwant] = b;
			want[nwant++] = (leaf_t){b->addr + off, b->obj_offset + off, big, !(b->flags & ZESIM_VM_BIND_FLAG_READONLY)};
			add_unique(leaf_tables, &nleaf_tables, (b->addr + off) >> 21);
		}
	}
	for (unsigned i = 1; i < nwant; i++) /* insertion sort, keeping the owners along */
		for (unsigned j = i; j > 0 && want[j - 1].va > want[j].va; j--) {
			const leaf_t t = want[j];
			const binding_t *o = owner[j];
			want[j] = want[j - 1], owner[j] = owner[j - 1];
			want[j - 1] = t, owner[j - 1] = o;
		}
	for (unsigned i = 0; i < nfound || i < nwant; i++) {
		EXPECT(i < nfound, "%s: va 0x%" PRIx64 " (%s) has no leaf entry", step, want[i].va, owner[i]->what);
		EXPECT(i < nwant, "%s: leaf entry for va 0x%" PRIx64 " -> pa 0x%" PRIx64 " where nothing is mapped", step,
		       found[i].va, found[i].pa);
		const leaf_t *w = &want[i], *g = &found[i];
		EXPECT(g->va == w->va, "%s: leaf entry for va 0x%" PRIx64 " (pa 0x%" PRIx64 "), expected one for va 0x%" PRIx64
		       " (%s) first", step, g->va, g->pa, w->va, owner[i]->what);
		EXPECT(g->big == w->big && g->writable == w->writable, "%s: va 0x%" PRIx64 " (%s): 64K %d writable %d, expected %d %d",
		       step, g->va, owner[i]->what, g->big, g->writable, w->big, w->writable);
		/* the page holds the object's bytes at that offset (every 4 KiB piece) */
		for (uint64_t piece = 0; piece < (w->big ? 64 * KB : 4 * KB); piece += 4 * KB) {
			uint64_t t;
			EXPECT(ref_inside(g->pa + piece, 4 * KB), "%s: va 0x%" PRIx64 " -> pa 0x%" PRIx64 " outside memory", step,
			       g->va, g->pa);
			memcpy(&t, phys + g->pa + piece, 8);
			EXPECT(t == tag(owner[i]->o, w->pa + piece), "%s: va 0x%" PRIx64 " (%s) -> pa 0x%" PRIx64 " holds tag 0x%" PRIx64
			       ", not object %u's bytes at 0x%" PRIx64, step, g->va + piece, owner[i]->what, g->pa + piece, t,
			       owner[i]->o->handle, w->pa + piece);
		}
	}
	/* tables: the root, levels 2 and 1 as created, one leaf table per region in use */
	const unsigned tables = 1 + nl2 + nl1 + nleaf_tables;
	EXPECT(ntables_found == tables, "%s: %u tables reachable, expected %u (root + %u + %u + %u leaf tables)", step,
	       ntables_found, tables, nl2, nl1, nleaf_tables);
	zk_stats_t st;
	zk_get_stats(k, &st);
	EXPECT(st.pt_bytes - pt_bytes_before == (uint64_t)tables * 4096, "%s: the KMD counts %" PRIu64
	       " page-table bytes for the VM, expected %u tables", step, st.pt_bytes - pt_bytes_before, tables);

	/* and the device's walk of every page, live or removed */
	for (unsigned i = 0; i < nlive + ndead; i++) {
		const binding_t *b = i < nlive ? &live[i] : &dead[i - nlive];
		for (uint64_t off = 0; off < b->range; off += 4 * KB) {
			const uint64_t va = b->addr + off;
			const binding_t *l = live_at(va);
			const zs_pt_walk_result_t r = walk2(root, va + 0x10, 0);
			if (!l) {
				EXPECT(r.fault == ZS_PT_NOT_PRESENT, "%s: va 0x%" PRIx64 " (was %s) translates (fault %u)", step, va,
				       b->what, r.fault);
				continue;
			}
			EXPECT(r.fault == ZS_PT_OK, "%s: va 0x%" PRIx64 " (%s): fault %u at level %u", step, va, l->what, r.fault,
			       r.level);
			uint64_t t;
			memcpy(&t, phys + r.pa - 0x10, 8);
			EXPECT(t == tag(l->o, l->obj_offset + (va - l->addr)), "%s: walk of va 0x%" PRIx64 " (%s) reaches tag 0x%" PRIx64,
			       step, va, l->what, t);
			const zs_pt_walk_result_t w = walk2(root, va + 0x10, 1);
			EXPECT((l->flags & ZESIM_VM_BIND_FLAG_READONLY) ? w.fault == ZS_PT_READ_ONLY : w.fault == ZS_PT_OK,
			       "%s: write to va 0x%" PRIx64 " (%s): fault %u", step, va, l->what, w.fault);
		}
	}
	printf("%s: %u leaves, %u tables as expected; every page translates as bound\n", step, nfound, tables);
}

static void map2(uint32_t vm, binding_t b)
{
	EXPECT(bind(vm, &b, ZESIM_VM_BIND_OP_MAP, NULL, 0) == 0, "VM_BIND MAP %s", b.what);
	EXPECT(nlive < MAX_LIVE, "too many mappings");
	live[nlive++] = b;
	for (uint64_t off = 0; off < b.range; off += 4 * KB) {
		add_unique(l2_ever, &nl2, (b.addr + off) >> 39);
		add_unique(l1_ever, &nl1, (b.addr + off) >> 30);
	}
}

/* UNMAP [addr, addr+range): drops the live mappings inside it. */
static void unmap2(uint32_t vm, uint64_t addr, uint64_t range)
{
	binding_t u = {"unmap", NULL, 0, range, addr, 0};
	EXPECT(bind(vm, &u, ZESIM_VM_BIND_OP_UNMAP, NULL, 0) == 0, "VM_BIND UNMAP 0x%" PRIx64 "+0x%" PRIx64, addr, range);
	for (unsigned i = 0; i < nlive;) {
		if (live[i].addr >= addr && live[i].addr + live[i].range <= addr + range) {
			EXPECT(ndead < MAX_LIVE, "too many removed mappings");
			dead[ndead++] = live[i];
			live[i] = live[--nlive];
		} else {
			i++;
		}
	}
}

static void one_gib_boundaries(void)
{
	zk_stats_t st;
	zk_get_stats(k, &st);
	pt_bytes_before = st.pt_bytes;
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	const uint32_t vm = vc.vm_id;
	const uint32_t B64 = ZESIM_VM_BIND_FLAG_64K, RO = ZESIM_VM_BIND_FLAG_READONLY;
	static const uint64_t sizes[] = {4 * KB,   4 * KB,   24 * KB,  64 * KB,  64 * KB,  320 * KB, 16 * KB,
					 192 * KB, 24 * KB,  320 * KB, 128 * KB, 128 * KB, 128 * KB, 128 * KB,
					 128 * KB, 4 * KB,   8 * KB,   4 * KB,   8 * KB, 8 * KB};
	static object_t o[sizeof(sizes) / sizeof(sizes[0])];
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		o[i] = object(sizes[i]);

	map2(vm, (binding_t){"4 KiB x1, the last page below 3 GiB", &o[0], 0, 4 * KB, 3 * GB - 4 * KB, 0});
	map2(vm, (binding_t){"4 KiB x1, the first page at 3 GiB", &o[1], 0, 4 * KB, 3 * GB, 0});
	map2(vm, (binding_t){"4 KiB x6 across 4 GiB", &o[2], 0, 24 * KB, 4 * GB - 12 * KB, 0});
	map2(vm, (binding_t){"64 KiB x1 ending at 5 GiB", &o[3], 0, 64 * KB, 5 * GB - 64 * KB, B64});
	map2(vm, (binding_t){"64 KiB x1 at 5 GiB", &o[4], 0, 64 * KB, 5 * GB, B64});
	map2(vm, (binding_t){"64 KiB x5 across 6 GiB", &o[5], 0, 320 * KB, 6 * GB - 128 * KB, B64});
	map2(vm, (binding_t){"4 KiB x4 across 512 GiB", &o[6], 0, 16 * KB, 512 * GB - 8 * KB, 0});
	map2(vm, (binding_t){"64 KiB x2 read-only across 2 GiB at object offset 64 KiB", &o[7], 64 * KB, 128 * KB,
			     2 * GB - 64 * KB, B64 | RO});
	const uint64_t root = root_from_ring(vm, 3 * GB);
	check_vm(root, "binds across 1 GiB boundaries");

	/* rebinds: the same range to another object */
	unmap2(vm, 4 * GB - 12 * KB, 24 * KB);
	check_vm(root, "UNMAP of the 4 KiB x6 bind across 4 GiB");
	map2(vm, (binding_t){"4 KiB x6 across 4 GiB, rebound to another object", &o[8], 0, 24 * KB, 4 * GB - 12 * KB, 0});
	check_vm(root, "4 KiB x6 across 4 GiB rebound");
	unmap2(vm, 6 * GB - 128 * KB, 320 * KB);
	map2(vm, (binding_t){"64 KiB x5 across 6 GiB, rebound to another object", &o[9], 0, 320 * KB, 6 * GB - 128 * KB,
			     B64});
	check_vm(root, "64 KiB x5 across 6 GiB rebound");
	/* both 64 KiB pages around 5 GiB in one UNMAP; their leaf tables go, so the
	 * regions take 4 KiB pages of another object */
	unmap2(vm, 5 * GB - 64 * KB, 128 * KB);
	check_vm(root, "UNMAP of the 64 KiB pages around 5 GiB");
	map2(vm, (binding_t){"4 KiB x32 around 5 GiB where 64 KiB pages were", &o[10], 0, 128 * KB, 5 * GB - 64 * KB, 0});
	check_vm(root, "4 KiB pages around 5 GiB");

	/* an UNMAP of the middle of one mapping is refused and changes nothing */
	static leaf_t before[MAX_LEAVES];
	const unsigned nbefore = nfound;
	memcpy(before, found, nfound * sizeof(found[0]));
	binding_t mid = {"the middle of the 64 KiB x5 bind", NULL, 0, 128 * KB, 6 * GB - 64 * KB, 0};
	EXPECT(bind(vm, &mid, ZESIM_VM_BIND_OP_UNMAP, NULL, 0) == -EINVAL, "UNMAP of %s: not EINVAL", mid.what);
	check_vm(root, "refused UNMAP of the middle of a mapping");
	EXPECT(nfound == nbefore && !memcmp(before, found, nfound * sizeof(found[0])),
	       "the refused UNMAP changed the page tables");

	/* three adjacent mappings across 7 GiB (64 KiB) and 8 GiB (4 KiB): UNMAP the
	 * middle one, then bind another object there */
	map2(vm, (binding_t){"64 KiB x2 below 7 GiB (first of three)", &o[11], 0, 128 * KB, 7 * GB - 192 * KB, B64});
	map2(vm, (binding_t){"64 KiB x2 across 7 GiB (middle of three)", &o[12], 0, 128 * KB, 7 * GB - 64 * KB, B64});
	map2(vm, (binding_t){"64 KiB x2 above 7 GiB (last of three)", &o[13], 0, 128 * KB, 7 * GB + 64 * KB, B64});
	map2(vm, (binding_t){"4 KiB x1 below 8 GiB (first of three)", &o[15], 0, 4 * KB, 8 * GB - 8 * KB, 0});
	map2(vm, (binding_t){"4 KiB x2 across 8 GiB (middle of three)", &o[16], 0, 8 * KB, 8 * GB - 4 * KB, 0});
	map2(vm, (binding_t){"4 KiB x1 above 8 GiB (last of three)", &o[17], 0, 4 * KB, 8 * GB + 4 * KB, 0});
	check_vm(root, "three adjacent mappings across 7 GiB and 8 GiB");
	unmap2(vm, 7 * GB - 64 * KB, 128 * KB);
	unmap2(vm, 8 * GB - 4 * KB, 8 * KB);
	check_vm(root, "UNMAP of the middle mappings");
	map2(vm, (binding_t){"64 KiB x2 across 7 GiB, rebound in the middle", &o[14], 0, 128 * KB, 7 * GB - 64 * KB, B64});
	map2(vm, (binding_t){"4 KiB x2 across 8 GiB, rebound in the middle", &o[18], 0, 8 * KB, 8 * GB - 4 * KB, 0});
	check_vm(root, "middle mappings rebound to other objects");

	/* one call that UNMAPs a range and MAPs another object there: the ops apply in
	 * order (docs/uapi.md §6), so the MAP is not refused for the mapping the UNMAP
	 * before it removes (the driver's deferred binds of a reused allocation rely on it) */
	binding_t again = {"4 KiB x2 across 8 GiB, unbound and rebound in one call", &o[19], 0, 8 * KB, 8 * GB - 4 * KB, 0};
	struct drm_zesim_vm_bind_op two[2] = {
		{.range = again.range, .addr = again.addr, .op = ZESIM_VM_BIND_OP_UNMAP},
		{.obj = o[19].handle, .range = again.range, .addr = again.addr, .op = ZESIM_VM_BIND_OP_MAP}};
	struct drm_zesim_vm_bind vb = {.vm_id = vm, .num_binds = 2, .vector_of_binds = (uintptr_t)two};
	EXPECT(io(DRM_IOCTL_ZESIM_VM_BIND, &vb, two, sizeof(two)) == 0, "VM_BIND UNMAP + MAP of %s", again.what);
	for (unsigned i = 0; i < nlive; i++)
		if (live[i].addr == again.addr) {
			dead[ndead++] = live[i];
			live[i] = again;
		}
	check_vm(root, "UNMAP and MAP of one range in one call");
	/* (the VM stays until the file is closed: its exec queue holds it) */
}

/* A leaf table freed by an UNMAP stops counting against its file's memory limit
 * (docs/kmd.md §3: objects + page-table pages of its VMs): many MAP / UNMAP rounds of
 * one 2 MiB region under a limit a few pages above what one round needs all succeed. */
static void freed_tables_leave_the_file_limit(void)
{
	zk_limits_t old, lim;
	zk_get_limits(k, &old);
	zk_file_t *const f1 = f;
	f = zk_open(k, 101);
	EXPECT(f, "zk_open");
	/* root + levels 2 and 1 + a leaf table + a 4 KiB object, and 2 pages to spare */
	lim = old;
	lim.bytes_per_file = 7 * 4 * KB;
	zk_set_limits(k, &lim);
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	object_t obj = object(4 * KB);
	binding_t b = {"4 KiB at 2 MiB", &obj, 0, 4 * KB, 2 * MB, 0};
	for (unsigned round = 0; round < 64; round++) {
		const int rc = bind(vc.vm_id, &b, ZESIM_VM_BIND_OP_MAP, NULL, 0);
		EXPECT(rc == 0, "MAP / UNMAP round %u under a %" PRIu64 " KiB limit: MAP fails with %d (freed leaf tables still "
		       "counted against the file)", round, lim.bytes_per_file / KB, rc);
		EXPECT(bind(vc.vm_id, &b, ZESIM_VM_BIND_OP_UNMAP, NULL, 0) == 0, "UNMAP");
	}
	munmap(obj.cpu, obj.size);
	zk_close(f);
	f = f1;
	zk_set_limits(k, &old);
	printf("64 MAP / UNMAP rounds of one region under a 28 KiB file limit: freed leaf tables are not counted\n");
}

/* ---- random tables: the two walkers, bit for bit --------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void random_tables(uint8_t *mem, uint64_t size, unsigned rounds)
{
	/* Entries point into the first 64 table pages of the memory most of the
	 * time, sometimes anywhere (mostly beyond it); 64K, writable, present and
	 * ignored bits at random. */
	const uint64_t tables = 64;
	for (uint64_t i = 0; i < tables * 512; i++) {
		uint64_t e = rnd();
		const unsigned kind = (unsigned)(e % 8);
		uint64_t addr;
		if (kind < 5)
			addr = (rnd() % tables) * 4096;
		else if (kind < 7)
			addr = rnd() % (size + 64 * KB);
		else
			addr = rnd();
		e = (e & ~ZS_PTE_ADDR_MASK) | (addr & ZS_PTE_ADDR_MASK);
		if (rnd() % 4 == 0)
			e &= ~ZS_PTE_PRESENT;
		else
			e |= ZS_PTE_PRESENT;
		memcpy(mem + i * 8, &e, 8);
	}
	unsigned faults[5] = {0};
	for (unsigned n = 0; n < rounds; n++) {
		const uint64_t root = rnd() % 8 == 0 ? rnd() % (size + 8 * KB) : (rnd() % tables) * 4096;
		uint64_t va = rnd();
		if (rnd() % 16)
			va &= (1ull << 48) - 1;
		const zs_pt_walk_result_t r = walk2(root, va, (int)(rnd() & 1));
		faults[r.fault]++;
	}
	for (unsigned i = 0; i < 5; i++)
		EXPECT(faults[i] > rounds / 200, "random tables: only %u walks with fault %u", faults[i], i);
	printf("random tables: %u walks agree (ok %u, not present %u, read-only %u, bad physical %u, "
	       "non-canonical %u)\n",
	       rounds, faults[0], faults[1], faults[2], faults[3], faults[4]);
}

int main(void)
{
	hw = fake_hw_create(64 * MB);
	k = zk_create(hw);
	EXPECT(k, "zk_create");
	f = zk_open(k, 100);
	EXPECT(f, "zk_open");
	phys = zs_hw_phys(hw, &phys_size);

	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(DRM_IOCTL_ZESIM_VM_CREATE, &vc, NULL, 0) == 0, "VM_CREATE");
	const uint32_t vm = vc.vm_id;

	object_t small = object(20 * KB), small3 = object(12 * KB), big6 = object(384 * KB), big3 = object(192 * KB),
		 big1 = object(64 * KB), big4 = object(256 * KB);
	const uint32_t B64 = ZESIM_VM_BIND_FLAG_64K, RO = ZESIM_VM_BIND_FLAG_READONLY;
	binding_t binds[] = {
		{"4 KiB x5 across a 2 MiB boundary", &small, 0, 20 * KB, 2 * MB - 8 * KB, 0},
		{"4 KiB x2 read-only at object offset 4 KiB", &small3, 4 * KB, 8 * KB, 2 * MB + 64 * KB, RO},
		{"64 KiB x6 across a 2 MiB boundary (last page: entry 1 of the next table)", &big6, 0, 384 * KB,
		 8 * MB - 256 * KB, B64},
		{"64 KiB x3 ending at entry 31", &big3, 0, 192 * KB, 12 * MB - 192 * KB, B64},
		{"64 KiB x1 (first page is the last)", &big1, 0, 64 * KB, 16 * MB + 640 * KB, B64},
		{"64 KiB x2 read-only at object offset 128 KiB, starting at entry 0", &big4, 128 * KB, 128 * KB,
		 20 * MB, B64 | RO},
		/* The top 16 MiB of the user half is the debug area (VM_BIND there: -EINVAL, docs/uapi.md
		 * "EU debug"); the last page below it is entry 31 of the last table of its level-1 table. */
		{"64 KiB x1 just below the debug area (entry 31, last table of its directory)", &big1, 0, 64 * KB,
		 ZESIM_DEBUG_AREA_VA - 64 * KB, B64},
	};
	const unsigned nbinds = sizeof(binds) / sizeof(binds[0]);
	for (unsigned i = 0; i < nbinds; i++)
		EXPECT(bind(vm, &binds[i], ZESIM_VM_BIND_OP_MAP, NULL, 0) == 0, "VM_BIND %s", binds[i].what);

	const uint64_t root = root_from_ring(vm, binds[0].addr);
	EXPECT(root && root % 4096 == 0 && root < phys_size, "root 0x%" PRIx64, root);
	for (unsigned i = 0; i < nbinds; i++) {
		check_binding(root, &binds[i]);
		printf("%s: every page translates to its object's bytes; neighbours not present\n", binds[i].what);
	}

	/* User fences the KMD signals through its vm_ptr land where the device's
	 * walk says, in the last page of a 64 KiB bind, and read back. */
	struct drm_zesim_sync syncs[2] = {
		{.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
		 .addr = binds[2].addr + binds[2].range - 64 * KB + 0x1238, .timeline_value = 0x1122334455667788ull},
		{.type = ZESIM_SYNC_TYPE_USER_FENCE, .flags = ZESIM_SYNC_FLAG_SIGNAL,
		 .addr = binds[4].addr + 0xfff0, .timeline_value = 42},
	};
	object_t fence_obj = object(4 * KB);
	binding_t fb = {"fence bind", &fence_obj, 0, 4 * KB, 64 * MB, 0};
	EXPECT(bind(vm, &fb, ZESIM_VM_BIND_OP_MAP, syncs, 2) == 0, "VM_BIND with syncs");
	for (unsigned i = 0; i < 2; i++) {
		const zs_pt_walk_result_t r = walk2(root, syncs[i].addr, 1);
		EXPECT(r.fault == ZS_PT_OK, "fence va 0x%" PRIx64, (uint64_t)syncs[i].addr);
		uint64_t v;
		memcpy(&v, phys + r.pa, 8);
		EXPECT(v == syncs[i].timeline_value, "fence at va 0x%" PRIx64 " (pa 0x%" PRIx64 ") holds 0x%" PRIx64, (uint64_t)syncs[i].addr,
		       r.pa, v);
	}
	printf("user fences signalled by the KMD land where the walk says\n");

	/* UNMAP: every page of the binding faults; the others still translate. */
	EXPECT(bind(vm, &binds[2], ZESIM_VM_BIND_OP_UNMAP, NULL, 0) == 0, "UNMAP");
	for (uint64_t off = 0; off < binds[2].range; off += 4 * KB) {
		const zs_pt_walk_result_t r = walk2(root, binds[2].addr + off, 0);
		EXPECT(r.fault == ZS_PT_NOT_PRESENT, "unmapped va 0x%" PRIx64 ": fault %u", binds[2].addr + off, r.fault);
	}
	for (unsigned i = 0; i < nbinds; i++)
		if (i != 2)
			check_binding(root, &binds[i]);
	/* the freed leaf tables let the regions take 4 KiB pages */
	binding_t again = {"4 KiB x5 where 64 KiB pages were", &small, 0, 20 * KB, 8 * MB - 8 * KB, 0};
	EXPECT(bind(vm, &again, ZESIM_VM_BIND_OP_MAP, NULL, 0) == 0, "VM_BIND %s", again.what);
	check_binding(root, &again);
	printf("UNMAP: the binding's pages fault not-present, the others still translate; the region takes 4 KiB pages\n");

	one_gib_boundaries();
	freed_tables_leave_the_file_limit();

	zk_close(f);
	zk_stats_t st;
	zk_get_stats(k, &st);
	EXPECT(st.vms == 0 && st.bos == 0 && st.pt_bytes == 0, "left: %u VMs, %u objects, %" PRIu64 " page-table bytes",
	       st.vms, st.bos, st.pt_bytes);
	zk_destroy(k);
	fake_hw_destroy(hw);

	/* random tables, in a memory of its own */
	static uint8_t mem[1 * MB];
	phys = mem;
	phys_size = sizeof(mem);
	random_tables(mem, sizeof(mem), 400000);
	puts("kmd_pt_walk: ok");
	return 0;
}
