/* VMs and page tables (docs/kmd.md §4; docs/uapi.md §5, §6); the format is include/zs/pt_format.h. */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void zk_vm_unref(zk_kmd_t *k, zk_vm_t *vm)
{
	if (--vm->refs)
		return;
	for (zk_mapping_t *m = vm->maps, *n; m; m = n) {
		n = m->next;
		zk_bo_unref(k, m->bo);
		free(m);
	}
	for (size_t i = 0; i < vm->ntables; i++)
		zk_phys_free(k, vm->tables[i], PAGE);
	k->st.pt_bytes -= vm->ntables * PAGE;
	vm->owner->bytes -= vm->ntables * PAGE;
	vm->owner->nvms--;
	free(vm->tables);
	k->st.vms--;
	free(vm);
	/* Translations of the freed tables must not survive in the TLB. */
	zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 1);
}

static int pt_alloc(zk_kmd_t *k, zk_vm_t *vm, uint64_t *pa)
{
	if (k->limits.bytes_per_file && vm->owner->bytes + PAGE > k->limits.bytes_per_file)
		return -ENOSPC;
	uint64_t *nt = realloc(vm->tables, (vm->ntables + 1) * sizeof(uint64_t));
	if (!nt)
		return -ENOMEM;
	vm->tables = nt;
	int rc = zk_phys_alloc(k, PAGE, PAGE, pa);
	if (rc)
		return rc;
	vm->tables[vm->ntables++] = *pa;
	k->st.pt_bytes += PAGE;
	vm->owner->bytes += PAGE;
	return 0;
}

/* Page tables: format and walk in include/zs/pt_format.h (docs/memory.md §2).
 * Level-1 entry (2 MiB region) for addr, creating tables on the way when
 * `create`; returns its physical address, or 0. */
static uint64_t pde_slot(zk_kmd_t *k, zk_vm_t *vm, uint64_t addr, int create, int *err)
{
	uint64_t table = vm->root;
	for (int level = ZS_PT_LEVELS - 1; level > 1; level--) {
		uint64_t slot = table + zs_pt_index(addr, level) * ZS_PT_ENTRY_BYTES;
		uint64_t e = zk_rd64(k, slot);
		if (!(e & ZS_PTE_PRESENT)) {
			if (!create)
				return 0;
			uint64_t pa;
			if ((*err = pt_alloc(k, vm, &pa)))
				return 0;
			e = zs_pt_table_entry(pa, 0);
			zk_wr64(k, slot, e);
		}
		table = e & ZS_PTE_ADDR_MASK;
	}
	return table + zs_pt_index(addr, 1) * ZS_PT_ENTRY_BYTES;
}

/* Check that [addr, addr+range) can take pages of this size (a 2 MiB region
 * holds one page size). */
static int pt_compatible(zk_kmd_t *k, zk_vm_t *vm, uint64_t addr, uint64_t range, int big)
{
	for (uint64_t a = addr & ~(ZS_PT_REGION - 1); a < addr + range; a += ZS_PT_REGION) {
		int err = 0;
		uint64_t slot = pde_slot(k, vm, a, 0, &err);
		if (!slot)
			continue;
		uint64_t e = zk_rd64(k, slot);
		if ((e & ZS_PTE_PRESENT) && !!(e & ZS_PDE_64K) != big)
			return -EINVAL;
	}
	return 0;
}

static int pt_map(zk_kmd_t *k, zk_vm_t *vm, uint64_t addr, uint64_t range, uint64_t pa, int writable, int big)
{
	const uint64_t page = zs_pt_page_size(big);
	for (uint64_t off = 0; off < range; off += page) {
		const uint64_t a = addr + off;
		int err = 0;
		uint64_t slot = pde_slot(k, vm, a, 1, &err);
		if (!slot)
			return err ? err : -ENOMEM;
		uint64_t e = zk_rd64(k, slot);
		if (!(e & ZS_PTE_PRESENT)) {
			uint64_t t;
			if ((err = pt_alloc(k, vm, &t)))
				return err;
			e = zs_pt_table_entry(t, big);
			zk_wr64(k, slot, e);
		}
		const uint64_t idx = zs_pt_leaf_index(a, big);
		zk_wr64(k, (e & ZS_PTE_ADDR_MASK) + idx * ZS_PT_ENTRY_BYTES, zs_pt_leaf_entry(pa + off, writable));
	}
	return 0;
}

static void pt_free_table(zk_kmd_t *k, zk_vm_t *vm, uint64_t pa)
{
	for (size_t i = 0; i < vm->ntables; i++)
		if (vm->tables[i] == pa) {
			vm->tables[i] = vm->tables[--vm->ntables];
			zk_phys_free(k, pa, PAGE);
			k->st.pt_bytes -= PAGE;
			vm->owner->bytes -= PAGE; /* as pt_alloc counted it (docs/kmd.md §3) */
			return;
		}
}

/* Clear the leaf entries; a last-level table left empty is freed, so the
 * 2 MiB region can later take pages of the other size. */
static void pt_unmap(zk_kmd_t *k, zk_vm_t *vm, uint64_t addr, uint64_t range)
{
	for (uint64_t a = addr; a < addr + range;) {
		int err = 0;
		uint64_t slot = pde_slot(k, vm, a, 0, &err);
		uint64_t e = slot ? zk_rd64(k, slot) : 0;
		if (!(e & ZS_PTE_PRESENT)) {
			a += PAGE;
			continue;
		}
		const int big = !!(e & ZS_PDE_64K);
		const uint64_t table = e & ZS_PTE_ADDR_MASK;
		zk_wr64(k, table + zs_pt_leaf_index(a, big) * ZS_PT_ENTRY_BYTES, 0);
		a += zs_pt_page_size(big);
		if (zk_all_zero(k->phys + table, zs_pt_leaf_entries(big) * ZS_PT_ENTRY_BYTES)) {
			zk_wr64(k, slot, 0);
			pt_free_table(k, vm, table);
		}
	}
}

/* CPU view of a GPU address through a VM (for user fences): the device's
 * own walk (zs_pt_walk), so the KMD reads and writes a fence exactly where
 * the GPU would. */
uint8_t *zk_vm_ptr(zk_kmd_t *k, zk_vm_t *vm, uint64_t va, int write)
{
	zs_pt_walk_result_t r;
	const uint64_t pa = zs_pt_walk(k->phys, k->phys_size, vm->root, va, write, &r);
	if (r.fault != ZS_PT_OK)
		return NULL;
	return pa + 8 <= k->phys_size ? k->phys + pa : NULL;
}

int zk_vm_map_pages(zk_kmd_t *k, zk_vm_t *vm, uint64_t va, uint64_t size, uint64_t pa)
{
	const int big = !((va | size | pa) % PAGE64K);
	int rc = pt_map(k, vm, va, size, pa, 1, big);
	if (rc)
		pt_unmap(k, vm, va, size);
	zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 1);
	return rc;
}

int zk_check_syncs(const struct drm_zesim_sync *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i].extensions || !zk_all_zero(s[i].reserved, sizeof(s[i].reserved)) ||
		    s[i].type != ZESIM_SYNC_TYPE_USER_FENCE || s[i].flags != ZESIM_SYNC_FLAG_SIGNAL || (s[i].addr & 7) ||
		    !s[i].addr || s[i].addr >= VA_LIMIT)
			return -EINVAL;
	return 0;
}

int zk_ioctl_vm_bind(ZK_IOCTL_ARGS)
{
	struct drm_zesim_vm_bind *b = arg;
	zk_kmd_t *k = f->kmd;
	if (b->extensions || b->pad || !CHECK_RESERVED(b))
		return -EINVAL;
	zk_vm_t *vm = zk_handle_get(&f->vms, b->vm_id);
	if (!vm)
		return -ENOENT;
	if (!b->num_binds || b->num_binds > MAX_BINDS || b->num_syncs > MAX_SYNCS)
		return -EINVAL;
	const struct drm_zesim_vm_bind_op *ops = &b->bind;
	unsigned blob = 0;
	if (b->num_binds > 1) {
		if (blob >= nin || in[blob].len != b->num_binds * sizeof(*ops))
			return -EFAULT;
		ops = (const void *)in[blob++].data;
	}
	const struct drm_zesim_sync *syncs = NULL;
	if (b->num_syncs) {
		if (blob >= nin || in[blob].len != b->num_syncs * sizeof(*syncs))
			return -EFAULT;
		syncs = (const void *)in[blob].data;
	}
	/* Validate everything first: a failing bind changes nothing. */
	for (uint32_t i = 0; i < b->num_binds; i++) {
		const struct drm_zesim_vm_bind_op *op = &ops[i];
		const int big = !!(op->flags & ZESIM_VM_BIND_FLAG_64K);
		const uint64_t page = big ? PAGE64K : PAGE;
		if (op->extensions || op->pad || !zk_all_zero(op->reserved, sizeof(op->reserved)))
			return -EINVAL;
		if (op->flags & ~(ZESIM_VM_BIND_FLAG_READONLY | ZESIM_VM_BIND_FLAG_64K))
			return -EINVAL;
		if (!op->range || (op->addr | op->range) % page || op->addr >= VA_LIMIT || op->range > VA_LIMIT - op->addr)
			return -EINVAL;
		if (zk_debug_va_reserved(op->addr, op->range))
			return -EINVAL; /* the debug area (debug.c) */
		if (op->op == ZESIM_VM_BIND_OP_MAP) {
			zk_bo_t *bo = zk_handle_get(&f->bos, op->obj);
			if (!bo)
				return -ENOENT;
			if (op->obj_offset % page || op->obj_offset > bo->size || op->range > bo->size - op->obj_offset)
				return -EINVAL;
			for (zk_mapping_t *m = vm->maps; m; m = m->next)
				if (op->addr < m->addr + m->range && m->addr < op->addr + op->range)
					return -EEXIST;
			if (pt_compatible(k, vm, op->addr, op->range, big))
				return -EINVAL;
			/* ... and against the earlier MAPs of this same call */
			for (uint32_t j = 0; j < i; j++) {
				const struct drm_zesim_vm_bind_op *o = &ops[j];
				if (o->op != ZESIM_VM_BIND_OP_MAP)
					continue;
				if (op->addr < o->addr + o->range && o->addr < op->addr + op->range)
					return -EEXIST;
				const uint64_t r2m = 1ull << 21;
				const int obig = !!(o->flags & ZESIM_VM_BIND_FLAG_64K);
				if (obig != big && (op->addr & ~(r2m - 1)) <= ((o->addr + o->range - 1) & ~(r2m - 1)) &&
				    (o->addr & ~(r2m - 1)) <= ((op->addr + op->range - 1) & ~(r2m - 1)))
					return -EINVAL; /* 4 KiB and 64 KiB pages in one 2 MiB region */
			}
		} else if (op->op == ZESIM_VM_BIND_OP_UNMAP) {
			if (op->obj || op->obj_offset || (op->flags & ZESIM_VM_BIND_FLAG_READONLY))
				return -EINVAL;
			for (zk_mapping_t *m = vm->maps; m; m = m->next)
				if (op->addr < m->addr + m->range && m->addr < op->addr + op->range &&
				    (m->addr < op->addr || m->addr + m->range > op->addr + op->range))
					return -EINVAL; /* only whole mappings are unmapped */
		} else {
			return -EINVAL;
		}
	}
	int rc = zk_check_syncs(syncs, b->num_syncs);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < b->num_binds; i++) {
		const struct drm_zesim_vm_bind_op *op = &ops[i];
		if (op->op == ZESIM_VM_BIND_OP_MAP) {
			zk_bo_t *bo = zk_handle_get(&f->bos, op->obj);
			zk_mapping_t *m = calloc(1, sizeof(*m));
			if (!m)
				return -ENOMEM;
			rc = pt_map(k, vm, op->addr, op->range, bo->pa + op->obj_offset,
					!(op->flags & ZESIM_VM_BIND_FLAG_READONLY), !!(op->flags & ZESIM_VM_BIND_FLAG_64K));
			if (rc) {
				pt_unmap(k, vm, op->addr, op->range);
				free(m);
				return rc;
			}
			*m = (zk_mapping_t){op->addr, op->range, op->obj_offset, bo, vm->maps};
			bo->refs++;
			vm->maps = m;
		} else {
			for (zk_mapping_t **pm = &vm->maps; *pm;) {
				zk_mapping_t *m = *pm;
				if (m->addr >= op->addr && m->addr + m->range <= op->addr + op->range) {
					pt_unmap(k, vm, m->addr, m->range);
					*pm = m->next;
					zk_bo_unref(k, m->bo);
					free(m);
				} else {
					pm = &m->next;
				}
			}
		}
	}
	zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 1);
	/* Binds complete synchronously: signal the fences now. */
	for (uint32_t i = 0; i < b->num_syncs; i++) {
		uint8_t *p = zk_vm_ptr(k, vm, syncs[i].addr, 1);
		if (p)
			__atomic_store_n((uint64_t *)p, syncs[i].timeline_value, __ATOMIC_RELEASE);
	}
	return 0;
}

int zk_ioctl_vm_create(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_vm_create *v = arg;
	if (v->extensions || v->flags || v->vm_id || !CHECK_RESERVED(v))
		return -EINVAL;
	if (k->limits.vms_per_file && f->nvms >= k->limits.vms_per_file)
		return -EMFILE;
	zk_vm_t *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return -ENOMEM;
	vm->refs = 1;
	vm->owner = f;
	int rc = pt_alloc(k, vm, &vm->root);
	if (rc) {
		free(vm->tables);
		free(vm);
		return rc;
	}
	k->st.vms++;
	f->nvms++;
	if ((rc = zk_handle_add(&f->vms, vm, &v->vm_id)) != 0) {
		zk_vm_unref(k, vm);
		return rc;
	}
	if ((rc = zk_debug_vm_created(f, v->vm_id, vm)) != 0) {
		zk_vm_unref(k, zk_handle_take(&f->vms, v->vm_id));
		v->vm_id = 0;
	}
	return rc;
}

int zk_ioctl_vm_destroy(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_vm_destroy *v = arg;
	if (v->pad || !CHECK_RESERVED(v))
		return -EINVAL;
	zk_vm_t *vm = zk_handle_take(&f->vms, v->vm_id);
	if (!vm)
		return -ENOENT;
	zk_debug_vm_destroyed(f, v->vm_id);
	zk_vm_unref(k, vm);
	return 0;
}
