/* zesim-dis: the ZE-ISA disassembler as a library (CLI and fuzzer). */
#ifndef ZESIM_ZDIS_H
#define ZESIM_ZDIS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "zs/ze_module.h"

/* Print a module as assembly that zesim-as turns back into the same bytes. */
void zdis_module(const zm_module_t *m, FILE *out);

/* Print raw instructions (len is truncated to whole instructions; a trailing
 * partial instruction is reported in a comment). */
void zdis_raw(const uint8_t *text, size_t len, FILE *out);

#endif
