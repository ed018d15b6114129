/* Allocations: one GEM object each, at the same address on host and device.
 * A table sorted by address answers "which allocation holds this pointer"
 * for zeMemGetAllocProperties and argument checks. */
#include "zs_memory.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zs_handle.h"
#include "zs_queue.h"

typedef struct alloc {
	zs_bo_t bo;
	zs_alloc_info_t info;
	int ipc_fd;    /* the PRIME fd zeMemGetIpcHandle gave, until the free; -1: none */
	bool imported; /* made by zeMemOpenIpcHandle: zeMemCloseIpcHandle frees it */
} alloc_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static alloc_t **table; /* sorted by base */
static size_t count, cap;
static uint64_t next_id = 1;

/* Index of the first entry whose base is > p; caller holds the lock. */
static size_t upper(const void *p)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((const uint8_t *)table[mid]->info.base <= (const uint8_t *)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static alloc_t *find_locked(const void *p)
{
	size_t i = upper(p);
	if (!i)
		return NULL;
	alloc_t *a = table[i - 1];
	/* A zero-length tail is not part of it; the request size is. */
	return (const uint8_t *)p < (const uint8_t *)a->info.base + a->info.size ? a : NULL;
}

bool zs_memory_lookup(zs_context_t *ctx, const void *ptr, zs_alloc_info_t *out)
{
	pthread_mutex_lock(&lock);
	alloc_t *a = find_locked(ptr);
	bool ok = a && (!ctx || a->info.ctx == ctx);
	if (ok && out)
		*out = a->info;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* Into the table (the lock is taken here); false when out of memory. */
static bool insert(alloc_t *a)
{
	pthread_mutex_lock(&lock);
	if (count == cap) {
		size_t ncap = cap ? cap * 2 : 64;
		alloc_t **nt = realloc(table, ncap * sizeof(*nt));
		if (!nt) {
			pthread_mutex_unlock(&lock);
			return false;
		}
		table = nt;
		cap = ncap;
	}
	a->info.id = next_id++;
	size_t i = upper(a->info.base);
	memmove(&table[i + 1], &table[i], (count - i) * sizeof(*table));
	table[i] = a;
	count++;
	pthread_mutex_unlock(&lock);
	return true;
}

static ze_result_t alloc_common(zs_context_t *ctx, zs_device_t *dev, ze_memory_type_t type, size_t size,
				size_t alignment, void **pptr)
{
	zs_device_t *d = ctx->dev;
	if (size == 0 || size > d->max_alloc)
		return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
	if (alignment & (alignment - 1))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	/* The aligned address is found inside a reservation of size + alignment. */
	if (alignment > (1ull << 32))
		return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
	alloc_t *a = calloc(1, sizeof(*a));
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	int rc = zs_os_bo_create(&d->os, size, alignment, &a->bo);
	if (rc) {
		free(a);
		return rc == -ENOMEM || rc == -ENOSPC ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
						      : zs_device_result(d, rc);
	}
	a->info = (zs_alloc_info_t){a->bo.ptr, size, type, 0, ctx, dev};
	a->ipc_fd = -1;
	if (!insert(a)) {
		zs_os_bo_destroy(&d->os, &a->bo);
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(ctx);
	*pptr = a->info.base;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t check_device_desc(const ze_device_mem_alloc_desc_t *d)
{
	ZS_CHECK_PTR(d);
	ZS_CHECK_STYPE(d, ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
	if (d->flags > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (d->ordinal != 0) /* one memory: zeDeviceGetMemoryProperties count is 1 */
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}

static ze_result_t check_host_desc(const ze_host_mem_alloc_desc_t *h)
{
	ZS_CHECK_PTR(h);
	ZS_CHECK_STYPE(h, ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
	if (h->flags > 0xf)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_mem_alloc_shared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *device_desc,
					   const ze_host_mem_alloc_desc_t *host_desc, size_t size, size_t alignment,
					   ze_device_handle_t hDevice, void **pptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	if (hDevice)
		ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ze_result_t r;
	if ((r = check_device_desc(device_desc)) || (r = check_host_desc(host_desc)))
		return r;
	ZS_CHECK_PTR(pptr);
	zs_context_t *ctx = (zs_context_t *)hContext;
	return alloc_common(ctx, hDevice ? (zs_device_t *)hDevice : ctx->dev, ZE_MEMORY_TYPE_SHARED, size, alignment,
			    pptr);
}

ze_result_t ZE_APICALL zs_mem_alloc_device(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t *device_desc,
					   size_t size, size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ze_result_t r = check_device_desc(device_desc);
	if (r)
		return r;
	ZS_CHECK_PTR(pptr);
	return alloc_common((zs_context_t *)hContext, (zs_device_t *)hDevice, ZE_MEMORY_TYPE_DEVICE, size, alignment,
			    pptr);
}

ze_result_t ZE_APICALL zs_mem_alloc_host(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t *host_desc,
					 size_t size, size_t alignment, void **pptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ze_result_t r = check_host_desc(host_desc);
	if (r)
		return r;
	ZS_CHECK_PTR(pptr);
	return alloc_common((zs_context_t *)hContext, NULL, ZE_MEMORY_TYPE_HOST, size, alignment, pptr);
}

/* Removes the allocation based at ptr from the table (NULL if none). */
static alloc_t *take(zs_context_t *ctx, const void *ptr)
{
	pthread_mutex_lock(&lock);
	size_t i = upper(ptr);
	alloc_t *a = i ? table[i - 1] : NULL;
	if (!a || a->info.base != ptr || a->info.ctx != ctx) {
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	memmove(&table[i - 1], &table[i], (count - i) * sizeof(*table));
	count--;
	pthread_mutex_unlock(&lock);
	return a;
}

static void destroy(alloc_t *a)
{
	zs_context_t *ctx = a->info.ctx;
	if (a->ipc_fd >= 0)
		close(a->ipc_fd);
	zs_os_bo_destroy(&ctx->dev->os, &a->bo);
	free(a);
	zs_context_unref(ctx);
}

ze_result_t ZE_APICALL zs_mem_free(ze_context_handle_t hContext, void *ptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	alloc_t *a = take((zs_context_t *)hContext, ptr);
	if (!a)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not the start of an allocation of this context */
	destroy(a);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_mem_free_ext(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t *pMemFreeDesc,
				       void *ptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(pMemFreeDesc);
	ZS_CHECK_PTR(ptr);
	ZS_CHECK_STYPE(pMemFreeDesc, ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC);
	if (pMemFreeDesc->freePolicy > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	zs_context_t *ctx = (zs_context_t *)hContext;
	if (!zs_memory_lookup(ctx, ptr, NULL))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	/* Both policies wait until the device has finished all submitted work
	 * (a deferred free is thus also safe, only not asynchronous). */
	if (pMemFreeDesc->freePolicy) {
		ze_result_t r = zs_queue_wait_all(ctx->dev);
		if (r)
			return r;
	}
	return zs_mem_free(hContext, ptr);
}

void zs_memory_free_context(zs_context_t *ctx)
{
	for (;;) {
		alloc_t *a = NULL;
		pthread_mutex_lock(&lock);
		for (size_t i = 0; i < count; i++)
			if (table[i]->info.ctx == ctx) {
				a = table[i];
				memmove(&table[i], &table[i + 1], (count - i - 1) * sizeof(*table));
				count--;
				break;
			}
		pthread_mutex_unlock(&lock);
		if (!a)
			return;
		destroy(a);
	}
}

ze_result_t ZE_APICALL zs_mem_get_alloc_properties(ze_context_handle_t hContext, const void *ptr,
						   ze_memory_allocation_properties_t *p, ze_device_handle_t *phDevice)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
	zs_alloc_info_t a;
	if (!zs_memory_lookup((zs_context_t *)hContext, ptr, &a)) {
		/* Not ours (malloc'ed, or of another context): the spec's answer. */
		p->type = ZE_MEMORY_TYPE_UNKNOWN;
		p->id = 0;
		p->pageSize = 0;
		if (phDevice)
			*phDevice = NULL;
		return ZE_RESULT_SUCCESS;
	}
	p->type = a.type;
	p->id = a.id;
	p->pageSize = 4096; /* bound with 4 KiB GPU pages */
	if (phDevice)
		*phDevice = (ze_device_handle_t)a.dev;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_mem_get_address_range(ze_context_handle_t hContext, const void *ptr, void **pBase,
						size_t *pSize)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	zs_alloc_info_t a;
	if (!zs_memory_lookup((zs_context_t *)hContext, ptr, &a))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* no allocation of this context holds ptr */
	if (pBase)
		*pBase = a.base;
	if (pSize)
		*pSize = a.size;
	return ZE_RESULT_SUCCESS;
}

/* ---- IPC (driver/README.md "IPC") ------------------------------------------------------------ */

/* What a ze_ipc_mem_handle_t holds: the PRIME fd first (the int a program passes
 * with SCM_RIGHTS and replaces with the number it received), then a tag. */
typedef struct ipc_mem_data {
	int32_t fd;
	uint32_t magic;
	uint64_t size;
} ipc_mem_data_t;
#define IPC_MEM_MAGIC 0x4d50495au /* "ZIPM" */

ze_result_t ZE_APICALL zs_mem_get_ipc_handle(ze_context_handle_t hContext, const void *ptr,
					     ze_ipc_mem_handle_t *pIpcHandle)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	ZS_CHECK_PTR(pIpcHandle);
	zs_context_t *ctx = (zs_context_t *)hContext;
	pthread_mutex_lock(&lock);
	alloc_t *a = find_locked(ptr);
	if (!a || a->info.ctx != ctx || a->info.base != ptr) {
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not the start of an allocation of this context */
	}
	/* One fd per allocation, however many handles are asked for: it stays
	 * open (the handle is valid) until the allocation is freed. */
	int rc = a->ipc_fd < 0 ? zs_os_bo_export(&ctx->dev->os, &a->bo, &a->ipc_fd) : 0;
	ipc_mem_data_t d = {a->ipc_fd, IPC_MEM_MAGIC, a->info.size};
	pthread_mutex_unlock(&lock);
	if (rc)
		return zs_device_result(ctx->dev, rc);
	memset(pIpcHandle, 0, sizeof(*pIpcHandle));
	memcpy(pIpcHandle->data, &d, sizeof(d));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_mem_open_ipc_handle(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					      ze_ipc_mem_handle_t handle, ze_ipc_memory_flags_t flags, void **pptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(pptr);
	if (flags > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	ipc_mem_data_t d;
	memcpy(&d, handle.data, sizeof(d));
	if (d.magic != IPC_MEM_MAGIC || d.fd < 0 || !d.size)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	zs_context_t *ctx = (zs_context_t *)hContext;
	alloc_t *a = calloc(1, sizeof(*a));
	if (!a)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	int rc = zs_os_bo_import(&ctx->dev->os, d.fd, &a->bo);
	if (rc) {
		free(a);
		/* No fd, or none of a live object (its allocation was freed). */
		return rc == -EBADF || rc == -EINVAL ? ZE_RESULT_ERROR_INVALID_ARGUMENT : zs_device_result(ctx->dev, rc);
	}
	a->info = (zs_alloc_info_t){a->bo.ptr, d.size <= a->bo.size ? d.size : a->bo.size, ZE_MEMORY_TYPE_DEVICE, 0,
				    ctx, (zs_device_t *)hDevice};
	a->ipc_fd = -1;
	a->imported = true;
	if (!insert(a)) {
		zs_os_bo_destroy(&ctx->dev->os, &a->bo);
		free(a);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	zs_context_ref(ctx);
	*pptr = a->info.base;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_mem_close_ipc_handle(ze_context_handle_t hContext, const void *ptr)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_PTR(ptr);
	pthread_mutex_lock(&lock);
	alloc_t *a = find_locked(ptr);
	const bool ok = a && a->imported && a->info.base == ptr && a->info.ctx == (zs_context_t *)hContext;
	pthread_mutex_unlock(&lock);
	if (!ok || !(a = take((zs_context_t *)hContext, ptr)))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* not what zeMemOpenIpcHandle returned, or closed */
	destroy(a);
	return ZE_RESULT_SUCCESS;
}
