/* SPDX-License-Identifier: MIT */
/*
 * test_at_peak.c - what held memory at each allocated peak, by site: the
 * bytes live at that moment equal the peak, and each site's persistent part
 * (still live at the end) and transient part (freed before) are exact, in
 * the report, its text and its JSON; an allocator tap's first block starts
 * the section over at the block layer.
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
#define DEV 0x700000000000ull

static const struct tlm_report_peak_site *find(const struct tlm_report *r, int device, uint32_t stack)
{
	for (size_t i = 0; i < r->nat_peak; i++)
		if (r->at_peak[i].device == device && r->at_peak[i].stack_id == stack)
			return &r->at_peak[i];
	return NULL;
}

/* Two training steps: weights (stack 1) live to the end; step 1's forward
 * pass (stack 2) holds 4 activations at the peak, one of which is kept for
 * good (a leak); the backward pass (stack 3) frees them and allocates
 * gradients; step 2 peaks lower. A second device peaks on its own. */
static void test_training_steps(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	for (uint32_t s = 1; s <= 4; s++) {
		ip[0] = 0x401000 + s * 0x1000;
		rt_stack(t, s, ip, 1);
	}
	uint64_t now = 0, a = DEV;
	for (int i = 0; i < 3; i++)
		rt_alloc(t, TLM_KIND_DEVICE, a + (uint64_t)i * 0x1000, 100, now += MS, 1, 0);
	for (int step = 0; step < 2; step++) {
		int acts = step ? 3 : 4;
		uint64_t base = DEV + 0x100000 * (uint64_t)(step + 1);
		for (int i = 0; i < acts; i++)
			rt_alloc(t, TLM_KIND_DEVICE, base + (uint64_t)i * 0x1000, 50, now += MS, 2, 0);
		/* the peak of step 1: 300 + 200 */
		for (int i = step ? 0 : 1; i < acts; i++)
			rt_free(t, TLM_KIND_DEVICE, base + (uint64_t)i * 0x1000, now += MS, 0);
		for (int i = 0; i < 2; i++)
			rt_alloc(t, TLM_KIND_DEVICE, base + 0x80000 + (uint64_t)i * 0x1000, 20, now += MS, 3, 0);
		for (int i = 0; i < 2; i++)
			rt_free(t, TLM_KIND_DEVICE, base + 0x80000 + (uint64_t)i * 0x1000, now += MS, 0);
	}
	rt_alloc(t, TLM_KIND_DEVICE, DEV + 0x900000, 7000, now += MS, 4, 1); /* device 1 */
	rt_free(t, TLM_KIND_DEVICE, DEV + 0x900000, now += MS, 1);
	char *path = rt_close(t, true, now + MS);
	struct tlm_report *r = rt_report(path);

	assert_int_equal(r->nat_peak, 3);
	const struct tlm_report_peak_site *w = find(r, 0, 1), *act = find(r, 0, 2), *d1 = find(r, 1, 4);
	assert_non_null(w);
	assert_non_null(act);
	assert_non_null(d1);
	assert_null(find(r, 0, 3)); /* gradients came after the peak */
	assert_ptr_equal(w, &r->at_peak[0]); /* device 0 by bytes, then device 1 */
	assert_ptr_equal(act, &r->at_peak[1]);
	assert_int_equal(w->bytes, 300);
	assert_int_equal(w->count, 3);
	assert_int_equal(w->persistent_bytes, 300);
	assert_int_equal(w->persistent_count, 3);
	assert_int_equal(act->bytes, 200);
	assert_int_equal(act->count, 4);
	assert_int_equal(act->persistent_bytes, 50);
	assert_int_equal(act->persistent_count, 1);
	assert_int_equal(d1->bytes, 7000);
	assert_int_equal(d1->persistent_bytes, 0);
	assert_int_equal(r->devices[0].peak_allocated, w->bytes + act->bytes);

	char *txt = rt_render(r, tlm_report_text);
	if (getenv("TLM_TEST_SHOW"))
		fputs(txt, stderr);
	assert_non_null(strstr(txt, "\nAT PEAK: what held memory when allocated memory peaked"));
	assert_non_null(strstr(txt, "\ndev 0 device: 500 B at 0.007s: 150 B transient, 350 B persistent, in 2 sites\n"
				    "   1.       300 B in 3: 0 B transient in 0, 300 B persistent in 3\n"
				    "        at   fn_402000 (f402000.c:496) [libapp.so]\n"));
	assert_non_null(strstr(txt, "   2.       200 B in 4: 150 B transient in 3, 50 B persistent in 1\n"));
	assert_non_null(strstr(txt, "\ndev 1 device: 6.8 KiB at 0.025s: 6.8 KiB transient, 0 B persistent, in 1 site\n"));
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"at_peak\":[{\"device\":0,\"kind\":\"device\",\"bytes\":300,\"count\":3,"
				     "\"transient_bytes\":0,\"transient_count\":0,\"persistent_bytes\":300,"
				     "\"persistent_count\":3,\"label\":\"dev 0: fn_402000 (f402000.c:496) [libapp.so]\","
				     "\"stack\":[{\"kind\":\"native\",\"function\":\"fn_402000\""));
	assert_non_null(strstr(json, "{\"device\":0,\"kind\":\"device\",\"bytes\":200,\"count\":4,"
				     "\"transient_bytes\":150,\"transient_count\":3,\"persistent_bytes\":50,"
				     "\"persistent_count\":1,"));
	free(txt);
	free(json);
	char *html = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);
	assert_int_equal(tlm_report_html(r, f, err, sizeof err), 0);
	fclose(f);
	assert_non_null(strstr(html, "<table class=\"sites at-peak\">"));
	assert_non_null(strstr(html, "<tr class=\"site\"><td class=\"num\">2</td><td class=\"num\">0</td><td>device</td>"
				     "<td class=\"num\" title=\"200 bytes\">200 B</td><td class=\"num\">4</td>"
				     "<td class=\"num\" title=\"150 bytes\">150 B</td>"
				     "<td class=\"num\" title=\"50 bytes\">50 B</td>"));
	free(html);
	/* the same as folded stacks: one line per site, the bytes at the peak */
	char *folded = NULL;
	f = open_memstream(&folded, &len);
	assert_int_equal(tlm_report_collapsed(r, f, TLM_COLLAPSED_PEAK_ALLOCATED, err, sizeof err), 0);
	fclose(f);
	assert_string_equal(folded, "device 0;fn_402000 (f402000.c:496) 300\n"
				    "device 0;fn_403000 (f403000.c:592) 200\n"
				    "device 1;fn_405000 (f405000.c:784) 7000\n");
	free(folded);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* With a tap, the section is about blocks: driver segments seen before the
 * first block do not count, and each later peak replaces the earlier. */
static void test_blocks_replace_segments(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t now = 0;
	rt_alloc(t, TLM_KIND_DEVICE, DEV, 1 << 20, now += MS, 5, 0); /* a segment */
	struct tlm_event b = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_BLOCK, .api = TLM_API_c10_reportMemoryUsageToProfiler,
			      .flags = TLM_EVF_NO_TOTALS};
	for (int i = 0; i < 3; i++) { /* 3 blocks of 1000 (stack 6), 1 of 4000 (stack 7) */
		b.op = TLM_OP_ALLOC;
		b.addr = DEV + (uint64_t)i * 0x1000;
		b.size = 1000;
		b.stack_id = 6;
		b.time_ns = now += MS;
		rt_event(t, &b);
	}
	b.addr = DEV + 0x8000;
	b.size = 4000;
	b.stack_id = 7;
	b.time_ns = now += MS;
	rt_event(t, &b); /* the peak: 7000 */
	b.op = TLM_OP_FREE;
	b.size = 0;
	b.time_ns = now += MS;
	rt_event(t, &b); /* the 4000 is freed: transient */
	b.addr = DEV;
	b.time_ns = now += MS;
	rt_event(t, &b); /* one 1000 is freed */
	char *path = rt_close(t, true, now + MS);
	struct tlm_report *r = rt_report(path);
	assert_int_equal(r->nat_peak, 2);
	assert_int_equal(r->at_peak[0].stack_id, 7);
	assert_int_equal(r->at_peak[0].bytes, 4000);
	assert_int_equal(r->at_peak[0].persistent_bytes, 0);
	assert_int_equal(r->at_peak[1].stack_id, 6);
	assert_int_equal(r->at_peak[1].bytes, 3000);
	assert_int_equal(r->at_peak[1].count, 3);
	assert_int_equal(r->at_peak[1].persistent_bytes, 2000);
	assert_int_equal(r->at_peak[1].persistent_count, 2);
	assert_null(find(r, 0, 5));
	tlm_report_free(r);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_training_steps),
		cmocka_unit_test(test_blocks_replace_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
