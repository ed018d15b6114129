/* zesim-dbg's command syntax: the parts that do not need a debug session
 * (locations, register references, numbers, x/FMT), unit-tested on their own. */
#ifndef ZDBG_CMD_H
#define ZDBG_CMD_H

#include <stddef.h>
#include <stdint.h>

/* Register-set types after the Intel GPU enum (zet_debug_regset_type_intel_gpu_t,
 * docs/debug.md): the public zet_api.h of Debian does not carry it. */
enum {
	ZD_REGSET_GRF = 1,
	ZD_REGSET_ADDR = 2,
	ZD_REGSET_FLAG = 3,
	ZD_REGSET_CE = 4,
	ZD_REGSET_SR = 5,
	ZD_REGSET_CR = 6,
	ZD_REGSET_TDR = 7,
	ZD_REGSET_ACC = 8,
	ZD_REGSET_MME = 9,
	ZD_REGSET_SP = 10,
	ZD_REGSET_SBA = 11,
	ZD_REGSET_DBG = 12,
	ZD_REGSET_FC = 13,
};

/* The set's name as the tool prints it ("grf", "cr", ...), or NULL. */
const char *zd_regset_name(uint32_t type);
/* The prefix of one register of the set: r12, a0, f1, acc0, cr0, ... */
const char *zd_regset_prefix(uint32_t type);
/* A set named by its name or register prefix ("grf", "r", "cr", ...): its type, 0 if none. */
uint32_t zd_regset_by_name(const char *name);

/* $SET<N>[.E]: register N (default 0) of SET, dword element E (default 0).
 * Accepted spellings: $grf12.3, $r12.3, $cr0.2, $f1, $acc1.7. */
typedef struct zd_regref {
	uint32_t type, reg, elem;
} zd_regref_t;
int zd_parse_regref(const char *s, zd_regref_t *out);

/* A breakpoint location. */
typedef enum { ZD_LOC_KERNEL, ZD_LOC_LINE, ZD_LOC_ADDR } zd_loc_kind_t;
typedef struct zd_loc {
	zd_loc_kind_t kind;
	char name[256];  /* kernel or file */
	uint64_t value;  /* offset in the kernel, line, or absolute GPU address (*ADDR) */
} zd_loc_t;
/* "kernel", "kernel+0x40", "file.cl:12", "*0xADDR".  0, or -1 with a message. */
int zd_parse_loc(const char *s, zd_loc_t *out, char *err, size_t errlen);

/* A whole number in C syntax (0x.., decimal), the whole string.  0 or -1. */
int zd_parse_u64(const char *s, uint64_t *out);

/* x/FMT: count N (default 1), letter x|d|u (default x), size b|h|w|g (default w).
 * s is what follows "x" ("/4x", "/8xb" or ""). */
typedef struct zd_xfmt {
	uint32_t count;
	char fmt;
	unsigned size; /* bytes per unit */
} zd_xfmt_t;
int zd_parse_xfmt(const char *s, zd_xfmt_t *out, char *err, size_t errlen);

/* Split a line into at most max words at spaces/tabs, in place; returns the count. */
int zd_split(char *line, char **words, int max);

#endif
