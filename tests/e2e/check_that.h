/* A soft check for the device-less unit tests (test_spirv_reader.c,
 * test_spirv_link_unit.c): prints the failed condition with a message and
 * counts it; main() returns non-zero when `failures` is. */
#ifndef E2E_CHECK_THAT_H
#define E2E_CHECK_THAT_H

#include <stdio.h>

static int failures;

#define CHECK_THAT(cond, ...)                                                                                         \
	do {                                                                                                          \
		if (!(cond)) {                                                                                        \
			printf("%s:%d: %s: ", __FILE__, __LINE__, #cond);                                             \
			printf(__VA_ARGS__);                                                                          \
			printf("\n");                                                                                 \
			failures++;                                                                                   \
		}                                                                                                     \
	} while (0)

#endif
