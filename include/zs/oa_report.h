/* The OA report: the Gen12 256-byte A32u40_A4u32_B8_C8 layout (docs/oa.md section 4),
 * defined once for the OA block (RTL and C++ twin), the fake KMD, the L0 driver's
 * metrics code and the tests.  Little-endian dwords:
 *
 *   DW0   report id: buffer reports: reason << 19 | context valid << 16 | clock ratio
 *         (bits 8:0, core MHz / 16.666..., rounded); query reports (REPORT_PERF_COUNT):
 *         the command's report id
 *   DW1   timestamp bits 31:0 at the report's cycle boundary
 *   DW2   context id (CTX_ID of the command streamer)
 *   DW3   GPU ticks: core cycles since the counters were enabled (32 bits)
 *   DW4-39    A0-A35 bits 31:0
 *   bytes 160-191  A0-A31 bits 39:32 (one byte each)
 *   DW48-55   B0-B7        DW56-63   C0-C7
 */
#ifndef ZESIM_OA_REPORT_H
#define ZESIM_OA_REPORT_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZS_OA_REPORT_BYTES 256u
#define ZS_OA_REPORT_DWORDS 64u
#define ZS_OA_A_COUNTERS 36u  /* A0-A35 */
#define ZS_OA_A40_COUNTERS 32u /* A0-A31 are 40-bit, the rest 32-bit */
#define ZS_OA_B_COUNTERS 8u
#define ZS_OA_C_COUNTERS 8u
#define ZS_OA_BC_COUNTERS 16u  /* B0-B7 then C0-C7: OA_BC_SEL0-15 */
#define ZS_OA_EVENT_LINES 30u  /* include/zs/oa_events.def */
#define ZS_OA_MAX_SUBSLICES 16u /* per-sub-slice lines (OA_BC_SEL SS_MASK) */
#define ZS_OA_MARKER_COUNTER 35u /* A35: the last OA_MARKER value */

/* OA_BC_SEL event codes after the event lines (0-29): EU active / stall / idle cycles of
 * the sub-slices in the select's SS_MASK; any other code counts nothing. */
#define ZS_OA_BC_EU_ACTIVE 32u
#define ZS_OA_BC_EU_STALL 33u
#define ZS_OA_BC_EU_IDLE 34u

/* OA_BUF_SIZE.LOG2: written values are clamped to 4 KiB - 128 MiB. */
#define ZS_OA_BUF_LOG2_MIN 12u
#define ZS_OA_BUF_LOG2_MAX 27u

/* Dword / byte offsets. */
#define ZS_OA_DW_REPORT_ID 0u
#define ZS_OA_DW_TIMESTAMP 1u
#define ZS_OA_DW_CONTEXT 2u
#define ZS_OA_DW_TICKS 3u
#define ZS_OA_DW_A 4u
#define ZS_OA_BYTE_A_HIGH 160u
#define ZS_OA_DW_B 48u
#define ZS_OA_DW_C 56u

/* DW0 of a buffer report. */
#define ZS_OA_ID_CLOCK_RATIO_MASK 0x1ffu
#define ZS_OA_ID_CONTEXT_VALID (1u << 16)
#define ZS_OA_ID_REASON_SHIFT 19u
#define ZS_OA_ID_REASON_MASK 0x3fu

/* Report reasons (DW0 bits 24:19); several may be set when triggers coincide. */
#define ZS_OA_REASON_TIMER (1u << 0)
#define ZS_OA_REASON_MARKER (1u << 1)	  /* OA_MARKER written */
#define ZS_OA_REASON_MMIO (1u << 2)	  /* OA_TRIGGER written */
#define ZS_OA_REASON_CTX_SWITCH (1u << 3) /* CTX_ID changed */

/* The uAPI format id of this layout (Xe: OAG type 0, counter select 5). */
#define ZS_OA_FORMAT_A32u40_A4u32_B8_C8 (0u | 5u << 8)

/* Clock ratio of DW0 for a core clock in MHz: units of 16.666... MHz, rounded. */
static inline uint32_t zs_oa_clock_ratio(uint32_t core_mhz)
{
	return ((core_mhz * 3u + 25u) / 50u) & ZS_OA_ID_CLOCK_RATIO_MASK;
}

static inline uint32_t zs_oa_dw(const uint8_t *r, unsigned dw)
{
	uint32_t v;
	memcpy(&v, r + 4 * dw, 4);
	return v;
}

/* Counter A<i> of a report: 40 bits for A0-A31, 32 for A32-A35. */
static inline uint64_t zs_oa_a(const uint8_t *r, unsigned i)
{
	uint64_t v = zs_oa_dw(r, ZS_OA_DW_A + i);
	if (i < ZS_OA_A40_COUNTERS)
		v |= (uint64_t)r[ZS_OA_BYTE_A_HIGH + i] << 32;
	return v;
}

static inline uint32_t zs_oa_b(const uint8_t *r, unsigned i) { return zs_oa_dw(r, ZS_OA_DW_B + i); }
static inline uint32_t zs_oa_c(const uint8_t *r, unsigned i) { return zs_oa_dw(r, ZS_OA_DW_C + i); }
static inline uint32_t zs_oa_reason(const uint8_t *r)
{
	return zs_oa_dw(r, ZS_OA_DW_REPORT_ID) >> ZS_OA_ID_REASON_SHIFT & ZS_OA_ID_REASON_MASK;
}

/* Deltas with wrap: 40-bit counters and 32-bit ones. */
static inline uint64_t zs_oa_delta40(uint64_t before, uint64_t after)
{
	return (after - before) & ((1ull << 40) - 1);
}
static inline uint32_t zs_oa_delta32(uint32_t before, uint32_t after) { return after - before; }

#ifdef __cplusplus
}
#endif

#endif
