// Loops whose bodies compute values that do not change in the loop: the
// divisor's reciprocal of an unsigned and a float division by a kernel
// argument, a row base, constants in registers.  The back end computes them
// once before the loop (driver/spirv/spv_loops.c, hoist_invariants); the
// results are checked against the same code on the host
// (tests/e2e/test_spirv_corpus.c) and the loop's code by
// tests/unit/test_spirv_loop_code.py.  Each work item runs its own trip count
// (0 to 40), so lanes leave the loops at different times.

__kernel void invariant_udiv(__global uint *out, __global const uint *in, uint d, uint row)
{
	uint g = get_global_id(0);
	uint trips = in[g] % 41u;
	uint acc = 0;
	for (uint i = 0; i < trips; i++)
		acc += (in[(g + i) & 255u] + row * 7u) / d + i % d;
	out[g] = acc;
}

__kernel void invariant_fdiv(__global float *out, __global const float *in, __global const uint *trip, float s)
{
	uint g = get_global_id(0);
	uint trips = trip[g] % 41u;
	float acc = 0.0f;
	for (uint i = 0; i < trips; i++)
		acc = acc * 0.5f + in[(g + i) & 255u] / s;
	out[g] = acc;
}
