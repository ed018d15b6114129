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

typedef struct spv_compile_options {
	uint32_t max_simd;               /* the device's widest SIMD: 8 or 16 */
	uint32_t num_spec;               /* specialization constants (ze_module_constants_t) */
	const uint32_t *spec_ids;
	const void *const *spec_values;
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
