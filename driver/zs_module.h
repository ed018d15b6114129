/* Modules (native ZE-ISA ELF files, docs/module-format.md, or SPIR-V
 * translated into one by spirv/), their build logs and kernels.  A module's
 * text sections are copied into one GEM object, its instruction heap, laid
 * out by each section's sh_addr. */
#ifndef ZS_MODULE_H
#define ZS_MODULE_H

#include <stdatomic.h>
#include <stdbool.h>

#include <level_zero/ze_api.h>

#include "zs/ze_module.h"
#include "zs/zex_program_snapshot.h"
#include "zs_context.h"
#include "zs_os.h"

typedef struct zs_module {
	atomic_uint refs; /* the handle and each kernel */
	zs_context_t *ctx;
	zs_device_t *dev;
	zm_module_t m;
	uint32_t *num_groups_off; /* per kernel: offset of the hidden group counts, or UINT32_MAX */
	uint32_t *all_nargs;      /* per kernel: arguments including the hidden ones */
	uint8_t *native; /* the ZE-ISA module (input or translated SPIR-V), for zeModuleGetNativeBinary */
	size_t native_size;
	zs_bo_t text;
	uint8_t uuid[16];
	/* Linking (README.md, "Linking"): the SPIR-V of a module that imports
	 * or exports functions, specialized (spv_linkage), for
	 * zeModuleDynamicLink.  A module with imports has no kernels until it is
	 * linked; until then `entries` names the kernels it will have. */
	uint32_t *spirv;
	size_t spirv_words;
	atomic_bool unlinked;
	char **entries;
	uint32_t nentries;
	int debug_lines; /* built with -g: so is the linked module */
	/* Program snapshots requested at creation for stages reached at the link
	 * (README.md, "Program snapshots"). */
	struct zs_snapshot_req *snaps;
	uint32_t nsnaps;
	/* The data segment and the printf buffer (zs_printf.c), made at the
	 * first kernel creation or global-pointer query. */
	atomic_bool data_ready;
	zs_bo_t data;
	zs_bo_t printf_buf;
	uint32_t printf_size, printf_cursor, printf_dropped; /* under zs_printf.c's lock */
	struct zs_module *printf_next;
	/* Program debugging (zs_debug.c): the module's metadata id and the fence its
	 * first launch waits for (NULL: no wait). */
	uint32_t dbg_id;
	volatile uint64_t *dbg_fence;
	atomic_bool dbg_acked;
} zs_module_t;

/* zexModuleGetSnapshotStagesExp (ZEX_experimental_program_snapshot). */
ze_result_t ZE_APICALL zs_module_get_snapshot_stages(ze_driver_handle_t hDriver, uint32_t *pCount,
						     zex_snapshot_stage_properties_t *pStages);

typedef struct zs_build_log {
	char *text;
} zs_build_log_t;

typedef struct zs_kernel {
	zs_module_t *mod;
	const zm_kernel_t *k;
	uint64_t va; /* GPU address of the kernel's first instruction */
	uint8_t args[ZE_MAX_ARG_BYTES];
	uint32_t *local_size; /* per argument; used by local arguments only */
	uint32_t group[3];
	ze_kernel_indirect_access_flags_t indirect;
	ze_cache_config_flags_t cache;
} zs_kernel_t;

/* One walker's worth of launch state, captured at append time (later
 * argument changes must not affect commands already appended). */
typedef struct zs_dispatch {
	uint64_t kernel_va;
	uint32_t simd, grf, slm;
	uint32_t group[3], count[3];
	uint32_t arg_bytes;
	uint8_t args[ZE_MAX_ARG_BYTES];
} zs_dispatch_t;

/* Copy every text section of m into a new GEM object at its sh_addr. */
int zs_module_upload_text(zs_os_t *os, const zm_module_t *m, zs_bo_t *bo);

/* Fill d for a launch of k with the given group counts: arguments with the
 * SLM offsets of local arguments (after the static SLM, 4-byte aligned, in
 * declaration order, as docs/isa.md §6 says) and the total SLM. */
ze_result_t zs_kernel_dispatch(const zs_kernel_t *k, const ze_group_count_t *count, zs_dispatch_t *d);

/* Groups of the kernel's current size that fit on the device at once. */
uint32_t zs_kernel_max_cooperative_groups(const zs_kernel_t *k);

ze_result_t ZE_APICALL zs_module_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
					const ze_module_desc_t *desc, ze_module_handle_t *phModule,
					ze_module_build_log_handle_t *phBuildLog);
ze_result_t ZE_APICALL zs_module_destroy(ze_module_handle_t hModule);
ze_result_t ZE_APICALL zs_module_dynamic_link(uint32_t numModules, ze_module_handle_t *phModules,
					      ze_module_build_log_handle_t *phLinkLog);
ze_result_t ZE_APICALL zs_module_get_native_binary(ze_module_handle_t hModule, size_t *pSize,
						   uint8_t *pModuleNativeBinary);
ze_result_t ZE_APICALL zs_module_get_global_pointer(ze_module_handle_t hModule, const char *pGlobalName,
						    size_t *pSize, void **pptr);
ze_result_t ZE_APICALL zs_module_get_kernel_names(ze_module_handle_t hModule, uint32_t *pCount, const char **pNames);
ze_result_t ZE_APICALL zs_module_get_properties(ze_module_handle_t hModule,
						ze_module_properties_t *pModuleProperties);
ze_result_t ZE_APICALL zs_module_get_function_pointer(ze_module_handle_t hModule, const char *pFunctionName,
						      void **pfnFunction);
ze_result_t ZE_APICALL zs_module_build_log_destroy(ze_module_build_log_handle_t hModuleBuildLog);
ze_result_t ZE_APICALL zs_module_build_log_get_string(ze_module_build_log_handle_t hModuleBuildLog, size_t *pSize,
						      char *pBuildLog);

ze_result_t ZE_APICALL zs_kernel_create(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
					ze_kernel_handle_t *phKernel);
ze_result_t ZE_APICALL zs_kernel_destroy(ze_kernel_handle_t hKernel);
ze_result_t ZE_APICALL zs_kernel_set_cache_config(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags);
ze_result_t ZE_APICALL zs_kernel_set_group_size(ze_kernel_handle_t hKernel, uint32_t groupSizeX, uint32_t groupSizeY,
						uint32_t groupSizeZ);
ze_result_t ZE_APICALL zs_kernel_suggest_group_size(ze_kernel_handle_t hKernel, uint32_t globalSizeX,
						    uint32_t globalSizeY, uint32_t globalSizeZ, uint32_t *groupSizeX,
						    uint32_t *groupSizeY, uint32_t *groupSizeZ);
ze_result_t ZE_APICALL zs_kernel_suggest_max_cooperative_group_count(ze_kernel_handle_t hKernel,
								     uint32_t *totalGroupCount);
ze_result_t ZE_APICALL zs_kernel_set_argument_value(ze_kernel_handle_t hKernel, uint32_t argIndex, size_t argSize,
						    const void *pArgValue);
ze_result_t ZE_APICALL zs_kernel_set_indirect_access(ze_kernel_handle_t hKernel,
						     ze_kernel_indirect_access_flags_t flags);
ze_result_t ZE_APICALL zs_kernel_get_indirect_access(ze_kernel_handle_t hKernel,
						     ze_kernel_indirect_access_flags_t *pFlags);
ze_result_t ZE_APICALL zs_kernel_get_source_attributes(ze_kernel_handle_t hKernel, uint32_t *pSize, char **pString);
ze_result_t ZE_APICALL zs_kernel_get_properties(ze_kernel_handle_t hKernel, ze_kernel_properties_t *pKernelProperties);
ze_result_t ZE_APICALL zs_kernel_get_name(ze_kernel_handle_t hKernel, size_t *pSize, char *pName);

#endif
