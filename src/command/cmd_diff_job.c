/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff_job.c - `tlm diff` when a side is a job (docs/diff.md, "Jobs"):
 * both sides loaded by src/job (in parallel), matched and gated by
 * src/job/job_diff.h. Exit codes as for two traces: 0 written and the
 * gates passed, 1 a gate failed, 2 an input is unreadable, not a trace or
 * report, given twice, or damaged (integrity errors: the diff is still
 * written), 64 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/text.h"
#include "cmds.h"
#include "common/input.h"
#include "encoders/json_in.h"
#include "diff_job_args.h"
#include "job/job_diff.h"

bool tlm__diff_is_job(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return strpbrk(path, "*?[") != NULL;
	if (S_ISDIR(st.st_mode))
		return true;
	FILE *f = tlm_input_fopen(path, 0, NULL, 0); /* a FIFO: not waited on (the load says why) */
	int c = ' ';
	while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\n' || c == '\t' || c == '\r'))
		;
	if (f)
		fclose(f);
	if (c != '{')
		return false;
	char err[128];
	size_t len;
	char *buf = tlm_json_read_file(path, (size_t)1 << 30, &len, err, sizeof err);
	struct tlm_jv *v = buf ? tlm_json_parse(buf, len, err, sizeof err) : NULL;
	free(buf);
	const char *schema = tlm_jv_str(tlm_jv_get(v, "schema"));
	bool job = schema && !strcmp(schema, TLM_JOB_SCHEMA);
	tlm_json_free(v);
	return job;
}

/* "a b c" for the header, at most ~400 bytes */
static void joined(char *buf, size_t n, char **in, size_t k)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < k && o + 1 < n; i++) {
		int w = snprintf(buf + o, n - o, "%s%s", i ? " " : "", in[i]);
		if (w < 0 || (size_t)w >= n - o) {
			snprintf(buf + (n > 4 ? n - 4 : 0), n > 4 ? 4 : n, "...");
			break;
		}
		o += (size_t)w;
	}
}

static size_t damaged(const struct tlm_job *j)
{
	size_t n = 0;
	for (size_t i = 0; i < j->nprocs; i++)
		n += j->procs[i].integrity_errors != 0;
	return n;
}

int tlm__diff_job(const struct tlm__diff_job_args *a)
{
	if (strcmp(a->format, "text") && strcmp(a->format, "json")) {
		tlm_text_line(stderr, "tlm diff: unknown format '%s' (text or json)\n", a->format);
		return TLM_EXIT_USAGE;
	}
	static const char *const side[2] = {"BASE", "NEW"};
	struct tlm_job *j[2] = {NULL, NULL};
	char err[768];
	for (int s = 0; s < 2; s++) {
		j[s] = tlm_job_load(a->in[s], a->n[s], a->threads, err, sizeof err);
		/* a bad side fails before the other is read */
		const char *why = !j[s]			      ? err
				  : tlm_job_compare(j[s])		      ? "out of memory"
				  : tlm_jdiff_check_side(j[s], err, sizeof err) ? err
									      : NULL;
		if (why) {
			tlm_text_line(stderr, "tlm diff: %s: %s\n", side[s], why);
			tlm_job_free(j[0]);
			tlm_job_free(j[1]);
			return TLM_EXIT_DAMAGED;
		}
	}
	struct tlm_jdiff d;
	const char *which;
	if (tlm_jdiff_build(j[0], j[1], &d, &which, err, sizeof err)) {
		tlm_text_line(stderr, "tlm diff: %s%s%s\n", which ? which : "", which ? ": " : "", err);
		tlm_jdiff_free(&d);
		return TLM_EXIT_DAMAGED;
	}
	if (tlm_jdiff_gates(&d, a->gate, a->gate_bytes, a->peak_gate, a->peak_gate_bytes, a->threads)) {
		fprintf(stderr, "tlm diff: out of memory\n");
		tlm_jdiff_free(&d);
		return TLM_EXIT_DAMAGED;
	}
	char names[2][512];
	joined(names[0], sizeof names[0], a->in[0], a->n[0]);
	joined(names[1], sizeof names[1], a->in[1], a->n[1]);
	int code = TLM_EXIT_OK;
	FILE *f = stdout;
	if (a->out && strcmp(a->out, "-") && !(f = fopen(a->out, "w"))) {
		tlm_text_line(stderr, "tlm diff: %s: %s\n", a->out, strerror(errno));
		code = TLM_EXIT_DAMAGED;
	} else {
		int rc = !strcmp(a->format, "json") ? tlm_jdiff_json(&d, names[0], names[1], f)
						    : tlm_jdiff_text(&d, names[0], names[1], f);
		if (f != stdout ? fclose(f) : fflush(f))
			rc = -1;
		if (rc) {
			tlm_text_line(stderr, "tlm diff: %s: write error\n", a->out && strcmp(a->out, "-") ? a->out : "stdout");
			code = TLM_EXIT_DAMAGED;
		}
	}
	for (int s = 0; s < 2; s++) {
		size_t n = damaged(s ? d.new_ : d.base);
		if (n) {
			tlm_text_line(stderr, "tlm diff: %s: %zu process%s with integrity errors (tlm info lists them)\n", side[s], n,
				n == 1 ? "" : "es");
			code = TLM_EXIT_DAMAGED;
		}
	}
	for (size_t i = 0; i < d.nprocs; i++)
		if (d.procs[i].error) {
			tlm_text_line(stderr, "tlm diff: %s: not compared: %s\n", d.procs[i].name, d.procs[i].error);
			code = TLM_EXIT_DAMAGED;
		}
	if (d.failed) { /* the gate is the verdict CI asks for: it wins over damage */
		tlm_jdiff_gate_message(&d, stderr);
		code = TLM_EXIT_GATE;
	}
	tlm_jdiff_free(&d);
	return code;
}
