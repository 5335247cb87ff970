/* SPDX-License-Identifier: MIT */
/*
 * test_report_text.c - the text report on synthetic traces: line width with
 * long names, and the useful frame (the first outside the CUDA libraries).
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

/* ---- text width ---------------------------------------------------------- */

static char long_name[400];

static size_t long_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	out->function = long_name;
	out->file = long_name;
	out->line = 123456;
	out->module = long_name;
	out->inlined = ip & 1;
	out->stale = ip & 2;
	return 1;
}

static void check_lines(const char *text, size_t max_lines)
{
	size_t lines = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl);
		if (nl - p > 100)
			fprintf(stderr, "too wide (%d): %.*s\n", (int)(nl - p), (int)(nl - p), p);
		assert_true(nl - p <= 100);
		lines++;
		p = nl + 1;
	}
	assert_true(lines <= max_lines);
}

static void test_text_width(void **state)
{
	(void)state;
	memset(long_name, 'x', sizeof long_name - 1);
	struct rt *t = rt_open();
	uint64_t ip[8] = {0x401001, 0x401002, 0x401003, 0x401004, 0x401005, 0x401006, 0x401007, 0x401008};
	for (uint32_t s = 1; s <= 20; s++)
		rt_stack(t, s, ip, 8);
	uint64_t a = 0x100000;
	/* 12 devices (+ host), 15 leak sites, 6 OOMs, churn */
	for (int d = -1; d < 12; d++)
		rt_alloc(t, d < 0 ? TLM_KIND_HOST_PINNED : TLM_KIND_DEVICE, a += 0x1000, 123456789ULL * 1000, 0, 1, d);
	for (int i = 0; i < 100; i++)
		for (uint32_t s = 1; s <= 15; s++)
			rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 1ULL << 33, (uint64_t)i * MS, s, 3);
	for (int i = 0; i < 6; i++)
		rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, ~0ULL, 100 * MS, 2, 9999, 2, ~0ULL);
	for (int i = 0; i < 20; i++) {
		rt_alloc(t, TLM_KIND_DEVICE, 0x42, 1, 100 * MS, 16, -32768);
		rt_free(t, TLM_KIND_DEVICE, 0x42, 100 * MS, -32768);
	}
	rt_free(t, TLM_KIND_DEVICE, 0x43, 100 * MS, 0);
	rt_prop(t, "cupti.detail", long_name); /* every optional line of the summary */
	rt_prop(t, "cupti", "held");
	char *path;
	struct tlm_report *r = rt_build(t, false, 0, &path);
	tlm_report_set_resolver(r, long_resolve, NULL);
	assert_int_equal(r->nleaks, 15);
	assert_int_equal(r->ooms_total, 6);
	char *txt = rt_render(r, tlm_report_text);
	check_lines(txt, 100000);
	assert_non_null(strstr(txt, "frees of unknown addresses: 1"));
	free(txt);
	txt = rt_render(r, tlm_report_summary);
	check_lines(txt, 25);
	assert_non_null(strstr(txt, "\nnote: CUPTI held by another tool, so calls that bypass tlm's hooks could not "
				    "be seen\n"));
	assert_non_null(strstr(txt, "full report: tlm report "));
	assert_non_null(strstr(txt, path));
	free(txt);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* The summary's "most useful frame": the first in the program's own code. */
static const char *const mods[] = {"/usr/lib/libcudart.so.13", "/opt/torch/lib/libtorch_cuda.so",
				   "/home/u/app/train", "/lib/x86_64-linux-gnu/libc.so.6"};

static size_t lib_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	out->function = ip == 0x2 ? "record_loss" : "lib_fn";
	out->module = mods[ip & 3];
	return 1;
}

static void test_useful_frame(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x1, 0x2, 0x3, 0x4};
	rt_stack(t, 1, ip, 4);
	uint64_t ip2[] = {0x1, 0x5};
	rt_stack(t, 2, ip2, 2);
	rt_alloc(t, TLM_KIND_DEVICE, 0x1000, 256, 0, 1, 0);
	struct tlm_report *r = rt_build(t, true, 4 * MS, NULL);
	tlm_report_set_resolver(r, lib_resolve, NULL);
	const struct tlm_frame *f = tlm_report_useful_frame(r, 1);
	assert_non_null(f);
	assert_int_equal(f->ip, 0x2); /* libtorch at 0x1 skipped */
	assert_string_equal(f->function, "record_loss");
	f = tlm_report_useful_frame(r, 2); /* all library frames: the innermost */
	assert_int_equal(f->ip, 0x1);
	assert_null(tlm_report_useful_frame(r, 0));
	tlm_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_width),
		cmocka_unit_test(test_useful_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
