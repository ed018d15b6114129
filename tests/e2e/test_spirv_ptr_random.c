/* Random pointer-chain kernels (tests/kernels/gen_pointers.py: loads through
 * one or two levels of pointer tables, pointer arithmetic, private arrays and
 * selects of loaded pointers, atomics through loaded pointers) against the
 * generator's Python results (DIR/ptr_random.ref).
 *
 *     test_spirv_ptr_random DIR */
#include <errno.h>

#include "spirv.h"

#define N 64u

static int read_ints(FILE *f, const char *key, int32_t *v, uint32_t n)
{
	char word[32];
	if (fscanf(f, "%31s", word) != 1 || strcmp(word, key) != 0)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (fscanf(f, "%d", &v[i]) != 1)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	EXPECT(argc == 2, "usage: test_spirv_ptr_random DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/ptr_random.ref", argv[1]);
	FILE *f = fopen(path, "r");
	EXPECT(f != NULL, "%s: %s", path, strerror(errno));
	e2e_t e;
	e2e_init(&e);
	int32_t *d = e2e_alloc_shared(&e, 256 * 4), *cnt = e2e_alloc_shared(&e, 32 * 4), *out = e2e_alloc_shared(&e, N * 4);
	int32_t **p = e2e_alloc_shared(&e, 12 * sizeof(void *));
	int32_t ***q = e2e_alloc_shared(&e, 4 * sizeof(void *));
	for (int j = 0; j < 256; j++)
		d[j] = (j * 37) % 1009 - 500;
	ze_module_handle_t m = NULL;
	uint32_t kernels = 0, modules = 0;
	char word[64], name[256];
	while (fscanf(f, "%63s %255s", word, name) == 2) {
		if (strcmp(word, "module") == 0) {
			if (m)
				CHECK(zeModuleDestroy(m));
			snprintf(path, sizeof(path), "%s/%s", argv[1], name);
			m = spirv_module(&e, path);
			int32_t poff[12], qoff[4];
			EXPECT(read_ints(f, "poff", poff, 12) && read_ints(f, "qoff", qoff, 4), "%s: bad layout", name);
			for (int k = 0; k < 12; k++)
				p[k] = (k < 8 ? d : cnt) + poff[k];
			for (int k = 0; k < 4; k++)
				q[k] = p + qoff[k];
			modules++;
			continue;
		}
		EXPECT(strcmp(word, "kernel") == 0 && m, "ptr_random.ref: unexpected \"%s\"", word);
		int32_t want[N], want_cnt[32];
		EXPECT(read_ints(f, "out", want, N) && read_ints(f, "cnt", want_cnt, 32), "%s: bad results", name);
		ze_kernel_handle_t k = e2e_kernel(m, name);
		memset(cnt, 0, 32 * 4);
		memset(out, 0, N * 4);
		const e2e_arg_t args[] = {{8, &q}, {8, &p}, {8, &out}};
		spirv_launch(&e, k, 16, N, 3, args);
		for (uint32_t i = 0; i < N; i++)
			EXPECT(out[i] == want[i], "%s item %u: %d, expected %d", name, i, out[i], want[i]);
		for (uint32_t i = 0; i < 32; i++)
			EXPECT(cnt[i] == want_cnt[i], "%s counter %u: %d, expected %d", name, i, cnt[i], want_cnt[i]);
		CHECK(zeKernelDestroy(k));
		kernels++;
	}
	fclose(f);
	EXPECT(kernels > 0, "no kernels in %s/ptr_random.ref", argv[1]);
	if (m)
		CHECK(zeModuleDestroy(m));
	e2e_fini(&e);
	note("ptr_random: %u kernels in %u modules match the generator", kernels, modules);
	return 0;
}
