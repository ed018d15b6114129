/* What the C benches share: a monotonic clock and the median of their samples. */
#ifndef ZESIM_BENCH_STATS_H
#define ZESIM_BENCH_STATS_H

#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC_RAW in ns (not slewed by NTP while a bench runs). */
static inline double bench_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline double bench_now_us(void) { return bench_now_ns() / 1e3; }

static inline int bench_cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), bench_cmp_double);
	return v[n / 2];
}

#endif
