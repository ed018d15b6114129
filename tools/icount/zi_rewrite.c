/* The rewriter and the line-table reader of zesim-icount (zi_rewrite.h). */
#define _GNU_SOURCE
#include "zi_rewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zs/ze_isa.h"

static int fail(char *err, size_t len, const char *msg, unsigned a, unsigned b)
{
	snprintf(err, len, msg, a, b);
	return -1;
}

/* Whether control may leave the instruction other than to the next one. */
static int ends_block(const ze_inst_t *in)
{
	switch (in->opcode) {
	case ZE_OP_JMPI: case ZE_OP_IF: case ZE_OP_ELSE: case ZE_OP_WHILE: case ZE_OP_BREAK:
	case ZE_OP_CONT: case ZE_OP_CALL: case ZE_OP_CALLA: case ZE_OP_RET: case ZE_OP_HALT:
		return 1;
	case ZE_OP_SEND:
		return ze_send_msg(in->dw3) == ZE_MSG_EOT;
	default:
		return 0;
	}
}

static ze_operand_t grf_scalar(unsigned reg, unsigned sub)
{
	return (ze_operand_t){.kind = ZE_OPND_GRFS, .reg = (uint8_t)reg, .sub = (uint8_t)sub};
}

/* mov (1) rR.S:ud imm:ud */
static ze_inst_t mov_imm(unsigned reg, unsigned sub, uint32_t imm)
{
	ze_inst_t in = {.opcode = ZE_OP_MOV, .esize = 1, .dtype = ZE_TYPE_UD, .stype = ZE_TYPE_UD};
	in.dst = grf_scalar(reg, sub);
	in.src[0] = (ze_operand_t){.kind = ZE_OPND_IMM};
	in.dw3 = imm;
	return in;
}

int zi_instrument_kernel(zm_kernel_t *k, uint32_t ki, unsigned ra, unsigned rp, uint64_t buffer, uint32_t base,
			 zi_block_t **blocks, uint32_t *nblocks, char *err, size_t errlen)
{
	const uint32_t n = k->text_size / ZE_INST_BYTES;
	ze_inst_t *in = calloc(n ? n : 1, sizeof(*in));
	uint8_t *leader = calloc(n + 1, 1);
	uint32_t *newpos = calloc(n + 1, sizeof(*newpos)), *count_at = calloc(n + 1, sizeof(*count_at));
	int rc = -1;
	if (!in || !leader || !newpos || !count_at) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		if (ze_decode(k->text + i * ZE_INST_BYTES, &in[i], err, errlen))
			goto out;
	leader[0] = 1;
	for (uint32_t f = 0; f < k->nfuncs; f++)
		leader[k->funcs[f].offset / ZE_INST_BYTES] = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (ze_inst_has_jump(&in[i])) {
			const int64_t t = (int64_t)i + ze_jump_offset(&in[i]) / (int32_t)ZE_INST_BYTES;
			if (ze_jump_offset(&in[i]) % (int32_t)ZE_INST_BYTES || t < 0 || t > (int64_t)n) {
				rc = fail(err, errlen, "instruction %u jumps out of its section (offset %u)", i,
					  (unsigned)ze_jump_offset(&in[i]));
				goto out;
			}
			leader[t] = 1;
		}
		if (ends_block(&in[i]))
			leader[i + 1] = 1;
	}
	/* Layout: the prologue, then each block's counter update before it. */
	const uint32_t prologue = ZI_PROLOGUE_BYTES / ZE_INST_BYTES, update = 3;
	uint32_t pos = prologue, nb = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (leader[i]) {
			count_at[i] = pos;
			pos += update;
			nb++;
		}
		newpos[i] = pos++;
	}
	count_at[n] = newpos[n] = pos;
	zi_block_t *b = realloc(*blocks, (*nblocks + nb) * sizeof(*b));
	uint8_t *text = calloc(pos, ZE_INST_BYTES);
	if (!b || !text) {
		free(b ? NULL : text);
		if (b)
			*blocks = b;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	*blocks = b;
	uint32_t first = *nblocks, id = first;
	ze_inst_t pro[2] = {mov_imm(ra, 2, (uint32_t)buffer), mov_imm(ra, 3, (uint32_t)(buffer >> 32))};
	ze_encode(&pro[0], text);
	ze_encode(&pro[1], text + ZE_INST_BYTES);
	for (uint32_t i = 0; i < n; i++) {
		if (leader[i]) {
			ze_inst_t add = {.opcode = ZE_OP_SEND, .esize = 1};
			add.src[0] = (ze_operand_t){.kind = ZE_OPND_GRFV, .reg = (uint8_t)ra};
			add.src[1] = (ze_operand_t){.kind = ZE_OPND_GRFV, .reg = (uint8_t)rp};
			add.src[2] = grf_scalar(ra, 2);
			add.dw3 = ze_send_desc(ZE_MSG_ATOMIC, ZE_ATOMIC_ADD, 1);
			const ze_inst_t upd[3] = {mov_imm(ra, 0, (base + id) * 4u), mov_imm(rp, 0, 1), add};
			for (int j = 0; j < 3; j++)
				ze_encode(&upd[j], text + (count_at[i] + (uint32_t)j) * ZE_INST_BYTES);
			b[id].kernel = ki;
			b[id].offset = i * ZE_INST_BYTES;
			b[id].ninst = 0;
			id++;
		}
		b[id - 1].ninst++;
		ze_inst_t moved = in[i];
		if (ze_inst_has_jump(&moved)) {
			const uint32_t t = i + (uint32_t)(ze_jump_offset(&moved) / (int32_t)ZE_INST_BYTES);
			moved.dw3 = (uint32_t)(((int64_t)count_at[t] - (int64_t)newpos[i]) * ZE_INST_BYTES);
		}
		ze_encode(&moved, text + newpos[i] * ZE_INST_BYTES);
	}
	for (uint32_t f = 0; f < k->nfuncs; f++)
		k->funcs[f].offset = count_at[k->funcs[f].offset / ZE_INST_BYTES] * ZE_INST_BYTES;
	for (uint32_t f = 0; f < k->nfuncs; f++) {
		uint32_t end = pos * ZE_INST_BYTES;
		for (uint32_t g = 0; g < k->nfuncs; g++)
			if (k->funcs[g].offset > k->funcs[f].offset && k->funcs[g].offset < end)
				end = k->funcs[g].offset;
		k->funcs[f].size = end - k->funcs[f].offset;
	}
	/* Every instruction written must decode (the encoder does not check). */
	for (uint32_t i = 0; i < pos; i++) {
		ze_inst_t chk;
		if (ze_decode(text + i * ZE_INST_BYTES, &chk, err, errlen)) {
			free(text);
			goto out;
		}
	}
	free(k->text);
	k->text = text;
	k->text_size = pos * ZE_INST_BYTES;
	free(k->lines);
	k->lines = NULL;
	*nblocks = id;
	rc = 0;
out:
	free(in);
	free(leader);
	free(newpos);
	free(count_at);
	return rc;
}

/* ---- DWARF 4 .debug_line ---------------------------------------------------- */

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	unsigned s = 0;
	while (*p < end) {
		const uint8_t b = *(*p)++;
		if (s < 64)
			v |= (uint64_t)(b & 0x7f) << s;
		s += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(const uint8_t **p, const uint8_t *end)
{
	int64_t v = 0;
	unsigned s = 0;
	uint8_t b = 0;
	while (*p < end) {
		b = *(*p)++;
		if (s < 64)
			v |= (int64_t)(b & 0x7f) << s;
		s += 7;
		if (!(b & 0x80))
			break;
	}
	if (s < 64 && (b & 0x40))
		v |= -((int64_t)1 << s);
	return v;
}

/* The bytes of the section `name` of an ELF64 little-endian file. */
static const uint8_t *elf_section(const uint8_t *elf, size_t size, const char *name, uint64_t *len)
{
	if (size < 64 || memcmp(elf, "\177ELF", 4))
		return NULL;
	const uint64_t shoff = rd(elf + 40, 8), shnum = rd(elf + 60, 2), shstr = rd(elf + 62, 2);
	if (shoff > size || shnum * 64 > size - shoff || shstr >= shnum)
		return NULL;
	const uint8_t *sh = elf + shoff;
	const uint64_t stroff = rd(sh + shstr * 64 + 24, 8), strsz = rd(sh + shstr * 64 + 32, 8);
	if (stroff > size || strsz > size - stroff)
		return NULL;
	for (uint64_t i = 0; i < shnum; i++) {
		const uint8_t *s = sh + i * 64;
		const uint64_t nm = rd(s, 4), off = rd(s + 24, 8), sz = rd(s + 32, 8);
		if (nm < strsz && strncmp((const char *)elf + stroff + nm, name, strsz - nm) == 0 && off <= size &&
		    sz <= size - off) {
			*len = sz;
			return elf + off;
		}
	}
	return NULL;
}

static void fill(zi_pos_t **pos, uint32_t *npos, uint64_t from, uint64_t to, uint32_t file, uint32_t line)
{
	if (to <= from || to > (64u << 20))
		return;
	const uint32_t last = (uint32_t)((to + ZE_INST_BYTES - 1) / ZE_INST_BYTES);
	if (last > *npos) {
		zi_pos_t *p = realloc(*pos, last * sizeof(*p));
		if (!p)
			return;
		memset(p + *npos, 0, (last - *npos) * sizeof(*p));
		*pos = p;
		*npos = last;
	}
	for (uint64_t a = from / ZE_INST_BYTES; a < last; a++)
		(*pos)[a] = (zi_pos_t){file, line};
}

int zi_read_lines(const uint8_t *elf, size_t size, zi_pos_t **pos, uint32_t *npos, char ***files, uint32_t *nfiles)
{
	*pos = NULL;
	*npos = 0;
	*files = NULL;
	*nfiles = 0;
	uint64_t len;
	const uint8_t *sec = elf_section(elf, size, ".debug_line", &len);
	if (!sec)
		return 0;
	const uint8_t *p = sec, *send = sec + len;
	while (send - p >= 4) {
		const uint64_t unit = rd(p, 4);
		if (unit >= 0xfffffff0u || unit > (uint64_t)(send - p - 4))
			return -1; /* 64-bit DWARF is never written by the module writer */
		const uint8_t *uend = p + 4 + unit;
		const unsigned version = (unsigned)rd(p + 4, 2);
		const uint8_t *h = p + 10, *prog = h + rd(p + 6, 4);
		if (version < 2 || version > 4 || prog > uend)
			return -1;
		const unsigned min_len = h[0];
		h += version >= 4 ? 2 : 1; /* maximum_operations_per_instruction since v4 */
		const int line_base = (int8_t)h[1];
		const unsigned line_range = h[2], opcode_base = h[3];
		const uint8_t *lengths = h + 4;
		h = lengths + (opcode_base ? opcode_base - 1 : 0);
		while (h < prog && *h) /* include directories */
			h += strnlen((const char *)h, (size_t)(prog - h)) + 1;
		h++;
		const uint32_t file0 = *nfiles;
		while (h < prog && *h) {
			char **f = realloc(*files, (*nfiles + 1) * sizeof(*f));
			if (!f)
				return -1;
			*files = f;
			f[(*nfiles)++] = strndup((const char *)h, (size_t)(prog - h));
			h += strnlen((const char *)h, (size_t)(prog - h)) + 1;
			uleb(&h, prog);
			uleb(&h, prog);
			uleb(&h, prog);
		}
		uint64_t addr = 0, row_addr = 0;
		uint32_t file = 1, line = 1, row_file = 0, row_line = 0;
		int have_row = 0;
#define ROW()                                                                                                         \
	do {                                                                                                          \
		if (have_row)                                                                                         \
			fill(pos, npos, row_addr, addr, row_file ? file0 + row_file - 1 : UINT32_MAX, row_line);                              \
		row_addr = addr, row_file = file, row_line = line, have_row = 1;                                      \
	} while (0)
		for (const uint8_t *q = prog; q < uend;) {
			const uint8_t op = *q++;
			if (op >= opcode_base) {
				const unsigned adj = op - opcode_base;
				addr += (uint64_t)(adj / line_range) * min_len;
				line += (uint32_t)(line_base + (int)(adj % line_range));
				ROW();
			} else if (op == 0) {
				const uint64_t n = uleb(&q, uend);
				if (!n || n > (uint64_t)(uend - q))
					return -1;
				const uint8_t sub = q[0];
				if (sub == 1) { /* end_sequence */
					ROW();
					have_row = 0;
					addr = 0, file = 1, line = 1;
				} else if (sub == 2 && n == 9) {
					addr = rd(q + 1, 8);
				}
				q += n;
			} else if (op == 1) {
				ROW();
			} else if (op == 2) {
				addr += uleb(&q, uend) * min_len;
			} else if (op == 3) {
				line += (uint32_t)sleb(&q, uend);
			} else if (op == 4) {
				file = (uint32_t)uleb(&q, uend);
			} else if (op == 8) {
				addr += (uint64_t)((255u - opcode_base) / line_range) * min_len;
			} else if (op == 9 && uend - q >= 2) {
				addr += rd(q, 2);
				q += 2;
			} else {
				for (unsigned a = 0; a < lengths[op - 1]; a++)
					uleb(&q, uend);
			}
		}
#undef ROW
		p = uend;
	}
	return 0;
}
