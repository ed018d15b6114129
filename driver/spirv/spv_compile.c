/* The SPIR-V front end's entry points (spv_compile.h): read and validate the
 * module, scan it, translate each kernel (SIMD16, or SIMD8 when SIMD16 runs
 * out of registers), and build the ZE-ISA module. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "spv_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- arena and errors ----------------------------------------------------------- */

#define ARENA_CHUNK (256u << 10)

void *spv_alloc(spv_ctx_t *c, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (n == 0)
		n = sizeof(max_align_t);
	arena_chunk_t *a = c->arena;
	if (!a || a->size - a->used < n) {
		const size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		if (size > ((size_t)1 << 31))
			spv_fail(c, SPV_NO_WORD, "out of memory (a %zu-byte table)", size);
		a = malloc(sizeof(*a) + size);
		if (!a) {
			c->oom = 1;
			spv_fail(c, SPV_NO_WORD, "out of memory");
		}
		a->next = c->arena;
		a->used = 0;
		a->size = size;
		c->arena = a;
	}
	void *p = (char *)a->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void *spv_grow(spv_ctx_t *c, void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	void *q = spv_alloc(c, ncap * elem);
	if (p && *cap)
		memcpy(q, p, *cap * elem);
	*cap = ncap;
	return q;
}

void spv_fail(spv_ctx_t *c, uint32_t word, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err && c->errlen) {
		if (word == SPV_NO_WORD)
			snprintf(c->err, c->errlen, "%s", msg);
		else
			snprintf(c->err, c->errlen, "word %u: %s", word, msg);
	}
	longjmp(c->fail_jmp, 1);
}

static void arena_free(spv_ctx_t *c)
{
	while (c->arena) {
		arena_chunk_t *n = c->arena->next;
		free(c->arena);
		c->arena = n;
	}
}

/* ---- kernels ---------------------------------------------------------------------- */

static void reset_kernel(spv_ctx_t *c)
{
	c->fi = NULL;
	c->nfi = c->capfi = 0;
	c->fi_loc = NULL;
	c->capfiloc = 0;
	c->flat_loc = c->cur_loc = 0;
	c->priv_first = c->priv_ndw = NULL; /* vregs of the private variables: per attempt */
	c->priv_total = 0;
	c->nids = 0;
	c->vals = NULL;
	c->capvals = 0;
	c->term_of = NULL;
	c->capterm = 0;
	c->blk = NULL;
	c->nblk = 0;
	c->capblk = 0;
	c->rpo_list = NULL;
	c->nrpo = 0;
	c->blk_of_label = NULL;
	c->vr = NULL;
	c->nvr = 0;
	c->capvr = 0;
	c->cur = NULL;
	c->need_num_groups = 0;
	c->loops = NULL;
	c->nloops = 0;
	c->out = NULL;
	c->nout = c->capout = 0;
	c->args = NULL;
	c->nargs = 0;
	c->arg_bytes = 0;
	c->slm_static = 0;
	c->regalloc_failed = 0;
	c->unrolled = 0;
	free(c->snap_kernel);
	c->snap_kernel = NULL;
}

static char *dup_cstr(spv_ctx_t *c, const char *s)
{
	char *p = strdup(s);
	if (!p) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	return p;
}

/* One attempt at one SIMD width.  Returns 0, or -1 (message in c->err;
 * c->regalloc_failed when it was the registers). */
static int compile_kernel(spv_ctx_t *c, const spv_entry_t *e, uint32_t simd, zm_kernel_t *k)
{
	jmp_buf saved;
	memcpy(saved, c->fail_jmp, sizeof(jmp_buf));
	reset_kernel(c);
	if (setjmp(c->fail_jmp)) {
		memcpy(c->fail_jmp, saved, sizeof(jmp_buf));
		return -1;
	}
	c->simd = simd;
	spv_lower_kernel(c, e);
	spv_snapshot_ir(c, SPV_STAGE_IR_LOWERED);
	spv_backend(c, k);
	k->simd = simd;
	k->slm = c->slm_static;
	/* Hidden arguments after the user's: the data and printf pointers (their
	 * room is in c->arg_bytes already), then the group counts. */
	zm_arg_t hidden[2];
	const uint32_t nhidden = spv_data_hidden_args(c, hidden);
	k->arg_bytes = c->arg_bytes + (c->need_num_groups ? 12u : 0u);
	k->nargs = c->nargs + nhidden + (c->need_num_groups ? 1u : 0u);
	k->args = calloc(k->nargs + 1, sizeof(zm_arg_t));
	if (!k->args) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	for (uint32_t i = 0; i < c->nargs; i++) {
		k->args[i].kind = c->args[i].kind;
		k->args[i].offset = c->args[i].offset;
		k->args[i].size = c->args[i].size;
		k->args[i].name = dup_cstr(c, c->args[i].name);
	}
	for (uint32_t i = 0; i < nhidden; i++) {
		k->args[c->nargs + i] = hidden[i];
		k->args[c->nargs + i].name = dup_cstr(c, hidden[i].name);
	}
	if (c->need_num_groups) {
		zm_arg_t *h = &k->args[c->nargs + nhidden];
		h->kind = ZM_ARG_VALUE;
		h->offset = c->num_groups_off;
		h->size = 12;
		h->name = dup_cstr(c, SPV_HIDDEN_NUM_GROUPS);
	}
	memcpy(c->fail_jmp, saved, sizeof(jmp_buf));
	return 0;
}

static void free_kernel(zm_kernel_t *k);

/* The kept attempt's snapshot text, after the kernels before it. */
static void snapshot_append(spv_ctx_t *c, const char *text)
{
	spv_snapshot_t *s = c->opt->snapshot;
	const size_t n = strlen(text);
	char *t = realloc(s->text, s->size + n + 1);
	if (!t) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	memcpy(t + s->size, text, n + 1);
	s->text = t;
	s->size += n;
}

/* At one SIMD width: with loops unrolled (unless the options say not to),
 * and again without when that ran out of registers. */
static int compile_at(spv_ctx_t *c, const spv_entry_t *e, uint32_t simd, zm_kernel_t *k)
{
	c->no_unroll = c->opt && c->opt->no_unroll;
	int r = compile_kernel(c, e, simd, k);
	if (r && c->regalloc_failed && c->unrolled) {
		free_kernel(k);
		c->no_unroll = 1;
		r = compile_kernel(c, e, simd, k);
	}
	return r;
}

static void free_kernel(zm_kernel_t *k)
{
	for (uint32_t j = 0; k->args && j < k->nargs; j++)
		free(k->args[j].name);
	free(k->args);
	free(k->text);
	free(k->lines);
	free(k->name);
	memset(k, 0, sizeof(*k));
}

int spv_compile(const void *spirv, size_t size, const spv_compile_options_t *opt, zm_module_t *out, char *err,
		size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = 0;
	spv_module_t m;
	if (spv_read(spirv, size, &m, err, errlen))
		return strstr(err ? err : "", "out of memory") ? SPV_NO_MEMORY : SPV_BUILD_FAILED;
	spv_ctx_t *c = calloc(1, sizeof(*c));
	if (!c) {
		spv_free(&m);
		snprintf(err, errlen, "out of memory");
		return SPV_NO_MEMORY;
	}
	c->m = &m;
	c->opt = opt;
	c->err = err;
	c->errlen = errlen;
	zm_kernel_t *volatile kernels = NULL;
	volatile uint32_t nk = 0;
	int rc = SPV_BUILD_FAILED;
	if (setjmp(c->fail_jmp))
		goto out;
	spv_scan_module(c);
	spv_data_layout(c);
	/* A module without kernels (functions or data only) is valid: it is
	 * checked as far as the module scan and the data layout go. */
	kernels = calloc(c->nentries ? c->nentries : 1, sizeof(zm_kernel_t));
	if (!kernels) {
		c->oom = 1;
		spv_fail(c, SPV_NO_WORD, "out of memory");
	}
	const uint32_t max_simd = opt && opt->max_simd == 8 ? 8 : 16;
	for (uint32_t i = 0; i < c->nentries; i++) {
		const spv_entry_t *e = &c->entries[i];
		zm_kernel_t *k = &kernels[i];
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(c->entries[j].name, e->name) == 0)
				spv_fail(c, e->word, "two kernels named \"%s\"", e->name);
		uint32_t simd = max_simd;
		if (e->subgroup_size) {
			if ((e->subgroup_size != 8 && e->subgroup_size != 16) || e->subgroup_size > max_simd)
				spv_fail(c, e->word, "kernel \"%s\" requires sub-group size %u; the device has 8%s", e->name,
					 e->subgroup_size, max_simd == 16 ? " and 16" : "");
			simd = e->subgroup_size;
		}
		/* reqd_work_group_size: checked here, carried to the module, enforced
		 * by the driver (zeKernelSetGroupSize). */
		const uint64_t reqd_items = (uint64_t)e->local_size[0] * e->local_size[1] * e->local_size[2];
		if ((e->local_size[0] || e->local_size[1] || e->local_size[2]) &&
		    (reqd_items == 0 || reqd_items > ZE_MAX_REQD_GROUP_ITEMS))
			spv_fail(c, e->word,
				 "kernel \"%s\" requires group size %ux%ux%u (LocalSize): each must be at least 1 "
				 "and the product at most %u",
				 e->name, e->local_size[0], e->local_size[1], e->local_size[2], ZE_MAX_REQD_GROUP_ITEMS);
		int r = compile_at(c, e, simd, k);
		if (r && c->regalloc_failed && simd == 16 && !e->subgroup_size) {
			free_kernel(k);
			simd = 8;
			r = compile_at(c, e, simd, k);
		}
		if (r) {
			if (c->regalloc_failed)
				snprintf(err, errlen, "word %u: kernel \"%s\" needs more than %u registers at SIMD%u; "
					 "spilling is not supported yet", e->word, e->name,
					 ZE_GRF_COUNT - (opt ? opt->reserve_grfs : 0), simd);
			goto out;
		}
		k->name = dup_cstr(c, e->name);
		if (c->snap_kernel)
			snapshot_append(c, c->snap_kernel);
		if (reqd_items)
			memcpy(k->reqd_group, e->local_size, sizeof(k->reqd_group));
		nk = i + 1;
	}
	if (opt && opt->debug_lines && c->nfiles) {
		out->files = calloc(c->nfiles, sizeof(char *));
		if (!out->files) {
			c->oom = 1;
			spv_fail(c, SPV_NO_WORD, "out of memory");
		}
		out->nfiles = c->nfiles;
		for (uint32_t i = 0; i < c->nfiles; i++)
			out->files[i] = dup_cstr(c, c->files[i]);
		out->has_debug_line = 1;
	}
	spv_data_output(c, out);
	out->kernels = kernels;
	out->nkernels = nk;
	kernels = NULL;
	rc = SPV_OK;
out:
	if (rc && c->oom)
		rc = SPV_NO_MEMORY;
	if (rc)
		zm_module_free(out); /* what spv_data_output had filled in */
	if (kernels) {
		for (uint32_t i = 0; i < c->nentries; i++)
			free_kernel(&kernels[i]);
		free(kernels);
	}
	arena_free(c);
	free(c->snap_kernel);
	free(c);
	spv_free(&m);
	return rc;
}

/* The module writer writes files; the image is read back from a private
 * temporary directory. */
int spv_compile_elf(const void *spirv, size_t size, const spv_compile_options_t *opt, uint8_t **elf,
		    size_t *elf_size, char *err, size_t errlen)
{
	*elf = NULL;
	*elf_size = 0;
	zm_module_t m;
	int rc = spv_compile(spirv, size, opt, &m, err, errlen);
	if (rc)
		return rc;
	if (!m.nkernels) {
		/* (a ZE-ISA module holds at least one kernel) */
		snprintf(err, errlen, "the module has no kernels (no OpEntryPoint): no ZE-ISA module to write");
		zm_module_free(&m);
		return SPV_BUILD_FAILED;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/zesim-spirv-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "cannot create a temporary directory for the module: %s", strerror(errno));
		zm_module_free(&m);
		return SPV_BUILD_FAILED;
	}
	char path[4200];
	snprintf(path, sizeof(path), "%s/module.elf", dir);
	char why[256];
	rc = SPV_BUILD_FAILED;
	if (zm_module_write(&m, path, why, sizeof(why))) {
		snprintf(err, errlen, "writing the ZE-ISA module failed: %s", why);
	} else {
		FILE *f = fopen(path, "rb");
		long n = -1;
		if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
			*elf = malloc((size_t)n);
			if (*elf && fread(*elf, 1, (size_t)n, f) == (size_t)n) {
				*elf_size = (size_t)n;
				rc = SPV_OK;
			} else {
				free(*elf);
				*elf = NULL;
				snprintf(err, errlen, "reading the ZE-ISA module back failed");
				rc = SPV_NO_MEMORY;
			}
		} else {
			snprintf(err, errlen, "reading the ZE-ISA module back failed: %s", strerror(errno));
		}
		if (f)
			fclose(f);
		unlink(path);
	}
	rmdir(dir);
	zm_module_free(&m);
	return rc;
}
