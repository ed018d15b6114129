/* ZE-ISA modules: ELF64 files with one text section per kernel, kernel
 * attributes in .note.zesim, an optional data segment (.zesim.data) with its
 * variables, optional printf formats (.zesim.printf) and optional DWARF line
 * info (docs/module-format.md).
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
#define ZE_NOTE_VERSION 1u      /* kernel note without a required group size */
#define ZE_NOTE_VERSION_REQD 2u /* with reqd_group_size: a 48-byte header */
#define ZE_TEXT_ALIGN 64u
#define ZE_MAX_TEXT_BYTES (16u << 20)
#define ZE_MAX_HEAP_BYTES (64u << 20) /* all text sections of a module, by address */
#define ZE_MAX_ARG_BYTES 1024u
#define ZE_MAX_ARGS 256u
#define ZE_MAX_SLM_BYTES 65536u
/* Work items of a required group size: the largest group any topology runs
 * (64 EUs x 64 threads per sub-slice at SIMD16). */
#define ZE_MAX_REQD_GROUP_ITEMS 65536u
#define ZE_MAX_DATA_BYTES (16u << 20) /* .zesim.data */
#define ZE_MAX_DATA_ALIGN 4096u
#define ZE_MAX_PRINTF_FORMATS 65536u  /* entries of .zesim.printf */
#define ZE_MAX_PRINTF_ARGS 64u
#define ZE_DATA_SECTION ".zesim.data"
#define ZE_PRINTF_SECTION ".zesim.printf"

enum zm_arg_kind { ZM_ARG_GLOBAL = 0, ZM_ARG_LOCAL = 1, ZM_ARG_VALUE = 2 };

/* A printf argument of .zesim.printf: a kind and a component count (1 for a
 * scalar, 2-16 for a vector), ZM_PF_ARG(kind, count). */
enum zm_printf_kind {
	ZM_PF_INT = 1,     /* 8/16/32-bit integer: one dword per component */
	ZM_PF_LONG = 2,    /* 64-bit integer: two dwords (low, high) */
	ZM_PF_FLOAT = 3,   /* fp32: one dword */
	ZM_PF_STRING = 4,  /* %s: one dword, the string's offset in the data segment */
	ZM_PF_POINTER = 5, /* %p and other pointers: two dwords, the 64-bit address */
};
#define ZM_PF_ARG(kind, count) ((uint32_t)(kind) | (uint32_t)(count) << 8)
#define ZM_PF_KIND(arg) ((arg) & 0xffu)
#define ZM_PF_COUNT(arg) ((arg) >> 8)

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
	uint32_t reqd_group[3]; /* required group size (reqd_work_group_size), all 0 if none */
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

/* A named variable of the data segment (an STT_OBJECT symbol). */
typedef struct zm_global {
	char *name;
	uint32_t offset; /* in the data segment */
	uint32_t size;
	int exported;    /* STB_GLOBAL (else STB_LOCAL) */
} zm_global_t;

/* A printf call site: the format and the kinds of its arguments. */
typedef struct zm_printf {
	char *format;
	uint32_t nargs;
	uint32_t *args; /* ZM_PF_ARG values */
} zm_printf_t;

typedef struct zm_module {
	uint32_t nkernels;
	zm_kernel_t *kernels;
	uint32_t nfiles;
	char **files; /* source files named by zm_line_t.file */
	int has_debug_line;
	uint8_t *data;        /* initial bytes of the data segment (.zesim.data), NULL if none */
	uint32_t data_size;
	uint32_t data_align;  /* power of two */
	uint32_t nglobals;
	zm_global_t *globals;
	uint32_t nprintf;
	zm_printf_t *printf_formats; /* indexed by the format id of a printf record */
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

/* Dwords a printf argument takes in a record; 0 for an invalid value. */
uint32_t zm_printf_arg_dwords(uint32_t arg);
int zm_arg_kind_by_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif
