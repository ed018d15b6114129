// Inclusive prefix sum of uint32 (wrapping) over any number of work groups:
// scan_groups scans each group's block in shared local memory (Hillis-Steele,
// one barrier pair per step; the group size is a power of two) and writes the
// block totals; the host scans the totals the same way, level by level, and
// scan_add adds to each block the scanned total of the blocks before it.
__kernel void scan_groups(__global const uint *in, __global uint *out, __global uint *sums, uint n,
			  __local uint *tmp)
{
	uint lid = get_local_id(0), size = get_local_size(0);
	uint i = get_global_id(0);
	tmp[lid] = i < n ? in[i] : 0;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint d = 1; d < size; d <<= 1) {
		uint v = lid >= d ? tmp[lid - d] : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		tmp[lid] += v;
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (i < n)
		out[i] = tmp[lid];
	if (lid == size - 1)
		sums[get_group_id(0)] = tmp[lid];
}

// sums: the inclusive scan of the block totals.
__kernel void scan_add(__global uint *out, __global const uint *sums, uint n)
{
	uint i = get_global_id(0), g = get_group_id(0);
	if (g > 0 && i < n)
		out[i] += sums[g - 1];
}
