// Exports lib_scale with another signature than link_main.cl imports
// (tests/e2e/test_spirv_link.c: the link fails and names it).
float lib_scale(float x)
{
	return x * 3.0f;
}
