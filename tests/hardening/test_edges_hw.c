/* SPDX-License-Identifier: MIT */
/*
 * test_edges_hw.c - the catchable ends of a busy multi-threaded process at
 * random moments (issue 13): a termination signal at its default action, and
 * _exit from one of the allocating threads. Every call that returned before
 * the end is in the trace, the trace replays consistently, it says how the
 * process ended, and the process ends exactly as it would without tlm.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw.h"
#include "hw_progress.h"

#define THREADS 4

static void msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static struct hw_progress *map_progress(const struct hw_proc *p, int *fd)
{
	char pp[600];
	snprintf(pp, sizeof pp, "%s/progress", p->r.dir);
	for (int w = 0; w < 5000 && (*fd = open(pp, O_RDONLY)) < 0; w++)
		msleep(1);
	assert_true(*fd >= 0);
	struct hw_progress *prog = mmap(NULL, sizeof *prog, PROT_READ, MAP_SHARED, *fd, 0);
	assert_true(prog != MAP_FAILED);
	return prog;
}

static uint64_t calls_now(const struct hw_progress *prog)
{
	uint64_t c = 0;
	for (unsigned k = 0; k < HW_MAX_THREADS; k++)
		c += atomic_load(&((struct hw_progress *)prog)->t[k].calls);
	return c;
}

static void load_one(const struct hw_proc *p, struct trace *t)
{
	char paths[4][512];
	assert_int_equal(e2e_traces(&p->r, paths, 4), 1);
	assert_int_equal(e2e_load(t, paths[0]), 0);
	assert_int_equal(t->nerrors, 0);
	assert_int_equal(t->lost, 0);
	struct hw_replay rp;
	hw_replay(t, &rp);
	assert_int_equal(rp.unknown_frees, 0);
	assert_int_equal(rp.double_allocs, 0);
}

static unsigned seed_from_env(const char *what)
{
	unsigned seed = getenv("TLM_TEST_HW_SEED") ? (unsigned)atoi(getenv("TLM_TEST_HW_SEED"))
						    : (unsigned)(hw_now_ns() % 1000000);
	fprintf(stderr, "%s: seed %u (TLM_TEST_HW_SEED)\n", what, seed);
	return seed;
}

/* SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 at random moments */
static void test_term_signal_random_moments(void **s)
{
	(void)s;
	srand(seed_from_env("term"));
	struct rlimit nocore = {0, 0};
	setrlimit(RLIMIT_CORE, &nocore); /* SIGQUIT dumps core otherwise */
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	char nth[8];
	snprintf(nth, sizeof nth, "%d", THREADS);
	for (int i = 0; i < 12; i++) {
		int sig = sigs[i % 6];
		unsigned delay = 5 + (unsigned)(rand() % 196);
		const char *args[] = {"busy", nth, NULL};
		const char *env[] = {"TLM_DRAIN_MS=20", NULL};
		struct hw_proc p;
		assert_int_equal(hw_start(&p, args, env), 0);
		int fd;
		struct hw_progress *prog = map_progress(&p, &fd);
		char paths[4][512];
		for (int w = 0; w < 5000 && e2e_traces(&p.r, paths, 4) == 0; w++)
			msleep(1);
		msleep(delay);
		uint64_t before = calls_now(prog); /* returned before the signal was sent */
		kill(p.pid, sig);
		hw_wait(&p, 30000);
		assert_false(p.timed_out);
		if (!WIFSIGNALED(p.r.status) || WTERMSIG(p.r.status) != sig)
			fprintf(stderr, "status %#x, stderr:\n%s\n", p.r.status, p.r.stderr_text);
		assert_true(WIFSIGNALED(p.r.status));
		assert_int_equal(WTERMSIG(p.r.status), sig);
		uint64_t after = calls_now(prog);
		struct trace t;
		load_one(&p, &t);
		if (t.state != TLM_TRACE_SIGNAL) {
			char err[256];
			struct tlm_reader *rd = tlm_reader_open(t.path, err, sizeof err);
			static struct tlm_record rec;
			while (rd && tlm_reader_next(rd, &rec) == 1)
				;
			const char *cut = rd ? tlm_reader_truncation(rd, NULL) : NULL;
			fprintf(stderr, "state %d, %zu signal records, %s, stderr:\n%s\n", t.state, t.nsignals,
				cut ? cut : "not cut", p.r.stderr_text);
			if (rd)
				tlm_reader_close(rd);
		}
		assert_int_equal(t.state, TLM_TRACE_SIGNAL);
		assert_int_equal(t.signo, sig);
		fprintf(stderr, "term %2d: signal %2d at %3u ms: %8zu events, %8llu calls before it, %8llu at the end\n", i,
			sig, delay, t.nev, (unsigned long long)before, (unsigned long long)after);
		/* + main's warm-up pair, done before the threads start (a signal
		 * can come while it is still in flight: the trace starts with it) */
		assert_true(t.nev >= before + (before ? 2 : 0));
		assert_true(t.nev <= after + 2 + THREADS);     /* nothing that was not done */
		e2e_free(&t);
		munmap(prog, sizeof *prog);
		close(fd);
		hw_cleanup(&p);
	}
}

/* one of the allocating threads leaves by _exit while the others go on */
static void test_exit_from_thread_random_moments(void **s)
{
	(void)s;
	srand(seed_from_env("busyexit"));
	char nth[8];
	snprintf(nth, sizeof nth, "%d", THREADS);
	for (int i = 0; i < 8; i++) {
		char ms[16];
		snprintf(ms, sizeof ms, "%u", 5 + (unsigned)(rand() % 196));
		const char *args[] = {"busyexit", nth, ms, NULL};
		const char *env[] = {"TLM_DRAIN_MS=20", NULL};
		struct hw_proc p;
		assert_int_equal(hw_start(&p, args, env), 0);
		int fd;
		struct hw_progress *prog = map_progress(&p, &fd);
		hw_wait(&p, 30000);
		assert_false(p.timed_out);
		if (!WIFEXITED(p.r.status) || WEXITSTATUS(p.r.status) != 5)
			fprintf(stderr, "status %#x, stderr:\n%s\n", p.r.status, p.r.stderr_text);
		assert_true(WIFEXITED(p.r.status));
		assert_int_equal(WEXITSTATUS(p.r.status), 5);
		uint64_t at_exit = atomic_load(&prog->calls_at_exit), after = calls_now(prog);
		assert_true(at_exit > 0);
		struct trace t;
		load_one(&p, &t);
		assert_int_equal(t.state, TLM_TRACE_CLEAN);
		assert_string_equal(t.end_how, "_exit");
		fprintf(stderr, "busyexit %d: after %s ms: %8zu events, %8llu calls before _exit, %8llu at the end\n", i,
			ms, t.nev, (unsigned long long)at_exit, (unsigned long long)after);
		assert_true(t.nev >= at_exit + 2);
		assert_true(t.nev <= after + 2 + THREADS);
		e2e_free(&t);
		munmap(prog, sizeof *prog);
		close(fd);
		hw_cleanup(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_signal_random_moments),
		cmocka_unit_test(test_exit_from_thread_random_moments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
