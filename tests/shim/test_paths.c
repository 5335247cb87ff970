/* SPDX-License-Identifier: MIT */
/*
 * test_paths.c - every interception path, end to end: the workload makes the
 * same calls through runtime symbols, direct driver symbols, dlsym on
 * libcuda, cuGetProcAddress(_v2) and cudaGetDriverEntryPoint*, and the trace
 * must hold exactly those events, with exact addresses and sizes, in order,
 * each with a stack whose innermost frame is the caller (not libtlm).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "e2e.h"

static void check_stacks(const struct trace *t)
{
	for (size_t i = 0; i < t->nev; i++) {
		uint32_t id = t->ev[i].stack_id;
		assert_true(id > 0 && id < t->nstacks);
		assert_true(t->stack_depth[id] > 0);
		const struct tlm_rec_module *m = e2e_module_of(t, t->stack_first[id]);
		assert_non_null(m);
		/* the innermost frame is the program or the runtime that called the driver */
		if (!strstr(m->path, "workload") && !strstr(m->path, "libcudart")) {
			fprintf(stderr, "event %zu: innermost frame in %s\n", i, m->path);
			fail();
		}
	}
}

static void run_path(const char *scenario)
{
	struct run r;
	const char *args[] = {scenario, NULL};
	assert_int_equal(e2e_run(&r, args, NULL), 0);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
		fprintf(stderr, "workload stderr:\n%s\n", r.stderr_text);
	assert_true(WIFEXITED(r.status));
	assert_int_equal(WEXITSTATUS(r.status), 0);
	char paths[4][512];
	assert_int_equal(e2e_traces(&r, paths, 4), 1);
	struct trace t;
	assert_int_equal(e2e_load(&t, paths[0]), 0);
	assert_int_equal(t.state, TLM_TRACE_CLEAN);
	assert_int_equal(t.nerrors, 0);
	assert_int_equal(t.lost, 0);
	assert_true(r.ntruth > 0);
	assert_int_equal(e2e_compare(&t, r.truth, r.ntruth), 0);
	check_stacks(&t);
	/* a failed allocation carries the device's free memory at that moment */
	const char *oom = e2e_note(&r, "oom_free");
	if (oom) {
		size_t k = 0;
		for (size_t i = 0; i < t.nev; i++)
			if (t.ev[i].result == 2 && t.ev[i].op == TLM_OP_ALLOC) {
				assert_int_equal(t.ev[i].device_free, strtoull(oom, NULL, 10));
				k++;
			}
		assert_int_equal(k, 1);
	}
	assert_int_equal(t.hdr.pid > 0, 1);
	assert_int_equal(t.hdr.stack_depth, 64);
	e2e_free(&t);
	free(r.truth);
}

static void test_runtime_symbols(void **s)
{
	(void)s;
	run_path("runtime");
}
static void test_driver_symbols(void **s)
{
	(void)s;
	run_path("driver");
}
static void test_dlsym_on_libcuda(void **s)
{
	(void)s;
	run_path("dlsym");
}
static void test_get_proc_address(void **s)
{
	(void)s;
	run_path("procaddr");
}
static void test_driver_entry_point(void **s)
{
	(void)s;
	run_path("entrypoint");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_symbols),  cmocka_unit_test(test_driver_symbols),
		cmocka_unit_test(test_dlsym_on_libcuda), cmocka_unit_test(test_get_proc_address),
		cmocka_unit_test(test_driver_entry_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
