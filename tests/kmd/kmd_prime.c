/* PRIME (docs/uapi.md §4, docs/kmd.md §3) on the KMD with the fake hardware
 * interface, two DRM files in one process (the daemon's view: fds are its own).
 * File A makes an object and exports it; file B imports it (twice: one handle),
 * cannot mmap it by offset, binds it; A closes — B keeps the object, which is
 * then charged to no file; B's last reference frees it and its fd imports nothing.
 * The errors of both ioctls.  Built with the sanitizers: an object that outlived
 * its owner's file and still pointed at it would be a use after free here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_hw.h"
#include "kmd.h"
#include "uapi/zesim_drm.h"

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			fprintf(stderr, "kmd_prime:%d: %s: ", __LINE__, #cond);                                       \
			fprintf(stderr, __VA_ARGS__);                                                                 \
			fprintf(stderr, "\n");                                                                        \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

static int io(zk_file_t *f, unsigned long cmd, void *arg)
{
	return zk_ioctl(f, cmd, arg, (uint32_t)_IOC_SIZE(cmd), NULL, 0, NULL, 0);
}

static uint32_t live_bos(zk_kmd_t *k)
{
	zk_stats_t st;
	zk_get_stats(k, &st);
	return st.bos;
}

int main(void)
{
	zs_hw_t *hw = fake_hw_create(64ull << 20);
	zk_kmd_t *k = zk_create(hw);
	EXPECT(k, "zk_create refused the fake device");
	zk_file_t *a = zk_open(k, 1), *b = zk_open(k, 2);

	struct drm_zesim_gem_create g = {.size = 65536, .placement = 1};
	EXPECT(io(a, DRM_IOCTL_ZESIM_GEM_CREATE, &g) == 0, "GEM_CREATE");
	struct drm_zesim_prime_handle p = {.handle = g.handle, .flags = ZESIM_PRIME_CLOEXEC | 1u << 5};
	EXPECT(io(a, DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, &p) == -EINVAL, "an undefined flag");
	p = (struct drm_zesim_prime_handle){.handle = g.handle + 1, .flags = ZESIM_PRIME_CLOEXEC};
	EXPECT(io(a, DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, &p) == -ENOENT, "an unknown handle");
	EXPECT(zk_prime_take_fd(k) == -1, "a failed export left an fd");
	p = (struct drm_zesim_prime_handle){.handle = g.handle, .flags = ZESIM_PRIME_CLOEXEC | ZESIM_PRIME_RDWR};
	EXPECT(io(a, DRM_IOCTL_ZESIM_PRIME_HANDLE_TO_FD, &p) == 0, "HANDLE_TO_FD");
	const int memfd = zk_prime_take_fd(k);
	EXPECT(memfd >= 0 && zk_prime_take_fd(k) == -1, "the fd is taken once (%d)", memfd);
	const int fd = dup(memfd); /* the program's copy: lives on after the object */

	/* Errors of the import. */
	struct drm_zesim_prime_handle in = {.fd = fd, .flags = 1};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == -EINVAL, "flags");
	in = (struct drm_zesim_prime_handle){.fd = -1};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == -EBADF, "fd -1");
	const int null = open("/dev/null", O_RDONLY);
	in = (struct drm_zesim_prime_handle){.fd = null};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == -EINVAL, "not a GEM object's fd");

	/* The import: one handle however often, no mmap offset. */
	in = (struct drm_zesim_prime_handle){.fd = fd};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == 0, "FD_TO_HANDLE");
	const uint32_t hb = in.handle;
	in = (struct drm_zesim_prime_handle){.fd = fd};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == 0 && in.handle == hb, "a second handle %u", in.handle);
	in = (struct drm_zesim_prime_handle){.fd = fd};
	EXPECT(io(a, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == 0 && in.handle == g.handle,
	       "the exporter's own import gave %u, not its handle %u", in.handle, g.handle);
	struct drm_zesim_gem_mmap_offset mo = {.handle = hb};
	EXPECT(io(b, DRM_IOCTL_ZESIM_GEM_MMAP_OFFSET, &mo) == -EINVAL, "an imported handle has no mmap offset");
	struct drm_zesim_vm_create vc = {0};
	EXPECT(io(b, DRM_IOCTL_ZESIM_VM_CREATE, &vc) == 0, "VM_CREATE");
	struct drm_zesim_vm_bind vb = {.vm_id = vc.vm_id, .num_binds = 1};
	vb.bind = (struct drm_zesim_vm_bind_op){.obj = hb, .range = 65536, .addr = 0x100000, .op = ZESIM_VM_BIND_OP_MAP};
	EXPECT(io(b, DRM_IOCTL_ZESIM_VM_BIND, &vb) == 0, "VM_BIND of the imported object");

	/* The exporter's file closes: the object stays, B can still use it. */
	zk_close(a);
	EXPECT(live_bos(k) == 1, "%u objects after the exporter closed", live_bos(k));
	in = (struct drm_zesim_prime_handle){.fd = fd};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == 0 && in.handle == hb, "re-import after the close");
	struct drm_zesim_gem_close cl = {.handle = hb};
	EXPECT(io(b, DRM_IOCTL_ZESIM_GEM_CLOSE, &cl) == 0, "GEM_CLOSE");
	EXPECT(live_bos(k) == 1, "the binding no longer holds the object");
	vb.bind = (struct drm_zesim_vm_bind_op){.range = 65536, .addr = 0x100000, .op = ZESIM_VM_BIND_OP_UNMAP};
	EXPECT(io(b, DRM_IOCTL_ZESIM_VM_BIND, &vb) == 0, "VM_BIND unmap");
	EXPECT(live_bos(k) == 0, "%u objects after the last reference", live_bos(k));

	/* Freed: its fd (the program's copy of the memfd) imports nothing. */
	in = (struct drm_zesim_prime_handle){.fd = fd};
	EXPECT(io(b, DRM_IOCTL_ZESIM_PRIME_FD_TO_HANDLE, &in) == -EINVAL, "the fd of a freed object");

	close(fd);
	close(null);
	zk_close(b);
	zk_destroy(k);
	fake_hw_destroy(hw);
	printf("kmd_prime: ok\n");
	return 0;
}
