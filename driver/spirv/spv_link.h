/* SPIR-V linking for zeModuleDynamicLink: a module whose functions are
 * decorated LinkageAttributes Import gets the definitions other modules export
 * by merging their SPIR-V into one module, which the front end then compiles
 * like any other (it inlines every call).  See driver/README.md, "Linking". */
#ifndef ZS_SPV_LINK_H
#define ZS_SPV_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "spv_compile.h"

/* One module taking part in a link. */
typedef struct spv_link_module {
	const void *spirv;   /* its SPIR-V binary (either byte order) */
	size_t size;         /* bytes */
	const char *label;   /* names it in messages, e.g. "phModules[1]" */
} spv_link_module_t;

/* What a module imports and exports.  Built-in variables, which llvm-spirv
 * also decorates Import, are not imports. */
typedef struct spv_linkage {
	uint32_t nimports;
	uint32_t nexports;
	uint32_t nkernels;
	char **kernels;  /* entry point names */
	/* When the module imports or exports: the module as spv_link takes it,
	 * its specialization constants set to their values from opt (or their
	 * defaults) and no longer specializable (host-order words). */
	uint32_t *words;
	size_t nwords;
} spv_linkage_t;

/* Read and validate a module and describe its linkage.  Returns SPV_OK, or an
 * error (SPV_BUILD_FAILED, SPV_NO_MEMORY) with the message in err. */
int spv_linkage(const void *spirv, size_t size, const spv_compile_options_t *opt, spv_linkage_t *out, char *err,
		size_t errlen);
void spv_linkage_free(spv_linkage_t *l);

/* Resolve the imports of mods[0] from the exports of mods[1..n-1] and return
 * one self-contained module (host-order words in a malloc'ed buffer): the
 * kernels of mods[0] with the code of every module they need, directly or
 * through other imports.  The modules' specialization constants keep their
 * defaults (give spv_link what spv_linkage returns).  Errors (SPV_BUILD_FAILED: an
 * unresolved or ambiguous import, signatures that differ, ...; SPV_NO_MEMORY)
 * put the problems in err, one per line, naming the symbols and modules. */
int spv_link(const spv_link_module_t *mods, uint32_t n, uint32_t **words, size_t *nwords, char *err,
	     size_t errlen);

#endif
