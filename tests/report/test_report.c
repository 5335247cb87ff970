/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the report on synthetic traces written with the trace
 * writer: accounting, peaks, grouping, the leak rule, churn, OOM verdicts,
 * frees, VMM, the end-of-run hook, JSON (golden), escaping and text width.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "json_out.h"
#include "rt.h"

#define MS RT_MS
#define DEV0 0x200000000000ULL

static struct tlm_report *build(struct rt *t, bool end, uint64_t end_t, char **pathp)
{
	char *path = rt_close(t, end, end_t);
	struct tlm_report *r = rt_report(path);
	if (pathp)
		*pathp = path;
	else {
		unlink(path);
		free(path);
	}
	return r;
}

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
	struct tlm_report *r = build(t, true, 10 * MS, NULL);

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
	struct tlm_report *r = build(t, true, 8 * MS, NULL);
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
	struct tlm_report *r = build(t, true, 100 * MS, NULL);
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
	struct tlm_report *r = build(t, true, 100 * MS, NULL);
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
	struct tlm_report *r = build(t, true, 5 * MS, NULL);
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
	struct tlm_report *r = build(t, true, 7 * MS, NULL);
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
	struct tlm_report *r = build(t, true, 8 * MS, NULL);
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
	struct tlm_report *r = build(t, false, 0, NULL);
	assert_int_equal(r->exit, TLM_REPORT_TRUNCATED);
	assert_int_equal(r->run_end_ns, 3 * MS); /* the last event */
	tlm_report_free(r);

	t = rt_open();
	rt_alloc(t, TLM_KIND_DEVICE, DEV0, 1000, 1 * MS, 0, 0);
	rt_signal(t, 11);
	r = build(t, false, 0, NULL);
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

/* ---- JSON -------------------------------------------------------------- */

#define STACK                                                                                                     \
	"{\"kind\":\"native\",\"function\":\"fn_401000\",\"file\":\"src/f401000.c\",\"line\":400,"                   \
	"\"module\":\"/opt/app/libapp.so\",\"ip\":\"0x401000\",\"offset\":\"0x1000\",\"inlined\":false,\"stale\":false}," \
	"{\"kind\":\"native\",\"function\":\"fn_402000\",\"file\":\"src/f402000.c\",\"line\":496,"                   \
	"\"module\":\"/opt/app/libapp.so\",\"ip\":\"0x402000\",\"offset\":\"0x2000\",\"inlined\":false,\"stale\":false}"

static const char golden_fmt[] =
	"{\"schema\":\"tlm-report/1\",\"trace\":\"%s\","
	"\"process\":{\"pid\":4242,\"command\":[\"train\",\"--epochs\",\"3\"],\"exe\":\"/usr/bin/train\","
	"\"exit\":\"clean\",\"signal\":null,\"truncation\":null,\"lost_events\":0},"
	"\"run\":{\"first_event_ns\":0,\"end_ns\":4000000,\"duration_ns\":4000000,\"events\":3},"
	"\"coverage\":{\"interposition\":3,\"cupti_only\":0,\"cupti_only_calls\":[],\"cupti\":null},"
	"\"unmatched_frees\":1,\"inconsistencies\":0,\"failed_allocations\":0,\"failed_frees\":0,"
	"\"ooms_total\":1,\"unknown_events\":0,\"churn_untracked_frees\":0,\"probe_failures\":0,"
	"\"pool_events\":{\"create\":0,\"destroy\":0,\"trim\":0},"
	"\"devices\":[{\"device\":0,\"kind\":\"device\",\"peak_reserved_bytes\":256,\"peak_reserved_time_ns\":0,"
	"\"peak_allocated_bytes\":256,\"peak_allocated_time_ns\":0,\"reserved_bytes_at_end\":256,"
	"\"live_bytes_at_end\":256,\"live_allocations_at_end\":1,\"fragmentation_at_peak\":0.0000,"
	"\"external_fragmentation_at_peak\":null,\"reserved_at_peak_allocated_bytes\":256,"
	"\"allocated_at_peak_reserved_bytes\":256,\"fragmentation_at_reserved_peak\":0.0000,\"allocations\":1,\"frees\":0,\"allocator_reported\":null,\"forecast\":null}],"
	"\"at_peak\":[{\"device\":0,\"kind\":\"device\",\"bytes\":256,\"count\":1,\"transient_bytes\":0,"
	"\"transient_count\":0,\"persistent_bytes\":256,\"persistent_count\":1,"
	"\"label\":\"fn_401000 (f401000.c:400) [libapp.so]\",\"stack\":[" STACK "]}],"
	"\"live_at_end\":[{\"device\":0,\"bytes\":256,\"count\":1,\"first_ns\":0,\"last_ns\":0,"
	"\"label\":\"fn_401000 (f401000.c:400) [libapp.so]\",\"stack\":[" STACK "]}],"
	"\"leaks\":[],\"gc_freed\":[],"
	"\"ooms\":[{\"device\":0,\"kind\":\"device\",\"time_ns\":1000000,\"requested_bytes\":1073741824,"
	"\"reserved_free_bytes\":0,\"largest_free_bytes\":0,\"device_free_bytes\":1048576,"
	"\"reserved_bytes\":256,\"allocated_bytes\":256,\"fragmentation\":0.0000,"
	"\"external_fragmentation\":null,\"verdict\":\"exhaustion\",\"source\":\"driver\",\"driver_failures\":0,\"driver_request_bytes\":null,\"label\":null,\"stack\":[]}],"
	"\"churn\":[],\"steps\":{\"found\":false,\"why_not\":\"no allocation sequence repeats (no site "
	"allocates the same number of times in each of 3 or more segments)\",\"count\":0},\"activations\":null,\"integrity_errors\":[]}\n";

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
	struct tlm_report *r = build(t, true, 4 * MS, &path);
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
	struct tlm_report *r = build(t, true, 4 * MS, &path);
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
	struct tlm_report *r = build(t, false, 0, &path);
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
	struct tlm_report *r = build(t, true, 4 * MS, NULL);
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
		cmocka_unit_test(test_json_golden),
		cmocka_unit_test(test_json_hostile),
		cmocka_unit_test(test_text_width),
		cmocka_unit_test(test_useful_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
