// y[i] = a * x[i] + y[i] for i < n.  fma() keeps one rounding, so the result
// is bit-exact against the host's fmaf.
__kernel void saxpy(__global const float *x, __global float *y, float a, uint n)
{
	size_t i = get_global_id(0);
	if (i < n)
		y[i] = fma(a, x[i], y[i]); // LINE (tests/unit/test_spirv_lines.py)
}
