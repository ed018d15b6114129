// Matrix multiply C = A x B in fp32, row-major, A: M x K, B: K x N, C: M x N.
// The products accumulate in k order from 0.0f; clang contracts acc + a * b
// into OpenCL's mad (FP_CONTRACT is on by default in OpenCL C), which the
// driver computes fused, so the host reference is fmaf(a, b, acc) in k order
// (tests/e2e/test_spirv_corpus.c).  bench/compile.py compares the cycles of
// both kernels with hand-written ZE-ISA (bench/matmul.zeasm).
#ifndef TILE
#define TILE 8
#endif

// One work item per element of C: x is the column, y the row.
__kernel void matmul_naive(__global const float *a, __global const float *b, __global float *c, uint m, uint n,
			   uint k)
{
	uint col = get_global_id(0), row = get_global_id(1);
	if (row >= m || col >= n)
		return;
	float acc = 0.0f;
	for (uint i = 0; i < k; i++)
		acc += a[row * k + i] * b[i * n + col];
	c[row * n + col] = acc;
}

// TILE x TILE work groups: each step stages a TILE x TILE tile of A and of B in
// shared local memory (zeros past the edges, which add exactly nothing) and
// accumulates from it.
__kernel void matmul_tiled(__global const float *a, __global const float *b, __global float *c, uint m, uint n,
			   uint k)
{
	__local float as[TILE][TILE];
	__local float bs[TILE][TILE];
	uint lx = get_local_id(0), ly = get_local_id(1);
	uint col = get_group_id(0) * TILE + lx, row = get_group_id(1) * TILE + ly;
	float acc = 0.0f;
	for (uint k0 = 0; k0 < k; k0 += TILE) {
		as[ly][lx] = row < m && k0 + lx < k ? a[row * k + k0 + lx] : 0.0f;
		bs[ly][lx] = k0 + ly < k && col < n ? b[(k0 + ly) * n + col] : 0.0f;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (uint i = 0; i < TILE; i++)
			acc += as[ly][i] * bs[i][lx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (row < m && col < n)
		c[row * n + col] = acc;
}
