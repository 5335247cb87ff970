/* SPDX-License-Identifier: MIT */
/*
 * test_export.c - the exports on synthetic traces written with the trace
 * writer (tests/report/rt.h): memory over time (exact for few changes,
 * bounded for many), the segment map at the peak, Chrome trace events and
 * folded stacks parsed back, the HTML page with hostile names. The JSON
 * reader and the diff: test_export_diff.c.
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
#include "encoders/json_in.h"
#include "encoders/json_out.h"
#include "render/export.h"
#include "xt.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL
#define DEV1 0x220000000000ULL


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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
