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
		{"64 KiB x1 at the top of the user half (entry 31, last table of every level)", &big1, 0, 64 * KB,
		 (1ull << 47) - 64 * KB, B64},
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
