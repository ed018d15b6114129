/* zesim-dbg command syntax (zdbg_cmd.h). */
#include "zdbg_cmd.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	uint32_t type;
	const char *name, *prefix;
} regsets[] = {
	{ZD_REGSET_GRF, "grf", "r"},   {ZD_REGSET_ADDR, "addr", "a"}, {ZD_REGSET_FLAG, "flag", "f"},
	{ZD_REGSET_CE, "ce", "ce"},    {ZD_REGSET_SR, "sr", "sr"},    {ZD_REGSET_CR, "cr", "cr"},
	{ZD_REGSET_TDR, "tdr", "tdr"}, {ZD_REGSET_ACC, "acc", "acc"}, {ZD_REGSET_MME, "mme", "mme"},
	{ZD_REGSET_SP, "sp", "sp"},    {ZD_REGSET_SBA, "sba", "sba"}, {ZD_REGSET_DBG, "dbg", "dbg"},
	{ZD_REGSET_FC, "fc", "fc"},
};
#define NREGSETS (sizeof(regsets) / sizeof(regsets[0]))

const char *zd_regset_name(uint32_t type)
{
	for (size_t i = 0; i < NREGSETS; i++)
		if (regsets[i].type == type)
			return regsets[i].name;
	return NULL;
}

const char *zd_regset_prefix(uint32_t type)
{
	for (size_t i = 0; i < NREGSETS; i++)
		if (regsets[i].type == type)
			return regsets[i].prefix;
	return NULL;
}

uint32_t zd_regset_by_name(const char *name)
{
	for (size_t i = 0; i < NREGSETS; i++)
		if (!strcmp(name, regsets[i].name) || !strcmp(name, regsets[i].prefix))
			return regsets[i].type;
	return 0;
}

static int parse_u32(const char **p, uint32_t *out)
{
	if (!isdigit((unsigned char)**p))
		return -1;
	uint64_t v = 0;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (uint64_t)(**p - '0');
		if (v > UINT32_MAX)
			return -1;
		(*p)++;
	}
	*out = (uint32_t)v;
	return 0;
}

int zd_parse_regref(const char *s, zd_regref_t *out)
{
	if (*s++ != '$')
		return -1;
	char name[16];
	size_t n = 0;
	while (isalpha((unsigned char)*s) && n + 1 < sizeof(name))
		name[n++] = *s++;
	name[n] = 0;
	if (isalpha((unsigned char)*s))
		return -1;
	*out = (zd_regref_t){zd_regset_by_name(name), 0, 0};
	if (!out->type)
		return -1;
	if (isdigit((unsigned char)*s) && parse_u32(&s, &out->reg))
		return -1;
	if (*s == '.') {
		s++;
		if (parse_u32(&s, &out->elem))
			return -1;
	}
	return *s ? -1 : 0;
}

int zd_parse_u64(const char *s, uint64_t *out)
{
	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int zd_parse_loc(const char *s, zd_loc_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!*s) {
		snprintf(err, errlen, "break needs a location: KERNEL[+OFFSET], FILE:LINE or *ADDRESS");
		return -1;
	}
	if (*s == '*') {
		out->kind = ZD_LOC_ADDR;
		if (zd_parse_u64(s + 1, &out->value)) {
			snprintf(err, errlen, "\"%s\": not an address", s + 1);
			return -1;
		}
		return 0;
	}
	const char *colon = strrchr(s, ':'), *plus = strrchr(s, '+');
	const char *sep = colon ? colon : plus;
	size_t n = sep ? (size_t)(sep - s) : strlen(s);
	if (!n || n >= sizeof(out->name)) {
		snprintf(err, errlen, "\"%s\": %s", s, n ? "name too long" : "no kernel or file name");
		return -1;
	}
	memcpy(out->name, s, n);
	out->name[n] = 0;
	out->kind = colon ? ZD_LOC_LINE : ZD_LOC_KERNEL;
	if (!sep)
		return 0;
	if (zd_parse_u64(sep + 1, &out->value) || (colon && (out->value == 0 || out->value > UINT32_MAX))) {
		snprintf(err, errlen, "\"%s\": %s", sep + 1, colon ? "not a line number" : "not an offset");
		return -1;
	}
	if (!colon && out->value % 16) {
		snprintf(err, errlen, "offset 0x%llx is not at an instruction (a multiple of 16 bytes)",
			 (unsigned long long)out->value);
		return -1;
	}
	return 0;
}

int zd_parse_xfmt(const char *s, zd_xfmt_t *out, char *err, size_t errlen)
{
	*out = (zd_xfmt_t){1, 'x', 4};
	if (!*s)
		return 0;
	if (*s++ != '/') {
		snprintf(err, errlen, "x/FMT: expected '/' after x");
		return -1;
	}
	if (isdigit((unsigned char)*s) && (parse_u32(&s, &out->count) || !out->count || out->count > 65536)) {
		snprintf(err, errlen, "x/FMT: count must be 1 to 65536");
		return -1;
	}
	for (; *s; s++) {
		if (strchr("xdu", *s))
			out->fmt = *s;
		else if (*s == 'b')
			out->size = 1;
		else if (*s == 'h')
			out->size = 2;
		else if (*s == 'w')
			out->size = 4;
		else if (*s == 'g')
			out->size = 8;
		else {
			snprintf(err, errlen, "x/FMT: unknown letter '%c' (formats x d u, sizes b h w g)", *s);
			return -1;
		}
	}
	return 0;
}

int zd_split(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;
	while (*p && n < max) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = 0;
		if (!*p)
			break;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
	}
	return n;
}
