/* SPIR-V reader and validator (spv_reader.h). */
#include "spv_reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_EXT_INST_IMPORT 11u
#define OP_TYPE_INT 21u
#define OP_TYPE_FLOAT 22u
#define OP_SWITCH 251u

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

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

const char *spv_op_name(uint32_t opcode)
{
	const spv_inst_info_t *i = spv_inst_info(opcode);
	return i ? i->name : "?";
}

const char *spv_enum_name(unsigned kind, uint32_t value)
{
	const spv_enumerant_t *e = spv_enumerant(kind, value);
	return e ? e->name : "?";
}

/* ---- operand walking ---------------------------------------------------------- */

#define MAX_PENDING 96

struct pending {
	uint16_t kind;
	uint8_t quant;
	const char *name;
};

/* What the walk needs to know about ids defined before the instruction. */
struct walk_env {
	uint32_t bound;
	uint32_t (*width)(const void *c, uint32_t id); /* bits of an OpTypeInt/OpTypeFloat, else 0 */
	uint32_t (*type)(const void *c, uint32_t id);  /* result type of an id */
	int (*ocl)(const void *c, uint32_t id);        /* an OpenCL.std import */
	const void *c;
};

struct walker {
	const struct walk_env *env;
	const uint32_t *w;
	uint32_t n;   /* words of the instruction */
	uint32_t off; /* its word offset in the module */
	const char *opname;
	uint32_t opcode;
	uint32_t pos; /* next operand word */
	struct pending q[MAX_PENDING];
	uint32_t nq, iq;
	spv_operand_fn fn;
	void *ctx;
	char *err;
	size_t errlen;
	int check; /* validate ids (the reader); spv_walk trusts the module */
	uint32_t *defined; /* check mode: per id, 1 when defined so far */
};

static int insert(struct walker *wk, const struct pending *p, uint32_t n)
{
	/* The operands consumed so far are not needed any more: an operand
	 * repeated without limit (OpGroupDecorate's targets, an OpEntryPoint's
	 * interface, OpConstantComposite's constituents) takes one entry. */
	memmove(&wk->q[0], &wk->q[wk->iq], (wk->nq - wk->iq) * sizeof(wk->q[0]));
	wk->nq -= wk->iq;
	wk->iq = 0;
	if (wk->nq + n > MAX_PENDING)
		return fail(wk->err, wk->errlen, "word %u: %s: too many operands to check", wk->off, wk->opname);
	memmove(&wk->q[wk->iq + n], &wk->q[wk->iq], (wk->nq - wk->iq) * sizeof(wk->q[0]));
	memcpy(&wk->q[wk->iq], p, n * sizeof(*p));
	wk->nq += n;
	return 0;
}

static int insert_kinds(struct walker *wk, const uint16_t *kinds, uint32_t n)
{
	struct pending p[16];
	if (n > 16)
		return fail(wk->err, wk->errlen, "word %u: %s: too many operands to check", wk->off, wk->opname);
	for (uint32_t i = 0; i < n; i++)
		p[i] = (struct pending){kinds[i], SPV_Q_ONE, NULL};
	return insert(wk, p, n);
}

static int insert_info(struct walker *wk, const spv_inst_info_t *info, uint32_t skip)
{
	struct pending p[MAX_PENDING];
	uint32_t n = 0;
	for (uint32_t i = skip; i < info->nopnds && n < MAX_PENDING; i++)
		p[n++] = (struct pending){info->opnds[i].kind, info->opnds[i].quant, info->opnds[i].name};
	return insert(wk, p, n);
}

static const char *opnd_name(const struct pending *p)
{
	return p->name ? p->name : spv_kinds[p->kind].name;
}

static uint32_t width_words(const struct walker *wk, uint32_t type_id)
{
	const uint32_t bits = type_id < wk->env->bound ? wk->env->width(wk->env->c, type_id) : 0;
	return bits ? (bits + 31) / 32 : 0;
}

/* Consume one operand of the given kind at wk->pos. */
static int consume(struct walker *wk, const struct pending *p)
{
	const uint32_t at = wk->pos, word = wk->off + at;
	const uint32_t left = wk->n - at;
	const spv_kind_info_t *k = &spv_kinds[p->kind];
	if (left == 0)
		return fail(wk->err, wk->errlen, "word %u: %s: missing operand '%s' (the instruction has %u words)",
			    wk->off, wk->opname, opnd_name(p), wk->n);
	const uint32_t v = wk->w[at];
	switch (k->category) {
	case SPV_CAT_ID:
		if (wk->check) {
			if (v == 0 || v >= wk->env->bound)
				return fail(wk->err, wk->errlen, "word %u: %s: id %u out of range (bound %u)", word,
					    wk->opname, v, wk->env->bound);
			if (p->kind == SPV_KIND_IdResult) {
				if (wk->defined[v])
					return fail(wk->err, wk->errlen, "word %u: %s: id %%%u defined twice", word,
						    wk->opname, v);
			}
		}
		wk->pos++;
		if (wk->fn)
			wk->fn(wk->ctx, p->kind, at);
		return 0;
	case SPV_CAT_LITERAL:
		if (p->kind == SPV_KIND_LiteralString) {
			uint32_t i = at;
			for (; i < wk->n; i++) {
				const uint32_t x = wk->w[i];
				if (!(x & 0xffu) || !(x & 0xff00u) || !(x & 0xff0000u) || !(x & 0xff000000u))
					break;
			}
			if (i == wk->n)
				return fail(wk->err, wk->errlen, "word %u: %s: string operand '%s' is not NUL-terminated",
					    word, wk->opname, opnd_name(p));
			wk->pos = i + 1;
		} else if (p->kind == SPV_KIND_LiteralContextDependentNumber) {
			/* OpConstant / OpSpecConstant: as wide as the result type. */
			const uint32_t type = wk->w[1];
			const uint32_t n = width_words(wk, type);
			if (!n)
				return fail(wk->err, wk->errlen, "word %u: %s: result type %%%u is not a numeric type",
					    wk->off + 1, wk->opname, type);
			if (left < n)
				return fail(wk->err, wk->errlen, "word %u: %s: the %u-bit literal needs %u words, %u left",
					    word, wk->opname, wk->env->width(wk->env->c, type), n, left);
			wk->pos += n;
		} else if (p->kind == SPV_KIND_LiteralExtInstInteger) {
			wk->pos++;
			const uint32_t set = wk->w[3];
			if (set < wk->env->bound && wk->env->ocl(wk->env->c, set) == 2) {
				/* OpenCL.DebugInfo.100 and SPIRV.debug mix literals and
				 * ids: their operands are skipped unchecked (the front end
				 * ignores them). */
				wk->nq = wk->iq;
				wk->pos = wk->n;
				return 0;
			}
			if (set < wk->env->bound && wk->env->ocl(wk->env->c, set) == 1) {
				const spv_inst_info_t *x = spv_opencl_ext_info(v);
				if (!x)
					return fail(wk->err, wk->errlen, "word %u: OpExtInst: unknown OpenCL.std instruction %u",
						    word, v);
				/* The remaining operands are the extended instruction's. */
				wk->nq = wk->iq;
				return insert_info(wk, x, 0);
			}
			wk->nq = wk->iq;
			static const struct pending any = {SPV_KIND_IdRef, SPV_Q_ANY, "Operand"};
			return insert(wk, &any, 1);
		} else if (p->kind == SPV_KIND_LiteralSpecConstantOpInteger) {
			wk->pos++;
			const spv_inst_info_t *x = spv_inst_info(v);
			if (!x || x->nopnds < 2 || x->opnds[0].kind != SPV_KIND_IdResultType)
				return fail(wk->err, wk->errlen, "word %u: OpSpecConstantOp: opcode %u is not an operation",
					    word, v);
			wk->nq = wk->iq;
			return insert_info(wk, x, 2);
		} else {
			wk->pos++;
		}
		if (wk->fn)
			wk->fn(wk->ctx, p->kind, at);
		return 0;
	case SPV_CAT_VALUE_ENUM: {
		const spv_enumerant_t *e = spv_enumerant(p->kind, v);
		if (!e)
			return fail(wk->err, wk->errlen, "word %u: %s: unknown %s %u", word, wk->opname, k->name, v);
		wk->pos++;
		if (wk->fn)
			wk->fn(wk->ctx, p->kind, at);
		return e->nparams ? insert_kinds(wk, e->params, e->nparams) : 0;
	}
	case SPV_CAT_BIT_ENUM: {
		uint16_t params[16];
		uint32_t np = 0;
		for (unsigned b = 0; b < 32; b++) {
			if (!(v & (1u << b)))
				continue;
			const spv_enumerant_t *e = spv_enumerant(p->kind, 1u << b);
			if (!e)
				return fail(wk->err, wk->errlen, "word %u: %s: unknown %s bit 0x%x", word, wk->opname,
					    k->name, 1u << b);
			for (uint32_t i = 0; i < e->nparams && np < 16; i++)
				params[np++] = e->params[i];
		}
		wk->pos++;
		if (wk->fn)
			wk->fn(wk->ctx, p->kind, at);
		return np ? insert_kinds(wk, params, np) : 0;
	}
	case SPV_CAT_COMPOSITE: {
		if (p->kind == SPV_KIND_PairLiteralIntegerIdRef && wk->opcode == OP_SWITCH) {
			/* OpSwitch: the literal is as wide as the selector. */
			const uint32_t sel = wk->w[1];
			const uint32_t type = sel < wk->env->bound ? wk->env->type(wk->env->c, sel) : 0;
			const uint32_t n = width_words(wk, type);
			if (!n)
				return fail(wk->err, wk->errlen, "word %u: OpSwitch: selector %%%u is not a scalar integer",
					    wk->off + 1, sel);
			if (left < n + 1)
				return fail(wk->err, wk->errlen, "word %u: OpSwitch: incomplete case (literal and label)",
					    word);
			wk->pos += n;
			if (wk->fn)
				wk->fn(wk->ctx, SPV_KIND_LiteralInteger, at);
			const struct pending label = {SPV_KIND_IdRef, SPV_Q_ONE, "Target"};
			return consume(wk, &label);
		}
		const struct pending a = {k->bases[0], SPV_Q_ONE, p->name}, b = {k->bases[1], SPV_Q_ONE, p->name};
		if (consume(wk, &a))
			return -1;
		return consume(wk, &b);
	}
	}
	return fail(wk->err, wk->errlen, "word %u: %s: operand kind %s cannot be read", word, wk->opname, k->name);
}

static int walk(struct walker *wk, const spv_inst_info_t *info)
{
	wk->pos = 1;
	wk->nq = wk->iq = 0;
	if (insert_info(wk, info, 0))
		return -1;
	while (wk->iq < wk->nq) {
		const struct pending p = wk->q[wk->iq++];
		switch (p.quant) {
		case SPV_Q_ONE:
			if (consume(wk, &p))
				return -1;
			break;
		case SPV_Q_OPTIONAL:
			if (wk->pos < wk->n && consume(wk, &p))
				return -1;
			break;
		default:
			if (wk->pos < wk->n) {
				/* Queue the repeat first: the parameters of this one
				 * (inserted by consume) then come before it. */
				if (insert(wk, &p, 1))
					return -1;
				struct pending one = p;
				one.quant = SPV_Q_ONE;
				if (consume(wk, &one))
					return -1;
			}
			break;
		}
	}
	if (wk->pos != wk->n)
		return fail(wk->err, wk->errlen, "word %u: %s: %u words, but its operands end after %u",
			    wk->off, wk->opname, wk->n, wk->pos);
	return 0;
}

/* ---- reading -------------------------------------------------------------------- */

struct reader {
	struct walk_env env;
	uint32_t *width, *type, *defined;
	const uint8_t *ocl;
	uint32_t *refs; /* (word offset, id, opcode) triples of id references */
	size_t nrefs, caprefs;
	int oom;
	const spv_inst_t *cur;
};

static uint32_t reader_width(const void *c, uint32_t id)
{
	return ((const struct reader *)c)->width[id];
}

static uint32_t reader_type(const void *c, uint32_t id)
{
	return ((const struct reader *)c)->type[id];
}

static int reader_ocl(const void *c, uint32_t id)
{
	return ((const struct reader *)c)->ocl[id];
}

static void note_operand(void *ctx, unsigned kind, uint32_t index)
{
	struct reader *r = ctx;
	if (kind != SPV_KIND_IdRef && kind != SPV_KIND_IdResultType && kind != SPV_KIND_IdMemorySemantics &&
	    kind != SPV_KIND_IdScope)
		return;
	if (r->nrefs + 3 > r->caprefs) {
		size_t cap = r->caprefs ? r->caprefs * 2 : 3 * 1024;
		uint32_t *p = realloc(r->refs, cap * sizeof(*p));
		if (!p) {
			r->oom = 1;
			return;
		}
		r->refs = p;
		r->caprefs = cap;
	}
	r->refs[r->nrefs++] = r->cur->off + index;
	r->refs[r->nrefs++] = r->cur->w[index];
	r->refs[r->nrefs++] = r->cur->opcode;
}

void spv_free(spv_module_t *m)
{
	free(m->words);
	free(m->insts);
	free(m->def);
	free(m->ocl_set);
	memset(m, 0, sizeof(*m));
}

static uint32_t bswap32(uint32_t x)
{
	return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

int spv_read(const void *bytes, size_t size, spv_module_t *m, char *err, size_t len)
{
	memset(m, 0, sizeof(*m));
	if (size % 4)
		return fail(err, len, "word %zu: the module is %zu bytes, not a whole number of 32-bit words", size / 4,
			    size);
	if (size < 20)
		return fail(err, len, "word %zu: truncated header: %zu bytes, a SPIR-V module starts with 5 words",
			    size / 4, size);
	if (size / 4 > UINT32_MAX / 2)
		return fail(err, len, "word 0: a module of %zu bytes is too large", size);
	const uint32_t n = (uint32_t)(size / 4);
	uint32_t *w = malloc(size);
	if (!w)
		return fail(err, len, "out of memory");
	memcpy(w, bytes, size);
	if (w[0] == bswap32(SPV_MAGIC)) {
		for (uint32_t i = 0; i < n; i++)
			w[i] = bswap32(w[i]);
	} else if (w[0] != SPV_MAGIC) {
		const uint32_t magic = w[0];
		free(w);
		return fail(err, len, "word 0: bad magic number 0x%08x: not a SPIR-V module (expected 0x%08x)", magic,
			    SPV_MAGIC);
	}
	m->words = w;
	m->nwords = n;
	m->version = w[1];
	m->generator = w[2];
	m->bound = w[3];
	const uint32_t major = (w[1] >> 16) & 0xffu, minor = (w[1] >> 8) & 0xffu;
	if ((w[1] & 0xff0000ffu) || major != 1 || minor > SPV_GRAMMAR_MINOR) {
		fail(err, len, "word 1: SPIR-V version word 0x%08x: versions 1.0 to %d.%d are supported", w[1],
		     SPV_GRAMMAR_MAJOR, SPV_GRAMMAR_MINOR);
		goto bad;
	}
	if (m->bound == 0 || m->bound > SPV_MAX_BOUND) {
		fail(err, len, "word 3: id bound %u out of range (1 to %u)", m->bound, SPV_MAX_BOUND);
		goto bad;
	}
	if (w[4] != 0) {
		fail(err, len, "word 4: reserved schema word is %u, must be 0", w[4]);
		goto bad;
	}

	/* Count instructions and check the word counts first. */
	uint32_t count = 0;
	for (uint32_t i = 5; i < n;) {
		const uint32_t wc = w[i] >> 16;
		if (wc == 0) {
			fail(err, len, "word %u: instruction word count is 0 (opcode %u)", i, w[i] & 0xffffu);
			goto bad;
		}
		if (wc > n - i) {
			fail(err, len, "word %u: %s has word count %u, past the end of the module (%u words)", i,
			     spv_op_name(w[i] & 0xffffu), wc, n);
			goto bad;
		}
		i += wc;
		count++;
	}
	struct reader r = {0};
	m->insts = calloc(count ? count : 1, sizeof(*m->insts));
	m->def = calloc(m->bound, sizeof(*m->def));
	m->ocl_set = calloc(m->bound, 1);
	r.width = calloc(m->bound, sizeof(uint32_t));
	r.type = calloc(m->bound, sizeof(uint32_t));
	r.defined = calloc(m->bound, sizeof(uint32_t));
	int rc = -1;
	if (!m->insts || !m->def || !m->ocl_set || !r.width || !r.type || !r.defined) {
		fail(err, len, "out of memory");
		goto out;
	}
	r.ocl = m->ocl_set;
	r.env = (struct walk_env){m->bound, reader_width, reader_type, reader_ocl, &r};
	for (uint32_t i = 5; i < n;) {
		spv_inst_t *in = &m->insts[m->ninsts];
		in->off = i;
		in->opcode = (uint16_t)(w[i] & 0xffffu);
		in->nwords = (uint16_t)(w[i] >> 16);
		in->w = &w[i];
		const spv_inst_info_t *info = spv_inst_info(in->opcode);
		if (!info) {
			fail(err, len, "word %u: unknown opcode %u (not in the SPIR-V %d.%d grammar)", i, in->opcode,
			     SPV_GRAMMAR_MAJOR, SPV_GRAMMAR_MINOR);
			goto out;
		}
		struct walker wk = {.env = &r.env, .w = in->w, .n = in->nwords, .off = i, .opname = info->name,
				    .opcode = in->opcode, .fn = note_operand, .ctx = &r, .err = err, .errlen = len, .check = 1,
				    .defined = r.defined};
		r.cur = in;
		if (walk(&wk, info))
			goto out;
		if (r.oom) {
			fail(err, len, "out of memory");
			goto out;
		}
		/* Result type and id: by the grammar, the first operands. */
		uint32_t at = 1;
		if (info->nopnds > 0 && info->opnds[0].kind == SPV_KIND_IdResultType)
			in->type = in->w[at++];
		if (info->nopnds > at - 1 && info->opnds[at - 1].kind == SPV_KIND_IdResult)
			in->result = in->w[at];
		if (in->result) {
			r.defined[in->result] = 1;
			m->def[in->result] = m->ninsts + 1;
			r.type[in->result] = in->type;
			if ((in->opcode == OP_TYPE_INT || in->opcode == OP_TYPE_FLOAT) && in->nwords >= 3)
				r.width[in->result] = in->w[2];
			if (in->opcode == OP_EXT_INST_IMPORT && in->nwords >= 3 &&
			    strncmp((const char *)&in->w[2], "OpenCL.std", (in->nwords - 2) * 4u) == 0)
				m->ocl_set[in->result] = 1;
			else if (in->opcode == OP_EXT_INST_IMPORT && in->nwords >= 3 &&
				 (strncmp((const char *)&in->w[2], "OpenCL.DebugInfo.100", (in->nwords - 2) * 4u) == 0 ||
				  /* older llvm-spirv's debug information */
				  strncmp((const char *)&in->w[2], "SPIRV.debug", (in->nwords - 2) * 4u) == 0))
				m->ocl_set[in->result] = 2;
		}
		m->ninsts++;
		i += in->nwords;
	}
	/* Every referenced id must be defined somewhere (forward references are
	 * legal, so this is checked at the end). */
	for (size_t i = 0; i < r.nrefs; i += 3)
		if (!r.defined[r.refs[i + 1]]) {
			fail(err, len, "word %u: %s: id %%%u is never defined", r.refs[i], spv_op_name(r.refs[i + 2]),
			     r.refs[i + 1]);
			goto out;
		}
	rc = 0;
out:
	free(r.width);
	free(r.type);
	free(r.defined);
	free(r.refs);
	if (rc == 0)
		return 0;
bad:
	spv_free(m);
	return -1;
}

/* ---- walking validated modules ---------------------------------------------------- */

static uint32_t module_width(const void *c, uint32_t id)
{
	const spv_inst_t *t = spv_def(c, id);
	return t && (t->opcode == OP_TYPE_INT || t->opcode == OP_TYPE_FLOAT) && t->nwords >= 3 ? t->w[2] : 0;
}

static uint32_t module_type(const void *c, uint32_t id)
{
	const spv_inst_t *d = spv_def(c, id);
	return d ? d->type : 0;
}

static int module_ocl(const void *c, uint32_t id)
{
	return ((const spv_module_t *)c)->ocl_set[id];
}

void spv_walk(const spv_module_t *m, const spv_inst_t *in, spv_operand_fn fn, void *ctx)
{
	const spv_inst_info_t *info = spv_inst_info(in->opcode);
	if (!info)
		return;
	const struct walk_env env = {m->bound, module_width, module_type, module_ocl, m};
	struct walker wk = {.env = &env, .w = in->w, .n = in->nwords, .off = in->off, .opname = info->name,
			    .opcode = in->opcode, .fn = fn, .ctx = ctx, .check = 0};
	walk(&wk, info);
}
