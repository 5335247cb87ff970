/* SPDX-License-Identifier: MIT */
/*
 * test_edges.c - the edges of a process, end to end (issue 13): what was
 * recorded before _exit or a termination signal is in the trace, which says
 * how the process ended; the host sees its own dispositions, exit status,
 * descriptors and children; children made without fork() are told apart.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"
#include "tlm_test.h"

static bool under_tsan(void)
{
	const char *first = getenv("TLM_TEST_PRELOAD_FIRST");
	return first && strstr(first, "tsan");
}

static void show_on_failure(const struct run *r, bool ok)
{
	if (!ok)
		fprintf(stderr, "workload status 0x%x, stderr:\n%s\n", r->status, r->stderr_text);
}

static void load_single(const struct run *r, struct trace *t)
{
	char paths[4][512];
	size_t n = e2e_traces(r, paths, 4);
	show_on_failure(r, n == 1);
	assert_int_equal(n, 1);
	assert_int_equal(e2e_load(t, paths[0]), 0);
	assert_int_equal(t->nerrors, 0);
}

/* _exit and _Exit straight after the calls: all there, "left by _exit" */
static void check_fast_exit(const char *how)
{
	const char *args[] = {"fast-exit", how, "5", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 7);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 7); /* the host's status, untouched */
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_string_equal(t.end_how, how);
	assert_int_equal(t.nend, 1);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	/* with their stacks: the drain at _exit may not allocate, and it can be
	 * the trace's first */
	assert_true(t.nev > 0);
	for (size_t i = 0; i < t.nev; i++) {
		uint32_t id = t.ev[i].stack_id;
		assert_true(id > 0 && id < t.nstacks && t.stack_first[id] != 0);
	}
	e2e_free(&t);
}

static void test_exit_fast_keeps_everything(void **s)
{
	(void)s;
	check_fast_exit("_exit");
	check_fast_exit("_Exit");
}

/* each termination signal at its default action: every call in the trace,
 * a SIGNAL record, and the process still dies of that signal */
static void test_term_signals_flush_and_kill(void **s)
{
	(void)s;
	int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		char num[8];
		snprintf(num, sizeof num, "%d", sigs[i]);
		const char *args[] = {"term", num, "3", NULL};
		const char *env[] = {"TLM_DRAIN_MS=10000", NULL}; /* no drain would have saved them */
		struct run r;
		assert_int_equal(e2e_run(&r, args, env), 0);
		show_on_failure(&r, WIFSIGNALED(r.status) && WTERMSIG(r.status) == sigs[i]);
		assert_true(WIFSIGNALED(r.status));
		assert_int_equal(WTERMSIG(r.status), sigs[i]);
		struct trace t;
		load_single(&r, &t);
		assert_int_equal(t.state, TLM_TRACE_SIGNAL);
		assert_int_equal(t.signo, sigs[i]);
		assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
		e2e_free(&t);
	}
}

static void test_host_sees_its_own_dispositions(void **s)
{
	(void)s;
	/* ThreadSanitizer runs handlers at its own safe points, later than the
	 * kernel would: the moment a signal acts is not the program's */
	if (under_tsan())
		tlm_test_skip("build", "ThreadSanitizer runs signal handlers late: the moment a signal acts is tested in the other builds");
	const char *args[] = {"sigview", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGUSR2);
	assert_string_equal(e2e_note(&r, "dfl"), "6");
	assert_string_equal(e2e_note(&r, "signal_prev_dfl"), "1");
	assert_string_equal(e2e_note(&r, "signal_prev_h"), "1");
	assert_string_equal(e2e_note(&r, "ign"), "1");
	assert_string_equal(e2e_note(&r, "dfl_flags"), "1");
	assert_string_equal(e2e_note(&r, "alive"), "1");
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_SIGNAL);
	assert_int_equal(t.signo, SIGUSR2);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	e2e_free(&t);
}

static size_t count_in_file(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f), hits = 0, l = strlen(needle);
	fclose(f);
	for (size_t i = 0; i + l <= n; i++)
		hits += !memcmp(buf + i, needle, l);
	return hits;
}

static size_t count_lines(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* the host closes every descriptor >= 3 and opens its own files: not one
 * trace byte lands in them; one line says the trace stopped */
static void test_closed_descriptor_never_written(void **s)
{
	(void)s;
	/* ThreadSanitizer calls the host's close of a descriptor another thread
	 * uses a race, which it is by design here; the other builds run it */
	if (under_tsan())
		tlm_test_skip("build", "ThreadSanitizer calls closing a descriptor another thread uses a race: tested in the other builds");
	char own[600];
	struct run r;
	const char *args[] = {"closefds", NULL};
	char envv[700];
	snprintf(own, sizeof own, "/tmp/tlm-e2e-own-%d", (int)getpid());
	unlink(own);
	snprintf(envv, sizeof envv, "WL_OWN_FILE=%s", own);
	const char *env[] = {envv, NULL};
	assert_int_equal(e2e_run(&r, args, env), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	struct stat st;
	assert_int_equal(stat(own, &st), 0);
	assert_int_equal(st.st_size, 0); /* the host wrote nothing; neither did tlm */
	assert_int_equal(count_in_file(own, "TLMK"), 0);
	unlink(own);
	/* one line from tlm: the trace stopped */
	assert_int_equal(count_lines(r.stderr_text, "no longer refers to"), 1);
	assert_int_equal(count_lines(r.stderr_text, "tlm["), 1);
	struct trace t;
	load_single(&r, &t);
	assert_true(t.nev >= 3); /* what was drained before the close */
	e2e_free(&t);
}

/* a pipe dup2'ed over the trace descriptor: nothing reaches the peer, one
 * line says so, the trace keeps what was written before */
static void test_replaced_descriptor_never_written(void **s)
{
	(void)s;
	const char *args[] = {"dup2over", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_string_equal(e2e_note(&r, "leaked"), "0");
	assert_int_equal(count_lines(r.stderr_text, "no longer refers to"), 1);
	assert_int_equal(count_lines(r.stderr_text, "tlm["), 1);
	assert_true(e2e_note_num(&r, "tracefd") >= 100); /* kept high, out of the host's way */
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_TRUNCATED);
	assert_true(t.nev >= 3);
	e2e_free(&t);
}

/* RLIMIT_FSIZE: the trace write fails, the host is not killed by SIGXFSZ */
static void test_fsize_limit_spares_host(void **s)
{
	(void)s;
	const char *args[] = {"fsize", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_int_equal(count_lines(r.stderr_text, "tlm["), 1);
	assert_non_null(strstr(r.stderr_text, "File too large"));
}

/* syscall(SYS_fork): the child is told by the wiped mark, gets its own
 * trace with exactly its own events, and never hangs at exit. It starts no
 * writer thread (writer.h: a lock a parent's thread held at the fork stays
 * held in the child; under ASan 39 in 2000 children hung in their writer's
 * start), so its producer drains: a 256-slot ring, filled many times. */
static void test_raw_fork_child_recognised(void **s)
{
	(void)s;
	if (under_tsan())
		tlm_test_skip("build", "ThreadSanitizer cannot follow a raw fork of a threaded process: tested in the other builds");
	const char *args[] = {"rawfork", NULL};
	const char *env[] = {"TLM_RING_SIZE=256", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, env), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_null(e2e_note(&r, "child_hung"));
	assert_int_equal(e2e_note_num(&r, "child_threads"), 1);
	char paths[4][512];
	assert_int_equal(e2e_traces(&r, paths, 4), 2);
	assert_non_null(e2e_note(&r, "parent"));
	assert_non_null(e2e_note(&r, "child"));
	int parent = e2e_note_num(&r, "parent");
	int child = e2e_note_num(&r, "child");
	unsigned long long caddr = strtoull(strchr(e2e_note(&r, "child"), ' ') + 1, NULL, 16);
	for (int k = 0; k < 2; k++) {
		struct trace t;
		assert_int_equal(e2e_load(&t, paths[k]), 0);
		assert_int_equal(t.nerrors, 0);
		assert_int_equal(t.state, TLM_TRACE_CLEAN);
		assert_int_equal(t.nend, 1);
		if ((int)t.hdr.pid == parent) {
			assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
		} else {
			assert_int_equal((int)t.hdr.pid, child);
			assert_int_equal(t.lost, 0);
			assert_int_equal(t.nev, 2 + 2 * 3000); /* RAWFORK_PAIRS of workload_edges.c */
			assert_int_equal(t.ev[0].op, TLM_OP_ALLOC);
			assert_int_equal(t.ev[0].addr, caddr);
			assert_int_equal(t.ev[0].size, 31337);
			for (size_t i = 1; i + 1 < t.nev; i += 2) {
				assert_int_equal(t.ev[i].op, TLM_OP_ALLOC);
				assert_int_equal(t.ev[i].size, 4242);
				assert_int_equal(t.ev[i + 1].op, TLM_OP_FREE);
				assert_int_equal(t.ev[i + 1].addr, t.ev[i].addr);
			}
			assert_int_equal(t.ev[t.nev - 1].op, TLM_OP_FREE);
			assert_int_equal(t.ev[t.nev - 1].addr, caddr);
		}
		e2e_free(&t);
	}
	/* a raw child that records nothing leaves no trace and does not hang */
	const char *args2[] = {"rawfork-quiet", NULL};
	assert_int_equal(e2e_run(&r, args2, NULL), 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	assert_null(e2e_note(&r, "child_hung"));
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_int_equal(t.nend, 1);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	e2e_free(&t);
}

/* vfork, failed exec, exit(): the child writes nothing into the parent's
 * trace (it used to write END and close it); the parent keeps recording and
 * its exit still ends the trace, though glibc ran its destructors in the
 * child */
static void test_vfork_child_exit_leaves_parent_alone(void **s)
{
	(void)s;
	const char *args[] = {"vfork-exit", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_int_equal(t.nend, 1);
	assert_int_equal(t.events_after_end, 0);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	e2e_free(&t);
}

/* a failed exec: one trace, ended once at exit, still written in chunks */
static void test_failed_exec_goes_on(void **s)
{
	(void)s;
	const char *args[] = {"exec-fail", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_string_equal(t.end_how, "exit");
	assert_int_equal(t.nend, 1);
	assert_int_equal(t.events_after_end, 0);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	struct stat st;
	assert_int_equal(stat(t.path, &st), 0);
	/* batched chunks: ~10 bytes an event; one chunk per event was ~60 */
	assert_true((size_t)st.st_size < 20 * t.nev + 4096);
	e2e_free(&t);
}

/* A host's dlclose from inside a dl_iterate_phdr callback while the writer
 * thread waits for the loader lock in its module scan (TLM_DRAIN_MS=1): the
 * run ends, and its trace is whole. */
static void test_dlclose_inside_dl_iterate_phdr(void **s)
{
	(void)s;
	const char *args[] = {"dlclose-in-iterate", NULL};
	const char *env[] = {"TLM_DRAIN_MS=1", NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, env), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	struct trace t;
	load_single(&r, &t);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	e2e_free(&t);
}

/* SIGCHLD ignored, or reaped by a handler: the summary neither spins nor
 * shows the host a child */
static void test_summary_with_host_sigchld(void **s)
{
	(void)s;
	static const char *modes[] = {"ign", "reap"};
	char tool[600];
	snprintf(tool, sizeof tool, "TLM_TOOL=%s", getenv("TLM_TEST_TLM"));
	for (int m = 0; m < 2; m++) {
		const char *args[] = {"sigchld", modes[m], NULL};
		const char *env[] = {"TLM_SUMMARY=1", tool, NULL};
		struct run r;
		assert_int_equal(e2e_run(&r, args, env), 0);
		show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
		assert_true(WIFEXITED(r.status));
		assert_int_equal(WEXITSTATUS(r.status), 0);
		assert_null(e2e_note(&r, "reaped"));
		assert_non_null(strstr(r.stderr_text, "full report: tlm report"));
	}
}

/* relative TLM_OUTPUT and a chdir: the trace lands where the process
 * started, and the summary finds it */
static void test_relative_output_survives_chdir(void **s)
{
	(void)s;
	char old[4096], dir[] = "/tmp/tlm-e2e-rel-XXXXXX", tool[600];
	assert_non_null(getcwd(old, sizeof old));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	snprintf(tool, sizeof tool, "TLM_TOOL=%s", getenv("TLM_TEST_TLM"));
	const char *args[] = {"chdir", NULL};
	const char *env[] = {"TLM_OUTPUT=rel-%p.trace", "TLM_SUMMARY=1", tool, NULL};
	struct run r;
	assert_int_equal(e2e_run(&r, args, env), 0);
	assert_int_equal(chdir(old), 0);
	show_on_failure(&r, WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
	assert_int_equal(WEXITSTATUS(r.status), 0);
	char want[200], cmd[400];
	snprintf(want, sizeof want, "full report: tlm report %s/rel-", dir);
	assert_non_null(strstr(r.stderr_text, want));
	assert_non_null(strstr(r.stderr_text, "2 events"));
	snprintf(cmd, sizeof cmd, "ls %s/rel-*.trace >/dev/null 2>&1 && rm -rf '%s'", dir, dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_fast_keeps_everything),
		cmocka_unit_test(test_term_signals_flush_and_kill),
		cmocka_unit_test(test_host_sees_its_own_dispositions),
		cmocka_unit_test(test_closed_descriptor_never_written),
		cmocka_unit_test(test_replaced_descriptor_never_written),
		cmocka_unit_test(test_fsize_limit_spares_host),
		cmocka_unit_test(test_raw_fork_child_recognised),
		cmocka_unit_test(test_vfork_child_exit_leaves_parent_alone),
		cmocka_unit_test(test_failed_exec_goes_on),
		cmocka_unit_test(test_dlclose_inside_dl_iterate_phdr),
		cmocka_unit_test(test_summary_with_host_sigchld),
		cmocka_unit_test(test_relative_output_survives_chdir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
