/* SPDX-License-Identifier: MIT */
/*
 * test_export.c - the exports and the diff on synthetic traces written with
 * the trace writer (tests/report/rt.h): memory over time (exact for few
 * changes, bounded for many), the segment map at the peak, Chrome trace
 * events and folded stacks parsed back, the HTML page with hostile names,
 * the strict JSON reader, and site matching across runs whose addresses
 * differ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../report/rt.h"
#include "diff/diff.h"
#include "diff/json_in.h"
#include "json_out.h"
#include "report/export.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL
#define DEV1 0x220000000000ULL

static struct tlm_report *build(struct rt *t, uint64_t end_t, char **pathp)
{
	char *path = rt_close(t, true, end_t);
	struct tlm_report *r = rt_report(path);
	*pathp = path;
	return r;
}

static void done(struct tlm_report *r, char *path)
{
	tlm_report_free(r);
	unlink(path);
	free(path);
}

static const struct tlm_report_device *dev(const struct tlm_report *r, int device, int kind)
{
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].device == device && r->devices[i].kind == kind)
			return &r->devices[i];
	fail();
	return NULL;
}

static char *render(int (*fn)(struct tlm_report *, FILE *, char *, size_t), struct tlm_report *r)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = fn(r, f, err, sizeof err);
	fclose(f);
	if (rc)
		fprintf(stderr, "render: %s\n", err);
	assert_int_equal(rc, 0);
	return buf;
}

static int collapsed_live(struct tlm_report *r, FILE *f, char *err, size_t n)
{
	return tlm_report_collapsed(r, f, TLM_COLLAPSED_LIVE, err, n);
}

static int collapsed_peak(struct tlm_report *r, FILE *f, char *err, size_t n)
{
	return tlm_report_collapsed(r, f, TLM_COLLAPSED_PEAK, err, n);
}

static int chrome(struct tlm_report *r, FILE *f, char *err, size_t n)
{
	(void)err;
	(void)n;
	return tlm_report_chrome(r, f);
}

/* A small run on two devices: device 0 peaks at 4 ms (700 B), device 1 at
 * 6 ms; an OOM on device 0 at 8 ms. */
static struct tlm_report *small_run(char **path)
{
	struct rt *t = rt_open();
	uint64_t ip1[] = {0x401000, 0x402000}, ip2[] = {0x403000, 0x402000}, ip3[] = {0x404000};
	rt_stack(t, 1, ip1, 2);
	rt_stack(t, 2, ip2, 2);
	rt_stack(t, 3, ip3, 1);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x0000, 100, 1 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x1000, 200, 2 * MS, 2, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x3000, 50, 2 * MS + MS / 2, 3, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x3000, 3 * MS, 0);           /* freed before the peak */
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x2000, 400, 4 * MS, 1, 0);   /* peak: 700 */
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x1000, 5 * MS, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV1 + 0x0000, 1000, 6 * MS, 3, 1);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x5000, 300, 7 * MS, 2, 0);   /* 800 > 700? no: 500+300 = 800 */
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ULL << 30, 8 * MS, 3, 0, 2, 4096);
	return build(t, 10 * MS, path);
}

/* ---- memory over time ---------------------------------------------------- */

static void test_series_exact(void **state)
{
	(void)state;
	char *path;
	struct tlm_report *r = small_run(&path);
	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	struct tlm_report_point want[] = {
		{1 * MS, 100, 100}, {2 * MS, 300, 300}, {2 * MS + MS / 2, 350, 350}, {3 * MS, 300, 300},
		{4 * MS, 700, 700}, {5 * MS, 500, 500}, {7 * MS, 800, 800},
	};
	assert_int_equal(d->npoints, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_int_equal(d->points[i].t_ns, want[i].t_ns);
		assert_int_equal(d->points[i].reserved, want[i].reserved);
		assert_int_equal(d->points[i].allocated, want[i].allocated);
	}
	assert_int_equal(d->peak_reserved, 800);
	assert_int_equal(d->peak_reserved_ns, 7 * MS);
	d = dev(r, 1, TLM_MEM_DEVICE);
	assert_int_equal(d->npoints, 1);
	assert_int_equal(d->points[0].t_ns, 6 * MS);
	assert_int_equal(d->points[0].reserved, 1000);
	done(r, path);
}

static void test_series_bounded(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	rt_stack(t, 1, ip, 1);
	/* 100000 cycles over 100 s, a slow leak, one spike in the middle */
	uint64_t leak = 0, peak = 0;
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t tt = i * MS;
		uint64_t size = i == 50000 ? 1 << 20 : 4096;
		rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x100000000ULL, size, tt, 1, 0);
		if (leak + size > peak)
			peak = leak + size;
		if (i % 100 == 0) {
			rt_alloc(t, TLM_KIND_DEVICE, DEV0 + i * 64, 64, tt + MS / 4, 1, 0);
			leak += 64;
			if (leak + size > peak)
				peak = leak + size;
		}
		rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x100000000ULL, tt + MS / 2, 0);
	}
	char *path;
	struct tlm_report *r = build(t, 100000 * MS, &path);
	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	assert_true(d->npoints > 500);
	assert_true(d->npoints <= TLM_REPORT_MAX_POINTS);
	uint64_t max = 0;
	for (size_t i = 0; i < d->npoints; i++) {
		if (i)
			assert_true(d->points[i].t_ns >= d->points[i - 1].t_ns);
		if (d->points[i].reserved > max)
			max = d->points[i].reserved;
	}
	assert_int_equal(max, peak);            /* the spike is kept */
	assert_int_equal(d->peak_reserved, peak);
	assert_int_equal(d->points[d->npoints - 1].reserved, leak); /* the level at the end */
	done(r, path);
}

/* ---- segment map ---------------------------------------------------------- */

static void test_segments(void **state)
{
	(void)state;
	char *path, err[256];
	struct tlm_report *r = small_run(&path);
	struct tlm_report_segmap *m = tlm_report_peak_segments(r, err, sizeof err);
	assert_non_null(m);
	assert_int_equal(r->ndevices, 2);
	/* device 0 at its peak (7 ms): 0x0000 (100), 0x2000 (400), 0x5000 (300) */
	assert_int_equal(m[0].n, 3);
	assert_int_equal(m[0].total, 800);
	uint64_t addr[] = {DEV0, DEV0 + 0x2000, DEV0 + 0x5000}, size[] = {100, 400, 300};
	uint32_t stack[] = {1, 1, 2};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(m[0].seg[i].addr, addr[i]);
		assert_int_equal(m[0].seg[i].size, size[i]);
		assert_int_equal(m[0].seg[i].stack_id, stack[i]);
	}
	assert_int_equal(m[0].seg[2].time_ns, 7 * MS);
	assert_int_equal(m[1].n, 1);
	assert_int_equal(m[1].total, 1000);
	tlm_report_segmaps_free(m, r->ndevices);
	done(r, path);
}

/* ---- chrome ------------------------------------------------------------- */

static struct tlm_jv *parse(const char *s)
{
	char err[200];
	struct tlm_jv *v = tlm_json_parse(s, strlen(s), err, sizeof err);
	if (!v)
		fprintf(stderr, "JSON: %s\n%s\n", err, s);
	assert_non_null(v);
	return v;
}

static uint64_t arg_u(const struct tlm_jv *e, const char *k)
{
	uint64_t v = 0;
	assert_true(tlm_jv_u64(tlm_jv_get(tlm_jv_get(e, "args"), k), &v));
	return v;
}

static void test_chrome(void **state)
{
	(void)state;
	char *path;
	struct tlm_report *r = small_run(&path);
	char *out = render(chrome, r);
	struct tlm_jv *j = parse(out);
	const struct tlm_jv *ev = tlm_jv_get(j, "traceEvents");
	size_t counters[2] = {0, 0}, instants = 0, meta = 0;
	double last_ts[2] = {-1, -1};
	uint64_t last_res[2] = {0, 0};
	for (size_t i = 0; i < tlm_jv_len(ev); i++) {
		const struct tlm_jv *e = tlm_jv_at(ev, i);
		const char *ph = tlm_jv_str(tlm_jv_get(e, "ph")), *name = tlm_jv_str(tlm_jv_get(e, "name"));
		uint64_t pid;
		assert_true(tlm_jv_u64(tlm_jv_get(e, "pid"), &pid));
		assert_int_equal(pid, 4242);
		double ts = 0;
		if (!strcmp(ph, "M")) {
			meta++;
			continue;
		}
		assert_true(tlm_jv_num(tlm_jv_get(e, "ts"), &ts));
		if (!strcmp(ph, "C")) {
			int k = !strcmp(name, "device 0") ? 0 : !strcmp(name, "device 1") ? 1 : -1;
			assert_true(k >= 0);
			assert_true(ts >= last_ts[k]);
			last_ts[k] = ts;
			last_res[k] = arg_u(e, "reserved");
			assert_int_equal(arg_u(e, "allocated"), last_res[k]);
			if (k == 0 && counters[0] == 2) { /* 2.5 ms, in microseconds */
				assert_true(ts == 2500.0);
				assert_int_equal(last_res[0], 350);
			}
			counters[k]++;
		} else {
			assert_string_equal(ph, "i");
			assert_string_equal(name, "OOM device 0");
			assert_true(ts == 8000.0);
			assert_int_equal(arg_u(e, "requested_bytes"), 1ULL << 30);
			assert_int_equal(arg_u(e, "device_free_bytes"), 4096);
			assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_get(e, "args"), "verdict")), "exhaustion");
			assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_get(e, "args"), "at")),
					    "fn_404000 (f404000.c:688) [libapp.so]");
			instants++;
		}
	}
	assert_int_equal(meta, 1);
	/* device 0: 0 at the start (1 ms is the first event: no extra point),
	 * 7 changes, the level at the end (10 ms); device 1: 0 from 1 ms, its
	 * change, the end */
	assert_int_equal(counters[0], 7 + 1);
	assert_int_equal(counters[1], 1 + 1 + 1);
	assert_true(last_ts[0] == 10000.0);
	assert_int_equal(last_res[0], 800);
	assert_int_equal(last_res[1], 1000);
	assert_int_equal(instants, 1);
	assert_string_equal(tlm_jv_str(tlm_jv_get(j, "displayTimeUnit")), "ms");
	tlm_json_free(j);
	free(out);
	done(r, path);
}

/* ---- collapsed ------------------------------------------------------------ */

static uint64_t sum_lines(const char *out, size_t *lines)
{
	uint64_t sum = 0;
	*lines = 0;
	for (const char *p = out, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		const char *sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		char *end;
		sum += strtoull(sp, &end, 10);
		assert_ptr_equal(end, nl);
		(*lines)++;
	}
	return sum;
}

static void test_collapsed(void **state)
{
	(void)state;
	char *path;
	struct tlm_report *r = small_run(&path);
	char *out = render(collapsed_live, r);
	size_t n;
	/* live at end: device 0 holds 100 + 400 (stack 1) and 300 (stack 2), device 1 1000 */
	assert_int_equal(sum_lines(out, &n), 1800);
	assert_int_equal(n, 3);
	assert_non_null(strstr(out, "device 0;fn_402000 (f402000.c:496);fn_401000 (f401000.c:400) 500\n"));
	assert_non_null(strstr(out, "device 0;fn_402000 (f402000.c:496);fn_403000 (f403000.c:592) 300\n"));
	assert_non_null(strstr(out, "device 1;fn_404000 (f404000.c:688) 1000\n"));
	free(out);
	out = render(collapsed_peak, r);
	assert_int_equal(sum_lines(out, &n), 800 + 1000); /* the peaks of both devices */
	assert_non_null(strstr(out, "device 0;fn_402000 (f402000.c:496);fn_401000 (f401000.c:400) 500\n"));
	free(out);
	done(r, path);
}

/* ---- hostile strings ------------------------------------------------------ */

static const char evil_fn[] = "evil\"fn';x\\<script>alert(1)</script>&amp;\x01\x1f\t\n\x7f\xff\xc3(\xe2\x80\xa8ok\xc3\xa9";
static const char evil_file[] = "/src/<img src=x onerror=alert(2)>\".c";
static const char evil_mod[] = "/tmp/\"q\"\\dir/lib\xed\xa0\x80x.so";

static size_t evil_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	out->function = ip == 0x401000 ? evil_fn : NULL; /* the other frame has no symbols */
	out->file = ip == 0x401000 ? evil_file : NULL;
	out->line = 7;
	out->module = evil_mod;
	out->module_offset = 0x1234;
	return 1;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t bad, k = tlm__utf8_seq(p + i, n - i, &bad);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

static void test_hostile(void **state)
{
	(void)state;
	char *path;
	struct tlm_report *r = small_run(&path);
	tlm_report_set_resolver(r, evil_resolve, NULL);
	char *out = render(tlm_report_html, r);
	if (!valid_utf8(out)) {
		FILE *dbg = fopen("/tmp/hostile.html", "w");
		fputs(out, dbg);
		fclose(dbg);
	}
	assert_true(valid_utf8(out));
	assert_null(strstr(out, "<script>alert"));
	assert_null(strstr(out, "<img"));
	assert_null(strstr(out, "&amp;\x01"));
	assert_non_null(strstr(out, "evil&quot;fn&#39;;x\\&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;&#xFFFD;"
				    "&#xFFFD;\t\n&#xFFFD;&#xFFFD;&#xFFFD;(\xe2\x80\xa8ok\xc3\xa9"));
	assert_non_null(strstr(out, "&lt;img src=x onerror=alert(2)&gt;&quot;.c"));
	/* the only scripts are the page's own two (<script> without a type) and the
	 * timelines' data (typed, never run); no string from the trace closes one */
	size_t scripts = 0, data = 0, closers = 0;
	for (const char *p = out; (p = strstr(p, "<script")); p++) {
		if (!strncmp(p, "<script>", 8))
			scripts++;
#define DATA1 "<script type=\"application/octet-stream\""
#define DATA2 "<script type=\"application/json\""
		else if (!strncmp(p, DATA1, sizeof DATA1 - 1) || !strncmp(p, DATA2, sizeof DATA2 - 1))
			data++;
	}
	for (const char *p = out; (p = strstr(p, "</script")); p++)
		closers++;
	assert_int_equal(scripts, 2);
	assert_true(data >= 2);
	assert_int_equal(closers, scripts + data);
	for (const char *p = out; *p; p++)
		assert_true(*p == '\n' || *p == '\t' || (unsigned char)*p >= 0x20);
	assert_non_null(strstr(out, "blocks unknown: no allocator tap"));
	assert_non_null(strstr(out, "<path class=\"series reserved\" d=\"M"));
	assert_non_null(strstr(out, "<line class=\"oom-marker\""));
	assert_non_null(strstr(out, "lib&#xFFFD;&#xFFFD;&#xFFFD;x.so+0x1234"));
	free(out);

	out = render(collapsed_live, r);
	assert_true(valid_utf8(out));
	size_t n;
	assert_int_equal(sum_lines(out, &n), 1800);
	assert_int_equal(n, 3); /* no name split a line */
	assert_non_null(strstr(out, "evil\"fn':x\\<script>alert(1)</script>&amp:???" "???" "?" "(\xe2\x80\xa8ok\xc3\xa9 "
				    "(<img src=x onerror=alert(2)>\".c:7)"));
	assert_non_null(strstr(out, "lib???x.so+0x1234"));
	free(out);

	out = render(chrome, r);
	struct tlm_jv *j = parse(out); /* escaped: still valid JSON */
	tlm_json_free(j);
	free(out);
	done(r, path);
}

/* Memory reference cycles kept alive until the GC ran: its own table, with
 * the advice; an empty one says what it needs. */
static void test_html_gc_freed(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x405000};
	rt_stack(t, 4, ip, 1);
	for (int i = 0; i < 3; i++) {
		rt_alloc(t, TLM_KIND_DEVICE, DEV0 + (uint64_t)i * 0x1000, 4096, (uint64_t)(1 + i) * MS, 4, 0);
		struct tlm_event fr = {.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .api = TLM_API_cudaFree,
				       .addr = DEV0 + (uint64_t)i * 0x1000, .time_ns = (uint64_t)(5 + i) * MS,
				       .flags = TLM_EVF_GC_FREED};
		rt_event(t, &fr);
	}
	char *path;
	struct tlm_report *r = build(t, 10 * MS, &path);
	assert_int_equal(r->ngc_freed, 1);
	char *out = render(tlm_report_html, r);
	assert_non_null(strstr(out, "<h2 id=\"gc-freed\">Freed by the garbage collector</h2>\n<p class=\"meta\">1 site, "
				    "12.0 KiB in 3 allocations kept alive by reference cycles until Python's cyclic "
				    "garbage collector ran: break the cycle, <code>del</code> the reference, or hold it "
				    "with a weakref.</p>\n<table class=\"sites gc-freed\">"));
	assert_non_null(strstr(out, "fn_405000"));
	free(out);
	done(r, path);

	r = small_run(&path);
	out = render(tlm_report_html, r);
	assert_non_null(strstr(out, "<h2 id=\"gc-freed\">Freed by the garbage collector</h2>\n<p class=\"empty\">None: "
				    "no memory was freed while Python's cyclic garbage collector ran"));
	free(out);
	done(r, path);
}

/* ---- the JSON reader -------------------------------------------------------- */

static void test_json_in(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", " ", "{", "[1,]", "{\"a\":1,}", "[01]", "[-]", "[1.]", "[.5]", "[1e]", "[+1]", "[NaN]",
		"[Infinity]", "'a'", "[\"a\nb\"]", "[\"\\x\"]", "[\"\\ud800\"]", "[\"\\udc00\"]",
		"[\"\\ud800\\u0041\"]", "[\"\xff\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "{\"a\":1,\"a\":2}",
		"{a:1}", "[1] 2", "[true false]", "tru", "nul", "[1,,2]", "{\"a\"1}", "\"\\u12\"",
		"/* c */ 1", "[\"a\"", "{\"\\u0000\":1}",
	};
	char err[200];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct tlm_jv *v = tlm_json_parse(bad[i], strlen(bad[i]), err, sizeof err);
		if (v)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		assert_null(v);
		assert_memory_equal(err, "offset ", 7);
	}
	const char good[] = " {\"u\":18446744073709551615,\"i\":-9223372036854775808,\"big\":18446744073709551616,"
			    "\"d\":-1.5e3,\"s\":\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\xc3\xa9\",\"z\":0,"
			    "\"n\":null,\"t\":true,\"a\":[[],{}],\"nul\":\"x\\u0000y\"} ";
	struct tlm_jv *v = tlm_json_parse(good, strlen(good), err, sizeof err);
	assert_non_null(v);
	uint64_t u;
	int64_t i;
	double d;
	assert_true(tlm_jv_u64(tlm_jv_get(v, "u"), &u));
	assert_true(u == UINT64_MAX);
	assert_true(tlm_jv_i64(tlm_jv_get(v, "i"), &i));
	assert_true(i == INT64_MIN);
	assert_false(tlm_jv_u64(tlm_jv_get(v, "i"), &u));
	assert_false(tlm_jv_u64(tlm_jv_get(v, "big"), &u)); /* not exact: a double only */
	assert_true(tlm_jv_num(tlm_jv_get(v, "big"), &d));
	assert_false(tlm_jv_i64(tlm_jv_get(v, "u"), &i));
	assert_true(tlm_jv_num(tlm_jv_get(v, "d"), &d) && d == -1500.0);
	assert_false(tlm_jv_u64(tlm_jv_get(v, "d"), &u));
	assert_string_equal(tlm_jv_str(tlm_jv_get(v, "s")), "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xc3\xa9");
	assert_true(tlm_jv_get(v, "t")->b);
	assert_int_equal(tlm_jv_get(v, "n")->type, TLM_JV_NULL);
	assert_int_equal(tlm_jv_len(tlm_jv_get(v, "a")), 2);
	assert_int_equal(tlm_jv_get(v, "nul")->len, 3);
	assert_null(tlm_jv_get(v, "missing"));
	assert_null(tlm_jv_str(tlm_jv_get(v, "u")));
	tlm_json_free(v);

	/* depth */
	char deep[2 * TLM_JSON_MAX_DEPTH + 8];
	size_t k = 0;
	for (int d2 = 0; d2 < TLM_JSON_MAX_DEPTH + 1; d2++)
		deep[k++] = '[';
	for (int d2 = 0; d2 < TLM_JSON_MAX_DEPTH + 1; d2++)
		deep[k++] = ']';
	assert_null(tlm_json_parse(deep, k, err, sizeof err));
	assert_non_null(strstr(err, "nested deeper"));
	v = tlm_json_parse(deep + 1, k - 2, err, sizeof err);
	assert_non_null(v);
	tlm_json_free(v);
}

/* ---- diff on synthetic runs ------------------------------------------------- */

/* Two "runs" of one program loaded at different addresses: the resolver
 * names a frame after its address within the module (ip & 0xfffff). */
static char names[64][2][32];

static size_t moved_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	unsigned off = (unsigned)(ip & 0xfffff);
	out->module = "/opt/app/app";
	out->module_offset = off;
	if (off >= 0x90000) /* no symbols there */
		return 1;
	unsigned k = (off >> 12) % 64;
	snprintf(names[k][0], sizeof names[k][0], "fn%u", k);
	snprintf(names[k][1], sizeof names[k][1], "/build/%s/app.c", ctx ? "b" : "a");
	out->function = names[k][0];
	out->file = names[k][1];
	out->line = (int)k * 10;
	return 1;
}

/* One run: a leak from each of the stacks in leaks[] (count allocations of
 * size bytes over the whole run), with the module loaded at base. */
struct leak_spec { uint64_t off[2]; unsigned count; uint64_t size; };

static struct tlm_report *leak_run(uint64_t base, const struct leak_spec *s, size_t n, bool moved_ctx,
				   char **path)
{
	struct rt *t = rt_open();
	for (size_t i = 0; i < n; i++) {
		uint64_t ip[2] = {base + s[i].off[0], base + s[i].off[1]};
		rt_stack(t, (uint32_t)i + 1, ip, 2);
	}
	uint64_t addr = DEV0;
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0; k < s[i].count; k++) {
			rt_alloc(t, TLM_KIND_DEVICE, addr, s[i].size, (uint64_t)k * 90 * MS / (s[i].count - 1) + i, (uint32_t)i + 1, 0);
			addr += 0x10000;
		}
	struct tlm_report *r = build(t, 100 * MS, path);
	tlm_report_set_resolver(r, moved_resolve, moved_ctx ? (void *)1 : NULL);
	return r;
}

static void test_diff_synthetic(void **state)
{
	(void)state;
	/* base: A (fn1<-fn2) 10 x 100, B (fn3<-fn2) 10 x 50, U (no symbols) 5 x 10
	 * new:  A 10 x 300, C (fn4<-fn2) 10 x 7, U 5 x 10; loaded elsewhere, built
	 * in another directory */
	struct leak_spec base[] = {
		{{0x1000, 0x2000}, 10, 100}, {{0x3000, 0x2000}, 10, 50}, {{0x91000, 0x2000}, 5, 10},
	};
	struct leak_spec newer[] = {
		{{0x1000, 0x2000}, 10, 300}, {{0x4000, 0x2000}, 10, 7}, {{0x91000, 0x2000}, 5, 10},
	};
	char *p1, *p2, err[256];
	struct tlm_report *r1 = leak_run(0x400000, base, 3, false, &p1);
	struct tlm_report *r2 = leak_run(0x7f1234500000ULL, newer, 3, true, &p2);
	assert_int_equal(r1->nleaks, 3);
	assert_int_equal(r2->nleaks, 3);
	struct tlm_diff_side a, b;
	assert_int_equal(tlm_diff_load_report(r1, &a, err, sizeof err), 0);
	assert_int_equal(tlm_diff_load_report(r2, &b, err, sizeof err), 0);
	assert_int_equal(a.leak_bytes, 1000 + 500 + 50);
	assert_int_equal(b.leak_bytes, 3000 + 70 + 50);
	struct tlm_diff d;
	assert_int_equal(tlm_diff_compute(&a, &b, true, 1569, &d), 0);
	assert_int_equal(d.leak_growth, 3120 - 1550);
	assert_true(d.failed); /* 1570 > 1569 */
	assert_int_equal(d.nleaks, 4);
	/* by |delta|: A +2000, B -500, C +70, U 0 */
	assert_int_equal(d.leaks[0].status, TLM_DIFF_GREW);
	assert_int_equal(d.leaks[0].before_bytes, 1000);
	assert_int_equal(d.leaks[0].after_bytes, 3000);
	assert_int_equal(d.leaks[0].delta_bytes, 2000);
	assert_int_equal(d.leaks[0].delta_count, 0);
	assert_int_equal(d.leaks[1].status, TLM_DIFF_GONE);
	assert_int_equal(d.leaks[1].delta_bytes, -500);
	assert_int_equal(d.leaks[2].status, TLM_DIFF_NEW);
	assert_int_equal(d.leaks[2].delta_bytes, 70);
	assert_int_equal(d.leaks[3].status, TLM_DIFF_SAME); /* matched by module + offset */
	assert_int_equal(d.leaks[3].after_bytes, 50);
	assert_int_equal(d.ndev, 1);
	assert_int_equal(d.dev[0].before->peak_reserved, 1550);
	assert_int_equal(d.dev[0].after->peak_reserved, 3120);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_json(&d, f), 0);
	fclose(f);
	struct tlm_jv *j = parse(buf);
	assert_string_equal(tlm_jv_str(tlm_jv_get(j, "schema")), "tlm-diff/1");
	const struct tlm_jv *g = tlm_jv_get(j, "gate");
	assert_true(tlm_jv_get(g, "failed")->b);
	assert_int_equal(tlm_jv_len(tlm_jv_get(g, "grown_sites")), 2);
	tlm_json_free(j);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_text(&d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "sites: 1 grew, 0 shrank, 1 new, 1 gone, 1 same"));
	assert_non_null(strstr(buf, "at   fn1 (app.c:10)"));
	for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1)
		assert_true(nl - p <= 100);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	tlm_diff_gate_message(&d, f);
	fclose(f);
	assert_non_null(strstr(buf, "grew by 1570 B"));
	assert_non_null(strstr(buf, "+2.0 KiB on device 0 (grew site, 1000 -> 3000 B):"));
	assert_non_null(strstr(buf, "fn1 (app.c:10)"));
	assert_non_null(strstr(buf, "fn4 (app.c:40)"));
	assert_null(strstr(buf, "fn3"));
	free(buf);
	tlm_diff_free(&d);
	assert_int_equal(tlm_diff_compute(&a, &b, true, 1570, &d), 0);
	assert_false(d.failed); /* not more than the limit */

	/* AT PEAK: everything was live at the peak, so the same sites and deltas */
	assert_true(a.has_peak && b.has_peak);
	assert_int_equal(a.peak_bytes, 1550);
	assert_int_equal(b.peak_bytes, 3120);
	assert_int_equal(d.npeak, 4);
	assert_int_equal(d.peak[0].status, TLM_DIFF_GREW);
	assert_int_equal(d.peak[0].delta_bytes, 2000);
	assert_int_equal(d.peak[1].status, TLM_DIFF_GONE);
	assert_int_equal(d.peak[2].status, TLM_DIFF_NEW);
	assert_false(d.peak_gate);
	tlm_diff_peak_gate(&d, 1570); /* the peak grew by 1570: exactly the limit passes */
	assert_false(d.peak_failed);
	tlm_diff_peak_gate(&d, 1569);
	assert_true(d.peak_failed);
	buf = NULL;
	f = open_memstream(&buf, &len);
	tlm_diff_gate_message(&d, f); /* the leak gate passed: only the peak's message */
	fclose(f);
	assert_string_equal(buf, "tlm diff: peak allocated of device 0 (device) grew by 1570 B (+1.5 KiB), more than "
				 "--fail-on-peak-growth 1569\n"
				 "  +2.0 KiB on device 0 (grew site, 1000 -> 3000 B):\n"
				 "        at   fn1 (app.c:10) [app]\n"
				 "        from fn2 (app.c:20) [app]\n"
				 "  +70 B on device 0 (new site, 0 -> 70 B):\n"
				 "        at   fn4 (app.c:40) [app]\n"
				 "        from fn2 (app.c:20) [app]\n");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_text(&d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\nAT PEAK: 1.5 KiB -> 3.0 KiB (+1.5 KiB); sites: 1 grew, 0 shrank, 1 new, 1 gone, "
				    "1 same\n"));
	assert_non_null(strstr(buf, "\ngate: peak allocated +1.5 KiB on the device that grew most, limit +1569 B: "
				    "FAILED\n"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_json(&d, f), 0);
	fclose(f);
	j = parse(buf);
	const struct tlm_jv *pk = tlm_jv_get(j, "at_peak");
	int64_t v;
	assert_true(tlm_jv_i64(tlm_jv_get(pk, "delta_bytes"), &v) && v == 1570);
	assert_int_equal(tlm_jv_len(tlm_jv_get(pk, "sites")), 4);
	g = tlm_jv_get(j, "gate");
	assert_true(tlm_jv_get(g, "peak_failed")->b);
	assert_true(tlm_jv_i64(tlm_jv_get(g, "fail_on_peak_growth"), &v) && v == 1569);
	assert_int_equal(tlm_jv_len(tlm_jv_get(g, "grown_peak_devices")), 1);
	tlm_json_free(j);
	free(buf);
	tlm_diff_free(&d);

	/* a report from before AT PEAK: not compared, said so */
	const char *old_rep = "{\"schema\":\"tlm-report/1\",\"devices\":[],\"leaks\":[],\"live_at_end\":[]}";
	struct tlm_diff_side o;
	assert_int_equal(tlm_diff_load_json("old.json", old_rep, strlen(old_rep), &o, err, sizeof err), 0);
	assert_false(o.has_peak);
	assert_int_equal(tlm_diff_compute(&o, &b, false, 0, &d), 0);
	assert_int_equal(d.npeak, 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_text(&d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\nAT PEAK: not compared (BASE is a report from a tlm without it)\n"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tlm_diff_json(&d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"at_peak\":null,"));
	free(buf);
	tlm_diff_free(&d);
	tlm_diff_side_free(&o);

	/* a report that is not one */
	struct tlm_diff_side c;
	const char *notrep = "{\"schema\":\"tlm-diff/1\"}";
	assert_int_equal(tlm_diff_load_json("x", notrep, strlen(notrep), &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "not a report"));
	const char *badsite = "{\"schema\":\"tlm-report/1\",\"devices\":[],\"leaks\":[{\"device\":0}],"
			      "\"live_at_end\":[]}";
	assert_int_equal(tlm_diff_load_json("x", badsite, strlen(badsite), &c, err, sizeof err), -1);
	assert_non_null(strstr(err, "leaks[0]"));

	tlm_diff_side_free(&a);
	tlm_diff_side_free(&b);
	done(r1, p1);
	done(r2, p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series_exact),
		cmocka_unit_test(test_series_bounded),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_html_gc_freed),
		cmocka_unit_test(test_chrome),
		cmocka_unit_test(test_collapsed),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_json_in),
		cmocka_unit_test(test_diff_synthetic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
