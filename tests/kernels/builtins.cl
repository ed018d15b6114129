// Every work-item function in 3-D: each work item writes 16 words (ids, sizes,
// group counts) at its linear global index.  get_num_groups/get_global_size
// come from the hidden argument the driver fills at dispatch.
__kernel void builtins(__global uint *out)
{
	size_t gx = get_global_id(0), gy = get_global_id(1), gz = get_global_id(2);
	size_t w = get_global_size(0), h = get_global_size(1);
	__global uint *o = out + ((gz * h + gy) * w + gx) * 16;
	o[0] = gx;
	o[1] = gy;
	o[2] = gz;
	o[3] = get_local_id(0);
	o[4] = get_local_id(1);
	o[5] = get_local_id(2);
	o[6] = get_group_id(0);
	o[7] = get_group_id(1);
	o[8] = get_group_id(2);
	o[9] = get_local_size(0);
	o[10] = get_local_size(1);
	o[11] = get_local_size(2);
	o[12] = get_num_groups(0);
	o[13] = get_num_groups(1);
	o[14] = get_num_groups(2);
	o[15] = get_global_size(2);
}

// get_work_dim: Level Zero has no work dimension; as Intel's driver does, the
// highest dimension whose global size exceeds 1 (at least 1).
__kernel void work_dim(__global uint *out)
{
	const size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
	out[i] = get_work_dim();
}

// reqd_work_group_size (execution mode LocalSize): the driver reports it in
// zeKernelGetProperties, refuses any other group size and launches with it
// by default.  Each work item writes its local ids and sizes and its group.
__kernel __attribute__((reqd_work_group_size(8, 4, 1))) void reqd(__global uint *out)
{
	const size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
	out[i * 4 + 0] = get_local_id(1) * get_local_size(0) + get_local_id(0);
	out[i * 4 + 1] = get_local_size(0);
	out[i * 4 + 2] = get_local_size(1) * 100 + get_local_size(2);
	out[i * 4 + 3] = get_group_id(1) * get_num_groups(0) + get_group_id(0);
}
