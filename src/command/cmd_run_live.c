/* SPDX-License-Identifier: MIT */
/*
 * cmd_run_live.c - `tlm run --live`: the run's traces (those the manifest
 * names) on the `tlm top` screen while the program runs; tlm run prints the
 * end-of-run report after it as always.
 *
 * The screen owns the terminal, so the program's standard output and error,
 * when they are that terminal, go to a file while it runs (its stdin, when
 * the terminal, is /dev/null: the keys are the screen's), and that file is
 * copied to tlm's standard output once the screen closes. Without a terminal
 * the view is printed as text every 2 s on stderr. Signals are forwarded as
 * without --live (the screen's loop takes them without waiting).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_run_live.h"
#include "run_signals.h"
#include "live/live.h"

bool tlm__run_live_tty(void)
{
	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && getenv("TERM") && *getenv("TERM");
}

int tlm__run_live_log(char *path, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	const char *dirs[] = {tmp && *tmp ? tmp : "/tmp", "/tmp"};
	for (size_t i = 0; i < 2; i++) {
		int k = snprintf(path, n, "%s/tlm-live-XXXXXX", dirs[i]);
		if (k < 0 || (size_t)k >= n)
			continue;
		int fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

void tlm__run_live_child(int logfd)
{
	if (logfd < 0)
		return;
	int in = open("/dev/null", O_RDONLY);
	if (in >= 0 && in != STDIN_FILENO) {
		dup2(in, STDIN_FILENO);
		close(in);
	}
	dup2(logfd, STDOUT_FILENO);
	dup2(logfd, STDERR_FILENO);
	close(logfd);
}

struct run {
	pid_t pid;
	const sigset_t *block;
	int st;
	bool exited;
};

/* The screen's turn: forwards what was sent to tlm, reaps the program. */
static int tick(void *ctx)
{
	struct run *r = ctx;
	struct timespec zero = {0, 0};
	siginfo_t si;
	int sig;
	while ((sig = sigtimedwait(r->block, &si, &zero)) > 0)
		tlm_run_forward(r->pid, sig, &si); /* run_signals.h */
	if (!r->exited && waitpid(r->pid, &r->st, WNOHANG) == r->pid)
		r->exited = true;
	return r->exited;
}

void tlm__run_live_output(int fd, const char *path)
{
	if (fd < 0)
		return;
	char buf[65536];
	ssize_t k;
	fflush(stdout);
	if (lseek(fd, 0, SEEK_SET) != 0)
		return;
	while ((k = read(fd, buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
		if (k > 0 && write(STDOUT_FILENO, buf, (size_t)k) != k)
			break;
	close(fd);
	unlink(path);
}

int tlm__run_live(pid_t pid, const char *cmd, const char *manifest, const sigset_t *block, int *st, bool screen)
{
	struct tlm_live_job *j = tlm_live_job_open(TLM_LIVE_MANIFEST, manifest);
	struct run r = {.pid = pid, .block = block};
	if (j) {
		char name[512];
		snprintf(name, sizeof name, "the run of %s", cmd);
		tlm_live_job_set_name(j, name);
		struct tlm_live_ui ui = {.interval_s = 1, .sort = TLM_LIVE_BY_BYTES, .tick = tick, .ctx = &r};
		int t = screen ? tlm_live_tui(j, &ui) : -1;
		if (t < 0) {
			ui.interval_s = 2;
			tlm_live_text_loop(stderr, j, &ui);
		} else if (t == 1 && !r.exited) {
			fprintf(stderr, "tlm run: the screen was closed; pid %d runs on (what it prints is shown when it "
					"ends)\n", (int)pid);
		}
		tlm_live_job_close(j);
	}
	if (r.exited) {
		*st = r.st;
		return 0;
	}
	return 1; /* the caller waits for it as without --live */
}
