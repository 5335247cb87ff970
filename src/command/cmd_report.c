/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `tlm report [--format text|json|html|chrome|collapsed]
 * [--metric live|peak|peak-allocated] [--summary] [-o FILE] TRACE`: streams a trace through
 * src/analysis and src/render and prints the full report (text or JSON), the short summary,
 * or an export (src/render/export.h). docs/report.md is the user guide,
 * docs/exports.md describes the exports.
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
#include <unistd.h>

#include "common/text.h"
#include "cmds.h"
#include "render/export.h"
#include "analysis/report.h"

/* cmd_report_job.c: the job report (several inputs, a directory, a glob, a
 * JSON report) */
bool tlm__report_is_job_input(const char *arg, int *fd);
int tlm__report_job(char **inputs, size_t n, const char *format, const char *out, unsigned threads, bool single_opts);

#define USAGE                                                                     \
	"usage: tlm report [--format text|json|html|chrome|collapsed|torch-snapshot]\n" \
	"                  [--metric live|peak|peak-allocated] [--summary]\n"       \
	"                  [--full-stacks] [-o FILE] TRACE\n"                        \
	"       tlm report [--format text|json|html|chrome] [--job] [--threads N]\n" \
	"                  [-o FILE] TRACE|REPORT.json|DIR|GLOB...\n"

static const char help[] =
	USAGE
	"\n"
	"The memory report of a trace: peaks, what held them, live at end, leaks, OOMs, churn.\n"
	"\n"
	"options:\n"
	"  -f, --format FORMAT   text (default, <= 100 columns), json (schema tlm-report/1),\n"
	"                        html (one self-contained page), chrome (trace-event JSON\n"
	"                        for Perfetto), collapsed (folded stacks for flame graphs),\n"
	"                        torch-snapshot (PyTorch's memory snapshot pickle, for\n"
	"                        memory_viz)\n"
	"  --metric live|peak|peak-allocated\n"
	"                        collapsed only: bytes live at the end (default), at the reserved\n"
	"                        peak (segments), or what held the allocated peak (AT PEAK)\n"
	"  --summary             the short end-of-run report (<= 25 lines; text only)\n"
	"  --full-stacks         under Python frames, also the native ones, from the call up\n"
	"                        to the interpreter (folded by default)\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  --job                 the job report even for one input (docs/job.md); implied by\n"
	"                        several inputs, a directory, a glob or a JSON report\n"
	"  --threads N           job report: read N inputs at once (default: the online CPUs)\n"
	"  -h, --help            show this help\n"
	"\n"
	"exit: 0 ok, 2 the trace cannot be read or is damaged, 64 bad usage\n";

static const char *const formats[] = {"text", "json", "html", "chrome", "collapsed", "torch-snapshot"};

static int usage_error(const char *fmt, const char *arg)
{
	return tlm__usage_error("report", USAGE, fmt, arg);
}

static int usage_close(int fd, const char *fmt, const char *arg)
{
	if (fd >= 0)
		close(fd);
	return usage_error(fmt, arg);
}

enum { O_FORMAT, O_METRIC, O_OUTPUT, O_SUMMARY, O_JOB, O_THREADS, O_FULL_STACKS, O_HELP };

static const struct tlm__opt options[] = {
	{O_FORMAT, "--format", "-f", TLM__OPT_VALUE | TLM__OPT_EQ,
	 "%s needs a value (text, json, html, chrome, collapsed or torch-snapshot)"},
	{O_METRIC, "--metric", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a value (live or peak)"},
	{O_OUTPUT, "--output", "-o", TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a file name"},
	{O_SUMMARY, "--summary", NULL, 0, NULL},
	{O_JOB, "--job", NULL, 0, NULL},
	{O_THREADS, "--threads", NULL, TLM__OPT_VALUE, "%s needs a number of threads, 1 to 256"},
	{O_FULL_STACKS, "--full-stacks", NULL, 0, NULL},
	{O_HELP, "--help", "-h", 0, NULL},
};

int tlm_cmd_report(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = "text", *metric = NULL;
	bool summary = false, full_stacks = false, job = false;
	unsigned threads = 0;
	size_t ninputs = 0; /* the positional arguments, moved to argv's front */
	struct tlm__args args;
	tlm__args_init(&args, "report", USAGE, options, sizeof options / sizeof *options, true, argc, argv);
	for (int id; (id = tlm__args_next(&args)) != TLM__ARG_END;) {
		switch (id) {
		case TLM__ARG_ERROR:
			return TLM_EXIT_USAGE;
		case O_FORMAT:
			format = args.value;
			break;
		case O_METRIC:
			metric = args.value;
			break;
		case O_OUTPUT:
			out = args.value;
			break;
		case O_SUMMARY:
			summary = true;
			break;
		case O_JOB:
			job = true;
			break;
		case O_THREADS:
			if (tlm__parse_threads(args.value, &threads))
				return usage_error("%s needs a number of threads, 1 to 256", args.name);
			break;
		case O_FULL_STACKS:
			full_stacks = true;
			break;
		case O_HELP:
			fputs(help, stdout);
			return TLM_EXIT_OK;
		default: /* TLM__ARG_POSITIONAL */
			argv[ninputs++] = args.value; /* i >= ninputs + 1: never overwrites what is still to parse */
			path = path ? path : args.value;
		}
	}
	int fd = -1; /* the trace, opened once: sniffed here, then read by the report */
	if (ninputs > 1 || job || (path && tlm__report_is_job_input(path, &fd))) {
		return tlm__report_job(argv, ninputs, format, out, threads, summary || metric || full_stacks);
	}
	bool known = false;
	for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
		known |= !strcmp(format, formats[i]);
	if (!known)
		return usage_close(fd, "unknown format '%s' (text, json, html, chrome, collapsed or torch-snapshot)", format);
	if (!path)
		return usage_close(fd, "%s", "missing TRACE");
	if (summary && strcmp(format, "text"))
		return usage_close(fd, "%s", "--summary is text only");
	if (metric && strcmp(format, "collapsed"))
		return usage_close(fd, "%s", "--metric is for --format collapsed");
	if (metric && strcmp(metric, "live") && strcmp(metric, "peak") && strcmp(metric, "peak-allocated"))
		return usage_close(fd, "unknown metric '%s' (live, peak or peak-allocated)", metric);
	if (!strcmp(format, "torch-snapshot") && (!out || !strcmp(out, "-")) && isatty(STDOUT_FILENO))
		return usage_close(fd, "%s", "torch-snapshot is a binary pickle: give -o FILE (or redirect stdout)");

	int m = !metric || !strcmp(metric, "live") ? TLM_COLLAPSED_LIVE
		: !strcmp(metric, "peak")	  ? TLM_COLLAPSED_PEAK
						  : TLM_COLLAPSED_PEAK_ALLOCATED;
	char err[256];
	struct tlm_report *r = tlm_report_build_fd(fd, path, tlm_report_needs(format, m), err, sizeof err);
	if (!r) {
		tlm_text_line(stderr, "tlm: %s: %s\n", path, err);
		return TLM_EXIT_DAMAGED;
	}
	tlm_report_set_full_stacks(r, full_stacks);
	FILE *f = stdout;
	if (out && strcmp(out, "-") && !(f = fopen(out, "w"))) {
		tlm_text_line(stderr, "tlm report: %s: %s\n", out, strerror(errno));
		tlm_report_free(r);
		return TLM_EXIT_DAMAGED;
	}
	int rc;
	char why[256] = "write error";
	if (summary)
		rc = tlm_report_summary(r, f);
	else if (!strcmp(format, "json"))
		rc = tlm_report_json(r, f);
	else if (!strcmp(format, "html"))
		rc = tlm_report_html(r, f, why, sizeof why);
	else if (!strcmp(format, "chrome"))
		rc = tlm_report_chrome(r, f);
	else if (!strcmp(format, "torch-snapshot"))
		rc = tlm_report_torch_snapshot(r, f, why, sizeof why);
	else if (!strcmp(format, "collapsed"))
		rc = tlm_report_collapsed(r, f, m, why, sizeof why);
	else
		rc = tlm_report_text(r, f);
	if (!rc && !strcmp(format, "torch-snapshot") && why[0]) /* what its bounded window left out */
		tlm_text_line(stderr, "tlm report: %s: %s\n", path, why);
	if (f != stdout ? fclose(f) : fflush(f))
		rc = -1;
	if (rc)
		tlm_text_line(stderr, "tlm report: %s: %s\n", out && strcmp(out, "-") ? out : "stdout", why);
	/* JSON and files carry the state in their content; on a terminal the
	 * text already has its note. */
	if (r->nerrors)
		tlm_text_line(stderr, "tlm report: %s: %zu integrity error%s (tlm info %s lists them)\n", path, r->nerrors,
			r->nerrors == 1 ? "" : "s", path);
	int code = r->nerrors || rc ? TLM_EXIT_DAMAGED : TLM_EXIT_OK;
	tlm_report_free(r);
	return code;
}
