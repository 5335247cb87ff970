/* SPDX-License-Identifier: MIT */
/*
 * test_export_diff.c - the strict JSON reader, and the diff on synthetic
 * traces (tests/report/rt.h): site matching across runs whose addresses
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
#include "encoders/json_in.h"
#include "encoders/json_out.h"
#include "render/export.h"
#include "xt.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL
#define DEV1 0x220000000000ULL

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
		cmocka_unit_test(test_json_in),
		cmocka_unit_test(test_diff_synthetic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
