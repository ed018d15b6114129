/* ZE-ISA: instruction encoding, decoding, validation and formatting.
 *
 * The tables come from ze_isa.def (the single source, see docs/isa.md); this
 * header turns them into C enums and lookup tables.  Decoding validates every
 * field, so the assembler encodes and then decodes each instruction to apply
 * exactly the rules the hardware model and the disassembler apply. */
#ifndef ZESIM_ZE_ISA_H
#define ZESIM_ZE_ISA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZE_INST_BYTES 16u
#define ZE_GRF_COUNT 128u
#define ZE_GRF_BYTES 32u
#define ZE_MAX_SIMD 16u

/* Flags of ZE_OP / ZE_MSG entries. */
#define Z_JIP 0x1u
#define Z_CMOD 0x2u
#define Z_S1 0x4u
#define Z_NOTYPE 0x8u

enum ze_lat {
#define ZE_LAT(e, cycles, name) e,
#include "ze_isa.def"
#undef ZE_LAT
	ZE_LAT_COUNT
};

enum ze_type {
#define ZE_TYPE(e, code, suffix, bytes) e = code,
#include "ze_isa.def"
#undef ZE_TYPE
};

enum ze_cmod {
#define ZE_CMOD(e, code, name) e = code,
#include "ze_isa.def"
#undef ZE_CMOD
};

enum ze_arf {
#define ZE_ARF(e, num, name, dwords, writable) e = num,
#include "ze_isa.def"
#undef ZE_ARF
};

enum ze_atomic {
#define ZE_ATOMIC(e, code, name, elems) e = code,
#include "ze_isa.def"
#undef ZE_ATOMIC
};

enum ze_opcode {
#define ZE_OP(e, code, mnem, opnds, lat, flags) e = code,
#include "ze_isa.def"
#undef ZE_OP
};

enum ze_msg {
#define ZE_MSG(e, id, name, opnds, lat, flags) e = id,
#include "ze_isa.def"
#undef ZE_MSG
};

/* Operand kinds (docs/isa.md §2). */
enum ze_opnd_kind {
	ZE_OPND_NULL = 0,
	ZE_OPND_GRFV = 1,
	ZE_OPND_GRFS = 2,
	ZE_OPND_ARF = 3,
	ZE_OPND_IMM = 4,
};

/* Exceptions (docs/isa.md §7): bit numbers in cr0.0 / cr0.1. */
enum ze_exception {
	ZE_EXC_BREAKPOINT = 0,
	ZE_EXC_ILLEGAL = 1,
	ZE_EXC_PAGE_FAULT = 2,
	ZE_EXC_MISALIGNED = 3,
	ZE_EXC_STACK = 4,
	ZE_EXC_SLM_BOUNDS = 5,
	ZE_EXC_HALT = 6,	   /* the halt instruction, when cr0.0 bit 6 enables it (docs/debug.md §2.3) */
	ZE_EXC_FORCED = 26,	   /* a force-exception request of the debug unit (DBG_EXC) */
	ZE_EXC_EXTERNAL_HALT = 30, /* a force-external-halt request of the debug unit (DBG_HALT) */
};

typedef struct ze_op_info {
	uint8_t opcode;
	const char *mnemonic;
	const char *operands; /* operand letters, see ze_isa.def */
	enum ze_lat lat;
	uint32_t flags;
} ze_op_info_t;

typedef struct ze_msg_info {
	uint8_t id;
	const char *name;
	const char *operands;
	enum ze_lat lat;
	uint32_t flags;
} ze_msg_info_t;

typedef struct ze_arf_info {
	uint8_t num;
	const char *name;
	uint8_t dwords;
	uint8_t writable;
} ze_arf_info_t;

typedef struct ze_operand {
	uint8_t kind; /* enum ze_opnd_kind */
	uint8_t reg;
	uint8_t sub;
	uint8_t neg;
	uint8_t abs;
} ze_operand_t;

/* A decoded instruction.  dst/src[] are the four operand slots of the
 * encoding; which slot an assembly operand goes to follows its letter. */
typedef struct ze_inst {
	uint8_t opcode;
	uint8_t bp;
	uint8_t esize; /* 1, 8 or 16 */
	uint8_t pred;  /* predicate enable */
	uint8_t pred_inv;
	uint8_t flag; /* 0 = f0, 1 = f1 */
	uint8_t cmod;
	uint8_t dtype;
	uint8_t stype;
	ze_operand_t dst;
	ze_operand_t src[3];
	uint32_t dw3; /* immediate, jump offset or send descriptor */
} ze_inst_t;

/* Table lookups; NULL when unknown. */
const ze_op_info_t *ze_op_info(unsigned opcode);
const ze_op_info_t *ze_op_by_name(const char *mnemonic);
const ze_msg_info_t *ze_msg_info(unsigned id);
const ze_msg_info_t *ze_msg_by_name(const char *name);
const ze_arf_info_t *ze_arf_info(unsigned num);
const ze_arf_info_t *ze_arf_by_name(const char *name);
const char *ze_type_suffix(unsigned type);
int ze_type_by_suffix(const char *suffix); /* -1 when unknown */
const char *ze_cmod_name(unsigned cmod);
int ze_cmod_by_name(const char *name);
const char *ze_atomic_name(unsigned op);
int ze_atomic_by_name(const char *name);
int ze_atomic_payload_elements(unsigned op);
unsigned ze_lat_cycles(enum ze_lat lat);
const char *ze_lat_name(enum ze_lat lat);

/* Send descriptor fields (dword 3 of a send). */
static inline unsigned ze_send_msg(uint32_t dw3) { return dw3 & 0xffu; }
static inline unsigned ze_send_atomic(uint32_t dw3) { return (dw3 >> 8) & 0xfu; }
static inline unsigned ze_send_vsize(uint32_t dw3) { return ((dw3 >> 12) & 0x3u) + 1u; }
static inline uint32_t ze_send_desc(unsigned msg, unsigned atomic, unsigned vsize)
{
	return (msg & 0xffu) | ((atomic & 0xfu) << 8) | (((vsize - 1u) & 0x3u) << 12);
}

/* The operand letters of an instruction: the opcode's, or the message's for
 * send.  NULL for an unknown opcode or message. */
const char *ze_inst_operand_letters(const ze_inst_t *inst);

/* Slot that an operand letter occupies: 0 = dst, 1..3 = src0..src2.  For
 * 's' letters the caller passes the index among the 's' letters. */
int ze_letter_slot(char letter, int s_index);

void ze_encode(const ze_inst_t *inst, uint8_t out[ZE_INST_BYTES]);

/* Decode and validate.  Returns 0, or -1 with a message in err. */
int ze_decode(const uint8_t in[ZE_INST_BYTES], ze_inst_t *inst, char *err, size_t errlen);

/* Jump target of an instruction with a 'j' operand, as a byte offset from the
 * instruction itself. */
static inline int32_t ze_jump_offset(const ze_inst_t *inst) { return (int32_t)inst->dw3; }

/* Whether the instruction's operands include a jump target. */
int ze_inst_has_jump(const ze_inst_t *inst);

/* Format one valid instruction in canonical assembly.  label_of returns the
 * label name for a jump target (byte offset relative to the section), or
 * NULL when it has none.  Returns the length written (like snprintf). */
typedef const char *(*ze_label_fn)(void *ctx, int64_t target);
int ze_format(const ze_inst_t *inst, uint32_t ip, ze_label_fn label_of, void *ctx, char *buf,
	      size_t len);

/* Format a float immediate so that ze_parse_float_imm gives the same bits. */
void ze_format_f32(uint32_t bits, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
