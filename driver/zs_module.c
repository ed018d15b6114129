/* Modules, build logs and kernels.  Loading a native module = validating it
 * with the shared module reader (tools/module), then copying its text into
 * GPU memory.  A SPIR-V module is first translated into a native one by the
 * front end in spirv/ (README.md), then loaded the same way; one with imports
 * is translated when zeModuleDynamicLink has merged the code it imports into
 * it (spirv/spv_link.c). */
#define _GNU_SOURCE
#include "zs_module.h"
#include "zs_instr.h"
#include "zs_debug.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"
#include "spv_link.h"
#include "zs_handle.h"
#include "zs_printf.h"

/* ---- helpers ------------------------------------------------------------------ */

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int zs_module_upload_text(zs_os_t *os, const zm_module_t *m, zs_bo_t *bo)
{
	uint64_t end = 0;
	for (uint32_t i = 0; i < m->nkernels; i++)
		if (m->kernels[i].addr + m->kernels[i].text_size > end)
			end = m->kernels[i].addr + m->kernels[i].text_size;
	int rc = zs_os_bo_create(os, end ? end : 1, 0, bo);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < m->nkernels; i++)
		memcpy(bo->ptr + m->kernels[i].addr, m->kernels[i].text, m->kernels[i].text_size);
	return 0;
}

static ze_result_t new_log(ze_module_build_log_handle_t *ph, const char *text)
{
	if (!ph)
		return ZE_RESULT_SUCCESS;
	*ph = NULL;
	zs_build_log_t *log = calloc(1, sizeof(*log));
	if (!log || !(log->text = strdup(text))) {
		free(log);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (zs_handle_add(log, ZS_T_BUILD_LOG)) {
		free(log->text);
		free(log);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	*ph = (ze_module_build_log_handle_t)log;
	return ZE_RESULT_SUCCESS;
}

/* Fails the build: the log (if asked for) explains why. */
static ze_result_t fail(ze_module_build_log_handle_t *ph, ze_result_t why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static ze_result_t fail(ze_module_build_log_handle_t *ph, ze_result_t why, const char *fmt, ...)
{
	char text[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ze_result_t r = new_log(ph, text);
	return r ? r : why;
}

/* The ELF identity a ZE-ISA module must have; anything else is a binary for
 * another device (INVALID_NATIVE_BINARY), while a ZE-ISA ELF the reader
 * rejects is a failed build. */
static int foreign_binary(const uint8_t *b, size_t n, char *why, size_t len)
{
	if (n < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) != 0) {
		snprintf(why, len, "not an ELF file (%zu bytes%s)", n, n >= SELFMAG ? ", no ELF magic" : "");
		return 1;
	}
	if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB) {
		snprintf(why, len, "ELF class %u, data %u: a ZE-ISA module is ELF64 little-endian", b[EI_CLASS],
			 b[EI_DATA]);
		return 1;
	}
	const uint16_t machine = (uint16_t)(b[18] | b[19] << 8);
	if (machine != ZE_EM_ZEISA) {
		snprintf(why, len, "ELF machine 0x%x is not ZE-ISA (0x%x): a binary for another device", machine,
			 ZE_EM_ZEISA);
		return 1;
	}
	return 0;
}

/* ---- modules ----------------------------------------------------------------- */

/* Whether the space-separated build flags name `flag`. */
static int build_flag(const char *flags, const char *flag)
{
	const size_t n = strlen(flag);
	for (const char *p = flags; p && *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		const size_t len = strcspn(p, " \t");
		if (len == n && strncmp(p, flag, n) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* Hidden arguments (spv_compile.h): trailing records named __zs_* are filled
 * by the driver at dispatch and not shown to the application, so they come
 * off the kernel's visible argument count; module_free puts them back. */
static int hide_implicit_args(zs_module_t *mod)
{
	const uint32_t n = mod->m.nkernels;
	mod->num_groups_off = malloc((n ? n : 1) * sizeof(uint32_t));
	mod->all_nargs = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!mod->num_groups_off || !mod->all_nargs)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		zm_kernel_t *k = &mod->m.kernels[i];
		mod->all_nargs[i] = k->nargs;
		mod->num_groups_off[i] = UINT32_MAX;
		while (k->nargs && strncmp(k->args[k->nargs - 1].name, SPV_HIDDEN_PREFIX, strlen(SPV_HIDDEN_PREFIX)) == 0) {
			const zm_arg_t *a = &k->args[k->nargs - 1];
			if (strcmp(a->name, SPV_HIDDEN_NUM_GROUPS) == 0 && a->kind == ZM_ARG_VALUE && a->size == 12)
				mod->num_groups_off[i] = a->offset;
			k->nargs--;
		}
	}
	return 0;
}

static void module_free(zs_module_t *mod)
{
	for (uint32_t i = 0; mod->all_nargs && i < mod->m.nkernels; i++)
		mod->m.kernels[i].nargs = mod->all_nargs[i];
	zm_module_free(&mod->m);
	free(mod->num_groups_off);
	free(mod->all_nargs);
}

static void module_unref(zs_module_t *mod)
{
	if (atomic_fetch_sub(&mod->refs, 1) != 1)
		return;
	zs_module_data_release(mod);
	zs_os_bo_destroy(&mod->dev->os, &mod->text);
	module_free(mod);
	free(mod->native);
	free(mod->spirv);
	for (uint32_t i = 0; i < mod->nentries; i++)
		free(mod->entries[i]);
	free(mod->entries);
	free(mod->snaps);
	zs_context_unref(mod->ctx);
	free(mod);
}

/* Load a ZE-ISA image into mod: its kernels, its text in GPU memory, the
 * native binary (`compiled`, the translated SPIR-V, is taken over; otherwise
 * the input is copied) and the UUID.  Returns SUCCESS, or an error with the
 * reason in why (mod then holds none of it). */
static ze_result_t load_native(zs_module_t *mod, const uint8_t *input, size_t input_size, uint8_t *compiled,
			       char *why, size_t len)
{
	const zs_device_t *dev = mod->dev;
	char reason[512];
	if (zm_module_read_mem(input, input_size, &mod->m, reason, sizeof(reason))) {
		free(compiled);
		snprintf(why, len, "module build failed: %s", reason);
		return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
	}
	ze_result_t r = ZE_RESULT_SUCCESS;
	if (hide_implicit_args(mod)) {
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto fail;
	}
	/* What the reader cannot know: the limits of this device. */
	for (uint32_t i = 0; i < mod->m.nkernels; i++) {
		const zm_kernel_t *k = &mod->m.kernels[i];
		if (k->simd > dev->info.max_simd || k->slm > dev->info.slm_per_subslice) {
			snprintf(why, len,
				 "module build failed: kernel %s needs SIMD%u and %u bytes of SLM; the device has SIMD%u "
				 "and %llu bytes of SLM per sub-slice",
				 k->name, k->simd, k->slm, dev->info.max_simd,
				 (unsigned long long)dev->info.slm_per_subslice);
			r = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
			goto fail;
		}
		/* A required group size must be one this device runs. */
		const uint64_t items = (uint64_t)k->reqd_group[0] * k->reqd_group[1] * k->reqd_group[2];
		if ((items + k->simd - 1) / k->simd > dev->max_group_threads) {
			snprintf(why, len,
				 "module build failed: kernel %s requires group size %ux%ux%u; the device runs at most "
				 "%u work items per group at SIMD%u",
				 k->name, k->reqd_group[0], k->reqd_group[1], k->reqd_group[2],
				 k->simd * dev->max_group_threads, k->simd);
			r = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
			goto fail;
		}
	}
	/* zeModuleGetNativeBinary returns the ZE-ISA module: the input, or what
	 * the SPIR-V became. */
	mod->native = compiled ? compiled : malloc(input_size);
	if (mod->native && !compiled)
		memcpy(mod->native, input, input_size);
	compiled = NULL;
	int rc = mod->native ? zs_module_upload_text(&mod->dev->os, &mod->m, &mod->text) : -ENOMEM;
	if (rc) {
		r = rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : zs_device_result(mod->dev, rc);
		goto fail;
	}
	mod->native_size = input_size;
	const uint64_t h1 = fnv1a(mod->native, mod->native_size, 0xcbf29ce484222325ull);
	const uint64_t h2 = fnv1a(mod->native, mod->native_size, h1 ^ 0x9e3779b97f4a7c15ull);
	memcpy(mod->uuid, &h1, 8);
	memcpy(mod->uuid + 8, &h2, 8);
	return ZE_RESULT_SUCCESS;
fail:
	module_free(mod);
	memset(&mod->m, 0, sizeof(mod->m));
	mod->num_groups_off = mod->all_nargs = NULL;
	free(mod->native);
	mod->native = NULL;
	free(compiled);
	return r;
}

/* ---- program snapshots (README.md, "Program snapshots") ------------------------------- */

typedef struct zs_snapshot_req {
	uint32_t stage;
	zex_snapshot_format_t format; /* resolved: TEXT or BINARY */
	zex_pfnSnapshotCallback_t cb;
	void *user;
} zs_snapshot_req_t;

ze_result_t ZE_APICALL zs_module_get_snapshot_stages(ze_driver_handle_t hDriver, uint32_t *pCount,
						     zex_snapshot_stage_properties_t *pStages)
{
	ZS_CHECK_HANDLE(hDriver, ZS_T_DRIVER);
	ZS_CHECK_PTR(pCount);
	if (*pCount == 0 || !pStages) {
		*pCount = SPV_NSTAGES;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > SPV_NSTAGES)
		*pCount = SPV_NSTAGES;
	for (uint32_t i = 0; i < *pCount; i++) {
		zex_snapshot_stage_properties_t *p = &pStages[i];
		memset(p, 0, sizeof(*p));
		p->stage = i;
		snprintf(p->name, sizeof(p->name), "%s", spv_stages[i].name);
		snprintf(p->description, sizeof(p->description), "%s", spv_stages[i].description);
		p->formats = spv_stages[i].formats;
		p->defaultFormat = spv_stages[i].def_format == SPV_FMT_TEXT ? ZEX_SNAPSHOT_FORMAT_TEXT
									     : ZEX_SNAPSHOT_FORMAT_BINARY;
	}
	return ZE_RESULT_SUCCESS;
}

/* The snapshot descriptors chained on a module descriptor, checked; *phBuilt set
 * when the module is native (already built: the builder has no stages for it). */
static ze_result_t snapshot_requests(const ze_module_desc_t *desc, zs_snapshot_req_t **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	for (const ze_base_desc_t *e = desc->pNext; e; e = e->pNext) {
		if (e->stype != ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC)
			continue;
		const zex_module_snapshot_exp_desc_t *d = (const zex_module_snapshot_exp_desc_t *)e;
		ze_result_t r = ZE_RESULT_SUCCESS;
		uint32_t fmt = 0;
		if (!d->pfnCallback)
			r = ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		else if (d->stage >= SPV_NSTAGES || (uint32_t)d->format > ZEX_SNAPSHOT_FORMAT_BINARY)
			r = ZE_RESULT_ERROR_INVALID_ENUMERATION;
		else if (!((fmt = d->format == ZEX_SNAPSHOT_FORMAT_DEFAULT ? spv_stages[d->stage].def_format
									 : 1u << d->format) &
			   spv_stages[d->stage].formats))
			r = ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
		else if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV)
			r = ZE_RESULT_ERROR_NOT_AVAILABLE; /* a native module is already built */
		zs_snapshot_req_t *t = r ? NULL : realloc(*out, (*n + 1) * sizeof(**out));
		if (!r && !t)
			r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		if (r) {
			free(*out);
			*out = NULL;
			*n = 0;
			return r;
		}
		*out = t;
		t[(*n)++] = (zs_snapshot_req_t){d->stage,
						fmt == SPV_FMT_TEXT ? ZEX_SNAPSHOT_FORMAT_TEXT : ZEX_SNAPSHOT_FORMAT_BINARY,
						d->pfnCallback, d->pUserData};
	}
	return ZE_RESULT_SUCCESS;
}

static void snapshot_give(const zs_snapshot_req_t *reqs, uint32_t n, uint32_t stage, const void *data, size_t size)
{
	for (uint32_t i = 0; i < n; i++)
		if (reqs[i].stage == stage && reqs[i].format == ZEX_SNAPSHOT_FORMAT_BINARY)
			reqs[i].cb(reqs[i].user, stage, ZEX_SNAPSHOT_FORMAT_BINARY, size, data);
}

/* spv_compile_elf, delivering the snapshots of the stages from the translated
 * SPIR-V on: the first IR stage asked for rides on the translation itself, each
 * further one is captured by a translation of its own (the same input and
 * options give the same code). */
static int translate(const void *spirv, size_t size, spv_compile_options_t opt, const zs_snapshot_req_t *reqs,
		     uint32_t n, uint8_t **elf, size_t *elf_size, char *err, size_t errlen)
{
	snapshot_give(reqs, n, SPV_STAGE_SPIRV_TRANSLATED, spirv, size);
	spv_snapshot_t snap = {0};
	int first_ir = -1;
	for (uint32_t i = 0; i < n && first_ir < 0; i++)
		if (reqs[i].stage >= SPV_STAGE_IR_LOWERED && reqs[i].stage <= SPV_STAGE_IR_ALLOCATED)
			first_ir = (int)i;
	if (first_ir >= 0) {
		snap.stage = reqs[first_ir].stage;
		opt.snapshot = &snap;
	}
	int rc = spv_compile_elf(spirv, size, &opt, elf, elf_size, err, errlen);
	if (!rc && first_ir >= 0)
		reqs[first_ir].cb(reqs[first_ir].user, snap.stage, ZEX_SNAPSHOT_FORMAT_TEXT, snap.size,
				  snap.text ? snap.text : "");
	free(snap.text);
	if (rc)
		return rc;
	for (uint32_t i = (uint32_t)first_ir + 1; first_ir >= 0 && i < n; i++) {
		if (reqs[i].stage < SPV_STAGE_IR_LOWERED || reqs[i].stage > SPV_STAGE_IR_ALLOCATED)
			continue;
		spv_snapshot_t s = {.stage = reqs[i].stage};
		opt.snapshot = &s;
		zm_module_t m;
		char e2[256];
		if (spv_compile(spirv, size, &opt, &m, e2, sizeof(e2)) == SPV_OK) {
			reqs[i].cb(reqs[i].user, s.stage, ZEX_SNAPSHOT_FORMAT_TEXT, s.size, s.text ? s.text : "");
			zm_module_free(&m);
		}
		free(s.text);
	}
	snapshot_give(reqs, n, SPV_STAGE_ZEISA, *elf, *elf_size);
	for (uint32_t i = 0; i < n; i++) {
		if (reqs[i].stage != SPV_STAGE_ZEISA || reqs[i].format != ZEX_SNAPSHOT_FORMAT_TEXT)
			continue;
		char *text;
		size_t len;
		char e2[256];
		if (spv_disassemble(*elf, *elf_size, &text, &len, e2, sizeof(e2)) == SPV_OK) {
			reqs[i].cb(reqs[i].user, SPV_STAGE_ZEISA, ZEX_SNAPSHOT_FORMAT_TEXT, len, text);
			free(text);
		}
	}
	return SPV_OK;
}

ze_result_t ZE_APICALL zs_module_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					const ze_module_desc_t *desc, ze_module_handle_t *phModule,
					ze_module_build_log_handle_t *phBuildLog)
{
	ZS_CHECK_HANDLE(hContext, ZS_T_CONTEXT);
	ZS_CHECK_HANDLE(hDevice, ZS_T_DEVICE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(desc->pInputModule);
	ZS_CHECK_PTR(phModule);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_MODULE_DESC);
	if (phBuildLog)
		*phBuildLog = NULL;
	if (desc->format > ZE_MODULE_FORMAT_NATIVE)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	if (desc->inputSize == 0)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	for (const ze_base_desc_t *e = desc->pNext; e; e = e->pNext)
		if (e->stype == ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC)
			return fail(phBuildLog, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
				    "multi-input module programs are not supported: pass one native module");
	uint32_t profile_flags;
	char pwhy[160];
	if (zs_instr_profile_flags(desc->pBuildFlags, &profile_flags, pwhy, sizeof(pwhy)))
		return fail(phBuildLog, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "%s", pwhy);
	zs_snapshot_req_t *snaps;
	uint32_t nsnaps;
	ze_result_t sr = snapshot_requests(desc, &snaps, &nsnaps);
	if (sr == ZE_RESULT_ERROR_NOT_AVAILABLE)
		return fail(phBuildLog, sr, "a program snapshot was requested of a native module, which is already "
					    "built: the module builder's stages exist only for SPIR-V");
	if (sr)
		return sr;
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_device_t *dev = (zs_device_t *)hDevice;
	zs_module_t *mod = calloc(1, sizeof(*mod));
	if (!mod) {
		free(snaps);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	mod->dev = dev;
	mod->profile_flags = profile_flags;
	ze_result_t r = ZE_RESULT_SUCCESS;
	char why[1024] = "";
	char err[768];
	if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV) {
		const ze_module_constants_t *sc = desc->pConstants;
		const spv_compile_options_t opt = {
			.max_simd = dev->info.max_simd,
			.num_spec = sc ? sc->numConstants : 0,
			.spec_ids = sc ? sc->pConstantIds : NULL,
			.spec_values = sc ? (const void *const *)sc->pConstantValues : NULL,
			.debug_lines = build_flag(desc->pBuildFlags, "-g"),
			.no_unroll = build_flag(desc->pBuildFlags, "-fno-unroll-loops"),
			.reserve_grfs = profile_flags & ZET_PROFILE_FLAG_REGISTER_REALLOCATION ? ZS_INSTR_RESERVED_GRFS : 0,
		};
		snapshot_give(snaps, nsnaps, SPV_STAGE_SPIRV, desc->pInputModule, desc->inputSize);
		spv_linkage_t lk;
		int rc = spv_linkage(desc->pInputModule, desc->inputSize, &opt, &lk, err, sizeof(err));
		uint8_t *compiled = NULL; /* SPIR-V translated to a ZE-ISA module (driver/spirv/) */
		size_t size = 0;
		/* A module with imports is translated when linked; one without
		 * kernels (a library, or functions and data only) has nothing to
		 * translate: it is only checked. */
		if (!rc) {
			mod->spirv = lk.words;
			mod->spirv_words = lk.nwords;
			mod->debug_lines = opt.debug_lines;
			lk.words = NULL;
			if (lk.nimports) {
				mod->entries = lk.kernels;
				mod->nentries = lk.nkernels;
				lk.kernels = NULL;
				lk.nkernels = 0;
				atomic_init(&mod->unlinked, true);
				mod->snaps = snaps; /* the later stages happen at the link */
				mod->nsnaps = nsnaps;
				snaps = NULL;
			} else if (lk.nkernels) {
				rc = translate(desc->pInputModule, desc->inputSize, opt, snaps, nsnaps, &compiled, &size,
					       err, sizeof(err));
			} else {
				zm_module_t none;
				rc = spv_compile(desc->pInputModule, desc->inputSize, &opt, &none, err, sizeof(err));
				if (!rc)
					zm_module_free(&none);
			}
			spv_linkage_free(&lk);
		}
		if (rc)
			r = rc == SPV_NO_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
		else if (compiled)
			r = load_native(mod, compiled, size, compiled, why, sizeof(why));
		if (rc)
			snprintf(why, sizeof(why), "SPIR-V module build failed: %s", err);
	} else if (foreign_binary(desc->pInputModule, desc->inputSize, err, sizeof(err))) {
		snprintf(why, sizeof(why), "invalid native binary: %s", err);
		r = ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
	} else {
		r = load_native(mod, desc->pInputModule, desc->inputSize, NULL, why, sizeof(why));
	}
	free(snaps);
	atomic_init(&mod->refs, 1);
	mod->ctx = ctx;
	zs_context_ref(ctx);
	if (r) {
		/* (out of memory: no log) */
		const ze_result_t lr = why[0] ? new_log(phBuildLog, why) : ZE_RESULT_SUCCESS;
		module_unref(mod);
		return lr ? lr : r;
	}
	r = zs_handle_add(mod, ZS_T_MODULE);
	if (!r)
		r = new_log(phBuildLog, ""); /* a successful build logs nothing */
	if (!r && !atomic_load(&mod->unlinked))
		r = zs_debug_module_loaded(mod); /* a debugger's MODULE_LOAD (ZET_ENABLE_PROGRAM_DEBUGGING=1) */
	if (r) {
		zs_debug_module_unloaded(mod);
		zs_handle_remove(mod);
		module_unref(mod);
		return r;
	}
	*phModule = (ze_module_handle_t)mod;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_destroy(ze_module_handle_t hModule)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	zs_handle_remove(hModule);
	zs_debug_module_unloaded((zs_module_t *)hModule);
	module_unref((zs_module_t *)hModule);
	return ZE_RESULT_SUCCESS;
}

/* The link log: one line per problem. */
typedef struct link_log {
	char *text;
	size_t len, cap;
	int oom;
} link_log_t;

static void log_add(link_log_t *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_add(link_log_t *l, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	const size_t k = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (l->len + k + 2 > l->cap) {
		const size_t cap = (l->len + k + 2) * 2;
		char *t = realloc(l->text, cap);
		if (!t) {
			l->oom = 1;
			return;
		}
		l->text = t;
		l->cap = cap;
	}
	if (l->len)
		l->text[l->len++] = '\n';
	memcpy(l->text + l->len, line, k);
	l->len += k;
	l->text[l->len] = 0;
}

/* Link module i of the list: its SPIR-V merged with the exports of the other
 * modules (spv_link), translated and loaded into `out` (when it has kernels).
 * Problems go to the log. */
static ze_result_t link_one(uint32_t n, ze_module_handle_t *list, uint32_t i, zs_module_t *out, link_log_t *log)
{
	const zs_module_t *mod = (const zs_module_t *)list[i];
	spv_link_module_t *in = calloc(n, sizeof(*in));
	char(*labels)[32] = calloc(n, sizeof(*labels));
	char err[2048];
	ze_result_t r = ZE_RESULT_SUCCESS;
	if (!in || !labels) {
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		goto out;
	}
	/* The importing module first, then every other SPIR-V module once. */
	uint32_t nin = 0;
	for (uint32_t j = 0; j < n; j++) {
		const uint32_t at = j == 0 ? i : j <= i ? j - 1 : j;
		const zs_module_t *x = (const zs_module_t *)list[at];
		int dup = !x->spirv;
		for (uint32_t k = 0; k < nin && !dup; k++)
			dup = in[k].spirv == x->spirv;
		if (dup)
			continue;
		snprintf(labels[nin], sizeof(labels[nin]), "phModules[%u]", at);
		in[nin] = (spv_link_module_t){x->spirv, x->spirv_words * sizeof(uint32_t), labels[nin]};
		nin++;
	}
	uint32_t *words = NULL;
	size_t nwords = 0;
	int rc = spv_link(in, nin, &words, &nwords, err, sizeof(err));
	if (rc) {
		log_add(log, "%s", err);
		r = rc == SPV_NO_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
		goto out;
	}
	if (mod->nentries) {
		const spv_compile_options_t opt = {
			.max_simd = mod->dev->info.max_simd,
			.debug_lines = mod->debug_lines,
			.reserve_grfs = mod->profile_flags & ZET_PROFILE_FLAG_REGISTER_REALLOCATION ? ZS_INSTR_RESERVED_GRFS : 0,
		};
		uint8_t *elf = NULL;
		size_t size = 0;
		rc = translate(words, nwords * sizeof(uint32_t), opt, mod->snaps, mod->nsnaps, &elf, &size, err,
			       sizeof(err));
		if (rc) {
			log_add(log, "phModules[%u]: SPIR-V module build failed after linking (word offsets of the linked "
				"module): %s", i, err);
			r = rc == SPV_NO_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
		} else {
			out->dev = mod->dev;
			r = load_native(out, elf, size, elf, err, sizeof(err));
			if (r)
				log_add(log, "phModules[%u]: %s", i, err);
			if (r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
				r = ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
		}
	}
	free(words);
out:
	free(in);
	free(labels);
	return r;
}

ze_result_t ZE_APICALL zs_module_dynamic_link(uint32_t numModules, ze_module_handle_t *phModules,
					      ze_module_build_log_handle_t *phLinkLog)
{
	ZS_CHECK_PTR(phModules);
	for (uint32_t i = 0; i < numModules; i++)
		ZS_CHECK_HANDLE(phModules[i], ZS_T_MODULE);
	if (phLinkLog)
		*phLinkLog = NULL;
	/* Every module with unresolved imports is linked against the exports of
	 * the others; if any fails, none is (modules cannot be partially
	 * linked).  Native modules and SPIR-V modules without imports are
	 * complete as loaded: linking leaves them alone, as it leaves modules
	 * linked before. */
	zs_module_t *staged = calloc(numModules ? numModules : 1, sizeof(*staged));
	if (!staged)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	link_log_t log = {0};
	ze_result_t r = ZE_RESULT_SUCCESS;
	for (uint32_t i = 0; i < numModules; i++) {
		zs_module_t *mod = (zs_module_t *)phModules[i];
		int seen = 0;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = phModules[j] == phModules[i];
		if (seen || !atomic_load(&mod->unlinked))
			continue;
		const ze_result_t ri = link_one(numModules, phModules, i, &staged[i], &log);
		if (ri && (r == ZE_RESULT_SUCCESS || ri == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY))
			r = ri;
	}
	if (log.oom)
		r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < numModules; i++) {
		zs_module_t *mod = (zs_module_t *)phModules[i], *s = &staged[i];
		if (r) {
			if (s->dev)
				zs_os_bo_destroy(&s->dev->os, &s->text);
			module_free(s);
			free(s->native);
			continue;
		}
		if (!atomic_load(&mod->unlinked))
			continue;
		/* The module had no kernels, text or native binary: it gets them
		 * now, before kernels can be created. */
		mod->m = s->m;
		mod->num_groups_off = s->num_groups_off;
		mod->all_nargs = s->all_nargs;
		mod->native = s->native;
		mod->native_size = s->native_size;
		mod->text = s->text;
		memcpy(mod->uuid, s->uuid, sizeof(mod->uuid));
		atomic_store(&mod->unlinked, false);
		const ze_result_t dr = zs_debug_module_loaded(mod);
		if (dr && r == ZE_RESULT_SUCCESS)
			r = dr;
	}
	free(staged);
	const ze_result_t lr = new_log(phLinkLog, log.text ? log.text : "");
	free(log.text);
	return r ? r : lr;
}

ze_result_t ZE_APICALL zs_module_get_native_binary(ze_module_handle_t hModule, size_t *pSize,
						   uint8_t *pModuleNativeBinary)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pSize);
	const zs_module_t *mod = (const zs_module_t *)hModule;
	if (!pModuleNativeBinary) {
		*pSize = mod->native_size;
		return ZE_RESULT_SUCCESS;
	}
	if (*pSize < mod->native_size)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	if (mod->native_size) /* an unlinked module or a library without kernels has none */
		memcpy(pModuleNativeBinary, mod->native, mod->native_size);
	*pSize = mod->native_size;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_global_pointer(ze_module_handle_t hModule, const char *pGlobalName,
						    size_t *pSize, void **pptr)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pGlobalName);
	/* Variables of the data segment: exported names first, then the
	 * module's other named variables. */
	zs_module_t *mod = (zs_module_t *)hModule;
	for (int exported = 1; exported >= 0; exported--)
		for (uint32_t i = 0; i < mod->m.nglobals; i++) {
			const zm_global_t *g = &mod->m.globals[i];
			if (g->exported != exported || strcmp(g->name, pGlobalName) != 0)
				continue;
			if (zs_module_data_ready(mod))
				return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
			if (pSize)
				*pSize = g->size;
			if (pptr)
				*pptr = mod->data.ptr + g->offset;
			return ZE_RESULT_SUCCESS;
		}
	return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

ze_result_t ZE_APICALL zs_module_get_kernel_names(ze_module_handle_t hModule, uint32_t *pCount, const char **pNames)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pCount);
	const zs_module_t *mod = (const zs_module_t *)hModule;
	/* A module waiting for its imports names the kernels it will have. */
	const int unlinked = atomic_load(&mod->unlinked);
	const uint32_t n = unlinked ? mod->nentries : mod->m.nkernels;
	if (*pCount == 0 || !pNames) {
		*pCount = n;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > n)
		*pCount = n;
	for (uint32_t i = 0; i < *pCount; i++)
		pNames[i] = unlinked ? mod->entries[i] : mod->m.kernels[i].name;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_properties(ze_module_handle_t hModule, ze_module_properties_t *p)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_MODULE_PROPERTIES);
	p->flags = atomic_load(&((const zs_module_t *)hModule)->unlinked) ? ZE_MODULE_PROPERTY_FLAG_IMPORTS : 0;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_function_pointer(ze_module_handle_t hModule, const char *pFunctionName,
						      void **pfnFunction)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pFunctionName);
	ZS_CHECK_PTR(pfnFunction);
	zs_module_t *mod = (zs_module_t *)hModule;
	const uint64_t base = zs_bo_va(&mod->text);
	/* Kernels are functions too; .func symbols are at an offset inside
	 * their kernel's section. */
	uint64_t va = 0;
	for (uint32_t i = 0; i < mod->m.nkernels && !va; i++) {
		const zm_kernel_t *k = &mod->m.kernels[i];
		if (strcmp(k->name, pFunctionName) == 0)
			va = base + k->addr;
		for (uint32_t f = 0; f < k->nfuncs && !va; f++)
			if (strcmp(k->funcs[f].name, pFunctionName) == 0)
				va = base + k->addr + k->funcs[f].offset;
	}
	if (!va)
		return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
	/* The address lets another module's kernel run this module's code
	 * (calla, docs/isa.md 3.5) without a launch of its own: a debugger sees
	 * the module (and can set its breakpoints) before the address is out,
	 * as before a launch (zs_kernel_dispatch). */
	const ze_result_t dr = zs_debug_module_wait(mod);
	if (dr)
		return dr;
	*pfnFunction = (void *)(uintptr_t)va;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_build_log_destroy(ze_module_build_log_handle_t hModuleBuildLog)
{
	ZS_CHECK_HANDLE(hModuleBuildLog, ZS_T_BUILD_LOG);
	zs_build_log_t *log = (zs_build_log_t *)hModuleBuildLog;
	zs_handle_remove(log);
	free(log->text);
	free(log);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_build_log_get_string(ze_module_build_log_handle_t hModuleBuildLog, size_t *pSize,
						      char *pBuildLog)
{
	ZS_CHECK_HANDLE(hModuleBuildLog, ZS_T_BUILD_LOG);
	ZS_CHECK_PTR(pSize);
	return zs_copy_string(((zs_build_log_t *)hModuleBuildLog)->text, pSize, pBuildLog);
}

/* ---- kernels ------------------------------------------------------------------ */

#define KERNEL(h) ((zs_kernel_t *)(h))

ze_result_t ZE_APICALL zs_kernel_create(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
					ze_kernel_handle_t *phKernel)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(desc);
	ZS_CHECK_PTR(desc->pKernelName);
	ZS_CHECK_PTR(phKernel);
	ZS_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_KERNEL_DESC);
	if (desc->flags > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	zs_module_t *mod = (zs_module_t *)hModule;
	if (atomic_load(&mod->unlinked)) {
		for (uint32_t i = 0; i < mod->nentries; i++)
			if (strcmp(mod->entries[i], desc->pKernelName) == 0)
				return ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED;
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	}
	const zm_kernel_t *zk = NULL;
	for (uint32_t i = 0; i < mod->m.nkernels && !zk; i++)
		if (strcmp(mod->m.kernels[i].name, desc->pKernelName) == 0)
			zk = &mod->m.kernels[i];
	if (!zk)
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	if (zs_module_data_ready(mod))
		return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
	zs_kernel_t *k = calloc(1, sizeof(*k));
	if (!k || !(k->local_size = calloc(zk->nargs ? zk->nargs : 1, sizeof(uint32_t)))) {
		free(k);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	k->mod = mod;
	k->k = zk;
	k->va = zs_bo_va(&mod->text) + zk->addr;
	/* The group size until zeKernelSetGroupSize: the required one, if the
	 * kernel has one, else 1x1x1. */
	if (zk->reqd_group[0])
		memcpy(k->group, zk->reqd_group, sizeof(k->group));
	else
		k->group[0] = k->group[1] = k->group[2] = 1;
	if (zs_handle_add(k, ZS_T_KERNEL)) {
		free(k->local_size);
		free(k);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	atomic_fetch_add(&mod->refs, 1);
	*phKernel = (ze_kernel_handle_t)k;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_destroy(ze_kernel_handle_t hKernel)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	zs_kernel_t *k = KERNEL(hKernel);
	zs_handle_remove(k);
	module_unref(k->mod);
	free(k->local_size);
	free(k);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_set_cache_config(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	if (flags > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* A preference: SLM and L3 are not partitioned in this device. */
	KERNEL(hKernel)->cache = flags;
	return ZE_RESULT_SUCCESS;
}

static uint32_t max_group_size(const zs_kernel_t *k)
{
	return k->k->simd * k->mod->dev->max_group_threads;
}

ze_result_t ZE_APICALL zs_kernel_set_group_size(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y, uint32_t z)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	zs_kernel_t *k = KERNEL(hKernel);
	/* A group runs on one sub-slice: ceil(x*y*z / simd) threads must fit
	 * its EUs (the walker's check, docs/commands.md §4). */
	const uint64_t n = (uint64_t)x * y * z;
	if (!x || !y || !z || n > max_group_size(k))
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	/* reqd_work_group_size: no other size is valid for the kernel. */
	const uint32_t *reqd = k->k->reqd_group;
	if (reqd[0] && (x != reqd[0] || y != reqd[1] || z != reqd[2]))
		return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
	k->group[0] = x;
	k->group[1] = y;
	k->group[2] = z;
	return ZE_RESULT_SUCCESS;
}

static uint32_t largest_divisor(uint32_t n, uint32_t limit)
{
	for (uint32_t d = n < limit ? n : limit; d > 1; d--)
		if (n % d == 0)
			return d;
	return 1;
}

ze_result_t ZE_APICALL zs_kernel_suggest_group_size(ze_kernel_handle_t hKernel, uint32_t gx, uint32_t gy, uint32_t gz,
						    uint32_t *groupSizeX, uint32_t *groupSizeY, uint32_t *groupSizeZ)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(groupSizeX);
	ZS_CHECK_PTR(groupSizeY);
	ZS_CHECK_PTR(groupSizeZ);
	if (!gx || !gy || !gz)
		return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
	/* A kernel with a required group size runs only with that one. */
	const uint32_t *reqd = KERNEL(hKernel)->k->reqd_group;
	if (reqd[0]) {
		*groupSizeX = reqd[0];
		*groupSizeY = reqd[1];
		*groupSizeZ = reqd[2];
		return ZE_RESULT_SUCCESS;
	}
	/* The largest group that divides the global size exactly (so that no
	 * work item falls outside the grid), filling x first; within what the
	 * device reports (maxGroupSizeX/Y/Z, maxTotalGroupSize: a SIMD8 group's
	 * limit), even where a SIMD16 kernel could run a larger one. */
	const uint32_t dev_limit = KERNEL(hKernel)->mod->dev->max_group_size;
	const uint32_t limit = max_group_size(KERNEL(hKernel)) < dev_limit ? max_group_size(KERNEL(hKernel)) : dev_limit;
	const uint32_t x = largest_divisor(gx, limit);
	const uint32_t y = largest_divisor(gy, limit / x);
	const uint32_t z = largest_divisor(gz, limit / (x * y));
	*groupSizeX = x;
	*groupSizeY = y;
	*groupSizeZ = z;
	return ZE_RESULT_SUCCESS;
}

/* Static SLM plus the local arguments, laid out as the walker payload has it. */
static uint64_t slm_total(const zs_kernel_t *k, uint8_t *args)
{
	uint64_t end = k->k->slm;
	for (uint32_t i = 0; i < k->k->nargs; i++) {
		const zm_arg_t *a = &k->k->args[i];
		if (a->kind != ZM_ARG_LOCAL)
			continue;
		const uint64_t off = (end + 3) & ~3ull;
		if (args) {
			const uint32_t o32 = (uint32_t)off;
			memcpy(args + a->offset, &o32, 4);
		}
		end = off + k->local_size[i];
	}
	return end;
}

uint32_t zs_kernel_max_cooperative_groups(const zs_kernel_t *k)
{
	const zs_device_t *d = k->mod->dev;
	const uint64_t items = (uint64_t)k->group[0] * k->group[1] * k->group[2];
	const uint64_t threads = (items + k->k->simd - 1) / k->k->simd;
	uint64_t per_ss = d->max_group_threads / threads;
	const uint64_t slm = slm_total(k, NULL);
	if (slm && d->info.slm_per_subslice / slm < per_ss)
		per_ss = d->info.slm_per_subslice / slm;
	return (uint32_t)(per_ss * d->slices * d->subslices_per_slice);
}

ze_result_t ZE_APICALL zs_kernel_suggest_max_cooperative_group_count(ze_kernel_handle_t hKernel,
								     uint32_t *totalGroupCount)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(totalGroupCount);
	*totalGroupCount = zs_kernel_max_cooperative_groups(KERNEL(hKernel));
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_set_argument_value(ze_kernel_handle_t hKernel, uint32_t argIndex, size_t argSize,
						    const void *pArgValue)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	zs_kernel_t *k = KERNEL(hKernel);
	if (argIndex >= k->k->nargs)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
	const zm_arg_t *a = &k->k->args[argIndex];
	switch (a->kind) {
	case ZM_ARG_GLOBAL:
		if (argSize != sizeof(uint64_t))
			return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
		/* A NULL value pointer sets a NULL device pointer. */
		if (pArgValue)
			memcpy(k->args + a->offset, pArgValue, 8);
		else
			memset(k->args + a->offset, 0, 8);
		return ZE_RESULT_SUCCESS;
	case ZM_ARG_LOCAL: {
		/* The size of the SLM block is the argument; there is no value. */
		if (pArgValue)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		const uint32_t old = k->local_size[argIndex];
		if (argSize > k->mod->dev->info.slm_per_subslice)
			return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
		k->local_size[argIndex] = (uint32_t)argSize;
		if (slm_total(k, NULL) > k->mod->dev->info.slm_per_subslice) {
			k->local_size[argIndex] = old;
			return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
		}
		return ZE_RESULT_SUCCESS;
	}
	default:
		if (argSize != a->size)
			return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
		if (!pArgValue)
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
		memcpy(k->args + a->offset, pArgValue, argSize);
		return ZE_RESULT_SUCCESS;
	}
}

ze_result_t zs_kernel_dispatch(const zs_kernel_t *k, const ze_group_count_t *count, zs_dispatch_t *d)
{
	const uint64_t groups = (uint64_t)count->groupCountX * count->groupCountY * count->groupCountZ;
	if (groups >= (1ull << 32)) /* the walker's limit on the product */
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	/* A debugger sees the module before any of its code runs (zs_debug.c). */
	const ze_result_t dr = zs_debug_module_wait(k->mod);
	if (dr)
		return dr;
	d->kernel_va = k->va;
	d->simd = k->k->simd;
	d->grf = k->k->grf;
	d->arg_bytes = k->k->arg_bytes;
	memcpy(d->args, k->args, k->k->arg_bytes);
	const uint64_t slm = slm_total(k, d->args);
	if (slm > k->mod->dev->info.slm_per_subslice)
		return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
	d->slm = (uint32_t)slm;
	memcpy(d->group, k->group, sizeof(d->group));
	d->count[0] = count->groupCountX;
	d->count[1] = count->groupCountY;
	d->count[2] = count->groupCountZ;
	/* The hidden group counts (get_num_groups, get_global_size). */
	const uint32_t ki = (uint32_t)(k->k - k->mod->m.kernels);
	if (k->mod->num_groups_off[ki] != UINT32_MAX)
		memcpy(d->args + k->mod->num_groups_off[ki], d->count, sizeof(d->count));
	/* The program's data segment and the printf buffer. */
	zs_module_fill_hidden(k->mod, k->k, k->mod->all_nargs[ki], d->args);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_set_indirect_access(ze_kernel_handle_t hKernel,
						     ze_kernel_indirect_access_flags_t flags)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	if (flags > 0x7)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* Every allocation is always in the VM, so indirect access works
	 * whatever is set; the flags are kept for the getter. */
	KERNEL(hKernel)->indirect = flags;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_get_indirect_access(ze_kernel_handle_t hKernel,
						     ze_kernel_indirect_access_flags_t *pFlags)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(pFlags);
	*pFlags = KERNEL(hKernel)->indirect;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_get_source_attributes(ze_kernel_handle_t hKernel, uint32_t *pSize, char **pString)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(pSize);
	/* No source-language attributes are kept: "".  pString is optional
	 * (NULL: only the size, the spec's query form). */
	if (!pString || *pSize == 0 || !*pString) {
		*pSize = 1;
		return ZE_RESULT_SUCCESS;
	}
	(*pString)[0] = '\0';
	*pSize = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_get_properties(ze_kernel_handle_t hKernel, ze_kernel_properties_t *p)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(p);
	ZS_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES);
	const zs_kernel_t *k = KERNEL(hKernel);
	const zm_kernel_t *zk = k->k;
	p->numKernelArgs = zk->nargs;
	/* reqd_work_group_size, or 0 when the kernel requires none. */
	p->requiredGroupSizeX = zk->reqd_group[0];
	p->requiredGroupSizeY = zk->reqd_group[1];
	p->requiredGroupSizeZ = zk->reqd_group[2];
	p->requiredNumSubGroups = 0;
	/* A kernel is compiled for one SIMD width: its sub-group size. */
	p->requiredSubgroupSize = zk->simd;
	p->maxSubgroupSize = zk->simd;
	p->maxNumSubgroups = k->mod->dev->max_group_threads;
	p->localMemSize = zk->slm;
	p->privateMemSize = 0;
	p->spillMemSize = 0;
	const uint64_t kh = fnv1a(zk->name, strlen(zk->name), 0xcbf29ce484222325ull);
	const uint64_t kh2 = fnv1a(&zk->addr, sizeof(zk->addr), kh);
	memcpy(p->uuid.kid, &kh, 8);
	memcpy(p->uuid.kid + 8, &kh2, 8);
	memcpy(p->uuid.mid, k->mod->uuid, 16);
	for (ze_base_properties_t *e = p->pNext; e; e = e->pNext)
		if (e->stype == ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES)
			((ze_kernel_preferred_group_size_properties_t *)e)->preferredMultiple = zk->simd;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_kernel_get_name(ze_kernel_handle_t hKernel, size_t *pSize, char *pName)
{
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(pSize);
	return zs_copy_string(KERNEL(hKernel)->k->name, pSize, pName);
}
