/* The program zesim-dbg debugs in its tmux test (tests/e2e/dbg_tmux.py): loads
 * MODULE (kernel dbgk, tests/e2e/dbg.zeasm, assembled with -g), writes its pid to
 * PIDFILE, waits until GOFILE exists (the debugger attaches and sets its
 * breakpoints meanwhile), runs one group of 8 work items and prints out[0..7].
 *
 *     dbg_target MODULE PIDFILE GOFILE */
#include <unistd.h>

#include "e2e.h"

int main(int argc, char **argv)
{
	EXPECT(argc == 4, "usage: dbg_target MODULE PIDFILE GOFILE");
	e2e_t e;
	e2e_init(&e);
	ze_module_handle_t m = e2e_module(&e, argv[1]);
	ze_kernel_handle_t k = e2e_kernel(m, "dbgk");
	uint32_t *out = e2e_alloc_shared(&e, 8 * sizeof(uint32_t));
	for (int i = 0; i < 8; i++)
		out[i] = 0xdeadbeef;
	CHECK(zeKernelSetGroupSize(k, 8, 1, 1));
	e2e_arg_t args[] = {{sizeof(out), &out}};
	e2e_set_args(k, 1, args);

	FILE *f = fopen(argv[2], "w");
	EXPECT(f && fprintf(f, "%d\n", (int)getpid()) > 0 && fclose(f) == 0, "cannot write %s", argv[2]);
	printf("dbg_target: pid %d, module loaded; waiting for %s\n", (int)getpid(), argv[3]);
	fflush(stdout);
	for (int i = 0; access(argv[3], F_OK) != 0; i++) {
		EXPECT(i < 1200, "%s did not appear in 120 s", argv[3]);
		usleep(100000);
	}
	ze_group_count_t groups = {1, 1, 1};
	CHECK(zeCommandListAppendLaunchKernel(e.list, k, &groups, NULL, 0, NULL));
	e2e_run(&e);
	printf("dbg_target: out =");
	for (int i = 0; i < 8; i++)
		printf(" 0x%x", out[i]);
	printf("\n");
	CHECK(zeMemFree(e.ctx, out));
	e2e_fini(&e);
	printf("dbg_target: done\n");
	return 0;
}
