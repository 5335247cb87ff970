/* SPDX-License-Identifier: MIT */
/*
 * test_live_model.c - the followed trace's model (src/live) on a written
 * training-like trace whose figures are known by construction, appended to
 * the file a few hundred bytes at a time (chunks cut anywhere) and polled in
 * between, as a trace being written is:
 *   10 weights of 1 MiB (the first allocation says 8 GiB were free), then
 *   STEPS steps of 10 ms, each: a 4 KiB allocation kept for good (the leak),
 *   K activations of 64 KiB, all freed. STEPS x (K + 1) allocations is more
 *   than the rolling window, so the steps come from the window's last
 *   allocations only: the growth per step, the seconds per step and the
 *   forecast (capacity 8 GiB + 1 MiB, the last step's peak counting what was
 *   allocated before the window) must still be exact, and the window never
 *   holds more than TLM_LIVE_WINDOW allocations.
 * Then the same trace without its END, cut inside its last chunk: waited
 * for (running, no damage), then, stopped, read as truncated.
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

#include "live/live_int.h"

#define STEPS 3000u
#define K 50u
#define STEP_NS 10000000ull
#define WEIGHT (1ull << 20)
#define ACT (64ull << 10)
#define LEAK (4ull << 10)
#define FREE0 (8ull << 30)
#define T0 1000000000ull

struct mem {
	uint8_t *p;
	size_t len, cap;
};

static int sink(void *ctx, const void *buf, size_t len)
{
	struct mem *m = ctx;
	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->p = realloc(m->p, m->cap);
		assert_non_null(m->p);
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

static void ev(struct tlm_tw *w, uint64_t t, int alloc, uint64_t addr, uint64_t size, uint32_t stack, uint64_t free_)
{
	struct tlm_event e = {.time_ns = t, .addr = addr, .size = alloc ? size : 0, .stack_id = alloc ? stack : 0,
			      .device = 0, .op = alloc ? TLM_OP_ALLOC : TLM_OP_FREE, .kind = TLM_KIND_DEVICE,
			      .api = alloc ? TLM_API_cuMemAlloc_v2 : TLM_API_cuMemFree_v2, .device_free = free_};
	assert_int_equal(tlm_tw_event(w, &e), 0);
}

static void build(struct mem *m, int with_end)
{
	static char *argv[] = {"train"};
	struct tlm_trace_header h = {.version = TLM_TRACE_VERSION, .pid = 0, .start_monotonic_ns = T0, .clock_id = 1,
				     .stack_depth = 16, .argc = 1, .argv = argv};
	strcpy(h.host, "not-this-host");
	strcpy(h.exe, "/usr/bin/train");
	int err = 0;
	struct tlm_tw *w = tlm_tw_open(&h, sink, m, 4096, 1, &err);
	assert_non_null(w);
	uint64_t ip = 0x400000;
	for (uint32_t s = 1; s <= K + 2; s++, ip += 0x10)
		assert_int_equal(tlm_tw_stack(w, s, &ip, 1), 0);
	uint64_t t = T0 + 1000, a = 0x700000000000ull;
	for (int i = 0; i < 10; i++)
		ev(w, t + (uint64_t)i, 1, a + (uint64_t)i * WEIGHT, WEIGHT, 1, i ? 0 : FREE0);
	uint64_t leak = 0x710000000000ull, act = 0x720000000000ull;
	for (uint64_t j = 0; j < STEPS; j++) {
		uint64_t s0 = T0 + 1000000 + j * STEP_NS;
		ev(w, s0, 1, leak + j * LEAK, LEAK, K + 2, 0);
		for (uint64_t k = 0; k < K; k++)
			ev(w, s0 + 1000 + k, 1, act + k * ACT, ACT, (uint32_t)(2 + k), 0);
		for (uint64_t k = K; k-- > 0;)
			ev(w, s0 + 100000 + (K - k), 0, act + k * ACT, 0, 0, 0);
	}
	if (with_end)
		assert_int_equal(tlm_tw_end(w, T0 + 1000000 + STEPS * STEP_NS), 0);
	else
		assert_int_equal(tlm_tw_flush(w), 0);
	tlm_tw_close(w);
}

static char *tmpfile_path(void)
{
	char *p = strdup("/tmp/tlm-live-test-XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	unlink(p); /* the model waits for it to appear */
	return p;
}

static void append(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static size_t max_window;

static void follow(struct tlm_live *l, const char *path, const struct mem *m, size_t upto)
{
	for (size_t off = 0; off < upto;) {
		size_t k = 777 + off % 1234;
		if (k > upto - off)
			k = upto - off;
		append(path, m->p + off, k);
		off += k;
		while (tlm_live_poll(l, 5000))
			;
		if (l->steps.rec[0].n > max_window)
			max_window = l->steps.rec[0].n;
		if (l->steps.n == 2 && l->steps.rec[1].n > max_window)
			max_window = l->steps.rec[1].n;
		assert_int_not_equal(tlm_live_state(l), TLM_LIVE_FAILED);
	}
}

static void t_training(void **st)
{
	(void)st;
	struct mem m = {0};
	build(&m, 1);
	char *path = tmpfile_path();
	struct tlm_live *l = tlm_live_open(path);
	assert_non_null(l);
	assert_int_equal(tlm_live_poll(l, 100), 0);
	assert_int_equal(tlm_live_state(l), TLM_LIVE_WAITING);
	max_window = 0;
	follow(l, path, &m, m.len);
	assert_int_equal(tlm_live_state(l), TLM_LIVE_ENDED);
	assert_true(max_window <= TLM_LIVE_WINDOW);
	assert_true(l->steps.rec[0].window); /* the run's start has left the window */
	const struct tlm_live_view *v = tlm_live_view(l, TLM_LIVE_BY_BYTES, true);
	assert_non_null(v);
	assert_string_equal(v->why, "exit");
	assert_int_equal(v->events, 10 + STEPS * (2 * K + 1));
	assert_int_equal(v->ndev, 1);
	uint64_t live = 10 * WEIGHT + STEPS * LEAK;
	assert_int_equal(v->dev[0].allocated, live);
	assert_int_equal(v->dev[0].peak_allocated, live + K * ACT);
	assert_true(v->steps_found);
	assert_true(v->steps > 1000 && v->steps < STEPS); /* the window's steps, not the run's */
	assert_true(v->seconds_per_step == STEP_NS / 1e9);
	/* the leak site leads by bytes and grows 4 KiB a step */
	assert_int_equal(v->total_sites, 2);
	assert_int_equal(v->site[0].stack_id, K + 2);
	assert_int_equal(v->site[0].bytes, STEPS * LEAK);
	assert_int_equal(v->site[0].count, STEPS);
	assert_true(v->site[0].leak);
	assert_int_equal(v->site[0].per_step, LEAK);
	assert_int_equal(v->site[1].bytes, 10 * WEIGHT);
	assert_false(v->site[1].leak);
	assert_true(v->site[0].label[0] && strcmp(v->site[0].label, v->site[1].label));
	/* the forecast: the last step's peak counts what the window did not see */
	assert_int_equal(v->nforecast, 1);
	const struct tlm_report_forecast *fc = &v->forecast[0];
	assert_true(fc->known);
	assert_int_equal(fc->growth_per_step, LEAK);
	assert_int_equal(fc->capacity, FREE0 + WEIGHT);
	assert_int_equal(fc->last_peak, live + K * ACT);
	assert_int_equal(fc->steps_to_oom, (FREE0 + WEIGHT - (live + K * ACT)) / LEAK);
	tlm_live_close(l);
	unlink(path);
	free(path);
	free(m.p);
}

static void t_cut(void **st)
{
	(void)st;
	struct mem m = {0};
	build(&m, 0);
	char *path = tmpfile_path();
	struct tlm_live *l = tlm_live_open(path);
	follow(l, path, &m, m.len - 100); /* the last chunk is not whole */
	assert_int_equal(tlm_live_state(l), TLM_LIVE_RUNNING); /* waiting for the rest: no conclusion */
	const struct tlm_live_view *v = tlm_live_view(l, TLM_LIVE_BY_GROWTH, true);
	assert_int_equal(v->integrity_errors, 0);
	assert_true(v->events > 0 && v->events < 10 + STEPS * (2 * K + 1));
	assert_int_equal(v->site[0].stack_id, K + 2); /* by growth: the leak first */
	tlm_live_stop(l);
	assert_int_equal(tlm_live_state(l), TLM_LIVE_ENDED);
	v = tlm_live_view(l, TLM_LIVE_BY_BYTES, false);
	assert_int_equal(strncmp(v->why, "truncated", 9), 0);
	assert_int_equal(v->nsites, 0);
	tlm_live_close(l);
	unlink(path);
	free(path);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_training),
		cmocka_unit_test(t_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
