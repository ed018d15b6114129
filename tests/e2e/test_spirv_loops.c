/* Random counted-loop kernels (tests/kernels/gen_loops.py, seed fixed at build time)
 * through the SPIR-V front end's loop unrolling (driver/spirv/spv_loops.c): every
 * module DIR/loops_N.spv is built twice, as is and with -fno-unroll-loops, every kernel
 * runs on the inputs of DIR/loops.ref (scalar arguments, per-work-item inputs, a buffer
 * it reads and writes), and the output words and the buffer afterwards are compared bit
 * for bit with what the host computed from the same C (loops_ref.c).  A mismatch prints
 * the kernel, the build, the work item, the word, both values and the kernel's C body.
 *
 *     test_spirv_loops DIR
 *
 * The same program runs gen_loops.py --pipe's corpus (e2e_spirv_loops_pipe: loops whose
 * global loads run one iteration ahead, work-group loops with barriers among them, on
 * several work groups; their host reference runs a group's lanes phase by phase).
 *
 * Other seeds: see the usage comment of tests/kernels/gen_loops.py.  LOOPS_TRACE=1 names
 * each kernel on stderr before it runs (a kernel that never ends); LOOPS_BUILD=FLAGS runs
 * only the build with those flags ("" or "-fno-unroll-loops"). */
#include <signal.h>
#include <unistd.h>

#include "ref_reader.h"
#include "spirv.h"

#define GROUP 64
#define MAX_REPORTED 10 /* failing kernels printed in full */
#define WATCHDOG 20     /* seconds a kernel may take: a miscompiled loop may never end */

static char running[300]; /* the kernel launched last, for the watchdog */

static void watchdog(int sig)
{
	(void)sig;
	char msg[400];
	const int n = snprintf(msg, sizeof(msg), "test_spirv_loops: %s did not finish in %d s\n", running, WATCHDOG);
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(2);
	_exit(1);
}


/* The next line, which must start with `want`: the rest of it. */
static char *keyword(reader_t *r, const char *want)
{
	char *s = next_line(r);
	const size_t n = strlen(want);
	EXPECT(strncmp(s, want, n) == 0 && (s[n] == ' ' || s[n] == '\0'), "%s:%u: %.20s where %s was expected",
	       r->path, r->line, s, want);
	return s[n] ? s + n + 1 : s + n;
}

static uint32_t *parse_words(reader_t *r, const char *s, size_t want)
{
	EXPECT(strlen(s) == 8 * want, "%s:%u: %zu hex digits, expected %zu", r->path, r->line, strlen(s), 8 * want);
	uint32_t *w = malloc(4 * want);
	EXPECT(w, "out of memory");
	for (size_t i = 0; i < 4 * want; i++) {
		unsigned v;
		EXPECT(sscanf(s + 2 * i, "%2x", &v) == 1, "%s:%u: bad hex", r->path, r->line);
		((uint8_t *)w)[i] = (uint8_t)v; /* little endian */
	}
	return w;
}

static ze_module_handle_t build(e2e_t *e, const char *path, const char *flags)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, size, bin, flags, NULL};
	ze_module_build_log_handle_t bl = NULL;
	ze_module_handle_t m = NULL;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, &m, &bl);
	char *log = NULL;
	if (bl) {
		size_t n = 0;
		CHECK(zeModuleBuildLogGetString(bl, &n, NULL));
		log = calloc(1, n + 1);
		EXPECT(log, "out of memory");
		CHECK(zeModuleBuildLogGetString(bl, &n, log));
		CHECK(zeModuleBuildLogDestroy(bl));
	}
	if (!log)
		log = calloc(1, 1);
	EXPECT(r == ZE_RESULT_SUCCESS, "zeModuleCreate(%s, \"%s\") = 0x%x: %s", path, flags, (unsigned)r, log);
	EXPECT(log[0] == '\0', "build log of %s (\"%s\"): %s", path, flags, log);
	free(log);
	free(bin);
	return m;
}

typedef struct lkernel {
	char *name;
	uint32_t args[4];
	char *src;
	uint32_t *in, *buf, *out, *bufout;
	int failed;
} lkernel_t;

/* Compares n words; prints the first two differences. */
static unsigned compare(const lkernel_t *k, const char *what, const char *flags, const uint32_t *got,
			const uint32_t *want, unsigned n, unsigned per_item, int report)
{
	unsigned bad = 0;
	for (unsigned j = 0; j < n; j++) {
		if (got[j] == want[j])
			continue;
		if (report && bad < 2)
			printf("%s [%s]: item %u %s word %u: got 0x%08x (%d), expected 0x%08x (%d)\n", k->name,
			       flags[0] ? flags : "unrolled", j / per_item, what, j % per_item, got[j], (int)got[j], want[j],
			       (int)want[j]);
		bad++;
	}
	return bad;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_loops DIR");
	const char *dir = argv[1];
	char path[4096];
	snprintf(path, sizeof(path), "%s/loops.ref", dir);
	size_t size;
	char *text = (char *)read_file(path, &size);
	text = realloc(text, size + 1);
	EXPECT(text, "out of memory");
	text[size] = '\0';
	reader_t r = {.text = text, .next = text, .path = path};

	unsigned version, items, nin, nbuf, nout, nmodules;
	EXPECT(sscanf(keyword(&r, "zesim-loops"), "%u", &version) == 1 && version == 1, "%s: format version", path);
	const char *seed = keyword(&r, "seed");
	EXPECT(sscanf(keyword(&r, "items"), "%u", &items) == 1 && items && items % GROUP == 0, "%s: items", path);
	EXPECT(sscanf(keyword(&r, "layout"), "%u %u %u", &nin, &nbuf, &nout) == 3, "%s: layout", path);
	EXPECT(sscanf(keyword(&r, "modules"), "%u", &nmodules) == 1, "%s: modules", path);

	static const char *const flag_sets[] = {"", "-fno-unroll-loops"};
	/* Debugging: LOOPS_TRACE=1 prints each kernel on stderr before it runs,
	 * LOOPS_BUILD=FLAGS runs only the build with those flags ("" or
	 * "-fno-unroll-loops"). */
	const int trace = getenv("LOOPS_TRACE") != NULL;
	const char *only = getenv("LOOPS_BUILD");
	signal(SIGALRM, watchdog);
	e2e_t e;
	e2e_init(&e);
	uint32_t *in = e2e_alloc_shared(&e, (size_t)items * nin * 4);
	uint32_t *buf = e2e_alloc_shared(&e, (size_t)items * nbuf * 4);
	uint32_t *out = e2e_alloc_shared(&e, (size_t)items * nout * 4);
	unsigned total = 0, failed = 0, reported = 0;
	for (unsigned m = 0; m < nmodules; m++) {
		char mname[256];
		unsigned nk;
		EXPECT(sscanf(keyword(&r, "module"), "%255s %u", mname, &nk) == 2, "%s:%u: module", path, r.line);
		lkernel_t *ks = calloc(nk + 1, sizeof(*ks));
		EXPECT(ks, "out of memory");
		for (unsigned i = 0; i < nk; i++) {
			lkernel_t *k = &ks[i];
			char *s = keyword(&r, "kernel");
			k->name = s;
			char *sp = strchr(s, ' ');
			EXPECT(sp, "%s:%u: kernel line", path, r.line);
			*sp = '\0';
			EXPECT(sscanf(sp + 1, "%u %u %u %u", &k->args[0], &k->args[1], &k->args[2], &k->args[3]) == 4,
			       "%s:%u: kernel arguments", path, r.line);
			k->src = keyword(&r, "src");
			k->in = parse_words(&r, keyword(&r, "in"), (size_t)items * nin);
			k->buf = parse_words(&r, keyword(&r, "buf"), (size_t)items * nbuf);
			k->out = parse_words(&r, keyword(&r, "out"), (size_t)items * nout);
			k->bufout = parse_words(&r, keyword(&r, "bufout"), (size_t)items * nbuf);
		}
		snprintf(path, sizeof(path), "%s/%s.spv", dir, mname);
		for (unsigned f = 0; f < 2; f++) {
			if (only && strcmp(only, flag_sets[f]) != 0)
				continue;
			ze_module_handle_t mod = build(&e, path, flag_sets[f]);
			for (unsigned i = 0; i < nk; i++) {
				lkernel_t *k = &ks[i];
				memcpy(in, k->in, (size_t)items * nin * 4);
				memcpy(buf, k->buf, (size_t)items * nbuf * 4);
				memset(out, 0xa5, (size_t)items * nout * 4); /* results never written show up */
				snprintf(running, sizeof(running), "%s [%s]", k->name,
					 flag_sets[f][0] ? flag_sets[f] : "unrolled");
				if (trace)
					fprintf(stderr, "%s\n", running);
				ze_kernel_handle_t kh = e2e_kernel(mod, k->name);
				alarm(WATCHDOG);
				const e2e_arg_t args[] = {{8, &in},	      {8, &buf},	    {8, &out},
							  {4, &k->args[0]}, {4, &k->args[1]}, {4, &k->args[2]},
							  {4, &k->args[3]}};
				spirv_launch(&e, kh, GROUP, items, 7, args);
				alarm(0);
				const int report = reported < MAX_REPORTED;
				unsigned bad = compare(k, "out", flag_sets[f], out, k->out, items * nout, nout, report);
				bad += compare(k, "buf", flag_sets[f], buf, k->bufout, items * nbuf, nbuf, report);
				if (bad) {
					if (report)
						printf("  %s [%s]: %u words wrong; the kernel: %s\n", k->name,
						       flag_sets[f][0] ? flag_sets[f] : "unrolled", bad, k->src);
					reported++;
					k->failed = 1;
				}
				CHECK(zeKernelDestroy(kh));
			}
			CHECK(zeModuleDestroy(mod));
		}
		for (unsigned i = 0; i < nk; i++) {
			failed += ks[i].failed;
			free(ks[i].in);
			free(ks[i].buf);
			free(ks[i].out);
			free(ks[i].bufout);
		}
		free(ks);
		total += nk;
	}
	keyword(&r, "end");
	EXPECT(failed == 0, "%u of %u loop kernels disagree with the host reference (seed %s)", failed, total, seed);
	CHECK(zeMemFree(e.ctx, in));
	CHECK(zeMemFree(e.ctx, buf));
	CHECK(zeMemFree(e.ctx, out));
	e2e_fini(&e);
	note("loops: %u kernels in %u modules, unrolled and with -fno-unroll-loops, agree with the host reference on "
	     "%u work items each (seed %s)",
	     total, nmodules, items, seed);
	free(text);
	return 0;
}
