/* Unit test of the SPIR-V reader and front end (driver/spirv/) on hand-made
 * word arrays: every kind of malformed binary gives its "word N: ..." message,
 * the grammar-driven operand walk (enumerant parameters, literal widths,
 * extended instructions) accepts what is valid, spv_walk finds the ids, and
 * small complete modules compile or fail with the right message.  Then every
 * module in KERNEL_DIR is mutated at random many times: the front end must
 * answer each with a result or a message, never crash (run under ASan/UBSan
 * as spirv_reader_san).
 *
 *     test_spirv_reader [KERNEL_DIR [MUTATIONS]] */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"
#include "spv_reader.h"

#include "check_that.h"


/* ---- building modules word by word ------------------------------------------- */

typedef struct mod {
	uint32_t w[512];
	uint32_t n;
} mod_t;

static void header(mod_t *m, uint32_t bound)
{
	m->n = 0;
	m->w[m->n++] = SPV_MAGIC;
	m->w[m->n++] = 0x00010000;
	m->w[m->n++] = 0;
	m->w[m->n++] = bound;
	m->w[m->n++] = 0;
}

/* An instruction with `count` operand words; returns its word offset. */
static uint32_t op(mod_t *m, uint32_t opcode, uint32_t count, ...)
{
	const uint32_t at = m->n;
	m->w[m->n++] = (count + 1) << 16 | opcode;
	va_list ap;
	va_start(ap, count);
	for (uint32_t i = 0; i < count; i++)
		m->w[m->n++] = va_arg(ap, uint32_t);
	va_end(ap);
	return at;
}

/* An instruction with leading id operands and a string at the end. */
static uint32_t op_str(mod_t *m, uint32_t opcode, uint32_t nids, const uint32_t *ids, const char *s)
{
	const uint32_t at = m->n;
	const uint32_t swords = (uint32_t)(strlen(s) / 4 + 1);
	m->w[m->n++] = (1 + nids + swords) << 16 | opcode;
	for (uint32_t i = 0; i < nids; i++)
		m->w[m->n++] = ids[i];
	memset(&m->w[m->n], 0, swords * 4);
	memcpy(&m->w[m->n], s, strlen(s));
	m->n += swords;
	return at;
}

enum {
	OpNop = 0, OpName = 5, OpExtInstImport = 11, OpExtInst = 12, OpMemoryModel = 14, OpEntryPoint = 15,
	OpCapability = 17, OpTypeVoid = 19, OpTypeInt = 21, OpTypeFloat = 22, OpTypePointer = 32,
	OpTypeFunction = 33, OpConstant = 43, OpFunction = 54, OpFunctionParameter = 55, OpFunctionEnd = 56,
	OpLoad = 61, OpStore = 62, OpInBoundsPtrAccessChain = 70, OpDecorate = 71, OpVariable = 59, OpFAdd = 129,
	OpLabel = 248, OpBranch = 249, OpSwitch = 251, OpReturn = 253, OpTypeStruct = 30, OpTypeForwardPointer = 39,
};

/* The prologue of a kernel module: ids 1-9 used. */
static void prologue(mod_t *m, uint32_t bound)
{
	header(m, bound);
	op(m, OpCapability, 1, 4u);  /* Addresses */
	op(m, OpCapability, 1, 6u);  /* Kernel */
	op(m, OpCapability, 1, 11u); /* Int64 */
	op(m, OpMemoryModel, 2, 2u, 2u); /* Physical64 OpenCL */
}

static int read_fails(const mod_t *m, const char *want, const char *what);

/* read_fails with "word AT: " before the expected text. */
static int fails_at(const mod_t *m, uint32_t at, const char *want, const char *what)
{
	char full[256];
	snprintf(full, sizeof(full), "word %u: %s", at, want);
	return read_fails(m, full, what);
}

static int read_fails(const mod_t *m, const char *want, const char *what)
{
	spv_module_t s;
	char err[256] = "";
	const int rc = spv_read(m->w, m->n * 4, &s, err, sizeof(err));
	if (rc == 0) {
		spv_free(&s);
		CHECK_THAT(0, "%s: accepted, expected \"%s\"", what, want);
		return 0;
	}
	CHECK_THAT(strstr(err, want) != NULL, "%s: \"%s\", expected \"%s\"", what, err, want);
	return 1;
}

static void read_ok(const mod_t *m, const char *what)
{
	spv_module_t s;
	char err[256] = "";
	CHECK_THAT(spv_read(m->w, m->n * 4, &s, err, sizeof(err)) == 0, "%s: %s", what, err);
	spv_free(&s);
}

/* ---- the reader ---------------------------------------------------------------- */

static void test_header(void)
{
	mod_t m;
	prologue(&m, 10);
	read_ok(&m, "minimal");
	spv_module_t s;
	char err[256];
	CHECK_THAT(spv_read(m.w, 0, &s, err, sizeof(err)) == -1 && strstr(err, "word 0: truncated header"), "%s", err);
	CHECK_THAT(spv_read(m.w, 18, &s, err, sizeof(err)) == -1 && strstr(err, "not a whole number"), "%s", err);
	CHECK_THAT(spv_read(m.w, 16, &s, err, sizeof(err)) == -1 && strstr(err, "word 4: truncated header"), "%s", err);

	m.w[0] = 0xdeadbeef;
	read_fails(&m, "word 0: bad magic number 0xdeadbeef", "magic");
	prologue(&m, 10);
	m.w[1] = 0x00010700;
	read_fails(&m, "word 1: SPIR-V version word 0x00010700", "version 1.7");
	m.w[1] = 0x00010001;
	read_fails(&m, "word 1:", "version low byte");
	prologue(&m, 0);
	read_fails(&m, "word 3: id bound 0", "bound 0");
	prologue(&m, SPV_MAX_BOUND + 1);
	read_fails(&m, "word 3: id bound", "bound too large");
	prologue(&m, 10);
	m.w[4] = 7;
	read_fails(&m, "word 4: reserved schema word is 7", "schema");

	/* Either byte order. */
	prologue(&m, 10);
	for (uint32_t i = 0; i < m.n; i++)
		m.w[i] = __builtin_bswap32(m.w[i]);
	read_ok(&m, "byte-swapped");
}

static void test_instructions(void)
{
	mod_t m;
	uint32_t at;
	prologue(&m, 10);
	at = m.n;
	m.w[m.n++] = 0u << 16 | OpNop;
	fails_at(&m, at, "instruction word count is 0", "word count 0");

	prologue(&m, 10);
	at = op(&m, OpTypeInt, 3, 1u, 32u, 0u);
	m.n -= 1; /* the last word is missing: the count runs past the end */
	fails_at(&m, at, "OpTypeInt has word count 4, past the end of the module", "past the end");

	prologue(&m, 10);
	at = op(&m, 4242, 0);
	fails_at(&m, at, "unknown opcode 4242", "unknown opcode");

	prologue(&m, 10);
	at = op(&m, OpTypeInt, 2, 1u, 32u);
	fails_at(&m, at, "OpTypeInt: missing operand 'Signedness'", "missing operand");

	prologue(&m, 10);
	at = op(&m, OpCapability, 2, 6u, 6u);
	fails_at(&m, at, "OpCapability: 3 words, but its operands end after 2", "extra word");

	prologue(&m, 10);
	at = op(&m, OpCapability, 1, 77777u);
	fails_at(&m, at + 1, "OpCapability: unknown Capability 77777", "unknown enumerant");

	prologue(&m, 10);
	at = op(&m, OpTypeInt, 3, 10u, 32u, 0u);
	fails_at(&m, at + 1, "OpTypeInt: id 10 out of range (bound 10)", "id = bound");
	prologue(&m, 10);
	op(&m, OpTypeInt, 3, 0u, 32u, 0u);
	read_fails(&m, "id 0 out of range", "id 0");

	prologue(&m, 10);
	op(&m, OpTypeInt, 3, 1u, 32u, 0u);
	at = op(&m, OpTypeFloat, 2, 1u, 32u);
	fails_at(&m, at + 1, "OpTypeFloat: id %1 defined twice", "defined twice");

	prologue(&m, 10);
	at = op(&m, OpTypePointer, 3, 2u, 7u, 5u); /* %5 never defined */
	fails_at(&m, at + 3, "OpTypePointer: id %5 is never defined", "undefined");

	/* Forward references are fine (an OpName before its target). */
	prologue(&m, 10);
	const uint32_t ids[1] = {3};
	op_str(&m, OpName, 1, ids, "value");
	op(&m, OpTypeInt, 3, 3u, 32u, 0u);
	read_ok(&m, "forward reference");

	prologue(&m, 10);
	at = op_str(&m, OpName, 1, ids, "abcd"); /* "abcd" + a NUL word */
	m.n--;                                   /* drop the NUL word */
	m.w[at] = (m.n - at) << 16 | OpName;
	op(&m, OpTypeInt, 3, 3u, 32u, 0u);
	fails_at(&m, at + 2, "OpName: string operand 'Name' is not NUL-terminated", "string");
}

static void test_operands(void)
{
	mod_t m, m2;
	uint32_t at;
	/* OpDecorate BuiltIn takes one more operand, the BuiltIn. */
	prologue(&m, 20);
	at = op(&m, OpDecorate, 3, 5u, 11u, 28u); /* %5 BuiltIn GlobalInvocationId */
	op(&m, OpTypeInt, 3, 1u, 64u, 0u);
	op(&m, OpTypePointer, 3, 2u, 1u, 1u); /* Input */
	op(&m, OpVariable, 3, 2u, 5u, 1u);
	read_ok(&m, "BuiltIn decoration");
	m.w[at + 3] = 999999;
	fails_at(&m, at + 3, "OpDecorate: unknown BuiltIn 999999", "BuiltIn value");
	prologue(&m, 20);
	at = op(&m, OpDecorate, 2, 5u, 11u); /* BuiltIn without its operand */
	op(&m, OpTypeInt, 3, 5u, 64u, 0u);
	fails_at(&m, at, "OpDecorate: missing operand 'BuiltIn'", "enumerant parameter");

	/* 64-bit OpConstant: two literal words; 32-bit: one. */
	prologue(&m, 20);
	op(&m, OpTypeInt, 3, 1u, 64u, 0u);
	op(&m, OpTypeInt, 3, 2u, 32u, 0u);
	op(&m, OpConstant, 4, 1u, 3u, 5u, 0u);
	op(&m, OpConstant, 3, 2u, 4u, 6u);
	read_ok(&m, "constants");
	prologue(&m, 20);
	op(&m, OpTypeInt, 3, 1u, 64u, 0u);
	op(&m, OpConstant, 3, 1u, 3u, 5u);
	read_fails(&m, "OpConstant: the 64-bit literal needs 2 words, 1 left", "short 64-bit literal");
	prologue(&m, 20);
	op(&m, OpTypeInt, 3, 2u, 32u, 0u);
	op(&m, OpConstant, 4, 2u, 4u, 6u, 7u);
	read_fails(&m, "OpConstant: 5 words, but its operands end after 4", "long 32-bit literal");
	prologue(&m, 20);
	op(&m, OpTypeVoid, 1, 1u);
	op(&m, OpConstant, 3, 1u, 3u, 5u);
	read_fails(&m, "OpConstant: result type %1 is not a numeric type", "constant of void");

	/* OpLoad with the Aligned memory operand: its alignment follows. */
	prologue(&m, 20);
	op(&m, OpTypeInt, 3, 1u, 32u, 0u);
	op(&m, OpTypePointer, 3, 2u, 5u, 1u);
	op(&m, OpVariable, 3, 2u, 3u, 5u);
	op(&m, OpTypeVoid, 1, 7u);
	op(&m, OpTypeFunction, 2, 8u, 7u);
	op(&m, OpFunction, 4, 7u, 9u, 0u, 8u);
	op(&m, OpLabel, 1, 10u);
	const uint32_t load = op(&m, OpLoad, 5, 1u, 11u, 3u, 2u, 4u); /* Aligned 4 */
	op(&m, OpReturn, 0);
	op(&m, OpFunctionEnd, 0);
	read_ok(&m, "OpLoad Aligned");
	/* The same without the alignment word. */
	m2 = m;
	m2.w[load] = 5u << 16 | OpLoad;
	m2.w[load + 5] = 1u << 16 | OpNop;
	fails_at(&m2, load, "OpLoad: missing operand", "Aligned without alignment");
	m2.w[load] = 6u << 16 | OpLoad;
	m2.w[load + 4] = 0x4000000u; /* an undefined memory-access bit */
	m2.w[load + 5] = 4;
	fails_at(&m2, load + 4, "OpLoad: unknown MemoryAccess bit 0x4000000", "unknown bit");

	/* OpSwitch: case literals are as wide as the selector. */
	prologue(&m, 30);
	op(&m, OpTypeInt, 3, 1u, 64u, 0u);
	op(&m, OpConstant, 4, 1u, 2u, 5u, 0u);
	op(&m, OpTypeVoid, 1, 3u);
	op(&m, OpTypeFunction, 2, 4u, 3u);
	op(&m, OpFunction, 4, 3u, 6u, 0u, 4u);
	op(&m, OpLabel, 1, 7u);
	const uint32_t sw = op(&m, OpSwitch, 8, 2u, 8u, 1u, 0u, 9u, 2u, 0u, 8u);
	op(&m, OpLabel, 1, 8u);
	op(&m, OpReturn, 0);
	op(&m, OpLabel, 1, 9u);
	op(&m, OpReturn, 0);
	op(&m, OpFunctionEnd, 0);
	read_ok(&m, "64-bit switch");
	m2 = m;
	m2.w[sw] = 8u << 16 | OpSwitch; /* one word short: an incomplete case */
	m2.w[sw + 8] = 1u << 16 | OpNop;
	read_fails(&m2, "OpSwitch: incomplete case", "switch literal width");

	/* OpExtInst: OpenCL.std instructions are checked against their grammar. */
	prologue(&m, 30);
	const uint32_t set = 1;
	op_str(&m, OpExtInstImport, 1, &set, "OpenCL.std");
	op(&m, OpTypeFloat, 2, 2u, 32u);
	op(&m, OpConstant, 3, 2u, 3u, 0x3f800000u);
	op(&m, OpTypeVoid, 1, 4u);
	op(&m, OpTypeFunction, 2, 5u, 4u);
	op(&m, OpFunction, 4, 4u, 6u, 0u, 5u);
	op(&m, OpLabel, 1, 7u);
	const uint32_t ext = op(&m, OpExtInst, 6, 2u, 8u, 1u, 26u, 3u, 3u); /* fma(x, x) lacks c */
	op(&m, OpReturn, 0);
	op(&m, OpFunctionEnd, 0);
	fails_at(&m, ext, "OpExtInst: missing operand 'c'", "fma arity");
	m.w[ext + 4] = 61; /* sqrt: takes one operand */
	fails_at(&m, ext, "OpExtInst: 7 words, but its operands end after 6", "sqrt arity");
	m.w[ext + 4] = 9999;
	fails_at(&m, ext + 4, "OpExtInst: unknown OpenCL.std instruction 9999", "unknown ext inst");
	m.w[ext + 4] = 27; /* fmax(x, x) */
	read_ok(&m, "fmax");
}

struct ids {
	uint32_t idx[8];
	unsigned kind[8];
	uint32_t n;
};

static void note_id(void *ctx, unsigned kind, uint32_t index)
{
	struct ids *s = ctx;
	if (s->n < 8) {
		s->idx[s->n] = index;
		s->kind[s->n++] = kind;
	}
}

static void test_walk(void)
{
	mod_t m;
	prologue(&m, 20);
	op(&m, OpDecorate, 3, 5u, 11u, 28u);
	op(&m, OpTypeInt, 3, 1u, 64u, 0u);
	op(&m, OpTypePointer, 3, 2u, 1u, 1u);
	op(&m, OpVariable, 3, 2u, 5u, 1u);
	spv_module_t s;
	char err[256];
	CHECK_THAT(spv_read(m.w, m.n * 4, &s, err, sizeof(err)) == 0, "%s", err);
	if (failures)
		return;
	CHECK_THAT(s.ninsts == 8 && s.bound == 20, "%u instructions", s.ninsts);
	const spv_inst_t *d = &s.insts[4];
	struct ids got = {0};
	spv_walk(&s, d, note_id, &got);
	CHECK_THAT(got.n == 3 && got.kind[0] == SPV_KIND_IdRef && got.idx[0] == 1 && got.kind[1] == SPV_KIND_Decoration &&
			   got.kind[2] == SPV_KIND_BuiltIn && got.idx[2] == 3,
		   "OpDecorate operands: %u", got.n);
	const spv_inst_t *v = spv_def(&s, 5);
	CHECK_THAT(v && v->opcode == OpVariable && v->type == 2 && v->result == 5, "definition of %%5");
	CHECK_THAT(strcmp(spv_op_name(OpVariable), "OpVariable") == 0 && strcmp(spv_op_name(31999), "?") == 0, "names");
	CHECK_THAT(strcmp(spv_enum_name(SPV_KIND_Capability, 10), "Float64") == 0, "capability names");
	spv_free(&s);
}

/* ---- the front end on small complete modules ------------------------------------- */

/* An empty kernel "k"; the extra capability (if any) at the returned word. */
static uint32_t kernel_module(mod_t *m, uint32_t extra_cap)
{
	prologue(m, 20);
	const uint32_t at = m->n;
	if (extra_cap)
		op(m, OpCapability, 1, extra_cap);
	const uint32_t f = 3;
	op_str(m, OpEntryPoint, 2, (const uint32_t[]){6u, f}, "k");
	op(m, OpTypeVoid, 1, 1u);
	op(m, OpTypeFunction, 2, 2u, 1u);
	op(m, OpFunction, 4, 1u, f, 0u, 2u);
	op(m, OpLabel, 1, 4u);
	op(m, OpReturn, 0);
	op(m, OpFunctionEnd, 0);
	return at;
}

static void test_compile(void)
{
	mod_t m;
	kernel_module(&m, 0);
	zm_module_t out;
	char err[512];
	const spv_compile_options_t opt = {.max_simd = 16};
	int rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_OK, "empty kernel: %s", err);
	if (rc == SPV_OK) {
		CHECK_THAT(out.nkernels == 1 && strcmp(out.kernels[0].name, "k") == 0 && out.kernels[0].nargs == 0 &&
				   out.kernels[0].simd == 16 && out.kernels[0].text_size >= 16,
			   "the empty kernel");
		zm_module_free(&out);
	}
	const spv_compile_options_t opt8 = {.max_simd = 8};
	rc = spv_compile(m.w, m.n * 4, &opt8, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_OK && out.kernels[0].simd == 8, "SIMD8 device: %s", err);
	if (rc == SPV_OK)
		zm_module_free(&out);

	/* Float64 is declared by clang for printf of floats: accepted (double
	 * values are refused where they occur); Float16 is not. */
	kernel_module(&m, 10);
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_OK, "a module declaring Float64: %s", err);
	if (rc == SPV_OK)
		zm_module_free(&out);
	const uint32_t cap = kernel_module(&m, 9); /* Float16 */
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	char want[64];
	snprintf(want, sizeof(want), "word %u: capability Float16 is not supported", cap);
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, want), "%s", err);
	kernel_module(&m, 13); /* ImageBasic */
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, "capability ImageBasic is not supported"), "%s", err);

	/* No entry point: a valid module of no kernels, but no ZE-ISA module. */
	prologue(&m, 20);
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_OK && out.nkernels == 0, "%s", err);
	if (rc == SPV_OK)
		zm_module_free(&out);
	uint8_t *elf = NULL;
	size_t elf_size = 0;
	rc = spv_compile_elf(m.w, m.n * 4, &opt, &elf, &elf_size, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, "no kernels") && !elf, "%s", err);
	/* A struct pointing to itself: its pointer type declared ahead (types
	 * 10-12 before the function of kernel_module). */
	for (int bad = 0; bad < 2; bad++) {
		kernel_module(&m, 0);
		mod_t tail = m;
		uint32_t fn = 5;
		while ((m.w[fn] & 0xffffu) != OpFunction)
			fn += m.w[fn] >> 16;
		m.n = fn;
		const uint32_t at = op(&m, OpTypeForwardPointer, 2, 10u, 5u); /* CrossWorkgroup */
		op(&m, OpTypeInt, 3, 11u, 32u, 0u);
		op(&m, OpTypeStruct, 3, 12u, 11u, 10u);
		op(&m, OpTypePointer, 3, 10u, bad ? 4u : 5u, 12u); /* 4: Workgroup, not the storage class declared */
		memcpy(&m.w[m.n], &tail.w[fn], (tail.n - fn) * 4);
		m.n += tail.n - fn;
		rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
		if (!bad) {
			CHECK_THAT(rc == SPV_OK, "a forward pointer: %s", err);
			if (rc == SPV_OK)
				zm_module_free(&out);
		} else {
			snprintf(want, sizeof(want), "word %u: OpTypeForwardPointer %%10 CrossWorkgroup: no such", at);
			CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, want), "%s", err);
		}
	}
	/* A block without a terminator. */
	kernel_module(&m, 0);
	m.w[m.n - 2] = 1u << 16 | OpNop;
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, "OpFunctionEnd inside a block"), "%s", err);
	/* A GLSL shader module. */
	kernel_module(&m, 0);
	CHECK_THAT((m.w[11] & 0xffff) == OpMemoryModel, "OpMemoryModel at word 11");
	m.w[13] = 1; /* OpMemoryModel Physical64 GLSL450 */
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, "word 11: memory model GLSL450"), "%s", err);
	m.w[13] = 2;
	m.w[12] = 1; /* Physical32 */
	rc = spv_compile(m.w, m.n * 4, &opt, &out, err, sizeof(err));
	CHECK_THAT(rc == SPV_BUILD_FAILED && strstr(err, "word 11: addressing model Physical32 is not supported"), "%s",
		   err);
}

/* ---- robustness: mutated real modules ----------------------------------------------- */

static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static void mutate_file(const char *path, unsigned count)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		CHECK_THAT(0, "cannot open %s", path);
		return;
	}
	static uint32_t buf[1 << 16], w[1 << 16];
	const size_t n = fread(buf, 4, 1 << 16, f);
	fclose(f);
	uint32_t seed = 0x9e3779b9u ^ (uint32_t)n;
	const spv_compile_options_t opt = {.max_simd = 16};
	unsigned ok = 0, translated = 0;
	for (unsigned t = 0; t < count; t++) {
		memcpy(w, buf, n * 4);
		size_t len = n;
		const unsigned edits = 1 + rnd(&seed) % 3;
		for (unsigned e = 0; e < edits; e++) {
			const size_t at = 5 + rnd(&seed) % (n - 5);
			switch (rnd(&seed) % 8 < 3 ? 1 : rnd(&seed) % 6) {
			case 0: w[at] ^= 1u << (rnd(&seed) % 32); break;             /* a bit */
			case 1: /* another id for what looks like an id: passes the reader, tests the rest */
				if (w[at] && w[at] < buf[3])
					w[at] = 1 + rnd(&seed) % (buf[3] - 1);
				else
					w[at] = rnd(&seed) % 64;
				break;
			case 2: w[at] = (w[at] & 0xffff0000u) | (rnd(&seed) % 400); break; /* another opcode */
			case 3: w[at] += (rnd(&seed) % 5 - 2) << 16; break;              /* another word count */
			case 4: len = at; break;                                          /* truncated */
			default: w[at] = w[5 + rnd(&seed) % (n - 5)]; break;              /* a copied word */
			}
		}
		zm_module_t out;
		char err[512] = "";
		const int rc = spv_compile(w, len * 4, &opt, &out, err, sizeof(err));
		spv_module_t s;
		char rerr[256];
		if (spv_read(w, len * 4, &s, rerr, sizeof(rerr)) == 0) {
			translated++;
			spv_free(&s);
		}
		if (rc == SPV_OK) {
			ok++;
			zm_module_free(&out);
		} else {
			CHECK_THAT(rc == SPV_BUILD_FAILED && err[0], "%s mutation %u: rc %d, no message", path, t, rc);
		}
	}
	printf("%s: %u mutations, %u past the reader, %u still built\n", path, count, translated, ok);
}

int main(int argc, char **argv)
{
	test_header();
	test_instructions();
	test_operands();
	test_walk();
	test_compile();
	if (argc >= 2) {
		const unsigned count = argc >= 3 ? (unsigned)atoi(argv[2]) : 300;
		DIR *d = opendir(argv[1]);
		CHECK_THAT(d != NULL, "cannot open %s", argv[1]);
		unsigned files = 0;
		for (struct dirent *e; d && (e = readdir(d));) {
			const size_t l = strlen(e->d_name);
			if (l < 5 || strcmp(e->d_name + l - 4, ".spv") != 0 || strstr(e->d_name, "unvalidated"))
				continue;
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
			mutate_file(path, count);
			files++;
		}
		if (d)
			closedir(d);
		CHECK_THAT(files >= 5, "only %u modules in %s", files, argv[1]);
	}
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("SPIR-V reader: all checks passed\n");
	return 0;
}
