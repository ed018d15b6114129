/* SPIR-V -> IR: the module scan (capabilities, types, constants, decorations,
 * functions), the flattening of a kernel (every call inlined), and the
 * lowering of each instruction to ZE-ISA-like IR on virtual registers.
 *
 * Values are held as 32-bit "leaves": a 32-bit scalar is one leaf, a 64-bit
 * integer two (low, high), a vector or aggregate the leaves of its parts.  A
 * pointer is two leaves: its 32-bit byte offset from a root known at compile
 * time (a kernel argument (global memory: the send's 64-bit base), shared
 * local memory (offset = SLM address), a private variable or a built-in
 * variable) and 0; or, for a global pointer read from memory (R_DYN), its
 * 64-bit address (low, high). */
#include "spv_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spirv/unified1/OpenCL.std.h>
#include <spirv/unified1/spirv.h>

/* ---- small helpers ------------------------------------------------------------- */

/* Operands that do not fit the instruction (malformed input that the binary
 * checks of the reader cannot see) fail the build, never read past a value. */
static void need(spv_ctx_t *c, int ok, const char *what)
{
	if (!ok)
		spv_fail(c, c->cur_word, "%s %s", spv_op_name(c->cur_op), what);
}

static const spv_type_t *ty(spv_ctx_t *c, uint32_t id)
{
	if (id == 0 || id >= c->m->bound || c->types[id].k == TY_NONE)
		spv_fail(c, c->cur_word, "%%%u is not a type", id);
	return &c->types[id];
}

static const char *lit_string(const spv_inst_t *in, uint32_t at)
{
	/* The reader checked the NUL terminator. */
	return at < in->nwords ? (const char *)&in->w[at] : "";
}

static const char *cap_hint(uint32_t cap)
{
	switch (cap) {
	case SpvCapabilityFloat64:
		return " (the device has no fp64: ZE-ISA computes in 32-bit types only)";
	case SpvCapabilityFloat16:
		return " (the device has no fp16 arithmetic)";
	case SpvCapabilityImageBasic:
	case SpvCapabilityImageReadWrite:
	case SpvCapabilityImageMipmap:
	case SpvCapabilityLiteralSampler:
	case SpvCapabilitySampled1D:
	case SpvCapabilityImage1D:
	case SpvCapabilitySampledBuffer:
	case SpvCapabilityImageBuffer:
		return " (the device has no images or samplers)";
	case SpvCapabilityPipes:
	case SpvCapabilityDeviceEnqueue:
		return " (OpenCL 2.0 pipes and device-side enqueue are not supported)";
	case SpvCapabilityShader:
		return " (only OpenCL kernels are supported, not shaders)";
	default:
		return "";
	}
}

static int cap_supported(uint32_t cap)
{
	switch (cap) {
	case SpvCapabilityAddresses:
	case SpvCapabilityLinkage:
	case SpvCapabilityKernel:
	case SpvCapabilityVector16:
	case SpvCapabilityInt64:
	case SpvCapabilityInt16:
	case SpvCapabilityInt8:
	case SpvCapabilityFloat64: /* clang declares it for printf of floats; double values are refused where they occur */
	case SpvCapabilityGenericPointer: /* declared by every OpenCL 2.0 module; generic pointers are refused */
	case SpvCapabilitySubgroupDispatch: /* for the SubgroupSize execution mode */
	case SpvCapabilityArbitraryPrecisionIntegersINTEL: /* older llvm-spirv, for the usual widths (OpTypeInt) */
		return 1;
	default:
		return 0;
	}
}

/* ---- types and layout ------------------------------------------------------------ */

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

static uint32_t const_u32(spv_ctx_t *c, uint32_t id, uint32_t word)
{
	if (id >= c->m->bound || !c->consts[id].done || c->consts[id].n < 1 || c->consts[id].leaf[0].k != O_I)
		spv_fail(c, word, "%%%u is not an integer constant", id);
	const val_t *v = &c->consts[id];
	if (v->n > 1 && v->leaf[1].v != 0)
		spv_fail(c, word, "constant %%%u does not fit 32 bits", id);
	return v->leaf[0].v;
}

static void make_type(spv_ctx_t *c, const spv_inst_t *in)
{
	spv_type_t *t = &c->types[in->result];
	t->id = in->result;
	const uint32_t *w = in->w;
	switch (in->opcode) {
	case SpvOpTypeVoid:
		t->k = TY_VOID;
		break;
	case SpvOpTypeBool:
		t->k = TY_BOOL;
		t->nleaf = 1;
		break;
	case SpvOpTypeInt:
	case SpvOpTypeFloat:
		t->k = in->opcode == SpvOpTypeInt ? TY_INT : TY_FLOAT;
		t->width = w[2];
		if (t->width != 8 && t->width != 16 && t->width != 32 && t->width != 64)
			spv_fail(c, in->off, "%s: %u-bit %s type is not supported", spv_op_name(in->opcode), t->width,
				 t->k == TY_INT ? "integer" : "float");
		t->size = t->align = t->width / 8;
		t->nleaf = t->width == 64 ? 2 : 1;
		break;
	case SpvOpTypeVector: {
		const spv_type_t *e = ty(c, w[2]);
		t->k = TY_VEC;
		t->elem = w[2];
		t->count = w[3];
		if (t->count < 2 || t->count > 16 || (e->k != TY_INT && e->k != TY_FLOAT && e->k != TY_BOOL))
			spv_fail(c, in->off, "OpTypeVector: %u components of %%%u", t->count, w[2]);
		t->size = t->align = e->size * (t->count == 3 ? 4 : t->count);
		t->nleaf = e->nleaf * t->count;
		break;
	}
	case SpvOpTypeArray: {
		const spv_type_t *e = ty(c, w[2]);
		t->k = TY_ARRAY;
		t->elem = w[2];
		t->count = const_u32(c, w[3], in->off);
		const uint64_t size = (uint64_t)e->size * t->count;
		t->size = size > UINT32_MAX ? 0 : (uint32_t)size;
		t->align = e->align;
		const uint64_t leaves = (uint64_t)e->nleaf * t->count;
		t->nleaf = leaves > UINT32_MAX ? UINT32_MAX : (uint32_t)leaves;
		break;
	}
	case SpvOpTypeRuntimeArray:
		t->k = TY_ARRAY;
		t->elem = w[2];
		t->align = ty(c, w[2])->align;
		break;
	case SpvOpTypeStruct: {
		/* (the kind is set last: a member naming the struct itself is not a type yet) */
		t->nmemb = in->nwords - 2u;
		t->memb = spv_alloc(c, (t->nmemb + 1) * sizeof(uint32_t));
		t->moff = spv_alloc(c, (t->nmemb + 1) * sizeof(uint32_t));
		t->packed = c->packed[in->result];
		uint32_t off = 0, align = 1;
		uint64_t leaves = 0;
		for (uint32_t i = 0; i < t->nmemb; i++) {
			const spv_type_t *e = ty(c, w[2 + i]);
			t->memb[i] = w[2 + i];
			const uint32_t a = t->packed ? 1 : (e->align ? e->align : 1);
			off = align_up(off, a);
			t->moff[i] = off;
			off += e->size;
			if (a > align)
				align = a;
			leaves += e->nleaf;
		}
		t->align = align;
		t->size = align_up(off, align);
		t->nleaf = leaves > UINT32_MAX ? UINT32_MAX : (uint32_t)leaves;
		t->k = TY_STRUCT;
		break;
	}
	case SpvOpTypePointer:
		t->k = TY_PTR;
		t->sc = w[2];
		t->elem = w[3];
		t->size = t->align = c->ptr_bytes;
		t->nleaf = 2; /* an offset from its root, or a 64-bit address (R_DYN) */
		break;
	case SpvOpTypeFunction:
		t->k = TY_FUNC;
		break;
	default:
		t->k = TY_OTHER; /* images, samplers, events, pipes, ...: refused where used */
		break;
	}
}

/* The byte offset and width in bits (8, 16 or 32) of each leaf of a type
 * stored in memory (at most MAX_LEAVES). */
#define MAX_LEAVES 256u
static void leaf_layout(spv_ctx_t *c, uint32_t type, uint32_t base, uint32_t *out, uint8_t *wid, uint32_t *n)
{
	const spv_type_t *t = ty(c, type);
	if (*n + (t->nleaf < MAX_LEAVES ? t->nleaf : MAX_LEAVES + 1) > MAX_LEAVES)
		spv_fail(c, c->cur_word, "a memory access of more than %u 32-bit parts", MAX_LEAVES);
	switch (t->k) {
	case TY_INT:
	case TY_FLOAT:
		wid[*n] = (uint8_t)(t->width < 32 ? t->width : 32);
		out[(*n)++] = base;
		if (t->width == 64) {
			wid[*n] = 32;
			out[(*n)++] = base + 4;
		}
		return;
	case TY_PTR:
		/* in memory a pointer is its 64-bit address (see ptr_abs) */
		if (c->ptr_bytes != 8)
			spv_fail(c, c->cur_word, "pointers stored in memory need the Physical64 addressing model");
		wid[*n] = 32;
		out[(*n)++] = base;
		wid[*n] = 32;
		out[(*n)++] = base + 4;
		return;
	case TY_VEC:
	case TY_ARRAY: {
		const spv_type_t *e = ty(c, t->elem);
		for (uint32_t i = 0; i < t->count; i++)
			leaf_layout(c, t->elem, base + i * e->size, out, wid, n);
		return;
	}
	case TY_STRUCT:
		for (uint32_t i = 0; i < t->nmemb; i++)
			leaf_layout(c, t->memb[i], base + t->moff[i], out, wid, n);
		return;
	default:
		spv_fail(c, c->cur_word, "values of type %%%u cannot be loaded or stored", type);
	}
}

/* Refuse values of types the device cannot compute with. */
static void check_value_type(spv_ctx_t *c, uint32_t type)
{
	const spv_type_t *t = ty(c, type);
	switch (t->k) {
	case TY_INT:
		return;
	case TY_FLOAT:
		if (t->width == 64)
			spv_fail(c, c->cur_word, "64-bit floating-point values (double) are not supported: the device "
				 "has no fp64 (only float values converted to double, as for printf, are accepted)");
		if (t->width != 32)
			spv_fail(c, c->cur_word, "16-bit floating-point values (half) are not supported");
		return;
	case TY_VEC:
	case TY_ARRAY:
		if (t->nleaf > 256)
			spv_fail(c, c->cur_word, "a value of %u 32-bit parts (%%%u) is too large to hold in registers",
				 t->nleaf, type);
		check_value_type(c, t->elem);
		return;
	case TY_STRUCT:
		if (t->nleaf > 256)
			spv_fail(c, c->cur_word, "a value of %u 32-bit parts (%%%u) is too large to hold in registers",
				 t->nleaf, type);
		for (uint32_t i = 0; i < t->nmemb; i++)
			check_value_type(c, t->memb[i]);
		return;
	case TY_BOOL:
	case TY_PTR:
		return;
	default:
		spv_fail(c, c->cur_word, "values of type %%%u (%s) are not supported", type,
			 t->k == TY_OTHER ? spv_op_name(spv_def(c->m, type)->opcode) : "this kind");
	}
}

/* ---- constants ----------------------------------------------------------------- */

static val_t *new_const(spv_ctx_t *c, uint32_t id, uint32_t type, uint32_t n)
{
	val_t *v = &c->consts[id];
	v->type = type;
	v->n = n;
	v->leaf = spv_alloc(c, (n + 1) * sizeof(opnd_t));
	for (uint32_t i = 0; i < n; i++)
		v->leaf[i] = o_imm(0);
	v->done = 1;
	return v;
}

static const val_t *const_of(spv_ctx_t *c, uint32_t id, uint32_t word)
{
	if (id >= c->m->bound || !c->consts[id].done)
		spv_fail(c, word, "%%%u is not a constant", id);
	return &c->consts[id];
}

/* A specialization constant's value from the build options, if given. */
static int spec_override(spv_ctx_t *c, uint32_t id, uint32_t bytes, uint64_t *value)
{
	if (c->spec_id[id] < 0 || !c->opt || !c->opt->num_spec)
		return 0;
	for (uint32_t i = 0; i < c->opt->num_spec; i++)
		if (c->opt->spec_ids && c->opt->spec_values && c->opt->spec_ids[i] == (uint32_t)c->spec_id[id] &&
		    c->opt->spec_values[i]) {
			uint64_t v = 0;
			memcpy(&v, c->opt->spec_values[i], bytes);
			*value = v;
			return 1;
		}
	return 0;
}

static uint64_t leaves64(const val_t *v)
{
	return v->leaf[0].v | (v->n > 1 ? (uint64_t)v->leaf[1].v << 32 : 0);
}

static uint64_t sext(uint64_t v, uint32_t width)
{
	if (width >= 64)
		return v;
	const uint64_t m = 1ull << (width - 1);
	v &= (1ull << width) - 1;
	return (v ^ m) - m;
}

static void set_int_const(spv_ctx_t *c, uint32_t id, uint32_t type, uint64_t v)
{
	const spv_type_t *t = ty(c, type);
	val_t *cv = new_const(c, id, type, t->k == TY_BOOL ? 1 : t->nleaf);
	if (t->k == TY_BOOL) {
		cv->leaf[0] = o_imm(v ? 0xffffffffu : 0);
		return;
	}
	if (t->width < 64)
		v &= t->width == 32 ? 0xffffffffull : (1ull << t->width) - 1;
	cv->leaf[0] = o_imm((uint32_t)v);
	if (t->nleaf > 1)
		cv->leaf[1] = o_imm((uint32_t)(v >> 32));
}

/* OpSpecConstantOp on scalar integers and booleans, evaluated now. */
static void spec_constant_op(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint32_t op = in->w[3];
	const spv_type_t *t = ty(c, in->type);
	if (t->k != TY_INT && t->k != TY_BOOL)
		spv_fail(c, in->off, "OpSpecConstantOp %s on non-scalar types is not supported", spv_op_name(op));
	uint64_t a[3] = {0, 0, 0};
	uint32_t wa[3] = {0, 0, 0};
	const uint32_t nops = in->nwords - 4u;
	for (uint32_t i = 0; i < nops && i < 3; i++) {
		const val_t *v = const_of(c, in->w[4 + i], in->off);
		const spv_type_t *vt = ty(c, v->type);
		a[i] = vt->k == TY_BOOL ? (v->leaf[0].v != 0) : leaves64(v);
		wa[i] = vt->k == TY_BOOL ? 1 : vt->width;
	}
	const uint32_t w = t->k == TY_BOOL ? 1 : t->width;
	uint64_t r;
	switch (op) {
	case SpvOpIAdd: r = a[0] + a[1]; break;
	case SpvOpISub: r = a[0] - a[1]; break;
	case SpvOpIMul: r = a[0] * a[1]; break;
	case SpvOpUDiv: r = a[1] ? a[0] / a[1] : 0; break;
	case SpvOpUMod: r = a[1] ? a[0] % a[1] : 0; break;
	/* A divisor of -1 is done without dividing: INT64_MIN / -1 (undefined in
	 * SPIR-V) would trap on the host; it wraps to INT64_MIN, remainder 0. */
	case SpvOpSDiv:
		if (sext(a[1], w) == ~0ull)
			r = -a[0];
		else
			r = sext(a[1], w) ? (uint64_t)((int64_t)sext(a[0], w) / (int64_t)sext(a[1], w)) : 0;
		break;
	case SpvOpSRem:
		if (sext(a[1], w) == ~0ull)
			r = 0;
		else
			r = sext(a[1], w) ? (uint64_t)((int64_t)sext(a[0], w) % (int64_t)sext(a[1], w)) : 0;
		break;
	case SpvOpSNegate: r = -a[0]; break;
	case SpvOpNot: r = ~a[0]; break;
	case SpvOpBitwiseAnd: r = a[0] & a[1]; break;
	case SpvOpBitwiseOr: r = a[0] | a[1]; break;
	case SpvOpBitwiseXor: r = a[0] ^ a[1]; break;
	case SpvOpShiftLeftLogical: r = a[0] << (a[1] & (w - 1)); break;
	case SpvOpShiftRightLogical: r = (a[0] & (w == 64 ? ~0ull : (1ull << w) - 1)) >> (a[1] & (w - 1)); break;
	case SpvOpShiftRightArithmetic: r = (uint64_t)((int64_t)sext(a[0], w) >> (a[1] & (w - 1))); break;
	case SpvOpUConvert: r = a[0]; break;
	case SpvOpSConvert: r = sext(a[0], wa[0]); break;
	case SpvOpSelect: r = a[0] ? a[1] : a[2]; break;
	case SpvOpIEqual: r = a[0] == a[1]; break;
	case SpvOpINotEqual: r = a[0] != a[1]; break;
	case SpvOpULessThan: r = a[0] < a[1]; break;
	case SpvOpUGreaterThan: r = a[0] > a[1]; break;
	case SpvOpULessThanEqual: r = a[0] <= a[1]; break;
	case SpvOpUGreaterThanEqual: r = a[0] >= a[1]; break;
	case SpvOpSLessThan: r = (int64_t)sext(a[0], wa[0]) < (int64_t)sext(a[1], wa[1]); break;
	case SpvOpSGreaterThan: r = (int64_t)sext(a[0], wa[0]) > (int64_t)sext(a[1], wa[1]); break;
	case SpvOpSLessThanEqual: r = (int64_t)sext(a[0], wa[0]) <= (int64_t)sext(a[1], wa[1]); break;
	case SpvOpSGreaterThanEqual: r = (int64_t)sext(a[0], wa[0]) >= (int64_t)sext(a[1], wa[1]); break;
	case SpvOpLogicalAnd: r = a[0] && a[1]; break;
	case SpvOpLogicalOr: r = a[0] || a[1]; break;
	case SpvOpLogicalNot: r = !a[0]; break;
	case SpvOpLogicalEqual: r = a[0] == a[1]; break;
	case SpvOpLogicalNotEqual: r = a[0] != a[1]; break;
	default:
		spv_fail(c, in->off, "OpSpecConstantOp %s is not supported", spv_op_name(op));
	}
	set_int_const(c, in->result, in->type, r);
}

static void make_constant(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint32_t id = in->result, type = in->type;
	switch (in->opcode) {
	case SpvOpConstantTrue:
	case SpvOpConstantFalse:
		new_const(c, id, type, 1)->leaf[0] = o_imm(in->opcode == SpvOpConstantTrue ? 0xffffffffu : 0);
		return;
	case SpvOpSpecConstantTrue:
	case SpvOpSpecConstantFalse: {
		uint64_t v = in->opcode == SpvOpSpecConstantTrue;
		spec_override(c, id, 1, &v);
		new_const(c, id, type, 1)->leaf[0] = o_imm((v & 0xff) ? 0xffffffffu : 0);
		return;
	}
	case SpvOpConstant:
	case SpvOpSpecConstant: {
		const spv_type_t *t = ty(c, type);
		if (t->k != TY_INT && t->k != TY_FLOAT)
			spv_fail(c, in->off, "%s of a non-numeric type", spv_op_name(in->opcode));
		uint64_t v = in->w[3] | (in->nwords > 4 ? (uint64_t)in->w[4] << 32 : 0);
		if (in->opcode == SpvOpSpecConstant)
			spec_override(c, id, t->size, &v);
		if (t->k == TY_INT && t->width < 32)
			v &= (1u << t->width) - 1; /* narrow integers are held zero-extended */
		val_t *cv = new_const(c, id, type, t->nleaf);
		cv->leaf[0] = o_imm((uint32_t)v);
		if (t->nleaf > 1)
			cv->leaf[1] = o_imm((uint32_t)(v >> 32));
		return;
	}
	case SpvOpConstantComposite:
	case SpvOpSpecConstantComposite: {
		const spv_type_t *t = ty(c, type);
		if (t->nleaf > 4096)
			return; /* too large for registers: only an initializer (spv_data.c) */
		for (uint32_t i = 3; i < in->nwords; i++) {
			/* A constituent that is a constant but not a value (an address
			 * in an initializer, ...): refused where used (spv_data.c). */
			const spv_inst_t *d = spv_def(c->m, in->w[i]);
			if (d && !c->consts[in->w[i]].done && d->opcode >= SpvOpConstantTrue && d->opcode <= SpvOpSpecConstantOp)
				return;
		}
		val_t *cv = new_const(c, id, type, t->nleaf);
		uint32_t at = 0;
		for (uint32_t i = 3; i < in->nwords; i++) {
			const val_t *e = const_of(c, in->w[i], in->off);
			if (at + e->n > cv->n)
				spv_fail(c, in->off, "constant composite: constituents do not match the type");
			memcpy(&cv->leaf[at], e->leaf, e->n * sizeof(opnd_t));
			at += e->n;
		}
		if (at != cv->n)
			spv_fail(c, in->off, "constant composite: constituents do not match the type");
		return;
	}
	case SpvOpConstantNull:
	case SpvOpUndef: {
		const spv_type_t *t = ty(c, type);
		val_t *cv = new_const(c, id, type, t->nleaf > 4096 ? 0 : t->nleaf);
		if (t->k == TY_PTR)
			cv->root.k = R_NULL;
		return;
	}
	case SpvOpSpecConstantOp:
		if (ty(c, type)->k == TY_PTR)
			return; /* an address in an initializer: refused where used (spv_data.c) */
		spec_constant_op(c, in);
		return;
	default:
		/* OpConstantSampler, OpConstantPipeStorage, ...: refused at use. */
		return;
	}
}

/* ---- the module scan ------------------------------------------------------------- */

static void decorate(spv_ctx_t *c, uint32_t target, uint32_t deco, const uint32_t *params, uint32_t nparams)
{
	if (target >= c->m->bound)
		return;
	switch (deco) {
	case SpvDecorationBuiltIn:
		if (nparams)
			c->builtin[target] = params[0] + 1;
		break;
	case SpvDecorationSpecId:
		if (nparams)
			c->spec_id[target] = params[0];
		break;
	case SpvDecorationCPacked:
		c->packed[target] = 1;
		break;
	case SpvDecorationFuncParamAttr:
		if (nparams && (params[0] == SpvFunctionParameterAttributeByVal ||
				params[0] == SpvFunctionParameterAttributeSret))
			c->byval[target] = 1;
		break;
	default:
		break;
	}
}

int spv_builtin_var(const spv_ctx_t *c, const spv_inst_t *in)
{
	return in->opcode == SpvOpVariable && in->nwords >= 4 && in->result < c->m->bound && c->builtin[in->result] &&
	       (in->w[3] == SpvStorageClassInput || in->w[3] == SpvStorageClassUniformConstant);
}

void spv_decorations(spv_ctx_t *c, spv_decoration_fn fn, void *ctx)
{
	const spv_module_t *m = c->m;
	/* Per decoration group, its OpDecorates as a list through next (index + 1). */
	uint32_t *head = spv_alloc(c, m->bound * sizeof(uint32_t));
	uint32_t *next = spv_alloc(c, (m->ninsts + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode != SpvOpDecorate || in->nwords < 3 || in->w[1] >= m->bound)
			continue;
		const spv_inst_t *t = spv_def(m, in->w[1]);
		if (t && t->opcode == SpvOpDecorationGroup) {
			next[i] = head[in->w[1]];
			head[in->w[1]] = i + 1;
		} else {
			fn(c, in->w[1], in, ctx);
		}
	}
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode != SpvOpGroupDecorate || in->w[1] >= m->bound)
			continue;
		for (uint32_t t = 2; t < in->nwords; t++)
			for (uint32_t j = head[in->w[1]]; j; j = next[j - 1])
				fn(c, in->w[t], &m->insts[j - 1], ctx);
	}
}

static void scan_decoration(spv_ctx_t *c, uint32_t target, const spv_inst_t *d, void *ctx)
{
	(void)ctx;
	decorate(c, target, d->w[2], &d->w[3], d->nwords - 3u);
}

void spv_scan_module(spv_ctx_t *c)
{
	const spv_module_t *m = c->m;
	const uint32_t bound = m->bound;
	c->types = spv_alloc(c, bound * sizeof(*c->types));
	c->consts = spv_alloc(c, bound * sizeof(*c->consts));
	c->builtin = spv_alloc(c, bound * sizeof(uint32_t));
	c->spec_id = spv_alloc(c, bound * sizeof(int64_t));
	c->packed = spv_alloc(c, bound);
	c->byval = spv_alloc(c, bound);
	c->names = spv_alloc(c, bound * sizeof(char *));
	c->fn_index = spv_alloc(c, bound * sizeof(uint32_t));
	c->fns = spv_alloc(c, (m->ninsts + 1) * sizeof(spv_fn_t));
	c->entries = spv_alloc(c, (m->ninsts + 1) * sizeof(spv_entry_t));
	c->ext_ok = spv_alloc(c, bound);
	for (uint32_t i = 0; i < bound; i++)
		c->spec_id[i] = -1;
	c->ptr_bytes = 8;

	/* Decorations first: types (CPacked) and constants (SpecId) need them,
	 * and they precede both in a valid module anyway. */
	int memory_model = 0;
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		c->cur_word = in->off;
		switch (in->opcode) {
		case SpvOpCapability:
			if (!cap_supported(in->w[1]))
				spv_fail(c, in->off, "capability %s is not supported%s",
					 spv_enum_name(SPV_KIND_Capability, in->w[1]), cap_hint(in->w[1]));
			break;
		case SpvOpMemoryModel:
			if (memory_model)
				spv_fail(c, in->off, "OpMemoryModel appears twice");
			memory_model = 1;
			if (in->w[2] != SpvMemoryModelOpenCL)
				spv_fail(c, in->off, "memory model %s: only OpenCL kernels are supported",
					 spv_enum_name(SPV_KIND_MemoryModel, in->w[2]));
			if (in->w[1] != SpvAddressingModelPhysical64)
				spv_fail(c, in->off, "addressing model %s is not supported: the device has 64-bit "
					 "pointers (compile for spir64: Physical64)",
					 spv_enum_name(SPV_KIND_AddressingModel, in->w[1]));
			c->ptr_bytes = 8;
			break;
		case SpvOpExtInstImport:
			/* OpenCL.std is translated; non-semantic sets are ignored. */
			if (m->ocl_set[in->result] || strncmp(lit_string(in, 2), "NonSemantic.", 12) == 0)
				c->ext_ok[in->result] = 1;
			break;
		case SpvOpName:
			c->names[in->w[1]] = lit_string(in, 2);
			break;
		default:
			break;
		}
	}
	if (!memory_model)
		spv_fail(c, 5, "the module has no OpMemoryModel");
	spv_decorations(c, scan_decoration, NULL);

	spv_fn_t *fn = NULL;
	int in_block = 0;
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		c->cur_word = in->off;
		const spv_inst_info_t *info = spv_inst_info(in->opcode);
		if (!fn) {
			if (in->opcode >= SpvOpTypeVoid && in->opcode <= SpvOpTypeForwardPointer &&
			    in->opcode != SpvOpTypeForwardPointer) {
				make_type(c, in);
				continue;
			}
			switch (in->opcode) {
			case SpvOpTypeForwardPointer: {
				/* A pointer type used before its OpTypePointer (a struct
				 * pointing to itself): a struct member needs only its size. */
				const spv_inst_t *d = spv_def(m, in->w[1]);
				if (!d || d->opcode != SpvOpTypePointer || d->w[2] != in->w[2] || d->off < in->off)
					spv_fail(c, in->off,
						 "OpTypeForwardPointer %%%u %s: no such OpTypePointer after it",
						 in->w[1], spv_enum_name(SPV_KIND_StorageClass, in->w[2]));
				spv_type_t *t = &c->types[in->w[1]];
				t->id = in->w[1];
				t->k = TY_PTR;
				t->sc = in->w[2];
				t->size = t->align = c->ptr_bytes;
				t->nleaf = 1;
				break;
			}
			case SpvOpEntryPoint: {
				spv_entry_t *e = &c->entries[c->nentries++];
				if (in->w[1] != SpvExecutionModelKernel)
					spv_fail(c, in->off, "entry point \"%s\" has execution model %s: only Kernel is supported",
						 lit_string(in, 3), spv_enum_name(SPV_KIND_ExecutionModel, in->w[1]));
				e->fn = in->w[2];
				e->name = lit_string(in, 3);
				e->word = in->off;
				break;
			}
			case SpvOpVariable:
				if (in->w[3] == SpvStorageClassFunction)
					spv_fail(c, in->off, "a Function variable outside a function");
				break;
			case SpvOpFunction:
				fn = &c->fns[c->nfns++];
				fn->id = in->result;
				fn->type = in->type;
				fn->first = i;
				c->fn_index[in->result] = c->nfns;
				fn->params = spv_alloc(c, 64 * sizeof(uint32_t));
				break;
			default:
				if (info && info->nopnds >= 2 && info->opnds[1].kind == SPV_KIND_IdResult &&
				    (in->opcode == SpvOpUndef || (in->opcode >= SpvOpConstantTrue &&
								  in->opcode <= SpvOpSpecConstantOp)))
					make_constant(c, in);
				break;
			}
			continue;
		}
		/* Inside a function. */
		switch (in->opcode) {
		case SpvOpFunctionParameter:
			if (in_block || fn->has_body)
				spv_fail(c, in->off, "OpFunctionParameter after the function's first block");
			if (fn->nparams >= 64)
				spv_fail(c, in->off, "more than 64 function parameters");
			fn->params[fn->nparams++] = in->result;
			break;
		case SpvOpLabel:
			if (in_block)
				spv_fail(c, in->off, "OpLabel inside a block (the previous block has no terminator)");
			in_block = 1;
			fn->has_body = 1;
			break;
		case SpvOpFunctionEnd:
			if (in_block)
				spv_fail(c, in->off, "OpFunctionEnd inside a block (the last block has no terminator)");
			fn->end = i;
			fn = NULL;
			break;
		case SpvOpFunction:
			spv_fail(c, in->off, "OpFunction inside a function (no OpFunctionEnd)");
		case SpvOpBranch:
		case SpvOpBranchConditional:
		case SpvOpSwitch:
		case SpvOpReturn:
		case SpvOpReturnValue:
		case SpvOpUnreachable:
		case SpvOpKill:
		case SpvOpTerminateInvocation:
			if (!in_block)
				spv_fail(c, in->off, "%s outside a block", spv_op_name(in->opcode));
			in_block = 0;
			break;
		case SpvOpLine:
		case SpvOpNoLine:
			break;
		default:
			if (!in_block)
				spv_fail(c, in->off, "%s outside a block", spv_op_name(in->opcode));
			break;
		}
	}
	if (fn)
		spv_fail(c, m->nwords, "the last function has no OpFunctionEnd");
	for (uint32_t i = 0; i < c->nentries; i++) {
		spv_entry_t *e = &c->entries[i];
		if (!c->fn_index[e->fn] || !c->fns[c->fn_index[e->fn] - 1].has_body)
			spv_fail(c, e->word, "entry point \"%s\": %%%u is not a function with a body", e->name, e->fn);
	}
	for (uint32_t i = 0; i < m->ninsts; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (in->opcode != SpvOpExecutionMode)
			continue;
		for (uint32_t j = 0; j < c->nentries; j++) {
			spv_entry_t *e = &c->entries[j];
			if (e->fn != in->w[1])
				continue;
			if (in->w[2] == SpvExecutionModeLocalSize && in->nwords >= 6) {
				e->local_size[0] = in->w[3];
				e->local_size[1] = in->w[4];
				e->local_size[2] = in->w[5];
			} else if (in->w[2] == SpvExecutionModeSubgroupSize && in->nwords >= 4) {
				e->subgroup_size = in->w[3];
			}
		}
	}
}

/* ---- flattening: the kernel as one function, every call inlined ----------------- */

#define MAX_INLINE_DEPTH 32
#define MAX_FLAT_INSTS (1u << 18)

static uint32_t fresh_id(spv_ctx_t *c)
{
	if (c->nids >= (1u << 26))
		spv_fail(c, c->cur_word, "too many values after inlining");
	c->term_of = spv_grow(c, c->term_of, &c->capterm, c->nids + 1, sizeof(uint32_t));
	c->term_of[c->nids] = 0;
	return c->nids++;
}

static spv_inst_t *flat_push(spv_ctx_t *c, uint32_t off, const uint32_t *words, uint32_t nwords)
{
	if (c->nfi >= MAX_FLAT_INSTS)
		spv_fail(c, off, "the kernel is too large after inlining (more than %u instructions)", MAX_FLAT_INSTS);
	c->fi = spv_grow(c, c->fi, &c->capfi, c->nfi + 1, sizeof(spv_inst_t));
	uint32_t *w = spv_alloc(c, nwords * sizeof(uint32_t));
	memcpy(w, words, nwords * sizeof(uint32_t));
	spv_inst_t *f = &c->fi[c->nfi++];
	memset(f, 0, sizeof(*f));
	f->off = off;
	c->fi_loc = spv_grow(c, c->fi_loc, &c->capfiloc, c->nfi, sizeof(uint32_t));
	c->fi_loc[c->nfi - 1] = c->flat_loc;
	f->opcode = (uint16_t)(w[0] & 0xffffu);
	f->nwords = (uint16_t)nwords;
	f->w = w;
	const spv_inst_info_t *info = spv_inst_info(f->opcode);
	uint32_t at = 1;
	if (info && info->nopnds > 0 && info->opnds[0].kind == SPV_KIND_IdResultType)
		f->type = w[at++];
	if (info && info->nopnds >= at && info->opnds[at - 1].kind == SPV_KIND_IdResult)
		f->result = w[at];
	return f;
}

static void flat_branch(spv_ctx_t *c, uint32_t off, uint32_t target)
{
	const uint32_t w[2] = {2u << 16 | SpvOpBranch, target};
	flat_push(c, off, w, 2);
}

static void flat_label(spv_ctx_t *c, uint32_t off, uint32_t label)
{
	const uint32_t w[2] = {2u << 16 | SpvOpLabel, label};
	flat_push(c, off, w, 2);
}

/* An OpLine's position, interned: index + 1 (0 when not recording lines). */
static uint32_t source_loc(spv_ctx_t *c, const spv_inst_t *in)
{
	if (!c->opt || !c->opt->debug_lines || in->nwords < 4)
		return 0;
	const uint32_t str = in->w[1];
	const spv_inst_t *s = spv_def(c->m, str);
	if (!s || s->opcode != SpvOpString)
		spv_fail(c, in->off, "OpLine: %%%u is not an OpString", str);
	if (!c->file_of_str)
		c->file_of_str = spv_alloc(c, c->m->bound * sizeof(uint32_t));
	if (!c->file_of_str[str]) {
		c->files = spv_grow(c, c->files, &c->capfiles, c->nfiles + 1, sizeof(char *));
		c->files[c->nfiles++] = lit_string(s, 2);
		c->file_of_str[str] = c->nfiles;
	}
	const uint32_t file = c->file_of_str[str] - 1, line = in->w[2];
	if (c->nloc && c->loc_file[c->nloc - 1] == file && c->loc_line[c->nloc - 1] == line)
		return c->nloc;
	c->loc_file = spv_grow(c, c->loc_file, &c->caplocf, c->nloc + 1, sizeof(uint32_t));
	c->loc_line = spv_grow(c, c->loc_line, &c->caplocl, c->nloc + 1, sizeof(uint32_t));
	c->loc_file[c->nloc] = file;
	c->loc_line[c->nloc] = line;
	return ++c->nloc;
}

struct ret_site {
	uint32_t value, from;
};

/* An inlined instance of a function.  Its ids are renamed through a sorted
 * table of the ids the function defines (results, labels, parameters): the
 * memory of all instances together stays proportional to the flat code. */
struct id_pair {
	uint32_t from, to;
};

struct instance {
	const spv_fn_t *fn;
	struct id_pair *map;  /* sorted by `from` */
	uint32_t nmap;
	uint32_t entry_label; /* flat */
	uint32_t ret_label;   /* flat label to continue at, 0 for the kernel itself */
	struct ret_site *rets;
	size_t nrets, caprets;
};

/* The flat id of an original id in this instance, or 0 when not renamed. */
static uint32_t map_id(const struct instance *I, uint32_t id)
{
	uint32_t lo = 0, hi = I->nmap;
	while (lo < hi) {
		const uint32_t mid = (lo + hi) / 2;
		if (I->map[mid].from == id)
			return I->map[mid].to;
		if (I->map[mid].from < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static uint32_t renamed(const struct instance *I, uint32_t id)
{
	const uint32_t r = map_id(I, id);
	return r ? r : id;
}

struct rename {
	const struct instance *I;
	uint32_t *w;
};

static void rename_operand(void *ctx, unsigned kind, uint32_t index)
{
	struct rename *r = ctx;
	if (kind == SPV_KIND_IdRef || kind == SPV_KIND_IdResult || kind == SPV_KIND_IdMemorySemantics ||
	    kind == SPV_KIND_IdScope)
		r->w[index] = renamed(r->I, r->w[index]);
}

static int cmp_pair(const void *a, const void *b)
{
	const uint32_t x = ((const struct id_pair *)a)->from, y = ((const struct id_pair *)b)->from;
	return x < y ? -1 : x > y;
}

static const char *fn_name(spv_ctx_t *c, uint32_t id)
{
	return c->names[id] ? c->names[id] : "(unnamed)";
}

static void prepare_instance(spv_ctx_t *c, struct instance *I, const spv_fn_t *fn, const uint32_t *args,
			     uint32_t ret_label)
{
	const spv_module_t *m = c->m;
	I->fn = fn;
	I->map = spv_alloc(c, (fn->end - fn->first + 1) * sizeof(struct id_pair));
	I->nmap = 0;
	I->ret_label = ret_label;
	for (uint32_t i = fn->first + 1; i < fn->end; i++) {
		const spv_inst_t *in = &m->insts[i];
		if (!in->result)
			continue;
		uint32_t to = 0;
		if (in->opcode == SpvOpFunctionParameter && args) {
			for (uint32_t p = 0; p < fn->nparams; p++)
				if (fn->params[p] == in->result)
					to = args[p];
		} else {
			to = args ? fresh_id(c) : in->result;
			if (in->opcode == SpvOpLabel && !I->entry_label)
				I->entry_label = to;
		}
		if (to)
			I->map[I->nmap++] = (struct id_pair){in->result, to};
	}
	qsort(I->map, I->nmap, sizeof(struct id_pair), cmp_pair);
}

static void emit_instance(spv_ctx_t *c, struct instance *I, uint32_t depth, const uint32_t *stack);

static void inline_call(spv_ctx_t *c, struct instance *I, const spv_inst_t *in, uint32_t *cur_label,
			uint32_t orig_label, uint32_t depth, const uint32_t *stack)
{
	const uint32_t callee = in->w[3];
	const uint32_t fi = callee < c->m->bound ? c->fn_index[callee] : 0;
	if (!fi || !c->fns[fi - 1].has_body)
		spv_fail(c, in->off, "OpFunctionCall: %%%u (%s) is not defined in this module (imported functions "
			 "cannot be linked)", callee, fn_name(c, callee));
	const spv_fn_t *fn = &c->fns[fi - 1];
	for (uint32_t d = 0; d <= depth; d++)
		if (stack[d] == callee)
			spv_fail(c, in->off, "OpFunctionCall: recursive call of %s (recursion is not supported)",
				 fn_name(c, callee));
	if (depth + 1 >= MAX_INLINE_DEPTH)
		spv_fail(c, in->off, "calls nested more than %u deep", MAX_INLINE_DEPTH);
	if (in->nwords - 4u != fn->nparams)
		spv_fail(c, in->off, "OpFunctionCall: %u arguments for %u parameters", in->nwords - 4u, fn->nparams);
	uint32_t args[64];
	for (uint32_t i = 0; i < fn->nparams; i++) {
		const uint32_t a = in->w[4 + i];
		args[i] = renamed(I, a);
	}
	const uint32_t cont = fresh_id(c);
	struct instance callee_inst = {0};
	prepare_instance(c, &callee_inst, fn, args, cont);
	flat_branch(c, in->off, callee_inst.entry_label);
	uint32_t st[MAX_INLINE_DEPTH + 1];
	memcpy(st, stack, (depth + 1) * sizeof(uint32_t));
	st[depth + 1] = callee;
	emit_instance(c, &callee_inst, depth + 1, st);
	/* The rest of the caller's block continues here; its terminator, which
	 * successor phis name by the original label, ends up in this block. */
	flat_label(c, in->off, cont);
	*cur_label = cont;
	c->term_of[orig_label] = cont;
	const uint32_t result = in->result ? map_id(I, in->result) : 0;
	if (result && ty(c, in->type)->k != TY_VOID) {
		if (callee_inst.nrets == 0) {
			const uint32_t w[3] = {3u << 16 | SpvOpUndef, in->type, result};
			flat_push(c, in->off, w, 3);
		} else {
			const uint32_t n = 3 + 2 * (uint32_t)callee_inst.nrets;
			uint32_t *w = spv_alloc(c, n * sizeof(uint32_t));
			w[0] = n << 16 | SpvOpPhi;
			w[1] = in->type;
			w[2] = result;
			for (size_t r = 0; r < callee_inst.nrets; r++) {
				w[3 + 2 * r] = callee_inst.rets[r].value;
				w[4 + 2 * r] = callee_inst.rets[r].from;
			}
			if (n > 0xffff)
				spv_fail(c, in->off, "too many returns");
			flat_push(c, in->off, w, n);
		}
	}
}

static void emit_instance(spv_ctx_t *c, struct instance *I, uint32_t depth, const uint32_t *stack)
{
	const spv_module_t *m = c->m;
	const spv_fn_t *fn = I->fn;
	uint32_t cur_label = 0, orig_label = 0;
	uint32_t *phis = NULL;
	size_t nphis = 0, capphis = 0;
	for (uint32_t i = fn->first + 1; i < fn->end; i++) {
		const spv_inst_t *in = &m->insts[i];
		c->cur_word = in->off;
		switch (in->opcode) {
		case SpvOpFunctionParameter:
			continue;
		case SpvOpLine:
			c->flat_loc = source_loc(c, in);
			continue;
		case SpvOpNoLine:
			c->flat_loc = 0;
			continue;
		case SpvOpExtInst:
			/* NonSemantic.* and OpenCL.DebugInfo.100 have no effect; they
			 * are dropped here, since llvm-spirv puts DebugScope even
			 * between a block's label and its OpPhis */
			if (in->nwords > 3 && in->w[3] < m->bound && c->ext_ok[in->w[3]] && m->ocl_set[in->w[3]] != 1)
				continue;
			break;
		case SpvOpLabel:
			cur_label = orig_label = map_id(I, in->result);
			c->term_of[orig_label] = orig_label;
			flat_label(c, in->off, cur_label);
			continue;
		case SpvOpFunctionCall:
			inline_call(c, I, in, &cur_label, orig_label, depth, stack);
			continue;
		case SpvOpReturn:
		case SpvOpReturnValue:
			if (I->ret_label) {
				I->rets = spv_grow(c, I->rets, &I->caprets, I->nrets + 1, sizeof(*I->rets));
				uint32_t v = 0;
				if (in->opcode == SpvOpReturnValue)
					v = renamed(I, in->w[1]);
				I->rets[I->nrets++] = (struct ret_site){v, cur_label};
				flat_branch(c, in->off, I->ret_label);
				continue;
			}
			if (in->opcode == SpvOpReturnValue)
				spv_fail(c, in->off, "OpReturnValue in a kernel (kernels return void)");
			break;
		default:
			break;
		}
		spv_inst_t *f = flat_push(c, in->off, in->w, in->nwords);
		struct rename r = {I, (uint32_t *)f->w};
		spv_walk(m, in, rename_operand, &r);
		if (f->type)
			f->type = renamed(I, f->type);
		if (f->result)
			f->result = renamed(I, in->result);
		if (f->opcode == SpvOpPhi) {
			phis = spv_grow(c, phis, &capphis, nphis + 1, sizeof(uint32_t));
			phis[nphis++] = (uint32_t)(c->nfi - 1);
		}
	}
	/* Phis of this instance name predecessors by their original labels: point
	 * them at the blocks that now hold those predecessors' terminators. */
	for (size_t p = 0; p < nphis; p++) {
		uint32_t *w = (uint32_t *)c->fi[phis[p]].w;
		for (uint32_t j = 4; j < c->fi[phis[p]].nwords; j += 2)
			if (w[j] < c->nids && c->term_of[w[j]])
				w[j] = c->term_of[w[j]];
	}
}

static void flatten(spv_ctx_t *c, const spv_fn_t *fn)
{
	c->nids = c->m->bound;
	c->term_of = spv_grow(c, c->term_of, &c->capterm, c->nids, sizeof(uint32_t));
	memset(c->term_of, 0, c->nids * sizeof(uint32_t));
	struct instance I = {0};
	prepare_instance(c, &I, fn, NULL, 0);
	const uint32_t stack[1] = {fn->id};
	emit_instance(c, &I, 0, stack);
}

/* ---- blocks of the flat function ----------------------------------------------- */

static int is_terminator(uint32_t op)
{
	return op == SpvOpBranch || op == SpvOpBranchConditional || op == SpvOpSwitch || op == SpvOpReturn ||
	       op == SpvOpReturnValue || op == SpvOpUnreachable || op == SpvOpKill || op == SpvOpTerminateInvocation;
}

static void build_blocks(spv_ctx_t *c)
{
	c->blk_of_label = spv_alloc(c, c->nids * sizeof(uint32_t));
	blk_t *b = NULL;
	for (uint32_t i = 0; i < c->nfi; i++) {
		const spv_inst_t *in = &c->fi[i];
		if (in->opcode == SpvOpLabel) {
			c->blk = spv_grow(c, c->blk, &c->capblk, c->nblk + 1, sizeof(blk_t));
			b = &c->blk[c->nblk++];
			memset(b, 0, sizeof(*b));
			b->label = in->w[1];
			b->first = i + 1;
			b->word = in->off;
			b->loop = -1;
			c->blk_of_label[b->label] = c->nblk;
			continue;
		}
		if (b && is_terminator(in->opcode)) {
			b->end = i + 1;
			b = NULL;
		}
	}
}

static uint32_t block_of(spv_ctx_t *c, uint32_t label, uint32_t word)
{
	if (label >= c->nids || !c->blk_of_label[label])
		spv_fail(c, word, "%%%u is not a block of this function", label);
	return c->blk_of_label[label] - 1;
}

/* ---- IR emission --------------------------------------------------------------- */

uint32_t spv_new_vreg(spv_ctx_t *c, uint32_t size)
{
	if (c->nvr >= (1u << 22))
		spv_fail(c, c->cur_word, "the kernel needs too many values");
	c->vr = spv_grow(c, c->vr, &c->capvr, c->nvr + 1, sizeof(vreg_t));
	c->vr[c->nvr] = (vreg_t){(uint8_t)size, UINT32_MAX, -1};
	return c->nvr++;
}

inst_t *spv_emit_to(spv_ctx_t *c, blk_t *b, const inst_t *in)
{
	b->code = spv_grow(c, b->code, &b->capcode, b->ncode + 1, sizeof(inst_t));
	b->code[b->ncode] = *in;
	if (!in->loc)
		b->code[b->ncode].loc = c->cur_loc;
	return &b->code[b->ncode++];
}

static opnd_t vnew(spv_ctx_t *c)
{
	return o_v(spv_new_vreg(c, 1));
}

/* Immediates cannot carry modifiers: apply them to the value. */
static opnd_t fold_imm_mods(opnd_t o, uint8_t st)
{
	if (o.k != O_I || (!o.neg && !o.abs))
		return o;
	uint32_t v = o.v;
	if (st == ZE_TYPE_F) {
		if (o.abs)
			v &= 0x7fffffffu;
		if (o.neg)
			v ^= 0x80000000u;
	} else {
		if (o.abs && st == ZE_TYPE_D && (int32_t)v < 0)
			v = 0u - v;
		if (o.neg)
			v = 0u - v;
	}
	return o_imm(v);
}

static inst_t *emit(spv_ctx_t *c, const inst_t *tmpl);

static opnd_t mov_to_vreg(spv_ctx_t *c, uint8_t t, opnd_t a)
{
	const opnd_t d = vnew(c);
	inst_t in = {.op = ZE_OP_MOV, .dt = t, .st = t, .d = d, .s = {a}};
	emit(c, &in);
	return d;
}

/* Append an instruction to the current block, making it encodable: at most one
 * immediate, no modifiers on immediates. */
static inst_t *emit(spv_ctx_t *c, const inst_t *tmpl)
{
	inst_t in = *tmpl;
	if (in.op != ZE_OP_SEND) {
		int imms = 0;
		const int logic = in.op == ZE_OP_AND || in.op == ZE_OP_OR || in.op == ZE_OP_XOR || in.op == ZE_OP_NOT ||
				  in.op == ZE_OP_SHL || in.op == ZE_OP_SHR || in.op == ZE_OP_ASR;
		for (int i = 0; i < 3; i++) {
			/* logic and shifts take no source modifiers: apply them first */
			if (logic && in.s[i].k != O_I && (in.s[i].neg || in.s[i].abs))
				in.s[i] = mov_to_vreg(c, in.st == ZE_TYPE_F ? ZE_TYPE_UD : in.st, in.s[i]);
			in.s[i] = fold_imm_mods(in.s[i], in.st);
			if (in.s[i].k == O_I && ++imms > 1)
				in.s[i] = mov_to_vreg(c, in.st, in.s[i]);
		}
	}
	return spv_emit_to(c, c->cur, &in);
}

static int is_int_type(uint8_t t)
{
	return t == ZE_TYPE_D || t == ZE_TYPE_UD;
}

/* Fold an ALU operation on immediates (integer types; float results are left
 * to the device, whose NaN rules are its own). */
static int fold(uint8_t op, uint8_t dt, uint8_t st, const opnd_t *s, uint32_t *out)
{
	for (int i = 0; i < 3; i++)
		if (s[i].k != O_NULL && (s[i].k != O_I || s[i].neg || s[i].abs))
			return 0;
	const uint32_t a = s[0].v, b = s[1].v;
	if (!is_int_type(st) || !is_int_type(dt))
		return 0;
	switch (op) {
	case ZE_OP_MOV: *out = a; return 1;
	case ZE_OP_ADD: *out = a + b; return 1;
	case ZE_OP_MUL: *out = a * b; return 1;
	case ZE_OP_AND: *out = a & b; return 1;
	case ZE_OP_OR: *out = a | b; return 1;
	case ZE_OP_XOR: *out = a ^ b; return 1;
	case ZE_OP_NOT: *out = ~a; return 1;
	case ZE_OP_SHL: *out = a << (b & 31); return 1;
	case ZE_OP_SHR: *out = a >> (b & 31); return 1;
	case ZE_OP_ASR: *out = (uint32_t)((int32_t)a >> (b & 31)); return 1;
	case ZE_OP_MAD: *out = a * b + s[2].v; return 1;
	default: return 0;
	}
}

static int plain_imm(opnd_t o, uint32_t v)
{
	return o.k == O_I && !o.neg && !o.abs && o.v == v;
}

static int plain(opnd_t o)
{
	return !o.neg && !o.abs;
}

/* x op identity = x, for integer operations that keep the type. */
static int identity(uint8_t op, uint8_t dt, uint8_t st, const opnd_t *s, opnd_t *out)
{
	if (!is_int_type(st) || dt != st || s[2].k != O_NULL)
		return 0;
	for (int i = 0; i < 2; i++) {
		const opnd_t x = s[i], k = s[1 - i];
		if (!plain(x))
			continue;
		if ((op == ZE_OP_AND && plain_imm(k, 0xffffffffu)) || (op == ZE_OP_OR && plain_imm(k, 0)) ||
		    (op == ZE_OP_XOR && plain_imm(k, 0)) || (op == ZE_OP_ADD && plain_imm(k, 0)) ||
		    (op == ZE_OP_MUL && plain_imm(k, 1)) ||
		    (i == 0 && (op == ZE_OP_SHL || op == ZE_OP_SHR || op == ZE_OP_ASR) && plain_imm(k, 0))) {
			*out = x;
			return 1;
		}
		if ((op == ZE_OP_AND || op == ZE_OP_MUL) && plain_imm(k, 0)) {
			*out = o_imm(0);
			return 1;
		}
	}
	return 0;
}

/* d = op(a, b, cc) in a new vreg (or folded). */
static opnd_t alu(spv_ctx_t *c, uint8_t op, uint8_t dt, uint8_t st, opnd_t a, opnd_t b, opnd_t cc)
{
	inst_t in = {.op = op, .dt = dt, .st = st, .s = {a, b, cc}};
	uint32_t v;
	if (fold(op, dt, st, in.s, &v))
		return o_imm(v);
	opnd_t same;
	if (identity(op, dt, st, in.s, &same))
		return same;
	in.d = vnew(c);
	emit(c, &in);
	return in.d;
}

static opnd_t alu2(spv_ctx_t *c, uint8_t op, uint8_t t, opnd_t a)
{
	return alu(c, op, t, t, a, o_null(), o_null());
}

static opnd_t alu3(spv_ctx_t *c, uint8_t op, uint8_t t, opnd_t a, opnd_t b)
{
	return alu(c, op, t, t, a, b, o_null());
}

static opnd_t neg(opnd_t a)
{
	a.neg ^= 1;
	return a;
}

static opnd_t add_u(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	if (b.k == O_I && b.v == 0 && !b.neg)
		return a;
	if (a.k == O_I && a.v == 0 && !a.neg)
		return b;
	return alu3(c, ZE_OP_ADD, ZE_TYPE_UD, a, b);
}

static opnd_t sub_u(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	return add_u(c, a, b.k == O_I ? o_imm(0u - b.v) : neg(b));
}

static int log2_exact(uint32_t v)
{
	if (!v || (v & (v - 1)))
		return -1;
	int n = 0;
	while (v >>= 1)
		n++;
	return n;
}

static opnd_t mul_const(spv_ctx_t *c, opnd_t a, uint32_t k)
{
	if (k == 0)
		return o_imm(0);
	if (k == 1)
		return a;
	const int sh = log2_exact(k);
	if (sh > 0)
		return alu3(c, ZE_OP_SHL, ZE_TYPE_UD, a, o_imm((uint32_t)sh));
	return alu3(c, ZE_OP_MUL, ZE_TYPE_UD, a, o_imm(k));
}

/* ---- 8- and 16-bit integers ---------------------------------------------------------
 * A narrow integer is held in a 32-bit leaf, zero-extended: operations that can
 * set higher bits are truncated again, signed ones see the sign-extended value. */

static uint32_t wmask(uint32_t width)
{
	return width >= 32 ? 0xffffffffu : (1u << width) - 1u;
}

static opnd_t trunc_w(spv_ctx_t *c, opnd_t a, uint32_t width)
{
	if (width >= 32)
		return a;
	return alu3(c, ZE_OP_AND, ZE_TYPE_UD, a, o_imm(wmask(width)));
}

static opnd_t sext_w(spv_ctx_t *c, opnd_t a, uint32_t width)
{
	if (width >= 32)
		return a;
	if (a.k == O_I && plain(a))
		return o_imm((uint32_t)(((a.v & wmask(width)) ^ (1u << (width - 1))) - (1u << (width - 1))));
	return alu3(c, ZE_OP_ASR, ZE_TYPE_UD, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, a, o_imm(32 - width)), o_imm(32 - width));
}

/* cmp writing a flag that the next instructions read. */
static void cmp_flag(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag)
{
	inst_t in = {.op = ZE_OP_CMP, .cmod = cmod, .st = t, .dt = 0, .flag = flag, .flag_live = 1,
		     .d = o_null(), .s = {a, b}};
	if (a.k == O_I && b.k == O_I)
		in.s[0] = mov_to_vreg(c, t, a);
	emit(c, &in);
}

/* cmp, predicated on the same flag (an AND of conditions). */
static void cmp_flag_and(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag)
{
	inst_t in = {.op = ZE_OP_CMP, .cmod = cmod, .st = t, .flag = flag, .flag_live = 1, .pred = 1,
		     .d = o_null(), .s = {a, b}};
	if (a.k == O_I && b.k == O_I)
		in.s[0] = mov_to_vreg(c, t, a);
	emit(c, &in);
}

/* A boolean leaf (0 / ~0) from a comparison. */
static opnd_t cmp_bool(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b)
{
	inst_t in = {.op = ZE_OP_CMP, .cmod = cmod, .st = t, .dt = ZE_TYPE_UD, .d = vnew(c), .s = {a, b}};
	if (a.k == O_I && b.k == O_I)
		in.s[0] = mov_to_vreg(c, t, a);
	emit(c, &in);
	return in.d;
}

/* f<flag> = (bool leaf != 0). */
static void flag_of_bool(spv_ctx_t *c, opnd_t b, uint8_t flag)
{
	cmp_flag(c, ZE_CMOD_NE, ZE_TYPE_UD, b, o_imm(0), flag);
}

/* (flag) ? a : b */
static opnd_t sel(spv_ctx_t *c, uint8_t flag, uint8_t inv, opnd_t a, opnd_t b)
{
	if (a.k == O_I && b.k == O_I && a.v == b.v && !a.neg && !b.neg && !a.abs && !b.abs)
		return a;
	inst_t in = {.op = ZE_OP_SEL, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .pred = 1, .pinv = inv, .flag = flag,
		     .d = vnew(c), .s = {a, b}};
	emit(c, &in);
	return in.d;
}

/* A GRF vector holding the operand (send payloads and addresses). */
static opnd_t in_grf(spv_ctx_t *c, opnd_t a)
{
	if ((a.k == O_V || a.k == O_GRF) && !a.neg && !a.abs)
		return a;
	return mov_to_vreg(c, ZE_TYPE_UD, a);
}

static void send(spv_ctx_t *c, uint32_t msg, uint32_t atomic, opnd_t d, opnd_t a, opnd_t p, opnd_t b)
{
	inst_t in = {.op = ZE_OP_SEND, .desc = ze_send_desc(msg, atomic, 1), .d = d, .s = {a, p, b}};
	emit(c, &in);
}

/* ---- integer helpers --------------------------------------------------------------- */

/* High 32 bits of the unsigned 64-bit product (no mul-high in ZE-ISA: four
 * 16x16 partial products). */
static opnd_t mulhu(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	const uint8_t U = ZE_TYPE_UD;
	const opnd_t al = alu3(c, ZE_OP_AND, U, a, o_imm(0xffff)), ah = alu3(c, ZE_OP_SHR, U, a, o_imm(16));
	const opnd_t bl = alu3(c, ZE_OP_AND, U, b, o_imm(0xffff)), bh = alu3(c, ZE_OP_SHR, U, b, o_imm(16));
	const opnd_t ll = alu3(c, ZE_OP_MUL, U, al, bl), lh = alu3(c, ZE_OP_MUL, U, al, bh);
	const opnd_t hl = alu3(c, ZE_OP_MUL, U, ah, bl), hh = alu3(c, ZE_OP_MUL, U, ah, bh);
	opnd_t t = alu3(c, ZE_OP_SHR, U, ll, o_imm(16));
	t = add_u(c, t, alu3(c, ZE_OP_AND, U, lh, o_imm(0xffff)));
	t = add_u(c, t, alu3(c, ZE_OP_AND, U, hl, o_imm(0xffff)));
	opnd_t r = add_u(c, hh, alu3(c, ZE_OP_SHR, U, lh, o_imm(16)));
	r = add_u(c, r, alu3(c, ZE_OP_SHR, U, hl, o_imm(16)));
	return add_u(c, r, alu3(c, ZE_OP_SHR, U, t, o_imm(16)));
}

/* Unsigned 32-bit division and remainder: a float reciprocal estimate, one
 * Newton step in integers and two corrections (the expansion LLVM's AMDGPU
 * back end uses, after Rodeheffer, "Software Integer Division", 2008): exact
 * for every x and y != 0.  y == 0 gives 0xffffffff (undefined in OpenCL C). */
static void udivrem(spv_ctx_t *c, opnd_t x, opnd_t y, opnd_t *q_out, opnd_t *r_out)
{
	const uint8_t U = ZE_TYPE_UD, F = ZE_TYPE_F;
	if (y.k == O_I && log2_exact(y.v) >= 0) {
		const uint32_t sh = (uint32_t)log2_exact(y.v);
		if (q_out)
			*q_out = alu3(c, ZE_OP_SHR, U, x, o_imm(sh));
		if (r_out)
			*r_out = alu3(c, ZE_OP_AND, U, x, o_imm(y.v - 1));
		return;
	}
	const opnd_t fy = alu(c, ZE_OP_MOV, F, U, y, o_null(), o_null());
	const opnd_t rcp = alu2(c, ZE_OP_INV, F, fy);
	const opnd_t scaled = alu3(c, ZE_OP_MUL, F, rcp, o_imm(0x4f7ffffeu)); /* 2^32 - 512 */
	opnd_t z = alu(c, ZE_OP_MOV, U, F, scaled, o_null(), o_null());
	const opnd_t ny = y.k == O_I ? o_imm(0u - y.v) : neg(y);
	const opnd_t nyz = alu3(c, ZE_OP_MUL, U, ny, z);
	z = add_u(c, z, mulhu(c, z, nyz));
	opnd_t q = mulhu(c, x, z);
	opnd_t r = sub_u(c, x, alu3(c, ZE_OP_MUL, U, q, y));
	for (int i = 0; i < 2; i++) {
		cmp_flag(c, ZE_CMOD_GE, U, r, y, 0);
		const opnd_t q1 = add_u(c, q, o_imm(1)), r1 = sub_u(c, r, y);
		q = sel(c, 0, 0, q1, q);
		r = sel(c, 0, 0, r1, r);
	}
	if (q_out)
		*q_out = q;
	if (r_out)
		*r_out = r;
}

static opnd_t abs_d(spv_ctx_t *c, opnd_t a)
{
	if (a.k == O_I)
		return o_imm((int32_t)a.v < 0 ? 0u - a.v : a.v);
	a.abs = 1;
	a.neg = 0;
	return alu(c, ZE_OP_MOV, ZE_TYPE_UD, ZE_TYPE_D, a, o_null(), o_null());
}

/* (v ^ s) - s: negates v where s is ~0. */
static opnd_t apply_sign(spv_ctx_t *c, opnd_t v, opnd_t s)
{
	return sub_u(c, alu3(c, ZE_OP_XOR, ZE_TYPE_UD, v, s), s);
}

static opnd_t sdivrem(spv_ctx_t *c, uint32_t op, opnd_t x, opnd_t y)
{
	const uint8_t U = ZE_TYPE_UD;
	const opnd_t sx = alu(c, ZE_OP_ASR, U, U, x, o_imm(31), o_null());
	opnd_t q, r;
	udivrem(c, abs_d(c, x), abs_d(c, y), op == SpvOpSDiv ? &q : NULL, op == SpvOpSDiv ? NULL : &r);
	if (op == SpvOpSDiv) {
		const opnd_t sy = alu(c, ZE_OP_ASR, U, U, y, o_imm(31), o_null());
		return apply_sign(c, q, alu3(c, ZE_OP_XOR, U, sx, sy));
	}
	r = apply_sign(c, r, sx); /* SRem: the sign of x */
	if (op == SpvOpSRem)
		return r;
	/* SMod: the sign of y: add y when r != 0 and the signs differ. */
	cmp_flag(c, ZE_CMOD_NE, U, r, o_imm(0), 0);
	const opnd_t differ = alu3(c, ZE_OP_XOR, U, r, y);
	cmp_flag_and(c, ZE_CMOD_LT, ZE_TYPE_D, differ, o_imm(0), 0);
	return sel(c, 0, 0, add_u(c, r, y), r);
}

/* 64-bit integers: lo/hi leaf pairs. */
static void add64(spv_ctx_t *c, const opnd_t *a, const opnd_t *b, opnd_t *r)
{
	r[0] = add_u(c, a[0], b[0]);
	opnd_t hi = add_u(c, a[1], b[1]);
	if (!(b[0].k == O_I && b[0].v == 0) && !(a[0].k == O_I && a[0].v == 0)) {
		const opnd_t carry = cmp_bool(c, ZE_CMOD_LT, ZE_TYPE_UD, r[0], a[0].k == O_I ? b[0] : a[0]);
		hi = sub_u(c, hi, carry); /* carry is ~0 = -1 */
	}
	r[1] = hi;
}

static void sub64(spv_ctx_t *c, const opnd_t *a, const opnd_t *b, opnd_t *r)
{
	r[0] = sub_u(c, a[0], b[0]);
	opnd_t hi = sub_u(c, a[1], b[1]);
	if (!(b[0].k == O_I && b[0].v == 0)) {
		const opnd_t borrow = cmp_bool(c, ZE_CMOD_LT, ZE_TYPE_UD, a[0], b[0]);
		hi = add_u(c, hi, borrow);
	}
	r[1] = hi;
}

static int is_zero(opnd_t o)
{
	return o.k == O_I && o.v == 0;
}

static void mul64(spv_ctx_t *c, const opnd_t *a, const opnd_t *b, opnd_t *r)
{
	const uint8_t U = ZE_TYPE_UD;
	r[0] = alu3(c, ZE_OP_MUL, U, a[0], b[0]);
	opnd_t hi = mulhu(c, a[0], b[0]);
	if (!is_zero(b[1]))
		hi = add_u(c, hi, alu3(c, ZE_OP_MUL, U, a[0], b[1]));
	if (!is_zero(a[1]))
		hi = add_u(c, hi, alu3(c, ZE_OP_MUL, U, a[1], b[0]));
	r[1] = hi;
}

/* Shifts of 64-bit values; the count is taken modulo 64 (OpenCL C). */
static void shift64(spv_ctx_t *c, uint32_t op, const opnd_t *a, opnd_t cnt, opnd_t *r)
{
	const uint8_t U = ZE_TYPE_UD;
	const opnd_t sign = op == SpvOpShiftRightArithmetic ? alu3(c, ZE_OP_ASR, U, a[1], o_imm(31)) : o_imm(0);
	if (cnt.k == O_I) {
		const uint32_t k = cnt.v & 63;
		if (k == 0) {
			r[0] = a[0];
			r[1] = a[1];
		} else if (op == SpvOpShiftLeftLogical) {
			if (k >= 32) {
				r[1] = alu3(c, ZE_OP_SHL, U, a[0], o_imm(k - 32));
				r[0] = o_imm(0);
			} else {
				r[1] = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHL, U, a[1], o_imm(k)),
					    alu3(c, ZE_OP_SHR, U, a[0], o_imm(32 - k)));
				r[0] = alu3(c, ZE_OP_SHL, U, a[0], o_imm(k));
			}
		} else {
			const uint8_t hop = op == SpvOpShiftRightArithmetic ? ZE_OP_ASR : ZE_OP_SHR;
			if (k >= 32) {
				r[0] = alu3(c, hop, U, a[1], o_imm(k - 32));
				r[1] = sign;
			} else {
				r[0] = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHR, U, a[0], o_imm(k)),
					    alu3(c, ZE_OP_SHL, U, a[1], o_imm(32 - k)));
				r[1] = alu3(c, hop, U, a[1], o_imm(k));
			}
		}
		return;
	}
	/* ZE-ISA shifts use count & 31, which for counts of 32-63 is exactly the
	 * shift of the "big" case; (x >> 1) >> (~k & 31) is x >> (32 - k) also for
	 * k = 0. */
	const opnd_t notk = alu2(c, ZE_OP_NOT, U, in_grf(c, cnt));
	cmp_flag(c, ZE_CMOD_NE, U, alu3(c, ZE_OP_AND, U, cnt, o_imm(32)), o_imm(0), 1);
	if (op == SpvOpShiftLeftLogical) {
		const opnd_t t = alu3(c, ZE_OP_SHL, U, a[0], cnt);
		const opnd_t spill = alu3(c, ZE_OP_SHR, U, alu3(c, ZE_OP_SHR, U, a[0], o_imm(1)), notk);
		const opnd_t hs = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHL, U, a[1], cnt), spill);
		r[1] = sel(c, 1, 0, t, hs);
		r[0] = sel(c, 1, 0, o_imm(0), t);
	} else {
		const uint8_t hop = op == SpvOpShiftRightArithmetic ? ZE_OP_ASR : ZE_OP_SHR;
		const opnd_t t = alu3(c, hop, U, a[1], cnt);
		const opnd_t spill = alu3(c, ZE_OP_SHL, U, alu3(c, ZE_OP_SHL, U, a[1], o_imm(1)), notk);
		const opnd_t ls = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHR, U, a[0], cnt), spill);
		r[0] = sel(c, 1, 0, t, ls);
		r[1] = sel(c, 1, 0, sign, t);
	}
}

/* a < b (or <=) on 64-bit values, as a boolean leaf. */
static opnd_t less64(spv_ctx_t *c, const opnd_t *a, const opnd_t *b, int is_signed, int or_equal)
{
	const uint8_t U = ZE_TYPE_UD;
	const opnd_t hl = cmp_bool(c, ZE_CMOD_LT, is_signed ? ZE_TYPE_D : U, a[1], b[1]);
	const opnd_t he = cmp_bool(c, ZE_CMOD_EQ, U, a[1], b[1]);
	const opnd_t ll = cmp_bool(c, or_equal ? ZE_CMOD_LE : ZE_CMOD_LT, U, a[0], b[0]);
	return alu3(c, ZE_OP_OR, U, hl, alu3(c, ZE_OP_AND, U, he, ll));
}

static opnd_t eq64(spv_ctx_t *c, const opnd_t *a, const opnd_t *b)
{
	const opnd_t l = cmp_bool(c, ZE_CMOD_EQ, ZE_TYPE_UD, a[0], b[0]);
	const opnd_t h = cmp_bool(c, ZE_CMOD_EQ, ZE_TYPE_UD, a[1], b[1]);
	return alu3(c, ZE_OP_AND, ZE_TYPE_UD, l, h);
}

/* ---- values ------------------------------------------------------------------------ */

static val_t *def_val(spv_ctx_t *c, uint32_t id, uint32_t type)
{
	check_value_type(c, type);
	const spv_type_t *t = ty(c, type);
	if (id >= c->nids)
		spv_fail(c, c->cur_word, "internal: id %u out of range", id);
	val_t *v = &c->vals[id];
	v->type = type;
	v->n = t->nleaf;
	v->leaf = spv_alloc(c, (v->n + 1) * sizeof(opnd_t));
	if (t->k == TY_PTR)
		v->leaf[1] = o_imm(0);
	v->done = 1;
	return v;
}

static const val_t *use(spv_ctx_t *c, uint32_t id)
{
	if (id < c->m->bound && c->consts[id].done)
		return &c->consts[id];
	if (id < c->nids && c->vals[id].done)
		return &c->vals[id];
	const spv_inst_t *d = spv_def(c->m, id);
	if (d && (d->opcode == SpvOpVariable))
		spv_fail(c, c->cur_word, "%%%u: %s variables are not supported here", id,
			 spv_enum_name(SPV_KIND_StorageClass, d->w[3]));
	if (d && ty(c, d->type)->k == TY_OTHER)
		spv_fail(c, c->cur_word, "%%%u: values of type %s are not supported", id,
			 spv_op_name(spv_def(c->m, d->type)->opcode));
	spv_fail(c, c->cur_word, "%%%u is used before it is defined (or is not supported)", id);
}

typedef struct comp {
	const spv_type_t *et; /* element type */
	uint32_t n;           /* components */
	uint32_t per;         /* leaves per component */
} comp_t;

static comp_t comps(spv_ctx_t *c, uint32_t type)
{
	const spv_type_t *t = ty(c, type);
	if (t->k == TY_VEC) {
		const spv_type_t *e = ty(c, t->elem);
		return (comp_t){e, t->count, e->nleaf};
	}
	return (comp_t){t, 1, t->nleaf};
}

/* ---- 64-bit division ---------------------------------------------------------------- */

/* A float near the unsigned 64-bit value (hi * 2^32 + lo in one fused
 * rounding). */
static opnd_t u64_to_f(spv_ctx_t *c, const opnd_t *a)
{
	const uint8_t U = ZE_TYPE_UD, F = ZE_TYPE_F;
	const opnd_t hf = alu(c, ZE_OP_MOV, F, U, a[1], o_null(), o_null());
	const opnd_t lf = alu(c, ZE_OP_MOV, F, U, a[0], o_null(), o_null());
	return alu(c, ZE_OP_MAD, F, F, hf, o_imm(0x4f800000u), lf);
}

/* floor(f) as an unsigned 64-bit value, for 0 <= f < 2^64. */
static void f_to_u64(spv_ctx_t *c, opnd_t f, opnd_t *r)
{
	const uint8_t U = ZE_TYPE_UD, F = ZE_TYPE_F;
	const opnd_t h = alu(c, ZE_OP_MOV, U, F, alu3(c, ZE_OP_MUL, F, f, o_imm(0x2f800000u)), o_null(), o_null());
	const opnd_t hf = alu(c, ZE_OP_MOV, F, U, h, o_null(), o_null());
	const opnd_t rem = alu(c, ZE_OP_MAD, F, F, neg(hf), o_imm(0x4f800000u), f); /* exact: f - h 2^32 */
	r[0] = alu(c, ZE_OP_MOV, U, F, rem, o_null(), o_null());
	r[1] = h;
}

/* Unsigned 64-bit x / y and x % y.  Four rounds of: an underestimate of r / y
 * from fp32 (relative error below 2^-19, so it never exceeds the true
 * quotient), q += that, r -= that * y.  Each round leaves r / y at most
 * 2^-19 of what it was plus one, so after four (from below 2^64) r < 2y and
 * one correction step ends it.  y = 0 gives some value (undefined in C). */
static void udivrem64(spv_ctx_t *c, const opnd_t *x, const opnd_t *y, opnd_t *q_out, opnd_t *r_out)
{
	const uint8_t F = ZE_TYPE_F;
	const opnd_t inv = alu3(c, ZE_OP_MUL, F, alu2(c, ZE_OP_INV, F, u64_to_f(c, y)), o_imm(0x3f7ffff0u)); /* 1 - 2^-20 */
	opnd_t q[2] = {o_imm(0), o_imm(0)}, r[2] = {x[0], x[1]};
	for (int round = 0; round < 4; round++) {
		/* (below 2^64: the largest float under it) */
		const opnd_t qf = alu3(c, ZE_OP_MIN, F, alu3(c, ZE_OP_MUL, F, u64_to_f(c, r), inv), o_imm(0x5f7fffffu));
		opnd_t qe[2], p[2], t[2];
		f_to_u64(c, qf, qe);
		add64(c, q, qe, t);
		q[0] = t[0];
		q[1] = t[1];
		mul64(c, qe, y, p);
		sub64(c, r, p, t);
		r[0] = t[0];
		r[1] = t[1];
	}
	/* r < 2y: one more y at most (the carries' compares write f0: before the
	 * flag is set) */
	const opnd_t one[2] = {o_imm(1), o_imm(0)};
	opnd_t q1[2], r1[2];
	add64(c, q, one, q1);
	sub64(c, r, y, r1);
	flag_of_bool(c, less64(c, r, y, 0, 0), 0);
	for (int k = 0; k < 2; k++) {
		if (q_out)
			q_out[k] = sel(c, 0, 1, q1[k], q[k]);
		if (r_out)
			r_out[k] = sel(c, 0, 1, r1[k], r[k]);
	}
}

/* (v ^ s) - s on 64 bits: negates v where s (both halves) is ~0. */
static void apply_sign64(spv_ctx_t *c, const opnd_t *v, opnd_t s, opnd_t *r)
{
	const opnd_t x[2] = {alu3(c, ZE_OP_XOR, ZE_TYPE_UD, v[0], s), alu3(c, ZE_OP_XOR, ZE_TYPE_UD, v[1], s)};
	const opnd_t ss[2] = {s, s};
	sub64(c, x, ss, r);
}

static void divrem64(spv_ctx_t *c, uint32_t op, const opnd_t *x, const opnd_t *y, opnd_t *r)
{
	const uint8_t U = ZE_TYPE_UD;
	if (op == SpvOpUDiv || op == SpvOpUMod) {
		udivrem64(c, x, y, op == SpvOpUDiv ? r : NULL, op == SpvOpUMod ? r : NULL);
		return;
	}
	const opnd_t sx = alu3(c, ZE_OP_ASR, U, x[1], o_imm(31)), sy = alu3(c, ZE_OP_ASR, U, y[1], o_imm(31));
	opnd_t ax[2], ay[2], v[2];
	apply_sign64(c, x, sx, ax);
	apply_sign64(c, y, sy, ay);
	if (op == SpvOpSDiv) {
		udivrem64(c, ax, ay, v, NULL);
		apply_sign64(c, v, alu3(c, ZE_OP_XOR, U, sx, sy), r);
		return;
	}
	udivrem64(c, ax, ay, NULL, v);
	apply_sign64(c, v, sx, r); /* SRem: the sign of x */
	if (op == SpvOpSRem)
		return;
	/* SMod: the sign of y: add y when r != 0 and the signs differ */
	opnd_t ry[2];
	add64(c, r, y, ry); /* (before the flag: its carry is a compare) */
	const opnd_t nz = alu3(c, ZE_OP_OR, U, r[0], r[1]);
	const opnd_t differ = alu3(c, ZE_OP_XOR, U, r[1], y[1]);
	cmp_flag(c, ZE_CMOD_NE, U, nz, o_imm(0), 0);
	cmp_flag_and(c, ZE_CMOD_LT, ZE_TYPE_D, differ, o_imm(0), 0);
	const opnd_t lo = sel(c, 0, 0, ry[0], r[0]), hi = sel(c, 0, 0, ry[1], r[1]);
	r[0] = lo;
	r[1] = hi;
}

/* ---- pointer roots: where each pointer value points, known at compile time -------- */

static root_t merge_root(root_t a, root_t b)
{
	if (a.k == R_NONE)
		return b;
	if (b.k == R_NONE)
		return a;
	if (a.k == b.k && a.id == b.id && a.breg == b.breg && a.bsub == b.bsub)
		return a;
	/* a global pointer known at compile time and one loaded from memory
	 * (or null, whose address is 0) merge as addresses (see promote_dyn) */
	if ((a.k == R_DYN && (b.k == R_GLOBAL || b.k == R_NULL)) || (b.k == R_DYN && (a.k == R_GLOBAL || a.k == R_NULL)))
		return (root_t){R_DYN, 0, 0, 0};
	return (root_t){R_CONFLICT, 0, 0, 0};
}

/* A global pointer known at compile time that meets one loaded from memory in
 * a phi or select is computed as an address where it is defined (an access
 * chain or a cast of one); kernel arguments themselves stay offsets. */
static void promote_dyn(spv_ctx_t *c, root_t merged, uint32_t id, int *changed)
{
	if (merged.k != R_DYN || id >= c->nids || c->vals[id].root.k != R_GLOBAL || c->vals[id].done)
		return;
	for (uint32_t i = 0; i < c->nargs; i++)
		if (c->args[i].param == id)
			return;
	c->vals[id].root = (root_t){R_DYN, 0, 0, 0};
	*changed = 1;
}

static void infer_roots(spv_ctx_t *c)
{
	/* Kernel parameters were set up already; globals: */
	for (uint32_t i = 0; i < c->m->ninsts; i++) {
		const spv_inst_t *in = &c->m->insts[i];
		if (in->opcode != SpvOpVariable || in->w[3] == SpvStorageClassFunction)
			continue;
		if (in->result >= c->nids)
			continue;
		val_t *v = &c->vals[in->result];
		if (in->w[3] == SpvStorageClassWorkgroup)
			v->root = (root_t){R_SLM, 0, 0, 0};
		else if (spv_builtin_var(c, in))
			v->root = (root_t){R_BUILTIN, 0, 0, in->result};
	}
	for (uint32_t i = 0; i < c->nfi; i++)
		if (c->fi[i].opcode == SpvOpVariable && c->fi[i].result < c->nids)
			c->vals[c->fi[i].result].root = (root_t){R_PRIVATE, 0, 0, c->fi[i].result};
	for (int pass = 0; pass < 64; pass++) {
		int changed = 0;
		for (uint32_t i = 0; i < c->nfi; i++) {
			const spv_inst_t *in = &c->fi[i];
			if (!in->result || !in->type || ty(c, in->type)->k != TY_PTR)
				continue;
			root_t r = c->vals[in->result].root;
			const root_t old = r;
			switch (in->opcode) {
			case SpvOpAccessChain:
			case SpvOpInBoundsAccessChain:
			case SpvOpPtrAccessChain:
			case SpvOpInBoundsPtrAccessChain:
			case SpvOpBitcast:
			case SpvOpCopyObject:
			case SpvOpPtrCastToGeneric:
			case SpvOpGenericCastToPtr:
				r = c->vals[in->w[3]].root;
				if (in->w[3] < c->m->bound && c->consts[in->w[3]].done)
					r = c->consts[in->w[3]].root;
				break;
			case SpvOpSelect:
				r = merge_root(c->vals[in->w[4]].root, c->vals[in->w[5]].root);
				promote_dyn(c, r, in->w[4], &changed);
				promote_dyn(c, r, in->w[5], &changed);
				break;
			case SpvOpLoad:
			case SpvOpCompositeExtract:
				/* a pointer read from memory, or from a value that was
				 * (composites hold pointers as addresses) */
				r = (root_t){R_DYN, 0, 0, 0};
				break;
			case SpvOpPhi:
				for (uint32_t j = 3; j < in->nwords; j += 2) {
					const uint32_t id = in->w[j];
					const root_t o = id < c->m->bound && c->consts[id].done ? c->consts[id].root
												 : c->vals[id].root;
					r = merge_root(r, o);
				}
				for (uint32_t j = 3; j < in->nwords; j += 2)
					promote_dyn(c, r, in->w[j], &changed);
				break;
			default:
				break;
			}
			if (old.k == R_DYN)
				r = old; /* promoted: computed as an address */
			if (memcmp(&r, &old, sizeof(r)) != 0) {
				c->vals[in->result].root = r;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
}

/* ---- kernel arguments ------------------------------------------------------------------ */

static void byval_variable(spv_ctx_t *c, uint32_t id, uint32_t type, uint32_t offset);

static void setup_args(spv_ctx_t *c, const spv_fn_t *fn)
{
	c->args = spv_alloc(c, (fn->nparams + 1) * sizeof(kernel_arg_t));
	c->nargs = fn->nparams;
	uint32_t off = 0;
	for (uint32_t i = 0; i < fn->nparams; i++) {
		const uint32_t p = fn->params[i];
		const spv_inst_t *pd = spv_def(c->m, p);
		c->cur_word = pd ? pd->off : c->entry_word;
		kernel_arg_t *a = &c->args[i];
		a->param = p;
		a->type = pd ? pd->type : 0;
		const spv_type_t *t = ty(c, a->type);
		char name[32];
		snprintf(name, sizeof(name), "arg%u", i);
		const char *n = c->names[p] ? c->names[p] : name;
		a->name = spv_alloc(c, strlen(n) + 1);
		memcpy(a->name, n, strlen(n) + 1);
		const int byval = t->k == TY_PTR && (c->byval[p] || t->sc == SpvStorageClassFunction);
		if (byval) {
			/* a struct passed by value: its bytes in the argument area,
			 * copied into a private variable (byval_variable) */
			const spv_type_t *e = ty(c, t->elem);
			if (t->sc != SpvStorageClassFunction || !e->size)
				spv_fail(c, c->cur_word, "kernel argument %u (%s): a byval argument that is not a "
					 "private pointer to a value of known size", i, a->name);
			a->kind = ZM_ARG_VALUE;
			a->size = e->size;
		} else if (t->k == TY_PTR) {
			if (t->sc == SpvStorageClassWorkgroup) {
				a->kind = ZM_ARG_LOCAL;
				a->size = 4;
			} else if (t->sc == SpvStorageClassCrossWorkgroup || t->sc == SpvStorageClassUniformConstant) {
				a->kind = ZM_ARG_GLOBAL;
				a->size = 8;
			} else {
				spv_fail(c, c->cur_word, "kernel argument %u (%s): pointers to %s memory are not supported",
					 i, a->name, spv_enum_name(SPV_KIND_StorageClass, t->sc));
			}
		} else if (t->k == TY_INT || t->k == TY_FLOAT || t->k == TY_VEC) {
			check_value_type(c, a->type);
			a->kind = ZM_ARG_VALUE;
			a->size = t->size;
		} else if (t->k == TY_OTHER) {
			spv_fail(c, c->cur_word, "kernel argument %u (%s): %s arguments are not supported", i, a->name,
				 spv_op_name(spv_def(c->m, a->type)->opcode));
		} else {
			spv_fail(c, c->cur_word, "kernel argument %u (%s) of this type is not supported", i, a->name);
		}
		off = align_up(off, a->size >= 8 ? 8 : 4);
		a->offset = off;
		off += a->size;
		if (off > ZE_MAX_ARG_BYTES)
			spv_fail(c, c->cur_word, "the kernel's arguments take more than %u bytes", ZE_MAX_ARG_BYTES);
		/* The parameter's value. */
		val_t *v = &c->vals[p];
		v->type = a->type;
		v->done = 1;
		v->n = t->nleaf;
		v->leaf = spv_alloc(c, (v->n + 1) * sizeof(opnd_t));
		const uint32_t reg = 7 + a->offset / 32, sub = (a->offset / 4) % 8;
		if (byval) {
			byval_variable(c, p, a->type, a->offset);
		} else if (a->kind == ZM_ARG_GLOBAL) {
			v->root = (root_t){R_GLOBAL, (uint8_t)reg, (uint8_t)sub, i};
			v->leaf[0] = o_imm(0);
			v->leaf[1] = o_imm(0);
		} else if (a->kind == ZM_ARG_LOCAL) {
			v->root = (root_t){R_SLM, 0, 0, 0};
			v->leaf[0] = o_s(reg, sub);
			v->leaf[1] = o_imm(0);
		} else {
			/* dwords of the argument area; narrow leaves (char, short,
			 * uchar4) are extracted at the top of the entry block */
			uint32_t offs[MAX_LEAVES + 1], nl = 0;
			uint8_t wid[MAX_LEAVES + 1];
			leaf_layout(c, a->type, a->offset, offs, wid, &nl);
			need(c, nl == v->n, "(kernel argument) of an inconsistent type");
			c->cur = &c->blk[c->rpo_list[0]];
			for (uint32_t j = 0; j < v->n; j++) {
				const uint32_t o = offs[j];
				const opnd_t dw = o_s(7 + o / 32, (o / 4) % 8);
				if (wid[j] == 32)
					v->leaf[j] = dw;
				else
					v->leaf[j] = trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, dw, o_imm((o & 3) * 8)), wid[j]);
			}
			c->cur = NULL;
		}
	}
	c->arg_bytes = align_up(off, 4);
	/* The hidden group counts, if the kernel turns out to need them, go
	 * after the user's arguments. */
	c->num_groups_off = c->arg_bytes;
	if (c->num_groups_off + 12 > ZE_MAX_ARG_BYTES)
		c->num_groups_off = UINT32_MAX;
}

/* ---- built-in variables ---------------------------------------------------------------- */

/* The payload of docs/isa.md §6: r0.0-2 group id, r0.3 thread index, r0.4-6
 * group size, r0.7 threads per group; r1/r3/r5 local ids x/y/z. */
static opnd_t num_groups(spv_ctx_t *c, uint32_t d)
{
	if (c->num_groups_off == UINT32_MAX)
		spv_fail(c, c->cur_word, "no room in the argument area for the group counts");
	c->need_num_groups = 1;
	const uint32_t o = c->num_groups_off + 4 * d;
	return o_s(7 + o / 32, (o / 4) % 8);
}

static opnd_t local_linear_id(spv_ctx_t *c)
{
	const uint8_t U = ZE_TYPE_UD;
	/* x + gx * (y + gy * z) */
	const opnd_t yz = alu(c, ZE_OP_MAD, U, U, o_s(0, 5), o_grf(5), o_grf(3));
	return alu(c, ZE_OP_MAD, U, U, o_s(0, 4), yz, o_grf(1));
}

static void builtin_leaf(spv_ctx_t *c, uint32_t builtin, uint32_t d, opnd_t *lo, opnd_t *hi)
{
	const uint8_t U = ZE_TYPE_UD;
	*hi = o_imm(0);
	if (d > 2 && (builtin == SpvBuiltInGlobalInvocationId || builtin == SpvBuiltInLocalInvocationId ||
		      builtin == SpvBuiltInWorkgroupId || builtin == SpvBuiltInWorkgroupSize ||
		      builtin == SpvBuiltInEnqueuedWorkgroupSize || builtin == SpvBuiltInNumWorkgroups ||
		      builtin == SpvBuiltInGlobalSize || builtin == SpvBuiltInGlobalOffset)) {
		*lo = o_imm(0);
		return;
	}
	switch (builtin) {
	case SpvBuiltInGlobalInvocationId: /* group id * group size + local id (no global offset) */
		*lo = alu(c, ZE_OP_MAD, U, U, o_s(0, d), o_s(0, 4 + d), o_grf(1 + 2 * d));
		return;
	case SpvBuiltInLocalInvocationId:
		*lo = o_grf(1 + 2 * d);
		return;
	case SpvBuiltInWorkgroupId:
		*lo = o_s(0, d);
		return;
	case SpvBuiltInWorkgroupSize:
	case SpvBuiltInEnqueuedWorkgroupSize:
		*lo = o_s(0, 4 + d);
		return;
	case SpvBuiltInNumWorkgroups:
		*lo = num_groups(c, d);
		return;
	case SpvBuiltInGlobalSize:
		*lo = alu3(c, ZE_OP_MUL, U, num_groups(c, d), o_s(0, 4 + d));
		return;
	case SpvBuiltInGlobalOffset:
		*lo = o_imm(0);
		return;
	case SpvBuiltInWorkDim: {
		/* Level Zero has no work dimension: as Intel's driver, the highest
		 * dimension whose global size exceeds 1 */
		const opnd_t gy = alu3(c, ZE_OP_MUL, U, num_groups(c, 1), o_s(0, 5));
		const opnd_t gz = alu3(c, ZE_OP_MUL, U, num_groups(c, 2), o_s(0, 6));
		cmp_flag(c, ZE_CMOD_GT, U, gy, o_imm(1), 0);
		const opnd_t v = sel(c, 0, 0, o_imm(2), o_imm(1));
		cmp_flag(c, ZE_CMOD_GT, U, gz, o_imm(1), 0);
		*lo = sel(c, 0, 0, o_imm(3), v);
		return;
	}
	case SpvBuiltInLocalInvocationIndex:
		*lo = local_linear_id(c);
		return;
	case SpvBuiltInGlobalLinearId: {
		/* gid.x + GX * (gid.y + GY * gid.z) */
		opnd_t g[3], h;
		for (uint32_t k = 0; k < 3; k++)
			builtin_leaf(c, SpvBuiltInGlobalInvocationId, k, &g[k], &h);
		const opnd_t gx = alu3(c, ZE_OP_MUL, U, num_groups(c, 0), o_s(0, 4));
		const opnd_t gy = alu3(c, ZE_OP_MUL, U, num_groups(c, 1), o_s(0, 5));
		*lo = alu(c, ZE_OP_MAD, U, U, gx, alu(c, ZE_OP_MAD, U, U, gy, g[2], g[1]), g[0]);
		return;
	}
	case SpvBuiltInSubgroupSize:
	case SpvBuiltInSubgroupMaxSize:
		*lo = o_imm(c->simd);
		return;
	case SpvBuiltInNumSubgroups:
	case SpvBuiltInNumEnqueuedSubgroups:
		*lo = o_s(0, 7);
		return;
	case SpvBuiltInSubgroupId:
		*lo = o_s(0, 3);
		return;
	case SpvBuiltInSubgroupLocalInvocationId: /* linear local id - thread * simd */
		*lo = sub_u(c, local_linear_id(c), alu3(c, ZE_OP_MUL, U, o_s(0, 3), o_imm(c->simd)));
		return;
	default:
		spv_fail(c, c->cur_word, "built-in variable %s is not supported", spv_enum_name(SPV_KIND_BuiltIn, builtin));
	}
}

static void load_builtin(spv_ctx_t *c, uint32_t var, uint32_t byte_off, uint32_t type, val_t *r)
{
	const uint32_t builtin = c->builtin[var] - 1;
	const spv_inst_t *vd = spv_def(c->m, var);
	const spv_type_t *vt = ty(c, ty(c, vd->type)->elem);
	const spv_type_t *et = vt->k == TY_VEC ? ty(c, vt->elem) : vt;
	if (et->k != TY_INT || (et->width != 32 && et->width != 64))
		spv_fail(c, c->cur_word, "built-in %s of an unexpected type", spv_enum_name(SPV_KIND_BuiltIn, builtin));
	const uint32_t esize = et->width / 8;
	const comp_t rc = comps(c, type);
	if (byte_off % esize || rc.et->k != TY_INT || rc.et->width != et->width)
		spv_fail(c, c->cur_word, "built-in %s read at byte %u as another type",
			 spv_enum_name(SPV_KIND_BuiltIn, builtin), byte_off);
	for (uint32_t i = 0; i < rc.n; i++) {
		opnd_t lo, hi;
		builtin_leaf(c, builtin, byte_off / esize + i, &lo, &hi);
		r->leaf[i * rc.per] = lo;
		if (rc.per > 1)
			r->leaf[i * rc.per + 1] = hi;
	}
}

/* ---- memory ---------------------------------------------------------------------------- */

static const char *root_problem(const root_t *r)
{
	switch (r->k) {
	case R_NULL:
		return "a null pointer";
	case R_CONFLICT:
		return "a pointer that may point into different buffers (a select or phi of pointers to different "
		       "kernel arguments or address spaces is not supported yet)";
	case R_PRIVATE:
		return "a pointer to private memory (private variables support loads and stores only)";
	case R_SLM:
		return "a pointer to local memory";
	case R_GLOBAL:
		return "a pointer into a kernel argument or program-scope data";
	default:
		return "a pointer whose buffer is not known at compile time (pointers made from integers are not "
		       "supported yet)";
	}
}

static void check_mem_root(spv_ctx_t *c, const val_t *p)
{
	if (p->root.k != R_GLOBAL && p->root.k != R_SLM && p->root.k != R_DYN)
		spv_fail(c, c->cur_word, "memory access through %s", root_problem(&p->root));
}

/* ---- private memory: Function variables held in registers ----------------------------
 * A variable is an array of dword vregs, written in place (a store is a mov or,
 * at a dynamic offset, a sel per dword); loads copy.  Each lane sees its own
 * values because instructions write only the lanes of their block. */

#define PRIV_MAX_DWORDS 64u    /* one variable */
#define PRIV_TOTAL_DWORDS 128u /* all of a kernel's */

static void private_variable(spv_ctx_t *c, const spv_inst_t *in)
{
	const spv_type_t *pt = ty(c, in->type);
	const spv_type_t *t = ty(c, pt->elem);
	const uint32_t ndw = (t->size + 3) / 4;
	if (!t->size || ndw > PRIV_MAX_DWORDS || c->priv_total + ndw > PRIV_TOTAL_DWORDS)
		spv_fail(c, in->off, "private variable %%%u: %u bytes; private memory is held in registers, at most %u "
			 "bytes per variable and %u per kernel", in->result, t->size, 4 * PRIV_MAX_DWORDS,
			 4 * PRIV_TOTAL_DWORDS);
	if (!c->priv_first) {
		c->priv_first = spv_alloc(c, c->nids * sizeof(uint32_t));
		c->priv_ndw = spv_alloc(c, c->nids * sizeof(uint32_t));
	}
	uint32_t first = c->priv_first[in->result];
	if (!first) { /* (an inlined variable in a loop is the same variable each time) */
		first = spv_new_vreg(c, 1) + 1;
		for (uint32_t k = 1; k < ndw; k++)
			spv_new_vreg(c, 1);
		c->priv_first[in->result] = first;
		c->priv_ndw[in->result] = ndw;
		c->priv_total += ndw;
	}
	/* zero, or the initializer */
	uint32_t init[PRIV_MAX_DWORDS] = {0};
	if (in->nwords > 4) {
		const val_t *iv = const_of(c, in->w[4], in->off);
		uint32_t offs[MAX_LEAVES + 1], n = 0;
		uint8_t wid[MAX_LEAVES + 1];
		leaf_layout(c, pt->elem, 0, offs, wid, &n);
		need(c, n == iv->n, "(initializer) of another type");
		for (uint32_t i = 0; i < n; i++)
			init[offs[i] / 4] |= (iv->leaf[i].v & wmask(wid[i])) << ((offs[i] & 3) * 8);
	}
	for (uint32_t k = 0; k < ndw; k++) {
		inst_t m = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(first - 1 + k), .s = {o_imm(init[k])}};
		emit(c, &m);
	}
	val_t *v = def_val(c, in->result, in->type);
	v->leaf[0] = o_imm(0);
	v->root = (root_t){R_PRIVATE, 0, 0, in->result};
}

/* A struct passed by value: a private variable holding the dwords of the
 * argument area at `offset`. */
static void byval_variable(spv_ctx_t *c, uint32_t id, uint32_t type, uint32_t offset)
{
	const spv_type_t *t = ty(c, ty(c, type)->elem);
	const uint32_t ndw = (t->size + 3) / 4;
	if (ndw > PRIV_MAX_DWORDS || c->priv_total + ndw > PRIV_TOTAL_DWORDS)
		spv_fail(c, c->cur_word, "a structure passed by value of %u bytes; it is held in registers, at most %u "
			 "bytes per variable and %u per kernel", t->size, 4 * PRIV_MAX_DWORDS, 4 * PRIV_TOTAL_DWORDS);
	if (!c->priv_first) {
		c->priv_first = spv_alloc(c, c->nids * sizeof(uint32_t));
		c->priv_ndw = spv_alloc(c, c->nids * sizeof(uint32_t));
	}
	const uint32_t first = spv_new_vreg(c, 1) + 1;
	for (uint32_t k = 1; k < ndw; k++)
		spv_new_vreg(c, 1);
	c->priv_first[id] = first;
	c->priv_ndw[id] = ndw;
	c->priv_total += ndw;
	c->cur = &c->blk[c->rpo_list[0]];
	for (uint32_t k = 0; k < ndw; k++) {
		const uint32_t o = offset + 4 * k;
		inst_t m = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(first - 1 + k),
			    .s = {o_s(7 + o / 32, (o / 4) % 8)}};
		emit(c, &m);
	}
	c->cur = NULL;
	val_t *v = &c->vals[id];
	v->leaf[0] = o_imm(0);
	v->leaf[1] = o_imm(0);
	v->root = (root_t){R_PRIVATE, 0, 0, id};
}

static uint32_t priv_var(spv_ctx_t *c, const val_t *p, uint32_t *ndw)
{
	const uint32_t id = p->root.id;
	if (!c->priv_first || id >= c->nids || !c->priv_first[id])
		spv_fail(c, c->cur_word, "internal: private variable %%%u used before its declaration", id);
	*ndw = c->priv_ndw[id];
	return c->priv_first[id] - 1;
}

/* The dword at byte offset `off` (a copy). */
static opnd_t priv_dword(spv_ctx_t *c, uint32_t first, uint32_t ndw, opnd_t off)
{
	if (off.k == O_I && plain(off))
		return mov_to_vreg(c, ZE_TYPE_UD, o_v(first + (off.v / 4 < ndw ? off.v / 4 : 0)));
	const opnd_t wi = alu3(c, ZE_OP_SHR, ZE_TYPE_UD, off, o_imm(2));
	opnd_t v = mov_to_vreg(c, ZE_TYPE_UD, o_v(first));
	for (uint32_t k = 1; k < ndw; k++) {
		cmp_flag(c, ZE_CMOD_EQ, ZE_TYPE_UD, wi, o_imm(k), 0);
		v = sel(c, 0, 0, o_v(first + k), v);
	}
	return v;
}

static void priv_load(spv_ctx_t *c, const val_t *p, uint32_t type, val_t *r)
{
	uint32_t ndw;
	const uint32_t first = priv_var(c, p, &ndw);
	uint32_t offs[MAX_LEAVES + 1], n = 0;
	uint8_t wid[MAX_LEAVES + 1];
	leaf_layout(c, type, 0, offs, wid, &n);
	need(c, n == r->n, "(private load) of another type");
	for (uint32_t i = 0; i < n; i++) {
		const opnd_t off = add_u(c, p->leaf[0], o_imm(offs[i]));
		const opnd_t dw = priv_dword(c, first, ndw, off);
		if (wid[i] == 32) {
			r->leaf[i] = dw;
			continue;
		}
		const opnd_t sh = off.k == O_I ? o_imm((off.v & 3) * 8)
					       : alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(3)), o_imm(3));
		r->leaf[i] = trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, dw, sh), wid[i]);
	}
}

/* Store the low `width` bits of val at byte offset off. */
static void priv_put(spv_ctx_t *c, uint32_t first, uint32_t ndw, opnd_t off, opnd_t val_in, uint32_t width)
{
	const uint32_t m = wmask(width);
	if (off.k == O_I && plain(off)) {
		const uint32_t k = off.v / 4 < ndw ? off.v / 4 : 0, sh = (off.v & 3) * 8;
		opnd_t val = val_in;
		if (width < 32)
			val = alu3(c, ZE_OP_OR, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, o_v(first + k), o_imm(~(m << sh))),
				   alu3(c, ZE_OP_SHL, ZE_TYPE_UD, val, o_imm(sh)));
		inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = o_v(first + k), .s = {val}};
		emit(c, &mv);
		return;
	}
	const opnd_t wi = alu3(c, ZE_OP_SHR, ZE_TYPE_UD, off, o_imm(2));
	opnd_t keep = o_null(), bits = val_in;
	if (width < 32) {
		const opnd_t sh = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(3)), o_imm(3));
		keep = alu2(c, ZE_OP_NOT, ZE_TYPE_UD, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, mov_to_vreg(c, ZE_TYPE_UD, o_imm(m)), sh));
		bits = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, bits, sh);
	}
	for (uint32_t k = 0; k < ndw; k++) {
		opnd_t val = bits;
		if (width < 32)
			val = alu3(c, ZE_OP_OR, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, o_v(first + k), keep), bits);
		cmp_flag(c, ZE_CMOD_EQ, ZE_TYPE_UD, wi, o_imm(k), 0);
		inst_t sl = {.op = ZE_OP_SEL, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .pred = 1, .flag = 0,
			     .d = o_v(first + k), .s = {in_grf(c, val), o_v(first + k)}};
		emit(c, &sl);
	}
}

static void priv_store(spv_ctx_t *c, const val_t *p, const val_t *v)
{
	uint32_t ndw;
	const uint32_t first = priv_var(c, p, &ndw);
	uint32_t offs[MAX_LEAVES + 1], n = 0;
	uint8_t wid[MAX_LEAVES + 1];
	leaf_layout(c, v->type, 0, offs, wid, &n);
	need(c, n == v->n, "(private store) of another type");
	for (uint32_t i = 0; i < n; i++)
		priv_put(c, first, ndw, add_u(c, p->leaf[0], o_imm(offs[i])), v->leaf[i], wid[i]);
}

static void ptr_abs(spv_ctx_t *c, const val_t *p, opnd_t *out);

static void access_chain(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *base = use(c, in->w[3]);
	const spv_type_t *pt = ty(c, base->type);
	if (pt->k != TY_PTR)
		spv_fail(c, in->off, "%s: the base %%%u is not a pointer", spv_op_name(in->opcode), in->w[3]);
	val_t *r = def_val(c, in->result, in->type);
	r->root = c->vals[in->result].root.k ? c->vals[in->result].root : base->root;
	if (base->root.k == R_BUILTIN)
		r->root = base->root;
	const int dyn = r->root.k == R_DYN;
	opnd_t base_abs[2];
	if (dyn)
		ptr_abs(c, base, base_abs);
	opnd_t off = dyn ? o_imm(0) : base->leaf[0];
	uint32_t cur = pt->elem;
	uint32_t i = 4;
	const int ptr_chain = in->opcode == SpvOpPtrAccessChain || in->opcode == SpvOpInBoundsPtrAccessChain;
	for (; i < in->nwords; i++) {
		const val_t *idx = use(c, in->w[i]);
		const spv_type_t *t = ty(c, cur);
		uint32_t stride;
		uint32_t next;
		if (ptr_chain && i == 4) {
			stride = t->size;
			next = cur;
			if (!stride && !(idx->leaf[0].k == O_I && idx->leaf[0].v == 0))
				spv_fail(c, in->off, "%s: element of unknown size", spv_op_name(in->opcode));
		} else if (t->k == TY_STRUCT) {
			if (idx->leaf[0].k != O_I || idx->leaf[0].v >= t->nmemb)
				spv_fail(c, in->off, "%s: bad struct member index", spv_op_name(in->opcode));
			off = add_u(c, off, o_imm(t->moff[idx->leaf[0].v]));
			cur = t->memb[idx->leaf[0].v];
			continue;
		} else if (t->k == TY_ARRAY || t->k == TY_VEC) {
			next = t->elem;
			stride = ty(c, next)->size;
			if (t->k == TY_VEC && !stride)
				spv_fail(c, in->off, "%s: vector of booleans in memory", spv_op_name(in->opcode));
		} else {
			spv_fail(c, in->off, "%s: cannot index into %%%u", spv_op_name(in->opcode), cur);
		}
		/* 64-bit indices: the offset from the root is 32-bit (README). */
		off = add_u(c, off, mul_const(c, idx->leaf[0], stride));
		cur = next;
	}
	if (r->root.k == R_BUILTIN && off.k != O_I)
		spv_fail(c, in->off, "%s: dynamic index into a built-in variable", spv_op_name(in->opcode));
	if (dyn) {
		/* a 64-bit address: add the offset sign-extended (|offset| < 2 GiB) */
		const opnd_t *a = base_abs;
		const opnd_t b[2] = {off, off.k == O_I ? o_imm((off.v >> 31) ? 0xffffffffu : 0)
						     : alu3(c, ZE_OP_ASR, ZE_TYPE_D, off, o_imm(31))};
		add64(c, a, b, r->leaf);
		return;
	}
	r->leaf[0] = off;
}

/* The 64-bit address a pointer value holds, as stored in memory or held in a
 * composite.  Only global pointers have one: local and private pointers are
 * offsets into memory that has no global address (SLM, registers). */
static void ptr_abs(spv_ctx_t *c, const val_t *p, opnd_t *out)
{
	switch (p->root.k) {
	case R_DYN:
		out[0] = p->leaf[0];
		out[1] = p->leaf[1];
		return;
	case R_NULL:
		out[0] = out[1] = o_imm(0);
		return;
	case R_GLOBAL: {
		const opnd_t base[2] = {o_s(p->root.breg, p->root.bsub), o_s(p->root.breg, p->root.bsub + 1u)};
		const opnd_t off[2] = {p->leaf[0], o_imm(0)};
		add64(c, base, off, out);
		return;
	}
	case R_SLM:
		spv_fail(c, c->cur_word, "a pointer to local memory stored in memory or in a composite value is not "
			 "supported (local pointers are offsets into the group's SLM, which has no global address)");
	case R_PRIVATE:
		spv_fail(c, c->cur_word, "a pointer to private memory stored in memory or in a composite value is not "
			 "supported (private variables are held in registers and have no address)");
	default:
		spv_fail(c, c->cur_word, "storing %s", root_problem(&p->root));
	}
}

/* A send to global or local memory at `off` from p's root (for an R_DYN
 * pointer `off` is the address's low dword: p's low dword plus less than
 * 2 GiB, possibly rounded down to a dword; the high dword is p's plus the
 * carry). */
static void mem_send(spv_ctx_t *c, const val_t *p, uint32_t gmsg, uint32_t smsg, uint32_t aop, opnd_t d, opnd_t off,
		     opnd_t payload)
{
	const opnd_t a = in_grf(c, off);
	if (p->root.k == R_GLOBAL) {
		send(c, gmsg, aop, d, a, payload, o_s(p->root.breg, p->root.bsub));
	} else if (p->root.k == R_DYN) {
		const opnd_t low = alu3(c, ZE_OP_AND, ZE_TYPE_UD, p->leaf[0], o_imm(~3u));
		const opnd_t wrapped = cmp_bool(c, ZE_CMOD_LT, ZE_TYPE_UD, a, low); /* 0 or ~0 */
		const opnd_t hi = in_grf(c, sub_u(c, p->leaf[1], wrapped));
		inst_t in = {.op = ZE_OP_SEND, .desc = ze_send_desc(gmsg, aop, 1) | SPV_DESC_DYN, .d = d,
			     .s = {a, payload, hi}};
		emit(c, &in);
		c->has_dyn = 1;
	} else {
		send(c, smsg, aop, d, a, payload, o_null());
	}
}

/* One dword of global or local memory at byte offset `off` from p's root. */
static opnd_t mem_dword(spv_ctx_t *c, const val_t *p, opnd_t off)
{
	const opnd_t d = vnew(c);
	mem_send(c, p, ZE_MSG_LOAD, ZE_MSG_SLM_LOAD, 0, d, off, o_null());
	return d;
}

static void store_dword(spv_ctx_t *c, const val_t *p, opnd_t off, opnd_t v)
{
	mem_send(c, p, ZE_MSG_STORE, ZE_MSG_SLM_STORE, 0, o_null(), off, in_grf(c, v));
}

/* dword = (dword & keep) | bits, as two atomics: work items storing other
 * bytes of the same dword at the same time keep theirs. */
static void merge_dword(spv_ctx_t *c, const val_t *p, opnd_t off, opnd_t keep, opnd_t bits)
{
	mem_send(c, p, ZE_MSG_ATOMIC, ZE_MSG_SLM_ATOMIC, ZE_ATOMIC_AND, o_null(), off, in_grf(c, keep));
	mem_send(c, p, ZE_MSG_ATOMIC, ZE_MSG_SLM_ATOMIC, ZE_ATOMIC_OR, o_null(), off, in_grf(c, bits));
}

/* A value of `type` from where p points; `align`: what the address is known to
 * be a multiple of (0: the type's alignment). */
static void load_val(spv_ctx_t *c, const val_t *p, uint32_t type, val_t *r, uint32_t align_in)
{
	if (p->root.k == R_BUILTIN) {
		if (p->leaf[0].k != O_I)
			spv_fail(c, c->cur_word, "dynamic offset into a built-in variable");
		load_builtin(c, p->root.id, p->leaf[0].v, type, r);
		return;
	}
	if (p->root.k == R_PRIVATE) {
		priv_load(c, p, type, r);
		return;
	}
	if (spv_data_fold_load(c, p, type, r))
		return; /* a __constant value known at compile time */
	check_mem_root(c, p);
	uint32_t offs[MAX_LEAVES + 1], n = 0;
	uint8_t wid[MAX_LEAVES + 1];
	leaf_layout(c, type, 0, offs, wid, &n);
	if (n != r->n)
		spv_fail(c, c->cur_word, "internal: load of %u parts into %u", n, r->n);
	const uint32_t align = align_in ? align_in : ty(c, type)->align;
	/* dwords already loaded (narrow leaves of an aligned value share them) */
	uint32_t dw_off[MAX_LEAVES + 1], ndw = 0;
	opnd_t dw_val[MAX_LEAVES + 1];
	for (uint32_t i = 0; i < n; i++) {
		if (wid[i] == 32 || align >= 4) {
			/* the dword holding the leaf is at a known offset */
			if (wid[i] == 32 && (offs[i] & 3))
				spv_fail(c, c->cur_word, "a 32-bit value at an offset that is not a multiple of 4 (packed "
					 "structures) is not supported");
			const uint32_t o = offs[i] & ~3u, sh = (offs[i] & 3) * 8;
			uint32_t k = 0;
			while (k < ndw && dw_off[k] != o)
				k++;
			if (k == ndw) {
				dw_off[ndw] = o;
				dw_val[ndw++] = mem_dword(c, p, add_u(c, p->leaf[0], o_imm(o)));
			}
			r->leaf[i] = trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, dw_val[k], o_imm(sh)), wid[i]);
		} else {
			/* anywhere in a dword */
			const opnd_t addr = add_u(c, p->leaf[0], o_imm(offs[i]));
			const opnd_t dw = mem_dword(c, p, alu3(c, ZE_OP_AND, ZE_TYPE_UD, addr, o_imm(~3u)));
			const opnd_t sh = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, addr, o_imm(3)), o_imm(3));
			r->leaf[i] = trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, dw, sh), wid[i]);
		}
	}
}

static void load(spv_ctx_t *c, uint32_t ptr, uint32_t type, val_t *r)
{
	load_val(c, use(c, ptr), type, r, 0);
}

static void store_val(spv_ctx_t *c, const val_t *p, const val_t *v, uint32_t align_in)
{
	const spv_type_t *pe = ty(c, ty(c, p->type)->elem);
	if ((pe->k == TY_FLOAT && pe->width == 64) || (pe->k == TY_VEC && ty(c, pe->elem)->k == TY_FLOAT &&
						      ty(c, pe->elem)->width == 64))
		spv_fail(c, c->cur_word, "a store of double values: the device has no fp64");
	if (p->root.k == R_PRIVATE) {
		priv_store(c, p, v);
		return;
	}
	check_mem_root(c, p);
	uint32_t offs[MAX_LEAVES + 1], n = 0;
	uint8_t wid[MAX_LEAVES + 1];
	leaf_layout(c, v->type, 0, offs, wid, &n);
	if (n != v->n)
		spv_fail(c, c->cur_word, "internal: store of %u parts from %u", n, v->n);
	const uint32_t align = align_in ? align_in : ty(c, v->type)->align;
	uint8_t done[MAX_LEAVES + 1] = {0};
	for (uint32_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		if (wid[i] == 32) {
			if (offs[i] & 3)
				spv_fail(c, c->cur_word, "a 32-bit value at an offset that is not a multiple of 4 (packed "
					 "structures) is not supported");
			store_dword(c, p, add_u(c, p->leaf[0], o_imm(offs[i])), v->leaf[i]);
		} else if (align >= 4) {
			/* every narrow leaf in this dword: a whole dword is stored, a
			 * part is merged with atomics (other work items may store the
			 * other bytes at the same time) */
			const uint32_t o = offs[i] & ~3u;
			uint32_t bits = 0;
			opnd_t val = o_imm(0);
			for (uint32_t k = i; k < n; k++) {
				if (done[k] || wid[k] == 32 || (offs[k] & ~3u) != o)
					continue;
				const uint32_t sh = (offs[k] & 3) * 8;
				bits |= wmask(wid[k]) << sh;
				val = alu3(c, ZE_OP_OR, ZE_TYPE_UD, val, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, v->leaf[k], o_imm(sh)));
				done[k] = 1;
			}
			const opnd_t addr = add_u(c, p->leaf[0], o_imm(o));
			if (bits == 0xffffffffu) {
				store_dword(c, p, addr, val);
			} else {
				merge_dword(c, p, addr, o_imm(~bits), val);
			}
		} else {
			const opnd_t addr = add_u(c, p->leaf[0], o_imm(offs[i]));
			const opnd_t sh = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, addr, o_imm(3)), o_imm(3));
			const opnd_t keep = alu2(c, ZE_OP_NOT, ZE_TYPE_UD, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, mov_to_vreg(c, ZE_TYPE_UD, o_imm(wmask(wid[i]))), sh));
			merge_dword(c, p, alu3(c, ZE_OP_AND, ZE_TYPE_UD, addr, o_imm(~3u)), keep,
				    alu3(c, ZE_OP_SHL, ZE_TYPE_UD, v->leaf[i], sh));
		}
	}
}

static void store(spv_ctx_t *c, uint32_t ptr, const val_t *v)
{
	if (ty(c, v->type)->k == TY_PTR) {
		opnd_t leaf[3];
		ptr_abs(c, v, leaf);
		val_t a = *v;
		a.leaf = leaf;
		a.root = (root_t){R_DYN, 0, 0, 0};
		store_val(c, use(c, ptr), &a, 0);
		return;
	}
	store_val(c, use(c, ptr), v, 0);
}

/* OpenCL.std vloadn / vstoren: n elements at p + offset * n, aligned only to
 * the element. */
static void vload_vstore(spv_ctx_t *c, const spv_inst_t *in, int is_store)
{
	const uint32_t at = is_store ? 6 : 5; /* vstoren: data, offset, p; vloadn: offset, p, n */
	if (in->nwords < at + 2)
		spv_fail(c, in->off, "%s without operands", is_store ? "vstoren" : "vloadn");
	const val_t *off = use(c, in->w[at]), *p = use(c, in->w[at + 1]);
	const val_t *data = is_store ? use(c, in->w[5]) : NULL;
	const uint32_t vtype = is_store ? data->type : in->type;
	const spv_type_t *pt = ty(c, p->type), *vt = ty(c, vtype);
	if (pt->k != TY_PTR || vt->k != TY_VEC || vt->elem != pt->elem)
		spv_fail(c, in->off, "%s on operands of the wrong type", is_store ? "vstoren" : "vloadn");
	const spv_type_t *et = ty(c, pt->elem);
	val_t q = *p;
	q.leaf = spv_alloc(c, 2 * sizeof(opnd_t));
	q.leaf[0] = add_u(c, p->leaf[0], mul_const(c, off->leaf[0], vt->count * et->size));
	if (is_store) {
		store_val(c, &q, data, et->align);
		return;
	}
	val_t *r = def_val(c, in->result, in->type);
	load_val(c, &q, in->type, r, et->align);
}

/* `width` bits (8 or 32) at byte offset off from p's root: dwords must be
 * 4-byte aligned. */
static opnd_t get_bits(spv_ctx_t *c, const val_t *p, opnd_t off, uint32_t width)
{
	opnd_t dw;
	if (p->root.k == R_PRIVATE) {
		uint32_t ndw;
		const uint32_t first = priv_var(c, p, &ndw);
		dw = priv_dword(c, first, ndw, off);
	} else {
		check_mem_root(c, p);
		dw = mem_dword(c, p, width == 32 ? off : alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(~3u)));
	}
	if (width == 32)
		return dw;
	const opnd_t sh = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(3)), o_imm(3));
	return trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, dw, sh), width);
}

static void put_bits(spv_ctx_t *c, const val_t *p, opnd_t off, opnd_t v, uint32_t width)
{
	if (p->root.k == R_PRIVATE) {
		uint32_t ndw;
		const uint32_t first = priv_var(c, p, &ndw);
		priv_put(c, first, ndw, off, v, width);
		return;
	}
	check_mem_root(c, p);
	if (width == 32) {
		store_dword(c, p, off, v);
		return;
	}
	const opnd_t sh = alu3(c, ZE_OP_SHL, ZE_TYPE_UD, alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(3)), o_imm(3));
	const opnd_t keep = alu2(c, ZE_OP_NOT, ZE_TYPE_UD, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, mov_to_vreg(c, ZE_TYPE_UD, o_imm(wmask(width))), sh));
	merge_dword(c, p, alu3(c, ZE_OP_AND, ZE_TYPE_UD, off, o_imm(~3u)), keep, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, v, sh));
}

/* OpCopyMemorySized (memcpy) of a size known at compile time: dwords when the
 * size and the Aligned operand allow, else bytes. */
static void copy_sized(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *dst = use(c, in->w[1]), *src = use(c, in->w[2]);
	const val_t *sz = use(c, in->w[3]);
	if (sz->leaf[0].k != O_I || (sz->n > 1 && (sz->leaf[1].k != O_I || sz->leaf[1].v != 0)))
		spv_fail(c, in->off, "OpCopyMemorySized of a size not known at compile time is not supported");
	const uint32_t size = sz->leaf[0].v;
	if (size > 4 * MAX_LEAVES)
		spv_fail(c, in->off, "OpCopyMemorySized of %u bytes (at most %u)", size, 4 * MAX_LEAVES);
	uint32_t align = 1;
	if (in->nwords > 5 && (in->w[4] & SpvMemoryAccessAlignedMask))
		align = in->w[5];
	const uint32_t step = (align % 4 == 0 && size % 4 == 0) ? 4 : 1;
	opnd_t vals[4 * MAX_LEAVES];
	/* all reads first: the regions may not overlap, but reading first is
	 * what a memcpy of a value does in any case */
	for (uint32_t o = 0; o < size; o += step)
		vals[o / step] = get_bits(c, src, add_u(c, src->leaf[0], o_imm(o)), step * 8);
	for (uint32_t o = 0; o < size; o += step)
		put_bits(c, dst, add_u(c, dst->leaf[0], o_imm(o)), vals[o / step], step * 8);
}

static uint32_t const_sem(spv_ctx_t *c, uint32_t id)
{
	return const_u32(c, id, c->cur_word);
}

/* Memory semantics that order more than shared local memory: the fence and
 * barrier made for them are marked (global loads stay on their side). */
static int global_semantics(uint32_t semantics)
{
	return (semantics & (SpvMemorySemanticsUniformMemoryMask | SpvMemorySemanticsSubgroupMemoryMask |
			     SpvMemorySemanticsCrossWorkgroupMemoryMask | SpvMemorySemanticsAtomicCounterMemoryMask |
			     SpvMemorySemanticsImageMemoryMask)) != 0;
}

static void fence_if_memory(spv_ctx_t *c, uint32_t semantics)
{
	const uint32_t memory = SpvMemorySemanticsUniformMemoryMask | SpvMemorySemanticsSubgroupMemoryMask |
				SpvMemorySemanticsWorkgroupMemoryMask | SpvMemorySemanticsCrossWorkgroupMemoryMask |
				SpvMemorySemanticsAtomicCounterMemoryMask | SpvMemorySemanticsImageMemoryMask;
	if (semantics & memory) {
		send(c, ZE_MSG_FENCE, 0, o_null(), o_null(), o_null(), o_null());
		c->cur->code[c->cur->ncode - 1].gmem = (uint8_t)global_semantics(semantics);
	}
}

static void atomic(spv_ctx_t *c, const spv_inst_t *in)
{
	/* OpAtomicStore has no result: its pointer comes first. */
	const uint32_t ptr = in->opcode == SpvOpAtomicStore ? in->w[1] : in->w[3];
	const val_t *p = use(c, ptr);
	check_mem_root(c, p);
	const uint32_t ptype = p->type;
	const uint32_t elem = ty(c, ptype)->elem;
	const spv_type_t *et = ty(c, elem);
	if (et->k != TY_INT || et->width != 32)
		spv_fail(c, in->off, "%s on %s %u-bit values is not supported (32-bit integers only)",
			 spv_op_name(in->opcode), et->k == TY_FLOAT ? "floating-point" : "integer", et->width);
	const opnd_t a = p->leaf[0];
	uint32_t op;
	uint32_t value_at = 6;
	switch (in->opcode) {
	case SpvOpAtomicLoad: {
		val_t *r = def_val(c, in->result, in->type);
		const opnd_t d = vnew(c);
		mem_send(c, p, ZE_MSG_LOAD, ZE_MSG_SLM_LOAD, 0, d, a, o_null());
		r->leaf[0] = d;
		return;
	}
	case SpvOpAtomicStore: {
		const val_t *v = use(c, in->w[4]);
		mem_send(c, p, ZE_MSG_ATOMIC, ZE_MSG_SLM_ATOMIC, ZE_ATOMIC_XCHG, o_null(), a, in_grf(c, v->leaf[0]));
		return;
	}
	case SpvOpAtomicCompareExchange:
	case SpvOpAtomicCompareExchangeWeak: {
		/* Payload element 0: the comparator, element 1: the new value. */
		const val_t *v = use(c, in->w[7]), *cmp = use(c, in->w[8]);
		const uint32_t pv = spv_new_vreg(c, 2);
		opnd_t p0 = o_v(pv), p1 = o_v(pv);
		p1.sub = 1;
		inst_t m0 = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = p0, .s = {cmp->leaf[0]}};
		inst_t m1 = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = p1, .s = {v->leaf[0]}};
		emit(c, &m0);
		emit(c, &m1);
		val_t *r = def_val(c, in->result, in->type);
		r->leaf[0] = vnew(c);
		mem_send(c, p, ZE_MSG_ATOMIC, ZE_MSG_SLM_ATOMIC, ZE_ATOMIC_CMPXCHG, r->leaf[0], a, p0);
		return;
	}
	case SpvOpAtomicIIncrement: op = ZE_ATOMIC_INC; value_at = 0; break;
	case SpvOpAtomicIDecrement: op = ZE_ATOMIC_DEC; value_at = 0; break;
	case SpvOpAtomicIAdd: op = ZE_ATOMIC_ADD; break;
	case SpvOpAtomicISub: op = ZE_ATOMIC_SUB; break;
	case SpvOpAtomicSMin: op = ZE_ATOMIC_MIN; break;
	case SpvOpAtomicSMax: op = ZE_ATOMIC_MAX; break;
	case SpvOpAtomicUMin: op = ZE_ATOMIC_UMIN; break;
	case SpvOpAtomicUMax: op = ZE_ATOMIC_UMAX; break;
	case SpvOpAtomicAnd: op = ZE_ATOMIC_AND; break;
	case SpvOpAtomicOr: op = ZE_ATOMIC_OR; break;
	case SpvOpAtomicXor: op = ZE_ATOMIC_XOR; break;
	case SpvOpAtomicExchange: op = ZE_ATOMIC_XCHG; break;
	default:
		spv_fail(c, in->off, "%s is not supported", spv_op_name(in->opcode));
	}
	val_t *r = def_val(c, in->result, in->type);
	r->leaf[0] = vnew(c);
	const opnd_t payload = value_at ? in_grf(c, use(c, in->w[value_at])->leaf[0]) : o_null();
	mem_send(c, p, ZE_MSG_ATOMIC, ZE_MSG_SLM_ATOMIC, op, r->leaf[0], a, payload);
}

/* ---- arithmetic ------------------------------------------------------------------------- */

static _Noreturn void unsupported(spv_ctx_t *c, const spv_inst_t *in, const char *what)
{
	spv_fail(c, in->off, "%s%s%s is not supported yet", spv_op_name(in->opcode), what ? " " : "", what ? what : "");
}

/* One component of an integer operation; a, b point at the component's leaves. */
static void int_op(spv_ctx_t *c, const spv_inst_t *in, uint32_t width, const opnd_t *a, const opnd_t *b, opnd_t *r)
{
	const uint8_t U = ZE_TYPE_UD;
	const uint32_t op = in->opcode;
	if (op == SpvOpBitCount) { /* popcount of each 32-bit part (spv_math.c) */
		opnd_t lo, hi = o_imm(0);
		const opnd_t x0[3] = {a[0], o_null(), o_null()};
		if (!spv_math_ocl(c, OpenCLstd_Popcount, x0, 0, &lo))
			unsupported(c, in, NULL);
		if (width == 64) {
			const opnd_t x1[3] = {a[1], o_null(), o_null()};
			spv_math_ocl(c, OpenCLstd_Popcount, x1, 0, &hi);
			lo = add_u(c, lo, hi);
			r[1] = o_imm(0);
		}
		r[0] = lo;
		return;
	}
	if (width < 32) {
		switch (op) {
		case SpvOpBitwiseAnd:
		case SpvOpBitwiseOr:
		case SpvOpBitwiseXor:
		case SpvOpShiftRightLogical:
		case SpvOpUDiv:
		case SpvOpUMod:
			break; /* zero-extended in, zero-extended out */
		case SpvOpShiftRightArithmetic:
			r[0] = trunc_w(c, alu3(c, ZE_OP_ASR, U, sext_w(c, a[0], width), b[0]), width);
			return;
		case SpvOpSDiv:
		case SpvOpSRem:
		case SpvOpSMod:
			r[0] = trunc_w(c, sdivrem(c, op, sext_w(c, a[0], width), sext_w(c, b[0], width)), width);
			return;
		default:
			int_op(c, in, 32, a, b, r);
			r[0] = trunc_w(c, r[0], width);
			return;
		}
	}
	if (width == 64) {
		switch (op) {
		case SpvOpIAdd: add64(c, a, b, r); return;
		case SpvOpISub: sub64(c, a, b, r); return;
		case SpvOpIMul: mul64(c, a, b, r); return;
		case SpvOpSNegate: {
			const opnd_t zero[2] = {o_imm(0), o_imm(0)};
			sub64(c, zero, a, r);
			return;
		}
		case SpvOpNot:
			r[0] = alu2(c, ZE_OP_NOT, U, a[0]);
			r[1] = alu2(c, ZE_OP_NOT, U, a[1]);
			return;
		case SpvOpBitwiseAnd:
		case SpvOpBitwiseOr:
		case SpvOpBitwiseXor: {
			const uint8_t o = op == SpvOpBitwiseAnd ? ZE_OP_AND : op == SpvOpBitwiseOr ? ZE_OP_OR : ZE_OP_XOR;
			r[0] = alu3(c, o, U, a[0], b[0]);
			r[1] = alu3(c, o, U, a[1], b[1]);
			return;
		}
		case SpvOpShiftLeftLogical:
		case SpvOpShiftRightLogical:
		case SpvOpShiftRightArithmetic:
			shift64(c, op, a, b[0], r);
			return;
		case SpvOpUDiv:
		case SpvOpUMod:
		case SpvOpSDiv:
		case SpvOpSRem:
		case SpvOpSMod:
			divrem64(c, op, a, b, r);
			return;
		default:
			unsupported(c, in, "on 64-bit integers");
		}
	}
	switch (op) {
	case SpvOpIAdd: r[0] = add_u(c, a[0], b[0]); return;
	case SpvOpISub: r[0] = sub_u(c, a[0], b[0]); return;
	case SpvOpIMul: r[0] = alu3(c, ZE_OP_MUL, U, a[0], b[0]); return;
	case SpvOpUDiv: udivrem(c, a[0], b[0], &r[0], NULL); return;
	case SpvOpUMod: udivrem(c, a[0], b[0], NULL, &r[0]); return;
	case SpvOpSDiv:
	case SpvOpSRem:
	case SpvOpSMod: r[0] = sdivrem(c, op, a[0], b[0]); return;
	case SpvOpSNegate: r[0] = sub_u(c, o_imm(0), a[0]); return;
	case SpvOpNot: r[0] = alu2(c, ZE_OP_NOT, U, a[0]); return;
	case SpvOpBitwiseAnd: r[0] = alu3(c, ZE_OP_AND, U, a[0], b[0]); return;
	case SpvOpBitwiseOr: r[0] = alu3(c, ZE_OP_OR, U, a[0], b[0]); return;
	case SpvOpBitwiseXor: r[0] = alu3(c, ZE_OP_XOR, U, a[0], b[0]); return;
	case SpvOpShiftLeftLogical: r[0] = alu3(c, ZE_OP_SHL, U, a[0], b[0]); return;
	case SpvOpShiftRightLogical: r[0] = alu3(c, ZE_OP_SHR, U, a[0], b[0]); return;
	case SpvOpShiftRightArithmetic: r[0] = alu3(c, ZE_OP_ASR, U, a[0], b[0]); return;
	default: unsupported(c, in, NULL);
	}
}

static void float_op(spv_ctx_t *c, const spv_inst_t *in, const opnd_t *a, const opnd_t *b, opnd_t *r)
{
	const uint8_t F = ZE_TYPE_F;
	switch (in->opcode) {
	case SpvOpFAdd: r[0] = alu3(c, ZE_OP_ADD, F, a[0], b[0]); return;
	case SpvOpFSub: r[0] = alu3(c, ZE_OP_ADD, F, a[0], neg(b[0])); return;
	case SpvOpFMul: r[0] = alu3(c, ZE_OP_MUL, F, a[0], b[0]); return;
	case SpvOpFDiv:
		/* x * (1/y): within OpenCL's 2.5 ulp for single-precision divide. */
		r[0] = alu3(c, ZE_OP_MUL, F, a[0], alu2(c, ZE_OP_INV, F, b[0]));
		return;
	case SpvOpFNegate: r[0] = alu2(c, ZE_OP_MOV, F, neg(a[0])); return;
	default: unsupported(c, in, NULL);
	}
}

/* Comparisons: a boolean leaf per component. */
static opnd_t compare(spv_ctx_t *c, const spv_inst_t *in, uint32_t width, const opnd_t *a, const opnd_t *b)
{
	const uint8_t U = ZE_TYPE_UD, D = ZE_TYPE_D, F = ZE_TYPE_F;
	const uint32_t op = in->opcode;
	opnd_t na[1], nb[1];
	if (width < 32 && (op == SpvOpSGreaterThan || op == SpvOpSGreaterThanEqual || op == SpvOpSLessThan ||
			   op == SpvOpSLessThanEqual)) {
		na[0] = sext_w(c, a[0], width);
		nb[0] = sext_w(c, b[0], width);
		a = na;
		b = nb;
	}
	if (width == 64) {
		switch (op) {
		case SpvOpIEqual: return eq64(c, a, b);
		case SpvOpINotEqual: return alu2(c, ZE_OP_NOT, U, eq64(c, a, b));
		case SpvOpULessThan: return less64(c, a, b, 0, 0);
		case SpvOpULessThanEqual: return less64(c, a, b, 0, 1);
		case SpvOpUGreaterThan: return less64(c, b, a, 0, 0);
		case SpvOpUGreaterThanEqual: return less64(c, b, a, 0, 1);
		case SpvOpSLessThan: return less64(c, a, b, 1, 0);
		case SpvOpSLessThanEqual: return less64(c, a, b, 1, 1);
		case SpvOpSGreaterThan: return less64(c, b, a, 1, 0);
		case SpvOpSGreaterThanEqual: return less64(c, b, a, 1, 1);
		default: unsupported(c, in, "on 64-bit values");
		}
	}
	switch (op) {
	case SpvOpIEqual: return cmp_bool(c, ZE_CMOD_EQ, U, a[0], b[0]);
	case SpvOpINotEqual: return cmp_bool(c, ZE_CMOD_NE, U, a[0], b[0]);
	case SpvOpULessThan: return cmp_bool(c, ZE_CMOD_LT, U, a[0], b[0]);
	case SpvOpULessThanEqual: return cmp_bool(c, ZE_CMOD_LE, U, a[0], b[0]);
	case SpvOpUGreaterThan: return cmp_bool(c, ZE_CMOD_GT, U, a[0], b[0]);
	case SpvOpUGreaterThanEqual: return cmp_bool(c, ZE_CMOD_GE, U, a[0], b[0]);
	case SpvOpSLessThan: return cmp_bool(c, ZE_CMOD_LT, D, a[0], b[0]);
	case SpvOpSLessThanEqual: return cmp_bool(c, ZE_CMOD_LE, D, a[0], b[0]);
	case SpvOpSGreaterThan: return cmp_bool(c, ZE_CMOD_GT, D, a[0], b[0]);
	case SpvOpSGreaterThanEqual: return cmp_bool(c, ZE_CMOD_GE, D, a[0], b[0]);
	/* ZE-ISA float compares are false on NaN except ne, which is true: the
	 * ordered relations directly, the unordered ones as negations. */
	case SpvOpFOrdEqual: return cmp_bool(c, ZE_CMOD_EQ, F, a[0], b[0]);
	case SpvOpFOrdLessThan: return cmp_bool(c, ZE_CMOD_LT, F, a[0], b[0]);
	case SpvOpFOrdLessThanEqual: return cmp_bool(c, ZE_CMOD_LE, F, a[0], b[0]);
	case SpvOpFOrdGreaterThan: return cmp_bool(c, ZE_CMOD_GT, F, a[0], b[0]);
	case SpvOpFOrdGreaterThanEqual: return cmp_bool(c, ZE_CMOD_GE, F, a[0], b[0]);
	case SpvOpFOrdNotEqual:
	case SpvOpLessOrGreater:
		return alu3(c, ZE_OP_OR, U, cmp_bool(c, ZE_CMOD_LT, F, a[0], b[0]), cmp_bool(c, ZE_CMOD_GT, F, a[0], b[0]));
	case SpvOpFUnordNotEqual: return cmp_bool(c, ZE_CMOD_NE, F, a[0], b[0]);
	case SpvOpFUnordEqual:
		return alu2(c, ZE_OP_NOT, U,
			    alu3(c, ZE_OP_OR, U, cmp_bool(c, ZE_CMOD_LT, F, a[0], b[0]),
				 cmp_bool(c, ZE_CMOD_GT, F, a[0], b[0])));
	case SpvOpFUnordLessThan: return alu2(c, ZE_OP_NOT, U, cmp_bool(c, ZE_CMOD_GE, F, a[0], b[0]));
	case SpvOpFUnordLessThanEqual: return alu2(c, ZE_OP_NOT, U, cmp_bool(c, ZE_CMOD_GT, F, a[0], b[0]));
	case SpvOpFUnordGreaterThan: return alu2(c, ZE_OP_NOT, U, cmp_bool(c, ZE_CMOD_LE, F, a[0], b[0]));
	case SpvOpFUnordGreaterThanEqual: return alu2(c, ZE_OP_NOT, U, cmp_bool(c, ZE_CMOD_LT, F, a[0], b[0]));
	case SpvOpOrdered:
		return alu3(c, ZE_OP_AND, U, cmp_bool(c, ZE_CMOD_EQ, F, a[0], a[0]), cmp_bool(c, ZE_CMOD_EQ, F, b[0], b[0]));
	case SpvOpUnordered:
		return alu3(c, ZE_OP_OR, U, cmp_bool(c, ZE_CMOD_NE, F, a[0], a[0]), cmp_bool(c, ZE_CMOD_NE, F, b[0], b[0]));
	case SpvOpLogicalEqual: return alu2(c, ZE_OP_NOT, U, alu3(c, ZE_OP_XOR, U, a[0], b[0]));
	case SpvOpLogicalNotEqual: return alu3(c, ZE_OP_XOR, U, a[0], b[0]);
	case SpvOpLogicalOr: return alu3(c, ZE_OP_OR, U, a[0], b[0]);
	case SpvOpLogicalAnd: return alu3(c, ZE_OP_AND, U, a[0], b[0]);
	case SpvOpLogicalNot: return alu2(c, ZE_OP_NOT, U, a[0]);
	case SpvOpIsNan: return cmp_bool(c, ZE_CMOD_NE, F, a[0], a[0]);
	case SpvOpIsInf: {
		opnd_t x = a[0];
		x.abs = 1;
		return cmp_bool(c, ZE_CMOD_EQ, F, x, o_imm(0x7f800000u));
	}
	case SpvOpIsFinite: {
		opnd_t x = a[0];
		x.abs = 1;
		return cmp_bool(c, ZE_CMOD_LT, F, x, o_imm(0x7f800000u));
	}
	case SpvOpIsNormal: {
		opnd_t x = a[0];
		x.abs = 1;
		const opnd_t lo = cmp_bool(c, ZE_CMOD_GE, F, x, o_imm(0x00800000u));
		return alu3(c, ZE_OP_AND, U, lo, cmp_bool(c, ZE_CMOD_LT, F, x, o_imm(0x7f800000u)));
	}
	case SpvOpSignBitSet: return alu3(c, ZE_OP_ASR, U, a[0], o_imm(31));
	default: unsupported(c, in, NULL);
	}
}

/* Element-wise operations over scalars and vectors. */
static void elementwise(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint32_t op = in->opcode;
	const val_t *a = use(c, in->w[3]);
	const val_t *b = in->nwords > 4 ? use(c, in->w[4]) : NULL;
	val_t *r = def_val(c, in->result, in->type);
	const comp_t ca = comps(c, a->type);
	const comp_t cr = comps(c, in->type);
	const comp_t cb = b ? comps(c, b->type) : ca;
	need(c, ca.n == cr.n && cb.n == cr.n && a->n == ca.n * ca.per && (!b || b->n == cb.n * cb.per) &&
		     (ca.et->k == TY_INT || ca.et->k == TY_FLOAT || ca.et->k == TY_BOOL) && ca.per == cb.per &&
		     (ca.per == cr.per || cr.et->k == TY_BOOL),
	     "on operands of the wrong type");
	const int is_compare = (op >= SpvOpIsNan && op <= SpvOpLogicalNot) ||
			       (op >= SpvOpIEqual && op <= SpvOpFUnordGreaterThanEqual);
	for (uint32_t i = 0; i < cr.n; i++) {
		const opnd_t *la = &a->leaf[i * ca.per];
		const opnd_t *lb = b ? &b->leaf[(cb.n == 1 ? 0 : i) * cb.per] : NULL;
		opnd_t *lr = &r->leaf[i * cr.per];
		if (is_compare)
			lr[0] = compare(c, in, ca.et->k == TY_INT ? ca.et->width : 32, la, lb);
		else if (cr.et->k == TY_FLOAT)
			float_op(c, in, la, lb, lr);
		else
			int_op(c, in, cr.et->width, la, lb, lr);
	}
}

/* ---- conversions ----------------------------------------------------------------------- */

static void convert(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint8_t U = ZE_TYPE_UD, D = ZE_TYPE_D, F = ZE_TYPE_F;
	const val_t *a = use(c, in->w[3]);
	val_t *r = def_val(c, in->result, in->type);
	const comp_t ca = comps(c, a->type), cr = comps(c, in->type);
	need(c, ca.n == cr.n && a->n == ca.n * ca.per && (ca.et->k == TY_INT || ca.et->k == TY_FLOAT) &&
		     (cr.et->k == TY_INT || cr.et->k == TY_FLOAT),
	     "on operands of the wrong type");
	for (uint32_t i = 0; i < cr.n; i++) {
		const opnd_t *la = &a->leaf[i * ca.per];
		opnd_t *lr = &r->leaf[i * cr.per];
		const uint32_t wa = ca.et->width, wr = cr.et->width;
		switch (in->opcode) {
		case SpvOpUConvert:
		case SpvOpSConvert: {
			/* narrow or widen the low leaf, then the high one */
			opnd_t lo = la[0];
			if (wr < wa)
				lo = trunc_w(c, lo, wr);
			else if (in->opcode == SpvOpSConvert && wa < 32)
				lo = trunc_w(c, sext_w(c, lo, wa), wr);
			lr[0] = lo;
			if (wr == 64)
				lr[1] = wa == 64 ? la[1]
					: in->opcode == SpvOpSConvert ? alu3(c, ZE_OP_ASR, U, lo, o_imm(31))
								       : o_imm(0);
			break;
		}
		case SpvOpConvertSToF:
		case SpvOpConvertUToF:
			if (wa == 64) {
				/* hi * 2^32 + lo in one fused rounding: correctly rounded below
				 * 2^32 in magnitude (hi = 0), beyond possibly an ulp off (README).
				 * Signed values convert their magnitude, then take the sign. */
				const int sgn = in->opcode == SpvOpConvertSToF;
				opnd_t v[2] = {la[0], la[1]}, s = o_imm(0);
				if (sgn) {
					s = alu3(c, ZE_OP_ASR, U, la[1], o_imm(31));
					const opnd_t x[2] = {alu3(c, ZE_OP_XOR, U, la[0], s), alu3(c, ZE_OP_XOR, U, la[1], s)};
					const opnd_t ss[2] = {s, s};
					sub64(c, x, ss, v);
				}
				const opnd_t hf = alu(c, ZE_OP_MOV, F, U, v[1], o_null(), o_null());
				const opnd_t lf = alu(c, ZE_OP_MOV, F, U, v[0], o_null(), o_null());
				lr[0] = alu(c, ZE_OP_MAD, F, F, hf, o_imm(0x4f800000u), lf);
				if (sgn)
					lr[0] = alu3(c, ZE_OP_XOR, U, lr[0], alu3(c, ZE_OP_AND, U, s, o_imm(0x80000000u)));
			} else {
				const int sgn = in->opcode == SpvOpConvertSToF;
				lr[0] = alu(c, ZE_OP_MOV, F, sgn ? D : U, sgn ? sext_w(c, la[0], wa) : la[0], o_null(), o_null());
			}
			break;
		case SpvOpConvertFToS:
		case SpvOpConvertFToU: {
			const uint8_t t = in->opcode == SpvOpConvertFToS ? D : U;
			if (wr == 64) {
				/* trunc(x / 2^32) is the high word, the exact remainder
				 * the low one (for |x| < 2^63). */
				opnd_t x = la[0];
				const opnd_t sgn = in->opcode == SpvOpConvertFToS ? alu3(c, ZE_OP_ASR, U, x, o_imm(31)) : o_imm(0);
				x.abs = in->opcode == SpvOpConvertFToS;
				const opnd_t ax = alu2(c, ZE_OP_MOV, F, x);
				const opnd_t h = alu(c, ZE_OP_MOV, U, F, alu3(c, ZE_OP_MUL, F, ax, o_imm(0x2f800000u)), o_null(),
						     o_null());
				const opnd_t hf = alu(c, ZE_OP_MOV, F, U, h, o_null(), o_null());
				const opnd_t rem = alu(c, ZE_OP_MAD, F, F, neg(hf), o_imm(0x4f800000u), ax);
				const opnd_t l = alu(c, ZE_OP_MOV, U, F, rem, o_null(), o_null());
				if (in->opcode == SpvOpConvertFToS) {
					const opnd_t v[2] = {alu3(c, ZE_OP_XOR, U, l, sgn), alu3(c, ZE_OP_XOR, U, h, sgn)};
					const opnd_t s[2] = {sgn, sgn};
					sub64(c, v, s, lr);
				} else {
					lr[0] = l;
					lr[1] = h;
				}
			} else {
				/* (out-of-range values are undefined in OpenCL C) */
				lr[0] = trunc_w(c, alu(c, ZE_OP_MOV, t, F, la[0], o_null(), o_null()), wr);
			}
			break;
		}
		default:
			unsupported(c, in, NULL);
		}
	}
}

static void bitcast(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *a = use(c, in->w[3]);
	const spv_type_t *rt = ty(c, in->type), *at = ty(c, a->type);
	if ((rt->k == TY_PTR) != (at->k == TY_PTR))
		spv_fail(c, in->off, "OpBitcast between pointers and integers is not supported yet");
	val_t *r = def_val(c, in->result, in->type);
	if (rt->k == TY_PTR) {
		memcpy(r->leaf, a->leaf, a->n * sizeof(opnd_t));
		if (r->root.k == R_DYN && a->root.k != R_DYN)
			ptr_abs(c, a, r->leaf); /* promoted (promote_dyn) */
		else
			r->root = a->root;
		return;
	}
	/* A leaf carrying a modifier (an integer negate folded into its use) means
	 * that modifier in the source type: apply it before the bits change type. */
	const comp_t ca = comps(c, a->type);
	opnd_t src[MAX_LEAVES + 1];
	for (uint32_t i = 0; i < a->n && i <= MAX_LEAVES; i++) {
		src[i] = a->leaf[i];
		if (src[i].k != O_I && (src[i].neg || src[i].abs)) {
			const uint8_t t = ca.et->k == TY_FLOAT ? ZE_TYPE_F : ZE_TYPE_D;
			src[i] = trunc_w(c, alu2(c, ZE_OP_MOV, t, src[i]), ca.et->k == TY_INT ? ca.et->width : 32);
		} else {
			src[i] = fold_imm_mods(src[i], ca.et->k == TY_FLOAT ? ZE_TYPE_F : ZE_TYPE_D);
		}
	}
	/* The bits of the leaves in order, regrouped: narrow leaves are packed
	 * into or extracted from 32-bit ones (as_uint(uchar4), as_char4(int)). */
	uint8_t wa[MAX_LEAVES + 1], wr[MAX_LEAVES + 1];
	uint32_t oa[MAX_LEAVES + 1], orr[MAX_LEAVES + 1], na = 0, nr = 0;
	leaf_layout(c, a->type, 0, oa, wa, &na);
	leaf_layout(c, in->type, 0, orr, wr, &nr);
	uint32_t bits_a = 0, bits_r = 0;
	for (uint32_t i = 0; i < na; i++)
		bits_a += wa[i];
	for (uint32_t i = 0; i < nr; i++)
		bits_r += wr[i];
	if (bits_a != bits_r || na != a->n || nr != r->n || a->n > MAX_LEAVES)
		spv_fail(c, in->off, "OpBitcast between types of different sizes");
	uint32_t ia = 0, at_a = 0; /* leaf of a holding bit `pos`, its first bit */
	for (uint32_t j = 0, pos = 0; j < nr; pos += wr[j], j++) {
		while (at_a + wa[ia] <= pos)
			at_a += wa[ia++];
		if (wa[ia] == wr[j] && at_a == pos) {
			r->leaf[j] = src[ia];
		} else if (wa[ia] > wr[j]) { /* a piece of a wider leaf */
			r->leaf[j] = trunc_w(c, alu3(c, ZE_OP_SHR, ZE_TYPE_UD, src[ia], o_imm(pos - at_a)), wr[j]);
		} else { /* several narrower leaves */
			opnd_t v = o_imm(0);
			for (uint32_t k = ia, p = at_a; p < pos + wr[j]; p += wa[k], k++)
				v = alu3(c, ZE_OP_OR, ZE_TYPE_UD, v, alu3(c, ZE_OP_SHL, ZE_TYPE_UD, src[k], o_imm(p - pos)));
			r->leaf[j] = v;
		}
	}
}

/* ---- composites ------------------------------------------------------------------------ */

/* Leaf range of a member path inside a type. */
static uint32_t member_leaf(spv_ctx_t *c, uint32_t type, const uint32_t *idx, uint32_t n, uint32_t *out_type)
{
	uint32_t at = 0;
	for (uint32_t i = 0; i < n; i++) {
		const spv_type_t *t = ty(c, type);
		if (t->k == TY_STRUCT) {
			if (idx[i] >= t->nmemb)
				spv_fail(c, c->cur_word, "member index %u out of range", idx[i]);
			for (uint32_t m = 0; m < idx[i]; m++)
				at += ty(c, t->memb[m])->nleaf;
			type = t->memb[idx[i]];
		} else if (t->k == TY_VEC || t->k == TY_ARRAY) {
			if (idx[i] >= t->count)
				spv_fail(c, c->cur_word, "component index %u out of range", idx[i]);
			at += idx[i] * ty(c, t->elem)->nleaf;
			type = t->elem;
		} else {
			spv_fail(c, c->cur_word, "index into a non-composite");
		}
	}
	*out_type = type;
	return at;
}

static void composite(spv_ctx_t *c, const spv_inst_t *in)
{
	switch (in->opcode) {
	case SpvOpCompositeExtract: {
		const val_t *a = use(c, in->w[3]);
		uint32_t t;
		const uint32_t at = member_leaf(c, a->type, &in->w[4], in->nwords - 4u, &t);
		val_t *r = def_val(c, in->result, in->type);
		need(c, ty(c, t)->nleaf == r->n && at + r->n <= a->n, "of a member of another type");
		memcpy(r->leaf, &a->leaf[at], r->n * sizeof(opnd_t));
		r->root = a->root;
		if (ty(c, in->type)->k == TY_PTR)
			r->root = (root_t){R_DYN, 0, 0, 0}; /* composites hold addresses */
		return;
	}
	case SpvOpCompositeInsert: {
		const val_t *obj = use(c, in->w[3]), *a = use(c, in->w[4]);
		uint32_t t;
		const uint32_t at = member_leaf(c, a->type, &in->w[5], in->nwords - 5u, &t);
		val_t *r = def_val(c, in->result, in->type);
		need(c, a->n == r->n && obj->n == ty(c, t)->nleaf && at + obj->n <= r->n, "of a member of another type");
		memcpy(r->leaf, a->leaf, a->n * sizeof(opnd_t));
		memcpy(&r->leaf[at], obj->leaf, obj->n * sizeof(opnd_t));
		if (ty(c, obj->type)->k == TY_PTR)
			ptr_abs(c, obj, &r->leaf[at]);
		return;
	}
	case SpvOpCompositeConstruct: {
		val_t *r = def_val(c, in->result, in->type);
		uint32_t at = 0;
		for (uint32_t i = 3; i < in->nwords; i++) {
			const val_t *e = use(c, in->w[i]);
			if (at + e->n > r->n)
				spv_fail(c, in->off, "OpCompositeConstruct: constituents do not match the type");
			memcpy(&r->leaf[at], e->leaf, e->n * sizeof(opnd_t));
			if (ty(c, e->type)->k == TY_PTR)
				ptr_abs(c, e, &r->leaf[at]);
			at += e->n;
		}
		if (at != r->n)
			spv_fail(c, in->off, "OpCompositeConstruct: constituents do not match the type");
		return;
	}
	case SpvOpVectorShuffle: {
		const val_t *a = use(c, in->w[3]), *b = use(c, in->w[4]);
		const comp_t ca = comps(c, a->type), cb = comps(c, b->type);
		val_t *r = def_val(c, in->result, in->type);
		const uint32_t per = ca.per;
		need(c, ca.per == cb.per && a->n == ca.n * per && b->n == cb.n * per && r->n == (in->nwords - 5u) * per,
		     "on vectors of other types");
		for (uint32_t i = 5; i < in->nwords; i++) {
			const uint32_t s = in->w[i];
			for (uint32_t k = 0; k < per; k++) {
				opnd_t o = o_imm(0); /* 0xffffffff: undefined component */
				if (s < ca.n)
					o = a->leaf[s * per + k];
				else if (s != 0xffffffffu && s - ca.n < cb.n)
					o = b->leaf[(s - ca.n) * per + k];
				else if (s != 0xffffffffu)
					spv_fail(c, in->off, "OpVectorShuffle: component %u out of range", s);
				r->leaf[(i - 5) * per + k] = o;
			}
		}
		return;
	}
	case SpvOpVectorExtractDynamic:
	case SpvOpVectorInsertDynamic: {
		const int extract = in->opcode == SpvOpVectorExtractDynamic;
		const val_t *vec = use(c, in->w[3]);
		const val_t *comp = extract ? NULL : use(c, in->w[4]);
		const val_t *idx = use(c, in->w[extract ? 4 : 5]);
		const comp_t cv = comps(c, vec->type);
		val_t *r = def_val(c, in->result, in->type);
		need(c, vec->n == cv.n * cv.per && r->n == (extract ? cv.per : vec->n) && (extract || comp->n == cv.per),
		     "on operands of the wrong type");
		if (idx->leaf[0].k == O_I) {
			const uint32_t k = idx->leaf[0].v < cv.n ? idx->leaf[0].v : 0;
			if (extract) {
				memcpy(r->leaf, &vec->leaf[k * cv.per], cv.per * sizeof(opnd_t));
			} else {
				memcpy(r->leaf, vec->leaf, vec->n * sizeof(opnd_t));
				memcpy(&r->leaf[k * cv.per], comp->leaf, cv.per * sizeof(opnd_t));
			}
			return;
		}
		if (extract)
			memcpy(r->leaf, vec->leaf, cv.per * sizeof(opnd_t));
		else
			memcpy(r->leaf, vec->leaf, vec->n * sizeof(opnd_t));
		for (uint32_t k = extract ? 1 : 0; k < cv.n; k++) {
			cmp_flag(c, ZE_CMOD_EQ, ZE_TYPE_UD, idx->leaf[0], o_imm(k), 0);
			for (uint32_t j = 0; j < cv.per; j++) {
				if (extract)
					r->leaf[j] = sel(c, 0, 0, vec->leaf[k * cv.per + j], r->leaf[j]);
				else
					r->leaf[k * cv.per + j] = sel(c, 0, 0, comp->leaf[j], r->leaf[k * cv.per + j]);
			}
		}
		return;
	}
	default:
		unsupported(c, in, NULL);
	}
}

static void select_op(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *cond = use(c, in->w[3]), *a = use(c, in->w[4]), *b = use(c, in->w[5]);
	val_t *r = def_val(c, in->result, in->type);
	if (ty(c, in->type)->k == TY_PTR) {
		r->root = c->vals[in->result].root;
		if (r->root.k != R_GLOBAL && r->root.k != R_SLM && r->root.k != R_NULL && r->root.k != R_PRIVATE &&
		    r->root.k != R_DYN)
			spv_fail(c, in->off, "OpSelect of %s", root_problem(&r->root));
		if (r->root.k == R_DYN && (a->root.k != R_DYN || b->root.k != R_DYN)) {
			val_t *ab[2] = {spv_alloc(c, sizeof(val_t)), spv_alloc(c, sizeof(val_t))};
			const val_t *src[2] = {a, b};
			for (int k = 0; k < 2; k++) {
				*ab[k] = *src[k];
				ab[k]->leaf = spv_alloc(c, 3 * sizeof(opnd_t));
				ptr_abs(c, src[k], ab[k]->leaf);
				ab[k]->root = r->root;
			}
			a = ab[0];
			b = ab[1];
		}
	}
	const comp_t cr = comps(c, in->type);
	const int vec_cond = cond->n > 1;
	need(c, a->n == r->n && b->n == r->n && r->n == cr.n * cr.per && (!vec_cond || cond->n == cr.n),
	     "on operands of the wrong type");
	for (uint32_t i = 0; i < cr.n; i++) {
		if (i == 0 || vec_cond) {
			const opnd_t cl = cond->leaf[vec_cond ? i : 0];
			if (cl.k == O_I) {
				for (uint32_t j = vec_cond ? i : 0; j < (vec_cond ? i + 1 : cr.n); j++)
					for (uint32_t k = 0; k < cr.per; k++)
						r->leaf[j * cr.per + k] = cl.v ? a->leaf[j * cr.per + k] : b->leaf[j * cr.per + k];
				if (vec_cond)
					continue;
				return;
			}
			flag_of_bool(c, cl, 0);
		}
		for (uint32_t k = 0; k < cr.per; k++)
			r->leaf[i * cr.per + k] = sel(c, 0, 0, a->leaf[i * cr.per + k], b->leaf[i * cr.per + k]);
	}
}

/* ---- OpenCL.std ------------------------------------------------------------------------ */

static const char *ocl_name(uint32_t n)
{
	const spv_inst_info_t *x = spv_opencl_ext_info(n);
	return x ? x->name : "?";
}

/* OpenCL.std integer instructions on 8- and 16-bit components.  Those whose
 * result depends on the width are done here (returns 1); for the others the
 * 32-bit code is right once signed operands are sign-extended (*sext set)
 * and the result truncated. */
static int narrow_ocl(spv_ctx_t *c, uint32_t n, opnd_t *x, uint32_t w, opnd_t *o, int *sext)
{
	const uint8_t U = ZE_TYPE_UD, D = ZE_TYPE_D;
	const uint32_t smin = 0u - (1u << (w - 1)), smax = (1u << (w - 1)) - 1u;
	*sext = 0;
	switch (n) {
	case OpenCLstd_Select: /* vectors test c's sign bit: the narrow type's */
		if (x[2].k != O_NULL)
			x[2] = sext_w(c, x[2], w);
		return 0;
	case OpenCLstd_SAbs:
	case OpenCLstd_SAbs_diff:
	case OpenCLstd_SHadd:
	case OpenCLstd_SRhadd:
	case OpenCLstd_SClamp:
	case OpenCLstd_SMax:
	case OpenCLstd_SMin:
	case OpenCLstd_SMad24:
	case OpenCLstd_SMul24:
		*sext = 1;
		for (int i = 0; i < 3; i++)
			if (x[i].k != O_NULL)
				x[i] = sext_w(c, x[i], w);
		return 0;
	case OpenCLstd_SAdd_sat:
	case OpenCLstd_SSub_sat: {
		const opnd_t a = sext_w(c, x[0], w), b = sext_w(c, x[1], w);
		const opnd_t v = n == OpenCLstd_SAdd_sat ? add_u(c, a, b) : sub_u(c, a, b);
		*o = trunc_w(c, alu3(c, ZE_OP_MIN, D, alu3(c, ZE_OP_MAX, D, v, o_imm(smin)), o_imm(smax)), w);
		return 1;
	}
	case OpenCLstd_UAdd_sat:
		*o = alu3(c, ZE_OP_MIN, U, add_u(c, x[0], x[1]), o_imm(wmask(w)));
		return 1;
	case OpenCLstd_USub_sat:
		*o = alu3(c, ZE_OP_MAX, D, sub_u(c, x[0], x[1]), o_imm(0));
		return 1;
	case OpenCLstd_SMad_sat: {
		const opnd_t v = alu(c, ZE_OP_MAD, D, D, sext_w(c, x[0], w), sext_w(c, x[1], w), sext_w(c, x[2], w));
		*o = trunc_w(c, alu3(c, ZE_OP_MIN, D, alu3(c, ZE_OP_MAX, D, v, o_imm(smin)), o_imm(smax)), w);
		return 1;
	}
	case OpenCLstd_UMad_sat: /* at most (2^16-1)^2 + 2^16-1 < 2^32 */
		*o = alu3(c, ZE_OP_MIN, U, alu(c, ZE_OP_MAD, U, U, x[0], x[1], x[2]), o_imm(wmask(w)));
		return 1;
	case OpenCLstd_SMul_hi:
	case OpenCLstd_SMad_hi: {
		opnd_t v = alu3(c, ZE_OP_ASR, U, alu3(c, ZE_OP_MUL, U, sext_w(c, x[0], w), sext_w(c, x[1], w)), o_imm(w));
		if (n == OpenCLstd_SMad_hi)
			v = add_u(c, v, x[2]);
		*o = trunc_w(c, v, w);
		return 1;
	}
	case OpenCLstd_UMul_hi:
	case OpenCLstd_UMad_hi: {
		opnd_t v = alu3(c, ZE_OP_SHR, U, alu3(c, ZE_OP_MUL, U, x[0], x[1]), o_imm(w));
		if (n == OpenCLstd_UMad_hi)
			v = add_u(c, v, x[2]);
		*o = trunc_w(c, v, w);
		return 1;
	}
	case OpenCLstd_Clz:
	case OpenCLstd_Ctz: {
		/* the 32-bit count of x (clz: minus the 32 - w high zeros; ctz:
		 * with bit w set, so that 0 gives w) */
		const opnd_t a[3] = {n == OpenCLstd_Ctz ? alu3(c, ZE_OP_OR, U, x[0], o_imm(1u << w)) : x[0], o_null(), o_null()};
		opnd_t r;
		if (!spv_math_ocl(c, n, a, 0, &r))
			return 0;
		*o = n == OpenCLstd_Clz ? add_u(c, r, o_imm(0u - (32 - w))) : r;
		return 1;
	}
	case OpenCLstd_Rotate: {
		const opnd_t k = alu3(c, ZE_OP_AND, U, x[1], o_imm(w - 1));
		const opnd_t l = alu3(c, ZE_OP_SHL, U, x[0], k);
		const opnd_t r = alu3(c, ZE_OP_SHR, U, x[0], sub_u(c, o_imm(w), k));
		*o = trunc_w(c, alu3(c, ZE_OP_OR, U, l, r), w);
		return 1;
	}
	case OpenCLstd_S_Upsample:
	case OpenCLstd_U_Upsample: /* (hi << w/2 | lo): w is the result's width */
		*o = trunc_w(c, alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHL, U, x[0], o_imm(w / 2)), x[1]), w);
		return 1;
	default:
		return 0; /* unsigned and width-independent: the 32-bit code */
	}
}

/* OpenCL.std on 64-bit integers: abs, min, max, clamp (what clang makes of
 * `x < 0 ? -x : x` and friends); the others are refused. */
static void ext_inst64(spv_ctx_t *c, const spv_inst_t *in, uint32_t n, const val_t *const *a, val_t *r, comp_t cr)
{
	const uint8_t U = ZE_TYPE_UD;
	for (uint32_t j = 0; j < 3; j++)
		need(c, !a[j] || a[j]->n == 2 || a[j]->n == 2 * cr.n, "(OpenCL.std) on operands of the wrong type");
	need(c, r->n == 2 * cr.n, "(OpenCL.std) of a composite type");
	for (uint32_t i = 0; i < cr.n; i++) {
		const opnd_t *x[3];
		for (uint32_t j = 0; j < 3; j++)
			x[j] = a[j] ? &a[j]->leaf[a[j]->n == 2 ? 0 : 2 * i] : NULL;
		opnd_t *o = &r->leaf[2 * i];
		switch (n) {
		case OpenCLstd_SAbs: {
			/* (x ^ s) - s, s = x >> 63 */
			const opnd_t s = alu3(c, ZE_OP_ASR, U, x[0][1], o_imm(31));
			const opnd_t v[2] = {alu3(c, ZE_OP_XOR, U, x[0][0], s), alu3(c, ZE_OP_XOR, U, x[0][1], s)};
			const opnd_t ss[2] = {s, s};
			sub64(c, v, ss, o);
			break;
		}
		case OpenCLstd_UAbs:
			o[0] = x[0][0];
			o[1] = x[0][1];
			break;
		case OpenCLstd_SMin:
		case OpenCLstd_SMax:
		case OpenCLstd_UMin:
		case OpenCLstd_UMax: {
			const int sgn = n == OpenCLstd_SMin || n == OpenCLstd_SMax;
			const int is_min = n == OpenCLstd_SMin || n == OpenCLstd_UMin;
			/* min: a < b ? a : b;  max: b < a ? a : b */
			const opnd_t lt = is_min ? less64(c, x[0], x[1], sgn, 0) : less64(c, x[1], x[0], sgn, 0);
			flag_of_bool(c, lt, 0);
			o[0] = sel(c, 0, 0, x[0][0], x[1][0]);
			o[1] = sel(c, 0, 0, x[0][1], x[1][1]);
			break;
		}
		case OpenCLstd_SClamp:
		case OpenCLstd_UClamp: { /* min(max(x, lo), hi) */
			const int sgn = n == OpenCLstd_SClamp;
			flag_of_bool(c, less64(c, x[1], x[0], sgn, 0), 0);
			const opnd_t m[2] = {sel(c, 0, 0, x[0][0], x[1][0]), sel(c, 0, 0, x[0][1], x[1][1])};
			flag_of_bool(c, less64(c, m, x[2], sgn, 0), 0);
			o[0] = sel(c, 0, 0, m[0], x[2][0]);
			o[1] = sel(c, 0, 0, m[1], x[2][1]);
			break;
		}
		case OpenCLstd_Select: {
			/* select(a, b, c): vectors test the sign bit of c, scalars c != 0 */
			if (cr.n > 1)
				cmp_flag(c, ZE_CMOD_LT, ZE_TYPE_D, x[2][1], o_imm(0), 0);
			else
				flag_of_bool(c, alu3(c, ZE_OP_OR, U, x[2][0], x[2][1]), 0);
			o[0] = sel(c, 0, 0, x[1][0], x[0][0]);
			o[1] = sel(c, 0, 0, x[1][1], x[0][1]);
			break;
		}
		default:
			spv_fail(c, in->off, "OpenCL.std %s on 64-bit integers is not supported yet", ocl_name(n));
		}
	}
}

/* OpenCL.std functions with a second result through a pointer: sincos, fract,
 * modf, frexp.  The returned value per component, then the pointer's value
 * stored like any store. */
static void ptr_result(spv_ctx_t *c, const spv_inst_t *in, uint32_t n)
{
	const uint8_t U = ZE_TYPE_UD, F = ZE_TYPE_F;
	if (in->nwords < 7)
		spv_fail(c, in->off, "OpenCL.std %s without operands", ocl_name(n));
	const val_t *x = use(c, in->w[5]), *p = use(c, in->w[6]);
	const spv_type_t *pt = ty(c, p->type);
	const comp_t cr = comps(c, in->type);
	if (pt->k != TY_PTR || cr.et->k != TY_FLOAT || cr.et->width != 32 || x->n != cr.n ||
	    comps(c, pt->elem).n != cr.n || ty(c, pt->elem)->nleaf != cr.n)
		spv_fail(c, in->off, "OpenCL.std %s on operands of the wrong type", ocl_name(n));
	val_t *r = def_val(c, in->result, in->type);
	val_t second = {.type = pt->elem, .n = cr.n};
	second.leaf = spv_alloc(c, (cr.n + 1) * sizeof(opnd_t));
	for (uint32_t i = 0; i < cr.n; i++) {
		const opnd_t a[3] = {x->leaf[i], o_null(), o_null()};
		opnd_t v = x->leaf[i];
		opnd_t av = v;
		av.abs = 1;
		av.neg = 0;
		switch (n) {
		case OpenCLstd_Sincos:
			if (!spv_math_ocl(c, OpenCLstd_Sin, a, 1, &r->leaf[i]) ||
			    !spv_math_ocl(c, OpenCLstd_Cos, a, 1, &second.leaf[i]))
				spv_fail(c, in->off, "OpenCL.std sincos: sin and cos are not available");
			break;
		case OpenCLstd_Fract:
		case OpenCLstd_Modf: {
			/* fract: x - floor(x), below 1; modf: x - trunc(x) with x's sign.
			 * ±inf: ±0 (and ±inf through the pointer); NaN: NaN for both */
			opnd_t whole;
			if (!spv_math_ocl(c, n == OpenCLstd_Fract ? OpenCLstd_Floor : OpenCLstd_Trunc, a, 1, &whole))
				spv_fail(c, in->off, "OpenCL.std %s: floor and trunc are not available", ocl_name(n));
			opnd_t part = alu3(c, ZE_OP_ADD, F, v, neg(whole));
			if (n == OpenCLstd_Fract)
				part = alu3(c, ZE_OP_MIN, F, part, o_imm(0x3f7fffffu));
			/* the sign of x (modf always; fract's part is >= 0 but -0 - -0) */
			const opnd_t sign = alu3(c, ZE_OP_AND, U, v, o_imm(0x80000000u));
			if (n == OpenCLstd_Modf)
				part = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_AND, U, part, o_imm(0x7fffffffu)), sign);
			cmp_flag(c, ZE_CMOD_EQ, F, av, o_imm(0x7f800000u), 0);
			part = sel(c, 0, 0, sign, part);
			cmp_flag(c, ZE_CMOD_EQ, F, av, o_imm(0), 0); /* ±0: itself */
			part = sel(c, 0, 0, v, part);
			cmp_flag(c, ZE_CMOD_NE, F, v, v, 0);
			r->leaf[i] = sel(c, 0, 0, v, part);
			second.leaf[i] = whole;
			break;
		}
		case OpenCLstd_Frexp: {
			/* x = m 2^e with 0.5 <= |m| < 1; denormals scaled by 2^24 first;
			 * 0, inf, NaN: x itself and e = 0 */
			cmp_flag(c, ZE_CMOD_LT, F, av, o_imm(0x00800000u), 0);
			const opnd_t y = sel(c, 0, 0, alu3(c, ZE_OP_MUL, F, v, o_imm(0x4b800000u)), v);
			const opnd_t bias = sel(c, 0, 0, o_imm(126 + 24), o_imm(126));
			const opnd_t be = alu3(c, ZE_OP_AND, U, alu3(c, ZE_OP_SHR, U, y, o_imm(23)), o_imm(0xff));
			const opnd_t m = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_AND, U, y, o_imm(0x807fffffu)), o_imm(126u << 23));
			const opnd_t e = alu3(c, ZE_OP_ADD, U, be, neg(bias));
			/* special: zero (|x| == 0) or not finite */
			const opnd_t special0 = cmp_bool(c, ZE_CMOD_GE, U, alu3(c, ZE_OP_AND, U, v, o_imm(0x7fffffffu)),
							 o_imm(0x7f800000u));
			flag_of_bool(c, alu3(c, ZE_OP_OR, U, special0, cmp_bool(c, ZE_CMOD_EQ, U,
							alu3(c, ZE_OP_AND, U, v, o_imm(0x7fffffffu)), o_imm(0))), 0);
			r->leaf[i] = sel(c, 0, 0, v, m);
			second.leaf[i] = sel(c, 0, 0, o_imm(0), e);
			break;
		}
		default:
			spv_fail(c, in->off, "OpenCL.std %s is not supported yet", ocl_name(n));
		}
	}
	store_val(c, p, &second, 0);
}

/* OpenCL.std shuffle(x, mask) / shuffle2(x, y, mask): result component i is
 * component mask[i] % n of x (of x then y for shuffle2), chosen per lane by
 * compares and sels. */
static void shuffle(spv_ctx_t *c, const spv_inst_t *in, int two)
{
	const uint32_t nops = two ? 3u : 2u;
	if (in->nwords < 5 + nops)
		spv_fail(c, in->off, "OpenCL.std shuffle without operands");
	const val_t *x = use(c, in->w[5]), *y = two ? use(c, in->w[6]) : NULL, *m = use(c, in->w[5 + nops - 1]);
	const comp_t cx = comps(c, x->type), cm = comps(c, m->type), cr = comps(c, in->type);
	if (cr.n != cm.n || cx.per != cr.per || (y && comps(c, y->type).n != cx.n) || cm.et->k != TY_INT)
		spv_fail(c, in->off, "OpenCL.std shuffle on operands of the wrong type");
	val_t *r = def_val(c, in->result, in->type);
	const uint32_t n = cx.n * (two ? 2u : 1u); /* a power of two */
	for (uint32_t i = 0; i < cr.n; i++) {
		/* the mask's low bits (a 64-bit mask: its low word) */
		const opnd_t k = alu3(c, ZE_OP_AND, ZE_TYPE_UD, m->leaf[i * cm.per], o_imm(n - 1));
		for (uint32_t p = 0; p < cr.per; p++)
			r->leaf[i * cr.per + p] = x->leaf[p];
		for (uint32_t j = 1; j < n; j++) {
			const val_t *src = j < cx.n ? x : y;
			const uint32_t e = j < cx.n ? j : j - cx.n;
			cmp_flag(c, ZE_CMOD_EQ, ZE_TYPE_UD, k, o_imm(j), 0);
			for (uint32_t p = 0; p < cr.per; p++)
				r->leaf[i * cr.per + p] = sel(c, 0, 0, src->leaf[e * cx.per + p], r->leaf[i * cr.per + p]);
		}
	}
}

static void ext_inst(spv_ctx_t *c, const spv_inst_t *in)
{
	const uint32_t set = in->w[3], n = in->w[4];
	if (set >= c->m->bound || !c->ext_ok[set]) {
		const spv_inst_t *imp = spv_def(c->m, set);
		spv_fail(c, in->off, "OpExtInst: extended instruction set \"%s\" is not supported",
			 imp ? lit_string(imp, 2) : "?");
	}
	if (c->m->ocl_set[set] != 1)
		return; /* NonSemantic.*, OpenCL.DebugInfo.100: no effect on the program */
	if (n == OpenCLstd_Printf) {
		spv_printf(c, in);
		return;
	}
	if (n == OpenCLstd_Vloadn || n == OpenCLstd_Vstoren) {
		vload_vstore(c, in, n == OpenCLstd_Vstoren);
		return;
	}
	if (n == OpenCLstd_Prefetch)
		return; /* a hint: the memory model has no use for it */
	if (n == OpenCLstd_Shuffle || n == OpenCLstd_Shuffle2) {
		shuffle(c, in, n == OpenCLstd_Shuffle2);
		return;
	}
	if (n == OpenCLstd_Sincos || n == OpenCLstd_Fract || n == OpenCLstd_Modf || n == OpenCLstd_Frexp) {
		ptr_result(c, in, n);
		return;
	}
	const uint8_t U = ZE_TYPE_UD, D = ZE_TYPE_D, F = ZE_TYPE_F;
	const uint32_t nargs = in->nwords - 5u;
	const val_t *a[3] = {NULL, NULL, NULL};
	for (uint32_t i = 0; i < nargs && i < 3; i++)
		a[i] = use(c, in->w[5 + i]);
	if (!a[0])
		spv_fail(c, in->off, "OpenCL.std %s without operands", ocl_name(n));
	val_t *r = def_val(c, in->result, in->type);
	const comp_t cr = comps(c, in->type);
	if (cr.et->k == TY_INT && cr.et->width == 64) {
		ext_inst64(c, in, n, a, r, cr);
		return;
	}
	for (uint32_t j = 0; j < 3; j++)
		need(c, !a[j] || a[j]->n == 1 || a[j]->n == cr.n, "(OpenCL.std) on operands of the wrong type");
	need(c, r->n == cr.n, "(OpenCL.std) of a composite type");
	for (uint32_t i = 0; i < cr.n; i++) {
		opnd_t x[3];
		for (uint32_t j = 0; j < 3; j++)
			x[j] = a[j] ? a[j]->leaf[a[j]->n == 1 ? 0 : i] : o_null();
		opnd_t *o = &r->leaf[i];
		const uint32_t width = cr.et->k == TY_INT ? cr.et->width : 32;
		int narrow_sext = 0;
		if (width < 32 && narrow_ocl(c, n, x, width, o, &narrow_sext))
			continue;
		if (width == 32 && (n == OpenCLstd_S_Upsample || n == OpenCLstd_U_Upsample)) {
			*o = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_SHL, U, x[0], o_imm(16)), x[1]);
			continue;
		}
		switch (n) {
		case OpenCLstd_Fabs: {
			opnd_t t = x[0];
			t.abs = 1;
			t.neg = 0;
			*o = alu2(c, ZE_OP_MOV, F, t);
			break;
		}
		case OpenCLstd_Fmin:
		case OpenCLstd_FMin_common: *o = alu3(c, ZE_OP_MIN, F, x[0], x[1]); break;
		case OpenCLstd_Fmax:
		case OpenCLstd_FMax_common: *o = alu3(c, ZE_OP_MAX, F, x[0], x[1]); break;
		case OpenCLstd_Fma:
		case OpenCLstd_Mad: *o = alu(c, ZE_OP_MAD, F, F, x[0], x[1], x[2]); break;
		case OpenCLstd_Sqrt:
		case OpenCLstd_Native_sqrt:
		case OpenCLstd_Half_sqrt: *o = alu2(c, ZE_OP_SQRT, F, x[0]); break;
		case OpenCLstd_Rsqrt:
		case OpenCLstd_Native_rsqrt:
		case OpenCLstd_Half_rsqrt: *o = alu2(c, ZE_OP_INV, F, alu2(c, ZE_OP_SQRT, F, x[0])); break;
		case OpenCLstd_Native_recip:
		case OpenCLstd_Half_recip: *o = alu2(c, ZE_OP_INV, F, x[0]); break;
		case OpenCLstd_Native_divide:
		case OpenCLstd_Half_divide: *o = alu3(c, ZE_OP_MUL, F, x[0], alu2(c, ZE_OP_INV, F, x[1])); break;
		case OpenCLstd_Exp2:
		case OpenCLstd_Native_exp2:
		case OpenCLstd_Half_exp2: *o = alu2(c, ZE_OP_EXP, F, x[0]); break;
		case OpenCLstd_Log2:
		case OpenCLstd_Native_log2:
		case OpenCLstd_Half_log2: *o = alu2(c, ZE_OP_LOG, F, x[0]); break;
		case OpenCLstd_Native_exp: /* 2^(x log2 e) */
			*o = alu2(c, ZE_OP_EXP, F, alu3(c, ZE_OP_MUL, F, x[0], o_imm(0x3fb8aa3bu)));
			break;
		case OpenCLstd_Native_log: /* log2(x) ln 2 */
			*o = alu3(c, ZE_OP_MUL, F, alu2(c, ZE_OP_LOG, F, x[0]), o_imm(0x3f317218u));
			break;
		case OpenCLstd_FClamp:
			*o = alu3(c, ZE_OP_MIN, F, alu3(c, ZE_OP_MAX, F, x[0], x[1]), x[2]);
			break;
		case OpenCLstd_Mix: /* a + (b - a) * t */
			*o = alu(c, ZE_OP_MAD, F, F, alu3(c, ZE_OP_ADD, F, x[1], neg(x[0])), x[2], x[0]);
			break;
		case OpenCLstd_Copysign:
			*o = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_AND, U, x[0], o_imm(0x7fffffffu)),
				  alu3(c, ZE_OP_AND, U, x[1], o_imm(0x80000000u)));
			break;
		case OpenCLstd_SAbs:
			*o = abs_d(c, x[0]);
			break;
		case OpenCLstd_UAbs: *o = x[0]; break;
		case OpenCLstd_SMin: *o = alu3(c, ZE_OP_MIN, D, x[0], x[1]); break;
		case OpenCLstd_SMax: *o = alu3(c, ZE_OP_MAX, D, x[0], x[1]); break;
		case OpenCLstd_UMin: *o = alu3(c, ZE_OP_MIN, U, x[0], x[1]); break;
		case OpenCLstd_UMax: *o = alu3(c, ZE_OP_MAX, U, x[0], x[1]); break;
		case OpenCLstd_SClamp: *o = alu3(c, ZE_OP_MIN, D, alu3(c, ZE_OP_MAX, D, x[0], x[1]), x[2]); break;
		case OpenCLstd_UClamp: *o = alu3(c, ZE_OP_MIN, U, alu3(c, ZE_OP_MAX, U, x[0], x[1]), x[2]); break;
		case OpenCLstd_UMul_hi: *o = mulhu(c, x[0], x[1]); break;
		case OpenCLstd_Select:
			/* select(a, b, c): vectors test the sign bit of c, scalars c != 0 */
			cmp_flag(c, cr.n > 1 ? ZE_CMOD_LT : ZE_CMOD_NE, cr.n > 1 ? D : U, x[2], o_imm(0), 0);
			*o = sel(c, 0, 0, x[1], x[0]);
			break;
		case OpenCLstd_Bitselect:
			*o = alu3(c, ZE_OP_OR, U, alu3(c, ZE_OP_AND, U, x[0], alu2(c, ZE_OP_NOT, U, in_grf(c, x[2]))),
				  alu3(c, ZE_OP_AND, U, x[1], x[2]));
			break;
		case OpenCLstd_SMad24:
		case OpenCLstd_UMad24: *o = alu(c, ZE_OP_MAD, U, U, x[0], x[1], x[2]); break;
		case OpenCLstd_SMul24:
		case OpenCLstd_UMul24: *o = alu3(c, ZE_OP_MUL, U, x[0], x[1]); break;
		default:
			if (!spv_math_ocl(c, n, x, cr.et->k == TY_FLOAT, o))
				spv_fail(c, in->off, "OpenCL.std instruction '%s' is not supported yet", ocl_name(n));
		}
		if (width < 32)
			*o = trunc_w(c, *o, width);
	}
}

/* ---- instructions and blocks ---------------------------------------------------------- */

static void any_all(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *a = use(c, in->w[3]);
	val_t *r = def_val(c, in->result, in->type);
	need(c, a->n >= 1, "of an empty value");
	opnd_t acc = a->leaf[0];
	for (uint32_t i = 1; i < a->n; i++)
		acc = alu3(c, in->opcode == SpvOpAny ? ZE_OP_OR : ZE_OP_AND, ZE_TYPE_UD, acc, a->leaf[i]);
	r->leaf[0] = acc;
}

/* dot(a, b): a0*b0, then fused multiply-adds in component order. */
static void dot(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *a = use(c, in->w[3]), *b = use(c, in->w[4]);
	val_t *r = def_val(c, in->result, in->type);
	need(c, a->n == b->n && a->n >= 1 && r->n == 1, "on operands of the wrong type");
	opnd_t acc = alu3(c, ZE_OP_MUL, ZE_TYPE_F, a->leaf[0], b->leaf[0]);
	for (uint32_t i = 1; i < a->n; i++)
		acc = alu(c, ZE_OP_MAD, ZE_TYPE_F, ZE_TYPE_F, a->leaf[i], b->leaf[i], acc);
	r->leaf[0] = acc;
}

/* vector * scalar */
static void vector_times_scalar(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *a = use(c, in->w[3]), *k = use(c, in->w[4]);
	val_t *r = def_val(c, in->result, in->type);
	need(c, a->n == r->n && k->n == 1, "on operands of the wrong type");
	for (uint32_t i = 0; i < a->n; i++)
		r->leaf[i] = alu3(c, ZE_OP_MUL, ZE_TYPE_F, a->leaf[i], k->leaf[0]);
}

static void copy_val(spv_ctx_t *c, const spv_inst_t *in, uint32_t src)
{
	const val_t *a = use(c, src);
	val_t *r = def_val(c, in->result, in->type);
	need(c, a->n == r->n, "of a value of another type");
	memcpy(r->leaf, a->leaf, a->n * sizeof(opnd_t));
	if (r->root.k == R_DYN && a->root.k != R_DYN && ty(c, in->type)->k == TY_PTR) {
		ptr_abs(c, a, r->leaf); /* promoted (promote_dyn) */
		return;
	}
	r->root = a->root;
}

static void ptr_to_u(spv_ctx_t *c, const spv_inst_t *in)
{
	const val_t *p = use(c, in->w[3]);
	val_t *r = def_val(c, in->result, in->type);
	const spv_type_t *rt = ty(c, in->type);
	if (p->root.k == R_SLM) {
		r->leaf[0] = p->leaf[0];
		if (rt->nleaf > 1)
			r->leaf[1] = o_imm(0);
		return;
	}
	if (p->root.k == R_DYN) {
		r->leaf[0] = p->leaf[0];
		if (rt->nleaf > 1)
			r->leaf[1] = p->leaf[1];
		return;
	}
	if (p->root.k != R_GLOBAL)
		spv_fail(c, in->off, "OpConvertPtrToU of %s", root_problem(&p->root));
	/* base + zero-extended offset, with carry */
	const opnd_t base[2] = {o_s(p->root.breg, p->root.bsub), o_s(p->root.breg, p->root.bsub + 1u)};
	const opnd_t off[2] = {p->leaf[0], o_imm(0)};
	opnd_t sum[2];
	add64(c, base, off, sum);
	r->leaf[0] = sum[0];
	if (rt->nleaf > 1)
		r->leaf[1] = sum[1];
}

static void lower_inst(spv_ctx_t *c, const spv_inst_t *in)
{
	c->cur_word = in->off;
	c->cur_op = in->opcode;
	const uint32_t op = in->opcode;
	switch (op) {
	case SpvOpNop:
	case SpvOpLine:
	case SpvOpNoLine:
	case SpvOpSelectionMerge:
	case SpvOpLoopMerge:
	case SpvOpLifetimeStart:
	case SpvOpLifetimeStop:
	case SpvOpAssumeTrueKHR:
	case SpvOpModuleProcessed:
	case SpvOpDecorate:
	case SpvOpName:
		return;
	case SpvOpUndef: {
		val_t *r = def_val(c, in->result, in->type);
		for (uint32_t i = 0; i < r->n; i++)
			r->leaf[i] = o_imm(0);
		return;
	}
	case SpvOpCopyObject:
	case SpvOpExpectKHR:
		copy_val(c, in, in->w[3]);
		return;
	case SpvOpPtrCastToGeneric:
	case SpvOpGenericCastToPtr:
		/* The buffer of every pointer is known at compile time (inlining
		 * resolves what reaches a function as generic), so these casts keep
		 * the root and the offset. */
		copy_val(c, in, in->w[3]);
		return;
	case SpvOpVariable:
		private_variable(c, in);
		return;
	case SpvOpLoad: {
		val_t *r = def_val(c, in->result, in->type);
		load(c, in->w[3], in->type, r);
		return;
	}
	case SpvOpStore:
		store(c, in->w[1], use(c, in->w[2]));
		return;
	case SpvOpCopyMemorySized:
		copy_sized(c, in);
		return;
	case SpvOpCopyMemory: {
		const val_t *src = use(c, in->w[2]);
		const uint32_t t = ty(c, src->type)->elem;
		val_t tmp = {.type = t, .n = ty(c, t)->nleaf};
		check_value_type(c, t);
		tmp.leaf = spv_alloc(c, (tmp.n + 1) * sizeof(opnd_t));
		load(c, in->w[2], t, &tmp);
		store(c, in->w[1], &tmp);
		return;
	}
	case SpvOpAccessChain:
	case SpvOpInBoundsAccessChain:
	case SpvOpPtrAccessChain:
	case SpvOpInBoundsPtrAccessChain:
		access_chain(c, in);
		return;
	case SpvOpIAdd:
	case SpvOpISub:
	case SpvOpIMul:
	case SpvOpUDiv:
	case SpvOpSDiv:
	case SpvOpUMod:
	case SpvOpSRem:
	case SpvOpSMod:
	case SpvOpSNegate:
	case SpvOpNot:
	case SpvOpBitCount:
	case SpvOpBitwiseAnd:
	case SpvOpBitwiseOr:
	case SpvOpBitwiseXor:
	case SpvOpShiftLeftLogical:
	case SpvOpShiftRightLogical:
	case SpvOpShiftRightArithmetic:
	case SpvOpFAdd:
	case SpvOpFSub:
	case SpvOpFMul:
	case SpvOpFDiv:
	case SpvOpFNegate:
	case SpvOpIEqual:
	case SpvOpINotEqual:
	case SpvOpUGreaterThan:
	case SpvOpSGreaterThan:
	case SpvOpUGreaterThanEqual:
	case SpvOpSGreaterThanEqual:
	case SpvOpULessThan:
	case SpvOpSLessThan:
	case SpvOpULessThanEqual:
	case SpvOpSLessThanEqual:
	case SpvOpFOrdEqual:
	case SpvOpFUnordEqual:
	case SpvOpFOrdNotEqual:
	case SpvOpFUnordNotEqual:
	case SpvOpFOrdLessThan:
	case SpvOpFUnordLessThan:
	case SpvOpFOrdGreaterThan:
	case SpvOpFUnordGreaterThan:
	case SpvOpFOrdLessThanEqual:
	case SpvOpFUnordLessThanEqual:
	case SpvOpFOrdGreaterThanEqual:
	case SpvOpFUnordGreaterThanEqual:
	case SpvOpIsNan:
	case SpvOpIsInf:
	case SpvOpIsFinite:
	case SpvOpIsNormal:
	case SpvOpSignBitSet:
	case SpvOpLessOrGreater:
	case SpvOpOrdered:
	case SpvOpUnordered:
	case SpvOpLogicalEqual:
	case SpvOpLogicalNotEqual:
	case SpvOpLogicalOr:
	case SpvOpLogicalAnd:
	case SpvOpLogicalNot:
		elementwise(c, in);
		return;
	case SpvOpAny:
	case SpvOpAll:
		any_all(c, in);
		return;
	case SpvOpDot:
		dot(c, in);
		return;
	case SpvOpVectorTimesScalar:
		vector_times_scalar(c, in);
		return;
	case SpvOpSelect:
		select_op(c, in);
		return;
	case SpvOpUConvert:
	case SpvOpSConvert:
	case SpvOpConvertSToF:
	case SpvOpConvertUToF:
	case SpvOpConvertFToS:
	case SpvOpConvertFToU:
		convert(c, in);
		return;
	case SpvOpBitcast:
		bitcast(c, in);
		return;
	case SpvOpConvertPtrToU:
		ptr_to_u(c, in);
		return;
	case SpvOpCompositeExtract:
	case SpvOpCompositeInsert:
	case SpvOpCompositeConstruct:
	case SpvOpVectorShuffle:
	case SpvOpVectorExtractDynamic:
	case SpvOpVectorInsertDynamic:
		composite(c, in);
		return;
	case SpvOpExtInst:
		ext_inst(c, in);
		return;
	case SpvOpControlBarrier:
		fence_if_memory(c, const_sem(c, in->w[3]));
		send(c, ZE_MSG_BARRIER, 0, o_null(), o_null(), o_null(), o_null());
		c->cur->code[c->cur->ncode - 1].gmem = (uint8_t)global_semantics(const_sem(c, in->w[3]));
		return;
	case SpvOpMemoryBarrier:
		fence_if_memory(c, const_sem(c, in->w[2]));
		return;
	case SpvOpAtomicLoad:
	case SpvOpAtomicStore:
	case SpvOpAtomicExchange:
	case SpvOpAtomicCompareExchange:
	case SpvOpAtomicCompareExchangeWeak:
	case SpvOpAtomicIIncrement:
	case SpvOpAtomicIDecrement:
	case SpvOpAtomicIAdd:
	case SpvOpAtomicISub:
	case SpvOpAtomicSMin:
	case SpvOpAtomicUMin:
	case SpvOpAtomicSMax:
	case SpvOpAtomicUMax:
	case SpvOpAtomicAnd:
	case SpvOpAtomicOr:
	case SpvOpAtomicXor:
		atomic(c, in);
		return;
	case SpvOpConvertUToPtr:
		spv_fail(c, in->off, "OpConvertUToPtr (pointers made from integers) is not supported yet");
	case SpvOpFRem:
	case SpvOpFMod:
		spv_fail(c, in->off, "%s (floating-point remainder) is not supported yet", spv_op_name(op));
	case SpvOpFConvert: {
		/* float -> double (what printf's variadic promotion makes) and back:
		 * the value stays the float it exactly is; arithmetic on doubles
		 * is refused where its result is defined, a store of a double by
		 * store() */
		const val_t *a = use(c, in->w[3]);
		const comp_t ca = comps(c, a->type), cr = comps(c, in->type);
		if (ca.et->k != TY_FLOAT || ca.et->width != 32 || cr.et->k != TY_FLOAT ||
		    (cr.et->width != 32 && cr.et->width != 64) || ca.n != cr.n)
			spv_fail(c, in->off, "OpFConvert (half or double conversions) is not supported");
		val_t *r = &c->vals[in->result];
		*r = *a;
		r->done = 1;
		return;
	}
	default:
		spv_fail(c, in->off, "%s is not supported yet", spv_op_name(op));
	}
}

static void lower_block(spv_ctx_t *c, blk_t *b)
{
	c->cur = b;
	for (uint32_t i = b->first; i < b->end; i++) {
		const spv_inst_t *in = &c->fi[i];
		c->cur_word = in->off;
		if (in->opcode == SpvOpPhi) {
			val_t *r = def_val(c, in->result, in->type);
			if (ty(c, in->type)->k == TY_PTR) {
				r->root = c->vals[in->result].root;
				if (r->root.k != R_GLOBAL && r->root.k != R_SLM && r->root.k != R_PRIVATE &&
				    r->root.k != R_DYN)
					spv_fail(c, in->off, "OpPhi of %s", root_problem(&r->root));
			}
			for (uint32_t k = 0; k < r->n; k++)
				r->leaf[k] = vnew(c);
			continue;
		}
		if (i + 1 == b->end) {
			/* The terminator: targets were resolved by the CFG pass. */
			if (in->opcode == SpvOpBranchConditional) {
				b->cond = use(c, in->w[1])->leaf[0];
			} else if (in->opcode == SpvOpSwitch) {
				const val_t *s = use(c, in->w[1]);
				b->cond = s->leaf[0];
				if (s->n > 1) {
					b->cond_hi = s->leaf[1];
					b->sel64 = 1;
				}
			}
			continue;
		}
		c->cur_loc = c->fi_loc ? c->fi_loc[i] : 0;
		lower_inst(c, in);
	}
	c->cur_loc = 0;
}

/* Resolve each block's terminator to block indices. */
static void parse_terminators(spv_ctx_t *c)
{
	for (uint32_t i = 0; i < c->nblk; i++) {
		blk_t *b = &c->blk[i];
		b->split_from = -1;
		if (!b->end)
			spv_fail(c, b->word, "block %%%u has no terminator", b->label);
		const spv_inst_t *t = &c->fi[b->end - 1];
		c->cur_word = t->off;
		switch (t->opcode) {
		case SpvOpBranch:
			b->term = TERM_BR;
			b->ntarg = 1;
			b->targ = spv_alloc(c, sizeof(uint32_t));
			b->targ[0] = block_of(c, t->w[1], t->off);
			break;
		case SpvOpBranchConditional:
			b->term = TERM_CBR;
			b->ntarg = 2;
			b->targ = spv_alloc(c, 2 * sizeof(uint32_t));
			b->targ[0] = block_of(c, t->w[2], t->off);
			b->targ[1] = block_of(c, t->w[3], t->off);
			break;
		case SpvOpSwitch: {
			const spv_inst_t *sd = NULL;
			uint32_t stype = 0;
			/* The selector's width decides the literal width. */
			for (uint32_t j = 0; j < c->nfi && !sd; j++)
				if (c->fi[j].result == t->w[1])
					sd = &c->fi[j];
			if (sd)
				stype = sd->type;
			else if (t->w[1] < c->m->bound && c->consts[t->w[1]].done)
				stype = c->consts[t->w[1]].type;
			else if (t->w[1] < c->nids && c->vals[t->w[1]].done)
				stype = c->vals[t->w[1]].type;
			const spv_type_t *st = ty(c, stype);
			if (st->k != TY_INT)
				spv_fail(c, t->off, "OpSwitch: the selector is not an integer");
			const uint32_t lw = st->width == 64 ? 2 : 1;
			const uint32_t ncases = (t->nwords - 3u) / (lw + 1);
			b->term = TERM_SWITCH;
			b->ntarg = 1 + ncases;
			b->targ = spv_alloc(c, b->ntarg * sizeof(uint32_t));
			b->cases = spv_alloc(c, (ncases + 1) * sizeof(uint64_t));
			b->targ[0] = block_of(c, t->w[2], t->off);
			for (uint32_t k = 0; k < ncases; k++) {
				const uint32_t *p = &t->w[3 + k * (lw + 1)];
				b->cases[k] = p[0] | (lw == 2 ? (uint64_t)p[1] << 32 : 0);
				b->targ[1 + k] = block_of(c, p[lw], t->off);
			}
			break;
		}
		case SpvOpReturn:
		case SpvOpUnreachable:
			b->term = TERM_RET;
			break;
		case SpvOpKill:
		case SpvOpTerminateInvocation:
			spv_fail(c, t->off, "%s is not allowed in a kernel", spv_op_name(t->opcode));
		default:
			spv_fail(c, t->off, "%s: unexpected terminator", spv_op_name(t->opcode));
		}
	}
}

/* Phi copies: at the end of the predecessor, or in the block that splits the
 * edge when the predecessor has several successors (spv_cfg).  The copies of
 * one edge are a parallel copy: when a source is also a destination (phis
 * reading each other, as in a swap), every source goes through a temporary. */
static void phi_copies(spv_ctx_t *c)
{
	opnd_t *dst = NULL, *src = NULL;
	size_t cap_d = 0, cap_s = 0;
	for (uint32_t s = 0; s < c->nblk; s++) {
		blk_t *S = &c->blk[s];
		if (!S->reachable || !S->label || S->first >= S->end || c->fi[S->first].opcode != SpvOpPhi)
			continue;
		for (uint32_t k = 0; k < S->npred; k++) {
			const uint32_t holder = S->pred[k];
			const uint32_t p = c->blk[holder].split_from >= 0 ? (uint32_t)c->blk[holder].split_from : holder;
			size_t n = 0;
			for (uint32_t i = S->first; i < S->end && c->fi[i].opcode == SpvOpPhi; i++) {
				const spv_inst_t *in = &c->fi[i];
				c->cur_word = in->off;
				const val_t *r = &c->vals[in->result];
				uint32_t found = 0;
				for (uint32_t j = 3; j + 1 < in->nwords; j += 2) {
					if (block_of(c, in->w[j + 1], in->off) != p)
						continue;
					const val_t *v = use(c, in->w[j]);
					if (v->n != r->n)
						spv_fail(c, in->off, "OpPhi: incoming value of another type");
					/* a kernel argument (not promoted: promote_dyn) meeting a
					 * pointer loaded from memory: its address is its base */
					const int arg_abs = r->root.k == R_DYN && v->root.k == R_GLOBAL &&
							    v->leaf[0].k == O_I && v->leaf[0].v == 0;
					if (r->root.k == R_DYN && v->root.k != R_DYN && v->root.k != R_NULL && !arg_abs)
						spv_fail(c, in->off, "OpPhi of a pointer loaded from memory and %s is not "
							 "supported yet", root_problem(&v->root));
					dst = spv_grow(c, dst, &cap_d, n + r->n, sizeof(opnd_t));
					src = spv_grow(c, src, &cap_s, n + r->n, sizeof(opnd_t));
					for (uint32_t l = 0; l < r->n; l++) {
						dst[n] = r->leaf[l];
						src[n++] = arg_abs ? o_s(v->root.breg, v->root.bsub + l) : v->leaf[l];
					}
					found = 1;
					break;
				}
				if (!found)
					spv_fail(c, in->off, "OpPhi has no value for predecessor %%%u", c->blk[p].label);
			}
			c->cur = &c->blk[holder];
			int overlap = 0;
			for (size_t a = 0; a < n && !overlap; a++)
				for (size_t b = 0; b < n; b++)
					if (src[a].k == O_V && src[a].v == dst[b].v)
						overlap = 1;
			if (overlap)
				for (size_t a = 0; a < n; a++)
					if (src[a].k == O_V)
						src[a] = mov_to_vreg(c, ZE_TYPE_UD, src[a]);
			for (size_t a = 0; a < n; a++) {
				inst_t mv = {.op = ZE_OP_MOV, .dt = ZE_TYPE_UD, .st = ZE_TYPE_UD, .d = dst[a], .s = {src[a]},
					     .phi_copy = 1};
				if (src[a].k == O_V)
					c->vr[dst[a].v].hint = src[a].v;
				emit(c, &mv);
			}
		}
	}
}

static void setup_globals(spv_ctx_t *c)
{
	/* Workgroup variables the kernel refers to: static SLM, laid out in
	 * declaration order.  (A literal operand equal to a variable's id also
	 * counts as a reference: that only wastes SLM, never breaks.) */
	uint8_t *used = spv_alloc(c, c->m->bound);
	for (uint32_t i = 0; i < c->nfi; i++)
		for (uint32_t k = 1; k < c->fi[i].nwords; k++)
			if (c->fi[i].w[k] < c->m->bound)
				used[c->fi[i].w[k]] = 1;
	uint32_t slm = 0;
	for (uint32_t i = 0; i < c->m->ninsts; i++) {
		const spv_inst_t *in = &c->m->insts[i];
		if (in->opcode != SpvOpVariable || in->w[3] == SpvStorageClassFunction)
			continue;
		val_t *v = &c->vals[in->result];
		v->type = in->type;
		if (in->w[3] == SpvStorageClassWorkgroup) {
			if (!used[in->result])
				continue;
			const spv_type_t *t = ty(c, ty(c, in->type)->elem);
			if (!t->size)
				spv_fail(c, in->off, "Workgroup variable %%%u of unknown size", in->result);
			slm = align_up(slm, t->align > 4 ? t->align : 4);
			v->n = 2;
			v->leaf = spv_alloc(c, 3 * sizeof(opnd_t));
			v->leaf[0] = o_imm(slm);
			v->leaf[1] = o_imm(0);
			v->done = 1;
			slm += t->size;
			if (slm > ZE_MAX_SLM_BYTES)
				spv_fail(c, in->off, "the kernel's __local variables take more than %u bytes",
					 ZE_MAX_SLM_BYTES);
		} else if (spv_builtin_var(c, in)) {
			v->n = 2;
			v->leaf = spv_alloc(c, 3 * sizeof(opnd_t));
			v->leaf[0] = o_imm(0);
			v->leaf[1] = o_imm(0);
			v->done = 1;
		}
	}
	c->slm_static = align_up(slm, 4);
	/* __constant and __global program-scope variables: the data segment. */
	spv_data_setup_kernel(c);
}

void spv_lower_kernel(spv_ctx_t *c, const spv_entry_t *e)
{
	const spv_fn_t *fn = &c->fns[c->fn_index[e->fn] - 1];
	c->kernel_name = e->name;
	c->entry_word = e->word;
	c->cur_word = e->word;
	if (ty(c, fn->type)->k != TY_VOID)
		spv_fail(c, e->word, "kernel \"%s\" does not return void", e->name);
	flatten(c, fn);
	build_blocks(c);
	if (!c->nblk)
		spv_fail(c, e->word, "kernel \"%s\" has no blocks", e->name);
	c->vals = spv_alloc(c, c->nids * sizeof(val_t));
	parse_terminators(c);
	spv_cfg(c);
	setup_args(c, fn);
	setup_globals(c);
	infer_roots(c);
	for (uint32_t i = 0; i < c->nrpo; i++) {
		blk_t *b = &c->blk[c->rpo_list[i]];
		if (b->label)
			lower_block(c, b);
	}
	phi_copies(c);
	c->cur = NULL;
}

/* ---- the IR builder, for the other lowering files (spv_math.c) ---------------------- */

opnd_t spv_alu(spv_ctx_t *c, uint8_t op, uint8_t dt, uint8_t st, opnd_t a, opnd_t b, opnd_t cc)
{
	return alu(c, op, dt, st, a, b, cc);
}

opnd_t spv_mov(spv_ctx_t *c, uint8_t t, opnd_t a)
{
	return mov_to_vreg(c, t, a);
}

void spv_cmp_flag(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag)
{
	cmp_flag(c, cmod, t, a, b, flag);
}

void spv_cmp_flag_and(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag)
{
	cmp_flag_and(c, cmod, t, a, b, flag);
}

opnd_t spv_cmp_bool(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b)
{
	return cmp_bool(c, cmod, t, a, b);
}

opnd_t spv_sel(spv_ctx_t *c, uint8_t flag, uint8_t inv, opnd_t a, opnd_t b)
{
	return sel(c, flag, inv, a, b);
}

opnd_t spv_mulhu(spv_ctx_t *c, opnd_t a, opnd_t b)
{
	return mulhu(c, a, b);
}

val_t *spv_def_val(spv_ctx_t *c, uint32_t id, uint32_t type)
{
	return def_val(c, id, type);
}

const val_t *spv_use(spv_ctx_t *c, uint32_t id)
{
	return use(c, id);
}

void spv_send(spv_ctx_t *c, uint32_t msg, uint32_t atomic, opnd_t d, opnd_t a, opnd_t p, opnd_t b)
{
	send(c, msg, atomic, d, a, p, b);
}

opnd_t spv_in_grf(spv_ctx_t *c, opnd_t a)
{
	return in_grf(c, a);
}
