// Program-scope variables (driver/README.md, "Program-scope variables and
// printf"; tests/e2e/test_spirv_printf.c): __constant tables indexed at run
// time, a table of structs, 64-bit entries, a string literal read as words;
// compiled as OpenCL C 1.2 (constdata) and 2.0 (constdata20), where __global
// program-scope variables are shared by the launches of the module's kernels.

__constant int primes[16] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
__constant float weights[5] = {0.5f, -1.25f, 3.0f, 1e-3f, 65504.0f};

typedef struct entry {
	int key;
	float scale;
	uint mask;
} entry_t;

__constant entry_t entries[3] = {{7, 0.5f, 0xff}, {-3, 2.0f, 0xf0f0}, {100, -1.0f, 0}};
__constant ulong wide[2] = {0x0123456789abcdefUL, 0xfedcba9876543210UL};
__constant char message[] = "program-scope data works";
static __constant uint hidden[4] = {0xdeadbeef, 0xcafef00d, 0x8badf00d, 0x0ddba11};
__constant short shorts[5] = {-1, 2, -300, 4000, 5};
// More than 96 constituents in one OpConstantComposite (the reader's operand
// queue once stopped there); read through zeModuleGetGlobalPointer:
// (i * i * 37 + 11) % 1000.
__constant short long_table[128] = {
	11, 48, 159, 344, 603, 936, 343, 824, 379, 8, 711, 488, 339, 264, 263, 336,
	483, 704, 999, 368, 811, 328, 919, 584, 323, 136, 23, 984, 19, 128, 311, 568,
	899, 304, 783, 336, 963, 664, 439, 288, 211, 208, 279, 424, 643, 936, 303, 744,
	259, 848, 511, 248, 59, 944, 903, 936, 43, 224, 479, 808, 211, 688, 239, 864,
	563, 336, 183, 104, 99, 168, 311, 528, 819, 184, 623, 136, 723, 384, 119, 928,
	811, 768, 799, 904, 83, 336, 663, 64, 539, 88, 711, 408, 179, 24, 943, 936,
	3, 144, 359, 648, 11, 448, 959, 544, 203, 936, 743, 624, 579, 608, 711, 888,
	139, 464, 863, 336, 883, 504, 199, 968, 811, 728, 719, 784, 923, 136, 423, 784,
};
// Aligned beyond their types (Alignment 64, which older compilers put in a
// decoration group shared by both).
__constant char aligned_a[3] __attribute__((aligned(64))) = {1, 2, 3};
__constant char aligned_b[5] __attribute__((aligned(64))) = {4, 5, 6, 7, 8};

__kernel void lookup(__global const uint *idx, __global int *out_i, __global float *out_f, __global ulong *out_l)
{
	const size_t i = get_global_id(0);
	const uint k = idx[i];
	const entry_t e = entries[k % 3];
	out_i[i] = primes[k & 15] * e.key + (int)(e.mask & k) + (int)hidden[k & 3];
	out_f[i] = weights[k % 5] * e.scale;
	out_l[i] = wide[k & 1] ^ (ulong)k;
}

// The string's bytes, a word at a time (message is dword-aligned in the
// program's data; the bytes after its NUL up to the word's end are 0).
__kernel void message_words(__global uint *out)
{
	const size_t i = get_global_id(0);
	out[i] = ((__constant uint *)message)[i];
}

// Loads whose offsets are known once the front end has inlined the calls:
// the front end folds them to the tables' values.
__attribute__((noinline)) int prime_at(uint k) { return primes[k]; }
__attribute__((noinline)) ulong wide_at(uint k) { return wide[k]; }

__kernel void folded(__global int *out, __global ulong *l)
{
	const uint i = get_global_id(0);
	out[i] = prime_at(5) * (int)i + prime_at(9);
	l[i] = wide_at(1) + i + wide_at(0);
}

// 8- and 16-bit elements, laid out by their size.
__kernel void narrow_tables(__global uchar *chars, __global short *s16)
{
	const uint i = get_global_id(0);
	chars[i] = message[i];
	s16[i] = shorts[i % 5];
}

#if __OPENCL_C_VERSION__ >= 200
__global int counter = 1000;
__global uint buckets[8];
__global float scale = 1.5f;

// Each work item takes a ticket from the program-scope counter; the counter
// and the buckets persist from one launch to the next.
__kernel void take(__global int *ticket)
{
	const size_t i = get_global_id(0);
	ticket[i] = atomic_fetch_add((volatile __global atomic_int *)&counter, 1);
	atomic_fetch_add((volatile __global atomic_uint *)&buckets[i & 7], 1u);
}

__kernel void read_globals(__global int *out, __global float *x)
{
	const size_t i = get_global_id(0);
	if (i == 0)
		out[0] = counter;
	if (i < 8)
		out[1 + i] = (int)buckets[i];
	x[i] *= scale;
}
#endif
