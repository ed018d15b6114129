/* ZE-ISA encoding checked against encodings worked out by hand from the bit
 * layout in docs/isa.md §2 (not from the encoder), and decoder rejections. */
#include <stdint.h>
#include <stdio.h>
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
