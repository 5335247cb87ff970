/* SPDX-License-Identifier: MIT */
/*
 * test_e2e.c - the report of a real recording: report_workload runs under
 * LD_PRELOAD=libtlm.so on the simulated driver (one 256 MiB device), then the
 * report of its trace is checked against what the workload did, with the real
 * symbolizer: the leak is record_loss at RW_LOSS_LINE, load_model is live at
 * end but no leak, the activation is churn, the final allocation is an OOM by
 * exhaustion with the device free memory the workload saw. The `tlm report`
 * command is run on the same trace (json, text, summary).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "../shim/e2e.h"
#include "analysis/report.h"
#include "report_workload.h"

static struct run run;
static char trace_path[512];

static int setup(void **state)
{
	(void)state;
	static const char *const env[] = {"TLM_SIM_MEMORY=256M", "TLM_SIM_DEVICES=1", NULL};
	static const char *const args[] = {NULL};
	if (e2e_run(&run, args, env))
		return -1;
	if (!WIFEXITED(run.status) || WEXITSTATUS(run.status)) {
		fprintf(stderr, "workload failed (status %d): %s\n", run.status, run.stderr_text);
		return -1;
	}
	char paths[4][512];
	if (e2e_traces(&run, paths, 4) != 1) {
		fprintf(stderr, "expected one trace in %s\n", run.dir);
		return -1;
	}
	memcpy(trace_path, paths[0], sizeof trace_path);
	return 0;
}

static uint64_t note(const char *key)
{
	const char *v = e2e_note(&run, key);
	if (!v) {
		fprintf(stderr, "no truth note %s\n", key);
		fail();
	}
	return strtoull(v, NULL, 10);
}

static const struct tlm_frame *top(struct tlm_report *r, uint32_t stack)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(r, stack, &f);
	assert_true(n > 0);
	return &f[0];
}

static int is_workload_frame(const struct tlm_frame *f, const char *fn)
{
	return f->function && !strcmp(f->function, fn) && f->file &&
	       !strcmp(strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file, "report_workload.c");
}

static void test_report(void **state)
{
	(void)state;
	char err[256];
	struct tlm_report *r = tlm_report_build(trace_path, err, sizeof err);
	assert_non_null(r);
	assert_int_equal(r->exit, TLM_REPORT_CLEAN);
	assert_int_equal(r->nerrors, 0);
	assert_int_equal(r->lost_events, 0);

	/* devices: requested bytes at the peak, exactly */
	assert_int_equal(r->ndevices, 1);
	const struct tlm_report_device *d = &r->devices[0];
	assert_int_equal(d->device, 0);
	assert_int_equal(d->kind, TLM_MEM_DEVICE);
	assert_int_equal(d->peak_reserved, note("peak_reserved"));
	assert_int_equal(d->peak_reserved, (uint64_t)RW_WEIGHTS * RW_WEIGHT_SIZE + RW_ACT_SIZE +
						   (uint64_t)(RW_ITERS - 1) * RW_LOSS_SIZE);
	assert_int_equal(d->peak_allocated, d->peak_reserved);
	assert_int_equal(d->live_bytes_at_end, note("live_bytes"));
	assert_int_equal(d->live_allocs_at_end, RW_WEIGHTS + RW_ITERS);

	/* one leak: record_loss */
	assert_int_equal(r->nleaks, 1);
	const struct tlm_report_site *l = &r->leaks[0];
	assert_int_equal(l->count, RW_ITERS);
	assert_int_equal(l->bytes, (uint64_t)RW_ITERS * RW_LOSS_SIZE);
	assert_true(l->rate > 0);
	const struct tlm_frame *f = top(r, l->stack_id);
	if (!is_workload_frame(f, "record_loss"))
		fprintf(stderr, "leak top frame: %s %s:%d %s\n", f->function ? f->function : "?",
			f->file ? f->file : "?", f->line, f->module ? f->module : "?");
	assert_true(is_workload_frame(f, "record_loss"));
	assert_int_equal(f->line, RW_LOSS_LINE);
	assert_false(f->stale);

	/* load_model's weights: live at end, not a leak */
	int found = 0;
	for (size_t i = 0; i < r->nlive; i++) {
		f = top(r, r->live[i].stack_id);
		if (is_workload_frame(f, "load_model")) {
			found++;
			assert_int_equal(r->live[i].count, RW_WEIGHTS);
			assert_int_equal(r->live[i].bytes, (uint64_t)RW_WEIGHTS * RW_WEIGHT_SIZE);
			assert_int_equal(i, 0); /* the largest */
			assert_int_not_equal(r->live[i].stack_id, l->stack_id);
		}
	}
	assert_int_equal(found, 1);
	assert_int_equal(r->nlive, 2);

	/* churn: the activation */
	assert_int_equal(r->nchurn, 1);
	assert_int_equal(r->churn[0].count, RW_ITERS);
	assert_int_equal(r->churn[0].size, RW_ACT_SIZE);
	assert_true(is_workload_frame(top(r, r->churn[0].stack_id), "train_step"));

	/* the OOM */
	assert_int_equal(note("oom_result"), 2);
	assert_int_equal(r->ooms_total, 1);
	const struct tlm_report_oom *o = &r->ooms[0];
	assert_int_equal(o->verdict, TLM_OOM_EXHAUSTION);
	assert_int_equal(o->requested, RW_OOM_SIZE);
	assert_int_equal(o->device_free, note("device_free"));
	assert_int_equal(o->reserved_free, 0);
	assert_true(is_workload_frame(top(r, o->stack_id), "main"));
	assert_int_equal(r->unmatched_frees, 0);
	assert_int_equal(r->inconsistencies, 0);
	tlm_report_free(r);
}

static char *run_tlm(const char *args, int *status)
{
	char *cmd;
	if (asprintf(&cmd, "'%s' report %s '%s'", getenv("TLM_TEST_TLM"), args, trace_path) < 0)
		fail();
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *buf = NULL;
	size_t len = 0, cap = 0, k;
	char chunk[4096];
	while ((k = fread(chunk, 1, sizeof chunk, p)) > 0) {
		if (len + k + 1 > cap) {
			cap = (len + k + 1) * 2;
			buf = realloc(buf, cap);
		}
		memcpy(buf + len, chunk, k);
		len += k;
	}
	if (!buf)
		buf = calloc(1, 1);
	buf[len] = 0;
	*status = pclose(p);
	free(cmd);
	return buf;
}

static void test_command(void **state)
{
	(void)state;
	int st;
	char *out = run_tlm("--format json", &st);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_memory_equal(out, "{\"schema\":\"tlm-report/1\"", 24);
	assert_non_null(strstr(out, "\"function\":\"record_loss\""));
	assert_non_null(strstr(out, "\"verdict\":\"exhaustion\""));
	free(out);

	out = run_tlm("", &st);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (char *p = out, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		assert_true(nl - p <= 100);
	assert_non_null(strstr(out, "record_loss (report_workload.c:"));
	assert_non_null(strstr(out, "LEAKS: 1 site"));
	free(out);

	out = run_tlm("--summary", &st);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	int lines = 0;
	for (char *p = out, *nl; (nl = strchr(p, '\n')); p = nl + 1, lines++)
		assert_true(nl - p <= 100);
	assert_true(lines <= 25);
	assert_non_null(strstr(out, "record_loss"));
	assert_non_null(strstr(out, "exhaustion"));
	assert_non_null(strstr(out, "full report: tlm report "));
	free(out);

	/* a damaged copy: everything readable is reported, exit 2 */
	char damaged[600], *cmd;
	snprintf(damaged, sizeof damaged, "%s.damaged", trace_path);
	FILE *in = fopen(trace_path, "rb"), *outf = fopen(damaged, "wb");
	assert_non_null(in);
	assert_non_null(outf);
	int c;
	long pos = 0;
	while ((c = fgetc(in)) != EOF)
		fputc(pos++ == 400 ? c ^ 0xff : c, outf); /* inside the first chunk */
	fclose(in);
	fclose(outf);
	assert_true(asprintf(&cmd, "'%s' report '%s' >/dev/null 2>&1", getenv("TLM_TEST_TLM"), damaged) > 0);
	st = system(cmd);
	assert_int_equal(WEXITSTATUS(st), 2);
	free(cmd);
	assert_true(asprintf(&cmd, "'%s' report /nonexistent/trace 2>/dev/null", getenv("TLM_TEST_TLM")) > 0);
	st = system(cmd);
	assert_int_equal(WEXITSTATUS(st), 2);
	free(cmd);
	remove(damaged);

	/* usage errors */
	out = run_tlm("--format xml", &st);
	assert_int_equal(WEXITSTATUS(st), 64);
	free(out);
	out = run_tlm("--bogus", &st);
	assert_int_equal(WEXITSTATUS(st), 64);
	free(out);
	out = run_tlm("/nonexistent/trace", &st); /* two inputs: the job report, one unreadable */
	assert_int_equal(WEXITSTATUS(st), 2);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_command),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
