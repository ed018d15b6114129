/* Virtual memory on the KMD's VM bind (driver/README.md "Virtual memory").
 *
 * A reservation is a range of the process's address space held with a
 * PROT_NONE mapping: GPU addresses are host addresses (zs_os.h), so holding
 * the host range keeps every other allocation out of it.  Physical memory is
 * a GEM object, mapped once into the process at an address of the kernel's
 * choosing.  zeVirtualMemMap binds a range of it at the reserved address with
 * VM_BIND (read-only: the READONLY flag, so a GPU write page-faults; none: no
 * binding at all) and gives the host the same view (mremap of the object's
 * pages to the reserved address, protected as the access attribute says), so
 * host operations on the range (copies by the CPU, zs_hostop.h) see what the
 * GPU sees.  Unmapping or changing the access of part of a mapping splits it
 * (the KMD binds and unbinds whole bindings: the binding is replaced by one per
 * part); every page of such a range must be mapped. */
#define _GNU_SOURCE
#include "zs_vmem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "zs_context.h"
#include "zs_handle.h"

typedef struct zs_physmem {
	zs_context_t *ctx;
	uint32_t handle;
	uint8_t *host; /* the object's own host mapping, the source of the views */
	uint64_t size;
	unsigned maps; /* mappings using it */
} zs_physmem_t;

typedef struct vmap {
	uint64_t va, size, offset;
	zs_physmem_t *pm;
	ze_memory_access_attribute_t access;
	struct vmap *next;
} vmap_t;

typedef struct resv {
	zs_context_t *ctx;
	uint64_t base, size;
	vmap_t *maps;
	struct resv *next;
} resv_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static resv_t *resvs;

#define VA_LIMIT (1ull << 47)

static int aligned(uint64_t x) { return !(x & (ZS_VMEM_PAGE - 1)); }

/* The reservation of ctx holding all of [va, va + size); caller holds the lock. */
static resv_t *resv_of(zs_context_t *ctx, uint64_t va, uint64_t size)
{
	for (resv_t *r = resvs; r; r = r->next)
		if (r->ctx == ctx && va >= r->base && va - r->base <= r->size && size <= r->size - (va - r->base))
			return r;
	return NULL;
}

static int prot_of(ze_memory_access_attribute_t a)
{
	return a == ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE  ? PROT_READ | PROT_WRITE
	       : a == ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY ? PROT_READ
							  : PROT_NONE;
}

/* Back to the reservation's PROT_NONE placeholder. */
static void host_release(uint64_t va, uint64_t size)
{
	mmap((void *)(uintptr_t)va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

static ze_result_t check_access(ze_memory_access_attribute_t a)
{
	return (uint32_t)a > ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY ? ZE_RESULT_ERROR_INVALID_ENUMERATION
								  : ZE_RESULT_SUCCESS;
}

/* The range's address and size: page multiples, not empty. */
static ze_result_t check_range(const void *ptr, size_t size)
{
	if (!size || !aligned(size))
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (!aligned((uintptr_t)ptr))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	return ZE_RESULT_SUCCESS;
}

/* Whether every page of [va, va + size) is mapped in r; caller holds the lock. */
static int all_mapped(const resv_t *r, uint64_t va, uint64_t size)
{
	uint64_t covered = 0;
	for (const vmap_t *m = r->maps; m; m = m->next) {
		const uint64_t lo = m->va > va ? m->va : va;
		const uint64_t hi = m->va + m->size < va + size ? m->va + m->size : va + size;
		if (lo < hi)
			covered += hi - lo;
	}
	return covered == size;
}

int zs_vmem_range(const void *p, uint64_t n)
{
	const uint64_t va = (uintptr_t)p;
	int r = 0;
	pthread_mutex_lock(&lock);
	for (const resv_t *x = resvs; x && !r; x = x->next) {
		if (va >= x->base && va - x->base < x->size)
			r = n <= x->size - (va - x->base) ? 1 : -1;
		else if (va < x->base && n > x->base - va)
			r = -1; /* starts before it and runs into it */
	}
	pthread_mutex_unlock(&lock);
	return r;
}

ze_result_t ZE_APICALL zs_virtual_mem_reserve(ze_context_handle_t hContext, const void *pStart, size_t size,
					      void **pptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(pptr);
	ze_result_t rc = check_range(pStart, size);
	if (rc)
		return rc;
	if (size > VA_LIMIT)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	resv_t *r = calloc(1, sizeof(*r));
	if (!r)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uint8_t *p = MAP_FAILED;
	if (pStart) /* the address asked for, if it is free; else another one (spec) */
		p = mmap((void *)pStart, size, PROT_NONE, flags | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || p != pStart) {
		if (p != MAP_FAILED)
			munmap(p, size); /* an old kernel took the address as a hint */
		uint8_t *raw = mmap(NULL, size + ZS_VMEM_PAGE, PROT_NONE, flags, -1, 0);
		if (raw == MAP_FAILED) {
			free(r);
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		}
		p = (uint8_t *)(((uintptr_t)raw + ZS_VMEM_PAGE - 1) & ~(uintptr_t)(ZS_VMEM_PAGE - 1));
		if (p > raw)
			munmap(raw, (size_t)(p - raw));
		if (raw + size + ZS_VMEM_PAGE > p + size)
			munmap(p + size, (size_t)(raw + size + ZS_VMEM_PAGE - (p + size)));
	}
	if ((uintptr_t)p + size > VA_LIMIT) {
		munmap(p, size);
		free(r);
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	}
	zs_context_t *ctx = (zs_context_t *)hContext;
	*r = (resv_t){ctx, (uintptr_t)p, size, NULL, NULL};
	zs_context_ref(ctx);
	pthread_mutex_lock(&lock);
	r->next = resvs;
	resvs = r;
	pthread_mutex_unlock(&lock);
	*pptr = p;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_virtual_mem_free(ze_context_handle_t hContext, const void *ptr, size_t size)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ze_result_t rc = check_range(ptr, size);
	if (rc)
		return rc;
	pthread_mutex_lock(&lock);
	resv_t **pp = &resvs;
	while (*pp && !((*pp)->ctx == (zs_context_t *)hContext && (*pp)->base == (uintptr_t)ptr && (*pp)->size == size))
		pp = &(*pp)->next;
	resv_t *r = *pp;
	if (!r || r->maps) { /* not a whole reservation, or still mapped */
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	*pp = r->next;
	pthread_mutex_unlock(&lock);
	munmap((void *)ptr, size);
	zs_context_unref(r->ctx);
	free(r);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_virtual_mem_query_page_size(ze_context_handle_t hContext, ze_device_handle_t hDevice,
						      size_t size, size_t *pagesize)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pagesize);
	ZS_UNUSED(size);
	*pagesize = ZS_VMEM_PAGE;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_physical_mem_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      ze_physical_mem_desc_t *desc, ze_physical_mem_handle_t *phPhysicalMemory)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(phPhysicalMemory);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC);
	if (desc->flags > ZE_PHYSICAL_MEM_FLAG_TBD)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (!desc->size || !aligned(desc->size))
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	zs_context_t *ctx = (zs_context_t *)hContext;
	if (desc->size > ctx->dev->max_alloc)
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	zs_physmem_t *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	int err = zs_os_gem_create(&ctx->dev->os, desc->size, &pm->handle, &pm->host);
	if (err) {
		free(pm);
		return err == -ENOMEM || err == -ENOSPC ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
							: zs_device_result(ctx->dev, err);
	}
	pm->ctx = ctx;
	pm->size = desc->size;
	if (zs_handle_add(pm, ZS_T_PHYSICAL_MEM)) {
		zs_os_gem_destroy(&ctx->dev->os, pm->handle, pm->host, pm->size);
		free(pm);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(ctx);
	*phPhysicalMemory = (ze_physical_mem_handle_t)pm;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_physical_mem_destroy(ze_context_handle_t hContext, ze_physical_mem_handle_t hPhysicalMemory)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hPhysicalMemory, ZS_T_PHYSICAL_MEM);
	zs_physmem_t *pm = (zs_physmem_t *)hPhysicalMemory;
	pthread_mutex_lock(&lock);
	const unsigned maps = pm->maps;
	if (!maps)
		zs_handle_remove(pm);
	pthread_mutex_unlock(&lock);
	if (maps)
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	zs_os_gem_destroy(&pm->ctx->dev->os, pm->handle, pm->host, pm->size);
	zs_context_unref(pm->ctx);
	free(pm);
	return ZE_RESULT_SUCCESS;
}

/* The GPU side of a mapping with access `a`: a binding (read-only or not), or
 * none at all for ZE_MEMORY_ACCESS_ATTRIBUTE_NONE. */
static int gpu_bind(zs_os_t *os, const vmap_t *m, ze_memory_access_attribute_t a)
{
	if (a == ZE_MEMORY_ACCESS_ATTRIBUTE_NONE)
		return 0;
	return zs_os_bind(os, m->pm->handle, m->offset, m->va, m->size, a == ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY);
}

static void gpu_unbind(zs_os_t *os, const vmap_t *m)
{
	if (m->access != ZE_MEMORY_ACCESS_ATTRIBUTE_NONE)
		zs_os_unbind(os, m->va, m->size);
}

/* Splits the mapping that holds `va` strictly inside it in two at `va`, so that
 * a range ending there consists of whole mappings: the KMD's binding of it is
 * replaced by one per half (it unbinds only whole bindings).  0 or -errno. */
static int split_at(zs_os_t *os, resv_t *r, uint64_t va)
{
	vmap_t *m = r->maps;
	while (m && !(m->va < va && va < m->va + m->size))
		m = m->next;
	if (!m)
		return 0;
	vmap_t *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = (vmap_t){va, m->va + m->size - va, m->offset + (va - m->va), m->pm, m->access, m->next};
	gpu_unbind(os, m);
	m->size = va - m->va;
	int err = gpu_bind(os, m, m->access);
	if (!err && (err = gpu_bind(os, n, n->access)))
		gpu_unbind(os, m);
	if (err) { /* back to one binding, or none at all if that fails too */
		m->size += n->size;
		free(n);
		if (gpu_bind(os, m, m->access))
			m->access = ZE_MEMORY_ACCESS_ATTRIBUTE_NONE;
		mprotect((void *)(uintptr_t)m->va, m->size, prot_of(m->access));
		return err;
	}
	m->next = n;
	m->pm->maps++;
	return 0;
}

/* Makes [va, va + size) a set of whole mappings of r, all its pages mapped:
 * ZE_RESULT_ERROR_INVALID_ARGUMENT for a page that is not mapped. */
static ze_result_t whole_mappings(zs_context_t *ctx, resv_t *r, uint64_t va, uint64_t size)
{
	if (!all_mapped(r, va, size))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	int err = split_at(&ctx->dev->os, r, va);
	if (!err)
		err = split_at(&ctx->dev->os, r, va + size);
	return err ? zs_device_result(ctx->dev, err) : ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_virtual_mem_map(ze_context_handle_t hContext, const void *ptr, size_t size,
					  ze_physical_mem_handle_t hPhysicalMemory, size_t offset,
					  ze_memory_access_attribute_t access)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hPhysicalMemory, ZS_T_PHYSICAL_MEM);
	ZS_CHECK_PTR(ptr);
	ze_result_t rc;
	if ((rc = check_access(access)) || (rc = check_range(ptr, size)))
		return rc;
	if (!aligned(offset))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_physmem_t *pm = (zs_physmem_t *)hPhysicalMemory;
	const uint64_t va = (uintptr_t)ptr;
	vmap_t *m = calloc(1, sizeof(*m));
	if (!m)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	*m = (vmap_t){va, size, offset, pm, access, NULL};
	pthread_mutex_lock(&lock);
	resv_t *r = resv_of(ctx, va, size);
	rc = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (!r || pm->ctx != ctx || offset > pm->size || size > pm->size - offset)
		goto out;
	for (const vmap_t *o = r->maps; o; o = o->next)
		if (o->va < va + size && va < o->va + o->size)
			goto out; /* overlaps a mapping */
	/* The host view: the object's pages at the reserved address. */
	void *view = mremap(pm->host + offset, 0, size, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)ptr);
	if (view == MAP_FAILED) {
		rc = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	int err = gpu_bind(&ctx->dev->os, m, access);
	if (err) {
		host_release(va, size);
		rc = zs_device_result(ctx->dev, err);
		goto out;
	}
	mprotect(view, size, prot_of(access));
	m->next = r->maps;
	r->maps = m;
	pm->maps++;
	m = NULL;
	rc = ZE_RESULT_SUCCESS;
out:
	pthread_mutex_unlock(&lock);
	free(m);
	return rc;
}

ze_result_t ZE_APICALL zs_virtual_mem_unmap(ze_context_handle_t hContext, const void *ptr, size_t size)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ze_result_t rc = check_range(ptr, size);
	if (rc)
		return rc;
	zs_context_t *ctx = (zs_context_t *)hContext;
	const uint64_t va = (uintptr_t)ptr;
	pthread_mutex_lock(&lock);
	resv_t *r = resv_of(ctx, va, size);
	rc = r ? whole_mappings(ctx, r, va, size) : ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (rc) {
		pthread_mutex_unlock(&lock);
		return rc;
	}
	for (vmap_t **pp = &r->maps; *pp;) {
		vmap_t *m = *pp;
		if (m->va < va || m->va >= va + size) {
			pp = &m->next;
			continue;
		}
		gpu_unbind(&ctx->dev->os, m);
		host_release(m->va, m->size);
		m->pm->maps--;
		*pp = m->next;
		free(m);
	}
	pthread_mutex_unlock(&lock);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_virtual_mem_set_access_attribute(ze_context_handle_t hContext, const void *ptr,
							   size_t size, ze_memory_access_attribute_t access)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ze_result_t rc;
	if ((rc = check_access(access)) || (rc = check_range(ptr, size)))
		return rc;
	zs_context_t *ctx = (zs_context_t *)hContext;
	const uint64_t va = (uintptr_t)ptr;
	pthread_mutex_lock(&lock);
	resv_t *r = resv_of(ctx, va, size);
	rc = r ? whole_mappings(ctx, r, va, size) : ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (rc) {
		pthread_mutex_unlock(&lock);
		return rc;
	}
	for (vmap_t *m = r->maps; m && !rc; m = m->next) {
		if (m->va < va || m->va >= va + size || m->access == access)
			continue;
		/* Rebind: the KMD maps a range once; a new attribute is a new binding. */
		gpu_unbind(&ctx->dev->os, m);
		int err = gpu_bind(&ctx->dev->os, m, access);
		if (err) {
			m->access = ZE_MEMORY_ACCESS_ATTRIBUTE_NONE; /* now unbound */
			rc = zs_device_result(ctx->dev, err);
		} else {
			m->access = access;
		}
		mprotect((void *)(uintptr_t)m->va, m->size, prot_of(m->access));
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

ze_result_t ZE_APICALL zs_virtual_mem_get_access_attribute(ze_context_handle_t hContext, const void *ptr,
							   size_t size, ze_memory_access_attribute_t *access,
							   size_t *outSize)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ZS_CHECK_PTR(access);
	ZS_CHECK_PTR(outSize);
	ze_result_t rc = check_range(ptr, size);
	if (rc)
		return rc;
	const uint64_t va = (uintptr_t)ptr, end = va + size;
	pthread_mutex_lock(&lock);
	resv_t *r = resv_of((zs_context_t *)hContext, va, size);
	if (!r) {
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	/* Walk from ptr by segments (a mapping, or the gap before the next one)
	 * while the attribute stays that of the first page. */
	uint64_t at = va;
	ze_memory_access_attribute_t first = ZE_MEMORY_ACCESS_ATTRIBUTE_NONE;
	while (at < end) {
		ze_memory_access_attribute_t a = ZE_MEMORY_ACCESS_ATTRIBUTE_NONE;
		uint64_t seg_end = end;
		for (const vmap_t *m = r->maps; m; m = m->next) {
			if (m->va <= at && at < m->va + m->size) {
				a = m->access;
				seg_end = m->va + m->size;
				break;
			}
			if (m->va > at && m->va < seg_end)
				seg_end = m->va;
		}
		if (at == va)
			first = a;
		else if (a != first)
			break;
		at = seg_end < end ? seg_end : end;
	}
	pthread_mutex_unlock(&lock);
	*access = first;
	*outSize = at - va;
	return ZE_RESULT_SUCCESS;
}
