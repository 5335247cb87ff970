/* SPDX-License-Identifier: MIT */
/*
 * test_lines.c - lines as a reader meets them, across the renderers of one
 * report: one time origin said once and used by every time printed; one
 * labelling rule (labels.c) naming sites that differ differently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "render/export.h"
#include "rt.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL

static char *html_of(struct tlm_report *r)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tlm_report_html(r, f, err, sizeof err), 0);
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* First event at 24 ms, the peak at 224 ms, the end at 239 ms: every output
 * gives the times from the trace start, and the run's length is the end's
 * time (a peak is never later than the run). */
static void test_one_time_origin(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1 << 20, 24 * MS, 0, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + (1 << 21), 1 << 20, 224 * MS, 0, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + (1 << 21), 230 * MS, 0);
	char *path = rt_close(t, true, 239 * MS);
	struct tlm_report *r = rt_report(path);
	char *sum = rt_render(r, tlm_report_summary), *txt = rt_render(r, tlm_report_text);
	char *html = html_of(r);
	assert_non_null(strstr(sum, "tlm: pid 4242, 0.239 s since the trace start, exit clean,"));
	assert_non_null(strstr(sum, " reserved at 0.224s, frag 0.00,"));
	assert_non_null(strstr(txt, "\ntimes:      seconds since the trace start (libtlm.so loaded in the process)\n"
				    "run:        ended at 0.239s, first event at 0.024s, 3 events, exit clean,"));
	assert_int_equal(count(txt, "since the trace start"), 1);
	assert_non_null(strstr(txt, "      2.0 MiB    0.224s"));
	assert_non_null(strstr(html, "ended at 0.239s, first event at 0.024s, 3 events"));
	assert_int_equal(count(html, "since the trace start"), 1);
	free(sum);
	free(txt);
	free(html);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* The fake symbolizer names ip 0x40X000 "fn_40X000 (f40X000.c:...)". */
#define WRAP 0x401000u   /* the wrapper all allocations go through */
#define CALL_A 0x402000u
#define CALL_B 0x403000u
#define MAIN 0x404000u

static char *chrome_of(struct tlm_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tlm_report_chrome(r, f), 0);
	fclose(f);
	return buf;
}

/* Allocations through one wrapper from two callers: every summary line, the
 * gc-freed top and the Chrome export's OOM name the caller, not the wrapper;
 * the same site on two devices says which device. */
static void test_wrapper_and_devices(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	const uint64_t a[] = {WRAP, CALL_A, MAIN}, b[] = {WRAP, CALL_B, MAIN};
	rt_stack(t, 1, a, 3);
	rt_stack(t, 2, b, 3);
	uint64_t addr = DEV0;
	for (int dev = 0; dev < 2; dev++) /* site A leaks on both devices, B on device 0 */
		for (int i = 0; i < 8; i++, addr += 1 << 21)
			rt_alloc(t, TLM_KIND_DEVICE, addr, 1 << 20, (uint64_t)(1 + i * 10) * MS, 1, dev);
	for (int i = 0; i < 8; i++, addr += 1 << 21)
		rt_alloc(t, TLM_KIND_DEVICE, addr, 2 << 20, (uint64_t)(2 + i * 10) * MS, 2, 0);
	/* a reference cycle's memory from B, freed by the GC */
	rt_alloc(t, TLM_KIND_DEVICE, addr, 4 << 20, 5 * MS, 2, 0);
	struct tlm_event fe = {.time_ns = 6 * MS, .op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .addr = addr,
			       .flags = TLM_EVF_GC_FREED};
	rt_event(t, &fe);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ull << 40, 7 * MS, 1, 0, 2, 4096); /* OOM from A */
	char *path = rt_close(t, true, 100 * MS);
	struct tlm_report *r = rt_report(path);
	assert_int_equal(r->nleaks, 3);
	char *sum = rt_render(r, tlm_report_summary), *js = rt_render(r, tlm_report_json), *ch = chrome_of(r);
	assert_non_null(strstr(sum, "  dev 0: fn_403000 (f403000.c:"));
	assert_non_null(strstr(sum, "  dev 0: fn_402000 (f402000.c:"));
	assert_non_null(strstr(sum, "  dev 1: fn_402000 (f402000.c:"));
	assert_null(strstr(sum, "fn_401000")); /* the wrapper names no line */
	assert_non_null(strstr(sum, "top: fn_403000 (f403000.c:"));
	assert_non_null(strstr(ch, "\"at\":\"fn_402000 (f402000.c:"));
	assert_non_null(strstr(js, "\"label\":\"dev 1: fn_402000 (f402000.c:"));
	free(sum);
	free(js);
	free(ch);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Four sites through the same two frames, told apart only by their third:
 * the HTML "Live at end" table gives four labels, and the text shows that
 * frame even past the frames it prints. */
static void test_four_sites_four_labels(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	for (uint32_t s = 0; s < 4; s++) {
		uint64_t ip[9] = {WRAP, CALL_A, 0x410000, 0x411000, 0x412000, 0x413000, 0x414000, 0x420000u + s * 0x1000,
				  MAIN};
		rt_stack(t, s + 1, ip, 9);
		rt_alloc(t, TLM_KIND_DEVICE, DEV0 + s * (1 << 21), (s + 1) << 20, (s + 1) * MS, s + 1, 0);
	}
	char *path = rt_close(t, true, 10 * MS);
	struct tlm_report *r = rt_report(path);
	char *html = html_of(r), *txt = rt_render(r, tlm_report_text);
	for (unsigned s = 0; s < 4; s++) {
		char want[96];
		snprintf(want, sizeof want, "<summary>fn_42%u000 (f42%u000.c:", s, s);
		assert_non_null(strstr(html, want));
		snprintf(want, sizeof want, "\n        from fn_42%u000 (f42%u000.c:", s, s);
		assert_non_null(strstr(txt, want));
	}
	assert_non_null(strstr(txt, "        ... 1 more frame\n        from fn_420000"));
	free(html);
	free(txt);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_time_origin),
		cmocka_unit_test(test_wrapper_and_devices),
		cmocka_unit_test(test_four_sites_four_labels),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
