/* The fake KMD (docs/kmd.md).  Object lifetimes follow a Linux DRM driver:
 * handles hold references, VM mappings hold their GEM objects, exec queues
 * hold their VM, jobs hold their queue; an object is freed at its last
 * reference.  Every ioctl validates its whole argument before changing
 * anything, and returns the errno a Linux KMD would. */
#define _GNU_SOURCE
#include "kmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/zesim_drm.h"
#include "zs/pt_format.h"

#define PAGE ZS_PT_PAGE
#define PAGE64K ZS_PT_PAGE_64K
#define VA_LIMIT (1ull << 47)
#define RING_PA 0x1000ull
#define RING_SIZE 4096u
#define PHYS_RESERVED 0x10000ull /* ring and scratch below this */
#define MAX_BINDS 512u
#define MAX_SYNCS 64u
#define MAX_BO_BYTES (1ull << 32)

typedef struct zk_bo {
	uint32_t refs;
	uint64_t size, pa;
	int memfd;
	uint64_t mmap_offset;
	zk_file_t *owner; /* the file that created it, charged for it (limits) */
} zk_bo_t;

typedef struct zk_mapping {
	uint64_t addr, range, offset;
	zk_bo_t *bo;
	struct zk_mapping *next;
} zk_mapping_t;

typedef struct zk_vm {
	uint32_t refs;
	uint64_t root;
	uint64_t *tables; /* page-table pages, root first */
	size_t ntables;
	zk_mapping_t *maps;
	zk_file_t *owner; /* charged for the VM and its page tables (limits) */
} zk_vm_t;

typedef struct zk_queue {
	uint32_t refs;
	zk_vm_t *vm;
	uint32_t ctx_id;
	int banned; /* a job of this queue failed */
	zk_file_t *owner; /* charged for the queue (limits) */
} zk_queue_t;

typedef struct zk_job {
	zk_file_t *file;
	zk_queue_t *q;
	uint64_t batch;
	uint32_t nsyncs;
	uint64_t sync_addr[MAX_SYNCS], sync_value[MAX_SYNCS];
	uint64_t busy_ns; /* host time charged by the job timeout (§6), over all its submissions */
	int batch_done;	  /* preempted after its batch ended: only the fences remain */
	struct zk_job *next;
} zk_job_t;

/* A handle table: index + 1 is the handle. */
typedef struct handles {
	void **slot;
	uint32_t n;
} handles_t;

struct zk_file {
	zk_kmd_t *kmd;
	int pid;
	handles_t bos, vms, queues;
	uint64_t next_mmap;
	uint64_t job_timeout_ns; /* this client's job timeout; ~0: the KMD's (zk_set_file_job_timeout) */
	/* What the file created and is charged for (zk_set_limits): objects are
	 * counted until freed, also when only a VM binding or a job still holds
	 * them.  Nothing outlives its file (zk_close), so these end at 0. */
	uint32_t nbos, nvms, nqueues;
	uint64_t bytes; /* GEM objects + page tables */
};

typedef struct extent {
	uint64_t start, size;
} extent_t;

struct zk_kmd {
	zs_hw_t *hw;
	uint8_t *phys;
	uint64_t phys_size;
	extent_t *free;
	size_t nfree;
	uint32_t ring_tail;
	zk_file_t **files;
	size_t nfiles;
	zk_job_t *head, *tail, *running;
	uint32_t next_ctx;
	uint64_t job_timeout_ns; /* 0: no watchdog */
	zk_fault_mode_t fault_mode;
	uint32_t irq_seen; /* interrupts delivered since the last zk_service (the handler's "top half") */
	uint64_t timeslice_cycles; /* 0: no time slicing */
	uint64_t slice_start;	   /* GT cycle when the running job last got the engine */
	uint64_t charged_at;	 /* clock when the running job was last charged */
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	zk_stats_t st;
	zk_limits_t limits;
	uint32_t slices, subslices, eus, threads, core_mhz, ts_khz, slm_kb;
};

/* ---- physical memory ------------------------------------------------------ */

static int phys_alloc(zk_kmd_t *k, uint64_t size, uint64_t align, uint64_t *pa)
{
	for (size_t i = 0; i < k->nfree; i++) {
		extent_t *e = &k->free[i];
		uint64_t at = (e->start + align - 1) & ~(align - 1);
		if (at + size > e->start + e->size)
			continue;
		uint64_t end = e->start + e->size;
		if (at > e->start && at + size < end) { /* split in two */
			extent_t *nf = realloc(k->free, (k->nfree + 1) * sizeof(*nf));
			if (!nf)
				return -ENOMEM;
			k->free = nf;
			e = &k->free[i];
			memmove(e + 2, e + 1, (k->nfree - i - 1) * sizeof(*e));
			k->nfree++;
			e[1].start = at + size;
			e[1].size = end - (at + size);
			e->size = at - e->start;
		} else if (at > e->start) {
			e->size = at - e->start;
		} else {
			e->start += size;
			e->size -= size;
			if (!e->size) {
				memmove(e, e + 1, (k->nfree - i - 1) * sizeof(*e));
				k->nfree--;
			}
		}
		k->st.free_bytes -= size;
		memset(k->phys + at, 0, size);
		*pa = at;
		return 0;
	}
	return -ENOMEM;
}

static void phys_free(zk_kmd_t *k, uint64_t pa, uint64_t size)
{
	size_t i = 0;
	while (i < k->nfree && k->free[i].start < pa)
		i++;
	extent_t *nf = realloc(k->free, (k->nfree + 1) * sizeof(*nf));
	if (!nf)
		return; /* leak rather than corrupt; cannot happen for small counts */
	k->free = nf;
	memmove(&k->free[i + 1], &k->free[i], (k->nfree - i) * sizeof(extent_t));
	k->free[i] = (extent_t){pa, size};
	k->nfree++;
	k->st.free_bytes += size;
	/* merge with neighbours */
	if (i + 1 < k->nfree && k->free[i].start + k->free[i].size == k->free[i + 1].start) {
		k->free[i].size += k->free[i + 1].size;
		memmove(&k->free[i + 1], &k->free[i + 2], (k->nfree - i - 2) * sizeof(extent_t));
		k->nfree--;
	}
	if (i > 0 && k->free[i - 1].start + k->free[i - 1].size == k->free[i].start) {
		k->free[i - 1].size += k->free[i].size;
		memmove(&k->free[i], &k->free[i + 1], (k->nfree - i - 1) * sizeof(extent_t));
		k->nfree--;
	}
}

static uint64_t rd64(zk_kmd_t *k, uint64_t pa)
{
	uint64_t v;
	memcpy(&v, k->phys + pa, 8);
	return v;
}

static void wr64(zk_kmd_t *k, uint64_t pa, uint64_t v) { memcpy(k->phys + pa, &v, 8); }

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* ---- handles ---------------------------------------------------------------- */

static int handle_add(handles_t *h, void *obj, uint32_t *out)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (!h->slot[i]) {
			h->slot[i] = obj;
			*out = i + 1;
			return 0;
		}
	if (h->n >= 65536)
		return -ENOSPC;
	void **ns = realloc(h->slot, (h->n + 1) * sizeof(void *));
	if (!ns)
		return -ENOMEM;
	h->slot = ns;
	h->slot[h->n++] = obj;
	*out = h->n;
	return 0;
}

static void *handle_get(handles_t *h, uint32_t id)
{
	return id >= 1 && id <= h->n ? h->slot[id - 1] : NULL;
}

/* Remove a handle; returns the object (whose reference the caller drops), or NULL. */
static void *handle_take(handles_t *h, uint32_t id)
{
	void *obj = handle_get(h, id);
	if (obj)
		h->slot[id - 1] = NULL;
	return obj;
}

/* ---- object lifetimes ------------------------------------------------------- */

static void bo_unref(zk_kmd_t *k, zk_bo_t *bo)
{
	if (--bo->refs)
		return;
	zs_hw_phys_detach(k->hw, bo->pa, bo->size);
	phys_free(k, bo->pa, bo->size);
	close(bo->memfd);
	k->st.bos--;
	k->st.bo_bytes -= bo->size;
	bo->owner->nbos--;
	bo->owner->bytes -= bo->size;
	free(bo);
}

static void vm_unref(zk_kmd_t *k, zk_vm_t *vm)
{
	if (--vm->refs)
		return;
	for (zk_mapping_t *m = vm->maps, *n; m; m = n) {
		n = m->next;
		bo_unref(k, m->bo);
		free(m);
	}
	for (size_t i = 0; i < vm->ntables; i++)
		phys_free(k, vm->tables[i], PAGE);
	k->st.pt_bytes -= vm->ntables * PAGE;
	vm->owner->bytes -= vm->ntables * PAGE;
	vm->owner->nvms--;
	free(vm->tables);
	k->st.vms--;
	free(vm);
	/* Translations of the freed tables must not survive in the TLB. */
	zs_hw_mmio_write(k->hw, ZS_REG_TLB_INVALIDATE, 1);
}

static void queue_unref(zk_kmd_t *k, zk_queue_t *q)
{
	if (--q->refs)
		return;
	vm_unref(k, q->vm);
	k->st.queues--;
	q->owner->nqueues--;
	free(q);
}

static void job_free(zk_kmd_t *k, zk_job_t *j)
{
	/* The device may still hold a saved state of this job (it was preempted
	 * and then cancelled, or killed before its CTX_ID load restored it):
	 * drop it.  Only the oldest job of a queue ever runs, so a state saved
	 * for the queue's context can only be this job's. */
	zs_hw_mmio_write(k->hw, ZS_REG_CTX_DISCARD, j->q->ctx_id);
	queue_unref(k, j->q);
	k->st.jobs--;
	free(j);
}

/* ---- page tables ------------------------------------------------------------ */

static int pt_alloc(zk_kmd_t *k, zk_vm_t *vm, uint64_t *pa)
{
	if (k->limits.bytes_per_file && vm->owner->bytes + PAGE > k->limits.bytes_per_file)
		return -ENOSPC;
	uint64_t *nt = realloc(vm->tables, (vm->ntables + 1) * sizeof(uint64_t));
	if (!nt)
		return -ENOMEM;
	vm->tables = nt;
	int rc = phys_alloc(k, PAGE, PAGE, pa);
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
		uint64_t e = rd64(k, slot);
		if (!(e & ZS_PTE_PRESENT)) {
			if (!create)
				return 0;
			uint64_t pa;
			if ((*err = pt_alloc(k, vm, &pa)))
				return 0;
			e = zs_pt_table_entry(pa, 0);
			wr64(k, slot, e);
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
		uint64_t e = rd64(k, slot);
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
		uint64_t e = rd64(k, slot);
		if (!(e & ZS_PTE_PRESENT)) {
			uint64_t t;
			if ((err = pt_alloc(k, vm, &t)))
				return err;
			e = zs_pt_table_entry(t, big);
			wr64(k, slot, e);
		}
		const uint64_t idx = zs_pt_leaf_index(a, big);
		wr64(k, (e & ZS_PTE_ADDR_MASK) + idx * ZS_PT_ENTRY_BYTES, zs_pt_leaf_entry(pa + off, writable));
	}
	return 0;
}

static void pt_free_table(zk_kmd_t *k, zk_vm_t *vm, uint64_t pa)
{
	for (size_t i = 0; i < vm->ntables; i++)
		if (vm->tables[i] == pa) {
			vm->tables[i] = vm->tables[--vm->ntables];
			phys_free(k, pa, PAGE);
			k->st.pt_bytes -= PAGE;
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
		uint64_t e = slot ? rd64(k, slot) : 0;
		if (!(e & ZS_PTE_PRESENT)) {
			a += PAGE;
			continue;
		}
		const int big = !!(e & ZS_PDE_64K);
		const uint64_t table = e & ZS_PTE_ADDR_MASK;
		wr64(k, table + zs_pt_leaf_index(a, big) * ZS_PT_ENTRY_BYTES, 0);
		a += zs_pt_page_size(big);
		if (all_zero(k->phys + table, zs_pt_leaf_entries(big) * ZS_PT_ENTRY_BYTES)) {
			wr64(k, slot, 0);
			pt_free_table(k, vm, table);
		}
	}
}

/* CPU view of a GPU address through a VM (for user fences): the device's
 * own walk (zs_pt_walk), so the KMD reads and writes a fence exactly where
 * the GPU would. */
static uint8_t *vm_ptr(zk_kmd_t *k, zk_vm_t *vm, uint64_t va, int write)
{
	zs_pt_walk_result_t r;
	const uint64_t pa = zs_pt_walk(k->phys, k->phys_size, vm->root, va, write, &r);
	if (r.fault != ZS_PT_OK)
		return NULL;
	return pa + 8 <= k->phys_size ? k->phys + pa : NULL;
}

/* ---- ioctl helpers -------------------------------------------------------- */

#define CHECK_RESERVED(a) (all_zero((a)->reserved, sizeof((a)->reserved)))

static int query_size(zk_kmd_t *k, uint32_t query, uint32_t *size)
{
	switch (query) {
	case ZESIM_QUERY_ENGINES:
		*size = sizeof(struct drm_zesim_query_engines) + sizeof(struct drm_zesim_engine_class_instance);
		return 0;
	case ZESIM_QUERY_CONFIG:
		*size = sizeof(struct drm_zesim_query_config) + ZESIM_CONFIG_NUM_PARAMS * sizeof(uint64_t);
		return 0;
	case ZESIM_QUERY_GT_LIST:
		*size = sizeof(struct drm_zesim_query_gt_list) + sizeof(struct drm_zesim_gt);
		return 0;
	case ZESIM_QUERY_GT_TOPOLOGY: {
		uint32_t dss = (k->slices * k->subslices + 7) / 8, eu = (k->eus + 7) / 8;
		*size = 2 * sizeof(struct drm_zesim_query_topology_mask) + ((dss + 7) & ~7u) + ((eu + 7) & ~7u);
		return 0;
	}
	case ZESIM_QUERY_ENGINE_CYCLES:
		*size = sizeof(struct drm_zesim_query_engine_cycles);
		return 0;
	default:
		return -EINVAL;
	}
}

static uint64_t read_counter(zk_kmd_t *k, uint32_t lo_reg)
{
	uint32_t lo = zs_hw_mmio_read(k->hw, lo_reg);
	uint32_t hi = zs_hw_mmio_read(k->hw, lo_reg + 4);
	return (uint64_t)hi << 32 | lo;
}

static void set_bits(uint8_t *mask, uint32_t nbits)
{
	for (uint32_t i = 0; i < nbits; i++)
		mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

static int ioctl_query(zk_file_t *f, struct drm_zesim_device_query *q, const zk_blob_t *in, unsigned nin,
		       zk_out_blob_t *out, unsigned nout)
{
	zk_kmd_t *k = f->kmd;
	uint32_t size;
	if (q->extensions || !CHECK_RESERVED(q))
		return -EINVAL;
	int rc = query_size(k, q->query, &size);
	if (rc)
		return rc;
	if (q->size == 0) {
		q->size = size;
		return 0;
	}
	if (q->size != size || nout < 1 || out[0].len != size || !q->data)
		return -EINVAL;
	uint8_t *d = out[0].data;
	memset(d, 0, size);
	switch (q->query) {
	case ZESIM_QUERY_ENGINES: {
		struct drm_zesim_query_engines *e = (void *)d;
		e->num_engines = 1;
		e->engines[0].engine_class = ZESIM_ENGINE_CLASS_COMPUTE;
		break;
	}
	case ZESIM_QUERY_CONFIG: {
		struct drm_zesim_query_config *c = (void *)d;
		c->num_params = ZESIM_CONFIG_NUM_PARAMS;
		c->info[ZESIM_CONFIG_REV_AND_DEVICE_ID] = ZESIM_PCI_DEVICE;
		c->info[ZESIM_CONFIG_MIN_ALIGNMENT] = PAGE;
		c->info[ZESIM_CONFIG_VA_BITS] = 47;
		c->info[ZESIM_CONFIG_THREADS_PER_EU] = k->threads;
		c->info[ZESIM_CONFIG_GRF_PER_THREAD] = 128;
		c->info[ZESIM_CONFIG_SLM_BYTES_PER_SUBSLICE] = (uint64_t)k->slm_kb * 1024;
		c->info[ZESIM_CONFIG_MAX_SIMD] = 16;
		c->info[ZESIM_CONFIG_VRAM_BYTES] = k->phys_size - PHYS_RESERVED;
		c->info[ZESIM_CONFIG_SUBSLICES_PER_SLICE] = k->subslices;
		break;
	}
	case ZESIM_QUERY_GT_LIST: {
		struct drm_zesim_query_gt_list *g = (void *)d;
		g->num_gt = 1;
		g->gt_list[0].reference_clock = k->ts_khz * 1000u;
		g->gt_list[0].core_clock = (uint64_t)k->core_mhz * 1000000u;
		break;
	}
	case ZESIM_QUERY_GT_TOPOLOGY: {
		uint32_t nss = k->slices * k->subslices;
		uint32_t dss = (nss + 7) / 8, eu = (k->eus + 7) / 8;
		struct drm_zesim_query_topology_mask *t = (void *)d;
		t->type = ZESIM_TOPO_DSS_COMPUTE;
		t->num_bytes = dss;
		set_bits(t->mask, nss);
		t = (void *)(d + sizeof(*t) + ((dss + 7) & ~7u));
		t->type = ZESIM_TOPO_EU_PER_DSS;
		t->num_bytes = eu;
		set_bits(t->mask, k->eus);
		break;
	}
	case ZESIM_QUERY_ENGINE_CYCLES: {
		struct drm_zesim_query_engine_cycles *c = (void *)d;
		if (nin < 1 || in[0].len != size)
			return -EINVAL;
		memcpy(c, in[0].data, size);
		if (c->eci.engine_class != ZESIM_ENGINE_CLASS_COMPUTE || c->eci.engine_instance || c->eci.gt_id ||
		    c->eci.pad || c->clockid != CLOCK_MONOTONIC_RAW)
			return -EINVAL;
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		c->engine_cycles = read_counter(k, ZS_REG_GT_TIMESTAMP_LO);
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		c->width = 64;
		c->engine_frequency = k->ts_khz * 1000ull;
		c->cpu_timestamp = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
		c->cpu_delta = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
		break;
	}
	}
	return 0;
}

static int ioctl_gem_create(zk_file_t *f, struct drm_zesim_gem_create *g)
{
	zk_kmd_t *k = f->kmd;
	if (g->extensions || !CHECK_RESERVED(g) || g->flags || g->placement != 1 || g->handle)
		return -EINVAL;
	if (!g->size || g->size % PAGE || g->size > MAX_BO_BYTES)
		return -EINVAL;
	if (g->vm_id && !handle_get(&f->vms, g->vm_id))
		return -ENOENT;
	/* Limits (docs/kmd.md §3): each object holds a memfd in the daemon. */
	if ((k->limits.bos_per_file && f->nbos >= k->limits.bos_per_file) ||
	    (k->limits.bos_total && k->st.bos >= k->limits.bos_total))
		return -EMFILE;
	if (k->limits.bytes_per_file && f->bytes + g->size > k->limits.bytes_per_file)
		return -ENOSPC;
	zk_bo_t *bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	/* 64 KiB alignment only where 64 KiB pages could map the object. */
	int rc = phys_alloc(k, g->size, g->size % PAGE64K ? PAGE : PAGE64K, &bo->pa);
	if (rc) {
		free(bo);
		return rc;
	}
	bo->size = g->size;
	bo->refs = 1;
	bo->memfd = memfd_create("zesim-gem", MFD_CLOEXEC);
	const int out_of_fds = bo->memfd < 0 && (errno == EMFILE || errno == ENFILE);
	if (bo->memfd < 0 || ftruncate(bo->memfd, (off_t)bo->size) != 0 ||
	    zs_hw_phys_attach(k->hw, bo->pa, bo->memfd, bo->size) != 0) {
		if (bo->memfd >= 0)
			close(bo->memfd);
		phys_free(k, bo->pa, bo->size);
		free(bo);
		return out_of_fds ? -EMFILE : -ENOMEM;
	}
	bo->mmap_offset = f->next_mmap;
	f->next_mmap += (bo->size + PAGE64K - 1) & ~(PAGE64K - 1);
	k->st.bos++;
	k->st.bo_bytes += bo->size;
	bo->owner = f;
	f->nbos++;
	f->bytes += bo->size;
	if ((rc = handle_add(&f->bos, bo, &g->handle)))
		bo_unref(k, bo);
	return rc;
}

static int check_syncs(const struct drm_zesim_sync *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i].extensions || !all_zero(s[i].reserved, sizeof(s[i].reserved)) ||
		    s[i].type != ZESIM_SYNC_TYPE_USER_FENCE || s[i].flags != ZESIM_SYNC_FLAG_SIGNAL || (s[i].addr & 7) ||
		    !s[i].addr || s[i].addr >= VA_LIMIT)
			return -EINVAL;
	return 0;
}

static int ioctl_vm_bind(zk_file_t *f, struct drm_zesim_vm_bind *b, const zk_blob_t *in, unsigned nin)
{
	zk_kmd_t *k = f->kmd;
	if (b->extensions || b->pad || !CHECK_RESERVED(b))
		return -EINVAL;
	zk_vm_t *vm = handle_get(&f->vms, b->vm_id);
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
		if (op->extensions || op->pad || !all_zero(op->reserved, sizeof(op->reserved)))
			return -EINVAL;
		if (op->flags & ~(ZESIM_VM_BIND_FLAG_READONLY | ZESIM_VM_BIND_FLAG_64K))
			return -EINVAL;
		if (!op->range || (op->addr | op->range) % page || op->addr >= VA_LIMIT || op->range > VA_LIMIT - op->addr)
			return -EINVAL;
		if (op->op == ZESIM_VM_BIND_OP_MAP) {
			zk_bo_t *bo = handle_get(&f->bos, op->obj);
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
	int rc = check_syncs(syncs, b->num_syncs);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < b->num_binds; i++) {
		const struct drm_zesim_vm_bind_op *op = &ops[i];
		if (op->op == ZESIM_VM_BIND_OP_MAP) {
			zk_bo_t *bo = handle_get(&f->bos, op->obj);
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
					bo_unref(k, m->bo);
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
		uint8_t *p = vm_ptr(k, vm, syncs[i].addr, 1);
		if (p)
			__atomic_store_n((uint64_t *)p, syncs[i].timeline_value, __ATOMIC_RELEASE);
	}
	return 0;
}

static int ioctl_exec(zk_file_t *f, struct drm_zesim_exec *e, const zk_blob_t *in, unsigned nin)
{
	zk_kmd_t *k = f->kmd;
	if (e->extensions || !all_zero(e->pad, sizeof(e->pad)) || !CHECK_RESERVED(e))
		return -EINVAL;
	zk_queue_t *q = handle_get(&f->queues, e->exec_queue_id);
	if (!q)
		return -ENOENT;
	if (q->banned)
		return -ECANCELED;
	if (e->num_batch_buffer != 1 || !e->address || (e->address & 3) || e->address >= VA_LIMIT ||
	    e->num_syncs > MAX_SYNCS)
		return -EINVAL;
	const struct drm_zesim_sync *syncs = NULL;
	if (e->num_syncs) {
		if (nin < 1 || in[0].len != e->num_syncs * sizeof(*syncs))
			return -EFAULT;
		syncs = (const void *)in[0].data;
		int rc = check_syncs(syncs, e->num_syncs);
		if (rc)
			return rc;
	}
	zk_job_t *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->file = f;
	j->q = q;
	q->refs++;
	j->batch = e->address;
	j->nsyncs = e->num_syncs;
	for (uint32_t i = 0; i < e->num_syncs; i++) {
		j->sync_addr[i] = syncs[i].addr;
		j->sync_value[i] = syncs[i].timeline_value;
	}
	if (k->tail)
		k->tail->next = j;
	else
		k->head = j;
	k->tail = j;
	k->st.jobs++;
	zk_service(k);
	return 0;
}

static int fence_check(zk_kmd_t *k, zk_queue_t *q, const struct drm_zesim_wait_user_fence *w)
{
	const uint8_t *p = vm_ptr(k, q->vm, w->addr, 0);
	if (!p)
		return -EFAULT;
	uint64_t v = __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE) & w->mask;
	uint64_t want = w->value & w->mask;
	int ok;
	switch (w->op) {
	case ZESIM_UFENCE_OP_EQ: ok = v == want; break;
	case ZESIM_UFENCE_OP_NEQ: ok = v != want; break;
	case ZESIM_UFENCE_OP_GT: ok = v > want; break;
	case ZESIM_UFENCE_OP_GTE: ok = v >= want; break;
	case ZESIM_UFENCE_OP_LT: ok = v < want; break;
	default: ok = v <= want; break;
	}
	if (ok)
		return 0;
	return q->banned ? -EIO : ZK_PENDING;
}

static int ioctl_wait(zk_file_t *f, struct drm_zesim_wait_user_fence *w)
{
	if (w->extensions || w->flags || w->pad || w->pad2 || !CHECK_RESERVED(w) || w->op > ZESIM_UFENCE_OP_LTE ||
	    (w->addr & 7) || !w->addr || w->addr >= VA_LIMIT)
		return -EINVAL;
	zk_queue_t *q = handle_get(&f->queues, w->exec_queue_id);
	if (!q)
		return -ENOENT;
	return fence_check(f->kmd, q, w);
}

int zk_wait_check(zk_file_t *f, const void *arg)
{
	const struct drm_zesim_wait_user_fence *w = arg;
	zk_queue_t *q = handle_get(&f->queues, w->exec_queue_id);
	if (!q)
		return -ENOENT;
	return fence_check(f->kmd, q, w);
}

/* Like Linux: copy what fits (no padding), report the full length. */
static int copy_string(zk_out_blob_t *out, const char *s, __kernel_size_t *len)
{
	size_t n = strlen(s);
	if (out) {
		out->len = (uint32_t)(n < out->len ? n : out->len);
		memcpy(out->data, s, out->len);
	}
	*len = n;
	return 0;
}

int zk_ioctl(zk_file_t *f, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
	     zk_out_blob_t *out, unsigned nout)
{
	zk_kmd_t *k = f->kmd;
	if (_IOC_TYPE(cmd) != ZESIM_DRM_IOCTL_BASE)
		return -ENOTTY;
	if (_IOC_SIZE(cmd) != arg_size)
		return -EINVAL;
#define ARG(type) (arg_size == sizeof(type) ? (type *)arg : NULL)
	switch (cmd) {
	case DRM_IOCTL_ZESIM_VERSION: {
		struct drm_zesim_version *v = ARG(struct drm_zesim_version);
		v->version_major = 1;
		v->version_minor = 0;
		v->version_patchlevel = 0;
		copy_string(nout > 0 ? &out[0] : NULL, ZESIM_DRIVER_NAME, &v->name_len);
		copy_string(nout > 1 ? &out[1] : NULL, "20261122", &v->date_len);
		copy_string(nout > 2 ? &out[2] : NULL, "zesim simulated Xe-style GPU", &v->desc_len);
		return 0;
	}
	case DRM_IOCTL_ZESIM_DEVICE_QUERY:
		return ioctl_query(f, ARG(struct drm_zesim_device_query), in, nin, out, nout);
	case DRM_IOCTL_ZESIM_GEM_CREATE:
		return ioctl_gem_create(f, ARG(struct drm_zesim_gem_create));
	case DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET: {
		struct drm_zesim_gem_mmap_offset *m = ARG(struct drm_zesim_gem_mmap_offset);
		if (m->extensions || m->flags || !CHECK_RESERVED(m))
			return -EINVAL;
		zk_bo_t *bo = handle_get(&f->bos, m->handle);
		if (!bo)
			return -ENOENT;
		m->offset = bo->mmap_offset;
		return 0;
	}
	case DRM_IOCTL_ZESIM_GEM_CLOSE: {
		struct drm_zesim_gem_close *c = ARG(struct drm_zesim_gem_close);
		if (c->pad)
			return -EINVAL;
		zk_bo_t *bo = handle_take(&f->bos, c->handle);
		if (!bo)
			return -ENOENT;
		bo_unref(k, bo);
		return 0;
	}
	case DRM_IOCTL_ZESIM_VM_CREATE: {
		struct drm_zesim_vm_create *v = ARG(struct drm_zesim_vm_create);
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
		if ((rc = handle_add(&f->vms, vm, &v->vm_id)) != 0)
			vm_unref(k, vm);
		return rc;
	}
	case DRM_IOCTL_ZESIM_VM_DESTROY: {
		struct drm_zesim_vm_destroy *v = ARG(struct drm_zesim_vm_destroy);
		if (v->pad || !CHECK_RESERVED(v))
			return -EINVAL;
		zk_vm_t *vm = handle_take(&f->vms, v->vm_id);
		if (!vm)
			return -ENOENT;
		vm_unref(k, vm);
		return 0;
	}
	case DRM_IOCTL_ZESIM_VM_BIND:
		return ioctl_vm_bind(f, ARG(struct drm_zesim_vm_bind), in, nin);
	case DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE: {
		struct drm_zesim_exec_queue_create *c = ARG(struct drm_zesim_exec_queue_create);
		if (c->extensions || c->flags || c->exec_queue_id || !CHECK_RESERVED(c) || c->width != 1 ||
		    c->num_placements != 1)
			return -EINVAL;
		zk_vm_t *vm = handle_get(&f->vms, c->vm_id);
		if (!vm)
			return -ENOENT;
		if (nin < 1 || in[0].len != sizeof(struct drm_zesim_engine_class_instance))
			return -EFAULT;
		const struct drm_zesim_engine_class_instance *e = (const void *)in[0].data;
		if (e->engine_class != ZESIM_ENGINE_CLASS_COMPUTE || e->engine_instance || e->gt_id || e->pad)
			return -EINVAL;
		if (k->limits.queues_per_file && f->nqueues >= k->limits.queues_per_file)
			return -EMFILE;
		zk_queue_t *q = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
		q->refs = 1;
		q->vm = vm;
		q->owner = f;
		q->ctx_id = ++k->next_ctx;
		int rc = handle_add(&f->queues, q, &c->exec_queue_id);
		if (rc) {
			free(q);
			return rc;
		}
		vm->refs++;
		k->st.queues++;
		f->nqueues++;
		return 0;
	}
	case DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY: {
		struct drm_zesim_exec_queue_destroy *d = ARG(struct drm_zesim_exec_queue_destroy);
		if (d->pad || !CHECK_RESERVED(d))
			return -EINVAL;
		zk_queue_t *q = handle_take(&f->queues, d->exec_queue_id);
		if (!q)
			return -ENOENT;
		queue_unref(k, q);
		return 0;
	}
	case DRM_IOCTL_ZESIM_EXEC:
		return ioctl_exec(f, ARG(struct drm_zesim_exec), in, nin);
	case DRM_IOCTL_ZESIM_WAIT_USER_FENCE:
		return ioctl_wait(f, ARG(struct drm_zesim_wait_user_fence));
	default:
		return -EINVAL;
	}
#undef ARG
}

int zk_mmap_lookup(zk_file_t *f, uint64_t offset, uint64_t length, int *memfd)
{
	for (uint32_t i = 0; i < f->bos.n; i++) {
		zk_bo_t *bo = f->bos.slot[i];
		if (bo && bo->mmap_offset == offset) {
			if (!length || length > bo->size)
				return -EINVAL;
			*memfd = bo->memfd;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- scheduler ------------------------------------------------------------------ */

static void ring_emit(zk_kmd_t *k, const uint32_t *dw, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		memcpy(k->phys + RING_PA + k->ring_tail, &dw[i], 4);
		k->ring_tail = (k->ring_tail + 4) % RING_SIZE;
	}
}

static uint64_t now_ns(zk_kmd_t *k)
{
	if (k->clock)
		return k->clock(k->clock_ctx);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void submit(zk_kmd_t *k, zk_job_t *j)
{
	const uint64_t root = j->q->vm->root;
	const uint32_t head[] = {
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_PT_ROOT_LO, (uint32_t)root,
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_PT_ROOT_HI, (uint32_t)(root >> 32),
		ZS_CMD_HEADER(ZS_CMD_LOAD_REGISTER_IMM, 3), ZS_REG_CTX_ID, j->q->ctx_id,
		ZS_CMD_HEADER(ZS_CMD_BATCH_START, 3), (uint32_t)j->batch, (uint32_t)(j->batch >> 32),
	};
	ring_emit(k, head, sizeof(head) / 4 - (j->batch_done ? 3 : 0));
	for (uint32_t i = 0; i < j->nsyncs; i++) {
		const uint32_t st[] = {ZS_CMD_HEADER(ZS_CMD_STORE_DATA64, 5), (uint32_t)j->sync_addr[i],
				       (uint32_t)(j->sync_addr[i] >> 32), (uint32_t)j->sync_value[i],
				       (uint32_t)(j->sync_value[i] >> 32)};
		ring_emit(k, st, 5);
	}
	zs_hw_mmio_write(k->hw, ZS_REG_RING_TAIL, k->ring_tail);
	k->running = j;
	k->charged_at = now_ns(k);
	k->slice_start = read_counter(k, ZS_REG_GT_CYCLES_LO);
}

static void reset_engine(zk_kmd_t *k)
{
	zs_hw_mmio_write(k->hw, ZS_REG_ENGINE_RESET, 1); /* ring disabled */
	k->ring_tail = 0;
	zs_hw_mmio_write(k->hw, ZS_REG_RING_TAIL, 0);
	zs_hw_mmio_write(k->hw, ZS_REG_RING_CTL, 1); /* enabling sets HEAD = 0 = TAIL */
	k->st.engine_resets++;
}

/* Cancel the jobs in the FIFO of queue q, or else of file f. */
static void cancel_queued(zk_kmd_t *k, const zk_queue_t *q, const zk_file_t *f)
{
	for (zk_job_t **pj = &k->head; *pj;) {
		zk_job_t *j = *pj;
		if (q ? j->q == q : j->file == f) {
			*pj = j->next;
			job_free(k, j);
			k->st.jobs_cancelled++;
		} else {
			pj = &j->next;
		}
	}
	k->tail = k->head;
	while (k->tail && k->tail->next)
		k->tail = k->tail->next;
}

static uint32_t queue_handle(const zk_job_t *j)
{
	for (uint32_t i = 0; i < j->file->queues.n; i++)
		if (j->file->queues.slot[i] == j->q)
			return i + 1;
	return 0;
}

/* Fail the running job (an engine error or the job timeout, §7): ban its
 * queue, reset the engine, cancel the queue's jobs in the FIFO.  Its fences
 * stay unwritten, so waiters on them get -EIO. */
static void fail_running(zk_kmd_t *k)
{
	zk_queue_t *q = k->running->q;
	q->banned = 1;
	reset_engine(k);
	k->st.jobs_cancelled++;
	cancel_queued(k, q, NULL);
	job_free(k, k->running);
	k->running = NULL;
}

static int gt_busy(zk_kmd_t *k)
{
	return ZS_FIELD_GET(zs_hw_mmio_read(k->hw, ZS_REG_GT_STATUS), GT_STATUS, BUSY);
}

/* The job timeout that applies to j: its client's, else the KMD's. */
static uint64_t timeout_ns(const zk_kmd_t *k, const zk_job_t *j)
{
	return j->file->job_timeout_ns != ~0ull ? j->file->job_timeout_ns : k->job_timeout_ns;
}

/* The job timeout (§6): charge the running job for the host time since it
 * was last charged, unless it is blocked (stopped at a false SEMAPHORE_WAIT
 * with the GT idle: waiting, not working); true when it is over the limit. */
static int charge_running(zk_kmd_t *k, uint32_t status)
{
	const uint64_t t = now_ns(k);
	zk_job_t *j = k->running;
	if (status != ZS_ENGINE_WAITING || gt_busy(k))
		j->busy_ns += t - k->charged_at;
	k->charged_at = t;
	return timeout_ns(k, j) && j->busy_ns > timeout_ns(k, j);
}

/* One line on the daemon's stderr (the kernel log of this KMD). */
static void report_timeout(zk_kmd_t *k)
{
	const zk_job_t *j = k->running;
	const uint32_t handle = queue_handle(j);
	const uint64_t kernel = read_counter(k, ZS_REG_WALKER_KERNEL_LO);
	char where[64] = "";
	if (kernel)
		snprintf(where, sizeof(where), " in the kernel at 0x%llx", (unsigned long long)kernel);
	fprintf(stderr,
		"zesim-gpu: job timeout: pid %d, exec queue %u, context %u: the job kept the engine busy%s for more "
		"than job_timeout_ms = %llu ms; queue banned, engine reset (raise the limit with `zesim run --timeout "
		"SECONDS`, ZESIM_JOB_TIMEOUT_MS in the program's environment, or the daemon's job_timeout_ms; 0 = none)\n",
		j->file->pid, handle, j->q->ctx_id, where, (unsigned long long)(timeout_ns(k, j) / 1000000));
	fflush(stderr);
}

/* Whether the FIFO holds a job of another queue than q: only then is it
 * worth taking the engine from q's job. */
static int other_queue_waits(const zk_kmd_t *k, const zk_queue_t *q)
{
	for (const zk_job_t *j = k->head; j; j = j->next)
		if (j->q != q)
			return 1;
	return 0;
}

/* Put job j (just taken off the engine) back in the FIFO without letting any
 * later job of its own queue pass it (docs/kmd.md §5): j and every queued job
 * of its queue move, in their order, to the tail.  Other queues' jobs keep
 * their places ahead of them. */
static void requeue_in_order(zk_kmd_t *k, zk_job_t *j)
{
	zk_job_t *mine = j, **mt = &j->next;
	j->next = NULL;
	for (zk_job_t **pj = &k->head; *pj;) {
		zk_job_t *x = *pj;
		if (x->q == j->q) {
			*pj = x->next;
			x->next = NULL;
			*mt = x;
			mt = &x->next;
		} else {
			pj = &x->next;
		}
	}
	zk_job_t **pt = &k->head;
	while (*pt)
		pt = &(*pt)->next;
	*pt = mine;
	k->tail = mine;
	while (k->tail->next)
		k->tail = k->tail->next;
}

/* An EU fault (§8): the device latched the first exception that ended a
 * thread in FAULT_*; log it (the kernel log of this KMD) and, in the default
 * mode, fail the job that caused it.  Returns 1 when the running job failed. */
static int handle_eu_fault(zk_kmd_t *k)
{
	const uint32_t st = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_STATUS);
	if (!ZS_FIELD_GET(st, FAULT_STATUS, VALID))
		return 0;
	static const char *const exc_names[] = {"breakpoint", "illegal instruction", "page fault", "misaligned access",
						 "stack overflow/underflow", "SLM out of bounds"};
	static const char *const pf_reasons[] = {"", "not present", "read-only", "bad physical address",
						 "non-canonical address"};
	const uint32_t bits = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_EXCEPTION);
	const uint64_t addr = read_counter(k, ZS_REG_FAULT_ADDR_LO);
	const uint64_t kernel = read_counter(k, ZS_REG_FAULT_KERNEL_LO);
	const uint32_t ip = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_IP), thread = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_THREAD);
	const uint32_t ctx = zs_hw_mmio_read(k->hw, ZS_REG_FAULT_CTX), reason = ZS_FIELD_GET(st, FAULT_STATUS, REASON);
	zs_hw_mmio_write(k->hw, ZS_REG_FAULT_STATUS, st);
	k->st.eu_faults++;
	const char *what = "exception";
	for (unsigned b = 0; b < sizeof(exc_names) / sizeof(exc_names[0]); b++)
		if (bits >> b & 1) {
			what = exc_names[b];
			break;
		}
	char detail[96] = "";
	if (bits >> 2 & 1)
		snprintf(detail, sizeof(detail), " (%s, %s)", reason < 5 ? pf_reasons[reason] : "?",
			 ZS_FIELD_GET(st, FAULT_STATUS, WRITE) ? "write" : "read");
	const zk_job_t *j = k->running && k->running->q->ctx_id == ctx ? k->running : NULL;
	const int fail = j && k->fault_mode == ZK_FAULT_FAIL;
	char who[96] = "no running job";
	if (j)
		snprintf(who, sizeof(who), "pid %d, exec queue %u", j->file->pid, queue_handle(j));
	fprintf(stderr,
		"zesim-gpu: GPU fault: %s%s at address 0x%llx, kernel at 0x%llx + 0x%x, EU %u thread %u, context %u "
		"(%s), engine compute0%s: %s\n",
		what, detail, (unsigned long long)addr, (unsigned long long)kernel, ip, ZS_FIELD_GET(thread, FAULT_THREAD, EU),
		ZS_FIELD_GET(thread, FAULT_THREAD, SLOT), ctx, who, ZS_FIELD_GET(st, FAULT_STATUS, MORE) ? ", more faults followed" : "",
		fail ? "job failed, queue banned, engine reset (fault_mode fail)"
		     : "the job goes on without the thread (fault_mode continue)");
	fflush(stderr);
	if (!fail)
		return 0;
	k->st.jobs_faulted++;
	fail_running(k);
	return 1;
}

/* The interrupt handler (installed at zk_create): it only notes what fired;
 * zk_service does the work, as a Linux KMD's handler defers to a worker. */
static void irq_handler(void *ctx, uint32_t pending)
{
	zk_kmd_t *k = ctx;
	k->irq_seen |= pending;
}

/* Park the running job after a preemption (the engine is idle): it and its
 * queue's queued jobs go to the tail of the FIFO. */
static void park_running(zk_kmd_t *k)
{
	zk_job_t *j = k->running;
	k->running = NULL;
	requeue_in_order(k, j);
	k->ring_tail = zs_hw_mmio_read(k->hw, ZS_REG_RING_HEAD);
}

void zk_service(zk_kmd_t *k)
{
	/* Interrupts: acknowledge what fired, then act on it. */
	const uint32_t irqs = k->irq_seen;
	k->irq_seen = 0;
	if (irqs)
		zs_hw_mmio_write(k->hw, ZS_REG_IRQ_STATUS, irqs);
	if (irqs & ZS_IRQ_PAGE_FAULT)
		handle_eu_fault(k);
	if (k->running && (irqs & ZS_IRQ_ENGINE_ERROR) &&
	    zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS) == ZS_ENGINE_ERROR) {
		fail_running(k);
	} else if (k->running && (irqs & ZS_IRQ_ENGINE_IDLE) &&
		   zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS) == ZS_ENGINE_IDLE &&
		   zs_hw_mmio_read(k->hw, ZS_REG_RING_HEAD) == k->ring_tail) {
		/* The ring drained and every piece of work completed. */
		k->st.jobs_completed++;
		job_free(k, k->running);
		k->running = NULL;
	}
	if (k->running) {
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		if (status == ZS_ENGINE_WAITING && other_queue_waits(k, k->running->q) && !gt_busy(k)) {
			/* The job waits on a semaphore that another queue's work may
			 * release (as Xe time-slices), and none of its walkers runs:
			 * park it at its SEMAPHORE_WAIT and run the other work.  Its
			 * own queue's later jobs stay behind it (in-order queues). */
			zs_hw_mmio_write(k->hw, ZS_REG_CS_PREEMPT, ZS_FIELD_MASK(CS_PREEMPT, AT_SEMAPHORE));
			const uint64_t at = read_counter(k, ZS_REG_PREEMPT_ADDR_LO);
			if (at) {
				k->running->batch = at;
				park_running(k);
				k->st.preemptions++;
			}
		}
	}
	if (k->running && k->timeslice_cycles && other_queue_waits(k, k->running->q)) {
		/* Time slicing: the job has had the engine for a quantum of
		 * simulated work while another queue's job waits.  Preempt it where
		 * it stands (its GT state saved for its context) and requeue it. */
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		const uint64_t cycles = read_counter(k, ZS_REG_GT_CYCLES_LO);
		if (status != ZS_ENGINE_ERROR && cycles - k->slice_start >= k->timeslice_cycles) {
			zs_hw_mmio_write(k->hw, ZS_REG_CS_PREEMPT, ZS_FIELD_MASK(CS_PREEMPT, ANYWHERE));
			const uint32_t where = zs_hw_mmio_read(k->hw, ZS_REG_PREEMPT_STATUS);
			if (where) {
				zk_job_t *j = k->running;
				if (where == 1)
					j->batch = read_counter(k, ZS_REG_PREEMPT_ADDR_LO);
				else if (where == 2)
					j->batch_done = 1;
				charge_running(k, status);
				park_running(k);
				k->st.timeslices++;
			} else {
				k->slice_start = cycles; /* idle or halted already: nothing to preempt */
			}
		}
	}
	if (k->running) {
		const uint32_t status = zs_hw_mmio_read(k->hw, ZS_REG_ENGINE_STATUS);
		if (status != ZS_ENGINE_ERROR && charge_running(k, status)) {
			report_timeout(k);
			k->st.jobs_timed_out++;
			fail_running(k);
		} else {
			return; /* busy, waiting on a semaphore, or halted until its interrupt is seen */
		}
	}
	if (!k->head)
		return;
	zk_job_t *j = k->head;
	k->head = j->next;
	if (!k->head)
		k->tail = NULL;
	submit(k, j);
}

int zk_idle(zk_kmd_t *k) { return !k->running && !k->head; }

/* ---- files ---------------------------------------------------------------------- */

static void program_ring(zs_hw_t *hw);

zk_kmd_t *zk_create(zs_hw_t *hw)
{
	zk_kmd_t *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->hw = hw;
	if (zs_hw_mmio_read(hw, ZS_REG_GT_ID) != 0x5a455349u || zs_hw_mmio_read(hw, ZS_REG_GT_VERSION) != 2) {
		free(k);
		return NULL; /* not the device (or register map version) this KMD drives */
	}
	k->phys = zs_hw_phys(hw, &k->phys_size);
	uint32_t topo = zs_hw_mmio_read(hw, ZS_REG_GT_TOPOLOGY);
	k->slices = ZS_FIELD_GET(topo, GT_TOPOLOGY, SLICES);
	k->subslices = ZS_FIELD_GET(topo, GT_TOPOLOGY, SUBSLICES);
	k->eus = ZS_FIELD_GET(topo, GT_TOPOLOGY, EUS);
	k->threads = ZS_FIELD_GET(topo, GT_TOPOLOGY, THREADS);
	k->core_mhz = zs_hw_mmio_read(hw, ZS_REG_GT_CORE_MHZ);
	k->ts_khz = zs_hw_mmio_read(hw, ZS_REG_GT_TIMESTAMP_KHZ);
	k->slm_kb = zs_hw_mmio_read(hw, ZS_REG_GT_SLM_KB);
	k->free = malloc(sizeof(extent_t));
	if (!k->free) {
		free(k);
		return NULL;
	}
	k->free[0] = (extent_t){PHYS_RESERVED, k->phys_size - PHYS_RESERVED};
	k->nfree = 1;
	k->st.free_bytes = k->phys_size - PHYS_RESERVED;
	k->job_timeout_ns = ZK_DEFAULT_JOB_TIMEOUT_MS * 1000000ull;
	k->timeslice_cycles = ZK_DEFAULT_TIMESLICE_CYCLES;
	k->limits = (zk_limits_t){.bos_per_file = ZK_DEFAULT_MAX_BOS_PER_FILE,
				  .bytes_per_file = k->phys_size / 2,
				  .vms_per_file = ZK_DEFAULT_MAX_VMS_PER_FILE,
				  .queues_per_file = ZK_DEFAULT_MAX_QUEUES_PER_FILE};
	program_ring(hw);
	zk_set_fault_mode(k, ZK_FAULT_FAIL);
	zs_hw_set_irq_handler(hw, irq_handler, k);
	zs_hw_mmio_write(hw, ZS_REG_IRQ_ENABLE, ZS_IRQ_ENGINE_ERROR | ZS_IRQ_PAGE_FAULT | ZS_IRQ_ENGINE_IDLE);
	return k;
}

void zk_destroy(zk_kmd_t *k)
{
	zs_hw_set_irq_handler(k->hw, NULL, NULL);
	while (k->nfiles)
		zk_close(k->files[0]);
	free(k->files);
	free(k->free);
	free(k);
}

zk_file_t *zk_open(zk_kmd_t *k, int pid)
{
	zk_file_t *f = calloc(1, sizeof(*f));
	zk_file_t **nf = realloc(k->files, (k->nfiles + 1) * sizeof(*nf));
	if (!f || !nf) {
		free(f);
		if (nf)
			k->files = nf;
		return NULL;
	}
	k->files = nf;
	f->kmd = k;
	f->pid = pid;
	f->next_mmap = 1ull << 32;
	f->job_timeout_ns = ~0ull;
	k->files[k->nfiles++] = f;
	k->st.files++;
	return f;
}

void zk_close(zk_file_t *f)
{
	zk_kmd_t *k = f->kmd;
	/* Cancel its queued jobs, and its running job with an engine reset. */
	cancel_queued(k, NULL, f);
	if (k->running && k->running->file == f) {
		reset_engine(k);
		job_free(k, k->running);
		k->running = NULL;
		k->st.jobs_cancelled++;
	}
	for (uint32_t i = 0; i < f->queues.n; i++)
		if (f->queues.slot[i])
			queue_unref(k, f->queues.slot[i]);
	for (uint32_t i = 0; i < f->vms.n; i++)
		if (f->vms.slot[i])
			vm_unref(k, f->vms.slot[i]);
	for (uint32_t i = 0; i < f->bos.n; i++)
		if (f->bos.slot[i])
			bo_unref(k, f->bos.slot[i]);
	free(f->queues.slot);
	free(f->vms.slot);
	free(f->bos.slot);
	for (size_t i = 0; i < k->nfiles; i++)
		if (k->files[i] == f) {
			k->files[i] = k->files[--k->nfiles];
			break;
		}
	k->st.files--;
	free(f);
	zk_service(k);
}

void zk_get_stats(zk_kmd_t *k, zk_stats_t *out) { *out = k->st; }

void zk_set_fault_mode(zk_kmd_t *k, zk_fault_mode_t mode)
{
	k->fault_mode = mode;
	/* Failing a job must also stop its batch: no later command, no fence. */
	zs_hw_mmio_write(k->hw, ZS_REG_FAULT_CTL, ZS_FIELD_PREP(FAULT_CTL, HALT, mode == ZK_FAULT_FAIL));
}

void zk_set_job_timeout(zk_kmd_t *k, uint32_t ms) { k->job_timeout_ns = ms * 1000000ull; }

void zk_set_file_job_timeout(zk_file_t *f, uint32_t ms) { f->job_timeout_ns = ms * 1000000ull; }

void zk_set_timeslice(zk_kmd_t *k, uint64_t cycles) { k->timeslice_cycles = cycles; }

void zk_set_limits(zk_kmd_t *k, const zk_limits_t *l) { k->limits = *l; }

void zk_get_limits(zk_kmd_t *k, zk_limits_t *out) { *out = k->limits; }

void zk_set_clock(zk_kmd_t *k, uint64_t (*now)(void *ctx), void *ctx)
{
	k->clock = now;
	k->clock_ctx = ctx;
	if (k->running)
		k->charged_at = now_ns(k);
}

static void program_ring(zs_hw_t *hw)
{
	zs_hw_mmio_write(hw, ZS_REG_ENGINE_RESET, 1);
	zs_hw_mmio_write(hw, ZS_REG_RING_BASE_LO, (uint32_t)RING_PA);
	zs_hw_mmio_write(hw, ZS_REG_RING_BASE_HI, 0);
	zs_hw_mmio_write(hw, ZS_REG_RING_SIZE, RING_SIZE);
	zs_hw_mmio_write(hw, ZS_REG_RING_TAIL, 0);
	zs_hw_mmio_write(hw, ZS_REG_RING_CTL, 1);
}

void zk_reclaim_engine(zk_kmd_t *k)
{
	program_ring(k->hw);
	k->ring_tail = 0;
}
