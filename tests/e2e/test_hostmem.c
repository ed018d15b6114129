/* Host memory the process owns in copies, fills, region copies and timestamp
 * writes (issue 16 item 3): malloc, stack, static, a growing vector (as
 * std::vector keeps its elements) and a module's global variable
 * (zeModuleGetGlobalPointer), in every direction, through regular lists and
 * immediate lists (asynchronous and synchronous).
 *
 * Each round is a chain ordered by events: a kernel writes device memory A,
 * A is copied to host memory h1 (device→host), h1 to host memory h2
 * (host→host), h2 to device memory D (host→device), D to D2 (device→device),
 * and a kernel reads D2 into E.  Only if every copy ran at its place in the
 * queue, reading its source when it executed, does E hold the kernel's first
 * result plus the second addend.  Then: a host source changed after the append
 * and before the execution is copied with its new contents; fills, region
 * copies and timestamps into host memory.
 *
 * Usage: e2e_hostmem vadd.elf misc.elf constdata20.spv */
#include <stdbool.h>
#include <unistd.h>

#include "e2e.h"

enum { N = 1024, GLOBAL_N = 8 };

static float static_a[N], static_b[N];

/* A std::vector<float>-like buffer: heap storage that moves as it grows. */
typedef struct vec {
	float *data;
	size_t size, cap;
} vec_t;

static void vec_push(vec_t *v, float x)
{
	if (v->size == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 1;
		v->data = realloc(v->data, v->cap * sizeof(float));
		EXPECT(v->data != NULL, "realloc");
	}
	v->data[v->size++] = x;
}

typedef struct ctx {
	e2e_t e;
	ze_kernel_handle_t vadd, busy;
	ze_event_pool_handle_t pool;
	ze_event_handle_t ev[8];
	float *x, *k, *a, *d, *d2, *out; /* device (k: shared, the host changes it) */
	uint32_t *scratch;
} ctx_t;

static void reset_events(ctx_t *c)
{
	for (unsigned i = 0; i < 8; i++)
		CHECK(zeEventHostReset(c->ev[i]));
}

static void set_vadd(ctx_t *c, float *a, float *b, float *out, uint32_t n)
{
	CHECK(zeKernelSetArgumentValue(c->vadd, 0, 8, &a));
	CHECK(zeKernelSetArgumentValue(c->vadd, 1, 8, &b));
	CHECK(zeKernelSetArgumentValue(c->vadd, 2, 8, &out));
	CHECK(zeKernelSetArgumentValue(c->vadd, 3, 4, &n));
}

/* The chain of the header on list l; n floats through h1 and h2. */
static void append_chain(ctx_t *c, ze_command_list_handle_t l, float *h1, float *h2, uint32_t n)
{
	const ze_group_count_t groups = {(n + 15) / 16, 1, 1};
	const ze_group_count_t one = {1, 1, 1};
	const uint32_t iters = 3000;
	/* A slow kernel first: a copy done too early would see old data. */
	CHECK(zeKernelSetArgumentValue(c->busy, 0, 8, &c->scratch));
	CHECK(zeKernelSetArgumentValue(c->busy, 1, 4, &iters));
	CHECK(zeCommandListAppendLaunchKernel(l, c->busy, &one, NULL, 0, NULL));
	set_vadd(c, c->x, c->k, c->a, n);
	CHECK(zeCommandListAppendLaunchKernel(l, c->vadd, &groups, c->ev[0], 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(l, h1, c->a, n * 4, c->ev[1], 1, &c->ev[0]));
	CHECK(zeCommandListAppendMemoryCopy(l, h2, h1, n * 4, c->ev[2], 1, &c->ev[1]));
	CHECK(zeCommandListAppendMemoryCopy(l, c->d, h2, n * 4, c->ev[3], 1, &c->ev[2]));
	CHECK(zeCommandListAppendMemoryCopy(l, c->d2, c->d, n * 4, c->ev[4], 1, &c->ev[3]));
	set_vadd(c, c->d2, c->k, c->out, n);
	CHECK(zeCommandListAppendLaunchKernel(l, c->vadd, &groups, c->ev[5], 1, &c->ev[4]));
}

static void check_chain(ctx_t *c, const float *h1, const float *h2, uint32_t n, float kv, const char *what)
{
	for (uint32_t i = 0; i < n; i++) {
		const float first = c->x[i] + kv;
		EXPECT(h1[i] == first && h2[i] == first, "%s: host copies [%u] = %g, %g, expected %g", what, i, h1[i],
		       h2[i], first);
		EXPECT(c->out[i] == first + kv, "%s: result [%u] = %g, expected %g", what, i, c->out[i], first + kv);
	}
}

static void set_k(ctx_t *c, float kv)
{
	for (uint32_t i = 0; i < N; i++)
		c->k[i] = kv;
}

static void poison(float *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = -1.0f;
}

/* The chain through a regular list executed twice (different addends), an
 * asynchronous and a synchronous immediate list. */
static void chain_all_lists(ctx_t *c, float *h1, float *h2, uint32_t n, const char *what)
{
	e2e_t *e = &c->e;
	char label[128];
	for (int run = 0; run < 2; run++) {
		set_k(c, 10.0f + run);
		poison(h1, n);
		poison(h2, n);
		reset_events(c);
		if (run == 0)
			append_chain(c, e->list, h1, h2, n);
		if (run == 0)
			CHECK(zeCommandListClose(e->list));
		CHECK(zeCommandQueueExecuteCommandLists(e->queue, 1, &e->list, NULL));
		CHECK(zeCommandQueueSynchronize(e->queue, UINT64_MAX));
		snprintf(label, sizeof(label), "%s, regular list, run %d", what, run);
		check_chain(c, h1, h2, n, 10.0f + run, label);
	}
	CHECK(zeCommandListReset(e->list));

	for (int sync = 0; sync < 2; sync++) {
		ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
					      sync ? ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS : ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
					      ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
		ze_command_list_handle_t il;
		CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &il));
		set_k(c, 20.0f + sync);
		poison(h1, n);
		poison(h2, n);
		reset_events(c);
		append_chain(c, il, h1, h2, n);
		CHECK(zeEventHostSynchronize(c->ev[5], UINT64_MAX));
		snprintf(label, sizeof(label), "%s, immediate list (%s)", what, sync ? "synchronous" : "asynchronous");
		check_chain(c, h1, h2, n, 20.0f + sync, label);
		CHECK(zeCommandListDestroy(il));
	}
}

/* The source is read when the copy executes: changed after the append, before
 * the execution (a regular list not yet executed; an immediate list's copy
 * waiting on an event the host signals later). */
static void read_at_execution(ctx_t *c, float *src, uint32_t n)
{
	e2e_t *e = &c->e;
	for (uint32_t i = 0; i < n; i++)
		src[i] = 1.0f;
	poison(c->d, n);
	CHECK(zeCommandListAppendMemoryCopy(e->list, c->d, src, n * 4, NULL, 0, NULL));
	CHECK(zeCommandListClose(e->list));
	for (uint32_t i = 0; i < n; i++)
		src[i] = 2.0f + (float)i;
	CHECK(zeCommandQueueExecuteCommandLists(e->queue, 1, &e->list, NULL));
	CHECK(zeCommandQueueSynchronize(e->queue, UINT64_MAX));
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c->d[i] == 2.0f + (float)i, "regular list: [%u] = %g: read at append time", i, c->d[i]);
	CHECK(zeCommandListReset(e->list));

	ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
				      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
	ze_command_list_handle_t il;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &il));
	reset_events(c);
	for (uint32_t i = 0; i < n; i++)
		src[i] = 1.0f;
	poison(c->d, n);
	CHECK(zeCommandListAppendMemoryCopy(il, c->d, src, n * 4, c->ev[1], 1, &c->ev[0]));
	for (uint32_t i = 0; i < n; i++)
		src[i] = 3.0f + (float)i;
	CHECK(zeEventHostSignal(c->ev[0]));
	CHECK(zeEventHostSynchronize(c->ev[1], UINT64_MAX));
	for (uint32_t i = 0; i < n; i++)
		EXPECT(c->d[i] == 3.0f + (float)i, "immediate list: [%u] = %g: read before the wait", i, c->d[i]);
	/* Device to host: nothing written before the execution. */
	reset_events(c);
	float *dst = malloc(n * 4);
	poison(dst, n);
	CHECK(zeCommandListAppendMemoryCopy(il, dst, c->d, n * 4, c->ev[1], 1, &c->ev[0]));
	usleep(20000);
	for (uint32_t i = 0; i < n; i++)
		EXPECT(dst[i] == -1.0f, "[%u] written before the wait event was signalled", i);
	CHECK(zeEventHostSignal(c->ev[0]));
	CHECK(zeEventHostSynchronize(c->ev[1], UINT64_MAX));
	for (uint32_t i = 0; i < n; i++)
		EXPECT(dst[i] == 3.0f + (float)i, "device to host: [%u] = %g", i, dst[i]);
	free(dst);
	CHECK(zeCommandListDestroy(il));
}

/* Fills, region copies and timestamps with host memory, on list l. */
static void fills_regions_timestamps(ctx_t *c, ze_command_list_handle_t l, bool immediate, uint8_t *host,
				     const char *what)
{
	e2e_t *e = &c->e;
	enum { W = 24, H = 5, PITCH = 40 };
	memset(host, 0x5a, 1024);
	uint8_t *dev = (uint8_t *)c->d;
	memset(dev, 0, 2048);
	const uint8_t pat[4] = {1, 2, 3, 4};
	/* A fill into host memory at an odd offset keeps the pattern's phase. */
	CHECK(zeCommandListAppendMemoryFill(l, host + 3, pat, 4, 61, NULL, 0, NULL));
	/* Region host→device, then device→host into a second region. */
	uint8_t *src = host + 128;
	for (int i = 0; i < H * PITCH; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	ze_copy_region_t sr = {2, 0, 0, W, H, 0}, dr = {4, 1, 0, W, H, 0}, hr = {0, 0, 0, W, H, 0};
	CHECK(zeCommandListAppendMemoryCopyRegion(l, dev, &dr, 64, 0, src, &sr, PITCH, 0, NULL, 0, NULL));
	uint8_t *back = host + 400;
	CHECK(zeCommandListAppendMemoryCopyRegion(l, back, &hr, W + 1, 0, dev, &dr, 64, 0, NULL, 0, NULL));
	/* Timestamps: device, host, device, in that order. */
	uint64_t *dts = (uint64_t *)(dev + 1024);
	uint64_t *hts = (uint64_t *)(host + 104);
	*hts = 0;
	CHECK(zeCommandListAppendWriteGlobalTimestamp(l, &dts[0], NULL, 0, NULL));
	CHECK(zeCommandListAppendWriteGlobalTimestamp(l, hts, NULL, 0, NULL));
	CHECK(zeCommandListAppendWriteGlobalTimestamp(l, &dts[1], NULL, 0, NULL));
	if (immediate) {
		CHECK(zeCommandListAppendBarrier(l, c->ev[7], 0, NULL));
		CHECK(zeEventHostSynchronize(c->ev[7], UINT64_MAX));
	} else {
		CHECK(zeCommandListClose(l));
		CHECK(zeCommandQueueExecuteCommandLists(e->queue, 1, &l, NULL));
		CHECK(zeCommandQueueSynchronize(e->queue, UINT64_MAX));
		CHECK(zeCommandListReset(l));
	}
	for (int i = 0; i < 3; i++)
		EXPECT(host[i] == 0x5a, "%s: fill wrote byte %d before its start", what, i);
	for (int i = 0; i < 61; i++)
		EXPECT(host[3 + i] == pat[i % 4], "%s: fill byte %d = %u", what, i, host[3 + i]);
	EXPECT(host[64] == 0x5a, "%s: fill wrote past its end", what);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W + 1; x++) {
			const uint8_t want = x < W ? src[y * PITCH + 2 + x] : 0x5a;
			EXPECT(back[y * (W + 1) + x] == want, "%s: region (%d, %d) = %u, expected %u", what, x, y,
			       back[y * (W + 1) + x], want);
		}
	EXPECT(dts[0] != 0 && dts[0] <= *hts && *hts <= dts[1], "%s: timestamps %llu %llu %llu", what,
	       (unsigned long long)dts[0], (unsigned long long)*hts, (unsigned long long)dts[1]);
}

/* zeCommandListAppendQueryKernelTimestamps into host memory (contiguous and
 * with offsets), equal to what zeEventQueryKernelTimestamp reads; and
 * zeCommandListAppendMemoryCopyFromContext from host memory. */
static void kernel_timestamps_and_context_copy(ctx_t *c)
{
	e2e_t *e = &c->e;
	ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
				   ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 2};
	ze_event_pool_handle_t pool;
	CHECK(zeEventPoolCreate(e->ctx, &pd, 1, &e->dev, &pool));
	ze_event_handle_t ts[2];
	for (uint32_t i = 0; i < 2; i++) {
		ze_event_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, ZE_EVENT_SCOPE_FLAG_HOST,
				     ZE_EVENT_SCOPE_FLAG_HOST};
		CHECK(zeEventCreate(pool, &d, &ts[i]));
	}
	const ze_group_count_t one = {1, 1, 1};
	const uint32_t iters = 500;
	CHECK(zeKernelSetArgumentValue(c->busy, 0, 8, &c->scratch));
	CHECK(zeKernelSetArgumentValue(c->busy, 1, 4, &iters));
	ze_kernel_timestamp_result_t packed[2], spread[4];
	memset(packed, 0, sizeof(packed));
	memset(spread, 0, sizeof(spread));
	const size_t offsets[2] = {3 * sizeof(spread[0]), 0};
	CHECK(zeCommandListAppendLaunchKernel(e->list, c->busy, &one, ts[0], 0, NULL));
	CHECK(zeCommandListAppendLaunchKernel(e->list, c->busy, &one, ts[1], 0, NULL));
	CHECK(zeCommandListAppendQueryKernelTimestamps(e->list, 2, ts, packed, NULL, NULL, 0, NULL));
	CHECK(zeCommandListAppendQueryKernelTimestamps(e->list, 2, ts, spread, offsets, NULL, 0, NULL));
	float *src = malloc(64 * 4);
	for (int i = 0; i < 64; i++)
		src[i] = (float)i + 0.25f;
	poison(c->d, 64);
	CHECK(zeCommandListAppendMemoryCopyFromContext(e->list, c->d, e->ctx, src, 64 * 4, NULL, 0, NULL));
	e2e_run(e);
	for (int i = 0; i < 2; i++) {
		ze_kernel_timestamp_result_t want;
		CHECK(zeEventQueryKernelTimestamp(ts[i], &want));
		EXPECT(want.global.kernelEnd > want.global.kernelStart, "event %d: no timestamps", i);
		EXPECT(memcmp(&packed[i], &want, sizeof(want)) == 0, "packed result %d differs", i);
		EXPECT(memcmp(&spread[offsets[i] / sizeof(spread[0])], &want, sizeof(want)) == 0,
		       "result %d at offset %zu differs", i, offsets[i]);
	}
	EXPECT(spread[1].global.kernelStart == 0 && spread[2].global.kernelEnd == 0, "written between the offsets");
	for (int i = 0; i < 64; i++)
		EXPECT(c->d[i] == (float)i + 0.25f, "copy from context [%d] = %g", i, c->d[i]);
	free(src);
	for (int i = 0; i < 2; i++)
		CHECK(zeEventDestroy(ts[i]));
	CHECK(zeEventPoolDestroy(pool));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 4, "usage: e2e_hostmem vadd.elf misc.elf constdata20.spv");
	ctx_t c;
	e2e_t *e = &c.e;
	e2e_init(e);
	c.vadd = e2e_kernel(e2e_module(e, argv[1]), "vadd");
	c.busy = e2e_kernel(e2e_module(e, argv[2]), "busy");
	CHECK(zeKernelSetGroupSize(c.vadd, 16, 1, 1));
	CHECK(zeKernelSetGroupSize(c.busy, 8, 1, 1));
	size_t spv_size;
	uint8_t *spv = read_file(argv[3], &spv_size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_IL_SPIRV, spv_size, spv, "", NULL};
	ze_module_handle_t gm;
	CHECK(zeModuleCreate(e->ctx, e->dev, &md, &gm, NULL));
	float *global = NULL;
	size_t gsize = 0;
	CHECK(zeModuleGetGlobalPointer(gm, "buckets", &gsize, (void **)&global));
	EXPECT(gsize == GLOBAL_N * 4, "buckets: %zu bytes", gsize);

	ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 8};
	CHECK(zeEventPoolCreate(e->ctx, &pd, 1, &e->dev, &c.pool));
	for (uint32_t i = 0; i < 8; i++) {
		ze_event_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, ZE_EVENT_SCOPE_FLAG_HOST,
				     ZE_EVENT_SCOPE_FLAG_HOST};
		CHECK(zeEventCreate(c.pool, &d, &c.ev[i]));
	}
	c.x = e2e_alloc_device(e, N * 4);
	c.k = e2e_alloc_shared(e, N * 4);
	c.a = e2e_alloc_device(e, N * 4);
	c.d = e2e_alloc_device(e, N * 4);
	c.d2 = e2e_alloc_device(e, N * 4);
	c.out = e2e_alloc_device(e, N * 4);
	c.scratch = e2e_alloc_device(e, 64);
	for (uint32_t i = 0; i < N; i++)
		c.x[i] = (float)i * 0.5f;

	/* The host memory kinds, each used as h1 with the next as h2. */
	float stack_buf[N];
	float *heap = malloc(N * 4);
	vec_t v = {0};
	for (uint32_t i = 0; i < N; i++)
		vec_push(&v, 0.0f);
	float *kinds[] = {heap, stack_buf, static_a, v.data, static_b};
	const char *names[] = {"malloc", "stack", "static", "vector", "static2"};
	const unsigned nk = 4;
	char what[96];
	for (unsigned i = 0; i < nk; i++) {
		snprintf(what, sizeof(what), "%s -> %s", names[i], names[(i + 1) % nk]);
		chain_all_lists(&c, kinds[i], kinds[(i + 1) % nk], N, what);
	}
	/* The module's global variable, both as h1 and as h2. */
	chain_all_lists(&c, global, heap, GLOBAL_N, "module global -> malloc");
	chain_all_lists(&c, stack_buf, global, GLOBAL_N, "stack -> module global");

	read_at_execution(&c, heap, N);
	read_at_execution(&c, v.data, N);

	_Alignas(64) uint8_t stack_bytes[1024];
	uint8_t *heap_bytes = malloc(1024);
	static _Alignas(64) uint8_t static_bytes[1024];
	uint8_t *hosts[] = {heap_bytes, stack_bytes, static_bytes};
	const char *hnames[] = {"malloc", "stack", "static"};
	ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
				      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
	ze_command_list_handle_t il;
	CHECK(zeCommandListCreateImmediate(e->ctx, e->dev, &qd, &il));
	for (unsigned i = 0; i < 3; i++) {
		snprintf(what, sizeof(what), "%s, regular list", hnames[i]);
		fills_regions_timestamps(&c, e->list, false, hosts[i], what);
		snprintf(what, sizeof(what), "%s, immediate list", hnames[i]);
		reset_events(&c);
		fills_regions_timestamps(&c, il, true, hosts[i], what);
	}
	CHECK(zeCommandListDestroy(il));

	kernel_timestamps_and_context_copy(&c);

	/* Still refused: a range that starts in an allocation and runs past its end. */
	CHECK_RESULT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
		     zeCommandListAppendMemoryCopy(e->list, heap, (uint8_t *)c.scratch + 32, 64, NULL, 0, NULL));

	free(heap);
	free(heap_bytes);
	free(v.data);
	free(spv);
	for (uint32_t i = 0; i < 8; i++)
		CHECK(zeEventDestroy(c.ev[i]));
	CHECK(zeEventPoolDestroy(c.pool));
	CHECK(zeModuleDestroy(gm));
	e2e_fini(e);
	note("host memory in copies, fills, region copies and timestamps: ok");
	return 0;
}
