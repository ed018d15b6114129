/* Internals of the SPIR-V front end: the compile context shared by the
 * lowering (spv_lower.c: SPIR-V -> IR) and the back end (spv_backend.c:
 * control flow, register allocation, ZE-ISA encoding).  See README.md. */
#ifndef ZS_SPV_INTERNAL_H
#define ZS_SPV_INTERNAL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "spv_compile.h"
#include "spv_reader.h"
#include "zs/ze_isa.h"
#include "zs/ze_module.h"

/* ---- memory: one arena per compilation, freed at once (also on errors) ------ */

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
} arena_chunk_t;

typedef struct spv_ctx spv_ctx_t;
typedef struct spv_data spv_data_t;

void *spv_alloc(spv_ctx_t *c, size_t n);            /* zeroed; never NULL (longjmps on OOM) */
void *spv_grow(spv_ctx_t *c, void *p, size_t *cap, size_t need, size_t elem); /* arena array growth */
_Noreturn void spv_fail(spv_ctx_t *c, uint32_t word, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define SPV_NO_WORD UINT32_MAX

/* ---- types ------------------------------------------------------------------ */

enum ty_kind { TY_NONE, TY_VOID, TY_BOOL, TY_INT, TY_FLOAT, TY_VEC, TY_ARRAY, TY_STRUCT, TY_PTR, TY_FUNC, TY_OTHER };

typedef struct spv_type {
	uint8_t k;
	uint8_t packed;
	uint32_t width;  /* TY_INT / TY_FLOAT bits */
	uint32_t elem;   /* vector / array element type, pointee type */
	uint32_t count;  /* vector components, array length */
	uint32_t sc;     /* pointer storage class */
	uint32_t nmemb;  /* struct members */
	uint32_t *memb;  /* member types */
	uint32_t *moff;  /* member byte offsets */
	uint32_t size;   /* bytes in memory (0: not storable / unknown) */
	uint32_t align;
	uint32_t nleaf;  /* 32-bit pieces when held in registers */
	uint32_t id;
} spv_type_t;

/* ---- IR --------------------------------------------------------------------- */

enum opnd_kind {
	O_NULL, /* no operand */
	O_V,    /* virtual register (vector of the kernel's SIMD width) */
	O_GRF,  /* fixed GRF vector: the payload's local ids */
	O_S,    /* fixed GRF scalar rN.k: dispatch payload, kernel arguments */
	O_I,    /* immediate */
	O_ARF,  /* architecture register (only in code made after register allocation) */
};

typedef struct opnd {
	uint8_t k;
	uint8_t neg, abs;
	uint8_t sub; /* O_S: dword; O_V: element of a multi-element vreg */
	uint32_t v;  /* vreg, register number or immediate bits */
} opnd_t;

typedef struct inst {
	uint8_t op; /* ZE_OP_* or one of the IR_* pseudo opcodes of the back end */
	uint8_t cmod;
	uint8_t pred, pinv, flag;
	uint8_t dt, st;
	uint8_t flag_live; /* cmp: its flag is read by what follows, keep it */
	uint8_t phi_copy;  /* a mov made for a phi (a copy the allocator tries to coalesce) */
	uint8_t gmem;      /* a fence or barrier that also orders global memory */
	uint8_t simd1;     /* execution size 1 (only in code made after register allocation) */
	uint32_t desc;     /* send descriptor */
	int32_t target;    /* back end: index of the matching structured instruction */
	uint32_t loc;      /* source position (c->loc_*) + 1, 0 none */
	opnd_t d, s[3];
} inst_t;

typedef struct vreg {
	uint8_t size; /* elements (1 for almost all; 2 for a cmpxchg payload) */
	uint32_t hint; /* vreg to share a register with (copy related), or UINT32_MAX */
	int32_t reg;   /* first GRF after allocation, -1 before */
} vreg_t;

enum term_kind { TERM_NONE, TERM_BR, TERM_CBR, TERM_SWITCH, TERM_RET };

typedef struct blk {
	uint32_t label;   /* flat id of the OpLabel; 0 for a block made by edge splitting */
	uint32_t first;   /* flat instructions [first, end): OpLabel excluded, terminator included */
	uint32_t end;
	uint32_t word;    /* word offset of the block's label (messages) */
	/* control flow (block indices) */
	uint8_t term;
	opnd_t cond;       /* TERM_CBR: bool; TERM_SWITCH: selector low word */
	opnd_t cond_hi;    /* TERM_SWITCH with a 64-bit selector */
	uint8_t sel64;
	uint32_t ntarg;    /* BR 1, CBR 2 (true, false), SWITCH 1 + cases (default first) */
	uint32_t *targ;
	uint64_t *cases;   /* SWITCH: literal of targ[i + 1] */
	uint32_t nsucc, *succ; /* unique successors */
	uint32_t npred, *pred;
	uint8_t reachable;
	int32_t split_from; /* a block made by splitting the edge from this block, else -1 */
	/* IR */
	inst_t *code;
	size_t ncode, capcode;
	/* back end */
	int32_t rpo, idom;
	int32_t loop;     /* innermost loop, -1 */
	uint32_t order;   /* position in the linear order, 1-based (the value of `next`) */
} blk_t;

typedef struct loop {
	uint32_t header;
	int32_t parent;
	uint8_t *in; /* per block */
	uint32_t depth;
} loop_t;

/* A value: its 32-bit leaves, and for pointers where they point. */
/* R_DYN: a global pointer known only at run time (loaded from memory): its two
 * leaves are the 64-bit address (low, high); other pointers' second leaf is 0. */
enum root_kind { R_NONE, R_GLOBAL, R_SLM, R_BUILTIN, R_NULL, R_CONFLICT, R_PRIVATE, R_DYN };

/* IR only: a global send whose base is per lane, src2 = the high dwords of the
 * addresses (src0 the low ones); expanded after register allocation. */
#define SPV_DESC_DYN (1u << 31)

typedef struct root {
	uint8_t k;
	uint8_t breg, bsub; /* R_GLOBAL: the 64-bit base rN.k (a kernel argument) */
	uint32_t id;        /* R_BUILTIN, R_PRIVATE: the variable; R_GLOBAL: argument index */
} root_t;

typedef struct val {
	uint32_t type;
	uint32_t n;
	opnd_t *leaf;
	root_t root;
	uint8_t done;
} val_t;

/* ---- the compilation -------------------------------------------------------- */

typedef struct spv_fn {
	uint32_t id;
	uint32_t type;     /* the result type */
	uint32_t first;    /* index of OpFunction in the module's instructions */
	uint32_t end;      /* index of OpFunctionEnd */
	uint32_t nparams;
	uint32_t *params;  /* parameter ids */
	uint8_t has_body;
} spv_fn_t;

typedef struct spv_entry {
	uint32_t fn;       /* function id */
	const char *name;
	uint32_t word;
	uint32_t local_size[3];
	uint32_t subgroup_size;
} spv_entry_t;

typedef struct kernel_arg {
	char *name;
	uint32_t kind; /* ZM_ARG_* */
	uint32_t offset, size;
	uint32_t type;
	uint32_t param; /* the entry function's parameter id */
} kernel_arg_t;

struct spv_ctx {
	jmp_buf fail_jmp;
	int oom;
	int regalloc_failed;
	char *err;
	size_t errlen;
	arena_chunk_t *arena;
	const spv_module_t *m;
	const spv_compile_options_t *opt;

	/* module-level facts, indexed by original id */
	spv_type_t *types;         /* bound entries, k == TY_NONE for non-types */
	val_t *consts;             /* constants, undefs, spec constants */
	uint32_t *builtin;         /* BuiltIn decoration + 1 of variables, 0 */
	int64_t *spec_id;          /* SpecId decoration, -1 */
	uint8_t *packed;           /* CPacked */
	uint8_t *byval;            /* FuncParamAttr ByVal / Sret */
	uint8_t *ext_ok;           /* OpExtInstImport ids we translate (OpenCL.std) or ignore (NonSemantic.*) */
	const char **names;        /* OpName */
	uint32_t ptr_bytes;        /* 8: Physical64 is the one addressing model accepted */
	spv_fn_t *fns;
	uint32_t nfns;
	uint32_t *fn_index;        /* per id: index in fns + 1 */
	spv_entry_t *entries;
	uint32_t nentries;

	/* the kernel being compiled */
	uint32_t simd;
	uint32_t entry_fn;         /* id of the entry function */
	const char *kernel_name;
	uint32_t entry_word;
	kernel_arg_t *args;
	uint32_t nargs;
	uint32_t arg_bytes;
	uint32_t num_groups_off;   /* hidden argument, UINT32_MAX when unused */
	uint32_t slm_static;
	uint32_t *slm_off;         /* per id: Workgroup variable offset + 1 */
	uint32_t req_simd;

	/* the flattened (inlined) function */
	spv_inst_t *fi;            /* flat instructions */
	size_t nfi, capfi;
	uint32_t nids;             /* flat id space: module bound + fresh ids */
	val_t *vals;               /* per flat id */
	size_t capvals;
	uint32_t *term_of;         /* per flat label: the flat label of the block holding its terminator */
	size_t capterm;
	blk_t *blk;
	uint32_t nblk;
	uint32_t *rpo_list;        /* reachable blocks in reverse postorder */
	uint32_t nrpo;
	size_t capblk;
	uint32_t *blk_of_label;    /* per flat id: block index + 1 */

	/* IR */
	vreg_t *vr;
	uint32_t nvr;
	size_t capvr;
	blk_t *cur;                /* block being lowered */
	uint32_t cur_word;         /* word offset of the instruction being lowered */
	uint32_t cur_op;           /* its opcode */
	uint32_t need_num_groups;
	struct spv_data *data;     /* the data segment and printf formats (spv_data.c) */
	/* source positions (OpLine), kept over the whole compilation */
	uint32_t *fi_loc;          /* per flat instruction: position + 1, 0 none */
	size_t capfiloc;
	uint32_t flat_loc;         /* while flattening: the current OpLine */
	uint32_t cur_loc;          /* while lowering: the instruction's */
	uint32_t *loc_file, *loc_line; /* positions: file index, line */
	uint32_t nloc;
	size_t caplocf, caplocl;
	uint32_t *file_of_str;     /* per OpString id: file index + 1 */
	const char **files;        /* file names, by index */
	uint32_t nfiles;
	size_t capfiles;
	uint32_t *priv_first;      /* per flat id of a Function variable: its first dword vreg + 1 */
	uint32_t *priv_ndw;        /* and its size in dwords */
	uint32_t priv_total;       /* dwords of private memory held in registers */

	/* back end */
	int no_unroll;             /* this attempt leaves loops as they are */
	int unrolled;              /* loops unrolled in this attempt */
	loop_t *loops;
	uint32_t nloops;
	uint32_t *lin;             /* blocks in linear order */
	uint32_t next_reg;         /* GRF of the `next` block variable */
	uint32_t first_free_reg;
	uint8_t has_dyn;           /* sends through run-time pointers (SPV_DESC_DYN) */
	uint32_t dyn_reg;          /* their scratch: a vector, then a GRF for the base */
	uint32_t grf_used;
	char *snap_kernel;         /* this kernel's snapshot text (spv_snapshot.c), NULL */
	inst_t *out;               /* final instruction list */
	size_t nout, capout;
};

/* spv_lower.c */
void spv_scan_module(spv_ctx_t *c);
/* A work-item built-in: a variable decorated BuiltIn, in Input storage or,
 * as older llvm-spirv releases (SPIR-V 1.0) declare them, UniformConstant. */
int spv_builtin_var(const spv_ctx_t *c, const spv_inst_t *in);
/* Calls fn for every decoration of the module: each OpDecorate of a target,
 * and each of a decoration group's for every target of its OpGroupDecorates
 * (older llvm-spirv groups the decorations that targets share). */
typedef void (*spv_decoration_fn)(spv_ctx_t *c, uint32_t target, const spv_inst_t *d, void *ctx);
void spv_decorations(spv_ctx_t *c, spv_decoration_fn fn, void *ctx);
void spv_lower_kernel(spv_ctx_t *c, const spv_entry_t *e);

/* spv_backend.c */
void spv_cfg(spv_ctx_t *c);  /* successors, predecessors, reachability, phi-edge splitting, RPO */
int spv_pure_op(uint8_t op);  /* arithmetic without side effects (CSE, hoisting) */
void spv_rpo(spv_ctx_t *c);
void spv_snapshot_ir(spv_ctx_t *c, int stage); /* the IR now, if the options ask for this stage */  /* the reverse postorder again (c->rpo_list[0] stays the entry) */
void spv_backend(spv_ctx_t *c, zm_kernel_t *k);

/* spv_loops.c: single-block loops: invariant arithmetic hoisted, counted
 * loops unrolled, global loads one iteration ahead (before vector_loads and
 * scheduling); returns the loops changed. */
int spv_unroll_loops(spv_ctx_t *c);

/* IR helpers shared by both */
static inline opnd_t o_null(void) { return (opnd_t){O_NULL, 0, 0, 0, 0}; }
static inline opnd_t o_imm(uint32_t v) { return (opnd_t){O_I, 0, 0, 0, v}; }
static inline opnd_t o_v(uint32_t v) { return (opnd_t){O_V, 0, 0, 0, v}; }
static inline opnd_t o_s(uint32_t reg, uint32_t sub) { return (opnd_t){O_S, 0, 0, (uint8_t)sub, reg}; }
static inline opnd_t o_grf(uint32_t reg) { return (opnd_t){O_GRF, 0, 0, 0, reg}; }
uint32_t spv_new_vreg(spv_ctx_t *c, uint32_t size);
inst_t *spv_emit_to(spv_ctx_t *c, blk_t *b, const inst_t *in);

/* The IR builder (spv_lower.c), emitting into the block being lowered.  Results
 * are new vregs, or immediates when folded; operands may carry neg/abs (folded
 * into immediates); at most one immediate per instruction is kept, others are
 * moved into vregs.  Only f0 and f1 exist: a flag set by spv_cmp_flag is read
 * by the instructions that follow, before the next compare on that flag. */
opnd_t spv_alu(spv_ctx_t *c, uint8_t op, uint8_t dt, uint8_t st, opnd_t a, opnd_t b, opnd_t cc);
opnd_t spv_mov(spv_ctx_t *c, uint8_t t, opnd_t a);                   /* always a new vreg */
void spv_cmp_flag(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag);
void spv_cmp_flag_and(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b, uint8_t flag); /* flag &= a cmod b */
opnd_t spv_cmp_bool(spv_ctx_t *c, uint8_t cmod, uint8_t t, opnd_t a, opnd_t b); /* 0 / ~0 */
opnd_t spv_sel(spv_ctx_t *c, uint8_t flag, uint8_t inv, opnd_t a, opnd_t b);    /* f ? a : b (inv: !f) */
opnd_t spv_mulhu(spv_ctx_t *c, opnd_t a, opnd_t b);                   /* high 32 bits of a*b, unsigned */

val_t *spv_def_val(spv_ctx_t *c, uint32_t id, uint32_t type); /* the value of result id (leaves to fill) */
const val_t *spv_use(spv_ctx_t *c, uint32_t id);                /* an operand's value (fails if undefined) */
void spv_send(spv_ctx_t *c, uint32_t msg, uint32_t atomic, opnd_t d, opnd_t a, opnd_t p, opnd_t b);
opnd_t spv_in_grf(spv_ctx_t *c, opnd_t a);                      /* the operand as a plain GRF vector */

/* spv_printf.c: OpenCL.std printf. */
void spv_printf(spv_ctx_t *c, const spv_inst_t *in);

/* spv_data.c: program-scope variables in the module's data segment, reached
 * through the hidden argument __zs_data (R_GLOBAL roots with id
 * SPV_ROOT_DATA, offsets from the segment's start); the printf formats. */
#define SPV_ROOT_DATA 0xfffffffeu
void spv_data_layout(spv_ctx_t *c);       /* the segment, after spv_scan_module */
void spv_data_setup_kernel(spv_ctx_t *c); /* the variables a kernel uses, its hidden pointers (before lowering) */
int spv_data_root(const root_t *r);       /* a pointer into the data segment */
/* A load from a __constant variable at an offset known at compile time: its
 * initial value as immediates (32/64-bit scalars and vectors); 0 if not. */
int spv_data_fold_load(spv_ctx_t *c, const val_t *p, uint32_t type, val_t *r);
const char *spv_data_string(spv_ctx_t *c, uint32_t off); /* the NUL-terminated initial bytes at off, or NULL */
opnd_t spv_data_printf_base(spv_ctx_t *c);               /* the printf buffer's address (a send's base) */
uint32_t spv_data_printf_format(spv_ctx_t *c, const char *format, const uint32_t *args, uint32_t nargs); /* its id */
uint32_t spv_data_hidden_args(spv_ctx_t *c, zm_arg_t *out); /* the kernel's hidden pointers (names static) */
void spv_data_output(spv_ctx_t *c, zm_module_t *out);   /* segment, variables, formats into the module */

/* spv_math.c: the OpenCL.std instructions computed by code sequences (exp, log,
 * sin, floor, clz, ...), one 32-bit component at a time.  x[0..2] are the
 * operands' leaves for this component (O_NULL when absent); `is_float` says
 * whether the result is a float.  Returns 1 and sets
 * *o when it handles instruction n, 0 when n is not one of its instructions. */
int spv_math_ocl(spv_ctx_t *c, uint32_t n, const opnd_t *x, int is_float, opnd_t *o);

#endif
