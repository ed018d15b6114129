/* Data segments and printf (zs_printf.h).  The printf buffer's layout and the
 * record format are the kernels' (spirv/spv_compile.h); the formats and the
 * kinds of their arguments come from the module (.zesim.printf), validated by
 * the module reader.  The records themselves are written by kernels and are
 * checked here before use: a bad record is reported, never trusted. */
#define _GNU_SOURCE
#include "zs_printf.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spv_compile.h"
#include "zs_queue.h"

/* Modules with a printf buffer; their cursors and counts.  One lock for all:
 * output is rare, and the lock keeps the output of concurrent flushes whole. */
static pthread_mutex_t printf_lock = PTHREAD_MUTEX_INITIALIZER;
static zs_module_t *printf_modules;
static atomic_bool any_printf;

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;

#define MAX_FIELD 4096 /* widths and precisions above this are not printed */

static uint32_t load32(const uint8_t *p)
{
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
}

uint32_t zs_printf_buffer_size(void)
{
	const char *env = getenv(ZS_PRINTF_BUFFER_ENV);
	if (!env || !*env)
		return ZS_PRINTF_BUFFER_DEFAULT;
	char *end;
	errno = 0;
	const unsigned long v = strtoul(env, &end, 0);
	if (errno || *end || v < 64 || v > (1ul << 30) || v % 4) {
		fprintf(stderr, "zesim: %s=%s is not a size from 64 bytes to 1 GiB, a multiple of 4; using %u\n",
			ZS_PRINTF_BUFFER_ENV, env, ZS_PRINTF_BUFFER_DEFAULT);
		return ZS_PRINTF_BUFFER_DEFAULT;
	}
	return (uint32_t)v;
}

static int prints(const zm_module_t *m, const zs_module_t *mod)
{
	for (uint32_t i = 0; i < m->nkernels; i++)
		for (uint32_t j = 0; j < mod->all_nargs[i]; j++)
			if (strcmp(m->kernels[i].args[j].name, SPV_HIDDEN_PRINTF) == 0)
				return 1;
	return 0;
}

int zs_module_data_ready(zs_module_t *mod)
{
	if (atomic_load(&mod->data_ready))
		return 0;
	pthread_mutex_lock(&ready_lock);
	int rc = 0;
	if (!atomic_load(&mod->data_ready)) {
		const zm_module_t *m = &mod->m;
		if (m->data_size) {
			rc = zs_os_bo_create(&mod->dev->os, m->data_size, m->data_align, &mod->data);
			if (!rc)
				memcpy(mod->data.ptr, m->data, m->data_size);
		}
		if (!rc && prints(m, mod)) {
			const uint32_t size = zs_printf_buffer_size();
			rc = zs_os_bo_create(&mod->dev->os, size, 0, &mod->printf_buf);
			if (!rc) {
				uint32_t hdr[4] = {SPV_PRINTF_HEADER, size, 0, 0};
				memset(mod->printf_buf.ptr, 0, size);
				memcpy(mod->printf_buf.ptr, hdr, sizeof(hdr));
				mod->printf_size = size;
				mod->printf_cursor = SPV_PRINTF_HEADER;
				pthread_mutex_lock(&printf_lock);
				mod->printf_next = printf_modules;
				printf_modules = mod;
				atomic_store(&any_printf, true);
				pthread_mutex_unlock(&printf_lock);
			} else if (mod->data.ptr) {
				zs_os_bo_destroy(&mod->dev->os, &mod->data);
				memset(&mod->data, 0, sizeof(mod->data));
			}
		}
		if (!rc)
			atomic_store(&mod->data_ready, true);
	}
	pthread_mutex_unlock(&ready_lock);
	return rc;
}

void zs_module_fill_hidden(const zs_module_t *mod, const zm_kernel_t *k, uint32_t all_nargs, uint8_t *args)
{
	for (uint32_t j = k->nargs; j < all_nargs; j++) {
		const zm_arg_t *a = &k->args[j];
		if (a->kind != ZM_ARG_GLOBAL)
			continue;
		uint64_t va;
		if (strcmp(a->name, SPV_HIDDEN_DATA) == 0)
			va = mod->data.ptr ? zs_bo_va(&mod->data) : 0;
		else if (strcmp(a->name, SPV_HIDDEN_PRINTF) == 0)
			va = mod->printf_buf.ptr ? zs_bo_va(&mod->printf_buf) : 0;
		else
			continue;
		memcpy(args + a->offset, &va, 8);
	}
}

/* ---- formatting ---------------------------------------------------------------- */

typedef struct out {
	char *p;
	size_t n, cap;
	int oom;
} out_t;

static void out_fmt(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_fmt(out_t *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || o->oom)
		return;
	if (o->n + (size_t)n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->n + (size_t)n + 1)
			cap *= 2;
		char *p = realloc(o->p, cap);
		if (!p) {
			o->oom = 1;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(o->p + o->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->n += (size_t)n;
}

/* The arguments of one record. */
typedef struct rec {
	const zs_module_t *mod;
	const zm_printf_t *f;
	const uint8_t *dw;   /* the record's argument dwords */
	uint32_t at[ZE_MAX_PRINTF_ARGS]; /* first dword of each argument */
	uint32_t next;       /* next argument */
} rec_t;

static uint32_t arg_dword(const rec_t *r, uint32_t dw)
{
	uint32_t v;
	memcpy(&v, r->dw + 4 * dw, 4);
	return v;
}

static const char *kind_name(uint32_t arg)
{
	static const char *const names[] = {"?", "an integer", "a long", "a float", "a string", "a pointer"};
	const uint32_t k = ZM_PF_KIND(arg);
	return ZM_PF_COUNT(arg) > 1 ? "a vector" : k < 6 ? names[k] : "?";
}

/* A conversion the driver cannot print: shown as it is, marked. */
static void cannot(out_t *o, const char *spec, size_t len, const char *why)
{
	out_fmt(o, "<zesim: cannot print \"%.*s\": %s>", (int)len, spec, why);
}

/* A '*' width or precision: the next argument, an int. */
static int star(rec_t *r, long *v)
{
	if (r->next >= r->f->nargs || r->f->args[r->next] != ZM_PF_ARG(ZM_PF_INT, 1))
		return -1;
	*v = (int32_t)arg_dword(r, r->at[r->next++]);
	return 0;
}

/* One conversion: spec..end is "%...c"; prints it or a marker. */
static void conversion(rec_t *r, out_t *o, const char *spec, const char *end)
{
	const size_t len = (size_t)(end - spec);
	const char conv = end[-1];
	const char *p = spec + 1;
	char host[64];
	size_t h = 0;
	host[h++] = '%';
	while (p < end && strchr("-+ #0", *p) && h < 16)
		host[h++] = *p++;
	long width = -1, prec = -1;
	if (*p == '*') {
		p++;
		if (star(r, &width)) {
			cannot(o, spec, len, "no int argument for the '*' width");
			return;
		}
	} else if (*p >= '0' && *p <= '9') {
		width = strtol(p, (char **)&p, 10);
	}
	if (*p == '.') {
		p++;
		if (*p == '*') {
			p++;
			if (star(r, &prec)) {
				cannot(o, spec, len, "no int argument for the '*' precision");
				return;
			}
		} else {
			prec = strtol(p, (char **)&p, 10);
		}
	}
	/* Every conversion takes its argument, also one that cannot be printed
	 * (the compiler mapped the arguments the same way). */
	if (r->next >= r->f->nargs) {
		cannot(o, spec, len, "no argument left");
		return;
	}
	const uint32_t arg = r->f->args[r->next], kind = ZM_PF_KIND(arg);
	const uint32_t first = r->at[r->next++];
	if (width > MAX_FIELD || prec > MAX_FIELD || width < -MAX_FIELD) {
		cannot(o, spec, len, "width or precision too large");
		return;
	}
	if (width != -1)
		h += (size_t)snprintf(host + h, sizeof(host) - h, "%ld", width);
	if (prec >= 0)
		h += (size_t)snprintf(host + h, sizeof(host) - h, ".%ld", prec);
	uint32_t vec = 1;
	if (*p == 'v') {
		vec = (uint32_t)strtoul(p + 1, (char **)&p, 10);
		if (vec != 2 && vec != 3 && vec != 4 && vec != 8 && vec != 16) {
			cannot(o, spec, len, "vector sizes are 2, 3, 4, 8 and 16");
			return;
		}
	}
	/* Length: hh, h, hl (32 bits, vectors), l (64 bits). */
	int bits = 0;
	if (p[0] == 'h' && p[1] == 'h') {
		bits = 8;
		p += 2;
	} else if (p[0] == 'h' && p[1] == 'l') {
		bits = 32;
		p += 2;
	} else if (p[0] == 'h') {
		bits = 16;
		p++;
	} else if (p[0] == 'l') {
		bits = 64;
		p++;
	}
	if (p != end - 1) {
		cannot(o, spec, len, "unsupported length modifier");
		return;
	}
	char why[96];
	if (ZM_PF_COUNT(arg) != vec) {
		snprintf(why, sizeof(why), "the argument is %s", kind_name(arg));
		cannot(o, spec, len, why);
		return;
	}
	const int is_int = strchr("diouxXc", conv) != NULL, is_float = strchr("fFeEgGaA", conv) != NULL;
	if (!is_int && !is_float && conv != 's' && conv != 'p') {
		cannot(o, spec, len, "unsupported conversion");
		return;
	}
	if ((is_int && kind != ZM_PF_INT && kind != ZM_PF_LONG) || (is_float && kind != ZM_PF_FLOAT) ||
	    (conv == 's' && kind != ZM_PF_STRING) || (conv == 'p' && kind != ZM_PF_POINTER) ||
	    (vec > 1 && !is_int && !is_float) || (conv == 'c' && bits) || (is_float && bits && bits != 32 && bits != 64) ||
	    ((conv == 's' || conv == 'p') && bits)) {
		snprintf(why, sizeof(why), "the argument is %s", kind_name(arg));
		cannot(o, spec, len, why);
		return;
	}
	for (uint32_t j = 0; j < vec; j++) {
		if (j)
			out_fmt(o, ",");
		if (is_int) {
			const uint32_t per = kind == ZM_PF_LONG ? 2 : 1;
			uint64_t v = arg_dword(r, first + j * per);
			if (per == 2)
				v |= (uint64_t)arg_dword(r, first + j * per + 1) << 32;
			else if (strchr("di", conv))
				v = (uint64_t)(int64_t)(int32_t)v; /* an int read as long keeps its sign */
			const int sgn = strchr("di", conv) != NULL;
			const int w = bits ? bits : 32;
			if (w < 64) {
				v &= (1ull << w) - 1;
				if (sgn && (v >> (w - 1)) & 1)
					v |= ~0ull << w;
			}
			if (conv == 'c') {
				host[h] = 'c';
				host[h + 1] = 0;
				out_fmt(o, host, (int)(unsigned char)v);
			} else {
				snprintf(host + h, sizeof(host) - h, "ll%c", conv);
				out_fmt(o, host, (unsigned long long)v);
			}
		} else if (is_float) {
			const uint32_t bitsf = arg_dword(r, first + j);
			float f;
			memcpy(&f, &bitsf, 4);
			host[h] = conv;
			host[h + 1] = 0;
			out_fmt(o, host, (double)f);
		} else if (conv == 's') {
			const uint32_t off = arg_dword(r, first);
			const zs_module_t *mod = r->mod;
			const char *s = NULL;
			if (mod->data.ptr && off < mod->m.data_size &&
			    memchr(mod->data.ptr + off, 0, mod->m.data_size - off))
				s = (const char *)mod->data.ptr + off;
			if (!s) {
				snprintf(why, sizeof(why), "the string's offset %u is outside the program's data", off);
				cannot(o, spec, len, why);
				return;
			}
			host[h] = 's';
			host[h + 1] = 0;
			out_fmt(o, host, s);
		} else {
			const uint64_t v = arg_dword(r, first) | (uint64_t)arg_dword(r, first + 1) << 32;
			host[h] = 'p';
			host[h + 1] = 0;
			out_fmt(o, host, (void *)(uintptr_t)v);
		}
	}
}

/* One record: the format with its conversions. */
static void format_record(const zs_module_t *mod, uint32_t id, const uint8_t *dw, uint32_t ndw, out_t *o)
{
	const zm_module_t *m = &mod->m;
	if (id >= m->nprintf) {
		out_fmt(o, "<zesim: printf record with unknown format %u>\n", id);
		return;
	}
	rec_t r = {.mod = mod, .f = &m->printf_formats[id], .dw = dw};
	uint32_t need = 0;
	for (uint32_t i = 0; i < r.f->nargs; i++) {
		r.at[i] = need;
		need += zm_printf_arg_dwords(r.f->args[i]);
	}
	if (need != ndw) {
		out_fmt(o, "<zesim: printf record of %u argument dwords for format %u, which takes %u>\n", ndw, id, need);
		return;
	}
	for (const char *p = r.f->format; *p;) {
		if (*p != '%') {
			const size_t n = strcspn(p, "%");
			out_fmt(o, "%.*s", (int)n, p);
			p += n;
			continue;
		}
		if (p[1] == '%') {
			out_fmt(o, "%%");
			p += 2;
			continue;
		}
		/* The conversion ends at its first letter that is not a length or
		 * vector part. */
		const char *e = p + 1;
		while (*e && strchr("-+ #0123456789.*vhlLzjt", *e))
			e++;
		if (!*e) {
			cannot(o, p, strlen(p), "incomplete conversion");
			break;
		}
		conversion(&r, o, p, e + 1);
		p = e + 1;
	}
}

/* Prints the complete records from the module's cursor on; with `idle` (no
 * work outstanding, nothing can append) empties the buffer.  Under
 * printf_lock. */
static void drain(zs_module_t *mod, int idle, out_t *o, out_t *err)
{
	uint8_t *b = mod->printf_buf.ptr;
	const uint32_t used = load32(b + SPV_PRINTF_OFFSET);
	uint32_t end = used < mod->printf_size ? used : mod->printf_size;
	if (end < SPV_PRINTF_HEADER) {
		out_fmt(o, "<zesim: printf buffer header corrupted (offset %u)>\n", used);
		end = SPV_PRINTF_HEADER;
	}
	uint32_t pos = mod->printf_cursor;
	while (end >= 8 && pos <= end - 8) {
		const uint32_t size = load32(b + pos);
		if (size == 0)
			break; /* not written yet (a kernel still running), or dropped */
		if (size < 8 || size % 4 || size > end - pos) {
			out_fmt(o, "<zesim: printf buffer corrupted at offset %u (a record of %u bytes)>\n", pos, size);
			pos = end;
			break;
		}
		format_record(mod, load32(b + pos + 4), b + pos + 8, (size - 8) / 4, o);
		pos += size;
	}
	mod->printf_cursor = pos;
	const uint32_t dropped = load32(b + SPV_PRINTF_DROPPED);
	if (dropped != mod->printf_dropped) {
		out_fmt(err,
			"zesim: printf: %u record(s) did not fit the %u-byte printf buffer and were dropped (printf "
			"returned -1); %s sets the buffer's size\n",
			dropped - mod->printf_dropped, mod->printf_size, ZS_PRINTF_BUFFER_ENV);
		mod->printf_dropped = dropped;
	}
	if (!idle || used == SPV_PRINTF_HEADER)
		return;
	/* Nothing runs: every reserved record was written (or dropped).  Clear
	 * them and rewind; the compare-exchange keeps a record reserved by a
	 * launch submitted meanwhile by another thread. */
	memset(b + SPV_PRINTF_HEADER, 0, (pos > end ? pos : end) - SPV_PRINTF_HEADER);
	uint32_t expect = used;
	if (__atomic_compare_exchange_n((uint32_t *)(b + SPV_PRINTF_OFFSET), &expect, SPV_PRINTF_HEADER, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_sub((uint32_t *)(b + SPV_PRINTF_DROPPED), dropped, __ATOMIC_ACQ_REL);
		mod->printf_dropped = 0;
		mod->printf_cursor = SPV_PRINTF_HEADER;
	} else {
		mod->printf_cursor = end;
	}
}

/* The kernels' output on stdout, then the driver's notes on stderr. */
static void emit(out_t *o, out_t *err)
{
	if (o->oom || err->oom)
		fprintf(stderr, "zesim: printf: out of memory formatting the output\n");
	if (o->n) {
		fwrite(o->p, 1, o->n, stdout);
		fflush(stdout);
	}
	if (err->n)
		fwrite(err->p, 1, err->n, stderr);
	free(o->p);
	free(err->p);
}

void zs_printf_flush(zs_device_t *dev)
{
	if (!atomic_load(&any_printf))
		return;
	const int idle = zs_queue_all_idle(dev);
	out_t o = {0}, err = {0};
	pthread_mutex_lock(&printf_lock);
	for (zs_module_t *mod = printf_modules; mod; mod = mod->printf_next)
		if (mod->dev == dev)
			drain(mod, idle, &o, &err);
	emit(&o, &err);
	pthread_mutex_unlock(&printf_lock);
}

void zs_module_data_release(zs_module_t *mod)
{
	if (mod->printf_buf.ptr) {
		out_t o = {0}, err = {0};
		pthread_mutex_lock(&printf_lock);
		drain(mod, 0, &o, &err);
		emit(&o, &err);
		for (zs_module_t **p = &printf_modules; *p; p = &(*p)->printf_next)
			if (*p == mod) {
				*p = mod->printf_next;
				break;
			}
		pthread_mutex_unlock(&printf_lock);
		zs_os_bo_destroy(&mod->dev->os, &mod->printf_buf);
	}
	if (mod->data.ptr)
		zs_os_bo_destroy(&mod->dev->os, &mod->data);
}
