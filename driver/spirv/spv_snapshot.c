/* Program snapshots (driver/README.md, "Program snapshots"): the stages of the
 * front end's pipeline, and the text of the IR stages.  A kernel may be compiled
 * more than once (SIMD16, then SIMD8; loops unrolled, then not): each attempt
 * prints into the kernel's buffer afresh, and only the attempt that is kept is
 * appended to the module's text (spv_compile.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_internal.h"
#include "zdis.h"

const spv_stage_info_t spv_stages[SPV_NSTAGES] = {
	[SPV_STAGE_SPIRV] = {"spirv", "the SPIR-V module as given to zeModuleCreate", SPV_FMT_BINARY, SPV_FMT_BINARY},
	[SPV_STAGE_SPIRV_TRANSLATED] = {"spirv-translated",
					"the SPIR-V module the translator reads: after zeModuleDynamicLink merged "
					"its imports (spirv/spv_link.c); the module as given when it has none",
					SPV_FMT_BINARY, SPV_FMT_BINARY},
	[SPV_STAGE_IR_LOWERED] = {"ir-lowered",
				  "per kernel: calls inlined, lowered to IR on virtual registers in SPIR-V blocks "
				  "(spirv/spv_lower.c)",
				  SPV_FMT_TEXT, SPV_FMT_TEXT},
	[SPV_STAGE_IR_LOOPS] = {"ir-loops",
				"per kernel: after block merging, dead code, if-conversion, common subexpressions "
				"and the loop passes (unrolling, invariant code, loads one iteration ahead: "
				"spirv/spv_loops.c)",
				SPV_FMT_TEXT, SPV_FMT_TEXT},
	[SPV_STAGE_IR_SCHEDULED] = {"ir-scheduled",
				    "per kernel: after vector loads, list scheduling of each block and the "
				    "control-flow code of the terminators, before linearisation",
				    SPV_FMT_TEXT, SPV_FMT_TEXT},
	[SPV_STAGE_IR_ALLOCATED] = {"ir-allocated",
				    "per kernel: the linear code (guards, loops) after register allocation, "
				    "each value in its GRF, before encoding",
				    SPV_FMT_TEXT, SPV_FMT_TEXT},
	[SPV_STAGE_ZEISA] = {"zeisa",
			     "the ZE-ISA module: binary, the ELF zeModuleGetNativeBinary returns; text, its "
			     "zesim-dis assembly, which zesim-as turns back into the same bytes",
			     SPV_FMT_BINARY | SPV_FMT_TEXT, SPV_FMT_BINARY},
};

int spv_stage_by_name(const char *name)
{
	for (int i = 0; i < SPV_NSTAGES; i++)
		if (strcmp(spv_stages[i].name, name) == 0)
			return i;
	return -1;
}

static void print_opnd(FILE *f, const spv_ctx_t *c, const opnd_t *o, int allocated)
{
	if (o->neg)
		fputc('-', f);
	if (o->abs)
		fputs("(abs)", f);
	switch (o->k) {
	case O_NULL:
		fputs("null", f);
		break;
	case O_V:
		if (allocated && c->vr[o->v].reg >= 0)
			fprintf(f, "r%d", c->vr[o->v].reg + (int)o->sub * (int)(c->simd / 8));
		else if (o->sub)
			fprintf(f, "%%%u.%u", o->v, o->sub);
		else
			fprintf(f, "%%%u", o->v);
		break;
	case O_GRF:
		fprintf(f, "r%u", o->v);
		break;
	case O_S:
		fprintf(f, "r%u.%u", o->v, o->sub);
		break;
	case O_I:
		fprintf(f, "0x%x", o->v);
		break;
	}
}

static void print_inst(FILE *f, const spv_ctx_t *c, const inst_t *in, int allocated)
{
	fputs("    ", f);
	if (in->pred)
		fprintf(f, "(%sf%u) ", in->pinv ? "!" : "", in->flag);
	const ze_op_info_t *oi = ze_op_info(in->op);
	fputs(oi ? oi->mnemonic : "?", f);
	if (in->op == ZE_OP_SEND) {
		const ze_msg_info_t *mi = ze_msg_info(ze_send_msg(in->desc));
		fprintf(f, ".%s", mi ? mi->name : "?");
		if (ze_send_msg(in->desc) == ZE_MSG_ATOMIC || ze_send_msg(in->desc) == ZE_MSG_SLM_ATOMIC) {
			const char *a = ze_atomic_name((in->desc >> 8) & 0xfu);
			fprintf(f, ".%s", a ? a : "?");
		}
		if ((in->desc >> 12) & 3u)
			fprintf(f, ".v%u", ((in->desc >> 12) & 3u) + 1);
	}
	if (in->cmod) {
		const char *m = ze_cmod_name(in->cmod);
		fprintf(f, ".%s.f%u", m ? m : "?", in->flag);
	}
	if (in->op != ZE_OP_SEND && oi && strchr(oi->operands, 'd')) {
		const char *t = ze_type_suffix(in->dt);
		fprintf(f, ".%s", t ? t : "?");
	}
	if (in->op == ZE_OP_IF || in->op == ZE_OP_WHILE || in->op == ZE_OP_ENDIF) {
		if (allocated)
			fprintf(f, " @%d", in->target);
	} else {
		const opnd_t *ops[4] = {&in->d, &in->s[0], &in->s[1], &in->s[2]};
		for (int i = 0; i < 4; i++)
			if (ops[i]->k != O_NULL || i == 0) {
				if (i == 0 && in->d.k == O_NULL && in->s[0].k == O_NULL)
					break;
				fputc(' ', f);
				print_opnd(f, c, ops[i], allocated);
			}
	}
	if (in->phi_copy)
		fputs("   ; phi copy", f);
	fputc('\n', f);
}

static const char *const term_names[] = {"none", "br", "br.cond", "switch", "ret"};

/* The IR of the kernel being compiled, into its snapshot buffer. */
void spv_snapshot_ir(spv_ctx_t *c, int stage)
{
	const spv_compile_options_t *o = c->opt;
	if (!o || !o->snapshot || (int)o->snapshot->stage != stage)
		return;
	free(c->snap_kernel);
	c->snap_kernel = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&c->snap_kernel, &len);
	if (!f) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	fprintf(f, "kernel %s simd%u stage %s\n", c->kernel_name, c->simd, spv_stages[stage].name);
	if (stage == SPV_STAGE_IR_ALLOCATED) {
		fprintf(f, "  ; %zu instructions, registers r0-r%u used, `next` in r%u\n", c->nout,
			(c->grf_used > c->first_free_reg ? c->grf_used : c->first_free_reg) - 1, c->next_reg);
		for (size_t i = 0; i < c->nout; i++) {
			fprintf(f, "  %4zu:", i);
			print_inst(f, c, &c->out[i], 1);
		}
	} else {
		for (uint32_t r = 0; r < c->nrpo; r++) {
			const uint32_t b = c->rpo_list[r];
			const blk_t *bk = &c->blk[b];
			fprintf(f, "  block %u", b);
			if (bk->label)
				fprintf(f, " (label %%%u)", bk->label);
			if (bk->npred) {
				fputs(" preds", f);
				for (uint32_t i = 0; i < bk->npred; i++)
					fprintf(f, " %u", bk->pred[i]);
			}
			fputs(":\n", f);
			for (size_t i = 0; i < bk->ncode; i++)
				print_inst(f, c, &bk->code[i], 0);
			fprintf(f, "    %s", term_names[bk->term < 5 ? bk->term : 0]);
			if (bk->term == TERM_CBR || bk->term == TERM_SWITCH) {
				fputc(' ', f);
				print_opnd(f, c, &bk->cond, 0);
			}
			for (uint32_t i = 0; i < bk->ntarg; i++)
				fprintf(f, " -> %u", bk->targ[i]);
			fputc('\n', f);
		}
	}
	if (fclose(f)) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
}

int spv_disassemble(const uint8_t *elf, size_t size, char **text, size_t *len, char *err, size_t errlen)
{
	zm_module_t m;
	*text = NULL;
	*len = 0;
	if (zm_module_read_mem(elf, size, &m, err, errlen))
		return SPV_BUILD_FAILED;
	FILE *f = open_memstream(text, len);
	if (!f) {
		zm_module_free(&m);
		snprintf(err, errlen, "out of memory");
		return SPV_NO_MEMORY;
	}
	zdis_module(&m, f);
	zm_module_free(&m);
	if (fclose(f)) {
		free(*text);
		*text = NULL;
		snprintf(err, errlen, "out of memory");
		return SPV_NO_MEMORY;
	}
	return SPV_OK;
}
