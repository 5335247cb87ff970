/* SPDX-License-Identifier: MIT */
/*
 * test_cupti.c - CUPTI as the second source, end to end on the simulated
 * driver with the CUPTI double (build/src/sim/cupti/libcupti.so.13):
 *   - every interception path with CUPTI attached records each call once,
 *     without the CUPTI flag (de-duplication);
 *   - calls that bypass every interposed entry point are recorded, flagged
 *     TLM_EVF_CUPTI, with their results and out-parameters, frees stamped
 *     before the real free; `tlm info` names them on its "sources" line;
 *   - a runtime call whose driver work CUPTI's driver domain does not show is
 *     recorded at the runtime layer, once;
 *   - another subscriber (error 39): one line naming it, interposition alone,
 *     cuptiFinalize never called; CUPTI 13.2 multi-subscriber mode is used;
 *   - TLM_CUPTI=off|on|auto, and CUDA_INJECTION64_PATH=libtlm.so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e.h"

struct ctx {
	char logdir[64];
	char log[128];
	char libenv[600];
	char logenv[200];
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof *c);
	snprintf(c->logdir, sizeof c->logdir, "/tmp/tlm-cupti-XXXXXX");
	if (!mkdtemp(c->logdir))
		return -1;
	snprintf(c->log, sizeof c->log, "%s/cupti.log", c->logdir);
	const char *lib = getenv("TLM_TEST_CUPTI");
	if (!lib)
		return -1;
	snprintf(c->libenv, sizeof c->libenv, "TLM_CUPTI_LIBRARY=%s", lib);
	snprintf(c->logenv, sizeof c->logenv, "TLM_SIM_CUPTI_LOG=%s", c->log);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	unlink(c->log);
	rmdir(c->logdir);
	free(c);
	return 0;
}

/* How many lines of the double's log start with prefix (-1: no log). */
static int log_count(const struct ctx *c, const char *prefix)
{
	FILE *f = fopen(c->log, "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += !strncmp(line, prefix, strlen(prefix));
	fclose(f);
	return n;
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Runs a scenario, checks the run and its one clean trace; *t is loaded. */
static void run_ok(struct ctx *c, struct run *r, struct trace *t, const char *scenario, const char *const *env)
{
	unlink(c->log);
	const char *args[] = {scenario, NULL};
	assert_int_equal(e2e_run(r, args, env), 0);
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
		fprintf(stderr, "workload stderr:\n%s\n", r->stderr_text);
	assert_true(WIFEXITED(r->status));
	assert_int_equal(WEXITSTATUS(r->status), 0);
	char paths[4][512];
	assert_int_equal(e2e_traces(r, paths, 4), 1);
	assert_int_equal(e2e_load(t, paths[0]), 0);
	assert_int_equal(t->state, TLM_TRACE_CLEAN);
	assert_int_equal(t->nerrors, 0);
	assert_int_equal(t->lost, 0);
	assert_true(r->ntruth > 0);
	/* tlm never finalizes CUPTI */
	assert_true(log_count(c, "finalize") <= 0);
}

static void check_oom(const struct run *r, const struct trace *t)
{
	const char *oom = e2e_note(r, "oom_free");
	if (!oom)
		return;
	size_t k = 0;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].result == 2 && t->ev[i].op == TLM_OP_ALLOC) {
			assert_int_equal(t->ev[i].device_free, strtoull(oom, NULL, 10));
			k++;
		}
	assert_int_equal(k, 1);
}

static size_t count_cupti(const struct trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].flags & TLM_EVF_CUPTI) {
			/* a CUPTI event has a stack too */
			assert_true(t->ev[i].stack_id > 0 && t->ev[i].stack_id < t->nstacks);
			assert_true(t->stack_depth[t->ev[i].stack_id] > 0);
			n++;
		}
	return n;
}

static void done(struct run *r, struct trace *t)
{
	e2e_free(t);
	free(r->truth);
}

/* The line of `tlm info TRACE` that starts with key ("sources:", "cupti:"). */
static void info_line(const char *trace, const char *key, char *out, size_t n)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "'%s' info '%s'", getenv("TLM_TEST_TLM"), trace);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[1024];
	out[0] = 0;
	while (fgets(line, sizeof line, p))
		if (!strncmp(line, key, strlen(key))) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, n, "%s", line);
		}
	pclose(p);
}

static void info_sources(const char *trace, char *out, size_t n)
{
	info_line(trace, "sources:", out, n);
}

/* What the trace says became of CUPTI: its state, and a detail that starts
 * with detail_prefix; each said once (set-up runs once). */
static void expect_cupti(const struct trace *t, const char *state, const char *detail_prefix)
{
	assert_string_equal(t->cupti, state);
	if (strncmp(t->cupti_detail, detail_prefix, strlen(detail_prefix)))
		fprintf(stderr, "cupti.detail: %s\n", t->cupti_detail);
	assert_int_equal(strncmp(t->cupti_detail, detail_prefix, strlen(detail_prefix)), 0);
	assert_int_equal(t->ncupti_props, 2);
}

/* Attached: the library tlm loaded, and how many callbacks are on. */
static void expect_attached(const struct trace *t, const char *tail)
{
	char want[700];
	snprintf(want, sizeof want, "%s, ", getenv("TLM_TEST_CUPTI"));
	expect_cupti(t, "attached", want);
	unsigned on = 0, of = 0;
	char rest[64] = "";
	assert_true(sscanf(t->cupti_detail + strlen(want), "%u of %u callbacks%63[^\n]", &on, &of, rest) >= 2);
	assert_true(on > 20);
	assert_int_equal(on, of);
	assert_string_equal(rest, tail);
}

/* Every interception path, CUPTI attached: the same events, none flagged. */
static void test_dedup_every_path(void **state)
{
	struct ctx *c = *state;
	static const char *const scenarios[] = {"runtime", "driver", "dlsym", "procaddr", "entrypoint"};
	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		const char *env[] = {"TLM_CUPTI=on", c->libenv, c->logenv, NULL};
		struct run r;
		struct trace t;
		run_ok(c, &r, &t, scenarios[i], env);
		expect_attached(&t, "");
		assert_int_equal(log_count(c, "subscribe_v2 0"), 1);
		assert_true(log_count(c, "enable_callback 1 1 ") >= 22);
		assert_true(log_count(c, "enable_callback 1 2 ") >= 14);
		assert_int_equal(count_str(r.stderr_text, "callbacks on"), 1);
		assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
		assert_int_equal(count_cupti(&t), 0);
		check_oom(&r, &t);
		done(&r, &t);
	}
}

/* Private driver entry points: only CUPTI sees them. */
static void test_bypass_driver(void **state)
{
	struct ctx *c = *state;
	const char *env[] = {"TLM_TEST_CUPTI_SEES=1", c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti", env);
	expect_attached(&t, "");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(count_cupti(&t), 22);
	check_oom(&r, &t);
	assert_null(strstr(r.stderr_text, "CUPTI")); /* auto mode is quiet */
	char line[1024];
	info_sources(t.path, line, sizeof line);
	assert_string_equal(line, "sources:      interposition 6, CUPTI only 22 (cuMemFree_v2 x3, cuMemAlloc_v2 x2, "
				  "cuMemFreeAsync x2, cuMemAllocPitch_v2 x1, cuMemAllocAsync_ptsz x1, "
				  "cuMemAllocFromPoolAsync x1, cuMemAllocManaged x1, cuMemHostAlloc x1, cuMemFreeHost x1, "
				  "cuMemCreate x1, cuMemRelease x1, cuMemMap x1, cuMemUnmap x1, cuMemAddressReserve x1, "
				  "cuMemAddressFree x1, cuMemPoolCreate x1, cuMemPoolDestroy x1, cuMemPoolTrimTo x1)");
	done(&r, &t);
}

/* A runtime that reaches the driver's internals: CUPTI's runtime domain. */
static void test_bypass_runtime(void **state)
{
	struct ctx *c = *state;
	const char *env[] = {"TLM_TEST_CUPTI_SEES=1", "TLM_SIM_RUNTIME_PRIVATE=1", c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti_runtime", env);
	expect_attached(&t, "");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(count_cupti(&t), 6);
	char line[1024];
	info_sources(t.path, line, sizeof line);
	assert_string_equal(line, "sources:      interposition 2, CUPTI only 6 (cudaMalloc x2, cudaMallocHost x1, "
				  "cudaMallocAsync x1, cudaFreeHost x1, cudaFreeAsync x1)");
	done(&r, &t);
}

/* Error 39: one line naming the holder, interposition alone, no finalize. */
static void test_held_by_another_tool(void **state)
{
	struct ctx *c = *state;
	const char *env[] = {"TLM_SIM_CUPTI_HOLDER=Nsight Systems", c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti", env);
	expect_cupti(&t, "held", "Nsight Systems");
	assert_string_equal(t.cupti_detail, "Nsight Systems");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(count_cupti(&t), 0);
	assert_int_equal(count_str(r.stderr_text, "CUPTI is held by another tool (Nsight Systems); continuing with "
						  "interposition alone\n"),
			 1);
	assert_int_equal(count_str(r.stderr_text, "CUPTI"), 1);
	assert_int_equal(log_count(c, "subscribe_v2 39"), 1);
	assert_int_equal(log_count(c, "enable_"), 0);
	assert_int_equal(log_count(c, "unsubscribe"), 0);
	assert_int_equal(log_count(c, "finalize"), 0);
	char line[1024];
	info_sources(t.path, line, sizeof line);
	assert_string_equal(line, "sources:      interposition 6, CUPTI only 0");
	info_line(t.path, "cupti:", line, sizeof line);
	assert_string_equal(line, "cupti:        CUPTI held by another tool (Nsight Systems)");
	done(&r, &t);
}

/* CUPTI 13.2: tlm asks to share, and gets its callbacks next to the holder. */
static void test_multiple_subscribers(void **state)
{
	struct ctx *c = *state;
	const char *env[] = {"TLM_TEST_CUPTI_SEES=1", "TLM_SIM_CUPTI_HOLDER=kineto", "TLM_SIM_CUPTI_VERSION=130200",
			     c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti", env);
	expect_attached(&t, "");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(count_cupti(&t), 22);
	assert_int_equal(log_count(c, "subscribe_v2 0 multi"), 1);
	assert_null(strstr(r.stderr_text, "CUPTI"));
	done(&r, &t);
}

/* TLM_CUPTI=off: CUPTI is never loaded. */
static void test_off(void **state)
{
	struct ctx *c = *state;
	const char *env[] = {"TLM_CUPTI=off", c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti", env);
	expect_cupti(&t, "off", "TLM_CUPTI=off");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(log_count(c, ""), -1);
	assert_null(strstr(r.stderr_text, "CUPTI"));
	done(&r, &t);
}

/* Not found: one line with TLM_CUPTI=on, nothing in auto mode. */
static void test_not_found(void **state)
{
	struct ctx *c = *state;
	const char *on[] = {"TLM_CUPTI=on", "TLM_CUPTI_LIBRARY=/nonexistent/libcupti.so.13", NULL};
	const char *aut[] = {"TLM_CUPTI_LIBRARY=/nonexistent/libcupti.so.13", NULL};
	for (int k = 0; k < 2; k++) {
		struct run r;
		struct trace t;
		run_ok(c, &r, &t, "cupti", k ? aut : on);
		expect_cupti(&t, "absent", "cannot load /nonexistent/libcupti.so.13 (TLM_CUPTI_LIBRARY)");
		assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
		if (k == 0)
			assert_int_equal(count_str(r.stderr_text, "CUPTI not found; recording with interposition alone\n"),
					 1);
		assert_int_equal(count_str(r.stderr_text, "CUPTI"), k == 0 ? 1 : 0);
		done(&r, &t);
	}
}

/* auto: a driver that cannot host CUPTI (here the simulator, which serves the
 * runtime's export tables but not CUPTI's) is left alone, even with a libcupti
 * on the search path. */
static void test_auto_needs_a_real_driver(void **state)
{
	struct ctx *c = *state;
	char path[1400];
	/* the CUPTI double's directory holds libcupti.so.13 */
	snprintf(path, sizeof path, "LD_LIBRARY_PATH=%s:%s", getenv("TLM_TEST_SIMDIR"), getenv("TLM_TEST_CUPTIDIR"));
	const char *env[] = {path, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "cupti", env);
	expect_cupti(&t, "skipped",
		     "the driver is tlm's simulator, which serves the runtime's export tables but not CUPTI's");
	char line[1024];
	info_line(t.path, "cupti:", line, sizeof line);
	assert_string_equal(line, "cupti:        CUPTI not used (the driver is tlm's simulator, which serves the "
				  "runtime's export tables but not CUPTI's)");
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	assert_int_equal(log_count(c, ""), -1);
	assert_null(strstr(r.stderr_text, "CUPTI"));
	done(&r, &t);
}

/* CUDA_INJECTION64_PATH=libtlm.so, not preloaded: CUPTI is the only source,
 * and sees every call. */
static void test_injection(void **state)
{
	struct ctx *c = *state;
	char inj[700];
	snprintf(inj, sizeof inj, "CUDA_INJECTION64_PATH=%s", getenv("TLM_TEST_LIBTLM"));
	const char *env[] = {"TLM_TEST_NO_LIBTLM=1", inj, c->libenv, c->logenv, NULL};
	struct run r;
	struct trace t;
	run_ok(c, &r, &t, "driver", env);
	expect_attached(&t, ", injected");
	assert_int_equal(log_count(c, "subscribe_v2 0"), 1);
	assert_int_equal(count_cupti(&t), t.nev);
	for (size_t i = 0; i < t.nev; i++)
		t.ev[i].flags &= (uint16_t)~TLM_EVF_CUPTI;
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	check_oom(&r, &t);
	done(&r, &t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_every_path),
		cmocka_unit_test(test_bypass_driver),
		cmocka_unit_test(test_bypass_runtime),
		cmocka_unit_test(test_held_by_another_tool),
		cmocka_unit_test(test_multiple_subscribers),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_auto_needs_a_real_driver),
		cmocka_unit_test(test_injection),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
