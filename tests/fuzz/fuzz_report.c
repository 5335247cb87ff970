/* SPDX-License-Identifier: MIT */
/*
 * fuzz_report.c - libFuzzer harness of the whole `tlm report` pipeline:
 * tlm_report_build (streaming analysis: replay, accounting, sites, leaks,
 * peaks, churn, OOM verdicts) then the text, summary and JSON renderings,
 * written to /dev/null, and the exports: Chrome trace events, folded stacks
 * (live, at the allocated peak, and at the reserved peak: a second pass over
 * the input), PyTorch's memory snapshot (a pickle; one more pass) and the
 * HTML page (its segment map and active timelines are passes too), which must
 * stay inert: its only scripts are its own, the rest typed data blocks. Like fuzz_reader, each input is tried as it is and with
 * its checksums recomputed, so mutations reach the analysis.
 *
 * Stacks are symbolized by a stand-in resolver that returns hostile names
 * (quotes, backslashes, control bytes, invalid UTF-8, very long names): the
 * real symbolizer would open the ELF files the fuzzed module records name,
 * which is the symbolizer's own test's business (tests/symbolize), not a
 * property of the trace bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "render/export.h"
#include "analysis/report.h"

static char long_name[3000];

static size_t hostile(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	static const char *const fn[] = {
		"main", "a\"quote", "back\\slash", "ctl\x01\x1f\x7f", "bad utf8 \xff\xfe\xc0\x80", "tab\tnew\nline",
		"", "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(...)", long_name,
		"<script>alert(1)</script>", "</title><script src=x>",
	};
	size_t n = max < 3 ? max : (size_t)(ip % 3) + 1;
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].ip = ip;
		out[i].kind = (ip >> 4) & 1 ? TLM_FRAME_PYTHON : TLM_FRAME_NATIVE;
		out[i].function = (ip >> 5) % 11 == 0 ? NULL : fn[(ip + i) % (sizeof fn / sizeof fn[0])];
		out[i].file = (ip >> 6) & 1 ? fn[(ip >> 7) % (sizeof fn / sizeof fn[0])] : NULL;
		out[i].line = (int)(ip & 0xffff) - 100;
		out[i].module = (ip >> 8) & 1 ? "/lib/x86_64-linux-gnu/libc.so.6" : NULL;
		out[i].module_offset = ip >> 3;
		out[i].inlined = i + 1 < n;
		out[i].stale = (ip >> 9) & 1;
	}
	return n;
}

static void report_all(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	char err[256];
	memset(err, 0, sizeof err);
	struct tlm_report *r = tlm_report_build(fuzz_as_file(data, size), err, sizeof err);
	if (!r) {
		if (!err[0] || strchr(err, '\n'))
			__builtin_trap(); /* refused without a one-line reason */
		return;
	}
	tlm_report_set_resolver(r, hostile, NULL);
	tlm_report_text(r, null);
	tlm_report_summary(r, null);
	tlm_report_json(r, null);
	tlm_report_chrome(r, null);
	tlm_report_collapsed(r, null, TLM_COLLAPSED_LIVE, err, sizeof err);
	tlm_report_collapsed(r, null, TLM_COLLAPSED_PEAK_ALLOCATED, err, sizeof err);
	if (tlm_report_collapsed(r, null, TLM_COLLAPSED_PEAK, err, sizeof err) && (!err[0] || strchr(err, '\n')))
		__builtin_trap(); /* the second pass failed without a one-line reason */
	if (tlm_report_torch_snapshot(r, null, err, sizeof err) && (!err[0] || strchr(err, '\n')))
		__builtin_trap(); /* the snapshot's pass failed without a one-line reason */
	fflush(null);
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);
	if (!f)
		abort();
	int rc = tlm_report_html(r, f, err, sizeof err);
	if (fclose(f))
		abort();
	/* inert: the page's own two scripts; every other <script is a typed data
	 * block (the active timelines'), and nothing from the trace closes one early */
	static const char data_block[] = "<script type=\"application/";
	size_t scripts = 0, opens = 0, closers = 0;
	for (const char *p = html; rc == 0 && (p = strstr(p, "<script")); p++) {
		opens++;
		scripts += !strncmp(p, "<script>", 8);
		FUZZ_CHECK(!strncmp(p, "<script>", 8) || !strncmp(p, data_block, sizeof data_block - 1));
	}
	for (const char *p = html; rc == 0 && (p = strstr(p, "</script")); p++)
		closers++;
	FUZZ_CHECK(rc != 0 || (scripts == 2 && closers == opens));
	free(html);
	tlm_report_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!long_name[0])
		memset(long_name, 'x', sizeof long_name - 1);
	fuzz_as_is_and_repaired(data, size, report_all);
	return 0;
}
