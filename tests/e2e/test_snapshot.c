/* Program snapshots (driver/README.md, "Program snapshots"): the extension
 * ZEX_experimental_program_snapshot through the public API alone.
 *
 *     e2e_snapshot KERNEL_DIR OUT_DIR
 *
 * Finds the extension and its function; lists the stages (two-call count
 * protocol); builds KERNEL_DIR/matmul.spv once per stage and format (default,
 * text, binary) with a snapshot descriptor and writes each snapshot to
 * OUT_DIR/<stage>.<txt|bin> (snapshot_check.py then re-parses them with each
 * stage's own reader); checks the spirv stage is the input and the zeisa binary
 * is zeModuleGetNativeBinary byte for byte; a module with imports gives its later
 * stages at zeModuleDynamicLink; every error case. */
#include "e2e.h"

#include <errno.h>
#include <sys/stat.h>

#include "zs/zex_program_snapshot.h"

#define MAX_SNAPS 8

typedef struct {
	unsigned calls;
	uint32_t stage[MAX_SNAPS];
	zex_snapshot_format_t format[MAX_SNAPS];
	size_t size[MAX_SNAPS];
	uint8_t *data[MAX_SNAPS];
} got_t;

static void ZE_APICALL on_snapshot(void *user, uint32_t stage, zex_snapshot_format_t format, size_t size,
				   const void *data)
{
	got_t *g = user;
	EXPECT(g->calls < MAX_SNAPS, "too many snapshot callbacks");
	const unsigned i = g->calls++;
	g->stage[i] = stage;
	g->format[i] = format;
	g->size[i] = size;
	g->data[i] = malloc(size ? size : 1);
	EXPECT(g->data[i] != NULL, "out of memory");
	memcpy(g->data[i], data, size);
}

static void got_free(got_t *g)
{
	for (unsigned i = 0; i < g->calls; i++)
		free(g->data[i]);
	memset(g, 0, sizeof(*g));
}

/* zeModuleCreate of SPIR-V (or native) with the descriptors chained; the result. */
static ze_result_t create(e2e_t *e, const uint8_t *in, size_t size, ze_module_format_t fmt,
			  zex_module_snapshot_exp_desc_t *snaps, ze_module_handle_t *m, char *log, size_t loglen)
{
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, snaps, fmt, size, in, "", NULL};
	ze_module_build_log_handle_t bl = NULL;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, m, &bl);
	if (log) {
		log[0] = 0;
		size_t n = loglen;
		if (bl)
			zeModuleBuildLogGetString(bl, &n, log);
	}
	if (bl)
		zeModuleBuildLogDestroy(bl);
	return r;
}

static void write_out(const char *dir, const char *name, const char *ext, const void *data, size_t size)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	FILE *f = fopen(path, "wb");
	EXPECT(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: e2e_snapshot KERNEL_DIR OUT_DIR");
	const char *kdir = argv[1], *out = argv[2];
	EXPECT(mkdir(out, 0755) == 0 || errno == EEXIST, "cannot make %s", out);
	e2e_t e;
	e2e_init(&e);

	/* The extension, and its function. */
	uint32_t next = 0;
	CHECK(zeDriverGetExtensionProperties(e.drv, &next, NULL));
	ze_driver_extension_properties_t *ext = calloc(next, sizeof(*ext));
	CHECK(zeDriverGetExtensionProperties(e.drv, &next, ext));
	int found = 0;
	for (uint32_t i = 0; i < next; i++)
		if (strcmp(ext[i].name, ZEX_PROGRAM_SNAPSHOT_EXP_NAME) == 0) {
			found = 1;
			EXPECT(ext[i].version == ZEX_PROGRAM_SNAPSHOT_EXP_VERSION, "version 0x%x", ext[i].version);
		}
	EXPECT(found, "%s is not among the %u extensions", ZEX_PROGRAM_SNAPSHOT_EXP_NAME, next);
	free(ext);
	zex_pfnModuleGetSnapshotStagesExp_t get_stages = NULL;
	CHECK(zeDriverGetExtensionFunctionAddress(e.drv, ZEX_MODULE_GET_SNAPSHOT_STAGES_EXP_NAME, (void **)&get_stages));
	EXPECT(get_stages != NULL, "no function address");
	void *none = (void *)1;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeDriverGetExtensionFunctionAddress(e.drv, "zexModuleGetSnapshotStagesExpX", &none));

	/* The stages, in pipeline order: the two-call protocol, and a short buffer. */
	static const char *const want[] = {"spirv",	   "spirv-translated", "ir-lowered", "ir-loops",
					   "ir-scheduled", "ir-allocated",     "zeisa"};
	const uint32_t nwant = sizeof(want) / sizeof(want[0]);
	uint32_t n = 0;
	CHECK(get_stages(e.drv, &n, NULL));
	EXPECT(n == nwant, "%u stages, expected %u", n, nwant);
	zex_snapshot_stage_properties_t st[16];
	memset(st, 0xab, sizeof(st));
	n = 3;
	CHECK(get_stages(e.drv, &n, st));
	EXPECT(n == 3 && st[2].stage == 2 && strcmp(st[2].name, "ir-lowered") == 0 && (uint8_t)st[3].name[0] == 0xab,
	       "a short buffer: %u stages written, the third %s", n, st[2].name);
	n = 16;
	CHECK(get_stages(e.drv, &n, st));
	EXPECT(n == nwant, "%u stages for a buffer of 16", n);
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, get_stages(e.drv, NULL, st));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, get_stages(NULL, &n, st));
	for (uint32_t i = 0; i < nwant; i++) {
		EXPECT(st[i].stage == i && strcmp(st[i].name, want[i]) == 0, "stage %u is %s, expected %s", i, st[i].name,
		       want[i]);
		EXPECT(st[i].description[0] != 0, "stage %s has no description", st[i].name);
		EXPECT(st[i].formats & (1u << st[i].defaultFormat), "stage %s: default format %d not offered", st[i].name,
		       st[i].defaultFormat);
		EXPECT(!(st[i].formats & ~(ZEX_SNAPSHOT_FORMAT_FLAG_TEXT | ZEX_SNAPSHOT_FORMAT_FLAG_BINARY)),
		       "stage %s: formats 0x%x", st[i].name, st[i].formats);
	}

	/* Every stage in every format it offers, and by default. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/matmul.spv", kdir);
	size_t spv_size;
	uint8_t *spv = read_file(path, &spv_size);
	unsigned snaps_taken = 0;
	for (uint32_t s = 0; s < nwant; s++) {
		for (int f = ZEX_SNAPSHOT_FORMAT_DEFAULT; f <= ZEX_SNAPSHOT_FORMAT_BINARY; f++) {
			if (f && !(st[s].formats & (1u << f)))
				continue;
			got_t g = {0};
			zex_module_snapshot_exp_desc_t d = {ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, NULL, s,
							    (zex_snapshot_format_t)f, on_snapshot, &g};
			ze_module_handle_t m;
			char log[1024];
			ze_result_t r = create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, log, sizeof(log));
			EXPECT(r == ZE_RESULT_SUCCESS, "stage %s format %d: zeModuleCreate 0x%x: %s", want[s], f,
			       (unsigned)r, log);
			const zex_snapshot_format_t fmt = f ? (zex_snapshot_format_t)f : st[s].defaultFormat;
			EXPECT(g.calls == 1 && g.stage[0] == s && g.format[0] == fmt,
			       "stage %s format %d: %u callbacks (stage %u, format %d)", want[s], f, g.calls, g.stage[0],
			       g.format[0]);
			EXPECT(g.size[0] > 0, "stage %s: empty snapshot", want[s]);
			if (s <= 1)
				EXPECT(g.size[0] == spv_size && memcmp(g.data[0], spv, spv_size) == 0,
				       "stage %s: not the SPIR-V given (no imports: nothing linked)", want[s]);
			if (fmt == ZEX_SNAPSHOT_FORMAT_TEXT && s != nwant - 1) {
				EXPECT(memcmp(g.data[0], "kernel ", 7) == 0, "stage %s: text starts %.20s", want[s],
				       (const char *)g.data[0]);
				for (const char *k = "matmul_naive\0matmul_tiled\0"; *k; k += strlen(k) + 1)
					EXPECT(memmem(g.data[0], g.size[0], k, strlen(k)), "stage %s: kernel %s missing",
					       want[s], k);
			}
			if (s == nwant - 1 && fmt == ZEX_SNAPSHOT_FORMAT_BINARY) {
				size_t nsize = 0;
				CHECK(zeModuleGetNativeBinary(m, &nsize, NULL));
				uint8_t *native = malloc(nsize);
				CHECK(zeModuleGetNativeBinary(m, &nsize, native));
				EXPECT(nsize == g.size[0] && memcmp(native, g.data[0], nsize) == 0,
				       "the zeisa binary (%zu bytes) is not zeModuleGetNativeBinary (%zu bytes)", g.size[0],
				       nsize);
				free(native);
			}
			if (f) /* the default is one of these: the files hold each format once */
				write_out(out, want[s], fmt == ZEX_SNAPSHOT_FORMAT_TEXT ? "txt" : "bin", g.data[0],
					  g.size[0]);
			snaps_taken++;
			got_free(&g);
			CHECK(zeModuleDestroy(m));
		}
	}

	/* Several stages of one build, each once, in pipeline order. */
	{
		got_t g = {0};
		zex_module_snapshot_exp_desc_t d[3] = {
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, &d[1], 6, ZEX_SNAPSHOT_FORMAT_TEXT, on_snapshot, &g},
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, &d[2], 3, ZEX_SNAPSHOT_FORMAT_DEFAULT, on_snapshot, &g},
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, NULL, 0, ZEX_SNAPSHOT_FORMAT_BINARY, on_snapshot, &g}};
		ze_module_handle_t m;
		CHECK(create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, d, &m, NULL, 0));
		EXPECT(g.calls == 3 && g.stage[0] == 0 && g.stage[1] == 3 && g.stage[2] == 6,
		       "%u callbacks, stages %u %u %u", g.calls, g.stage[0], g.stage[1], g.stage[2]);
		got_free(&g);
		CHECK(zeModuleDestroy(m));
	}

	/* The errors: no module, no callback, a build log only where the build would speak. */
	{
		got_t g = {0};
		ze_module_handle_t m = (ze_module_handle_t)(uintptr_t)0x1234;
		zex_module_snapshot_exp_desc_t d = {ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, NULL, nwant,
						    ZEX_SNAPSHOT_FORMAT_DEFAULT, on_snapshot, &g};
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
			     create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, NULL, 0)); /* invalid stage */
		d.stage = 0;
		d.format = (zex_snapshot_format_t)3;
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
			     create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, NULL, 0)); /* invalid format */
		d.format = ZEX_SNAPSHOT_FORMAT_TEXT;
		CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
			     create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, NULL, 0)); /* spirv as text */
		d.stage = 2;
		d.format = ZEX_SNAPSHOT_FORMAT_BINARY;
		CHECK_RESULT(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
			     create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, NULL, 0)); /* IR as binary */
		d.format = ZEX_SNAPSHOT_FORMAT_DEFAULT;
		d.pfnCallback = NULL;
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
			     create(&e, spv, spv_size, ZE_MODULE_FORMAT_IL_SPIRV, &d, &m, NULL, 0)); /* null callback */
		/* A native module is already built: its zeisa stage too has passed. */
		snprintf(path, sizeof(path), "%s/zeisa.bin", out);
		size_t nsize;
		uint8_t *native = read_file(path, &nsize);
		d.pfnCallback = on_snapshot;
		d.stage = 6;
		char log[1024];
		CHECK_RESULT(ZE_RESULT_ERROR_NOT_AVAILABLE,
			     create(&e, native, nsize, ZE_MODULE_FORMAT_NATIVE, &d, &m, log, sizeof(log)));
		EXPECT(strstr(log, "already built"), "build log: %s", log);
		EXPECT(g.calls == 0 && m == (ze_module_handle_t)(uintptr_t)0x1234, "%u callbacks; module written",
		       g.calls);
		/* The same module without the descriptor loads. */
		CHECK(create(&e, native, nsize, ZE_MODULE_FORMAT_NATIVE, NULL, &m, NULL, 0));
		CHECK(zeModuleDestroy(m));
		free(native);
	}

	/* A module with imports: spirv at creation, the rest when zeModuleDynamicLink
	 * translates the merged module. */
	{
		got_t g = {0};
		zex_module_snapshot_exp_desc_t d[3] = {
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, &d[1], 0, ZEX_SNAPSHOT_FORMAT_DEFAULT, on_snapshot, &g},
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, &d[2], 1, ZEX_SNAPSHOT_FORMAT_DEFAULT, on_snapshot, &g},
			{ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC, NULL, 6, ZEX_SNAPSHOT_FORMAT_BINARY, on_snapshot, &g}};
		const char *names[3] = {"link_main.spv", "link_lib.spv", "link_lib2.spv"};
		ze_module_handle_t mods[3];
		size_t main_size = 0;
		uint8_t *main_spv = NULL;
		for (int i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s", kdir, names[i]);
			size_t sz;
			uint8_t *b = read_file(path, &sz);
			CHECK(create(&e, b, sz, ZE_MODULE_FORMAT_IL_SPIRV, i == 0 ? d : NULL, &mods[i], NULL, 0));
			if (i == 0) {
				main_spv = b;
				main_size = sz;
			} else {
				free(b);
			}
		}
		EXPECT(g.calls == 1 && g.stage[0] == 0 && g.size[0] == main_size &&
			       memcmp(g.data[0], main_spv, main_size) == 0,
		       "before the link: %u callbacks", g.calls);
		ze_module_build_log_handle_t bl;
		CHECK(zeModuleDynamicLink(3, mods, &bl));
		CHECK(zeModuleBuildLogDestroy(bl));
		EXPECT(g.calls == 3 && g.stage[1] == 1 && g.stage[2] == 6, "after the link: %u callbacks", g.calls);
		EXPECT(g.size[1] > main_size, "the linked SPIR-V (%zu bytes) is not larger than link_main's (%zu)",
		       g.size[1], main_size);
		size_t nsize = 0;
		CHECK(zeModuleGetNativeBinary(mods[0], &nsize, NULL));
		uint8_t *native = malloc(nsize);
		CHECK(zeModuleGetNativeBinary(mods[0], &nsize, native));
		EXPECT(nsize == g.size[2] && memcmp(native, g.data[2], nsize) == 0,
		       "the linked zeisa binary is not zeModuleGetNativeBinary");
		write_out(out, "linked-spirv-translated", "bin", g.data[1], g.size[1]);
		free(native);
		free(main_spv);
		got_free(&g);
		for (int i = 0; i < 3; i++)
			CHECK(zeModuleDestroy(mods[i]));
	}
	free(spv);
	e2e_fini(&e);
	note("snapshot: %u stages, %u snapshots of matmul.spv, the linked module's, every error case", nwant,
	     snaps_taken);
	return 0;
}
