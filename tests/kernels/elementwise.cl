// Integer and float arithmetic, conversions, comparisons, select and divergent
// control flow: an if/else on the data and a for loop whose trip count differs
// per work item.  Contraction is off, so every float operation is rounded on
// its own, except the explicit fma(); the host computes the same
// (tests/e2e/test_spirv_elementwise.c).
#pragma OPENCL FP_CONTRACT OFF
__kernel void elementwise(__global const int *in, __global int *out_i, __global float *out_f, int k)
{
	int i = (int)get_global_id(0);
	int x = in[i];
	int acc;
	float f;
	if (x > k) {
		acc = x * 3 - k; // LINE
		f = (float)x * 0.5f;
	} else {
		acc = (x ^ 0x55) + (x << 2);
		f = (float)(x - k) - 1.25f;
	}
	int n = (x & 15) + (i & 3);
	for (int j = 0; j < n; j++) {
		acc += j * x; // LINE
		if ((acc & 1) == 0)
			acc = acc >> 1;
		f = fma(f, 1.5f, (float)j);
	}
	uint u = (uint)acc;
	int q = x / 7 + x % 5 - (int)(u / 13u);
	out_i[i] = (int)(u % 7u == 3u ? u >> 3 : u) + q + (int)get_local_id(0) - (int)get_group_id(0);
	out_f[i] = f + (float)(int)(f * 0.25f) - (float)u / 1024.0f;
}
