/* Tool launchers (issue 16 item 6, docs/preload.md §7): a launcher replaces
 * LD_PRELOAD with its own library (launch_tool.c), often drops other
 * variables too, and starts a Level Zero program, which must still find the
 * simulated device.
 *
 * Usage: e2e_launcher TOOL.so [MODE...]
 *
 * With modes, the first one says how to start `e2e_launcher TOOL.so REST...`
 * (a child or a new image of this program); the last program, with no mode
 * left, is the target: it checks that TOOL.so is loaded, that LD_PRELOAD names
 * our preload library exactly once and ZESIM_SOCKET is set, then finds the
 * device and runs a fill and a copy on it.  Exit status 0 = all checks passed
 * (a spawning launcher exits with its child's status). */
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"

extern char **environ;

static char self[4096];

/* environ without LD_PRELOAD and ZESIM_SOCKET, plus LD_PRELOAD=tool (and
 * extra, if not NULL). */
static char **tool_env(const char *tool, char *extra)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 3, sizeof(char *));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], "ZESIM_SOCKET=", 13))
			env[k++] = environ[i];
	char *p = malloc(strlen(tool) + 12);
	sprintf(p, "LD_PRELOAD=%s", tool);
	env[k++] = p;
	if (extra)
		env[k++] = extra;
	env[k] = NULL;
	return env;
}

static int wait_child(pid_t pid)
{
	int st;
	EXPECT(waitpid(pid, &st, 0) == pid, "waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static int target(const char *tool)
{
	EXPECT(dlsym(RTLD_DEFAULT, "e2e_tool_marker") != NULL, "the tool library %s is not loaded", tool);
	const char *pl = getenv("LD_PRELOAD");
	EXPECT(pl != NULL, "no LD_PRELOAD");
	int ours = 0;
	for (const char *p = pl; (p = strstr(p, "libzesim_preload.so")); p++)
		ours++;
	EXPECT(ours == 1, "LD_PRELOAD=%s names the preload library %d times", pl, ours);
	EXPECT(strstr(pl, tool) != NULL, "LD_PRELOAD=%s lost the tool", pl);
	EXPECT(getenv("ZESIM_SOCKET") && *getenv("ZESIM_SOCKET"), "no ZESIM_SOCKET");

	e2e_t e;
	e2e_init(&e);
	uint32_t *buf = e2e_alloc_device(&e, 4096);
	uint32_t *back = malloc(4096);
	const uint32_t pat = 0x1234abcd;
	CHECK(zeCommandListAppendMemoryFill(e.list, buf, &pat, 4, 4096, NULL, 0, NULL));
	CHECK(zeCommandListAppendMemoryCopy(e.list, back, buf, 4096, NULL, 0, NULL));
	e2e_run(&e);
	for (int i = 0; i < 1024; i++)
		EXPECT(back[i] == pat, "[%d] = 0x%x", i, back[i]);
	CHECK(zeMemFree(e.ctx, buf));
	free(back);
	e2e_fini(&e);
	note("target ok (pid %d, LD_PRELOAD=%s)", (int)getpid(), pl);
	return 0;
}

int main(int argc, char **argv)
{
	EXPECT(argc >= 2, "usage: e2e_launcher TOOL.so [MODE...]");
	const char *tool = argv[1];
	if (argc == 2)
		return target(tool);
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	EXPECT(n > 0, "readlink /proc/self/exe");
	self[n] = '\0';
	const char *mode = argv[2];
	/* The child's command line: self, tool, the remaining modes. */
	char **cargv = calloc((size_t)argc, sizeof(char *));
	cargv[0] = self;
	cargv[1] = (char *)tool;
	for (int i = 3; i < argc; i++)
		cargv[i - 1] = argv[i];
	char *r0 = argc > 3 ? argv[3] : NULL, *r1 = argc > 4 ? argv[4] : NULL;
	EXPECT(argc <= 5, "at most three modes");
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s %s", self, tool, r0 ? r0 : "", r1 ? r1 : "");
	static char putenv_text[4200];
	fflush(stdout);

	if (!strcmp(mode, "execve")) {
		execve(self, cargv, tool_env(tool, NULL));
	} else if (!strcmp(mode, "execv-setenv")) {
		setenv("LD_PRELOAD", tool, 1);
		unsetenv("ZESIM_SOCKET");
		execv(self, cargv);
	} else if (!strcmp(mode, "execvp-putenv")) {
		snprintf(putenv_text, sizeof(putenv_text), "LD_PRELOAD=%s", tool);
		putenv(putenv_text);
		execvp(self, cargv);
	} else if (!strcmp(mode, "execl-environ")) {
		/* A new environ with almost nothing in it. */
		environ = tool_env(tool, NULL);
		for (char **e = environ; *e; e++)
			if (!strncmp(*e, "ZE_ENABLE_ALT_DRIVERS=", 22))
				*e = "ZESIM_DROPPED=1";
		execl(self, self, tool, r0, r1, (char *)NULL);
	} else if (!strcmp(mode, "execle")) {
		char **env = tool_env(tool, NULL);
		if (!r0)
			execle(self, self, tool, (char *)NULL, env);
		else if (!r1)
			execle(self, self, tool, r0, (char *)NULL, env);
		else
			execle(self, self, tool, r0, r1, (char *)NULL, env);
	} else if (!strcmp(mode, "execlp")) {
		setenv("LD_PRELOAD", tool, 1);
		execlp(self, self, tool, r0, r1, (char *)NULL);
	} else if (!strcmp(mode, "vfork")) {
		char **env = tool_env(tool, NULL);
		pid_t pid = vfork();
		if (pid == 0) {
			execve(self, cargv, env);
			_exit(127);
		}
		return wait_child(pid);
	} else if (!strcmp(mode, "posix_spawn") || !strcmp(mode, "posix_spawnp")) {
		pid_t pid;
		const int rc = (mode[11] == 'p' ? posix_spawnp : posix_spawn)(&pid, self, NULL, NULL, cargv,
									      tool_env(tool, NULL));
		EXPECT(rc == 0, "%s: %s", mode, strerror(rc));
		return wait_child(pid);
	} else if (!strcmp(mode, "system")) {
		setenv("LD_PRELOAD", tool, 1);
		unsetenv("ZESIM_SOCKET");
		const int st = system(cmd);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
	} else if (!strcmp(mode, "popen")) {
		setenv("LD_PRELOAD", tool, 1);
		FILE *f = popen(cmd, "r");
		EXPECT(f != NULL, "popen");
		char line[8192];
		while (fgets(line, sizeof(line), f))
			fputs(line, stdout);
		const int st = pclose(f);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
	} else {
		EXPECT(0, "unknown mode %s", mode);
	}
	EXPECT(0, "%s failed: %s", mode, strerror(errno));
}
