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


/* "--NAME BYTES" or "--NAME=BYTES" at argv[*i]: true if it is that option;
 * *i becomes -1 after a usage error (already printed). */
static bool gate_option(const char *name, int argc, char **argv, int *i, bool *on, uint64_t *bytes)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) || (a[n] && a[n] != '='))
		return false;
	const char *v = a[n] == '=' ? a + n + 1 : (++*i < argc ? argv[*i] : NULL);
	if (!v) {
		usage_error("%s needs a number of bytes", name);
		*i = -1;
	} else if (tlm__parse_bytes(v, bytes)) {
		tlm_text_line(stderr, "tlm diff: %s: bad size '%s' (bytes, or with K, M, G)\n", name, v);
		fputs(USAGE, stderr);
		*i = -1;
	} else {
		*on = true;
	}
	return true;
}

/* "--base IN", "--old IN", "--new IN" (or with '='): appends IN to its
 * side; 1 when it was one, 0 when not, -1 after a usage error (printed). */
static int side_option(int argc, char **argv, int *i, char **side[2], size_t nside[2])
{
	static const char *const names[] = {"--base", "--old", "--new"};
	const char *a = argv[*i];
	for (int k = 0; k < 3; k++) {
		size_t n = strlen(names[k]);
		if (strncmp(a, names[k], n) || (a[n] && a[n] != '='))
			continue;
		char *v = a[n] == '=' ? argv[*i] + n + 1 : (++*i < argc ? argv[*i] : NULL);
		if (!v || !*v) {
			usage_error("%s needs an input", names[k]);
			return -1;
		}
		side[k / 2][nside[k / 2]++] = v;
		return 1;
	}
	return 0;
}

int tlm_cmd_diff(int argc, char **argv)
{
	const char *paths[2] = {NULL, NULL}, *out = NULL, *format = "text";
	bool gate = false, peak_gate = false, dashdash = false;
	uint64_t gate_bytes = 0, peak_gate_bytes = 0;
	int npaths = 0;
	unsigned threads = 0;
	char *base_in[argc > 0 ? argc : 1], *new_in[argc > 0 ? argc : 1];
	char **side_in[2] = {base_in, new_in};
	size_t nside[2] = {0, 0};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int so = dashdash ? 0 : side_option(argc, argv, &i, side_in, nside);
		if (so < 0) {
			return TLM_EXIT_USAGE;
		} else if (so) {
			continue;
		} else if (!dashdash && !strcmp(a, "--threads")) {
			if (tlm__parse_threads(++i < argc ? argv[i] : NULL, &threads))
				return usage_error("%s needs a number of threads, 1 to 256", a);
		} else if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
		} else if (!dashdash && (!strcmp(a, "--format") || !strcmp(a, "-f"))) {
			if (++i >= argc)
				return usage_error("%s needs a value (text or json)", a);
			format = argv[i];
		} else if (!dashdash && !strncmp(a, "--format=", 9)) {
			format = a + 9;
		} else if (!dashdash && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			if (++i >= argc)
				return usage_error("%s needs a file name", a);
			out = argv[i];
		} else if (!dashdash && !strncmp(a, "--output=", 9)) {
			out = a + 9;
		} else if (!dashdash && (gate_option("--fail-on-growth", argc, argv, &i, &gate, &gate_bytes) ||
					 gate_option("--fail-on-peak-growth", argc, argv, &i, &peak_gate,
						     &peak_gate_bytes))) {
			if (i < 0)
				return TLM_EXIT_USAGE;
		} else if (!dashdash && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			fputs(help, stdout);
			return TLM_EXIT_OK;
		} else if (!dashdash && a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (npaths < 2) {
			paths[npaths++] = a;
		} else {
			return usage_error("too many arguments ('%s')", a);
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
