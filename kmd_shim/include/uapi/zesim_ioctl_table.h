/* The ioctls of zesim_drm.h as data (docs/uapi.md §12): for each, its number, name
 * and the user buffers its argument points to, with the fields that give their
 * lengths.  The fake KMD dispatches from this table (kmd_shim/kernel/ioctl.c: one
 * handler per entry, checked at start-up) and the preload library marshals from it:
 * a buffer is read in the caller's process and travels with the call ("in"), or comes
 * back with the reply and is written into the caller's memory ("out").  A new ioctl is
 * a new entry here plus its handler. */
#ifndef ZESIM_IOCTL_TABLE_H
#define ZESIM_IOCTL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "zesim_drm.h"

#define ZESIM_UPTR_IN 1u	   /* the KMD reads the buffer */
#define ZESIM_UPTR_OUT 2u	   /* the KMD writes it; copied back into the caller */
#define ZESIM_UPTR_OMIT_EMPTY 4u /* no blob at all when the pointer or the length is 0 */
#define ZESIM_UPTR_NULL_EMPTY 8u /* a 0 pointer travels as an empty blob */
#define ZESIM_UPTR_MANY 16u	   /* present only when the count is > 1 (one VM_BIND op is inline) */

/* The largest buffer one call may carry (the daemon refuses more). */
#define ZESIM_UPTR_MAX (256u << 10)

struct zesim_uptr {
	uint16_t ptr;		      /* offset of the pointer field (64-bit) in the argument */
	uint16_t count;		      /* offset of its length or element count */
	uint8_t count_size;	      /* 2, 4 or 8 bytes */
	uint8_t count2_size;	      /* 0, or the size of a second factor of the count */
	uint16_t count2;	      /* offset of that second factor */
	uint32_t elem;		      /* bytes per counted element (1: the count is a length) */
	uint32_t flags;		      /* ZESIM_UPTR_* */
};

struct zesim_ioctl_desc {
	unsigned long cmd;
	const char *name;
	uint32_t arg_size;
	unsigned nuptr;
	struct zesim_uptr uptr[3];
};

#define ZESIM_F(type, field) offsetof(struct type, field), sizeof(((struct type *)0)->field)
#define ZESIM_UPTR(type, ptrf, countf, elem, flags) {offsetof(struct type, ptrf), ZESIM_F(type, countf), 0, 0, elem, flags}

/* Every ioctl, in number order.  The order of a call's buffers is the order the KMD
 * reads them (its `in` and `out` arrays, docs/uapi.md). */
static const struct zesim_ioctl_desc zesim_ioctls[] = {
	{DRM_IOCTL_ZESIM_VERSION, "VERSION", sizeof(struct drm_zesim_version), 3,
	 {ZESIM_UPTR(drm_zesim_version, name, name_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY),
	  ZESIM_UPTR(drm_zesim_version, date, date_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY),
	  ZESIM_UPTR(drm_zesim_version, desc, desc_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY)}},
	{DRM_IOCTL_ZESIM_DEVICE_QUERY, "DEVICE_QUERY", sizeof(struct drm_zesim_device_query), 1,
	 {ZESIM_UPTR(drm_zesim_device_query, data, size, 1, ZESIM_UPTR_IN | ZESIM_UPTR_OUT | ZESIM_UPTR_OMIT_EMPTY)}},
	{DRM_IOCTL_ZESIM_GEM_CREATE, "GEM_CREATE", sizeof(struct drm_zesim_gem_create), 0, {{0}}},
	{DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, "GEM_MMAP_OFFSET", sizeof(struct drm_zesim_gem_mmap_offset), 0, {{0}}},
	{DRM_IOCTL_ZESIM_VM_CREATE, "VM_CREATE", sizeof(struct drm_zesim_vm_create), 0, {{0}}},
	{DRM_IOCTL_ZESIM_VM_DESTROY, "VM_DESTROY", sizeof(struct drm_zesim_vm_destroy), 0, {{0}}},
	{DRM_IOCTL_ZESIM_VM_BIND, "VM_BIND", sizeof(struct drm_zesim_vm_bind), 2,
	 {ZESIM_UPTR(drm_zesim_vm_bind, vector_of_binds, num_binds, sizeof(struct drm_zesim_vm_bind_op),
		     ZESIM_UPTR_IN | ZESIM_UPTR_MANY),
	  ZESIM_UPTR(drm_zesim_vm_bind, syncs, num_syncs, sizeof(struct drm_zesim_sync),
		     ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY)}},
	{DRM_IOCTL_ZESIM_GEM_CLOSE, "GEM_CLOSE", sizeof(struct drm_zesim_gem_close), 0, {{0}}},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, "EXEC_QUEUE_CREATE", sizeof(struct drm_zesim_exec_queue_create), 1,
	 {{offsetof(struct drm_zesim_exec_queue_create, instances), ZESIM_F(drm_zesim_exec_queue_create, width),
	   sizeof(((struct drm_zesim_exec_queue_create *)0)->num_placements),
	   offsetof(struct drm_zesim_exec_queue_create, num_placements),
	   sizeof(struct drm_zesim_engine_class_instance), ZESIM_UPTR_IN}}},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, "EXEC_QUEUE_DESTROY", sizeof(struct drm_zesim_exec_queue_destroy), 0, {{0}}},
	{DRM_IOCTL_ZESIM_EXEC, "EXEC", sizeof(struct drm_zesim_exec), 1,
	 {ZESIM_UPTR(drm_zesim_exec, syncs, num_syncs, sizeof(struct drm_zesim_sync),
		     ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY)}},
	{DRM_IOCTL_ZESIM_WAIT_USER_FENCE, "WAIT_USER_FENCE", sizeof(struct drm_zesim_wait_user_fence), 0, {{0}}},
	/* test only (docs/uapi.md §13): -EPERM unless the daemon runs with --test-channel */
	{DRM_IOCTL_ZESIM_TEST_FD_OPEN, "TEST_FD_OPEN", sizeof(struct drm_zesim_test_fd_open), 0, {{0}}},
	{DRM_IOCTL_ZESIM_TEST_FD_PRODUCE, "TEST_FD_PRODUCE", sizeof(struct drm_zesim_test_fd_produce), 0, {{0}}},
};

#define ZESIM_NR_IOCTLS (sizeof(zesim_ioctls) / sizeof(zesim_ioctls[0]))

static inline const struct zesim_ioctl_desc *zesim_ioctl_find(unsigned long cmd)
{
	for (size_t i = 0; i < ZESIM_NR_IOCTLS; i++)
		if (zesim_ioctls[i].cmd == cmd)
			return &zesim_ioctls[i];
	return NULL;
}

static inline uint64_t zesim_read_field(const void *arg, uint16_t off, uint8_t size)
{
	const uint8_t *p = (const uint8_t *)arg + off;
	uint64_t v = 0;
	switch (size) {
	case 2: { uint16_t x; __builtin_memcpy(&x, p, 2); v = x; break; }
	case 4: { uint32_t x; __builtin_memcpy(&x, p, 4); v = x; break; }
	case 8: __builtin_memcpy(&v, p, 8); break;
	default: break;
	}
	return v;
}

/* One buffer of a call: whether it travels, where it is and how long.  Returns
 * -1 (EINVAL) when it is larger than ZESIM_UPTR_MAX. */
static inline int zesim_uptr_resolve(const struct zesim_uptr *u, const void *arg, int *present, uint64_t *addr,
				     uint32_t *len)
{
	const uint64_t count = zesim_read_field(arg, u->count, u->count_size);
	const uint64_t count2 = u->count2_size ? zesim_read_field(arg, u->count2, u->count2_size) : 1;
	*addr = zesim_read_field(arg, u->ptr, 8);
	if (count > ZESIM_UPTR_MAX || count2 > ZESIM_UPTR_MAX || count * count2 * u->elem > ZESIM_UPTR_MAX)
		return -1;
	uint64_t n = count * count2 * u->elem;
	*present = 1;
	if ((u->flags & ZESIM_UPTR_MANY) && count <= 1)
		*present = 0;
	if ((u->flags & ZESIM_UPTR_OMIT_EMPTY) && (!*addr || !n))
		*present = 0;
	if ((u->flags & ZESIM_UPTR_NULL_EMPTY) && !*addr)
		n = 0;
	*len = (uint32_t)n;
	return 0;
}

#endif
