/* OpenCL.std printf (see spv_internal.h).  As real drivers do it, the kernel
 * does not format: each printing lane appends a record to the printf buffer
 * (the hidden argument __zs_printf, layout in spv_compile.h) — the format's id
 * and the arguments' raw dwords — and the driver formats the records on the
 * host once the kernel has completed (driver/zs_printf.c).  The format is a
 * string literal, known here: it goes into the module's .zesim.printf with the
 * kinds of the arguments (docs/module-format.md). */
#include "spv_internal.h"

#include <string.h>

/* Skips a width or precision: digits, or '*' (which takes an argument). */
static const char *skip_count(const char *f, uint32_t *arg)
{
	if (*f == '*') {
		(*arg)++;
		f++;
	}
	while (*f >= '0' && *f <= '9')
		f++;
	return f;
}

/* Marks the arguments that %s conversions consume.  Conversions map to
 * arguments in order ('*' widths and precisions take one too); the driver
 * checks every conversion against the kind of its argument. */
static void string_args(const char *f, uint8_t *is_string, uint32_t nargs)
{
	uint32_t arg = 0;
	while (*f) {
		if (*f++ != '%')
			continue;
		if (*f == '%') {
			f++;
			continue;
		}
		while (*f && strchr("-+ #0", *f))
			f++;
		f = skip_count(f, &arg); /* width */
		if (*f == '.')
			f = skip_count(f + 1, &arg); /* precision */
		while (*f && strchr("vhlLzjt0123456789", *f))
			f++; /* vector size and length (the driver checks them) */
		if (!*f)
			return;
		if (*f == 's' && arg < nargs)
			is_string[arg] = 1;
		arg++;
		f++;
	}
}

/* The 64-bit address a pointer holds: base + zero-extended offset. */
static void pointer_dwords(spv_ctx_t *c, const val_t *p, opnd_t *lo, opnd_t *hi)
{
	const uint8_t U = ZE_TYPE_UD;
	switch (p->root.k) {
	case R_GLOBAL: {
		const opnd_t base_lo = o_s(p->root.breg, p->root.bsub), base_hi = o_s(p->root.breg, p->root.bsub + 1u);
		*lo = spv_alu(c, ZE_OP_ADD, U, U, base_lo, p->leaf[0], o_null());
		const opnd_t carry = spv_cmp_bool(c, ZE_CMOD_LT, U, *lo, base_lo); /* ~0 = -1 on a carry */
		*hi = spv_alu(c, ZE_OP_ADD, U, U, base_hi, (opnd_t){O_V, 1, 0, 0, carry.v}, o_null());
		return;
	}
	case R_SLM:
		*lo = p->leaf[0];
		*hi = o_imm(0);
		return;
	case R_DYN:
		*lo = p->leaf[0];
		*hi = p->leaf[1];
		return;
	case R_NULL:
		*lo = *hi = o_imm(0);
		return;
	default:
		spv_fail(c, c->cur_word, "printf of a pointer whose buffer is not known at compile time");
	}
}

void spv_printf(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint8_t U = ZE_TYPE_UD;
	if (in->nwords < 6)
		spv_fail(c, in->off, "printf without a format");
	const val_t *fv = spv_use(c, in->w[5]);
	const char *format = NULL;
	if (spv_data_root(&fv->root) && fv->leaf[0].k == O_I && !fv->leaf[0].neg)
		format = spv_data_string(c, fv->leaf[0].v);
	if (!format)
		spv_fail(c, in->off, "printf: the format must be a string literal (a __constant string known at "
			 "compile time)");
	const uint32_t nargs = in->nwords - 6u;
	if (nargs > ZE_MAX_PRINTF_ARGS)
		spv_fail(c, in->off, "printf with %u arguments (at most %u)", nargs, ZE_MAX_PRINTF_ARGS);
	uint8_t is_string[ZE_MAX_PRINTF_ARGS] = {0};
	string_args(format, is_string, nargs);

	/* The record: size, format id, then each argument's dwords. */
	uint32_t kinds[ZE_MAX_PRINTF_ARGS];
	opnd_t dw[2 + 2 * 16 * ZE_MAX_PRINTF_ARGS];
	uint32_t ndw = 2;
	for (uint32_t i = 0; i < nargs; i++) {
		const val_t *v = spv_use(c, in->w[6 + i]);
		const spv_type_t *t = &c->types[v->type];
		const spv_type_t *e = t->k == TY_VEC ? &c->types[t->elem] : t;
		const uint32_t count = t->k == TY_VEC ? t->count : 1;
		uint32_t kind;
		opnd_t conv[16];
		if (e->k == TY_FLOAT && e->width == 64 && t->nleaf == 2 * count && count <= 16) {
			/* a double constant (printf's promotion of a float literal): the
			 * device has no fp64, so it is printed as the float it rounds to */
			for (uint32_t k = 0; k < count; k++) {
				if (v->leaf[2 * k].k != O_I || v->leaf[2 * k + 1].k != O_I)
					spv_fail(c, in->off, "printf argument %u: double values cannot be printed (the device "
						 "has no fp64)", i + 1);
				const uint64_t bits = v->leaf[2 * k].v | (uint64_t)v->leaf[2 * k + 1].v << 32;
				double d;
				memcpy(&d, &bits, 8);
				const float f = (float)d;
				uint32_t fb;
				memcpy(&fb, &f, 4);
				conv[k] = o_imm(fb);
			}
			kinds[i] = ZM_PF_ARG(ZM_PF_FLOAT, count);
			for (uint32_t k = 0; k < count; k++)
				dw[ndw++] = conv[k];
			continue;
		}
		if (e->k == TY_INT || e->k == TY_BOOL)
			kind = e->k == TY_INT && e->width == 64 ? ZM_PF_LONG : ZM_PF_INT;
		else if (e->k == TY_FLOAT && e->width == 32)
			kind = ZM_PF_FLOAT;
		else if (e->k == TY_PTR && count == 1)
			kind = is_string[i] ? ZM_PF_STRING : ZM_PF_POINTER;
		else
			spv_fail(c, in->off, "printf argument %u: values of this type cannot be printed", i + 1);
		kinds[i] = ZM_PF_ARG(kind, count);
		if (kind == ZM_PF_STRING) {
			if (!spv_data_root(&v->root))
				spv_fail(c, in->off, "printf argument %u: %%s of a string that is not a __constant string of the "
					 "program", i + 1);
			dw[ndw++] = v->leaf[0]; /* its offset in the data segment */
		} else if (kind == ZM_PF_POINTER) {
			pointer_dwords(c, v, &dw[ndw], &dw[ndw + 1]);
			ndw += 2;
		} else {
			if (v->n != zm_printf_arg_dwords(kinds[i]))
				spv_fail(c, in->off, "printf argument %u: a value of %u parts", i + 1, v->n);
			for (uint32_t k = 0; k < v->n; k++)
				dw[ndw++] = v->leaf[k];
		}
	}
	const uint32_t id = spv_data_printf_format(c, format, kinds, nargs);
	const uint32_t size = 4 * ndw;
	dw[0] = o_imm(size);
	dw[1] = o_imm(id);

	/* Reserve: old = atomic_add(offset, size); it fits when old + size <=
	 * capacity (and did not wrap). */
	const opnd_t base = spv_data_printf_base(c);
	const opnd_t old = o_v(spv_new_vreg(c, 1));
	spv_send(c, ZE_MSG_ATOMIC, ZE_ATOMIC_ADD, old, spv_in_grf(c, o_imm(SPV_PRINTF_OFFSET)),
		 spv_in_grf(c, o_imm(size)), base);
	const opnd_t cap = o_v(spv_new_vreg(c, 1));
	spv_send(c, ZE_MSG_LOAD, 0, cap, spv_in_grf(c, o_imm(SPV_PRINTF_CAPACITY)), o_null(), base);
	const opnd_t end = spv_alu(c, ZE_OP_ADD, U, U, old, o_imm(size), o_null());
	opnd_t addr[2 + 2 * 16 * ZE_MAX_PRINTF_ARGS];
	for (uint32_t k = 0; k < ndw; k++) {
		addr[k] = spv_in_grf(c, k ? spv_alu(c, ZE_OP_ADD, U, U, old, o_imm(4 * k), o_null()) : old);
		dw[k] = spv_in_grf(c, dw[k]);
	}
	const opnd_t dropped = spv_in_grf(c, o_imm(SPV_PRINTF_DROPPED));
	/* From here to the select, f0 is the "fits" predicate. */
	spv_cmp_flag(c, ZE_CMOD_LE, U, end, cap, 0);
	spv_cmp_flag_and(c, ZE_CMOD_GE, U, end, old, 0);
	/* The size last, after a fence: a record whose size is still 0 is not
	 * complete yet (the driver may read the buffer while kernels run). */
	for (uint32_t k = 1; k <= ndw; k++) {
		if (k == ndw)
			spv_send(c, ZE_MSG_FENCE, 0, o_null(), o_null(), o_null(), o_null());
		const inst_t st = {.op = ZE_OP_SEND, .desc = ze_send_desc(ZE_MSG_STORE, 0, 1), .pred = 1, .flag = 0,
				   .d = o_null(), .s = {addr[k % ndw], dw[k % ndw], base}};
		spv_emit_to(c, c->cur, &st);
	}
	const inst_t count = {.op = ZE_OP_SEND, .desc = ze_send_desc(ZE_MSG_ATOMIC, ZE_ATOMIC_INC, 1), .pred = 1,
			      .pinv = 1, .flag = 0, .d = o_null(), .s = {dropped, o_null(), base}};
	spv_emit_to(c, c->cur, &count);
	/* printf returns 0, or -1 when the record was dropped. */
	val_t *r = spv_def_val(c, in->result, in->type);
	r->leaf[0] = spv_sel(c, 0, 0, o_imm(0), o_imm(0xffffffffu));
}
