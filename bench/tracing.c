/* bench/tracing: host cost per call of zeCommandListAppendLaunchKernel under the
 * driver tracer (driver/README.md "Driver tracer"), in one run:
 *   none       ZET_ENABLE_API_TRACING_EXP unset: the dispatch tables hold the
 *              driver's own functions
 *   disabled   the variable set, one tracer with callbacks, not enabled
 *   enabled    the variable set, one enabled tracer whose callbacks for the call
 *              do nothing (called, prologue and epilogue)
 *   enabled-0  the variable set, one enabled tracer with no callbacks at all
 * and the ratios to `none` (goals, issue 15: disabled <= 1.05, enabled <= 1.5).
 *
 * The variable is read once per process, so each configuration runs in a child
 * process (this program again, under the same daemon: run it with `zesim run`);
 * the configurations take turns, ROUNDS times each, and each figure is the median
 * of its rounds.  A round appends BATCH launches to a regular list BATCHES
 * times (the list reset between batches, outside the timing) and reports the
 * median time per append.
 *
 *   usage: tracing KERNEL.elf [ROUNDS [BATCHES]]        (KERNEL: vadd.elf) */
#define _GNU_SOURCE
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

#define BATCH 200

static const char *const modes[] = {"none", "disabled", "enabled", "enabled-0"};
enum { NONE, DISABLED, ENABLED, ENABLED_0, NMODES };

static void check(ze_result_t r, const char *what)
{
	if (r != ZE_RESULT_SUCCESS) {
		fprintf(stderr, "tracing: %s returned %#x\n", what, (unsigned)r);
		exit(1);
	}
}
#define CHECK(call) check((call), #call)

static void ZE_APICALL empty_cb(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r, void *user,
				void **inst)
{
	(void)p, (void)r, (void)user, (void)inst;
}

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* One configuration: prints the median ns per append. */
static int child(int mode, const char *elf, int batches)
{
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	CHECK(zeDriverGet(&n, &drv));
	n = 1;
	CHECK(zeDeviceGet(drv, &n, &dev));
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	ze_context_handle_t ctx;
	CHECK(zeContextCreate(drv, &cd, &ctx));
	size_t size;
	unsigned char *bin = read_file(elf, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, size, bin, "", NULL};
	ze_module_handle_t m;
	CHECK(zeModuleCreate(ctx, dev, &md, &m, NULL));
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "vadd"};
	ze_kernel_handle_t k;
	CHECK(zeKernelCreate(m, &kd, &k));
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	void *buf;
	CHECK(zeMemAllocDevice(ctx, &dd, 4096, 64, dev, &buf));
	const uint32_t count = 1024;
	CHECK(zeKernelSetGroupSize(k, 64, 1, 1));
	for (uint32_t i = 0; i < 3; i++)
		CHECK(zeKernelSetArgumentValue(k, i, 8, &buf));
	CHECK(zeKernelSetArgumentValue(k, 3, 4, &count));
	ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
	ze_command_list_handle_t list;
	CHECK(zeCommandListCreate(ctx, dev, &ld, &list));

	zet_tracer_exp_handle_t tracer = NULL;
	static int user;
	if (mode != NONE) {
		zet_tracer_exp_desc_t td = {ZET_STRUCTURE_TYPE_TRACER_EXP_DESC, NULL, &user};
		CHECK(zetTracerExpCreate(ctx, &td, &tracer));
		zet_core_callbacks_t cbs = {0};
		if (mode != ENABLED_0)
			cbs.CommandList.pfnAppendLaunchKernelCb = empty_cb;
		CHECK(zetTracerExpSetPrologues(tracer, &cbs));
		CHECK(zetTracerExpSetEpilogues(tracer, &cbs));
		if (mode != DISABLED)
			CHECK(zetTracerExpSetEnabled(tracer, 1));
	}

	const ze_group_count_t groups = {count / 64, 1, 1};
	double *per_call = malloc((size_t)batches * sizeof(double));
	for (int b = -2; b < batches; b++) { /* two warm-up batches */
		double t0 = bench_now_ns();
		for (int i = 0; i < BATCH; i++)
			CHECK(zeCommandListAppendLaunchKernel(list, k, &groups, NULL, 0, NULL));
		double t1 = bench_now_ns();
		CHECK(zeCommandListReset(list));
		if (b >= 0)
			per_call[b] = (t1 - t0) / BATCH;
	}
	printf("%.2f\n", bench_median(per_call, batches));

	if (tracer) {
		CHECK(zetTracerExpSetEnabled(tracer, 0));
		CHECK(zetTracerExpDestroy(tracer));
	}
	CHECK(zeCommandListDestroy(list));
	CHECK(zeMemFree(ctx, buf));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	CHECK(zeContextDestroy(ctx));
	free(per_call);
	free(bin);
	return 0;
}

/* Runs one configuration in a child and returns its figure. */
static double run_child(const char *self, int mode, const char *elf, const char *batches)
{
	int fds[2];
	if (pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (mode == NONE)
			unsetenv("ZET_ENABLE_API_TRACING_EXP");
		else
			setenv("ZET_ENABLE_API_TRACING_EXP", "1", 1);
		char m[4];
		snprintf(m, sizeof(m), "%d", mode);
		execl(self, self, "--child", m, elf, batches, (char *)NULL);
		perror(self);
		_exit(127);
	}
	close(fds[1]);
	char out[64] = "";
	ssize_t got = read(fds[0], out, sizeof(out) - 1);
	close(fds[0]);
	int status;
	waitpid(pid, &status, 0);
	if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "tracing: the %s run failed\n", modes[mode]);
		exit(1);
	}
	return atof(out);
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--child") == 0)
		return child(atoi(argv[2]), argv[3], atoi(argv[4]));
	if (argc < 2 || argc > 4) {
		fprintf(stderr, "usage: tracing KERNEL.elf [ROUNDS [BATCHES]]\n");
		return 2;
	}
	const int rounds = argc > 2 ? atoi(argv[2]) : 7;
	const char *batches = argc > 3 ? argv[3] : "50";
	if (rounds < 1 || atoi(batches) < 1) {
		fprintf(stderr, "tracing: ROUNDS and BATCHES must be at least 1\n");
		return 2;
	}
	double *fig[NMODES];
	for (int m = 0; m < NMODES; m++)
		fig[m] = malloc((size_t)rounds * sizeof(double));
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < NMODES; m++)
			fig[m][r] = run_child("/proc/self/exe", m, argv[1], batches);
	double med[NMODES];
	for (int m = 0; m < NMODES; m++)
		med[m] = bench_median(fig[m], rounds);
	printf("zeCommandListAppendLaunchKernel, host ns per call (median of %d rounds x %s batches of %d):\n", rounds,
	       batches, BATCH);
	printf("  %-10s %9s %7s\n", "tracer", "ns/call", "ratio");
	for (int m = 0; m < NMODES; m++)
		printf("  %-10s %9.1f %6.3fx\n", modes[m], med[m], med[m] / med[NONE]);
	printf("goals: disabled <= 1.05x (%s), enabled <= 1.5x (%s)\n",
	       med[DISABLED] / med[NONE] <= 1.05 ? "met" : "missed", med[ENABLED] / med[NONE] <= 1.5 ? "met" : "missed");
	for (int m = 0; m < NMODES; m++)
		free(fig[m]);
	return 0;
}
