/* The ioctls of zesim_drm.h as data (docs/uapi.md §12): for each, its number, name
 * and the user buffers its argument points to, with the fields that give their
 * lengths.  The fake KMD dispatches from this table (kmd_shim/kernel/ioctl.c: one
 * handler per entry, checked at start-up) and the preload library marshals from it:
 * a buffer is read in the caller's process and travels with the call ("in"), or comes
 * back with the reply and is written into the caller's memory ("out").  A new ioctl is
 * a new entry here plus its handler. */
#ifndef ZESIM_IOCTL_TABLE_H
#define ZESIM_IOCTL_TABLE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "zesim_drm.h"

#define ZESIM_UPTR_IN 1u	   /* the KMD reads the buffer */
#define ZESIM_UPTR_OUT 2u	   /* the KMD writes it; copied back into the caller */
#define ZESIM_UPTR_OMIT_EMPTY 4u /* no blob at all when the pointer or the length is 0 */
#define ZESIM_UPTR_NULL_EMPTY 8u /* a 0 pointer travels as an empty blob */
#define ZESIM_UPTR_MANY 16u	   /* present only when the count is > 1 (one VM_BIND op is inline) */
/* Generalizations for arguments whose pointer means different things (OBSERVATION):
 * VARIANT: present only when the argument's field at `sel` (sel_size bytes) equals
 *   `sel_value` (a union by an op field);
 * NESTED: `ptr` and `count` are offsets in the buffer of uptr[parent] (an earlier,
 *   `in` buffer of the same call), not in the argument;
 * CHAIN: a linked list of `elem`-byte elements whose first 8 bytes point to the next
 *   one (0 ends it); all links travel as one buffer, in order.  More than `max_links`
 *   links: max_links + 1 travel, so the KMD sees the chain is too long (-E2BIG).
 * A count_size of 0 means a count of 1 (one fixed-size struct). */
#define ZESIM_UPTR_VARIANT 32u
#define ZESIM_UPTR_NESTED 64u
#define ZESIM_UPTR_CHAIN 128u

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
	uint16_t sel;		      /* VARIANT: offset of the selecting field in the argument */
	uint8_t sel_size;	      /* VARIANT: its size (2, 4 or 8) */
	uint8_t parent;		      /* NESTED: index of the uptr whose buffer holds ptr and count */
	uint32_t sel_value;	      /* VARIANT: the value that selects this buffer */
	uint32_t max_links;	      /* CHAIN: at most this many links */
};

/* File descriptors an ioctl carries (PRIME): FD_IN — the s32 at `fd_field` in the
 * argument is an fd of the caller, which travels with the request (SCM_RIGHTS) and
 * which the KMD's handler sees as an fd of its own process (the daemon's); FD_OUT —
 * the handler gives an fd that travels back with the reply and whose number in the
 * caller's process is written at `fd_field` (no secondary fd: a plain file). */
#define ZESIM_IOCTL_FD_IN 1u
#define ZESIM_IOCTL_FD_OUT 2u

struct zesim_ioctl_desc {
	unsigned long cmd;
	const char *name;
	uint32_t arg_size;
	unsigned nuptr;
	struct zesim_uptr uptr[4];
	uint32_t fd_flags;   /* ZESIM_IOCTL_FD_* */
	uint16_t fd_field;   /* offset of the s32 fd in the argument */
};

#define ZESIM_F(type, field) offsetof(struct type, field), sizeof(((struct type *)0)->field)
#define ZESIM_UPTR(type, ptrf, countf, elem, flags)                                                              \
	{offsetof(struct type, ptrf), ZESIM_F(type, countf), 0, 0, elem, flags, 0, 0, 0, 0, 0}

/* OBSERVATION's param, by observation_op: a property chain (STREAM_OPEN), a
 * drm_zesim_oa_config and the register pairs it points to (ADD_CONFIG), a u64 config
 * id (REMOVE_CONFIG). */
#define ZESIM_OBSERVATION_UPTRS                                                                                   \
	{{offsetof(struct drm_zesim_observation_param, param), 0, 0, 0, 0, sizeof(struct drm_zesim_ext_set_property), \
	  ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY | ZESIM_UPTR_VARIANT | ZESIM_UPTR_CHAIN,                           \
	  offsetof(struct drm_zesim_observation_param, observation_op), 8, 0, ZESIM_OBSERVATION_OP_STREAM_OPEN,      \
	  ZESIM_MAX_USER_EXTENSIONS},                                                                               \
	 {offsetof(struct drm_zesim_observation_param, param), 0, 0, 0, 0, sizeof(struct drm_zesim_oa_config),       \
	  ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY | ZESIM_UPTR_VARIANT,                                               \
	  offsetof(struct drm_zesim_observation_param, observation_op), 8, 0, ZESIM_OBSERVATION_OP_ADD_CONFIG, 0},  \
	 {offsetof(struct drm_zesim_oa_config, regs_ptr), offsetof(struct drm_zesim_oa_config, n_regs), 4, 0, 0,    \
	  2 * sizeof(uint32_t), ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY | ZESIM_UPTR_VARIANT | ZESIM_UPTR_NESTED,     \
	  offsetof(struct drm_zesim_observation_param, observation_op), 8, 1, ZESIM_OBSERVATION_OP_ADD_CONFIG, 0},  \
	 {offsetof(struct drm_zesim_observation_param, param), 0, 0, 0, 0, sizeof(uint64_t),                         \
	  ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY | ZESIM_UPTR_VARIANT,                                               \
	  offsetof(struct drm_zesim_observation_param, observation_op), 8, 0, ZESIM_OBSERVATION_OP_REMOVE_CONFIG, 0}}

/* Every ioctl, in number order.  The order of a call's buffers is the order the KMD
 * reads them (its `in` and `out` arrays, docs/uapi.md). */
static const struct zesim_ioctl_desc zesim_ioctls[] = {
	{DRM_IOCTL_ZESIM_VERSION, "VERSION", sizeof(struct drm_zesim_version), 3,
	 {ZESIM_UPTR(drm_zesim_version, name, name_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY),
	  ZESIM_UPTR(drm_zesim_version, date, date_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY),
	  ZESIM_UPTR(drm_zesim_version, desc, desc_len, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_NULL_EMPTY)}, 0, 0},
	{DRM_IOCTL_ZESIM_DEVICE_QUERY, "DEVICE_QUERY", sizeof(struct drm_zesim_device_query), 1,
	 {ZESIM_UPTR(drm_zesim_device_query, data, size, 1, ZESIM_UPTR_IN | ZESIM_UPTR_OUT | ZESIM_UPTR_OMIT_EMPTY)}, 0, 0},
	{DRM_IOCTL_ZESIM_GEM_CREATE, "GEM_CREATE", sizeof(struct drm_zesim_gem_create), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, "GEM_MMAP_OFFSET", sizeof(struct drm_zesim_gem_mmap_offset), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_VM_CREATE, "VM_CREATE", sizeof(struct drm_zesim_vm_create), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_VM_DESTROY, "VM_DESTROY", sizeof(struct drm_zesim_vm_destroy), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_VM_BIND, "VM_BIND", sizeof(struct drm_zesim_vm_bind), 2,
	 {ZESIM_UPTR(drm_zesim_vm_bind, vector_of_binds, num_binds, sizeof(struct drm_zesim_vm_bind_op),
		     ZESIM_UPTR_IN | ZESIM_UPTR_MANY),
	  ZESIM_UPTR(drm_zesim_vm_bind, syncs, num_syncs, sizeof(struct drm_zesim_sync),
		     ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY)}, 0, 0},
	{DRM_IOCTL_ZESIM_GEM_CLOSE, "GEM_CLOSE", sizeof(struct drm_zesim_gem_close), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, "PRIME_HANDLE_TO_FD", sizeof(struct drm_zesim_prime_handle), 0, {{0}},
	 ZESIM_IOCTL_FD_OUT, offsetof(struct drm_zesim_prime_handle, fd)},
	{DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, "PRIME_FD_TO_HANDLE", sizeof(struct drm_zesim_prime_handle), 0, {{0}},
	 ZESIM_IOCTL_FD_IN, offsetof(struct drm_zesim_prime_handle, fd)},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, "EXEC_QUEUE_CREATE", sizeof(struct drm_zesim_exec_queue_create), 1,
	 {{offsetof(struct drm_zesim_exec_queue_create, instances), ZESIM_F(drm_zesim_exec_queue_create, width),
	   sizeof(((struct drm_zesim_exec_queue_create *)0)->num_placements),
	   offsetof(struct drm_zesim_exec_queue_create, num_placements),
	   sizeof(struct drm_zesim_engine_class_instance), ZESIM_UPTR_IN, 0, 0, 0, 0, 0}}, 0, 0},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, "EXEC_QUEUE_DESTROY", sizeof(struct drm_zesim_exec_queue_destroy), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_EXEC, "EXEC", sizeof(struct drm_zesim_exec), 1,
	 {ZESIM_UPTR(drm_zesim_exec, syncs, num_syncs, sizeof(struct drm_zesim_sync),
		     ZESIM_UPTR_IN | ZESIM_UPTR_OMIT_EMPTY)}, 0, 0},
	{DRM_IOCTL_ZESIM_WAIT_USER_FENCE, "WAIT_USER_FENCE", sizeof(struct drm_zesim_wait_user_fence), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_OBSERVATION, "OBSERVATION", sizeof(struct drm_zesim_observation_param), 4,
	 ZESIM_OBSERVATION_UPTRS, 0, 0},
	{DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, "EUDEBUG_CONNECT", sizeof(struct drm_zesim_eudebug_connect), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, "DEBUG_METADATA_CREATE", sizeof(struct drm_zesim_debug_metadata_create), 1,
	 {ZESIM_UPTR(drm_zesim_debug_metadata_create, user_addr, len, 1, ZESIM_UPTR_IN)}, 0, 0},
	{DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, "DEBUG_METADATA_DESTROY", sizeof(struct drm_zesim_debug_metadata_destroy), 0,
	 {{0}}, 0, 0},
	/* test only (docs/uapi.md §13): -EPERM unless the daemon runs with --test-channel */
	{DRM_IOCTL_ZESIM_TEST_FD_OPEN, "TEST_FD_OPEN", sizeof(struct drm_zesim_test_fd_open), 0, {{0}}, 0, 0},
	{DRM_IOCTL_ZESIM_TEST_FD_PRODUCE, "TEST_FD_PRODUCE", sizeof(struct drm_zesim_test_fd_produce), 0, {{0}}, 0, 0},
};

#define ZESIM_NR_IOCTLS (sizeof(zesim_ioctls) / sizeof(zesim_ioctls[0]))

/* The ioctls of secondary fds that point to user buffers (the EU debug fd,
 * docs/uapi.md "EU debug"); the preload library marshals them from here.  A secondary
 * fd's ioctl not listed here travels with its argument alone. */
static const struct zesim_ioctl_desc zesim_fd_ioctls[] = {
	{ZESIM_EUDEBUG_IOCTL_READ_EVENT, "EUDEBUG_READ_EVENT", sizeof(struct drm_zesim_eudebug_read_event), 1,
	 {ZESIM_UPTR(drm_zesim_eudebug_read_event, event_ptr, event_size, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_OMIT_EMPTY)}, 0,
	 0},
	{ZESIM_EUDEBUG_IOCTL_EU_CONTROL, "EUDEBUG_EU_CONTROL", sizeof(struct drm_zesim_eudebug_eu_control), 1,
	 {ZESIM_UPTR(drm_zesim_eudebug_eu_control, bitmask_ptr, bitmask_size, 1,
		     ZESIM_UPTR_IN | ZESIM_UPTR_OUT | ZESIM_UPTR_OMIT_EMPTY)}, 0, 0},
	{ZESIM_EUDEBUG_IOCTL_READ_METADATA, "EUDEBUG_READ_METADATA", sizeof(struct drm_zesim_eudebug_read_metadata), 1,
	 {ZESIM_UPTR(drm_zesim_eudebug_read_metadata, ptr, size, 1, ZESIM_UPTR_OUT | ZESIM_UPTR_OMIT_EMPTY)}, 0, 0},
};

static inline const struct zesim_ioctl_desc *zesim_fd_ioctl_find(unsigned long cmd)
{
	for (size_t i = 0; i < sizeof(zesim_fd_ioctls) / sizeof(zesim_fd_ioctls[0]); i++)
		if (zesim_fd_ioctls[i].cmd == cmd)
			return &zesim_fd_ioctls[i];
	return NULL;
}

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

/* Whether a buffer's variant is the one the argument selects (always, without VARIANT). */
static inline int zesim_uptr_selected(const struct zesim_uptr *u, const void *arg)
{
	return !(u->flags & ZESIM_UPTR_VARIANT) || zesim_read_field(arg, u->sel, u->sel_size) == u->sel_value;
}

/* One buffer of a call: whether it travels, where it is and how long.  `arg` is
 * the argument, or for a NESTED buffer its parent's buffer, `arg_len` bytes long (a
 * field past its end: the buffer is not present).  For a CHAIN, `len` is one
 * element: the caller walks the links.  Returns -1 (EINVAL) when the buffer is
 * larger than ZESIM_UPTR_MAX. */
static inline int zesim_uptr_resolve_in(const struct zesim_uptr *u, const void *arg, uint32_t arg_len, int *present,
					uint64_t *addr, uint32_t *len)
{
	*present = 0;
	*addr = 0;
	*len = 0;
	if ((uint32_t)u->ptr + 8 > arg_len || (uint32_t)u->count + u->count_size > arg_len ||
	    (uint32_t)u->count2 + u->count2_size > arg_len)
		return 0;
	const uint64_t count = u->count_size ? zesim_read_field(arg, u->count, u->count_size) : 1;
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

static inline int zesim_uptr_resolve(const struct zesim_uptr *u, const void *arg, int *present, uint64_t *addr,
				     uint32_t *len)
{
	return zesim_uptr_resolve_in(u, arg, 0xffffu, present, addr, len);
}

/* The KMD's side (its handlers, e.g. kmd_shim/kernel/oa.c): the buffers that came with a call must
 * be the ones the table gives for its argument (the selected variants, nested
 * lengths from their parent's buffer, a chain of whole linked elements).  Fills
 * idx[i] with the index in `in` of uptr[i]'s buffer, or -1.  Returns 0, -EINVAL
 * (buffers that do not match), -EFAULT (a required buffer is missing: a NULL
 * pointer) or -E2BIG (a chain of more than max_links links).  Used for the
 * entries that have VARIANT, NESTED or CHAIN buffers. */
static inline int zesim_uptr_check(const struct zesim_ioctl_desc *d, const void *arg, uint32_t arg_size,
				   const uint32_t *in_len, const uint8_t *const *in_data, unsigned nin, int *idx)
{
	unsigned next = 0;
	for (unsigned i = 0; i < d->nuptr; i++) {
		const struct zesim_uptr *u = &d->uptr[i];
		idx[i] = -1;
		if (!zesim_uptr_selected(u, arg))
			continue;
		const void *from = arg;
		uint32_t from_len = arg_size;
		if (u->flags & ZESIM_UPTR_NESTED) {
			if (idx[u->parent] < 0)
				continue; /* the parent did not travel: neither does this */
			from = in_data[idx[u->parent]];
			from_len = in_len[idx[u->parent]];
		}
		int present;
		uint64_t addr;
		uint32_t len;
		if (zesim_uptr_resolve_in(u, from, from_len, &present, &addr, &len))
			return -EINVAL;
		if (!present) {
			if (!addr && !(u->flags & ZESIM_UPTR_NESTED) && (u->flags & (ZESIM_UPTR_VARIANT | ZESIM_UPTR_CHAIN)))
				return -EFAULT; /* a NULL param, as copy_from_user */
			continue;
		}
		if (!(u->flags & ZESIM_UPTR_IN))
			continue; /* out buffers are not checked here */
		if (next >= nin)
			return -EINVAL;
		const uint32_t n = in_len[next];
		if (u->flags & ZESIM_UPTR_CHAIN) {
			if (!n || n % u->elem)
				return -EINVAL;
			const uint32_t links = n / u->elem;
			if (links > u->max_links + 1)
				return -EINVAL;
			for (uint32_t l = 0; l + 1 < links; l++)
				if (!zesim_read_field(in_data[next] + (size_t)l * u->elem, 0, 8))
					return -EINVAL; /* a link that ends the chain is not the last */
			if (links > u->max_links)
				return -E2BIG;
			if (zesim_read_field(in_data[next] + (size_t)(links - 1) * u->elem, 0, 8))
				return -EINVAL; /* the chain goes on past what travelled */
		} else if (n != len) {
			return -EINVAL;
		}
		idx[i] = (int)next++;
	}
	return next == nin ? 0 : -EINVAL;
}

#endif
