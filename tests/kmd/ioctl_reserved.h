/* The "must be zero" fields of every ioctl of uapi/zesim_ioctl_table.h, as data:
 * `extensions` (no extension is defined), `pad`, `reserved`, flags words with no
 * flag defined, and out fields that must be 0 on input (docs/uapi.md, the
 * conventions of zesim_drm.h).  A non-zero byte in any of them makes the call
 * fail with -EINVAL.  Used by kmd_reserved.c (every byte of every field, on an
 * otherwise valid call) and by kmd_fuzz.c (its oracle: an argument with such a
 * byte set must not succeed).  An ioctl added to the table must be listed here
 * (kmd_reserved checks that every table entry has a row or is in
 * zesim_no_reserved[]). */
#ifndef ZESIM_TESTS_IOCTL_RESERVED_H
#define ZESIM_TESTS_IOCTL_RESERVED_H

#include <stddef.h>
#include <stdint.h>

#include "uapi/zesim_ioctl_table.h"

/* Room for the argument of any ioctl (and random bytes beyond, for the fuzzer). */
union zesim_ioctl_arg {
	uint8_t raw[512];
	struct drm_zesim_version ver;
	struct drm_zesim_device_query q;
	struct drm_zesim_gem_create gc;
	struct drm_zesim_gem_mmap_offset mo;
	struct drm_zesim_gem_close cl;
	struct drm_zesim_prime_handle ph;
	struct drm_zesim_vm_create vc;
	struct drm_zesim_vm_destroy vd;
	struct drm_zesim_vm_bind vb;
	struct drm_zesim_exec_queue_create qc;
	struct drm_zesim_exec_queue_destroy qd;
	struct drm_zesim_exec ex;
	struct drm_zesim_wait_user_fence w;
	struct drm_zesim_test_fd_open to;
	struct drm_zesim_observation_param obs;
	struct drm_zesim_eudebug_connect dc;
	struct drm_zesim_debug_metadata_create mc;
	struct drm_zesim_debug_metadata_destroy md;
};

/* Where the field is. */
enum zesim_rsv_where {
	RSV_ARG,       /* the ioctl's argument */
	RSV_INLINE_OP, /* VM_BIND's inline op (argument offset): only when num_binds == 1 */
	RSV_OPS,       /* each drm_zesim_vm_bind_op of VM_BIND's op array (num_binds > 1) */
	RSV_SYNCS,     /* each drm_zesim_sync of the call's sync array */
	RSV_INSTANCE,  /* EXEC_QUEUE_CREATE's drm_zesim_engine_class_instance */
	RSV_ECI,       /* DEVICE_QUERY ENGINE_CYCLES: the eci of the query buffer */
	RSV_PROPS,     /* each drm_zesim_ext_set_property of OBSERVATION STREAM_OPEN's chain */
	RSV_OA_CONFIG, /* OBSERVATION ADD_CONFIG's drm_zesim_oa_config */
	RSV_NWHERE
};

struct zesim_rsv {
	unsigned long cmd;
	const char *name;
	uint8_t where;
	uint16_t off, size;
};

#define RSV(cmd, where, type, field)                                                                               \
	{cmd, #type "." #field, where, offsetof(struct type, field), sizeof(((struct type *)0)->field)}
#define RSV_OP(field)                                                                                              \
	{DRM_IOCTL_ZESIM_VM_BIND, "drm_zesim_vm_bind.bind." #field, RSV_INLINE_OP,                                 \
	 offsetof(struct drm_zesim_vm_bind, bind) + offsetof(struct drm_zesim_vm_bind_op, field),                   \
	 sizeof(((struct drm_zesim_vm_bind_op *)0)->field)}

static const struct zesim_rsv zesim_rsv_fields[] = {
	RSV(DRM_IOCTL_ZESIM_DEVICE_QUERY, RSV_ARG, drm_zesim_device_query, extensions),
	RSV(DRM_IOCTL_ZESIM_DEVICE_QUERY, RSV_ARG, drm_zesim_device_query, reserved),
	RSV(DRM_IOCTL_ZESIM_DEVICE_QUERY, RSV_ECI, drm_zesim_engine_class_instance, pad),

	RSV(DRM_IOCTL_ZESIM_GEM_CREATE, RSV_ARG, drm_zesim_gem_create, extensions),
	RSV(DRM_IOCTL_ZESIM_GEM_CREATE, RSV_ARG, drm_zesim_gem_create, flags),
	RSV(DRM_IOCTL_ZESIM_GEM_CREATE, RSV_ARG, drm_zesim_gem_create, handle),
	RSV(DRM_IOCTL_ZESIM_GEM_CREATE, RSV_ARG, drm_zesim_gem_create, reserved),

	RSV(DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, RSV_ARG, drm_zesim_gem_mmap_offset, extensions),
	RSV(DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, RSV_ARG, drm_zesim_gem_mmap_offset, flags),
	RSV(DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, RSV_ARG, drm_zesim_gem_mmap_offset, reserved),

	RSV(DRM_IOCTL_ZESIM_GEM_CLOSE, RSV_ARG, drm_zesim_gem_close, pad),

	RSV(DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, RSV_ARG, drm_zesim_prime_handle, flags),

	RSV(DRM_IOCTL_ZESIM_VM_CREATE, RSV_ARG, drm_zesim_vm_create, extensions),
	RSV(DRM_IOCTL_ZESIM_VM_CREATE, RSV_ARG, drm_zesim_vm_create, flags),
	RSV(DRM_IOCTL_ZESIM_VM_CREATE, RSV_ARG, drm_zesim_vm_create, vm_id),
	RSV(DRM_IOCTL_ZESIM_VM_CREATE, RSV_ARG, drm_zesim_vm_create, reserved),

	RSV(DRM_IOCTL_ZESIM_VM_DESTROY, RSV_ARG, drm_zesim_vm_destroy, pad),
	RSV(DRM_IOCTL_ZESIM_VM_DESTROY, RSV_ARG, drm_zesim_vm_destroy, reserved),

	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_ARG, drm_zesim_vm_bind, extensions),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_ARG, drm_zesim_vm_bind, pad),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_ARG, drm_zesim_vm_bind, reserved),
	RSV_OP(extensions),
	RSV_OP(pad),
	RSV_OP(reserved),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_OPS, drm_zesim_vm_bind_op, extensions),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_OPS, drm_zesim_vm_bind_op, pad),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_OPS, drm_zesim_vm_bind_op, reserved),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_SYNCS, drm_zesim_sync, extensions),
	RSV(DRM_IOCTL_ZESIM_VM_BIND, RSV_SYNCS, drm_zesim_sync, reserved),

	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, RSV_ARG, drm_zesim_exec_queue_create, extensions),
	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, RSV_ARG, drm_zesim_exec_queue_create, flags),
	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, RSV_ARG, drm_zesim_exec_queue_create, exec_queue_id),
	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, RSV_ARG, drm_zesim_exec_queue_create, reserved),
	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, RSV_INSTANCE, drm_zesim_engine_class_instance, pad),

	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, RSV_ARG, drm_zesim_exec_queue_destroy, pad),
	RSV(DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, RSV_ARG, drm_zesim_exec_queue_destroy, reserved),

	RSV(DRM_IOCTL_ZESIM_EXEC, RSV_ARG, drm_zesim_exec, extensions),
	RSV(DRM_IOCTL_ZESIM_EXEC, RSV_ARG, drm_zesim_exec, pad),
	RSV(DRM_IOCTL_ZESIM_EXEC, RSV_ARG, drm_zesim_exec, reserved),
	RSV(DRM_IOCTL_ZESIM_EXEC, RSV_SYNCS, drm_zesim_sync, extensions),
	RSV(DRM_IOCTL_ZESIM_EXEC, RSV_SYNCS, drm_zesim_sync, reserved),

	RSV(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, RSV_ARG, drm_zesim_wait_user_fence, extensions),
	RSV(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, RSV_ARG, drm_zesim_wait_user_fence, flags),
	RSV(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, RSV_ARG, drm_zesim_wait_user_fence, pad),
	RSV(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, RSV_ARG, drm_zesim_wait_user_fence, pad2),
	RSV(DRM_IOCTL_ZESIM_WAIT_USER_FENCE, RSV_ARG, drm_zesim_wait_user_fence, reserved),

	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_ARG, drm_zesim_observation_param, extensions),
	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_PROPS, drm_zesim_user_extension, name),
	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_PROPS, drm_zesim_user_extension, pad),
	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_PROPS, drm_zesim_ext_set_property, pad),
	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_PROPS, drm_zesim_ext_set_property, reserved),
	RSV(DRM_IOCTL_ZESIM_OBSERVATION, RSV_OA_CONFIG, drm_zesim_oa_config, extensions),

	RSV(DRM_IOCTL_ZESIM_TEST_FD_OPEN, RSV_ARG, drm_zesim_test_fd_open, extensions),
	RSV(DRM_IOCTL_ZESIM_TEST_FD_OPEN, RSV_ARG, drm_zesim_test_fd_open, flags),
	RSV(DRM_IOCTL_ZESIM_TEST_FD_OPEN, RSV_ARG, drm_zesim_test_fd_open, id),
	RSV(DRM_IOCTL_ZESIM_TEST_FD_OPEN, RSV_ARG, drm_zesim_test_fd_open, reserved),
	RSV(DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, RSV_ARG, drm_zesim_eudebug_connect, extensions),
	RSV(DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, RSV_ARG, drm_zesim_eudebug_connect, version),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, RSV_ARG, drm_zesim_debug_metadata_create, extensions),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, RSV_ARG, drm_zesim_debug_metadata_create, metadata_id),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, RSV_ARG, drm_zesim_debug_metadata_create, reserved),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, RSV_ARG, drm_zesim_debug_metadata_destroy, extensions),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, RSV_ARG, drm_zesim_debug_metadata_destroy, pad),
	RSV(DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, RSV_ARG, drm_zesim_debug_metadata_destroy, reserved),
};
#define ZESIM_NR_RSV (sizeof(zesim_rsv_fields) / sizeof(zesim_rsv_fields[0]))

/* Ioctls whose arguments have no must-be-zero field. */
/* PRIME_HANDLE_TO_FD: its flags word has defined bits (CLOEXEC, RDWR), no field must be 0. */
static const unsigned long zesim_no_reserved[] = {DRM_IOCTL_ZESIM_VERSION, DRM_IOCTL_ZESIM_TEST_FD_PRODUCE,
						  DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD};

static inline int zesim_rsv_nonzero(const void *p, size_t off, size_t size)
{
	const uint8_t *b = (const uint8_t *)p + off;
	for (size_t i = 0; i < size; i++)
		if (b[i])
			return 1;
	return 0;
}

#endif
