/* SPDX-License-Identifier: MIT */
/*
 * test_steps_synth.c - step detection on synthetic traces (tests/report/rt.h)
 * whose every number is known: a layer loop inside the steps, a start-up
 * burst that only piles up, a clock that runs backwards, and the forecast's
 * capacity from an out-of-memory failure when the first allocation carries
 * no free memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "../report/rt.h"
#include "analysis/report_steps.h"

#define MS RT_MS
#define DEV0 0x7f0000000000ull

static struct tlm_report *build(struct rt *t, uint64_t end)
{
	char *path = rt_close(t, true, end);
	struct tlm_report *r = rt_report(path);
	unlink(path);
	free(path);
	return r;
}

static void stacks(struct rt *t, uint32_t n)
{
	for (uint32_t s = 1; s <= n; s++) {
		uint64_t ip[] = {0x401000 + 0x10 * s, 0x500000};
		rt_stack(t, s, ip, 2);
	}
}

/* 8 steps of 4 layers (stack 1: 1000 B each, freed in reverse after a loss
 * of stack 2) and a leak of 64 B (stack 3). The layer loop runs 32 times,
 * the step 8 times: the step wins. Clock: 10 ms per step, running
 * backwards by 1 ms in step 5 (a damaged clock must not break anything). */
static void test_layers_in_steps(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	stacks(t, 4);
	uint64_t a = DEV0, tm = 1 * MS;
	rt_alloc(t, TLM_KIND_DEVICE, a += 0x100000, 1 << 20, tm, 4, 0); /* weights */
	for (int s = 0; s < 8; s++) {
		tm = (uint64_t)(s + 1) * 10 * MS - (s == 5 ? 11 * MS : 0);
		uint64_t l[4];
		for (int i = 0; i < 4; i++)
			rt_alloc(t, TLM_KIND_DEVICE, l[i] = a += 0x100000, 1000, tm + (uint64_t)i, 1, 0);
		uint64_t loss = a += 0x100000;
		rt_alloc(t, TLM_KIND_DEVICE, loss, 16, tm + 10, 2, 0);
		rt_alloc(t, TLM_KIND_DEVICE, a += 0x100000, 64, tm + 11, 3, 0);
		for (int i = 4; i-- > 0;)
			rt_free(t, TLM_KIND_DEVICE, l[i], tm + 20 + (uint64_t)i, 0);
		rt_free(t, TLM_KIND_DEVICE, loss, tm + 30, 0);
	}
	struct tlm_report *r = build(t, 100 * MS);
	const struct tlm_report_steps *st = r->steps;
	assert_true(st->found);
	assert_int_equal(st->count, 8);
	assert_int_equal(st->step_sites, 3);
	const struct tlm_report_step_leak *l = tlm_report_step_leak(r, 0, 3);
	assert_non_null(l);
	assert_true(l->leak);
	assert_int_equal(l->bytes_per_step, 64);
	assert_int_equal(l->steps_measured, 7);
	for (size_t j = 0; j < 8; j++)
		assert_int_equal(st->step[j].peak, (1 << 20) + 4000 + 16 + 64 * (j + 1));
	assert_true(st->seconds_per_step >= 0);
	/* no free memory recorded: a growth, no forecast */
	assert_int_equal(st->nforecast, 1);
	assert_false(st->forecast[0].known);
	assert_int_equal(st->forecast[0].growth_per_step, 64);
	tlm_report_free(r);
}

/* Weights allocated in a loop over the whole run, never freed: no step. */
static void test_pile_up_is_no_step(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	stacks(t, 2);
	for (int i = 0; i < 20; i++) {
		rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x100000 * (uint64_t)i, 4096, (uint64_t)i * 5 * MS, 1, 0);
		rt_alloc(t, TLM_KIND_DEVICE, DEV0 + 0x8000000 + 0x100000 * (uint64_t)i, 64, (uint64_t)i * 5 * MS + 1, 2, 0);
	}
	struct tlm_report *r = build(t, 100 * MS);
	assert_false(r->steps->found);
	assert_non_null(r->steps->why_not);
	tlm_report_free(r);
}

/* The capacity from an OOM when the first allocation has no free memory:
 * device_free + reserved then; and from the first allocation when it has. */
static void test_capacity(void **state)
{
	(void)state;
	for (int probe = 0; probe < 2; probe++) {
		struct rt *t = rt_open();
		stacks(t, 3);
		uint64_t a = DEV0;
		rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, a += 0x100000, 1 << 20, 1 * MS, 3, 0, 0,
		      probe ? (1ull << 30) - (1 << 20) : 0);
		for (int s = 0; s < 6; s++) {
			uint64_t tm = (uint64_t)(s + 1) * 10 * MS, x = a += 0x100000;
			rt_alloc(t, TLM_KIND_DEVICE, x, 4096, tm, 1, 0);
			rt_alloc(t, TLM_KIND_DEVICE, a += 0x100000, 1024, tm + 1, 2, 0);
			rt_free(t, TLM_KIND_DEVICE, x, tm + 2, 0);
		}
		/* an OOM: 100 MiB free, the process holding 1 MiB + 6 KiB */
		rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ull << 40, 80 * MS, 3, 0, 2, 100ull << 20);
		struct tlm_report *r = build(t, 100 * MS);
		const struct tlm_report_steps *st = r->steps;
		assert_true(st->found);
		assert_int_equal(st->count, 6);
		const struct tlm_report_forecast *fc = &st->forecast[0];
		assert_true(fc->known);
		assert_int_equal(fc->growth_per_step, 1024);
		uint64_t cap = probe ? 1ull << 30 : (100ull << 20) + (1 << 20) + 6 * 1024;
		assert_int_equal(fc->capacity, cap);
		assert_string_equal(fc->capacity_source, probe ? "first allocation" : "out of memory");
		assert_int_equal(fc->last_peak, (1 << 20) + 5 * 1024 + 4096 + 1024);
		assert_int_equal(fc->steps_to_oom, (cap - fc->last_peak) / 1024);
		tlm_report_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers_in_steps),
		cmocka_unit_test(test_pile_up_is_no_step),
		cmocka_unit_test(test_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
