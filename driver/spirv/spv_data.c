/* Program-scope variables (OpVariable outside functions in UniformConstant or
 * CrossWorkgroup storage: OpenCL C __constant tables, string literals,
 * OpenCL C 2.0 __global variables) live in the module's data segment
 * (.zesim.data, docs/module-format.md), one GPU buffer per module shared by
 * all its kernels and launches.  A kernel that uses them gets the hidden
 * argument __zs_data, the segment's address, and a pointer to a variable is
 * an R_GLOBAL pointer on that base, so loads, stores and atomics work as for
 * buffers.  The printf formats of the module are kept here too
 * (.zesim.printf); spv_printf.c makes them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spv_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/OpenCL.std.h>
#include <spirv/unified1/spirv.h>

#define MIN_ALIGN 4u       /* every variable starts on a dword: the memory messages are dword-based */
#define MAX_INIT_DEPTH 32u /* nesting of composite initializers */

typedef struct pf_entry {
	const char *format;
	uint32_t nargs;
	uint32_t *args;
} pf_entry_t;

struct spv_data {
	/* the module: per id of a program-scope variable */
	uint32_t *off;          /* offset in the segment + 1, 0 when not laid out */
	const char **why;       /* why a variable could not be laid out */
	uint32_t *align_deco;   /* Alignment decoration */
	const char **link_name; /* LinkageAttributes name */
	uint8_t *link_import;
	uint8_t *bytes;
	size_t size, cap;
	uint32_t align;
	uint32_t *const_lo, *const_hi; /* byte ranges of the __constant (UniformConstant) variables */
	size_t nconst, capconst_lo, capconst_hi;
	pf_entry_t *pf;
	size_t npf, cappf;
	/* the kernel being compiled */
	uint32_t data_arg, printf_arg; /* argument-area offsets of the hidden pointers, UINT32_MAX if unused */
};

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* A module-level OpVariable of the data segment (not a built-in, which older
 * llvm-spirv releases declare in UniformConstant storage). */
static int is_data_var(const spv_ctx_t *c, const spv_inst_t *in)
{
	return in->opcode == SpvOpVariable && in->nwords >= 4 &&
	       (in->w[3] == SpvStorageClassUniformConstant || in->w[3] == SpvStorageClassCrossWorkgroup) &&
	       !spv_builtin_var(c, in);
}

static const spv_type_t *type_of(spv_ctx_t *c, uint32_t id)
{
	return id && id < c->m->bound && c->types[id].k != TY_NONE ? &c->types[id] : NULL;
}

static const char *var_name(spv_ctx_t *c, uint32_t id)
{
	if (c->data->link_name[id])
		return c->data->link_name[id];
	return c->names[id] ? c->names[id] : NULL;
}

static char *arena_printf(spv_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char *arena_printf(spv_ctx_t *c, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char *s = spv_alloc(c, strlen(buf) + 1);
	memcpy(s, buf, strlen(buf) + 1);
	return s;
}

/* Writes the bytes of constant `id` of type `type` at buf + off (the buffer is
 * zeroed, so null and undefined parts are skipped).  Returns NULL, or why the
 * initializer cannot be laid out. */
static const char *write_init(spv_ctx_t *c, uint8_t *buf, uint32_t off, uint32_t type, uint32_t id, uint32_t depth)
{
	const spv_inst_t *in = spv_def(c->m, id);
	const spv_type_t *t = type_of(c, type);
	if (!in || !t || in->type != type)
		return "its initializer is not a constant of the variable's type";
	if (depth > MAX_INIT_DEPTH)
		return "its initializer is nested too deeply";
	switch (in->opcode) {
	case SpvOpConstantNull:
	case SpvOpUndef:
		return NULL;
	case SpvOpConstant:
	case SpvOpSpecConstant:
	case SpvOpSpecConstantOp: {
		const val_t *v = &c->consts[id];
		if (t->k == TY_PTR)
			return "initializers holding pointers are not supported yet";
		if ((t->k != TY_INT && t->k != TY_FLOAT) || !v->done || v->n < 1 || v->leaf[0].k != O_I)
			return arena_printf(c, "its initializer %%%u is not a number", id);
		const uint64_t bits = v->leaf[0].v | (v->n > 1 && v->leaf[1].k == O_I ? (uint64_t)v->leaf[1].v << 32 : 0);
		for (uint32_t i = 0; i < t->size; i++)
			buf[off + i] = (uint8_t)(bits >> (8 * i));
		return NULL;
	}
	case SpvOpConstantComposite:
	case SpvOpSpecConstantComposite: {
		const uint32_t n = in->nwords - 3u;
		if (t->k == TY_STRUCT) {
			if (n != t->nmemb)
				return "its initializer has the wrong number of members";
			for (uint32_t i = 0; i < n; i++) {
				const char *why = write_init(c, buf, off + t->moff[i], t->memb[i], in->w[3 + i], depth + 1);
				if (why)
					return why;
			}
			return NULL;
		}
		const spv_type_t *e = type_of(c, t->elem);
		if ((t->k != TY_ARRAY && t->k != TY_VEC) || !e || n != t->count)
			return "its initializer has the wrong number of elements";
		for (uint32_t i = 0; i < n; i++) {
			const char *why = write_init(c, buf, off + i * e->size, t->elem, in->w[3 + i], depth + 1);
			if (why)
				return why;
		}
		return NULL;
	}
	default:
		return arena_printf(c, "initializers made by %s are not supported", spv_op_name(in->opcode));
	}
}

static void data_decoration(spv_ctx_t *c, uint32_t target, const spv_inst_t *in, void *ctx)
{
	spv_data_t *d = ctx;
	if (in->nwords < 4 || target >= c->m->bound)
		return;
	if (in->w[2] == SpvDecorationAlignment) {
		d->align_deco[target] = in->w[3];
	} else if (in->w[2] == SpvDecorationLinkageAttributes && in->nwords >= 5) {
		/* The reader checked the string's NUL; the linkage type follows it. */
		d->link_name[target] = (const char *)&in->w[3];
		d->link_import[target] = in->w[in->nwords - 1] == SpvLinkageTypeImport;
	}
}

void spv_data_layout(spv_ctx_t *c)
{
	const spv_module_t *m = c->m;
	spv_data_t *d = spv_alloc(c, sizeof(*d));
	c->data = d;
	d->off = spv_alloc(c, m->bound * sizeof(uint32_t));
	d->why = spv_alloc(c, m->bound * sizeof(char *));
	d->align_deco = spv_alloc(c, m->bound * sizeof(uint32_t));
	d->link_name = spv_alloc(c, m->bound * sizeof(char *));
	d->link_import = spv_alloc(c, m->bound);
	d->align = 1;
	d->data_arg = d->printf_arg = UINT32_MAX;
	spv_decorations(c, data_decoration, d);
	/* Module-level variables, in declaration order. */
	for (uint32_t i = 0; i < m->ninsts && m->insts[i].opcode != SpvOpFunction; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (!is_data_var(c, in))
			continue;
		c->cur_word = in->off;
		const uint32_t id = in->result;
		const spv_type_t *pt = type_of(c, in->type);
		const spv_type_t *t = pt && pt->k == TY_PTR ? type_of(c, pt->elem) : NULL;
		if (d->link_import[id]) {
			d->why[id] = "it is imported (modules are not linked with each other)";
			continue;
		}
		if (!t || !t->size) {
			d->why[id] = "its type has no size in memory";
			continue;
		}
		uint32_t align = t->align > MIN_ALIGN ? t->align : MIN_ALIGN;
		const uint32_t deco = d->align_deco[id];
		if (deco & (deco - 1))
			spv_fail(c, in->off, "OpVariable %%%u: Alignment %u is not a power of two", id, deco);
		if (deco > align)
			align = deco;
		if (align > ZE_MAX_DATA_ALIGN)
			spv_fail(c, in->off, "OpVariable %%%u: alignment %u exceeds %u", id, align, ZE_MAX_DATA_ALIGN);
		const uint64_t off = align_up((uint32_t)d->size, align);
		if (off + t->size > ZE_MAX_DATA_BYTES)
			spv_fail(c, in->off, "the program-scope variables take more than %u MiB", ZE_MAX_DATA_BYTES >> 20);
		d->bytes = spv_grow(c, d->bytes, &d->cap, (size_t)off + t->size, 1); /* zeroed */
		if (in->nwords > 4) {
			const char *why = write_init(c, d->bytes, (uint32_t)off, pt->elem, in->w[4], 0);
			if (why) {
				memset(d->bytes + off, 0, t->size);
				d->why[id] = why;
				continue;
			}
		}
		d->off[id] = (uint32_t)off + 1;
		d->size = off + t->size;
		if (in->w[3] == SpvStorageClassUniformConstant) {
			d->const_lo = spv_grow(c, d->const_lo, &d->capconst_lo, d->nconst + 1, sizeof(uint32_t));
			d->const_hi = spv_grow(c, d->const_hi, &d->capconst_hi, d->nconst + 1, sizeof(uint32_t));
			d->const_lo[d->nconst] = (uint32_t)off;
			d->const_hi[d->nconst++] = (uint32_t)d->size;
		}
		if (align > d->align)
			d->align = align;
	}
}

/* The argument-area dword of a hidden pointer, as an operand. */
static opnd_t arg_dword(uint32_t off)
{
	return o_s(7 + off / 32, (off / 4) % 8);
}

struct used_vars {
	spv_ctx_t *c;
	const spv_inst_t *in;
	uint8_t *used;
};

static void mark_id(void *ctx, unsigned kind, uint32_t index)
{
	struct used_vars *u = ctx;
	if (kind == SPV_KIND_IdRef && u->in->w[index] < u->c->m->bound)
		u->used[u->in->w[index]] = 1;
}

void spv_data_setup_kernel(spv_ctx_t *c)
{
	spv_data_t *d = c->data;
	const spv_module_t *m = c->m;
	d->data_arg = d->printf_arg = UINT32_MAX;
	/* What the kernel refers to (id operands of its flat instructions). */
	uint8_t *used = spv_alloc(c, m->bound);
	int need_printf = 0;
	for (uint32_t i = 0; i < c->nfi; i++) {
		const spv_inst_t *in = &c->fi[i];
		struct used_vars u = {c, in, used};
		spv_walk(m, in, mark_id, &u);
		if (in->opcode == SpvOpExtInst && in->nwords >= 5 && in->w[3] < m->bound && m->ocl_set[in->w[3]] &&
		    in->w[4] == OpenCLstd_Printf)
			need_printf = 1;
	}
	int need_data = 0;
	for (uint32_t i = 0; i < m->ninsts && m->insts[i].opcode != SpvOpFunction; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (!is_data_var(c, in) || !used[in->result])
			continue;
		if (d->why[in->result]) {
			const char *name = var_name(c, in->result);
			spv_fail(c, in->off, "program-scope variable %%%u%s%s%s: %s", in->result, name ? " (" : "",
				 name ? name : "", name ? ")" : "", d->why[in->result]);
		}
		need_data = 1;
	}
	/* The hidden pointers go after the user's arguments, the group counts
	 * (if needed) after them. */
	uint32_t off = c->arg_bytes;
	if (need_data) {
		off = align_up(off, 8);
		d->data_arg = off;
		off += 8;
	}
	if (need_printf) {
		off = align_up(off, 8);
		d->printf_arg = off;
		off += 8;
	}
	if (off > ZE_MAX_ARG_BYTES)
		spv_fail(c, c->entry_word, "kernel \"%s\": no room in the %u-byte argument area for the hidden pointers "
			 "to the program's data and the printf buffer", c->kernel_name, ZE_MAX_ARG_BYTES);
	c->arg_bytes = off;
	c->num_groups_off = off + 12 > ZE_MAX_ARG_BYTES ? UINT32_MAX : off;
	if (!need_data)
		return;
	const opnd_t base = arg_dword(d->data_arg);
	for (uint32_t i = 0; i < m->ninsts && m->insts[i].opcode != SpvOpFunction; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (!is_data_var(c, in) || !used[in->result])
			continue;
		val_t *v = &c->vals[in->result];
		v->type = in->type;
		v->n = 2;
		v->leaf = spv_alloc(c, 3 * sizeof(opnd_t));
		v->leaf[0] = o_imm(d->off[in->result] - 1);
		v->leaf[1] = o_imm(0);
		v->root = (root_t){R_GLOBAL, (uint8_t)base.v, base.sub, SPV_ROOT_DATA};
		v->done = 1;
	}
}

int spv_data_root(const root_t *r)
{
	return r->k == R_GLOBAL && r->id == SPV_ROOT_DATA;
}

int spv_data_fold_load(spv_ctx_t *c, const val_t *p, uint32_t type, val_t *r)
{
	const spv_data_t *d = c->data;
	if (!spv_data_root(&p->root) || p->leaf[0].k != O_I || p->leaf[0].neg || p->leaf[0].abs)
		return 0;
	/* Scalars and vectors of 32- and 64-bit numbers: leaves are their dwords. */
	const spv_type_t *t = type_of(c, type);
	const spv_type_t *e = t && t->k == TY_VEC ? type_of(c, t->elem) : t;
	if (!e || (e->k != TY_INT && e->k != TY_FLOAT) || (e->width != 32 && e->width != 64))
		return 0;
	const uint32_t count = t->k == TY_VEC ? t->count : 1, esize = e->width / 8;
	const uint64_t lo = p->leaf[0].v, hi = lo + (uint64_t)count * esize;
	if (r->n != count * (esize / 4))
		return 0;
	for (size_t i = 0; i < d->nconst; i++) {
		if (lo < d->const_lo[i] || hi > d->const_hi[i])
			continue;
		for (uint32_t k = 0; k < r->n; k++) {
			uint32_t v;
			memcpy(&v, d->bytes + lo + 4 * k, 4); /* (the host is little-endian, as the device) */
			r->leaf[k] = o_imm(v);
		}
		return 1;
	}
	return 0;
}

opnd_t spv_data_printf_base(spv_ctx_t *c)
{
	if (c->data->printf_arg == UINT32_MAX)
		spv_fail(c, c->cur_word, "internal: printf without the printf buffer argument");
	return arg_dword(c->data->printf_arg);
}

const char *spv_data_string(spv_ctx_t *c, uint32_t off)
{
	const spv_data_t *d = c->data;
	if (off >= d->size || !memchr(d->bytes + off, 0, d->size - off))
		return NULL;
	return (const char *)d->bytes + off;
}

uint32_t spv_data_printf_format(spv_ctx_t *c, const char *format, const uint32_t *args, uint32_t nargs)
{
	spv_data_t *d = c->data;
	for (size_t i = 0; i < d->npf; i++)
		if (d->pf[i].nargs == nargs && strcmp(d->pf[i].format, format) == 0 &&
		    memcmp(d->pf[i].args, args, nargs * sizeof(uint32_t)) == 0)
			return (uint32_t)i;
	if (d->npf >= ZE_MAX_PRINTF_FORMATS)
		spv_fail(c, c->cur_word, "more than %u different printf calls in the module", ZE_MAX_PRINTF_FORMATS);
	d->pf = spv_grow(c, d->pf, &d->cappf, d->npf + 1, sizeof(pf_entry_t));
	pf_entry_t *e = &d->pf[d->npf];
	e->format = format; /* the data segment's bytes: they live as long as the compilation */
	e->nargs = nargs;
	e->args = spv_alloc(c, (nargs + 1) * sizeof(uint32_t));
	memcpy(e->args, args, nargs * sizeof(uint32_t));
	return (uint32_t)d->npf++;
}

uint32_t spv_data_hidden_args(spv_ctx_t *c, zm_arg_t *out)
{
	const spv_data_t *d = c->data;
	uint32_t n = 0;
	if (d->data_arg != UINT32_MAX)
		out[n++] = (zm_arg_t){(char *)SPV_HIDDEN_DATA, ZM_ARG_GLOBAL, d->data_arg, 8};
	if (d->printf_arg != UINT32_MAX)
		out[n++] = (zm_arg_t){(char *)SPV_HIDDEN_PRINTF, ZM_ARG_GLOBAL, d->printf_arg, 8};
	return n;
}

static char *dup_or_fail(spv_ctx_t *c, const char *s)
{
	char *p = strdup(s);
	if (!p) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	return p;
}

static void *calloc_or_fail(spv_ctx_t *c, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	return p;
}

void spv_data_output(spv_ctx_t *c, zm_module_t *out)
{
	const spv_data_t *d = c->data;
	const spv_module_t *m = c->m;
	if (d->size) {
		out->data = calloc_or_fail(c, d->size, 1);
		memcpy(out->data, d->bytes, d->size);
		out->data_size = (uint32_t)d->size;
		out->data_align = d->align;
		/* Named variables become symbols: exported ones (LinkageAttributes
		 * Export) global, the others local. */
		uint32_t n = 0;
		for (uint32_t i = 0; i < m->ninsts && m->insts[i].opcode != SpvOpFunction; i++)
			n += m->insts[i].opcode == SpvOpVariable && d->off[m->insts[i].result] &&
			     var_name(c, m->insts[i].result);
		out->globals = calloc_or_fail(c, n, sizeof(zm_global_t));
		for (uint32_t i = 0; i < m->ninsts && m->insts[i].opcode != SpvOpFunction; i++) {
			const spv_inst_t *in = &m->insts[i];
			if (in->opcode != SpvOpVariable || !d->off[in->result] || !var_name(c, in->result))
				continue;
			zm_global_t *g = &out->globals[out->nglobals++];
			g->name = dup_or_fail(c, var_name(c, in->result));
			g->offset = d->off[in->result] - 1;
			g->size = c->types[c->types[in->type].elem].size;
			g->exported = d->link_name[in->result] && !d->link_import[in->result];
		}
	}
	if (d->npf) {
		out->printf_formats = calloc_or_fail(c, d->npf, sizeof(zm_printf_t));
		for (size_t i = 0; i < d->npf; i++) {
			zm_printf_t *f = &out->printf_formats[out->nprintf++];
			f->format = dup_or_fail(c, d->pf[i].format);
			f->args = calloc_or_fail(c, d->pf[i].nargs, sizeof(uint32_t));
			memcpy(f->args, d->pf[i].args, d->pf[i].nargs * sizeof(uint32_t));
			f->nargs = d->pf[i].nargs;
		}
	}
}
