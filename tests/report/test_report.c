/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the report on synthetic traces written with the trace
 * writer: accounting, peaks, grouping, the leak rule, churn, OOM verdicts,
 * frees, VMM, the end-of-run hook and the live map. JSON: test_report_json.c;
 * text: test_report_text.c.
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

static const struct tlm_report_device *dev(const struct tlm_report *r, int device, int kind)
{
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].device == device && r->devices[i].kind == kind)
			return &r->devices[i];
	return NULL;
}

static void test_peaks(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x0000, 100, 1 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x1000, 300, 2 * MS, 1, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x0000, 3 * MS, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x2000, 50, 4 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_MANAGED, DEV0 + 0x3000, 1000, 5 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_HOST_PINNED, 0x7f0000001000ULL, 64, 6 * MS, 1, -1);
	rt_alloc(t, TLM_KIND_DEVICE, 0x220000000000ULL, 4096, 7 * MS, 1, 1);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x2000, 8 * MS, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x2000, 100, 9 * MS, 1, 0); /* 400 again: peak time stays 2 ms */
	struct tlm_report *r = rt_build(t, true, 10 * MS, NULL);

	assert_int_equal(r->exit, TLM_REPORT_CLEAN);
	assert_int_equal(r->events, 9);
	assert_int_equal(r->run_first_ns, 1 * MS);
	assert_int_equal(r->run_end_ns, 10 * MS);
	assert_int_equal(r->ndevices, 4);
	/* sorted by device, then kind */
	assert_int_equal(r->devices[0].device, -1);
	assert_int_equal(r->devices[0].kind, TLM_MEM_HOST_PINNED);
	assert_int_equal(r->devices[1].device, 0);
	assert_int_equal(r->devices[1].kind, TLM_MEM_DEVICE);
	assert_int_equal(r->devices[2].kind, TLM_MEM_MANAGED);
	assert_int_equal(r->devices[3].device, 1);

	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	assert_int_equal(d->peak_reserved, 400);
	assert_int_equal(d->peak_reserved_ns, 2 * MS);
	assert_int_equal(d->peak_allocated, 400);
	assert_int_equal(d->peak_allocated_ns, 2 * MS);
	assert_int_equal(d->live_bytes_at_end, 400);
	assert_int_equal(d->live_allocs_at_end, 2);
	assert_int_equal(d->reserved_at_end, 400);
	assert_true(d->frag_at_peak == 0.0);
	assert_false(d->ext_known);
	assert_int_equal(d->allocs, 4);
	assert_int_equal(d->frees, 2);
	d = dev(r, 0, TLM_MEM_MANAGED);
	assert_int_equal(d->peak_reserved, 1000);
	assert_int_equal(d->peak_reserved_ns, 5 * MS);
	d = dev(r, -1, TLM_MEM_HOST_PINNED);
	assert_int_equal(d->peak_reserved, 64);
	assert_int_equal(d->live_allocs_at_end, 1);
	d = dev(r, 1, TLM_MEM_DEVICE);
	assert_int_equal(d->peak_reserved, 4096);
	assert_int_equal(d->peak_reserved_ns, 7 * MS);
	assert_int_equal(r->unmatched_frees, 0);
	assert_int_equal(r->inconsistencies, 0);
	tlm_report_free(r);
}

static void test_live_grouping(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	for (uint32_t s = 1; s <= 3; s++)
		rt_stack(t, s, ip, 1);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x0000, 100, 1 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x1000, 1000, 2 * MS, 2, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x2000, 200, 3 * MS, 1, 0);
	rt_alloc(t, TLM_KIND_DEVICE, 0x220000000000ULL, 50, 4 * MS, 3, 1);
	rt_alloc(t, TLM_KIND_DEVICE, 0x220000001000ULL, 10, 5 * MS, 1, 1);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x3000, 7, 6 * MS, 3, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x3000, 7 * MS, 0); /* freed: not live */
	struct tlm_report *r = rt_build(t, true, 8 * MS, NULL);
	assert_int_equal(r->nlive, 4);
	struct { int dev; uint32_t stack; uint64_t bytes, count; int64_t first, last; } want[] = {
		{0, 2, 1000, 1, 2 * MS, 2 * MS},
		{0, 1, 300, 2, 1 * MS, 3 * MS},
		{1, 3, 50, 1, 4 * MS, 4 * MS},
		{1, 1, 10, 1, 5 * MS, 5 * MS},
	};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(r->live[i].device, want[i].dev);
		assert_int_equal(r->live[i].stack_id, want[i].stack);
		assert_int_equal(r->live[i].bytes, want[i].bytes);
		assert_int_equal(r->live[i].count, want[i].count);
		assert_int_equal(r->live[i].first_ns, want[i].first);
		assert_int_equal(r->live[i].last_ns, want[i].last);
	}
	assert_int_equal(r->nleaks, 0);
	tlm_report_free(r);
}

static void test_leak_rule(void **state)
{
	(void)state;
	/* run 0..100: span >= 25 and last >= 50 */
	assert_true(tlm_report_is_leak(3, 25, 50, 0, 100));
	assert_false(tlm_report_is_leak(3, 26, 50, 0, 100));   /* span 24% */
	assert_false(tlm_report_is_leak(3, 0, 49, 0, 100));    /* stopped in the first half */
	assert_false(tlm_report_is_leak(2, 0, 100, 0, 100));   /* two survivors */
	assert_true(tlm_report_is_leak(3, 0, 100, 0, 100));
	assert_false(tlm_report_is_leak(3, 10, 10, 0, 100));
	assert_false(tlm_report_is_leak(3, 0, 100, 0, 0));     /* empty run */
	assert_true(tlm_report_is_leak(3, 1025, 1050, 1000, 1100)); /* offset run */
	/* extreme times: no signed overflow (UBSan would trap) */
	assert_true(tlm_report_is_leak(3, INT64_MIN, INT64_MAX, INT64_MIN, INT64_MAX));
	assert_false(tlm_report_is_leak(3, INT64_MIN, INT64_MIN + 1, INT64_MIN, INT64_MAX));

	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	for (uint32_t s = 5; s <= 8; s++)
		rt_stack(t, s, ip, 1);
	uint64_t a = DEV0;
	rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 1, 0, 6, 0);
	/* 2 survivors over the whole run: no */
	rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 500, 10 * MS, 5, 0);
	rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 500, 90 * MS, 5, 0);
	/* start-up only (0..9 ms): no */
	for (int i = 1; i < 10; i++)
		rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 1 << 20, (uint64_t)i * MS, 6, 0);
	/* steady growth 10..90 ms: yes */
	for (int i = 1; i <= 9; i++)
		rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 1000, (uint64_t)i * 10 * MS, 7, 0);
	/* grew over 40% of the run but stopped at 40 ms: no */
	for (int i = 0; i <= 2; i++)
		rt_alloc(t, TLM_KIND_DEVICE, a += 0x1000, 100, (uint64_t)i * 20 * MS + MS, 8, 0);
	struct tlm_report *r = rt_build(t, true, 100 * MS, NULL);
	assert_int_equal(r->run_first_ns, 0);
	assert_int_equal(r->run_end_ns, 100 * MS);
	assert_int_equal(r->nlive, 4);
	assert_int_equal(r->live[0].stack_id, 6);
	assert_int_equal(r->live[0].count, 10);
	assert_int_equal(r->nleaks, 1);
	assert_int_equal(r->leaks[0].stack_id, 7);
	assert_int_equal(r->leaks[0].count, 9);
	assert_int_equal(r->leaks[0].bytes, 9000);
	assert_int_equal(r->leaks[0].first_ns, 10 * MS);
	assert_int_equal(r->leaks[0].last_ns, 90 * MS);
	assert_true(r->leaks[0].rate > 112499.999 && r->leaks[0].rate < 112500.001); /* 9000 B / 0.08 s */
	tlm_report_free(r);
}

static void test_churn(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t ip[] = {0x401000};
	rt_stack(t, 9, ip, 1);
	rt_stack(t, 10, ip, 1);
	uint64_t tm = 0;
	for (int i = 0; i < 12; i++, tm += MS) {
		rt_alloc(t, TLM_KIND_DEVICE, DEV0, 4096, tm, 9, 0);
		rt_free(t, TLM_KIND_DEVICE, DEV0, tm + 1, 0);
	}
	for (int i = 0; i < 10; i++, tm += MS) {
		rt_alloc(t, TLM_KIND_DEVICE, DEV0, 2048, tm, 9, 0);
		rt_free(t, TLM_KIND_DEVICE, DEV0, tm + 1, 0);
	}
	for (int i = 0; i < 9; i++, tm += MS) { /* 9 cycles: not churn */
		rt_alloc(t, TLM_KIND_DEVICE, DEV0, 8192, tm, 10, 0);
		rt_free(t, TLM_KIND_DEVICE, DEV0, tm + 1, 0);
	}
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 4096, tm, 9, 0); /* live: not a completed cycle */
	struct tlm_report *r = rt_build(t, true, 100 * MS, NULL);
	assert_int_equal(r->nchurn, 2);
	assert_int_equal(r->churn[0].stack_id, 9);
	assert_int_equal(r->churn[0].size, 4096);
	assert_int_equal(r->churn[0].count, 12);
	assert_int_equal(r->churn[0].bytes, 12 * 4096);
	assert_true(r->churn[0].rate > 119.999 && r->churn[0].rate < 120.001); /* 12 / 0.1 s */
	assert_int_equal(r->churn[0].first_ns, 1);
	assert_int_equal(r->churn[0].last_ns, 11 * MS + 1);
	assert_int_equal(r->churn[1].size, 2048);
	assert_int_equal(r->churn[1].count, 10);
	assert_true(r->churn[1].rate > 99.999 && r->churn[1].rate < 100.001);
	tlm_report_free(r);
}

static void test_oom(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1000, 0, 0, 0);
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 5000, 1 * MS, 0, 0, 2, 4000); /* exhaustion */
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 3000, 2 * MS, 0, 0, 2, 4000); /* fragmentation */
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 3000, 3 * MS, 0, 0, 1, 0);    /* invalid value: not OOM */
	rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 4000, 4 * MS, 0, 0, 2, 4000); /* exactly enough: fragmentation */
	struct tlm_report *r = rt_build(t, true, 5 * MS, NULL);
	assert_int_equal(r->ooms_total, 3);
	assert_int_equal(r->nooms, 3);
	assert_int_equal(r->failed_allocations, 1);
	const struct tlm_report_oom *o = &r->ooms[0];
	assert_int_equal(o->device, 0);
	assert_int_equal(o->kind, TLM_MEM_DEVICE);
	assert_int_equal(o->time_ns, 1 * MS);
	assert_int_equal(o->requested, 5000);
	assert_int_equal(o->device_free, 4000);
	assert_int_equal(o->reserved_free, 0);
	assert_int_equal(o->largest_free, 0);
	assert_int_equal(o->reserved, 1000);
	assert_int_equal(o->allocated, 1000);
	assert_int_equal(o->verdict, TLM_OOM_EXHAUSTION);
	assert_int_equal(r->ooms[1].verdict, TLM_OOM_FRAGMENTATION);
	assert_int_equal(r->ooms[1].requested, 3000);
	assert_int_equal(r->ooms[2].verdict, TLM_OOM_FRAGMENTATION);
	/* failures do not change the accounting */
	assert_int_equal(dev(r, 0, TLM_MEM_DEVICE)->peak_reserved, 1000);
	tlm_report_free(r);
}

static void test_frees(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1000, 0, 0, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x5000, 1 * MS, 0);            /* unknown address */
	rt_ev(t, TLM_OP_FREE, TLM_KIND_DEVICE, DEV0, 0, 2 * MS, 0, 0, 1, 0); /* failed: frees nothing */
	rt_free(t, TLM_KIND_HOST_PINNED, DEV0, 3 * MS, -1);                /* wrong namespace: unknown */
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 300, 4 * MS, 0, 0);             /* at a live address */
	/* cudaFree (kind DEVICE) of managed memory frees it */
	rt_alloc(t, TLM_KIND_MANAGED, DEV0 + 0x10000, 777, 5 * MS, 0, 0);
	rt_free(t, TLM_KIND_DEVICE, DEV0 + 0x10000, 6 * MS, 0);
	struct tlm_report *r = rt_build(t, true, 7 * MS, NULL);
	assert_int_equal(r->unmatched_frees, 2);
	assert_int_equal(r->failed_frees, 1);
	assert_int_equal(r->inconsistencies, 1);
	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	assert_int_equal(d->live_bytes_at_end, 300);
	assert_int_equal(d->live_allocs_at_end, 1);
	assert_int_equal(d->peak_reserved, 1000);
	d = dev(r, 0, TLM_MEM_MANAGED);
	assert_int_equal(d->peak_reserved, 777);
	assert_int_equal(d->live_bytes_at_end, 0);
	assert_int_equal(d->live_allocs_at_end, 0);
	assert_int_equal(r->nlive, 1);
	assert_int_equal(r->live[0].bytes, 300);
	tlm_report_free(r);
}

static void test_vmm(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t h = 0x10, va = 0x300000000000ULL;
	rt_alloc(t, TLM_KIND_VMM_PHYSICAL, h, 2 << 20, 0, 0, 0);
	rt_alloc(t, TLM_KIND_VMM_RESERVE, va, 4 << 20, 1 * MS, 0, -1);
	struct rt *tt = t;
	rt_ev(tt, TLM_OP_ALLOC, TLM_KIND_VMM_MAPPING, va, 2 << 20, 2 * MS, 0, -1, 0, 0);
	rt_alloc(t, TLM_KIND_VMM_PHYSICAL, h + 1, 4 << 20, 3 * MS, 0, 1);
	rt_ev(t, TLM_OP_POOL_CREATE, TLM_KIND_POOL, 0x99, 0, 3 * MS, 0, 0, 0, 0);
	rt_ev(t, TLM_OP_FREE, TLM_KIND_VMM_MAPPING, va, 2 << 20, 4 * MS, 0, -1, 0, 0);
	rt_ev(t, TLM_OP_FREE, TLM_KIND_VMM_RESERVE, va, 4 << 20, 5 * MS, 0, -1, 0, 0);
	rt_free(t, TLM_KIND_VMM_PHYSICAL, h, 6 * MS, 0);
	rt_ev(t, TLM_OP_POOL_TRIM, TLM_KIND_POOL, 0x99, 0, 7 * MS, 0, 0, 0, 0);
	rt_ev(t, TLM_OP_POOL_DESTROY, TLM_KIND_POOL, 0x99, 0, 7 * MS, 0, 0, 0, 0);
	struct tlm_report *r = rt_build(t, true, 8 * MS, NULL);
	assert_int_equal(r->unmatched_frees, 0);
	assert_int_equal(r->ndevices, 2); /* reservations and mappings add no device entry */
	const struct tlm_report_device *d = dev(r, 0, TLM_MEM_DEVICE);
	assert_int_equal(d->peak_reserved, 2 << 20);
	assert_int_equal(d->peak_reserved_ns, 0);
	assert_int_equal(d->live_bytes_at_end, 0);
	d = dev(r, 1, TLM_MEM_DEVICE);
	assert_int_equal(d->live_bytes_at_end, 4 << 20);
	assert_int_equal(d->live_allocs_at_end, 1);
	assert_int_equal(r->nlive, 1);
	assert_int_equal(r->live[0].device, 1);
	assert_int_equal(r->pool_creates, 1);
	assert_int_equal(r->pool_trims, 1);
	assert_int_equal(r->pool_destroys, 1);
	tlm_report_free(r);
}

static void test_exit_states(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1000, 1 * MS, 0, 0);
	rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x1000, 1000, 3 * MS, 0, 0);
	struct tlm_report *r = rt_build(t, false, 0, NULL);
	assert_int_equal(r->exit, TLM_REPORT_TRUNCATED);
	assert_int_equal(r->run_end_ns, 3 * MS); /* the last event */
	tlm_report_free(r);

	t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1000, 1 * MS, 0, 0);
	rt_signal(t, 11);
	r = rt_build(t, false, 0, NULL);
	assert_int_equal(r->exit, TLM_REPORT_SIGNAL);
	assert_int_equal(r->signo, 11);
	char *txt = rt_render(r, tlm_report_text);
	assert_non_null(strstr(txt, "note: the process died of signal 11 SIGSEGV"));
	free(txt);
	tlm_report_free(r);
}

/* The hook for a "run is over" marker: the snapshot is taken at the marker,
 * frees made during teardown do not hide what was live. */
static void test_end_marker(void **state)
{
	(void)state;
	struct tlm_report rep;
	memset(&rep, 0, sizeof rep);
	struct tlm__replay rp;
	assert_int_equal(tlm__replay_init(&rp, &rep), 0);
	rp.start = RT_START;
	struct tlm_event e = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .addr = DEV0, .size = 64, .time_ns = RT_START};
	tlm__replay_event(&rp, &e);
	tlm__replay_mark_end(&rp, RT_START + 5 * MS);
	e.op = TLM_OP_FREE;
	e.time_ns = RT_START + 6 * MS;
	tlm__replay_event(&rp, &e);
	tlm__replay_end(&rp, RT_START + 7 * MS);
	assert_int_equal(tlm__replay_finish(&rp), 0);
	assert_int_equal(rep.run_end_ns, 5 * MS);
	assert_int_equal(rep.nlive, 1);
	assert_int_equal(rep.devices[0].live_bytes_at_end, 64);
	assert_int_equal(rep.devices[0].live_allocs_at_end, 1);
	tlm__replay_fini(&rp);
	for (size_t i = 0; i < rep.ndevices; i++)
		free(rep.devices[i].points);
	free(rep.devices);
	free(rep.live);
	free(rep.leaks);
	free(rep.gc_freed);
	free(rep.at_peak);
	free(rep.churn);
	free(rep.ooms);
}

/* The live map under churn with collisions: every address comes back. */
static void test_live_map(void **state)
{
	(void)state;
	struct tlm__live_map m;
	assert_int_equal(tlm__live_init(&m), 0);
	for (uint64_t round = 0; round < 4; round++) {
		for (uint64_t i = 0; i < 5000; i++) {
			struct tlm__live e = {.addr = i << 21, .size = i, .ns = (uint8_t)(1 + i % 3)};
			assert_non_null(tlm__live_put(&m, &e));
		}
		for (uint64_t i = 0; i < 5000; i += 2)
			tlm__live_del(&m, tlm__live_find(&m, (uint8_t)(1 + i % 3), i << 21));
		for (uint64_t i = 0; i < 5000; i++) {
			struct tlm__live *e = tlm__live_find(&m, (uint8_t)(1 + i % 3), i << 21);
			if (i % 2) {
				assert_non_null(e);
				assert_int_equal(e->size, i);
			} else {
				assert_null(e);
			}
			assert_null(tlm__live_find(&m, (uint8_t)(1 + (i + 1) % 3), i << 21));
		}
		for (uint64_t i = 1; i < 5000; i += 2)
			tlm__live_del(&m, tlm__live_find(&m, (uint8_t)(1 + i % 3), i << 21));
		assert_int_equal(m.count, 0);
	}
	tlm__live_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peaks),
		cmocka_unit_test(test_live_grouping),
		cmocka_unit_test(test_leak_rule),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_oom),
		cmocka_unit_test(test_frees),
		cmocka_unit_test(test_vmm),
		cmocka_unit_test(test_exit_states),
		cmocka_unit_test(test_end_marker),
		cmocka_unit_test(test_live_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
