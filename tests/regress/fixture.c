/* Misbehaving Level Zero programs for the regression runner's own tests
 * (tests/regress/faults.toml, tools/regress/zesim_regress.py): each runs real
 * work on the simulated GPU and then does one thing a regression must survive.
 *
 *     regress_fixture crash MODULE        a kernel runs (vadd), then the program
 *                                          dies of SIGSEGV (a NULL store)
 *     regress_fixture kill-daemon MODULE  a kernel runs, then the program kills its
 *                                          own daemon (the peer of $ZESIM_SOCKET,
 *                                          SO_PEERCRED) and tries another kernel
 *     regress_fixture ok MODULE           a kernel runs and is checked; exit 0
 *
 * MODULE is tests/e2e/vadd.elf (kernel vadd: c[i] = a[i] + b[i] for i < n, float, SIMD16). */
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "e2e.h"

#define N 64

static void vadd_once(e2e_t *e, ze_kernel_handle_t k)
{
	float *a = e2e_alloc_shared(e, N * 4), *b = e2e_alloc_shared(e, N * 4), *c = e2e_alloc_shared(e, N * 4);
	for (uint32_t i = 0; i < N; i++) {
		a[i] = (float)i;
		b[i] = 1000.0f * (float)i;
		c[i] = -1.0f;
	}
	const uint32_t n = N;
	CHECK(zeKernelSetGroupSize(k, 16, 1, 1));
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}, {4, &n}};
	e2e_set_args(k, 4, args);
	const ze_group_count_t groups = {N / 16, 1, 1};
	CHECK(zeCommandListReset(e->list));
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
	for (uint32_t i = 0; i < N; i++)
		EXPECT(c[i] == 1001.0f * (float)i, "c[%u] = %g, expected %u", i, (double)c[i], 1001 * i);
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, c));
}

/* The pid of the process listening on $ZESIM_SOCKET. */
static pid_t daemon_pid(void)
{
	const char *path = getenv("ZESIM_SOCKET");
	EXPECT(path && strlen(path) < sizeof(((struct sockaddr_un *)0)->sun_path), "ZESIM_SOCKET is not set");
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT(s >= 0, "socket: %s", strerror(errno));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	strcpy(sa.sun_path, path);
	EXPECT(connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %s", path, strerror(errno));
	struct ucred cred;
	socklen_t len = sizeof(cred);
	EXPECT(getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0, "SO_PEERCRED: %s", strerror(errno));
	close(s);
	return cred.pid;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: regress_fixture crash|kill-daemon|ok MODULE");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[2]);
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	vadd_once(&e, k);
	if (strcmp(argv[1], "crash") == 0) {
		printf("regress_fixture: a kernel ran; now a NULL store\n");
		fflush(stdout);
		*(volatile int *)(uintptr_t)0 = 1;
		return 3; /* not reached */
	}
	if (strcmp(argv[1], "kill-daemon") == 0) {
		pid_t pid = daemon_pid();
		printf("regress_fixture: a kernel ran; killing the daemon (pid %d)\n", (int)pid);
		fflush(stdout);
		EXPECT(kill(pid, SIGKILL) == 0, "kill %d: %s", (int)pid, strerror(errno));
		vadd_once(&e, k); /* fails: the device is gone */
		return 0;
	}
	EXPECT(strcmp(argv[1], "ok") == 0, "unknown mode %s", argv[1]);
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	return 0;
}
