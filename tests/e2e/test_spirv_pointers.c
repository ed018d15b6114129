/* Pointers stored in memory (tests/kernels/pointers.cl, OpenCL C 2.0): global
 * pointers loaded from buffers, structs in buffers, a table of tables, a
 * private array and a linked list, then dereferenced for loads, stores and
 * atomics, at negative offsets, converted to integers; pointers and structs
 * holding them stored to memory.  Each result
 * against the host.  Then the refusal of a local pointer stored in memory
 * (pointers_bad.cl) with its build-log message.
 *
 * Then pointers in composite values (ptr_asm.spvasm).
 *
 *     test_spirv_pointers POINTERS.spv POINTERS_BAD.spv PTR_ASM.spv */
#include "spirv.h"

#define N 128u

typedef struct job {
	const int32_t *src;
	int32_t scale;
	int32_t *dst;
	int32_t *counter;
} job_t;

typedef struct node {
	struct node *next;
	int32_t value;
} node_t;

static int32_t *ints(e2e_t *e, uint32_t n, uint32_t seed)
{
	int32_t *p = e2e_alloc_shared(e, n * 4);
	for (uint32_t i = 0; i < n; i++)
		p[i] = seed ? (int32_t)(e2e_rand(&seed) % 100000) : 0;
	return p;
}

static void ptr_table(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_table");
	int32_t *buf[4], **tab = e2e_alloc_shared(e, 4 * sizeof(int32_t *));
	for (int b = 0; b < 4; b++)
		tab[b] = buf[b] = ints(e, N + 64, 11 + b);
	int32_t *sel = ints(e, N, 5), *out = ints(e, N, 0);
	int32_t before[4][N];
	for (int b = 0; b < 4; b++)
		memcpy(before[b], buf[b], sizeof(before[b]));
	const e2e_arg_t args[] = {{8, &tab}, {8, &sel}, {8, &out}};
	spirv_launch(e, k, 16, N, 3, args);
	for (uint32_t i = 0; i < N; i++) {
		const int b = sel[i] & 3;
		EXPECT(out[i] == before[b][i] + 1, "ptr_table item %u: %d, expected %d (table %d)", i, out[i],
		       before[b][i] + 1, b);
	}
	/* p[i + 64] = i: the last writer of each element is the highest i with that table */
	for (int b = 0; b < 4; b++)
		for (uint32_t x = 64; x < N + 64; x++) {
			const uint32_t i = x - 64;
			const int32_t want = (sel[i] & 3) == b ? (int32_t)i : (x < N ? before[b][x] : buf[b][x]);
			if ((sel[i] & 3) == b)
				EXPECT(buf[b][x] == want, "ptr_table store: table %d [%u] = %d, expected %d", b, x, buf[b][x], want);
		}
	for (int b = 0; b < 4; b++)
		CHECK(zeMemFree(e->ctx, buf[b]));
	CHECK(zeMemFree(e->ctx, tab));
	CHECK(zeMemFree(e->ctx, sel));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void jobs(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "jobs");
	job_t *job = e2e_alloc_shared(e, 2 * sizeof(job_t));
	int32_t *src0 = ints(e, N, 3), *src1 = ints(e, N, 4), *dst0 = ints(e, N, 0), *dst1 = ints(e, N, 0);
	int32_t *cnt = ints(e, 2, 0), *which = ints(e, N, 9);
	job[0] = (job_t){src0, 3, dst0, &cnt[0]};
	job[1] = (job_t){src1, -7, dst1, &cnt[1]};
	const e2e_arg_t args[] = {{8, &job}, {8, &which}};
	spirv_launch(e, k, 32, N, 2, args);
	int32_t want_cnt[2] = {0, 0};
	for (uint32_t i = 0; i < N; i++) {
		const int w = which[i] & 1;
		const int32_t want = (w ? src1[i] * -7 : src0[i] * 3);
		const int32_t got = w ? dst1[i] : dst0[i];
		EXPECT(got == want, "jobs item %u (job %d): %d, expected %d", i, w, got, want);
		want_cnt[w] += (int32_t)i + 1;
	}
	EXPECT(cnt[0] == want_cnt[0] && cnt[1] == want_cnt[1], "jobs counters %d %d, expected %d %d", cnt[0], cnt[1],
	       want_cnt[0], want_cnt[1]);
	CHECK(zeMemFree(e->ctx, job));
	CHECK(zeMemFree(e->ctx, src0));
	CHECK(zeMemFree(e->ctx, src1));
	CHECK(zeMemFree(e->ctx, dst0));
	CHECK(zeMemFree(e->ctx, dst1));
	CHECK(zeMemFree(e->ctx, cnt));
	CHECK(zeMemFree(e->ctx, which));
	CHECK(zeKernelDestroy(k));
}

static void ptr_chain(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_chain");
	int32_t *leaf[4];
	int32_t **mid[2];
	int32_t ***top = e2e_alloc_shared(e, 2 * sizeof(void *));
	for (int a = 0; a < 2; a++) {
		mid[a] = e2e_alloc_shared(e, 2 * sizeof(void *));
		top[a] = mid[a];
		for (int b = 0; b < 2; b++)
			mid[a][b] = leaf[a * 2 + b] = ints(e, N, 20 + a * 2 + b);
	}
	int32_t *sel = ints(e, N, 6), *out = ints(e, N, 0);
	const e2e_arg_t args[] = {{8, &top}, {8, &sel}, {8, &out}};
	spirv_launch(e, k, 16, N, 3, args);
	for (uint32_t i = 0; i < N; i++) {
		const int s = sel[i];
		const int32_t want = leaf[(s & 1) * 2 + ((s >> 1) & 1)][i];
		EXPECT(out[i] == want, "ptr_chain item %u: %d, expected %d", i, out[i], want);
	}
	for (int a = 0; a < 4; a++)
		CHECK(zeMemFree(e->ctx, leaf[a]));
	CHECK(zeMemFree(e->ctx, mid[0]));
	CHECK(zeMemFree(e->ctx, mid[1]));
	CHECK(zeMemFree(e->ctx, top));
	CHECK(zeMemFree(e->ctx, sel));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void ptr_private(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_private");
	int32_t *a = ints(e, N, 30), *b = ints(e, N, 31), *c = ints(e, N, 32), *sel = ints(e, N, 33);
	int32_t *out = ints(e, N, 0);
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &c}, {8, &sel}, {8, &out}};
	spirv_launch(e, k, 16, N, 5, args);
	for (uint32_t i = 0; i < N; i++) {
		const int kk = sel[i] % 3;
		const int32_t want = (kk == 0 ? a : kk == 1 ? b : c)[i] * 10 + kk;
		EXPECT(out[i] == want, "ptr_private item %u: %d, expected %d", i, out[i], want);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, c));
	CHECK(zeMemFree(e->ctx, sel));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void ptr_store(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_store");
	int32_t **tab = e2e_alloc_shared(e, 2 * N * sizeof(void *));
	memset(tab, 0x5a, 2 * N * sizeof(void *));
	int32_t *a = ints(e, N, 1);
	const e2e_arg_t args[] = {{8, &tab}, {8, &a}};
	spirv_launch(e, k, 16, N, 2, args);
	for (uint32_t i = 0; i < N; i++) {
		EXPECT(tab[2 * i] == a + i, "ptr_store item %u: %p, expected %p", i, (void *)tab[2 * i], (void *)(a + i));
		EXPECT(tab[2 * i + 1] == NULL, "ptr_store item %u: null stored as %p", i, (void *)tab[2 * i + 1]);
	}
	CHECK(zeMemFree(e->ctx, tab));
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeKernelDestroy(k));
}

static void ptr_list(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_list");
	/* four lists of 12 nodes, spread over two allocations */
	node_t *pool[2] = {e2e_alloc_shared(e, 24 * sizeof(node_t)), e2e_alloc_shared(e, 24 * sizeof(node_t))};
	node_t **heads = e2e_alloc_shared(e, 4 * sizeof(void *));
	uint32_t seed = 77;
	for (int l = 0; l < 4; l++) {
		node_t *prev = NULL;
		for (int j = 11; j >= 0; j--) {
			node_t *n = &pool[(l + j) & 1][(l * 12 + j) % 24];
			n->value = (int32_t)(e2e_rand(&seed) % 1000);
			n->next = prev;
			prev = n;
		}
		heads[l] = prev;
	}
	int32_t *steps = ints(e, N, 0), *out = ints(e, N, 0);
	for (uint32_t i = 0; i < N; i++)
		steps[i] = (int32_t)(e2e_rand(&seed) % 13);
	const e2e_arg_t args[] = {{8, &heads}, {8, &steps}, {8, &out}};
	spirv_launch(e, k, 16, N, 3, args);
	for (uint32_t i = 0; i < N; i++) {
		int32_t want = 0;
		const node_t *n = heads[i & 3];
		for (int s = 0; s < steps[i]; s++, n = n->next)
			want += n->value;
		EXPECT(out[i] == want, "ptr_list item %u (%d steps): %d, expected %d", i, steps[i], out[i], want);
	}
	CHECK(zeMemFree(e->ctx, pool[0]));
	CHECK(zeMemFree(e->ctx, pool[1]));
	CHECK(zeMemFree(e->ctx, heads));
	CHECK(zeMemFree(e->ctx, steps));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void ptr_struct_copy(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_struct_copy");
	job_t *in = e2e_alloc_shared(e, N * sizeof(job_t)), *out = e2e_alloc_shared(e, N * sizeof(job_t));
	int32_t *x = ints(e, N, 40), *other = ints(e, N, 0);
	for (uint32_t i = 0; i < N; i++)
		in[i] = (job_t){x + i, (int32_t)i * 3 - 100, x + N - 1 - i, (int32_t *)(uintptr_t)(0x1000u * i)};
	const e2e_arg_t args[] = {{8, &in}, {8, &out}, {8, &other}};
	spirv_launch(e, k, 16, N, 3, args);
	for (uint32_t i = 0; i < N; i++) {
		EXPECT(out[i].src == in[i].src && out[i].scale == in[i].scale && out[i].dst == other + i &&
			       out[i].counter == in[i].counter,
		       "ptr_struct_copy item %u: {%p %d %p %p}, expected {%p %d %p %p}", i, (void *)out[i].src, out[i].scale,
		       (void *)out[i].dst, (void *)out[i].counter, (void *)in[i].src, in[i].scale, (void *)(other + i),
		       (void *)in[i].counter);
		EXPECT(other[i] == in[i].scale, "ptr_struct_copy item %u: stored %d, expected %d", i, other[i], in[i].scale);
	}
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, x));
	CHECK(zeMemFree(e->ctx, other));
	CHECK(zeKernelDestroy(k));
}

static void ptr_negative(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_negative");
	int32_t *buf[4], **tab = e2e_alloc_shared(e, 4 * sizeof(int32_t *));
	for (int b = 0; b < 4; b++)
		tab[b] = buf[b] = ints(e, 128, 50 + b);
	int32_t *sel = ints(e, N, 51), *out = ints(e, N, 0);
	uint64_t *addr = e2e_alloc_shared(e, N * 8);
	const e2e_arg_t args[] = {{8, &tab}, {8, &sel}, {8, &out}, {8, &addr}};
	spirv_launch(e, k, 16, N, 4, args);
	for (uint32_t i = 0; i < N; i++) {
		const int b = sel[i] & 3;
		EXPECT(out[i] == buf[b][100 - (i & 63)], "ptr_negative item %u: %d, expected %d", i, out[i],
		       buf[b][100 - (i & 63)]);
		EXPECT(addr[i] == (uint64_t)(uintptr_t)buf[b], "ptr_negative item %u: address %#llx, expected %p", i,
		       (unsigned long long)addr[i], (void *)buf[b]);
	}
	for (int b = 0; b < 4; b++)
		CHECK(zeMemFree(e->ctx, buf[b]));
	CHECK(zeMemFree(e->ctx, tab));
	CHECK(zeMemFree(e->ctx, sel));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, addr));
	CHECK(zeKernelDestroy(k));
}

static void byval(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "byval");
	struct params {
		int32_t scale;
		int16_t bias;
		int8_t shift;
		int64_t big;
	} p = {-13, 1234, 3, 0x123456789abcLL};
	int32_t *src = ints(e, N, 60), *out = ints(e, N, 0);
	int64_t *out64 = e2e_alloc_shared(e, N * 8);
	const e2e_arg_t args[] = {{sizeof(p), &p}, {8, &src}, {8, &out}, {8, &out64}};
	spirv_launch(e, k, 16, N, 4, args);
	for (uint32_t i = 0; i < N; i++) {
		const int32_t want = ((src[i] * (i & 1 ? -p.scale : p.scale)) >> p.shift) + p.bias;
		EXPECT(out[i] == want, "byval item %u: %d, expected %d", i, out[i], want);
		EXPECT(out64[i] == p.big + i, "byval item %u: %lld, expected %lld", i, (long long)out64[i],
		       (long long)(p.big + i));
	}
	CHECK(zeMemFree(e->ctx, src));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, out64));
	CHECK(zeKernelDestroy(k));
}

/* ptr_asm.spvasm: pointers put into composite values and taken out of them. */
static void composite(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "ptr_composite");
	struct s {
		uint32_t *p;
		uint32_t v;
	} *out = e2e_alloc_shared(e, 2 * N * sizeof(struct s));
	uint32_t *a = e2e_alloc_shared(e, 2 * N * 4);
	memset(a, 0, 2 * N * 4);
	const e2e_arg_t args[] = {{8, &a}, {8, &out}};
	spirv_launch(e, k, 16, N, 2, args);
	for (uint32_t i = 0; i < N; i++) {
		EXPECT(out[2 * i].p == a + i && out[2 * i].v == i, "ptr_composite item %u: {%p %u}, expected {%p %u}", i,
		       (void *)out[2 * i].p, out[2 * i].v, (void *)(a + i), i);
		EXPECT(out[2 * i + 1].p == a + 2 * i && out[2 * i + 1].v == i,
		       "ptr_composite item %u: inserted {%p %u}, expected {%p %u}", i, (void *)out[2 * i + 1].p,
		       out[2 * i + 1].v, (void *)(a + 2 * i), i);
		EXPECT(a[2 * i] == i + 7, "ptr_composite item %u: stored through the extracted pointer %u", i, a[2 * i]);
	}
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeKernelDestroy(k));
	CHECK(zeModuleDestroy(m));
}

static void refused(e2e_t *e, const char *path)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_handle_t m = NULL;
	char log[2048];
	const ze_result_t r = spirv_build(e, ZE_MODULE_FORMAT_IL_SPIRV, bin, size, &m, log, sizeof(log));
	EXPECT(r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "a local pointer stored in memory: 0x%x, expected a build failure",
	       (unsigned)r);
	EXPECT(strstr(log, "a pointer to local memory stored in memory") != NULL, "build log: %s", log);
	free(bin);
}

int main(int argc, char **argv)
{
	EXPECT(argc == 4, "usage: test_spirv_pointers POINTERS.spv POINTERS_BAD.spv PTR_ASM.spv");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = spirv_module(&e, argv[1]);
	ptr_table(&e, m);
	jobs(&e, m);
	ptr_chain(&e, m);
	ptr_private(&e, m);
	ptr_store(&e, m);
	ptr_list(&e, m);
	ptr_struct_copy(&e, m);
	ptr_negative(&e, m);
	byval(&e, m);
	CHECK(zeModuleDestroy(m));
	refused(&e, argv[2]);
	composite(&e, argv[3]);
	e2e_fini(&e);
	note("pointers: tables of pointers, structs of pointers, two levels, a private array, stores of pointers, a "
	     "linked list, negative offsets, pointers as integers, a struct by value; a local pointer in memory refused; pointers in composites");
	return 0;
}
