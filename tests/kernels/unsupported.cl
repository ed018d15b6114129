// Kernels the front end must refuse with a build-log message naming what is
// missing (tests/e2e/test_spirv_errors.c), one module each: the file is
// compiled once per -D selection.
#if defined(USE_BIG_PRIVATE)
__kernel void use_big_private(__global int *x, int k)
{
	volatile int t[1024]; // more than private memory in registers holds
	t[k & 1023] = x[k];
	t[(k * 7) & 1023] = x[k + 1];
	x[get_global_id(0)] = t[(k * 3) & 1023];
}
#elif defined(USE_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void use_double(__global double *x) { x[get_global_id(0)] *= 2.0; }
#elif defined(USE_HALF)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void use_half(__global half *x) { x[get_global_id(0)] *= (half)2.0f; }
#elif defined(USE_IMAGE)
__kernel void use_image(read_only image2d_t img, __global float4 *o) { o[0] = read_imagef(img, (int2)(0, 0)); }
#endif
