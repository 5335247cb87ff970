/* SPDX-License-Identifier: MIT */
/* tlm_test.c - see tlm_test.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tlm_test.h"

void tlm_test_child_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	/* the kernel refuses SIGKILL and SIGSTOP, glibc its own two: harmless */
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int tlm_test_skip_allowed(const char *what, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		tlm_test_child_signals();
		execl("/bin/sh", "sh", TLM_TEST_COMMON "/skip.sh", what, reason, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 77;
}
