// printf (driver/README.md, "Program-scope variables and printf";
// tests/e2e/test_spirv_printf.c, which knows every line these print).
// Compiled with cl_khr_fp64 off, as for a device without doubles: floats then
// reach printf as floats (OpenCL C 1.2 s6.12.13.2).

__constant char greeting[] = "constant greeting";

// One line per work item; the return values of printf.
__kernel void hello(__global int *ret, int n, float f)
{
	const uint i = get_global_id(0);
	ret[i] = printf("item %u of %d: %f %e %g %a %c\n", i, n, f * (float)i, f, f + (float)i, f, 'a' + (int)i);
}

// Every kind of conversion, from one work item.
__kernel void formats(__global int *ret, int k, float inf, float nan, __global int *buf)
{
	int r = printf("ints: %d %i %u %x %X %o|%5d|%-5d|%05d|%+d|% d|%#x|%#o\n", k, -k, k, 255 + k, 255 + k, 8 + k,
		       k, k, k, k, k, 255, 8);
	r |= printf("narrow: %hhd %hhu %hd %hu %hx\n", 300 + k, 300 + k, 70000 + k, 70000 + k, 70000 + k);
	r |= printf("longs: %ld %lu %lx %lX %li\n", -1234567890123L * (long)(k + 1), 18446744073709551615UL,
		    0x0123456789abcdefUL + (ulong)k, 0xfedcba9876543210UL, (long)k);
	r |= printf("floats: %f %.3f %e %E %g %G %a %10.2f|%-10.1f|%+.0e\n", 3.25f, 2.0f / 3.0f, 12345.678f,
		    0.00012f, 1e-5f, 123456789.0f, 1.0f, 3.14159f, -2.5f, 7.5f);
	r |= printf("special: %f %f %f %e\n", inf, -inf, nan, -0.0f);
	r |= printf("strings: %s|%s|%10s|%-4s|%.3s\n", "literal", greeting, "right", "l", greeting);
	r |= printf("chosen: %s\n", k > 2 ? "big" : "small");
	r |= printf("vectors: %v4hld %v2hlf %v3hlx\n", (int4)(1, -2, 3, -4), (float2)(0.5f, -1.5f),
		    (uint3)(10, 11, 255));
	r |= printf("stars: %*d|%-*d|%.*f\n", 6, k, 4, k, 2, 3.14159f);
	r |= printf("percent: 100%% %d%%\n", k);
	r |= printf("pointers: %p %p\n", (__global void *)0, (__global void *)(buf + 4));
	r |= printf("cannot: %q|%d\n", k);
	*ret = r;
}

// Only the even work items print.
__kernel void divergent(__global int *ret)
{
	const uint i = get_global_id(0);
	int r = 7;
	if (i % 2 == 0)
		r = printf("even %u\n", i);
	ret[i] = r;
}

// Many hardware threads at once: the lines of different threads may come in
// any order, each line whole.
__kernel void many(void)
{
	printf("many %u/%u of %u\n", (uint)get_global_id(0), (uint)get_group_id(0), (uint)get_num_groups(0));
}

// One line per work item, for a full printf buffer.
__kernel void drop(__global int *ret)
{
	const uint i = get_global_id(0);
	ret[i] = printf("drop %u\n", i);
}
