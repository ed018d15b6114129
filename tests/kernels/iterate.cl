// A long-running loop with divergence: each work item steps a xorshift
// generator until its state is a multiple of `modulus` (a geometric number of
// steps, about `modulus` on average, different in every lane) or `limit`
// steps have run, and folds the states into an accumulator along a
// data-dependent branch (a Collatz-like step on odd states).
__kernel void iterate(__global const uint *seed, __global uint *steps, __global uint *acc_out, uint modulus,
		      uint limit)
{
	size_t i = get_global_id(0);
	uint x = seed[i], acc = (uint)i, n = 0;
	do {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (x & 1)
			acc = acc * 3 + (x >> 7);
		else
			acc = (acc >> 1) ^ x;
		n++;
	} while (x % modulus != 0 && n < limit);
	steps[i] = n;
	acc_out[i] = acc;
}
