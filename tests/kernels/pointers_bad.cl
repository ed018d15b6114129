/* A local pointer stored in memory: refused (tests/e2e/test_spirv_pointers.c). */
kernel void local_ptr_store(global int *global *tab, local int *l)
{
	local int *global *t2 = (local int *global *)tab;
	t2[get_global_id(0)] = l;
}
