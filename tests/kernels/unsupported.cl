// Kernels the phase-1 front end must refuse with a build-log message naming
// what is missing (tests/e2e/test_spirv_errors.c), one module each: the file
// is compiled once per -D selection.
#if defined(USE_SIN)
__kernel void use_sin(__global float *x) { x[get_global_id(0)] = sin(x[get_global_id(0)]); }
#elif defined(USE_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void use_double(__global double *x) { x[get_global_id(0)] *= 2.0; }
#elif defined(USE_PRIVATE_ARRAY)
__kernel void use_private_array(__global int *x, int k)
{
	int t[16];
	for (int j = 0; j < 16; j++)
		t[j] = x[j] * j;
	x[get_global_id(0)] = t[k & 15];
}
#elif defined(USE_CHAR)
__kernel void use_char(__global uchar *x) { x[get_global_id(0)] += 1; }
#endif
