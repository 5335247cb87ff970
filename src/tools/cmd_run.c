/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `tlm run [--output PATH] [--no-summary] -- CMD ARGS...`
 *
 * Runs CMD with libtlm.so preloaded, waits for it, prints the end-of-run
 * report of its trace, and exits with CMD's status (128 + N when a signal N
 * ended it, as shells do). Like system(), tlm ignores SIGINT and SIGQUIT
 * while CMD runs, so a Ctrl-C stops the program and still gets its report.
 *
 * libtlm.so is looked for in $TLM_LIBRARY, then next to the tlm binary: the
 * build tree (../shim/libtlm.so) and the install prefix (../lib/...).
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

#include "cmd_run_simulate.h"
#include "cmds.h"

#define RUN_USAGE "usage: tlm run [--output PATH] [--no-summary] [--simulate SIZE[,SIZE...] [--devices N]] -- CMD [ARGS...]\n"

static int usage(void)
{
	fputs(RUN_USAGE, stderr);
	return TLM_EXIT_USAGE;
}

static const char run_help[] =
	RUN_USAGE
	"\n"
	"Runs CMD with libtlm.so preloaded, then prints the end-of-run report of its\n"
	"trace on stderr. The exit status is CMD's (128 + N when signal N ended it).\n"
	"\n"
	"options:\n"
	"  -o, --output PATH    where the trace goes (sets TLM_OUTPUT; %p, %h, %r, %%)\n"
	"  --no-summary         do not print the end-of-run report\n"
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
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = {
		"../shim/libtlm.so",                    /* build tree: build/src/tools/tlm */
		"../lib/libtlm.so",                     /* --prefix install */
		"../lib/x86_64-linux-gnu/libtlm.so",    /* Debian multiarch libdir */
		"../lib/aarch64-linux-gnu/libtlm.so",
		"../lib64/libtlm.so",
	};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char cand[PATH_MAX + 64];
		snprintf(cand, sizeof cand, "%s/%s", self, rel[i]);
		if (is_file(cand) && realpath(cand, out) && strlen(out) < len)
			return 0;
	}
	return -1;
}

int tlm_cmd_report(int argc, char **argv);

int tlm_cmd_run(int argc, char **argv)
{
	const char *output = NULL;
	int summary = 1, i = 1, sim;
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
		} else if (!strcmp(argv[i], "--no-summary")) {
			summary = 0;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(run_help, stdout);
			return TLM_EXIT_OK;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "tlm run: unknown option '%s'\n", argv[i]);
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
	if (tlm_simulate_active() && tlm_simulate_prepare() != 0)
		return TLM_EXIT_USAGE;
	if (output && !strchr(output, '%')) {
		/* a fixed name: this run's trace replaces the last one */
		if (unlink(output) != 0 && errno != ENOENT) {
			fprintf(stderr, "tlm run: cannot replace %s: %s\n", output, strerror(errno));
			return 1;
		}
	}
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tlm run: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
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
		setenv("TLM_SUMMARY", "0", 1); /* tlm run prints it */
		execvp(argv[i], argv + i);
		fprintf(stderr, "tlm run: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "tlm run: waitpid: %s\n", strerror(errno));
			return 1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return code; /* could not run it: nothing was recorded */

	/* the direct child's trace: TLM_OUTPUT (or its default) with its pid */
	char pat[PATH_MAX], path[PATH_MAX + 32];
	snprintf(pat, sizeof pat, "%s", output ? output : "tlm-%p.trace");
	size_t o = 0;
	for (const char *p = pat; *p && o < sizeof path - 24; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			path[o++] = '%';
			p++;
		} else if (p[0] == '%' && (p[1] == 'h' || p[1] == 'r')) {
			char v[256] = "0";
			if (p[1] == 'h' && gethostname(v, sizeof v) != 0)
				strcpy(v, "unknown");
			if (p[1] == 'r') {
				const char *r = getenv("RANK");
				if (!r || !*r)
					r = getenv("LOCAL_RANK");
				snprintf(v, sizeof v, "%s", r && *r ? r : "0");
			}
			o += (size_t)snprintf(path + o, sizeof path - o, "%s", v);
			p++;
		} else {
			path[o++] = *p;
		}
	}
	path[o] = 0;
	if (!is_file(path)) {
		fprintf(stderr, "tlm run: %s left no trace at %s (it made no CUDA memory calls, or recording was off)\n",
			argv[i], path);
		return code;
	}
	if (summary) {
		/* the end-of-run report goes to stderr, like the program's own diagnostics */
		char *rargv[] = {"report", "--summary", path, NULL};
		fflush(stdout);
		int saved = dup(STDOUT_FILENO);
		dup2(STDERR_FILENO, STDOUT_FILENO);
		(void)tlm_cmd_report(3, rargv);
		fflush(stdout);
		if (saved >= 0) {
			dup2(saved, STDOUT_FILENO);
			close(saved);
		}
	}
	return code;
}
