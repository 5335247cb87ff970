/* SPDX-License-Identifier: MIT */
/*
 * spawn_quiet.c - run the summary tool as a child the host never sees.
 *
 * posix_spawn makes an ordinary child: its exit raises SIGCHLD in the host,
 * the host's waitpid(-1) may reap it (our wait then fails, or, with SIGCHLD
 * ignored, the kernel reaps it), and a host that counts its children sees one
 * more. A clone with no exit signal is none of that: the host's waitpid
 * without __WALL does not see it and nothing is raised; we wait with __WALL.
 * The child (our memory, borrowed until it execs: CLONE_VFORK) makes raw
 * system calls only: it resets every caught signal to SIG_DFL, puts the
 * caller's signal mask back, puts libtlm's stderr (log.h: the one the
 * program started with) at its stdout and stderr, and execs. The dup3 calls
 * act on the child's own copy of the descriptor table (no CLONE_FILES).
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recording/writer/summary.h"

struct kact { /* the kernel's struct sigaction */
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

struct job {
	const char *path;
	char *const *argv, *const *envp;
	int out;
	sigset_t mask;
};

__attribute__((no_sanitize("address", "undefined", "thread"))) static int child(void *arg)
{
	struct job *j = arg;
	for (int s = 1; s < 65; s++) {
		struct kact k;
		if (s == SIGKILL || s == SIGSTOP || syscall(SYS_rt_sigaction, s, NULL, &k, 8) != 0)
			continue;
		if (k.handler != SIG_DFL && k.handler != SIG_IGN) {
			struct kact d = {0};
			syscall(SYS_rt_sigaction, s, &d, NULL, 8);
		}
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &j->mask, NULL, 8);
	syscall(SYS_dup3, j->out, STDOUT_FILENO, 0);
	if (j->out != STDERR_FILENO)
		syscall(SYS_dup3, j->out, STDERR_FILENO, 0);
	syscall(SYS_execve, j->path, j->argv, j->envp);
	syscall(SYS_exit, 127);
	return 127;
}

int tlm__spawn_quiet(const char *path, char *const argv[], char *const envp[], int out_fd, int *status)
{
	size_t stack = 256 * 1024;
	void *stk = mmap(NULL, stack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stk == MAP_FAILED)
		return -1;
	struct job j = {.path = path, .argv = argv, .envp = envp, .out = out_fd};
	sigset_t all;
	sigfillset(&all);
	int saved = errno;
	/* no handler of the host may run on the child's borrowed memory */
	pthread_sigmask(SIG_SETMASK, &all, &j.mask);
	pid_t pid = clone(child, (char *)stk + stack, CLONE_VM | CLONE_VFORK, &j);
	pthread_sigmask(SIG_SETMASK, &j.mask, NULL);
	int rc = -1;
	if (pid > 0) {
		int st;
		pid_t w;
		while ((w = waitpid(pid, &st, __WALL)) < 0 && errno == EINTR)
			;
		if (w == pid) {
			*status = st;
			rc = 0;
		}
	}
	munmap(stk, stack);
	errno = saved;
	return rc;
}
