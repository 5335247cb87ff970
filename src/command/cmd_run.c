/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `tlm run [--output PATH] [--no-summary] -- CMD ARGS...`
 *
 * Runs CMD with libtlm.so preloaded, waits for it, prints the end-of-run
 * report of its trace and a line for every other trace of the run (children,
 * exec'd images, ranks), and exits with CMD's status (128 + N when a signal N
 * ended it, as shells do). Every signal whose default action ends a process,
 * sent to tlm, is forwarded to CMD, once (run_signals.h: also when it was
 * sent to tlm's whole process group), and tlm waits for it, so the report
 * is still printed.
 *
 * libtlm.so is looked for in $TLM_LIBRARY, then next to the tlm binary: the
 * build tree, then where meson install or pip install put it (beside.c).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/text.h"
#include "cmd_run_live.h"
#include "cmd_run_simulate.h"
#include "cmds.h"
#include "run_signals.h"

#define RUN_USAGE "usage: tlm run [-o PATH] [-f] [--no-summary] [--live] [--simulate SIZE[,SIZE...] [--devices N]] -- CMD [ARGS...]\n"

static int usage(void)
{
	fputs(RUN_USAGE, stderr);
	return TLM_EXIT_USAGE;
}

static const char run_help[] =
	RUN_USAGE
	"\n"
	"Runs CMD with libtlm.so preloaded, then prints the end-of-run report of its\n"
	"trace on stderr, and one line for each other trace of the run. Signals that would\n"
	"end tlm (SIGTERM, SIGINT, SIGHUP, SIGUSR1, ...) are forwarded to CMD. The exit\n"
	"status is CMD's (128 + N when signal N ended it).\n"
	"\n"
	"options:\n"
	"  -o, --output PATH    where the trace goes (sets TLM_OUTPUT; %p, %h, %r, %%);\n"
	"                       an existing file is never replaced, a symbolic link never followed\n"
	"  -f, --force          replace an existing regular file at PATH\n"
	"  --no-summary         do not print the end-of-run report\n"
	"  --live               show the run's GPU memory while it runs (the tlm top screen;\n"
	"                       CMD's output is shown after it ends); text on stderr\n"
	"                       without a terminal (docs/top.md)\n"
	"  --simulate SIZES     run on the simulated CUDA device (no GPU): e.g. 80G, or 80G,40G\n"
	"                       for one device per size (docs/simulate.md)\n"
	"  --devices N          with --simulate: N devices of the (one) size\n"
	"  -h, --help           show this help\n"
	"\n"
	"libtlm.so is $TLM_LIBRARY, else the one next to tlm (build tree or install prefix).\n";

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finds libtlm.so; writes its absolute path into out. */
int tlm_find_library(char *out, size_t len)
{
	const char *env = getenv("TLM_LIBRARY");
	if (env && *env) {
		if (!is_file(env))
			return -1;
		return realpath(env, out) && strlen(out) < len ? 0 : -1;
	}
	return tlm__find_beside(TLM__BESIDE_LIB, "libtlm.so", out, len);
}

void tlm_run_report(const char *manifest, const char *cmd, int pid, int print_summary); /* run_traces.c */

/* -o PATH: never over an existing file unless --force, never through a link */
static int check_output(const char *output, int force)
{
	struct stat st;
	if (!output || strchr(output, '%') || lstat(output, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		tlm_text_line(stderr, "tlm run: %s is a symbolic link; refusing to write the trace through it\n", output);
		return -1;
	}
	if (!force) {
		tlm_text_line(stderr, "tlm run: %s exists; refusing to replace it (use -f/--force to replace it)\n", output);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		tlm_text_line(stderr, "tlm run: %s is not a regular file; refusing to replace it\n", output);
		return -1;
	}
	if (unlink(output) != 0) {
		tlm_text_line(stderr, "tlm run: cannot replace %s: %s\n", output, strerror(errno));
		return -1;
	}
	return 0;
}

int tlm_cmd_run(int argc, char **argv)
{
	const char *output = NULL;
	int summary = 1, force = 0, live = 0, i = 1, sim;
	for (; i < argc; i++) {
		if ((sim = tlm_simulate_option(argc, argv, &i)) != 0) {
			if (sim < 0)
				return sim == -2 ? TLM_EXIT_USAGE : usage(); /* -2: said why */
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--output") || !strcmp(argv[i], "-o")) {
			if (++i >= argc)
				return usage();
			output = argv[i];
		} else if (!strncmp(argv[i], "--output=", 9)) {
			output = argv[i] + 9;
		} else if (!strcmp(argv[i], "--force") || !strcmp(argv[i], "-f")) {
			force = 1;
		} else if (!strcmp(argv[i], "--no-summary")) {
			summary = 0;
		} else if (!strcmp(argv[i], "--live")) {
			live = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(run_help, stdout);
			return TLM_EXIT_OK;
		} else if (argv[i][0] == '-') {
			tlm_text_line(stderr, "tlm run: unknown option '%s'\n", argv[i]);
			return usage();
		} else {
			break; /* the command, without "--" */
		}
	}
	if (i >= argc)
		return usage();
	char lib[PATH_MAX];
	if (tlm_find_library(lib, sizeof lib) != 0) {
		fprintf(stderr, "tlm run: cannot find libtlm.so (set TLM_LIBRARY to its path)\n");
		return 1;
	}
	if (output && !*output) {
		fprintf(stderr, "tlm run: --output needs a path\n");
		return usage();
	}
	if (tlm_simulate_active() && tlm_simulate_prepare() != 0)
		return TLM_EXIT_USAGE;
	if (check_output(output, force) != 0)
		return 1;
	/* every libtlm.so of the run names its trace here (run_traces.c) */
	const char *tmp = getenv("TMPDIR");
	char manifest[PATH_MAX];
	snprintf(manifest, sizeof manifest, "%s/tlm-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int mfd = mkstemp(manifest);
	if (mfd < 0) {
		snprintf(manifest, sizeof manifest, "/tmp/tlm-run-XXXXXX");
		mfd = mkstemp(manifest);
	}
	if (mfd >= 0)
		close(mfd);
	/* --live on a terminal: the screen takes it, the program's output waits in a file */
	bool screen = live && mfd >= 0 && tlm__run_live_tty();
	char logpath[PATH_MAX] = "";
	int logfd = screen ? tlm__run_live_log(logpath, sizeof logpath) : -1;
	screen = logfd >= 0;
	/* the signals to forward and SIGCHLD are taken synchronously
	 * (sigwaitinfo), never by a handler (run_signals.h) */
	sigset_t block, oldmask;
	tlm_run_signal_set(&block);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	bool own_group = tlm_run_own_group();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		tlm_text_line(stderr, "tlm run: fork: %s\n", strerror(errno));
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		if (mfd >= 0)
			unlink(manifest);
		tlm__run_live_output(logfd, logpath);
		return 1;
	}
	if (pid == 0) {
		tlm_run_child_setup(own_group, parent);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		const char *prev = getenv("LD_PRELOAD");
		size_t l = strlen(lib) + (prev ? strlen(prev) + 2 : 1);
		char *pre = malloc(l);
		if (!pre)
			_exit(127);
		/* after what the user preloads already (a sanitizer runtime must stay first) */
		snprintf(pre, l, "%s%s%s", prev ? prev : "", prev && *prev ? " " : "", lib);
		setenv("LD_PRELOAD", pre, 1);
		if (tlm_simulate_active())
			tlm_simulate_child();
		if (output)
			setenv("TLM_OUTPUT", output, 1);
		if (mfd >= 0)
			setenv("TLM_RUN_MANIFEST", manifest, 1);
		setenv("TLM_SUMMARY", "0", 1); /* tlm run prints it */
		tlm__run_live_child(logfd);
		execvp(argv[i], argv + i);
		tlm_text_line(stderr, "tlm run: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	tlm_run_parent_setup(own_group, pid);
	int st = 1 << 8;
	bool waited = live && mfd >= 0 && tlm__run_live(pid, argv[i], manifest, &block, &st, screen) == 0;
	while (!waited) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			tlm_text_line(stderr, "tlm run: waitpid: %s\n", strerror(errno));
			st = 1 << 8;
			break;
		}
		siginfo_t si;
		int sig = sigwaitinfo(&block, &si);
		/* what a process sent us (a scheduler's SIGTERM) goes to the program */
		if (sig > 0)
			tlm_run_forward(pid, sig, &si);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	tlm__run_live_output(logfd, logpath); /* what the program printed while the screen was up */
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 127)) /* 127: could not run it, nothing recorded */
		tlm_run_report(manifest, argv[i], (int)pid, summary);
	if (mfd >= 0)
		unlink(manifest);
	return code;
}
