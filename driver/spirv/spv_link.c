/* SPIR-V linking (spv_link.h).  The importing module and every module it
 * needs (its exporters, theirs, ...) are merged into one module in the order
 * of the SPIR-V logical layout: each section of the importing module, then
 * the same section of the others.  The importing module keeps its ids; the
 * others are renumbered above it.  An import's declaration is dropped and its
 * id becomes the exporter's function; types and constants that are identical
 * once renamed are declared once (spirv-val refuses duplicate non-aggregate
 * types), unless decorated.  Only the importing module's kernels stay entry
 * points; the other modules' exports become internal functions. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "spv_link.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#include "spv_reader.h"

#define VERSION_1_4 0x00010400u

enum { F_DECORATED = 1, F_BUILTIN = 2, F_DROPPED = 4, F_DEBUG_SET = 8 };

typedef struct sym {
	const char *name;
	uint32_t id;
	uint8_t import; /* else Export or LinkOnceODR */
	uint8_t odr;
	int32_t res_mod; /* an import: the exporting module, -1 while unresolved */
	uint32_t res_id;
} sym_t;

typedef struct lmod {
	const spv_link_module_t *in;
	spv_module_t m;
	int read;
	uint32_t first_fn; /* index of the first OpFunction (ninsts when none) */
	sym_t *syms;
	uint32_t nsyms;
	uint8_t *flags;   /* per id: F_* */
	uint32_t *spec;   /* per id: SpecId + 1, or 0 */
	uint32_t *map;    /* per id: the id in the linked module */
	uint32_t base;
	int32_t order;    /* position in the linked module, -1 when not needed */
} lmod_t;

/* Types and constants already declared, by their renamed words (the result
 * id left out). */
typedef struct dedup_entry {
	size_t key; /* offset in keys */
	uint32_t nkey;
	uint32_t id;
} dedup_entry_t;

typedef struct link {
	lmod_t *mods;
	uint32_t n;
	uint32_t *order; /* module indices in the linked module's order */
	uint32_t norder;
	char *err;
	size_t errlen, errused;
	int nerr, oom;
	uint32_t *out;
	size_t nout, capout;
	dedup_entry_t *tab;
	size_t captab, ntab;
	uint32_t *keys;
	size_t nkeys, capkeys;
} link_t;

/* ---- messages ----------------------------------------------------------------- */

static void add_err(link_t *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_err(link_t *L, const char *fmt, ...)
{
	L->nerr++;
	if (!L->err || L->errused + 1 >= L->errlen)
		return;
	if (L->errused) {
		L->err[L->errused++] = '\n';
		L->err[L->errused] = 0;
	}
	va_list ap;
	va_start(ap, fmt);
	const int k = vsnprintf(L->err + L->errused, L->errlen - L->errused, fmt, ap);
	va_end(ap);
	if (k > 0)
		L->errused += (size_t)k < L->errlen - L->errused ? (size_t)k : L->errlen - L->errused - 1;
}

static const char *label(const lmod_t *M)
{
	return M->in->label ? M->in->label : "a module";
}

typedef struct strbuf {
	char *p;
	size_t len, used;
} strbuf_t;

static void sb_add(strbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(strbuf_t *b, const char *fmt, ...)
{
	if (b->used + 1 >= b->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	const int k = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->used += (size_t)k < b->len - b->used ? (size_t)k : b->len - b->used - 1;
}

static const char *lit_string(const spv_inst_t *in, uint32_t at)
{
	/* The reader checked the NUL terminator. */
	return at < in->nwords ? (const char *)&in->w[at] : "";
}

static const char *name_of(const spv_module_t *m, uint32_t id)
{
	for (uint32_t i = 0; i < m->ninsts; i++)
		if (m->insts[i].opcode == SpvOpName && m->insts[i].w[1] == id)
			return lit_string(&m->insts[i], 2);
	return NULL;
}

/* A type as text for messages: "i32 (f32, <4 x i32> CrossWorkgroup*)". */
static void type_str(const spv_module_t *m, uint32_t t, strbuf_t *b, int depth)
{
	const spv_inst_t *in = spv_def(m, t);
	if (!in || depth > 8) {
		sb_add(b, "...");
		return;
	}
	const uint32_t *w = in->w;
	switch (in->opcode) {
	case SpvOpTypeVoid:
		sb_add(b, "void");
		return;
	case SpvOpTypeBool:
		sb_add(b, "bool");
		return;
	case SpvOpTypeInt:
		sb_add(b, "i%u", w[2]);
		return;
	case SpvOpTypeFloat:
		sb_add(b, "f%u", w[2]);
		return;
	case SpvOpTypeVector:
		sb_add(b, "<%u x ", w[3]);
		type_str(m, w[2], b, depth + 1);
		sb_add(b, ">");
		return;
	case SpvOpTypeArray: {
		const spv_inst_t *len = spv_def(m, w[3]);
		if (len && len->opcode == SpvOpConstant)
			sb_add(b, "[%u x ", len->w[3]);
		else
			sb_add(b, "[? x ");
		type_str(m, w[2], b, depth + 1);
		sb_add(b, "]");
		return;
	}
	case SpvOpTypeRuntimeArray:
		sb_add(b, "[");
		type_str(m, w[2], b, depth + 1);
		sb_add(b, "]");
		return;
	case SpvOpTypeStruct: {
		const char *name = name_of(m, t);
		sb_add(b, "%s%s{ ", name ? name : "", name ? " " : "");
		for (uint32_t i = 2; i < in->nwords; i++) {
			type_str(m, w[i], b, depth + 1);
			sb_add(b, i + 1 < in->nwords ? ", " : " ");
		}
		sb_add(b, "}");
		return;
	}
	case SpvOpTypePointer:
		type_str(m, w[3], b, depth + 1);
		sb_add(b, " %s*", spv_enum_name(SPV_KIND_StorageClass, w[2]));
		return;
	case SpvOpTypeFunction:
		type_str(m, w[2], b, depth + 1);
		sb_add(b, " (");
		for (uint32_t i = 3; i < in->nwords; i++) {
			type_str(m, w[i], b, depth + 1);
			if (i + 1 < in->nwords)
				sb_add(b, ", ");
		}
		sb_add(b, ")");
		return;
	default:
		sb_add(b, "%s", spv_op_name(in->opcode));
		return;
	}
}

/* ---- structural comparison of types across modules ------------------------ */

static int same_type(const spv_module_t *a, uint32_t ta, const spv_module_t *b, uint32_t tb, int depth);

static int same_const(const spv_module_t *a, uint32_t ca, const spv_module_t *b, uint32_t cb, int depth)
{
	const spv_inst_t *x = spv_def(a, ca), *y = spv_def(b, cb);
	return x && y && x->opcode == SpvOpConstant && y->opcode == SpvOpConstant && x->nwords == y->nwords &&
	       memcmp(x->w + 3, y->w + 3, (x->nwords - 3u) * sizeof(uint32_t)) == 0 &&
	       same_type(a, x->type, b, y->type, depth + 1);
}

static int same_type(const spv_module_t *a, uint32_t ta, const spv_module_t *b, uint32_t tb, int depth)
{
	const spv_inst_t *x = spv_def(a, ta), *y = spv_def(b, tb);
	if (!x || !y || depth > 64 || x->opcode != y->opcode || x->nwords != y->nwords)
		return 0;
	switch (x->opcode) {
	case SpvOpTypeVector:
		return x->w[3] == y->w[3] && same_type(a, x->w[2], b, y->w[2], depth + 1);
	case SpvOpTypeArray:
		return same_type(a, x->w[2], b, y->w[2], depth + 1) && same_const(a, x->w[3], b, y->w[3], depth);
	case SpvOpTypeRuntimeArray:
		return same_type(a, x->w[2], b, y->w[2], depth + 1);
	case SpvOpTypePointer:
		return x->w[2] == y->w[2] && same_type(a, x->w[3], b, y->w[3], depth + 1);
	case SpvOpTypeStruct:
	case SpvOpTypeFunction:
		for (uint32_t i = 2; i < x->nwords; i++)
			if (!same_type(a, x->w[i], b, y->w[i], depth + 1))
				return 0;
		return 1;
	default: /* literal operands only (integers, floats, opaque types, ...) */
		return memcmp(x->w + 2, y->w + 2, (x->nwords - 2u) * sizeof(uint32_t)) == 0;
	}
}

/* ---- reading a module ------------------------------------------------------ */

static void free_mod(lmod_t *M)
{
	if (M->read)
		spv_free(&M->m);
	free(M->syms);
	free(M->flags);
	free(M->spec);
	free(M->map);
	memset(M, 0, sizeof(*M));
}

/* Read and validate the module, find its decorations and linkage. */
static int read_mod(lmod_t *M, const void *spirv, size_t size, char *err, size_t errlen)
{
	if (spv_read(spirv, size, &M->m, err, errlen))
		return strstr(err ? err : "", "out of memory") ? SPV_NO_MEMORY : SPV_BUILD_FAILED;
	M->read = 1;
	const spv_module_t *m = &M->m;
	M->flags = calloc(m->bound, 1);
	M->spec = calloc(m->bound, sizeof(uint32_t));
	M->syms = calloc(m->ninsts + 1, sizeof(sym_t));
	if (!M->flags || !M->spec || !M->syms) {
		snprintf(err, errlen, "out of memory");
		return SPV_NO_MEMORY;
	}
	M->first_fn = m->ninsts;
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode == SpvOpFunction) {
			M->first_fn = i;
			break;
		}
		switch (in->opcode) {
		case SpvOpDecorate:
			M->flags[in->w[1]] |= F_DECORATED;
			if (in->w[2] == SpvDecorationBuiltIn)
				M->flags[in->w[1]] |= F_BUILTIN;
			else if (in->w[2] == SpvDecorationSpecId && in->nwords > 3)
				M->spec[in->w[1]] = in->w[3] + 1;
			break;
		case SpvOpMemberDecorate:
		case SpvOpDecorateId:
		case SpvOpDecorateString:
		case SpvOpMemberDecorateString:
			M->flags[in->w[1]] |= F_DECORATED;
			break;
		case SpvOpGroupDecorate:
			for (uint32_t t = 2; t < in->nwords; t++)
				M->flags[in->w[t]] |= F_DECORATED;
			break;
		case SpvOpGroupMemberDecorate:
			for (uint32_t t = 2; t < in->nwords; t += 2)
				M->flags[in->w[t]] |= F_DECORATED;
			break;
		case SpvOpExtInstImport:
			/* Debug information mixes literals and ids that only its
			 * grammar tells apart, which the reader does not have: the
			 * linked module goes without it (OpLine stays). */
			if (strncmp(lit_string(in, 2), "OpenCL.DebugInfo", 16) == 0 ||
			    strncmp(lit_string(in, 2), "SPIRV.debug", 11) == 0)
				M->flags[in->result] |= F_DEBUG_SET | F_DROPPED;
			break;
		default:
			break;
		}
	}
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode == SpvOpExtInst && in->nwords > 3 && in->w[3] < m->bound &&
		    (M->flags[in->w[3]] & F_DEBUG_SET))
			M->flags[in->result] |= F_DROPPED;
	}
	for (uint32_t i = 0; i < M->first_fn; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode != SpvOpDecorate || in->w[2] != SpvDecorationLinkageAttributes)
			continue;
		const char *name = lit_string(in, 3);
		const uint32_t at = 3 + (uint32_t)strlen(name) / 4 + 1;
		const uint32_t type = at < in->nwords ? in->w[at] : SpvLinkageTypeExport;
		/* llvm-spirv declares the built-in variables as imports: they are
		 * the device's, not another module's. */
		if (type == SpvLinkageTypeImport && (M->flags[in->w[1]] & F_BUILTIN))
			continue;
		sym_t *s = &M->syms[M->nsyms++];
		s->name = name;
		s->id = in->w[1];
		s->import = type == SpvLinkageTypeImport;
		s->odr = type == SpvLinkageTypeLinkOnceODR;
		s->res_mod = -1;
	}
	return SPV_OK;
}

/* A specialization constant takes its value from the options, as the front
 * end's own specialization does (w: the instruction's words in the copy). */
static void freeze_spec(const lmod_t *M, const spv_compile_options_t *o, const spv_inst_t *in, uint32_t *w)
{
	const uint32_t sid = M->spec[in->result];
	if (!sid || !o || !o->num_spec || !o->spec_ids || !o->spec_values)
		return;
	const void *value = NULL;
	for (uint32_t i = 0; i < o->num_spec && !value; i++)
		if (o->spec_ids[i] == sid - 1 && o->spec_values[i])
			value = o->spec_values[i];
	if (!value)
		return;
	if (in->opcode == SpvOpSpecConstantTrue || in->opcode == SpvOpSpecConstantFalse) {
		const uint8_t b = *(const uint8_t *)value;
		w[0] = (w[0] & 0xffff0000u) | (b ? SpvOpSpecConstantTrue : SpvOpSpecConstantFalse);
		return;
	}
	if (in->opcode != SpvOpSpecConstant)
		return;
	const spv_inst_t *t = spv_def(&M->m, in->type);
	if (!t || (t->opcode != SpvOpTypeInt && t->opcode != SpvOpTypeFloat))
		return;
	const uint32_t width = t->w[2];
	uint64_t v = 0;
	memcpy(&v, value, width / 8 < 8 ? width / 8 : 8);
	if (t->opcode == SpvOpTypeInt && t->w[3] && width < 32) /* signed: the literal is sign-extended */
		v = (uint32_t)((int32_t)((uint32_t)v << (32 - width)) >> (32 - width));
	w[3] = (uint32_t)v;
	if (in->nwords > 4)
		w[4] = (uint32_t)(v >> 32);
}

/* The module with its specialization constants fixed: each linked module
 * has its own values, and several may use the same SpecId. */
static int specialize(const lmod_t *M, const spv_compile_options_t *opt, spv_linkage_t *out)
{
	const spv_module_t *m = &M->m;
	out->words = malloc(m->nwords * sizeof(uint32_t));
	if (!out->words)
		return SPV_NO_MEMORY;
	memcpy(out->words, m->words, 5 * sizeof(uint32_t));
	size_t n = 5;
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode == SpvOpDecorate && in->w[2] == SpvDecorationSpecId)
			continue;
		memcpy(out->words + n, in->w, in->nwords * sizeof(uint32_t));
		if (in->result && i < M->first_fn && M->spec[in->result])
			freeze_spec(M, opt, in, out->words + n);
		n += in->nwords;
	}
	out->nwords = n;
	return SPV_OK;
}

int spv_linkage(const void *spirv, size_t size, const spv_compile_options_t *opt, spv_linkage_t *out, char *err,
		size_t errlen)
{
	memset(out, 0, sizeof(*out));
	lmod_t M = {0};
	int rc = read_mod(&M, spirv, size, err, errlen);
	if (rc) {
		free_mod(&M);
		return rc;
	}
	out->kernels = calloc(M.m.ninsts + 1, sizeof(char *));
	rc = out->kernels ? SPV_OK : SPV_NO_MEMORY;
	for (uint32_t i = 0; i < M.nsyms; i++) {
		out->nimports += M.syms[i].import;
		out->nexports += !M.syms[i].import;
	}
	for (uint32_t i = 0; i < M.first_fn && !rc; i++) {
		const spv_inst_t *in = &M.m.insts[i];
		if (in->opcode == SpvOpEntryPoint && !(out->kernels[out->nkernels++] = strdup(lit_string(in, 3))))
			rc = SPV_NO_MEMORY;
	}
	if (!rc && (out->nimports || out->nexports))
		rc = specialize(&M, opt, out);
	free_mod(&M);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		spv_linkage_free(out);
	}
	return rc;
}

void spv_linkage_free(spv_linkage_t *l)
{
	for (uint32_t i = 0; l->kernels && i < l->nkernels; i++)
		free(l->kernels[i]);
	free(l->kernels);
	free(l->words);
	memset(l, 0, sizeof(*l));
}

/* ---- resolving imports ------------------------------------------------------- */

static void include_mod(link_t *L, uint32_t j)
{
	lmod_t *M = &L->mods[j];
	if (M->order >= 0)
		return;
	M->order = (int32_t)L->norder;
	L->order[L->norder++] = j;
}

/* Mark a function declaration (the import) and its parameters dropped. */
static void drop_function(lmod_t *M, uint32_t fn)
{
	const spv_module_t *m = &M->m;
	for (uint32_t i = M->first_fn; i < m->ninsts; i++) {
		if (m->insts[i].opcode != SpvOpFunction || m->insts[i].result != fn)
			continue;
		for (uint32_t j = i; j < m->ninsts && m->insts[j].opcode != SpvOpFunctionEnd; j++)
			if (m->insts[j].result)
				M->flags[m->insts[j].result] |= F_DROPPED;
		return;
	}
}

static int has_body(const lmod_t *M, uint32_t fn)
{
	const spv_module_t *m = &M->m;
	for (uint32_t i = M->first_fn; i < m->ninsts; i++) {
		if (m->insts[i].opcode != SpvOpFunction || m->insts[i].result != fn)
			continue;
		for (uint32_t j = i + 1; j < m->ninsts && m->insts[j].opcode != SpvOpFunctionEnd; j++)
			if (m->insts[j].opcode == SpvOpLabel)
				return 1;
		return 0;
	}
	return 0;
}

/* Check that import s of module k and export e of module j agree. */
static void check_pair(link_t *L, uint32_t k, const sym_t *s, uint32_t j, const sym_t *e)
{
	const lmod_t *A = &L->mods[k], *B = &L->mods[j];
	const spv_inst_t *x = spv_def(&A->m, s->id), *y = spv_def(&B->m, e->id);
	const int xf = x && x->opcode == SpvOpFunction, yf = y && y->opcode == SpvOpFunction;
	if (!xf) {
		add_err(L, "%s: import \"%s\" is not a function; importing variables is not supported (program-scope "
			"variables are not shared between modules)", label(A), s->name);
		return;
	}
	if (!yf) {
		add_err(L, "%s: import \"%s\" is a function but %s exports a variable of that name", label(A), s->name,
			label(B));
		return;
	}
	if (!has_body(B, e->id)) {
		add_err(L, "%s: export \"%s\" of %s is a declaration, not a definition", label(A), s->name, label(B));
		return;
	}
	if (!same_type(&A->m, x->w[4], &B->m, y->w[4], 0)) {
		char ta[256], tb[256];
		strbuf_t ba = {ta, sizeof(ta), 0}, bb = {tb, sizeof(tb), 0};
		ta[0] = tb[0] = 0;
		type_str(&A->m, x->w[4], &ba, 0);
		type_str(&B->m, y->w[4], &bb, 0);
		add_err(L, "%s: function \"%s\" is imported as %s but %s exports it as %s", label(A), s->name, ta,
			label(B), tb);
	}
}

/* Resolve every import of every module needed, breadth first from mods[0]. */
static void resolve(link_t *L)
{
	include_mod(L, 0);
	for (uint32_t q = 0; q < L->norder; q++) {
		const uint32_t k = L->order[q];
		lmod_t *A = &L->mods[k];
		char unresolved[512];
		strbuf_t ub = {unresolved, sizeof(unresolved), 0};
		unresolved[0] = 0;
		uint32_t nunres = 0;
		for (uint32_t i = 0; i < A->nsyms; i++) {
			sym_t *s = &A->syms[i];
			if (!s->import)
				continue;
			int32_t found = -1;
			int ambiguous = 0;
			const sym_t *fe = NULL;
			for (uint32_t j = 0; j < L->n; j++) {
				if (j == k)
					continue;
				const lmod_t *B = &L->mods[j];
				for (uint32_t e = 0; e < B->nsyms; e++) {
					const sym_t *x = &B->syms[e];
					if (x->import || strcmp(x->name, s->name) != 0)
						continue;
					if (found < 0) {
						found = (int32_t)j;
						fe = x;
					} else if (!(fe->odr && x->odr) && (uint32_t)found != j) {
						add_err(L, "%s: import \"%s\" is exported by both %s and %s", label(A),
							s->name, label(&L->mods[found]), label(B));
						ambiguous = 1;
					}
				}
			}
			if (ambiguous)
				continue;
			if (found < 0) {
				sb_add(&ub, "%s\"%s\"", nunres ? ", " : "", s->name);
				nunres++;
				continue;
			}
			const int before = L->nerr;
			check_pair(L, k, s, (uint32_t)found, fe);
			if (L->nerr != before)
				continue;
			s->res_mod = found;
			s->res_id = fe->id;
			drop_function(A, s->id);
			include_mod(L, (uint32_t)found);
		}
		if (nunres)
			add_err(L, "%s: unresolved import%s %s (no module of the link exports %s)", label(A),
				nunres > 1 ? "s" : "", unresolved, nunres > 1 ? "them" : "it");
	}
}

/* ---- the id maps and the merging of identical types and constants ---------- */

static int dedupable(uint32_t op)
{
	return (op >= SpvOpTypeVoid && op <= SpvOpTypePipe) ||
	       (op >= SpvOpConstantTrue && op <= SpvOpConstantNull) || op == SpvOpExtInstImport;
}

struct rename {
	const lmod_t *M;
	uint32_t *w;
	uint32_t skip; /* word index not to rename (the result id of a dedup key), 0: none */
};

static void rename_operand(void *ctx, unsigned kind, uint32_t index)
{
	struct rename *r = ctx;
	if (index == r->skip)
		return;
	if (kind == SPV_KIND_IdRef || kind == SPV_KIND_IdResult || kind == SPV_KIND_IdResultType ||
	    kind == SPV_KIND_IdMemorySemantics || kind == SPV_KIND_IdScope) {
		const uint32_t id = r->w[index];
		if (id < r->M->m.bound)
			r->w[index] = r->M->map[id];
	}
}

static uint64_t hash_words(const uint32_t *w, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

/* The id of an identical declaration seen before, or 0 after recording this
 * one (key: the renamed words without the result id). */
static uint32_t dedup(link_t *L, const uint32_t *key, uint32_t nkey, uint32_t id)
{
	if (L->ntab * 2 >= L->captab) {
		const size_t cap = L->captab ? L->captab * 2 : 1024;
		dedup_entry_t *t = calloc(cap, sizeof(*t));
		if (!t) {
			L->oom = 1;
			return 0;
		}
		for (size_t i = 0; i < L->captab; i++) {
			if (!L->tab[i].id)
				continue;
			size_t h = hash_words(L->keys + L->tab[i].key, L->tab[i].nkey) & (cap - 1);
			while (t[h].id)
				h = (h + 1) & (cap - 1);
			t[h] = L->tab[i];
		}
		free(L->tab);
		L->tab = t;
		L->captab = cap;
	}
	size_t h = hash_words(key, nkey) & (L->captab - 1);
	for (; L->tab[h].id; h = (h + 1) & (L->captab - 1))
		if (L->tab[h].nkey == nkey && memcmp(L->keys + L->tab[h].key, key, nkey * sizeof(uint32_t)) == 0)
			return L->tab[h].id;
	if (L->nkeys + nkey > L->capkeys) {
		size_t cap = L->capkeys ? L->capkeys * 2 : 4096;
		while (cap < L->nkeys + nkey)
			cap *= 2;
		uint32_t *k = realloc(L->keys, cap * sizeof(uint32_t));
		if (!k) {
			L->oom = 1;
			return 0;
		}
		L->keys = k;
		L->capkeys = cap;
	}
	memcpy(L->keys + L->nkeys, key, nkey * sizeof(uint32_t));
	L->tab[h] = (dedup_entry_t){L->nkeys, nkey, id};
	L->nkeys += nkey;
	L->ntab++;
	return 0;
}

static void build_maps(link_t *L)
{
	uint32_t base = 0;
	for (uint32_t q = 0; q < L->norder; q++) {
		lmod_t *M = &L->mods[L->order[q]];
		M->base = base;
		base += M->m.bound;
	}
	for (uint32_t q = 0; q < L->norder && !L->oom; q++) {
		lmod_t *M = &L->mods[L->order[q]];
		M->map = malloc(M->m.bound * sizeof(uint32_t));
		if (!M->map) {
			L->oom = 1;
			return;
		}
		M->map[0] = 0;
		for (uint32_t id = 1; id < M->m.bound; id++)
			M->map[id] = M->base + id;
		for (uint32_t i = 0; i < M->nsyms; i++)
			if (M->syms[i].import && M->syms[i].res_mod >= 0)
				M->map[M->syms[i].id] = L->mods[M->syms[i].res_mod].base + M->syms[i].res_id;
	}
	/* In order: a declaration only names ids declared before it, whose
	 * final ids are known by then. */
	uint32_t key[1024];
	for (uint32_t q = 0; q < L->norder && !L->oom; q++) {
		lmod_t *M = &L->mods[L->order[q]];
		for (uint32_t i = 0; i < M->first_fn && !L->oom; i++) {
			const spv_inst_t *in = &M->m.insts[i];
			if (!in->result || !dedupable(in->opcode) || (M->flags[in->result] & (F_DECORATED | F_DROPPED)) ||
			    in->nwords > 1024)
				continue;
			memcpy(key, in->w, in->nwords * sizeof(uint32_t));
			const uint32_t at = in->type ? 2 : 1; /* the result id's word */
			struct rename r = {M, key, at};
			spv_walk(&M->m, in, rename_operand, &r);
			key[at] = 0;
			const uint32_t prev = dedup(L, key, in->nwords, M->map[in->result]);
			if (prev) {
				M->map[in->result] = prev;
				M->flags[in->result] |= F_DROPPED;
			}
		}
	}
}

/* ---- writing the linked module ------------------------------------------------- */

static uint32_t *reserve(link_t *L, size_t n)
{
	if (L->nout + n > L->capout) {
		size_t cap = L->capout ? L->capout * 2 : 4096;
		while (cap < L->nout + n)
			cap *= 2;
		uint32_t *o = realloc(L->out, cap * sizeof(uint32_t));
		if (!o) {
			L->oom = 1;
			return NULL;
		}
		L->out = o;
		L->capout = cap;
	}
	uint32_t *w = L->out + L->nout;
	L->nout += n;
	return w;
}

/* Append the instruction renamed; returns its words in the output (valid
 * until the next append) or NULL. */
static uint32_t *emit(link_t *L, const lmod_t *M, const spv_inst_t *in)
{
	uint32_t *w = reserve(L, in->nwords);
	if (!w)
		return NULL;
	memcpy(w, in->w, in->nwords * sizeof(uint32_t));
	struct rename r = {M, w, 0};
	spv_walk(&M->m, in, rename_operand, &r);
	return w;
}

enum section {
	S_CAP, S_EXT, S_IMPORT, S_MODEL, S_ENTRY, S_MODE, S_DEBUG_SOURCE, S_DEBUG_NAME, S_DEBUG_PROCESSED,
	S_ANNOTATION, S_GLOBAL, S_SKIP, S_COUNT
};

static enum section section_of(uint32_t op)
{
	switch (op) {
	case SpvOpNop:
		return S_SKIP;
	case SpvOpCapability:
		return S_CAP;
	case SpvOpExtension:
		return S_EXT;
	case SpvOpExtInstImport:
		return S_IMPORT;
	case SpvOpMemoryModel:
		return S_MODEL;
	case SpvOpEntryPoint:
		return S_ENTRY;
	case SpvOpExecutionMode:
	case SpvOpExecutionModeId:
		return S_MODE;
	case SpvOpString:
	case SpvOpSourceExtension:
	case SpvOpSource:
	case SpvOpSourceContinued:
		return S_DEBUG_SOURCE;
	case SpvOpName:
	case SpvOpMemberName:
		return S_DEBUG_NAME;
	case SpvOpModuleProcessed:
		return S_DEBUG_PROCESSED;
	case SpvOpDecorate:
	case SpvOpMemberDecorate:
	case SpvOpDecorationGroup:
	case SpvOpGroupDecorate:
	case SpvOpGroupMemberDecorate:
	case SpvOpDecorateId:
	case SpvOpDecorateString:
	case SpvOpMemberDecorateString:
		return S_ANNOTATION;
	default:
		return S_GLOBAL;
	}
}

static void emit_annotation(link_t *L, const lmod_t *M, const spv_inst_t *in)
{
	const uint32_t *w = in->w;
	if (in->opcode == SpvOpGroupDecorate || in->opcode == SpvOpGroupMemberDecorate) {
		const uint32_t step = in->opcode == SpvOpGroupDecorate ? 1 : 2;
		uint32_t keep = 0;
		for (uint32_t t = 2; t < in->nwords; t += step)
			keep += !(M->flags[w[t]] & F_DROPPED);
		if (!keep)
			return;
		uint32_t *o = reserve(L, 2 + keep * step);
		if (!o)
			return;
		o[0] = (2 + keep * step) << 16 | in->opcode;
		o[1] = M->map[w[1]];
		uint32_t at = 2;
		for (uint32_t t = 2; t < in->nwords; t += step) {
			if (M->flags[w[t]] & F_DROPPED)
				continue;
			o[at++] = M->map[w[t]];
			if (step == 2)
				o[at++] = w[t + 1];
		}
		return;
	}
	if (in->opcode != SpvOpDecorationGroup && (M->flags[w[1]] & F_DROPPED))
		return;
	if (in->opcode == SpvOpDecorate) {
		/* Only the importing module exports: the others' functions are
		 * private copies now.  (Resolved imports were dropped above.) */
		if (w[2] == SpvDecorationLinkageAttributes && M->order > 0) {
			const char *name = lit_string(in, 3);
			const uint32_t at = 3 + (uint32_t)strlen(name) / 4 + 1;
			if (at < in->nwords && in->w[at] != SpvLinkageTypeImport)
				return;
		}
	}
	emit(L, M, in);
}

/* The importing module's entry points.  Their interface must list the global
 * variables their code uses: from 1.4 on all of them, before only the Input
 * and Output ones; the other modules' code now belongs to them. */
static void emit_entry(link_t *L, const lmod_t *M0, const spv_inst_t *in, uint32_t version)
{
	uint32_t *extra = NULL;
	uint32_t nextra = 0;
	size_t cap = 0;
	for (uint32_t q = 0; q < L->norder; q++) {
		const lmod_t *M = &L->mods[L->order[q]];
		for (uint32_t i = 0; i < M->first_fn; i++) {
			const spv_inst_t *v = &M->m.insts[i];
			if (v->opcode != SpvOpVariable || v->w[3] == SpvStorageClassFunction ||
			    (M->flags[v->result] & F_DROPPED))
				continue;
			const int io = v->w[3] == SpvStorageClassInput || v->w[3] == SpvStorageClassOutput;
			if (!(version >= VERSION_1_4 || (io && q > 0)))
				continue;
			const uint32_t id = M->map[v->result];
			/* Already listed? */
			const char *name = lit_string(in, 3);
			int listed = 0;
			for (uint32_t t = 3 + (uint32_t)strlen(name) / 4 + 1; t < in->nwords && !listed; t++)
				listed = M0->map[in->w[t]] == id;
			if (listed)
				continue;
			if (nextra == cap) {
				cap = cap ? cap * 2 : 16;
				uint32_t *e = realloc(extra, cap * sizeof(uint32_t));
				if (!e) {
					free(extra);
					L->oom = 1;
					return;
				}
				extra = e;
			}
			extra[nextra++] = id;
		}
	}
	if (in->nwords + nextra > 0xffffu) {
		add_err(L, "%s: entry point \"%s\" would list more than 65535 interface variables", label(M0),
			lit_string(in, 3));
		free(extra);
		return;
	}
	uint32_t *w = emit(L, M0, in);
	if (w && nextra) {
		w[0] = (in->nwords + nextra) << 16 | in->opcode;
		uint32_t *x = reserve(L, nextra);
		if (x)
			memcpy(x, extra, nextra * sizeof(uint32_t));
	}
	free(extra);
}

static void emit_functions(link_t *L, const lmod_t *M, int bodies)
{
	const spv_module_t *m = &M->m;
	for (uint32_t i = M->first_fn; i < m->ninsts;) {
		uint32_t end = i;
		int body = 0;
		while (end < m->ninsts && m->insts[end].opcode != SpvOpFunctionEnd)
			body |= m->insts[end++].opcode == SpvOpLabel;
		if (body == bodies && !(M->flags[m->insts[i].result] & F_DROPPED))
			for (uint32_t j = i; j <= end && j < m->ninsts; j++)
				if (m->insts[j].opcode != SpvOpNop &&
				    !(m->insts[j].result && (M->flags[m->insts[j].result] & F_DROPPED)))
					emit(L, M, &m->insts[j]);
		i = end + 1;
	}
}

/* The layout check the merge relies on: after the first OpFunction, only
 * functions. */
static void check_functions(link_t *L, const lmod_t *M)
{
	const spv_module_t *m = &M->m;
	int in_fn = 0;
	for (uint32_t i = M->first_fn; i < m->ninsts; i++) {
		const uint32_t op = m->insts[i].opcode;
		if (op == SpvOpFunction && in_fn) {
			add_err(L, "%s: word %u: OpFunction inside a function", label(M), m->insts[i].off);
			return;
		}
		if (!in_fn && op != SpvOpFunction && op != SpvOpNop && op != SpvOpLine && op != SpvOpNoLine) {
			add_err(L, "%s: word %u: %s between functions", label(M), m->insts[i].off, spv_op_name(op));
			return;
		}
		in_fn = op == SpvOpFunctionEnd ? 0 : in_fn || op == SpvOpFunction;
	}
	if (in_fn)
		add_err(L, "%s: the last function has no OpFunctionEnd", label(M));
}

static void write_module(link_t *L)
{
	const lmod_t *M0 = &L->mods[0];
	uint32_t version = 0, bound = 0;
	for (uint32_t q = 0; q < L->norder; q++) {
		const lmod_t *M = &L->mods[L->order[q]];
		if (M->m.version > version)
			version = M->m.version;
		bound = M->base + M->m.bound;
		check_functions(L, M);
		if (q == 0)
			continue;
		/* One memory model. */
		const spv_inst_t *a = NULL, *b = NULL;
		for (uint32_t i = 0; i < M0->first_fn && !a; i++)
			if (M0->m.insts[i].opcode == SpvOpMemoryModel)
				a = &M0->m.insts[i];
		for (uint32_t i = 0; i < M->first_fn && !b; i++)
			if (M->m.insts[i].opcode == SpvOpMemoryModel)
				b = &M->m.insts[i];
		if (a && b && (a->w[1] != b->w[1] || a->w[2] != b->w[2]))
			add_err(L, "%s has memory model %s %s, %s has %s %s", label(M0),
				spv_enum_name(SPV_KIND_AddressingModel, a->w[1]), spv_enum_name(SPV_KIND_MemoryModel, a->w[2]),
				label(M), spv_enum_name(SPV_KIND_AddressingModel, b->w[1]),
				spv_enum_name(SPV_KIND_MemoryModel, b->w[2]));
	}
	if (bound > SPV_MAX_BOUND)
		add_err(L, "the linked module would have %u ids (at most %u)", bound, SPV_MAX_BOUND);
	if (L->nerr)
		return;
	uint32_t *h = reserve(L, 5);
	if (!h)
		return;
	h[0] = SPV_MAGIC;
	h[1] = version;
	h[2] = M0->m.generator;
	h[3] = bound;
	h[4] = 0;
	for (enum section s = S_CAP; s < S_SKIP && !L->oom; s++) {
		for (uint32_t q = 0; q < L->norder && !L->oom; q++) {
			const lmod_t *M = &L->mods[L->order[q]];
			if (q > 0 && (s == S_MODEL || s == S_ENTRY || s == S_MODE))
				break;
			for (uint32_t i = 0; i < M->first_fn && !L->oom; i++) {
				const spv_inst_t *in = &M->m.insts[i];
				if (section_of(in->opcode) != s)
					continue;
				if (in->result && (M->flags[in->result] & F_DROPPED))
					continue;
				/* A pointer type merged into an identical one declared
				 * before needs no forward declaration any more. */
				if (in->opcode == SpvOpTypeForwardPointer && (M->flags[in->w[1]] & F_DROPPED))
					continue;
				if (s == S_CAP || s == S_EXT) {
					/* once each: by value, by name */
					int seen = 0;
					for (uint32_t p = 0; p <= q && !seen; p++) {
						const lmod_t *P = &L->mods[L->order[p]];
						for (uint32_t j = 0; j < (p == q ? i : P->first_fn) && !seen; j++) {
							const spv_inst_t *x = &P->m.insts[j];
							seen = x->opcode == in->opcode && x->nwords == in->nwords &&
							       memcmp(x->w + 1, in->w + 1, (in->nwords - 1u) * 4) == 0;
						}
					}
					if (!seen)
						emit(L, M, in);
				} else if (s == S_ENTRY) {
					emit_entry(L, M, in, version);
				} else if (s == S_DEBUG_NAME) {
					if (!(M->flags[in->w[1]] & F_DROPPED))
						emit(L, M, in);
				} else if (s == S_ANNOTATION) {
					emit_annotation(L, M, in);
				} else {
					emit(L, M, in);
				}
			}
		}
	}
	for (int bodies = 0; bodies < 2; bodies++)
		for (uint32_t q = 0; q < L->norder && !L->oom; q++)
			emit_functions(L, &L->mods[L->order[q]], bodies);
}

int spv_link(const spv_link_module_t *mods, uint32_t n, uint32_t **words, size_t *nwords, char *err, size_t errlen)
{
	*words = NULL;
	*nwords = 0;
	if (err && errlen)
		err[0] = 0;
	link_t L = {.n = n, .err = err, .errlen = errlen};
	L.mods = calloc(n ? n : 1, sizeof(lmod_t));
	L.order = calloc(n ? n : 1, sizeof(uint32_t));
	int rc = SPV_OK;
	if (!L.mods || !L.order || !n) {
		rc = n ? SPV_NO_MEMORY : SPV_BUILD_FAILED;
		snprintf(err, errlen, "%s", n ? "out of memory" : "no module to link");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		char why[384];
		L.mods[i].in = &mods[i];
		L.mods[i].order = -1;
		rc = read_mod(&L.mods[i], mods[i].spirv, mods[i].size, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s: %s", mods[i].label ? mods[i].label : "a module", why);
			goto out;
		}
	}
	resolve(&L);
	if (!L.nerr && !L.oom)
		build_maps(&L);
	if (!L.nerr && !L.oom)
		write_module(&L);
	if (L.oom) {
		snprintf(err, errlen, "out of memory");
		rc = SPV_NO_MEMORY;
		goto out;
	}
	if (L.nerr) {
		rc = SPV_BUILD_FAILED;
		goto out;
	}
	/* What the front end reads next must be well formed: check it now so
	 * that a merging mistake is reported as such. */
	spv_module_t check;
	char why[384];
	if (spv_read(L.out, L.nout * sizeof(uint32_t), &check, why, sizeof(why))) {
		snprintf(err, errlen, "internal error: the linked module is malformed: %s", why);
		rc = strstr(why, "out of memory") ? SPV_NO_MEMORY : SPV_BUILD_FAILED;
		goto out;
	}
	spv_free(&check);
	*words = L.out;
	*nwords = L.nout;
	L.out = NULL;
out:
	for (uint32_t i = 0; L.mods && i < n; i++)
		free_mod(&L.mods[i]);
	free(L.mods);
	free(L.order);
	free(L.out);
	free(L.tab);
	free(L.keys);
	return rc;
}
