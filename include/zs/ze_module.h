/* ZE-ISA modules: ELF64 files with one text section per kernel, kernel
 * attributes in .note.zesim and optional DWARF line info (docs/module-format.md).
 * Shared by the assembler, the disassembler and (later) the driver's module
 * loader; the reader validates every offset and size before trusting it. */
#ifndef ZESIM_ZE_MODULE_H
#define ZESIM_ZE_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZE_EM_ZEISA 0x5a45u
#define ZE_ISA_VERSION 1u
#define ZE_NT_KERNEL 1u
#define ZE_NOTE_NAME "ZESIM"
#define ZE_NOTE_VERSION 1u
#define ZE_TEXT_ALIGN 64u
#define ZE_MAX_TEXT_BYTES (16u << 20)
#define ZE_MAX_HEAP_BYTES (64u << 20) /* all text sections of a module, by address */
#define ZE_MAX_ARG_BYTES 1024u
#define ZE_MAX_ARGS 256u
#define ZE_MAX_SLM_BYTES 65536u

enum zm_arg_kind { ZM_ARG_GLOBAL = 0, ZM_ARG_LOCAL = 1, ZM_ARG_VALUE = 2 };

typedef struct zm_arg {
	char *name;
	uint32_t kind;
	uint32_t offset;
	uint32_t size;
} zm_arg_t;

typedef struct zm_func {
	char *name;
	uint32_t offset; /* in the kernel's text section */
	uint32_t size;
} zm_func_t;

/* Source position of one instruction (for .debug_line). */
typedef struct zm_line {
	uint32_t file; /* index into zm_module_t.files */
	uint32_t line;
} zm_line_t;

typedef struct zm_kernel {
	char *name;
	uint32_t simd;
	uint32_t grf;
	uint32_t slm;
	uint32_t arg_bytes;
	uint32_t nargs;
	zm_arg_t *args;
	uint32_t nfuncs;
	zm_func_t *funcs;
	uint8_t *text;
	uint32_t text_size;
	uint64_t addr;  /* sh_addr of the text section */
	zm_line_t *lines; /* text_size / 16 entries, or NULL */
} zm_kernel_t;

typedef struct zm_module {
	uint32_t nkernels;
	zm_kernel_t *kernels;
	uint32_t nfiles;
	char **files; /* source files named by zm_line_t.file */
	int has_debug_line;
} zm_module_t;

/* Write a module.  Section addresses are assigned here (kernels[i].addr is
 * set).  The file appears atomically: nothing is left at path on error.
 * Returns 0, or -1 with a message in err. */
int zm_module_write(zm_module_t *m, const char *path, char *err, size_t errlen);

/* Parse and validate a module held in memory.  Returns 0, or -1 with a
 * precise message in err (the offending field and value). */
int zm_module_read_mem(const void *buf, size_t size, zm_module_t *m, char *err, size_t errlen);

/* Read a file (at most 256 MiB) and parse it with zm_module_read_mem. */
int zm_module_read_file(const char *path, zm_module_t *m, char *err, size_t errlen);

void zm_module_free(zm_module_t *m);

const char *zm_arg_kind_name(uint32_t kind);
int zm_arg_kind_by_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif
