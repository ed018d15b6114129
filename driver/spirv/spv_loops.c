/* Loop optimisation in the SPIR-V back end (README.md, "SPIR-V front end"):
 * loop-invariant arithmetic computed before the loop (hoist_invariants),
 * counted loops unrolled (unroll_loop, below), global loads of other loops
 * issued one iteration ahead (pipeline_loop).
 *
 * A counted loop made of one block B (after merge_blocks) and its back edge
 * block E (the phi copies), whose exit test compares an induction variable
 * with a loop-invariant bound, runs U iterations per trip in a new loop UH:
 *
 *     P -> G0 : guard(phi)              ? UH : B
 *     UH      : U copies of B's code; c = the last copy's continue test;
 *               c && guard(next phi)    ? UE : X
 *     UE      : phi = next phi          -> UH
 *     X       : c ? XB : XE
 *     XB      : phi = next phi          -> B
 *     XE      : values live after the loop, as the last copy left them -> exit
 *     B, E    : the original loop, now the remainder (and the loop itself
 *               for lanes whose first U iterations do not all continue).
 *
 * guard(phi) holds when the exit tests of the next U - 1 iterations all
 * continue, computed without wrapping from the induction variable, its step
 * and the bound, so every lane runs exactly the iterations it ran before, in
 * the same order, with the same values; UH just lets the scheduler overlap
 * them (the loads of later iterations issue before the arithmetic of the
 * first) and merges consecutive loads into vector loads.
 *
 * Values that change by a fixed step from one iteration to the next
 * (induction variables and the add/mul/shl/mov chains built on them, e.g.
 * addresses) are not recomputed in each copy: copy j takes copy 0's value +
 * j * step (a constant step) or the previous copy's + step (a step computed
 * once in G0): strength reduction inside the unrolled body.  Values computed
 * in B from loop-invariant operands only are computed once per trip. */
#include <string.h>

#include "spv_internal.h"

#define UNROLL 4           /* iterations per trip of the unrolled loop */
#define UNROLL_MAX_CODE 60 /* instructions in B: larger bodies gain little and cost registers */

enum { V_OUT = 0, V_PHI = 1, V_DEF = 2 }; /* vreg classes within the loop */

struct unroll {
	spv_ctx_t *c;
	uint32_t nv;         /* vregs before the unrolling (the arrays' size) */
	uint32_t bi, ei, xi; /* the loop block, its back edge block, its exit target */
	uint8_t *cls;        /* per vreg */
	uint32_t *ndef;      /* per vreg: definitions in B */
	uint8_t *is_lin;     /* per vreg: linear (changes by delta[v] per iteration) */
	opnd_t *delta;
	opnd_t *cur;         /* per vreg: its value in the copy being made */
	opnd_t *first;       /* per vreg: its value in copy 0 */
	uint8_t *done;       /* per vreg: defined in the copy being made */
	blk_t *g0;           /* the block being filled (G0, for the steps) */
};

static int is_int32(uint8_t t)
{
	return t == ZE_TYPE_UD || t == ZE_TYPE_D;
}

static int plain(opnd_t o)
{
	return !o.neg && !o.abs && !o.sub;
}

/* An operand that holds the same value in every iteration. */
static int invariant(const struct unroll *u, opnd_t o)
{
	switch (o.k) {
	case O_I: case O_S: case O_GRF:
		return 1;
	case O_V:
		return o.v >= u->nv || u->cls[o.v] == V_OUT;
	default:
		return 0;
	}
}

static blk_t *new_block(spv_ctx_t *c, uint32_t word, uint32_t *index)
{
	c->blk = spv_grow(c, c->blk, &c->capblk, c->nblk + 1, sizeof(blk_t));
	const uint32_t e = c->nblk++;
	blk_t *b = &c->blk[e];
	memset(b, 0, sizeof(*b));
	b->word = word;
	b->reachable = 1;
	b->split_from = -1;
	b->loop = -1;
	b->rpo = -1;
	b->idom = -1;
	*index = e;
	return b;
}

static void set_targets(spv_ctx_t *c, uint32_t bi, uint8_t term, opnd_t cond, uint32_t t0, uint32_t t1)
{
	blk_t *b = &c->blk[bi];
	b->term = term;
	b->cond = cond;
	b->ntarg = term == TERM_CBR ? 2 : 1;
	b->targ = spv_alloc(c, 2 * sizeof(uint32_t));
	b->targ[0] = t0;
	b->targ[1] = t1;
}

/* Successors, predecessors and the reverse postorder again, after blocks
 * were added or retargeted (reachability does not change). */
static void rebuild_cfg(spv_ctx_t *c)
{
	for (uint32_t i = 0; i < c->nblk; i++) {
		blk_t *b = &c->blk[i];
		b->npred = 0;
		b->pred = NULL;
		if (!b->reachable)
			continue;
		b->nsucc = 0;
		b->succ = spv_alloc(c, (b->ntarg + 1) * sizeof(uint32_t));
		for (uint32_t t = 0; t < b->ntarg; t++) {
			uint32_t k = 0;
			while (k < b->nsucc && b->succ[k] != b->targ[t])
				k++;
			if (k == b->nsucc)
				b->succ[b->nsucc++] = b->targ[t];
		}
	}
	uint32_t *cnt = spv_alloc(c, (c->nblk + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < c->nblk; i++)
		if (c->blk[i].reachable)
			for (uint32_t s = 0; s < c->blk[i].nsucc; s++)
				cnt[c->blk[i].succ[s]]++;
	for (uint32_t i = 0; i < c->nblk; i++)
		c->blk[i].pred = spv_alloc(c, (cnt[i] + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < c->nblk; i++)
		if (c->blk[i].reachable)
			for (uint32_t s = 0; s < c->blk[i].nsucc; s++) {
				blk_t *t = &c->blk[c->blk[i].succ[s]];
				t->pred[t->npred++] = i;
			}
	spv_rpo(c);
}

/* ---- steps --------------------------------------------------------------------------- */

static opnd_t emit_alu(spv_ctx_t *c, blk_t *b, uint8_t op, opnd_t a, opnd_t x)
{
	inst_t in = {.op = op, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(spv_new_vreg(c, 1)), .s = {a, x}};
	spv_emit_to(c, b, &in);
	return in.d;
}

static opnd_t neg_step(struct unroll *u, opnd_t a)
{
	if (a.k == O_I)
		return o_imm(0u - a.v);
	opnd_t n = a;
	n.neg ^= 1;
	return emit_alu(u->c, u->g0, ZE_OP_MOV, n, o_null());
}

/* An invariant operand as a step: immediates with their sign folded, other
 * operands without modifiers (a negated one copied once in G0). */
static opnd_t plain_inv(struct unroll *u, opnd_t o)
{
	if (o.k == O_I)
		return o_imm(o.neg ? 0u - o.v : o.v);
	if (!o.neg)
		return o;
	return emit_alu(u->c, u->g0, ZE_OP_MOV, o, o_null());
}

static opnd_t add_step(struct unroll *u, opnd_t a, opnd_t b)
{
	if (a.k == O_I && b.k == O_I)
		return o_imm(a.v + b.v);
	if (a.k == O_I && a.v == 0)
		return b;
	if (b.k == O_I && b.v == 0)
		return a;
	return emit_alu(u->c, u->g0, ZE_OP_ADD, a, b);
}

static opnd_t mul_step(struct unroll *u, opnd_t a, opnd_t b)
{
	if (a.k == O_I && b.k == O_I)
		return o_imm(a.v * b.v);
	if (a.k == O_I && a.v == 0)
		return a;
	if (b.k == O_I && b.v == 0)
		return b;
	if (a.k == O_I && a.v == 1)
		return b;
	if (b.k == O_I && b.v == 1)
		return a;
	return emit_alu(u->c, u->g0, ZE_OP_MUL, a, b);
}

/* The per-iteration step of a source operand: 1 and *d set when it is linear
 * or invariant (step 0). */
static int src_step(struct unroll *u, opnd_t o, opnd_t *d)
{
	if (invariant(u, o)) {
		*d = o_imm(0);
		return 1;
	}
	if (o.k != O_V || o.abs || o.sub || !u->is_lin[o.v])
		return 0;
	*d = o.neg ? neg_step(u, u->delta[o.v]) : u->delta[o.v];
	return 1;
}

/* Whether instruction `in` of B (its destination defined once in B) yields a
 * value that changes by a fixed step per iteration; sets the step. */
static int linear_inst(struct unroll *u, const inst_t *in, opnd_t *step)
{
	if (in->pred || in->cmod || in->d.k != O_V || in->d.sub || !is_int32(in->dt) || in->dt != in->st)
		return 0;
	opnd_t a, b;
	switch (in->op) {
	case ZE_OP_MOV:
		if (in->s[0].abs || !src_step(u, in->s[0], &a))
			return 0;
		*step = a;
		return 1;
	case ZE_OP_ADD:
		if (!src_step(u, in->s[0], &a) || !src_step(u, in->s[1], &b))
			return 0;
		*step = add_step(u, a, b);
		return 1;
	case ZE_OP_MUL:
		/* linear times invariant (both invariant: step 0) */
		if (!src_step(u, in->s[0], &a) || !src_step(u, in->s[1], &b))
			return 0;
		if (invariant(u, in->s[0]) && invariant(u, in->s[1])) {
			*step = o_imm(0);
			return 1;
		}
		if (invariant(u, in->s[1]) && !in->s[1].abs)
			*step = mul_step(u, a, plain_inv(u, in->s[1]));
		else if (invariant(u, in->s[0]) && !in->s[0].abs)
			*step = mul_step(u, b, plain_inv(u, in->s[0]));
		else
			return 0;
		return 1;
	case ZE_OP_SHL:
		if (in->s[1].k != O_I || in->s[1].neg || in->s[1].abs || in->s[1].v > 31 || !src_step(u, in->s[0], &a))
			return 0;
		*step = a.k == O_I ? o_imm(a.v << in->s[1].v) : emit_alu(u->c, u->g0, ZE_OP_SHL, a, in->s[1]);
		return 1;
	default:
		return 0;
	}
}

/* Induction variables: phi = x (the back edge's copy) where x = phi +
 * invariant in B; their step. */
static void find_ivs(struct unroll *u, const blk_t *B, const blk_t *E)
{
	spv_ctx_t *c = u->c;
	u->is_lin = spv_alloc(c, u->nv + 1);
	u->delta = spv_alloc(c, (u->nv + 1) * sizeof(opnd_t));
	for (size_t i = 0; i < E->ncode; i++) {
		const inst_t *cp = &E->code[i];
		const uint32_t phi = cp->d.v;
		if (cp->s[0].k != O_V || u->cls[cp->s[0].v] != V_DEF || u->ndef[cp->s[0].v] != 1)
			continue;
		for (size_t j = 0; j < B->ncode; j++) {
			const inst_t *in = &B->code[j];
			if (in->d.k != O_V || in->d.v != cp->s[0].v)
				continue;
			if (in->op != ZE_OP_ADD || in->pred || in->cmod || !is_int32(in->dt) || in->dt != in->st)
				break;
			for (int s = 0; s < 2; s++)
				if (in->s[s].k == O_V && in->s[s].v == phi && plain(in->s[s]) && invariant(u, in->s[1 - s]) &&
				    !in->s[1 - s].abs && (in->s[1 - s].k == O_I || !in->s[1 - s].neg)) {
					u->is_lin[phi] = 1;
					u->delta[phi] = in->s[1 - s].k == O_I && in->s[1 - s].neg ? o_imm(0u - in->s[1 - s].v)
												   : in->s[1 - s];
				}
			break;
		}
	}
}

/* The values of B (written once there) linear in the iterations; steps
 * that are not constants are computed in u->g0. */
static void find_linear(struct unroll *u, const blk_t *B)
{
	for (size_t i = 0; i < B->ncode; i++) {
		const inst_t *in = &B->code[i];
		opnd_t step;
		if (in->d.k == O_V && u->ndef[in->d.v] == 1 && linear_inst(u, in, &step)) {
			u->is_lin[in->d.v] = 1;
			u->delta[in->d.v] = step;
		}
	}
}

/* ---- the guard ------------------------------------------------------------------------ */

struct counted {
	uint32_t iv;     /* the induction variable (a phi vreg) */
	uint32_t add;    /* the tested value is iv + add */
	int32_t step;    /* per iteration */
	uint8_t cmod;    /* continue while (iv + add) cmod bound; LT, LE, GT, GE or NE */
	uint8_t type;    /* UD or D */
	opnd_t bound;
};

/* The limit of the guard, computed once in G0 (ordered tests): the tests
 * of U - 1 iterations from z continue when z + R < bound (up; R = reach, or
 * reach - 1 for <=) without wrapping, i.e. z < bound - R when that does not
 * wrap, never otherwise (then the limit is the type's minimum); down
 * symmetrically. */
static opnd_t guard_limit(spv_ctx_t *c, blk_t *b, const struct counted *k)
{
	const uint32_t mag = k->step > 0 ? (uint32_t)k->step : 0u - (uint32_t)k->step;
	const uint32_t reach = (UNROLL - 2) * mag; /* the last tested value is z +- reach */
	const int strict = k->cmod == ZE_CMOD_LT || k->cmod == ZE_CMOD_GT;
	const uint32_t r = strict ? reach : reach - 1;
	const int up = k->step > 0, sgn = k->type == ZE_TYPE_D;
	const uint32_t lo = sgn ? 0x80000000u : 0u, hi = sgn ? 0x7fffffffu : 0xffffffffu;
	blk_t *saved = c->cur;
	c->cur = b;
	opnd_t lim;
	if (up) {
		opnd_t nr = o_imm(0u - r);
		spv_cmp_flag(c, ZE_CMOD_GE, k->type, k->bound, o_imm(lo + r), 0);
		lim = spv_sel(c, 0, 0, spv_alu(c, ZE_OP_ADD, ZE_TYPE_UD, ZE_TYPE_UD, k->bound, nr, o_null()), o_imm(lo));
	} else {
		spv_cmp_flag(c, ZE_CMOD_LE, k->type, k->bound, o_imm(hi - r), 0);
		lim = spv_sel(c, 0, 0, spv_alu(c, ZE_OP_ADD, ZE_TYPE_UD, ZE_TYPE_UD, k->bound, o_imm(r), o_null()), o_imm(hi));
	}
	c->cur = saved;
	return lim;
}

/* bool: the exit tests of U - 1 iterations from iv all continue. */
static opnd_t guard(spv_ctx_t *c, blk_t *b, const struct counted *k, opnd_t iv, opnd_t lim)
{
	blk_t *saved = c->cur;
	c->cur = b;
	opnd_t z = k->add ? spv_alu(c, ZE_OP_ADD, ZE_TYPE_UD, ZE_TYPE_UD, iv, o_imm(k->add), o_null()) : iv;
	opnd_t g;
	if (k->cmod == ZE_CMOD_NE) {
		/* z, z +- 1, ..., z +- reach all differ from the bound */
		opnd_t nz = z, nb = k->bound;
		nz.neg ^= 1;
		nb.neg ^= 1;
		opnd_t dist = k->step > 0 ? spv_alu(c, ZE_OP_ADD, ZE_TYPE_UD, ZE_TYPE_UD, k->bound, nz, o_null())
					  : spv_alu(c, ZE_OP_ADD, ZE_TYPE_UD, ZE_TYPE_UD, z, nb, o_null());
		g = spv_cmp_bool(c, ZE_CMOD_GT, ZE_TYPE_UD, dist, o_imm(UNROLL - 2));
	} else {
		g = spv_cmp_bool(c, k->step > 0 ? ZE_CMOD_LT : ZE_CMOD_GT, k->type, z, lim);
	}
	c->cur = saved;
	return g;
}

static uint8_t mirror(uint8_t cmod)
{
	switch (cmod) {
	case ZE_CMOD_LT: return ZE_CMOD_GT;
	case ZE_CMOD_GT: return ZE_CMOD_LT;
	case ZE_CMOD_LE: return ZE_CMOD_GE;
	case ZE_CMOD_GE: return ZE_CMOD_LE;
	default: return cmod;
	}
}

static uint8_t inverse(uint8_t cmod)
{
	switch (cmod) {
	case ZE_CMOD_LT: return ZE_CMOD_GE;
	case ZE_CMOD_GE: return ZE_CMOD_LT;
	case ZE_CMOD_GT: return ZE_CMOD_LE;
	case ZE_CMOD_LE: return ZE_CMOD_GT;
	case ZE_CMOD_EQ: return ZE_CMOD_NE;
	case ZE_CMOD_NE: return ZE_CMOD_EQ;
	default: return ZE_CMOD_NONE;
	}
}

/* ---- the loops looked at ------------------------------------------------------------- */

struct shape {
	uint32_t ei, xi, pi; /* the back edge block, the exit target, the entering predecessor */
	int cont_true;       /* B's branch continues on true */
};

/* A loop of one block B: a two-way branch to its back edge block E (only
 * B's phi copies, back to B) and to an exit; entered from one other block. */
static int loop_shape(const spv_ctx_t *c, uint32_t bi, struct shape *sh)
{
	const blk_t *B = &c->blk[bi];
	if (!B->reachable || B->rpo < 0 || B->term != TERM_CBR || B->ntarg != 2 || B->npred != 2 || B->cond.k != O_V ||
	    B->cond_hi.k != O_NULL)
		return 0;
	sh->ei = UINT32_MAX;
	for (uint32_t t = 0; t < 2; t++) {
		const blk_t *E = &c->blk[B->targ[t]];
		if (B->targ[t] != bi && E->term == TERM_BR && E->npred == 1 && E->pred[0] == bi && E->nsucc == 1 &&
		    E->succ[0] == bi && sh->ei == UINT32_MAX) {
			sh->ei = B->targ[t];
			sh->cont_true = t == 0;
		}
	}
	if (sh->ei == UINT32_MAX || !c->blk[sh->ei].ncode)
		return 0;
	sh->xi = B->targ[sh->cont_true ? 1 : 0];
	if (sh->xi == bi || sh->xi == sh->ei || (B->pred[0] != sh->ei && B->pred[1] != sh->ei))
		return 0;
	sh->pi = B->pred[0] == sh->ei ? B->pred[1] : B->pred[0];
	return 1;
}

/* P enters `to` instead of B. */
static void retarget(spv_ctx_t *c, uint32_t pi, uint32_t bi, uint32_t to)
{
	blk_t *P = &c->blk[pi];
	for (uint32_t t = 0; t < P->ntarg; t++)
		if (P->targ[t] == bi)
			P->targ[t] = to;
}

/* ---- one loop ------------------------------------------------------------------------- */

static int is_sync_send(const inst_t *in)
{
	if (in->op != ZE_OP_SEND)
		return 0;
	const uint32_t msg = ze_send_msg(in->desc);
	return msg == ZE_MSG_BARRIER || msg == ZE_MSG_FENCE || msg == ZE_MSG_EOT || msg == ZE_MSG_TIMESTAMP;
}

static int predicated_partial(const inst_t *in)
{
	return in->d.k == O_V && ((in->pred && in->op != ZE_OP_SEL) || in->d.sub > 0);
}

static opnd_t mapped(const struct unroll *u, opnd_t o)
{
	if (o.k != O_V || invariant(u, o))
		return o;
	opnd_t m = u->cur[o.v];
	m.neg ^= o.neg;
	m.abs |= o.abs;
	m.sub = o.sub;
	return m;
}

/* The parallel copy dst[i] = src[i] into block b (sources that are also
 * destinations are read first). */
static void parallel_copy(spv_ctx_t *c, blk_t *b, const opnd_t *dst, opnd_t *src, uint32_t n,
			  const struct unroll *u)
{
	for (uint32_t i = 0; i < n; i++)
		if (src[i].k == O_V && src[i].v < u->nv && u->cls[src[i].v] == V_PHI && src[i].v != dst[i].v)
			src[i] = emit_alu(c, b, ZE_OP_MOV, src[i], o_null());
	for (uint32_t i = 0; i < n; i++) {
		if (src[i].k == O_V && src[i].v == dst[i].v && plain(src[i]))
			continue;
		inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = dst[i], .s = {src[i]}, .phi_copy = 1};
		if (src[i].k == O_V && c->vr[src[i].v].hint == UINT32_MAX)
			c->vr[src[i].v].hint = dst[i].v;
		spv_emit_to(c, b, &mv);
	}
}

static int unroll_loop(spv_ctx_t *c, uint32_t bi)
{
	struct shape sh;
	if (!loop_shape(c, bi, &sh) || c->blk[bi].ncode > UNROLL_MAX_CODE)
		return 0;
	blk_t *B = &c->blk[bi];
	const uint32_t ei = sh.ei, xi = sh.xi, pi = sh.pi;
	const int cont_true = sh.cont_true;
	const blk_t *E = &c->blk[ei];

	const uint32_t nv = c->nvr;
	struct unroll U = {.c = c, .nv = nv, .bi = bi, .ei = ei, .xi = xi};
	struct unroll *u = &U;
	u->cls = spv_alloc(c, nv + 1);
	u->ndef = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < E->ncode; i++) {
		const inst_t *in = &E->code[i];
		if (in->op != ZE_OP_MOV || !in->phi_copy || in->pred || in->d.k != O_V || !plain(in->d) ||
		    c->vr[in->d.v].size != 1 || in->dt != in->st || in->s[0].neg || in->s[0].abs || in->s[0].sub ||
		    u->cls[in->d.v])
			return 0;
		u->cls[in->d.v] = V_PHI;
	}
	for (size_t i = 0; i < B->ncode; i++) {
		const inst_t *in = &B->code[i];
		if (is_sync_send(in))
			return 0;
		if (in->d.k == O_V) {
			if (u->cls[in->d.v] == V_PHI || c->vr[in->d.v].size != 1)
				return 0;
			u->cls[in->d.v] = V_DEF;
			u->ndef[in->d.v]++;
		}
	}
	/* Every value of B is written before it is read in B (no value carried
	 * from one iteration to the next but through the phis), by a whole write
	 * first; flags are set in B before B reads them. */
	uint8_t *seen = spv_alloc(c, nv + 1);
	int flag_set[2] = {0, 0};
	for (size_t i = 0; i < B->ncode; i++) {
		const inst_t *in = &B->code[i];
		for (int s = 0; s < 3; s++)
			if (in->s[s].k == O_V && u->cls[in->s[s].v] == V_DEF && !seen[in->s[s].v])
				return 0;
		if (in->pred && !flag_set[in->flag & 1])
			return 0;
		if (in->d.k == O_V) {
			if (predicated_partial(in) && !seen[in->d.v])
				return 0;
			seen[in->d.v] = 1;
		}
		if (in->op == ZE_OP_CMP)
			flag_set[in->flag & 1] = 1;
	}
	if (u->cls[B->cond.v] != V_DEF || B->cond_hi.k != O_NULL)
		return 0;
	for (size_t i = 0; i < E->ncode; i++)
		if (E->code[i].s[0].k == O_V && u->cls[E->code[i].s[0].v] == V_DEF && !seen[E->code[i].s[0].v])
			return 0;

	/* the exit test: continue while x cmod bound */
	const inst_t *test = NULL;
	for (size_t i = 0; i < B->ncode; i++)
		if (B->code[i].d.k == O_V && B->code[i].d.v == B->cond.v)
			test = &B->code[i];
	if (!test || test->op != ZE_OP_CMP || test->pred || u->ndef[B->cond.v] != 1 || !is_int32(test->st))
		return 0;
	struct counted k = {.type = test->st};
	k.cmod = cont_true ? test->cmod : inverse(test->cmod);
	opnd_t x = test->s[0];
	k.bound = test->s[1];
	if (!invariant(u, k.bound)) {
		x = test->s[1];
		k.bound = test->s[0];
		k.cmod = mirror(k.cmod);
	}
	if (!invariant(u, k.bound) || k.bound.abs || x.k != O_V || !plain(x) || k.cmod == ZE_CMOD_EQ ||
	    k.cmod == ZE_CMOD_NONE)
		return 0;

	/* G0 holds the steps computed once: made now, filled by the analysis */
	uint32_t g0i;
	new_block(c, B->word, &g0i);
	B = &c->blk[bi];
	E = &c->blk[ei];
	u->g0 = &c->blk[g0i];

	find_ivs(u, B, E);
	/* the tested value: the induction variable plus a constant (a chain of
	 * adds of constants, e.g. (i + 1) + 1u) */
	k.add = 0;
	for (int depth = 0;; depth++) {
		if (u->cls[x.v] == V_PHI) {
			k.iv = x.v;
			break;
		}
		const inst_t *def = NULL;
		for (size_t i = 0; i < B->ncode; i++)
			if (B->code[i].d.k == O_V && B->code[i].d.v == x.v)
				def = &B->code[i];
		if (depth == 4 || !def || u->cls[x.v] != V_DEF || u->ndef[x.v] != 1 || def->op != ZE_OP_ADD ||
		    def->pred || def->cmod || !is_int32(def->dt) || def->dt != def->st)
			goto undo;
		int found = 0;
		for (int s = 0; s < 2 && !found; s++)
			if (def->s[s].k == O_V && plain(def->s[s]) && def->s[1 - s].k == O_I && !def->s[1 - s].abs) {
				k.add += def->s[1 - s].neg ? 0u - def->s[1 - s].v : def->s[1 - s].v;
				x = def->s[s];
				found = 1;
			}
		if (!found)
			goto undo;
	}
	if (!u->is_lin[k.iv] || u->delta[k.iv].k != O_I)
		goto undo;
	k.step = (int32_t)u->delta[k.iv].v;
	if (k.step == 0 || k.step > (1 << 16) || k.step < -(1 << 16))
		goto undo;
	if ((k.cmod == ZE_CMOD_LT || k.cmod == ZE_CMOD_LE) && k.step < 0)
		goto undo;
	if ((k.cmod == ZE_CMOD_GT || k.cmod == ZE_CMOD_GE) && k.step > 0)
		goto undo;
	if (k.cmod == ZE_CMOD_NE && k.step != 1 && k.step != -1)
		goto undo;

	find_linear(u, B);

	/* addresses linear in the iterations: carried from trip to trip (set in
	 * G0 from the phis, advanced by U steps at the end of UH) instead of
	 * computed again from the induction variable in each trip */
	uint8_t *promote = spv_alloc(c, nv + 1);
	int npromote = 0;
	for (size_t i = 0; i < B->ncode; i++) {
		const opnd_t a = B->code[i].s[0];
		if (B->code[i].op == ZE_OP_SEND && a.k == O_V && a.v < nv && plain(a) && u->cls[a.v] == V_DEF &&
		    u->is_lin[a.v] && !(u->delta[a.v].k == O_I && u->delta[a.v].v == 0) && !promote[a.v]) {
			promote[a.v] = 1;
			npromote++;
		}
	}
	opnd_t *g0v = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
	if (npromote)
		for (size_t i = 0; i < B->ncode; i++) {
			const inst_t *in = &B->code[i];
			if (in->d.k != O_V || !u->is_lin[in->d.v] || u->cls[in->d.v] != V_DEF)
				continue;
			inst_t cp = *in;
			for (int s = 0; s < 3; s++) {
				const opnd_t o = in->s[s];
				if (o.k == O_V && o.v < nv && u->cls[o.v] == V_DEF) {
					opnd_t m = g0v[o.v];
					m.neg ^= o.neg;
					m.abs |= o.abs;
					cp.s[s] = m;
				}
			}
			cp.d = o_v(spv_new_vreg(c, 1));
			g0v[in->d.v] = cp.d;
			spv_emit_to(c, u->g0, &cp);
		}

	/* ---- the new blocks ---- */
	uint32_t uhi, uei, xbi, xli, xei;
	new_block(c, B->word, &uhi);
	new_block(c, B->word, &uei);
	new_block(c, B->word, &xli);
	new_block(c, B->word, &xbi);
	new_block(c, B->word, &xei);
	B = &c->blk[bi];
	E = &c->blk[ei];
	u->g0 = &c->blk[g0i];
	u->cur = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
	u->first = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
	u->done = spv_alloc(c, nv + 1);
	opnd_t *startlast = spv_alloc(c, (nv + 1) * sizeof(opnd_t)); /* phis at the start of the last copy */
	for (size_t i = 0; i < E->ncode; i++)
		u->cur[E->code[i].d.v] = E->code[i].d;
	const uint32_t nphi = (uint32_t)E->ncode;
	opnd_t *pd = spv_alloc(c, (nphi + 1) * sizeof(opnd_t)), *ps = spv_alloc(c, (nphi + 1) * sizeof(opnd_t));
	for (uint32_t j = 0; j < UNROLL; j++) {
		blk_t *H = &c->blk[uhi];
		memset(u->done, 0, nv + 1);
		if (j == UNROLL - 1)
			for (size_t i = 0; i < E->ncode; i++)
				startlast[E->code[i].d.v] = u->cur[E->code[i].d.v];
		for (size_t i = 0; i < B->ncode; i++) {
			const inst_t *in = &B->code[i];
			const uint32_t d = in->d.k == O_V ? in->d.v : UINT32_MAX;
			if (d != UINT32_MAX && promote[d] && j == 0) {
				u->cur[d] = u->first[d] = g0v[d];
				u->done[d] = 1;
				continue;
			}
			if (d != UINT32_MAX && u->is_lin[d] && j > 0) {
				const opnd_t st = u->delta[d];
				if (st.k == O_I && st.v == 0) {
					u->cur[d] = u->first[d];
				} else if (st.k == O_I) {
					inst_t a = {.op = ZE_OP_ADD, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .loc = in->loc,
						    .d = o_v(spv_new_vreg(c, 1)), .s = {u->first[d], o_imm(st.v * j)}};
					spv_emit_to(c, H, &a);
					u->cur[d] = a.d;
				} else {
					inst_t a = {.op = ZE_OP_ADD, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .loc = in->loc,
						    .d = o_v(spv_new_vreg(c, 1)), .s = {u->cur[d], st}};
					spv_emit_to(c, H, &a);
					u->cur[d] = a.d;
				}
				u->done[d] = 1;
				continue;
			}
			inst_t cp = *in;
			for (int s = 0; s < 3; s++)
				cp.s[s] = mapped(u, in->s[s]);
			if (d != UINT32_MAX) {
				if (!u->done[d]) {
					u->cur[d] = o_v(spv_new_vreg(c, 1));
					u->done[d] = 1;
					if (j == 0)
						u->first[d] = u->cur[d];
				}
				cp.d = u->cur[d];
				cp.d.sub = in->d.sub;
			}
			spv_emit_to(c, H, &cp);
		}
		/* the back edge's copies, in parallel */
		for (uint32_t i = 0; i < nphi; i++)
			ps[i] = mapped(u, E->code[i].s[0]);
		for (uint32_t i = 0; i < nphi; i++)
			u->cur[E->code[i].d.v] = ps[i];
	}
	for (uint32_t v = 0; v < nv; v++)
		if (promote[v]) {
			const opnd_t st = u->delta[v];
			inst_t a = {.op = ZE_OP_ADD, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = g0v[v],
				    .s = {g0v[v], st.k == O_I ? o_imm(st.v * UNROLL) : mul_step(u, st, o_imm(UNROLL))}};
			spv_emit_to(c, &c->blk[uhi], &a);
		}
	/* UH's exit: the last copy continues and U - 1 more iterations will */
	const opnd_t last_cond = u->cur[B->cond.v];
	const opnd_t lim = k.cmod == ZE_CMOD_NE ? o_null() : guard_limit(c, &c->blk[g0i], &k);
	{
		blk_t *saved = c->cur;
		opnd_t g = guard(c, &c->blk[uhi], &k, u->cur[k.iv], lim);
		c->cur = &c->blk[uhi];
		/* the last copy's test as a continue test (the branch may exit on true) */
		const opnd_t cont = cont_true ? last_cond : spv_cmp_bool(c, ZE_CMOD_EQ, ZE_TYPE_UD, last_cond, o_imm(0));
		g = spv_alu(c, ZE_OP_AND, ZE_TYPE_UD, ZE_TYPE_UD, g, cont, o_null());
		c->cur = saved;
		set_targets(c, uhi, TERM_CBR, g, uei, xli);
	}
	for (uint32_t i = 0; i < nphi; i++) {
		pd[i] = E->code[i].d;
		ps[i] = u->cur[E->code[i].d.v];
	}
	parallel_copy(c, &c->blk[uei], pd, ps, nphi, u);
	set_targets(c, uei, TERM_BR, o_null(), uhi, 0);
	for (uint32_t i = 0; i < nphi; i++)
		ps[i] = u->cur[E->code[i].d.v];
	parallel_copy(c, &c->blk[xbi], pd, ps, nphi, u);
	set_targets(c, xbi, TERM_BR, o_null(), bi, 0);

	/* XE (X's exit edge): the values read after the loop, as the last
	 * iteration left them (on the edge, so that they do not interfere
	 * with the phis the lanes continuing in B take along) */
	uint8_t *live_out = spv_alloc(c, nv + 1);
	for (uint32_t i = 0; i < c->nblk; i++) {
		const blk_t *b = &c->blk[i];
		if (!b->reachable || i == bi || i == ei || i == uhi || i == uei || i == xbi || i == xli || i == xei || i == g0i)
			continue;
		for (size_t j = 0; j < b->ncode; j++) {
			for (int s = 0; s < 3; s++)
				if (b->code[j].s[s].k == O_V && b->code[j].s[s].v < nv)
					live_out[b->code[j].s[s].v] = 1;
			if (b->code[j].d.k == O_V && b->code[j].d.v < nv && predicated_partial(&b->code[j]))
				live_out[b->code[j].d.v] = 1;
		}
		if (b->cond.k == O_V && b->cond.v < nv)
			live_out[b->cond.v] = 1;
		if (b->cond_hi.k == O_V && b->cond_hi.v < nv)
			live_out[b->cond_hi.v] = 1;
	}
	{
		uint32_t n = 0;
		opnd_t *od = spv_alloc(c, (nv + 1) * sizeof(opnd_t)), *os = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
		for (uint32_t v = 0; v < nv; v++) {
			if (!live_out[v] || !u->cls[v])
				continue;
			od[n] = o_v(v);
			os[n++] = u->cls[v] == V_PHI ? startlast[v] : u->cur[v];
		}
		parallel_copy(c, &c->blk[xei], od, os, n, u);
	}
	set_targets(c, xei, TERM_BR, o_null(), xi, 0);
	if (cont_true)
		set_targets(c, xli, TERM_CBR, last_cond, xbi, xei);
	else
		set_targets(c, xli, TERM_CBR, last_cond, xei, xbi);

	/* G0: the guard of the first trip */
	{
		opnd_t g = guard(c, &c->blk[g0i], &k, o_v(k.iv), lim);
		set_targets(c, g0i, TERM_CBR, g, uhi, bi);
	}
	retarget(c, pi, bi, g0i);
	rebuild_cfg(c);
	return 1;

undo:
	/* G0 was made but nothing points to it: drop it (it is the last block) */
	c->nblk--;
	return 0;
}

/* ---- global loads one iteration ahead ---------------------------------------------------- */

/* A single-block loop B (back edge block E) that is not unrolled (it has a
 * barrier, or is large) and reads global memory it does not write: the
 * global loads whose addresses and predicates come from the phis and
 * loop-invariant values only -- with everything computing them, the set H --
 * run one iteration ahead.  H runs once for the first iteration in a new
 * block G before the loop, and at the end of each iteration for the next
 * one (from the values the back edge copies into the phis, the loads also
 * predicated on the loop continuing), before B's last barrier: the loads
 * then fly while the rest of the iteration works (the tiled matrix
 * multiply's next tiles while it multiplies the current ones).  Legal when
 * B stores nothing to global memory and no fence or barrier in it orders
 * global memory; H's values are read in B only (not after the loop, not by
 * the back edge's copies, not by the exit test). */
static int pipeline_loop(spv_ctx_t *c, uint32_t bi)
{
	struct shape sh;
	if (!loop_shape(c, bi, &sh) || c->blk[bi].ncode > 400)
		return 0;
	blk_t *B = &c->blk[bi];
	const uint32_t ei = sh.ei, pi = sh.pi;
	const int cont_true = sh.cont_true;
	const blk_t *E = &c->blk[ei];
	const uint32_t nv = c->nvr;
	uint8_t *cls = spv_alloc(c, nv + 1);
	for (size_t i = 0; i < E->ncode; i++) {
		const inst_t *in = &E->code[i];
		if (in->op != ZE_OP_MOV || !in->phi_copy || in->pred || in->d.k != O_V || !plain(in->d) || cls[in->d.v])
			return 0;
		cls[in->d.v] = V_PHI;
	}
	for (size_t i = 0; i < E->ncode; i++)
		if (E->code[i].s[0].k == O_V && cls[E->code[i].s[0].v] == V_PHI)
			return 0; /* a phi copied into a phi: the end copy would read it too late */
	const size_t n = B->ncode;
	size_t last_barrier = n;
	int loads = 0;
	for (size_t i = 0; i < n; i++) {
		const inst_t *in = &B->code[i];
		if (in->d.k == O_V) {
			if (cls[in->d.v] == V_PHI || c->vr[in->d.v].size != 1 || in->d.sub)
				return 0;
			cls[in->d.v] = V_DEF;
		}
		if (in->op != ZE_OP_SEND)
			continue;
		const uint32_t msg = ze_send_msg(in->desc);
		if (msg == ZE_MSG_STORE || msg == ZE_MSG_ATOMIC || msg == ZE_MSG_EOT || msg == ZE_MSG_TIMESTAMP ||
		    ((msg == ZE_MSG_FENCE || msg == ZE_MSG_BARRIER) && in->gmem))
			return 0;
		if (msg == ZE_MSG_BARRIER)
			last_barrier = i;
		if (msg == ZE_MSG_LOAD)
			loads = 1;
	}
	if (!loads)
		return 0;
	/* the instructions after the last barrier must be arithmetic (the end
	 * copy goes before the barrier, and they with it) */
	for (size_t i = last_barrier + 1; i < n; i++)
		if (B->code[i].op == ZE_OP_SEND || !ze_op_info(B->code[i].op))
			return 0;

	/* movable: computed from phis, invariants and other movable results */
	uint8_t *mov = spv_alloc(c, n + 1);
	uint8_t *bad = spv_alloc(c, nv + 1); /* a vreg with a definition that cannot move */
	uint8_t *defd = spv_alloc(c, nv + 1);
	for (int changed = 1; changed;) {
		changed = 0;
		int32_t fw[2] = {-1, -1}; /* last writer of each flag */
		memset(defd, 0, nv + 1);
		for (size_t i = 0; i < n; i++) {
			const inst_t *in = &B->code[i];
			int ok = in->op != ZE_OP_SEND || ze_send_msg(in->desc) == ZE_MSG_LOAD;
			if (in->op != ZE_OP_SEND && !ze_op_info(in->op))
				ok = 0;
			for (int s = 0; s < 3 && ok; s++) {
				const opnd_t o = in->s[s];
				if (o.k == O_V && cls[o.v] == V_DEF && (!defd[o.v] || bad[o.v]))
					ok = 0;
			}
			if (ok && in->pred && (fw[in->flag & 1] < 0 || !mov[fw[in->flag & 1]]))
				ok = 0;
			if (ok && in->d.k == O_V && (bad[in->d.v] || (predicated_partial(in) && !defd[in->d.v])))
				ok = 0;
			if (in->d.k == O_V) {
				defd[in->d.v] = 1;
				if (!ok && !bad[in->d.v]) {
					bad[in->d.v] = 1;
					changed = 1;
				}
			}
			if (mov[i] != ok) {
				mov[i] = (uint8_t)ok;
				changed = 1;
			}
			if (in->op == ZE_OP_CMP)
				fw[in->flag & 1] = (int32_t)i;
		}
	}
	/* H: the movable global loads and what they need, and every definition
	 * of a value H defines */
	uint8_t *h = spv_alloc(c, n + 1);
	uint8_t *hv = spv_alloc(c, nv + 1);
	for (size_t i = 0; i < n; i++)
		if (mov[i] && B->code[i].op == ZE_OP_SEND)
			h[i] = 1;
	for (int changed = 1; changed;) {
		changed = 0;
		int32_t fw[2] = {-1, -1};
		for (size_t i = 0; i < n; i++) {
			const inst_t *in = &B->code[i];
			if (in->d.k == O_V && hv[in->d.v] && !h[i]) {
				if (!mov[i])
					return 0;
				h[i] = 1;
				changed = 1;
			}
			if (h[i]) {
				if (in->d.k == O_V && !hv[in->d.v]) {
					hv[in->d.v] = 1;
					changed = 1;
				}
				for (int s = 0; s < 3; s++)
					if (in->s[s].k == O_V && cls[in->s[s].v] == V_DEF && !hv[in->s[s].v]) {
						hv[in->s[s].v] = 1;
						changed = 1;
					}
				if (in->pred && !h[fw[in->flag & 1]]) {
					h[fw[in->flag & 1]] = 1;
					changed = 1;
				}
			}
			if (in->op == ZE_OP_CMP)
				fw[in->flag & 1] = (int32_t)i;
		}
	}
	/* H's values stay inside B, its flags inside H */
	if (B->cond.v < nv && hv[B->cond.v])
		return 0;
	for (size_t i = 0; i < E->ncode; i++)
		if (E->code[i].s[0].k == O_V && hv[E->code[i].s[0].v])
			return 0;
	for (uint32_t b = 0; b < c->nblk; b++) {
		const blk_t *X = &c->blk[b];
		if (!X->reachable || b == bi)
			continue;
		for (size_t i = 0; i < X->ncode; i++)
			for (int s = 0; s < 3; s++)
				if (X->code[i].s[s].k == O_V && X->code[i].s[s].v < nv && hv[X->code[i].s[s].v])
					return 0;
		if ((X->cond.k == O_V && X->cond.v < nv && hv[X->cond.v]) ||
		    (X->cond_hi.k == O_V && X->cond_hi.v < nv && hv[X->cond_hi.v]))
			return 0;
	}
	{
		int32_t fw[2] = {-1, -1};
		for (size_t i = 0; i < n; i++) {
			const inst_t *in = &B->code[i];
			if (!h[i] && in->pred && fw[in->flag & 1] >= 0 && h[fw[in->flag & 1]])
				return 0;
			if (in->op == ZE_OP_CMP)
				fw[in->flag & 1] = (int32_t)i;
		}
	}
	/* a value H defines is not read before H defines it (it would be the
	 * previous iteration's); H's loads: a plain predicate, or a flag free
	 * for one */
	{
		memset(defd, 0, nv + 1);
		size_t *last = spv_alloc(c, (nv + 1) * sizeof(size_t));
		for (size_t i = 0; i < n; i++)
			if (B->code[i].d.k == O_V)
				last[B->code[i].d.v] = i;
		for (size_t i = 0; i < n; i++) {
			const inst_t *in = &B->code[i];
			for (int s = 0; s < 3; s++)
				if (in->s[s].k == O_V && hv[in->s[s].v] &&
				    (!defd[in->s[s].v] || (!h[i] && i < last[in->s[s].v])))
					return 0; /* outside H: only H's final value */
			if (in->d.k == O_V)
				defd[in->d.v] = 1;
		}
	}
	uint8_t *load_flag = spv_alloc(c, n + 1);
	for (size_t i = 0; i < n; i++) {
		const inst_t *in = &B->code[i];
		if (!h[i] || in->op != ZE_OP_SEND)
			continue;
		if (in->pred) {
			load_flag[i] = in->flag & 1;
			continue;
		}
		int free_flag[2] = {1, 1};
		for (uint32_t q = 0; q < 2; q++)
			for (size_t j = i + 1; j < n; j++) {
				if (!h[j])
					continue;
				if (B->code[j].pred && (B->code[j].flag & 1) == q) {
					free_flag[q] = 0;
					break;
				}
				if (B->code[j].op == ZE_OP_CMP && (B->code[j].flag & 1) == q)
					break;
			}
		if (!free_flag[0] && !free_flag[1])
			return 0;
		load_flag[i] = free_flag[0] ? 0 : 1;
	}
	/* the phis' next values: defined before the end copy goes (before the
	 * last barrier, or anywhere when the instructions after it move too) */
	opnd_t *next = spv_alloc(c, (nv + 1) * sizeof(opnd_t));
	for (size_t i = 0; i < E->ncode; i++)
		next[E->code[i].d.v] = E->code[i].s[0];

	/* G: H for the first iteration */
	uint32_t gi;
	new_block(c, c->blk[bi].word, &gi);
	B = &c->blk[bi];
	E = &c->blk[ei];
	blk_t *G = &c->blk[gi];
	for (size_t i = 0; i < n; i++)
		if (h[i])
			spv_emit_to(c, G, &B->code[i]);
	set_targets(c, gi, TERM_BR, o_null(), bi, 0);
	/* H's values linear in the iterations advance by their step instead of
	 * being computed again (those only other such values read: not at
	 * all; those that do not change: computed in G only) */
	struct unroll U = {.c = c, .nv = nv, .cls = cls, .g0 = G};
	U.ndef = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		if (B->code[i].d.k == O_V)
			U.ndef[B->code[i].d.v]++;
	find_ivs(&U, B, E);
	find_linear(&U, B);
	B = &c->blk[bi];
	uint8_t *conv = spv_alloc(c, n + 1), *need = spv_alloc(c, nv + 1);
	for (size_t i = 0; i < n; i++) {
		const inst_t *in = &B->code[i];
		conv[i] = h[i] && in->d.k == O_V && U.is_lin[in->d.v] && U.ndef[in->d.v] == 1 && !in->pred;
		if (conv[i])
			continue;
		for (int s = 0; s < 3; s++)
			if (in->s[s].k == O_V && in->s[s].v < nv)
				need[in->s[s].v] = 1;
		if (in->d.k == O_V && predicated_partial(in))
			need[in->d.v] = 1;
	}
	/* B: the rest, then H for the next iteration (phis read as their next
	 * values, loads also predicated on continuing), then the last barrier */
	inst_t *old = spv_alloc(c, n * sizeof(inst_t));
	memcpy(old, B->code, n * sizeof(inst_t));
	B->ncode = 0;
	for (size_t i = 0; i < n; i++)
		if (!h[i] && i != last_barrier)
			spv_emit_to(c, B, &old[i]);
	for (size_t i = 0; i < n; i++) {
		if (!h[i])
			continue;
		if (conv[i]) {
			const uint32_t v = old[i].d.v;
			const opnd_t st = U.delta[v];
			if (need[v] && !(st.k == O_I && st.v == 0)) {
				inst_t a = {.op = ZE_OP_ADD, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .loc = old[i].loc,
					    .d = old[i].d, .s = {old[i].d, st}};
				spv_emit_to(c, B, &a);
			}
			continue;
		}
		inst_t in = old[i];
		for (int s = 0; s < 3; s++)
			if (in.s[s].k == O_V && cls[in.s[s].v] == V_PHI) {
				opnd_t x = next[in.s[s].v];
				x.neg ^= in.s[s].neg;
				x.abs |= in.s[s].abs;
				in.s[s] = x;
			}
		if (in.op == ZE_OP_SEND) {
			/* and only where the loop continues */
			const uint8_t f = load_flag[i];
			/* (f) load: f &= continues; (!f) load: f |= leaves */
			const int inv = in.pred && in.pinv;
			inst_t t = {.op = ZE_OP_CMP, .cmod = (cont_true ^ inv) ? ZE_CMOD_NE : ZE_CMOD_EQ, .st = ZE_TYPE_UD,
				    .flag = f, .flag_live = 1, .pred = in.pred, .pinv = (uint8_t)inv, .d = o_null(),
				    .s = {B->cond, o_imm(0)}, .loc = in.loc};
			spv_emit_to(c, B, &t);
			in.pred = 1;
			in.pinv = (uint8_t)inv;
			in.flag = f;
		}
		spv_emit_to(c, B, &in);
	}
	if (last_barrier < n)
		spv_emit_to(c, B, &old[last_barrier]);
	retarget(c, pi, bi, gi);
	rebuild_cfg(c);
	return 1;
}

/* ---- loop-invariant code ------------------------------------------------------------------ */

/* Arithmetic of a single-block loop whose operands do not change in the loop
 * (a divisor's reciprocal, a row's base address, a constant moved into a
 * register) moves to a new block H before it, in order: computed once
 * instead of once per iteration.  Only plain unpredicated instructions that
 * set no flag, writing a value written nowhere else in the loop and not read
 * in it before (B runs at least once after H, and nothing in B reads the
 * value before the place it used to be computed). */
static int hoist_invariants(spv_ctx_t *c, uint32_t bi)
{
	struct shape sh;
	if (!loop_shape(c, bi, &sh))
		return 0;
	const blk_t *B = &c->blk[bi], *E = &c->blk[sh.ei];
	const uint32_t nv = c->nvr;
	uint8_t *cls = spv_alloc(c, nv + 1);
	uint32_t *ndef = spv_alloc(c, (nv + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < E->ncode; i++)
		if (E->code[i].d.k == O_V)
			cls[E->code[i].d.v] = V_PHI;
	for (size_t i = 0; i < B->ncode; i++)
		if (B->code[i].d.k == O_V) {
			cls[B->code[i].d.v] = cls[B->code[i].d.v] ? cls[B->code[i].d.v] : V_DEF;
			ndef[B->code[i].d.v]++;
		}
	uint8_t *read = spv_alloc(c, nv + 1), *out = spv_alloc(c, B->ncode + 1);
	size_t nout = 0;
	for (size_t i = 0; i < B->ncode; i++) {
		const inst_t *in = &B->code[i];
		int ok = spv_pure_op(in->op) && !in->pred && !in->cmod && in->d.k == O_V && !in->d.sub && cls[in->d.v] == V_DEF &&
			 ndef[in->d.v] == 1 && !read[in->d.v] && c->vr[in->d.v].size == 1;
		for (int k = 0; k < 3 && ok; k++) {
			const opnd_t o = in->s[k];
			if (o.k == O_V && (o.v >= nv || cls[o.v] != V_OUT))
				ok = 0;
		}
		for (int k = 0; k < 3; k++)
			if (in->s[k].k == O_V && in->s[k].v < nv)
				read[in->s[k].v] = 1;
		if (ok) {
			out[i] = 1;
			nout++;
			cls[in->d.v] = V_OUT; /* invariant from here on */
		}
	}
	if (!nout)
		return 0;
	uint32_t hi;
	new_block(c, c->blk[bi].word, &hi);
	blk_t *H = &c->blk[hi];
	blk_t *b = &c->blk[bi];
	size_t m = 0;
	for (size_t i = 0; i < b->ncode; i++) {
		if (out[i])
			spv_emit_to(c, H, &b->code[i]);
		else
			b->code[m++] = b->code[i];
	}
	b->ncode = m;
	set_targets(c, hi, TERM_BR, o_null(), bi, 0);
	retarget(c, sh.pi, bi, hi);
	rebuild_cfg(c);
	return 1;
}

/* ---- all loops ------------------------------------------------------------------------ */

/* Each pass over a loop takes arrays of about 100 bytes per value of the
 * kernel: loops are looked at until this many value slots were spent (about
 * 200 MB at most; typical kernels have a few thousand values and a few loops). */
#define LOOP_BUDGET (2u << 20)

int spv_unroll_loops(spv_ctx_t *c)
{
	int n = 0;
	const uint32_t nblk = c->nblk;
	uint64_t spent = 0;
	for (uint32_t i = 0; i < nblk; i++) {
		struct shape sh;
		if (!loop_shape(c, i, &sh))
			continue;
		spent += c->nvr;
		if (spent > LOOP_BUDGET)
			break;
		n += hoist_invariants(c, i);
		const int u = unroll_loop(c, i);
		n += u ? u : pipeline_loop(c, i);
	}
	return n;
}
