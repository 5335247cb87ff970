/* SPDX-License-Identifier: MIT */
/*
 * test_leave_hw.c - honest counts when a thread does not come back from a
 * hooked call, and libtlm's lines where the program's stderr was (issue 26):
 *  - a siglongjmp out of a hooked cudaFree: the thread goes on being
 *    recorded; the free is the one event lost;
 *  - a thread cancelled inside a hooked cudaFree: its free is lost, and no
 *    "out of sequence" error;
 *  - threads whose first event is a slow free: no thread is "inside one CUDA
 *    call for more than 1000 ms", nothing is flagged late;
 *  - a host that points fd 2 at its own file: tlm's lines and the summary
 *    stay on the stderr it started with, and nothing of tlm's lands in the
 *    host's files, also when the host closed tlm's copy of stderr.
 * Every run: exact event and loss counts, a clean trace that replays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "hw.h"

static const char *program(void)
{
	const char *p = getenv("TLM_TEST_HW_LEAVE");
	assert_non_null(p);
	return p;
}

static void run(struct hw_proc *p, const char *const *args, const char *const *env)
{
	hw_program = program();
	assert_int_equal(hw_run(p, args, env, 60000), 0);
	if (p->timed_out || !WIFEXITED(p->r.status) || WEXITSTATUS(p->r.status) != 0)
		fprintf(stderr, "stderr of %s %s:\n%s\n", args[0], args[1], p->r.stderr_text);
	assert_false(p->timed_out);
	assert_true(WIFEXITED(p->r.status));
	assert_int_equal(WEXITSTATUS(p->r.status), 0);
}

static uint64_t note_calls(const struct hw_proc *p)
{
	const char *c = e2e_note(&p->r, "calls");
	assert_non_null(c);
	return strtoull(c, NULL, 10);
}

static size_t late_events(const struct trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nev; i++)
		n += (t->ev[i].flags & TLM_EVF_LATE) != 0;
	return n;
}

/* the one trace of the run: clean, replays, exactly `events` events and
 * `lost` lost, none late, and no false line from libtlm */
static void check_trace(const struct hw_proc *p, uint64_t events, uint64_t lost)
{
	char paths[4][512];
	assert_int_equal(e2e_traces(&p->r, paths, 4), 1);
	struct trace t;
	assert_int_equal(e2e_load(&t, paths[0]), 0);
	if (t.nev != events || t.lost != lost || late_events(&t))
		fprintf(stderr, "events %zu (want %llu), lost %llu (want %llu), late %zu\nstderr:\n%s\n", t.nev,
			(unsigned long long)events, (unsigned long long)t.lost, (unsigned long long)lost, late_events(&t),
			p->r.stderr_text);
	assert_int_equal(t.nerrors, 0);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_int_equal(t.nev, events);
	assert_int_equal(t.lost, lost);
	assert_int_equal(late_events(&t), 0);
	struct hw_replay rp;
	hw_replay(&t, &rp);
	assert_int_equal(rp.unknown_frees, 0);
	assert_int_equal(rp.double_allocs, 0);
	e2e_free(&t);
	assert_null(strstr(p->r.stderr_text, "internal error"));
	assert_null(strstr(p->r.stderr_text, "inside one CUDA call"));
}

/* siglongjmp out of a blocked cudaFree (4001 calls: 4000 events, 1 lost) */
static void test_longjmp_out_of_a_hooked_call(void **s)
{
	(void)s;
	const char *args[] = {"longjmp", "1000", NULL};
	const char *env[] = {"TLM_SIM_SLOW_FREE_MS=10000", "TLM_DRAIN_MS=20", NULL};
	struct hw_proc p;
	run(&p, args, env);
	uint64_t calls = note_calls(&p);
	assert_int_equal(calls, 4002);
	check_trace(&p, calls - 1, 1);
	hw_cleanup(&p);
}

/* cancelled inside a blocked cudaFree, well within the second a thread may
 * stay inside before the others pass it */
static void test_cancelled_inside_a_hooked_call(void **s)
{
	(void)s;
	const char *args[] = {"cancel", "1000", NULL};
	const char *env[] = {"TLM_SIM_SLOW_FREE_MS=10000", "TLM_DRAIN_MS=20", NULL};
	struct hw_proc p;
	run(&p, args, env);
	uint64_t calls = note_calls(&p);
	assert_int_equal(calls, 2002);
	check_trace(&p, calls - 1, 1);
	hw_cleanup(&p);
}

/* 32 threads whose first event is a 300 ms free, drained every 10 ms */
static void test_slow_first_event_is_not_stuck(void **s)
{
	(void)s;
	const char *args[] = {"firstfree", "32", NULL};
	const char *env[] = {"TLM_SIM_SLOW_FREE_MS=300", "TLM_DRAIN_MS=10", NULL};
	struct hw_proc p;
	run(&p, args, env);
	uint64_t calls = note_calls(&p);
	assert_int_equal(calls, 128);
	check_trace(&p, calls, 0);
	hw_cleanup(&p);
}

static size_t read_file(const struct hw_proc *p, const char *name, char *buf, size_t len)
{
	char path[600];
	snprintf(path, sizeof path, "%s/%s", p->r.dir, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

/* fd 2 moved to a file of the host's: the summary and tlm's lines (the
 * stack cache's, TLM_DEBUG_STACK_STATS) go to the stderr the program started
 * with; the host's file holds exactly the host's line */
static void test_lines_stay_on_the_starting_stderr(void **s)
{
	(void)s;
	char tool[600];
	snprintf(tool, sizeof tool, "TLM_TOOL=%s", getenv("TLM_TEST_TLM"));
	for (int gone = 0; gone < 2; gone++) {
		const char *args[] = {gone ? "stderr-gone" : "stderr", "100", NULL};
		const char *env[] = {"TLM_SUMMARY=1", "TLM_DEBUG_STACK_STATS=1", tool, NULL};
		struct hw_proc p;
		run(&p, args, env);
		char host[4096];
		read_file(&p, "host.err", host, sizeof host);
		if (strcmp(host, "the host's own line\n"))
			fprintf(stderr, "host.err holds:\n%s\n", host);
		assert_string_equal(host, "the host's own line\n");
		if (gone) {
			/* tlm's copy was closed and its number taken: tlm says nothing */
			assert_int_equal(read_file(&p, "other.err", host, sizeof host), 0);
		} else {
			assert_non_null(strstr(p.r.stderr_text, "stack cache:"));
			assert_non_null(strstr(p.r.stderr_text, "full report: tlm report"));
		}
		check_trace(&p, note_calls(&p), 0);
		hw_cleanup(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_longjmp_out_of_a_hooked_call),
		cmocka_unit_test(test_cancelled_inside_a_hooked_call),
		cmocka_unit_test(test_slow_first_event_is_not_stuck),
		cmocka_unit_test(test_lines_stay_on_the_starting_stderr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
