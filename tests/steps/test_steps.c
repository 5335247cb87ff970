/* SPDX-License-Identifier: MIT */
/*
 * test_steps.c - the step analysis of real recordings: steps_workload runs
 * under LD_PRELOAD=libtlm.so on the simulated driver (one 1 GiB device) in
 * each of its modes, and the report of its trace must find exactly the steps
 * it ran, the bytes it leaked per step, the forecast from the free memory it
 * saw itself, and the activations of its layers with the checkpointing
 * estimate computed from the sizes it allocated (steps_workload.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "../shim/e2e.h"
#include "analysis/report.h"
#include "analysis/report_steps.h"
#include "steps_workload.h"

#define STEPS 12
#define LEAK 8192ull
#define W ((unsigned long long)SW_WEIGHTS * SW_WEIGHT)

struct rec {
	struct run run;
	char trace[512];
	struct tlm_report *r;
};

static void record(struct rec *x, const char *mode, const char *steps, const char *leak)
{
	static const char *const env[] = {"TLM_SIM_MEMORY=1G", "TLM_SIM_DEVICES=1", NULL};
	const char *args[] = {mode, steps, leak, NULL};
	assert_int_equal(e2e_run(&x->run, args, env), 0);
	if (!WIFEXITED(x->run.status) || WEXITSTATUS(x->run.status))
		fprintf(stderr, "workload failed (status %d): %s\n", x->run.status, x->run.stderr_text);
	assert_true(WIFEXITED(x->run.status) && WEXITSTATUS(x->run.status) == 0);
	char paths[4][512];
	assert_int_equal(e2e_traces(&x->run, paths, 4), 1);
	memcpy(x->trace, paths[0], sizeof x->trace);
	char err[256];
	x->r = tlm_report_build(x->trace, err, sizeof err);
	assert_non_null(x->r);
	assert_non_null(x->r->steps);
}

static uint64_t note(struct rec *x, const char *key)
{
	const char *v = e2e_note(&x->run, key);
	assert_non_null(v);
	return strtoull(v, NULL, 10);
}

static const struct tlm_frame *act_fn(struct tlm_report *r, const struct tlm_report_act *a)
{
	const struct tlm_frame *f;
	assert_true(a->frame < tlm_report_frames(r, a->stack_id, &f));
	assert_non_null(f[a->frame].function);
	return &f[a->frame];
}

static const struct tlm_frame *fn(struct tlm_report *r, uint32_t stack)
{
	const struct tlm_frame *f = tlm_report_useful_frame(r, stack);
	assert_non_null(f);
	assert_non_null(f->function);
	return f;
}

/* The only leak per step: record_loss, LEAK bytes in each measured step. */
static const struct tlm_report_step_leak *one_leak(struct tlm_report *r, size_t measured)
{
	const struct tlm_report_steps *st = r->steps;
	const struct tlm_report_step_leak *l = NULL;
	for (size_t i = 0; i < st->nleaks; i++)
		if (st->leaks[i].leak) {
			assert_null(l);
			l = &st->leaks[i];
		}
	assert_non_null(l);
	assert_string_equal(fn(r, l->stack_id)->function, "must");
	assert_int_equal(l->bytes_per_step, LEAK);
	assert_int_equal(l->steps_measured, measured);
	assert_int_equal(l->steps_with_survivors, measured);
	assert_int_equal(l->survivor_count, measured);
	assert_true(l->steady);
	return l;
}

/* Peak of step j: live before it + activations + loss + the leak + one gradient. */
static uint64_t peak_of(uint64_t live_before)
{
	return live_before + SW_ACT + SW_LOSS + LEAK + SW_O;
}

static void check_forecast(struct rec *x, uint64_t last_peak)
{
	const struct tlm_report_steps *st = x->r->steps;
	assert_int_equal(st->nforecast, 1);
	const struct tlm_report_forecast *fc = &st->forecast[0];
	assert_true(fc->known);
	assert_int_equal(fc->device, 0);
	assert_int_equal(fc->capacity, note(x, "free_first") + note(x, "first_size"));
	assert_int_equal(fc->last_peak, last_peak);
	assert_int_equal(fc->growth_per_step, LEAK);
	assert_true(fc->steady);
	assert_int_equal(fc->steps_to_oom, (fc->capacity - last_peak) / LEAK);
}

static void done(struct rec *x)
{
	tlm_report_free(x->r);
}

static void test_train(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "train", "12", "8192");
	const struct tlm_report_steps *st = x.r->steps;
	assert_true(st->found);
	assert_int_equal(st->count, STEPS);
	assert_int_equal(st->first_steady, 0);
	assert_int_equal(st->device, 0);
	/* driven by the loop in main */
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(x.r, st->driving_stack, &fr);
	assert_true(st->driving_frame < n);
	assert_string_equal(fr[st->driving_frame].function, "main");
	assert_true(st->have_driving);
	assert_string_equal(st->driving.function, "main");
	/* the renderers print the frame found at build time, whatever --full-stacks does */
	tlm_report_set_full_stacks(x.r, true);
	assert_string_equal(st->driving.function, "main");
	tlm_report_set_full_stacks(x.r, false);
	assert_true(st->seconds_per_step >= SW_STEP_US / 1e6);
	for (size_t j = 0; j < STEPS; j++) {
		assert_int_equal(st->step[j].live_at_start, W + j * LEAK);
		assert_int_equal(st->step[j].peak, peak_of(W + j * LEAK));
		assert_int_equal(st->step[j].allocs, 2 * SW_LAYERS + 2 + SW_LAYERS);
		assert_int_equal(st->step[j].held_at_peak, SW_ACT + SW_LOSS + SW_O);
	}
	assert_int_equal(st->steady_peak, peak_of(W + (STEPS - 1) * LEAK));
	one_leak(x.r, STEPS - 1);
	check_forecast(&x, peak_of(W + (STEPS - 1) * LEAK));
	/* the time rule agrees here: the leak is in r->leaks, once */
	assert_int_equal(x.r->nleaks, 1);
	assert_int_equal(x.r->leaks[0].bytes, STEPS * LEAK);

	/* activations at the highest steady peak (step 11 of 12: the last but one) */
	assert_int_equal(st->act_step, STEPS - 2);
	uint64_t peak = peak_of(W + (STEPS - 2) * LEAK);
	assert_int_equal(st->act_peak, peak);
	assert_true(st->nact >= 2);
	const struct tlm_report_act *a = &st->act[0];
	assert_string_equal(act_fn(x.r, a)->function, "layer_forward");
	assert_true(a->have_fn);
	assert_string_equal(a->fn.function, "layer_forward");
	assert_int_equal(a->bytes, SW_ACT);
	assert_int_equal(a->count, 2 * SW_LAYERS);
	assert_int_equal(a->instances, SW_LAYERS);
	assert_int_equal(a->nckpt, 3); /* each instance, every 2, every 3 (sqrt(6) rounds to 2) */
	assert_int_equal(a->ckpt[0].every, 1);
	assert_int_equal(a->ckpt[0].est_peak, peak - SW_ACT + SW_LAYERS * SW_O + SW_H);
	assert_int_equal(a->ckpt[0].rule_peak, peak);
	assert_int_equal(a->ckpt[1].every, 2);
	assert_int_equal(a->ckpt[1].est_peak, peak - SW_ACT + (SW_LAYERS / 2) * SW_O + 2 * SW_H + SW_O);
	assert_int_equal(a->ckpt[1].rule_peak, peak - SW_ACT / 2);
	/* the loss and the first gradient are the other transients at the peak */
	uint64_t other = 0;
	for (size_t i = 1; i < st->nact; i++)
		other += st->act[i].bytes;
	assert_int_equal(other, SW_LOSS + SW_O);
	assert_int_equal(st->act_bytes, SW_ACT + SW_LOSS + SW_O);
	done(&x);
}

/* The case: a leak per step, then an evaluation phase longer than the
 * loop. The time rule misses it; the step rule does not. */
static void test_eval(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "eval", "12", "8192");
	const struct tlm_report_steps *st = x.r->steps;
	assert_true(st->found);
	assert_int_equal(st->count, STEPS);
	const struct tlm_report_step_leak *l = one_leak(x.r, STEPS - 1);
	const struct tlm_report_site *s = NULL;
	for (size_t i = 0; i < x.r->nlive; i++)
		if (x.r->live[i].stack_id == l->stack_id)
			s = &x.r->live[i];
	assert_non_null(s);
	assert_false(tlm_report_is_leak(s->count, s->first_ns, s->last_ns, x.r->run_first_ns, x.r->run_end_ns));
	assert_int_equal(x.r->nleaks, 1);
	assert_int_equal(x.r->leaks[0].stack_id, l->stack_id);
	assert_int_equal(x.r->leaks[0].bytes, STEPS * LEAK);
	/* the last step ends before the evaluation phase */
	assert_int_equal(st->step[STEPS - 1].peak, peak_of(W + (STEPS - 1) * LEAK));
	check_forecast(&x, peak_of(W + (STEPS - 1) * LEAK));
	done(&x);
}

static void test_between(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "between", "12", "8192");
	assert_true(x.r->steps->found);
	assert_int_equal(x.r->steps->count, STEPS);
	one_leak(x.r, STEPS - 1 - x.r->steps->first_steady);
	done(&x);
}

/* Epochs, each ending with an evaluation and a checkpoint: the steps are
 * the inner loop, not the epochs. */
static void test_epochs(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "epochs", "12", "8192");
	assert_true(x.r->steps->found);
	assert_int_equal(x.r->steps->count, STEPS);
	one_leak(x.r, STEPS - 1 - x.r->steps->first_steady);
	done(&x);
}

static void test_warmup(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "warmup", "12", "8192");
	const struct tlm_report_steps *st = x.r->steps;
	assert_true(st->found);
	assert_int_equal(st->count, STEPS);
	assert_int_equal(st->first_steady, 2); /* optimizer state in step 0, the cache in 0 and 1 */
	assert_false(st->step[1].steady);
	assert_true(st->step[2].steady);
	uint64_t persistent = W + SW_OPT_N * SW_OPT + 2 * SW_CACHE;
	assert_int_equal(st->step[5].live_at_start, persistent + 5 * LEAK);
	assert_int_equal(st->warmup_peak, peak_of(W + SW_OPT_N * SW_OPT + SW_CACHE + LEAK));
	one_leak(x.r, STEPS - 3);
	check_forecast(&x, peak_of(persistent + (STEPS - 1) * LEAK));
	done(&x);
}

static void test_vary(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "vary", "12", "8192");
	assert_true(x.r->steps->found);
	assert_int_equal(x.r->steps->count, STEPS);
	one_leak(x.r, STEPS - 1 - x.r->steps->first_steady);
	done(&x);
}

static void test_no_leak(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "train", "12", "0");
	const struct tlm_report_steps *st = x.r->steps;
	assert_true(st->found);
	assert_int_equal(st->count, STEPS);
	for (size_t i = 0; i < st->nleaks; i++)
		assert_false(st->leaks[i].leak);
	assert_int_equal(st->nforecast, 1);
	assert_false(st->forecast[0].known);
	assert_int_equal(x.r->nleaks, 0);
	done(&x);
}

static void test_none(void **state)
{
	(void)state;
	struct rec x;
	record(&x, "none", "0", "0");
	assert_false(x.r->steps->found);
	assert_non_null(x.r->steps->why_not);
	done(&x);
}

static int run_cmd(const char *cmd, char *out, size_t n)
{
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t k = fread(out, 1, n - 1, p);
	out[k] = 0;
	return pclose(p);
}

/* tlm diff --fail-on-growth 0: the run that leaks 8x more per step and
 * then evaluates fails the gate, naming the site. */
static void test_diff_gate(void **state)
{
	(void)state;
	struct rec base, neu;
	record(&base, "train", "12", "1024");
	record(&neu, "eval", "12", "8192");
	char cmd[2048], out[65536];
	snprintf(cmd, sizeof cmd, "'%s' diff --fail-on-growth 0 '%s' '%s' 2>&1", getenv("TLM_TEST_TLM"), base.trace,
		 neu.trace);
	int st = run_cmd(cmd, out, sizeof out);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 1)
		fprintf(stderr, "%s\n", out);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	assert_non_null(strstr(out, "leaks per step grew by 7168 B"));
	assert_non_null(strstr(out, "keep (steps_workload.c"));
	assert_non_null(strstr(out, "record_loss (steps_workload.c"));
	/* and the text report says how many steps and what leaks per step */
	snprintf(cmd, sizeof cmd, "'%s' report '%s'", getenv("TLM_TEST_TLM"), neu.trace);
	assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
	assert_non_null(strstr(out, "STEPS: 12 steps of "));
	assert_non_null(strstr(out, "+8.0 KiB per step in 1.0 allocations, in 11 of 11 steps (steady)"));
	snprintf(cmd, sizeof cmd, "'%s' report -f json '%s'", getenv("TLM_TEST_TLM"), neu.trace);
	assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
	assert_non_null(strstr(out, "\"steps\":{\"found\":true,\"count\":12,"));
	assert_non_null(strstr(out, "\"bytes_per_step\":8192,\"tensors_per_step\":1.000,\"steps_with_survivors\":11"));
	done(&base);
	done(&neu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_train),   cmocka_unit_test(test_eval),    cmocka_unit_test(test_between), cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_warmup),  cmocka_unit_test(test_vary),    cmocka_unit_test(test_no_leak),
		cmocka_unit_test(test_none),    cmocka_unit_test(test_diff_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
