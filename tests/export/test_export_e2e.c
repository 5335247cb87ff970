/* SPDX-License-Identifier: MIT */
/*
 * test_export_e2e.c - `tlm diff` and the exports on real recordings:
 * export_workload runs twice under libtlm.so on the simulated driver (a
 * "base" run of EW_BASE_ITERS iterations and a "new" run of EW_NEW_ITERS
 * with one leak site replaced by another, export_workload.h), then the tlm
 * command is run on the two traces and its output is parsed back and
 * checked against what the workload did: exact per-site deltas, the new and
 * the gone site, the device peaks, the exit status of the CI gate just below
 * and at the growth; and the chrome and collapsed exports of one trace.
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
#include "encoders/json_in.h"
#include "export_workload.h"

static struct run runs[2];
static char traces[2][512];

static const uint64_t base_leak = (uint64_t)EW_BASE_ITERS * (EW_LOSS + EW_OLD);
static const uint64_t new_leak = (uint64_t)EW_NEW_ITERS * (EW_LOSS + EW_NEW);

static int setup(void **state)
{
	(void)state;
	static const char *const env[] = {"TLM_SIM_MEMORY=256M", "TLM_SIM_DEVICES=1", "TLM_SUMMARY=0", NULL};
	char iters[2][16];
	snprintf(iters[0], sizeof iters[0], "%d", EW_BASE_ITERS);
	snprintf(iters[1], sizeof iters[1], "%d", EW_NEW_ITERS);
	const char *const args[2][3] = {{iters[0], "base", NULL}, {iters[1], "new", NULL}};
	for (int i = 0; i < 2; i++) {
		if (e2e_run(&runs[i], args[i], env))
			return -1;
		if (!WIFEXITED(runs[i].status) || WEXITSTATUS(runs[i].status)) {
			fprintf(stderr, "workload failed (status %d): %s\n", runs[i].status, runs[i].stderr_text);
			return -1;
		}
		char paths[4][512];
		if (e2e_traces(&runs[i], paths, 4) != 1) {
			fprintf(stderr, "expected one trace in %s\n", runs[i].dir);
			return -1;
		}
		memcpy(traces[i], paths[0], sizeof traces[i]);
	}
	return 0;
}

/* Runs `tlm ARGS` (a shell fragment); returns stdout, the exit status in
 * *code and stderr in *err (both malloc'd). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return calloc(1, 1);
	char *buf = NULL;
	size_t len = 0, k;
	char chunk[8192];
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
		buf = realloc(buf, len + k + 1);
		memcpy(buf + len, chunk, k);
		len += k;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[len] = 0;
	return buf;
}

static char *tlm(const char *args, int *code, char **err)
{
	char *cmd;
	const char *dir = runs[0].dir;
	assert_true(asprintf(&cmd, "'%s' %s >'%s/out' 2>'%s/err'", getenv("TLM_TEST_TLM"), args, dir, dir) > 0);
	int st = system(cmd);
	free(cmd);
	assert_true(WIFEXITED(st));
	*code = WEXITSTATUS(st);
	char p[600];
	snprintf(p, sizeof p, "%s/err", dir);
	char *e = slurp(p);
	if (err)
		*err = e;
	else
		free(e);
	snprintf(p, sizeof p, "%s/out", dir);
	return slurp(p);
}

static struct tlm_jv *parse(const char *text)
{
	char err[200];
	struct tlm_jv *v = tlm_json_parse(text, strlen(text), err, sizeof err);
	if (!v)
		fprintf(stderr, "bad JSON (%s): %.300s\n", err, text);
	assert_non_null(v);
	return v;
}

static uint64_t u(const struct tlm_jv *o, const char *k)
{
	uint64_t v;
	if (!tlm_jv_u64(tlm_jv_get(o, k), &v)) {
		fprintf(stderr, "no unsigned %s\n", k);
		fail();
	}
	return v;
}

static int64_t i64(const struct tlm_jv *o, const char *k)
{
	int64_t v;
	if (!tlm_jv_i64(tlm_jv_get(o, k), &v)) {
		fprintf(stderr, "no integer %s\n", k);
		fail();
	}
	return v;
}

/* The site of a diff section whose innermost non-"must" frame is fn. */
static const struct tlm_jv *site_of(const struct tlm_jv *section, const char *fn)
{
	const struct tlm_jv *sites = tlm_jv_get(section, "sites");
	const struct tlm_jv *found = NULL;
	for (size_t i = 0; i < tlm_jv_len(sites); i++) {
		const struct tlm_jv *st = tlm_jv_get(tlm_jv_at(sites, i), "stack");
		for (size_t k = 0; k < tlm_jv_len(st); k++) {
			const char *f = tlm_jv_str(tlm_jv_get(tlm_jv_at(st, k), "function"));
			if (f && !strcmp(f, "must"))
				continue;
			if (f && !strcmp(f, fn)) {
				assert_null(found); /* one site per function */
				found = tlm_jv_at(sites, i);
			}
			break;
		}
	}
	if (!found)
		fprintf(stderr, "no site for %s\n", fn);
	assert_non_null(found);
	return found;
}

static void check_diff(const struct tlm_jv *d)
{
	assert_string_equal(tlm_jv_str(tlm_jv_get(d, "schema")), "tlm-diff/1");
	const struct tlm_jv *leaks = tlm_jv_get(d, "leaks");
	assert_int_equal(u(leaks, "before_bytes"), base_leak);
	assert_int_equal(u(leaks, "after_bytes"), new_leak);
	assert_int_equal(i64(leaks, "delta_bytes"), (int64_t)(new_leak - base_leak));
	assert_int_equal(tlm_jv_len(tlm_jv_get(leaks, "sites")), 3);

	const struct tlm_jv *s = site_of(leaks, "keep_loss");
	assert_string_equal(tlm_jv_str(tlm_jv_get(s, "status")), "grew");
	assert_int_equal(u(s, "before_bytes"), EW_BASE_ITERS * EW_LOSS);
	assert_int_equal(u(s, "before_count"), EW_BASE_ITERS);
	assert_int_equal(u(s, "after_bytes"), EW_NEW_ITERS * EW_LOSS);
	assert_int_equal(u(s, "after_count"), EW_NEW_ITERS);
	assert_int_equal(i64(s, "delta_bytes"), (EW_NEW_ITERS - EW_BASE_ITERS) * EW_LOSS);
	assert_int_equal(i64(s, "delta_count"), EW_NEW_ITERS - EW_BASE_ITERS);
	s = site_of(leaks, "new_cache");
	assert_string_equal(tlm_jv_str(tlm_jv_get(s, "status")), "new");
	assert_int_equal(u(s, "before_bytes"), 0);
	assert_int_equal(i64(s, "delta_bytes"), EW_NEW_ITERS * EW_NEW);
	s = site_of(leaks, "old_cache");
	assert_string_equal(tlm_jv_str(tlm_jv_get(s, "status")), "gone");
	assert_int_equal(u(s, "after_bytes"), 0);
	assert_int_equal(i64(s, "delta_bytes"), -(int64_t)(EW_BASE_ITERS * EW_OLD));

	/* live at end: the weights are unchanged, the leaks are there too */
	const struct tlm_jv *live = tlm_jv_get(d, "live_at_end");
	s = site_of(live, "load_model");
	assert_string_equal(tlm_jv_str(tlm_jv_get(s, "status")), "same");
	assert_int_equal(u(s, "after_bytes"), EW_WEIGHTS * EW_WEIGHT_SIZE);
	assert_int_equal(i64(s, "delta_bytes"), 0);
	assert_int_equal(i64(live, "delta_bytes"), (int64_t)(new_leak - base_leak));

	/* the device: the peak is during the last step, with every leak so far */
	const struct tlm_jv *devs = tlm_jv_get(d, "devices");
	assert_int_equal(tlm_jv_len(devs), 1);
	const struct tlm_jv *dev = tlm_jv_at(devs, 0);
	assert_int_equal(i64(dev, "device"), 0);
	assert_string_equal(tlm_jv_str(tlm_jv_get(dev, "status")), "both");
	const struct tlm_jv *pr = tlm_jv_get(dev, "peak_reserved_bytes");
	uint64_t fixed = (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + EW_ACT_SIZE;
	assert_int_equal(u(pr, "before"), fixed + base_leak);
	assert_int_equal(u(pr, "after"), fixed + new_leak);
	assert_int_equal(i64(pr, "delta"), (int64_t)(new_leak - base_leak));
	assert_int_equal(i64(tlm_jv_get(dev, "peak_allocated_bytes"), "delta"), (int64_t)(new_leak - base_leak));
	double frag = 1;
	assert_true(tlm_jv_num(tlm_jv_get(tlm_jv_get(dev, "fragmentation_at_peak"), "delta"), &frag));
	assert_true(frag == 0.0);
}

static void test_diff(void **state)
{
	(void)state;
	int code;
	char *args, *out, *err;
	assert_true(asprintf(&args, "diff --format json '%s' '%s'", traces[0], traces[1]) > 0);
	out = tlm(args, &code, NULL);
	assert_int_equal(code, 0);
	struct tlm_jv *d = parse(out);
	check_diff(d);
	assert_false(tlm_jv_get(tlm_jv_get(d, "gate"), "failed")->b);
	tlm_json_free(d);
	free(out);
	free(args);

	/* the same from a JSON report on one side */
	char json[600];
	snprintf(json, sizeof json, "%s/base.json", runs[0].dir);
	assert_true(asprintf(&args, "report --format json -o '%s' '%s'", json, traces[0]) > 0);
	free(tlm(args, &code, NULL));
	assert_int_equal(code, 0);
	free(args);
	assert_true(asprintf(&args, "diff -f json '%s' '%s'", json, traces[1]) > 0);
	out = tlm(args, &code, NULL);
	assert_int_equal(code, 0);
	d = parse(out);
	check_diff(d);
	tlm_json_free(d);
	free(out);
	free(args);

	/* text */
	assert_true(asprintf(&args, "diff '%s' '%s'", traces[0], traces[1]) > 0);
	out = tlm(args, &code, NULL);
	assert_int_equal(code, 0);
	for (char *p = out, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		assert_true(nl - p <= 100);
	assert_non_null(strstr(out, "sites: 1 grew, 0 shrank, 1 new, 1 gone, 0 same"));
	assert_non_null(strstr(out, "keep_loss (export_workload.c:"));
	assert_non_null(strstr(out, "new_cache (export_workload.c:"));
	free(out);
	free(args);

	/* the gate: growth is exactly new_leak - base_leak */
	uint64_t growth = new_leak - base_leak;
	assert_true(asprintf(&args, "diff --fail-on-growth %llu '%s' '%s'", (unsigned long long)growth, traces[0],
			     traces[1]) > 0);
	free(tlm(args, &code, &err));
	assert_int_equal(code, 0);
	free(err);
	free(args);
	assert_true(asprintf(&args, "diff --fail-on-growth %llu --format json '%s' '%s'",
			     (unsigned long long)growth - 1, traces[0], traces[1]) > 0);
	out = tlm(args, &code, &err);
	assert_int_equal(code, 1);
	assert_non_null(strstr(err, "leaked bytes grew by"));
	assert_non_null(strstr(err, "keep_loss"));
	assert_non_null(strstr(err, "new_cache"));
	assert_null(strstr(err, "old_cache")); /* it shrank */
	d = parse(out);
	const struct tlm_jv *g = tlm_jv_get(d, "gate");
	assert_true(tlm_jv_get(g, "failed")->b);
	assert_int_equal(i64(g, "leak_growth_bytes"), (int64_t)growth);
	assert_int_equal(u(g, "fail_on_growth"), growth - 1);
	assert_int_equal(tlm_jv_len(tlm_jv_get(g, "grown_sites")), 2);
	tlm_json_free(d);
	free(out);
	free(err);
	free(args);
	/* the other way round, leaks shrank: the gate passes whatever the limit */
	assert_true(asprintf(&args, "diff --fail-on-growth 0 '%s' '%s'", traces[1], traces[0]) > 0);
	free(tlm(args, &code, NULL));
	assert_int_equal(code, 0);
	free(args);
	/* a run against itself: nothing changed */
	assert_true(asprintf(&args, "diff --fail-on-growth 0 -f json '%s' '%s'", traces[0], traces[0]) > 0);
	out = tlm(args, &code, NULL);
	assert_int_equal(code, 0);
	d = parse(out);
	assert_int_equal(i64(tlm_jv_get(d, "leaks"), "delta_bytes"), 0);
	assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_at(tlm_jv_get(tlm_jv_get(d, "leaks"), "sites"), 0), "status")),
			    "same");
	tlm_json_free(d);
	free(out);
	free(args);

	/* the peak gate: exactly the peak's growth passes, a byte less fails and
	 * names what held more of the peak */
	assert_true(asprintf(&args, "diff -f json '%s' '%s'", traces[0], traces[1]) > 0);
	out = tlm(args, &code, NULL);
	free(args);
	d = parse(out);
	const struct tlm_jv *dv = tlm_jv_at(tlm_jv_get(d, "devices"), 0);
	int64_t peak_growth = i64(tlm_jv_get(dv, "peak_allocated_bytes"), "delta");
	int64_t at_peak_growth = i64(tlm_jv_get(d, "at_peak"), "delta_bytes");
	assert_true(peak_growth > 0);
	assert_int_equal(at_peak_growth, peak_growth); /* one device: its sites add up to its peak */
	tlm_json_free(d);
	free(out);
	assert_true(asprintf(&args, "diff --fail-on-peak-growth %lld '%s' '%s'", (long long)peak_growth, traces[0],
			     traces[1]) > 0);
	free(tlm(args, &code, NULL));
	assert_int_equal(code, 0);
	free(args);
	assert_true(asprintf(&args, "diff --fail-on-peak-growth=%lld '%s' '%s'", (long long)peak_growth - 1, traces[0],
			     traces[1]) > 0);
	out = tlm(args, &code, &err);
	assert_int_equal(code, 1);
	assert_non_null(strstr(err, "tlm diff: peak allocated of device 0 (device) grew by"));
	assert_non_null(strstr(err, "keep_loss"));
	assert_non_null(strstr(out, "gate: peak allocated +"));
	free(out);
	free(err);
	free(args);

	/* usage and input errors */
	free(tlm("diff --fail-on-growth 12X a b", &code, NULL));
	assert_int_equal(code, 64);
	free(tlm("diff --fail-on-peak-growth a b", &code, NULL));
	assert_int_equal(code, 64);
	free(tlm("diff onlyone", &code, NULL));
	assert_int_equal(code, 64);
	free(tlm("diff --format xml a b", &code, NULL));
	assert_int_equal(code, 64);
	assert_true(asprintf(&args, "diff /nonexistent/trace '%s'", traces[0]) > 0);
	free(tlm(args, &code, NULL));
	assert_int_equal(code, 2);
	free(args);
	char bad[600];
	snprintf(bad, sizeof bad, "%s/bad.json", runs[0].dir);
	FILE *f = fopen(bad, "w");
	fputs("{\"schema\":\"tlm-report/1\",\"devices\":[],}", f); /* trailing comma */
	fclose(f);
	assert_true(asprintf(&args, "diff '%s' '%s'", bad, traces[0]) > 0);
	free(tlm(args, &code, &err));
	assert_int_equal(code, 2);
	assert_non_null(strstr(err, "not valid JSON"));
	free(err);
	free(args);
	free(tlm("diff --help", &code, NULL));
	assert_int_equal(code, 0);
}

/* chrome: counters per device, values exact, OOM instants (none here) */
static void test_chrome(void **state)
{
	(void)state;
	int code;
	char *args;
	assert_true(asprintf(&args, "report --format chrome '%s'", traces[1]) > 0);
	char *out = tlm(args, &code, NULL);
	free(args);
	assert_int_equal(code, 0);
	struct tlm_jv *d = parse(out);
	const struct tlm_jv *ev = tlm_jv_get(d, "traceEvents");
	assert_true(tlm_jv_len(ev) > 0);
	uint64_t max_res = 0, last_res = 0, counters = 0;
	double last_ts = -1;
	for (size_t i = 0; i < tlm_jv_len(ev); i++) {
		const struct tlm_jv *e = tlm_jv_at(ev, i);
		const char *ph = tlm_jv_str(tlm_jv_get(e, "ph"));
		assert_non_null(ph);
		if (strcmp(ph, "C"))
			continue;
		assert_string_equal(tlm_jv_str(tlm_jv_get(e, "name")), "device 0");
		double ts;
		assert_true(tlm_jv_num(tlm_jv_get(e, "ts"), &ts));
		assert_true(ts >= last_ts);
		last_ts = ts;
		const struct tlm_jv *a = tlm_jv_get(e, "args");
		assert_int_equal(u(a, "allocated"), u(a, "reserved")); /* no allocator tap */
		last_res = u(a, "reserved");
		if (last_res > max_res)
			max_res = last_res;
		counters++;
	}
	/* changes closer than a bucket (run / 1000, here < 0.1 ms) share one:
	 * at least one per step (1 ms apart); at most every change, plus the
	 * end of the run */
	assert_true(counters >= EW_NEW_ITERS);
	assert_true(counters <= EW_WEIGHTS + 4 * EW_NEW_ITERS + 2);
	assert_int_equal(max_res, (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + EW_ACT_SIZE + new_leak);
	assert_int_equal(last_res, (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + new_leak);
	tlm_json_free(d);
	free(out);
}

/* collapsed: every line parses, sums are the live bytes and the peak */
static uint64_t folded_sum(const char *out, const char *must_have)
{
	uint64_t sum = 0;
	bool seen = false;
	for (const char *p = out, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		const char *sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		assert_true(sp > p + 1);
		char *end;
		unsigned long long v = strtoull(sp, &end, 10);
		assert_ptr_equal(end, nl);
		assert_true(v > 0);
		sum += v;
		assert_memory_equal(p, "device 0;", 9); /* root frame first */
		/* outermost first: main comes before the allocating function */
		const char *m = strstr(p, ";main (");
		assert_true(m && m < sp);
		if (strstr(p, must_have) && strstr(p, must_have) < sp)
			seen = true;
	}
	assert_true(seen);
	return sum;
}

static void test_collapsed(void **state)
{
	(void)state;
	int code;
	char *args;
	assert_true(asprintf(&args, "report --format collapsed '%s'", traces[1]) > 0);
	char *out = tlm(args, &code, NULL);
	free(args);
	assert_int_equal(code, 0);
	assert_int_equal(folded_sum(out, ";keep_loss (export_workload.c:"),
			 (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + new_leak);
	free(out);
	assert_true(asprintf(&args, "report --format collapsed --metric peak '%s'", traces[1]) > 0);
	out = tlm(args, &code, NULL);
	free(args);
	assert_int_equal(code, 0);
	assert_int_equal(folded_sum(out, ";train_step (export_workload.c:"),
			 (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + EW_ACT_SIZE + new_leak);
	free(out);
	/* without an allocator tap the allocated peak is the reserved one: the
	 * same bytes, taken from AT PEAK instead of a second pass */
	assert_true(asprintf(&args, "report --format collapsed --metric peak-allocated '%s'", traces[1]) > 0);
	out = tlm(args, &code, NULL);
	free(args);
	assert_int_equal(code, 0);
	assert_int_equal(folded_sum(out, ";train_step (export_workload.c:"),
			 (uint64_t)EW_WEIGHTS * EW_WEIGHT_SIZE + EW_ACT_SIZE + new_leak);
	free(out);
	free(tlm("report --format collapsed --metric most x", &code, NULL));
	assert_int_equal(code, 64);
	free(tlm("report --metric peak x", &code, NULL));
	assert_int_equal(code, 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_collapsed),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
