/* Program instrumentation (tools, ZET_ENABLE_PROGRAM_INSTRUMENTATION=1 at
 * zeInit): the -zet-profile-flags build flag, zetKernelGetProfileInfo with the
 * free-register token, and zetModuleGetDebugInfo (README.md, "Program
 * instrumentation"). */
#ifndef ZS_INSTR_H
#define ZS_INSTR_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/zet_api.h>

/* GRFs (r126, r127) the SPIR-V front end leaves free in every kernel of a
 * module built with ZET_PROFILE_FLAG_REGISTER_REALLOCATION. */
#define ZS_INSTR_RESERVED_GRFS 2u

/* Reads ZET_ENABLE_PROGRAM_INSTRUMENTATION (once, at the first zeInit). */
void zs_instr_init(void);

/* The value of "-zet-profile-flags <hex>" in build flags: 0 and *flags = 0
 * when absent, 0 and the flags when valid, -1 with a message in why when the
 * value is missing, not hex, or names bits that are no zet_profile_flag_t. */
int zs_instr_profile_flags(const char *build_flags, uint32_t *flags, char *why, size_t len);

/* GRFs the kernel's code (its text section: the kernel and its functions)
 * never reads or writes, minus the dispatch payload (r0-r6 and the argument
 * registers): free[r] = 1.  Returns the number of free registers, or -1 for
 * text that does not decode. */
int zs_instr_free_grfs(const uint8_t *text, uint32_t text_size, uint32_t arg_bytes, uint8_t free[128]);

ze_result_t ZE_APICALL zs_kernel_get_profile_info(zet_kernel_handle_t hKernel,
						  zet_profile_properties_t *pProfileProperties);
ze_result_t ZE_APICALL zs_module_get_debug_info(zet_module_handle_t hModule, zet_module_debug_info_format_t format,
						size_t *pSize, uint8_t *pDebugInfo);

#endif
