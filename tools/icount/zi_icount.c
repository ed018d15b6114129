/* libzesim_icount.so: zesim-icount's tool library, preloaded into a Level Zero
 * program (README.md).  Public Level Zero API only (plus the ZE-ISA and module
 * format libraries, whose formats docs/isa.md and docs/module-format.md
 * document): it interposes zeModuleCreate, builds the module as asked (adding
 * "-g -zet-profile-flags 0x2"), takes its native binary, asks
 * zetKernelGetProfileInfo which registers each kernel leaves free, rewrites
 * every kernel to count its basic blocks with atomic adds into a shared
 * buffer, and hands the program the rewritten module
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

typedef struct icmod {
	ze_module_handle_t app, orig;
	ze_context_handle_t ctx;
	uint32_t *counters; /* shared memory: one dword per block */
	uint64_t *totals;   /* block executions read so far */
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
} icmod_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static icmod_t *mods;
static int next_id;

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

/* Add this module's counters to its totals and zero them (kernels using them
 * have completed: the program destroys a module only after its work). */
static void harvest(icmod_t *c)
{
	for (uint32_t b = 0; b < c->nblocks; b++) {
		c->totals[b] += c->counters[b];
		c->counters[b] = 0;
	}
}

/* Two free GRFs of the kernel, from its free-register token. */
static int free_pair(ze_module_handle_t m, const char *name, unsigned *ra, unsigned *rp)
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
	int found = 0;
	for (uint32_t i = 0; i < tok.count && found < 2; i++) {
		zet_profile_register_sequence_t s;
		memcpy(&s, u.bytes + sizeof(u.p) + sizeof(tok) + i * sizeof(s), sizeof(s));
		for (uint32_t reg = (s.start + 31) / 32; (reg + 1) * 32 <= s.start + s.count && found < 2; reg++)
			*(found++ ? rp : ra) = reg;
	}
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
	/* Blocks first (their count sizes the buffer), then the buffer's address goes into the code. */
	unsigned ra[256], rp[256];
	for (uint32_t i = 0; i < w.nkernels && i < 256; i++)
		c->skipped[i] = free_pair(orig, w.kernels[i].name, &ra[i], &rp[i]) != 0;
	ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
	ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
	uint32_t guess = 0;
	for (uint32_t i = 0; i < w.nkernels; i++)
		guess += w.kernels[i].text_size / 16 + 1;
	if (zeMemAllocShared(ctx, &dd, &hd, guess * 4u, 64, dev, (void **)&c->counters) != ZE_RESULT_SUCCESS)
		goto fail;
	memset(c->counters, 0, guess * 4u);
	for (uint32_t i = 0; i < w.nkernels; i++) {
		if (i >= 256 || c->skipped[i]) {
			c->skipped[i] = 1;
			say("kernel %s%s: fewer than 2 free registers, not counted", w.kernels[i].name, "");
			continue;
		}
		if (zi_instrument_kernel(&w.kernels[i], i, ra[i], rp[i], (uint64_t)(uintptr_t)c->counters, &c->blocks,
					 &c->nblocks, err, sizeof(err))) {
			say("kernel %s: %s", w.kernels[i].name, err);
			goto fail;
		}
	}
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
	if (c && c->counters)
		zeMemFree(ctx, c->counters);
	if (c) {
		zm_module_free(&c->m);
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
		if (c->counters && (c->alias ? c->orig : c->app) == h)
			return c;
	return NULL;
}

static icmod_t *find_ctx(ze_context_handle_t ctx)
{
	for (icmod_t *c = mods; c; c = c->next)
		if (c->counters && c->ctx == ctx)
			return c;
	return NULL;
}

/* The module's memory is the context's: read the counters before either goes. */
static void retire(icmod_t *c)
{
	harvest(c);
	zeMemFree(c->ctx, c->counters);
	c->counters = NULL;
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

ZI_API ze_result_t zeModuleGetFunctionPointer(ze_module_handle_t hModule, const char *pFunctionName,
					      void **pfnFunction)
{
	ze_module_handle_t h = redirect(hModule);
	return real_fnptr(h, pFunctionName, pfnFunction);
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

static int cmp_u64_desc(const void *a, const void *b)
{
	const uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
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
		if (c->counters)
			harvest(c);
		for (uint32_t ki = 0; ki < c->m.nkernels; ki++) {
			const zm_kernel_t *k = &c->m.kernels[ki];
			if (c->skipped[ki])
				continue;
			/* Executions per instruction: its block's. */
			const uint32_t n = k->text_size / 16;
			uint64_t total = 0;
			/* (count, file, line) per source position */
			uint64_t (*lines)[3] = calloc(n ? n : 1, sizeof(*lines));
			uint32_t nl = 0;
			for (uint32_t b = 0; b < c->nblocks; b++) {
				const zi_block_t *bl = &c->blocks[b];
				if (bl->kernel != ki)
					continue;
				for (uint32_t i = 0; i < bl->ninst; i++) {
					const uint64_t addr = k->addr + bl->offset + i * 16u;
					const zi_pos_t p = addr / 16 < c->npos ? c->pos[addr / 16] : (zi_pos_t){0, 0};
					total += c->totals[b];
					uint32_t l = 0;
					while (l < nl && !(lines[l][1] == p.file && lines[l][2] == p.line))
						l++;
					if (l == nl && lines) {
						lines[nl][1] = p.file;
						lines[nl][2] = p.line;
						nl++;
					}
					if (lines)
						lines[l][0] += c->totals[b];
				}
			}
			fprintf(o, "zesim-icount: module %d kernel %s: %llu instructions executed\n", c->id, k->name,
				(unsigned long long)total);
			if (lines)
				qsort(lines, nl, sizeof(*lines), cmp_u64_desc);
			for (uint32_t l = 0; l < nl && lines; l++) {
				if (!lines[l][0])
					continue;
				if (lines[l][2] && lines[l][1] < c->nfiles)
					fprintf(o, "  %12llu  %s:%llu\n", (unsigned long long)lines[l][0],
						c->files[lines[l][1]], (unsigned long long)lines[l][2]);
				else
					fprintf(o, "  %12llu  (no line)\n", (unsigned long long)lines[l][0]);
			}
			if (j) {
				fprintf(j, "%s{\"module\":%d,\"name\":", first ? "" : ",", c->id);
				json_str(j, k->name);
				fprintf(j, ",\"instructions\":%llu,\"blocks\":[", (unsigned long long)total);
				int fb = 1;
				for (uint32_t b = 0; b < c->nblocks; b++)
					if (c->blocks[b].kernel == ki) {
						fprintf(j, "%s[%u,%u,%llu]", fb ? "" : ",", c->blocks[b].offset,
							c->blocks[b].ninst, (unsigned long long)c->totals[b]);
						fb = 0;
					}
				fprintf(j, "],\"lines\":[");
				for (uint32_t l = 0; l < nl && lines; l++) {
					fprintf(j, "%s[", l ? "," : "");
					json_str(j, lines[l][2] && lines[l][1] < c->nfiles ? c->files[lines[l][1]] : "");
					fprintf(j, ",%llu,%llu]", (unsigned long long)lines[l][2], (unsigned long long)lines[l][0]);
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
			free(lines);
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
