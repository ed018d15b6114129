/* Handle registry: every object the driver hands out is registered here with
 * its type, so an entry point can reject a stale, foreign or mistyped handle
 * without dereferencing it (a bad pointer must give an error code, not a
 * crash).  Shared helpers for entry points live here too. */
#ifndef ZS_HANDLE_H
#define ZS_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

typedef enum zs_type {
	ZS_T_DRIVER = 1,
	ZS_T_DEVICE,
	ZS_T_CONTEXT,
	ZS_T_QUEUE,
	ZS_T_CMDLIST,
	ZS_T_FENCE,
	ZS_T_EVENT_POOL,
	ZS_T_EVENT,
	ZS_T_MODULE,
	ZS_T_BUILD_LOG,
	ZS_T_KERNEL,
	ZS_T_METRIC_GROUP,
	ZS_T_METRIC,
	ZS_T_METRIC_STREAMER,
	ZS_T_METRIC_QUERY_POOL,
	ZS_T_METRIC_QUERY,
	ZS_T_TRACER,
	ZS_T_PHYSICAL_MEM,
	ZS_T_DEBUG_SESSION,
} zs_type_t;

/* Returns ZE_RESULT_SUCCESS or ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY. */
ze_result_t zs_handle_add(const void *h, zs_type_t type);
void zs_handle_remove(const void *h);
bool zs_handle_is(const void *h, zs_type_t type);

/* Entry-point checks.  A handle that is not a live object of the expected
 * type is reported as ZE_RESULT_ERROR_INVALID_NULL_HANDLE, the code the spec
 * (and the validation layer's lifetime checker) uses for "handle argument is
 * not valid". */
#define ZS_CHECK_HANDLE(h, type)                                                                                      \
	do {                                                                                                          \
		if (!(h) || !zs_handle_is((h), (type)))                                                               \
			return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;                                                   \
	} while (0)

#define ZS_CHECK_PTR(p)                                                                                               \
	do {                                                                                                          \
		if (!(p))                                                                                             \
			return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                                  \
	} while (0)

/* A descriptor or properties structure: `stype` must be `want` (or `alt`,
 * when not 0), and the pNext chain is walked: extensions the driver does not
 * know are ignored, as the spec allows, but a chain element whose stype is no
 * structure type at all (>= 0x00100000, the validation layer's bound for
 * driver-experimental values), or a chain longer than 256 elements (a
 * cycle), is an invalid argument (driver/README.md, "Descriptors"). */
ze_result_t zs_check_stype(const void *s, ze_structure_type_t want, ze_structure_type_t alt);

#define ZS_CHECK_STYPE(p, want)                                                                                       \
	do {                                                                                                          \
		ze_result_t r_ = zs_check_stype((p), (want), (ze_structure_type_t)0);                                \
		if (r_)                                                                                               \
			return r_;                                                                                    \
	} while (0)

#define ZS_UNUSED(x) (void)(x)

/* Timeouts of the API are in ns, UINT64_MAX meaning "forever". */
#define ZS_FOREVER UINT64_MAX

uint64_t zs_now_ns(void); /* CLOCK_MONOTONIC_RAW */

/* Copy a string into an app buffer following the L0 size protocol: with
 * out == NULL or *size == 0 only *size (including the NUL) is returned;
 * else at most *size bytes, always NUL-terminated, and *size = bytes written. */
ze_result_t zs_copy_string(const char *s, size_t *size, char *out);

#endif
