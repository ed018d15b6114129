/* spv_link (driver/spirv/spv_link.c) on the link test modules, without a
 * device.  Every linked module must pass spirv-val and compile; a walk of its
 * words, independent of the linker, checks what it holds (the importing
 * module's kernels only, the definitions of exactly the modules it needs, no
 * import left, no export of another module, each specialization constant at
 * its module's value).  Failing links name the symbol and the modules; mutated
 * modules never crash the linker or what compiles its output.
 *
 *     test_spirv_link_unit KERNEL_DIR SPIRV_VAL [MUTATIONS] */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fork */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spv_link.h"

#include "check_that.h"


typedef struct words {
	const char *name;
	uint32_t *w;
	size_t n;
} words_t;

static const char *dir;
static const char *spirv_val;

static words_t load(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("cannot open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	const long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	words_t m = {name, malloc((size_t)size + 4), (size_t)size / 4};
	if (!m.w || fread(m.w, 1, (size_t)size, f) != (size_t)size) {
		printf("cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return m;
}

static spv_link_module_t in_of(const words_t *m)
{
	return (spv_link_module_t){m->w, m->n * 4, m->name};
}

/* ---- what a module holds, by a plain walk of its words ------------------------- */

#define MAX_NAMES 64

typedef struct facts {
	uint32_t nentries;
	const char *entries[MAX_NAMES];
	uint32_t nexports;
	const char *exports[MAX_NAMES];
	uint32_t bad_imports;  /* Import on something that is not a built-in variable */
	uint32_t definitions;  /* functions with a body */
	uint32_t declarations; /* without */
	uint32_t spec_ids;     /* SpecId decorations */
	uint32_t dup_scalar_types;
} facts_t;

static int listed(const char *const *list, uint32_t n, const char *s)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return 1;
	return 0;
}

static facts_t walk(const uint32_t *w, size_t n)
{
	facts_t f = {0};
	const uint32_t bound = n > 3 ? w[3] : 0;
	uint8_t *builtin = calloc(bound + 1, 1);
	uint32_t *import_of = calloc(MAX_NAMES, sizeof(uint32_t)), nimport = 0;
	uint32_t scalar[64][4], nscalar = 0; /* opcode and literal words of void/bool/int/float types */
	int in_fn = 0, body = 0;
	for (size_t i = 5; i < n && (w[i] >> 16); i += w[i] >> 16) {
		const uint32_t op = w[i] & 0xffff, wc = w[i] >> 16;
		if (op == 15 && f.nentries < MAX_NAMES) /* OpEntryPoint */
			f.entries[f.nentries++] = (const char *)&w[i + 3];
		if (op == 71 && w[i + 2] == 11 && w[i + 1] <= bound) /* OpDecorate BuiltIn */
			builtin[w[i + 1]] = 1;
		if (op == 71 && w[i + 2] == 1) /* SpecId */
			f.spec_ids++;
		if (op == 71 && w[i + 2] == 41) { /* LinkageAttributes */
			const char *name = (const char *)&w[i + 3];
			const uint32_t type = w[i + 3 + strlen(name) / 4 + 1];
			if (type == 1 && nimport < MAX_NAMES)
				import_of[nimport++] = w[i + 1];
			else if (type != 1 && f.nexports < MAX_NAMES)
				f.exports[f.nexports++] = name;
		}
		if (op >= 19 && op <= 22) { /* OpTypeVoid, Bool, Int, Float */
			uint32_t key[4] = {op, wc > 2 ? w[i + 2] : 0, wc > 3 ? w[i + 3] : 0, 0};
			for (uint32_t k = 0; k < nscalar; k++)
				f.dup_scalar_types += memcmp(scalar[k], key, sizeof(key)) == 0;
			if (nscalar < 64)
				memcpy(scalar[nscalar++], key, sizeof(key));
		}
		if (op == 54) { /* OpFunction */
			in_fn = 1;
			body = 0;
		}
		if (op == 248 && in_fn) /* OpLabel */
			body = 1;
		if (op == 56) { /* OpFunctionEnd */
			f.definitions += body;
			f.declarations += !body;
			in_fn = 0;
		}
	}
	for (uint32_t k = 0; k < nimport; k++)
		f.bad_imports += import_of[k] > bound || !builtin[import_of[k]];
	free(builtin);
	free(import_of);
	return f;
}

/* ---- checks of one link ---------------------------------------------------------- */

static int run_spirv_val(const uint32_t *w, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/spv_link_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	const int fd = mkstemp(path);
	if (fd < 0 || write(fd, w, n * 4) != (ssize_t)(n * 4)) {
		printf("cannot write %s\n", path);
		exit(1);
	}
	close(fd);
	const pid_t pid = fork();
	if (pid == 0) {
		execl(spirv_val, spirv_val, path, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Link mods[0] with the others; `needed` lists the modules whose code the
 * result must hold (mods[0] included). */
static void expect_link(const char *what, const words_t *mods, uint32_t n, const words_t *const *needed,
			uint32_t nneeded)
{
	spv_link_module_t in[8];
	for (uint32_t i = 0; i < n; i++)
		in[i] = in_of(&mods[i]);
	uint32_t *w = NULL;
	size_t nw = 0;
	char err[2048];
	const int rc = spv_link(in, n, &w, &nw, err, sizeof(err));
	CHECK_THAT(rc == SPV_OK, "%s: %s", what, err);
	if (rc)
		return;
	CHECK_THAT(run_spirv_val(w, nw) == 0, "%s: spirv-val rejects the linked module", what);
	const facts_t got = walk(w, nw), primary = walk(mods[0].w, mods[0].n);
	uint32_t definitions = 0;
	for (uint32_t i = 0; i < nneeded; i++)
		definitions += walk(needed[i]->w, needed[i]->n).definitions;
	CHECK_THAT(got.definitions == definitions, "%s: %u functions defined, expected %u", what, got.definitions,
		   definitions);
	CHECK_THAT(got.declarations == 0, "%s: %u function declarations left", what, got.declarations);
	CHECK_THAT(got.bad_imports == 0, "%s: %u imports left", what, got.bad_imports);
	CHECK_THAT(got.dup_scalar_types == 0, "%s: %u duplicate scalar types", what, got.dup_scalar_types);
	CHECK_THAT(got.nentries == primary.nentries, "%s: %u entry points, the importing module has %u", what,
		   got.nentries, primary.nentries);
	for (uint32_t i = 0; i < got.nentries; i++)
		CHECK_THAT(listed(primary.entries, primary.nentries, got.entries[i]), "%s: entry point %s", what,
			   got.entries[i]);
	for (uint32_t i = 0; i < got.nexports; i++)
		CHECK_THAT(listed(primary.exports, primary.nexports, got.exports[i]),
			   "%s: exports %s, which the importing module does not", what, got.exports[i]);
	if (got.nentries) {
		const spv_compile_options_t opt = {.max_simd = 16};
		zm_module_t zm;
		const int crc = spv_compile(w, nw * 4, &opt, &zm, err, sizeof(err));
		CHECK_THAT(crc == SPV_OK, "%s: the linked module does not compile: %s", what, err);
		if (crc == SPV_OK) {
			CHECK_THAT(zm.nkernels == primary.nentries, "%s: %u kernels", what, zm.nkernels);
			zm_module_free(&zm);
		}
	}
	free(w);
}

static void expect_failure(const char *what, const spv_link_module_t *in, uint32_t n, const char *want)
{
	uint32_t *w = NULL;
	size_t nw = 0;
	char err[2048];
	const int rc = spv_link(in, n, &w, &nw, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, want), "%s: rc %d, '%s' (expected '%s')", what, rc, err, want);
	CHECK_THAT(w == NULL, "%s: words returned with an error", what);
}

/* The specialization constants of a module: a bit per (OpSpecConstant
 * literal 7, 41, other; OpSpecConstantTrue; OpSpecConstantFalse). */
static uint32_t spec_constants(const uint32_t *w, size_t n)
{
	uint32_t seen = 0;
	for (size_t i = 5; i < n && (w[i] >> 16); i += w[i] >> 16) {
		const uint32_t op = w[i] & 0xffff;
		if (op == 50) /* OpSpecConstant */
			seen |= w[i + 3] == 7 ? 1 : w[i + 3] == 41 ? 2 : 4;
		seen |= op == 48 ? 8 : op == 49 ? 16 : 0;
	}
	return seen;
}

static void test_spec(void)
{
	const words_t raw_main = load("link_spec_main.spv"), raw_lib = load("link_spec_lib.spv");
	const uint32_t main_ids[1] = {3}, lib_ids[2] = {3, 4}, main_value = 7, lib_value = 41;
	const uint8_t flag = 1;
	const void *main_values[1] = {&main_value}, *lib_values[2] = {&lib_value, &flag};
	const spv_compile_options_t main_opt = {.max_simd = 16, .num_spec = 1, .spec_ids = main_ids,
						.spec_values = main_values};
	const spv_compile_options_t lib_opt = {.max_simd = 16, .num_spec = 2, .spec_ids = lib_ids,
					       .spec_values = lib_values};
	spv_linkage_t lm, ll;
	char err[1024];
	CHECK_THAT(spv_linkage(raw_main.w, raw_main.n * 4, &main_opt, &lm, err, sizeof(err)) == SPV_OK, "%s", err);
	CHECK_THAT(spv_linkage(raw_lib.w, raw_lib.n * 4, &lib_opt, &ll, err, sizeof(err)) == SPV_OK, "%s", err);
	CHECK_THAT(lm.nimports == 1 && lm.nexports == 0 && lm.nkernels == 1 && strcmp(lm.kernels[0], "spec_link") == 0,
		   "linkage of link_spec_main: %u imports, %u exports, %u kernels", lm.nimports, lm.nexports,
		   lm.nkernels);
	CHECK_THAT(ll.nimports == 0 && ll.nexports == 2 && ll.nkernels == 0,
		   "linkage of link_spec_lib: %u imports, %u exports, %u kernels", ll.nimports, ll.nexports, ll.nkernels);
	const words_t m = {"spec_main", lm.words, lm.nwords}, l = {"spec_lib", ll.words, ll.nwords};
	const words_t mods[2] = {m, l};
	const words_t *needed[2] = {&m, &l};
	expect_link("specialized", mods, 2, needed, 2);
	/* Each module's own values, no longer specializable; the linked
	 * module holds both. */
	CHECK_THAT(walk(lm.words, lm.nwords).spec_ids == 0 && walk(ll.words, ll.nwords).spec_ids == 0,
		   "SpecId decorations left in a specialized module");
	CHECK_THAT(spec_constants(lm.words, lm.nwords) == 1, "link_spec_main specialized: mask 0x%x",
		   spec_constants(lm.words, lm.nwords));
	CHECK_THAT(spec_constants(ll.words, ll.nwords) == (2 | 8), "link_spec_lib specialized: mask 0x%x",
		   spec_constants(ll.words, ll.nwords));
	spv_link_module_t in[2] = {in_of(&m), in_of(&l)};
	uint32_t *w;
	size_t nw;
	if (spv_link(in, 2, &w, &nw, err, sizeof(err)) == SPV_OK) {
		CHECK_THAT(spec_constants(w, nw) == (1 | 2 | 8), "linked: mask 0x%x", spec_constants(w, nw));
		free(w);
	}
	/* Without values, the defaults (20; 10 and false). */
	spv_linkage_t dl;
	CHECK_THAT(spv_linkage(raw_lib.w, raw_lib.n * 4, NULL, &dl, err, sizeof(err)) == SPV_OK, "%s", err);
	CHECK_THAT(spec_constants(dl.words, dl.nwords) == (4 | 16), "link_spec_lib by default: mask 0x%x",
		   spec_constants(dl.words, dl.nwords));
	spv_linkage_free(&dl);
	spv_linkage_free(&lm);
	spv_linkage_free(&ll);
	free(raw_main.w);
	free(raw_lib.w);
}

/* ---- never a crash ----------------------------------------------------------- */

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static void mutate(const words_t *mods, uint32_t n, uint32_t iterations)
{
	uint64_t seed = 12345;
	spv_link_module_t in[8];
	uint32_t *copy[8];
	uint32_t linked = 0, compiled = 0;
	for (uint32_t it = 0; it < iterations; it++) {
		const uint32_t target = rnd(&seed) % n;
		for (uint32_t i = 0; i < n; i++) {
			copy[i] = malloc(mods[i].n * 4);
			memcpy(copy[i], mods[i].w, mods[i].n * 4);
			in[i] = (spv_link_module_t){copy[i], mods[i].n * 4, mods[i].name};
		}
		const uint32_t flips = 1 + rnd(&seed) % 3;
		for (uint32_t f = 0; f < flips; f++) {
			const uint32_t at = 5 + rnd(&seed) % (uint32_t)(mods[target].n - 5);
			switch (rnd(&seed) % 3) {
			case 0:
				copy[target][at] ^= 1u << (rnd(&seed) % 32);
				break;
			case 1:
				copy[target][at] = rnd(&seed) % 64;
				break;
			default:
				copy[target][at] += 1;
				break;
			}
		}
		uint32_t *w = NULL;
		size_t nw = 0;
		char err[1024];
		if (spv_link(in, n, &w, &nw, err, sizeof(err)) == SPV_OK) {
			linked++;
			const spv_compile_options_t opt = {.max_simd = 16};
			zm_module_t zm;
			if (spv_compile(w, nw * 4, &opt, &zm, err, sizeof(err)) == SPV_OK) {
				compiled++;
				zm_module_free(&zm);
			}
			free(w);
		} else {
			CHECK_THAT(err[0] != 0, "mutation %u: a failed link without a message", it);
		}
		for (uint32_t i = 0; i < n; i++)
			free(copy[i]);
	}
	printf("%u mutations: %u linked, %u of them compiled\n", iterations, linked, compiled);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		printf("usage: test_spirv_link_unit KERNEL_DIR SPIRV_VAL [MUTATIONS]\n");
		return 2;
	}
	dir = argv[1];
	spirv_val = argv[2];
	const uint32_t iterations = argc > 3 ? (uint32_t)atoi(argv[3]) : 300;
	const words_t main_m = load("link_main.spv"), lib = load("link_lib.spv"), lib2 = load("link_lib2.spv"),
		      only = load("link_main_scale.spv"), bad = load("link_bad.spv"), other = load("vadd.spv"),
		      var = load("link_var.spv"), spec_lib = load("link_spec_lib.spv");

	/* ---- links that work ---- */
	{
		const words_t mods[] = {main_m, lib, lib2};
		const words_t *needed[] = {&main_m, &lib, &lib2};
		expect_link("main", mods, 3, needed, 3);
	}
	{
		/* lib2 calls main_bias back: the importing module's own code
		 * comes in through a library. */
		const words_t mods[] = {lib, lib2, main_m};
		const words_t *needed[] = {&lib, &lib2, &main_m};
		expect_link("lib (cycle)", mods, 3, needed, 3);
	}
	{
		const words_t mods[] = {lib2, main_m, lib};
		const words_t *needed[] = {&lib2, &main_m, &lib};
		expect_link("lib2 (no kernels)", mods, 3, needed, 3);
	}
	{
		/* Modules nobody imports from are left out. */
		const words_t mods[] = {only, other, lib, lib2, var};
		const words_t *needed[] = {&only, &lib, &lib2};
		expect_link("scale only, with modules not needed", mods, 5, needed, 3);
	}
	{
		const words_t mods[] = {bad, main_m};
		const words_t *needed[] = {&bad};
		expect_link("nothing imported", mods, 2, needed, 1);
	}
	test_spec();

	/* ---- links that fail ---- */
	spv_link_module_t in[4] = {in_of(&only)};
	expect_failure("unresolved", in, 1, "link_main_scale.spv: unresolved import \"lib_scale\"");
	in[0] = in_of(&main_m);
	in[1] = in_of(&lib2);
	expect_failure("several unresolved", in, 2,
		       "link_main.spv: unresolved imports \"lib_store\", \"lib_scale\", \"lib_twice_offset\", "
		       "\"lib_dot2\", \"lib_pair\" (no module of the link exports them)");
	in[0] = in_of(&only);
	in[1] = in_of(&bad);
	expect_failure("signature", in, 2,
		       "link_main_scale.spv: function \"lib_scale\" is imported as i32 (i32) but link_bad.spv exports it "
		       "as f32 (f32)");
	in[1] = in_of(&lib);
	in[2] = in_of(&bad);
	in[3] = in_of(&lib2);
	expect_failure("ambiguous", in, 4,
		       "link_main_scale.spv: import \"lib_scale\" is exported by both link_lib.spv and link_bad.spv");
	in[0] = in_of(&var);
	in[1] = in_of(&spec_lib);
	expect_failure("variable", in, 2,
		       "link_var.spv: import \"gvar\" is not a function; importing variables is not supported");
	/* Another memory model: lib2 with Physical32 (OpMemoryModel). */
	words_t phys32 = {"phys32.spv", malloc(lib2.n * 4), lib2.n};
	memcpy(phys32.w, lib2.w, lib2.n * 4);
	for (size_t i = 5; i < phys32.n; i += phys32.w[i] >> 16)
		if ((phys32.w[i] & 0xffff) == 14)
			phys32.w[i + 1] = 1;
	in[0] = in_of(&only);
	in[1] = in_of(&lib);
	in[2] = in_of(&phys32);
	expect_failure("memory model", in, 3,
		       "link_main_scale.spv has memory model Physical64 OpenCL, phys32.spv has Physical32 OpenCL");
	/* A malformed module is named. */
	in[2] = in_of(&lib2);
	in[2].size = 40;
	expect_failure("truncated", in, 3, "link_lib2.spv: word ");
	expect_failure("no module", in, 0, "no module to link");

	mutate((const words_t[]){main_m, lib, lib2}, 3, iterations);

	free(phys32.w);
	for (const words_t *m = (const words_t[]){main_m, lib, lib2, only, bad, other, var, spec_lib}, *e = m + 8; m < e;
	     m++)
		free(m->w);
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("test_spirv_link_unit: passed\n");
	return 0;
}
