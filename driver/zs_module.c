/* Modules, build logs and kernels.  Loading a native module = validating it
 * with the shared module reader (tools/module), then copying its text into
 * GPU memory.  A SPIR-V module is first translated into a native one by the
 * front end in spirv/ (README.md), then loaded the same way. */
#define _GNU_SOURCE
#include "zs_module.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"
#include "zs_handle.h"

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
	zs_os_bo_destroy(&mod->dev->os, &mod->text);
	module_free(mod);
	free(mod->native);
	zs_context_unref(mod->ctx);
	free(mod);
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
	zs_context_t *ctx = (zs_context_t *)hContext;
	zs_device_t *dev = (zs_device_t *)hDevice;
	const uint8_t *input = desc->pInputModule;
	size_t input_size = desc->inputSize;
	uint8_t *compiled = NULL; /* SPIR-V translated to a ZE-ISA module (driver/spirv/) */
	char why[512];
	if (desc->format == ZE_MODULE_FORMAT_IL_SPIRV) {
		const ze_module_constants_t *sc = desc->pConstants;
		const spv_compile_options_t opt = {
			.max_simd = dev->info.max_simd,
			.num_spec = sc ? sc->numConstants : 0,
			.spec_ids = sc ? sc->pConstantIds : NULL,
			.spec_values = sc ? (const void *const *)sc->pConstantValues : NULL,
		};
		char err[768];
		const int rc = spv_compile_elf(input, input_size, &opt, &compiled, &input_size, err, sizeof(err));
		if (rc)
			return fail(phBuildLog,
				    rc == SPV_NO_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
							: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
				    "SPIR-V module build failed: %s", err);
		input = compiled;
	} else if (foreign_binary(input, input_size, why, sizeof(why))) {
		return fail(phBuildLog, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "invalid native binary: %s", why);
	}

	zs_module_t *mod = calloc(1, sizeof(*mod));
	if (!mod) {
		free(compiled);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	if (zm_module_read_mem(input, input_size, &mod->m, why, sizeof(why))) {
		free(mod);
		free(compiled);
		return fail(phBuildLog, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "module build failed: %s", why);
	}
	if (hide_implicit_args(mod)) {
		module_free(mod);
		free(mod);
		free(compiled);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	/* What the reader cannot know: the limits of this device. */
	for (uint32_t i = 0; i < mod->m.nkernels; i++) {
		const zm_kernel_t *k = &mod->m.kernels[i];
		if (k->simd > dev->info.max_simd || k->slm > dev->info.slm_per_subslice) {
			ze_result_t r = fail(phBuildLog, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
					     "module build failed: kernel %s needs SIMD%u and %u bytes of SLM; the "
					     "device has SIMD%u and %llu bytes of SLM per sub-slice",
					     k->name, k->simd, k->slm, dev->info.max_simd,
					     (unsigned long long)dev->info.slm_per_subslice);
			module_free(mod);
			free(mod);
			free(compiled);
			return r;
		}
	}
	/* zeModuleGetNativeBinary returns the ZE-ISA module: the input, or what
	 * the SPIR-V became. */
	mod->native = compiled ? compiled : malloc(input_size);
	int rc = mod->native ? zs_module_upload_text(&dev->os, &mod->m, &mod->text) : -ENOMEM;
	if (rc) {
		module_free(mod);
		free(mod->native);
		free(mod);
		return rc == -ENOMEM ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : zs_device_result(dev, rc);
	}
	if (!compiled)
		memcpy(mod->native, input, input_size);
	mod->native_size = input_size;
	const uint64_t h1 = fnv1a(mod->native, mod->native_size, 0xcbf29ce484222325ull);
	const uint64_t h2 = fnv1a(mod->native, mod->native_size, h1 ^ 0x9e3779b97f4a7c15ull);
	memcpy(mod->uuid, &h1, 8);
	memcpy(mod->uuid + 8, &h2, 8);
	atomic_init(&mod->refs, 1);
	mod->ctx = ctx;
	mod->dev = dev;
	zs_context_ref(ctx);
	ze_result_t r = zs_handle_add(mod, ZS_T_MODULE);
	if (!r)
		r = new_log(phBuildLog, ""); /* a successful build logs nothing */
	if (r) {
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
	module_unref((zs_module_t *)hModule);
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_dynamic_link(uint32_t numModules, ze_module_handle_t *phModules,
					      ze_module_build_log_handle_t *phLinkLog)
{
	ZS_CHECK_PTR(phModules);
	for (uint32_t i = 0; i < numModules; i++)
		ZS_CHECK_HANDLE(phModules[i], ZS_T_MODULE);
	/* ZE-ISA modules have no imports (docs/module-format.md): every module
	 * is complete as loaded, so linking resolves nothing. */
	return new_log(phLinkLog, "");
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
	memcpy(pModuleNativeBinary, mod->native, mod->native_size);
	*pSize = mod->native_size;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_global_pointer(ze_module_handle_t hModule, const char *pGlobalName,
						    size_t *pSize, void **pptr)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pGlobalName);
	ZS_UNUSED(pSize);
	ZS_UNUSED(pptr);
	/* The module format has no global variables. */
	return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

ze_result_t ZE_APICALL zs_module_get_kernel_names(ze_module_handle_t hModule, uint32_t *pCount, const char **pNames)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pCount);
	const zs_module_t *mod = (const zs_module_t *)hModule;
	if (*pCount == 0 || !pNames) {
		*pCount = mod->m.nkernels;
		return ZE_RESULT_SUCCESS;
	}
	if (*pCount > mod->m.nkernels)
		*pCount = mod->m.nkernels;
	for (uint32_t i = 0; i < *pCount; i++)
		pNames[i] = mod->m.kernels[i].name;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_properties(ze_module_handle_t hModule, ze_module_properties_t *p)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(p);
	p->flags = 0; /* no unresolved imports, ever */
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_function_pointer(ze_module_handle_t hModule, const char *pFunctionName,
						      void **pfnFunction)
{
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pFunctionName);
	ZS_CHECK_PTR(pfnFunction);
	const zs_module_t *mod = (const zs_module_t *)hModule;
	const uint64_t base = zs_bo_va(&mod->text);
	/* Kernels are functions too; .func symbols are at an offset inside
	 * their kernel's section. */
	for (uint32_t i = 0; i < mod->m.nkernels; i++) {
		const zm_kernel_t *k = &mod->m.kernels[i];
		if (strcmp(k->name, pFunctionName) == 0) {
			*pfnFunction = (void *)(uintptr_t)(base + k->addr);
			return ZE_RESULT_SUCCESS;
		}
		for (uint32_t f = 0; f < k->nfuncs; f++)
			if (strcmp(k->funcs[f].name, pFunctionName) == 0) {
				*pfnFunction = (void *)(uintptr_t)(base + k->addr + k->funcs[f].offset);
				return ZE_RESULT_SUCCESS;
			}
	}
	return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
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
	if (desc->flags > 0x3)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	zs_module_t *mod = (zs_module_t *)hModule;
	const zm_kernel_t *zk = NULL;
	for (uint32_t i = 0; i < mod->m.nkernels && !zk; i++)
		if (strcmp(mod->m.kernels[i].name, desc->pKernelName) == 0)
			zk = &mod->m.kernels[i];
	if (!zk)
		return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
	zs_kernel_t *k = calloc(1, sizeof(*k));
	if (!k || !(k->local_size = calloc(zk->nargs ? zk->nargs : 1, sizeof(uint32_t)))) {
		free(k);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	k->mod = mod;
	k->k = zk;
	k->va = zs_bo_va(&mod->text) + zk->addr;
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
	/* The largest group that divides the global size exactly (so that no
	 * work item falls outside the grid), filling x first. */
	const uint32_t limit = max_group_size(KERNEL(hKernel));
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
	ZS_CHECK_PTR(pString);
	/* Assembly kernels carry no source-language attributes: "". */
	if (*pSize == 0 || !*pString) {
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
	const zs_kernel_t *k = KERNEL(hKernel);
	const zm_kernel_t *zk = k->k;
	p->numKernelArgs = zk->nargs;
	p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0; /* none required */
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
