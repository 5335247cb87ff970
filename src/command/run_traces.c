/* SPDX-License-Identifier: MIT */
/*
 * run_traces.c - what `tlm run` says about the traces its run produced.
 *
 * Each libtlm.so of the run (the program, its fork children, exec'd images,
 * ranks) appends its trace's path to the manifest file tlm run named in
 * TLM_RUN_MANIFEST. The program's own trace gets the short report (or, when
 * the program left none, the only trace of the run); every trace gets one
 * line and the command for its full report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/text.h"
#include "cmds.h"
#include "common/input.h"
#include "render/render.h"
#include "analysis/report.h"
#include "common/grow.h"

int tlm_cmd_report(int argc, char **argv);
void tlm__run_job_report(char **paths, size_t n); /* cmd_report_job.c */

static void one_line(const char *path)
{
	char err[256];
	struct tlm_report *r = tlm_report_build_for(path, 0, err, sizeof err);
	if (!r) {
		tlm_text_line(stderr, "  %s: %s\n", path, err);
		return;
	}
	uint64_t peak = 0;
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].peak_reserved > peak)
			peak = r->devices[i].peak_reserved;
	char p[32];
	tlm_text_line(stderr, "  %s: pid %" PRIu32 ", exit %s, %" PRIu64 " events, peak %s, %zu leak site%s\n", path, r->pid,
		tlm__exit_name(r->exit), r->events, tlm__human(p, sizeof p, peak), r->nleaks, r->nleaks == 1 ? "" : "s");
	tlm_report_free(r);
}

static void summary(const char *path)
{
	char *rargv[] = {"report", "--summary", (char *)path, NULL};
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

void tlm_run_report(const char *manifest, const char *cmd, int pid, int print_summary)
{
	/* the run's programs can write the manifest, and name anything in it: it
	 * and each trace it names are read only as regular files (a FIFO would
	 * be waited on for ever) */
	FILE *f = tlm_input_fopen(manifest, 0, NULL, 0);
	char line[4400], **paths = NULL;
	size_t n = 0, cap = 0;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		int fd = line[0] ? tlm_input_open(line, 0, NULL, 0) : -1;
		if (fd < 0)
			continue;
		close(fd);
		if (n == cap && tlm__grow(&paths, &cap, n + 1, sizeof *paths, 8))
			break;

		if (!(paths[n] = strdup(line)))
			break;
		n++;
	}
	if (f)
		fclose(f);
	if (!print_summary) {
		for (size_t i = 0; i < n; i++)
			free(paths[i]);
		free(paths);
		return;
	}
	if (!n) {
		tlm_text_line(stderr, "tlm run: %s left no trace (it and its children made no CUDA memory calls, or recording "
				"was off)\n", cmd);
		free(paths);
		return;
	}
	/* the program's own trace first, with the short report */
	size_t own = n;
	for (size_t i = 0; i < n && own == n; i++) {
		char err[256];
		struct tlm_reader *rd = tlm_reader_open(paths[i], err, sizeof err);
		if (rd && (int)tlm_reader_header(rd)->pid == pid)
			own = i;
		if (rd)
			tlm_reader_close(rd);
	}
	if (own < n)
		summary(paths[own]);
	else if (n == 1) /* the program (torchrun with one rank, a shell) made no CUDA call */
		summary(paths[0]);
	if (n > 1 || own == n) {
		tlm_text_line(stderr, "tlm run: %zu trace%s from this run:\n", n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			one_line(paths[i]);
		fprintf(stderr, "full report: tlm report PATH (one of the above)\n");
	}
	if (n > 1) /* the job: every process side by side (docs/job.md) */
		tlm__run_job_report(paths, n);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}
