/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `tlm report [--format text|json] [--summary] [-o FILE] TRACE`:
 * streams a trace through src/report and prints the full report (text or
 * JSON) or the short summary. docs/report.md is the user guide.
 *
 * Exit codes: 0 ok, including truncated or signal-ended traces (they get a
 * one-line note); 2 when the trace cannot be opened or has integrity errors
 * (everything readable is still reported, plus one line with the error
 * count on stderr); 64 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "report/report.h"

#define USAGE "usage: tlm report [--format text|json] [--summary] [-o FILE] TRACE\n"

static int usage_error(const char *fmt, const char *arg)
{
	fputs("tlm report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	fputs(USAGE, stderr);
	return TLM_EXIT_USAGE;
}

int tlm_cmd_report(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = "text";
	bool summary = false, dashdash = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && (!strcmp(a, "--format") || !strcmp(a, "-f"))) {
			if (++i >= argc)
				return usage_error("%s needs a value (text or json)", a);
			format = argv[i];
		} else if (!dashdash && !strncmp(a, "--format=", 9)) {
			format = a + 9;
		} else if (!dashdash && !strcmp(a, "-o")) {
			if (++i >= argc)
				return usage_error("%s needs a file name", a);
			out = argv[i];
		} else if (!dashdash && !strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!dashdash && !strcmp(a, "--summary")) {
			summary = true;
		} else if (!dashdash && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			fputs(USAGE, stdout);
			return TLM_EXIT_OK;
		} else if (!dashdash && a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (!path) {
			path = a;
		} else {
			return usage_error("too many arguments ('%s')", a);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json"))
		return usage_error("unknown format '%s' (text or json)", format);
	if (!path)
		return usage_error("%s", "missing TRACE");
	if (summary && !strcmp(format, "json"))
		return usage_error("%s", "--summary is text only");

	char err[256];
	struct tlm_report *r = tlm_report_build(path, err, sizeof err);
	if (!r) {
		fprintf(stderr, "tlm: %s: %s\n", path, err);
		return TLM_EXIT_DAMAGED;
	}
	FILE *f = stdout;
	if (out && strcmp(out, "-") && !(f = fopen(out, "w"))) {
		fprintf(stderr, "tlm report: %s: %s\n", out, strerror(errno));
		tlm_report_free(r);
		return TLM_EXIT_DAMAGED;
	}
	int rc;
	if (summary)
		rc = tlm_report_summary(r, f);
	else if (!strcmp(format, "json"))
		rc = tlm_report_json(r, f);
	else
		rc = tlm_report_text(r, f);
	if (f != stdout ? fclose(f) : fflush(f))
		rc = -1;
	if (rc)
		fprintf(stderr, "tlm report: %s: write error\n", out && strcmp(out, "-") ? out : "stdout");
	/* JSON and files carry the state in their content; on a terminal the
	 * text already has its note. */
	if (r->nerrors)
		fprintf(stderr, "tlm report: %s: %zu integrity error%s (tlm info %s lists them)\n", path, r->nerrors,
			r->nerrors == 1 ? "" : "s", path);
	int code = r->nerrors || rc ? TLM_EXIT_DAMAGED : TLM_EXIT_OK;
	tlm_report_free(r);
	return code;
}
