/* SPDX-License-Identifier: MIT */
/*
 * test_coverage.c - the report's coverage line: events per source, and the
 * calls only CUPTI saw (TLM_EVF_CUPTI), in text, JSON and the summary.
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

#include "rt.h"

static struct tlm_report *make(int cupti_allocs, int cupti_frees)
{
	struct rt *t = rt_open();
	uint64_t now = 0;
	for (int i = 0; i < 3; i++) { /* three hooked pairs */
		rt_alloc(t, TLM_KIND_DEVICE, 0x100000 + (uint64_t)i * 0x1000, 4096, now += RT_MS, 0, 0);
		rt_free(t, TLM_KIND_DEVICE, 0x100000 + (uint64_t)i * 0x1000, now += RT_MS, 0);
	}
	for (int i = 0; i < cupti_allocs; i++) {
		struct tlm_event e = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = TLM_API_cuMemAlloc_v2,
				      .flags = TLM_EVF_CUPTI, .addr = 0x200000 + (uint64_t)i * 0x1000, .size = 512,
				      .time_ns = now += RT_MS};
		rt_event(t, &e);
	}
	for (int i = 0; i < cupti_frees; i++) {
		struct tlm_event e = {.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .api = TLM_API_cuMemFree_v2,
				      .flags = TLM_EVF_CUPTI, .addr = 0x200000 + (uint64_t)i * 0x1000,
				      .time_ns = now += RT_MS};
		rt_event(t, &e);
	}
	char *path = rt_close(t, true, now + RT_MS);
	struct tlm_report *r = rt_report(path);
	unlink(path);
	free(path);
	return r;
}

static void test_all_interposed(void **s)
{
	(void)s;
	struct tlm_report *r = make(0, 0);
	assert_int_equal(r->cupti_only, 0);
	char *txt = rt_render(r, tlm_report_text);
	assert_non_null(strstr(txt, "\nsources:    interposition 6, CUPTI only 0\n"));
	assert_null(strstr(txt, "bypassed"));
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"coverage\":{\"interposition\":6,\"cupti_only\":0,\"cupti_only_calls\":[]}"));
	free(txt);
	free(json);
	tlm_report_free(r);
}

static void test_bypass_named(void **s)
{
	(void)s;
	struct tlm_report *r = make(3, 2);
	assert_int_equal(r->cupti_only, 5);
	assert_int_equal(r->cupti_only_by_api[TLM_API_cuMemAlloc_v2], 3);
	assert_int_equal(r->cupti_only_by_api[TLM_API_cuMemFree_v2], 2);
	char *txt = rt_render(r, tlm_report_text);
	assert_non_null(strstr(txt, "\nsources:    interposition 6, CUPTI only 5\n"
				    "  warning: 5 calls bypassed tlm's hooks and were seen only by CUPTI:\n"
				    "    cuMemAlloc_v2 x3, cuMemFree_v2 x2\n"));
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"coverage\":{\"interposition\":6,\"cupti_only\":5,\"cupti_only_calls\":["
				     "{\"api\":\"cuMemAlloc_v2\",\"count\":3},{\"api\":\"cuMemFree_v2\",\"count\":2}]}"));
	char *sum = rt_render(r, tlm_report_summary);
	assert_non_null(strstr(sum, "\nwarning: 5 calls seen only by CUPTI (bypassed the hooks): "
				    "cuMemAlloc_v2 x3, cuMemFree_v2 x2\n"));
	free(txt);
	free(json);
	free(sum);
	tlm_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_interposed),
		cmocka_unit_test(test_bypass_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
