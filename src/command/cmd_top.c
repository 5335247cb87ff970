/* SPDX-License-Identifier: MIT */
/*
 * cmd_top.c - `tlm top [--once | --interval S] [--sort KEY] TRACE|DIR`: GPU
 * memory of running programs, from their traces as they are written
 * (src/live, docs/top.md). On a terminal, the screen (ncurses) until the
 * programs end or the user quits, then the last view as text; otherwise, or
 * with --interval, the view as text every interval; --once prints it once.
 *
 * Exit codes: 0 ok; 2 a trace cannot be read (or --once on a path that is
 * not there); 64 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/text.h"
#include "cmds.h"
#include "live/live.h"

#define USAGE "usage: tlm top [--once | --interval SECONDS] [--delay SECONDS] [--sort KEY] TRACE|DIR\n"

static const char help[] =
	USAGE
	"\n"
	"GPU memory of a running program, read from its trace while it is written: per\n"
	"device reserved and allocated now and at peak, the last minutes, the top live\n"
	"sites with their growth per step, steps per second, the forecast, the OOMs. A\n"
	"directory: every trace in it (a job: one row per rank). It only reads the files,\n"
	"and ends when the programs do.\n"
	"\n"
	"options:\n"
	"  --once               print the view once, as text, and exit\n"
	"  --interval SECONDS   print the view as text every SECONDS (for logs) until the\n"
	"                       programs end (the default when stdout is not a terminal: 2)\n"
	"  --delay SECONDS      the screen's refresh (default 1)\n"
	"  --sort KEY           the sites' order: bytes (default), growth, count, newest\n"
	"  -h, --help           show this help\n"
	"\n"
	"keys: q quit, space pause, s or F6 the sort column, arrows move, h help\n"
	"exit: 0 ok, 2 a trace cannot be read, 64 bad usage\n";

static int usage_error(const char *what, const char *arg)
{
	tlm_text_line(stderr, "tlm top: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
	fputs(USAGE, stderr);
	return TLM_EXIT_USAGE;
}

static int seconds(const char *s, double *out)
{
	char *end;
	if (!s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 86400))
		return -1;
	*out = v;
	return 0;
}

static int exit_code(struct tlm_live_job *j)
{
	for (size_t i = 0; i < tlm_live_job_count(j); i++)
		if (tlm_live_state(tlm_live_job_get(j, i)) == TLM_LIVE_FAILED)
			return TLM_EXIT_DAMAGED;
	return TLM_EXIT_OK;
}

int tlm_cmd_top(int argc, char **argv)
{
	const char *path = NULL;
	bool once = false, text = false;
	double interval = 2, delay = 1;
	int sort = TLM_LIVE_BY_BYTES;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(help, stdout);
			return TLM_EXIT_OK;
		} else if (!strcmp(a, "--once")) {
			once = true;
		} else if (!strcmp(a, "--interval") || !strcmp(a, "--delay")) {
			if (seconds(i + 1 < argc ? argv[i + 1] : NULL, a[2] == 'i' ? &interval : &delay))
				return usage_error(a[2] == 'i' ? "--interval needs seconds (0.1 .. 86400), not"
							       : "--delay needs seconds (0.1 .. 86400), not",
						   i + 1 < argc ? argv[i + 1] : "nothing");
			text |= a[2] == 'i';
			i++;
		} else if (!strcmp(a, "--sort")) {
			const char *k = i + 1 < argc ? argv[++i] : "";
			for (sort = 0; sort < TLM_LIVE_NSORT && strcmp(k, tlm_live_sort_names[sort]); sort++)
				;
			if (sort == TLM_LIVE_NSORT)
				return usage_error("--sort takes bytes, growth, count or newest, not", k);
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option", a);
		} else if (path) {
			return usage_error("one trace or directory, not two:", a);
		} else {
			path = a;
		}
	}
	if (!path)
		return usage_error("missing TRACE or DIR", NULL);
	if (once && text)
		return usage_error("--once or --interval, not both", NULL);
	struct stat st;
	bool dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
	if (once && !dir && stat(path, &st) != 0) {
		tlm_text_line(stderr, "tlm top: %s: %s\n", path, strerror(errno));
		return TLM_EXIT_DAMAGED;
	}
	struct tlm_live_job *j = tlm_live_job_open(dir ? TLM_LIVE_DIR : TLM_LIVE_FILE, path);
	if (!j) {
		fprintf(stderr, "tlm top: out of memory\n");
		return 1;
	}
	struct tlm_live_ui ui = {.interval_s = delay, .sort = (enum tlm_live_sort)sort};
	int rc = 0;
	if (once) {
		while (tlm_live_job_poll(j, 1u << 20))
			;
		tlm_live_job_settle(j); /* a trace whose process is gone is read to its end now */
		rc = tlm_live_text(stdout, j, ui.sort);
	} else {
		int t = text ? -1 : tlm_live_tui(j, &ui);
		if (t < 0) { /* text asked for, or no terminal */
			ui.interval_s = interval;
			rc = tlm_live_text_loop(stdout, j, &ui);
		} else if (t == 0) { /* the programs ended: their last view stays on the terminal */
			rc = tlm_live_text(stdout, j, ui.sort);
		}
	}
	int code = rc ? 1 : exit_code(j);
	tlm_live_job_close(j);
	return code;
}
