/* SPDX-License-Identifier: MIT */
/* run_signals.c - tlm run's signal forwarding (run_signals.h). */
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "run_signals.h"

static const int ends_process[] = {
	SIGHUP,  SIGINT,    SIGQUIT, SIGILL,  SIGTRAP,   SIGABRT, SIGBUS,  SIGFPE, SIGUSR1, SIGSEGV, SIGUSR2,
	SIGPIPE, SIGALRM,   SIGTERM, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSYS,
};

void tlm_run_signal_set(sigset_t *s)
{
	sigemptyset(s);
	for (size_t k = 0; k < sizeof ends_process / sizeof *ends_process; k++)
		sigaddset(s, ends_process[k]);
	for (int k = SIGRTMIN; k <= SIGRTMAX; k++) /* their default action ends the process too */
		sigaddset(s, k);
	sigaddset(s, SIGCHLD);
}

bool tlm_run_own_group(void)
{
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return true; /* no controlling terminal */
	close(fd);
	return false;
}

void tlm_run_child_setup(bool own, pid_t parent)
{
	if (!own)
		return;
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* tlm died before the line above */
		_exit(128 + SIGKILL);
}

void tlm_run_parent_setup(bool own, pid_t child)
{
	if (own)
		setpgid(child, child); /* fails harmlessly once the child has exec'd */
}

void tlm_run_forward(pid_t child, int sig, const siginfo_t *si)
{
	if (sig <= 0 || sig == SIGCHLD)
		return;
	/* SI_USER (kill), SI_QUEUE (sigqueue), SI_TKILL (tgkill) from another
	 * process; not the kernel's (a terminal's ^C reached the program's group
	 * by itself; tlm's own SIGPIPE or SIGXCPU is tlm's), not tlm's own */
	bool sent = si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_code == SI_TKILL;
	if (!sent || si->si_pid == getpid())
		return;
	if (si->si_code == SI_QUEUE)
		sigqueue(child, sig, si->si_value); /* the value goes with it */
	else
		kill(child, sig);
}
