/* ZE-ISA encode, decode, validate and format (docs/isa.md §2-§4). */
#include "zs/ze_isa.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ze_op_info_t op_table[] = {
#define ZE_OP(e, code, mnem, opnds, lat, flags) {code, mnem, opnds, lat, flags},
#include "zs/ze_isa.def"
#undef ZE_OP
};

static const ze_msg_info_t msg_table[] = {
#define ZE_MSG(e, id, name, opnds, lat, flags) {id, name, opnds, lat, flags},
#include "zs/ze_isa.def"
#undef ZE_MSG
};

static const ze_arf_info_t arf_table[] = {
#define ZE_ARF(e, num, name, dwords, writable) {num, name, dwords, writable},
#include "zs/ze_isa.def"
#undef ZE_ARF
};

struct named_code {
	unsigned code;
	const char *name;
	int extra;
};

static const struct named_code type_table[] = {
#define ZE_TYPE(e, code, suffix, bytes) {code, suffix, bytes},
#include "zs/ze_isa.def"
#undef ZE_TYPE
};

static const struct named_code cmod_table[] = {
#define ZE_CMOD(e, code, name) {code, name, 0},
#include "zs/ze_isa.def"
#undef ZE_CMOD
};

static const struct named_code atomic_table[] = {
#define ZE_ATOMIC(e, code, name, elems) {code, name, elems},
#include "zs/ze_isa.def"
#undef ZE_ATOMIC
};

static const struct named_code lat_table[] = {
#define ZE_LAT(e, cycles, name) {cycles, name, 0},
#include "zs/ze_isa.def"
#undef ZE_LAT
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* op_table's index + 1 by opcode (0: none): ze_op_info is on the compiler's
 * scheduling path, once per pair of instructions. */
enum {
#define ZE_OP(e, code, mnem, opnds, lat, flags) e##_SLOT,
#include "zs/ze_isa.def"
#undef ZE_OP
};
static const uint8_t op_slot[256] = {
#define ZE_OP(e, code, mnem, opnds, lat, flags) [code] = e##_SLOT + 1,
#include "zs/ze_isa.def"
#undef ZE_OP
};

const ze_op_info_t *ze_op_info(unsigned opcode)
{
	return opcode < 256 && op_slot[opcode] ? &op_table[op_slot[opcode] - 1] : NULL;
}

const ze_op_info_t *ze_op_by_name(const char *mnemonic)
{
	for (size_t i = 0; i < COUNT(op_table); i++)
		if (strcmp(op_table[i].mnemonic, mnemonic) == 0)
			return &op_table[i];
	return NULL;
}

const ze_msg_info_t *ze_msg_info(unsigned id)
{
	for (size_t i = 0; i < COUNT(msg_table); i++)
		if (msg_table[i].id == id)
			return &msg_table[i];
	return NULL;
}

const ze_msg_info_t *ze_msg_by_name(const char *name)
{
	for (size_t i = 0; i < COUNT(msg_table); i++)
		if (strcmp(msg_table[i].name, name) == 0)
			return &msg_table[i];
	return NULL;
}

const ze_arf_info_t *ze_arf_info(unsigned num)
{
	for (size_t i = 0; i < COUNT(arf_table); i++)
		if (arf_table[i].num == num)
			return &arf_table[i];
	return NULL;
}

const ze_arf_info_t *ze_arf_by_name(const char *name)
{
	for (size_t i = 0; i < COUNT(arf_table); i++)
		if (strcmp(arf_table[i].name, name) == 0)
			return &arf_table[i];
	return NULL;
}

static const struct named_code *by_code(const struct named_code *t, size_t n, unsigned code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return &t[i];
	return NULL;
}

static int code_by_name(const struct named_code *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return (int)t[i].code;
	return -1;
}

const char *ze_type_suffix(unsigned type)
{
	const struct named_code *c = by_code(type_table, COUNT(type_table), type);
	return c ? c->name : NULL;
}

int ze_type_by_suffix(const char *suffix)
{
	return code_by_name(type_table, COUNT(type_table), suffix);
}

const char *ze_cmod_name(unsigned cmod)
{
	const struct named_code *c = by_code(cmod_table, COUNT(cmod_table), cmod);
	return c ? c->name : NULL;
}

int ze_cmod_by_name(const char *name)
{
	if (!*name)
		return -1;
	return code_by_name(cmod_table, COUNT(cmod_table), name);
}

const char *ze_atomic_name(unsigned op)
{
	const struct named_code *c = by_code(atomic_table, COUNT(atomic_table), op);
	return c ? c->name : NULL;
}

int ze_atomic_by_name(const char *name)
{
	return code_by_name(atomic_table, COUNT(atomic_table), name);
}

int ze_atomic_payload_elements(unsigned op)
{
	const struct named_code *c = by_code(atomic_table, COUNT(atomic_table), op);
	return c ? c->extra : -1;
}

unsigned ze_lat_cycles(enum ze_lat lat)
{
	return (unsigned)lat < COUNT(lat_table) ? lat_table[lat].code : 0;
}

const char *ze_lat_name(enum ze_lat lat)
{
	return (unsigned)lat < COUNT(lat_table) ? lat_table[lat].name : NULL;
}

const char *ze_inst_operand_letters(const ze_inst_t *inst)
{
	const ze_op_info_t *op = ze_op_info(inst->opcode);
	if (!op)
		return NULL;
	if (op->opcode != ZE_OP_SEND)
		return op->operands;
	const ze_msg_info_t *msg = ze_msg_info(ze_send_msg(inst->dw3));
	return msg ? msg->operands : NULL;
}

int ze_letter_slot(char letter, int s_index)
{
	switch (letter) {
	case 'd':
	case 't':
		return 0;
	case 's':
		return 1 + s_index;
	case 'a':
		return 1;
	case 'p':
		return 2;
	case 'b':
		return 3;
	default:
		return -1;
	}
}

int ze_inst_has_jump(const ze_inst_t *inst)
{
	const char *l = ze_inst_operand_letters(inst);
	return l && strchr(l, 'j') != NULL && inst->opcode != ZE_OP_SEND;
}

/* GRFs [lo, lo + n) of one operand that spans `regs` registers when it is a
 * vector (a scalar is one register); wraps at r127 as the hardware does. */
static void mark_grfs(const ze_operand_t *o, unsigned regs, uint8_t used[ZE_GRF_COUNT])
{
	if (o->kind == ZE_OPND_GRFS)
		used[o->reg & (ZE_GRF_COUNT - 1)] = 1;
	else if (o->kind == ZE_OPND_GRFV)
		for (unsigned i = 0; i < regs; i++)
			used[(o->reg + i) & (ZE_GRF_COUNT - 1)] = 1;
}

void ze_inst_grf_footprint(const ze_inst_t *inst, uint8_t used[ZE_GRF_COUNT])
{
	const unsigned span = inst->esize > 8 ? inst->esize / 8u : 1u;
	unsigned elems_dst = 1, elems_p = 1;
	if (inst->opcode == ZE_OP_SEND) {
		const unsigned msg = ze_send_msg(inst->dw3);
		elems_dst = ze_send_vsize(inst->dw3);
		if (msg == ZE_MSG_ATOMIC || msg == ZE_MSG_SLM_ATOMIC)
			elems_p = (unsigned)ze_atomic_payload_elements(ze_send_atomic(inst->dw3));
		else
			elems_p = elems_dst;
	}
	mark_grfs(&inst->dst, span * elems_dst, used);
	for (int i = 0; i < 3; i++)
		mark_grfs(&inst->src[i], span * (i == 1 ? elems_p : 1u), used);
}

static unsigned esize_code(unsigned esize)
{
	return esize == 1 ? 0u : esize == 8 ? 1u : esize == 16 ? 2u : 3u;
}

static uint16_t encode_operand(const ze_operand_t *o)
{
	return (uint16_t)((o->kind & 7u) | ((o->reg & 0x7fu) << 3) | ((o->sub & 7u) << 10) |
			  ((o->neg & 1u) << 13) | ((o->abs & 1u) << 14));
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void ze_encode(const ze_inst_t *in, uint8_t out[ZE_INST_BYTES])
{
	uint32_t h = (uint32_t)in->opcode | (uint32_t)(in->bp & 1u) << 8 |
		     esize_code(in->esize) << 9 | (uint32_t)(in->pred & 1u) << 11 |
		     (uint32_t)(in->pred_inv & 1u) << 12 | (uint32_t)(in->flag & 1u) << 13 |
		     (uint32_t)(in->cmod & 0xfu) << 14 | (uint32_t)(in->dtype & 0xfu) << 18 |
		     (uint32_t)(in->stype & 0xfu) << 22;
	put32(out, h);
	put32(out + 4, encode_operand(&in->dst) | (uint32_t)encode_operand(&in->src[0]) << 16);
	put32(out + 8,
	      encode_operand(&in->src[1]) | (uint32_t)encode_operand(&in->src[2]) << 16);
	put32(out + 12, in->dw3);
}

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

static void decode_operand(uint16_t v, ze_operand_t *o)
{
	o->kind = v & 7u;
	o->reg = (v >> 3) & 0x7fu;
	o->sub = (v >> 10) & 7u;
	o->neg = (v >> 13) & 1u;
	o->abs = (v >> 14) & 1u;
}

static int is_logic(unsigned opcode)
{
	return opcode == ZE_OP_NOT || opcode == ZE_OP_AND || opcode == ZE_OP_OR ||
	       opcode == ZE_OP_XOR || opcode == ZE_OP_SHL || opcode == ZE_OP_SHR ||
	       opcode == ZE_OP_ASR;
}

static int is_math(unsigned opcode)
{
	return opcode >= ZE_OP_INV && opcode <= ZE_OP_LOG;
}

static const char *const slot_name[4] = {"dst", "src0", "src1", "src2"};

/* Registers a vector operand of this instruction spans, per element. */
static unsigned vec_regs(unsigned esize)
{
	return esize > 8 ? esize / 8 : 1;
}

struct check {
	const ze_inst_t *in;
	const ze_op_info_t *op;
	uint16_t raw[4];
	char *err;
	size_t len;
};

static int check_grfv(struct check *c, int slot, const ze_operand_t *o, unsigned elements)
{
	unsigned last = o->reg + elements * vec_regs(c->in->esize) - 1;
	if (o->sub)
		return fail(c->err, c->len, "%s: vector operand with sub-register %u",
			    slot_name[slot], o->sub);
	if (last >= ZE_GRF_COUNT)
		return fail(c->err, c->len, "%s: r%u spans past r127 at SIMD%u", slot_name[slot],
			    o->reg, c->in->esize);
	return 0;
}

static int check_no_mods(struct check *c, int slot, const ze_operand_t *o)
{
	if (o->neg || o->abs)
		return fail(c->err, c->len, "%s: source modifiers not allowed here", slot_name[slot]);
	return 0;
}

static int check_arf(struct check *c, int slot, const ze_operand_t *o, int is_dst)
{
	const ze_arf_info_t *a = ze_arf_info(o->reg);
	if (c->op->opcode != ZE_OP_MOV)
		return fail(c->err, c->len, "%s: ARF operands are only allowed in mov",
			    slot_name[slot]);
	if (!a)
		return fail(c->err, c->len, "%s: unknown ARF %u", slot_name[slot], o->reg);
	if (o->sub >= a->dwords)
		return fail(c->err, c->len, "%s: %s has no sub-register %u", slot_name[slot],
			    a->name, o->sub);
	if (is_dst && !a->writable)
		return fail(c->err, c->len, "dst: %s is not writable", a->name);
	if ((is_dst ? c->in->dtype : c->in->stype) != ZE_TYPE_UD)
		return fail(c->err, c->len, "%s: ARF operands have type ud", slot_name[slot]);
	return check_no_mods(c, slot, o);
}

/* One operand slot against its letter. */
static int check_letter(struct check *c, char letter, int slot, int *imm_seen)
{
	const ze_inst_t *in = c->in;
	const ze_operand_t *o = slot == 0 ? &in->dst : &in->src[slot - 1];
	unsigned elements = in->opcode == ZE_OP_SEND ? ze_send_vsize(in->dw3) : 1;
	switch (letter) {
	case 'd':
		if (slot == 0 && (o->neg || o->abs))
			return fail(c->err, c->len, "dst: modifiers not allowed on a destination");
		if (in->opcode == ZE_OP_SEND) {
			if (o->kind == ZE_OPND_NULL)
				return c->raw[slot] ? fail(c->err, c->len, "dst: null with fields set") : 0;
			if (o->kind != ZE_OPND_GRFV)
				return fail(c->err, c->len, "dst: send needs a GRF vector or null");
			return check_grfv(c, slot, o, elements);
		}
		switch (o->kind) {
		case ZE_OPND_NULL:
			if (c->raw[slot] || in->dtype)
				return fail(c->err, c->len, "dst: null with fields or a type set");
			return 0;
		case ZE_OPND_GRFV:
			return check_grfv(c, slot, o, 1);
		case ZE_OPND_GRFS:
			if (in->esize != 1)
				return fail(c->err, c->len,
					    "dst: scalar destination needs execution size 1");
			return 0;
		case ZE_OPND_ARF:
			if (in->esize != 1)
				return fail(c->err, c->len, "dst: ARF destination needs execution size 1");
			return check_arf(c, slot, o, 1);
		default:
			return fail(c->err, c->len, "dst: operand kind %u not allowed", o->kind);
		}
	case 's':
		switch (o->kind) {
		case ZE_OPND_GRFV:
			if (is_logic(in->opcode))
				if (check_no_mods(c, slot, o))
					return -1;
			return check_grfv(c, slot, o, 1);
		case ZE_OPND_GRFS:
			return is_logic(in->opcode) ? check_no_mods(c, slot, o) : 0;
		case ZE_OPND_ARF:
			return check_arf(c, slot, o, 0);
		case ZE_OPND_IMM:
			if (o->reg || o->sub)
				return fail(c->err, c->len, "%s: immediate with register fields",
					    slot_name[slot]);
			if (++*imm_seen > 1)
				return fail(c->err, c->len, "more than one immediate");
			return check_no_mods(c, slot, o);
		default:
			return fail(c->err, c->len, "%s: operand kind %u not allowed", slot_name[slot],
				    o->kind);
		}
	case 'a':
	case 'p': {
		unsigned n = letter == 'p' && ze_send_msg(in->dw3) != ZE_MSG_STORE &&
					     ze_send_msg(in->dw3) != ZE_MSG_SLM_STORE
				     ? (unsigned)ze_atomic_payload_elements(ze_send_atomic(in->dw3))
				     : letter == 'a' ? 1
						     : elements;
		if (letter == 'p' && n == 0) {
			if (c->raw[slot])
				return fail(c->err, c->len, "src1: %s takes no payload",
					    ze_atomic_name(ze_send_atomic(in->dw3)));
			return 0;
		}
		if (o->kind != ZE_OPND_GRFV)
			return fail(c->err, c->len, "%s: needs a GRF vector", slot_name[slot]);
		if (check_no_mods(c, slot, o))
			return -1;
		return check_grfv(c, slot, o, n);
	}
	case 'b':
	case 't':
		if (o->kind != ZE_OPND_GRFS || (o->sub & 1u))
			return fail(c->err, c->len,
				    "%s: needs a GRF scalar with an even sub-register (a qword)",
				    slot_name[slot]);
		return check_no_mods(c, slot, o);
	default:
		return fail(c->err, c->len, "internal: unknown operand letter '%c'", letter);
	}
}

static int check_send(struct check *c)
{
	const ze_inst_t *in = c->in;
	unsigned id = ze_send_msg(in->dw3);
	const ze_msg_info_t *m = ze_msg_info(id);
	if (!m)
		return fail(c->err, c->len, "send: unknown message %u", id);
	if (in->dw3 >> 14)
		return fail(c->err, c->len, "send: reserved descriptor bits set (0x%08x)", in->dw3);
	int atomic = id == ZE_MSG_ATOMIC || id == ZE_MSG_SLM_ATOMIC;
	int vector = id == ZE_MSG_LOAD || id == ZE_MSG_STORE || id == ZE_MSG_SLM_LOAD ||
		     id == ZE_MSG_SLM_STORE;
	if (atomic && !ze_atomic_name(ze_send_atomic(in->dw3)))
		return fail(c->err, c->len, "send.%s: unknown atomic operation %u", m->name,
			    ze_send_atomic(in->dw3));
	if (!atomic && ze_send_atomic(in->dw3))
		return fail(c->err, c->len, "send.%s: atomic operation field set", m->name);
	if (!vector && ze_send_vsize(in->dw3) != 1)
		return fail(c->err, c->len, "send.%s: vector size field set", m->name);
	if ((m->flags & Z_S1) && in->esize != 1)
		return fail(c->err, c->len, "send.%s needs execution size 1", m->name);
	if (in->dtype || in->stype)
		return fail(c->err, c->len, "send operands carry no type");
	return 0;
}

int ze_decode(const uint8_t bytes[ZE_INST_BYTES], ze_inst_t *in, char *err, size_t len)
{
	uint32_t h = get32(bytes), d1 = get32(bytes + 4), d2 = get32(bytes + 8);
	struct check c = {in, NULL, {(uint16_t)d1, (uint16_t)(d1 >> 16), (uint16_t)d2,
				     (uint16_t)(d2 >> 16)},
			  err, len};
	memset(in, 0, sizeof(*in));
	in->opcode = h & 0xffu;
	in->bp = (h >> 8) & 1u;
	unsigned ec = (h >> 9) & 3u;
	in->esize = ec == 0 ? 1 : ec == 1 ? 8 : ec == 2 ? 16 : 0;
	in->pred = (h >> 11) & 1u;
	in->pred_inv = (h >> 12) & 1u;
	in->flag = (h >> 13) & 1u;
	in->cmod = (h >> 14) & 0xfu;
	in->dtype = (h >> 18) & 0xfu;
	in->stype = (h >> 22) & 0xfu;
	decode_operand(c.raw[0], &in->dst);
	for (int i = 0; i < 3; i++)
		decode_operand(c.raw[i + 1], &in->src[i]);
	in->dw3 = get32(bytes + 12);

	c.op = ze_op_info(in->opcode);
	if (!c.op)
		return fail(err, len, "unknown opcode 0x%02x", in->opcode);
	if (h >> 26)
		return fail(err, len, "%s: reserved header bits set (0x%08x)", c.op->mnemonic, h);
	if (!in->esize)
		return fail(err, len, "%s: execution size code 3 is reserved", c.op->mnemonic);
	for (int i = 0; i < 4; i++)
		if (c.raw[i] & 0x8000u)
			return fail(err, len, "%s: reserved bit of %s set", c.op->mnemonic,
				    slot_name[i]);
	if ((c.op->flags & Z_S1) && in->esize != 1)
		return fail(err, len, "%s needs execution size 1", c.op->mnemonic);
	if (c.op->flags & Z_CMOD) {
		if (!in->cmod || !ze_cmod_name(in->cmod))
			return fail(err, len, "%s needs a condition modifier (code %u invalid)",
				    c.op->mnemonic, in->cmod);
	} else if (in->cmod) {
		return fail(err, len, "%s takes no condition modifier", c.op->mnemonic);
	}
	if (!in->pred && in->pred_inv)
		return fail(err, len, "%s: predicate invert without predicate", c.op->mnemonic);
	if (!in->pred && in->flag && !(c.op->flags & Z_CMOD))
		return fail(err, len, "%s: flag select without predicate", c.op->mnemonic);
	if (in->opcode == ZE_OP_SEL && !in->pred)
		return fail(err, len, "sel must be predicated");
	if (in->opcode == ZE_OP_SEND && check_send(&c))
		return -1;

	const char *letters = ze_inst_operand_letters(in);
	int typed = in->opcode != ZE_OP_SEND && strpbrk(letters, "ds") != NULL;
	if (!typed && (in->dtype || in->stype))
		return fail(err, len, "%s: type fields set on an untyped instruction", c.op->mnemonic);
	if (typed && (!ze_type_suffix(in->dtype) || !ze_type_suffix(in->stype)))
		return fail(err, len, "%s: reserved type code", c.op->mnemonic);
	if (typed && is_logic(in->opcode) && in->stype == ZE_TYPE_F)
		return fail(err, len, "%s needs integer source types", c.op->mnemonic);
	if (is_math(in->opcode) && in->stype != ZE_TYPE_F)
		return fail(err, len, "%s needs source type f", c.op->mnemonic);

	int used[4] = {0, 0, 0, 0}, s_index = 0, imm_seen = 0, has_jump = 0;
	for (const char *l = letters; *l; l++) {
		if (*l == 'j') {
			has_jump = 1;
			continue;
		}
		int slot = ze_letter_slot(*l, *l == 's' ? s_index++ : 0);
		if (slot < 0)
			return fail(err, len, "internal: unknown operand letter '%c'", *l);
		used[slot] = 1;
		if (check_letter(&c, *l, slot, &imm_seen))
			return -1;
	}
	for (int i = 0; i < 4; i++)
		if (!used[i] && c.raw[i])
			return fail(err, len, "%s: unused operand %s is not zero", c.op->mnemonic,
				    slot_name[i]);
	if (in->opcode == ZE_OP_WAIT && in->src[0].kind != ZE_OPND_IMM &&
	    in->src[0].kind != ZE_OPND_GRFS)
		return fail(err, len, "wait takes an immediate or a GRF scalar");
	if (has_jump && (in->dw3 & 15u))
		return fail(err, len, "%s: jump offset %d is not a multiple of 16", c.op->mnemonic,
			    (int32_t)in->dw3);
	if (!has_jump && !imm_seen && in->opcode != ZE_OP_SEND && in->dw3)
		return fail(err, len, "%s: dword 3 must be zero (0x%08x)", c.op->mnemonic, in->dw3);
	return 0;
}

/* ---- formatting ---------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, pos;
};

static void emit(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char tmp[1];
	va_start(ap, fmt);
	int n = vsnprintf(o->pos < o->len ? o->buf + o->pos : tmp,
			  o->pos < o->len ? o->len - o->pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->pos += (size_t)n;
}

void ze_format_f32(uint32_t bits, char *buf, size_t len)
{
	float f;
	memcpy(&f, &bits, sizeof(f));
	if (isfinite(f)) {
		for (int prec = 1; prec <= 9; prec++) {
			char tmp[48];
			snprintf(tmp, sizeof(tmp), "%.*g", prec, (double)f);
			float back = strtof(tmp, NULL);
			uint32_t bb;
			memcpy(&bb, &back, sizeof(bb));
			if (bb == bits) {
				/* A plain integer would read back as an integer literal only
				 * by accident of the type; keep it, the type is explicit. */
				snprintf(buf, len, "%s", tmp);
				return;
			}
		}
	}
	if (isinf(f)) {
		snprintf(buf, len, "%s", f < 0 ? "-inf" : "inf");
		return;
	}
	snprintf(buf, len, "0x%08x", bits);
}

static void emit_imm(struct out *o, uint32_t v, unsigned type)
{
	char tmp[48];
	switch (type) {
	case ZE_TYPE_D:
		emit(o, "%d", (int32_t)v);
		break;
	case ZE_TYPE_F:
		ze_format_f32(v, tmp, sizeof(tmp));
		emit(o, "%s", tmp);
		break;
	default:
		if (v < 10)
			emit(o, "%u", v);
		else
			emit(o, "0x%x", v);
	}
}

static void emit_operand(struct out *o, const ze_inst_t *in, const ze_operand_t *op,
			 unsigned type, int typed)
{
	if (op->kind == ZE_OPND_NULL) {
		emit(o, "null");
		return;
	}
	if (op->kind == ZE_OPND_IMM) {
		emit_imm(o, in->dw3, type);
	} else {
		emit(o, "%s%s", op->neg ? "-" : "", op->abs ? "|" : "");
		if (op->kind == ZE_OPND_ARF) {
			const ze_arf_info_t *a = ze_arf_info(op->reg);
			emit(o, "%s.%u", a ? a->name : "?", op->sub);
		} else if (op->kind == ZE_OPND_GRFS) {
			emit(o, "r%u.%u", op->reg, op->sub);
		} else {
			emit(o, "r%u", op->reg);
		}
		if (op->abs)
			emit(o, "|");
	}
	if (typed)
		emit(o, ":%s", ze_type_suffix(type));
}

int ze_format(const ze_inst_t *in, uint32_t ip, ze_label_fn label_of, void *ctx, char *buf,
	      size_t len)
{
	struct out o = {buf, len, 0};
	const ze_op_info_t *op = ze_op_info(in->opcode);
	const char *letters = ze_inst_operand_letters(in);
	if (len)
		buf[0] = 0;
	if (!op || !letters)
		return 0;
	if (in->pred)
		emit(&o, "(%sf%u) ", in->pred_inv ? "!" : "", in->flag);
	if (in->opcode == ZE_OP_SEND) {
		unsigned msg = ze_send_msg(in->dw3);
		emit(&o, "send.%s", ze_msg_info(msg)->name);
		if (msg == ZE_MSG_ATOMIC || msg == ZE_MSG_SLM_ATOMIC)
			emit(&o, ".%s", ze_atomic_name(ze_send_atomic(in->dw3)));
		if (ze_send_vsize(in->dw3) > 1)
			emit(&o, ".v%u", ze_send_vsize(in->dw3));
	} else {
		emit(&o, "%s", op->mnemonic);
		if (op->flags & Z_CMOD)
			emit(&o, ".%s.f%u", ze_cmod_name(in->cmod), in->flag);
	}
	emit(&o, " (%u)", in->esize);
	int typed = in->opcode != ZE_OP_SEND;
	int s_index = 0;
	for (const char *l = letters; *l; l++) {
		emit(&o, " ");
		if (*l == 'j') {
			int64_t target = (int64_t)ip + (int32_t)in->dw3;
			const char *name = label_of ? label_of(ctx, target) : NULL;
			if (name)
				emit(&o, "%s", name);
			else
				emit(&o, "@%lld", (long long)target);
			continue;
		}
		int slot = ze_letter_slot(*l, *l == 's' ? s_index++ : 0);
		if (slot == 2 && *l == 'p' && in->src[1].kind == ZE_OPND_NULL) {
			emit(&o, "null");
			continue;
		}
		const ze_operand_t *operand = slot == 0 ? &in->dst : &in->src[slot - 1];
		emit_operand(&o, in, operand, slot == 0 ? in->dtype : in->stype, typed);
	}
	if (in->bp)
		emit(&o, " {bp}");
	return (int)o.pos;
}
