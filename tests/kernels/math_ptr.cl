// OpenCL.std functions with a second result through a pointer
// (tests/e2e/test_spirv_ops.c, math_ptr): sincos, fract, modf, frexp, into
// global and private memory and as vectors.
__kernel void math_ptr(__global const float *x, __global float *o, __global int *e)
{
	const size_t i = get_global_id(0);
	const float v = x[i];
	float c, w, t;
	int ex;
	o[i * 8 + 0] = sincos(v, &c);
	o[i * 8 + 1] = c;
	o[i * 8 + 2] = fract(v, &w);
	o[i * 8 + 3] = w;
	o[i * 8 + 4] = modf(v, &t);
	o[i * 8 + 5] = t;
	o[i * 8 + 6] = frexp(v, &ex);
	e[i * 2] = ex;
	float2 w2;
	o[i * 8 + 7] = fract((float2)(v, -v), &w2).y + w2.x;
	int2 e2;
	const float2 m2 = frexp((float2)(v * 3.0f, 1.0f), &e2);
	e[i * 2 + 1] = e2.x + (int)(m2.y * 4.0f);
}
