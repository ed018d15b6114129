/* ZE-ISA assembler (docs/isa.md §8).
 *
 * Pass 1 parses every line into instructions with unresolved jump targets
 * and tracks structured control flow (to compute omitted JIPs and reject
 * unbalanced constructs).  Pass 2 resolves labels, encodes, and decodes each
 * encoding again so that the one validator in tools/isa judges it. */
#define _GNU_SOURCE
#include "zas.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zs/ze_isa.h"

#define MAX_INCLUDE_DEPTH 16
#define MAX_CF_DEPTH 256
#define MAX_FILE_BYTES (64u << 20)

typedef struct pos {
	uint32_t file;
	uint32_t line;
	uint32_t col;
} pos_t;

typedef struct ainst {
	ze_inst_t inst;
	pos_t pos;
	char *target;	  /* label name of a jump, or NULL */
	int64_t abs_target; /* "@N" target, valid when has_abs */
	int has_abs;
	int auto_jip; /* JIP filled in from structure (index of target inst) */
	long jip_index;
	int raw; /* .inst: bytes given verbatim */
	uint8_t bytes[ZE_INST_BYTES];
} ainst_t;

typedef struct label {
	char *name;
	long index; /* instruction index in the kernel */
	pos_t pos;
} label_t;

enum cf_kind { CF_IF, CF_LOOP };

typedef struct cf {
	enum cf_kind kind;
	long open;     /* if or do instruction */
	long else_at;  /* -1 when none */
	long *pending; /* break/cont waiting for the next join point */
	size_t npending;
	pos_t pos;
} cf_t;

typedef struct kern {
	zm_kernel_t k;
	pos_t pos;
	ainst_t *insts;
	size_t ninsts, cap;
	label_t *labels;
	size_t nlabels;
	int started; /* an instruction has been seen: attributes are fixed */
	cf_t cf[MAX_CF_DEPTH];
	int ncf;
} kern_t;

typedef struct as {
	const zas_options_t *opt;
	FILE *diag;
	unsigned errors, max_errors;
	char **files;
	uint32_t nfiles;
	kern_t *kerns;
	size_t nkerns;
	kern_t *cur;
	int depth;
} as_t;

static void error_at(as_t *as, pos_t p, const char *fmt, ...)
{
	if (as->errors++ >= as->max_errors)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(as->diag, "%s:%u:%u: error: ", as->files[p.file], p.line, p.col);
	vfprintf(as->diag, fmt, ap);
	fputc('\n', as->diag);
	va_end(ap);
}

static int too_many(const as_t *as) { return as->errors >= as->max_errors; }

static char *xstrndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (!p) {
		fprintf(stderr, "zesim-as: out of memory\n");
		exit(2);
	}
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "zesim-as: out of memory\n");
		exit(2);
	}
	return p;
}

/* ---- line cursor ----------------------------------------------------------- */

typedef struct cur {
	const char *s; /* the line (comment stripped) */
	size_t n, i;
	pos_t base; /* position of column 1 */
} cur_t;

static pos_t here(const cur_t *c)
{
	pos_t p = c->base;
	p.col = (uint32_t)c->i + 1;
	return p;
}

static void skip_ws(cur_t *c)
{
	while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == ',' ||
			       c->s[c->i] == '\r'))
		c->i++;
}

static int at_end(cur_t *c)
{
	skip_ws(c);
	return c->i >= c->n;
}

static int peek(cur_t *c) { return c->i < c->n ? (unsigned char)c->s[c->i] : 0; }

static int accept(cur_t *c, char ch)
{
	skip_ws(c);
	if (peek(c) == (unsigned char)ch) {
		c->i++;
		return 1;
	}
	return 0;
}

static int looking_at(const cur_t *c, const char *word)
{
	size_t n = strlen(word);
	return c->n - c->i >= n && memcmp(c->s + c->i, word, n) == 0;
}

static int is_ident_start(int ch) { return isalpha(ch) || ch == '_'; }
static int is_ident_char(int ch) { return isalnum(ch) || ch == '_'; }

/* An identifier; dots are included when `dots` is set (mnemonics, rN.k). */
static size_t read_word(cur_t *c, int dots, const char **start)
{
	skip_ws(c);
	*start = c->s + c->i;
	size_t b = c->i;
	if (!is_ident_start(peek(c)))
		return 0;
	while (c->i < c->n && (is_ident_char(peek(c)) || (dots && peek(c) == '.')))
		c->i++;
	return c->i - b;
}

/* A numeric literal token: digits, letters, dots, and a sign after an exponent. */
static size_t read_number(cur_t *c, const char **start)
{
	skip_ws(c);
	*start = c->s + c->i;
	size_t b = c->i;
	if (peek(c) == '-' || peek(c) == '+')
		c->i++;
	int hex = c->i + 1 < c->n && c->s[c->i] == '0' && (c->s[c->i + 1] | 32) == 'x';
	while (c->i < c->n) {
		int ch = peek(c);
		if (isalnum(ch) || ch == '.' || ch == '_')
			c->i++;
		else if ((ch == '-' || ch == '+') && !hex && c->i > b &&
			 (c->s[c->i - 1] | 32) == 'e')
			c->i++;
		else
			break;
	}
	return c->i - b;
}

/* ---- kernels, labels and control flow ------------------------------------- */

static ainst_t *new_inst(kern_t *k)
{
	if (k->ninsts == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 64;
		k->insts = xrealloc(k->insts, k->cap * sizeof(*k->insts));
	}
	ainst_t *a = &k->insts[k->ninsts++];
	memset(a, 0, sizeof(*a));
	a->jip_index = -1;
	return a;
}

static int reserved_name(const char *name)
{
	if (strcmp(name, "null") == 0 || ze_arf_by_name(name))
		return 1;
	if (name[0] == 'r' && isdigit((unsigned char)name[1])) {
		const char *p = name + 1;
		while (isdigit((unsigned char)*p))
			p++;
		return *p == 0;
	}
	return 0;
}

static void define_label(as_t *as, kern_t *k, const char *name, size_t n, pos_t p)
{
	char *s = xstrndup(name, n);
	if (reserved_name(s)) {
		error_at(as, p, "'%s' is a register name and cannot be a label", s);
		free(s);
		return;
	}
	for (size_t i = 0; i < k->nlabels; i++)
		if (strcmp(k->labels[i].name, s) == 0) {
			error_at(as, p, "label '%s' already defined at line %u", s,
				 k->labels[i].pos.line);
			free(s);
			return;
		}
	k->labels = xrealloc(k->labels, (k->nlabels + 1) * sizeof(*k->labels));
	k->labels[k->nlabels++] = (label_t){s, (long)k->ninsts, p};
}

static void close_cf_check(as_t *as, kern_t *k, const char *where)
{
	while (k->ncf > 0) {
		cf_t *f = &k->cf[--k->ncf];
		error_at(as, f->pos, "%s without %s before %s", f->kind == CF_IF ? "if" : "do",
			 f->kind == CF_IF ? "endif" : "while", where);
		free(f->pending);
	}
}

static void resolve_pending(kern_t *k, cf_t *f, long target)
{
	for (size_t i = 0; i < f->npending; i++)
		k->insts[f->pending[i]].jip_index = target;
	f->npending = 0;
}

/* Track structure for the instruction just added (index idx). */
static void track_cf(as_t *as, kern_t *k, long idx, pos_t p)
{
	ainst_t *a = &k->insts[idx];
	cf_t *top = k->ncf ? &k->cf[k->ncf - 1] : NULL;
	switch (a->inst.opcode) {
	case ZE_OP_IF:
	case ZE_OP_DO:
		if (k->ncf == MAX_CF_DEPTH) {
			error_at(as, p, "control flow nested deeper than %d", MAX_CF_DEPTH);
			return;
		}
		k->cf[k->ncf++] = (cf_t){a->inst.opcode == ZE_OP_IF ? CF_IF : CF_LOOP, idx, -1,
					 NULL, 0, p};
		return;
	case ZE_OP_ELSE:
		if (!top || top->kind != CF_IF || top->else_at >= 0) {
			error_at(as, p, "else without a matching if");
			return;
		}
		top->else_at = idx;
		k->insts[top->open].jip_index = idx;
		resolve_pending(k, top, idx);
		return;
	case ZE_OP_ENDIF:
		if (!top || top->kind != CF_IF) {
			error_at(as, p, "endif without a matching if");
			return;
		}
		if (top->else_at >= 0)
			k->insts[top->else_at].jip_index = idx;
		else
			k->insts[top->open].jip_index = idx;
		resolve_pending(k, top, idx);
		free(top->pending);
		k->ncf--;
		return;
	case ZE_OP_WHILE:
		if (!top || top->kind != CF_LOOP) {
			error_at(as, p, "while without a matching do");
			return;
		}
		a->jip_index = top->open + 1;
		resolve_pending(k, top, idx);
		free(top->pending);
		k->ncf--;
		return;
	case ZE_OP_BREAK:
	case ZE_OP_CONT: {
		int in_loop = 0;
		for (int i = 0; i < k->ncf; i++)
			in_loop |= k->cf[i].kind == CF_LOOP;
		if (!in_loop) {
			error_at(as, p, "%s outside a do/while loop",
				 a->inst.opcode == ZE_OP_BREAK ? "break" : "cont");
			return;
		}
		top->pending = xrealloc(top->pending, (top->npending + 1) * sizeof(long));
		top->pending[top->npending++] = idx;
		return;
	}
	default:
		return;
	}
}

static void finish_kernel(as_t *as)
{
	kern_t *k = as->cur;
	if (!k)
		return;
	close_cf_check(as, k, "the end of the kernel");
	if (k->ninsts == 0)
		error_at(as, k->pos, "kernel '%s' has no instructions", k->k.name);
	as->cur = NULL;
}

/* ---- directives ------------------------------------------------------------ */

static int parse_uint(cur_t *c, uint64_t max, uint64_t *out)
{
	const char *s;
	size_t n = read_number(c, &s);
	if (!n || !isdigit((unsigned char)s[0]))
		return -1;
	char *tmp = xstrndup(s, n), *end;
	errno = 0;
	unsigned long long v = strtoull(tmp, &end, 0);
	int ok = !errno && *end == 0 && v <= max;
	free(tmp);
	if (!ok)
		return -1;
	*out = v;
	return 0;
}

/* Arguments live in GRF dwords: values of 8 bytes or more are qword aligned,
 * smaller ones dword aligned (docs/isa.md §6). */
static uint32_t arg_align(uint32_t size)
{
	return size >= 8 ? 8 : 4;
}

static void directive_arg(as_t *as, kern_t *k, cur_t *c, pos_t p)
{
	const char *s;
	size_t n = read_word(c, 0, &s);
	if (!n) {
		error_at(as, here(c), ".arg needs a name");
		return;
	}
	char *name = xstrndup(s, n);
	pos_t kp = here(c);
	n = read_word(c, 0, &s);
	char *kind_s = xstrndup(s, n);
	int kind = zm_arg_kind_by_name(kind_s);
	free(kind_s);
	if (kind < 0) {
		error_at(as, kp, ".arg %s: kind must be global, local or value", name);
		free(name);
		return;
	}
	uint64_t size = kind == ZM_ARG_GLOBAL ? 8 : kind == ZM_ARG_LOCAL ? 4 : 0, v;
	skip_ws(c);
	if (isdigit(peek(c))) {
		pos_t sp = here(c);
		if (parse_uint(c, ZE_MAX_ARG_BYTES, &v) || v == 0 || (size && v != size)) {
			error_at(as, sp, ".arg %s: size must be %s", name,
				 kind == ZM_ARG_GLOBAL ? "8" : kind == ZM_ARG_LOCAL ? "4" : "1-1024");
			free(name);
			return;
		}
		size = v;
	}
	if (!size) {
		error_at(as, here(c), ".arg %s: value arguments need a size", name);
		free(name);
		return;
	}
	uint32_t off = (k->k.arg_bytes + arg_align((uint32_t)size) - 1) &
		       ~(arg_align((uint32_t)size) - 1);
	for (uint32_t i = 0; i < k->k.nargs; i++) {
		uint32_t end = k->k.args[i].offset + k->k.args[i].size;
		if (end > off)
			off = (end + arg_align((uint32_t)size) - 1) & ~(arg_align((uint32_t)size) - 1);
	}
	if (accept(c, '@')) {
		pos_t op = here(c);
		if (parse_uint(c, ZE_MAX_ARG_BYTES, &v) || v % arg_align((uint32_t)size)) {
			error_at(as, op, ".arg %s: offset must be a multiple of %u below %u", name,
				 arg_align((uint32_t)size), ZE_MAX_ARG_BYTES);
			free(name);
			return;
		}
		off = (uint32_t)v;
	}
	if (!at_end(c)) {
		error_at(as, here(c), ".arg %s: unexpected text", name);
		free(name);
		return;
	}
	if (off + size > ZE_MAX_ARG_BYTES || k->k.nargs >= ZE_MAX_ARGS) {
		error_at(as, p, ".arg %s: argument area exceeds %u bytes or %u arguments", name,
			 ZE_MAX_ARG_BYTES, ZE_MAX_ARGS);
		free(name);
		return;
	}
	for (uint32_t i = 0; i < k->k.nargs; i++) {
		const zm_arg_t *o = &k->k.args[i];
		if (strcmp(o->name, name) == 0 ||
		    (off < o->offset + o->size && o->offset < off + size)) {
			error_at(as, p, ".arg %s: %s argument '%s'", name,
				 strcmp(o->name, name) == 0 ? "duplicates" : "overlaps", o->name);
			free(name);
			return;
		}
	}
	k->k.args = xrealloc(k->k.args, (k->k.nargs + 1) * sizeof(*k->k.args));
	k->k.args[k->k.nargs++] = (zm_arg_t){name, (uint32_t)kind, off, (uint32_t)size};
	uint32_t end = (uint32_t)((off + size + 3) & ~3u);
	if (end > k->k.arg_bytes)
		k->k.arg_bytes = end;
}

static void assemble_text(as_t *as, const char *src, size_t len, uint32_t file);

static void directive_include(as_t *as, cur_t *c, pos_t p)
{
	skip_ws(c);
	if (peek(c) != '"') {
		error_at(as, here(c), ".include needs a quoted file name");
		return;
	}
	size_t b = ++c->i;
	while (c->i < c->n && c->s[c->i] != '"')
		c->i++;
	if (c->i >= c->n) {
		error_at(as, p, ".include: unterminated file name");
		return;
	}
	char *name = xstrndup(c->s + b, c->i - b);
	c->i++;
	if (!at_end(c)) {
		error_at(as, here(c), ".include: unexpected text after the file name");
		free(name);
		return;
	}
	if (!as->opt->allow_include) {
		error_at(as, p, ".include is disabled");
		free(name);
		return;
	}
	if (as->depth >= MAX_INCLUDE_DEPTH) {
		error_at(as, p, ".include nested deeper than %d (a cycle?)", MAX_INCLUDE_DEPTH);
		free(name);
		return;
	}
	/* Relative to the including file. */
	const char *parent = as->files[p.file];
	const char *slash = strrchr(parent, '/');
	char *path;
	if (name[0] != '/' && slash) {
		size_t dl = (size_t)(slash - parent) + 1;
		path = xrealloc(NULL, dl + strlen(name) + 1);
		memcpy(path, parent, dl);
		strcpy(path + dl, name);
	} else {
		path = xstrndup(name, strlen(name));
	}
	free(name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		error_at(as, p, ".include \"%s\": %s", path, strerror(errno));
		free(path);
		return;
	}
	char *text = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			text = xrealloc(text, cap);
		}
		size_t got = fread(text + n, 1, cap - n, f);
		n += got;
		if (got == 0 || n > MAX_FILE_BYTES)
			break;
	}
	int bad = ferror(f) || n > MAX_FILE_BYTES;
	fclose(f);
	if (bad) {
		error_at(as, p, ".include \"%s\": read error or larger than 64 MiB", path);
		free(path);
		free(text);
		return;
	}
	as->files = xrealloc(as->files, (as->nfiles + 1) * sizeof(char *));
	as->files[as->nfiles] = path;
	uint32_t idx = as->nfiles++;
	as->depth++;
	assemble_text(as, text, n, idx);
	as->depth--;
	free(text);
}

static void directive_attr(as_t *as, kern_t *k, cur_t *c, const char *d, pos_t p)
{
	uint64_t v;
	pos_t vp = here(c);
	uint64_t max = strcmp(d, ".slm") == 0 ? ZE_MAX_SLM_BYTES : ZE_GRF_COUNT;
	if (k->started) {
		error_at(as, p, "%s must come before the kernel's first instruction", d);
		return;
	}
	if (parse_uint(c, max, &v) || !at_end(c)) {
		error_at(as, vp, "%s needs a number up to %llu", d, (unsigned long long)max);
		return;
	}
	if (strcmp(d, ".simd") == 0) {
		if (v != 8 && v != 16)
			error_at(as, vp, ".simd must be 8 or 16");
		else
			k->k.simd = (uint32_t)v;
	} else if (strcmp(d, ".grf") == 0) {
		if (v < 1)
			error_at(as, vp, ".grf must be 1-128");
		else
			k->k.grf = (uint32_t)v;
	} else {
		k->k.slm = (uint32_t)v;
	}
}

/* .reqd_group_size X Y Z: the group size every launch must use (OpenCL C
 * reqd_work_group_size); each at least 1, at most 65536 work items. */
static void directive_reqd(as_t *as, kern_t *k, cur_t *c, pos_t p)
{
	uint64_t v[3], items = 1;
	if (k->started) {
		error_at(as, p, ".reqd_group_size must come before the kernel's first instruction");
		return;
	}
	for (int i = 0; i < 3; i++) {
		skip_ws(c);
		pos_t vp = here(c);
		if (parse_uint(c, ZE_MAX_REQD_GROUP_ITEMS, &v[i]) || v[i] == 0) {
			error_at(as, vp, ".reqd_group_size needs three sizes X Y Z, each 1-%u",
				 ZE_MAX_REQD_GROUP_ITEMS);
			return;
		}
		items *= v[i];
	}
	if (!at_end(c)) {
		error_at(as, here(c), ".reqd_group_size: unexpected text");
		return;
	}
	if (items > ZE_MAX_REQD_GROUP_ITEMS) {
		error_at(as, p, ".reqd_group_size %llux%llux%llu: more than %u work items",
			 (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
			 ZE_MAX_REQD_GROUP_ITEMS);
		return;
	}
	for (int i = 0; i < 3; i++)
		k->k.reqd_group[i] = (uint32_t)v[i];
}

static void directive_inst(as_t *as, kern_t *k, cur_t *c, pos_t p)
{
	ainst_t *a = new_inst(k);
	a->raw = 1;
	a->pos = p;
	for (int i = 0; i < 4; i++) {
		uint64_t v;
		pos_t vp = here(c);
		if (parse_uint(c, UINT32_MAX, &v)) {
			error_at(as, vp, ".inst needs four 32-bit values");
			return;
		}
		for (int b = 0; b < 4; b++)
			a->bytes[i * 4 + b] = (uint8_t)(v >> (8 * b));
	}
	if (!at_end(c))
		error_at(as, here(c), ".inst: unexpected text");
}

static void directive(as_t *as, cur_t *c)
{
	pos_t p = here(c);
	c->i++; /* '.' */
	const char *s;
	size_t n = read_word(c, 0, &s);
	char d[32];
	snprintf(d, sizeof(d), ".%.*s", (int)(n < 30 ? n : 30), s);
	if (strcmp(d, ".include") == 0) {
		directive_include(as, c, p);
		return;
	}
	if (strcmp(d, ".kernel") == 0) {
		n = read_word(c, 0, &s);
		if (!n || !at_end(c)) {
			error_at(as, here(c), ".kernel needs one name");
			return;
		}
		finish_kernel(as);
		char *name = xstrndup(s, n);
		for (size_t i = 0; i < as->nkerns; i++)
			if (strcmp(as->kerns[i].k.name, name) == 0) {
				error_at(as, p, "kernel '%s' already defined at line %u", name,
					 as->kerns[i].pos.line);
				free(name);
				return;
			}
		as->kerns = xrealloc(as->kerns, (as->nkerns + 1) * sizeof(*as->kerns));
		kern_t *k = &as->kerns[as->nkerns++];
		memset(k, 0, sizeof(*k));
		k->k.name = name;
		k->k.simd = 16;
		k->k.grf = ZE_GRF_COUNT;
		k->pos = p;
		as->cur = k;
		return;
	}
	kern_t *k = as->cur;
	if (!k) {
		error_at(as, p, "%s outside a .kernel", d);
		return;
	}
	if (strcmp(d, ".simd") == 0 || strcmp(d, ".grf") == 0 || strcmp(d, ".slm") == 0) {
		directive_attr(as, k, c, d, p);
	} else if (strcmp(d, ".reqd_group_size") == 0) {
		directive_reqd(as, k, c, p);
	} else if (strcmp(d, ".arg") == 0) {
		if (k->started)
			error_at(as, p, ".arg must come before the kernel's first instruction");
		else
			directive_arg(as, k, c, p);
	} else if (strcmp(d, ".func") == 0) {
		n = read_word(c, 0, &s);
		if (!n || !at_end(c)) {
			error_at(as, here(c), ".func needs one name");
			return;
		}
		close_cf_check(as, k, ".func");
		if (k->ninsts == 0)
			error_at(as, p, ".func before the kernel's first instruction");
		for (size_t i = 0; i < as->nkerns; i++)
			for (uint32_t f = 0; f < as->kerns[i].k.nfuncs; f++)
				if (strlen(as->kerns[i].k.funcs[f].name) == n &&
				    memcmp(as->kerns[i].k.funcs[f].name, s, n) == 0)
					error_at(as, p, "function '%.*s' defined twice", (int)n, s);
		define_label(as, k, s, n, p);
		k->k.funcs = xrealloc(k->k.funcs, (k->k.nfuncs + 1) * sizeof(zm_func_t));
		k->k.funcs[k->k.nfuncs++] =
			(zm_func_t){xstrndup(s, n), (uint32_t)(k->ninsts * ZE_INST_BYTES), 0};
	} else if (strcmp(d, ".inst") == 0) {
		k->started = 1;
		directive_inst(as, k, c, p);
	} else {
		error_at(as, p, "unknown directive '%s'", d);
	}
}

/* ---- instructions ---------------------------------------------------------- */

typedef struct popnd {
	ze_operand_t o;
	int type; /* -1 when not given */
	const char *imm;
	size_t imm_len;
	pos_t pos;
} popnd_t;

static int parse_reg(const char *s, size_t n, unsigned *reg, int *sub)
{
	if (n < 2 || s[0] != 'r' || !isdigit((unsigned char)s[1]))
		return 0;
	size_t i = 1;
	unsigned v = 0;
	while (i < n && isdigit((unsigned char)s[i]) && v < 1000)
		v = v * 10 + (unsigned)(s[i++] - '0');
	*sub = -1;
	if (i < n) {
		if (s[i] != '.' || i + 2 != n || !isdigit((unsigned char)s[i + 1]))
			return -1;
		*sub = s[i + 1] - '0';
	}
	*reg = v;
	return 1;
}

static int parse_type(as_t *as, cur_t *c, popnd_t *po)
{
	const char *s;
	c->i++; /* ':' */
	pos_t tp = here(c);
	size_t n = read_word(c, 0, &s);
	char t[8];
	snprintf(t, sizeof(t), "%.*s", (int)(n < 7 ? n : 7), s);
	po->type = n && n < 7 ? ze_type_by_suffix(t) : -1;
	if (po->type < 0) {
		error_at(as, tp, "unknown type ':%.*s' (ud, d, f)", (int)n, s);
		return -1;
	}
	return 0;
}

/* One source or destination operand (not a jump target). */
static int parse_operand(as_t *as, cur_t *c, popnd_t *po)
{
	memset(po, 0, sizeof(*po));
	po->type = -1;
	skip_ws(c);
	po->pos = here(c);
	int neg = 0, absv = 0;
	const char *s;
	size_t n;
	if (peek(c) == '-' && c->i + 1 < c->n &&
	    (c->s[c->i + 1] == 'r' || c->s[c->i + 1] == '|')) {
		neg = 1;
		c->i++;
	}
	if (peek(c) == '|') {
		absv = 1;
		c->i++;
	}
	int ch = peek(c);
	if (isdigit(ch) || ch == '-' || ch == '+' || ch == '.' ||
	    (!absv && !neg && (looking_at(c, "inf") || looking_at(c, "nan")))) {
		if (neg || absv) {
			error_at(as, po->pos, "modifiers are not allowed on immediates");
			return -1;
		}
		n = read_number(c, &s);
		po->o.kind = ZE_OPND_IMM;
		po->imm = s;
		po->imm_len = n;
	} else {
		n = read_word(c, 1, &s);
		if (!n) {
			error_at(as, po->pos, "expected an operand");
			return -1;
		}
		unsigned reg;
		int sub;
		int r = parse_reg(s, n, &reg, &sub);
		if (r < 0 || (r > 0 && (reg >= ZE_GRF_COUNT || sub > 7))) {
			error_at(as, po->pos, "bad register '%.*s' (r0-r127, sub-register .0-.7)",
				 (int)n, s);
			return -1;
		}
		if (r > 0) {
			po->o.kind = sub < 0 ? ZE_OPND_GRFV : ZE_OPND_GRFS;
			po->o.reg = (uint8_t)reg;
			po->o.sub = (uint8_t)(sub < 0 ? 0 : sub);
		} else if (n == 4 && memcmp(s, "null", 4) == 0) {
			po->o.kind = ZE_OPND_NULL;
		} else {
			const char *dot = memchr(s, '.', n);
			size_t bl = dot ? (size_t)(dot - s) : n;
			char base[16];
			snprintf(base, sizeof(base), "%.*s", (int)(bl < 15 ? bl : 15), s);
			const ze_arf_info_t *arf = bl < 15 ? ze_arf_by_name(base) : NULL;
			int sv = 0;
			if (arf && dot) {
				if (n - bl != 2 || !isdigit((unsigned char)dot[1]))
					arf = NULL;
				else
					sv = dot[1] - '0';
			}
			if (!arf) {
				error_at(as, po->pos, "unknown operand '%.*s'", (int)n, s);
				return -1;
			}
			po->o.kind = ZE_OPND_ARF;
			po->o.reg = arf->num;
			po->o.sub = (uint8_t)sv;
		}
	}
	/* The type may stand inside the bars (|r1:f|) or after them (|r1|:f). */
	int type_inside = 0;
	if (absv && peek(c) == ':') {
		if (parse_type(as, c, po))
			return -1;
		type_inside = 1;
	}
	if (absv && !accept(c, '|')) {
		error_at(as, here(c), "missing closing '|'");
		return -1;
	}
	if ((neg || absv) && po->o.kind == ZE_OPND_NULL) {
		error_at(as, po->pos, "modifiers on null");
		return -1;
	}
	po->o.neg = (uint8_t)neg;
	po->o.abs = (uint8_t)absv;
	if (peek(c) == ':' && !type_inside)
		return parse_type(as, c, po);
	return 0;
}

static int parse_imm(as_t *as, const popnd_t *po, unsigned type, uint32_t *out)
{
	char *t = xstrndup(po->imm, po->imm_len), *end;
	int ok = 0;
	int hex = (t[0] == '0' && (t[1] | 32) == 'x');
	errno = 0;
	if (type == ZE_TYPE_F && !hex) {
		float f = strtof(t, &end);
		ok = *end == 0 && end != t;
		if (ok && isnan(f)) {
			*out = 0x7fc00000u;
		} else if (ok) {
			memcpy(out, &f, sizeof(f));
			ok = !(errno == ERANGE && isinf(f));
		}
	} else {
		long long v = strtoll(t, &end, 0);
		ok = *end == 0 && end != t && errno == 0 && v >= INT32_MIN && v <= (long long)UINT32_MAX;
		*out = (uint32_t)v;
	}
	if (!ok)
		error_at(as, po->pos, "bad %s immediate '%s'", ze_type_suffix(type), t);
	free(t);
	return ok ? 0 : -1;
}

struct mnem {
	const ze_op_info_t *op;
	const ze_msg_info_t *msg;
	int cmod, flag, atomic;
	unsigned vsize;
};

static int parse_mnemonic(as_t *as, const char *s, size_t n, pos_t p, struct mnem *m)
{
	char buf[64];
	memset(m, 0, sizeof(*m));
	m->flag = -1;
	m->atomic = -1;
	m->vsize = 1;
	if (n >= sizeof(buf)) {
		error_at(as, p, "unknown instruction '%.*s'", (int)n, s);
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	char *rest = NULL;
	if (strncmp(buf, "send.", 5) == 0) {
		m->op = ze_op_info(ZE_OP_SEND);
		/* The longest message name that matches (slm.load before slm). */
		for (char *e = buf + n; e > buf + 5; e--) {
			if (*e != 0 && *e != '.')
				continue;
			char save = *e;
			*e = 0;
			m->msg = ze_msg_by_name(buf + 5);
			*e = save;
			if (m->msg) {
				rest = *e ? e + 1 : e;
				break;
			}
		}
		if (!m->msg) {
			error_at(as, p, "unknown send message '%s'", buf + 5);
			return -1;
		}
	} else {
		for (char *e = buf + n; e > buf; e--) {
			if (*e != 0 && *e != '.')
				continue;
			char save = *e;
			*e = 0;
			m->op = ze_op_by_name(buf);
			*e = save;
			if (m->op && m->op->opcode != ZE_OP_SEND) {
				rest = *e ? e + 1 : e;
				break;
			}
			m->op = NULL;
		}
		if (!m->op) {
			error_at(as, p, "unknown instruction '%s'", buf);
			return -1;
		}
	}
	for (char *part = rest; part && *part;) {
		char *dot = strchr(part, '.');
		if (dot)
			*dot = 0;
		int v;
		if ((m->op->flags & Z_CMOD) && m->cmod == 0 && (v = ze_cmod_by_name(part)) > 0)
			m->cmod = v;
		else if ((strcmp(part, "f0") == 0 || strcmp(part, "f1") == 0) && m->flag < 0 &&
			 (m->op->flags & Z_CMOD))
			m->flag = part[1] - '0';
		else if (m->msg && m->atomic < 0 &&
			 (m->msg->id == ZE_MSG_ATOMIC || m->msg->id == ZE_MSG_SLM_ATOMIC) &&
			 (v = ze_atomic_by_name(part)) >= 0)
			m->atomic = v;
		else if (m->msg && part[0] == 'v' && part[1] >= '1' && part[1] <= '4' && !part[2] &&
			 (m->msg->id == ZE_MSG_LOAD || m->msg->id == ZE_MSG_STORE ||
			  m->msg->id == ZE_MSG_SLM_LOAD || m->msg->id == ZE_MSG_SLM_STORE))
			m->vsize = (unsigned)(part[1] - '0');
		else {
			error_at(as, p, "unknown suffix '.%s' on '%.*s'", part, (int)n, s);
			return -1;
		}
		part = dot ? dot + 1 : NULL;
	}
	if ((m->op->flags & Z_CMOD) && !m->cmod) {
		error_at(as, p, "%s needs a condition modifier (.eq .ne .lt .le .gt .ge)",
			 m->op->mnemonic);
		return -1;
	}
	if (m->msg && (m->msg->id == ZE_MSG_ATOMIC || m->msg->id == ZE_MSG_SLM_ATOMIC) &&
	    m->atomic < 0) {
		error_at(as, p, "send.%s needs an operation (.add .sub .min ...)", m->msg->name);
		return -1;
	}
	return 0;
}

static void parse_jump(as_t *as, cur_t *c, ainst_t *a, int optional)
{
	skip_ws(c);
	if (c->i >= c->n || peek(c) == '{') {
		if (optional)
			a->auto_jip = 1;
		else
			error_at(as, here(c), "%s needs a jump target",
				 ze_op_info(a->inst.opcode)->mnemonic);
		return;
	}
	if (peek(c) == '@') {
		c->i++;
		const char *s;
		size_t n = read_number(c, &s);
		char *t = xstrndup(s, n), *end;
		errno = 0;
		long long v = strtoll(t, &end, 10);
		if (!n || *end || errno || v < INT32_MIN || v > INT32_MAX)
			error_at(as, a->pos, "bad jump target '@%s'", t);
		a->abs_target = v;
		a->has_abs = 1;
		free(t);
		return;
	}
	const char *s;
	size_t n = read_word(c, 0, &s);
	if (!n) {
		error_at(as, here(c), "expected a label");
		return;
	}
	a->target = xstrndup(s, n);
}

static void instruction(as_t *as, cur_t *c)
{
	kern_t *k = as->cur;
	pos_t p = here(c);
	if (!k) {
		error_at(as, p, "instruction outside a .kernel");
		return;
	}
	k->started = 1;
	ze_inst_t in;
	memset(&in, 0, sizeof(in));
	if (accept(c, '(')) {
		in.pred = 1;
		in.pred_inv = (uint8_t)accept(c, '!');
		const char *s;
		size_t n = read_word(c, 0, &s);
		if (n != 2 || s[0] != 'f' || (s[1] != '0' && s[1] != '1') || !accept(c, ')')) {
			error_at(as, p, "bad predicate: expected (f0), (f1), (!f0) or (!f1)");
			return;
		}
		in.flag = (uint8_t)(s[1] - '0');
	}
	const char *s;
	pos_t mp = here(c);
	size_t n = read_word(c, 1, &s);
	struct mnem m;
	if (!n) {
		error_at(as, mp, "expected an instruction");
		return;
	}
	if (parse_mnemonic(as, s, n, mp, &m))
		return;
	in.opcode = m.op->opcode;
	if (m.flag >= 0) {
		if (in.pred && in.flag != m.flag) {
			error_at(as, mp, "cmp flag .f%d differs from the predicate's flag", m.flag);
			return;
		}
		in.flag = (uint8_t)m.flag;
	}
	in.cmod = (uint8_t)m.cmod;
	uint32_t s1 = (m.op->flags & Z_S1) || (m.msg && (m.msg->flags & Z_S1));
	in.esize = (uint8_t)(s1 ? 1 : k->k.simd);
	skip_ws(c);
	if (peek(c) == '(') {
		c->i++;
		uint64_t v;
		pos_t sp = here(c);
		if (parse_uint(c, 16, &v) || !accept(c, ')') || (v != 1 && v != 8 && v != 16)) {
			error_at(as, sp, "execution size must be (1), (8) or (16)");
			return;
		}
		in.esize = (uint8_t)v;
	}
	const char *letters = m.msg ? m.msg->operands : m.op->operands;
	if (m.msg)
		in.dw3 = ze_send_desc(m.msg->id, m.atomic < 0 ? 0u : (unsigned)m.atomic, m.vsize);
	ainst_t *a = new_inst(k);
	a->pos = p;
	popnd_t ops[4];
	int nops = 0, s_index = 0, stype = -1, failed = 0;
	for (const char *l = letters; *l && !failed; l++) {
		if (*l == 'j') {
			parse_jump(as, c, a, (m.op->flags & Z_JIP) != 0);
			continue;
		}
		skip_ws(c);
		if (c->i >= c->n || peek(c) == '{') {
			error_at(as, here(c), "%s%s%s: missing operand", m.op->mnemonic,
				 m.msg ? "." : "", m.msg ? m.msg->name : "");
			failed = 1;
			break;
		}
		popnd_t *po = &ops[nops++];
		if (parse_operand(as, c, po)) {
			failed = 1;
			break;
		}
		int slot = ze_letter_slot(*l, *l == 's' ? s_index++ : 0);
		if (m.msg && po->type >= 0) {
			error_at(as, po->pos, "send operands take no type");
			failed = 1;
			break;
		}
		if (slot == 0) {
			in.dst = po->o;
			in.dtype = (uint8_t)(po->type < 0 || m.msg ? 0 : po->type);
		} else {
			in.src[slot - 1] = po->o;
			if (po->type >= 0 && po->o.kind != ZE_OPND_IMM) {
				if (stype >= 0 && stype != po->type) {
					error_at(as, po->pos, "all sources must have one type");
					failed = 1;
				}
				stype = po->type;
			}
		}
	}
	if (failed) {
		k->ninsts--;
		return;
	}
	if (stype < 0)
		for (int i = 0; i < nops; i++)
			if (ops[i].o.kind == ZE_OPND_IMM && ops[i].type >= 0)
				stype = ops[i].type;
	if (!m.msg && strpbrk(letters, "ds"))
		in.stype = (uint8_t)(stype < 0 ? ZE_TYPE_UD : stype);
	for (int i = 0; i < nops; i++) {
		if (ops[i].o.kind != ZE_OPND_IMM)
			continue;
		if (ops[i].type >= 0 && ops[i].type != in.stype) {
			error_at(as, ops[i].pos, "immediate type differs from the source type");
			failed = 1;
		} else if (parse_imm(as, &ops[i], in.stype, &in.dw3)) {
			failed = 1;
		}
	}
	skip_ws(c);
	if (!failed && peek(c) == '{') {
		c->i++;
		const char *w;
		size_t wn = read_word(c, 0, &w);
		if (wn != 2 || memcmp(w, "bp", 2) != 0 || !accept(c, '}')) {
			error_at(as, here(c), "unknown instruction option (only {bp})");
			failed = 1;
		}
		in.bp = 1;
	}
	if (!failed && !at_end(c)) {
		error_at(as, here(c), "unexpected text '%.*s'", (int)(c->n - c->i), c->s + c->i);
		failed = 1;
	}
	a->inst = in;
	if (failed) {
		free(a->target);
		k->ninsts--;
		return;
	}
	track_cf(as, k, (long)(k->ninsts - 1), p);
}

/* ---- lines ----------------------------------------------------------------- */

/* Length of the line without its comment (// or ;), ignoring quoted text. */
static size_t strip_comment(const char *s, size_t n)
{
	int q = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			q = !q;
		else if (!q && (s[i] == ';' || (s[i] == '/' && i + 1 < n && s[i + 1] == '/')))
			return i;
	}
	return n;
}

static void assemble_line(as_t *as, const char *s, size_t n, pos_t base)
{
	cur_t c = {s, strip_comment(s, n), 0, base};
	if (memchr(s, 0, n)) {
		error_at(as, base, "NUL byte in the source line");
		return;
	}
	if (at_end(&c))
		return;
	/* Leading "label:" */
	size_t save = c.i;
	const char *w;
	size_t wn = read_word(&c, 0, &w);
	if (wn && peek(&c) == ':') {
		pos_t lp = here(&c);
		lp.col = (uint32_t)save + 1;
		c.i++;
		if (!as->cur)
			error_at(as, lp, "label outside a .kernel");
		else
			define_label(as, as->cur, w, wn, lp);
		if (at_end(&c))
			return;
	} else {
		c.i = save;
	}
	skip_ws(&c);
	if (peek(&c) == '.')
		directive(as, &c);
	else
		instruction(as, &c);
}

static void assemble_text(as_t *as, const char *src, size_t len, uint32_t file)
{
	size_t i = 0;
	uint32_t line = 1;
	while (i < len && !too_many(as)) {
		const char *nl = memchr(src + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - src) : len;
		assemble_line(as, src + i, e - i, (pos_t){file, line, 1});
		i = e + 1;
		line++;
	}
}

/* ---- pass 2 ---------------------------------------------------------------- */

static void resolve_kernel(as_t *as, kern_t *k)
{
	zm_kernel_t *zk = &k->k;
	zk->text_size = (uint32_t)(k->ninsts * ZE_INST_BYTES);
	zk->text = xrealloc(NULL, zk->text_size);
	if (as->opt->debug_line)
		zk->lines = xrealloc(NULL, (k->ninsts ? k->ninsts : 1) * sizeof(zm_line_t));
	for (uint32_t f = 0; f < zk->nfuncs; f++)
		zk->funcs[f].size = (f + 1 < zk->nfuncs ? zk->funcs[f + 1].offset : zk->text_size) -
				    zk->funcs[f].offset;
	for (size_t i = 0; i < k->ninsts; i++) {
		ainst_t *a = &k->insts[i];
		uint8_t *out = zk->text + i * ZE_INST_BYTES;
		if (zk->lines)
			zk->lines[i] = (zm_line_t){a->pos.file, a->pos.line};
		if (a->raw) {
			memcpy(out, a->bytes, ZE_INST_BYTES);
			continue;
		}
		int64_t ip = (int64_t)i * ZE_INST_BYTES, target = 0;
		int has_target = 1;
		if (a->target) {
			size_t l;
			for (l = 0; l < k->nlabels; l++)
				if (strcmp(k->labels[l].name, a->target) == 0)
					break;
			if (l == k->nlabels) {
				error_at(as, a->pos, "undefined label '%s' (labels are local to their "
						     "kernel)", a->target);
				continue;
			}
			target = k->labels[l].index * (int64_t)ZE_INST_BYTES;
		} else if (a->has_abs) {
			target = a->abs_target;
		} else if (a->auto_jip && a->jip_index >= 0) {
			target = a->jip_index * (int64_t)ZE_INST_BYTES;
		} else {
			has_target = 0;
		}
		if (has_target) {
			int64_t off = target - ip;
			if (off < INT32_MIN || off > INT32_MAX) {
				error_at(as, a->pos, "jump offset out of range");
				continue;
			}
			a->inst.dw3 = (uint32_t)(int32_t)off;
		}
		ze_encode(&a->inst, out);
		ze_inst_t back;
		char err[256];
		if (ze_decode(out, &back, err, sizeof(err)))
			error_at(as, a->pos, "%s", err);
	}
}

static void free_kern(kern_t *k)
{
	for (size_t i = 0; i < k->ninsts; i++)
		free(k->insts[i].target);
	free(k->insts);
	for (size_t i = 0; i < k->nlabels; i++)
		free(k->labels[i].name);
	free(k->labels);
	for (int i = 0; i < k->ncf; i++)
		free(k->cf[i].pending);
}

unsigned zas_assemble(const char *path, const char *src, size_t len, const zas_options_t *opt,
		      zm_module_t *out, FILE *diag)
{
	as_t as = {0};
	as.opt = opt;
	as.diag = diag;
	as.max_errors = opt->max_errors ? opt->max_errors : 50;
	as.files = xrealloc(NULL, sizeof(char *));
	as.files[0] = xstrndup(path, strlen(path));
	as.nfiles = 1;
	memset(out, 0, sizeof(*out));

	assemble_text(&as, src, len, 0);
	finish_kernel(&as);
	if (!as.nkerns && !as.errors)
		error_at(&as, (pos_t){0, 1, 1}, "no .kernel in the source");
	for (size_t i = 0; i < as.nkerns && !as.errors; i++)
		resolve_kernel(&as, &as.kerns[i]);
	if (as.errors > as.max_errors)
		fprintf(diag, "%s: %u more errors not shown\n", path, as.errors - as.max_errors);

	out->nkernels = (uint32_t)as.nkerns;
	out->kernels = xrealloc(NULL, (as.nkerns ? as.nkerns : 1) * sizeof(zm_kernel_t));
	for (size_t i = 0; i < as.nkerns; i++) {
		out->kernels[i] = as.kerns[i].k;
		free_kern(&as.kerns[i]);
	}
	free(as.kerns);
	out->files = as.files;
	out->nfiles = as.nfiles;
	out->has_debug_line = opt->debug_line;
	if (as.errors)
		zm_module_free(out);
	return as.errors;
}
