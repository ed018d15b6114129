/* A module's data segment (program-scope variables, .zesim.data) and printf
 * buffer (OpenCL printf of SPIR-V kernels, spirv/spv_printf.c): GPU memory
 * the kernels reach through hidden arguments, and the host side of printf —
 * decoding the records the kernels append and printing them on stdout at the
 * host's synchronization points (README.md, "Program-scope variables and
 * printf"). */
#ifndef ZS_PRINTF_H
#define ZS_PRINTF_H

#include <stdint.h>

#include "zs_module.h"

#define ZS_PRINTF_BUFFER_DEFAULT (1u << 20)
#define ZS_PRINTF_BUFFER_ENV "ZESIM_PRINTF_BUFFER_SIZE"

/* The size of a printf buffer: $ZESIM_PRINTF_BUFFER_SIZE, else 1 MiB. */
uint32_t zs_printf_buffer_size(void);

/* Makes the module's data segment (the initial bytes copied in) and, when a
 * kernel prints, its printf buffer; once, at the first kernel creation or
 * zeModuleGetGlobalPointer.  0 or a negative errno. */
int zs_module_data_ready(zs_module_t *mod);

/* Fills the hidden pointers __zs_data and __zs_printf of kernel k (records
 * k->nargs to all_nargs) in a dispatch's argument area. */
void zs_module_fill_hidden(const zs_module_t *mod, const zm_kernel_t *k, uint32_t all_nargs, uint8_t *args);

/* A host synchronization point (queue, fence, event, synchronous list):
 * prints the complete printf records of the device's modules; once the
 * device has no work outstanding, empties their buffers. */
void zs_printf_flush(zs_device_t *dev);

/* A module going away: its last printf output, then its GPU memory freed. */
void zs_module_data_release(zs_module_t *mod);

#endif
