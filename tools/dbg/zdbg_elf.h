/* zesim-dbg's view of a module: the ELF64 file a MODULE_LOAD event points at,
 * read by hand (no libelf: the debugger reads what the driver put in memory,
 * independently of the module library that wrote it).  What it keeps: the
 * function symbols (kernels and their functions, docs/module-format.md) and the
 * rows of the DWARF line table (.debug_line, versions 2 to 5, 32- and 64-bit
 * units), so that "kernel+offset" and "file:line" become addresses and back. */
#ifndef ZDBG_ELF_H
#define ZDBG_ELF_H

#include <stddef.h>
#include <stdint.h>

typedef struct zd_sym {
	char *name;
	uint64_t addr; /* st_value: in a module, the offset in its instruction heap */
	uint64_t size;
	int global;    /* STB_GLOBAL: a kernel (STB_LOCAL: a function) */
} zd_sym_t;

/* One row of the line-number matrix (DWARF 5 §6.2.2). */
typedef struct zd_row {
	uint64_t addr;
	uint32_t file; /* index into zd_elf_t.files */
	uint32_t line;
	uint8_t is_stmt;
	uint8_t end_seq; /* the first address after a sequence: no source position */
} zd_row_t;

typedef struct zd_elf {
	zd_sym_t *syms; /* STT_FUNC symbols with a name, in file order */
	size_t nsyms;
	char **files; /* every file of every unit's file table, as "dir/name" when a directory is named */
	size_t nfiles;
	zd_row_t *rows; /* in the order the line programs emit them */
	size_t nrows;
	int has_lines; /* a .debug_line section was present */
} zd_elf_t;

/* Parse an ELF64 little-endian file of n bytes.  0 on success; -1 with a message
 * in err (naming the offending field) for a malformed file.  A file without
 * .debug_line or without symbols parses (nrows / nsyms 0). */
int zd_elf_parse(const void *p, size_t n, zd_elf_t *out, char *err, size_t errlen);
void zd_elf_free(zd_elf_t *e);

/* The symbol named name, preferring a global (kernel) one; NULL if none. */
const zd_sym_t *zd_sym_by_name(const zd_elf_t *e, const char *name);
/* The function symbol whose [addr, addr+size) holds a, kernels first; NULL if none. */
const zd_sym_t *zd_sym_at(const zd_elf_t *e, uint64_t a);

/* The row in effect at address a: the last row with row.addr <= a < next row's
 * addr in its sequence.  NULL if no sequence covers a. */
const zd_row_t *zd_row_at(const zd_elf_t *e, uint64_t a);

/* Does path name file f?  Equal, or path ends with "/" + file, or the basenames
 * are equal when file has no '/'. */
int zd_file_matches(const char *path, const char *file);

/* Resolve file:line.  The smallest line >= line that has code in a file that
 * zd_file_matches (as gdb does for a line without code); for it, one address per
 * function symbol: the lowest address of a row of that line.  Writes up to max
 * addresses to out, returns how many there are (0: no code at or after line);
 * *found_line gets the line used. */
size_t zd_addrs_for_line(const zd_elf_t *e, const char *file, uint32_t line, uint64_t *out, size_t max,
			 uint32_t *found_line);

#endif
