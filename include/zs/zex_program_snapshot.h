/* ZEX_experimental_program_snapshot: a driver extension of libze_zesim.so.1 that
 * hands an application the module builder's intermediate results (driver/README.md,
 * "Program snapshots"), after OpenCL's cl_codeplay_program_snapshot proposal, in
 * Level Zero terms.
 *
 * Find it with zeDriverGetExtensionProperties (ZEX_PROGRAM_SNAPSHOT_EXP_NAME) and
 * zeDriverGetExtensionFunctionAddress (ZEX_MODULE_GET_SNAPSHOT_STAGES_EXP_NAME).
 * List the stages with zexModuleGetSnapshotStagesExp (two calls: the count, then the
 * properties), then chain a zex_module_snapshot_exp_desc_t per wanted stage on the
 * pNext of zeModuleCreate's ze_module_desc_t: the callback is called, on the calling
 * thread, when the build reaches the stage (during zeModuleCreate, or during
 * zeModuleDynamicLink for stages after the first of a module with imports), with the
 * whole module at that stage; `pData` is valid during the call only. */
#ifndef ZEX_PROGRAM_SNAPSHOT_H
#define ZEX_PROGRAM_SNAPSHOT_H

#include <level_zero/ze_api.h>

#define ZEX_PROGRAM_SNAPSHOT_EXP_NAME "ZEX_experimental_program_snapshot"
#define ZEX_PROGRAM_SNAPSHOT_EXP_VERSION ZE_MAKE_VERSION(1, 0)
#define ZEX_MODULE_GET_SNAPSHOT_STAGES_EXP_NAME "zexModuleGetSnapshotStagesExp"

/* The descriptor's structure type: in the experimental range, below the
 * validation layer's bound for driver values (0x00100000). */
#define ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC ((ze_structure_type_t)0x0002f001)

typedef enum zex_snapshot_format {
	ZEX_SNAPSHOT_FORMAT_DEFAULT = 0, /* the stage's default format */
	ZEX_SNAPSHOT_FORMAT_TEXT = 1,
	ZEX_SNAPSHOT_FORMAT_BINARY = 2,
} zex_snapshot_format_t;

/* Bit (1 << format) per format a stage offers. */
typedef uint32_t zex_snapshot_format_flags_t;
#define ZEX_SNAPSHOT_FORMAT_FLAG_TEXT (1u << ZEX_SNAPSHOT_FORMAT_TEXT)
#define ZEX_SNAPSHOT_FORMAT_FLAG_BINARY (1u << ZEX_SNAPSHOT_FORMAT_BINARY)

#define ZEX_SNAPSHOT_STAGE_NAME_SIZE 64
#define ZEX_SNAPSHOT_STAGE_DESCRIPTION_SIZE 256

typedef struct zex_snapshot_stage_properties {
	uint32_t stage;                                        /* its index, in pipeline order */
	char name[ZEX_SNAPSHOT_STAGE_NAME_SIZE];               /* e.g. "ir-allocated" */
	char description[ZEX_SNAPSHOT_STAGE_DESCRIPTION_SIZE]; /* what the snapshot holds (truncated) */
	zex_snapshot_format_flags_t formats;                   /* the formats it can be had in */
	zex_snapshot_format_t defaultFormat;                   /* TEXT or BINARY */
} zex_snapshot_stage_properties_t;

/* *pCount 0 (or pStages NULL): *pCount becomes the number of stages. Otherwise the
 * first min(*pCount, stages) are written and *pCount becomes that number. */
typedef ze_result_t(ZE_APICALL *zex_pfnModuleGetSnapshotStagesExp_t)(ze_driver_handle_t hDriver, uint32_t *pCount,
								    zex_snapshot_stage_properties_t *pStages);

/* `format` is the format of pData (never DEFAULT). Binary SPIR-V and ELF are the
 * bytes of the module; text is UTF-8 without a terminating NUL in `size`. */
typedef void(ZE_APICALL *zex_pfnSnapshotCallback_t)(void *pUserData, uint32_t stage, zex_snapshot_format_t format,
						    size_t size, const void *pData);

typedef struct zex_module_snapshot_exp_desc {
	ze_structure_type_t stype; /* ZEX_STRUCTURE_TYPE_MODULE_SNAPSHOT_EXP_DESC */
	const void *pNext;
	uint32_t stage;               /* an index from zexModuleGetSnapshotStagesExp */
	zex_snapshot_format_t format; /* DEFAULT, or one the stage offers */
	zex_pfnSnapshotCallback_t pfnCallback;
	void *pUserData;
} zex_module_snapshot_exp_desc_t;

#endif
