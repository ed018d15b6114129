/* ZE-ISA encoding checked against encodings worked out by hand from the bit
 * layout in docs/isa.md §2 (not from the encoder), and decoder rejections. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zas.h"
#include "zs/ze_isa.h"

static int failures;

#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			failures++;                                                        \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                        \
			printf(__VA_ARGS__);                                               \
			printf("\n");                                                      \
		}                                                                          \
	} while (0)

static void dwords(const uint8_t *b, uint32_t out[4])
{
	for (int i = 0; i < 4; i++)
		out[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
			 (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
}

static void expect_encoding(const char *line, uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
	char src[256];
	snprintf(src, sizeof(src), ".kernel k\n.simd 16\n%s\n", line);
	zas_options_t opt = {0, 0, 5};
	zm_module_t m;
	unsigned errs = zas_assemble("t.zeasm", src, strlen(src), &opt, &m, stdout);
	CHECK(errs == 0, "'%s' did not assemble", line);
	if (errs)
		return;
	uint32_t w[4];
	dwords(m.kernels[0].text, w);
	CHECK(w[0] == d0 && w[1] == d1 && w[2] == d2 && w[3] == d3,
	      "'%s': got %08x %08x %08x %08x, want %08x %08x %08x %08x", line, w[0], w[1], w[2],
	      w[3], d0, d1, d2, d3);
	zm_module_free(&m);
}

static void expect_illegal(uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3, const char *why)
{
	uint8_t b[16];
	uint32_t w[4] = {d0, d1, d2, d3};
	for (int i = 0; i < 16; i++)
		b[i] = (uint8_t)(w[i / 4] >> (8 * (i % 4)));
	ze_inst_t in;
	char err[200] = "";
	int rc = ze_decode(b, &in, err, sizeof(err));
	CHECK(rc != 0, "%s: decoder accepted %08x %08x %08x %08x", why, d0, d1, d2, d3);
	CHECK(rc == 0 || strstr(err, why) != NULL, "%s: message was '%s'", why, err);
}

/* ---- known-good encodings, one program at a time ------------------------------
 *
 * Every entry was worked out by hand from docs/isa.md §2 (not produced by the
 * encoder):
 *   header  opcode | bp<<8 | esize code<<9 (1:0 8:0x200 16:0x400) | pred 0x800 |
 *           invert 0x1000 | f1 0x2000 | cmod<<14 (eq 0x4000 ne 0x8000 lt 0xc000
 *           le 0x10000 gt 0x14000 ge 0x18000) | dtype<<18 (d 0x40000 f 0x80000) |
 *           stype<<22 (d 0x400000 f 0x800000)
 *   operand kind | reg<<3 | sub<<10 | neg 0x2000 | abs 0x4000; kinds: null 0,
 *           vector 1 (rN = N*8+1), scalar 2 (rN.k = k*0x400+N*8+2), ARF 3
 *           (number*8+3 + k*0x400), immediate 4
 *   dword 1 dst | src0<<16; dword 2 src1 | src2<<16; dword 3 immediate, jump
 *           offset (relative to the instruction) or send descriptor
 *           msg | atomic<<8 | (vsize-1)<<12.
 * The text is the canonical assembly, which the disassembler must print back
 * (jump targets as @byte-offset from the start of the section). */
typedef struct {
	const char *text;
	uint32_t w[4];
} known_t;

/* Straight-line code: every ALU, math and ctrl opcode, every send message and
 * atomic, every operand kind, modifier, predicate, cmod, SIMD width, type. */
static const known_t straight[] = {
	/* nop: all zero at SIMD1; {bp} and SIMD16 */
	{"nop (1)", {0x00000000, 0x00000000, 0x00000000, 0x00000000}},
	{"nop (16) {bp}", {0x00000500, 0x00000000, 0x00000000, 0x00000000}},
	/* mov: immediate f; d <- ud; scalar dst with -|scalar| and {bp}, (!f1) */
	{"mov (16) r1:f 1.5:f", {0x00880401, 0x00040009, 0x00000000, 0x3fc00000}},
	{"mov (16) r20:d r21:ud", {0x00040401, 0x00a900a1, 0x00000000, 0x00000000}},
	{"(!f1) mov (1) r3.5:f -|r4.2|:f {bp}", {0x00883901, 0x6822141a, 0x00000000, 0x00000000}},
	{"mov (8) r40:d -r41:d", {0x00440201, 0x21490141, 0x00000000, 0x00000000}},
	{"mov (8) r42:f -2.5:f", {0x00880201, 0x00040151, 0x00000000, 0xc0200000}},
	/* mov with every ARF (num: ip 0 f0 1 f1 2 a0 3 acc0 4 acc1 5 sr0 6 cr0 7 ce 8
	 * tdr 9 dbg0 10 tm0 11), as destination (SIMD1) and source */
	{"mov (1) f1.0:ud 7:ud", {0x00000001, 0x00040013, 0x00000000, 0x00000007}},
	{"mov (16) r30:ud sr0.2:ud", {0x00000401, 0x083300f1, 0x00000000, 0x00000000}},
	{"mov (1) acc0.7:ud r5.3:ud", {0x00000001, 0x0c2a1c23, 0x00000000, 0x00000000}},
	{"mov (1) cr0.1:ud ce.0:ud", {0x00000001, 0x0043043b, 0x00000000, 0x00000000}},
	{"mov (1) r6.0:ud ip.0:ud", {0x00000001, 0x00030032, 0x00000000, 0x00000000}},
	{"mov (1) dbg0.1:ud tm0.1:ud", {0x00000001, 0x045b0453, 0x00000000, 0x00000000}},
	{"mov (1) tdr.7:ud a0.6:ud", {0x00000001, 0x181b1c4b, 0x00000000, 0x00000000}},
	{"mov (1) acc1.0:ud f0.0:ud", {0x00000001, 0x000b002b, 0x00000000, 0x00000000}},
	/* sel: (f0) with an f immediate in src1; (!f1) SIMD8 scalar and -vector */
	{"(f0) sel (16) r50:f r51:f 0.5:f", {0x00880c02, 0x01990191, 0x00000004, 0x3f000000}},
	{"(!f1) sel (8) r52:d r53.1:d -r54:d", {0x00443a02, 0x05aa01a1, 0x000021b1, 0x00000000}},
	/* logic and shifts */
	{"not (16) r60:ud r61:ud", {0x00000403, 0x01e901e1, 0x00000000, 0x00000000}},
	{"and (8) r62:ud r63.4:ud 0xff:ud", {0x00000204, 0x11fa01f1, 0x00000004, 0x000000ff}},
	{"or (16) r64:d r65:d r66:d", {0x00440405, 0x02090201, 0x00000211, 0x00000000}},
	{"xor (1) r67.7:ud r68.0:ud r69.6:ud", {0x00000006, 0x02221e1a, 0x00001a2a, 0x00000000}},
	{"shl (16) r70:ud r71:ud 3:ud", {0x00000407, 0x02390231, 0x00000004, 0x00000003}},
	{"shr (8) r72:ud r73:ud r74.0:ud", {0x00000208, 0x02490241, 0x00000252, 0x00000000}},
	{"asr (16) r76:d r78:d 31:d", {0x00440409, 0x02710261, 0x00000004, 0x0000001f}},
	/* arithmetic */
	{"add (16) r10:d r11:d 5:d", {0x00440410, 0x00590051, 0x00000004, 0x00000005}},
	{"(f0) add (8) r80:f |r81|:f -r82.3:f", {0x00880a10, 0x42890281, 0x00002e92, 0x00000000}},
	{"add (16) r84:f r85:ud r86:ud", {0x00080410, 0x02a902a1, 0x000002b1, 0x00000000}},
	{"mul (1) r10.0:ud r0.0:ud r0.4:ud", {0x00000011, 0x00020052, 0x00001002, 0x00000000}},
	{"mul (16) r88:f r90:f -0.25:f", {0x00880411, 0x02d102c1, 0x00000004, 0xbe800000}},
	{"mad (16) r92:f r94:f r96:f r98:f", {0x00880412, 0x02f102e1, 0x03110301, 0x00000000}},
	{"mad (8) r100:d r101:d 2:d -r102.5:d", {0x00440212, 0x03290321, 0x37320004, 0x00000002}},
	{"min (16) r104:d r106:d r108:d", {0x00440413, 0x03510341, 0x00000361, 0x00000000}},
	{"(!f0) max (8) r110:ud r111:ud 0x10:ud", {0x00001a14, 0x03790371, 0x00000004, 0x00000010}},
	/* cmp: every condition modifier, both flags, null and GRF destinations */
	{"cmp.eq.f0 (16) null r2:d 0:d", {0x00404415, 0x00110000, 0x00000004, 0x00000000}},
	{"cmp.ne.f1 (8) r3:ud r4:f r5:f", {0x0080a215, 0x00210019, 0x00000029, 0x00000000}},
	{"cmp.lt.f1 (8) null r2:ud 3:ud", {0x0000e215, 0x00110000, 0x00000004, 0x00000003}},
	{"cmp.le.f0 (1) null r6.1:d -7:d", {0x00410015, 0x04320000, 0x00000004, 0xfffffff9}},
	{"(f1) cmp.gt.f1 (16) null r8:f 0.5:f", {0x00816c15, 0x00410000, 0x00000004, 0x3f000000}},
	{"(!f0) cmp.ge.f0 (8) r12:d r13:d r14.2:d", {0x00459a15, 0x00690061, 0x00000872, 0x00000000}},
	/* extended math */
	{"math.inv (16) r20:f r22:f", {0x00880420, 0x00b100a1, 0x00000000, 0x00000000}},
	{"math.sqrt (8) r24:f |r25|:f", {0x00880221, 0x40c900c1, 0x00000000, 0x00000000}},
	{"math.exp (1) r26.3:f r27.0:f", {0x00880022, 0x00da0cd2, 0x00000000, 0x00000000}},
	{"(f0) math.log (16) r28:f -r30:f", {0x00880c23, 0x20f100e1, 0x00000000, 0x00000000}},
	/* wait (immediate and scalar), halt */
	{"wait (1) 0x64:ud", {0x0000003a, 0x00040000, 0x00000000, 0x00000064}},
	{"wait (1) r3.2:ud", {0x0000003a, 0x081a0000, 0x00000000, 0x00000000}},
	{"halt (1)", {0x0000003b, 0x00000000, 0x00000000, 0x00000000}},
	/* sipret (the system routine only; docs/debug.md §2.3) */
	{"sipret (1)", {0x0000003c, 0x00000000, 0x00000000, 0x00000000}},
	/* calla lo hi (docs/isa.md §3.5): GRF scalars, an immediate high dword, predicated */
	{"calla (1) r7.0:ud r7.1:ud", {0x0000003d, 0x003a0000, 0x0000043a, 0x00000000}},
	{"(f0) calla (1) r9.2:ud 1:ud", {0x0000083d, 0x084a0000, 0x00000004, 0x00000001}},
	/* send.load (d a b): v1..v4, predicated */
	{"send.load (16) r20 r13 r7.0", {0x00000440, 0x006900a1, 0x003a0000, 0x00000000}},
	{"send.load.v2 (8) r20 r4 r7.2", {0x00000240, 0x002100a1, 0x083a0000, 0x00001000}},
	{"(f1) send.load.v4 (8) r40 r6 r7.4", {0x00002a40, 0x00310141, 0x103a0000, 0x00003000}},
	/* send.store (a p b) */
	{"send.store (16) r13 r24 r7.4", {0x00000440, 0x00690000, 0x103a00c1, 0x00000001}},
	{"send.store.v3 (8) r10 r12 r8.6", {0x00000240, 0x00510000, 0x18420061, 0x00002001}},
	/* send.atomic (d a p b): every operation; null dst; inc/dec take no payload */
	{"send.atomic.add (16) null r4 r12 r7.0", {0x00000440, 0x00210000, 0x003a0061, 0x00000002}},
	{"send.atomic.sub (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000102}},
	{"send.atomic.min (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000202}},
	{"send.atomic.max (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000302}},
	{"send.atomic.umin (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000402}},
	{"send.atomic.umax (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000502}},
	{"send.atomic.and (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000602}},
	{"send.atomic.or (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000702}},
	{"send.atomic.xor (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000802}},
	{"send.atomic.xchg (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000902}},
	{"send.atomic.cmpxchg (8) r9 r4 r12 r2.0", {0x00000240, 0x00210049, 0x00120061, 0x00000a02}},
	{"send.atomic.inc (8) r9 r4 null r2.0", {0x00000240, 0x00210049, 0x00120000, 0x00000b02}},
	{"send.atomic.dec (8) r9 r4 null r2.0", {0x00000240, 0x00210049, 0x00120000, 0x00000c02}},
	/* SLM messages */
	{"send.slm.load (1) r14 r13", {0x00000040, 0x00690071, 0x00000000, 0x00000003}},
	{"send.slm.load.v2 (16) r50 r10", {0x00000440, 0x00510191, 0x00000000, 0x00001003}},
	{"send.slm.store (8) r10 r11", {0x00000240, 0x00510000, 0x00000059, 0x00000004}},
	{"send.slm.store.v4 (16) r10 r20", {0x00000440, 0x00510000, 0x000000a1, 0x00003004}},
	{"send.slm.atomic.umax (8) r30 r31 r32", {0x00000240, 0x00f900f1, 0x00000101, 0x00000505}},
	{"(!f0) send.slm.atomic.inc (16) null r31 null", {0x00001c40, 0x00f90000, 0x00000000, 0x00000b05}},
	/* barrier, fence ({bp}), timestamp (SIMD1, qword scalar), eot */
	{"send.barrier (16)", {0x00000440, 0x00000000, 0x00000000, 0x00000006}},
	{"send.fence (8) {bp}", {0x00000340, 0x00000000, 0x00000000, 0x00000007}},
	{"send.timestamp (1) r20.2", {0x00000040, 0x000008a2, 0x00000000, 0x00000008}},
	{"send.eot (16)", {0x00000440, 0x00000000, 0x00000000, 0x00000009}},
};

/* Branches: jmpi both ways, if/else/endif, do/break/cont/while, call/ret;
 * entry i is at byte 16*i, offsets are relative to the instruction. */
static const known_t branches[] = {
	{"jmpi (1) @32", {0x00000030, 0x00000000, 0x00000000, 0x00000020}},		 /* 0 */
	{"(!f1) jmpi (1) @0", {0x00003830, 0x00000000, 0x00000000, 0xfffffff0}},	 /* 16 */
	{"(f1) if (16) @64", {0x00002c31, 0x00000000, 0x00000000, 0x00000020}},	 /* 32 */
	{"nop (16)", {0x00000400, 0x00000000, 0x00000000, 0x00000000}},		 /* 48 */
	{"else (16) @96", {0x00000432, 0x00000000, 0x00000000, 0x00000020}},		 /* 64 */
	{"nop (16)", {0x00000400, 0x00000000, 0x00000000, 0x00000000}},		 /* 80 */
	{"endif (16)", {0x00000433, 0x00000000, 0x00000000, 0x00000000}},		 /* 96 */
	{"do (8)", {0x00000234, 0x00000000, 0x00000000, 0x00000000}},			 /* 112 */
	{"(f0) break (8) @176", {0x00000a36, 0x00000000, 0x00000000, 0x00000030}},	 /* 128 */
	{"(!f0) cont (8) @176", {0x00001a37, 0x00000000, 0x00000000, 0x00000020}},	 /* 144 */
	{"nop (8)", {0x00000200, 0x00000000, 0x00000000, 0x00000000}},			 /* 160 */
	{"(f1) while (8) @128", {0x00002a35, 0x00000000, 0x00000000, 0xffffffd0}},	 /* 176 */
	{"call (16) @240", {0x00000438, 0x00000000, 0x00000000, 0x00000030}},		 /* 192 */
	{"send.eot (16)", {0x00000440, 0x00000000, 0x00000000, 0x00000009}},		 /* 208 */
	{"nop (16)", {0x00000400, 0x00000000, 0x00000000, 0x00000000}},		 /* 224 */
	{"ret (16)", {0x00000439, 0x00000000, 0x00000000, 0x00000000}},		 /* 240 */
};

static int opcodes_seen[256];

/* encode(asm) == bytes for the whole program, then for each entry
 * decode(bytes) == asm, and the decoded fields encode back to the bytes. */
static void expect_program(const char *name, const known_t *t, size_t n)
{
	size_t len = 64;
	for (size_t i = 0; i < n; i++)
		len += strlen(t[i].text) + 1;
	char *src = malloc(len);
	size_t at = (size_t)sprintf(src, ".kernel k\n.simd 16\n");
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(src + at, "%s\n", t[i].text);
	zas_options_t opt = {0, 0, 5};
	zm_module_t m;
	unsigned errs = zas_assemble(name, src, strlen(src), &opt, &m, stdout);
	CHECK(errs == 0, "%s: the program did not assemble", name);
	if (!errs) {
		CHECK(m.kernels[0].text_size == 16 * n, "%s: %zu bytes of text, want %zu", name,
		      (size_t)m.kernels[0].text_size, 16 * n);
		for (size_t i = 0; i < n && 16 * i < m.kernels[0].text_size; i++) {
			uint32_t w[4];
			dwords(m.kernels[0].text + 16 * i, w);
			CHECK(memcmp(w, t[i].w, 16) == 0,
			      "encode '%s': got %08x %08x %08x %08x, want %08x %08x %08x %08x", t[i].text,
			      w[0], w[1], w[2], w[3], t[i].w[0], t[i].w[1], t[i].w[2], t[i].w[3]);
		}
		zm_module_free(&m);
	}
	free(src);
	for (size_t i = 0; i < n; i++) {
		uint8_t b[16], again[16];
		for (int j = 0; j < 16; j++)
			b[j] = (uint8_t)(t[i].w[j / 4] >> (8 * (j % 4)));
		ze_inst_t in;
		char err[200] = "", text[200] = "";
		if (ze_decode(b, &in, err, sizeof(err)) != 0) {
			CHECK(0, "decode '%s': rejected: %s", t[i].text, err);
			continue;
		}
		opcodes_seen[in.opcode] = 1;
		ze_format(&in, (uint32_t)(16 * i), NULL, NULL, text, sizeof(text));
		CHECK(strcmp(text, t[i].text) == 0, "decode %08x %08x %08x %08x: '%s', want '%s'", t[i].w[0],
		      t[i].w[1], t[i].w[2], t[i].w[3], text, t[i].text);
		ze_encode(&in, again);
		CHECK(memcmp(again, b, 16) == 0, "'%s': decoded fields do not encode back", t[i].text);
	}
}

/* A few decoded fields checked one by one (the text covers the rest). */
static void expect_fields(void)
{
	const uint32_t w[4] = {0x00459a15, 0x00690061, 0x00000872, 0}; /* (!f0) cmp.ge.f0 (8) r12:d r13:d r14.2:d */
	uint8_t b[16];
	for (int j = 0; j < 16; j++)
		b[j] = (uint8_t)(w[j / 4] >> (8 * (j % 4)));
	ze_inst_t in;
	char err[200];
	CHECK(ze_decode(b, &in, err, sizeof(err)) == 0, "cmp.ge: %s", err);
	CHECK(in.opcode == 0x15 && in.esize == 8 && in.pred && in.pred_inv && in.flag == 0 && in.cmod == 6 &&
		      in.dtype == 1 && in.stype == 1 && in.bp == 0,
	      "cmp.ge header fields: op %x size %u pred %u inv %u flag %u cmod %u types %u %u", in.opcode,
	      in.esize, in.pred, in.pred_inv, in.flag, in.cmod, in.dtype, in.stype);
	CHECK(in.dst.kind == 1 && in.dst.reg == 12 && in.src[0].kind == 1 && in.src[0].reg == 13 &&
		      in.src[1].kind == 2 && in.src[1].reg == 14 && in.src[1].sub == 2 && in.src[2].kind == 0,
	      "cmp.ge operands");
	const uint32_t s[4] = {0x00002a40, 0x00310141, 0x103a0000, 0x00003000}; /* (f1) send.load.v4 (8) r40 r6 r7.4 */
	for (int j = 0; j < 16; j++)
		b[j] = (uint8_t)(s[j / 4] >> (8 * (j % 4)));
	CHECK(ze_decode(b, &in, err, sizeof(err)) == 0, "send.load.v4: %s", err);
	CHECK(in.opcode == 0x40 && in.esize == 8 && in.pred && !in.pred_inv && in.flag == 1 &&
		      ze_send_msg(in.dw3) == 0 && ze_send_vsize(in.dw3) == 4 && in.dst.reg == 40 &&
		      in.src[0].reg == 6 && in.src[2].kind == 2 && in.src[2].reg == 7 && in.src[2].sub == 4,
	      "send.load.v4 fields");
}

int main(void)
{
	expect_encoding("add (16) r10:d r11:d 5:d", 0x00440410, 0x00590051, 0x00000004, 5);
	expect_encoding("(!f1) mov (1) r3.5:f -|r4.2|:f {bp}", 0x00883901, 0x6822141a, 0, 0);
	expect_encoding("send.load.v2 (8) r20 r4 r7.2", 0x00000240, 0x002100a1, 0x083a0000,
			0x00001000);
	expect_encoding("cmp.lt.f1 (8) null r2:ud 3:ud", 0x0000e215, 0x00110000, 4, 3);
	expect_encoding("mov (16) r1:f 1.5:f", 0x00880401, 0x00040009, 0, 0x3fc00000);
	expect_encoding("send.atomic.cmpxchg (8) r9 r4 r12 r2.0", 0x00000240, 0x00210049,
			0x00120061, 0x00000a02);
	expect_encoding("l: jmpi l", 0x00000030, 0, 0, 0);
	expect_encoding("mov (1) f1.0:ud 7:ud", 0x00000001, 0x00040013, 0, 7);

	expect_program("straight.zeasm", straight, sizeof(straight) / sizeof(straight[0]));
	expect_program("branches.zeasm", branches, sizeof(branches) / sizeof(branches[0]));
	expect_fields();
	/* Every opcode of ze_isa.def has at least one known-good encoding. */
#define ZE_OP(ENUM, code, mnemonic, ...) CHECK(opcodes_seen[code], "no known-good encoding for %s", mnemonic);
#include "zs/ze_isa.def"
#undef ZE_OP

	/* The encoder's table lookups agree with the .def entries. */
	CHECK(ze_op_by_name("mad") && ze_op_by_name("mad")->opcode == 0x12, "mad opcode");
	CHECK(ze_lat_cycles(ze_op_by_name("math.sqrt")->lat) == 16, "math latency");
	CHECK(ze_atomic_payload_elements(ZE_ATOMIC_INC) == 0, "inc payload");

	expect_illegal(0x000000ff, 0, 0, 0, "unknown opcode");
	expect_illegal(0x04000001, 0x00090011, 0, 0, "reserved header bits");
	expect_illegal(0x00000601, 0x00090011, 0, 0, "execution size code 3");
	expect_illegal(0x00000401, 0x0009000a, 0, 0, "scalar destination needs execution size 1");
	expect_illegal(0x00000410, 0x00040011, 0x00000004, 1, "more than one immediate");
	expect_illegal(0x00000402, 0x00090011, 0x00000011, 0, "sel must be predicated");
	expect_illegal(0x00440420, 0x00090011, 0, 0, "needs source type f");
	expect_illegal(0x00000030, 0, 0, 8, "not a multiple of 16");
	expect_illegal(0x00000401, 0x03f90011, 0, 0, "spans past r127");
	expect_illegal(0x00000040, 0, 0, 0x0000000b, "unknown message");
	expect_illegal(0x00000001, 0x0004007b, 0, 7, "unknown ARF 15");
	expect_illegal(0x00000001, 0x00040033, 0, 7, "sr0 is not writable");

	if (failures)
		printf("%d failure(s)\n", failures);
	else
		printf("test_isa: all checks passed\n");
	return failures != 0;
}
