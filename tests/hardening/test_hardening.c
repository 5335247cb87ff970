/* SPDX-License-Identifier: MIT */
/*
 * test_hardening.c - fault injection, end to end (suite 'hardening'): the
 * hardening workload (hw_workload.c) runs under libtlm.so on the simulated
 * driver and is killed with SIGKILL at random moments, forks while 64 threads
 * allocate, takes a storm of signals, and makes CUDA calls after the final
 * flush. Each run has a deadline (a deadlock fails instead of hanging).
 *
 * TLM_TEST_HW_SEED=N replays the random kill moments of a failed run (the
 * seed is printed); TLM_TEST_HW_ONLY=PATTERN runs only the matching tests.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hw.h"
#include "hw_progress.h"
#include "tlm_test.h"


static int sanitized(void)
{
	const char *first = getenv("TLM_TEST_PRELOAD_FIRST");
	return first && *first;
}

static void msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void expect_exit0(const struct hw_proc *p)
{
	if (p->timed_out || !WIFEXITED(p->r.status) || WEXITSTATUS(p->r.status) != 0)
		fprintf(stderr, "workload status %#x, stderr:\n%s\n", p->r.status, p->r.stderr_text);
	assert_false(p->timed_out);
	assert_true(WIFEXITED(p->r.status));
	assert_int_equal(WEXITSTATUS(p->r.status), 0);
}

static unsigned long long note_ull(const struct run *r, const char *key)
{
	const char *v = e2e_note(r, key);
	if (!v)
		fprintf(stderr, "no note '%s' from the workload; stderr:\n%s\n", key, r->stderr_text);
	assert_non_null(v);
	return strtoull(v, NULL, 10);
}

static void expect_consistent(const struct trace *t)
{
	struct hw_replay rp;
	hw_replay(t, &rp);
	if (rp.unknown_frees || rp.double_allocs)
		fprintf(stderr, "%s: %zu frees of unknown addresses, %zu allocations of live addresses\n", t->path,
			rp.unknown_frees, rp.double_allocs);
	assert_int_equal(rp.unknown_frees, 0);
	assert_int_equal(rp.double_allocs, 0);
}

/* The run's one trace, loaded: no integrity error, in that state. */
static void load_only_trace(const struct run *r, struct trace *t, int state)
{
	char paths[4][512];
	assert_int_equal(e2e_traces(r, paths, 4), 1);
	assert_int_equal(e2e_load(t, paths[0]), 0);
	assert_int_equal(t->nerrors, 0);
	assert_int_equal(t->state, state);
}

/* ---- (a) kill -9 at random moments of a busy multi-threaded run ------- */

static uint64_t progress_calls(const struct hw_progress *prog)
{
	uint64_t calls = 0;
	for (unsigned k = 0; k < prog->nthreads && k < HW_MAX_THREADS; k++)
		calls += atomic_load_explicit(&prog->t[k].calls, memory_order_acquire);
	return calls;
}

#define KILL_RUNS 20
#define BUSY_THREADS 4
#define DRAIN_MS 20

/* Polls the trace until it holds n events (every call of a paused
 * workload: the writer drained them all); false after 30 s. */
static bool wait_for_events(const char *path, size_t n)
{
	size_t have = 0;
	int loaded = -1;
	for (uint64_t until = hw_now_ns() + 30000000000ull; hw_now_ns() < until;) {
		struct trace t;
		if ((loaded = e2e_load(&t, path)) == 0) {
			have = t.nev;
			e2e_free(&t);
			if (have >= n)
				return have == n;
		}
		msleep(5);
	}
	fprintf(stderr, "%s: %zu events of %zu after 30 s (last load: %d)\n", path, have, n, loaded);
	return false;
}

/* Every run is killed at a random moment 5..200 ms after the threads'
 * first call. Even runs die busy, mid-event and maybe mid-drain: the trace
 * must be a readable, consistent prefix of the run. Odd runs pause the
 * threads first (between two calls), wait until the trace on disk holds
 * every call, then die: the loss bound, as events, not time (what the
 * writer had drained survives SIGKILL, and it drains without an end). How
 * far the busy runs' last event on disk lies behind the kill depends on how
 * the machine schedules the writer; it is printed, not asserted. */
static void test_kill9_random_moments(void **s)
{
	(void)s;
	unsigned seed = getenv("TLM_TEST_HW_SEED") ? (unsigned)atoi(getenv("TLM_TEST_HW_SEED"))
						    : (unsigned)(hw_now_ns() % 1000000);
	fprintf(stderr, "kill9: seed %u (TLM_TEST_HW_SEED)\n", seed);
	srand(seed);
	double worst_gap = 0;
	size_t worst_missing = 0, total_ev = 0;
	char nth[8], drain[32];
	snprintf(nth, sizeof nth, "%d", BUSY_THREADS);
	snprintf(drain, sizeof drain, "TLM_DRAIN_MS=%d", DRAIN_MS);
	for (int i = 0; i < KILL_RUNS; i++) {
		bool paused = i % 2;
		unsigned delay = 5 + (unsigned)(rand() % 196);
		const char *args[] = {"busy", nth, NULL};
		const char *env[] = {drain, NULL};
		struct hw_proc p;
		assert_int_equal(hw_start(&p, args, env), 0);
		/* the trace file exists once the warm-up's first event came, and
		 * the progress page (made before the warm-up) is sized */
		char paths[4][512];
		size_t n = 0;
		for (int w = 0; w < 5000 && (n = e2e_traces(&p.r, paths, 4)) == 0; w++)
			msleep(1);
		assert_int_equal(n, 1);
		char pp[600];
		snprintf(pp, sizeof pp, "%s/progress", p.r.dir);
		int fd = open(pp, O_RDWR);
		assert_true(fd >= 0);
		struct hw_progress *prog = mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(prog != MAP_FAILED);
		/* The moments count from the first busy call: the warm-up is over,
		 * so the trace's header is on disk (the file is made a little
		 * before: a kill in between would leave it empty). */
		for (int w = 0; w < 30000 && progress_calls(prog) == 0; w++)
			msleep(1);
		assert_true(progress_calls(prog) > 0);
		msleep(delay);
		uint64_t done = 0, pause_ns = hw_now_ns(), drained_ns = 0;
		if (paused) {
			atomic_store(&prog->pause, 1);
			unsigned stopped = 0;
			for (int w = 0; w < 30000 && stopped < prog->nthreads; w++) {
				msleep(1);
				stopped = 0;
				for (unsigned k = 0; k < prog->nthreads; k++)
					stopped += atomic_load(&prog->t[k].paused);
			}
			done = progress_calls(prog);
			bool all = stopped == prog->nthreads && wait_for_events(paths[0], done + 2); /* + warm-up */
			if (!all) {
				fprintf(stderr, "kill9 %2d: %u of %u threads paused; the trace never held the %llu calls done\n",
					i, stopped, prog->nthreads, (unsigned long long)done + 2);
				kill(p.pid, SIGKILL); /* a paused workload would wait for good */
				hw_wait(&p, 0);
			}
			assert_true(all);
			drained_ns = hw_now_ns();
		}
		uint64_t kill_ns = hw_now_ns();
		kill(p.pid, SIGKILL);
		hw_wait(&p, (unsigned)((kill_ns - p.start_ns) / 1000000) + 30000); /* 30 s from the kill */
		assert_false(p.timed_out);
		assert_true(WIFSIGNALED(p.r.status) && WTERMSIG(p.r.status) == SIGKILL);

		/* what the workload had done: its progress page */
		uint64_t calls = progress_calls(prog);

		struct trace t;
		assert_int_equal(e2e_traces(&p.r, paths, 4), 1);
		assert_int_equal(e2e_load(&t, paths[0]), 0);
		assert_int_equal(t.nerrors, 0);
		assert_int_equal(t.state, TLM_TRACE_TRUNCATED);
		assert_int_equal(t.nend, 0);
		assert_int_equal(t.lost, 0);
		expect_consistent(&t);
		/* nothing recorded that was not done (a call in flight may be
		 * recorded before its thread counted it) */
		assert_true(t.nev <= calls + 2 + BUSY_THREADS); /* + main's warm-up */
		if (paused) /* all of it, still there after the kill */
			assert_int_equal(t.nev, done + 2);
		uint64_t last = t.nev ? t.ev[t.nev - 1].time_ns : t.hdr.start_monotonic_ns;
		double gap = kill_ns > last ? (double)(kill_ns - last) / 1e6 : 0;
		size_t missing = calls > t.nev ? (size_t)(calls - t.nev) : 0;
		if (paused)
			fprintf(stderr, "kill9 %2d: paused %3u ms in: %8zu events on disk, all (on disk %.1f ms after the pause)\n",
				i, delay, t.nev, (double)(drained_ns - pause_ns) / 1e6);
		else
			fprintf(stderr, "kill9 %2d: busy,  %3u ms in: %8zu events on disk, %7zu not (the last %.1f ms)\n", i,
				delay, t.nev, missing, gap);
		if (!paused && gap > worst_gap)
			worst_gap = gap;
		if (missing > worst_missing)
			worst_missing = missing;
		total_ev += t.nev;
		munmap(prog, sizeof *prog);
		close(fd);
		e2e_free(&t);
		hw_cleanup(&p);
	}
	fprintf(stderr, "kill9: %d runs, %zu events read back, busy runs at most the last %.1f ms (%zu events) missing\n",
		KILL_RUNS, total_ev, worst_gap, worst_missing);
}

/* ---- (b) 64 threads allocate while main forks ------------------------- */

/* forks: how many; pause_us: the allocating threads pause this long after
 * every 32 pairs (0: flat out, so their rings are full and they wait for the
 * writer when the forks come). */
static void fork_storm(unsigned forks, unsigned pause_us, int vary)
{
	/* Normal build only. ThreadSanitizer cannot follow a child that starts
	 * threads (tlm's writer) after a multi-threaded fork. gcc 12's ASan
	 * runtime does not hold its allocator's locks across fork: a child of a
	 * parent whose threads allocate (the simulated driver mallocs) can hang
	 * in the ASan allocator (seen: the child's writer thread blocked in
	 * SizeClassAllocator64::GetFromAllocator from AsanThread::Init). The
	 * single-threaded fork of tests/shim runs in every build. */
	if (sanitized())
		tlm_test_skip("build", "sanitized build: a fork of a multi-threaded process is tested in the normal build");
	char nf[16], pz[16];
	snprintf(nf, sizeof nf, "%u", forks);
	snprintf(pz, sizeof pz, "%u", pause_us);
	const char *args[] = {"forkstorm", vary ? "16" : "64", nf, pz, vary ? "vary" : NULL, NULL};
	struct hw_proc p;
	assert_int_equal(hw_run(&p, args, NULL, vary ? 20000 : 60000), 0);
	expect_exit0(&p);
	fprintf(stderr, "forkstorm: %u forks in %.2f s, %llu events in the parent\n", forks,
		(double)(p.end_ns - p.start_ns) / 1e9, note_ull(&p.r, "events"));
	assert_int_equal(note_ull(&p.r, "children_ok"), forks);
	int parent = (int)note_ull(&p.r, "parent");
	char paths[32][512];
	assert_int_equal(e2e_traces(&p.r, paths, 32), forks + 1);
	size_t children = 0;
	for (size_t k = 0; k < forks + 1; k++) {
		struct trace t;
		assert_int_equal(e2e_load(&t, paths[k]), 0);
		assert_int_equal(t.nerrors, 0);
		assert_int_equal(t.state, TLM_TRACE_CLEAN);
		assert_int_equal(t.lost, 0);
		expect_consistent(&t);
		if ((int)t.hdr.pid == parent) {
			/* every event of the parent, none of a child's */
			assert_int_equal(t.nev, note_ull(&p.r, "events") + 2); /* + main's warm-up */
			for (size_t i = 2; i < t.nev; i++)
				assert_int_equal(t.ev[i].size, t.ev[i].op == TLM_OP_ALLOC ? 4096 : 0);
		} else {
			/* a child: exactly its own 3 pairs, of its own size */
			assert_int_equal((int)t.hdr.ppid, parent);
			unsigned long long size = 0;
			for (size_t i = 0; i < p.r.nnotes; i++) {
				int pid;
				unsigned long long sz;
				if (sscanf(p.r.notes[i], "child %d %llu", &pid, &sz) == 2 && pid == (int)t.hdr.pid)
					size = sz;
			}
			assert_true(size >= 700000 && size < 700000 + forks);
			assert_int_equal(t.nev, 6);
			for (size_t i = 0; i < 6; i++) {
				assert_int_equal(t.ev[i].op, i % 2 ? TLM_OP_FREE : TLM_OP_ALLOC);
				assert_int_equal(t.ev[i].size, i % 2 ? 0 : size);
			}
			children++;
		}
		e2e_free(&t);
	}
	assert_int_equal(children, forks);
	hw_cleanup(&p);
}

static void test_fork_storm(void **s)
{
	(void)s;
	fork_storm(20, 2000, 0);
}

static void test_fork_storm_full_rings(void **s)
{
	(void)s;
	fork_storm(4, 0, 0);
}

/* Threads whose calls come from ever new stack positions miss the unwind
 * cache, so libunwind runs and walks the loaded objects under glibc's loader
 * lock; a fork while one of them held it used to leave it locked in the
 * child, whose first recorded call deadlocked (one run in three). fork now
 * waits for unwinds in flight (stack_cache.c). */
static void test_fork_storm_while_unwinding(void **s)
{
	(void)s;
	fork_storm(20, 0, 1);
}

/* ---- (c) a storm of signals at allocating threads --------------------- */

static void signal_storm(const char *const *env)
{
	const char *args[] = {"sigstorm", "4", "1000", "1000", NULL};
	struct hw_proc p;
	assert_int_equal(hw_run(&p, args, env, 60000), 0);
	expect_exit0(&p);
	unsigned long long handled = note_ull(&p.r, "handled");
	fprintf(stderr, "sigstorm: %llu signals sent, %llu handled, %llu events\n", note_ull(&p.r, "sent"), handled,
		note_ull(&p.r, "events"));
	assert_true(handled >= 1000);
	struct trace t;
	load_only_trace(&p.r, &t, TLM_TRACE_CLEAN);
	assert_int_equal(t.lost, 0);
	assert_int_equal(t.nev, note_ull(&p.r, "events") + 2); /* every event (+ main's warm-up) */
	expect_consistent(&t);
	e2e_free(&t);
	hw_cleanup(&p);
}

static void test_signal_storm(void **s)
{
	(void)s;
	signal_storm(NULL);
}

/* The same with tiny rings and a slow writer: the threads spend their time
 * waiting for room (futex waits, the 2 ms fallback drain) when the signals
 * come. */
static void test_signal_storm_full_rings(void **s)
{
	(void)s;
	const char *env[] = {"TLM_RING_SIZE=256", "TLM_DEBUG_WRITER_DELAY_MS=5", NULL};
	signal_storm(env);
}

/* ---- (d) CUDA calls after the final flush ------------------------------ */

static void test_calls_from_atexit_and_destructor(void **s)
{
	(void)s;
	const char *args[] = {"late", NULL};
	const char *env[] = {"HW_LATE=1", NULL};
	struct hw_proc p;
	assert_int_equal(hw_run(&p, args, env, 30000), 0);
	expect_exit0(&p);
	assert_int_equal(note_ull(&p.r, "atexit1_done"), 1);
	assert_int_equal(note_ull(&p.r, "atexit2_done"), 1);
	assert_int_equal(note_ull(&p.r, "dtor_done"), 1);
	assert_null(e2e_note(&p.r, "dtor_alloc_failed"));
	/* main 1 pair, two atexit handlers 1 pair each, the destructor 3 */
	assert_int_equal(p.r.ntruth, 12);
	struct trace t;
	load_only_trace(&p.r, &t, TLM_TRACE_CLEAN);
	fprintf(stderr, "late: %zu events (%zu after END), %llu counted lost\n", t.nev, t.events_after_end,
		(unsigned long long)t.lost);
	/* every call is in the trace or counted as lost */
	assert_int_equal(t.nev + t.lost, p.r.ntruth);
	if (t.lost == 0)
		assert_int_equal(e2e_compare(&t, p.r.truth, p.r.ntruth), 0);
	expect_consistent(&t);
	e2e_free(&t);
	hw_cleanup(&p);
}

/* ---- the hot path allocates nothing and takes no mutex ----------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The distinct stack ids of events [from, nev); -1 if one has none or
 * names a stack the trace does not define. */
static long distinct_stacks(const struct trace *t, size_t from)
{
	size_t n = t->nev - from;
	uint32_t *id = malloc(n * sizeof *id);
	assert_non_null(id);
	for (size_t i = 0; i < n; i++)
		id[i] = t->ev[from + i].stack_id;
	qsort(id, n, sizeof *id, cmp_u32);
	long d = 0;
	for (size_t i = 0; i < n; i++) {
		if (!id[i] || id[i] >= t->nstacks || !t->stack_first[id[i]]) {
			free(id);
			return -1;
		}
		d += !i || id[i] != id[i - 1];
	}
	free(id);
	return d;
}

/* env: NULL, or the starved writer (see the test); bits: 0 for 20000
 * pairs from one call path, else one pair from each of 2^bits paths. Under
 * libtlm, every event is in the trace, 1000 warm-up pairs first. */
static void count_run(int plain, const char *const *env, unsigned bits, unsigned long long out[3])
{
	char nb[16];
	snprintf(nb, sizeof nb, "%u", bits);
	const char *args1[] = {"20000", NULL}, *args2[] = {"stacks", nb, NULL};
	const char **args = bits ? args2 : args1;
	struct hw_proc p;
	hw_program = getenv("TLM_TEST_HW_COUNT");
	hw_no_preload = plain;
	assert_int_equal(hw_run(&p, args, env, 60000), 0);
	expect_exit0(&p);
	out[0] = note_ull(&p.r, "malloc");
	out[1] = note_ull(&p.r, "free");
	out[2] = note_ull(&p.r, "mutex");
	if (plain) {
		char paths[1][512];
		assert_int_equal(e2e_traces(&p.r, paths, 1), 0);
	} else {
		struct trace t;
		load_only_trace(&p.r, &t, TLM_TRACE_CLEAN);
		assert_int_equal(t.lost, 0);
		assert_int_equal(t.nev, 2 * (1000 + (bits ? 1u << bits : 20000)));
		/* each path's cudaMalloc and cudaFree: a stack of its own */
		if (bits)
			assert_int_equal(distinct_stacks(&t, 2000), 2 << bits);
		e2e_free(&t);
	}
	hw_cleanup(&p);
}

static void test_hot_path_no_malloc_no_mutex(void **s)
{
	(void)s;
	/* the sanitizer runtimes own malloc; the normal build checks this */
	if (sanitized())
		tlm_test_skip("build", "sanitized build: the sanitizer owns malloc; the hot path's allocations are counted in the normal build");
	/* Twice: as usual, and with a writer thread that is not scheduled for
	 * 50 ms before each drain, as on a loaded machine: the main thread's
	 * ring fills and, after 2 ms, it drains on its own thread
	 * (tlm__writer_help_drain), which must not allocate either. That used
	 * to scan the module map (strdup of a path new since the writer's last
	 * drain): malloc 1 in 2 of 100 runs under load, every run here. */
	const char *starved[] = {"TLM_DEBUG_WRITER_DELAY_MS=50", NULL};
	unsigned long long tlm[3], slow[3], plain[3];
	count_run(0, NULL, 0, tlm);
	count_run(0, starved, 0, slow);
	count_run(1, NULL, 0, plain);
	fprintf(stderr,
		"hot path, 20000 pairs: malloc %llu/%llu/%llu, free %llu/%llu/%llu, mutex %llu/%llu/%llu "
		"(tlm/tlm with a starved writer/plain)\n",
		tlm[0], slow[0], plain[0], tlm[1], slow[1], plain[1], tlm[2], slow[2], plain[2]);
	assert_int_equal(tlm[0], plain[0]);
	assert_int_equal(tlm[1], plain[1]);
	assert_int_equal(slow[0], plain[0]);
	assert_int_equal(slow[1], plain[1]);
	/* Mutexes: none per event. The first event of a thread and each miss
	 * of the unwind cache (a call path seen for the first time) unwind with
	 * libunwind, which walks the loaded objects under glibc's loader lock;
	 * this run has a handful of call paths, so a small fixed number (22
	 * here) for 40000 events. */
	assert_true(tlm[2] >= plain[2] && tlm[2] - plain[2] <= 64);
	assert_true(slow[2] >= plain[2] && slow[2] - plain[2] <= 64);
}

/* The same with 4096 new call paths, a small ring and the starved writer:
 * the producer's own drains meet stack definitions the trace's tables can
 * only take by growing (past 2048 stacks, 65536 frames). They wait in the
 * ring for the writer thread, which may allocate; none is lost, none
 * allocated on the hot path (before: malloc 4, free 2 here). */
static void test_hot_path_new_stacks_starved_writer(void **s)
{
	(void)s;
	if (sanitized())
		tlm_test_skip("build", "sanitized build: the sanitizer owns malloc; the hot path's allocations are counted in the normal build");
	const char *starved[] = {"TLM_DEBUG_WRITER_DELAY_MS=50", "TLM_RING_SIZE=1024", NULL};
	unsigned long long slow[3], plain[3];
	count_run(0, starved, 12, slow);
	count_run(1, NULL, 12, plain);
	fprintf(stderr, "hot path, 4096 call paths: malloc %llu/%llu, free %llu/%llu (tlm with a starved writer/plain)\n",
		slow[0], plain[0], slow[1], plain[1]);
	assert_int_equal(slow[0], plain[0]);
	assert_int_equal(slow[1], plain[1]);
}

/* ---- setuid/setgid processes: libtlm does nothing ---------------------- */

/* Runs hw_secure as uid/gid 65534 from a setuid-root copy (secure = 1) or
 * as root from a plain copy (secure = 0); returns the number of trace files
 * it left, or -1 when the system cannot make a secure process here. */
static int secure_run(int secure)
{
	char dir[] = "/tmp/tlm-hw-suid-XXXXXX", prog[300], out[400], cmd[1200], res[300];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(prog, sizeof prog, "%s/hw_secure", dir);
	snprintf(res, sizeof res, "%s/result", dir);
	snprintf(cmd, sizeof cmd, "cp %s %s && chmod %s %s", getenv("TLM_TEST_HW_SECURE"), prog,
		 secure ? "4755" : "0755", prog);
	assert_int_equal(system(cmd), 0);
	snprintf(out, sizeof out, "TLM_OUTPUT=%s/t-%%p.trace", dir);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tlm_test_child_signals();
		int fd = open(res, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		if (secure && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(9);
		char *argv[] = {prog, NULL};
		char *envp[] = {out, "TLM_SUMMARY=0", NULL};
		execve(prog, argv, envp);
		_exit(127);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	char line[128] = "";
	FILE *f = fopen(res, "r");
	if (f) {
		if (!fgets(line, sizeof line, f))
			line[0] = 0;
		fclose(f);
	}
	unsigned long sec = 9;
	int r = -1;
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && sscanf(line, "secure %lu result %d", &sec, &r) == 2;
	if (!ok)
		fprintf(stderr, "hw_secure: status %#x, output '%s'\n", st, line);
	assert_true(ok);
	int traces = 0;
	snprintf(cmd, sizeof cmd, "ls %s | grep -c '^t-' > %s/count; true", dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s/count", dir);
	f = fopen(cmd, "r");
	if (f) {
		if (fscanf(f, "%d", &traces) != 1)
			traces = 0;
		fclose(f);
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if ((unsigned long)secure != sec)
		return -1; /* e.g. /tmp mounted nosuid */
	fprintf(stderr, "hw_secure: AT_SECURE %lu, cudaMalloc -> %d, %d trace file(s)\n", sec, r, traces);
	return traces;
}

static void test_setuid_process_ignored(void **s)
{
	(void)s;
	if (geteuid() != 0)
		tlm_test_skip("privilege", "not root: no setuid-root program can be made here");
	/* hw_secure links libtlm.so; a sanitized one needs its runtime
	 * preloaded, which a secure process refuses: normal build only */
	if (sanitized())
		tlm_test_skip("build", "sanitized build: a setuid process refuses the preloaded sanitizer runtime");
	/* control: the same program, not privileged, is recorded */
	assert_int_equal(secure_run(0), 1);
	int n = secure_run(1);
	if (n < 0)
		tlm_test_skip("privilege", "the setuid bit did not take (a file system mounted nosuid?)");
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_random_moments),
		cmocka_unit_test(test_fork_storm),
		cmocka_unit_test(test_fork_storm_full_rings),
		cmocka_unit_test(test_fork_storm_while_unwinding),
		cmocka_unit_test(test_signal_storm),
		cmocka_unit_test(test_signal_storm_full_rings),
		cmocka_unit_test(test_calls_from_atexit_and_destructor),
		cmocka_unit_test(test_hot_path_no_malloc_no_mutex),
		cmocka_unit_test(test_hot_path_new_stacks_starved_writer),
		cmocka_unit_test(test_setuid_process_ignored),
	};
	if (getenv("TLM_TEST_HW_ONLY"))
		cmocka_set_test_filter(getenv("TLM_TEST_HW_ONLY"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
