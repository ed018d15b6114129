/* The driver's SPIR-V front end: OpenCL kernels in SPIR-V -> ZE-ISA modules
 * (docs/module-format.md).  C only, no LLVM; what is supported is listed in
 * driver/README.md ("SPIR-V front end"). */
#ifndef ZS_SPV_COMPILE_H
#define ZS_SPV_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "zs/ze_module.h"

/* The name of the hidden argument that receives the launch's group counts
 * (3 dwords) when a kernel reads get_num_groups / get_global_size; the driver
 * fills it at dispatch and hides it from argument reflection (zs_module.c). */
#define SPV_HIDDEN_NUM_GROUPS "__zs_num_groups"
#define SPV_HIDDEN_PREFIX "__zs_"
/* Hidden global pointers, before the group counts: the module's data segment
 * (program-scope variables, .zesim.data) when the kernel uses it, and the
 * printf buffer when the kernel calls printf. */
#define SPV_HIDDEN_DATA "__zs_data"
#define SPV_HIDDEN_PRINTF "__zs_printf"

/* The printf buffer: a header of 4 dwords, then records.  A printing lane
 * reserves its record with an atomic add of the record's size on the offset
 * and writes it only if it ends within the capacity; otherwise it counts
 * itself in `dropped`.  A record: u32 its size in bytes (written last, after
 * a fence: 0 means not complete yet), u32 the format id (the index of the call
 * site in .zesim.printf), then its arguments' dwords (docs/module-format.md).
 * The driver decodes the records in buffer order (driver/zs_printf.c). */
#define SPV_PRINTF_OFFSET 0u   /* bytes in use, header included */
#define SPV_PRINTF_CAPACITY 4u /* the buffer's size in bytes */
#define SPV_PRINTF_DROPPED 8u  /* records that did not fit */
#define SPV_PRINTF_HEADER 16u

/* Program snapshots (driver/README.md, "Program snapshots"): the stages of the
 * pipeline in order, what each captures and in which formats. */
enum spv_stage {
	SPV_STAGE_SPIRV,
	SPV_STAGE_SPIRV_TRANSLATED,
	SPV_STAGE_IR_LOWERED,
	SPV_STAGE_IR_LOOPS,
	SPV_STAGE_IR_SCHEDULED,
	SPV_STAGE_IR_ALLOCATED,
	SPV_STAGE_ZEISA,
	SPV_NSTAGES
};
enum { SPV_FMT_TEXT = 1u << 1, SPV_FMT_BINARY = 1u << 2 }; /* bit (1 << format): default 0, text 1, binary 2 */
typedef struct spv_stage_info {
	const char *name, *description;
	uint32_t formats;    /* SPV_FMT_* */
	uint32_t def_format; /* one of them */
} spv_stage_info_t;
extern const spv_stage_info_t spv_stages[SPV_NSTAGES];
int spv_stage_by_name(const char *name); /* -1 when unknown */

/* A request to capture one IR stage (SPV_STAGE_IR_*) of every kernel: the
 * compiler fills text (malloc'ed; the kernels in module order) and size. */
typedef struct spv_snapshot {
	uint32_t stage;
	char *text;
	size_t size;
} spv_snapshot_t;

/* A ZE-ISA ELF image as zesim-dis assembly (malloc'ed text), for the zeisa stage. */
int spv_disassemble(const uint8_t *elf, size_t size, char **text, size_t *len, char *err, size_t errlen);

typedef struct spv_compile_options {
	uint32_t max_simd;               /* the device's widest SIMD: 8 or 16 */
	uint32_t num_spec;               /* specialization constants (ze_module_constants_t) */
	const uint32_t *spec_ids;
	const void *const *spec_values;
	int debug_lines;                 /* -g: a DWARF line table from the module's OpLine */
	int no_unroll;                   /* -fno-unroll-loops: loops stay as written */
	uint32_t reserve_grfs;           /* GRFs at the top the allocator leaves free (-zet-profile-flags 0x1) */
	spv_snapshot_t *snapshot;        /* NULL, or an IR stage to capture */
} spv_compile_options_t;

enum { SPV_OK = 0, SPV_BUILD_FAILED = -1, SPV_NO_MEMORY = -2 };

/* Translate every kernel of a SPIR-V module.  Returns SPV_OK with out filled
 * (free it with zm_module_free), or an error with the build-log message in err
 * ("word N: ..." where a word of the module is at fault). */
int spv_compile(const void *spirv, size_t size, const spv_compile_options_t *opt, zm_module_t *out, char *err,
		size_t errlen);

/* spv_compile, then the module as a ZE-ISA ELF image (written by the shared
 * module writer) in a malloc'ed buffer. */
int spv_compile_elf(const void *spirv, size_t size, const spv_compile_options_t *opt, uint8_t **elf,
		    size_t *elf_size, char *err, size_t errlen);

#endif
