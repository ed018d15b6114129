/* ELF64 symbols and the DWARF line program, read by hand (zdbg_elf.h). */
#define _POSIX_C_SOURCE 200809L
#include "zdbg_elf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHT_SYMTAB 2
#define STT_FUNC 2
#define STB_GLOBAL 1

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* A bounded cursor over a byte range; any read past the end sets bad. */
typedef struct cur {
	const uint8_t *p, *end;
	int bad;
} cur_t;

static uint64_t rd(cur_t *c, unsigned n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = get(c->p, n);
	c->p += n;
	return v;
}

static uint64_t uleb(cur_t *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t sleb(cur_t *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* A NUL-terminated string inside the cursor's range (NULL and bad if none). */
static const char *cstr(cur_t *c)
{
	if (c->bad)
		return NULL;
	const uint8_t *z = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!z) {
		c->bad = 1;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = z + 1;
	return s;
}

static void skip(cur_t *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = 1;
	else
		c->p += n;
}

struct sec {
	const uint8_t *p;
	uint64_t size;
};

/* Growable arrays. */
static int grow(void **a, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	void *q = realloc(*a, nc * elem);
	if (!q)
		return -1;
	*a = q;
	*cap = nc;
	return 0;
}

struct parse {
	zd_elf_t *e;
	size_t cap_rows, cap_files, cap_syms;
	struct sec line_str, str; /* .debug_line_str, .debug_str (DWARF 5 forms) */
	char *err;
	size_t errlen;
};

static int add_file(struct parse *ps, const char *dir, const char *name, uint32_t *index)
{
	zd_elf_t *e = ps->e;
	if (grow((void **)&e->files, &ps->cap_files, e->nfiles, sizeof(char *)))
		return fail(ps->err, ps->errlen, "out of memory");
	size_t n = strlen(name) + (dir ? strlen(dir) + 1 : 0) + 1;
	char *s = malloc(n);
	if (!s)
		return fail(ps->err, ps->errlen, "out of memory");
	if (dir && *dir && name[0] != '/')
		snprintf(s, n, "%s/%s", dir, name);
	else
		snprintf(s, n, "%s", name);
	*index = (uint32_t)e->nfiles;
	e->files[e->nfiles++] = s;
	return 0;
}

static int add_row(struct parse *ps, uint64_t addr, uint32_t file, uint32_t line, int is_stmt, int end_seq)
{
	zd_elf_t *e = ps->e;
	if (grow((void **)&e->rows, &ps->cap_rows, e->nrows, sizeof(zd_row_t)))
		return fail(ps->err, ps->errlen, "out of memory");
	e->rows[e->nrows++] = (zd_row_t){addr, file, line, (uint8_t)!!is_stmt, (uint8_t)!!end_seq};
	return 0;
}

/* DWARF forms a v5 entry format may use: the string, or the number, it holds. */
#define DW_FORM_block2 0x03
#define DW_FORM_block4 0x04
#define DW_FORM_data2 0x05
#define DW_FORM_data4 0x06
#define DW_FORM_data8 0x07
#define DW_FORM_string 0x08
#define DW_FORM_block 0x09
#define DW_FORM_block1 0x0a
#define DW_FORM_data1 0x0b
#define DW_FORM_strp 0x0e
#define DW_FORM_udata 0x0f
#define DW_FORM_data16 0x1e
#define DW_FORM_line_strp 0x1f
#define DW_LNCT_path 1
#define DW_LNCT_directory_index 2

static int read_form(struct parse *ps, cur_t *c, uint64_t form, int off8, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = cstr(c);
		return 0;
	case DW_FORM_strp:
	case DW_FORM_line_strp: {
		uint64_t off = rd(c, off8 ? 8 : 4);
		const struct sec *s = form == DW_FORM_strp ? &ps->str : &ps->line_str;
		if (c->bad)
			return 0;
		if (!s->p || off >= s->size || !memchr(s->p + off, 0, (size_t)(s->size - off)))
			return fail(ps->err, ps->errlen, ".debug_line: string offset 0x%llx outside %s",
				    (unsigned long long)off, form == DW_FORM_strp ? ".debug_str" : ".debug_line_str");
		*str = (const char *)s->p + off;
		return 0;
	}
	case DW_FORM_udata:
		*num = uleb(c);
		return 0;
	case DW_FORM_data1:
		*num = rd(c, 1);
		return 0;
	case DW_FORM_data2:
		*num = rd(c, 2);
		return 0;
	case DW_FORM_data4:
		*num = rd(c, 4);
		return 0;
	case DW_FORM_data8:
		*num = rd(c, 8);
		return 0;
	case DW_FORM_data16:
		skip(c, 16);
		return 0;
	case DW_FORM_block:
		skip(c, uleb(c));
		return 0;
	case DW_FORM_block1:
		skip(c, rd(c, 1));
		return 0;
	case DW_FORM_block2:
		skip(c, rd(c, 2));
		return 0;
	case DW_FORM_block4:
		skip(c, rd(c, 4));
		return 0;
	default:
		return fail(ps->err, ps->errlen, ".debug_line: unsupported form 0x%llx in a file or directory entry",
			    (unsigned long long)form);
	}
}

/* DWARF 5 directory or file-name table: count entries of the given format. */
static int read_entries(struct parse *ps, cur_t *c, int off8, int is_file, const char **dirs, size_t ndirs,
			const char ***out_names, size_t *out_n, uint32_t **out_idx)
{
	uint8_t nfmt = (uint8_t)rd(c, 1);
	uint64_t fmt[2 * 16];
	if (nfmt > 16)
		return fail(ps->err, ps->errlen, ".debug_line: %u entry formats (at most 16 read)", nfmt);
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[2 * i] = uleb(c);
		fmt[2 * i + 1] = uleb(c);
	}
	uint64_t count = uleb(c);
	if (c->bad)
		return fail(ps->err, ps->errlen, ".debug_line: truncated %s table", is_file ? "file" : "directory");
	if (count > (uint64_t)(c->end - c->p))
		return fail(ps->err, ps->errlen, ".debug_line: %llu entries cannot fit the unit",
			    (unsigned long long)count);
	const char **names = calloc(count ? count : 1, sizeof(char *));
	uint32_t *idx = calloc(count ? count : 1, sizeof(uint32_t));
	if (!names || !idx) {
		free(names);
		free(idx);
		return fail(ps->err, ps->errlen, "out of memory");
	}
	for (uint64_t k = 0; k < count; k++) {
		uint64_t dir = 0;
		for (unsigned i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t v;
			if (read_form(ps, c, fmt[2 * i + 1], off8, &s, &v)) {
				free(names);
				free(idx);
				return -1;
			}
			if (fmt[2 * i] == DW_LNCT_path)
				names[k] = s;
			else if (fmt[2 * i] == DW_LNCT_directory_index)
				dir = v;
		}
		if (c->bad || !names[k]) {
			free(names);
			free(idx);
			return fail(ps->err, ps->errlen, ".debug_line: %s entry %llu %s", is_file ? "file" : "directory",
				    (unsigned long long)k, c->bad ? "truncated" : "without a path");
		}
		if (is_file) {
			if (dir >= ndirs) {
				free(names);
				free(idx);
				return fail(ps->err, ps->errlen, ".debug_line: file entry %llu names directory %llu of %zu",
					    (unsigned long long)k, (unsigned long long)dir, ndirs);
			}
			if (add_file(ps, dirs[dir], names[k], &idx[k])) {
				free(names);
				free(idx);
				return -1;
			}
		}
	}
	*out_names = names;
	*out_n = (size_t)count;
	if (out_idx)
		*out_idx = idx;
	else
		free(idx);
	return 0;
}

/* The line-number program state machine (DWARF 5 §6.2.2). */
struct lstate {
	uint64_t addr;
	uint64_t op_index;
	uint64_t file;
	uint64_t line;
	int is_stmt;
};

static int one_unit(struct parse *ps, const uint8_t *base, uint64_t unit_off, cur_t *sc)
{
	uint64_t len = rd(sc, 4);
	int off8 = 0;
	if (len == 0xffffffffu) {
		off8 = 1;
		len = rd(sc, 8);
	}
	else if (len >= 0xfffffff0u)
		return fail(ps->err, ps->errlen, ".debug_line: reserved unit length 0x%llx at offset 0x%llx",
			    (unsigned long long)len, (unsigned long long)unit_off);
	if (sc->bad || len > (uint64_t)(sc->end - sc->p))
		return fail(ps->err, ps->errlen, ".debug_line: unit at offset 0x%llx runs past the section",
			    (unsigned long long)unit_off);
	cur_t c = {sc->p, sc->p + len, 0};
	sc->p += len;
	unsigned version = (unsigned)rd(&c, 2);
	if (version < 2 || version > 5)
		return fail(ps->err, ps->errlen, ".debug_line: unit at offset 0x%llx has version %u (2-5 read)",
			    (unsigned long long)unit_off, version);
	unsigned addr_size = 8;
	if (version >= 5) {
		addr_size = (unsigned)rd(&c, 1);
		rd(&c, 1); /* segment_selector_size */
		if (addr_size != 4 && addr_size != 8)
			return fail(ps->err, ps->errlen, ".debug_line: address size %u", addr_size);
	}
	uint64_t hlen = rd(&c, off8 ? 8 : 4);
	if (c.bad || hlen > (uint64_t)(c.end - c.p))
		return fail(ps->err, ps->errlen, ".debug_line: unit at offset 0x%llx: header length past the unit",
			    (unsigned long long)unit_off);
	const uint8_t *prog = c.p + hlen;
	uint8_t min_inst = (uint8_t)rd(&c, 1);
	uint8_t max_ops = version >= 4 ? (uint8_t)rd(&c, 1) : 1;
	int default_is_stmt = (int)rd(&c, 1);
	int8_t line_base = (int8_t)rd(&c, 1);
	uint8_t line_range = (uint8_t)rd(&c, 1);
	uint8_t opcode_base = (uint8_t)rd(&c, 1);
	if (c.bad || !line_range || !max_ops || !opcode_base)
		return fail(ps->err, ps->errlen,
			    ".debug_line: unit at offset 0x%llx: bad header (line_range %u, max_ops %u, opcode_base %u)",
			    (unsigned long long)unit_off, line_range, max_ops, opcode_base);
	const uint8_t *std_len = c.p;
	skip(&c, opcode_base - 1u);

	/* File table: unit file number -> index into e->files. */
	uint32_t *fidx = NULL;
	size_t nf = 0;
	int file_base; /* the unit's first file number: 1 before DWARF 5, 0 from 5 */
	if (version >= 5) {
		const char **dirs = NULL, **files = NULL;
		size_t nd = 0;
		if (read_entries(ps, &c, off8, 0, NULL, 0, &dirs, &nd, NULL))
			return -1;
		int rc = read_entries(ps, &c, off8, 1, dirs, nd, &files, &nf, &fidx);
		free(dirs);
		free(files);
		if (rc)
			return -1;
		file_base = 0;
	}
	else {
		const char *dirs[256];
		size_t nd = 1;
		dirs[0] = NULL; /* the compilation directory: not in the line table */
		for (;;) {
			const char *d = cstr(&c);
			if (!d || !*d)
				break;
			if (nd == 256)
				return fail(ps->err, ps->errlen, ".debug_line: more than 255 include directories");
			dirs[nd++] = d;
		}
		size_t cap = 0;
		for (;;) {
			const char *name = cstr(&c);
			if (!name || !*name)
				break;
			uint64_t d = uleb(&c);
			uleb(&c);
			uleb(&c);
			if (d >= nd) {
				free(fidx);
				return fail(ps->err, ps->errlen, ".debug_line: file \"%s\" names directory %llu of %zu", name,
					    (unsigned long long)d, nd);
			}
			if (grow((void **)&fidx, &cap, nf, sizeof(uint32_t)) || add_file(ps, dirs[d], name, &fidx[nf])) {
				free(fidx);
				return fail(ps->err, ps->errlen, "out of memory");
			}
			nf++;
		}
		file_base = 1;
	}
	if (c.bad || c.p > prog) {
		free(fidx);
		return fail(ps->err, ps->errlen, ".debug_line: unit at offset 0x%llx: header runs past header_length",
			    (unsigned long long)unit_off);
	}

	c.p = prog;
	struct lstate s = {0, 0, 1, 1, default_is_stmt};
	size_t cap_dyn = nf;
	int rc = 0;
#define FILE_INDEX(fnum)                                                                                               \
	((fnum) >= (uint64_t)file_base && (fnum) - (uint64_t)file_base < nf ? fidx[(fnum) - (uint64_t)file_base]      \
									      : UINT32_MAX)
#define ADVANCE(adv)                                                                                                   \
	do {                                                                                                           \
		uint64_t a_ = (adv);                                                                                   \
		s.addr += (uint64_t)min_inst * ((s.op_index + a_) / max_ops);                                          \
		s.op_index = (s.op_index + a_) % max_ops;                                                              \
	} while (0)
	while (!rc && c.p < c.end && !c.bad) {
		const uint8_t *at = c.p;
		uint8_t op = (uint8_t)rd(&c, 1);
		if (op >= opcode_base) {
			unsigned adj = op - opcode_base;
			ADVANCE(adj / line_range);
			s.line += (int64_t)line_base + (int64_t)(adj % line_range);
			rc = add_row(ps, s.addr, FILE_INDEX(s.file), (uint32_t)s.line, s.is_stmt, 0);
			continue;
		}
		switch (op) {
		case 0: { /* extended */
			uint64_t n = uleb(&c);
			if (c.bad || !n || n > (uint64_t)(c.end - c.p)) {
				c.bad = 1;
				break;
			}
			cur_t x = {c.p, c.p + n, 0};
			c.p += n;
			uint8_t eop = (uint8_t)rd(&x, 1);
			if (eop == 1) { /* DW_LNE_end_sequence */
				rc = add_row(ps, s.addr, FILE_INDEX(s.file), (uint32_t)s.line, s.is_stmt, 1);
				s = (struct lstate){0, 0, 1, 1, default_is_stmt};
			}
			else if (eop == 2) { /* DW_LNE_set_address */
				unsigned asz = (unsigned)(n - 1);
				if (asz != addr_size && !(version < 5 && (asz == 4 || asz == 8))) {
					rc = fail(ps->err, ps->errlen, ".debug_line: set_address of %u bytes at 0x%llx",
						  asz, (unsigned long long)(at - base));
					break;
				}
				s.addr = rd(&x, asz);
				s.op_index = 0;
			}
			else if (eop == 3 && version < 5) { /* DW_LNE_define_file */
				const char *name = cstr(&x);
				uleb(&x);
				if (!name || x.bad)
					break;
				if (grow((void **)&fidx, &cap_dyn, nf, sizeof(uint32_t)) ||
				    add_file(ps, NULL, name, &fidx[nf])) {
					rc = -1;
					break;
				}
				nf++;
			}
			/* DW_LNE_set_discriminator and vendor opcodes: skipped by their length. */
			break;
		}
		case 1: /* DW_LNS_copy */
			rc = add_row(ps, s.addr, FILE_INDEX(s.file), (uint32_t)s.line, s.is_stmt, 0);
			break;
		case 2:
			ADVANCE(uleb(&c));
			break;
		case 3:
			s.line += (uint64_t)sleb(&c);
			break;
		case 4:
			s.file = uleb(&c);
			break;
		case 5: /* set_column */
			uleb(&c);
			break;
		case 6:
			s.is_stmt = !s.is_stmt;
			break;
		case 7: /* basic_block */
		case 10: /* prologue_end */
		case 11: /* epilogue_begin */
			break;
		case 8: /* const_add_pc */
			ADVANCE((255u - opcode_base) / line_range);
			break;
		case 9: /* fixed_advance_pc */
			s.addr += rd(&c, 2);
			s.op_index = 0;
			break;
		default: /* set_isa and unknown standard opcodes: skip their ULEB operands */
			for (unsigned i = 0; i < std_len[op - 1]; i++)
				uleb(&c);
			break;
		}
	}
#undef ADVANCE
#undef FILE_INDEX
	free(fidx);
	if (!rc && c.bad)
		rc = fail(ps->err, ps->errlen, ".debug_line: unit at offset 0x%llx: truncated line program",
			  (unsigned long long)unit_off);
	return rc;
}

static int parse_lines(struct parse *ps, struct sec dl)
{
	cur_t sc = {dl.p, dl.p + dl.size, 0};
	while (sc.p < sc.end) {
		if (one_unit(ps, dl.p, (uint64_t)(sc.p - dl.p), &sc))
			return -1;
	}
	return 0;
}

int zd_elf_parse(const void *data, size_t n, zd_elf_t *out, char *err, size_t errlen)
{
	const uint8_t *p = data;
	memset(out, 0, sizeof(*out));
	struct parse ps = {.e = out, .err = err, .errlen = errlen};
	if (n < 64 || memcmp(p, "\177ELF", 4) != 0)
		return fail(err, errlen, "not an ELF file (%zu bytes)", n);
	if (p[4] != 2 || p[5] != 1)
		return fail(err, errlen, "not an ELF64 little-endian file (class %u, data %u)", p[4], p[5]);
	uint64_t shoff = get(p + 0x28, 8);
	unsigned shentsize = (unsigned)get(p + 0x3a, 2), shnum = (unsigned)get(p + 0x3c, 2),
		 shstrndx = (unsigned)get(p + 0x3e, 2);
	if (shnum && shentsize < 64)
		return fail(err, errlen, "e_shentsize %u < 64", shentsize);
	if (shoff > n || (uint64_t)shnum * shentsize > n - shoff)
		return fail(err, errlen, "section headers (offset 0x%llx, %u of %u bytes) past the file end (%zu)",
			    (unsigned long long)shoff, shnum, shentsize, n);
	if (shnum && shstrndx >= shnum)
		return fail(err, errlen, "e_shstrndx %u >= e_shnum %u", shstrndx, shnum);
	struct sec *secs = calloc(shnum ? shnum : 1, sizeof(*secs));
	if (!secs)
		return fail(err, errlen, "out of memory");
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = p + shoff + (uint64_t)i * shentsize;
		uint32_t type = (uint32_t)get(sh + 4, 4);
		uint64_t off = get(sh + 0x18, 8), size = get(sh + 0x20, 8);
		if (type == 8 /* SHT_NOBITS */ || type == 0)
			continue;
		if (off > n || size > n - off) {
			free(secs);
			return fail(err, errlen, "section %u (offset 0x%llx, size 0x%llx) past the file end", i,
				    (unsigned long long)off, (unsigned long long)size);
		}
		secs[i] = (struct sec){p + off, size};
	}
	struct sec shstr = shnum ? secs[shstrndx] : (struct sec){0};
	struct sec dl = {0};
	int rc = 0;
	for (unsigned i = 0; i < shnum && !rc; i++) {
		const uint8_t *sh = p + shoff + (uint64_t)i * shentsize;
		uint32_t name = (uint32_t)get(sh, 4);
		if (!shstr.p || name >= shstr.size || !memchr(shstr.p + name, 0, (size_t)(shstr.size - name)))
			continue;
		const char *nm = (const char *)shstr.p + name;
		if (!strcmp(nm, ".debug_line"))
			dl = secs[i];
		else if (!strcmp(nm, ".debug_line_str"))
			ps.line_str = secs[i];
		else if (!strcmp(nm, ".debug_str"))
			ps.str = secs[i];
		if ((uint32_t)get(sh + 4, 4) != SHT_SYMTAB)
			continue;
		unsigned link = (unsigned)get(sh + 0x28, 4);
		uint64_t entsize = get(sh + 0x38, 8);
		if (link >= shnum || entsize < 24) {
			rc = fail(err, errlen, "symbol table %s: sh_link %u, sh_entsize %llu", nm, link,
				  (unsigned long long)entsize);
			break;
		}
		struct sec st = secs[i], strs = secs[link];
		for (uint64_t k = 0; k + entsize <= st.size; k += entsize) {
			const uint8_t *sym = st.p + k;
			uint32_t sname = (uint32_t)get(sym, 4);
			uint8_t info = sym[4];
			if ((info & 0xf) != STT_FUNC || !sname)
				continue;
			if (!strs.p || sname >= strs.size || !memchr(strs.p + sname, 0, (size_t)(strs.size - sname))) {
				rc = fail(err, errlen, "symbol %llu: name offset %u outside the string table",
					  (unsigned long long)(k / entsize), sname);
				break;
			}
			if (grow((void **)&out->syms, &ps.cap_syms, out->nsyms, sizeof(zd_sym_t)) ||
			    !(out->syms[out->nsyms].name = strdup((const char *)strs.p + sname))) {
				rc = fail(err, errlen, "out of memory");
				break;
			}
			out->syms[out->nsyms].addr = get(sym + 8, 8);
			out->syms[out->nsyms].size = get(sym + 16, 8);
			out->syms[out->nsyms].global = (info >> 4) == STB_GLOBAL;
			out->nsyms++;
		}
	}
	if (!rc && dl.p) {
		out->has_lines = 1;
		rc = parse_lines(&ps, dl);
	}
	free(secs);
	if (rc)
		zd_elf_free(out);
	return rc;
}

void zd_elf_free(zd_elf_t *e)
{
	for (size_t i = 0; i < e->nsyms; i++)
		free(e->syms[i].name);
	for (size_t i = 0; i < e->nfiles; i++)
		free(e->files[i]);
	free(e->syms);
	free(e->files);
	free(e->rows);
	memset(e, 0, sizeof(*e));
}

const zd_sym_t *zd_sym_by_name(const zd_elf_t *e, const char *name)
{
	const zd_sym_t *local = NULL;
	for (size_t i = 0; i < e->nsyms; i++) {
		if (strcmp(e->syms[i].name, name))
			continue;
		if (e->syms[i].global)
			return &e->syms[i];
		if (!local)
			local = &e->syms[i];
	}
	return local;
}

const zd_sym_t *zd_sym_at(const zd_elf_t *e, uint64_t a)
{
	const zd_sym_t *local = NULL;
	for (size_t i = 0; i < e->nsyms; i++) {
		const zd_sym_t *s = &e->syms[i];
		if (a < s->addr || a - s->addr >= s->size)
			continue;
		if (s->global)
			return s;
		if (!local)
			local = s;
	}
	return local;
}

const zd_row_t *zd_row_at(const zd_elf_t *e, uint64_t a)
{
	/* Rows of one sequence run up to its end_seq row; sequences may come in any order. */
	const zd_row_t *best = NULL;
	for (size_t i = 0; i + 1 < e->nrows; i++) {
		const zd_row_t *r = &e->rows[i], *next = &e->rows[i + 1];
		if (r->end_seq)
			continue;
		if (r->addr <= a && a < next->addr)
			best = r;
	}
	return best;
}

int zd_file_matches(const char *path, const char *file)
{
	if (!strcmp(path, file))
		return 1;
	size_t lp = strlen(path), lf = strlen(file);
	if (lp > lf && path[lp - lf - 1] == '/' && !strcmp(path + lp - lf, file))
		return 1;
	if (!strchr(file, '/')) {
		const char *b = strrchr(path, '/');
		return b && !strcmp(b + 1, file);
	}
	return 0;
}

size_t zd_addrs_for_line(const zd_elf_t *e, const char *file, uint32_t line, uint64_t *out, size_t max,
			 uint32_t *found_line)
{
	uint32_t best = UINT32_MAX;
	for (size_t i = 0; i < e->nrows; i++) {
		const zd_row_t *r = &e->rows[i];
		if (r->end_seq || r->file >= e->nfiles || r->line < line || r->line >= best)
			continue;
		if (i + 1 < e->nrows && e->rows[i + 1].addr == r->addr && !e->rows[i + 1].end_seq)
			continue; /* an empty row: the next one at this address holds the position */
		if (zd_file_matches(e->files[r->file], file))
			best = r->line;
	}
	if (found_line)
		*found_line = best;
	if (best == UINT32_MAX)
		return 0;
	/* One address per function: the lowest row of that line inside it. */
	size_t n = 0;
	uint64_t *tmp = NULL;
	const zd_sym_t **fn = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < e->nrows; i++) {
		const zd_row_t *r = &e->rows[i];
		if (r->end_seq || r->line != best || r->file >= e->nfiles || !zd_file_matches(e->files[r->file], file))
			continue;
		if (i + 1 < e->nrows && e->rows[i + 1].addr == r->addr && !e->rows[i + 1].end_seq)
			continue;
		const zd_sym_t *s = zd_sym_at(e, r->addr);
		size_t k;
		for (k = 0; k < n; k++) {
			if (fn[k] == s) {
				if (r->addr < tmp[k])
					tmp[k] = r->addr;
				break;
			}
		}
		if (k < n)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			uint64_t *t2 = realloc(tmp, nc * sizeof(*t2));
			const zd_sym_t **f2 = t2 ? realloc(fn, nc * sizeof(*f2)) : NULL;
			if (!t2 || !f2) {
				free(t2 ? t2 : tmp);
				free(fn);
				return 0;
			}
			tmp = t2;
			fn = f2;
			cap = nc;
		}
		tmp[n] = r->addr;
		fn[n] = s;
		n++;
	}
	for (size_t k = 0; k < n && k < max; k++)
		out[k] = tmp[k];
	free(tmp);
	free(fn);
	return n;
}
