/* The back end of the SPIR-V front end: control flow, register allocation and
 * ZE-ISA encoding.
 *
 * Control flow (README.md, "SPIR-V front end"): OpenCL SPIR-V has no
 * structured control-flow markers, so the kernel's (reducible) CFG is laid
 * out in a loop-aware topological order and every lane carries the number of
 * the next block it must run in a register, `next`.  Each block is wrapped in
 *
 *     cmp.eq.f0 null next B ; (f0) if ; <block> ; next = successor ; endif
 *
 * so it runs for exactly the lanes that are there (and is skipped when there
 * are none: `if` jumps when the mask is empty), and each natural loop in
 *
 *     do ; <the loop's blocks> ; cmp.eq.f0 null next HEADER ; (f0) while
 *
 * so lanes that took a back edge run the loop again while the others wait.
 * Forward edges go forward in the order, so one pass handles any divergence;
 * lanes reconverge at the first block after a loop or after the blocks of a
 * branch, which is where barriers must be reached (OpenCL's rule that every
 * work item of a group reaches a barrier holds per thread then too).
 * Irreducible control flow is refused.
 *
 * Register allocation: every virtual register is a vector of the kernel's SIMD
 * width (one GRF in SIMD8, two in SIMD16, aligned).  Instructions write only
 * the lanes of their block, so a lane sees exactly the instructions of its own
 * path: liveness on the CFG is liveness per lane, and two values may share a
 * register when they are never live together on a path.  The interference
 * graph is coloured greedily in program order, copy-related values (phis)
 * preferring one register so that their copies vanish.  Running out of
 * registers fails the build (no spilling yet); the caller then retries in
 * SIMD8, which has twice the registers per value. */
#include "spv_internal.h"

#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/spirv.h>

#define MAX_CF_DEPTH 32 /* ZE-ISA control-flow stack entries */

/* ---- CFG ------------------------------------------------------------------------ */

static void add_unique(spv_ctx_t *c, uint32_t **list, uint32_t *n, uint32_t v)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*list)[i] == v)
			return;
	size_t cap = *n;
	uint32_t *p = spv_grow(c, NULL, &cap, *n + 1, sizeof(uint32_t));
	if (*n)
		memcpy(p, *list, *n * sizeof(uint32_t));
	p[(*n)++] = v;
	*list = p;
}

static void replace(uint32_t *list, uint32_t n, uint32_t from, uint32_t to)
{
	for (uint32_t i = 0; i < n; i++)
		if (list[i] == from)
			list[i] = to;
}

static int has_phis(const spv_ctx_t *c, const blk_t *b)
{
	return b->label && b->first < b->end && c->fi[b->first].opcode == SpvOpPhi;
}

void spv_cfg(spv_ctx_t *c)
{
	for (uint32_t i = 0; i < c->nblk; i++) {
		blk_t *b = &c->blk[i];
		b->nsucc = 0;
		b->succ = NULL;
		for (uint32_t t = 0; t < b->ntarg; t++)
			add_unique(c, &b->succ, &b->nsucc, b->targ[t]);
	}
	/* Reachability from the entry (the first block). */
	uint32_t *stack = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t)), sp = 0;
	c->blk[0].reachable = 1;
	stack[sp++] = 0;
	while (sp) {
		const blk_t *b = &c->blk[stack[--sp]];
		for (uint32_t s = 0; s < b->nsucc; s++)
			if (!c->blk[b->succ[s]].reachable) {
				c->blk[b->succ[s]].reachable = 1;
				stack[sp++] = b->succ[s];
			}
	}
	for (uint32_t i = 0; i < c->nblk; i++) {
		const blk_t *b = &c->blk[i];
		if (!b->reachable)
			continue;
		for (uint32_t s = 0; s < b->nsucc; s++)
			add_unique(c, &c->blk[b->succ[s]].pred, &c->blk[b->succ[s]].npred, i);
	}
	if (c->blk[0].npred)
		spv_fail(c, c->blk[0].word, "the entry block of kernel \"%s\" is the target of a branch", c->kernel_name);
	/* Split the edges into blocks with phis from blocks with several
	 * successors: the phi copies then run exactly for the lanes taking the
	 * edge, unpredicated. */
	const uint32_t nblk = c->nblk;
	for (uint32_t s = 0; s < nblk; s++) {
		if (!c->blk[s].reachable || !has_phis(c, &c->blk[s]))
			continue;
		for (uint32_t k = 0; k < c->blk[s].npred; k++) {
			const uint32_t p = c->blk[s].pred[k];
			if (c->blk[p].nsucc < 2)
				continue;
			c->blk = spv_grow(c, c->blk, &c->capblk, c->nblk + 1, sizeof(blk_t));
			const uint32_t e = c->nblk++;
			blk_t *E = &c->blk[e];
			memset(E, 0, sizeof(*E));
			E->word = c->blk[s].word;
			E->term = TERM_BR;
			E->ntarg = 1;
			E->targ = spv_alloc(c, sizeof(uint32_t));
			E->targ[0] = s;
			E->succ = spv_alloc(c, sizeof(uint32_t));
			E->succ[0] = s;
			E->nsucc = 1;
			E->pred = spv_alloc(c, sizeof(uint32_t));
			E->pred[0] = p;
			E->npred = 1;
			E->reachable = 1;
			E->split_from = (int32_t)p;
			E->loop = -1;
			replace(c->blk[p].targ, c->blk[p].ntarg, s, e);
			replace(c->blk[p].succ, c->blk[p].nsucc, s, e);
			c->blk[s].pred[k] = e;
		}
	}
	spv_rpo(c);
}

/* Reverse postorder of the blocks reachable from the entry (iterative DFS
 * over succ): c->rpo_list, c->nrpo and each block's rpo (-1: not reached). */
void spv_rpo(spv_ctx_t *c)
{
	const uint32_t entry = c->nrpo ? c->rpo_list[0] : 0;
	uint32_t *post = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t)), npost = 0;
	uint32_t *iter = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t));
	uint8_t *seen = spv_alloc(c, c->nblk + 1);
	uint32_t *stack = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t)), sp = 0;
	stack[sp++] = entry;
	seen[entry] = 1;
	while (sp) {
		const uint32_t b = stack[sp - 1];
		if (iter[b] < c->blk[b].nsucc) {
			const uint32_t s = c->blk[b].succ[iter[b]++];
			if (!seen[s]) {
				seen[s] = 1;
				stack[sp++] = s;
			}
		} else {
			post[npost++] = b;
			sp--;
		}
	}
	c->rpo_list = spv_alloc(c, (npost + 1) * sizeof(uint32_t));
	c->nrpo = npost;
	for (uint32_t i = 0; i < c->nblk; i++)
		c->blk[i].rpo = -1;
	for (uint32_t i = 0; i < npost; i++) {
		c->rpo_list[i] = post[npost - 1 - i];
		c->blk[c->rpo_list[i]].rpo = (int32_t)i;
	}
}

/* ---- dead code ------------------------------------------------------------------ */

static int partial_def(const inst_t *in)
{
	return in->d.k == O_V && ((in->pred && in->op != ZE_OP_SEL && in->op != ZE_OP_CMP) || in->d.sub > 0);
}

static void mark_use(uint32_t *uses, opnd_t o)
{
	if (o.k == O_V)
		uses[o.v]++;
}

/* Compares that only set a flag (no destination, or one nothing reads) that
 * no instruction reads before an unpredicated compare sets it again in the
 * same block.  (Flags may be read in a later block only through the code the
 * back end adds after this, so a flag is taken as live at the block's end.)
 * Within a block every instruction runs on the same channels, so an
 * unpredicated cmp rewrites the flag wherever an earlier one wrote it. */
static int dead_flag_writes(blk_t *b)
{
	int live[2] = {1, 1}, any = 0;
	for (size_t i = b->ncode; i-- > 0;) {
		inst_t *in = &b->code[i];
		if (in->op == ZE_OP_CMP && in->d.k == O_NULL && in->flag < 2 && !live[in->flag]) {
			memmove(in, in + 1, (b->ncode - i - 1) * sizeof(inst_t));
			b->ncode--;
			any = 1;
			continue;
		}
		if (in->op != ZE_OP_SEND && !ze_op_info(in->op)) {
			live[0] = live[1] = 1; /* not plain code: keep everything before */
			continue;
		}
		if (in->op == ZE_OP_CMP && !in->pred && in->flag < 2)
			live[in->flag] = 0;
		if (in->pred && in->flag < 2)
			live[in->flag] = 1;
	}
	return any;
}

static void dead_code(spv_ctx_t *c)
{
	uint32_t *uses = spv_alloc(c, (c->nvr + 1) * sizeof(uint32_t));
	for (int changed = 1; changed;) {
		changed = 0;
		memset(uses, 0, (c->nvr + 1) * sizeof(uint32_t));
		for (uint32_t r = 0; r < c->nrpo; r++) {
			const blk_t *b = &c->blk[c->rpo_list[r]];
			for (size_t i = 0; i < b->ncode; i++) {
				const inst_t *in = &b->code[i];
				for (int s = 0; s < 3; s++)
					mark_use(uses, in->s[s]);
				if (partial_def(in))
					mark_use(uses, in->d);
			}
			mark_use(uses, b->cond);
			mark_use(uses, b->cond_hi);
		}
		for (uint32_t r = 0; r < c->nrpo; r++) {
			blk_t *b = &c->blk[c->rpo_list[r]];
			size_t n = 0;
			for (size_t i = 0; i < b->ncode; i++) {
				inst_t *in = &b->code[i];
				int keep = 1;
				if (in->d.k == O_V && !uses[in->d.v]) {
					if (in->op == ZE_OP_SEND) {
						const uint32_t msg = ze_send_msg(in->desc);
						if (msg == ZE_MSG_LOAD || msg == ZE_MSG_SLM_LOAD)
							keep = 0;
						else
							in->d = o_null();
					} else if (in->op == ZE_OP_CMP && in->flag_live) {
						in->d = o_null();
						in->dt = 0;
					} else {
						keep = 0;
					}
				}
				if (keep)
					b->code[n++] = *in;
				else
					changed = 1;
			}
			b->ncode = n;
			if (dead_flag_writes(b))
				changed = 1;
		}
	}
}

/* ---- common subexpressions ------------------------------------------------------ */

/* Arithmetic without side effects: its result depends on its operands only. */
int spv_pure_op(uint8_t op)
{
	switch (op) {
	case ZE_OP_MOV: case ZE_OP_NOT: case ZE_OP_AND: case ZE_OP_OR: case ZE_OP_XOR: case ZE_OP_SHL:
	case ZE_OP_SHR: case ZE_OP_ASR: case ZE_OP_ADD: case ZE_OP_MUL: case ZE_OP_MAD: case ZE_OP_MIN:
	case ZE_OP_MAX: case ZE_OP_INV: case ZE_OP_SQRT: case ZE_OP_EXP: case ZE_OP_LOG:
		return 1;
	default:
		return 0;
	}
}

static opnd_t cse_map(const uint32_t *map, opnd_t o)
{
	if (o.k == O_V)
		while (map[o.v] != UINT32_MAX)
			o.v = map[o.v];
	return o;
}

static int same_opnd(opnd_t a, opnd_t b)
{
	return a.k == b.k && a.neg == b.neg && a.abs == b.abs && a.sub == b.sub && a.v == b.v;
}

/* A computation repeated in a block (address arithmetic of unrolled loops,
 * inlined helpers) reuses the first result.  Only values written once and
 * computed from values written once (or from registers nothing writes) take
 * part, so the first result holds the same value wherever the second is
 * read. */
static void common_subexpressions(spv_ctx_t *c)
{
	const uint32_t nv = c->nvr;
	uint32_t *defs = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	uint32_t *map = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (uint32_t v = 0; v <= nv; v++)
		map[v] = UINT32_MAX;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++)
			if (b->code[i].d.k == O_V && b->code[i].d.v < nv)
				defs[b->code[i].d.v]++;
	}
	int any = 0;
	size_t cap = 0;
	uint32_t *cand = NULL;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *b = &c->blk[c->rpo_list[r]];
		size_t n = 0, ncand = 0;
		for (size_t i = 0; i < b->ncode; i++) {
			inst_t in = b->code[i];
			for (int k = 0; k < 3; k++)
				in.s[k] = cse_map(map, in.s[k]);
			int ok = spv_pure_op(in.op) && !in.pred && in.d.k == O_V && in.d.sub == 0 && defs[in.d.v] == 1 &&
				 c->vr[in.d.v].size == 1;
			for (int k = 0; k < 3 && ok; k++) {
				const opnd_t o = in.s[k];
				if (o.k == O_V)
					ok = defs[o.v] == 1 && c->vr[o.v].size == 1;
				/* O_GRF (payload) and O_S (payload, arguments): never written;
				 * `next` is not referenced before the terminator code */
			}
			if (ok) {
				size_t k = 0;
				for (; k < ncand; k++) {
					const inst_t *p = &b->code[cand[k]];
					if (p->op == in.op && p->dt == in.dt && p->st == in.st && p->cmod == in.cmod &&
					    same_opnd(p->s[0], in.s[0]) && same_opnd(p->s[1], in.s[1]) && same_opnd(p->s[2], in.s[2]))
						break;
				}
				if (k < ncand) {
					map[in.d.v] = b->code[cand[k]].d.v;
					any = 1;
					continue; /* dropped */
				}
			}
			b->code[n] = in;
			if (ok) {
				cand = spv_grow(c, cand, &cap, ncand + 1, sizeof(uint32_t));
				cand[ncand++] = (uint32_t)n;
			}
			n++;
		}
		b->ncode = n;
	}
	if (!any)
		return;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++) {
			for (int k = 0; k < 3; k++)
				b->code[i].s[k] = cse_map(map, b->code[i].s[k]);
			if (b->code[i].d.k == O_V && (b->code[i].pred || b->code[i].d.sub))
				b->code[i].d = cse_map(map, b->code[i].d);
		}
		b->cond = cse_map(map, b->cond);
		b->cond_hi = cse_map(map, b->cond_hi);
	}
}

/* ---- conditions straight into the flag ------------------------------------------- */

/* A test `cmp.ne.fX null v 0` of a boolean made of `&&` and `||` (OpSelect of
 * bools: a `sel` on a flag with one immediate side; OpLogicalAnd/Or: `and`,
 * `or`) over comparisons becomes a chain of compares into fX: the first one
 * unpredicated, each next one predicated on fX itself.  A predicated cmp
 * writes only its enabled lanes (docs/isa.md §3.2), so `(fX) cmp` is an AND
 * (lanes where fX is clear stay clear) and `(!fX) cmp` an OR (lanes where it
 * is set stay set).  The booleans, their `sel`s and the compares that fed the
 * `sel`s' flags are then dead (dead_code).  Every compare of the chain reads
 * its operands at the test, so each must hold there what it held where the
 * original instruction read it (nothing in between writes it). */

#define CHAIN_MAX 8

static int writes_flag(const inst_t *in, uint32_t f);

struct chain {
	uint32_t n;
	inst_t step[CHAIN_MAX]; /* compares; step[k > 0] predicated: pinv 0 AND, 1 OR */
};

struct chain_ctx {
	const spv_ctx_t *c;
	const blk_t *b;
	size_t at;            /* the test's position */
	const uint32_t *defs; /* definitions per vreg */
	const uint32_t *uses; /* reads per vreg (only a matter of profit: stale counts are fine) */
};

static int plain_v(opnd_t o)
{
	return o.k == O_V && !o.neg && !o.abs && o.sub == 0;
}

/* o, as instruction `from` reads it, still holds the same at the test. */
static int unchanged(const struct chain_ctx *cc, size_t from, opnd_t o)
{
	if (o.k == O_NULL || o.k == O_I)
		return 1;
	for (size_t i = from; i < cc->at; i++) {
		const opnd_t d = cc->b->code[i].d;
		if (d.k == o.k && d.v == o.v)
			return 0;
	}
	return 1;
}

/* The position of the only definition of v, when it is in this block before
 * the test; -1 otherwise. */
static ptrdiff_t chain_def(const struct chain_ctx *cc, opnd_t v)
{
	if (!plain_v(v) || v.v >= cc->c->nvr || cc->defs[v.v] != 1 || cc->c->vr[v.v].size != 1)
		return -1;
	for (size_t i = cc->at; i-- > 0;) {
		const inst_t *x = &cc->b->code[i];
		if (x->d.k == O_V && x->d.v == v.v)
			return x->d.sub == 0 ? (ptrdiff_t)i : -1;
	}
	return -1;
}

static inst_t chain_cmp(uint8_t cmod, uint8_t st, opnd_t a, opnd_t b)
{
	return (inst_t){.op = ZE_OP_CMP, .cmod = cmod, .st = st, .d = o_null(), .s = {a, b}, .flag_live = 1};
}

/* An unpredicated two-operand compare whose operands still hold at the test. */
static int chain_cmp_ok(const struct chain_ctx *cc, size_t i)
{
	const inst_t *x = &cc->b->code[i];
	return x->op == ZE_OP_CMP && !x->pred && x->cmod != ZE_CMOD_NONE && x->s[2].k == O_NULL &&
	       unchanged(cc, i, x->s[0]) && unchanged(cc, i, x->s[1]);
}

static int chain_push(struct chain *ch, inst_t in, int pred, int inv)
{
	if (ch->n == CHAIN_MAX)
		return 0;
	in.pred = (uint8_t)pred;
	in.pinv = (uint8_t)inv;
	ch->step[ch->n++] = in;
	return 1;
}

/* One compare giving v != 0: v's own compare when v is read only once, else
 * the test of v itself. */
static inst_t chain_step(const struct chain_ctx *cc, opnd_t v)
{
	const ptrdiff_t i = chain_def(cc, v);
	if (i >= 0 && cc->uses[v.v] == 1 && cc->b->code[i].op == ZE_OP_CMP && chain_cmp_ok(cc, (size_t)i)) {
		const inst_t *x = &cc->b->code[i];
		return chain_cmp(x->cmod, x->st, x->s[0], x->s[1]);
	}
	return chain_cmp(ZE_CMOD_NE, ZE_TYPE_UD, v, o_imm(0));
}

/* Whether v is a boolean (every lane 0 or ~0). */
static int chain_bool(const struct chain_ctx *cc, opnd_t v, int depth)
{
	if (v.k == O_I)
		return !v.neg && !v.abs && (v.v == 0 || v.v == 0xffffffffu);
	const ptrdiff_t i = chain_def(cc, v);
	if (i < 0 || depth > 4)
		return 0;
	const inst_t *x = &cc->b->code[i];
	if (x->op == ZE_OP_CMP)
		return 1; /* writes its mask: 0xffffffff / 0 */
	if ((x->op == ZE_OP_SEL && x->pred) || ((x->op == ZE_OP_AND || x->op == ZE_OP_OR) && !x->pred))
		return chain_bool(cc, x->s[0], depth + 1) && chain_bool(cc, x->s[1], depth + 1);
	return 0;
}

static uint8_t invert_cmod(uint8_t cmod)
{
	switch (cmod) {
	case ZE_CMOD_EQ: return ZE_CMOD_NE;
	case ZE_CMOD_NE: return ZE_CMOD_EQ;
	case ZE_CMOD_LT: return ZE_CMOD_GE;
	case ZE_CMOD_GE: return ZE_CMOD_LT;
	case ZE_CMOD_LE: return ZE_CMOD_GT;
	case ZE_CMOD_GT: return ZE_CMOD_LE;
	default: return ZE_CMOD_NONE;
	}
}

/* The compares that leave what flag f holds at b->code[i]: an unpredicated
 * compare, then any compares predicated on f itself, and no other write of f
 * in between; each one's operands hold the same at the test. */
static int flag_steps(const struct chain_ctx *cc, size_t i, uint32_t f, struct chain *fc)
{
	size_t idx[CHAIN_MAX];
	uint32_t n = 0;
	for (size_t j = i; j-- > 0;) {
		const inst_t *x = &cc->b->code[j];
		if (!writes_flag(x, f))
			continue;
		if (n == CHAIN_MAX || x->cmod == ZE_CMOD_NONE || x->s[2].k != O_NULL ||
		    (x->pred && x->flag != f) || !unchanged(cc, j, x->s[0]) || !unchanged(cc, j, x->s[1]))
			return 0;
		idx[n++] = j;
		if (!x->pred)
			break;
		if (j == 0)
			return 0;
	}
	if (!n || cc->b->code[idx[n - 1]].pred)
		return 0;
	fc->n = 0;
	for (uint32_t k = n; k-- > 0;) {
		const inst_t *x = &cc->b->code[idx[k]];
		chain_push(fc, chain_cmp(x->cmod, x->st, x->s[0], x->s[1]), x->pred, x->pinv);
	}
	return 1;
}

/* Appends compares leaving (v != 0) in the flag. */
static int chain_expand(const struct chain_ctx *cc, opnd_t v, struct chain *ch, int depth)
{
	const uint32_t n0 = ch->n;
	const ptrdiff_t i = depth < 4 && plain_v(v) && cc->uses[v.v] == 1 ? chain_def(cc, v) : -1;
	const inst_t *x = i >= 0 ? &cc->b->code[i] : NULL;
	if (x && x->op == ZE_OP_SEL && x->pred) {
		/* v = F' ? s0 : s1, F' = the flag (inverted when pinv), one side an
		 * immediate K, the other T:  T, K == 0: F' && T; T, K != 0: !F' || T;
		 * K == 0, T: !F' && T; K != 0, T: F' || T */
		int t_first;
		if (plain_v(x->s[0]) && x->s[1].k == O_I && !x->s[1].neg && !x->s[1].abs)
			t_first = 1;
		else if (plain_v(x->s[1]) && x->s[0].k == O_I && !x->s[0].neg && !x->s[0].abs)
			t_first = 0;
		else
			goto leaf;
		const opnd_t T = x->s[t_first ? 0 : 1];
		const uint32_t K = x->s[t_first ? 1 : 0].v;
		const int is_or = K != 0;
		const int neg_left = x->pinv ^ (t_first ? is_or : !is_or);
		if (!unchanged(cc, (size_t)i, T))
			goto leaf;
		struct chain fc;
		if (!flag_steps(cc, (size_t)i, x->flag, &fc))
			goto leaf;
		const inst_t *F = &fc.step[0];
		if (fc.n > 1) { /* the flag is itself a chain (already rewritten) */
			if (neg_left)
				goto leaf;
			for (uint32_t k = 0; k < fc.n; k++)
				if (!chain_push(ch, fc.step[k], fc.step[k].pred, fc.step[k].pinv))
					goto leaf;
		} else if (!neg_left && F->cmod == ZE_CMOD_NE && (F->st == ZE_TYPE_UD || F->st == ZE_TYPE_D) &&
			   plain_v(F->s[0]) && F->s[1].k == O_I && F->s[1].v == 0) {
			if (!chain_expand(cc, F->s[0], ch, depth + 1))
				goto leaf;
		} else {
			uint8_t cmod = F->cmod;
			if (neg_left) {
				if (F->st == ZE_TYPE_F && cmod != ZE_CMOD_EQ && cmod != ZE_CMOD_NE)
					goto leaf; /* !(a < b) is not a >= b with a NaN */
				cmod = invert_cmod(cmod);
			}
			if (!chain_push(ch, chain_cmp(cmod, F->st, F->s[0], F->s[1]), 0, 0))
				goto leaf;
		}
		if (!chain_push(ch, chain_step(cc, T), 1, is_or))
			goto leaf;
		return 1;
	}
	if (x && (x->op == ZE_OP_AND || x->op == ZE_OP_OR) && !x->pred && plain_v(x->s[0]) && plain_v(x->s[1]) &&
	    (x->st == ZE_TYPE_UD || x->st == ZE_TYPE_D) && unchanged(cc, (size_t)i, x->s[0]) &&
	    unchanged(cc, (size_t)i, x->s[1])) {
		/* (a | b) != 0 is a != 0 || b != 0; (a & b) != 0 is a != 0 && b != 0
		 * when either is a boolean */
		const int is_or = x->op == ZE_OP_OR;
		if (!is_or && !chain_bool(cc, x->s[0], 0) && !chain_bool(cc, x->s[1], 0))
			goto leaf;
		if (!chain_expand(cc, x->s[0], ch, depth + 1) || !chain_push(ch, chain_step(cc, x->s[1]), 1, is_or))
			goto leaf;
		return 1;
	}
	if (x && x->op == ZE_OP_CMP && chain_cmp_ok(cc, (size_t)i))
		return chain_push(ch, chain_cmp(x->cmod, x->st, x->s[0], x->s[1]), 0, 0);
leaf:
	ch->n = n0;
	return chain_push(ch, chain_cmp(ZE_CMOD_NE, ZE_TYPE_UD, v, o_imm(0)), 0, 0);
}

static int is_bool_test(const inst_t *in)
{
	return in->op == ZE_OP_CMP && in->cmod == ZE_CMOD_NE && !in->pred && in->d.k == O_NULL &&
	       (in->st == ZE_TYPE_UD || in->st == ZE_TYPE_D) && plain_v(in->s[0]) && in->s[1].k == O_I &&
	       in->s[1].v == 0 && !in->s[1].neg && !in->s[1].abs && in->s[2].k == O_NULL;
}

/* The chain for the test at b->code[at], or 0 when it is the test itself. */
static int chain_for(const spv_ctx_t *c, const blk_t *b, size_t at, const uint32_t *defs, const uint32_t *uses,
		     struct chain *ch)
{
	const struct chain_ctx cc = {.c = c, .b = b, .at = at, .defs = defs, .uses = uses};
	const inst_t *t = &b->code[at];
	ch->n = 0;
	chain_expand(&cc, t->s[0], ch, 0);
	if (ch->n == 1 && ch->step[0].cmod == ZE_CMOD_NE && same_opnd(ch->step[0].s[0], t->s[0]) &&
	    ch->step[0].s[1].k == O_I && ch->step[0].s[1].v == 0)
		return 0;
	for (uint32_t k = 0; k < ch->n; k++) {
		ch->step[k].flag = t->flag;
		ch->step[k].loc = t->loc;
	}
	return 1;
}

/* Replaces b->code[at] by the chain. */
static void chain_insert(spv_ctx_t *c, blk_t *b, size_t at, const struct chain *ch)
{
	const size_t n = b->ncode;
	b->code = spv_grow(c, b->code, &b->capcode, n + ch->n - 1, sizeof(inst_t));
	memmove(&b->code[at + ch->n], &b->code[at + 1], (n - at - 1) * sizeof(inst_t));
	memcpy(&b->code[at], ch->step, ch->n * sizeof(inst_t));
	b->ncode = n + ch->n - 1;
}

static void count_defs_uses(const spv_ctx_t *c, uint32_t *defs, uint32_t *uses)
{
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++) {
			const inst_t *in = &b->code[i];
			if (in->d.k == O_V && in->d.v < c->nvr)
				defs[in->d.v]++;
			for (int s = 0; s < 3; s++)
				if (in->s[s].k == O_V && in->s[s].v < c->nvr)
					uses[in->s[s].v]++;
			if (partial_def(in) && in->d.v < c->nvr)
				uses[in->d.v]++;
		}
		if (b->cond.k == O_V && b->cond.v < c->nvr)
			uses[b->cond.v]++;
		if (b->cond_hi.k == O_V && b->cond_hi.v < c->nvr)
			uses[b->cond_hi.v]++;
	}
}

/* Every test of a boolean in the kernel. */
static void flag_chains(spv_ctx_t *c)
{
	uint32_t *defs = spv_alloc(c, (c->nvr + 1) * sizeof(uint32_t));
	uint32_t *uses = spv_alloc(c, (c->nvr + 1) * sizeof(uint32_t));
	count_defs_uses(c, defs, uses);
	int any = 0;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++) {
			struct chain ch;
			if (!is_bool_test(&b->code[i]) || !chain_for(c, b, i, defs, uses, &ch))
				continue;
			chain_insert(c, b, i, &ch);
			i += ch.n - 1;
			any = 1;
		}
	}
	if (any)
		dead_code(c);
}

/* ---- if-conversion ------------------------------------------------------------- */

/* Whether a block of a diamond can run predicated in its branch block: plain
 * arithmetic that neither reads nor writes a flag, loads (which are then
 * predicated, so that disabled lanes touch no memory), and phi copies.  Every
 * other value it writes must be written nowhere else (it is then computed on
 * every lane, harmlessly). */
static int convertible(const spv_ctx_t *c, const blk_t *x, const uint32_t *defs, size_t *count)
{
	for (size_t i = 0; i < x->ncode; i++) {
		const inst_t *in = &x->code[i];
		if (in->pred || in->op == ZE_OP_CMP || in->op == ZE_OP_SEL)
			return 0;
		if (in->op == ZE_OP_SEND) {
			const uint32_t msg = ze_send_msg(in->desc);
			if ((msg != ZE_MSG_LOAD && msg != ZE_MSG_SLM_LOAD) || in->d.k != O_V || in->d.sub)
				return 0;
		} else if (!ze_op_info(in->op)) {
			return 0;
		}
		if (in->d.k != O_V || in->d.sub || c->vr[in->d.v].size != 1)
			return 0;
		if (!in->phi_copy && defs[in->d.v] != 1)
			return 0;
		if (in->phi_copy && in->op != ZE_OP_MOV)
			return 0;
	}
	*count += x->ncode;
	return 1;
}

static opnd_t plain_src(spv_ctx_t *c, blk_t *a, opnd_t o)
{
	if (o.k == O_V && !o.neg && !o.abs)
		return o;
	if (o.k == O_I && !o.neg && !o.abs)
		return o;
	inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(spv_new_vreg(c, 1)), .s = {o}};
	spv_emit_to(c, a, &mv);
	return mv.d;
}

/* Whether side S of a diamond loads into v. */
static int loaded_on(const blk_t *S, uint32_t v)
{
	for (size_t i = 0; i < S->ncode; i++)
		if (S->code[i].op == ZE_OP_SEND && S->code[i].d.k == O_V && S->code[i].d.v == v)
			return 1;
	return 0;
}

/* Whether v is written in X or Y (any instruction, phi copies included). */
static int written_in(const blk_t *X, const blk_t *Y, uint32_t v)
{
	for (int side = 0; side < 2; side++) {
		const blk_t *S = side ? Y : X;
		for (size_t i = 0; i < S->ncode; i++)
			if (S->code[i].d.k == O_V && S->code[i].d.v == v)
				return 1;
	}
	return 0;
}

/* What the destination v of a load on side `side` of a diamond holds before
 * the (predicated) load: the value the first phi taking v from this side
 * takes from the other side, when that is an immediate or a value the diamond
 * does not write (so it holds the same at the start of the converted code as
 * at the end of the other side), else 0.  The phi then is just v: on the
 * other side's lanes the load leaves v as it was.  Values v is read by on its
 * own side are computed on every lane, whatever the disabled lanes hold. */
static opnd_t load_init(const spv_ctx_t *c, const blk_t *X, const blk_t *Y, int side, uint32_t v)
{
	(void)c;
	const blk_t *S = side ? Y : X, *O = side ? X : Y;
	for (size_t i = 0; i < S->ncode; i++) {
		const inst_t *pc = &S->code[i];
		if (!pc->phi_copy || pc->s[0].k != O_V || pc->s[0].v != v || pc->s[0].neg || pc->s[0].abs ||
		    pc->d.k != O_V)
			continue;
		opnd_t other = pc->d; /* no copy on the other side: the phi keeps its value */
		for (size_t k = 0; k < O->ncode; k++)
			if (O->code[k].phi_copy && O->code[k].d.k == O_V && O->code[k].d.v == pc->d.v)
				other = O->code[k].s[0];
		if (other.neg || other.abs)
			break;
		if (other.k == O_I || other.k == O_S || other.k == O_GRF || (other.k == O_V && !written_in(X, Y, other.v)))
			return other;
		break;
	}
	return o_imm(0);
}

/* Small if/else diamonds (A -> X, Y -> J; typically `c ? a[i] : 0`, whose
 * else side is an edge block of phi copies) become straight-line code in A:
 * both sides computed, their loads predicated on the condition, the phis one
 * `sel` each.  Fewer blocks: no guards, and the scheduler sees the loads. */
static void if_convert(spv_ctx_t *c)
{
	uint32_t *defs = spv_alloc(c, (c->nvr + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++)
			if (b->code[i].d.k == O_V && b->code[i].d.v < c->nvr)
				defs[b->code[i].d.v]++;
	}
	const uint32_t entry = c->rpo_list[0];
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t ai = c->rpo_list[r];
		blk_t *A = &c->blk[ai];
		if (!A->reachable || A->term != TERM_CBR || A->nsucc != 2 || A->cond.k != O_V || A->cond.neg ||
		    A->cond.abs)
			continue;
		const uint32_t xi = A->targ[0], yi = A->targ[1];
		blk_t *X = &c->blk[xi], *Y = &c->blk[yi];
		if (xi == yi || xi == entry || yi == entry || xi == ai || yi == ai)
			continue;
		if (X->npred != 1 || Y->npred != 1 || X->term != TERM_BR || Y->term != TERM_BR || X->nsucc != 1 ||
		    Y->nsucc != 1 || X->succ[0] != Y->succ[0])
			continue;
		const uint32_t ji = X->succ[0];
		blk_t *J = &c->blk[ji];
		if (ji == ai || ji == xi || ji == yi || J->npred != 2)
			continue;
		size_t count = 0;
		if (!convertible(c, X, defs, &count) || !convertible(c, Y, defs, &count) || count > 24)
			continue;
		/* A: the condition in f0, then both sides, then the phis */
		inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_NE, .st = ZE_TYPE_UD, .d = o_null(),
			      .s = {A->cond, o_imm(0)}, .flag_live = 1};
		spv_emit_to(c, A, &cmp);
		for (int side = 0; side < 2; side++) {
			const blk_t *S = side ? Y : X;
			for (size_t i = 0; i < S->ncode; i++) {
				inst_t in = S->code[i];
				if (in.phi_copy)
					continue;
				if (in.op == ZE_OP_SEND) {
					inst_t z = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = in.d,
						    .s = {load_init(c, X, Y, side, in.d.v)}};
					spv_emit_to(c, A, &z);
					in.pred = 1;
					in.pinv = (uint8_t)side;
					in.flag = 0;
				}
				spv_emit_to(c, A, &in);
			}
		}
		for (int side = 0; side < 2; side++) {
			const blk_t *S = side ? Y : X, *O = side ? X : Y;
			for (size_t i = 0; i < S->ncode; i++) {
				if (!S->code[i].phi_copy)
					continue;
				const opnd_t p = S->code[i].d;
				opnd_t v[2] = {p, p}; /* X's value, Y's value */
				v[side] = S->code[i].s[0];
				int seen = 0;
				for (size_t k = 0; k < O->ncode; k++)
					if (O->code[k].phi_copy && O->code[k].d.v == p.v) {
						v[!side] = O->code[k].s[0];
						seen = 1;
					}
				if (side && seen)
					continue; /* done from X's side */
				/* a load's destination that starts as the other side's value
				 * (load_init) already is the phi's value on every lane */
				for (int l = 0; l < 2; l++)
					if (v[l].k == O_V && !v[l].neg && !v[l].abs && v[!l].k != O_NULL &&
					    loaded_on(l ? Y : X, v[l].v) &&
					    same_opnd(load_init(c, X, Y, l, v[l].v), v[!l])) {
						v[!l] = v[l];
						break;
					}
				if (v[0].k == O_V && same_opnd(v[0], v[1])) {
					inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = p,
						     .s = {v[0]}, .phi_copy = 1};
					if (p.k == O_V && c->vr[p.v].size == 1 && c->vr[v[0].v].size == 1)
						c->vr[p.v].hint = v[0].v;
					spv_emit_to(c, A, &mv);
					continue;
				}
				v[0] = plain_src(c, A, v[0]);
				v[1] = plain_src(c, A, v[1]);
				if (v[0].k == O_I && v[1].k == O_I) { /* sel takes one immediate */
					inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD,
						     .d = o_v(spv_new_vreg(c, 1)), .s = {v[0]}};
					spv_emit_to(c, A, &mv);
					v[0] = mv.d;
				}
				inst_t sl = {.op = ZE_OP_SEL, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .pred = 1, .flag = 0,
					     .d = p, .s = {v[0], v[1]}, .phi_copy = 1};
				spv_emit_to(c, A, &sl);
			}
		}
		A->term = TERM_BR;
		A->ntarg = 1;
		A->targ[0] = ji;
		A->nsucc = 1;
		A->succ[0] = ji;
		A->cond = o_null();
		J->npred = 1;
		J->pred[0] = ai;
		X->reachable = Y->reachable = 0;
		X->ncode = Y->ncode = 0;
	}
	flag_chains(c);
}

/* ---- vector loads ------------------------------------------------------------------ */

struct def_site {
	int32_t blk; /* block index, -1: none or several */
	uint32_t at;
};

/* The address of a load as base + constant: `add base, imm` (either order)
 * written once, else the address itself + 0. */
static void addr_form(const spv_ctx_t *c, const struct def_site *ds, opnd_t a, opnd_t *base, uint32_t *off)
{
	*base = a;
	*off = 0;
	if (a.k != O_V || a.sub || ds[a.v].blk < 0)
		return;
	const inst_t *in = &c->blk[ds[a.v].blk].code[ds[a.v].at];
	if (in->d.k != O_V || in->d.v != a.v || in->op != ZE_OP_ADD || in->pred || in->dt != ZE_TYPE_UD || in->st != ZE_TYPE_UD || in->s[2].k != O_NULL)
		return;
	for (int k = 0; k < 2; k++) {
		const opnd_t x = in->s[k], y = in->s[1 - k];
		if (y.k == O_I && !y.neg && !y.abs && x.k == O_V && !x.neg && !x.abs && !x.sub) {
			*base = x;
			*off = y.v;
			return;
		}
	}
}

static int is_scalar_load(const inst_t *in)
{
	if (in->op != ZE_OP_SEND || in->pred || in->d.k != O_V || in->d.sub || ze_send_vsize(in->desc) != 1 ||
	    (in->desc & SPV_DESC_DYN))
		return 0; /* (a run-time base: element 1's address may carry into the high dword) */
	const uint32_t msg = ze_send_msg(in->desc);
	return msg == ZE_MSG_LOAD || msg == ZE_MSG_SLM_LOAD;
}

/* Loads of one block from base + o, base + o + 4, ... (2-4 of them, same
 * message and buffer, no store, atomic, fence or barrier of that memory in
 * between) become one `send.load.vN` at the first of them, when the lowest
 * address is known there; their values become the elements. */
static void vector_loads(spv_ctx_t *c)
{
	const uint32_t nv = c->nvr;
	struct def_site *ds = spv_alloc(c, (nv + 1) * sizeof(*ds));
	uint32_t *ndef = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		const blk_t *b = &c->blk[bi];
		for (size_t i = 0; i < b->ncode; i++)
			if (b->code[i].d.k == O_V && b->code[i].d.v < nv) {
				const uint32_t v = b->code[i].d.v;
				ds[v] = (struct def_site){++ndef[v] == 1 ? (int32_t)bi : -1, (uint32_t)i};
			}
	}
	for (uint32_t v = 0; v < nv; v++)
		if (ndef[v] != 1)
			ds[v].blk = -1;
	opnd_t *map = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
	int any = 0;
	/* per block, the loads merged away: removed only at the end, so that the
	 * definition sites (ds) stay valid while other blocks are looked at */
	uint8_t **gone_of = spv_alloc(c, (c->nblk + 1) * sizeof(uint8_t *));
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		blk_t *b = &c->blk[bi];
		uint8_t *gone = NULL;
		for (size_t i = 0; i < b->ncode; i++) {
			const inst_t *first = &b->code[i];
			if (!is_scalar_load(first) || (gone && gone[i]) || c->vr[first->d.v].size != 1 || ndef[first->d.v] != 1)
				continue;
			opnd_t base;
			uint32_t off0;
			addr_form(c, ds, first->s[0], &base, &off0);
			/* members: loads after it from base + off0 + 4k, until an ordering send */
			size_t member[4] = {i, 0, 0, 0};
			uint32_t have = 1u; /* bit k: offset off0 + 4k found */
			for (size_t j = i + 1; j < b->ncode; j++) {
				const inst_t *x = &b->code[j];
				if (x->op == ZE_OP_SEND && !is_scalar_load(x) && ze_send_msg(x->desc) != ZE_MSG_LOAD &&
				    ze_send_msg(x->desc) != ZE_MSG_SLM_LOAD)
					break; /* a store, atomic, fence, barrier: stop here */
				if (!is_scalar_load(x) || (gone && gone[j]) || x->desc != first->desc ||
				    !(x->s[2].k == first->s[2].k && x->s[2].v == first->s[2].v && x->s[2].sub == first->s[2].sub) ||
				    c->vr[x->d.v].size != 1 || ndef[x->d.v] != 1)
					continue;
				opnd_t xb;
				uint32_t xo;
				addr_form(c, ds, x->s[0], &xb, &xo);
				if (xb.k != base.k || xb.v != base.v || xo < off0 || (xo - off0) % 4 || (xo - off0) / 4 >= 4)
					continue;
				const uint32_t k = (xo - off0) / 4;
				if (!(have & (1u << k))) {
					have |= 1u << k;
					member[k] = j;
				}
			}
			uint32_t n = 0;
			while (n < 4 && (have & (1u << n)))
				n++;
			if (n < 2)
				continue;
			/* one load of n dwords at the first one's address */
			inst_t vl = *first;
			vl.desc = ze_send_desc(ze_send_msg(first->desc), 0, n);
			vl.d = o_v(spv_new_vreg(c, n));
			if (!gone)
				gone = spv_alloc(c, b->ncode + 1);
			for (uint32_t k = 0; k < n; k++) {
				opnd_t e = vl.d;
				e.sub = (uint8_t)k;
				map[b->code[member[k]].d.v] = e;
				if (k)
					gone[member[k]] = 1;
			}
			b->code[i] = vl;
			any = 1;
		}
		gone_of[bi] = gone;
	}
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		blk_t *b = &c->blk[bi];
		const uint8_t *gone = gone_of[bi];
		if (!gone)
			continue;
		size_t m = 0;
		for (size_t i = 0; i < b->ncode; i++)
			if (!gone[i])
				b->code[m++] = b->code[i];
		b->ncode = m;
	}
	if (!any)
		return;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t i = 0; i < b->ncode; i++)
			for (int k = 0; k < 3; k++) {
				const opnd_t o = b->code[i].s[k];
				if (o.k == O_V && o.v < nv && map[o.v].k == O_V && !o.sub) {
					opnd_t e = map[o.v];
					e.neg = o.neg;
					e.abs = o.abs;
					b->code[i].s[k] = e;
				}
			}
		if (b->cond.k == O_V && b->cond.v < nv && map[b->cond.v].k == O_V)
			b->cond = map[b->cond.v];
		if (b->cond_hi.k == O_V && b->cond_hi.v < nv && map[b->cond_hi.v].k == O_V)
			b->cond_hi = map[b->cond_hi.v];
	}
}

/* ---- straight-line chains ------------------------------------------------------- */

/* Append B to A where A's only successor is B and B's only predecessor A
 * (inlined calls and the kernel wrapper leave many such chains): fewer blocks,
 * fewer guards. */
static void merge_blocks(spv_ctx_t *c)
{
	const uint32_t entry = c->rpo_list[0];
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *A = &c->blk[c->rpo_list[r]];
		if (!A->reachable)
			continue;
		while (A->term == TERM_BR && A->nsucc == 1) {
			const uint32_t bi = A->succ[0];
			blk_t *B = &c->blk[bi];
			if (B == A || B->npred != 1 || bi == entry)
				break;
			for (size_t k = 0; k < B->ncode; k++)
				spv_emit_to(c, A, &B->code[k]);
			A->term = B->term;
			A->cond = B->cond;
			A->cond_hi = B->cond_hi;
			A->sel64 = B->sel64;
			A->ntarg = B->ntarg;
			A->targ = B->targ;
			A->cases = B->cases;
			A->nsucc = B->nsucc;
			A->succ = B->succ;
			const uint32_t ai = (uint32_t)(A - c->blk);
			for (uint32_t s = 0; s < B->nsucc; s++)
				replace(c->blk[B->succ[s]].pred, c->blk[B->succ[s]].npred, bi, ai);
			B->reachable = 0;
			B->ncode = 0;
		}
	}
	uint32_t n = 0;
	for (uint32_t r = 0; r < c->nrpo; r++)
		if (c->blk[c->rpo_list[r]].reachable)
			c->rpo_list[n++] = c->rpo_list[r];
	c->nrpo = n;
	for (uint32_t i = 0; i < c->nblk; i++)
		c->blk[i].rpo = -1;
	for (uint32_t r = 0; r < n; r++)
		c->blk[c->rpo_list[r]].rpo = (int32_t)r;
}

/* ---- dominators, loops, order --------------------------------------------------- */

static int32_t intersect(const spv_ctx_t *c, int32_t a, int32_t b)
{
	while (a != b) {
		while (c->blk[a].rpo > c->blk[b].rpo)
			a = c->blk[a].idom;
		while (c->blk[b].rpo > c->blk[a].rpo)
			b = c->blk[b].idom;
	}
	return a;
}

static void dominators(spv_ctx_t *c)
{
	for (uint32_t i = 0; i < c->nblk; i++)
		c->blk[i].idom = -1;
	const uint32_t entry = c->rpo_list[0];
	c->blk[entry].idom = (int32_t)entry;
	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t r = 1; r < c->nrpo; r++) {
			blk_t *b = &c->blk[c->rpo_list[r]];
			int32_t d = -1;
			for (uint32_t p = 0; p < b->npred; p++) {
				const int32_t q = (int32_t)b->pred[p];
				if (c->blk[q].idom < 0)
					continue;
				d = d < 0 ? q : intersect(c, q, d);
			}
			if (d != b->idom) {
				b->idom = d;
				changed = 1;
			}
		}
	}
}

static int dominates(const spv_ctx_t *c, uint32_t a, uint32_t b)
{
	for (int32_t x = (int32_t)b;; x = c->blk[x].idom) {
		if ((uint32_t)x == a)
			return 1;
		if (c->blk[x].idom == x || c->blk[x].idom < 0)
			return 0;
	}
}

static void find_loops(spv_ctx_t *c)
{
	c->loops = NULL;
	c->nloops = 0;
	size_t cap = 0;
	uint32_t *work = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t));
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t h = c->rpo_list[r];
		const blk_t *H = &c->blk[h];
		int32_t li = -1;
		for (uint32_t p = 0; p < H->npred; p++) {
			const uint32_t u = H->pred[p];
			if (c->blk[u].rpo < H->rpo)
				continue; /* a forward edge */
			if (!dominates(c, h, u))
				spv_fail(c, c->blk[u].word ? c->blk[u].word : H->word,
					 "kernel \"%s\": irreducible control flow (a loop entered other than through its "
					 "header) is not supported", c->kernel_name);
			if (li < 0) {
				c->loops = spv_grow(c, c->loops, &cap, c->nloops + 1, sizeof(loop_t));
				li = (int32_t)c->nloops++;
				loop_t *L = &c->loops[li];
				memset(L, 0, sizeof(*L));
				L->header = h;
				L->parent = -1;
				L->in = spv_alloc(c, c->nblk);
				L->in[h] = 1;
			}
			/* The natural loop of the back edge u -> h. */
			loop_t *L = &c->loops[li];
			uint32_t n = 0;
			if (!L->in[u]) {
				L->in[u] = 1;
				work[n++] = u;
			}
			while (n) {
				const blk_t *x = &c->blk[work[--n]];
				for (uint32_t q = 0; q < x->npred; q++)
					if (!L->in[x->pred[q]]) {
						L->in[x->pred[q]] = 1;
						work[n++] = x->pred[q];
					}
			}
		}
	}
	/* Any other retreating edge makes the graph irreducible. */
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const blk_t *b = &c->blk[c->rpo_list[r]];
		for (uint32_t s = 0; s < b->nsucc; s++) {
			const blk_t *t = &c->blk[b->succ[s]];
			if (t->rpo <= b->rpo && !dominates(c, b->succ[s], c->rpo_list[r]))
				spv_fail(c, t->word, "kernel \"%s\": irreducible control flow is not supported", c->kernel_name);
		}
	}
	/* Nesting: a loop's parent is the smallest other loop holding its header.
	 * Loops were found in RPO of their headers, so outer loops come first. */
	uint32_t *size = spv_alloc(c, (c->nloops + 1) * sizeof(uint32_t));
	for (uint32_t l = 0; l < c->nloops; l++)
		for (uint32_t i = 0; i < c->nblk; i++)
			size[l] += c->loops[l].in[i];
	for (uint32_t l = 0; l < c->nloops; l++) {
		int32_t best = -1;
		for (uint32_t o = 0; o < c->nloops; o++)
			if (o != l && c->loops[o].in[c->loops[l].header] && size[o] > size[l] &&
			    (best < 0 || size[o] < size[best]))
				best = (int32_t)o;
		c->loops[l].parent = best;
	}
	for (uint32_t l = 0; l < c->nloops; l++) {
		uint32_t d = 1;
		for (int32_t p = c->loops[l].parent; p >= 0; p = c->loops[p].parent)
			d++;
		c->loops[l].depth = d;
		if (d + 1 > MAX_CF_DEPTH)
			spv_fail(c, c->blk[c->loops[l].header].word, "loops nested %u deep: the device's control-flow "
				 "stack holds %u entries", d, MAX_CF_DEPTH);
	}
	for (uint32_t i = 0; i < c->nblk; i++) {
		int32_t best = -1;
		for (uint32_t l = 0; l < c->nloops; l++)
			if (c->loops[l].in[i] && (best < 0 || size[l] < size[best]))
				best = (int32_t)l;
		c->blk[i].loop = best;
	}
}

/* The item (block or loop) that stands for block b inside region `loop`
 * (-1: the whole function): b itself, or the outermost loop below the region
 * that contains b.  Encoded as block index, or nblk + loop index. */
static uint32_t item_of(const spv_ctx_t *c, uint32_t b, int32_t region)
{
	int32_t l = c->blk[b].loop, child = -1;
	while (l >= 0 && l != region) {
		child = l;
		l = c->loops[l].parent;
	}
	return child < 0 ? b : c->nblk + (uint32_t)child;
}

struct layout {
	uint32_t *seq; /* items: block index, or nblk + loop (start), or 2*nblk + loop (end) */
	size_t n, cap;
};

static void push_item(spv_ctx_t *c, struct layout *L, uint32_t v)
{
	L->seq = spv_grow(c, L->seq, &L->cap, L->n + 1, sizeof(uint32_t));
	L->seq[L->n++] = v;
}

/* Topological order of a region's items over its forward edges (Kahn's
 * algorithm, ties broken by reverse postorder), loops expanded in place. */
static void order_region(spv_ctx_t *c, int32_t region, struct layout *L)
{
	const uint32_t nb = c->nblk;
	/* Members: blocks of the region (all reachable blocks at the top). */
	uint32_t *items = spv_alloc(c, (nb + c->nloops + 1) * sizeof(uint32_t));
	uint32_t *indeg = spv_alloc(c, (nb + c->nloops + 1) * sizeof(uint32_t));
	uint8_t *member = spv_alloc(c, nb + c->nloops + 1);
	uint32_t *first_rpo = spv_alloc(c, (nb + c->nloops + 1) * sizeof(uint32_t));
	uint32_t nitems = 0;
	const uint32_t header = region >= 0 ? c->loops[region].header : UINT32_MAX;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t b = c->rpo_list[r];
		if (region >= 0 && !c->loops[region].in[b])
			continue;
		const uint32_t it = b == header ? b : item_of(c, b, region);
		if (!member[it]) {
			member[it] = 1;
			items[nitems++] = it;
			first_rpo[it] = r;
		}
	}
	/* In-degrees over forward edges between different items of the region. */
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t b = c->rpo_list[r];
		if (region >= 0 && !c->loops[region].in[b])
			continue;
		const uint32_t ib = b == header ? b : item_of(c, b, region);
		for (uint32_t s = 0; s < c->blk[b].nsucc; s++) {
			const uint32_t t = c->blk[b].succ[s];
			if (t == header || (region >= 0 && !c->loops[region].in[t]))
				continue;
			const uint32_t it = item_of(c, t, region);
			if (it != ib && member[it])
				indeg[it]++;
		}
	}
	uint8_t *done = spv_alloc(c, nb + c->nloops + 1);
	for (uint32_t emitted = 0; emitted < nitems; emitted++) {
		/* The ready item that comes first in RPO. */
		int64_t pick = -1;
		for (uint32_t i = 0; i < nitems; i++) {
			const uint32_t it = items[i];
			if (!done[it] && indeg[it] == 0 && (pick < 0 || first_rpo[it] < first_rpo[pick]))
				pick = it;
		}
		if (pick < 0)
			spv_fail(c, c->entry_word, "kernel \"%s\": control flow that cannot be ordered (irreducible)",
				 c->kernel_name);
		const uint32_t it = (uint32_t)pick;
		done[it] = 1;
		if (it < nb) {
			push_item(c, L, it);
		} else {
			push_item(c, L, it); /* loop start */
			order_region(c, (int32_t)(it - nb), L);
			push_item(c, L, it + c->nloops); /* loop end */
		}
		/* Release the successors of the item's blocks. */
		for (uint32_t r = 0; r < c->nrpo; r++) {
			const uint32_t b = c->rpo_list[r];
			const uint32_t ib = b == header ? b : item_of(c, b, region);
			if (ib != it)
				continue;
			if (region >= 0 && !c->loops[region].in[b])
				continue;
			for (uint32_t s = 0; s < c->blk[b].nsucc; s++) {
				const uint32_t t = c->blk[b].succ[s];
				if (t == header || (region >= 0 && !c->loops[region].in[t]))
					continue;
				const uint32_t tt = item_of(c, t, region);
				if (tt != it && member[tt])
					indeg[tt]--;
			}
		}
	}
}

/* ---- instruction scheduling ------------------------------------------------------- */

static void list_schedule(spv_ctx_t *c, blk_t *b);

/* Cycles from issue until a dependent instruction can go: the ISA's latency
 * classes, and for loads a typical cache hit (docs/memory.md), so that loads
 * are issued ahead of the arithmetic that waits for them. */
static uint32_t sched_latency(const inst_t *in)
{
	if (in->op == ZE_OP_SEND) {
		const uint32_t msg = ze_send_msg(in->desc);
		if (msg == ZE_MSG_LOAD || msg == ZE_MSG_ATOMIC)
			return 60;
		if (msg == ZE_MSG_SLM_LOAD || msg == ZE_MSG_SLM_ATOMIC)
			return 20;
		return 1;
	}
	const ze_op_info_t *oi = ze_op_info(in->op);
	return oi ? ze_lat_cycles(oi->lat) : 1;
}

/* The memory a send accesses: 1 global, 2 SLM, 0 an ordering point. */
static int send_space(const inst_t *in)
{
	switch (ze_send_msg(in->desc)) {
	case ZE_MSG_LOAD:
	case ZE_MSG_STORE:
	case ZE_MSG_ATOMIC:
		return 1;
	case ZE_MSG_SLM_LOAD:
	case ZE_MSG_SLM_STORE:
	case ZE_MSG_SLM_ATOMIC:
		return 2;
	default:
		return 0;
	}
}

/* Sends that order memory: everything but loads. */
static int sched_memory_barrier(const inst_t *in)
{
	if (in->op != ZE_OP_SEND)
		return 0;
	const uint32_t msg = ze_send_msg(in->desc);
	return msg != ZE_MSG_LOAD && msg != ZE_MSG_SLM_LOAD;
}

static int reads_v(const inst_t *in, uint32_t v)
{
	for (int s = 0; s < 3; s++)
		if (in->s[s].k == O_V && in->s[s].v == v)
			return 1;
	return in->d.k == O_V && in->d.v == v && (in->pred || in->d.sub > 0) && in->op != ZE_OP_SEL &&
	       in->op != ZE_OP_CMP; /* a partial write keeps the other lanes */
}

static int reads_flag(const inst_t *in, uint32_t f)
{
	return in->pred && in->flag == f;
}

static int writes_flag(const inst_t *in, uint32_t f)
{
	return in->op == ZE_OP_CMP && in->flag == f;
}

static int reads_fixed(const inst_t *in, uint32_t reg)
{
	for (int s = 0; s < 3; s++)
		if ((in->s[s].k == O_GRF || in->s[s].k == O_S) && in->s[s].v == reg)
			return 1;
	return 0;
}

/* Whether b must stay after a (a comes first in the block). */
static int sched_depends(const inst_t *a, const inst_t *b)
{
	if (a->d.k == O_V && reads_v(b, a->d.v))
		return 1; /* RAW */
	if (b->d.k == O_V && (reads_v(a, b->d.v) || (a->d.k == O_V && a->d.v == b->d.v)))
		return 1; /* WAR, WAW */
	if ((a->d.k == O_GRF || a->d.k == O_S) && (reads_fixed(b, a->d.v) || (b->d.k == a->d.k && b->d.v == a->d.v)))
		return 1;
	if ((b->d.k == O_GRF || b->d.k == O_S) && reads_fixed(a, b->d.v))
		return 1;
	for (uint32_t f = 0; f < 2; f++)
		if ((writes_flag(a, f) && (reads_flag(b, f) || writes_flag(b, f))) || (reads_flag(a, f) && writes_flag(b, f)))
			return 1;
	if (a->op == ZE_OP_SEND && b->op == ZE_OP_SEND && (sched_memory_barrier(a) || sched_memory_barrier(b))) {
		/* global and shared local memory are distinct: a global access and an
		 * SLM access may pass each other; fences, barriers, timestamps and
		 * the end of the thread order everything */
		const int sa = send_space(a), sb = send_space(b);
		if (sa && sb && sa != sb)
			return 0;
		return 1;
	}
	/* anything that is not plain arithmetic stays in place */
	const int fixed_a = a->op != ZE_OP_SEND && !ze_op_info(a->op), fixed_b = b->op != ZE_OP_SEND && !ze_op_info(b->op);
	return fixed_a || fixed_b;
}

/* Whether the load at b->code[j] has its result read before b->code[i]: the
 * reader waits for the whole message (the model's scoreboard, like the
 * hardware's, is per register written by a send, and every register of one
 * message becomes ready at once), so by then the load has been performed. */
static int load_consumed(const blk_t *b, size_t j, size_t i)
{
	const opnd_t d = b->code[j].d;
	if (d.k != O_V)
		return 0;
	for (size_t k = j + 1; k < i; k++)
		for (int s = 0; s < 3; s++)
			if (b->code[k].s[s].k == O_V && b->code[k].s[s].v == d.v)
				return 1;
	return 0;
}

/* A fence waits until the thread's outstanding sends have completed.  After
 * scheduling (the order is final), a fence is dropped when nothing it waits
 * for can matter: since the previous fence of the block, the thread issued no
 * store, atomic, timestamp or other message with an effect that could still
 * be in flight, and every load's result is read before the point the fence
 * protects — the fence itself, or the barrier that follows it when only
 * arithmetic and loads come in between.  A reader waits for its load's whole
 * message (the model's scoreboard, like the hardware's, tracks the registers
 * a send writes, all ready at once), so those loads have been performed by
 * then, and no write another thread makes after the barrier can reach them.
 * This holds in the model (model/gt.cc: a fence only waits for the latest
 * completion of the thread's sends; sends are performed when they issue) and
 * on hardware alike, where barrier(CLK_LOCAL_MEM_FENCE) needs the fence only
 * for writes still in flight and for reads that could still see a write made
 * after the barrier.  A fence of workgroup memory only (not gmem) also
 * ignores global loads in flight: it does not order global memory.  Barriers
 * before the fence are passed (they wait for no send).  A fence at the start
 * of a block stays (the previous one may be in another block). */
static void drop_idle_fences(blk_t *b)
{
	for (size_t i = 0; i < b->ncode; i++) {
		const inst_t *f = &b->code[i];
		if (f->op != ZE_OP_SEND || ze_send_msg(f->desc) != ZE_MSG_FENCE || f->pred)
			continue;
		/* the point the fence protects */
		size_t until = i;
		for (size_t k = i + 1; k < b->ncode; k++) {
			const inst_t *x = &b->code[k];
			if (x->op != ZE_OP_SEND) {
				if (!ze_op_info(x->op))
					break;
				continue;
			}
			const uint32_t msg = ze_send_msg(x->desc);
			if (msg == ZE_MSG_BARRIER)
				until = k;
			if (msg != ZE_MSG_LOAD && msg != ZE_MSG_SLM_LOAD)
				break;
		}
		int idle = 0;
		for (size_t j = i; j-- > 0;) {
			const inst_t *x = &b->code[j];
			if (x->op != ZE_OP_SEND) {
				if (!ze_op_info(x->op))
					break;
				continue;
			}
			const uint32_t msg = ze_send_msg(x->desc);
			if (msg == ZE_MSG_FENCE) {
				idle = 1;
				break;
			}
			if (msg == ZE_MSG_BARRIER)
				continue;
			if (msg == ZE_MSG_SLM_LOAD || msg == ZE_MSG_LOAD) {
				if (load_consumed(b, j, until) || (msg == ZE_MSG_LOAD && !f->gmem))
					continue;
			}
			break;
		}
		if (!idle)
			continue;
		memmove(&b->code[i], &b->code[i + 1], (b->ncode - i - 1) * sizeof(inst_t));
		b->ncode--;
		i--;
	}
}

/* List scheduling of one block on its dependence graph: among the ready
 * instructions, the one with the longest latency path to the block's end
 * first (ties: program order).  Sends that store, fence, synchronise or end
 * keep their order among all sends.  Then fences with nothing to wait for go
 * (drop_idle_fences). */
static void schedule_block(spv_ctx_t *c, blk_t *b)
{
	list_schedule(c, b);
	drop_idle_fences(b);
}

static void list_schedule(spv_ctx_t *c, blk_t *b)
{
	const size_t n = b->ncode;
	if (n < 3 || n > 2000)
		return;
	uint32_t *npred = spv_alloc(c, n * sizeof(uint32_t));
	uint32_t *prio = spv_alloc(c, n * sizeof(uint32_t));
	uint8_t *dep = spv_alloc(c, n * n);
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (sched_depends(&b->code[i], &b->code[j])) {
				dep[i * n + j] = 1;
				npred[j]++;
			}
	for (size_t i = n; i-- > 0;) {
		uint32_t best = 0;
		for (size_t j = i + 1; j < n; j++)
			if (dep[i * n + j] && prio[j] > best)
				best = prio[j];
		prio[i] = best + sched_latency(&b->code[i]);
	}
	inst_t *out = spv_alloc(c, n * sizeof(inst_t));
	uint8_t *done = spv_alloc(c, n);
	for (size_t k = 0; k < n; k++) {
		size_t pick = n;
		for (size_t i = 0; i < n; i++)
			if (!done[i] && !npred[i] && (pick == n || prio[i] > prio[pick]))
				pick = i;
		done[pick] = 1;
		out[k] = b->code[pick];
		for (size_t j = pick + 1; j < n; j++)
			if (dep[pick * n + j])
				npred[j]--;
	}
	memcpy(b->code, out, n * sizeof(inst_t));
}

/* ---- terminators ------------------------------------------------------------------- */

static opnd_t next_reg(const spv_ctx_t *c)
{
	return o_grf(c->next_reg);
}

static void set_next(spv_ctx_t *c, blk_t *b, uint32_t value, int pred, int inv)
{
	inst_t in = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .pred = (uint8_t)pred, .pinv = (uint8_t)inv,
		     .d = next_reg(c), .s = {o_imm(value)}};
	spv_emit_to(c, b, &in);
}

/* The test of a branch's condition, just emitted at the end of b, as a chain
 * of compares (flag_chains) when the condition is a sel, and or or of this
 * block. */
static int branch_chain(spv_ctx_t *c, blk_t *b)
{
	const size_t at = b->ncode - 1;
	const opnd_t v = b->cond;
	if (!plain_v(v) || !is_bool_test(&b->code[at]))
		return 0;
	size_t i = at;
	while (i-- > 0 && !(b->code[i].d.k == O_V && b->code[i].d.v == v.v))
		;
	if (i == SIZE_MAX || (b->code[i].op != ZE_OP_SEL && b->code[i].op != ZE_OP_AND && b->code[i].op != ZE_OP_OR))
		return 0;
	uint32_t *defs = calloc(2 * ((size_t)c->nvr + 1), sizeof(uint32_t));
	if (!defs)
		return 0;
	uint32_t *uses = defs + c->nvr + 1;
	count_defs_uses(c, defs, uses);
	uses[v.v]--; /* b->cond: read only through this test */
	struct chain ch;
	const int ok = chain_for(c, b, at, defs, uses, &ch);
	free(defs);
	if (ok)
		chain_insert(c, b, at, &ch);
	return ok;
}

static void terminator_code(spv_ctx_t *c, blk_t *b)
{
	switch (b->term) {
	case TERM_BR:
		set_next(c, b, c->blk[b->targ[0]].order, 0, 0);
		return;
	case TERM_CBR: {
		const uint32_t t = c->blk[b->targ[0]].order, f = c->blk[b->targ[1]].order;
		if (b->cond.k == O_I || t == f) {
			set_next(c, b, b->cond.k != O_I || b->cond.v ? t : f, 0, 0);
			return;
		}
		/* When the condition was computed by a cmp of this block into f0 and no
		 * cmp follows, the flag already holds it. */
		int reuse = 0;
		if (b->cond.k == O_V)
			for (size_t k = b->ncode; k-- > 0;) {
				inst_t *x = &b->code[k];
				if (x->d.k == O_V && x->d.v == b->cond.v) {
					reuse = x->op == ZE_OP_CMP && !x->pred && x->flag == 0 && !x->d.sub;
					if (reuse)
						x->flag_live = 1;
					break;
				}
				if (x->op == ZE_OP_CMP)
					break;
			}
		if (!reuse) {
			inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_NE, .st = ZE_TYPE_UD, .d = o_null(),
				      .s = {b->cond, o_imm(0)}, .flag_live = 1};
			spv_emit_to(c, b, &cmp);
			if (branch_chain(c, b))
				reuse = 1; /* the bool itself may now be dead */
		}
		inst_t s = {.op = ZE_OP_SEL, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .pred = 1, .d = next_reg(c),
			    .s = {o_imm(t), o_imm(f)}};
		/* sel takes one immediate: the other through `next` itself. */
		set_next(c, b, f, 0, 0);
		s.s[1] = next_reg(c);
		spv_emit_to(c, b, &s);
		if (reuse)
			b->cond = o_null(); /* the bool itself may now be dead */
		return;
	}
	case TERM_SWITCH: {
		set_next(c, b, c->blk[b->targ[0]].order, 0, 0);
		const int constant = b->cond.k == O_I && (!b->sel64 || b->cond_hi.k == O_I);
		for (int half = 0; half < 2 && !constant; half++) {
			/* A selector part that is constant while the other is not: in a
			 * register, since cmp takes one immediate. */
			opnd_t *part = half ? &b->cond_hi : &b->cond;
			if ((half == 0 || b->sel64) && part->k == O_I) {
				inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(spv_new_vreg(c, 1)),
					     .s = {*part}};
				spv_emit_to(c, b, &mv);
				*part = mv.d;
			}
		}
		for (uint32_t k = 1; k < b->ntarg; k++) {
			const uint64_t lit = b->cases[k - 1];
			opnd_t sel = b->cond;
			if (constant) {
				const uint64_t v = sel.v | (b->sel64 && b->cond_hi.k == O_I ? (uint64_t)b->cond_hi.v << 32 : 0);
				if (v == (b->sel64 ? lit : (uint32_t)lit))
					set_next(c, b, c->blk[b->targ[k]].order, 0, 0);
				continue;
			}
			inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_EQ, .st = ZE_TYPE_UD, .d = o_null(),
				      .s = {sel, o_imm((uint32_t)lit)}, .flag_live = 1};
			spv_emit_to(c, b, &cmp);
			if (b->sel64) {
				inst_t hi = cmp;
				hi.pred = 1;
				hi.s[0] = b->cond_hi;
				hi.s[1] = o_imm((uint32_t)(lit >> 32));
				spv_emit_to(c, b, &hi);
			}
			set_next(c, b, c->blk[b->targ[k]].order, 1, 0);
		}
		return;
	}
	default:
		set_next(c, b, 0, 0, 0); /* returned: no block any more */
		return;
	}
}

/* ---- linear code ------------------------------------------------------------------- */

static inst_t *out_push(spv_ctx_t *c, const inst_t *in)
{
	c->out = spv_grow(c, c->out, &c->capout, c->nout + 1, sizeof(inst_t));
	c->out[c->nout] = *in;
	return &c->out[c->nout++];
}

/* Whether the only edge leaving loop l is one from block x. */
static int single_exit(const spv_ctx_t *c, int32_t l, uint32_t x)
{
	const uint8_t *in = c->loops[l].in;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		const blk_t *b = &c->blk[bi];
		if (!in[bi])
			continue;
		if (b->term == TERM_RET || b->nsucc == 0)
			return 0;
		for (uint32_t s = 0; s < b->nsucc; s++)
			if (!in[b->succ[s]] && bi != x)
				return 0;
	}
	return 1;
}

/* The linear code.  Which blocks the active lanes may be headed for (their
 * `next`) is tracked along the order: a block that every active lane is
 * headed for runs without its guard, one that none is headed for is left out,
 * and a loop runs under one `if` on its header, so that each iteration starts
 * with every active lane at the header (the `while` keeps exactly those).
 * Blocks in `skip` (empty, threaded by their predecessors) are left out. */
static void linearize(spv_ctx_t *c, const struct layout *L, const uint8_t *skip)
{
	const uint32_t nb = c->nblk, RET = nb; /* pend[RET]: lanes that returned */
	int32_t *open = spv_alloc(c, (c->nloops + 1) * sizeof(int32_t));
	int32_t *open_if = spv_alloc(c, (c->nloops + 1) * sizeof(int32_t));
	uint8_t *pend = spv_alloc(c, nb + 1);
	uint8_t **saved = spv_alloc(c, (c->nloops + 1) * sizeof(uint8_t *));
	uint32_t npend = 0, max_depth = 0, latch_flag = 0, latch_after = 0, latch_mov_loc = 0;
	for (uint32_t l = 0; l < c->nloops; l++)
		if (c->loops[l].depth > max_depth)
			max_depth = c->loops[l].depth;
	const int loop_ifs = 2 * max_depth + 1 <= MAX_CF_DEPTH;
	const uint32_t entry = c->rpo_list[0];
#define PEND_SET(x) do { if (!pend[x]) { pend[x] = 1; npend++; } } while (0)
#define PEND_CLR(x) do { if (pend[x]) { pend[x] = 0; npend--; } } while (0)
	PEND_SET(entry);
	for (size_t i = 0; i < L->n; i++) {
		const uint32_t it = L->seq[i];
		if (it < nb) {
			blk_t *b = &c->blk[it];
			if (skip && skip[it])
				continue;
			if (!pend[it])
				continue; /* no lane can be here */
			int32_t if_at = -1;
			if (npend > 1) {
				inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_EQ, .st = ZE_TYPE_UD, .d = o_null(),
					      .s = {next_reg(c), o_imm(b->order)}, .flag_live = 1};
				out_push(c, &cmp);
				inst_t iff = {.op = ZE_OP_IF, .pred = 1};
				if_at = (int32_t)c->nout;
				out_push(c, &iff);
			}
			/* The latch of a loop under its header `if`, run by every active
			 * lane, ending in `mov next f; (f0) sel next t next`: the
			 * flag is the loop condition itself, and lanes that go on need
			 * no `next` (each iteration starts at the unguarded header), so
			 * only the leaving lanes' `next` is set, and the `while` tests
			 * the flag (latch_flag: 1 on f0, 2 on !f0). */
			size_t ncode = b->ncode, latch_mov = SIZE_MAX;
			uint32_t latch_exit = 0;
			size_t after = i + 1; /* the next item left in */
			while (after < L->n && L->seq[after] < nb && skip && skip[L->seq[after]])
				after++;
			if (if_at < 0 && b->loop >= 0 && open_if[b->loop] >= 0 && b->term == TERM_CBR && ncode >= 2 &&
			    after < L->n && L->seq[after] == nb + c->nloops + (uint32_t)b->loop) {
				const uint32_t ho = c->blk[c->loops[b->loop].header].order;
				inst_t *mv = &b->code[ncode - 2], *sl = &b->code[ncode - 1];
				if (mv->op == ZE_OP_MOV && !mv->pred && mv->d.k == O_GRF && mv->d.v == c->next_reg &&
				    mv->s[0].k == O_I && sl->op == ZE_OP_SEL && sl->pred && !sl->pinv && sl->flag == 0 &&
				    sl->d.k == O_GRF && sl->d.v == c->next_reg && sl->s[0].k == O_I && sl->s[1].k == O_GRF &&
				    (sl->s[0].v == ho) != (mv->s[0].v == ho)) {
					/* (b->code stays as it is: linearize may run twice) */
					latch_flag = sl->s[0].v == ho ? 1 : 2; /* 1: true stays, 2: false stays */
					latch_exit = latch_flag == 1 ? mv->s[0].v : sl->s[0].v;
					latch_mov = ncode - 2;
					ncode--;
					/* When the latch's is the loop's only exit, every lane
					 * active after the `while` left through it: `next` is set
					 * once there, not in every iteration. */
					if (single_exit(c, b->loop, it)) {
						latch_after = latch_exit + 1;
						latch_mov_loc = mv->loc;
					}
				}
			}
			for (size_t k = 0; k < ncode; k++) {
				inst_t x = b->code[k];
				if (k == latch_mov) {
					if (latch_after)
						continue;
					x.s[0].v = latch_exit; /* only the leaving lanes' next */
				}
				out_push(c, &x);
			}
			if (if_at >= 0) {
				inst_t endif = {.op = ZE_OP_ENDIF, .target = if_at};
				c->out[if_at].target = (int32_t)c->nout;
				out_push(c, &endif);
			}
			PEND_CLR(it);
			if (b->term == TERM_RET || b->nsucc == 0)
				PEND_SET(RET);
			for (uint32_t s = 0; s < b->nsucc; s++) {
				uint32_t t = b->succ[s];
				while (skip && skip[t] && c->blk[t].nsucc == 1)
					t = c->blk[t].succ[0];
				PEND_SET(t);
			}
		} else if (it < nb + c->nloops) {
			const uint32_t l = it - nb, h = c->loops[l].header;
			if (!pend[h]) { /* no lane can enter the loop: leave it out */
				while (i + 1 < L->n && L->seq[i + 1] != nb + c->nloops + l)
					i++;
				i++;
				continue;
			}
			saved[l] = spv_alloc(c, nb + 1);
			memcpy(saved[l], pend, nb + 1);
			open_if[l] = -1;
			/* the if costs a control-flow stack entry per loop level:
			 * only when every loop of the kernel can have one */
			if (npend > 1 && loop_ifs) {
				inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_EQ, .st = ZE_TYPE_UD, .d = o_null(),
					      .s = {next_reg(c), o_imm(c->blk[h].order)}, .flag_live = 1};
				out_push(c, &cmp);
				inst_t iff = {.op = ZE_OP_IF, .pred = 1};
				open_if[l] = (int32_t)c->nout;
				out_push(c, &iff);
				memset(pend, 0, nb + 1);
				npend = 0;
				PEND_SET(h);
			}
			inst_t d = {.op = ZE_OP_DO};
			open[l] = (int32_t)c->nout;
			out_push(c, &d);
		} else {
			const uint32_t l = it - nb - c->nloops, h = c->loops[l].header;
			if (!latch_flag) {
				inst_t cmp = {.op = ZE_OP_CMP, .cmod = ZE_CMOD_EQ, .st = ZE_TYPE_UD, .d = o_null(),
					      .s = {next_reg(c), o_imm(c->blk[h].order)}, .flag_live = 1};
				out_push(c, &cmp);
			}
			inst_t w = {.op = ZE_OP_WHILE, .pred = 1, .pinv = latch_flag == 2, .target = open[l] + 1};
			latch_flag = 0;
			out_push(c, &w);
			if (latch_after) {
				inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = next_reg(c),
					     .s = {o_imm(latch_after - 1)}, .loc = latch_mov_loc};
				out_push(c, &mv);
				latch_after = 0;
			}
			if (open_if[l] >= 0) {
				inst_t endif = {.op = ZE_OP_ENDIF, .target = open_if[l]};
				c->out[open_if[l]].target = (int32_t)c->nout;
				out_push(c, &endif);
			}
			/* after the loop: the lanes that never entered, and where the
			 * others left it to */
			PEND_CLR(h);
			for (uint32_t x = 0; x <= nb; x++)
				if (saved[l][x] && x != h)
					PEND_SET(x);
		}
	}
#undef PEND_SET
#undef PEND_CLR
	inst_t eot = {.op = ZE_OP_SEND, .desc = ze_send_desc(ZE_MSG_EOT, 0, 1)};
	out_push(c, &eot);
}

/* A no-op copy after register allocation (encode() drops them). */
static int noop_copy(const spv_ctx_t *c, const inst_t *in)
{
	return in->op == ZE_OP_MOV && !in->pred && in->d.k == O_V && in->s[0].k == O_V && in->dt == in->st &&
	       !in->s[0].neg && !in->s[0].abs &&
	       c->vr[in->d.v].reg + in->d.sub * (int32_t)(c->simd / 8) ==
		       c->vr[in->s[0].v].reg + in->s[0].sub * (int32_t)(c->simd / 8);
}

/* Blocks left empty once their copies were coalesced (typically made by
 * splitting an edge for phi copies): an unconditional branch and nothing
 * else.  Their predecessors are made to branch to the target directly.
 * Returns the skip set, or NULL when there is none. */
static uint8_t *thread_empty_blocks(spv_ctx_t *c)
{
	const uint32_t nb = c->nblk, entry = c->rpo_list[0];
	uint8_t *skip = NULL;
	uint8_t *header = spv_alloc(c, nb + 1);
	for (uint32_t l = 0; l < c->nloops; l++)
		header[c->loops[l].header] = 1;
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		const blk_t *b = &c->blk[bi];
		if (bi == entry || header[bi] || b->term != TERM_BR || b->nsucc != 1 || b->succ[0] == bi)
			continue;
		int empty = 1;
		for (size_t k = 0; k + 1 < b->ncode && empty; k++)
			empty = noop_copy(c, &b->code[k]);
		if (!empty || !b->ncode)
			continue;
		const inst_t *last = &b->code[b->ncode - 1];
		if (last->op != ZE_OP_MOV || last->pred || last->d.k != O_GRF || last->d.v != c->next_reg)
			continue;
		if (!skip)
			skip = spv_alloc(c, nb + 1);
		skip[bi] = 1;
	}
	if (!skip)
		return NULL;
	/* order of a block -> order of where lanes headed for it now go */
	uint32_t *to = spv_alloc(c, (nb + 2) * sizeof(uint32_t));
	for (uint32_t i = 0; i < nb; i++) {
		uint32_t t = i, n = 0;
		while (skip[t] && n++ <= nb)
			t = c->blk[t].succ[0];
		if (skip[t]) { /* a cycle of empty blocks: leave them */
			memset(skip, 0, nb + 1);
			return NULL;
		}
		if (c->blk[i].order <= nb)
			to[c->blk[i].order] = c->blk[t].order;
	}
	for (uint32_t r = 0; r < c->nrpo; r++) {
		blk_t *b = &c->blk[c->rpo_list[r]];
		for (size_t k = 0; k < b->ncode; k++) {
			inst_t *x = &b->code[k];
			if (x->d.k != O_GRF || x->d.v != c->next_reg || (x->op != ZE_OP_MOV && x->op != ZE_OP_SEL))
				continue;
			for (int s = 0; s < 2; s++)
				if (x->s[s].k == O_I && x->s[s].v >= 1 && x->s[s].v <= nb)
					x->s[s].v = to[x->s[s].v];
		}
	}
	return skip;
}

/* ---- liveness and register allocation ------------------------------------------- */

typedef uint64_t word_t;
#define WBITS 64u

static inline void bs_set(word_t *s, uint32_t i) { s[i / WBITS] |= (word_t)1 << (i % WBITS); }
static inline void bs_clr(word_t *s, uint32_t i) { s[i / WBITS] &= ~((word_t)1 << (i % WBITS)); }
static inline int bs_get(const word_t *s, uint32_t i) { return (int)((s[i / WBITS] >> (i % WBITS)) & 1); }

struct edges {
	uint64_t *e; /* (a << 32 | b), a < b */
	size_t n, cap;
};

static void add_edge(spv_ctx_t *c, struct edges *E, uint32_t a, uint32_t b)
{
	if (a == b)
		return;
	if (a > b) {
		const uint32_t t = a;
		a = b;
		b = t;
	}
	E->e = spv_grow(c, E->e, &E->cap, E->n + 1, sizeof(uint64_t));
	E->e[E->n++] = (uint64_t)a << 32 | b;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A def kills a vreg unless it writes only some of its lanes (predicated) or
 * only a later element (element 0 is written first, see atomic()). */
static void def_point(spv_ctx_t *c, struct edges *E, word_t *live, uint32_t nw, const inst_t *in)
{
	if (in->d.k != O_V)
		return;
	const uint32_t d = in->d.v;
	for (uint32_t w = 0; w < nw; w++)
		for (word_t bits = live[w]; bits; bits &= bits - 1) {
			const uint32_t v = w * WBITS + (uint32_t)__builtin_ctzll(bits);
			add_edge(c, E, d, v);
		}
	if (!partial_def(in))
		bs_clr(live, d);
}

static void use_point(word_t *live, const inst_t *in)
{
	for (int s = 0; s < 3; s++)
		if (in->s[s].k == O_V)
			bs_set(live, in->s[s].v);
	if (partial_def(in))
		bs_set(live, in->d.v);
}

static int allocate(spv_ctx_t *c)
{
	const uint32_t nv = c->nvr, nw = (nv + WBITS) / WBITS;
	word_t *in = spv_alloc(c, (size_t)c->nblk * nw * sizeof(word_t));
	word_t *out = spv_alloc(c, (size_t)c->nblk * nw * sizeof(word_t));
	word_t *live = spv_alloc(c, nw * sizeof(word_t));
	/* Block live-in sets by backward iteration to a fixpoint. */
	for (int changed = 1; changed;) {
		changed = 0;
		for (uint32_t r = c->nrpo; r-- > 0;) {
			const uint32_t bi = c->rpo_list[r];
			const blk_t *b = &c->blk[bi];
			memset(live, 0, nw * sizeof(word_t));
			for (uint32_t s = 0; s < b->nsucc; s++)
				for (uint32_t w = 0; w < nw; w++)
					live[w] |= in[(size_t)b->succ[s] * nw + w];
			memcpy(&out[(size_t)bi * nw], live, nw * sizeof(word_t));
			for (size_t k = b->ncode; k-- > 0;) {
				const inst_t *x = &b->code[k];
				if (x->d.k == O_V && !partial_def(x))
					bs_clr(live, x->d.v);
				use_point(live, x);
			}
			if (memcmp(live, &in[(size_t)bi * nw], nw * sizeof(word_t)) != 0) {
				memcpy(&in[(size_t)bi * nw], live, nw * sizeof(word_t));
				changed = 1;
			}
		}
	}
	/* Values live into the entry are read before any write: only possible
	 * for undefined values, which may then hold anything.  Let them be. */
	struct edges E = {0};
	for (uint32_t r = 0; r < c->nrpo; r++) {
		const uint32_t bi = c->rpo_list[r];
		const blk_t *b = &c->blk[bi];
		memcpy(live, &out[(size_t)bi * nw], nw * sizeof(word_t));
		for (size_t k = b->ncode; k-- > 0;) {
			def_point(c, &E, live, nw, &b->code[k]);
			use_point(live, &b->code[k]);
		}
	}
	if (E.n)
		qsort(E.e, E.n, sizeof(uint64_t), cmp_u64);
	size_t ne = 0;
	for (size_t i = 0; i < E.n; i++)
		if (!ne || E.e[ne - 1] != E.e[i])
			E.e[ne++] = E.e[i];
	/* Adjacency lists (CSR). */
	uint32_t *deg = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < ne; i++) {
		deg[E.e[i] >> 32]++;
		deg[(uint32_t)E.e[i]]++;
	}
	uint32_t *start = spv_alloc(c, (nv + 2) * sizeof(uint32_t));
	for (uint32_t v = 0; v < nv; v++)
		start[v + 1] = start[v] + deg[v];
	uint32_t *adj = spv_alloc(c, (2 * ne + 1) * sizeof(uint32_t));
	uint32_t *fill = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < ne; i++) {
		const uint32_t a = (uint32_t)(E.e[i] >> 32), b = (uint32_t)E.e[i];
		adj[start[a] + fill[a]++] = b;
		adj[start[b] + fill[b]++] = a;
	}
	/* Colour in program order. */
	const uint32_t slot = c->simd / 8;
	for (uint32_t v = 0; v < nv; v++)
		c->vr[v].reg = -1;
	uint32_t max_reg = c->first_free_reg;
	/* -zet-profile-flags REGISTER_REALLOCATION: the top GRFs stay free for instrumentation. */
	const uint32_t limit = ZE_GRF_COUNT - (c->opt ? c->opt->reserve_grfs : 0);
	for (size_t i = 0; i <= c->nout; i++) {
		/* Definitions in order, then anything left (used, never written). */
		uint32_t v;
		if (i < c->nout) {
			if (c->out[i].d.k != O_V)
				continue;
			v = c->out[i].d.v;
		} else {
			v = UINT32_MAX;
		}
		for (uint32_t pass = 0; pass < (i < c->nout ? 1u : nv); pass++) {
			if (i == c->nout)
				v = pass;
			if (c->vr[v].reg >= 0)
				continue;
			uint8_t busy[ZE_GRF_COUNT] = {0};
			for (uint32_t k = start[v]; k < start[v + 1]; k++) {
				const vreg_t *n = &c->vr[adj[k]];
				if (n->reg < 0)
					continue;
				for (uint32_t g = 0; g < n->size * slot; g++)
					if ((uint32_t)n->reg + g < ZE_GRF_COUNT)
						busy[n->reg + g] = 1;
			}
			const uint32_t need = c->vr[v].size * slot;
			int32_t pick = -1;
			const uint32_t h = c->vr[v].hint;
			if (h != UINT32_MAX && h < nv && c->vr[h].reg >= 0 && c->vr[h].size == c->vr[v].size) {
				int ok = 1;
				for (uint32_t g = 0; g < need; g++)
					ok &= !busy[c->vr[h].reg + g];
				if (ok)
					pick = c->vr[h].reg;
			}
			for (uint32_t r = c->first_free_reg; pick < 0 && r + need <= limit; r += slot) {
				int ok = 1;
				for (uint32_t g = 0; g < need && ok; g++)
					ok = !busy[r + g];
				if (ok)
					pick = (int32_t)r;
			}
			if (pick < 0)
				return -1;
			c->vr[v].reg = pick;
			if ((uint32_t)pick + need > max_reg)
				max_reg = (uint32_t)pick + need;
		}
	}
	c->grf_used = max_reg;
	return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

static ze_operand_t enc_opnd(const spv_ctx_t *c, opnd_t o, uint32_t *imm, int *has_imm)
{
	ze_operand_t z = {0};
	switch (o.k) {
	case O_V:
		z.kind = ZE_OPND_GRFV;
		z.reg = (uint8_t)(c->vr[o.v].reg + o.sub * (c->simd / 8));
		break;
	case O_GRF:
		z.kind = ZE_OPND_GRFV;
		z.reg = (uint8_t)o.v;
		break;
	case O_S:
		z.kind = ZE_OPND_GRFS;
		z.reg = (uint8_t)o.v;
		z.sub = o.sub;
		break;
	case O_I:
		z.kind = ZE_OPND_IMM;
		*imm = o.v;
		*has_imm = 1;
		return z;
	case O_ARF:
		z.kind = ZE_OPND_ARF;
		z.reg = (uint8_t)o.v;
		z.sub = o.sub;
		return z;
	default:
		return z;
	}
	z.neg = o.neg;
	z.abs = o.abs;
	return z;
}

static void encode(spv_ctx_t *c, zm_kernel_t *k)
{
	/* Drop copies that the allocation made into no-ops. */
	size_t n = 0;
	int32_t *newpos = spv_alloc(c, (c->nout + 1) * sizeof(int32_t));
	for (size_t i = 0; i < c->nout; i++) {
		const inst_t *in = &c->out[i];
		newpos[i] = (int32_t)n;
		if (in->op == ZE_OP_MOV && !in->pred && in->d.k == O_V && in->s[0].k == O_V && in->dt == in->st &&
		    !in->s[0].neg && !in->s[0].abs &&
		    c->vr[in->d.v].reg + in->d.sub * (int32_t)(c->simd / 8) ==
			    c->vr[in->s[0].v].reg + in->s[0].sub * (int32_t)(c->simd / 8))
			continue;
		c->out[n++] = *in;
	}
	newpos[c->nout] = (int32_t)n;
	for (size_t i = 0; i < n; i++)
		if (c->out[i].op == ZE_OP_IF || c->out[i].op == ZE_OP_WHILE || c->out[i].op == ZE_OP_ENDIF)
			c->out[i].target = newpos[c->out[i].target];
	c->nout = n;
	if (n * ZE_INST_BYTES > ZE_MAX_TEXT_BYTES)
		spv_fail(c, c->entry_word, "kernel \"%s\" is too large (%zu instructions)", c->kernel_name, n);
	k->text = malloc(n * ZE_INST_BYTES);
	if (!k->text)
		spv_fail(c, SPV_NO_WORD, "out of memory");
	k->text_size = (uint32_t)(n * ZE_INST_BYTES);
	if (c->opt && c->opt->debug_lines && c->nloc) {
		/* each instruction at its SPIR-V OpLine; code the back end made
		 * (guards, loops, copies) at the position before it */
		k->lines = calloc(n + 1, sizeof(zm_line_t));
		if (!k->lines)
			spv_fail(c, SPV_NO_WORD, "out of memory");
		zm_line_t at = {0, 0};
		for (size_t i = 0; i < n; i++) {
			if (c->out[i].loc)
				at = (zm_line_t){c->loc_file[c->out[i].loc - 1], c->loc_line[c->out[i].loc - 1]};
			k->lines[i] = at;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const inst_t *in = &c->out[i];
		ze_inst_t z = {0};
		z.opcode = in->op;
		z.esize = (uint8_t)(in->simd1 ? 1 : c->simd);
		z.pred = in->pred;
		z.pred_inv = in->pinv;
		z.flag = in->flag;
		z.cmod = in->cmod;
		uint32_t imm = 0;
		int has_imm = 0;
		switch (in->op) {
		case ZE_OP_IF:
		case ZE_OP_WHILE:
			z.dw3 = (uint32_t)((in->target - (int32_t)i) * (int32_t)ZE_INST_BYTES);
			break;
		case ZE_OP_ENDIF:
		case ZE_OP_DO:
			break;
		case ZE_OP_SEND:
			z.dst = enc_opnd(c, in->d, &imm, &has_imm);
			for (int s = 0; s < 3; s++)
				z.src[s] = enc_opnd(c, in->s[s], &imm, &has_imm);
			z.dw3 = in->desc;
			break;
		default:
			z.dtype = in->d.k == O_NULL ? 0 : in->dt;
			z.stype = in->st;
			z.dst = enc_opnd(c, in->d, &imm, &has_imm);
			for (int s = 0; s < 3; s++)
				z.src[s] = enc_opnd(c, in->s[s], &imm, &has_imm);
			z.dw3 = imm;
			break;
		}
		uint8_t *bytes = k->text + i * ZE_INST_BYTES;
		ze_encode(&z, bytes);
		ze_inst_t check;
		char why[160];
		if (ze_decode(bytes, &check, why, sizeof(why)))
			spv_fail(c, c->entry_word, "kernel \"%s\": internal error: instruction %zu does not encode: %s",
				 c->kernel_name, i, why);
	}
}

/* ---- sends through run-time pointers --------------------------------------------------
 * A send's 64-bit base is one scalar, but a pointer loaded from memory may be
 * different in every lane.  So the send runs once per lane (all lanes whose
 * address has that lane's high dword go together; `todo` makes each lane go
 * once, which atomics need), with the base (0, high) made by SIMD1 moves,
 * which run whatever the channel enables.  f1 is saved around it.  The
 * destination may share a register with the sources: a lane's inputs are
 * overwritten only in that lane, after its send. */

static void expand_one(spv_ctx_t *c, const inst_t *x, inst_t *out, size_t *n)
{
	const uint8_t U = ZE_TYPE_UD;
	const opnd_t todo = o_grf(c->dyn_reg);
	const uint32_t t = c->dyn_reg + c->simd / 8; /* t.0, t.1: the base; t.2: the saved f1 */
	const opnd_t hi = x->s[2];
	const uint32_t hreg = (uint32_t)c->vr[hi.v].reg + hi.sub * (c->simd / 8);
	const opnd_t f1 = {O_ARF, 0, 0, 0, ZE_ARF_F1};
#define PUT(...) (out[(*n)++] = (inst_t){.loc = x->loc, __VA_ARGS__})
	PUT(.op = ZE_OP_MOV, .simd1 = 1, .dt = U, .st = U, .d = o_s(t, 2), .s = {f1});
	PUT(.op = ZE_OP_MOV, .dt = U, .st = U, .d = todo, .s = {o_imm(0)});
	PUT(.op = ZE_OP_MOV, .pred = x->pred, .pinv = x->pinv, .flag = x->flag, .dt = U, .st = U, .d = todo,
	    .s = {o_imm(1)});
	for (uint32_t i = 0; i < c->simd; i++) {
		PUT(.op = ZE_OP_MOV, .simd1 = 1, .dt = U, .st = U, .d = o_s(t, 0), .s = {o_imm(0)});
		PUT(.op = ZE_OP_MOV, .simd1 = 1, .dt = U, .st = U, .d = o_s(t, 1), .s = {o_s(hreg + i / 8, i % 8)});
		PUT(.op = ZE_OP_CMP, .cmod = ZE_CMOD_EQ, .flag = 1, .st = U, .s = {hi, o_s(t, 1)});
		PUT(.op = ZE_OP_CMP, .cmod = ZE_CMOD_NE, .pred = 1, .flag = 1, .st = U, .s = {todo, o_imm(0)});
		PUT(.op = ZE_OP_SEND, .pred = 1, .flag = 1, .desc = x->desc & ~SPV_DESC_DYN, .d = x->d,
		    .s = {x->s[0], x->s[1], o_s(t, 0)});
		PUT(.op = ZE_OP_MOV, .pred = 1, .flag = 1, .dt = U, .st = U, .d = todo, .s = {o_imm(0)});
	}
	PUT(.op = ZE_OP_MOV, .simd1 = 1, .dt = U, .st = U, .d = f1, .s = {o_s(t, 2)});
#undef PUT
}

static void expand_dyn_sends(spv_ctx_t *c)
{
	size_t total = 0;
	for (size_t i = 0; i < c->nout; i++)
		total += c->out[i].op == ZE_OP_SEND && (c->out[i].desc & SPV_DESC_DYN) ? 4 + 6 * c->simd : 1;
	inst_t *out = spv_alloc(c, (total + 1) * sizeof(inst_t));
	int32_t *newpos = spv_alloc(c, (c->nout + 1) * sizeof(int32_t));
	size_t n = 0;
	for (size_t i = 0; i < c->nout; i++) {
		newpos[i] = (int32_t)n;
		if (c->out[i].op == ZE_OP_SEND && (c->out[i].desc & SPV_DESC_DYN))
			expand_one(c, &c->out[i], out, &n);
		else
			out[n++] = c->out[i];
	}
	newpos[c->nout] = (int32_t)n;
	for (size_t i = 0; i < n; i++)
		if (out[i].op == ZE_OP_IF || out[i].op == ZE_OP_WHILE || out[i].op == ZE_OP_ENDIF)
			out[i].target = newpos[out[i].target];
	c->out = out;
	c->nout = n;
}

/* ---- the back end --------------------------------------------------------------------- */

void spv_backend(spv_ctx_t *c, zm_kernel_t *k)
{
	merge_blocks(c);
	dead_code(c);
	if_convert(c);
	merge_blocks(c);
	common_subexpressions(c);
	if (!c->no_unroll && (c->unrolled = spv_unroll_loops(c)) > 0) {
		dead_code(c);
		common_subexpressions(c);
	}
	spv_snapshot_ir(c, SPV_STAGE_IR_LOOPS);
	vector_loads(c);
	dominators(c);
	find_loops(c);
	struct layout L = {0};
	order_region(c, -1, &L);
	uint32_t order = 0;
	for (size_t i = 0; i < L.n; i++)
		if (L.seq[i] < c->nblk)
			c->blk[L.seq[i]].order = ++order;
	/* Registers: payload r0-r6, the argument area, `next`, then values. */
	const uint32_t arg_bytes = c->arg_bytes + (c->need_num_groups ? 12u : 0u);
	const uint32_t slot = c->simd / 8;
	const uint32_t after_args = 7 + (arg_bytes + 31) / 32;
	c->next_reg = (after_args + slot - 1) / slot * slot;
	c->first_free_reg = c->next_reg + slot;
	if (c->has_dyn) {
		c->dyn_reg = c->first_free_reg;
		c->first_free_reg += 2 * slot;
	}
	for (uint32_t r = 0; r < c->nrpo; r++)
		schedule_block(c, &c->blk[c->rpo_list[r]]);
	for (uint32_t r = 0; r < c->nrpo; r++)
		terminator_code(c, &c->blk[c->rpo_list[r]]);
	dead_code(c); /* conditions read from the flag directly */
	spv_snapshot_ir(c, SPV_STAGE_IR_SCHEDULED);
	linearize(c, &L, NULL);
	if (allocate(c)) {
		c->regalloc_failed = 1;
		spv_fail(c, SPV_NO_WORD, "register allocation failed");
	}
	/* Now that copies coalesced, again without the blocks left empty (the
	 * allocation stands: no value changes). */
	const uint8_t *skip = thread_empty_blocks(c);
	if (skip) {
		c->nout = 0;
		linearize(c, &L, skip);
	}
	spv_snapshot_ir(c, SPV_STAGE_IR_ALLOCATED);
	if (c->has_dyn)
		expand_dyn_sends(c);
	encode(c, k);
	k->grf = c->grf_used > c->first_free_reg ? c->grf_used : c->first_free_reg;
}
