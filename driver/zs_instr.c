/* Program instrumentation: what a binary-instrumentation tool (GTPin-like,
 * tools/icount) needs from the driver — the registers a kernel leaves free
 * and the module's DWARF — behind ZET_ENABLE_PROGRAM_INSTRUMENTATION=1. */
#include "zs_instr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zs/ze_isa.h"
#include "zs_handle.h"
#include "zs_module.h"

static int enabled;

void zs_instr_init(void)
{
	const char *e = getenv("ZET_ENABLE_PROGRAM_INSTRUMENTATION");
	enabled = e && strcmp(e, "1") == 0;
}

#define ZS_PROFILE_FLAGS_ALL (ZET_PROFILE_FLAG_REGISTER_REALLOCATION | ZET_PROFILE_FLAG_FREE_REGISTER_INFO)

int zs_instr_profile_flags(const char *build_flags, uint32_t *flags, char *why, size_t len)
{
	static const char opt[] = "-zet-profile-flags";
	*flags = 0;
	for (const char *p = build_flags; p && *p;) {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strcspn(p, " \t");
		if (n != sizeof(opt) - 1 || strncmp(p, opt, n) != 0) {
			p += n;
			continue;
		}
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t");
		char value[32] = "";
		if (n && n < sizeof(value))
			memcpy(value, p, n);
		char *end = NULL;
		const unsigned long v = value[0] ? strtoul(value, &end, 16) : 0;
		if (!value[0] || value[0] == '-' || value[0] == '+' || *end) {
			snprintf(why, len, "-zet-profile-flags needs a hexadecimal value, got \"%.*s\"", (int)(n < 40 ? n : 40), p);
			return -1;
		}
		if (v & ~(unsigned long)ZS_PROFILE_FLAGS_ALL) {
			snprintf(why, len,
				 "-zet-profile-flags 0x%lx: unknown bits 0x%lx (REGISTER_REALLOCATION 0x1, "
				 "FREE_REGISTER_INFO 0x2)",
				 v, v & ~(unsigned long)ZS_PROFILE_FLAGS_ALL);
			return -1;
		}
		*flags = (uint32_t)v;
		p += n;
	}
	return 0;
}

int zs_instr_free_grfs(const uint8_t *text, uint32_t text_size, uint32_t arg_bytes, uint8_t free_grf[128])
{
	uint8_t used[ZE_GRF_COUNT] = {0};
	/* The dispatch payload (docs/isa.md §6): r0-r6, then the argument area. */
	const uint32_t payload = 7 + (arg_bytes + ZE_GRF_BYTES - 1) / ZE_GRF_BYTES;
	for (uint32_t r = 0; r < payload && r < ZE_GRF_COUNT; r++)
		used[r] = 1;
	for (uint32_t off = 0; off + ZE_INST_BYTES <= text_size; off += ZE_INST_BYTES) {
		ze_inst_t in;
		if (ze_decode(text + off, &in, NULL, 0))
			return -1;
		ze_inst_grf_footprint(&in, used);
	}
	int n = 0;
	for (uint32_t r = 0; r < ZE_GRF_COUNT; r++) {
		free_grf[r] = !used[r];
		n += free_grf[r];
	}
	return n;
}

ze_result_t ZE_APICALL zs_kernel_get_profile_info(zet_kernel_handle_t hKernel,
						  zet_profile_properties_t *pProfileProperties)
{
	if (!enabled)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	ZS_CHECK_HANDLE(hKernel, ZS_T_KERNEL);
	ZS_CHECK_PTR(pProfileProperties);
	ZS_CHECK_STYPE(pProfileProperties, (ze_structure_type_t)ZET_STRUCTURE_TYPE_PROFILE_PROPERTIES);
	const zs_kernel_t *k = (const zs_kernel_t *)hKernel;
	const uint32_t flags = k->mod->profile_flags;
	pProfileProperties->flags = flags;
	pProfileProperties->numTokens = 0;
	if (!(flags & ZET_PROFILE_FLAG_FREE_REGISTER_INFO))
		return ZE_RESULT_SUCCESS;
	uint8_t free_grf[ZE_GRF_COUNT];
	if (zs_instr_free_grfs(k->k->text, k->k->text_size, k->k->arg_bytes, free_grf) < 0)
		return ZE_RESULT_ERROR_UNKNOWN; /* the module reader decoded it when it was loaded */
	/* One token, immediately after the structure: runs of free registers
	 * as byte ranges of the register file (at most 64 runs in 128 GRFs). */
	uint8_t *out = (uint8_t *)(pProfileProperties + 1);
	zet_profile_free_register_token_t tok = {.type = ZET_PROFILE_TOKEN_TYPE_FREE_REGISTER};
	uint8_t *seq = out + sizeof(tok);
	for (uint32_t r = 0; r < ZE_GRF_COUNT;) {
		if (!free_grf[r]) {
			r++;
			continue;
		}
		uint32_t e = r;
		while (e < ZE_GRF_COUNT && free_grf[e])
			e++;
		const zet_profile_register_sequence_t s = {.start = r * ZE_GRF_BYTES, .count = (e - r) * ZE_GRF_BYTES};
		memcpy(seq + tok.count * sizeof(s), &s, sizeof(s));
		tok.count++;
		r = e;
	}
	tok.size = (uint32_t)(sizeof(tok) + tok.count * sizeof(zet_profile_register_sequence_t));
	memcpy(out, &tok, sizeof(tok));
	pProfileProperties->numTokens = 1;
	return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL zs_module_get_debug_info(zet_module_handle_t hModule, zet_module_debug_info_format_t format,
						size_t *pSize, uint8_t *pDebugInfo)
{
	if (!enabled)
		return ZE_RESULT_ERROR_UNINITIALIZED;
	ZS_CHECK_HANDLE(hModule, ZS_T_MODULE);
	ZS_CHECK_PTR(pSize);
	if (format > ZET_MODULE_DEBUG_INFO_FORMAT_ELF_DWARF)
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	/* The module's ELF is the debug information: its text, symbols and, when
	 * built with -g, .debug_line, .debug_info and .debug_abbrev. */
	return zs_module_get_native_binary((ze_module_handle_t)hModule, pSize, pDebugInfo);
}
