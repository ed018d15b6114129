/* Helpers shared by the end-to-end tests: plain Level Zero through the
 * Debian loader, nothing zesim-specific.  A failed check prints where and
 * exits 1.  With E2E_QUIET=1 a passing test prints nothing, so CTest can
 * treat any output (e.g. from the validation layer) as a failure.  With
 * E2E_DUMP=<dir>, tests that call e2e_dump_launch/e2e_dump_results also dump
 * their launches for the cross-check against the Python ISS (iss_check.py). */
#ifndef E2E_H
#define E2E_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <level_zero/ze_api.h>

#define CHECK(call)                                                                                                   \
	do {                                                                                                          \
		ze_result_t r_ = (call);                                                                              \
		if (r_ != ZE_RESULT_SUCCESS) {                                                                        \
			printf("%s:%d: %s returned 0x%x\n", __FILE__, __LINE__, #call, (unsigned)r_);                 \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

/* A call that must fail with exactly `want`. */
#define CHECK_RESULT(want, call)                                                                                      \
	do {                                                                                                          \
		ze_result_t r_ = (call);                                                                              \
		if (r_ != (want)) {                                                                                   \
			printf("%s:%d: %s returned 0x%x, expected %s (0x%x)\n", __FILE__, __LINE__, #call,            \
			       (unsigned)r_, #want, (unsigned)(want));                                                \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

#define EXPECT(cond, ...)                                                                                             \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			printf("%s:%d: %s: ", __FILE__, __LINE__, #cond);                                             \
			printf(__VA_ARGS__);                                                                          \
			printf("\n");                                                                                 \
			exit(1);                                                                                      \
		}                                                                                                     \
	} while (0)

static inline void note(const char *fmt, ...)
{
	const char *q = getenv("E2E_QUIET");
	if (q && strcmp(q, "1") == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

typedef struct e2e {
	ze_driver_handle_t drv;
	ze_device_handle_t dev;
	ze_context_handle_t ctx;
	ze_command_queue_handle_t queue;
	ze_command_list_handle_t list;
} e2e_t;

/* zeInit, first GPU device, a context, a queue and a regular list. */
static inline void e2e_init(e2e_t *e)
{
	memset(e, 0, sizeof(*e));
	CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
	uint32_t n = 1;
	CHECK(zeDriverGet(&n, &e->drv));
	EXPECT(n == 1, "%u drivers", n);
	n = 1;
	CHECK(zeDeviceGet(e->drv, &n, &e->dev));
	EXPECT(n == 1, "%u devices", n);
	ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
	CHECK(zeContextCreate(e->drv, &cd, &e->ctx));
	ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
				      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
	CHECK(zeCommandQueueCreate(e->ctx, e->dev, &qd, &e->queue));
	ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
	CHECK(zeCommandListCreate(e->ctx, e->dev, &ld, &e->list));
}

static inline void e2e_fini(e2e_t *e)
{
	CHECK(zeCommandListDestroy(e->list));
	CHECK(zeCommandQueueDestroy(e->queue));
	CHECK(zeContextDestroy(e->ctx));
}

static inline uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	EXPECT(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	EXPECT(b && fread(b, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* Loads a native ZE-ISA module (a zesim-as output file). */
static inline ze_module_handle_t e2e_module(e2e_t *e, const char *path)
{
	size_t size;
	uint8_t *bin = read_file(path, &size);
	ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, size, bin, "", NULL};
	ze_module_handle_t m;
	ze_module_build_log_handle_t log;
	ze_result_t r = zeModuleCreate(e->ctx, e->dev, &md, &m, &log);
	if (r != ZE_RESULT_SUCCESS) {
		char text[1024] = "";
		size_t n = sizeof(text);
		zeModuleBuildLogGetString(log, &n, text);
		printf("zeModuleCreate(%s) = 0x%x: %s\n", path, (unsigned)r, text);
		exit(1);
	}
	CHECK(zeModuleBuildLogDestroy(log));
	free(bin);
	return m;
}

static inline ze_kernel_handle_t e2e_kernel(ze_module_handle_t m, const char *name)
{
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
	ze_kernel_handle_t k;
	CHECK(zeKernelCreate(m, &kd, &k));
	return k;
}

static inline void *e2e_alloc_shared(e2e_t *e, size_t size)
{
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
	void *p;
	CHECK(zeMemAllocShared(e->ctx, &dd, &hd, size, 64, e->dev, &p));
	return p;
}

static inline void *e2e_alloc_device(e2e_t *e, size_t size)
{
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	void *p;
	CHECK(zeMemAllocDevice(e->ctx, &dd, size, 64, e->dev, &p));
	return p;
}

static inline void *e2e_alloc_host(e2e_t *e, size_t size)
{
	ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
	void *p;
	CHECK(zeMemAllocHost(e->ctx, &hd, size, 64, &p));
	return p;
}

/* A queue and a command list of their own (default descriptors), e.g. for work
 * that is expected to fail its queue. */
static inline void e2e_fresh_queue(e2e_t *e, ze_command_queue_handle_t *q, ze_command_list_handle_t *l)
{
	ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
	CHECK(zeCommandQueueCreate(e->ctx, e->dev, &qd, q));
	ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
	CHECK(zeCommandListCreate(e->ctx, e->dev, &ld, l));
}

/* Close the list, run it on the queue, wait, and reset it for reuse. */
static inline void e2e_run(e2e_t *e)
{
	CHECK(zeCommandListClose(e->list));
	CHECK(zeCommandQueueExecuteCommandLists(e->queue, 1, &e->list, NULL));
	CHECK(zeCommandQueueSynchronize(e->queue, UINT64_MAX));
	CHECK(zeCommandListReset(e->list));
}

/* A kernel argument exactly as zeKernelSetArgumentValue takes it; value NULL
 * is a local argument of `size` bytes of SLM. */
typedef struct e2e_arg {
	size_t size;
	const void *value;
} e2e_arg_t;

static inline void e2e_set_args(ze_kernel_handle_t k, uint32_t nargs, const e2e_arg_t *args)
{
	for (uint32_t i = 0; i < nargs; i++) {
		ze_result_t r = zeKernelSetArgumentValue(k, i, args[i].size, args[i].value);
		EXPECT(r == ZE_RESULT_SUCCESS, "zeKernelSetArgumentValue(%u) returned 0x%x", i, (unsigned)r);
	}
}

/* Launch dumps for the cross-check against the Python ISS
 * (tests/e2e/iss_check.py).  Only with E2E_DUMP=<dir> set; otherwise both
 * calls do nothing.  Per launch, one JSON file <dir>/<kernel>-<seq>.json:
 *
 *   {"module": path, "kernel": name, "groups": [x, y, z], "group_size": [x, y, z],
 *    "args": [{"value": hex} or {"local": size}, ...],   in argument order
 *    "buffers": [{"address": "0x..", "compare": "bytes" | "dword-multiset",
 *                 "before": hex}, ...],
 *    "after": [hex, ...]}                                  same order as buffers
 *
 * Pointer arguments are GPU addresses, which in this driver are the host
 * pointers, so the buffers are read through them directly (device memory
 * included).  e2e_dump_launch, called right before the launch is appended,
 * first runs whatever the list already holds (fills, copies), so that the
 * "before" contents are what the kernel will see: in dump mode the test's
 * list is thus split in two submissions.  e2e_dump_results, called once the
 * launch has completed, adds the contents after it; the file only gets its
 * final name then, so a launch without results leaves a .part file behind. */
enum e2e_compare {
	E2E_BYTES,	   /* byte for byte */
	E2E_DWORD_MULTISET, /* the same dwords in any order: results that depend on the order of atomics */
};

typedef struct e2e_buffer {
	const void *ptr;
	size_t size;
	enum e2e_compare compare;
} e2e_buffer_t;

static struct {
	FILE *f;
	char path[4096];
	uint32_t nbuffers;
	e2e_buffer_t *buffers;
	unsigned seq;
} e2e_dump_;

static inline const char *e2e_dump_dir(void)
{
	const char *d = getenv("E2E_DUMP");
	return d && *d ? d : NULL;
}

static inline void e2e_dump_hex_(const void *p, size_t n)
{
	fputc('"', e2e_dump_.f);
	for (size_t i = 0; i < n; i++)
		fprintf(e2e_dump_.f, "%02x", ((const uint8_t *)p)[i]);
	fputc('"', e2e_dump_.f);
}

static inline void e2e_dump_string_(const char *s)
{
	fputc('"', e2e_dump_.f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', e2e_dump_.f);
		fputc(*s, e2e_dump_.f);
	}
	fputc('"', e2e_dump_.f);
}

static inline void e2e_dump_launch(e2e_t *e, const char *module_path, const char *kernel,
				   const ze_group_count_t *groups, uint32_t lx, uint32_t ly, uint32_t lz, uint32_t nargs,
				   const e2e_arg_t *args, uint32_t nbuffers, const e2e_buffer_t *buffers)
{
	const char *dir = e2e_dump_dir();
	if (!dir)
		return;
	EXPECT(!e2e_dump_.f, "e2e_dump_launch again before e2e_dump_results");
	e2e_run(e);
	char module[4096];
	EXPECT(realpath(module_path, module), "cannot resolve %s", module_path);
	snprintf(e2e_dump_.path, sizeof(e2e_dump_.path), "%s/%s-%u.json", dir, kernel, ++e2e_dump_.seq);
	char part[4200];
	snprintf(part, sizeof(part), "%s.part", e2e_dump_.path);
	e2e_dump_.f = fopen(part, "w");
	EXPECT(e2e_dump_.f, "cannot create %s", part);
	FILE *f = e2e_dump_.f;
	fprintf(f, "{\"module\": ");
	e2e_dump_string_(module);
	fprintf(f, ",\n \"kernel\": ");
	e2e_dump_string_(kernel);
	fprintf(f, ",\n \"groups\": [%u, %u, %u], \"group_size\": [%u, %u, %u],\n \"args\": [", groups->groupCountX,
		groups->groupCountY, groups->groupCountZ, lx, ly, lz);
	for (uint32_t i = 0; i < nargs; i++) {
		fprintf(f, "%s\n  {", i ? "," : "");
		if (args[i].value) {
			fprintf(f, "\"value\": ");
			e2e_dump_hex_(args[i].value, args[i].size);
		} else {
			fprintf(f, "\"local\": %zu", args[i].size);
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\n \"buffers\": [");
	for (uint32_t i = 0; i < nbuffers; i++) {
		fprintf(f, "%s\n  {\"address\": \"%#llx\", \"compare\": \"%s\", \"before\": ", i ? "," : "",
			(unsigned long long)(uintptr_t)buffers[i].ptr,
			buffers[i].compare == E2E_DWORD_MULTISET ? "dword-multiset" : "bytes");
		e2e_dump_hex_(buffers[i].ptr, buffers[i].size);
		fprintf(f, "}");
	}
	fprintf(f, "],\n");
	e2e_dump_.nbuffers = nbuffers;
	e2e_dump_.buffers = malloc(nbuffers * sizeof(*buffers) + 1);
	EXPECT(e2e_dump_.buffers, "out of memory");
	memcpy(e2e_dump_.buffers, buffers, nbuffers * sizeof(*buffers));
}

static inline void e2e_dump_results(void)
{
	if (!e2e_dump_dir())
		return;
	EXPECT(e2e_dump_.f, "e2e_dump_results without e2e_dump_launch");
	FILE *f = e2e_dump_.f;
	fprintf(f, " \"after\": [");
	for (uint32_t i = 0; i < e2e_dump_.nbuffers; i++) {
		fprintf(f, "%s\n  ", i ? "," : "");
		e2e_dump_hex_(e2e_dump_.buffers[i].ptr, e2e_dump_.buffers[i].size);
	}
	fprintf(f, "]}\n");
	EXPECT(fclose(f) == 0, "cannot write %s.part", e2e_dump_.path);
	e2e_dump_.f = NULL;
	free(e2e_dump_.buffers);
	e2e_dump_.buffers = NULL;
	char part[4200];
	snprintf(part, sizeof(part), "%s.part", e2e_dump_.path);
	EXPECT(rename(part, e2e_dump_.path) == 0, "cannot rename %s", part);
}

/* Deterministic pseudo-random numbers (xorshift). */
static inline uint32_t e2e_rand(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#endif
