// Histogram with atomics: a per-group histogram in __local memory (atomic_inc),
// merged into the global one with atomic_add; a global atomic_inc counts the
// work items that saw a value above 'limit'.
#define BINS 64
__kernel void histogram(__global const uint *data, __global int *hist, __global int *over, uint limit, uint n)
{
	__local int local_hist[BINS];
	uint lid = get_local_id(0);
	for (uint b = lid; b < BINS; b += get_local_size(0))
		local_hist[b] = 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	size_t i = get_global_id(0);
	if (i < n) {
		uint v = data[i];
		atomic_inc(&local_hist[v % BINS]);
		if (v > limit)
			atomic_inc(over);
	}
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint b = lid; b < BINS; b += get_local_size(0))
		atomic_add(&hist[b], local_hist[b]);
}
