/* The OpenCL.std functions the SPIR-V front end computes by code sequences
 * (driver/spirv/spv_math.c) on the simulated GPU: tests/kernels/math.cl has a
 * kernel per function, run here over special values, every binade boundary
 * and random inputs (tests/e2e/spirv_math_ref.h); each result is checked
 * against the host: within OpenCL's ulp bound of glibc's double-precision
 * result, or bit for bit for the exact and the integer functions.  Prints the
 * worst error seen per function (in ulps).
 *
 * With E2E_DUMP set (the e2e_spirv_math_vs_iss test, vs_iss.py) every kernel
 * runs on a sample of 64 of its inputs and the launches are dumped, with the
 * module's native binary, for the bit-for-bit check against the Python ISS.
 *
 *     test_spirv_math KERNEL_DIR */
#include <math.h>

#include "spirv.h"
#include "spirv_math_ref.h"

#define GROUP 64

typedef struct bufs {
	uint32_t *in[3], *out;
	uint32_t n;
} bufs_t;

static char native_path[4200];

/* The module's native binary in the dump directory, for iss_check.py. */
static void save_native(ze_module_handle_t m, const char *dir)
{
	size_t size = 0;
	CHECK(zeModuleGetNativeBinary(m, &size, NULL));
	uint8_t *bin = malloc(size);
	EXPECT(bin != NULL, "out of memory");
	CHECK(zeModuleGetNativeBinary(m, &size, bin));
	snprintf(native_path, sizeof(native_path), "%s/math.elf", dir);
	FILE *f = fopen(native_path, "wb");
	EXPECT(f && fwrite(bin, 1, size, f) == size && fclose(f) == 0, "cannot write %s", native_path);
	free(bin);
}

static void launch(e2e_t *e, ze_module_handle_t m, const char *kernel, const bufs_t *b, uint32_t items, uint32_t nbuf)
{
	ze_kernel_handle_t k = e2e_kernel(m, kernel);
	const e2e_arg_t args[4] = {{8, &b->in[0]}, {8, &b->in[1]}, {8, &b->in[2]}, {8, &b->out}};
	const uint32_t nargs = nbuf == 4 ? 4 : 3;
	const e2e_arg_t vargs[3] = {{8, &b->in[0]}, {8, &b->in[1]}, {8, &b->out}};
	e2e_set_args(k, nargs, nargs == 4 ? args : vargs);
	CHECK(zeKernelSetGroupSize(k, GROUP, 1, 1));
	ze_group_count_t groups = {items / GROUP, 1, 1};
	const e2e_buffer_t dump[4] = {{b->in[0], b->n * 4, E2E_BYTES}, {b->in[1], b->n * 4, E2E_BYTES},
				      {b->in[2], b->n * 4, E2E_BYTES}, {b->out, b->n * 4, E2E_BYTES}};
	const e2e_buffer_t vdump[3] = {dump[0], dump[1], dump[3]};
	e2e_dump_launch(e, native_path, kernel, &groups, GROUP, 1, 1, nargs, nargs == 4 ? args : vargs, nargs,
			nargs == 4 ? dump : vdump);
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &groups, NULL, 0, NULL));
	e2e_run(e);
	e2e_dump_results();
	CHECK(zeKernelDestroy(k));
}

/* One result against the reference; returns its error (ulps, 0 when exact). */
static double check(const mref_fn_t *f, const uint32_t *in, uint32_t got)
{
	double d;
	uint32_t bits;
	mref_eval(f, in, &d, &bits);
	if (!mref_tested(f, in, d))
		return 0;
	const double err = mref_error(f, got, d, bits);
	const double bound = f->ulp > 0 ? f->ulp : 0;
	EXPECT(err <= bound, "%s(%#x, %#x, %#x) = %#x (%.9g); expected %.9g (%#x)%s, error %g ulp", f->name, in[0],
	       in[1], in[2], got, (double)mref_f(got), f->ulp == MREF_BITS || f->ulp == MREF_EXACT ? (double)mref_f(bits) : d,
	       bits, f->ulp > 0 ? " within the bound" : " exactly", err);
	return err;
}

/* Every function: its kernel on n inputs (n a multiple of GROUP), or on a
 * sample of 64 of them when dumping for the ISS. */
static void functions(e2e_t *e, ze_module_handle_t m, const bufs_t *b, uint32_t n, int sample)
{
	uint32_t *full[3];
	for (int j = 0; j < 3; j++) {
		full[j] = calloc(n, 4);
		EXPECT(full[j] != NULL, "out of memory");
	}
	char line[256] = "";
	size_t len = 0;
	for (size_t fi = 0; fi < MREF_NFNS; fi++) {
		const mref_fn_t *f = &MREF_FNS[fi];
		mref_inputs(f, n, 1 + (uint32_t)fi, full);
		const uint32_t items = sample ? 64 : n;
		for (uint32_t i = 0; i < items; i++)
			for (int j = 0; j < 3; j++)
				b->in[j][i] = full[j][sample ? i * (n / 64) + (uint32_t)fi % (n / 64) : i];
		memset(b->out, 0xa5, (size_t)b->n * 4);
		char kernel[64];
		snprintf(kernel, sizeof(kernel), "k_%s", f->name);
		launch(e, m, kernel, b, items, 4);
		double worst = 0;
		for (uint32_t i = 0; i < items; i++) {
			const uint32_t in[3] = {b->in[0][i], b->in[1][i], b->in[2][i]};
			const double err = check(f, in, b->out[i]);
			worst = err > worst ? err : worst;
		}
		for (uint32_t i = items; i < b->n; i++)
			EXPECT(b->out[i] == 0xa5a5a5a5u, "%s: item %u written beyond the launch", f->name, i);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s %.2f", len ? ", " : "", f->name, worst);
		if (len > 80 || fi + 1 == MREF_NFNS) {
			note("  %s", line);
			len = 0;
			line[0] = '\0';
		}
	}
	if (len)
		note("  %s", line);
	for (int j = 0; j < 3; j++)
		free(full[j]);
}

/* k_vec: float4 sin, pow, fmod and a uint4 clz, component by component. */
static void vectors(e2e_t *e, ze_module_handle_t m, const bufs_t *b)
{
	const uint32_t items = 64;
	uint32_t seed = 4242;
	for (uint32_t i = 0; i < items * 4; i++) {
		b->in[0][i] = i % 3 ? mref_random(MD_ANY, &seed) : mref_random(MD_SMALL, &seed);
		b->in[1][i] = mref_random(MD_SMALL, &seed);
	}
	launch(e, m, "k_vec", b, items, 3);
	static const uint32_t ops[4] = {OpenCLstd_Sin, OpenCLstd_Pow, OpenCLstd_Fmod, OpenCLstd_Clz};
	for (uint32_t i = 0; i < items; i++)
		for (uint32_t r = 0; r < 4; r++) {
			const mref_fn_t *f = NULL;
			for (size_t fi = 0; fi < MREF_NFNS; fi++)
				if (MREF_FNS[fi].op == ops[r])
					f = &MREF_FNS[fi];
			for (uint32_t k = 0; k < 4; k++) {
				const uint32_t in[3] = {b->in[0][4 * i + k], b->in[1][4 * i + k], 0};
				check(f, in, b->out[16 * i + 4 * r + k]);
			}
		}
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_math KERNEL_DIR");
	e2e_t e;
	e2e_init(&e);
	char path[4096];
	snprintf(path, sizeof(path), "%s/math.spv", argv[1]);
	ze_module_handle_t m = spirv_module(&e, path);
	const char *dump = e2e_dump_dir();
	if (dump)
		save_native(m, dump);
	const uint32_t n = 16384;
	bufs_t b = {.n = n};
	for (int j = 0; j < 3; j++)
		b.in[j] = e2e_alloc_shared(&e, n * 4);
	b.out = e2e_alloc_shared(&e, n * 4);
	note("math: worst error per function, in ulps (0 = exact)");
	functions(&e, m, &b, n, dump != NULL);
	vectors(&e, m, &b);
	for (int j = 0; j < 3; j++)
		CHECK(zeMemFree(e.ctx, b.in[j]));
	CHECK(zeMemFree(e.ctx, b.out));
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	return 0;
}
