/* Handle registry: an open-addressing hash set of live object pointers and
 * their types, under one mutex.  Lookups never dereference the handle. */
#define _GNU_SOURCE
#include "zs_handle.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slot {
	uintptr_t key; /* 0 empty, 1 tombstone */
	zs_type_t type;
} slot_t;

#define TOMBSTONE ((uintptr_t)1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t *slots;
static size_t cap, used; /* used counts live entries and tombstones */

static size_t hash(uintptr_t k)
{
	/* Objects are malloc'ed: the low bits carry no information. */
	uint64_t x = (uint64_t)k >> 4;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 256;
	slot_t *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < cap; i++) {
		if (slots[i].key <= TOMBSTONE)
			continue;
		size_t j = hash(slots[i].key) & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = slots[i];
		n++;
	}
	free(slots);
	slots = ns;
	cap = ncap;
	used = n;
	return 0;
}

ze_result_t zs_handle_add(const void *h, zs_type_t type)
{
	uintptr_t k = (uintptr_t)h;
	pthread_mutex_lock(&lock);
	if ((used + 1) * 4 >= cap * 3 && grow()) {
		pthread_mutex_unlock(&lock);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	size_t j = hash(k) & (cap - 1);
	while (slots[j].key > TOMBSTONE && slots[j].key != k)
		j = (j + 1) & (cap - 1);
	if (slots[j].key == 0)
		used++;
	slots[j].key = k;
	slots[j].type = type;
	pthread_mutex_unlock(&lock);
	return ZE_RESULT_SUCCESS;
}

/* Index of k, or cap when absent; caller holds the lock. */
static size_t find(uintptr_t k)
{
	if (!cap)
		return 0;
	size_t j = hash(k) & (cap - 1);
	for (size_t n = 0; n < cap && slots[j].key; n++, j = (j + 1) & (cap - 1))
		if (slots[j].key == k)
			return j;
	return cap;
}

void zs_handle_remove(const void *h)
{
	pthread_mutex_lock(&lock);
	size_t j = find((uintptr_t)h);
	if (j < cap)
		slots[j].key = TOMBSTONE;
	pthread_mutex_unlock(&lock);
}

bool zs_handle_is(const void *h, zs_type_t type)
{
	pthread_mutex_lock(&lock);
	size_t j = find((uintptr_t)h);
	bool ok = j < cap && slots[j].type == type;
	pthread_mutex_unlock(&lock);
	return ok;
}

uint64_t zs_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

ze_result_t zs_copy_string(const char *s, size_t *size, char *out)
{
	const size_t need = strlen(s) + 1;
	if (!out || *size == 0) {
		*size = need;
		return ZE_RESULT_SUCCESS;
	}
	const size_t n = need < *size ? need : *size;
	memcpy(out, s, n - 1);
	out[n - 1] = '\0';
	*size = n;
	return ZE_RESULT_SUCCESS;
}

#define ZS_STYPE_LIMIT 0x00100000u
#define ZS_CHAIN_LIMIT 256

ze_result_t zs_check_stype(const void *s, ze_structure_type_t want, ze_structure_type_t alt)
{
	const ze_base_desc_t *b = s;
	if (b->stype != want && (!alt || b->stype != alt))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	unsigned n = 0;
	for (const ze_base_desc_t *e = b->pNext; e; e = e->pNext)
		if ((uint32_t)e->stype >= ZS_STYPE_LIMIT || ++n > ZS_CHAIN_LIMIT)
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	return ZE_RESULT_SUCCESS;
}
