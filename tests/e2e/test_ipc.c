/* IPC memory and event pools between two processes (issue 16, item 5;
 * driver/README.md "IPC").  argv[1]: misc.elf (the kernel `poke`).
 *
 * The parent (exporter) allocates device memory and writes it, makes an IPC
 * event pool, signals its event 1, and sends both handles over a socketpair:
 * the PRIME fd each handle starts with travels with SCM_RIGHTS, as with Intel's
 * driver, and the receiver puts the fd number it got in place of the sender's.
 * The child (importer, its own DRM file) opens them, reads the data with a GPU
 * copy, writes back with a fill and a kernel; the parent sees the writes.  Event 0
 * signalled by the parent's host is seen by the child's wait; event 2 signalled by
 * the child's GPU is seen by the parent's.  Errors: a handle with no fd or garbage,
 * closing twice, closing what was not opened, a handle of a freed allocation. */
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

#define N 1024u /* words of the shared buffer */

/* One message: `len` bytes and optionally one fd. */
static void send_msg(int s, const void *buf, size_t len, int fd)
{
	struct iovec iov = {(void *)buf, len};
	char ctrl[CMSG_SPACE(sizeof(int))];
	memset(ctrl, 0, sizeof(ctrl));
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		mh.msg_control = ctrl;
		mh.msg_controllen = sizeof(ctrl);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	EXPECT(sendmsg(s, &mh, 0) == (ssize_t)len, "sendmsg failed");
}

/* Receives one message of exactly `len` bytes; returns the fd that came with it, or -1. */
static int recv_msg(int s, void *buf, size_t len)
{
	struct iovec iov = {buf, len};
	char ctrl[CMSG_SPACE(sizeof(int))];
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl, .msg_controllen = sizeof(ctrl)};
	EXPECT(recvmsg(s, &mh, MSG_WAITALL) == (ssize_t)len, "recvmsg: short message");
	int fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The way a program passes a handle: its first int is the fd. */
static void send_handle(int s, const void *handle, size_t size)
{
	int fd;
	memcpy(&fd, handle, sizeof(fd));
	send_msg(s, handle, size, fd);
}

static void recv_handle(int s, void *handle, size_t size)
{
	const int fd = recv_msg(s, handle, size);
	EXPECT(fd >= 0, "no fd came with the handle");
	memcpy(handle, &fd, sizeof(fd));
}

static void step(int s, char want)
{
	char c = 0;
	EXPECT(recv_msg(s, &c, 1) < 0 && c == want, "protocol: got '%c', want '%c'", c, want);
}

static void tell(int s, char c) { send_msg(s, &c, 1, -1); }

static ze_event_handle_t event_at(ze_event_pool_handle_t pool, uint32_t index)
{
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = index,
			      .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));
	return ev;
}

static int exporter(int s)
{
	e2e_t e;
	e2e_init(&e);
	uint32_t *buf = e2e_alloc_device(&e, N * 4);
	uint32_t *host = e2e_alloc_shared(&e, N * 4);
	for (uint32_t i = 0; i < N; i++)
		host[i] = i * 3 + 1;
	CHECK(zeCommandListAppendMemoryCopy(e.list, buf, host, N * 4, NULL, 0, NULL));
	e2e_run(&e);

	ze_ipc_mem_handle_t mh;
	CHECK(zeMemGetIpcHandle(e.ctx, buf, &mh));
	ze_ipc_mem_handle_t again;
	CHECK(zeMemGetIpcHandle(e.ctx, buf, &again));
	EXPECT(memcmp(&mh, &again, sizeof(mh)) == 0, "two handles of one allocation differ");
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemGetIpcHandle(e.ctx, buf + 1, &again));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemGetIpcHandle(e.ctx, &again, &again));

	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC, .count = 4};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &pool));
	ze_event_handle_t ev0 = event_at(pool, 0), ev1 = event_at(pool, 1), ev2 = event_at(pool, 2);
	CHECK(zeEventHostSignal(ev1)); /* before the child opens the pool */
	ze_ipc_event_pool_handle_t ph;
	CHECK(zeEventPoolGetIpcHandle(pool, &ph));
	ze_event_pool_handle_t local;
	pd.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 0, NULL, &local));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventPoolGetIpcHandle(local, &ph));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventPoolCloseIpcHandle(local));
	CHECK(zeEventPoolDestroy(local));
	CHECK(zeEventPoolGetIpcHandle(pool, &ph));

	send_handle(s, &mh, sizeof(mh));
	send_handle(s, &ph, sizeof(ph));

	/* The child read and wrote: words 16-31 filled with 0x5a5a5a5a, 64-71 = 7 by its kernel. */
	step(s, 'w');
	CHECK(zeCommandListAppendMemoryCopy(e.list, host, buf, N * 4, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < N; i++) {
		const uint32_t want = i >= 16 && i < 32 ? 0x5a5a5a5au : i >= 64 && i < 72 ? 7u : i * 3 + 1;
		EXPECT(host[i] == want, "word %u = 0x%x after the child's writes, want 0x%x", i, host[i], want);
	}

	/* Event 0: the parent's host signal ends the child's wait. */
	step(s, 'e');
	CHECK(zeEventHostSignal(ev0));
	/* Event 2: the child's GPU signals it; the parent's wait sees it. */
	CHECK(zeEventHostSynchronize(ev2, 20000000000ull));
	step(s, 's');

	/* A handle whose allocation is freed before the child opens it. */
	uint32_t *gone = e2e_alloc_device(&e, 4096);
	ze_ipc_mem_handle_t gh;
	CHECK(zeMemGetIpcHandle(e.ctx, gone, &gh));
	send_handle(s, &gh, sizeof(gh));
	CHECK(zeMemFree(e.ctx, gone));
	tell(s, 'f');
	step(s, 'd');

	CHECK(zeEventDestroy(ev0));
	CHECK(zeEventDestroy(ev1));
	CHECK(zeEventDestroy(ev2));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeMemFree(e.ctx, buf));
	CHECK(zeMemFree(e.ctx, host));
	e2e_fini(&e);
	return 0;
}

static int importer(int s, const char *elf)
{
	e2e_t e;
	e2e_init(&e);
	ze_ipc_mem_handle_t mh;
	ze_ipc_event_pool_handle_t ph;
	recv_handle(s, &mh, sizeof(mh));
	recv_handle(s, &ph, sizeof(ph));
	int mfd, pfd;
	memcpy(&mfd, &mh, sizeof(int));
	memcpy(&pfd, &ph, sizeof(int));

	/* Garbage and fd-less handles. */
	ze_ipc_mem_handle_t bad;
	memset(&bad, 0x5a, sizeof(bad));
	void *p;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemOpenIpcHandle(e.ctx, e.dev, bad, 0, &p));
	bad = mh;
	const int not_fd = 1 << 20;
	memcpy(&bad, &not_fd, sizeof(int));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemOpenIpcHandle(e.ctx, e.dev, bad, 0, &p));
	bad = mh;
	const int not_gem = 0; /* stdin: an fd, but no GEM object's */
	memcpy(&bad, &not_gem, sizeof(int));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemOpenIpcHandle(e.ctx, e.dev, bad, 0, &p));

	uint32_t *buf;
	CHECK(zeMemOpenIpcHandle(e.ctx, e.dev, mh, 0, (void **)&buf));
	close(mfd); /* the mapping does not need it */
	ze_memory_allocation_properties_t ap = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
	CHECK(zeMemGetAllocProperties(e.ctx, buf, &ap, NULL));
	EXPECT(ap.type == ZE_MEMORY_TYPE_DEVICE, "opened memory has type %d", (int)ap.type);

	/* Read with a GPU copy into an allocation of this process. */
	uint32_t *host = e2e_alloc_shared(&e, N * 4);
	CHECK(zeCommandListAppendMemoryCopy(e.list, host, buf, N * 4, NULL, 0, NULL));
	e2e_run(&e);
	for (uint32_t i = 0; i < N; i++)
		EXPECT(host[i] == i * 3 + 1, "word %u = 0x%x in the importer, want 0x%x", i, host[i], i * 3 + 1);
	/* Write back: a fill and a kernel, through this process's GPU mapping. */
	const uint32_t pattern = 0x5a5a5a5au;
	CHECK(zeCommandListAppendMemoryFill(e.list, buf + 16, &pattern, 4, 16 * 4, NULL, 0, NULL));
	ze_module_handle_t m = e2e_module(&e, elf);
	ze_kernel_handle_t poke = e2e_kernel(m, "poke");
	CHECK(zeKernelSetGroupSize(poke, 8, 1, 1));
	uint32_t *at = buf + 64;
	CHECK(zeKernelSetArgumentValue(poke, 0, sizeof(at), &at));
	const ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, poke, &one, NULL, 0, NULL));
	e2e_run(&e);
	tell(s, 'w');

	/* Events. */
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolOpenIpcHandle(e.ctx, ph, &pool));
	close(pfd);
	ze_event_handle_t ev0 = event_at(pool, 0), ev1 = event_at(pool, 1), ev2 = event_at(pool, 2);
	CHECK(zeEventQueryStatus(ev1)); /* signalled by the parent before the open */
	CHECK_RESULT(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev0));
	tell(s, 'e');
	CHECK(zeEventHostSynchronize(ev0, 20000000000ull));
	CHECK(zeCommandListAppendSignalEvent(e.list, ev2));
	e2e_run(&e);
	tell(s, 's');

	/* Closing: once, only what was opened. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemCloseIpcHandle(e.ctx, host));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemCloseIpcHandle(e.ctx, buf + 1));
	CHECK(zeMemCloseIpcHandle(e.ctx, buf));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemCloseIpcHandle(e.ctx, buf));
	CHECK(zeEventDestroy(ev0));
	CHECK(zeEventDestroy(ev1));
	CHECK(zeEventDestroy(ev2));
	CHECK(zeEventPoolCloseIpcHandle(pool));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventPoolCloseIpcHandle(pool));

	/* A handle of an allocation freed before the open. */
	ze_ipc_mem_handle_t gh;
	recv_handle(s, &gh, sizeof(gh));
	step(s, 'f');
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemOpenIpcHandle(e.ctx, e.dev, gh, 0, &p));
	int gfd;
	memcpy(&gfd, &gh, sizeof(int));
	close(gfd);
	tell(s, 'd');

	CHECK(zeKernelDestroy(poke));
	CHECK(zeModuleDestroy(m));
	CHECK(zeMemFree(e.ctx, host));
	e2e_fini(&e);
	return 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_ipc misc.elf");
	int sv[2];
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(stdout);
	/* Fork before zeInit: each process opens the device itself. */
	const pid_t child = fork();
	EXPECT(child >= 0, "fork");
	if (child == 0) {
		close(sv[0]);
		exit(importer(sv[1], argv[1]));
	}
	close(sv[1]);
	const int rc = exporter(sv[0]);
	int status = 0;
	EXPECT(waitpid(child, &status, 0) == child, "waitpid");
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the importer failed (status 0x%x)", status);
	note("ipc: ok");
	return rc;
}
