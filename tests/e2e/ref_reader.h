/* Reading the expected-results files of the generated SPIR-V corpora
 * (random.ref of gen_random.py, loops.ref of gen_loops.py) line by line;
 * any problem ends the test naming the file and line. */
#ifndef E2E_REF_READER_H
#define E2E_REF_READER_H

#include "e2e.h"

typedef struct reader {
	char *text; /* the whole file (NUL-terminated), lines cut in place */
	char *next;
	unsigned line;
	const char *path;
} reader_t;

static inline char *next_line(reader_t *r)
{
	EXPECT(r->next && *r->next, "%s: unexpected end of file after line %u", r->path, r->line);
	char *line = r->next;
	char *nl = strchr(line, '\n');
	EXPECT(nl, "%s:%u: line without a newline", r->path, r->line + 1);
	*nl = '\0';
	r->next = nl + 1;
	r->line++;
	return line;
}

#endif
