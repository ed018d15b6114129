/* The preload library survives exec (docs/preload.md §7).  Tools start
 * their target with their own LD_PRELOAD, replacing the variable; the target
 * would then never load this library and find no device.  So every way of
 * starting a program with a new environment is interposed here, and the
 * environment it passes is mended first:
 *
 *   - LD_PRELOAD: this library is appended (after the entries the program
 *     set, which are kept), unless an entry already names it;
 *   - ZESIM_SOCKET, ZE_ENABLE_ALT_DRIVERS, ZESIM_JOB_TIMEOUT_MS: restored to
 *     their values when this library was loaded, if the new environment lacks
 *     them (a value the program set is kept).
 *
 * The child loads the library again and does the same for its children.
 * Memory for the mended environment comes from mmap, not malloc: execve is
 * often called in a vfork child, where malloc is not safe. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern char **environ;

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);
static int (*real_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			       const posix_spawnattr_t *, char *const[], char *const[]);
static int (*real_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]);
static FILE *(*real_popen)(const char *, const char *);

/* What a child must inherit, as it was when the library was loaded. */
static char self_path[PATH_MAX];
static const char *const kept_names[] = {"ZESIM_SOCKET", "ZE_ENABLE_ALT_DRIVERS", "ZESIM_JOB_TIMEOUT_MS"};
enum { NKEPT = sizeof(kept_names) / sizeof(kept_names[0]) };
static char *kept[NKEPT]; /* "NAME=value", or NULL if unset then */

__attribute__((constructor)) static void exec_init(void)
{
#define R(n) *(void **)(&real_##n) = dlsym(RTLD_NEXT, #n)
	R(execve); R(execvpe); R(fexecve); R(posix_spawn); R(posix_spawnp); R(popen);
#undef R
	/* An absolute path: a child may run in another directory. */
	Dl_info info;
	if (dladdr((void *)exec_init, &info) && info.dli_fname && !realpath(info.dli_fname, self_path))
		self_path[0] = '\0';
	for (int i = 0; i < NKEPT; i++) {
		const char *v = getenv(kept_names[i]);
		if (v && *v && asprintf(&kept[i], "%s=%s", kept_names[i], v) < 0)
			kept[i] = NULL;
	}
}

static const char *base_name(const char *p, size_t n, size_t *bn)
{
	size_t i = n;
	while (i > 0 && p[i - 1] != '/')
		i--;
	*bn = n - i;
	return p + i;
}

/* Whether a LD_PRELOAD value (entries separated by ':' or ' ') names this
 * library: the same path, or a file of the same name. */
static int names_self(const char *v)
{
	size_t sn;
	const char *sb = base_name(self_path, strlen(self_path), &sn);
	while (*v) {
		const size_t n = strcspn(v, ": ");
		size_t bn;
		const char *b = base_name(v, n, &bn);
		if (n && bn == sn && memcmp(b, sb, sn) == 0)
			return 1;
		v += n;
		while (*v == ':' || *v == ' ')
			v++;
	}
	return 0;
}

static int has_name(const char *entry, const char *name)
{
	const size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The mended copy of envp, in one mmap'd block (env_free). */
typedef struct mended {
	char **env;
	size_t bytes;
} mended_t;

static int env_mend(char *const envp[], mended_t *m)
{
	m->env = NULL;
	m->bytes = 0;
	if (!self_path[0])
		return 0;
	size_t n = 0, preload_len = 0;
	const char *preload = NULL;
	int have[NKEPT] = {0};
	for (; envp && envp[n]; n++) {
		if (has_name(envp[n], "LD_PRELOAD")) {
			preload = envp[n] + strlen("LD_PRELOAD=");
			preload_len = strlen(preload);
		}
		for (int i = 0; i < NKEPT; i++)
			have[i] |= has_name(envp[n], kept_names[i]);
	}
	int missing = 0;
	for (int i = 0; i < NKEPT; i++)
		missing |= kept[i] && !have[i];
	if (preload && names_self(preload) && !missing)
		return 0; /* nothing to mend: pass envp as it is */
	/* Pointers: the old ones, the kept ones, LD_PRELOAD if new, NULL; then
	 * the new LD_PRELOAD string. */
	const size_t ptrs = n + NKEPT + 2;
	const size_t text = strlen("LD_PRELOAD=") + preload_len + 1 + strlen(self_path) + 1;
	const size_t bytes = ptrs * sizeof(char *) + text;
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -1;
	char **env = mem;
	char *s = (char *)(env + ptrs);
	if (preload && names_self(preload)) {
		s = NULL;
	} else if (preload && *preload) {
		strcpy(s, "LD_PRELOAD=");
		strcat(s, preload);
		strcat(s, ":");
		strcat(s, self_path);
	} else {
		strcpy(s, "LD_PRELOAD=");
		strcat(s, self_path);
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		env[k++] = s && has_name(envp[i], "LD_PRELOAD") ? s : envp[i];
	if (s && !preload)
		env[k++] = s;
	for (int i = 0; i < NKEPT; i++)
		if (kept[i] && !have[i])
			env[k++] = kept[i];
	env[k] = NULL;
	m->env = env;
	m->bytes = bytes;
	return 0;
}

static void env_free(mended_t *m)
{
	if (m->env)
		munmap(m->env, m->bytes);
}

/* envp itself when there is nothing to mend or no memory to mend it in. */
static char *const *env_of(const mended_t *m, char *const envp[]) { return m->env ? m->env : envp; }

/* ---- exec -------------------------------------------------------------------- */

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	mended_t m;
	env_mend(envp, &m);
	const int rc = real_execve(path, argv, env_of(&m, envp));
	const int err = errno;
	env_free(&m);
	errno = err;
	return rc;
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	mended_t m;
	env_mend(envp, &m);
	const int rc = real_execvpe(file, argv, env_of(&m, envp));
	const int err = errno;
	env_free(&m);
	errno = err;
	return rc;
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	mended_t m;
	env_mend(envp, &m);
	const int rc = real_fexecve(fd, argv, env_of(&m, envp));
	const int err = errno;
	env_free(&m);
	errno = err;
	return rc;
}

/* glibc's own execv, execvp and execl* call execve/execvpe inside libc,
 * where interposition does not reach: each is redone on the ones above. */
EXPORT int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

EXPORT int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

/* The arguments of an execl* call (and, for execle, the environment after
 * the NULL), in an mmap'd array. */
static char **list_args(const char *arg0, va_list ap, size_t *bytes, char ***envp)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 1;
	while (va_arg(count, char *))
		n++;
	va_end(count);
	*bytes = (n + 1) * sizeof(char *);
	char **argv = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (argv == MAP_FAILED)
		return NULL;
	argv[0] = (char *)arg0;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(ap, char *); /* the last is the NULL */
	if (envp)
		*envp = va_arg(ap, char **);
	return argv;
}

#define EXECL(call, want_env)                                                                                         \
	do {                                                                                                          \
		va_list ap;                                                                                           \
		va_start(ap, arg);                                                                                    \
		size_t bytes;                                                                                         \
		char **envp = environ;                                                                                \
		char **argv = list_args(arg, ap, &bytes, (want_env) ? &envp : NULL);                                 \
		va_end(ap);                                                                                           \
		if (!argv) {                                                                                          \
			errno = ENOMEM;                                                                               \
			return -1;                                                                                    \
		}                                                                                                     \
		const int rc = (call);                                                                                \
		const int err = errno;                                                                                \
		munmap(argv, bytes);                                                                                  \
		errno = err;                                                                                          \
		return rc;                                                                                            \
	} while (0)

EXPORT int execl(const char *path, const char *arg, ...) { EXECL(execve(path, argv, envp), 0); }

EXPORT int execle(const char *path, const char *arg, ...) { EXECL(execve(path, argv, envp), 1); }

EXPORT int execlp(const char *file, const char *arg, ...) { EXECL(execvpe(file, argv, envp), 0); }

/* ---- spawn ------------------------------------------------------------------- */

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	mended_t m;
	env_mend(envp, &m);
	const int rc = real_posix_spawn(pid, path, fa, attr, argv, env_of(&m, envp));
	env_free(&m);
	return rc;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	mended_t m;
	env_mend(envp, &m);
	const int rc = real_posix_spawnp(pid, file, fa, attr, argv, env_of(&m, envp));
	env_free(&m);
	return rc;
}

/* system(3) as POSIX specifies it (SIGINT and SIGQUIT ignored and SIGCHLD
 * blocked in the caller while the command runs), on the posix_spawn above:
 * glibc's own spawns the shell inside libc with the unmended environ. */
EXPORT int system(const char *command)
{
	if (!command)
		return 1; /* a shell is available */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigset_t chld, old_mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);

	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t defaults;
	sigemptyset(&defaults);
	if (old_int.sa_handler != SIG_IGN)
		sigaddset(&defaults, SIGINT);
	if (old_quit.sa_handler != SIG_IGN)
		sigaddset(&defaults, SIGQUIT);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setsigmask(&attr, &old_mask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = {"sh", "-c", (char *)command, NULL};
	pid_t pid;
	int status = -1;
	const int rc = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (rc == 0) {
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
	} else {
		status = W_EXITCODE(127, 0); /* the shell could not run */
	}
	const int err = errno;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	errno = err;
	return status;
}

/* popen spawns its shell inside libc from `environ`: that one is mended for
 * the duration of the call.  Another thread's getenv meanwhile sees the
 * mended copy (the same variables, this library added); a setenv/putenv of
 * another thread during the call is lost. */
EXPORT FILE *popen(const char *command, const char *type)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	mended_t m;
	env_mend(environ, &m);
	char **saved = environ;
	if (m.env)
		environ = m.env;
	FILE *f = real_popen(command, type);
	const int err = errno;
	if (m.env)
		environ = saved;
	env_free(&m);
	pthread_mutex_unlock(&lock);
	errno = err;
	return f;
}
