/* SPDX-License-Identifier: MIT */
/*
 * cmd_report_job.c - `tlm report` on many inputs: the job report
 * (src/job/job.h, docs/job.md). Exit codes as for one trace: 0 ok, 2 when
 * an input cannot be read or is damaged (the rest is still reported, and
 * one line on stderr says how many), 64 bad usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/text.h"
#include "cmds.h"
#include "common/input.h"
#include "job/job.h"

bool tlm__report_is_job_input(const char *arg)
{
	struct stat st;
	if (stat(arg, &st) != 0)
		return strpbrk(arg, "*?[") != NULL; /* a glob the shell left alone */
	if (S_ISDIR(st.st_mode))
		return true;
	/* a pipe is one trace, read as a stream: looking at its first byte would
	 * consume it; a FIFO or a device is never waited on */
	FILE *f = tlm_input_fopen(arg, 0, NULL, 0);
	int c = ' ';
	while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\n' || c == '\t' || c == '\r'))
		;
	if (f)
		fclose(f);
	return c == '{';
}

int tlm__report_job(char **inputs, size_t n, const char *format, const char *out, unsigned threads, bool single_opts)
{
	if (!n) {
		fprintf(stderr, "tlm report: missing TRACE\n");
		return TLM_EXIT_USAGE;
	}
	bool html = !strcmp(format, "html"), chrome = !strcmp(format, "chrome");
	if (strcmp(format, "text") && strcmp(format, "json") && !html && !chrome) {
		tlm_text_line(stderr, "tlm report: the job report (several inputs) is text, json, html or chrome, not '%s'\n",
			format);
		return TLM_EXIT_USAGE;
	}
	if (single_opts) {
		fprintf(stderr, "tlm report: --summary, --metric and --full-stacks are for one trace\n");
		return TLM_EXIT_USAGE;
	}
	char err[512];
	/* the merged timeline (html, chrome) keeps each trace's memory over time */
	struct tlm_job *j = tlm_job_load_ex(inputs, n, threads, html || chrome, err, sizeof err);
	if (!j) {
		tlm_text_line(stderr, "tlm report: %s\n", err);
		return TLM_EXIT_DAMAGED;
	}
	if (tlm_job_compare(j)) {
		fprintf(stderr, "tlm report: out of memory\n");
		tlm_job_free(j);
		return TLM_EXIT_DAMAGED;
	}
	FILE *f = stdout;
	if (out && strcmp(out, "-") && !(f = fopen(out, "w"))) {
		tlm_text_line(stderr, "tlm report: %s: %s\n", out, strerror(errno));
		tlm_job_free(j);
		return TLM_EXIT_DAMAGED;
	}
	int rc = html ? tlm_job_html(j, f) : chrome ? tlm_job_chrome(j, f)
		 : !strcmp(format, "json") ? tlm_job_json(j, f) : tlm_job_text(j, f);
	if (f != stdout ? fclose(f) : fflush(f))
		rc = -1;
	if (rc)
		tlm_text_line(stderr, "tlm report: %s: write error\n", out && strcmp(out, "-") ? out : "stdout");
	size_t damaged = 0;
	for (size_t i = 0; i < j->nprocs; i++)
		damaged += !j->procs[i].error && j->procs[i].integrity_errors;
	if (j->nunreadable || damaged)
		tlm_text_line(stderr, "tlm report: %zu input%s unreadable, %zu with integrity errors\n", j->nunreadable,
			j->nunreadable == 1 ? "" : "s", damaged);
	int code = j->nunreadable || damaged || rc ? TLM_EXIT_DAMAGED : TLM_EXIT_OK;
	tlm_job_free(j);
	return code;
}

void tlm__run_job_report(char **paths, size_t n)
{
	char err[512];
	struct tlm_job *j = tlm_job_load(paths, n, 0, err, sizeof err);
	if (!j || tlm_job_compare(j)) {
		tlm_text_line(stderr, "tlm run: job report: %s\n", j ? "out of memory" : err);
		tlm_job_free(j);
		return;
	}
	fputc('\n', stderr);
	(void)tlm_job_text(j, stderr);
	tlm_job_free(j);
}
