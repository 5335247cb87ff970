/* SPDX-License-Identifier: MIT */
/*
 * test_coverage.c - the report's coverage line: events per source, the
 * calls only CUPTI saw (TLM_EVF_CUPTI), and what became of CUPTI (PROP
 * records), in text, JSON and the summary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt.h"

/* state NULL: no PROP records (CUPTI never set up, or an older trace) */
static struct tlm_report *make_with(int cupti_allocs, int cupti_frees, const char *state, const char *detail)
{
	struct rt *t = rt_open();
	if (state) {
		rt_prop(t, "cupti.detail", "an older value, replaced");
		rt_prop(t, "cupti", "absent");
		rt_prop(t, "cupti.detail", detail);
		rt_prop(t, "cupti", state);
		rt_prop(t, "tlm.future-key", "skipped by this version");
	}
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

static struct tlm_report *make(int cupti_allocs, int cupti_frees)
{
	return make_with(cupti_allocs, cupti_frees, NULL, NULL);
}

static void test_all_interposed(void **s)
{
	(void)s;
	struct tlm_report *r = make(0, 0);
	assert_int_equal(r->cupti_only, 0);
	char *txt = rt_render(r, tlm_report_text);
	assert_non_null(strstr(txt, "\nsources:    interposition 6, CUPTI only 0\n"
				    "  CUPTI state not recorded (CUDA not initialised while recording, or an older tlm)\n"));
	assert_null(strstr(txt, "bypassed"));
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"coverage\":{\"interposition\":6,\"cupti_only\":0,\"cupti_only_calls\":[],"
				     "\"cupti\":null,\"native_stacks\":null}"));
	free(txt);
	free(json);
	tlm_report_free(r);
}

static void test_bypass_named(void **s)
{
	(void)s;
	struct tlm_report *r = make_with(3, 2, "attached", "/opt/cuda/libcupti.so.13, 22 of 22 callbacks");
	assert_int_equal(r->cupti_only, 5);
	assert_int_equal(r->cupti_only_by_api[TLM_API_cuMemAlloc_v2], 3);
	assert_int_equal(r->cupti_only_by_api[TLM_API_cuMemFree_v2], 2);
	char *txt = rt_render(r, tlm_report_text);
	assert_non_null(strstr(txt, "\nsources:    interposition 6, CUPTI only 5\n"
				    "  CUPTI attached (/opt/cuda/libcupti.so.13, 22 of 22 callbacks)\n"
				    "  warning: 5 calls bypassed tlm's hooks and were seen only by CUPTI:\n"
				    "    cuMemAlloc_v2 x3, cuMemFree_v2 x2\n"));
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"coverage\":{\"interposition\":6,\"cupti_only\":5,\"cupti_only_calls\":["
				     "{\"api\":\"cuMemAlloc_v2\",\"count\":3},{\"api\":\"cuMemFree_v2\",\"count\":2}],"
				     "\"cupti\":{\"state\":\"attached\",\"detail\":"
				     "\"/opt/cuda/libcupti.so.13, 22 of 22 callbacks\"},\"native_stacks\":null}"));
	char *sum = rt_render(r, tlm_report_summary);
	assert_non_null(strstr(sum, "\nwarning: 5 calls seen only by CUPTI (bypassed the hooks): "
				    "cuMemAlloc_v2 x3, cuMemFree_v2 x2\n"));
	free(txt);
	free(json);
	free(sum);
	tlm_report_free(r);
}

/* Each state: its words in the text report, and a note in the summary only
 * when calls that bypass the hooks could not have been seen. */
static void test_cupti_states(void **s)
{
	(void)s;
	static const struct {
		const char *state, *detail, *words;
		bool blind;
	} cases[] = {
		{"held", "Nsight Systems", "CUPTI held by another tool", true},
		{"held", "", "CUPTI held by another tool", true},
		{"absent", "no libcupti.so.13 or older found; driver 13.0", "CUPTI not found", true},
		{"unusable", "cuptiSubscribe failed: CUPTI_ERROR_NOT_INITIALIZED", "CUPTI unusable", true},
		{"off", "TLM_CUPTI=off", "CUPTI off", true},
		{"skipped", "the driver has no export tables: a stub or a simulated driver", "CUPTI not used", false},
		{"attached", "/x/libcupti.so.13, 22 of 22 callbacks, injected", "CUPTI attached", false},
		{"from-the-future", "", "CUPTI from-the-future", false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tlm_report *r = make_with(0, 0, cases[i].state, cases[i].detail);
		assert_string_equal(r->cupti_state, cases[i].state);
		assert_string_equal(r->cupti_detail, cases[i].detail);
		char want[512], *txt = rt_render(r, tlm_report_text), *sum = rt_render(r, tlm_report_summary);
		snprintf(want, sizeof want, "\nsources:    interposition 6, CUPTI only 0\n  %s%s%s%s\n%s",
			 cases[i].words, cases[i].detail[0] ? " (" : "", cases[i].detail, cases[i].detail[0] ? ")" : "",
			 cases[i].blind ? "    so calls that bypass tlm's hooks could not be seen\n" : "\n");
		if (!strstr(txt, want))
			fprintf(stderr, "want %s in\n%s\n", want, txt ? txt : "(nothing)");
		assert_non_null(strstr(txt, want));
		snprintf(want, sizeof want, "\nnote: %s, so calls that bypass tlm's hooks could not be seen\n",
			 cases[i].words);
		assert_true(!!strstr(sum, want) == cases[i].blind);
		assert_true(!!strstr(sum, "CUPTI") == cases[i].blind);
		free(txt);
		free(sum);
		tlm_report_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_interposed),
		cmocka_unit_test(test_bypass_named),
		cmocka_unit_test(test_cupti_states),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
