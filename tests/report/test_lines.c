/* SPDX-License-Identifier: MIT */
/*
 * test_lines.c - lines as a reader meets them, across the renderers of one
 * report: one time origin said once and used by every time printed.
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

#include "export.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_time_origin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
