/* Program instrumentation (driver/README.md, "Program instrumentation"):
 *
 *   e2e_instr OUTDIR MODULE...    (MODULE: a .spv built with -g, or a ZE-ISA .elf; OUTDIR is made)
 *
 * With ZET_ENABLE_PROGRAM_INSTRUMENTATION=1: each module is built with
 * "-zet-profile-flags" (0x3 for SPIR-V, with -g; 0x2 for native modules);
 * zetKernelGetProfileInfo echoes the flags and gives one free-register token
 * per kernel, written to OUTDIR/N.free for instr_check.py to compare with its
 * own decoding of the module (OUTDIR/N.elf, the native binary);
 * zetModuleGetDebugInfo equals the native binary (OUTDIR/N.dbg.elf, read by
 * readelf/objdump/llvm-dwarfdump there); the native binary, loaded again as
 * ZE_MODULE_FORMAT_NATIVE, gives the same binary and the same free registers.
 * Also the flag's errors and a module built without it.  Without the
 * variable: every entry point returns ZE_RESULT_ERROR_UNINITIALIZED. */
#include <errno.h>
#include <sys/stat.h>

#include <level_zero/zet_api.h>

#include "e2e.h"

static ze_result_t build(e2e_t *e, ze_module_format_t fmt, const uint8_t *bin, size_t size, const char *flags,
			 ze_module_handle_t *m, char *log_text, size_t log_len)
{
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, fmt, size, bin, flags, NULL};
	ze_module_build_log_handle_t log = NULL;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, m, &log);
	if (log) {
		size_t n = log_len;
		CHECK(zeModuleBuildLogGetString(log, &n, log_text));
		CHECK(zeModuleBuildLogDestroy(log));
	}
	return r;
}

/* The kernel's free-register token as "start:count ..." (bytes), after
 * checking the structure's fields. */
static void free_regs(ze_kernel_handle_t k, uint32_t want_flags, char *out, size_t len)
{
	/* The token follows the structure: room for the most runs 128 GRFs have. */
	union {
		zet_profile_properties_t p;
		uint8_t bytes[sizeof(zet_profile_properties_t) + sizeof(zet_profile_free_register_token_t) +
			      64 * sizeof(zet_profile_register_sequence_t)];
	} u;
	memset(&u, 0xa5, sizeof(u));
	u.p.stype = ZET_STRUCTURE_TYPE_PROFILE_PROPERTIES;
	u.p.pNext = NULL;
	CHECK(zetKernelGetProfileInfo(k, &u.p));
	EXPECT(u.p.flags == want_flags, "flags 0x%x, built with 0x%x", u.p.flags, want_flags);
	out[0] = '\0';
	if (!(want_flags & ZET_PROFILE_FLAG_FREE_REGISTER_INFO)) {
		EXPECT(u.p.numTokens == 0, "%u tokens without FREE_REGISTER_INFO", u.p.numTokens);
		EXPECT(u.bytes[sizeof(u.p)] == 0xa5, "wrote past the structure without FREE_REGISTER_INFO");
		return;
	}
	EXPECT(u.p.numTokens == 1, "%u tokens", u.p.numTokens);
	zet_profile_free_register_token_t tok;
	memcpy(&tok, u.bytes + sizeof(u.p), sizeof(tok));
	EXPECT(tok.type == ZET_PROFILE_TOKEN_TYPE_FREE_REGISTER, "token type %u", tok.type);
	EXPECT(tok.count <= 64 && tok.size == sizeof(tok) + tok.count * sizeof(zet_profile_register_sequence_t),
	       "token size %u for %u sequences", tok.size, tok.count);
	size_t at = 0;
	for (uint32_t i = 0; i < tok.count; i++) {
		zet_profile_register_sequence_t s;
		memcpy(&s, u.bytes + sizeof(u.p) + sizeof(tok) + i * sizeof(s), sizeof(s));
		at += (size_t)snprintf(out + at, len - at, "%s%u:%u", i ? " " : "", s.start, s.count);
	}
}

static uint8_t *native_of(ze_module_handle_t m, size_t *size)
{
	CHECK(zeModuleGetNativeBinary(m, size, NULL));
	uint8_t *b = malloc(*size);
	EXPECT(b, "out of memory");
	CHECK(zeModuleGetNativeBinary(m, size, b));
	return b;
}

static void write_file(const char *dir, int i, const char *ext, const void *p, size_t n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%d.%s", dir, i, ext);
	FILE *f = fopen(path, "wb");
	EXPECT(f && fwrite(p, 1, n, f) == n && fclose(f) == 0, "cannot write %s", path);
}

static void check_disabled(e2e_t *e, const char *path)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	const int spv = size >= 4 && bin[0] == 0x03 && bin[1] == 0x02 && bin[2] == 0x23 && bin[3] == 0x07;
	ze_module_handle_t m;
	char log[512] = "";
	CHECK(build(e, spv ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE, bin, size,
		    "-zet-profile-flags 0x2", &m, log, sizeof(log)));
	uint32_t n = 1;
	const char *name;
	CHECK(zeModuleGetKernelNames(m, &n, &name));
	ze_kernel_handle_t k = e2e_kernel(m, name);
	zet_profile_properties_t p = {ZET_STRUCTURE_TYPE_PROFILE_PROPERTIES, NULL, 0, 0};
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED, zetKernelGetProfileInfo(k, &p));
	size_t dsize = 0;
	CHECK_RESULT(ZE_RESULT_ERROR_UNINITIALIZED,
		     zetModuleGetDebugInfo(m, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &dsize, NULL));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	free(bin);
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 3, "usage: %s OUTDIR MODULE...", argv[0]);
	EXPECT(mkdir(argv[1], 0700) == 0 || errno == EEXIST, "cannot make %s", argv[1]);
	e2e_t e;
	e2e_init(&e);
	const char *env = getenv("ZET_ENABLE_PROGRAM_INSTRUMENTATION");
	if (!env || strcmp(env, "1") != 0) {
		check_disabled(&e, argv[2]);
		e2e_fini(&e);
		note("instrumentation disabled: UNINITIALIZED");
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		size_t size;
		uint8_t *bin = read_file(argv[i], &size);
		const int spv = size >= 4 && bin[0] == 0x03 && bin[1] == 0x02 && bin[2] == 0x23 && bin[3] == 0x07;
		const ze_module_format_t fmt = spv ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE;
		const uint32_t flags = spv ? 0x3 : 0x2;
		ze_module_handle_t m, bad;
		char log[1024] = "";
		if (i == 2) {
			/* The flag's errors: a build failure whose log says why. */
			static const char *const bad_flags[] = {"-zet-profile-flags", "-zet-profile-flags zz",
								"-zet-profile-flags 0x4", "-zet-profile-flags -1"};
			for (size_t b = 0; b < sizeof(bad_flags) / sizeof(bad_flags[0]); b++) {
				log[0] = '\0';
				CHECK_RESULT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
					     build(&e, fmt, bin, size, bad_flags[b], &bad, log, sizeof(log)));
				EXPECT(strstr(log, "-zet-profile-flags"), "log for \"%s\": %s", bad_flags[b], log);
			}
		}
		CHECK(build(&e, fmt, bin, size, spv ? "-g -zet-profile-flags 0x3" : "-zet-profile-flags 0x2", &m, log,
			    sizeof(log)));
		size_t nsize;
		uint8_t *native = native_of(m, &nsize);
		write_file(argv[1], i, "elf", native, nsize);

		/* Debug information: the module's ELF (two calls; a short size refused). */
		size_t dsize = 0;
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
			     zetModuleGetDebugInfo(m, (zet_module_debug_info_format_t)1, &dsize, NULL));
		CHECK(zetModuleGetDebugInfo(m, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &dsize, NULL));
		EXPECT(dsize == nsize, "debug info %zu bytes, native binary %zu", dsize, nsize);
		uint8_t *dbg = malloc(dsize);
		size_t small = dsize - 1;
		CHECK_RESULT(ZE_RESULT_ERROR_INVALID_SIZE,
			     zetModuleGetDebugInfo(m, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &small, dbg));
		CHECK(zetModuleGetDebugInfo(m, ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF, &dsize, dbg));
		EXPECT(memcmp(dbg, native, nsize) == 0, "debug info differs from the native binary");
		write_file(argv[1], i, "dbg.elf", dbg, dsize);

		/* The native binary, loaded again: same bytes, same free registers. */
		ze_module_handle_t again;
		CHECK(build(&e, ZE_MODULE_FORMAT_NATIVE, native, nsize, "-zet-profile-flags 0x2", &again, log,
			    sizeof(log)));
		size_t asize;
		uint8_t *anative = native_of(again, &asize);
		EXPECT(asize == nsize && memcmp(anative, native, nsize) == 0, "the reloaded module's binary differs");
		/* Without the flag: no flags, no token. */
		ze_module_handle_t plain;
		CHECK(build(&e, ZE_MODULE_FORMAT_NATIVE, native, nsize, "", &plain, log, sizeof(log)));

		uint32_t nk = 0;
		CHECK(zeModuleGetKernelNames(m, &nk, NULL));
		const char **names = calloc(nk, sizeof(*names));
		CHECK(zeModuleGetKernelNames(m, &nk, names));
		char text[64 * 1024];
		size_t at = 0;
		for (uint32_t j = 0; j < nk; j++) {
			char regs[2048], regs2[2048], none[16];
			ze_kernel_handle_t k = e2e_kernel(m, names[j]), k2 = e2e_kernel(again, names[j]),
					   k3 = e2e_kernel(plain, names[j]);
			free_regs(k, flags, regs, sizeof(regs));
			free_regs(k2, 0x2, regs2, sizeof(regs2));
			free_regs(k3, 0, none, sizeof(none));
			EXPECT(strcmp(regs, regs2) == 0, "%s: free registers %s, reloaded %s", names[j], regs, regs2);
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s %s\n", names[j], regs);
			CHECK(zeKernelDestroy(k));
			CHECK(zeKernelDestroy(k2));
			CHECK(zeKernelDestroy(k3));
		}
		write_file(argv[1], i, "free", text, at);
		note("%s: %u kernels, %zu-byte module", argv[i], nk, nsize);
		free(names);
		free(anative);
		free(dbg);
		free(native);
		free(bin);
		CHECK(zeModuleDestroy(plain));
		CHECK(zeModuleDestroy(again));
		CHECK(zeModuleDestroy(m));
	}
	e2e_fini(&e);
	return 0;
}
