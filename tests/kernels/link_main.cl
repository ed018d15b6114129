// Kernels calling functions of other modules, linked by zeModuleDynamicLink
// (tests/e2e/test_spirv_link.c): lib_* are exported by link_lib.cl, whose
// lib_twice_offset calls lib2_offset of link_lib2.cl, which calls main_bias
// back here.  With -DONLY_SCALE the module imports lib_scale alone (the
// failing links of the test).
#pragma OPENCL FP_CONTRACT OFF

typedef struct {
	int a;
	float b;
} pair_t;

int lib_scale(int x);

// Exported to link_lib2.cl.
int main_bias(int x)
{
	return x & 7;
}

#ifdef ONLY_SCALE
__kernel void link_scale_only(__global int *out, __global const int *in)
{
	size_t i = get_global_id(0);
	out[i] = lib_scale(in[i]);
}
#else
float lib_dot2(float2 a, float2 b);
float lib_pair(__global const pair_t *p);
int lib_twice_offset(int x);
void lib_store(__global int *out, uint i, int v);

// out[i] = (3 in[i] + 1) + 2 ((in[i] ^ 0x55) + (in[i] & 7))
__kernel void link_ints(__global int *out, __global const int *in)
{
	uint i = get_global_id(0);
	lib_store(out, i, lib_scale(in[i]) + lib_twice_offset(in[i]));
}

// out[i] = x[i] * 3 + 2 * x[i] + p[i].a * p[i].b
__kernel void link_floats(__global float *out, __global const float *x, __global const pair_t *p)
{
	size_t i = get_global_id(0);
	out[i] = lib_dot2((float2)(x[i], 2.0f), (float2)(3.0f, x[i])) + lib_pair(p + i);
}

// Calls nothing, yet waits for the module's imports like the others.
__kernel void link_plain(__global int *out)
{
	out[get_global_id(0)] = 7;
}
#endif
