// Functions exported to link_main.cl (tests/e2e/test_spirv_link.c); this
// module imports lib2_offset from link_lib2.cl and has a kernel of its own.
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
	int a;
	float b;
} pair_t;

int lib2_offset(int x);

int lib_scale(int x)
{
	return 3 * x + 1;
}

float lib_dot2(float2 a, float2 b)
{
	return a.x * b.x + a.y * b.y;
}

float lib_pair(__global const pair_t *p)
{
	return (float)p->a * p->b;
}

int lib_twice_offset(int x)
{
	return 2 * lib2_offset(x);
}

void lib_store(__global int *out, uint i, int v)
{
	out[i] = v;
}

// out[i] = (3 i + 1) - ((i ^ 0x55) + (i & 7))
__kernel void lib_kernel(__global int *out)
{
	int i = (int)get_global_id(0);
	out[i] = lib_scale(i) - lib2_offset(i);
}
