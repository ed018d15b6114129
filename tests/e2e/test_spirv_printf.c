/* Program-scope variables and printf of SPIR-V kernels (driver/README.md,
 * "Program-scope variables and printf"), kernels tests/kernels/constdata.cl
 * and printf.cl.
 *
 *     test_spirv_printf constdata KERNEL_DIR
 *     test_spirv_printf printf KERNEL_DIR
 *
 * constdata: __constant tables indexed at run time, structs, 64-bit entries,
 * a string literal, against the same tables on the host; the variables
 * through zeModuleGetGlobalPointer; OpenCL C 2.0 __global variables (a counter
 * taken by atomics over two launches, buckets, a value the host writes).
 *
 * printf: runs itself as a child (`printf-child`) and compares all the child
 * writes (stdout and stderr, in one pipe) with the text computed here: the
 * host's own printf of the same values, and lines of the host around every
 * kind of synchronization (queue, fence, event, synchronous immediate list),
 * after which the kernels' output must have appeared. */
#include <math.h>
#include <sys/wait.h>

#include "spirv.h"

/* ---- constdata -------------------------------------------------------------- */

static const int primes[16] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
static const float weights[5] = {0.5f, -1.25f, 3.0f, 1e-3f, 65504.0f};
static const struct {
	int key;
	float scale;
	uint32_t mask;
} entries[3] = {{7, 0.5f, 0xff}, {-3, 2.0f, 0xf0f0}, {100, -1.0f, 0}};
static const uint64_t wide[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
static const char message[] = "program-scope data works";
static const uint32_t hidden[4] = {0xdeadbeef, 0xcafef00d, 0x8badf00d, 0x0ddba11};
static const int16_t shorts[5] = {-1, 2, -300, 4000, 5};

static void launch(e2e_t *e, ze_kernel_handle_t k, uint32_t group, uint32_t groups)
{
	CHECK(zeKernelSetGroupSize(k, group, 1, 1));
	ze_group_count_t gc = {groups, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e->list, k, &gc, NULL, 0, NULL));
	e2e_run(e);
}

static void *global_pointer(ze_module_handle_t m, const char *name, size_t want_size)
{
	size_t size = 0;
	void *p = NULL;
	CHECK(zeModuleGetGlobalPointer(m, name, &size, &p));
	EXPECT(p != NULL && size == want_size, "%s: %p, %zu bytes (expected %zu)", name, p, size, want_size);
	return p;
}

static void test_tables(e2e_t *e, ze_module_handle_t m)
{
	enum { N = 96 };
	ze_kernel_handle_t k = e2e_kernel(m, "lookup");
	uint32_t *idx = e2e_alloc_shared(e, N * 4);
	int32_t *oi = e2e_alloc_shared(e, N * 4);
	float *of = e2e_alloc_shared(e, N * 4);
	uint64_t *ol = e2e_alloc_shared(e, N * 8);
	uint32_t seed = 7;
	for (uint32_t i = 0; i < N; i++)
		idx[i] = e2e_rand(&seed);
	const e2e_arg_t args[] = {{8, &idx}, {8, &oi}, {8, &of}, {8, &ol}};
	e2e_set_args(k, 4, args);
	launch(e, k, 32, N / 32);
	for (uint32_t i = 0; i < N; i++) {
		const uint32_t x = idx[i];
		const int32_t wi = (int32_t)((uint32_t)primes[x & 15] * (uint32_t)entries[x % 3].key +
					     (entries[x % 3].mask & x) + hidden[x & 3]);
		const float wf = weights[x % 5] * entries[x % 3].scale;
		const uint64_t wl = wide[x & 1] ^ x;
		EXPECT(oi[i] == wi && float_bits(of[i]) == float_bits(wf) && ol[i] == wl,
		       "lookup(%u): %d %a 0x%llx, expected %d %a 0x%llx", x, oi[i], (double)of[i],
		       (unsigned long long)ol[i], wi, (double)wf, (unsigned long long)wl);
	}
	CHECK(zeKernelDestroy(k));

	/* The string, a word at a time: its bytes, then zeros. */
	k = e2e_kernel(m, "message_words");
	uint32_t *words = e2e_alloc_shared(e, 8 * 4);
	e2e_set_args(k, 1, (const e2e_arg_t[]){{8, &words}});
	launch(e, k, 7, 1);
	uint8_t want[28] = {0};
	memcpy(want, message, sizeof(message));
	EXPECT(memcmp(words, want, sizeof(want)) == 0, "message_words: \"%.28s\"", (const char *)words);
	CHECK(zeKernelDestroy(k));

	/* Loads at offsets known after inlining (folded by the front end). */
	k = e2e_kernel(m, "folded");
	e2e_set_args(k, 2, (const e2e_arg_t[]){{8, &oi}, {8, &ol}});
	launch(e, k, 32, 1);
	for (uint32_t i = 0; i < 32; i++)
		EXPECT(oi[i] == primes[5] * (int)i + primes[9] && ol[i] == wide[1] + i + wide[0],
		       "folded(%u): %d 0x%llx", i, oi[i], (unsigned long long)ol[i]);
	CHECK(zeKernelDestroy(k));

	/* 8- and 16-bit elements. */
	k = e2e_kernel(m, "narrow_tables");
	uint8_t *chars = e2e_alloc_shared(e, 32);
	int16_t *s16 = e2e_alloc_shared(e, 32 * 2);
	memset(chars, 0xee, 32);
	e2e_set_args(k, 2, (const e2e_arg_t[]){{8, &chars}, {8, &s16}});
	launch(e, k, sizeof(message), 1);
	EXPECT(memcmp(chars, message, sizeof(message)) == 0 && chars[sizeof(message)] == 0xee, "narrow_tables: \"%s\"",
	       (const char *)chars);
	for (uint32_t i = 0; i < sizeof(message); i++)
		EXPECT(s16[i] == shorts[i % 5], "s16[%u] = %d, expected %d", i, s16[i], shorts[i % 5]);
	CHECK(zeKernelDestroy(k));
	CHECK(zeMemFree(e->ctx, chars));
	CHECK(zeMemFree(e->ctx, s16));

	/* The variables through zeModuleGetGlobalPointer: exported and static. */
	EXPECT(memcmp(global_pointer(m, "primes", sizeof(primes)), primes, sizeof(primes)) == 0, "primes");
	EXPECT(memcmp(global_pointer(m, "wide", sizeof(wide)), wide, sizeof(wide)) == 0, "wide");
	EXPECT(strcmp(global_pointer(m, "message", sizeof(message)), message) == 0, "message");
	EXPECT(memcmp(global_pointer(m, "hidden", sizeof(hidden)), hidden, sizeof(hidden)) == 0, "hidden");
	const int16_t *table = global_pointer(m, "long_table", 256);
	for (int i = 0; i < 128; i++)
		EXPECT(table[i] == (i * i * 37 + 11) % 1000, "long_table[%d] = %d", i, table[i]);
	/* __attribute__((aligned(64))), also from a decoration group. */
	const char *a = global_pointer(m, "aligned_a", 3), *b = global_pointer(m, "aligned_b", 5);
	EXPECT((uintptr_t)a % 64 == 0 && (uintptr_t)b % 64 == 0 && a[2] == 3 && b[4] == 8, "aligned_a %p, aligned_b %p", a,
	       b);
	void *p = NULL;
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, zeModuleGetGlobalPointer(m, "lookup", NULL, &p));
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME, zeModuleGetGlobalPointer(m, "nothing", NULL, &p));
	CHECK(zeMemFree(e->ctx, idx));
	CHECK(zeMemFree(e->ctx, oi));
	CHECK(zeMemFree(e->ctx, of));
	CHECK(zeMemFree(e->ctx, ol));
	CHECK(zeMemFree(e->ctx, words));
}

static int cmp_int(const void *a, const void *b)
{
	const int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* OpenCL C 2.0 __global variables: one counter for all launches. */
static void test_globals(e2e_t *e, ze_module_handle_t m)
{
	enum { N = 64 };
	int32_t *counter = global_pointer(m, "counter", 4);
	float *scale = global_pointer(m, "scale", 4);
	uint32_t *buckets = global_pointer(m, "buckets", 32);
	EXPECT(*counter == 1000 && *scale == 1.5f, "initial values %d %g", *counter, (double)*scale);
	for (int b = 0; b < 8; b++)
		EXPECT(buckets[b] == 0, "bucket %d = %u", b, buckets[b]);
	ze_kernel_handle_t take = e2e_kernel(m, "take");
	int32_t *ticket = e2e_alloc_shared(e, N * 4);
	e2e_set_args(take, 1, (const e2e_arg_t[]){{8, &ticket}});
	for (int launch_no = 0; launch_no < 2; launch_no++) {
		launch(e, take, 16, N / 16);
		qsort(ticket, N, 4, cmp_int);
		for (int i = 0; i < N; i++)
			EXPECT(ticket[i] == 1000 + N * launch_no + i, "launch %d: ticket %d of %d is %d", launch_no, i, N,
			       ticket[i]);
	}
	EXPECT(*counter == 1000 + 2 * N, "counter %d after two launches", *counter);
	/* The host writes a variable; a kernel reads it and the others. */
	*scale = 2.5f;
	ze_kernel_handle_t rd = e2e_kernel(m, "read_globals");
	int32_t *out = e2e_alloc_shared(e, 9 * 4);
	float *x = e2e_alloc_shared(e, 16 * 4);
	for (int i = 0; i < 16; i++)
		x[i] = (float)i - 4.25f;
	e2e_set_args(rd, 2, (const e2e_arg_t[]){{8, &out}, {8, &x}});
	launch(e, rd, 16, 1);
	EXPECT(out[0] == 1000 + 2 * N, "counter read by a kernel: %d", out[0]);
	for (int b = 0; b < 8; b++)
		EXPECT(out[1 + b] == 2 * N / 8, "bucket %d read by a kernel: %d", b, out[1 + b]);
	for (int i = 0; i < 16; i++)
		EXPECT(x[i] == ((float)i - 4.25f) * 2.5f, "x[%d] = %g", i, (double)x[i]);
	CHECK(zeMemFree(e->ctx, ticket));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, x));
	CHECK(zeKernelDestroy(take));
	CHECK(zeKernelDestroy(rd));
}

static void test_constdata(const char *dir)
{
	e2e_t e;
	e2e_init(&e);
	ze_device_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
	CHECK(zeDeviceGetModuleProperties(e.dev, &mp));
	EXPECT(mp.printfBufferSize == 1u << 20, "printfBufferSize %u, expected the default 1 MiB", mp.printfBufferSize);
	char path[4096];
	snprintf(path, sizeof(path), "%s/constdata.spv", dir);
	ze_module_handle_t m = spirv_module(&e, path);
	test_tables(&e, m);
	CHECK(zeModuleDestroy(m));
	snprintf(path, sizeof(path), "%s/constdata20.spv", dir);
	m = spirv_module(&e, path);
	test_tables(&e, m);
	test_globals(&e, m);
	CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
}

/* ---- printf: the child -------------------------------------------------------- */

static void check_returns(const int32_t *ret, uint32_t n, int32_t (*want)(uint32_t), const char *what)
{
	for (uint32_t i = 0; i < n; i++)
		if (ret[i] != want(i)) {
			printf("host: %s: printf returned %d in work item %u, expected %d\n", what, ret[i], i, want(i));
			return;
		}
	printf("host: %s: printf returned as expected\n", what);
}

static int32_t zero(uint32_t i)
{
	(void)i;
	return 0;
}

static int32_t even_zero(uint32_t i)
{
	return i % 2 ? 7 : 0;
}

static int32_t first_ten(uint32_t i)
{
	return i < 10 ? 0 : -1;
}

static void printf_child(const char *dir)
{
	setvbuf(stdout, NULL, _IONBF, 0); /* the pipe gets stdout and stderr in the order written */
	e2e_t e;
	e2e_init(&e);
	char path[4096];
	snprintf(path, sizeof(path), "%s/printf.spv", dir);
	ze_module_handle_t m = spirv_module(&e, path);
	int32_t *ret = e2e_alloc_shared(&e, 64 * 4);
	printf("host: start\n");

	/* hello, synchronized by the queue */
	ze_kernel_handle_t k = e2e_kernel(m, "hello");
	const int32_t n = 16;
	const float f = 1.375f;
	e2e_set_args(k, 3, (const e2e_arg_t[]){{8, &ret}, {4, &n}, {4, &f}});
	launch(&e, k, 16, 1);
	printf("host: after zeCommandQueueSynchronize\n");
	check_returns(ret, 16, zero, "hello");
	CHECK(zeKernelDestroy(k));

	/* formats, synchronized by a fence */
	k = e2e_kernel(m, "formats");
	int32_t *buf = e2e_alloc_shared(&e, 64);
	const int32_t kk = 3;
	const float inf = INFINITY, nan = NAN;
	e2e_set_args(k, 5, (const e2e_arg_t[]){{8, &ret}, {4, &kk}, {4, &inf}, {4, &nan}, {8, &buf}});
	printf("host: buf + 4 = %p\n", (void *)(buf + 4));
	ze_fence_desc_t fd = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
	ze_fence_handle_t fence;
	CHECK(zeFenceCreate(e.queue, &fd, &fence));
	CHECK(zeKernelSetGroupSize(k, 1, 1, 1));
	ze_group_count_t one = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &one, NULL, 0, NULL));
	CHECK(zeCommandListClose(e.list));
	CHECK(zeCommandQueueExecuteCommandLists(e.queue, 1, &e.list, fence));
	CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
	printf("host: after zeFenceHostSynchronize\n");
	check_returns(ret, 1, zero, "formats");
	CHECK(zeFenceDestroy(fence));
	CHECK(zeCommandListReset(e.list));
	CHECK(zeKernelDestroy(k));

	/* divergent, on an asynchronous immediate list, synchronized by an event */
	ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
				      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
	ze_command_list_handle_t imm;
	CHECK(zeCommandListCreateImmediate(e.ctx, e.dev, &qd, &imm));
	ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e.ctx, &pd, 1, &e.dev, &pool));
	ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
	ze_event_handle_t ev;
	CHECK(zeEventCreate(pool, &ed, &ev));
	k = e2e_kernel(m, "divergent");
	e2e_set_args(k, 1, (const e2e_arg_t[]){{8, &ret}});
	CHECK(zeKernelSetGroupSize(k, 16, 1, 1));
	CHECK(zeCommandListAppendLaunchKernel(imm, k, &one, ev, 0, NULL));
	CHECK(zeEventHostSynchronize(ev, UINT64_MAX));
	printf("host: after zeEventHostSynchronize\n");
	check_returns(ret, 16, even_zero, "divergent");
	CHECK(zeEventDestroy(ev));
	CHECK(zeEventPoolDestroy(pool));
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeKernelDestroy(k));

	/* many, on a synchronous immediate list */
	qd.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
	CHECK(zeCommandListCreateImmediate(e.ctx, e.dev, &qd, &imm));
	k = e2e_kernel(m, "many");
	CHECK(zeKernelSetGroupSize(k, 16, 1, 1));
	ze_group_count_t four = {4, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(imm, k, &four, NULL, 0, NULL));
	printf("host: after a synchronous append\n");
	CHECK(zeCommandListDestroy(imm));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));

	/* drop: the same module again, with a printf buffer for 10 records of
	 * 12 bytes after its 16-byte header */
	setenv("ZESIM_PRINTF_BUFFER_SIZE", "136", 1);
	m = spirv_module(&e, path);
	k = e2e_kernel(m, "drop");
	unsetenv("ZESIM_PRINTF_BUFFER_SIZE");
	e2e_set_args(k, 1, (const e2e_arg_t[]){{8, &ret}});
	launch(&e, k, 16, 1);
	check_returns(ret, 16, first_ten, "drop");
	/* The buffer is empty again: the next launch prints its 10 too. */
	launch(&e, k, 16, 1);
	check_returns(ret, 16, first_ten, "drop again");
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
	CHECK(zeMemFree(e.ctx, ret));
	CHECK(zeMemFree(e.ctx, buf));
	e2e_fini(&e);
	printf("host: done\n");
}

/* ---- printf: the expected text --------------------------------------------------- */

typedef struct text {
	char *p;
	size_t n, cap;
} text_t;

static void add(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(text_t *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->n + (size_t)n + 1 > t->cap) {
		t->cap = (t->n + (size_t)n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		EXPECT(t->p != NULL, "out of memory");
	}
	va_start(ap, fmt);
	vsnprintf(t->p + t->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->n += (size_t)n;
}

/* The lines from `from` up to (excluding) the line `end`, sorted. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *sorted_block(const char *from, const char *end, const char **rest)
{
	const char *stop = strstr(from, end);
	EXPECT(stop != NULL, "no line \"%s\" in the output", end);
	*rest = stop;
	char *block = strndup(from, (size_t)(stop - from));
	char *lines[512];
	size_t nl = 0;
	for (char *s = strtok(block, "\n"); s && nl < 512; s = strtok(NULL, "\n"))
		lines[nl++] = s;
	qsort(lines, nl, sizeof(char *), cmp_str);
	text_t t = {0};
	add(&t, "%s", "");
	for (size_t i = 0; i < nl; i++)
		add(&t, "%s\n", lines[i]);
	free(block);
	return t.p;
}

static void test_printf(const char *self, const char *dir)
{
	/* The child's output, stdout and stderr together. */
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' printf-child '%s' 2>&1", self, dir);
	FILE *p = popen(cmd, "r");
	EXPECT(p != NULL, "cannot run %s", cmd);
	text_t got = {0};
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof(chunk), p)) > 0)
		add(&got, "%.*s", (int)k, chunk);
	const int status = pclose(p);
	add(&got, "%s", "");
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x):\n%s", status, got.p);

	/* What it must be. */
	text_t want = {0};
	add(&want, "host: start\n");
	const float f = 1.375f;
	for (uint32_t i = 0; i < 16; i++)
		add(&want, "item %u of %d: %f %e %g %a %c\n", i, 16, (double)(f * (float)i), (double)f,
		    (double)(f + (float)i), (double)f, 'a' + (int)i);
	add(&want, "host: after zeCommandQueueSynchronize\n");
	add(&want, "host: hello: printf returned as expected\n");
	/* formats: the address the child's host part printed */
	const char *addr_line = strstr(got.p, "host: buf + 4 = ");
	EXPECT(addr_line != NULL, "no address line in:\n%s", got.p);
	char addr[64] = "";
	sscanf(addr_line, "host: buf + 4 = %63s", addr);
	add(&want, "host: buf + 4 = %s\n", addr);
	const int x = 3;
	add(&want, "ints: %d %i %u %x %X %o|%5d|%-5d|%05d|%+d|% d|%#x|%#o\n", x, -x, x, 255 + x, 255 + x, 8 + x, x, x,
	    x, x, x, 255, 8);
	add(&want, "narrow: %hhd %hhu %hd %hu %hx\n", 300 + x, 300 + x, 70000 + x, 70000 + x, 70000 + x);
	add(&want, "longs: %lld %llu %llx %llX %lli\n", -1234567890123LL * (x + 1), 18446744073709551615ULL,
	    0x0123456789abcdefULL + x, 0xfedcba9876543210ULL, (long long)x);
	add(&want, "floats: %f %.3f %e %E %g %G %a %10.2f|%-10.1f|%+.0e\n", 3.25, (double)(2.0f / 3.0f),
	    (double)12345.678f, (double)0.00012f, (double)1e-5f, (double)123456789.0f, 1.0, (double)3.14159f, -2.5,
	    7.5);
	add(&want, "special: %f %f %f %e\n", (double)INFINITY, (double)-INFINITY, (double)NAN, -0.0);
	add(&want, "strings: %s|%s|%10s|%-4s|%.3s\n", "literal", "constant greeting", "right", "l", "constant greeting");
	add(&want, "chosen: %s\n", x > 2 ? "big" : "small");
	add(&want, "vectors: %d,%d,%d,%d %f,%f %x,%x,%x\n", 1, -2, 3, -4, 0.5, -1.5, 10u, 11u, 255u);
	add(&want, "stars: %*d|%-*d|%.*f\n", 6, x, 4, x, 2, (double)3.14159f);
	add(&want, "percent: 100%% %d%%\n", x);
	add(&want, "pointers: %p %s\n", (void *)0, addr);
	add(&want, "cannot: <zesim: cannot print \"%%q\": unsupported conversion>|"
		   "<zesim: cannot print \"%%d\": no argument left>\n");
	add(&want, "host: after zeFenceHostSynchronize\n");
	add(&want, "host: formats: printf returned as expected\n");
	for (uint32_t i = 0; i < 16; i += 2)
		add(&want, "even %u\n", i);
	add(&want, "host: after zeEventHostSynchronize\n");
	add(&want, "host: divergent: printf returned as expected\n");
	/* many: 64 lines in an order of their threads' choosing */
	const char *rest;
	const char *after_div = strstr(got.p, "host: divergent: printf returned as expected\n");
	EXPECT(after_div != NULL, "output:\n%s", got.p);
	after_div += strlen("host: divergent: printf returned as expected\n");
	char *many = sorted_block(after_div, "host: after a synchronous append\n", &rest);
	text_t many_want = {0};
	char *lines[64];
	for (uint32_t i = 0; i < 64; i++) {
		char line[64];
		snprintf(line, sizeof(line), "many %u/%u of %u", i, i / 16, 4u);
		lines[i] = strdup(line);
	}
	qsort(lines, 64, sizeof(char *), cmp_str);
	add(&many_want, "%s", "");
	for (uint32_t i = 0; i < 64; i++) {
		add(&many_want, "%s\n", lines[i]);
		free(lines[i]);
	}
	EXPECT(strcmp(many, many_want.p) == 0, "the lines of `many`, sorted:\n%s\nexpected:\n%s", many, many_want.p);
	add(&want, "%s", many);
	add(&want, "host: after a synchronous append\n");
	for (int r = 0; r < 2; r++) {
		for (uint32_t i = 0; i < 10; i++)
			add(&want, "drop %u\n", i);
		add(&want, "zesim: printf: 6 record(s) did not fit the 136-byte printf buffer and were dropped (printf "
			   "returned -1); ZESIM_PRINTF_BUFFER_SIZE sets the buffer's size\n");
		add(&want, "host: drop%s: printf returned as expected\n", r ? " again" : "");
	}
	add(&want, "host: done\n");

	/* The same output, the `many` block sorted. */
	text_t norm = {0};
	add(&norm, "%.*s%s%s", (int)(after_div - got.p), got.p, many, rest);
	if (strcmp(norm.p, want.p) != 0) {
		size_t at = 0;
		while (norm.p[at] && norm.p[at] == want.p[at])
			at++;
		printf("printf output differs at byte %zu:\n--- got:\n%s--- expected:\n%s", at, norm.p, want.p);
		exit(1);
	}
	free(many);
	free(many_want.p);
	free(norm.p);
	free(want.p);
	free(got.p);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s constdata|printf KERNEL_DIR\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "constdata") == 0)
		test_constdata(argv[2]);
	else if (strcmp(argv[1], "printf") == 0)
		test_printf(argv[0], argv[2]);
	else if (strcmp(argv[1], "printf-child") == 0)
		printf_child(argv[2]);
	else
		return 2;
	return 0;
}
