/* zesim-dbg's command syntax (tools/dbg/zdbg_cmd.c): each case with its
 * written-down expected parse, and inputs that must be refused. */
#include <stdio.h>
#include <string.h>

#include "zdbg_cmd.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
			printf(__VA_ARGS__);                                                                           \
			printf("\n");                                                                                  \
			failures++;                                                                                    \
		}                                                                                                      \
	} while (0)

static void regref(const char *s, int ok, uint32_t type, uint32_t reg, uint32_t elem)
{
	zd_regref_t r = {0, 0, 0};
	int rc = zd_parse_regref(s, &r);
	if (!ok) {
		CHECK(rc != 0, "%s should be refused (got type %u reg %u elem %u)", s, r.type, r.reg, r.elem);
		return;
	}
	CHECK(rc == 0 && r.type == type && r.reg == reg && r.elem == elem, "%s: rc %d type %u reg %u elem %u", s, rc,
	      r.type, r.reg, r.elem);
}

static void loc(const char *s, int ok, zd_loc_kind_t kind, const char *name, uint64_t value)
{
	zd_loc_t l;
	char err[200] = "";
	int rc = zd_parse_loc(s, &l, err, sizeof(err));
	if (!ok) {
		CHECK(rc != 0 && err[0], "\"%s\" should be refused with a message", s);
		return;
	}
	CHECK(rc == 0 && l.kind == kind && !strcmp(l.name, name) && l.value == value,
	      "\"%s\": rc %d (%s) kind %d name %s value 0x%llx", s, rc, err, (int)l.kind, l.name,
	      (unsigned long long)l.value);
}

static void xfmt(const char *s, int ok, uint32_t count, char fmt, unsigned size)
{
	zd_xfmt_t f;
	char err[200] = "";
	int rc = zd_parse_xfmt(s, &f, err, sizeof(err));
	if (!ok) {
		CHECK(rc != 0 && err[0], "x%s should be refused with a message", s);
		return;
	}
	CHECK(rc == 0 && f.count == count && f.fmt == fmt && f.size == size, "x%s: rc %d count %u fmt %c size %u", s,
	      rc, f.count, f.fmt, f.size);
}

int main(void)
{
	regref("$grf12.3", 1, ZD_REGSET_GRF, 12, 3);
	regref("$r12.3", 1, ZD_REGSET_GRF, 12, 3);
	regref("$r0", 1, ZD_REGSET_GRF, 0, 0);
	regref("$cr0.2", 1, ZD_REGSET_CR, 0, 2);
	regref("$f1", 1, ZD_REGSET_FLAG, 1, 0);
	regref("$acc1.7", 1, ZD_REGSET_ACC, 1, 7);
	regref("$a0.5", 1, ZD_REGSET_ADDR, 0, 5);
	regref("$dbg0", 1, ZD_REGSET_DBG, 0, 0);
	regref("$tdr", 1, ZD_REGSET_TDR, 0, 0);
	regref("grf12.3", 0, 0, 0, 0);
	regref("$xyz1", 0, 0, 0, 0);
	regref("$r12.", 0, 0, 0, 0);
	regref("$r12.3.4", 0, 0, 0, 0);
	regref("$r99999999999", 0, 0, 0, 0);
	regref("$", 0, 0, 0, 0);

	loc("vadd", 1, ZD_LOC_KERNEL, "vadd", 0);
	loc("vadd+0x40", 1, ZD_LOC_KERNEL, "vadd", 0x40);
	loc("vadd+32", 1, ZD_LOC_KERNEL, "vadd", 32);
	loc("vadd.cl:12", 1, ZD_LOC_LINE, "vadd.cl", 12);
	loc("/src/k/vadd.cl:7", 1, ZD_LOC_LINE, "/src/k/vadd.cl", 7);
	loc("*0xff001040", 1, ZD_LOC_ADDR, "", 0xff001040);
	loc("vadd+0x41", 0, 0, "", 0);  /* not at an instruction */
	loc("vadd+", 0, 0, "", 0);
	loc("vadd+zz", 0, 0, "", 0);
	loc("vadd.cl:0", 0, 0, "", 0);
	loc("vadd.cl:-3", 0, 0, "", 0);
	loc("vadd.cl:", 0, 0, "", 0);
	loc(":12", 0, 0, "", 0);
	loc("+0x10", 0, 0, "", 0);
	loc("*", 0, 0, "", 0);
	loc("", 0, 0, "", 0);

	xfmt("", 1, 1, 'x', 4);
	xfmt("/4x", 1, 4, 'x', 4);
	xfmt("/8xb", 1, 8, 'x', 1);
	xfmt("/2dg", 1, 2, 'd', 8);
	xfmt("/u", 1, 1, 'u', 4);
	xfmt("/3h", 1, 3, 'x', 2);
	xfmt("/0x", 0, 0, 0, 0);
	xfmt("/4q", 0, 0, 0, 0);
	xfmt("4x", 0, 0, 0, 0);
	xfmt("/99999999x", 0, 0, 0, 0);

	uint64_t v;
	CHECK(zd_parse_u64("0x10", &v) == 0 && v == 16, "0x10");
	CHECK(zd_parse_u64("42", &v) == 0 && v == 42, "42");
	CHECK(zd_parse_u64("-1", &v) != 0, "-1 refused");
	CHECK(zd_parse_u64("12abc", &v) != 0, "12abc refused");
	CHECK(zd_parse_u64("", &v) != 0, "empty refused");
	CHECK(zd_parse_u64("0x1ffffffffffffffff", &v) != 0, "overflow refused");

	char line[] = "  set\t$r1.2  =  5 \n";
	char *w[8];
	int n = zd_split(line, w, 8);
	CHECK(n == 4 && !strcmp(w[0], "set") && !strcmp(w[1], "$r1.2") && !strcmp(w[2], "=") && !strcmp(w[3], "5"),
	      "split: %d words", n);

	CHECK(!strcmp(zd_regset_name(ZD_REGSET_GRF), "grf") && !strcmp(zd_regset_prefix(ZD_REGSET_GRF), "r"),
	      "grf names");
	CHECK(zd_regset_by_name("cr") == 6 && zd_regset_by_name("grf") == 1 && zd_regset_by_name("r") == 1 &&
		      zd_regset_by_name("dbg") == 12 && zd_regset_by_name("nope") == 0,
	      "set numbers after the Intel GPU enum");
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("PASS\n");
	return 0;
}
