/* zeModuleDynamicLink on SPIR-V modules that import functions from each other
 * (tests/kernels/link_*.cl): link_main imports from link_lib, which imports
 * from link_lib2 (no kernels), which imports main_bias back from link_main.
 * Kernels cannot be created before the link; unresolved, mismatched and
 * ambiguous imports fail it with a log naming the symbol and link nothing;
 * after it the kernels compute what the host computes, linking again changes
 * nothing, each module keeps its specialization constants, and the linked
 * code no longer needs the libraries.
 *
 *     test_spirv_link KERNEL_DIR */
#include "spirv.h"

#define N 256u

static e2e_t e;

typedef struct pair {
	int32_t a;
	float b;
} pair_t;

static ze_module_handle_t load(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return spirv_module(&e, path);
}

/* A module with specialization constants. */
static ze_module_handle_t load_spec(const char *dir, const char *name, uint32_t n, const uint32_t *ids,
				    const void **values)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_constants_t sc = {n, ids, values};
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, bin, "", &sc};
	ze_module_handle_t m;
	CHECK(zeModuleCreate(e.ctx, e.dev, &md, &m, NULL));
	free(bin);
	return m;
}

/* zeModuleDynamicLink with the link log in log. */
static ze_result_t link_modules(uint32_t n, ze_module_handle_t *mods, char *log, size_t len)
{
	ze_module_build_log_handle_t bl = NULL;
	const ze_result_t r = zeModuleDynamicLink(n, mods, &bl);
	EXPECT(bl != NULL, "no link log (result 0x%x)", (unsigned)r);
	size_t size = len;
	CHECK(zeModuleBuildLogGetString(bl, &size, log));
	CHECK(zeModuleBuildLogDestroy(bl));
	return r;
}

static void expect_link_failure(const char *what, uint32_t n, ze_module_handle_t *mods, const char *want)
{
	char log[4096];
	const ze_result_t r = link_modules(n, mods, log, sizeof(log));
	EXPECT(r == ZE_RESULT_ERROR_MODULE_LINK_FAILURE, "%s: link returned 0x%x, log: %s", what, (unsigned)r, log);
	EXPECT(strstr(log, want) != NULL, "%s: the link log does not say '%s': %s", what, want, log);
}

static void expect_link(uint32_t n, ze_module_handle_t *mods)
{
	char log[4096];
	const ze_result_t r = link_modules(n, mods, log, sizeof(log));
	EXPECT(r == ZE_RESULT_SUCCESS, "link returned 0x%x: %s", (unsigned)r, log);
	EXPECT(log[0] == '\0', "log of a good link: %s", log);
}

static uint32_t imports_flag(ze_module_handle_t m)
{
	ze_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES};
	CHECK(zeModuleGetProperties(m, &mp));
	return mp.flags & ZE_MODULE_PROPERTY_FLAG_IMPORTS;
}

static ze_result_t try_kernel(ze_module_handle_t m, const char *name)
{
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
	ze_kernel_handle_t k = NULL;
	const ze_result_t r = zeKernelCreate(m, &kd, &k);
	if (r == ZE_RESULT_SUCCESS)
		CHECK(zeKernelDestroy(k));
	return r;
}

static void launch(ze_kernel_handle_t k, uint32_t nargs, const e2e_arg_t *args)
{
	e2e_set_args(k, nargs, args);
	CHECK(zeKernelSetGroupSize(k, 64, 1, 1));
	ze_group_count_t groups = {N / 64, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
}

/* ---- host references (the functions of link_*.cl) ---------------------------- */

static uint32_t main_bias(uint32_t x)
{
	return x & 7;
}

static uint32_t lib2_offset(uint32_t x)
{
	return (x ^ 0x55) + main_bias(x);
}

static uint32_t lib_scale(uint32_t x)
{
	return 3 * x + 1;
}

/* ---- the kernels --------------------------------------------------------------- */

static int32_t *in;

static void run_ints(ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "link_ints");
	int32_t *out = e2e_alloc_shared(&e, N * 4);
	memset(out, 0xff, N * 4);
	const e2e_arg_t args[] = {{8, &out}, {8, &in}};
	launch(k, 2, args);
	for (uint32_t i = 0; i < N; i++) {
		const uint32_t x = (uint32_t)in[i], want = lib_scale(x) + 2 * lib2_offset(x);
		EXPECT((uint32_t)out[i] == want, "link_ints: out[%u] = %d, expected %d (in %d)", i, out[i], (int32_t)want,
		       in[i]);
	}
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void run_floats(ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "link_floats");
	float *out = e2e_alloc_shared(&e, N * 4), *x = e2e_alloc_shared(&e, N * 4);
	pair_t *p = e2e_alloc_shared(&e, N * sizeof(pair_t));
	uint32_t seed = 5;
	for (uint32_t i = 0; i < N; i++) {
		x[i] = (float)(int32_t)(e2e_rand(&seed) % 20001 - 10000) / 7.0f;
		p[i].a = (int32_t)(e2e_rand(&seed) % 2001) - 1000;
		p[i].b = (float)(int32_t)(e2e_rand(&seed) % 20001 - 10000) / 3.0f;
		out[i] = -1.0f;
	}
	const e2e_arg_t args[] = {{8, &out}, {8, &x}, {8, &p}};
	launch(k, 3, args);
	for (uint32_t i = 0; i < N; i++) {
		const float dot = x[i] * 3.0f + 2.0f * x[i], pair = (float)p[i].a * p[i].b, want = dot + pair;
		EXPECT(float_bits(out[i]) == float_bits(want), "link_floats: out[%u] = %a, expected %a", i,
		       (double)out[i], (double)want);
	}
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeMemFree(e.ctx, x));
	CHECK(zeMemFree(e.ctx, p));
	CHECK(zeKernelDestroy(k));
}

/* A kernel writing one value per work item: f(i) or f(in[i]). */
static void run_simple(ze_module_handle_t m, const char *name, int with_in, uint32_t (*f)(uint32_t))
{
	ze_kernel_handle_t k = e2e_kernel(m, name);
	int32_t *out = e2e_alloc_shared(&e, N * 4);
	memset(out, 0xff, N * 4);
	const e2e_arg_t args[] = {{8, &out}, {8, &in}};
	launch(k, with_in ? 2 : 1, args);
	for (uint32_t i = 0; i < N; i++) {
		const uint32_t want = f(with_in ? (uint32_t)in[i] : i);
		EXPECT((uint32_t)out[i] == want, "%s: out[%u] = %d, expected %d", name, i, out[i], (int32_t)want);
	}
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeKernelDestroy(k));
}

static uint32_t lib_kernel_ref(uint32_t i)
{
	return lib_scale(i) - lib2_offset(i);
}

static uint32_t spec_ref(uint32_t i)
{
	(void)i;
	return 42 * 1000 + 7;
}

static uint32_t seven(uint32_t i)
{
	(void)i;
	return 7;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_link KERNEL_DIR");
	const char *dir = argv[1];
	e2e_init(&e);
	in = e2e_alloc_shared(&e, N * 4);
	uint32_t seed = 17;
	for (uint32_t i = 0; i < N; i++)
		in[i] = (int32_t)e2e_rand(&seed);
	in[0] = INT32_MAX;
	in[1] = INT32_MIN;

	ze_module_handle_t main_m = load(dir, "link_main.spv"), lib = load(dir, "link_lib.spv"),
			   lib2 = load(dir, "link_lib2.spv"), only = load(dir, "link_main_scale.spv"),
			   bad = load(dir, "link_bad.spv");

	/* ---- before linking ---- */
	EXPECT(imports_flag(main_m) && imports_flag(lib) && imports_flag(lib2) && imports_flag(only),
	       "a module with imports does not report them");
	EXPECT(!imports_flag(bad), "a module without imports reports imports");
	uint32_t count = 0;
	CHECK(zeModuleGetKernelNames(main_m, &count, NULL));
	const char *names[3] = {0};
	EXPECT(count == 3, "%u kernel names before the link", count);
	CHECK(zeModuleGetKernelNames(main_m, &count, names));
	EXPECT(strcmp(names[0], "link_ints") == 0 && strcmp(names[1], "link_floats") == 0 &&
		       strcmp(names[2], "link_plain") == 0,
	       "kernel names %s %s %s", names[0], names[1], names[2]);
	count = 5;
	CHECK(zeModuleGetKernelNames(lib2, &count, NULL));
	EXPECT(count == 0, "the library without kernels has %u", count);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, try_kernel(main_m, "link_ints"));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, try_kernel(main_m, "link_plain"));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, try_kernel(lib, "lib_kernel"));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, try_kernel(main_m, "nope"));
	void *fp;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME, zeModuleGetFunctionPointer(main_m, "link_ints", &fp));
	size_t nsize = 1;
	CHECK(zeModuleGetNativeBinary(main_m, &nsize, NULL));
	EXPECT(nsize == 0, "an unlinked module has a %zu-byte native binary", nsize);

	/* ---- links that fail, and link nothing ---- */
	expect_link_failure("unresolved", 1, &only,
			    "phModules[0]: unresolved import \"lib_scale\" (no module of the link exports it)");
	ze_module_handle_t mismatch[2] = {only, bad};
	expect_link_failure("signature", 2, mismatch,
			    "phModules[0]: function \"lib_scale\" is imported as i32 (i32) but phModules[1] exports it as "
			    "f32 (f32)");
	ze_module_handle_t ambiguous[4] = {only, lib, bad, lib2};
	expect_link_failure("ambiguous", 4, ambiguous,
			    "phModules[0]: import \"lib_scale\" is exported by both phModules[1] and phModules[2]");
	/* lib could link in that set, but modules are not partially linked. */
	EXPECT(imports_flag(only) && imports_flag(lib) && imports_flag(lib2), "a failed link linked a module");
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED, try_kernel(lib, "lib_kernel"));
	/* Modules that import nothing need nothing. */
	expect_link(1, &bad);

	/* ---- the link, in any order ---- */
	ze_module_handle_t all[3] = {lib2, main_m, lib};
	expect_link(3, all);
	EXPECT(!imports_flag(main_m) && !imports_flag(lib) && !imports_flag(lib2), "linked modules report imports");
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, try_kernel(main_m, "nope"));
	run_ints(main_m);
	run_floats(main_m);
	run_simple(main_m, "link_plain", 0, seven);
	run_simple(lib, "lib_kernel", 0, lib_kernel_ref);

	/* Linking again changes nothing: kernels made before keep working. */
	ze_kernel_handle_t kept = e2e_kernel(lib, "lib_kernel");
	expect_link(3, all);
	expect_link(1, &main_m);
	int32_t *out = e2e_alloc_shared(&e, N * 4);
	memset(out, 0, N * 4);
	launch(kept, 1, (const e2e_arg_t[]){{8, &out}});
	for (uint32_t i = 0; i < N; i++)
		EXPECT((uint32_t)out[i] == lib_kernel_ref(i), "lib_kernel after a second link: out[%u] = %d", i, out[i]);
	CHECK(zeMemFree(e.ctx, out));
	CHECK(zeKernelDestroy(kept));

	/* An exporting module may serve several links; here main_bias comes
	 * from the importing module itself, through lib2. */
	ze_module_handle_t second[3] = {only, lib, lib2};
	expect_link(3, second);
	run_simple(only, "link_scale_only", 1, lib_scale);

	/* Each module keeps its own specialization constants, although both use
	 * SpecId 3: out = (41 + flag) * 1000 + 7. */
	const uint32_t lib_ids[2] = {3, 4}, main_ids[1] = {3}, lib_value = 41, main_value = 7;
	const uint8_t flag = 1;
	const void *lib_values[2] = {&lib_value, &flag}, *main_values[1] = {&main_value};
	ze_module_handle_t spec[2] = {load_spec(dir, "link_spec_main.spv", 1, main_ids, main_values),
				      load_spec(dir, "link_spec_lib.spv", 2, lib_ids, lib_values)};
	expect_link(2, spec);
	run_simple(spec[0], "spec_link", 0, spec_ref);
	CHECK(zeModuleDestroy(spec[0]));
	CHECK(zeModuleDestroy(spec[1]));

	/* The linked module holds all its code: the function pointer of a
	 * kernel, its native binary (reloaded as a ZE-ISA module), and the
	 * kernels once the libraries are gone. */
	void *fi, *fl;
	CHECK(zeModuleGetFunctionPointer(main_m, "link_ints", &fi));
	CHECK(zeModuleGetFunctionPointer(lib, "lib_kernel", &fl));
	EXPECT(fi != fl, "two modules share an address");
	CHECK(zeModuleGetNativeBinary(main_m, &nsize, NULL));
	uint8_t *native = malloc(nsize);
	CHECK(zeModuleGetNativeBinary(main_m, &nsize, native));
	ze_module_handle_t reloaded;
	char log[1024];
	const ze_result_t r = spirv_build(&e, ZE_MODULE_FORMAT_NATIVE, native, nsize, &reloaded, log, sizeof(log));
	EXPECT(r == ZE_RESULT_SUCCESS, "native binary of the linked module: 0x%x %s", (unsigned)r, log);
	free(native);
	CHECK(zeModuleDestroy(lib));
	CHECK(zeModuleDestroy(lib2));
	run_ints(reloaded);
	run_ints(main_m);

	CHECK(zeModuleDestroy(reloaded));
	CHECK(zeModuleDestroy(main_m));
	CHECK(zeModuleDestroy(only));
	CHECK(zeModuleDestroy(bad));
	CHECK(zeMemFree(e.ctx, in));
	e2e_fini(&e);
	note("test_spirv_link: passed");
	return 0;
}
