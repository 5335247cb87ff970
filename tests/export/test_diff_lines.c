/* SPDX-License-Identifier: MIT */
/*
 * test_diff_lines.c - `tlm diff` text as a reader meets it: two figures and
 * a change never look equal, nothing changed means no empty table, a cut
 * Python stack is flagged in text and JSON, and "1 more frame".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff/diff.h"

/* A report with one live-at-end site of bytes (frames: 5 native + 'extra'
 * more), and its device peak. */
static char *report(uint64_t bytes, unsigned frames, bool cut, double frag)
{
	static char buf[8192];
	char st[4096] = "";
	for (unsigned i = 0; i < frames; i++) {
		char fr[256];
		snprintf(fr, sizeof fr,
			 "%s{\"kind\":\"python\",\"function\":\"f%u\",\"file\":\"/src/m.py\",\"line\":%u,"
			 "\"module\":null,\"ip\":\"0x0\",\"offset\":null,\"inlined\":false,\"stale\":false}",
			 i ? "," : "", i, 10 + i);
		strcat(st, fr);
	}
	snprintf(buf, sizeof buf,
		 "{\"schema\":\"tlm-report/1\",\"devices\":[{\"device\":0,\"kind\":\"device\","
		 "\"peak_reserved_bytes\":%llu,\"peak_allocated_bytes\":%llu,\"fragmentation_at_peak\":%.4f}],"
		 "\"leaks\":[],\"live_at_end\":[{\"device\":0,\"bytes\":%llu,\"count\":3,\"stack\":[%s]%s}],"
		 "\"at_peak\":[]}",
		 (unsigned long long)bytes, (unsigned long long)bytes, frag, (unsigned long long)bytes, st,
		 cut ? ",\"python_stack_cut\":true" : "");
	return strdup(buf);
}

static char *diff_text(const char *base, const char *newer, struct tlm_diff *d, bool json)
{
	struct tlm_diff_side a, b;
	char err[256];
	assert_int_equal(tlm_diff_load_json("a.json", base, strlen(base), &a, err, sizeof err), 0);
	assert_int_equal(tlm_diff_load_json("b.json", newer, strlen(newer), &b, err, sizeof err), 0);
	assert_int_equal(tlm_diff_compute(&a, &b, false, 0, d), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(json ? tlm_diff_json(d, f) : tlm_diff_text(d, f), 0);
	fclose(f);
	tlm_diff_free(d);
	tlm_diff_side_free(&a);
	tlm_diff_side_free(&b);
	return buf;
}

/* 12.1 MiB -> 12.1 MiB (+70.0 KiB) read as two equal figures and a change. */
static void test_precision(void **state)
{
	(void)state;
	uint64_t before = 12650000, after = before + 70 * 1024;
	char *a = report(before, 2, false, 0.1012), *b = report(after, 2, false, 0.1041);
	struct tlm_diff d;
	char *t = diff_text(a, b, &d, false);
	assert_non_null(strstr(t, "\nLIVE AT END: 12.06 MiB -> 12.13 MiB (+70.0 KiB); sites: 1 grew,"));
	assert_non_null(strstr(t, "  grew       0      12.06 MiB         3      12.13 MiB         3      +70.0 KiB"));
	assert_non_null(strstr(t, "    peak reserved    12.06 MiB -> 12.13 MiB (+70.0 KiB)\n"));
	assert_non_null(strstr(t, "    frag at peak     0.1012 -> 0.1041 (+0.0029)\n"));
	assert_null(strstr(t, "12.1 MiB"));
	free(t);
	free(a);
	free(b);
	/* 2 bytes apart: even 4 decimals look the same, so bytes */
	a = report(before, 2, false, 0), b = report(before + 2, 2, false, 0);
	t = diff_text(a, b, &d, false);
	assert_non_null(strstr(t, "\nLIVE AT END: 12650000 B -> 12650002 B (+2 B);"));
	free(t);
	free(a);
	free(b);
}

/* The same run twice: the head line says so, no table header follows. */
static void test_nothing_changed(void **state)
{
	(void)state;
	char *a = report(1 << 20, 2, false, 0);
	struct tlm_diff d;
	char *t = diff_text(a, a, &d, false);
	assert_non_null(strstr(t, "\nLIVE AT END: 1.0 MiB -> 1.0 MiB (0 B); sites: 0 grew, 0 shrank, 0 new, 0 gone, "
				  "1 same\n\n"));
	assert_null(strstr(t, "bytes before"));
	free(t);
	free(a);
}

/* A stack one frame longer than the table shows: "1 more frame"; a cut
 * Python stack is said in text and carried in the JSON. */
static void test_more_frames_and_cut(void **state)
{
	(void)state;
	char *a = report(1 << 20, 5, false, 0), *b = report(2 << 20, 5, true, 0);
	struct tlm_diff d;
	char *t = diff_text(a, b, &d, false);
	assert_non_null(strstr(t, "\n        ... 1 more frame (the Python stack was cut at 64 frames)\n"));
	assert_null(strstr(t, "1 more frames"));
	free(t);
	t = diff_text(a, b, &d, true);
	assert_non_null(strstr(t, "\"python_stack_cut\":true"));
	free(t);
	t = diff_text(b, a, &d, true); /* the new side's stack is shown: not cut */
	assert_null(strstr(t, "python_stack_cut"));
	free(t);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precision),
		cmocka_unit_test(test_nothing_changed),
		cmocka_unit_test(test_more_frames_and_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
