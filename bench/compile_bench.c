/* bench/compile_bench: the two measurements of bench/compile.py.
 *
 *   compile_bench translate FILE.spv...
 *       host wall time of the driver's SPIR-V -> ZE-ISA translation
 *       (spv_compile, the function zeModuleCreate calls) per module: the
 *       fastest of repeated runs, which excludes reading the file and the
 *       module upload.  One line per module: name, kernels, instructions,
 *       microseconds; or the build-log message of a refused module.
 *
 *   compile_bench cycles MATMUL.spv HAND.elf SIZE [REPEAT]
 *       a Level Zero program (run it with `zesim run`): the naive and tiled
 *       matrix multiplies of tests/kernels/matmul.cl as the front end
 *       compiles them and as written by hand (bench/matmul.zeasm), SIZE^3,
 *       each launch timed by kernel timestamps and checked bit for bit
 *       against the host.  Prints one line per kernel with the simulated GPU
 *       cycles of the warm runs (the first run of each kernel warms the L3
 *       and is not counted), converted from timestamp ticks with the
 *       device's core clock and timer frequency. */
#include <math.h>
#include <time.h>

#include "spirv.h"
#include "spv_compile.h"

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* ---- translate ----------------------------------------------------------------- */

static void translate(const char *path)
{
	size_t size;
	uint8_t *spirv = read_file(path, &size);
	const spv_compile_options_t opt = {.max_simd = 16};
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	double best = INFINITY, total = 0;
	char err[1024];
	int rc = 0;
	uint32_t kernels = 0, insts = 0;
	/* At least 5 runs and 50 ms, at most 10000 runs. */
	for (int i = 0; i < 10000 && (i < 5 || total < 50e3); i++) {
		zm_module_t m;
		const double t0 = now_us();
		rc = spv_compile(spirv, size, &opt, &m, err, sizeof(err));
		const double dt = now_us() - t0;
		total += dt;
		best = dt < best ? dt : best;
		if (rc == SPV_OK) {
			kernels = m.nkernels;
			insts = 0;
			for (uint32_t k = 0; k < m.nkernels; k++)
				insts += m.kernels[k].text_size / 16;
			zm_module_free(&m);
		}
	}
	if (rc == SPV_OK)
		printf("%s %zu %u %u %.1f\n", base, size, kernels, insts, best);
	else
		printf("%s %zu refused %.1f %s\n", base, size, best, err);
	free(spirv);
}

/* ---- cycles -------------------------------------------------------------------- */

typedef struct variant {
	const char *label, *kernel;
	int module; /* 0 compiled, 1 hand-written, 2 compiled with -fno-unroll-loops */
	int tiled;
} variant_t;

/* The SPIR-V module built with these build flags. */
static ze_module_handle_t spirv_module_flags(e2e_t *e, const char *path, const char *flags)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, bin, flags, NULL};
	ze_module_handle_t m = NULL;
	const ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, &m, NULL);
	EXPECT(r == ZE_RESULT_SUCCESS, "zeModuleCreate(%s, \"%s\") = 0x%x", path, flags, (unsigned)r);
	free(bin);
	return m;
}

static void matmul_host(const float *a, const float *b, float *c, uint32_t n)
{
	for (uint32_t row = 0; row < n; row++)
		for (uint32_t col = 0; col < n; col++) {
			float acc = 0.0f;
			for (uint32_t i = 0; i < n; i++)
				acc = fmaf(a[row * n + i], b[i * n + col], acc);
			c[row * n + col] = acc;
		}
}

static void cycles(const char *spv, const char *hand_elf, uint32_t n, int repeat)
{
	e2e_t e;
	e2e_init(&e);
	ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
	CHECK(zeDeviceGetProperties(e.dev, &dp));
	/* timerResolution: ticks per second for the 1.2 structure. */
	const double cycles_per_tick = (double)dp.coreClockRate * 1e6 / (double)dp.timerResolution;
	ze_module_handle_t mods[3] = {spirv_module(&e, spv), e2e_module(&e, hand_elf),
				      spirv_module_flags(&e, spv, "-fno-unroll-loops")};
	ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
				   .flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
				   .count = 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 1, &e.dev, &pool));
	ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0,
			      .signal = ZE_EVENT_SCOPE_FLAG_HOST, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));

	float *a = e2e_alloc_shared(&e, (size_t)n * n * 4), *b = e2e_alloc_shared(&e, (size_t)n * n * 4);
	float *c = e2e_alloc_shared(&e, (size_t)n * n * 4), *want = malloc((size_t)n * n * 4);
	EXPECT(want != NULL, "out of memory");
	uint32_t seed = 12345;
	for (uint32_t i = 0; i < n * n; i++) {
		a[i] = (float)(int32_t)(e2e_rand(&seed) % 2001 - 1000) / 333.0f;
		b[i] = (float)(int32_t)(e2e_rand(&seed) % 2001 - 1000) / 77.0f;
	}
	matmul_host(a, b, want, n);
	printf("# %s, core %u MHz, timer %llu ticks/s (%.3g cycles per tick), %ux%ux%u\n", dp.name,
	       dp.coreClockRate, (unsigned long long)dp.timerResolution, cycles_per_tick, n, n, n);
	const variant_t variants[] = {{"naive compiled", "matmul_naive", 0, 0},
				      {"naive hand", "matmul_naive_hand", 1, 0},
				      {"naive no-loop-opt", "matmul_naive", 2, 0},
				      {"tiled compiled", "matmul_tiled", 0, 1},
				      {"tiled hand", "matmul_tiled_hand", 1, 1},
				      {"tiled no-loop-opt", "matmul_tiled", 2, 1}};
	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		const variant_t *vr = &variants[v];
		ze_kernel_handle_t k = e2e_kernel(mods[vr->module], vr->kernel);
		const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}, {4, &n}, {4, &n}, {4, &n}};
		e2e_set_args(k, 6, args);
		const uint32_t gx = vr->tiled ? 8 : 16, gy = vr->tiled ? 8 : 4;
		CHECK(zeKernelSetGroupSize(k, gx, gy, 1));
		const ze_group_count_t groups = {(n + gx - 1) / gx, (n + gy - 1) / gy, 1};
		double sum = 0;
		uint64_t least = UINT64_MAX, most = 0;
		for (int r = 0; r <= repeat; r++) {
			memset(c, 0, (size_t)n * n * 4);
			CHECK(zeEventHostReset(ev));
			CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, ev, 0, NULL));
			e2e_run(&e);
			ze_kernel_timestamp_result_t ts;
			CHECK(zeEventQueryKernelTimestamp(ev, &ts));
			for (uint32_t i = 0; i < n * n; i++)
				EXPECT(float_bits(c[i]) == float_bits(want[i]), "%s: c[%u][%u] = %a, expected %a",
				       vr->kernel, i / n, i % n, (double)c[i], (double)want[i]);
			if (r == 0)
				continue; /* cold L3 */
			const uint64_t t = (uint64_t)((double)(ts.context.kernelEnd - ts.context.kernelStart) *
						      cycles_per_tick + 0.5);
			sum += (double)t;
			least = t < least ? t : least;
			most = t > most ? t : most;
		}
		printf("%s %.0f %llu %llu\n", vr->label, sum / repeat, (unsigned long long)least,
		       (unsigned long long)most);
		CHECK(zeKernelDestroy(k));
	}
	free(want);
	CHECK(zeMemFree(e.ctx, a));
	CHECK(zeMemFree(e.ctx, b));
	CHECK(zeMemFree(e.ctx, c));
	CHECK(zeEventDestroy(ev));
	CHECK(zeEventPoolDestroy(pool));
	for (int i = 0; i < 3; i++)
		CHECK(zeModuleDestroy(mods[i]));
	e2e_fini(&e);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "translate") == 0) {
		for (int i = 2; i < argc; i++)
			translate(argv[i]);
		return 0;
	}
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "cycles") == 0) {
		const int n = atoi(argv[4]), repeat = argc == 6 ? atoi(argv[5]) : 1;
		EXPECT(n >= 1 && n <= 1024 && repeat >= 1 && repeat <= 100, "SIZE 1-1024, REPEAT 1-100");
		cycles(argv[2], argv[3], (uint32_t)n, repeat);
		return 0;
	}
	fprintf(stderr, "usage: compile_bench translate FILE.spv...\n"
			"       compile_bench cycles MATMUL.spv HAND.elf SIZE [REPEAT]\n");
	return 2;
}
