/* Physical memory, handles and GEM objects (docs/kmd.md §2, §3; docs/uapi.md §4). */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Zeroes physical memory by punching the pages out of the device's memfd
 * (MADV_REMOVE): they read as zero, and take host memory only once written
 * again, so a device of several GiB costs the daemon only what is in use
 * (docs/kmd.md §2).  A mapping that is not shared memory (or a range not
 * page-aligned) is cleared with memset. */
static void phys_zero(zk_kmd_t *k, uint64_t pa, uint64_t size)
{
	if (!((pa | size) & (PAGE - 1)) && madvise(k->phys + pa, size, MADV_REMOVE) == 0)
		return;
	memset(k->phys + pa, 0, size);
}

int zk_phys_alloc(zk_kmd_t *k, uint64_t size, uint64_t align, uint64_t *pa)
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
		phys_zero(k, at, size);
		*pa = at;
		return 0;
	}
	return -ENOMEM;
}

void zk_phys_free(zk_kmd_t *k, uint64_t pa, uint64_t size)
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
	/* Give the pages back to the host now, not at the next allocation. */
	if (!((pa | size) & (PAGE - 1)))
		madvise(k->phys + pa, size, MADV_REMOVE);
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

uint64_t zk_rd64(zk_kmd_t *k, uint64_t pa)
{
	uint64_t v;
	memcpy(&v, k->phys + pa, 8);
	return v;
}

void zk_wr64(zk_kmd_t *k, uint64_t pa, uint64_t v) { memcpy(k->phys + pa, &v, 8); }

int zk_all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

int zk_handle_add(handles_t *h, void *obj, uint32_t *out)
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

void *zk_handle_get(handles_t *h, uint32_t id)
{
	return id >= 1 && id <= h->n ? h->slot[id - 1] : NULL;
}

/* Remove a handle; returns the object (whose reference the caller drops), or NULL. */
void *zk_handle_take(handles_t *h, uint32_t id)
{
	void *obj = zk_handle_get(h, id);
	if (obj)
		h->slot[id - 1] = NULL;
	return obj;
}

void zk_bo_unref(zk_kmd_t *k, zk_bo_t *bo)
{
	if (--bo->refs)
		return;
	zs_hw_phys_detach(k->hw, bo->pa, bo->size);
	zk_phys_free(k, bo->pa, bo->size);
	close(bo->memfd);
	k->st.bos--;
	k->st.bo_bytes -= bo->size;
	if (bo->owner) {
		bo->owner->nbos--;
		bo->owner->bytes -= bo->size;
	}
	if (bo->prev)
		bo->prev->next = bo->next;
	else
		k->bos = bo->next;
	if (bo->next)
		bo->next->prev = bo->prev;
	free(bo);
}

int zk_ioctl_gem_create(ZK_IOCTL_ARGS)
{
	struct drm_zesim_gem_create *g = arg;
	zk_kmd_t *k = f->kmd;
	if (g->extensions || !CHECK_RESERVED(g) || g->flags || g->placement != 1 || g->handle)
		return -EINVAL;
	if (!g->size || g->size % PAGE || g->size > MAX_BO_BYTES)
		return -EINVAL;
	if (g->vm_id && !zk_handle_get(&f->vms, g->vm_id))
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
	int rc = zk_phys_alloc(k, g->size, g->size % PAGE64K ? PAGE : PAGE64K, &bo->pa);
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
		zk_phys_free(k, bo->pa, bo->size);
		free(bo);
		return out_of_fds ? -EMFILE : -ENOMEM;
	}
	struct stat st;
	if (fstat(bo->memfd, &st) == 0) {
		bo->ino = st.st_ino;
		bo->dev = st.st_dev;
	}
	bo->next = k->bos;
	if (k->bos)
		k->bos->prev = bo;
	k->bos = bo;
	bo->mmap_offset = f->next_mmap;
	f->next_mmap += (bo->size + PAGE64K - 1) & ~(PAGE64K - 1);
	k->st.bos++;
	k->st.bo_bytes += bo->size;
	bo->owner = f;
	f->nbos++;
	f->bytes += bo->size;
	if ((rc = zk_handle_add(&f->bos, bo, &g->handle)))
		zk_bo_unref(k, bo);
	return rc;
}

int zk_mmap_lookup(zk_file_t *f, uint64_t offset, uint64_t length, int *memfd)
{
	for (uint32_t i = 0; i < f->bos.n; i++) {
		zk_bo_t *bo = f->bos.slot[i];
		if (bo && bo->owner == f && bo->mmap_offset == offset) {
			if (!length || length > bo->size)
				return -EINVAL;
			*memfd = bo->memfd;
			return 0;
		}
	}
	return -EINVAL;
}

int zk_ioctl_gem_mmap_offset(ZK_IOCTL_ARGS)
{
	struct drm_zesim_gem_mmap_offset *m = arg;
	if (m->extensions || m->flags || !CHECK_RESERVED(m))
		return -EINVAL;
	zk_bo_t *bo = zk_handle_get(&f->bos, m->handle);
	if (!bo)
		return -ENOENT;
	if (bo->owner != f)
		return -EINVAL; /* imported (PRIME): mmap the object's fd itself */
	m->offset = bo->mmap_offset;
	return 0;
}

int zk_ioctl_gem_close(ZK_IOCTL_ARGS)
{
	zk_kmd_t *k = f->kmd;
	struct drm_zesim_gem_close *c = arg;
	if (c->pad)
		return -EINVAL;
	zk_bo_t *bo = zk_handle_take(&f->bos, c->handle);
	if (!bo)
		return -ENOENT;
	zk_bo_unref(k, bo);
	return 0;
}

int zk_ioctl_prime_handle_to_fd(ZK_IOCTL_ARGS)
{
	struct drm_zesim_prime_handle *p = arg;
	if (p->flags & ~(ZESIM_PRIME_CLOEXEC | ZESIM_PRIME_RDWR))
		return -EINVAL;
	zk_bo_t *bo = zk_handle_get(&f->bos, p->handle);
	if (!bo)
		return -ENOENT;
	/* The object's memfd: the daemon sends a copy with the reply, whose number
	 * in the caller's process replaces this one. */
	f->kmd->prime_fd = bo->memfd;
	p->fd = -1;
	return 0;
}

int zk_prime_take_fd(zk_kmd_t *k)
{
	const int fd = k->prime_fd;
	k->prime_fd = -1;
	return fd;
}

int zk_ioctl_prime_fd_to_handle(ZK_IOCTL_ARGS)
{
	struct drm_zesim_prime_handle *p = arg;
	zk_kmd_t *k = f->kmd;
	if (p->flags)
		return -EINVAL;
	struct stat st;
	if (p->fd < 0 || fstat(p->fd, &st) != 0)
		return -EBADF;
	zk_bo_t *bo = k->bos;
	while (bo && !(bo->ino == (uint64_t)st.st_ino && bo->dev == (uint64_t)st.st_dev))
		bo = bo->next;
	if (!bo)
		return -EINVAL; /* not a GEM object's fd, or its object was freed */
	/* One handle per object and file, as on Linux: an object imported twice
	 * (or into the file that made it) gives the handle it already has. */
	for (uint32_t i = 0; i < f->bos.n; i++)
		if (f->bos.slot[i] == bo) {
			p->handle = i + 1;
			return 0;
		}
	int rc = zk_handle_add(&f->bos, bo, &p->handle);
	if (rc)
		return rc;
	bo->refs++;
	return 0;
}

void zk_bos_file_closed(zk_kmd_t *k, zk_file_t *f)
{
	for (zk_bo_t *bo = k->bos; bo; bo = bo->next)
		if (bo->owner == f)
			bo->owner = NULL;
}
