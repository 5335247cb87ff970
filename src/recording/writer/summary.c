/* SPDX-License-Identifier: MIT */
/*
 * summary.c - the end-of-run report on stderr (TLM_SUMMARY=0 turns it off).
 *
 * At exit, once the trace is complete, libtlm runs `tlm report --summary
 * TRACE` with its output on libtlm's stderr (log.h): the analysis lives in the tool, not in
 * the process being watched. The tool is found through $TLM_TOOL, else next to
 * libtlm.so (build tree ../command/tlm, install prefix ../bin/tlm or
 * ../../bin/tlm). Without it, one line says where the trace is. The tool runs
 * as a child the host cannot see (spawn_quiet.c).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording/config.h"
#include "recording/log.h"
#include "recording/writer/summary.h"

extern char **environ;

static int find_tool(char *out, size_t len)
{
	const char *env = getenv("TLM_TOOL");
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK);
	}
	Dl_info info;
	if (!dladdr((void *)&find_tool, &info) || !info.dli_fname)
		return -1;
	char dir[PATH_MAX];
	if (!realpath(info.dli_fname, dir))
		return -1;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	static const char *const rel[] = {"../command/tlm", "../bin/tlm", "../../bin/tlm"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		snprintf(out, len, "%s/%s", dir, rel[i]);
		struct stat st;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

void tlm__summary(const char *trace)
{
	struct stat ts;
	if (!tlm__cfg.summary || !trace || stat(trace, &ts) != 0 || !S_ISREG(ts.st_mode))
		return; /* TLM_OUTPUT=/dev/null: nothing to report */
	int out = tlm__log_fd();
	if (out < 0)
		return; /* the program's stderr is gone: nowhere to say anything */
	char tool[PATH_MAX + 32];
	if (find_tool(tool, sizeof tool) != 0) {
		tlm__log("trace written to %s (run `tlm report %s` for the report)", trace, trace);
		return;
	}
	/* the tool's environment without LD_PRELOAD: it is not to be traced */
	size_t n = 0;
	while (environ && environ[n])
		n++;
	char **envp = malloc((n + 1) * sizeof *envp);
	if (!envp)
		return;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			envp[k++] = environ[i];
	envp[k] = NULL;
	char *argv[] = {tool, "report", "--summary", (char *)trace, NULL};
	int st;
	fflush(stderr);
	/* a child the host never sees: no SIGCHLD, not reaped by its waitpid(-1) */
	if (tlm__spawn_quiet(tool, argv, envp, out, &st) != 0)
		tlm__log("trace written to %s (run `tlm report %s` for the report)", trace, trace);
	free(envp);
}
