/* 8- and 16-bit integers in SPIR-V kernels (tests/kernels/narrow.cl), each
 * result checked against the same C computed on the host: wrapping at the
 * type's width, signed/unsigned division, shifts and comparisons, conversions,
 * bitcasts, width-dependent built-ins (add_sat, mul_hi, rotate, ...), vectors
 * of chars in memory, and byte/short stores of neighbouring work items into
 * one dword in global and local memory.  Then private memory
 * (tests/kernels/private.cl): arrays indexed at run time, a struct passed by
 * address, a private char array.
 *
 *     test_spirv_narrow NARROW.spv PRIVATE.spv */
#include "spirv.h"

static int8_t sat8(int v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }
static int16_t sat16(int v) { return (int16_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v); }
static uint8_t rot8(uint8_t v, unsigned k) { k &= 7; return (uint8_t)((v << k) | (v >> ((8 - k) & 7))); }

static const int8_t edges8[] = {0, 1, -1, 127, -128, 2, -2, 64, -64, 100, -100, 3};

static void char_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "char_ops");
	const uint32_t n = 512;
	int8_t *a = e2e_alloc_shared(e, n), *o8 = e2e_alloc_shared(e, n * 8);
	uint8_t *b = e2e_alloc_shared(e, n), *u8 = e2e_alloc_shared(e, n * 8);
	int32_t *o32 = e2e_alloc_shared(e, n * 6 * 4);
	uint32_t seed = 8;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = i < 144 ? edges8[i % 12] : (int8_t)e2e_rand(&seed);
		b[i] = i < 144 ? (uint8_t)edges8[i / 12] : (uint8_t)e2e_rand(&seed);
	}
	for (int pass = 0; pass < 2; pass++) {
		const int8_t kk = pass ? -100 : 77;
		const uint8_t ku = pass ? 250 : 6;
		const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o8}, {8, &u8}, {8, &o32}, {1, &kk}, {1, &ku}};
		spirv_launch(e, k, 32, n, 7, args);
		for (uint32_t i = 0; i < n; i++) {
			const int8_t x = a[i];
			const uint8_t y = b[i];
			const int8_t w8[8] = {
				(int8_t)(x + kk), (int8_t)(x * (int8_t)y), (int8_t)(x >> 3),
				y ? (int8_t)(x / (int8_t)(y | 1)) : 0, y ? (int8_t)(x % (int8_t)(y | 3)) : 0,
				(int8_t)-x, (int8_t)~x, sat8(x + kk),
			};
			const uint8_t wu[8] = {
				(uint8_t)(y + ku), (uint8_t)(y << (x & 7)), (uint8_t)(y >> (x & 7)), (uint8_t)(y / (ku | 1)),
				(uint8_t)(y > ku ? y - ku : 0), (uint8_t)((y * ku) >> 8), rot8(y, (unsigned)(x & 15)),
				(uint8_t)(x < 0 ? -x : x),
			};
			const int8_t yc = (int8_t)y;
			const int32_t w32[6] = {
				x, y,
				(x < yc) | (y < (uint8_t)x) << 1 | (x == -1) << 2 | (x >= kk) << 3,
				x + y,
				(x > yc ? x : yc) + (y < (uint8_t)x ? y : (uint8_t)x) * 1000,
				sat8(x * yc + kk) + ((x + yc) >> 1) * 1000,
			};
			for (int j = 0; j < 8; j++) {
				EXPECT(o8[i * 8 + j] == w8[j], "char_ops pass %d item %u char result %d: %d, expected %d (x %d y %u)",
				       pass, i, j, o8[i * 8 + j], w8[j], x, y);
				EXPECT(u8[i * 8 + j] == wu[j], "char_ops pass %d item %u uchar result %d: %u, expected %u (x %d y %u)",
				       pass, i, j, u8[i * 8 + j], wu[j], x, y);
			}
			for (int j = 0; j < 6; j++)
				EXPECT(o32[i * 6 + j] == w32[j], "char_ops pass %d item %u int result %d: %d, expected %d (x %d y %u)",
				       pass, i, j, o32[i * 6 + j], w32[j], x, y);
		}
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o8));
	CHECK(zeMemFree(e->ctx, u8));
	CHECK(zeMemFree(e->ctx, o32));
	CHECK(zeKernelDestroy(k));
}

static void short_ops(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "short_ops");
	const uint32_t n = 512;
	int16_t *a = e2e_alloc_shared(e, n * 2), *o16 = e2e_alloc_shared(e, n * 6 * 2);
	uint16_t *b = e2e_alloc_shared(e, n * 2), *u16 = e2e_alloc_shared(e, n * 4 * 2);
	int64_t *o64 = e2e_alloc_shared(e, n * 3 * 8);
	static const int16_t edges[] = {0, 1, -1, 32767, -32768, 255, -256, 1000, -1000, 3, 16384, -3};
	uint32_t seed = 16;
	for (uint32_t i = 0; i < n; i++) {
		a[i] = i < 144 ? edges[i % 12] : (int16_t)e2e_rand(&seed);
		b[i] = i < 144 ? (uint16_t)edges[i / 12] : (uint16_t)e2e_rand(&seed);
	}
	const int16_t kk = 2000;
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &o16}, {8, &u16}, {8, &o64}, {2, &kk}};
	spirv_launch(e, k, 16, n, 6, args);
	for (uint32_t i = 0; i < n; i++) {
		const int16_t x = a[i];
		const uint16_t y = b[i];
		const int16_t ys = (int16_t)y;
		const int16_t w16[6] = {
			(int16_t)(x * kk), (int16_t)(x >> (y & 15)), sat16(x - ys), (int16_t)((x * ys) >> 16),
			(int16_t)(float)(x / 3), x < -1000 ? -1000 : x > kk ? kk : x,
		};
		const uint16_t wu[4] = {
			(uint16_t)(y * y), (uint16_t)(y + (uint16_t)x > 65535 ? 65535 : y + (uint16_t)x), (uint16_t)(y - x),
			(uint16_t)(x > ys ? x - ys : ys - x),
		};
		const int64_t w64[3] = {x, (int64_t)y * x, (int16_t)(int64_t)(x * 65537LL)};
		for (int j = 0; j < 6; j++)
			EXPECT(o16[i * 6 + j] == w16[j], "short_ops item %u short result %d: %d, expected %d (x %d y %u)", i,
			       j, o16[i * 6 + j], w16[j], x, y);
		for (int j = 0; j < 4; j++)
			EXPECT(u16[i * 4 + j] == wu[j], "short_ops item %u ushort result %d: %u, expected %u (x %d y %u)", i,
			       j, u16[i * 4 + j], wu[j], x, y);
		for (int j = 0; j < 3; j++)
			EXPECT(o64[i * 3 + j] == w64[j], "short_ops item %u long result %d: %lld, expected %lld (x %d y %u)",
			       i, j, (long long)o64[i * 3 + j], (long long)w64[j], x, y);
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o16));
	CHECK(zeMemFree(e->ctx, u16));
	CHECK(zeMemFree(e->ctx, o64));
	CHECK(zeKernelDestroy(k));
}

static void vec_bytes(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "vec_bytes");
	const uint32_t n = 256;
	uint8_t *p = e2e_alloc_shared(e, n * 4), *q = e2e_alloc_shared(e, n * 4);
	uint32_t *w = e2e_alloc_shared(e, n * 3 * 4);
	int8_t *c3 = e2e_alloc_shared(e, n * 4);
	int16_t *s2 = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 4;
	for (uint32_t i = 0; i < n * 4; i++)
		p[i] = (uint8_t)e2e_rand(&seed);
	memset(c3, 0x5a, n * 4);
	const e2e_arg_t args[] = {{8, &p}, {8, &q}, {8, &w}, {8, &c3}, {8, &s2}};
	spirv_launch(e, k, 16, n, 5, args);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *v = &p[i * 4];
		const uint8_t wq[4] = {(uint8_t)(v[3] + 1), (uint8_t)(v[2] + 2), (uint8_t)(v[1] + 3), (uint8_t)(v[0] + 250)};
		uint32_t word;
		memcpy(&word, v, 4);
		uint8_t half[4];
		for (int j = 0; j < 4; j++)
			half[j] = (uint8_t)((int8_t)v[j] >> 1);
		uint32_t hw;
		memcpy(&hw, half, 4);
		int8_t c[4];
		const uint32_t t = word * 3u;
		memcpy(c, &t, 4);
		const uint32_t ww[3] = {word, hw, (uint32_t)(c[0] + c[1] * 3 + c[2] * 5 + c[3] * 7)};
		for (int j = 0; j < 4; j++)
			EXPECT(q[i * 4 + j] == wq[j], "vec_bytes item %u q.s%d: %u, expected %u", i, j, q[i * 4 + j], wq[j]);
		for (int j = 0; j < 3; j++)
			EXPECT(w[i * 3 + j] == ww[j], "vec_bytes item %u word %d: %#x, expected %#x", i, j, w[i * 3 + j], ww[j]);
		const int8_t wc[3] = {(int8_t)v[0], (int8_t)-(int8_t)v[1], (int8_t)(v[2] + v[3])};
		for (int j = 0; j < 3; j++)
			EXPECT(c3[i * 4 + j] == wc[j], "vec_bytes item %u char3.s%d: %d, expected %d", i, j, c3[i * 4 + j], wc[j]);
		const uint32_t sx = word ^ 0x80018002u;
		int16_t ws[2];
		memcpy(ws, &sx, 4);
		for (int j = 0; j < 2; j++)
			EXPECT(s2[i * 2 + j] == ws[j], "vec_bytes item %u short2.s%d: %d, expected %d", i, j, s2[i * 2 + j], ws[j]);
	}
	CHECK(zeMemFree(e->ctx, p));
	CHECK(zeMemFree(e->ctx, q));
	CHECK(zeMemFree(e->ctx, w));
	CHECK(zeMemFree(e->ctx, c3));
	CHECK(zeMemFree(e->ctx, s2));
	CHECK(zeKernelDestroy(k));
}

static void scatter(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "scatter");
	const uint32_t n = 1024, group = 128; /* a work group of the tiny preset */
	uint32_t *idx = e2e_alloc_shared(e, n * 4);
	uint8_t *bytes = e2e_alloc_shared(e, n), *out = e2e_alloc_shared(e, n);
	uint16_t *shorts = e2e_alloc_shared(e, n * 2);
	/* a permutation: neighbouring work items hit scattered bytes, and every
	 * byte of every dword is written by a different work item */
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	uint32_t seed = 99;
	for (uint32_t i = n - 1; i > 0; i--) {
		const uint32_t j = e2e_rand(&seed) % (i + 1), t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
	memset(bytes, 0xee, n);
	memset(shorts, 0xee, n * 2);
	const e2e_arg_t args[] = {{8, &idx}, {8, &bytes}, {8, &shorts}, {8, &out}};
	spirv_launch(e, k, group, n, 4, args);
	for (uint32_t i = 0; i < n; i++) {
		EXPECT(bytes[idx[i]] == (uint8_t)(i * 7 + 1), "scatter: byte %u = %u, expected %u", idx[i], bytes[idx[i]],
		       (uint8_t)(i * 7 + 1));
		EXPECT(shorts[idx[i]] == (uint16_t)(i * 1001 + 3), "scatter: short %u = %u, expected %u", idx[i],
		       shorts[idx[i]], (uint16_t)(i * 1001 + 3));
		const uint32_t l = i % group;
		/* tile[(l*37)&127] = l+100 for every l (37 is odd: a permutation);
		 * half_tile[(l*5)&63] = l*300 for l < 64 */
		uint32_t l2 = 0;
		while (((l2 * 37) & 127) != 127 - l)
			l2++;
		uint32_t l3 = 0;
		while (((l3 * 5) & 63) != (l & 63))
			l3++;
		const uint8_t want = (uint8_t)((l + 100) + (l2 + 100) + (uint8_t)(uint16_t)(l3 * 300));
		EXPECT(out[i] == want, "scatter: local result %u = %u, expected %u", i, out[i], want);
	}
	CHECK(zeMemFree(e->ctx, idx));
	CHECK(zeMemFree(e->ctx, bytes));
	CHECK(zeMemFree(e->ctx, shorts));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeKernelDestroy(k));
}

static void vloads(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "vloads");
	const uint32_t n = 64; /* one group: the local tile covers it */
	float *f = e2e_alloc_shared(e, (2 * n + 8) * 4), *of = e2e_alloc_shared(e, (5 * n + 8) * 4);
	uint8_t *b = e2e_alloc_shared(e, 3 * n + 8), *ob = e2e_alloc_shared(e, 3 * n + 8);
	int16_t *h = e2e_alloc_shared(e, (2 * n + 4) * 2), *oh = e2e_alloc_shared(e, (2 * n + 4) * 2);
	uint32_t seed = 77;
	for (uint32_t i = 0; i < 2 * n + 8; i++)
		f[i] = (float)(int)(e2e_rand(&seed) % 2001 - 1000) * 0.125f;
	for (uint32_t i = 0; i < 3 * n + 8; i++)
		b[i] = (uint8_t)e2e_rand(&seed);
	for (uint32_t i = 0; i < 2 * n + 4; i++)
		h[i] = (int16_t)e2e_rand(&seed);
	memset(of, 0, (5 * n + 8) * 4);
	memset(ob, 0xa5, 3 * n + 8);
	memset(oh, 0, (2 * n + 4) * 2);
	const e2e_arg_t args[] = {{8, &f}, {8, &b}, {8, &h}, {8, &of}, {8, &ob}, {8, &oh}};
	spirv_launch(e, k, n, n, 6, args);
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < 4; j++) {
			const float want = f[i + 1 + j] * 2.0f + f[i + j];
			EXPECT(float_bits(of[1 + 4 * i + j]) == float_bits(want), "vloads item %u of[%u]: %a, expected %a", i,
			       1 + 4 * i + j, of[1 + 4 * i + j], want);
		}
		const float wt = f[i + 7] + f[i + 4];
		EXPECT(float_bits(of[4 * 64 + 1 + i]) == float_bits(wt), "vloads item %u t: %a, expected %a", i,
		       of[4 * 64 + 1 + i], wt);
		for (uint32_t j = 0; j < 3; j++) {
			const uint8_t want = (uint8_t)(b[1 + 3 * i + j] + j + 1);
			EXPECT(ob[3 * i + 2 + j] == want, "vloads item %u ob[%u]: %u, expected %u", i, 3 * i + 2 + j,
			       ob[3 * i + 2 + j], want);
		}
		EXPECT(oh[2 * i + 1] == h[2 * i + 2] && oh[2 * i + 2] == h[2 * i + 1], "vloads item %u: shorts %d %d", i,
		       oh[2 * i + 1], oh[2 * i + 2]);
	}
	EXPECT(ob[0] == 0xa5 && ob[1] == 0xa5 && ob[3 * n + 2] == 0xa5, "vloads: bytes outside written");
	CHECK(zeMemFree(e->ctx, f));
	CHECK(zeMemFree(e->ctx, of));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, ob));
	CHECK(zeMemFree(e->ctx, h));
	CHECK(zeMemFree(e->ctx, oh));
	CHECK(zeKernelDestroy(k));
}

static void shuffles(e2e_t *e, ze_module_handle_t m)
{
	ze_kernel_handle_t k = e2e_kernel(m, "shuffles");
	const uint32_t n = 64;
	int32_t *a = e2e_alloc_shared(e, n * 16), *o4 = e2e_alloc_shared(e, 2 * n * 16);
	uint8_t *b = e2e_alloc_shared(e, n * 8), *o8 = e2e_alloc_shared(e, n * 4);
	uint32_t *mk = e2e_alloc_shared(e, n * 4);
	uint32_t seed = 182;
	for (uint32_t i = 0; i < n * 4; i++)
		a[i] = (int32_t)e2e_rand(&seed);
	for (uint32_t i = 0; i < n * 8; i++)
		b[i] = (uint8_t)e2e_rand(&seed);
	for (uint32_t i = 0; i < n; i++)
		mk[i] = e2e_rand(&seed);
	const e2e_arg_t args[] = {{8, &a}, {8, &b}, {8, &mk}, {8, &o4}, {8, &o8}};
	spirv_launch(e, k, 32, n, 5, args);
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t w = mk[i], mask[4] = {w, w >> 3, w >> 6, w >> 9};
		for (uint32_t j = 0; j < 4; j++) {
			const int32_t s1 = a[i * 4 + (mask[j] & 3)];
			const uint32_t k2 = mask[j] & 7;
			const int32_t s2 = k2 < 4 ? a[i * 4 + k2] : (int32_t)((uint32_t)a[i * 4 + k2 - 4] * 3u);
			const uint8_t s8 = b[i * 8 + ((uint8_t)(mask[j] >> 1) & 7)];
			EXPECT(o4[i * 4 + j] == s1, "shuffle item %u.%u: %d, expected %d", i, j, o4[i * 4 + j], s1);
			EXPECT(o4[(i + 64) * 4 + j] == s2, "shuffle2 item %u.%u: %d, expected %d", i, j, o4[(i + 64) * 4 + j], s2);
			EXPECT(o8[i * 4 + j] == s8, "shuffle of uchar8 item %u.%u: %u, expected %u", i, j, o8[i * 4 + j], s8);
		}
	}
	CHECK(zeMemFree(e->ctx, a));
	CHECK(zeMemFree(e->ctx, o4));
	CHECK(zeMemFree(e->ctx, b));
	CHECK(zeMemFree(e->ctx, o8));
	CHECK(zeMemFree(e->ctx, mk));
	CHECK(zeKernelDestroy(k));
	/* prefetch: a hint */
	k = e2e_kernel(m, "prefetched");
	float *pa = e2e_alloc_shared(e, n * 16), *po = e2e_alloc_shared(e, n * 16);
	for (uint32_t i = 0; i < n * 4; i++)
		pa[i] = (float)i * 0.5f;
	const e2e_arg_t pargs[] = {{8, &pa}, {8, &po}};
	spirv_launch(e, k, 32, n, 2, pargs);
	for (uint32_t i = 0; i < n * 4; i++)
		EXPECT(po[i] == pa[i] * 2.0f, "prefetched %u: %g", i, (double)po[i]);
	CHECK(zeMemFree(e->ctx, pa));
	CHECK(zeMemFree(e->ctx, po));
	CHECK(zeKernelDestroy(k));
}

/* private.cl, on the host */
static void private_host(const int32_t *in, int i, int32_t *out, float *fout)
{
	int32_t hist[8];
	for (int j = 0; j < 8; j++)
		hist[j] = in[i] ^ j;
	const int n = in[i] & 15;
	for (int j = 0; j < n; j++)
		hist[(in[i] >> j) & 7] += j + 1;
	float v[6];
	for (int j = 0; j < 6; j++)
		v[j] = (float)((in[i] * (j + 3)) % 17) - 8.0f;
	for (int j = 1; j < 6; j++) {
		const float x = v[j];
		int k = j - 1;
		while (k >= 0 && v[k] > x) {
			v[k + 1] = v[k];
			k--;
		}
		v[k + 1] = x;
	}
	int count = 0;
	float sum = 0.0f;
	int16_t tag[2] = {0, 0};
	for (int j = 0; j < 6; j++)
		if (v[j] > -4.0f) {
			count++;
			sum += v[j];
			tag[j & 1] = (int16_t)(tag[j & 1] + j);
		}
	uint8_t bytes[11];
	for (int j = 0; j < 11; j++)
		bytes[j] = (uint8_t)(in[i] + j * 29);
	uint32_t mix = 0;
	for (int j = 0; j < 11; j++)
		mix = mix * 31u + bytes[(j * 5 + i) % 11];
	for (int j = 0; j < 8; j++)
		out[j] = hist[j] * 3 + j;
	out[8] = count;
	out[9] = (int32_t)((uint16_t)tag[0] | (uint32_t)(int32_t)tag[1] << 16);
	out[10] = (int32_t)mix;
	out[11] = hist[in[i] & 7];
	for (int j = 0; j < 6; j++)
		fout[j] = v[j];
	fout[6] = sum;
}

static void private_ops(e2e_t *e, const char *path)
{
	ze_module_handle_t m = spirv_module(e, path);
	ze_kernel_handle_t k = e2e_kernel(m, "private_ops");
	const uint32_t n = 256;
	int32_t *in = e2e_alloc_shared(e, n * 4), *out = e2e_alloc_shared(e, n * 12 * 4);
	float *fout = e2e_alloc_shared(e, n * 7 * 4);
	uint32_t seed = 5;
	for (uint32_t i = 0; i < n; i++)
		in[i] = (int32_t)(e2e_rand(&seed) & 0x7fffffff) >> (i % 13);
	const e2e_arg_t args[] = {{8, &in}, {8, &out}, {8, &fout}};
	spirv_launch(e, k, 32, n, 3, args);
	for (uint32_t i = 0; i < n; i++) {
		int32_t wo[12];
		float wf[7];
		private_host(in, (int)i, wo, wf);
		for (int j = 0; j < 12; j++)
			EXPECT(out[i * 12 + j] == wo[j], "private_ops item %u int result %d: %d, expected %d (in %d)", i, j,
			       out[i * 12 + j], wo[j], in[i]);
		for (int j = 0; j < 7; j++)
			EXPECT(float_bits(fout[i * 7 + j]) == float_bits(wf[j]),
			       "private_ops item %u float result %d: %a, expected %a (in %d)", i, j, fout[i * 7 + j], wf[j], in[i]);
	}
	CHECK(zeKernelDestroy(k));
	CHECK(zeMemFree(e->ctx, in));
	CHECK(zeMemFree(e->ctx, out));
	CHECK(zeMemFree(e->ctx, fout));
	CHECK(zeModuleDestroy(m));
}

int main(int argc, char **argv)
{
	EXPECT(argc == 3, "usage: test_spirv_narrow NARROW.spv PRIVATE.spv");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = spirv_module(&e, argv[1]);
	char_ops(&e, m);
	short_ops(&e, m);
	vec_bytes(&e, m);
	scatter(&e, m);
	vloads(&e, m);
	shuffles(&e, m);
	CHECK(zeModuleDestroy(m));
	private_ops(&e, argv[2]);
	e2e_fini(&e);
	note("narrow: char and short arithmetic, conversions, bitcasts, built-ins, byte and short stores; "
	     "private arrays");
	return 0;
}
