/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff.c - `tlm diff [--format text|json] [--fail-on-growth BYTES]
 * [--fail-on-peak-growth BYTES] [-o FILE] BASE NEW`: what changed between
 * two runs (src/diff/diff.h). docs/diff.md is the user guide. When a side is
 * a job (a directory, a glob, a tlm-job/1 file, or several inputs given with
 * --base/--new), both are compared as jobs (cmd_diff_job.c).
 *
 * Exit codes: 0 the diff was written (and the gates, if any, passed); 1 a
 * gate failed: leaked bytes, or a device's peak allocated bytes, grew by
 * more than its BYTES (the sites that grew are named on stderr); 2 an
 * input cannot be read, is not a trace or a report,
 * or has integrity errors (the diff is still written when both could be
 * read); 64 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "cmds.h"
#include "diff/diff.h"
#include "diff_job_args.h"

#define USAGE                                                                                  \
	"usage: tlm diff [--format text|json] [--fail-on-growth BYTES] [--fail-on-peak-growth BYTES]\n" \
	"                [-o FILE] BASE NEW\n" \
	"       tlm diff [options] [--threads N] --base IN [--base IN ...] --new IN [--new IN ...]\n"

static const char help[] =
	USAGE
	"\n"
	"Compares two runs, site by site. BASE and NEW are traces or `tlm report\n"
	"--format json` files. Sites are matched by their symbolized frames\n"
	"(function, file, line), never by addresses.\n"
	"\n"
	"Jobs: when BASE or NEW is a directory, a glob, a tlm-job/1 file, or several\n"
	"inputs (each with --base IN / --new IN; IN as for `tlm report`), the two\n"
	"jobs are compared process by process (ranks by rank, workers and children\n"
	"by order of start) and across ranks; the gates apply to each process and\n"
	"to the job.\n"
	"\n"
	"options:\n"
	"  -f, --format text|json     output format (default text)\n"
	"  --fail-on-growth BYTES     exit 1 when leaked bytes grew by more than BYTES\n"
	"                             (suffixes K, M, G: KiB, MiB, GiB)\n"
	"  --fail-on-peak-growth BYTES\n"
	"                             exit 1 when a device's peak allocated bytes grew\n"
	"                             by more than BYTES\n"
	"  --base IN, --old IN        an input of BASE (repeat for several)\n"
	"  --new IN                   an input of NEW (repeat for several)\n"
	"  --threads N                jobs: read N inputs at once (default: the online CPUs)\n"
	"  -o, --output FILE          write to FILE instead of stdout\n"
	"  -h, --help                 show this help\n"
	"\n"
	"exit: 0 ok, 1 the gate failed, 2 an input is unreadable or damaged, 64 bad usage\n";

static int usage_error(const char *fmt, const char *arg)
{
	return tlm__usage_error("diff", USAGE, fmt, arg);
}

enum { O_BASE, O_NEW, O_THREADS, O_FORMAT, O_OUTPUT, O_GROWTH, O_PEAK_GROWTH, O_HELP };

static const struct tlm__opt options[] = {
	{O_BASE, "--base", "--old", TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs an input"},
	{O_NEW, "--new", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs an input"},
	{O_THREADS, "--threads", NULL, TLM__OPT_VALUE, "%s needs a number of threads, 1 to 256"},
	{O_FORMAT, "--format", "-f", TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a value (text or json)"},
	{O_OUTPUT, "--output", "-o", TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a file name"},
	{O_GROWTH, "--fail-on-growth", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a number of bytes"},
	{O_PEAK_GROWTH, "--fail-on-peak-growth", NULL, TLM__OPT_VALUE | TLM__OPT_EQ, "%s needs a number of bytes"},
	{O_HELP, "--help", "-h", 0, NULL},
};

int tlm_cmd_diff(int argc, char **argv)
{
	const char *paths[2] = {NULL, NULL}, *out = NULL, *format = "text";
	bool gate = false, peak_gate = false;
	uint64_t gate_bytes = 0, peak_gate_bytes = 0;
	int npaths = 0;
	unsigned threads = 0;
	char *base_in[argc > 0 ? argc : 1], *new_in[argc > 0 ? argc : 1];
	char **side_in[2] = {base_in, new_in};
	size_t nside[2] = {0, 0};
	struct tlm__args args;
	tlm__args_init(&args, "diff", USAGE, options, sizeof options / sizeof *options, true, argc, argv);
	for (int id; (id = tlm__args_next(&args)) != TLM__ARG_END;) {
		char *v = args.value;
		switch (id) {
		case TLM__ARG_ERROR:
			return TLM_EXIT_USAGE;
		case O_BASE:
		case O_NEW:
			if (!*v)
				return usage_error("%s needs an input", args.name);
			side_in[id == O_NEW][nside[id == O_NEW]++] = v;
			break;
		case O_THREADS:
			if (tlm__parse_threads(v, &threads))
				return usage_error("%s needs a number of threads, 1 to 256", args.name);
			break;
		case O_FORMAT:
			format = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_GROWTH:
		case O_PEAK_GROWTH:
			if (tlm__parse_bytes(v, id == O_GROWTH ? &gate_bytes : &peak_gate_bytes)) {
				tlm_text_line(stderr, "tlm diff: %s: bad size '%s' (bytes, or with K, M, G)\n", args.name, v);
				fputs(USAGE, stderr);
				return TLM_EXIT_USAGE;
			}
			*(id == O_GROWTH ? &gate : &peak_gate) = true;
			break;
		case O_HELP:
			fputs(help, stdout);
			return TLM_EXIT_OK;
		default: /* TLM__ARG_POSITIONAL */
			if (npaths == 2)
				return usage_error("too many arguments ('%s')", v);
			paths[npaths++] = v;
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json"))
		return usage_error("unknown format '%s' (text or json)", format);
	if ((nside[0] || nside[1]) && npaths)
		return usage_error("%s", "give BASE and NEW either as two arguments or with --base and --new");
	for (int k = 0; k < npaths; k++)
		side_in[k][nside[k]++] = (char *)paths[k];
	if (!nside[0] || !nside[1])
		return usage_error("%s", nside[0] ? "missing NEW" : nside[1] ? "missing BASE" : "missing BASE and NEW");
	if (nside[0] > 1 || nside[1] > 1 || tlm__diff_is_job(side_in[0][0]) || tlm__diff_is_job(side_in[1][0])) {
		struct tlm__diff_job_args ja = {{side_in[0], side_in[1]}, {nside[0], nside[1]}, format, out,
						gate, gate_bytes, peak_gate, peak_gate_bytes, threads};
		return tlm__diff_job(&ja);
	}
	paths[0] = side_in[0][0];
	paths[1] = side_in[1][0];

	struct tlm_diff_side side[2];
	char err[256];
	for (int i = 0; i < 2; i++) {
		if (tlm_diff_load(paths[i], &side[i], err, sizeof err)) {
			tlm_text_line(stderr, "tlm diff: %s: %s\n", paths[i], err);
			if (i)
				tlm_diff_side_free(&side[0]);
			return TLM_EXIT_DAMAGED;
		}
	}
	struct tlm_diff d;
	if (tlm_diff_compute(&side[0], &side[1], gate, gate_bytes, &d)) {
		fprintf(stderr, "tlm diff: out of memory\n");
		tlm_diff_side_free(&side[0]);
		tlm_diff_side_free(&side[1]);
		return TLM_EXIT_DAMAGED;
	}
	if (peak_gate)
		tlm_diff_peak_gate(&d, peak_gate_bytes);
	int code = TLM_EXIT_OK;
	FILE *f = stdout;
	if (out && strcmp(out, "-") && !(f = fopen(out, "w"))) {
		tlm_text_line(stderr, "tlm diff: %s: %s\n", out, strerror(errno));
		code = TLM_EXIT_DAMAGED;
	} else {
		int rc = !strcmp(format, "json") ? tlm_diff_json(&d, f) : tlm_diff_text(&d, f);
		if (f != stdout ? fclose(f) : fflush(f))
			rc = -1;
		if (rc) {
			tlm_text_line(stderr, "tlm diff: %s: write error\n", out && strcmp(out, "-") ? out : "stdout");
			code = TLM_EXIT_DAMAGED;
		}
	}
	for (int i = 0; i < 2; i++)
		if (side[i].integrity_errors) {
			tlm_text_line(stderr, "tlm diff: %s: %llu integrity error%s (tlm info lists them)\n", paths[i],
				(unsigned long long)side[i].integrity_errors, side[i].integrity_errors == 1 ? "" : "s");
			code = TLM_EXIT_DAMAGED;
		}
	/* the gate is the verdict CI asks for: it wins over damage */
	if (d.failed || d.peak_failed) {
		tlm_diff_gate_message(&d, stderr);
		code = TLM_EXIT_GATE;
	}
	tlm_diff_free(&d);
	tlm_diff_side_free(&side[0]);
	tlm_diff_side_free(&side[1]);
	return code;
}
