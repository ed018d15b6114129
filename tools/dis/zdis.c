/* ZE-ISA disassembler: canonical text that re-assembles byte for byte. */
#include "zdis.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "zs/ze_isa.h"

struct labels {
	const zm_kernel_t *k; /* NULL for raw text */
	size_t size;
	uint8_t *is_target; /* one flag per instruction slot */
	char name[64];
};

static const char *func_at(const zm_kernel_t *k, int64_t off)
{
	for (uint32_t f = 0; k && f < k->nfuncs; f++)
		if (k->funcs[f].offset == off)
			return k->funcs[f].name;
	return NULL;
}

static const char *label_of(void *ctx, int64_t target)
{
	struct labels *l = ctx;
	if (target < 0 || (uint64_t)target > l->size || target % ZE_INST_BYTES)
		return NULL;
	const char *f = func_at(l->k, target);
	if (f)
		return f;
	snprintf(l->name, sizeof(l->name), "L%" PRId64, target);
	/* A function could be named like a generated label: keep them apart. */
	for (uint32_t i = 0; l->k && i < l->k->nfuncs; i++)
		if (strcmp(l->k->funcs[i].name, l->name) == 0)
			strcat(l->name, "_");
	return l->name;
}

static void mark_targets(struct labels *l, const uint8_t *text)
{
	size_t n = l->size / ZE_INST_BYTES;
	for (size_t i = 0; i < n; i++) {
		ze_inst_t in;
		if (ze_decode(text + i * ZE_INST_BYTES, &in, NULL, 0) || !ze_inst_has_jump(&in))
			continue;
		int64_t t = (int64_t)i * ZE_INST_BYTES + ze_jump_offset(&in);
		if (t >= 0 && (uint64_t)t <= l->size && t % ZE_INST_BYTES == 0)
			l->is_target[t / ZE_INST_BYTES] = 1;
	}
}

static void print_text(const zm_kernel_t *k, const uint8_t *text, size_t size, FILE *out)
{
	struct labels l = {k, size, calloc(size / ZE_INST_BYTES + 1, 1), {0}};
	if (!l.is_target) {
		fprintf(out, "// out of memory\n");
		return;
	}
	mark_targets(&l, text);
	size_t n = size / ZE_INST_BYTES;
	for (size_t i = 0; i <= n; i++) {
		int64_t off = (int64_t)i * ZE_INST_BYTES;
		const char *f = func_at(k, off);
		if (f && i > 0)
			fprintf(out, ".func %s\n", f);
		else if (l.is_target[i])
			fprintf(out, "%s:\n", label_of(&l, off));
		if (i == n)
			break;
		const uint8_t *b = text + i * ZE_INST_BYTES;
		ze_inst_t in;
		char err[160], line[256];
		if (ze_decode(b, &in, err, sizeof(err))) {
			fprintf(out, "        .inst");
			for (int w = 0; w < 4; w++)
				fprintf(out, " 0x%08x",
					(unsigned)(b[w * 4] | b[w * 4 + 1] << 8 | b[w * 4 + 2] << 16 |
						   (uint32_t)b[w * 4 + 3] << 24));
			fprintf(out, "   // illegal: %s\n", err);
			continue;
		}
		ze_format(&in, (uint32_t)off, label_of, &l, line, sizeof(line));
		fprintf(out, "        %s\n", line);
	}
	free(l.is_target);
}

void zdis_module(const zm_module_t *m, FILE *out)
{
	for (uint32_t i = 0; i < m->nkernels; i++) {
		const zm_kernel_t *k = &m->kernels[i];
		fprintf(out, "%s.kernel %s\n", i ? "\n" : "", k->name);
		fprintf(out, ".simd %u\n.grf %u\n.slm %u\n", k->simd, k->grf, k->slm);
		if (k->reqd_group[0])
			fprintf(out, ".reqd_group_size %u %u %u\n", k->reqd_group[0], k->reqd_group[1],
				k->reqd_group[2]);
		for (uint32_t a = 0; a < k->nargs; a++)
			fprintf(out, ".arg %s %s %u @%u\n", k->args[a].name,
				zm_arg_kind_name(k->args[a].kind), k->args[a].size,
				k->args[a].offset);
		print_text(k, k->text, k->text_size, out);
	}
}

void zdis_raw(const uint8_t *text, size_t len, FILE *out)
{
	size_t whole = len - len % ZE_INST_BYTES;
	print_text(NULL, text, whole, out);
	if (whole != len)
		fprintf(out, "// %zu trailing bytes are not a whole instruction\n", len - whole);
}
