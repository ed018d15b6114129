// A module of functions and data only, no kernels (tests/e2e/test_spirv.c,
// "nokernels"); tests/kernels/old_spirv.py --no-exports makes it a module
// that exports nothing either, as older compilers could write it.
__constant int weights[4] = {3, 5, 7, 11};

int weigh(int x, int i)
{
	return x * weights[i & 3];
}

float blend(float a, float b, float t)
{
	return a + (b - a) * t;
}
