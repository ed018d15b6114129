// A library without kernels for link_lib.cl (tests/e2e/test_spirv_link.c),
// calling main_bias back in link_main.cl.
int main_bias(int x);

int lib2_offset(int x)
{
	return (x ^ 0x55) + main_bias(x);
}
