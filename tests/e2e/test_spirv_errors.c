/* Malformed and unsupported SPIR-V through zeModuleCreate: every case must give
 * ZE_RESULT_ERROR_MODULE_BUILD_FAILURE and a build log naming the problem, with
 * the word offset where a word is at fault, and leave the driver working.
 *
 *     test_spirv_errors KERNEL_DIR
 *
 * KERNEL_DIR holds the modules of tests/kernels (vadd.spv, unsupported_*.spv). */
#include "spirv.h"

static e2e_t e;

static uint32_t *load_words(const char *dir, const char *name, size_t *nwords)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	size_t size;
	uint8_t *b = read_file(path, &size);
	EXPECT(size % 4 == 0 && size >= 20, "%s: %zu bytes", path, size);
	*nwords = size / 4;
	return (uint32_t *)(void *)b;
}

/* Expect a failed build whose log contains every given piece of text. */
static void expect_failure(const char *what, const void *bin, size_t size, const char *want1, const char *want2)
{
	ze_module_handle_t m = NULL;
	char log[2048];
	const ze_result_t r = spirv_build(&e, ZE_MODULE_FORMAT_IL_SPIRV, bin, size, &m, log, sizeof(log));
	EXPECT(r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "%s: zeModuleCreate returned 0x%x (log: %s)", what, (unsigned)r,
	       log);
	EXPECT(strstr(log, "SPIR-V module build failed: ") == log, "%s: log \"%s\"", what, log);
	EXPECT(strstr(log, want1), "%s: log \"%s\" lacks \"%s\"", what, log, want1);
	EXPECT(!want2 || strstr(log, want2), "%s: log \"%s\" lacks \"%s\"", what, log, want2);
	note("%s: %s", what, log);
}

/* Word offset of the first instruction with the given opcode (after the header). */
static uint32_t find_op(const uint32_t *w, size_t n, uint32_t opcode, uint32_t operand1)
{
	for (size_t i = 5; i < n && (w[i] >> 16); i += w[i] >> 16)
		if ((w[i] & 0xffff) == opcode && (operand1 == UINT32_MAX || ((w[i] >> 16) > 1 && w[i + 1] == operand1)))
			return (uint32_t)i;
	EXPECT(0, "no instruction with opcode %u", opcode);
	return 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_errors KERNEL_DIR");
	const char *dir = argv[1];
	e2e_init(&e);
	size_t n;
	uint32_t *good = load_words(dir, "vadd.spv", &n);
	uint32_t *w = malloc(n * 4 + 64);
	char want[128];

	/* ---- malformed binaries ---- */
	expect_failure("short header", good, 12, "word 3: truncated header", NULL);
	expect_failure("size not a multiple of 4", good, n * 4 - 3, "not a whole number of 32-bit words", NULL);
	memcpy(w, good, n * 4);
	w[0] = 0x12345678;
	expect_failure("bad magic", w, n * 4, "word 0: bad magic number 0x12345678", NULL);
	memcpy(w, good, n * 4);
	w[1] = 0x00020000;
	expect_failure("version 2.0", w, n * 4, "word 1: SPIR-V version word 0x00020000", NULL);
	memcpy(w, good, n * 4);
	w[3] = 0;
	expect_failure("bound 0", w, n * 4, "word 3: id bound 0", NULL);
	memcpy(w, good, n * 4);
	w[4] = 1;
	expect_failure("schema", w, n * 4, "word 4: reserved schema word", NULL);
	/* Truncated in the middle of the last function: the instruction that
	 * runs past the end is named with its word. */
	uint32_t last = 5;
	for (uint32_t i = 5; i < n; i += good[i] >> 16)
		if ((good[i] >> 16) > 1)
			last = i;
	snprintf(want, sizeof(want), "word %u: ", last);
	expect_failure("truncated", good, (last + 1) * 4, want, "past the end of the module");
	/* A word count of zero. */
	memcpy(w, good, n * 4);
	const uint32_t fadd = find_op(good, n, 129 /* OpFAdd */, UINT32_MAX);
	w[fadd] &= 0xffff;
	snprintf(want, sizeof(want), "word %u: instruction word count is 0", fadd);
	expect_failure("word count 0", w, n * 4, want, NULL);
	/* An unknown opcode. */
	memcpy(w, good, n * 4);
	w[fadd] = (w[fadd] & 0xffff0000u) | 30000u;
	snprintf(want, sizeof(want), "word %u: unknown opcode 30000", fadd);
	expect_failure("unknown opcode", w, n * 4, want, NULL);
	/* An operand id past the bound, and one that is never defined. */
	memcpy(w, good, n * 4);
	w[fadd + 3] = good[3] + 5;
	snprintf(want, sizeof(want), "word %u: OpFAdd: id %u out of range", fadd + 3, good[3] + 5);
	expect_failure("id out of range", w, n * 4, want, NULL);
	memcpy(w, good, n * 4);
	w[3] = good[3] + 10;
	w[fadd + 3] = good[3] + 5;
	snprintf(want, sizeof(want), "word %u: OpFAdd: id %%%u is never defined", fadd + 3, good[3] + 5);
	expect_failure("undefined id", w, n * 4, want, NULL);
	/* An instruction with an operand missing (OpFAdd without its second source). */
	memcpy(w, good, n * 4);
	w[fadd] = (4u << 16) | 129u;
	w[fadd + 4] = (1u << 16) | 0u; /* the freed word becomes an OpNop */
	snprintf(want, sizeof(want), "word %u: OpFAdd: missing operand", fadd);
	expect_failure("missing operand", w, n * 4, want, NULL);
	/* A header-only module has nothing to build. */
	expect_failure("header only", good, 20, "no OpMemoryModel", NULL);

	/* ---- unsupported capabilities (patched into a good module) ---- */
	const uint32_t cap = find_op(good, n, 17 /* OpCapability */, 11 /* Int64 */);
	memcpy(w, good, n * 4);
	w[cap + 1] = 9; /* Float16 (Float64 is accepted: doubles are refused where they occur) */
	snprintf(want, sizeof(want), "word %u: capability Float16 is not supported", cap);
	expect_failure("Float16", w, n * 4, want, "fp16");
	w[cap + 1] = 13; /* ImageBasic */
	snprintf(want, sizeof(want), "word %u: capability ImageBasic is not supported", cap);
	expect_failure("ImageBasic", w, n * 4, want, "no images");
	w[cap + 1] = 1; /* Shader */
	expect_failure("Shader", w, n * 4, "capability Shader is not supported", NULL);

	/* ---- what the front end does not translate (compiled from OpenCL C) ---- */
	static const struct {
		const char *file, *want1, *want2;
	} unsupported[] = {
		{"unsupported_big_private.spv", "private variable", "at most 256 bytes per variable"},
		{"unsupported_double.spv", "64-bit floating-point values (double) are not supported", "no fp64"},
		{"unsupported_half.spv", "capability Float16Buffer is not supported", "word "},
		{"unsupported_image.spv", "capability ImageBasic is not supported", "no images"},
	};
	for (size_t i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		size_t un;
		uint32_t *u = load_words(dir, unsupported[i].file, &un);
		expect_failure(unsupported[i].file, u, un * 4, unsupported[i].want1, unsupported[i].want2);
		free(u);
	}

	/* ---- reqd_work_group_size (LocalSize) out of range, or more than the
	 * device runs in one group ---- */
	size_t bn;
	uint32_t *bw = load_words(dir, "builtins.spv", &bn);
	size_t ls = 0;
	for (size_t i = 5; i < bn && (bw[i] >> 16) && !ls; i += bw[i] >> 16)
		if ((bw[i] & 0xffff) == 16 /* OpExecutionMode */ && (bw[i] >> 16) == 6 && bw[i + 2] == 17 /* LocalSize */)
			ls = i;
	EXPECT(ls && bw[ls + 3] == 8 && bw[ls + 4] == 4 && bw[ls + 5] == 1, "builtins.spv: no LocalSize 8 4 1");
	bw[ls + 4] = 0;
	expect_failure("LocalSize 8 0 1", bw, bn * 4, "kernel \"reqd\" requires group size 8x0x1 (LocalSize)",
		       "each must be at least 1");
	bw[ls + 3] = 1024, bw[ls + 4] = 128;
	expect_failure("LocalSize 1024 128 1", bw, bn * 4, "requires group size 1024x128x1",
		       "the product at most 65536");
	bw[ls + 3] = 256, bw[ls + 4] = 256; /* 65536 work items: more than any device preset here */
	{
		ze_module_handle_t mr = NULL;
		char rlog[1024];
		const ze_result_t r = spirv_build(&e, ZE_MODULE_FORMAT_IL_SPIRV, bw, bn * 4, &mr, rlog, sizeof(rlog));
		EXPECT(r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE &&
			       strstr(rlog, "kernel reqd requires group size 256x256x1; the device runs at most "),
		       "LocalSize 256 256 1: zeModuleCreate returned 0x%x, log \"%s\"", (unsigned)r, rlog);
		note("LocalSize 256 256 1: %s", rlog);
	}
	free(bw);

	/* ---- the driver still builds and runs good modules ---- */
	ze_module_handle_t m;
	char log[256];
	CHECK(spirv_build(&e, ZE_MODULE_FORMAT_IL_SPIRV, good, n * 4, &m, log, sizeof(log)));
	EXPECT(log[0] == '\0', "log of a good module: %s", log);
	/* Byte-swapped SPIR-V is SPIR-V too. */
	for (size_t i = 0; i < n; i++)
		w[i] = __builtin_bswap32(good[i]);
	ze_module_handle_t m2;
	CHECK(spirv_build(&e, ZE_MODULE_FORMAT_IL_SPIRV, w, n * 4, &m2, log, sizeof(log)));
	CHECK(zeModuleDestroy(m2));
	ze_kernel_handle_t k = e2e_kernel(m, "vadd");
	float *a = e2e_alloc_shared(&e, 64 * 4), *b = e2e_alloc_shared(&e, 64 * 4), *c = e2e_alloc_shared(&e, 64 * 4);
	for (int i = 0; i < 64; i++) {
		a[i] = (float)i;
		b[i] = (float)(2 * i);
	}
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}};
	e2e_set_args(k, 3, args);
	CHECK(zeKernelSetGroupSize(k, 16, 1, 1));
	ze_group_count_t groups = {4, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	for (int i = 0; i < 64; i++)
		EXPECT(c[i] == (float)(3 * i), "c[%d] = %g", i, (double)c[i]);
	CHECK(zeMemFree(e.ctx, a));
	CHECK(zeMemFree(e.ctx, b));
	CHECK(zeMemFree(e.ctx, c));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	free(w);
	free(good);
	e2e_fini(&e);
	return 0;
}
