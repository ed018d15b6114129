// Sum reduction: each work group loads its elements into __local memory, halves
// the active range after each barrier(CLK_LOCAL_MEM_FENCE), and work item 0
// writes the group's sum.  The group size is a power of two.
__kernel void reduce(__global const int *in, __global int *partial, __local int *scratch)
{
	uint lid = get_local_id(0);
	uint size = get_local_size(0);
	scratch[lid] = in[get_global_id(0)];
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint s = size / 2; s > 0; s >>= 1) {
		if (lid < s)
			scratch[lid] += scratch[lid + s];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (lid == 0)
		partial[get_group_id(0)] = scratch[0];
}
