/* libzesim_icount.so: zesim-icount's tool library, preloaded into a Level Zero
 * program (README.md).  Public Level Zero API only (plus the ZE-ISA and module
 * format libraries, whose formats docs/isa.md and docs/module-format.md
 * document): it interposes zeModuleCreate, builds the module as asked (adding
 * "-g -zet-profile-flags 0x3"), takes its native binary, asks
 * zetKernelGetProfileInfo which registers each kernel leaves free (r126-r127
 * in every kernel when they are), rewrites every kernel to count its basic
 * blocks, numbered over the process, with atomic adds into the dispatched
 * kernel's buffer (so code reached through calla counts for its caller), and
 * hands the program the rewritten module
 * (zeModuleCreate(ZE_MODULE_FORMAT_NATIVE)).  Counters are read when the
 * program destroys the module or its context, and at exit; the report (per
 * kernel, per source line from the module's DWARF line table) goes to
 * stderr, or to $ZESIM_ICOUNT_OUT, and as JSON lines to $ZESIM_ICOUNT_JSON (with each
 * module's original binary in $ZESIM_ICOUNT_SAVE, a folder, when set). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include "zi_rewrite.h"

typedef struct icmod icmod_t;

/* Executions of a block of another kernel's code (a function reached through
 * `calla`, or what it calls) on a kernel's behalf. */
typedef struct hit {
	icmod_t *mod;
	uint32_t block; /* index into mod->blocks */
	uint64_t n;
} hit_t;

struct icmod {
	ze_module_handle_t app, orig;
	ze_context_handle_t ctx;
	uint32_t *buffer; /* shared memory: per kernel, `capacity` counters indexed by global block; NULL once retired */
	uint32_t capacity;
	uint32_t base;      /* global index of blocks[0] (blocks are numbered over the process) */
	uint64_t *totals;   /* executions of each of blocks[] on its own kernel's behalf, read so far */
	hit_t **hits;       /* per kernel: other kernels' blocks run on its behalf */
	uint32_t *nhits;
	zi_block_t *blocks;
	uint32_t nblocks;
	zm_module_t m; /* the original module */
	uint8_t *skipped; /* per kernel: not instrumented (fewer than 2 free GRFs) */
	zi_pos_t *pos;
	uint32_t npos;
	char **files;
	uint32_t nfiles;
	int id;
	uint8_t *bin; /* the original native binary */
	size_t bin_size;
	int alias; /* the program holds `orig` (linked by zeModuleDynamicLink): calls on it go to `app` */
	struct icmod *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static icmod_t *mods;
static int next_id;
/* Global block numbering: block g of the process is block g - base of gmap[g]
 * (NULL: reserved by a module whose instrumentation then failed).  Indices are
 * never reused, so a kernel's buffer can hold the counts of any module's code. */
static icmod_t **gmap;
static uint32_t gnext;

/* Counters per kernel buffer: the most global blocks a process may have. */
static uint32_t capacity(void)
{
	const char *e = getenv("ZESIM_ICOUNT_MAX_BLOCKS");
	char *end;
	const unsigned long v = e && *e ? strtoul(e, &end, 10) : 0;
	return v && !*end && v <= (1ul << 24) ? (uint32_t)v : 65536u;
}

static ze_result_t (*real_create)(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t *,
				  ze_module_handle_t *, ze_module_build_log_handle_t *);
static ze_result_t (*real_destroy)(ze_module_handle_t);
static ze_result_t (*real_ctx_destroy)(ze_context_handle_t);
static ze_result_t (*real_native)(ze_module_handle_t, size_t *, uint8_t *);
static ze_result_t (*real_link)(uint32_t, ze_module_handle_t *, ze_module_build_log_handle_t *);
static ze_result_t (*real_kernel_create)(ze_module_handle_t, const ze_kernel_desc_t *, ze_kernel_handle_t *);
static ze_result_t (*real_global)(ze_module_handle_t, const char *, size_t *, void **);
static ze_result_t (*real_fnptr)(ze_module_handle_t, const char *, void **);

static void say(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "zesim-icount: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "\n");
}

static void resolve(void)
{
	if (!real_create) {
		real_create = (__typeof__(real_create))dlsym(RTLD_NEXT, "zeModuleCreate");
		real_destroy = (__typeof__(real_destroy))dlsym(RTLD_NEXT, "zeModuleDestroy");
		real_ctx_destroy = (__typeof__(real_ctx_destroy))dlsym(RTLD_NEXT, "zeContextDestroy");
		real_native = (__typeof__(real_native))dlsym(RTLD_NEXT, "zeModuleGetNativeBinary");
		real_link = (__typeof__(real_link))dlsym(RTLD_NEXT, "zeModuleDynamicLink");
		real_kernel_create = (__typeof__(real_kernel_create))dlsym(RTLD_NEXT, "zeKernelCreate");
		real_global = (__typeof__(real_global))dlsym(RTLD_NEXT, "zeModuleGetGlobalPointer");
		real_fnptr = (__typeof__(real_fnptr))dlsym(RTLD_NEXT, "zeModuleGetFunctionPointer");
	}
}

static void add_hit(icmod_t *c, uint32_t ki, icmod_t *m, uint32_t b, uint64_t n)
{
	hit_t *h = c->hits[ki];
	uint32_t i = 0;
	while (i < c->nhits[ki] && !(h[i].mod == m && h[i].block == b))
		i++;
	if (i == c->nhits[ki]) {
		if (!(h = realloc(h, (i + 1) * sizeof(*h)))) {
			fprintf(stderr, "zesim-icount: out of memory: counts lost\n");
			return;
		}
		c->hits[ki] = h;
		h[i] = (hit_t){m, b, 0};
		c->nhits[ki]++;
	}
	h[i].n += n;
}

/* Add this module's kernels' counters to the totals and zero them (kernels
 * using them have completed: the program destroys a module only after its
 * work).  Kernel ki's buffer holds, at global index g, the executions of block
 * g on ki's behalf: ki's own blocks, and any module's code ki's launches
 * reached through `calla`.  Called with the lock held. */
static void harvest(icmod_t *c)
{
	for (uint32_t ki = 0; ki < c->m.nkernels; ki++) {
		if (c->skipped[ki])
			continue;
		uint32_t *ctr = c->buffer + (size_t)ki * c->capacity;
		for (uint32_t g = 0; g < gnext && g < c->capacity; g++) {
			const uint32_t n = ctr[g];
			if (!n)
				continue;
			ctr[g] = 0;
			icmod_t *m = gmap[g];
			if (!m)
				continue;
			const uint32_t b = g - m->base;
			if (m == c && m->blocks[b].kernel == ki)
				c->totals[b] += n;
			else
				add_hit(c, ki, m, b, n);
		}
	}
}

/* Two free GRFs of the kernel, from its free-register token: r126 and r127
 * when both are free (the same in every kernel, so that code reached through
 * `calla` finds the caller's buffer address in rA), else the two lowest
 * (*other = 1).  -1: fewer than two are free. */
static int free_pair(ze_module_handle_t m, const char *name, unsigned *ra, unsigned *rp, int *other)
{
	ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
	ze_kernel_handle_t k;
	if (real_kernel_create(m, &kd, &k) != ZE_RESULT_SUCCESS)
		return -1;
	union {
		zet_profile_properties_t p;
		uint8_t bytes[sizeof(zet_profile_properties_t) + sizeof(zet_profile_free_register_token_t) +
			      64 * sizeof(zet_profile_register_sequence_t)];
	} u;
	memset(&u, 0, sizeof(u));
	u.p.stype = ZET_STRUCTURE_TYPE_PROFILE_PROPERTIES;
	const ze_result_t r = zetKernelGetProfileInfo(k, &u.p);
	zeKernelDestroy(k);
	if (r != ZE_RESULT_SUCCESS || u.p.numTokens < 1)
		return -1;
	zet_profile_free_register_token_t tok;
	memcpy(&tok, u.bytes + sizeof(u.p), sizeof(tok));
	uint8_t isfree[256] = {0};
	for (uint32_t i = 0; i < tok.count && i < 64; i++) {
		zet_profile_register_sequence_t s;
		memcpy(&s, u.bytes + sizeof(u.p) + sizeof(tok) + i * sizeof(s), sizeof(s));
		for (uint32_t reg = (s.start + 31) / 32; (reg + 1) * 32 <= s.start + s.count && reg < 256; reg++)
			isfree[reg] = 1;
	}
	*other = !(isfree[126] && isfree[127]);
	if (!*other) {
		*ra = 126;
		*rp = 127;
		return 0;
	}
	int found = 0;
	for (unsigned reg = 0; reg < 256 && found < 2; reg++)
		if (isfree[reg])
			*(found++ ? rp : ra) = reg;
	return found == 2 ? 0 : -1;
}

static char *with_flags(const char *flags)
{
	static const char add[] = " -g -zet-profile-flags 0x3";
	const size_t n = flags ? strlen(flags) : 0;
	char *s = malloc(n + sizeof(add));
	if (s) {
		memcpy(s, flags ? flags : "", n);
		memcpy(s + n, add, sizeof(add));
	}
	return s;
}

/* Instrument `orig`: NULL on any failure (the program then gets `orig`). */
static icmod_t *instrument(ze_context_handle_t ctx, ze_device_handle_t dev, ze_module_handle_t orig)
{
	size_t size = 0;
	if (real_native(orig, &size, NULL) != ZE_RESULT_SUCCESS || !size)
		return NULL; /* a module with imports (until linked) or without kernels */
	icmod_t *c = calloc(1, sizeof(*c));
	uint8_t *bin = malloc(size);
	char err[512], path[] = "/tmp/zesim-icount.XXXXXX";
	zm_module_t w = {0};
	int fd = -1;
	if (!c || !bin || real_native(orig, &size, bin) != ZE_RESULT_SUCCESS)
		goto fail;
	if (zm_module_read_mem(bin, size, &c->m, err, sizeof(err)) || zm_module_read_mem(bin, size, &w, err, sizeof(err)))
		goto fail;
	zi_read_lines(bin, size, &c->pos, &c->npos, &c->files, &c->nfiles);
	c->skipped = calloc(w.nkernels ? w.nkernels : 1, 1);
	/* Each kernel's buffer: a counter per global block index (its entry loads
	 * its address; code reached by calla counts into the caller's). */
	unsigned ra[256], rp[256];
	for (uint32_t i = 0; i < w.nkernels && i < 256; i++) {
		int other = 0;
		c->skipped[i] = free_pair(orig, w.kernels[i].name, &ra[i], &rp[i], &other) != 0;
		if (!c->skipped[i] && other)
			say("kernel %s uses r126-r127: counts through calla into its code are not attributed%s",
			    w.kernels[i].name, "");
	}
	c->capacity = capacity();
	c->hits = calloc(w.nkernels ? w.nkernels : 1, sizeof(*c->hits));
	c->nhits = calloc(w.nkernels ? w.nkernels : 1, sizeof(*c->nhits));
	const size_t bytes = (size_t)(w.nkernels ? w.nkernels : 1) * c->capacity * 4u;
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
	if (!c->hits || !c->nhits ||
	    zeMemAllocShared(ctx, &dd, &hd, bytes, 64, dev, (void **)&c->buffer) != ZE_RESULT_SUCCESS) {
		say("cannot allocate the counter buffers%s%s", "", "");
		c->buffer = NULL;
		goto fail;
	}
	memset(c->buffer, 0, bytes);
	/* The module's blocks take the next global indices (reserved under the lock;
	 * gmap names the module once it is added). */
	pthread_mutex_lock(&lock);
	c->base = gnext;
	for (uint32_t i = 0; i < w.nkernels; i++) {
		if (i >= 256 || c->skipped[i]) {
			c->skipped[i] = 1;
			say("kernel %s%s: fewer than 2 free registers, not counted", w.kernels[i].name, "");
			continue;
		}
		const uint64_t buf = (uint64_t)(uintptr_t)(c->buffer + (size_t)i * c->capacity);
		if (zi_instrument_kernel(&w.kernels[i], i, ra[i], rp[i], buf, c->base, &c->blocks, &c->nblocks, err,
					 sizeof(err))) {
			pthread_mutex_unlock(&lock);
			say("kernel %s: %s", w.kernels[i].name, err);
			goto fail;
		}
	}
	icmod_t **g = NULL;
	if ((uint64_t)c->base + c->nblocks > c->capacity) {
		pthread_mutex_unlock(&lock);
		fprintf(stderr,
			"zesim-icount: the process's modules have more than %u basic blocks (a kernel's counter buffer "
			"holds one counter per block of every module): this module is not instrumented; raise "
			"--max-blocks\n",
			c->capacity);
		goto fail;
	}
	if (c->nblocks && !(g = realloc(gmap, ((size_t)c->base + c->nblocks) * sizeof(*g)))) {
		pthread_mutex_unlock(&lock);
		goto fail;
	}
	if (c->nblocks) {
		memset(g + c->base, 0, c->nblocks * sizeof(*g));
		gmap = g;
		gnext = c->base + c->nblocks;
	}
	pthread_mutex_unlock(&lock);
	w.has_debug_line = 0;
	c->totals = calloc(c->nblocks ? c->nblocks : 1, sizeof(*c->totals));
	fd = mkstemp(path);
	if (!c->totals || fd < 0)
		goto fail;
	close(fd);
	if (zm_module_write(&w, path, err, sizeof(err))) {
		say("cannot write the rewritten module: %s%s", err, "");
		goto fail;
	}
	size_t nsize;
	uint8_t *nbin = NULL;
	FILE *f = fopen(path, "rb");
	if (f && fseek(f, 0, SEEK_END) == 0 && (nsize = (size_t)ftell(f)) > 0 && (nbin = malloc(nsize)) &&
	    fseek(f, 0, SEEK_SET) == 0 && fread(nbin, 1, nsize, f) == nsize) {
		ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, nsize, nbin, "",
				       NULL};
		if (real_create(ctx, dev, &md, &c->app, NULL) != ZE_RESULT_SUCCESS)
			c->app = NULL;
	}
	if (f)
		fclose(f);
	free(nbin);
	unlink(path);
	if (!c->app)
		goto fail;
	c->orig = orig;
	c->ctx = ctx;
	c->bin = bin;
	c->bin_size = size;
	zm_module_free(&w);
	return c;
fail:
	if (c && c->buffer)
		zeMemFree(ctx, c->buffer);
	if (c) {
		zm_module_free(&c->m);
		free(c->hits);
		free(c->nhits);
		free(c->blocks);
		free(c->skipped);
		free(c->pos);
		free(c->totals);
	}
	zm_module_free(&w);
	free(c);
	free(bin);
	return NULL;
}

#define ZI_API __attribute__((visibility("default")))

static int no_rewrite(void)
{
	const char *e = getenv("ZESIM_ICOUNT_NO_REWRITE");
	return e && strcmp(e, "1") == 0;
}

/* Modules created without code (imports), with what instrument() will need at the link. */
struct pending {
	ze_module_handle_t m;
	ze_context_handle_t ctx;
	ze_device_handle_t dev;
	struct pending *next;
};
static struct pending *pendings;

static int link_target(ze_module_handle_t m, ze_context_handle_t *ctx, ze_device_handle_t *dev)
{
	pthread_mutex_lock(&lock);
	struct pending *p = pendings;
	while (p && p->m != m)
		p = p->next;
	if (p) {
		*ctx = p->ctx;
		*dev = p->dev;
	}
	pthread_mutex_unlock(&lock);
	return p != NULL;
}

static int kernel_count(ze_module_handle_t m)
{
	uint32_t n = 0;
	return zeModuleGetKernelNames(m, &n, NULL) == ZE_RESULT_SUCCESS ? (int)n : 0;
}

static void add(icmod_t *c)
{
	pthread_mutex_lock(&lock);
	for (uint32_t b = 0; b < c->nblocks; b++)
		gmap[c->base + b] = c;
	c->id = ++next_id;
	c->next = mods;
	mods = c;
	pthread_mutex_unlock(&lock);
}

ZI_API ze_result_t zeModuleCreate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
				  const ze_module_desc_t *desc, ze_module_handle_t *phModule,
				  ze_module_build_log_handle_t *phBuildLog)
{
	resolve();
	if (!desc || !phModule)
		return real_create(hContext, hDevice, desc, phModule, phBuildLog);
	ze_module_desc_t d = *desc;
	char *flags = with_flags(desc->pBuildFlags);
	d.pBuildFlags = flags ? flags : desc->pBuildFlags;
	ze_result_t r = real_create(hContext, hDevice, &d, phModule, phBuildLog);
	free(flags);
	if (r != ZE_RESULT_SUCCESS || no_rewrite())
		return r;
	size_t size = 0;
	if (real_native(*phModule, &size, NULL) == ZE_RESULT_SUCCESS && !size) {
		/* Imports: instrumented at zeModuleDynamicLink; or no kernels at all. */
		struct pending *p = malloc(sizeof(*p));
		if (p) {
			*p = (struct pending){*phModule, hContext, hDevice, NULL};
			pthread_mutex_lock(&lock);
			p->next = pendings;
			pendings = p;
			pthread_mutex_unlock(&lock);
		}
		return r;
	}
	icmod_t *c = instrument(hContext, hDevice, *phModule);
	if (!c) {
		if (kernel_count(*phModule))
			say("a module is not instrumented (a rewrite failure)%s%s", "", "");
		return r;
	}
	add(c);
	*phModule = c->app;
	return r;
}

/* The instrumented module of a handle the program holds, or NULL. */
static icmod_t *find(ze_module_handle_t h)
{
	for (icmod_t *c = mods; c; c = c->next)
		if (c->buffer && (c->alias ? c->orig : c->app) == h)
			return c;
	return NULL;
}

static icmod_t *find_ctx(ze_context_handle_t ctx)
{
	for (icmod_t *c = mods; c; c = c->next)
		if (c->buffer && c->ctx == ctx)
			return c;
	return NULL;
}

/* The module's memory is the context's: read the counters before either goes. */
static void retire(icmod_t *c)
{
	harvest(c);
	zeMemFree(c->ctx, c->buffer);
	c->buffer = NULL;
	real_destroy(c->alias ? c->app : c->orig);
}

ZI_API ze_result_t zeModuleDestroy(ze_module_handle_t hModule)
{
	resolve();
	pthread_mutex_lock(&lock);
	icmod_t *c = find(hModule);
	if (c)
		retire(c);
	for (struct pending **p = &pendings; *p; p = &(*p)->next)
		if ((*p)->m == hModule) {
			struct pending *dead = *p;
			*p = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&lock);
	return real_destroy(hModule);
}

ZI_API ze_result_t zeContextDestroy(ze_context_handle_t hContext)
{
	resolve();
	pthread_mutex_lock(&lock);
	for (icmod_t *c; (c = find_ctx(hContext));)
		retire(c);
	pthread_mutex_unlock(&lock);
	return real_ctx_destroy(hContext);
}

/* The program sees its own module's binary, not the rewritten one (so that it
 * can load it again, compare it, ...). */
ZI_API ze_result_t zeModuleGetNativeBinary(ze_module_handle_t hModule, size_t *pSize, uint8_t *pModuleNativeBinary)
{
	resolve();
	pthread_mutex_lock(&lock);
	icmod_t *c = find(hModule);
	ze_module_handle_t h = c ? c->orig : hModule;
	pthread_mutex_unlock(&lock);
	return real_native(h, pSize, pModuleNativeBinary);
}

/* A module with imports has code only once linked: instrument it then; the
 * program keeps its handle, and kernels, globals and function pointers come
 * from the instrumented module. */
ZI_API ze_result_t zeModuleDynamicLink(uint32_t numModules, ze_module_handle_t *phModules,
				       ze_module_build_log_handle_t *phLinkLog)
{
	resolve();
	ze_result_t r = real_link(numModules, phModules, phLinkLog);
	if (r != ZE_RESULT_SUCCESS || no_rewrite() || !phModules)
		return r;
	for (uint32_t i = 0; i < numModules; i++) {
		pthread_mutex_lock(&lock);
		int known = find(phModules[i]) != NULL;
		for (icmod_t *c = mods; c && !known; c = c->next)
			known = c->app == phModules[i];
		pthread_mutex_unlock(&lock);
		size_t size = 0;
		if (known || real_native(phModules[i], &size, NULL) != ZE_RESULT_SUCCESS || !size)
			continue;
		ze_context_handle_t ctx = NULL;
		ze_device_handle_t dev = NULL;
		icmod_t *c = NULL;
		if (!link_target(phModules[i], &ctx, &dev) || !(c = instrument(ctx, dev, phModules[i]))) {
			say("a linked module is not instrumented%s%s", "", "");
			continue;
		}
		c->alias = 1;
		add(c);
	}
	return r;
}

/* The module that answers for a handle of the program: the instrumented one of a linked module. */
static ze_module_handle_t redirect(ze_module_handle_t hModule)
{
	resolve();
	pthread_mutex_lock(&lock);
	icmod_t *c = find(hModule);
	ze_module_handle_t h = c && c->alias ? c->app : hModule;
	pthread_mutex_unlock(&lock);
	return h;
}

ZI_API ze_result_t zeKernelCreate(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
				  ze_kernel_handle_t *phKernel)
{
	ze_module_handle_t h = redirect(hModule);
	return real_kernel_create(h, desc, phKernel);
}

ZI_API ze_result_t zeModuleGetGlobalPointer(ze_module_handle_t hModule, const char *pGlobalName, size_t *pSize,
					    void **pptr)
{
	ze_module_handle_t h = redirect(hModule);
	return real_global(h, pGlobalName, pSize, pptr);
}

/* A kernel's address is its prologue, which loads the kernel's own buffer
 * address into rA.2-3: a `calla` to it would switch the caller's counts to
 * the callee kernel's buffer.  The program gets the address after the prologue
 * (the kernel's first block), where its code counts into the caller's buffer. */
ZI_API ze_result_t zeModuleGetFunctionPointer(ze_module_handle_t hModule, const char *pFunctionName,
					      void **pfnFunction)
{
	ze_module_handle_t h = redirect(hModule);
	const ze_result_t r = real_fnptr(h, pFunctionName, pfnFunction);
	if (r != ZE_RESULT_SUCCESS)
		return r;
	pthread_mutex_lock(&lock);
	const icmod_t *c = find(hModule);
	for (uint32_t ki = 0; c && ki < c->m.nkernels; ki++)
		if (!c->skipped[ki] && strcmp(c->m.kernels[ki].name, pFunctionName) == 0)
			*pfnFunction = (uint8_t *)*pfnFunction + ZI_PROLOGUE_BYTES;
	pthread_mutex_unlock(&lock);
	return r;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Instructions executed per source position: (file, line), file NULL for none. */
typedef struct linecount {
	uint64_t n;
	const char *file;
	uint64_t line;
} linecount_t;

typedef struct tally {
	uint64_t total;
	linecount_t *lines;
	uint32_t nl, cap;
} tally_t;

/* Block b of module m ran n times: each of its instructions did. */
static void tally_block(tally_t *t, const icmod_t *m, uint32_t b, uint64_t n)
{
	const zi_block_t *bl = &m->blocks[b];
	const zm_kernel_t *k = &m->m.kernels[bl->kernel];
	for (uint32_t i = 0; i < bl->ninst; i++) {
		const uint64_t addr = k->addr + bl->offset + i * 16u;
		const zi_pos_t p = addr / 16 < m->npos ? m->pos[addr / 16] : (zi_pos_t){0, 0};
		const char *file = p.line && p.file < m->nfiles ? m->files[p.file] : NULL;
		const uint64_t line = file ? p.line : 0;
		t->total += n;
		uint32_t l = 0;
		while (l < t->nl && !(t->lines[l].line == line && (t->lines[l].file == file ||
				     (file && t->lines[l].file && strcmp(t->lines[l].file, file) == 0))))
			l++;
		if (l == t->nl) {
			if (t->nl == t->cap) {
				const uint32_t cap = t->cap ? 2 * t->cap : 64;
				linecount_t *nl = realloc(t->lines, cap * sizeof(*nl));
				if (!nl)
					continue;
				t->lines = nl;
				t->cap = cap;
			}
			t->lines[t->nl++] = (linecount_t){0, file, line};
		}
		t->lines[l].n += n;
	}
}

static int cmp_count_desc(const void *a, const void *b)
{
	const uint64_t x = ((const linecount_t *)a)->n, y = ((const linecount_t *)b)->n;
	return x < y ? 1 : x > y ? -1 : 0;
}

__attribute__((destructor)) static void report(void)
{
	const char *out = getenv("ZESIM_ICOUNT_OUT"), *json = getenv("ZESIM_ICOUNT_JSON"),
		   *save = getenv("ZESIM_ICOUNT_SAVE");
	FILE *o = out && *out ? fopen(out, "a") : stderr;
	if (!o)
		o = stderr;
	char *jbuf = NULL;
	size_t jlen = 0;
	FILE *j = json && *json ? open_memstream(&jbuf, &jlen) : NULL;
	pthread_mutex_lock(&lock);
	if (j)
		fprintf(j, "{\"pid\":%d,\"kernels\":[", (int)getpid());
	int first = 1;
	for (icmod_t *c = mods; c; c = c->next) {
		if (c->buffer)
			harvest(c);
		for (uint32_t ki = 0; ki < c->m.nkernels; ki++) {
			const zm_kernel_t *k = &c->m.kernels[ki];
			if (c->skipped[ki])
				continue;
			/* Its own blocks, then other kernels' code run on its behalf (calla). */
			tally_t t = {0};
			for (uint32_t b = 0; b < c->nblocks; b++)
				if (c->blocks[b].kernel == ki)
					tally_block(&t, c, b, c->totals[b]);
			for (uint32_t h = 0; h < c->nhits[ki]; h++)
				tally_block(&t, c->hits[ki][h].mod, c->hits[ki][h].block, c->hits[ki][h].n);
			fprintf(o, "zesim-icount: module %d kernel %s: %llu instructions executed\n", c->id, k->name,
				(unsigned long long)t.total);
			if (t.lines)
				qsort(t.lines, t.nl, sizeof(*t.lines), cmp_count_desc);
			for (uint32_t l = 0; l < t.nl; l++) {
				if (!t.lines[l].n)
					continue;
				if (t.lines[l].file)
					fprintf(o, "  %12llu  %s:%llu\n", (unsigned long long)t.lines[l].n, t.lines[l].file,
						(unsigned long long)t.lines[l].line);
				else
					fprintf(o, "  %12llu  (no line)\n", (unsigned long long)t.lines[l].n);
			}
			if (j) {
				fprintf(j, "%s{\"module\":%d,\"name\":", first ? "" : ",", c->id);
				json_str(j, k->name);
				fprintf(j, ",\"instructions\":%llu,\"blocks\":[", (unsigned long long)t.total);
				int fb = 1;
				for (uint32_t b = 0; b < c->nblocks; b++)
					if (c->blocks[b].kernel == ki) {
						fprintf(j, "%s[%u,%u,%llu]", fb ? "" : ",", c->blocks[b].offset,
							c->blocks[b].ninst, (unsigned long long)c->totals[b]);
						fb = 0;
					}
				fprintf(j, "],\"called_blocks\":[");
				for (uint32_t h = 0; h < c->nhits[ki]; h++) {
					const hit_t *hit = &c->hits[ki][h];
					const zi_block_t *bl = &hit->mod->blocks[hit->block];
					fprintf(j, "%s[%d,", h ? "," : "", hit->mod->id);
					json_str(j, hit->mod->m.kernels[bl->kernel].name);
					fprintf(j, ",%u,%u,%llu]", bl->offset, bl->ninst, (unsigned long long)hit->n);
				}
				fprintf(j, "],\"lines\":[");
				for (uint32_t l = 0; l < t.nl; l++) {
					fprintf(j, "%s[", l ? "," : "");
					json_str(j, t.lines[l].file ? t.lines[l].file : "");
					fprintf(j, ",%llu,%llu]", (unsigned long long)t.lines[l].line,
						(unsigned long long)t.lines[l].n);
				}
				fprintf(j, "]");
				if (save && *save) {
					char path[4096];
					snprintf(path, sizeof(path), "%s/%d-module%d.elf", save, (int)getpid(), c->id);
					FILE *f = fopen(path, "wb");
					if (!f || fwrite(c->bin, 1, c->bin_size, f) != c->bin_size)
						fprintf(stderr, "zesim-icount: cannot write %s\n", path);
					if (f)
						fclose(f);
					fprintf(j, ",\"module_file\":");
					json_str(j, path);
				}
				fprintf(j, "}");
			}
			first = 0;
			free(t.lines);
		}
	}
	pthread_mutex_unlock(&lock);
	if (o != stderr)
		fclose(o);
	if (j) {
		fprintf(j, "]}\n");
		fclose(j);
		const int fd = open(json, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			if (write(fd, jbuf, jlen) != (ssize_t)jlen)
				fprintf(stderr, "zesim-icount: cannot write %s\n", json);
			close(fd);
		}
		free(jbuf);
	}
}
