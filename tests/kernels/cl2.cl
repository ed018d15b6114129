// OpenCL C 2.0 work-item functions (built with -cl-std=CL2.0 and
// cl_khr_subgroups): linear ids, sub-groups (one per hardware thread: its
// SIMD width), the enqueued local size, the global offset (always 0 here).
__kernel void ids2(__global uint *out)
{
	size_t g = get_global_linear_id();
	__global uint *o = out + g * 8;
	o[0] = get_local_linear_id();
	o[1] = get_sub_group_size();
	o[2] = get_sub_group_id();
	o[3] = get_sub_group_local_id();
	o[4] = get_num_sub_groups();
	o[5] = get_max_sub_group_size();
	o[6] = get_enqueued_local_size(0) + get_enqueued_local_size(1) * 100;
	o[7] = get_global_offset(0) + g;
}

// A required sub-group size of 8: the kernel is compiled in SIMD8.  Also the
// OpenCL 2.0 atomics (OpAtomicStore, OpAtomicLoad) through generic pointers.
__attribute__((intel_reqd_sub_group_size(8)))
__kernel void ids8(__global uint *out, __global atomic_int *a, uint n)
{
	size_t g = get_global_linear_id();
	out[g] = get_sub_group_size() * 1000 + get_sub_group_local_id();
	atomic_store_explicit(&a[g], (int)g * 3, memory_order_relaxed);
	out[g + n] = atomic_load_explicit(&a[g], memory_order_relaxed);
}
