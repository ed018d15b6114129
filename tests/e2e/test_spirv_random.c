/* Random expression kernels (tests/kernels/gen_random.py, seed fixed at build time)
 * through the SPIR-V front end: every kernel of every module DIR/random_N.spv runs
 * on the inputs of DIR/random.ref (one struct per work item, or with the generator's
 * feature "arrays" one buffer per input), and each result is compared with the
 * reference computed by the generator in Python, bit for bit (a NaN matches any
 * NaN: OpenCL does not specify payloads).  Float divisions (only ever the last
 * operation of a kernel) must be within 2.5 ulp of the exact quotient, as OpenCL
 * requires; the reference gives the interval per lane.  A mismatch prints the
 * kernel, the work item, the inputs and both values, and the kernel's C body.
 *
 *     test_spirv_random DIR
 *
 * Other seeds (soak testing): see the usage comment of tests/kernels/gen_random.py. */
#include <math.h>

#include "ref_reader.h"
#include "spirv.h"

#define GROUP 64
#define MAX_ARGS 32
#define MAX_REPORTED 20 /* failing kernels printed in full */

typedef struct rtype {
	char name[16];
	unsigned size;	 /* bytes of a component */
	unsigned n;	 /* components */
	unsigned stride; /* bytes of an element in memory (a 3-vector takes 4 components) */
	int is_float, is_signed;
} rtype_t;

typedef struct rinput {
	char *name;
	rtype_t type;
	unsigned offset; /* in struct inputs */
	uint8_t *data;	 /* the values of all items */
	void *mem;	 /* "arrays": the kernel argument */
} rinput_t;

typedef struct rkernel {
	char *name;
	rtype_t type;
	int div; /* results are [lo, hi] pairs of floats */
	unsigned nargs;
	unsigned args[MAX_ARGS]; /* the inputs it reads */
	char *src;
	uint8_t *expect;
	void *out;
	ze_kernel_handle_t k;
} rkernel_t;


/* The next space-separated word of *s. */
static char *word(reader_t *r, char **s)
{
	char *w = *s;
	while (*w == ' ')
		w++;
	EXPECT(*w, "%s:%u: missing field", r->path, r->line);
	char *end = strchr(w, ' ');
	if (end) {
		*end = '\0';
		*s = end + 1;
	} else {
		*s = w + strlen(w);
	}
	return w;
}

static unsigned number(reader_t *r, char **s)
{
	char *w = word(r, s), *end;
	unsigned long v = strtoul(w, &end, 10);
	EXPECT(*end == '\0' && v < 1u << 24, "%s:%u: bad number %s", r->path, r->line, w);
	return (unsigned)v;
}

static char *keyword(reader_t *r, char **line, const char *want)
{
	char *s = next_line(r);
	char *w = word(r, &s);
	EXPECT(strcmp(w, want) == 0, "%s:%u: %s where %s was expected", r->path, r->line, w, want);
	*line = s;
	return s;
}

static rtype_t parse_type(reader_t *r, const char *name)
{
	static const struct {
		const char *base;
		unsigned size;
		int is_float, is_signed;
	} bases[] = {
		{"char", 1, 0, 1}, {"uchar", 1, 0, 0}, {"short", 2, 0, 1}, {"ushort", 2, 0, 0}, {"int", 4, 0, 1},
		{"uint", 4, 0, 0}, {"long", 8, 0, 1},  {"ulong", 8, 0, 0},  {"float", 4, 1, 1},
	};
	rtype_t t = {0};
	snprintf(t.name, sizeof(t.name), "%s", name);
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		size_t len = strlen(bases[i].base);
		if (strncmp(name, bases[i].base, len) != 0)
			continue;
		const char *count = name + len;
		unsigned n = *count ? (unsigned)atoi(count) : 1;
		if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16)
			continue;
		if (*count && n == 1)
			continue;
		t.size = bases[i].size;
		t.n = n;
		t.stride = t.size * (n == 3 ? 4 : n);
		t.is_float = bases[i].is_float;
		t.is_signed = bases[i].is_signed;
		return t;
	}
	EXPECT(0, "%s:%u: unknown type %s", r->path, r->line, name);
	return t;
}

static uint8_t *parse_hex(reader_t *r, char *s, size_t want)
{
	while (*s == ' ')
		s++;
	EXPECT(strlen(s) == 2 * want, "%s:%u: %zu hex digits, expected %zu", r->path, r->line, strlen(s), 2 * want);
	uint8_t *b = malloc(want ? want : 1);
	EXPECT(b, "out of memory");
	for (size_t i = 0; i < want; i++) {
		unsigned v;
		EXPECT(sscanf(s + 2 * i, "%2x", &v) == 1, "%s:%u: bad hex", r->path, r->line);
		b[i] = (uint8_t)v;
	}
	return b;
}

static uint64_t component(const rtype_t *t, const uint8_t *p)
{
	uint64_t v = 0;
	memcpy(&v, p, t->size); /* little endian */
	return v;
}

static float as_float(uint64_t bits)
{
	uint32_t u = (uint32_t)bits;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* A component for messages: its value and its bits. */
static void format_component(const rtype_t *t, uint64_t v, char *buf, size_t len)
{
	const unsigned shift = 64 - 8 * t->size;
	if (t->is_float)
		snprintf(buf, len, "%a [0x%08x]", (double)as_float(v), (unsigned)v);
	else if (t->is_signed)
		snprintf(buf, len, "%lld [0x%llx]", (long long)((int64_t)(v << shift) >> shift), (unsigned long long)v);
	else
		snprintf(buf, len, "%llu [0x%llx]", (unsigned long long)v, (unsigned long long)v);
}

/* One element (all components) for messages. */
static void print_element(const rtype_t *t, const uint8_t *p)
{
	if (t->n > 1)
		printf("(");
	for (unsigned c = 0; c < t->n; c++) {
		char buf[64];
		format_component(t, component(t, p + c * t->size), buf, sizeof(buf));
		printf("%s%s", c ? ", " : "", buf);
	}
	if (t->n > 1)
		printf(")");
}

/* Whether component c of item i is right; for messages, what was expected. */
static int check(const rkernel_t *k, const uint8_t *got, unsigned i, unsigned c, char *want, size_t wantlen)
{
	const rtype_t *t = &k->type;
	const uint64_t g = component(t, got + (size_t)i * t->stride + c * t->size);
	if (k->div) {
		const uint8_t *pair = k->expect + ((size_t)i * t->n + c) * 8;
		const float lo = as_float(component(t, pair)), hi = as_float(component(t, pair + 4)), x = as_float(g);
		if (isnan(lo) && isnan(hi)) {
			snprintf(want, wantlen, "a NaN");
			return isnan(x);
		}
		if (lo > hi)
			return 1; /* a divisor outside [2^-126, 2^126]: not checked */
		snprintf(want, wantlen, "within 2.5 ulp of the quotient: [%a, %a]", (double)lo, (double)hi);
		return !isnan(x) && lo <= x && x <= hi;
	}
	const uint64_t w = component(t, k->expect + (size_t)i * t->stride + c * t->size);
	format_component(t, w, want, wantlen);
	if (t->is_float)
		return g == w || (isnan(as_float(g)) && isnan(as_float(w)));
	return g == w;
}

static unsigned unchecked_lanes(const rkernel_t *k, unsigned items)
{
	unsigned count = 0;
	for (unsigned j = 0; k->div && j < items * k->type.n; j++) {
		const float lo = as_float(component(&k->type, k->expect + 8 * (size_t)j));
		const float hi = as_float(component(&k->type, k->expect + 8 * (size_t)j + 4));
		count += lo > hi;
	}
	return count;
}

/* Compares a kernel's results; prints the first failures.  Returns whether all agree. */
static int compare(const rkernel_t *k, const rinput_t *inputs, unsigned items, int report)
{
	const uint8_t *got = k->out;
	unsigned printed = 0, bad = 0;
	for (unsigned i = 0; i < items; i++) {
		for (unsigned c = 0; c < k->type.n; c++) {
			char want[128];
			if (check(k, got, i, c, want, sizeof(want)))
				continue;
			bad++;
			if (!report || printed == 2)
				break;
			printed++;
			printf("%s (%s) item %u", k->name, k->type.name, i);
			if (k->type.n > 1)
				printf(" component %u", c);
			char buf[64];
			format_component(&k->type, component(&k->type, got + (size_t)i * k->type.stride + c * k->type.size),
					 buf, sizeof(buf));
			printf(": got %s, expected %s\n  inputs:", buf, want);
			for (unsigned a = 0; a < k->nargs; a++) {
				const rinput_t *in = &inputs[k->args[a]];
				printf(" %s = ", in->name);
				print_element(&in->type, in->data + (size_t)i * in->type.stride);
				printf(";");
			}
			printf("\n");
			break;
		}
	}
	if (bad && report)
		printf("  %s: %u of %u items wrong; the kernel: %s\n", k->name, bad, items, k->src);
	return bad == 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_random DIR");
	const char *dir = argv[1];
	char path[4096];
	snprintf(path, sizeof(path), "%s/random.ref", dir);
	size_t size;
	reader_t r = {(char *)read_file(path, &size), NULL, 0, path};
	r.text = realloc(r.text, size + 1);
	EXPECT(r.text, "out of memory");
	r.text[size] = '\0';
	r.next = r.text;

	char *s;
	keyword(&r, &s, "zesim-random");
	EXPECT(number(&r, &s) == 1, "%s: format version %s, expected 1", path, s);
	char *seed = keyword(&r, &s, "seed");
	char *features = keyword(&r, &s, "features");
	keyword(&r, &s, "items");
	const unsigned items = number(&r, &s);
	EXPECT(items && items % GROUP == 0, "%s: %u items, not a multiple of %u", path, items, GROUP);
	keyword(&r, &s, "modules");
	const unsigned nmodules = number(&r, &s);

	e2e_t e;
	e2e_init(&e);
	unsigned total = 0, failed = 0, unchecked = 0;
	for (unsigned m = 0; m < nmodules; m++) {
		keyword(&r, &s, "module");
		const char *mname = word(&r, &s);
		const char *mode = word(&r, &s);
		EXPECT(strcmp(mode, "struct") == 0 || strcmp(mode, "arrays") == 0, "%s:%u: inputs %s", r.path, r.line,
		       mode);
		const int arrays = strcmp(mode, "arrays") == 0;
		const unsigned struct_size = number(&r, &s), ninputs = number(&r, &s), nkernels = number(&r, &s);
		rinput_t *inputs = calloc(ninputs + 1, sizeof(*inputs));
		rkernel_t *ks = calloc(nkernels + 1, sizeof(*ks));
		EXPECT(inputs && ks, "out of memory");
		uint8_t *in = arrays ? NULL : e2e_alloc_shared(&e, (size_t)items * struct_size);
		for (unsigned j = 0; j < ninputs; j++) {
			rinput_t *x = &inputs[j];
			keyword(&r, &s, "input");
			x->name = word(&r, &s);
			x->type = parse_type(&r, word(&r, &s));
			x->offset = number(&r, &s);
			const size_t bytes = (size_t)items * x->type.stride;
			x->data = parse_hex(&r, s, bytes);
			if (arrays) {
				x->mem = e2e_alloc_shared(&e, bytes);
				memcpy(x->mem, x->data, bytes);
				continue;
			}
			EXPECT(x->offset + x->type.stride <= struct_size, "%s:%u: %s beyond the struct", r.path, r.line,
			       x->name);
			for (unsigned i = 0; i < items; i++)
				memcpy(in + (size_t)i * struct_size + x->offset, x->data + (size_t)i * x->type.stride,
				       x->type.stride);
		}
		snprintf(path, sizeof(path), "%s/%s.spv", dir, mname);
		ze_module_handle_t mod = spirv_module(&e, path);
		for (unsigned i = 0; i < nkernels; i++) {
			rkernel_t *k = &ks[i];
			keyword(&r, &s, "kernel");
			k->name = word(&r, &s);
			k->type = parse_type(&r, word(&r, &s));
			const char *how = word(&r, &s);
			EXPECT(strcmp(how, "exact") == 0 || strcmp(how, "div") == 0, "%s:%u: check %s", r.path, r.line, how);
			k->div = strcmp(how, "div") == 0;
			EXPECT(!k->div || k->type.is_float, "%s:%u: a division check of %s", r.path, r.line, k->type.name);
			k->nargs = number(&r, &s);
			EXPECT(k->nargs < MAX_ARGS, "%s:%u: %u inputs", r.path, r.line, k->nargs);
			for (unsigned a = 0; a < k->nargs; a++) {
				const char *arg = word(&r, &s);
				unsigned j = 0;
				while (j < ninputs && strcmp(inputs[j].name, arg) != 0)
					j++;
				EXPECT(j < ninputs, "%s:%u: unknown input %s", r.path, r.line, arg);
				k->args[a] = j;
			}
			k->src = keyword(&r, &s, "src");
			keyword(&r, &s, "expect");
			const size_t out_bytes = (size_t)items * k->type.stride;
			k->expect = parse_hex(&r, s, k->div ? (size_t)items * k->type.n * 8 : out_bytes);
			k->out = e2e_alloc_shared(&e, out_bytes);
			memset(k->out, 0xa5, out_bytes); /* results never written show up */

			k->k = e2e_kernel(mod, k->name);
			e2e_arg_t args[MAX_ARGS + 1];
			unsigned nargs = 0;
			if (arrays) {
				for (unsigned a = 0; a < k->nargs; a++)
					args[nargs++] = (e2e_arg_t){8, &inputs[k->args[a]].mem};
			} else {
				args[nargs++] = (e2e_arg_t){8, &in};
			}
			args[nargs++] = (e2e_arg_t){8, &k->out};
			e2e_set_args(k->k, nargs, args);
			CHECK(zeKernelSetGroupSize(k->k, GROUP, 1, 1));
			const ze_group_count_t groups = {items / GROUP, 1, 1};
			CHECK(zeCommandListAppendLaunchKernel(e.list, k->k, &groups, NULL, 0, NULL));
		}
		e2e_run(&e);
		for (unsigned i = 0; i < nkernels; i++) {
			rkernel_t *k = &ks[i];
			failed += !compare(k, inputs, items, failed < MAX_REPORTED);
			unchecked += unchecked_lanes(k, items);
			CHECK(zeKernelDestroy(k->k));
			CHECK(zeMemFree(e.ctx, k->out));
			free(k->expect);
		}
		for (unsigned j = 0; j < ninputs; j++) {
			if (inputs[j].mem)
				CHECK(zeMemFree(e.ctx, inputs[j].mem));
			free(inputs[j].data);
		}
		if (in)
			CHECK(zeMemFree(e.ctx, in));
		CHECK(zeModuleDestroy(mod));
		free(inputs);
		free(ks);
		total += nkernels;
	}
	keyword(&r, &s, "end");
	EXPECT(failed == 0, "%u of %u random kernels disagree with the reference (seed %s, features %s)", failed,
	       total, seed, features);
	e2e_fini(&e);
	note("random: %u kernels in %u modules agree with the reference on %u work items each (seed %s; %u "
	     "division lanes with a divisor beyond 2^126 or below 2^-126 not checked)",
	     total, nmodules, items, seed, unchecked);
	free(r.text);
	return 0;
}
