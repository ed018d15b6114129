/* zesim-as: the ZE-ISA assembler as a library (used by the CLI and the fuzzer). */
#ifndef ZESIM_ZAS_H
#define ZESIM_ZAS_H

#include <stddef.h>
#include <stdio.h>

#include "zs/ze_module.h"

typedef struct zas_options {
	int debug_line;     /* emit .debug_line (-g) */
	int allow_include;  /* .include may open files (off for the fuzzer) */
	unsigned max_errors; /* stop after this many (0 = 50) */
} zas_options_t;

/* Assemble source text named `path` (used in messages and line info) into a
 * module.  Diagnostics go to diag as "file:line:col: error: ...".  Returns the
 * number of errors; on errors the module is freed and left empty. */
unsigned zas_assemble(const char *path, const char *src, size_t len, const zas_options_t *opt,
		      zm_module_t *out, FILE *diag);

#endif
