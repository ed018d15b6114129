// Kernels that once miscompiled (tests/e2e/test_spirv_ops.c, regress), each
// checked against the host.

// A do-while latch branching straight to its header (no phis), unguarded
// after an early return, in a kernel where another block is threaded: the
// loop must run until in[i] is 0.
__kernel void latch_loop(__global int *out, volatile __global int *in, int n)
{
	const int i = (int)get_global_id(0);
	if (i >= n)
		return;
	do {
		in[i] = in[i] - 1;
	} while (in[i] != 0);
	int s = 0;
	for (int j = i & 3; j != 0; j--)
		s = s * 3 + 1;
	out[i] = s;
}

// Loads merged into vector loads in one block must not confuse the address
// arithmetic of the next: p[50] and p[25] are not neighbours.
__kernel void merged_loads(__global int *out, __global int *p)
{
	const int g = (int)get_global_id(0);
	p += g * 128;
	const int a = p[0] + p[1] + p[2];
	atomic_inc(&p[50]);
	atomic_inc(&p[25]);
	atomic_inc(&p[26]);
	atomic_inc(&p[51]);
	if (a > 50)
		out[g] = p[50] * 1000 + p[25];
}
