/* SPIR-V reader and validator: the first stage of the driver's SPIR-V front
 * end (README.md, "SPIR-V front end").  It checks the binary form — header,
 * instruction word counts, every operand against the grammar of Debian's
 * spirv-headers (tables generated at build time by gen_grammar.py), id ranges,
 * single definitions, references to defined ids — and reports the first
 * problem as "word N: ...", N being the word offset in the module.  It does
 * not check semantics (types of operands, the logical layout, control flow):
 * the translator does that for what it uses, with the same message form. */
#ifndef ZS_SPV_READER_H
#define ZS_SPV_READER_H

#include <stddef.h>
#include <stdint.h>

#include "spv_grammar.h"

#define SPV_MAGIC 0x07230203u
#define SPV_MAX_BOUND (1u << 22) /* ids; more is refused as malformed */

typedef struct spv_inst {
	uint32_t off;      /* word offset of the instruction in the module */
	uint16_t opcode;
	uint16_t nwords;   /* including the first word */
	const uint32_t *w; /* w[0] is the first word, operands follow */
	uint32_t type;     /* result type id, or 0 */
	uint32_t result;   /* result id, or 0 */
} spv_inst_t;

typedef struct spv_module {
	uint32_t *words; /* a host-order copy of the module */
	uint32_t nwords;
	uint32_t version; /* 0x00MMmm00 */
	uint32_t generator;
	uint32_t bound;
	uint32_t ninsts;
	spv_inst_t *insts;
	uint32_t *def;      /* bound entries: index of the defining instruction + 1, or 0 */
	uint8_t *ocl_set;   /* bound entries: 1 for ids of OpExtInstImport "OpenCL.std", 2 "OpenCL.DebugInfo.100" or
			     * "SPIRV.debug" */
} spv_module_t;

/* Read and validate a module of `size` bytes (either byte order).  Returns 0,
 * or -1 with the message in err ("word N: ..."); m is then empty. */
int spv_read(const void *bytes, size_t size, spv_module_t *m, char *err, size_t errlen);
void spv_free(spv_module_t *m);

/* Walk the operands of one (validated) instruction: fn gets the operand kind
 * (enum spv_kind, composites split into their parts) and the index of its
 * first word in in->w.  Used to find and rename the ids of an instruction. */
typedef void (*spv_operand_fn)(void *ctx, unsigned kind, uint32_t index);
void spv_walk(const spv_module_t *m, const spv_inst_t *in, spv_operand_fn fn, void *ctx);

/* The grammar's names, for messages: "OpTypeImage", "Float64"; "?" when the
 * grammar has no such value (never the case in a validated module). */
const char *spv_op_name(uint32_t opcode);
const char *spv_enum_name(unsigned kind, uint32_t value);

/* The id defined by in (result), and its instruction. */
static inline const spv_inst_t *spv_def(const spv_module_t *m, uint32_t id)
{
	return id && id < m->bound && m->def[id] ? &m->insts[m->def[id] - 1] : NULL;
}

#endif
