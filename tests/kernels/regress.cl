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

// Conditions chained into a flag (&& and || of compares feeding a predicated
// load, a select or a branch), lanes diverging, NaNs in the float compares,
// 64-bit compares and shifts (which use f1 while the chain is in f0); loads
// whose destination starts as the other side's value (0, 7, 11, a variable).
__kernel void cond_chains(__global uint *out, __global const uint *a, __global const float *f, int n, int trips)
{
	const int i = (int)get_global_id(0);
	const int j = i & 7, k = (i >> 3) & 7;
	const float x = f[i];
	uint r = 0;
	for (int t = 0; t < trips; t++) {
		r = r * 5u + (j < n && k + t < 6 ? a[i + t] : 0u);
		r = r * 5u + (j > 2 || x < 0.5f ? a[i + t + 1] : 7u);
		r = r * 5u + (j != 3 && (k & 1) && t != 1 ? a[i + 2] : r & 3u);
		r = r * 5u + (!(x < 0.5f) && k < 5 ? a[i + t + 3] : 11u);
	}
	out[i] = r;
}

__kernel void cond_chains2(__global uint *out, __global const uint *a, __global const float *f)
{
	const int i = (int)get_global_id(0);
	const int j = i & 7, k = (i >> 3) & 7;
	const float x = f[i];
	const long w = (long)a[i] * 3000000000L;
	const ulong sh = (ulong)a[i + 3] << ((j * 9 + k) & 63);
	uint r = a[i + 7];
	r = r * 5u + ((j < 4 && x > 0.25f) || k == 6 ? a[i + 4] : 1u);
	r = r * 5u + (w > 6000000000L && j < 6 ? a[i + 5] : 2u);
	r = r * 5u + (j < 2 || (k > 3 && x != x) ? a[i + 1] : 3u);
	r = r * 5u + (sh != 0 && k < 7 ? a[i + 2] : 9u);
	r = r * 5u + ((sh >> 40) == 0 || j == 1 ? a[i + 6] : r);
	if ((j < 3 && k > 1) || x > 2.0f)
		r += a[i + 6];
	if (j > 4 && (w < 9000000000L || x == x))
		r ^= 0x55u;
	out[i] = r;
}

// Shared memory read before a barrier and overwritten after it by another
// work item, the value used only after the barrier: the fence before that
// barrier must stay (tests/unit/test_spirv_fences.py checks the code).
__kernel void slm_war(__global int *out, __global const int *in)
{
	__local int s[64];
	const int l = (int)get_local_id(0), g = (int)get_global_id(0);
	s[l] = in[g];
	barrier(CLK_LOCAL_MEM_FENCE);
	const int x = s[63 - l];
	barrier(CLK_LOCAL_MEM_FENCE);
	s[l] = l * 3;
	barrier(CLK_LOCAL_MEM_FENCE);
	out[g] = x * 1000 + s[(l + 1) & 63];
}
