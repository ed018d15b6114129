/* ZE-ISA module writer and reader (docs/module-format.md), on libelf. */
#define _GNU_SOURCE
#include "zs/ze_module.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zs/ze_isa.h"

#define NOTE_HDR 12u
#define DESC_HDR 32u      /* version 1 */
#define DESC_HDR_REQD 48u /* version 2: reqd_group_size x, y, z and a reserved word */
#define ARG_REC 16u
#define MAX_SECTIONS 4096u
#define MAX_FILE_BYTES (256u << 20)

static int fail(char *err, size_t len, const char *fmt, ...)
{
	if (err && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *const arg_kind_names[] = {"global", "local", "value"};

const char *zm_arg_kind_name(uint32_t kind)
{
	return kind < 3 ? arg_kind_names[kind] : NULL;
}

int zm_arg_kind_by_name(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(arg_kind_names[i], name) == 0)
			return i;
	return -1;
}

uint32_t zm_printf_arg_dwords(uint32_t arg)
{
	const uint32_t n = ZM_PF_COUNT(arg);
	if (n < 1 || n > 16 || (n > 4 && n != 8 && n != 16))
		return 0;
	switch (ZM_PF_KIND(arg)) {
	case ZM_PF_INT:
	case ZM_PF_FLOAT:
	case ZM_PF_STRING:
		return n;
	case ZM_PF_LONG:
	case ZM_PF_POINTER:
		return 2 * n;
	default:
		return 0;
	}
}

/* ---- growable byte buffer ------------------------------------------------- */

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
	int oom;
} buf_t;

static void buf_put(buf_t *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void buf_u8(buf_t *b, uint8_t v) { buf_put(b, &v, 1); }

static void buf_u16(buf_t *b, uint16_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	buf_put(b, x, 2);
}

static void buf_u32(buf_t *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	buf_put(b, x, 4);
}

static void buf_u64(buf_t *b, uint64_t v)
{
	buf_u32(b, (uint32_t)v);
	buf_u32(b, (uint32_t)(v >> 32));
}

static void buf_str(buf_t *b, const char *s) { buf_put(b, s, strlen(s) + 1); }

static void buf_pad4(buf_t *b)
{
	while (b->n % 4)
		buf_u8(b, 0);
}

static void buf_uleb(buf_t *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		buf_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void buf_sleb(buf_t *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		int done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		buf_u8(b, byte | (done ? 0 : 0x80));
		if (done)
			break;
	}
}

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* ---- writer ---------------------------------------------------------------- */

static void build_note(buf_t *b, const zm_kernel_t *k)
{
	buf_t strings = {0};
	uint32_t *name_off = calloc(k->nargs ? k->nargs : 1, sizeof(*name_off));
	if (!name_off) {
		b->oom = 1;
		return;
	}
	buf_str(&strings, k->name);
	for (uint32_t i = 0; i < k->nargs; i++) {
		name_off[i] = (uint32_t)strings.n;
		buf_str(&strings, k->args[i].name);
	}
	buf_pad4(&strings);
	/* Version 1 (what readers before version 2 accept) unless the kernel
	 * requires a group size. */
	const int reqd = k->reqd_group[0] || k->reqd_group[1] || k->reqd_group[2];
	const uint32_t hdr = reqd ? DESC_HDR_REQD : DESC_HDR;
	buf_u32(b, (uint32_t)sizeof(ZE_NOTE_NAME));
	buf_u32(b, hdr + ARG_REC * k->nargs + (uint32_t)strings.n);
	buf_u32(b, ZE_NT_KERNEL);
	buf_str(b, ZE_NOTE_NAME);
	buf_pad4(b);
	buf_u32(b, reqd ? ZE_NOTE_VERSION_REQD : ZE_NOTE_VERSION);
	buf_u32(b, k->simd);
	buf_u32(b, k->grf);
	buf_u32(b, k->slm);
	buf_u32(b, k->arg_bytes);
	buf_u32(b, k->nargs);
	buf_u32(b, (uint32_t)strings.n);
	buf_u32(b, 0);
	if (reqd) {
		for (int i = 0; i < 3; i++)
			buf_u32(b, k->reqd_group[i]);
		buf_u32(b, 0);
	}
	for (uint32_t i = 0; i < k->nargs; i++) {
		buf_u32(b, k->args[i].kind);
		buf_u32(b, k->args[i].offset);
		buf_u32(b, k->args[i].size);
		buf_u32(b, name_off[i]);
	}
	buf_put(b, strings.p, strings.n);
	b->oom |= strings.oom;
	free(strings.p);
	free(name_off);
}

/* .zesim.printf: one entry per format (docs/module-format.md). */
static void build_printf(buf_t *b, const zm_module_t *m)
{
	for (uint32_t i = 0; i < m->nprintf; i++) {
		const zm_printf_t *f = &m->printf_formats[i];
		const size_t start = b->n;
		buf_u32(b, 0); /* entry size, patched below */
		buf_u32(b, f->nargs);
		for (uint32_t j = 0; j < f->nargs; j++)
			buf_u32(b, f->args[j]);
		buf_str(b, f->format);
		buf_pad4(b);
		if (!b->oom)
			set32(b->p + start, (uint32_t)(b->n - start));
	}
}

/* DWARF 4 line table: one sequence per text section.  min_inst_length is 16,
 * so "advance_pc 1" steps one instruction. */
static void build_debug_line(buf_t *b, const zm_module_t *m)
{
	static const uint8_t std_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	size_t start = b->n;
	buf_u32(b, 0); /* unit_length, patched below */
	buf_u16(b, 4);
	size_t hlen_at = b->n;
	buf_u32(b, 0); /* header_length, patched below */
	size_t hstart = b->n;
	buf_u8(b, ZE_INST_BYTES); /* minimum_instruction_length */
	buf_u8(b, 1);		  /* maximum_operations_per_instruction */
	buf_u8(b, 1);		  /* default_is_stmt */
	buf_u8(b, (uint8_t)-5);	  /* line_base */
	buf_u8(b, 14);		  /* line_range */
	buf_u8(b, 13);		  /* opcode_base */
	buf_put(b, std_lengths, sizeof(std_lengths));
	buf_u8(b, 0); /* no include directories */
	for (uint32_t f = 0; f < m->nfiles; f++) {
		buf_str(b, m->files[f]);
		buf_uleb(b, 0);
		buf_uleb(b, 0);
		buf_uleb(b, 0);
	}
	buf_u8(b, 0);
	size_t hend = b->n;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const zm_kernel_t *k = &m->kernels[i];
		uint32_t n = k->text_size / ZE_INST_BYTES;
		if (!k->lines || !n)
			continue;
		buf_u8(b, 0); /* DW_LNE_set_address */
		buf_uleb(b, 9);
		buf_u8(b, 2);
		buf_u64(b, k->addr);
		uint32_t file = 1, line = 1;
		for (uint32_t j = 0; j < n; j++) {
			if (k->lines[j].file + 1 != file) {
				file = k->lines[j].file + 1;
				buf_u8(b, 4); /* DW_LNS_set_file */
				buf_uleb(b, file);
			}
			if (k->lines[j].line != line) {
				buf_u8(b, 3); /* DW_LNS_advance_line */
				buf_sleb(b, (int64_t)k->lines[j].line - (int64_t)line);
				line = k->lines[j].line;
			}
			buf_u8(b, 1); /* DW_LNS_copy */
			buf_u8(b, 2); /* DW_LNS_advance_pc */
			buf_uleb(b, 1);
		}
		buf_u8(b, 0); /* DW_LNE_end_sequence */
		buf_uleb(b, 1);
		buf_u8(b, 1);
	}
	if (!b->oom) {
		set32(b->p + start, (uint32_t)(b->n - start - 4));
		set32(b->p + hlen_at, (uint32_t)(hend - hstart));
	}
}

/* .debug_abbrev and .debug_info (DWARF 4): one compile unit over the whole
 * instruction heap, pointing at the line table, with a subprogram per kernel
 * (external) and per function (.func), at their heap addresses. */
enum {
	DW_TAG_compile_unit = 0x11,
	DW_TAG_subprogram = 0x2e,
	DW_AT_name = 0x03,
	DW_AT_stmt_list = 0x10,
	DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_AT_producer = 0x25,
	DW_AT_external = 0x3f,
	DW_FORM_addr = 0x01,
	DW_FORM_data4 = 0x06,
	DW_FORM_string = 0x08,
	DW_FORM_sec_offset = 0x17,
	DW_FORM_flag_present = 0x19,
};

static void build_debug_abbrev(buf_t *b)
{
	static const uint8_t abbrev[] = {
		1, DW_TAG_compile_unit, 1, /* has children */
		DW_AT_producer, DW_FORM_string, DW_AT_name, DW_FORM_string, DW_AT_stmt_list, DW_FORM_sec_offset,
		DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4, 0, 0,
		2, DW_TAG_subprogram, 0, /* a kernel */
		DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4,
		DW_AT_external, DW_FORM_flag_present, 0, 0,
		3, DW_TAG_subprogram, 0, /* a function of a kernel's section */
		DW_AT_name, DW_FORM_string, DW_AT_low_pc, DW_FORM_addr, DW_AT_high_pc, DW_FORM_data4, 0, 0,
		0,
	};
	buf_put(b, abbrev, sizeof(abbrev));
}

static void build_debug_info(buf_t *b, const zm_module_t *m)
{
	size_t start = b->n;
	buf_u32(b, 0); /* unit_length, patched below */
	buf_u16(b, 4);
	buf_u32(b, 0); /* debug_abbrev_offset */
	buf_u8(b, 8);  /* address_size */
	uint64_t end = 0;
	for (uint32_t i = 0; i < m->nkernels; i++)
		if (m->kernels[i].addr + m->kernels[i].text_size > end)
			end = m->kernels[i].addr + m->kernels[i].text_size;
	buf_uleb(b, 1);
	buf_str(b, "zesim ZE-ISA module");
	buf_str(b, m->nfiles ? m->files[0] : "");
	buf_u32(b, 0); /* stmt_list: the only line table */
	buf_u64(b, 0);
	buf_u32(b, (uint32_t)end);
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const zm_kernel_t *k = &m->kernels[i];
		uint32_t entry_size = k->text_size;
		for (uint32_t f = 0; f < k->nfuncs; f++)
			if (k->funcs[f].offset < entry_size)
				entry_size = k->funcs[f].offset;
		buf_uleb(b, 2);
		buf_str(b, k->name);
		buf_u64(b, k->addr);
		buf_u32(b, entry_size);
		for (uint32_t f = 0; f < k->nfuncs; f++) {
			buf_uleb(b, 3);
			buf_str(b, k->funcs[f].name);
			buf_u64(b, k->addr + k->funcs[f].offset);
			buf_u32(b, k->funcs[f].size);
		}
	}
	buf_u8(b, 0); /* end of the unit's children */
	if (!b->oom)
		set32(b->p + start, (uint32_t)(b->n - start - 4));
}

struct writer {
	Elf *elf;
	buf_t shstr;
};

static Elf_Scn *add_section(struct writer *w, const char *name, uint32_t type, uint64_t flags,
			    void *data, size_t size, uint64_t align, Elf_Type dtype)
{
	Elf_Scn *scn = elf_newscn(w->elf);
	if (!scn)
		return NULL;
	Elf64_Shdr *sh = elf64_getshdr(scn);
	Elf_Data *d = elf_newdata(scn);
	if (!sh || !d)
		return NULL;
	d->d_buf = data;
	d->d_size = size;
	d->d_align = align;
	d->d_type = dtype;
	d->d_version = EV_CURRENT;
	sh->sh_name = (uint32_t)w->shstr.n;
	buf_str(&w->shstr, name);
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_addralign = align;
	return scn;
}

static int validate_for_write(const zm_module_t *m, char *err, size_t len)
{
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const zm_kernel_t *k = &m->kernels[i];
		if (k->text_size % ZE_INST_BYTES || k->text_size > ZE_MAX_TEXT_BYTES)
			return fail(err, len, "kernel %s: text size %u invalid", k->name,
				    k->text_size);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(m->kernels[j].name, k->name) == 0)
				return fail(err, len, "kernel %s defined twice", k->name);
	}
	if (m->data_size > ZE_MAX_DATA_BYTES || (m->data_size && !m->data))
		return fail(err, len, "data segment of %u bytes invalid", m->data_size);
	if (m->data_align > ZE_MAX_DATA_ALIGN || (m->data_align & (m->data_align - 1)))
		return fail(err, len, "data alignment %u invalid", m->data_align);
	for (uint32_t i = 0; i < m->nglobals; i++) {
		const zm_global_t *g = &m->globals[i];
		if (!g->name[0] || g->offset > m->data_size || g->size > m->data_size - g->offset)
			return fail(err, len, "variable %s (offset %u, size %u) outside the %u-byte data segment",
				    g->name, g->offset, g->size, m->data_size);
	}
	if (m->nprintf > ZE_MAX_PRINTF_FORMATS)
		return fail(err, len, "%u printf formats exceed %u", m->nprintf, ZE_MAX_PRINTF_FORMATS);
	for (uint32_t i = 0; i < m->nprintf; i++) {
		const zm_printf_t *f = &m->printf_formats[i];
		if (f->nargs > ZE_MAX_PRINTF_ARGS)
			return fail(err, len, "printf format %u: %u arguments exceed %u", i, f->nargs,
				    ZE_MAX_PRINTF_ARGS);
		for (uint32_t j = 0; j < f->nargs; j++)
			if (!zm_printf_arg_dwords(f->args[j]))
				return fail(err, len, "printf format %u: argument %u is 0x%x", i, j, f->args[j]);
	}
	return 0;
}

int zm_module_write(zm_module_t *m, const char *path, char *err, size_t len)
{
	if (validate_for_write(m, err, len))
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, len, "libelf: %s", elf_errmsg(-1));
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (!tmp)
		return fail(err, len, "out of memory");
	snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		fail(err, len, "%s: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	fchmod(fd, 0644);

	int rc = -1;
	struct writer w = {0};
	buf_t note = {0}, syms = {0}, strtab = {0}, dline = {0}, pf = {0}, dinfo = {0}, dabbrev = {0};
	w.elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!w.elf)
		goto out_elf;
	Elf64_Ehdr *eh = elf64_newehdr(w.elf);
	if (!eh)
		goto out_elf;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_EXEC;
	eh->e_machine = ZE_EM_ZEISA;
	eh->e_version = EV_CURRENT;
	eh->e_flags = ZE_ISA_VERSION;
	buf_u8(&w.shstr, 0);

	/* Text sections first: their indices are 1..nkernels. */
	uint64_t addr = 0;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		zm_kernel_t *k = &m->kernels[i];
		char name[512];
		snprintf(name, sizeof(name), ".text.%s", k->name);
		addr = (addr + ZE_TEXT_ALIGN - 1) & ~(uint64_t)(ZE_TEXT_ALIGN - 1);
		k->addr = addr;
		Elf_Scn *s = add_section(&w, name, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
					 k->text, k->text_size, ZE_TEXT_ALIGN, ELF_T_BYTE);
		if (!s)
			goto out_elf;
		elf64_getshdr(s)->sh_addr = addr;
		addr += k->text_size;
	}
	for (uint32_t i = 0; i < m->nkernels; i++)
		build_note(&note, &m->kernels[i]);
	if (!add_section(&w, ".note.zesim", SHT_NOTE, 0, note.p, note.n, 4, ELF_T_BYTE))
		goto out_elf;
	/* The data segment and the printf formats, when the module has them. */
	uint16_t data_ndx = 0;
	if (m->data_size) {
		Elf_Scn *ds = add_section(&w, ZE_DATA_SECTION, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, m->data,
					  m->data_size, m->data_align ? m->data_align : 1, ELF_T_BYTE);
		if (!ds)
			goto out_elf;
		data_ndx = (uint16_t)elf_ndxscn(ds);
	}
	if (m->nprintf) {
		build_printf(&pf, m);
		if (!add_section(&w, ZE_PRINTF_SECTION, SHT_PROGBITS, 0, pf.p, pf.n, 4, ELF_T_BYTE))
			goto out_elf;
	}

	/* Symbols: null, locals (functions, variables), then globals (kernels,
	 * exported variables). */
	Elf64_Sym sym;
	buf_u8(&strtab, 0);
	memset(&sym, 0, sizeof(sym));
	buf_put(&syms, &sym, sizeof(sym));
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < m->nkernels; i++) {
			const zm_kernel_t *k = &m->kernels[i];
			uint32_t ksize = k->nfuncs ? k->funcs[0].offset : k->text_size;
			for (uint32_t f = 0; f < (pass ? 1u : k->nfuncs); f++) {
				memset(&sym, 0, sizeof(sym));
				sym.st_name = (uint32_t)strtab.n;
				sym.st_shndx = (uint16_t)(i + 1);
				if (pass) {
					buf_str(&strtab, k->name);
					sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
					sym.st_value = k->addr;
					sym.st_size = ksize;
				} else {
					buf_str(&strtab, k->funcs[f].name);
					sym.st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
					sym.st_value = k->addr + k->funcs[f].offset;
					sym.st_size = k->funcs[f].size;
				}
				buf_put(&syms, &sym, sizeof(sym));
			}
		}
		/* Variables: locals, then the exported ones among the globals. */
		for (uint32_t i = 0; data_ndx && i < m->nglobals; i++) {
			const zm_global_t *g = &m->globals[i];
			if (!g->exported != !pass)
				continue;
			memset(&sym, 0, sizeof(sym));
			sym.st_name = (uint32_t)strtab.n;
			buf_str(&strtab, g->name);
			sym.st_info = ELF64_ST_INFO(pass ? STB_GLOBAL : STB_LOCAL, STT_OBJECT);
			sym.st_shndx = data_ndx;
			sym.st_value = g->offset;
			sym.st_size = g->size;
			buf_put(&syms, &sym, sizeof(sym));
		}
		if (!pass)
			eh->e_shoff = syms.n / sizeof(sym); /* first global, kept for sh_info */
	}
	uint32_t first_global = (uint32_t)eh->e_shoff;
	eh->e_shoff = 0;
	Elf_Scn *symscn = add_section(&w, ".symtab", SHT_SYMTAB, 0, syms.p, syms.n, 8, ELF_T_SYM);
	Elf_Scn *strscn = add_section(&w, ".strtab", SHT_STRTAB, 0, strtab.p, strtab.n, 1,
				      ELF_T_BYTE);
	if (!symscn || !strscn)
		goto out_elf;
	Elf64_Shdr *symsh = elf64_getshdr(symscn);
	symsh->sh_entsize = sizeof(Elf64_Sym);
	symsh->sh_link = (uint32_t)elf_ndxscn(strscn);
	symsh->sh_info = first_global;

	if (m->has_debug_line) {
		build_debug_line(&dline, m);
		build_debug_abbrev(&dabbrev);
		build_debug_info(&dinfo, m);
		if (!add_section(&w, ".debug_line", SHT_PROGBITS, 0, dline.p, dline.n, 1,
				 ELF_T_BYTE) ||
		    !add_section(&w, ".debug_abbrev", SHT_PROGBITS, 0, dabbrev.p, dabbrev.n, 1, ELF_T_BYTE) ||
		    !add_section(&w, ".debug_info", SHT_PROGBITS, 0, dinfo.p, dinfo.n, 1, ELF_T_BYTE))
			goto out_elf;
	}
	/* .shstrtab names itself: append its name before handing over the buffer. */
	uint32_t shstr_name = (uint32_t)w.shstr.n;
	buf_str(&w.shstr, ".shstrtab");
	if (w.shstr.oom || note.oom || syms.oom || strtab.oom || dline.oom || pf.oom || dinfo.oom || dabbrev.oom) {
		fail(err, len, "out of memory");
		goto out;
	}
	Elf_Scn *shs = elf_newscn(w.elf);
	if (!shs)
		goto out_elf;
	Elf64_Shdr *shsh = elf64_getshdr(shs);
	Elf_Data *shd = elf_newdata(shs);
	if (!shsh || !shd)
		goto out_elf;
	shd->d_buf = w.shstr.p;
	shd->d_size = w.shstr.n;
	shd->d_align = 1;
	shd->d_type = ELF_T_BYTE;
	shsh->sh_name = shstr_name;
	shsh->sh_type = SHT_STRTAB;
	shsh->sh_addralign = 1;
	eh->e_shstrndx = (uint16_t)elf_ndxscn(shs);

	if (elf_update(w.elf, ELF_C_WRITE) < 0)
		goto out_elf;
	rc = 0;
	goto out;
out_elf:
	fail(err, len, "libelf: %s", elf_errmsg(-1));
out:
	if (w.elf)
		elf_end(w.elf);
	if (rc == 0 && fsync(fd) != 0)
		rc = fail(err, len, "%s: %s", path, strerror(errno));
	close(fd);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = fail(err, len, "%s: %s", path, strerror(errno));
	if (rc != 0)
		unlink(tmp);
	free(tmp);
	free(w.shstr.p);
	free(note.p);
	free(syms.p);
	free(strtab.p);
	free(dline.p);
	free(dinfo.p);
	free(dabbrev.p);
	free(pf.p);
	return rc;
}

/* ---- reader ---------------------------------------------------------------- */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

struct rsec {
	const char *name;
	Elf64_Shdr sh;
	const uint8_t *data; /* NULL for SHT_NULL / SHT_NOBITS */
};

struct reader {
	const uint8_t *img;
	size_t size;
	Elf64_Ehdr eh;
	struct rsec *secs;
	size_t nsecs;
	char *err;
	size_t len;
};

/* Checks that [off, off+n) lies inside the image without overflow. */
static int in_image(const struct reader *r, uint64_t off, uint64_t n)
{
	return off <= r->size && n <= r->size - off;
}

static int read_headers(struct reader *r)
{
	if (r->size < sizeof(Elf64_Ehdr))
		return fail(r->err, r->len, "file is %zu bytes, shorter than an ELF64 header",
			    r->size);
	memcpy(&r->eh, r->img, sizeof(r->eh));
	const Elf64_Ehdr *eh = &r->eh;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return fail(r->err, r->len, "not an ELF file (bad magic)");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return fail(r->err, r->len, "e_ident[EI_CLASS] = %u, expected ELFCLASS64",
			    eh->e_ident[EI_CLASS]);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(r->err, r->len, "e_ident[EI_DATA] = %u, expected little-endian",
			    eh->e_ident[EI_DATA]);
	if (eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_version != EV_CURRENT)
		return fail(r->err, r->len, "ELF version %u, expected 1", eh->e_version);
	if (eh->e_machine != ZE_EM_ZEISA)
		return fail(r->err, r->len, "e_machine = 0x%x, expected 0x%x (ZE-ISA)",
			    eh->e_machine, ZE_EM_ZEISA);
	if (eh->e_flags != ZE_ISA_VERSION)
		return fail(r->err, r->len, "e_flags = %u: unsupported ISA version (expected %u)",
			    eh->e_flags, ZE_ISA_VERSION);
	if (eh->e_ehsize != sizeof(Elf64_Ehdr))
		return fail(r->err, r->len, "e_ehsize = %u, expected %zu", eh->e_ehsize,
			    sizeof(Elf64_Ehdr));
	if (eh->e_phnum != 0)
		return fail(r->err, r->len, "e_phnum = %u: modules have no program headers",
			    eh->e_phnum);
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return fail(r->err, r->len, "e_shentsize = %u, expected %zu", eh->e_shentsize,
			    sizeof(Elf64_Shdr));
	if (eh->e_shnum == 0 || eh->e_shnum > MAX_SECTIONS)
		return fail(r->err, r->len, "e_shnum = %u out of range (1-%u)", eh->e_shnum,
			    MAX_SECTIONS);
	if (!in_image(r, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return fail(r->err, r->len,
			    "section header table (e_shoff = %llu, %u entries) runs past the "
			    "end of the %zu-byte file",
			    (unsigned long long)eh->e_shoff, eh->e_shnum, r->size);
	if (eh->e_shoff % 8)
		return fail(r->err, r->len, "e_shoff = %llu is not 8-byte aligned",
			    (unsigned long long)eh->e_shoff);
	if (eh->e_shstrndx == 0 || eh->e_shstrndx >= eh->e_shnum)
		return fail(r->err, r->len, "e_shstrndx = %u out of range", eh->e_shstrndx);
	return 0;
}

static int read_sections(struct reader *r, Elf *elf)
{
	r->nsecs = r->eh.e_shnum;
	r->secs = calloc(r->nsecs, sizeof(*r->secs));
	if (!r->secs)
		return fail(r->err, r->len, "out of memory");
	for (size_t i = 0; i < r->nsecs; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;
		if (!sh)
			return fail(r->err, r->len, "section %zu: %s", i, elf_errmsg(-1));
		r->secs[i].sh = *sh;
		if (i == 0 || sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL)
			continue;
		if (!in_image(r, sh->sh_offset, sh->sh_size))
			return fail(r->err, r->len,
				    "section %zu: offset %llu + size %llu runs past the end of "
				    "the %zu-byte file",
				    i, (unsigned long long)sh->sh_offset,
				    (unsigned long long)sh->sh_size, r->size);
		r->secs[i].data = r->img + sh->sh_offset;
	}
	const struct rsec *ss = &r->secs[r->eh.e_shstrndx];
	if (ss->sh.sh_type != SHT_STRTAB || ss->sh.sh_size == 0 ||
	    ss->data[ss->sh.sh_size - 1] != 0)
		return fail(r->err, r->len, "section name table (%u) is not a NUL-terminated "
					    "string table", r->eh.e_shstrndx);
	uint64_t hdr_end = r->eh.e_shoff + (uint64_t)r->eh.e_shnum * sizeof(Elf64_Shdr);
	for (size_t i = 1; i < r->nsecs; i++) {
		struct rsec *s = &r->secs[i];
		if (s->sh.sh_name >= ss->sh.sh_size)
			return fail(r->err, r->len, "section %zu: name offset %u outside .shstrtab",
				    i, s->sh.sh_name);
		s->name = (const char *)ss->data + s->sh.sh_name;
		if (!s->data || !s->sh.sh_size)
			continue;
		uint64_t a = s->sh.sh_offset, b = a + s->sh.sh_size;
		if (a < sizeof(Elf64_Ehdr) || (a < hdr_end && b > r->eh.e_shoff))
			return fail(r->err, r->len, "section %s overlaps the ELF headers", s->name);
		for (size_t j = 1; j < i; j++) {
			const struct rsec *t = &r->secs[j];
			if (!t->data || !t->sh.sh_size)
				continue;
			uint64_t c = t->sh.sh_offset, d = c + t->sh.sh_size;
			if (a < d && c < b)
				return fail(r->err, r->len, "sections %s and %s overlap", t->name,
					    s->name);
		}
	}
	return 0;
}

static const struct rsec *find_section(const struct reader *r, const char *name, size_t *idx)
{
	for (size_t i = 1; i < r->nsecs; i++)
		if (r->secs[i].name && strcmp(r->secs[i].name, name) == 0) {
			if (idx)
				*idx = i;
			return &r->secs[i];
		}
	return NULL;
}

static char *dup_str(const uint8_t *s, size_t max)
{
	size_t n = strnlen((const char *)s, max);
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static int parse_note_desc(struct reader *r, const uint8_t *d, uint32_t dsz, zm_kernel_t *k,
			   unsigned index)
{
	if (dsz < DESC_HDR)
		return fail(r->err, r->len, "kernel note %u: descriptor of %u bytes is shorter "
					    "than its 32-byte header", index, dsz);
	uint32_t version = rd32(d), nargs = rd32(d + 20), ssz = rd32(d + 24);
	k->simd = rd32(d + 4);
	k->grf = rd32(d + 8);
	k->slm = rd32(d + 12);
	k->arg_bytes = rd32(d + 16);
	if (version != ZE_NOTE_VERSION && version != ZE_NOTE_VERSION_REQD)
		return fail(r->err, r->len, "kernel note %u: version %u, expected %u or %u", index,
			    version, ZE_NOTE_VERSION, ZE_NOTE_VERSION_REQD);
	if (rd32(d + 28))
		return fail(r->err, r->len, "kernel note %u: reserved field is %u, expected 0",
			    index, rd32(d + 28));
	const uint32_t hdr = version == ZE_NOTE_VERSION_REQD ? DESC_HDR_REQD : DESC_HDR;
	if (dsz < hdr)
		return fail(r->err, r->len, "kernel note %u: descriptor of %u bytes is shorter "
					    "than its %u-byte version %u header", index, dsz, hdr, version);
	if (nargs > ZE_MAX_ARGS)
		return fail(r->err, r->len, "kernel note %u: num_args = %u exceeds %u", index,
			    nargs, ZE_MAX_ARGS);
	if (ssz == 0 || ssz % 4 || (uint64_t)hdr + (uint64_t)ARG_REC * nargs + ssz != dsz)
		return fail(r->err, r->len,
			    "kernel note %u: descsz %u does not match num_args %u and "
			    "strings_size %u",
			    index, dsz, nargs, ssz);
	if (hdr == DESC_HDR_REQD) {
		uint64_t items = 1;
		for (int i = 0; i < 3; i++) {
			k->reqd_group[i] = rd32(d + 32 + 4 * i);
			items *= k->reqd_group[i];
			if (items > ZE_MAX_REQD_GROUP_ITEMS)
				items = ZE_MAX_REQD_GROUP_ITEMS + 1ull; /* (no overflow) */
		}
		if (rd32(d + 44))
			return fail(r->err, r->len,
				    "kernel note %u: reserved field at offset 44 is %u, expected 0",
				    index, rd32(d + 44));
		if (items == 0 || items > ZE_MAX_REQD_GROUP_ITEMS)
			return fail(r->err, r->len,
				    "kernel note %u: reqd_group_size %ux%ux%u: each must be at least 1 "
				    "and the product at most %u",
				    index, k->reqd_group[0], k->reqd_group[1], k->reqd_group[2],
				    ZE_MAX_REQD_GROUP_ITEMS);
	}
	const uint8_t *strings = d + hdr + ARG_REC * nargs;
	if (strings[ssz - 1] != 0)
		return fail(r->err, r->len, "kernel note %u: string area not NUL-terminated",
			    index);
	if (strings[0] == 0)
		return fail(r->err, r->len, "kernel note %u: empty kernel name", index);
	k->name = dup_str(strings, ssz);
	if (!k->name)
		return fail(r->err, r->len, "out of memory");
	if (k->simd != 8 && k->simd != 16)
		return fail(r->err, r->len, "kernel %s: simd_width %u, expected 8 or 16", k->name,
			    k->simd);
	if (k->grf < 1 || k->grf > ZE_GRF_COUNT)
		return fail(r->err, r->len, "kernel %s: grf_count %u out of range 1-128", k->name,
			    k->grf);
	if (k->slm > ZE_MAX_SLM_BYTES)
		return fail(r->err, r->len, "kernel %s: slm_bytes %u exceeds %u", k->name, k->slm,
			    ZE_MAX_SLM_BYTES);
	if (k->arg_bytes > ZE_MAX_ARG_BYTES)
		return fail(r->err, r->len, "kernel %s: arg_bytes %u exceeds %u", k->name,
			    k->arg_bytes, ZE_MAX_ARG_BYTES);
	k->nargs = nargs;
	k->args = calloc(nargs ? nargs : 1, sizeof(*k->args));
	if (!k->args)
		return fail(r->err, r->len, "out of memory");
	for (uint32_t i = 0; i < nargs; i++) {
		const uint8_t *a = d + hdr + ARG_REC * i;
		zm_arg_t *arg = &k->args[i];
		arg->kind = rd32(a);
		arg->offset = rd32(a + 4);
		arg->size = rd32(a + 8);
		uint32_t name_off = rd32(a + 12);
		if (!zm_arg_kind_name(arg->kind))
			return fail(r->err, r->len, "kernel %s: argument %u has unknown kind %u",
				    k->name, i, arg->kind);
		if (name_off >= ssz)
			return fail(r->err, r->len,
				    "kernel %s: argument %u name offset %u outside the %u-byte "
				    "string area",
				    k->name, i, name_off, ssz);
		if (arg->size == 0 || (uint64_t)arg->offset + arg->size > k->arg_bytes)
			return fail(r->err, r->len,
				    "kernel %s: argument %u (offset %u, size %u) outside the "
				    "%u-byte argument area",
				    k->name, i, arg->offset, arg->size, k->arg_bytes);
		uint32_t want = arg->kind == ZM_ARG_GLOBAL ? 8 : arg->kind == ZM_ARG_LOCAL ? 4 : 0;
		if (want && (arg->size != want || arg->offset % want))
			return fail(r->err, r->len,
				    "kernel %s: %s argument %u must have size %u and be aligned",
				    k->name, zm_arg_kind_name(arg->kind), i, want);
		arg->name = dup_str(strings + name_off, ssz - name_off);
		if (!arg->name)
			return fail(r->err, r->len, "out of memory");
	}
	return 0;
}

static int read_notes(struct reader *r, zm_module_t *m)
{
	const struct rsec *ns = find_section(r, ".note.zesim", NULL);
	if (!ns)
		return fail(r->err, r->len, "no .note.zesim section (no kernels)");
	if (ns->sh.sh_type != SHT_NOTE)
		return fail(r->err, r->len, ".note.zesim has type %u, expected SHT_NOTE",
			    ns->sh.sh_type);
	/* Count first, then fill. */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t off = 0;
		unsigned n = 0;
		while (off < ns->sh.sh_size) {
			if (ns->sh.sh_size - off < NOTE_HDR)
				return fail(r->err, r->len,
					    "kernel note %u: header truncated at offset %llu", n,
					    (unsigned long long)off);
			const uint8_t *h = ns->data + off;
			uint32_t namesz = rd32(h), descsz = rd32(h + 4), type = rd32(h + 8);
			uint64_t name_pad = ((uint64_t)namesz + 3) & ~3ull;
			uint64_t desc_pad = ((uint64_t)descsz + 3) & ~3ull;
			if (name_pad + desc_pad > ns->sh.sh_size - off - NOTE_HDR)
				return fail(r->err, r->len,
					    "kernel note %u: namesz %u + descsz %u run past "
					    ".note.zesim",
					    n, namesz, descsz);
			if (namesz != sizeof(ZE_NOTE_NAME) ||
			    memcmp(h + NOTE_HDR, ZE_NOTE_NAME, sizeof(ZE_NOTE_NAME)) != 0)
				return fail(r->err, r->len, "kernel note %u: owner is not \"%s\"",
					    n, ZE_NOTE_NAME);
			if (type != ZE_NT_KERNEL)
				return fail(r->err, r->len, "kernel note %u: unknown type %u", n,
					    type);
			if (pass && parse_note_desc(r, h + NOTE_HDR + name_pad, descsz,
						    &m->kernels[n], n))
				return -1;
			off += NOTE_HDR + name_pad + desc_pad;
			n++;
		}
		if (!pass) {
			if (n == 0)
				return fail(r->err, r->len, ".note.zesim holds no kernel notes");
			m->kernels = calloc(n, sizeof(*m->kernels));
			if (!m->kernels)
				return fail(r->err, r->len, "out of memory");
			m->nkernels = n;
		}
	}
	return 0;
}

struct symtab {
	const uint8_t *syms;
	size_t count;
	const uint8_t *str;
	size_t strsz;
};

static int read_symtab(struct reader *r, struct symtab *st)
{
	size_t idx;
	const struct rsec *s = find_section(r, ".symtab", &idx);
	if (!s || s->sh.sh_type != SHT_SYMTAB)
		return fail(r->err, r->len, "no .symtab section");
	if (s->sh.sh_entsize != sizeof(Elf64_Sym) || s->sh.sh_size % sizeof(Elf64_Sym))
		return fail(r->err, r->len, ".symtab: entry size %llu / size %llu invalid",
			    (unsigned long long)s->sh.sh_entsize,
			    (unsigned long long)s->sh.sh_size);
	if (s->sh.sh_link == 0 || s->sh.sh_link >= r->nsecs ||
	    r->secs[s->sh.sh_link].sh.sh_type != SHT_STRTAB)
		return fail(r->err, r->len, ".symtab: sh_link %u is not a string table",
			    s->sh.sh_link);
	const struct rsec *str = &r->secs[s->sh.sh_link];
	if (!str->sh.sh_size || str->data[str->sh.sh_size - 1] != 0)
		return fail(r->err, r->len, ".strtab is not NUL-terminated");
	st->syms = s->data;
	st->count = s->sh.sh_size / sizeof(Elf64_Sym);
	st->str = str->data;
	st->strsz = str->sh.sh_size;
	for (size_t i = 0; i < st->count; i++) {
		Elf64_Sym sym;
		memcpy(&sym, st->syms + i * sizeof(sym), sizeof(sym));
		if (sym.st_name >= st->strsz)
			return fail(r->err, r->len, "symbol %zu: name offset %u outside .strtab", i,
				    sym.st_name);
	}
	return 0;
}

static int read_kernel_text(struct reader *r, const struct symtab *st, zm_kernel_t *k)
{
	char name[600];
	size_t idx;
	snprintf(name, sizeof(name), ".text.%s", k->name);
	const struct rsec *t = find_section(r, name, &idx);
	if (!t)
		return fail(r->err, r->len, "kernel %s: no section %s", k->name, name);
	if (t->sh.sh_type != SHT_PROGBITS || !t->data)
		return fail(r->err, r->len, "%s: not a PROGBITS section", name);
	if (t->sh.sh_size % ZE_INST_BYTES || t->sh.sh_size > ZE_MAX_TEXT_BYTES)
		return fail(r->err, r->len, "%s: size %llu is not a multiple of 16 up to 16 MiB",
			    name, (unsigned long long)t->sh.sh_size);
	/* The instruction heap is laid out from 0: every text section sits at a
	 * 64-byte aligned address inside it (checked against the others below). */
	if (t->sh.sh_addr % ZE_TEXT_ALIGN || t->sh.sh_addr > ZE_MAX_HEAP_BYTES ||
	    t->sh.sh_size > ZE_MAX_HEAP_BYTES - t->sh.sh_addr)
		return fail(r->err, r->len,
			    "%s: sh_addr 0x%llx is not 64-byte aligned or runs past the %u-MiB "
			    "instruction heap",
			    name, (unsigned long long)t->sh.sh_addr, ZE_MAX_HEAP_BYTES >> 20);
	k->addr = t->sh.sh_addr;
	k->text_size = (uint32_t)t->sh.sh_size;
	k->text = malloc(k->text_size ? k->text_size : 1);
	if (!k->text)
		return fail(r->err, r->len, "out of memory");
	memcpy(k->text, t->data, k->text_size);
	int found = 0;
	for (size_t i = 1; i < st->count; i++) {
		Elf64_Sym sym;
		memcpy(&sym, st->syms + i * sizeof(sym), sizeof(sym));
		if (sym.st_shndx != idx || ELF64_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		const char *sname = (const char *)st->str + sym.st_name;
		if (sym.st_value < k->addr || sym.st_value - k->addr > k->text_size ||
		    sym.st_size > k->text_size - (sym.st_value - k->addr))
			return fail(r->err, r->len,
				    "symbol %s (value 0x%llx, size %llu) lies outside %s", sname,
				    (unsigned long long)sym.st_value,
				    (unsigned long long)sym.st_size, name);
		if ((sym.st_value - k->addr) % ZE_INST_BYTES)
			return fail(r->err, r->len, "symbol %s is not instruction-aligned", sname);
		if (ELF64_ST_BIND(sym.st_info) == STB_GLOBAL) {
			if (strcmp(sname, k->name) != 0 || sym.st_value != k->addr)
				return fail(r->err, r->len,
					    "%s: global symbol %s is not the kernel entry", name,
					    sname);
			found = 1;
			continue;
		}
		zm_func_t *f = realloc(k->funcs, (k->nfuncs + 1) * sizeof(*f));
		if (!f)
			return fail(r->err, r->len, "out of memory");
		k->funcs = f;
		f[k->nfuncs].name = dup_str((const uint8_t *)sname, st->strsz - sym.st_name);
		f[k->nfuncs].offset = (uint32_t)(sym.st_value - k->addr);
		f[k->nfuncs].size = (uint32_t)sym.st_size;
		if (!f[k->nfuncs++].name)
			return fail(r->err, r->len, "out of memory");
	}
	if (!found)
		return fail(r->err, r->len, "kernel %s: no global symbol in %s", k->name, name);
	return 0;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* .zesim.data: at most one, writable and allocated, at address 0 (the data
 * segment is its own GPU buffer, not part of the instruction heap). */
static int read_data(struct reader *r, zm_module_t *m, size_t *data_idx)
{
	*data_idx = 0;
	for (size_t i = 1; i < r->nsecs; i++) {
		const struct rsec *s = &r->secs[i];
		if (!s->name || strncmp(s->name, ".zesim.", 7) != 0)
			continue;
		if (strcmp(s->name, ZE_DATA_SECTION) != 0 && strcmp(s->name, ZE_PRINTF_SECTION) != 0)
			return fail(r->err, r->len, "unknown section %s", s->name);
		if (strcmp(s->name, ZE_DATA_SECTION) != 0)
			continue;
		if (*data_idx)
			return fail(r->err, r->len, "two %s sections", ZE_DATA_SECTION);
		*data_idx = i;
	}
	if (!*data_idx)
		return 0;
	const struct rsec *s = &r->secs[*data_idx];
	if (s->sh.sh_type != SHT_PROGBITS || !s->data)
		return fail(r->err, r->len, "%s has type %u, expected SHT_PROGBITS", ZE_DATA_SECTION,
			    s->sh.sh_type);
	if (s->sh.sh_flags != (SHF_ALLOC | SHF_WRITE))
		return fail(r->err, r->len, "%s has flags 0x%llx, expected SHF_ALLOC|SHF_WRITE", ZE_DATA_SECTION,
			    (unsigned long long)s->sh.sh_flags);
	if (s->sh.sh_size == 0 || s->sh.sh_size > ZE_MAX_DATA_BYTES)
		return fail(r->err, r->len, "%s: size %llu out of range (1 byte to %u MiB)", ZE_DATA_SECTION,
			    (unsigned long long)s->sh.sh_size, ZE_MAX_DATA_BYTES >> 20);
	if (s->sh.sh_addr != 0)
		return fail(r->err, r->len, "%s: sh_addr 0x%llx, expected 0", ZE_DATA_SECTION,
			    (unsigned long long)s->sh.sh_addr);
	const uint64_t align = s->sh.sh_addralign ? s->sh.sh_addralign : 1;
	if (!is_pow2(align) || align > ZE_MAX_DATA_ALIGN)
		return fail(r->err, r->len, "%s: sh_addralign %llu is not a power of two up to %u",
			    ZE_DATA_SECTION, (unsigned long long)s->sh.sh_addralign, ZE_MAX_DATA_ALIGN);
	m->data = malloc(s->sh.sh_size);
	if (!m->data)
		return fail(r->err, r->len, "out of memory");
	memcpy(m->data, s->data, s->sh.sh_size);
	m->data_size = (uint32_t)s->sh.sh_size;
	m->data_align = (uint32_t)align;
	return 0;
}

/* .zesim.printf: entries {size, nargs, args[nargs], format NUL-terminated,
 * padding}, each a multiple of 4 bytes. */
static int read_printf(struct reader *r, zm_module_t *m)
{
	size_t idx = 0;
	for (size_t i = 1; i < r->nsecs; i++)
		if (r->secs[i].name && strcmp(r->secs[i].name, ZE_PRINTF_SECTION) == 0) {
			if (idx)
				return fail(r->err, r->len, "two %s sections", ZE_PRINTF_SECTION);
			idx = i;
		}
	if (!idx)
		return 0;
	const struct rsec *s = &r->secs[idx];
	if (s->sh.sh_type != SHT_PROGBITS || !s->data || s->sh.sh_flags != 0)
		return fail(r->err, r->len, "%s has type %u and flags 0x%llx, expected SHT_PROGBITS and 0",
			    ZE_PRINTF_SECTION, s->sh.sh_type, (unsigned long long)s->sh.sh_flags);
	if (s->sh.sh_size == 0 || s->sh.sh_size % 4)
		return fail(r->err, r->len, "%s: size %llu is not a positive multiple of 4", ZE_PRINTF_SECTION,
			    (unsigned long long)s->sh.sh_size);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t off = 0;
		uint32_t n = 0;
		while (off < s->sh.sh_size) {
			const uint64_t left = s->sh.sh_size - off;
			const uint8_t *e = s->data + off;
			if (left < 12)
				return fail(r->err, r->len, "%s: entry %u truncated at offset %llu", ZE_PRINTF_SECTION, n,
					    (unsigned long long)off);
			const uint32_t size = rd32(e), nargs = rd32(e + 4);
			if (size < 12 || size % 4 || size > left)
				return fail(r->err, r->len, "%s: entry %u has size %u (%llu bytes left)",
					    ZE_PRINTF_SECTION, n, size, (unsigned long long)left);
			if (nargs > ZE_MAX_PRINTF_ARGS || 8u + 4u * nargs >= size)
				return fail(r->err, r->len, "%s: entry %u: %u arguments do not fit its %u bytes (at most %u)",
					    ZE_PRINTF_SECTION, n, nargs, size, ZE_MAX_PRINTF_ARGS);
			const uint8_t *fmt = e + 8 + 4 * nargs;
			const uint32_t fmax = size - 8 - 4 * nargs;
			if (!memchr(fmt, 0, fmax))
				return fail(r->err, r->len, "%s: entry %u: format not NUL-terminated", ZE_PRINTF_SECTION,
					    n);
			for (uint32_t j = 0; j < nargs; j++)
				if (!zm_printf_arg_dwords(rd32(e + 8 + 4 * j)))
					return fail(r->err, r->len, "%s: entry %u: argument %u has invalid kind 0x%x",
						    ZE_PRINTF_SECTION, n, j, rd32(e + 8 + 4 * j));
			if (pass) {
				zm_printf_t *f = &m->printf_formats[n];
				f->nargs = nargs;
				f->args = malloc((nargs ? nargs : 1) * sizeof(uint32_t));
				f->format = dup_str(fmt, fmax);
				if (!f->args || !f->format)
					return fail(r->err, r->len, "out of memory");
				for (uint32_t j = 0; j < nargs; j++)
					f->args[j] = rd32(e + 8 + 4 * j);
			}
			off += size;
			if (++n > ZE_MAX_PRINTF_FORMATS)
				return fail(r->err, r->len, "%s: more than %u entries", ZE_PRINTF_SECTION,
					    ZE_MAX_PRINTF_FORMATS);
		}
		if (!pass) {
			m->printf_formats = calloc(n, sizeof(*m->printf_formats));
			if (!m->printf_formats)
				return fail(r->err, r->len, "out of memory");
			m->nprintf = n;
		}
	}
	return 0;
}

/* Variables: STT_OBJECT symbols, all inside .zesim.data, and nothing else
 * there.  Exported names are unique. */
static int read_objects(struct reader *r, const struct symtab *st, size_t data_idx, zm_module_t *m)
{
	for (int pass = 0; pass < 2; pass++) {
		uint32_t n = 0;
		for (size_t i = 1; i < st->count; i++) {
			Elf64_Sym sym;
			memcpy(&sym, st->syms + i * sizeof(sym), sizeof(sym));
			const int object = ELF64_ST_TYPE(sym.st_info) == STT_OBJECT;
			const char *sname = (const char *)st->str + sym.st_name;
			if (!object && (!data_idx || sym.st_shndx != data_idx))
				continue;
			if (!object)
				return fail(r->err, r->len, "symbol %s in %s is not an object", sname, ZE_DATA_SECTION);
			if (!data_idx || sym.st_shndx != data_idx)
				return fail(r->err, r->len, "object symbol %s is not in %s", sname, ZE_DATA_SECTION);
			if (!sname[0] || sym.st_value > m->data_size || sym.st_size > m->data_size - sym.st_value)
				return fail(r->err, r->len,
					    "object symbol %s (value %llu, size %llu) lies outside the %u-byte %s", sname,
					    (unsigned long long)sym.st_value, (unsigned long long)sym.st_size, m->data_size,
					    ZE_DATA_SECTION);
			if (pass) {
				zm_global_t *g = &m->globals[n];
				g->offset = (uint32_t)sym.st_value;
				g->size = (uint32_t)sym.st_size;
				g->exported = ELF64_ST_BIND(sym.st_info) == STB_GLOBAL;
				g->name = dup_str((const uint8_t *)sname, st->strsz - sym.st_name);
				if (!g->name)
					return fail(r->err, r->len, "out of memory");
				for (uint32_t j = 0; g->exported && j < n; j++)
					if (m->globals[j].exported && strcmp(m->globals[j].name, g->name) == 0)
						return fail(r->err, r->len, "object symbol %s is exported twice", g->name);
			}
			n++;
		}
		if (!pass && n) {
			m->globals = calloc(n, sizeof(*m->globals));
			if (!m->globals)
				return fail(r->err, r->len, "out of memory");
			m->nglobals = n;
		}
	}
	return 0;
}

static int check_debug_line(struct reader *r, zm_module_t *m)
{
	const struct rsec *s = find_section(r, ".debug_line", NULL);
	if (!s)
		return 0;
	if (s->sh.sh_size && !s->data)
		return fail(r->err, r->len, ".debug_line has type %u and no contents in the file",
			    s->sh.sh_type);
	uint64_t off = 0;
	while (off < s->sh.sh_size) {
		uint64_t left = s->sh.sh_size - off;
		if (left < 4)
			return fail(r->err, r->len, ".debug_line: truncated unit at offset %llu",
				    (unsigned long long)off);
		uint64_t unit = rd32(s->data + off), hdr = 4;
		if (unit == 0xffffffffu) {
			if (left < 12)
				return fail(r->err, r->len, ".debug_line: truncated 64-bit unit");
			unit = rd32(s->data + off + 4) | (uint64_t)rd32(s->data + off + 8) << 32;
			hdr = 12;
		}
		if (unit > left - hdr)
			return fail(r->err, r->len,
				    ".debug_line: unit at offset %llu has length %llu past the "
				    "section end",
				    (unsigned long long)off, (unsigned long long)unit);
		off += hdr + unit;
	}
	m->has_debug_line = 1;
	return 0;
}

int zm_module_read_mem(const void *image, size_t size, zm_module_t *m, char *err, size_t len)
{
	struct reader r = {.img = image, .size = size, .err = err, .len = len};
	memset(m, 0, sizeof(*m));
	if (read_headers(&r))
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(err, len, "libelf: %s", elf_errmsg(-1));
	/* libelf may convert data in place: give it a private copy. */
	char *copy = malloc(size);
	if (!copy)
		return fail(err, len, "out of memory");
	memcpy(copy, image, size);
	Elf *elf = elf_memory(copy, size);
	int rc = -1;
	struct symtab st = {0};
	if (!elf) {
		fail(err, len, "libelf: %s", elf_errmsg(-1));
		goto out;
	}
	size_t data_idx;
	if (read_sections(&r, elf) || read_notes(&r, m) || read_symtab(&r, &st) || read_data(&r, m, &data_idx) ||
	    read_printf(&r, m) || read_objects(&r, &st, data_idx, m))
		goto out;
	for (uint32_t i = 0; i < m->nkernels; i++) {
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(m->kernels[i].name, m->kernels[j].name) == 0) {
				fail(err, len, "kernel %s has two notes", m->kernels[i].name);
				goto out;
			}
		if (read_kernel_text(&r, &st, &m->kernels[i]))
			goto out;
		for (uint32_t j = 0; j < i; j++) {
			const zm_kernel_t *a = &m->kernels[j], *b = &m->kernels[i];
			if (a->addr < b->addr + b->text_size && b->addr < a->addr + a->text_size) {
				fail(err, len, "text sections of %s and %s overlap in the instruction heap",
				     a->name, b->name);
				goto out;
			}
		}
	}
	for (size_t i = 1; i < r.nsecs; i++)
		if (r.secs[i].name && strncmp(r.secs[i].name, ".text.", 6) == 0) {
			int owned = 0;
			for (uint32_t k = 0; k < m->nkernels; k++)
				owned |= strcmp(r.secs[i].name + 6, m->kernels[k].name) == 0;
			if (!owned) {
				fail(err, len, "section %s has no kernel note", r.secs[i].name);
				goto out;
			}
		}
	rc = check_debug_line(&r, m);
out:
	if (elf)
		elf_end(elf);
	free(copy);
	free(r.secs);
	if (rc)
		zm_module_free(m);
	return rc;
}

int zm_module_read_file(const char *path, zm_module_t *m, char *err, size_t len)
{
	memset(m, 0, sizeof(*m));
	FILE *f = fopen(path, "rb");
	if (!f)
		return fail(err, len, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fclose(f);
		return fail(err, len, "%s: not a regular file", path);
	}
	if ((uint64_t)sb.st_size > MAX_FILE_BYTES) {
		fclose(f);
		return fail(err, len, "%s: %lld bytes is larger than the 256 MiB limit", path,
			    (long long)sb.st_size);
	}
	size_t size = (size_t)sb.st_size;
	uint8_t *img = malloc(size ? size : 1);
	if (!img || fread(img, 1, size, f) != size) {
		free(img);
		fclose(f);
		return fail(err, len, "%s: read failed", path);
	}
	fclose(f);
	char inner[512];
	int rc = zm_module_read_mem(img, size, m, inner, sizeof(inner));
	free(img);
	if (rc)
		fail(err, len, "%s: %s", path, inner);
	return rc;
}

void zm_module_free(zm_module_t *m)
{
	for (uint32_t i = 0; m->kernels && i < m->nkernels; i++) {
		zm_kernel_t *k = &m->kernels[i];
		free(k->name);
		for (uint32_t j = 0; k->args && j < k->nargs; j++)
			free(k->args[j].name);
		free(k->args);
		for (uint32_t j = 0; j < k->nfuncs; j++)
			free(k->funcs[j].name);
		free(k->funcs);
		free(k->text);
		free(k->lines);
	}
	free(m->kernels);
	for (uint32_t i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->files);
	free(m->data);
	for (uint32_t i = 0; m->globals && i < m->nglobals; i++)
		free(m->globals[i].name);
	free(m->globals);
	for (uint32_t i = 0; m->printf_formats && i < m->nprintf; i++) {
		free(m->printf_formats[i].format);
		free(m->printf_formats[i].args);
	}
	free(m->printf_formats);
	memset(m, 0, sizeof(*m));
}
