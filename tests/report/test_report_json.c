/* SPDX-License-Identifier: MIT */
/*
 * test_report_json.c - the report's JSON on synthetic traces: the golden
 * document and hostile names (escaping, valid UTF-8).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analysis/internal.h"
#include "encoders/json_out.h"
#include "rt.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL

/* ---- JSON -------------------------------------------------------------- */

#define STACK                                                                                                     \
	"{\"kind\":\"native\",\"function\":\"fn_401000\",\"file\":\"src/f401000.c\",\"line\":400,"                   \
	"\"module\":\"/opt/app/libapp.so\",\"ip\":\"0x401000\",\"offset\":\"0x1000\",\"inlined\":false,\"stale\":false}," \
	"{\"kind\":\"native\",\"function\":\"fn_402000\",\"file\":\"src/f402000.c\",\"line\":496,"                   \
	"\"module\":\"/opt/app/libapp.so\",\"ip\":\"0x402000\",\"offset\":\"0x2000\",\"inlined\":false,\"stale\":false}"

static const char golden_fmt[] =
	"{\"schema\":\"tlm-report/1\",\"trace\":\"%s\","
	"\"process\":{\"pid\":4242,\"command\":[\"train\",\"--epochs\",\"3\"],\"exe\":\"/usr/bin/train\","
	"\"exit\":\"clean\",\"signal\":null,\"truncation\":null,\"lost_events\":0,"
	"\"ppid\":1,\"host\":\"testhost\",\"start_realtime_ns\":1700000000000000000,\"rank\":null,"
	"\"local_rank\":null,\"world_size\":null,\"origin\":\"\",\"end_how\":\"exit\",\"exit_status\":null},"
	"\"run\":{\"first_event_ns\":0,\"end_ns\":4000000,\"duration_ns\":4000000,\"events\":3},"
	"\"coverage\":{\"interposition\":3,\"cupti_only\":0,\"cupti_only_calls\":[],\"cupti\":null,\"native_stacks\":null},"
	"\"unmatched_frees\":1,\"inconsistencies\":0,\"failed_allocations\":0,\"failed_frees\":0,"
	"\"ooms_total\":1,\"unknown_events\":0,\"churn_untracked_frees\":0,\"probe_failures\":0,"
	"\"pool_events\":{\"create\":0,\"destroy\":0,\"trim\":0},"
	"\"devices\":[{\"device\":0,\"kind\":\"device\",\"peak_reserved_bytes\":256,\"peak_reserved_time_ns\":0,"
	"\"peak_allocated_bytes\":256,\"peak_allocated_time_ns\":0,\"reserved_bytes_at_end\":256,"
	"\"live_bytes_at_end\":256,\"live_allocations_at_end\":1,\"fragmentation_at_peak\":0.0000,"
	"\"external_fragmentation_at_peak\":null,\"reserved_at_peak_allocated_bytes\":256,"
	"\"allocated_at_peak_reserved_bytes\":256,\"fragmentation_at_reserved_peak\":0.0000,\"allocations\":1,\"frees\":0,\"allocator_reported\":null,"
	"\"owners\":[{\"owner\":\"unknown\",\"peak_bytes\":256,\"peak_time_ns\":0,\"bytes_at_reserved_peak\":256,"
	"\"live_bytes_at_end\":256}],\"forecast\":null}],"
	"\"at_peak\":[{\"device\":0,\"kind\":\"device\",\"bytes\":256,\"count\":1,\"transient_bytes\":0,"
	"\"transient_count\":0,\"persistent_bytes\":256,\"persistent_count\":1,"
	"\"label\":\"fn_401000 (f401000.c:400) [libapp.so]\",\"stack\":[" STACK "],"
	"\"site\":\"fn_401000 (f401000.c:400) \\u003c fn_402000 (f402000.c:496)\"}],"
	"\"live_at_end\":[{\"device\":0,\"bytes\":256,\"count\":1,\"first_ns\":0,\"last_ns\":0,"
	"\"label\":\"fn_401000 (f401000.c:400) [libapp.so]\",\"stack\":[" STACK "]}],"
	"\"leaks\":[],\"gc_freed\":[],"
	"\"ooms\":[{\"device\":0,\"kind\":\"device\",\"time_ns\":1000000,\"requested_bytes\":1073741824,"
	"\"reserved_free_bytes\":0,\"largest_free_bytes\":0,\"device_free_bytes\":1048576,"
	"\"reserved_bytes\":256,\"allocated_bytes\":256,\"fragmentation\":0.0000,"
	"\"external_fragmentation\":null,\"verdict\":\"exhaustion\",\"outcome\":\"raised\",\"retry\":null,\"source\":\"driver\",\"driver_failures\":0,\"driver_request_bytes\":null,"
	"\"owners\":[{\"owner\":\"unknown\",\"bytes\":256}],\"label\":null,\"stack\":[]}],"
	"\"churn\":[],\"steps\":{\"found\":false,\"why_not\":\"no allocation sequence repeats (no site "
	"allocates the same number of times in each of 3 or more segments)\",\"count\":0,\"phases\":[]},\"activations\":null,\"integrity_errors\":[]}\n";

static void test_json_golden(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000, 0x402000};
	rt_stack(t, 1, ip, 2);
	rt_alloc(t, TLM_KIND_DEVICE, 0x1000, 256, 0, 1, 0);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ULL << 30, 1 * MS, 0, 0, 2, 1 << 20);
	rt_free(t, TLM_KIND_DEVICE, 0x9999, 2 * MS, 0);
	char *path;
	struct tlm_report *r = rt_build(t, true, 4 * MS, &path);
	char *got = rt_render(r, tlm_report_json);
	char *want;
	assert_true(asprintf(&want, golden_fmt, path) > 0);
	if (strcmp(got, want))
		fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
	assert_string_equal(got, want);
	free(want);
	free(got);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* A strict JSON validator (RFC 8259) for the hostile-string test. */
static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *jvalue(const char *p);

static const char *jstring(const char *p)
{
	if (*p != '"')
		return NULL;
	for (p++; *p != '"'; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		} else if (c >= 0x80) {
			/* valid UTF-8 only */
			int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : -1;
			if (n < 0 || c > 0xf4)
				return NULL;
			for (int i = 1; i <= n; i++)
				if (((unsigned char)p[i] & 0xc0) != 0x80)
					return NULL;
			p += n;
		}
	}
	return p + 1;
}

static const char *jvalue(const char *p)
{
	p = ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		int obj = *p == '{';
		p = ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				if (!(p = jstring(ws(p))))
					return NULL;
				p = ws(p);
				if (*p++ != ':')
					return NULL;
			}
			if (!(p = jvalue(p)))
				return NULL;
			p = ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return jstring(p);
	if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	char *end;
	strtod(p, &end);
	return end == p ? NULL : end;
}

static int json_valid(const char *s)
{
	const char *p = jvalue(s);
	return p && *ws(p) == 0;
}

static const char evil_fn[] = "evil\"fn\\<script>alert(1)</script>\x01\x1f\t\n\x7f\xff\xc3(\xe2\x80\xa8ok\xc3\xa9";
static const char evil_mod[] = "/tmp/\"quoted\"\\dir/lib\xed\xa0\x80x\xf4\x90\x80\x80.so";

static size_t evil_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	out->function = evil_fn;
	out->file = "a\"b\\c.c";
	out->line = 7;
	out->module = evil_mod;
	return 1;
}

static void test_json_hostile(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	rt_stack(t, 1, ip, 1);
	rt_alloc(t, TLM_KIND_DEVICE, 0x1000, 256, 0, 1, 0);
	char *path;
	struct tlm_report *r = rt_build(t, true, 4 * MS, &path);
	tlm_report_set_resolver(r, evil_resolve, NULL);
	char *got = rt_render(r, tlm_report_json);
	assert_true(json_valid(got));
	assert_non_null(strstr(got, "\"function\":\"evil\\\"fn\\\\\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"
				    "\\u0001\\u001f\\t\\n\\u007f\\ufffd\\ufffd(\\u2028ok\xc3\xa9\""));
	assert_non_null(strstr(got, "\"module\":\"/tmp/\\\"quoted\\\"\\\\dir/lib\\ufffd\\ufffd\\ufffdx"
				    "\\ufffd\\ufffd\\ufffd\\ufffd.so\""));
	assert_non_null(strstr(got, "\"file\":\"a\\\"b\\\\c.c\""));
	free(got);
	/* the text output stays printable ASCII */
	got = rt_render(r, tlm_report_text);
	for (const char *p = got; *p; p++)
		assert_true(*p == '\n' || ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f));
	free(got);
	tlm_report_free(r);
	unlink(path);
	free(path);

	/* escaping edge cases, byte by byte */
	struct { const char *in; size_t n; const char *out; } cases[] = {
		{"\0", 1, "\\u0000"},
		{"\xc3", 1, "\\ufffd"},                 /* truncated sequence at the end */
		{"\xe2\x82", 2, "\\ufffd"},             /* maximal subpart: one U+FFFD */
		{"\xc0\xaf", 2, "\\ufffd\\ufffd"},      /* overlong */
		{"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80"},
		{"\xf5\x80", 2, "\\ufffd\\ufffd"},
		{"&'/", 3, "\\u0026'/"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		tlm__json_escape(f, cases[i].in, cases[i].n);
		fclose(f);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_json_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
