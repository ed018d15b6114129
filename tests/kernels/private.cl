// Private memory (tests/e2e/test_spirv_narrow.c): arrays indexed at run time,
// a struct whose address is passed to a function, chars in a private array,
// a private array written in a divergent loop.

typedef struct acc {
	int count;
	float sum;
	short tag[2];
} acc_t;

static void add_to(acc_t *a, float v, int k)
{
	a->count += 1;
	a->sum += v;
	a->tag[k & 1] += (short)k;
}

__kernel void private_ops(__global const int *in, __global int *out, __global float *fout)
{
	const int i = (int)get_global_id(0);
	int hist[8];
	// (not zeroed, nor copied out whole: clang makes memset/memcpy of those,
	// which llvm-spirv-14 translates into a module spirv-val rejects)
	for (int j = 0; j < 8; j++)
		hist[j] = in[i] ^ j;
	// a data-dependent number of updates at data-dependent indices
	const int n = in[i] & 15;
	for (int j = 0; j < n; j++)
		hist[(in[i] >> j) & 7] += j + 1;
	// insertion sort of 6 values
	float v[6];
	for (int j = 0; j < 6; j++)
		v[j] = (float)((in[i] * (j + 3)) % 17) - 8.0f;
	for (int j = 1; j < 6; j++) {
		const float x = v[j];
		int k = j - 1;
		while (k >= 0 && v[k] > x) {
			v[k + 1] = v[k];
			k--;
		}
		v[k + 1] = x;
	}
	acc_t a = {0, 0.0f, {0, 0}};
	for (int j = 0; j < 6; j++)
		if (v[j] > -4.0f)
			add_to(&a, v[j], j);
	uchar bytes[11];
	for (int j = 0; j < 11; j++)
		bytes[j] = (uchar)(in[i] + j * 29);
	uint mix = 0;
	for (int j = 0; j < 11; j++)
		mix = mix * 31u + bytes[(j * 5 + i) % 11];
	for (int j = 0; j < 8; j++)
		out[i * 12 + j] = hist[j] * 3 + j;
	out[i * 12 + 8] = a.count;
	out[i * 12 + 9] = a.tag[0] | a.tag[1] << 16;
	out[i * 12 + 10] = (int)mix;
	out[i * 12 + 11] = hist[in[i] & 7];
	for (int j = 0; j < 6; j++)
		fout[i * 7 + j] = v[j];
	fout[i * 7 + 6] = a.sum;
}

