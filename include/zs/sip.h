/* The system routine of the EU debug stack (firmware/sip.zeasm, docs/debug.md section
 * 2.4), assembled at build time by zesim-as and embedded here (library zesim_sip): the
 * code of its one kernel, to be written by the KMD into GPU memory at the address it
 * programs into DBG_SIP_LO/HI (16-byte aligned; docs/debug.md section 2.5). */
#ifndef ZS_SIP_H
#define ZS_SIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const uint8_t zs_sip_bin[]; /* ZE-ISA instructions, 16 bytes each */
extern const size_t zs_sip_size;   /* bytes, a multiple of 16 */

#ifdef __cplusplus
}
#endif

#endif
