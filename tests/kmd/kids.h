/* Processes a test forks (targets, debuggers), killed with SIGKILL when the test
 * exits, also when a check fails: kids_init() once in main, kids_track() after fork. */
#ifndef ZESIM_TESTS_KMD_KIDS_H
#define ZESIM_TESTS_KMD_KIDS_H

#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define KIDS_MAX 16
static pid_t kids_[KIDS_MAX];
static unsigned nkids_;
static pid_t kids_parent_;

static void kids_kill_(void)
{
	if (getpid() != kids_parent_) /* a forked child that exits kills nobody */
		return;
	for (unsigned i = 0; i < nkids_; i++)
		kill(kids_[i], SIGKILL);
}

static inline void kids_init(void)
{
	kids_parent_ = getpid();
	atexit(kids_kill_);
}

static inline void kids_track(pid_t p)
{
	if (p > 0 && nkids_ < KIDS_MAX)
		kids_[nkids_++] = p;
}

#endif
