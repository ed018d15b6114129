/* The ioctl table (docs/uapi.md §12): every entry of uapi/zesim_ioctl_table.h — the
 * same table the preload library marshals from — has its handler here, found by
 * number.  A new ioctl is a table entry, a handler in its feature's file and a row
 * below; zk_create refuses to start if the two lists disagree. */
#define _GNU_SOURCE
#include "kmd_priv.h"

#include <errno.h>
#include <stdio.h>

#include "uapi/zesim_ioctl_table.h"

typedef int (*zk_ioctl_fn)(ZK_IOCTL_ARGS);

static const struct {
	unsigned long cmd;
	zk_ioctl_fn fn;
} handlers[] = {
	{DRM_IOCTL_ZESIM_VERSION, zk_ioctl_version},
	{DRM_IOCTL_ZESIM_DEVICE_QUERY, zk_ioctl_device_query},
	{DRM_IOCTL_ZESIM_GEM_CREATE, zk_ioctl_gem_create},
	{DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, zk_ioctl_gem_mmap_offset},
	{DRM_IOCTL_ZESIM_VM_CREATE, zk_ioctl_vm_create},
	{DRM_IOCTL_ZESIM_VM_DESTROY, zk_ioctl_vm_destroy},
	{DRM_IOCTL_ZESIM_VM_BIND, zk_ioctl_vm_bind},
	{DRM_IOCTL_ZESIM_GEM_CLOSE, zk_ioctl_gem_close},
	{DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, zk_ioctl_prime_handle_to_fd},
	{DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, zk_ioctl_prime_fd_to_handle},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_CREATE, zk_ioctl_exec_queue_create},
	{DRM_IOCTL_ZESIM_EXEC_QUEUE_DESTROY, zk_ioctl_exec_queue_destroy},
	{DRM_IOCTL_ZESIM_EXEC, zk_ioctl_exec},
	{DRM_IOCTL_ZESIM_WAIT_USER_FENCE, zk_ioctl_wait_user_fence},
	{DRM_IOCTL_ZESIM_OBSERVATION, zk_ioctl_observation}, /* oa.c */
	{DRM_IOCTL_ZESIM_EUDEBUG_CONNECT, zk_ioctl_eudebug_connect},		   /* debug.c */
	{DRM_IOCTL_ZESIM_DEBUG_METADATA_CREATE, zk_ioctl_debug_metadata_create}, /* debug.c */
	{DRM_IOCTL_ZESIM_DEBUG_METADATA_DESTROY, zk_ioctl_debug_metadata_destroy}, /* debug.c */
	{DRM_IOCTL_ZESIM_TEST_FD_OPEN, zk_ioctl_test_fd_open},	     /* testfd.c, test only */
	{DRM_IOCTL_ZESIM_TEST_FD_PRODUCE, zk_ioctl_test_fd_produce}, /* testfd.c, test only */
};

#define NHANDLERS (sizeof(handlers) / sizeof(handlers[0]))

static zk_ioctl_fn handler_of(unsigned long cmd)
{
	for (size_t i = 0; i < NHANDLERS; i++)
		if (handlers[i].cmd == cmd)
			return handlers[i].fn;
	return NULL;
}

int zk_ioctl_table_check(void)
{
	int bad = 0;
	for (size_t i = 0; i < ZESIM_NR_IOCTLS; i++)
		if (!handler_of(zesim_ioctls[i].cmd)) {
			fprintf(stderr, "zesim KMD: ioctl %s has no handler\n", zesim_ioctls[i].name);
			bad = 1;
		}
	for (size_t i = 0; i < NHANDLERS; i++)
		if (!zesim_ioctl_find(handlers[i].cmd)) {
			fprintf(stderr, "zesim KMD: handler for ioctl %#lx, which is not in zesim_ioctl_table.h\n",
				handlers[i].cmd);
			bad = 1;
		}
	return bad ? -1 : 0;
}

int zk_ioctl(zk_file_t *f, unsigned long cmd, void *arg, uint32_t arg_size, const zk_blob_t *in, unsigned nin,
	     zk_out_blob_t *out, unsigned nout)
{
	if (_IOC_TYPE(cmd) != ZESIM_DRM_IOCTL_BASE)
		return -ENOTTY;
	const struct zesim_ioctl_desc *d = zesim_ioctl_find(cmd);
	if (!d)
		return -EINVAL;
	if (_IOC_SIZE(cmd) != arg_size || d->arg_size != arg_size)
		return -EINVAL;
	return handler_of(cmd)(f, arg, in, nin, out, nout);
}
