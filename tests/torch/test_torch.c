/* SPDX-License-Identifier: MIT */
/*
 * test_torch.c - PyTorch's caching allocator, end to end, without PyTorch:
 * torch_workload drives the libc10.so / libc10_cuda.so doubles, copied into
 * installed-torch trees (TREE/torch/lib/, TREE/torch/version.py), under
 * LD_PRELOAD=libtlm.so on the simulated driver, device 1. The report of the
 * trace must agree with the double's exact accounting: peaks of allocated
 * and reserved bytes, fragmentation at the reserved peak, what is live at
 * the end, both OOMs (fragmentation, then exhaustion) with their requested
 * size and the driver failures folded into them; every hook call must have
 * reached libc10.so's real function. The trees: torch 2.4.0 (16-bit device
 * index), 2.1.0 (8-bit) and one without version.py (the newer layout is
 * assumed, and said once).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../shim/e2e.h"
#include "analysis/report.h"

#define MiB (1ull << 20)

static char root[256];

static void copy(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	if (!in || !out)
		fail_msg("copy %s -> %s", from, to);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	fclose(out);
}

/* ROOT/NAME/torch/lib/{libc10.so,libc10_cuda.so} from the build dir named by
 * env, and torch/version.py with version (none when NULL). */
static void make_tree(const char *name, const char *env, const char *version)
{
	const char *src = getenv(env);
	if (!src)
		fail_msg("%s is not set (run through meson test)", env);
	char p[1024], q[1024];
	snprintf(p, sizeof p, "%s/%s", root, name);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/%s/torch", root, name);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/%s/torch/lib", root, name);
	mkdir(p, 0700);
	static const char *const libs[] = {"libc10.so", "libc10_cuda.so"};
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof p, "%s/%s", src, libs[i]);
		snprintf(q, sizeof q, "%s/%s/torch/lib/%s", root, name, libs[i]);
		copy(p, q);
	}
	if (version) {
		snprintf(p, sizeof p, "%s/%s/torch/version.py", root, name);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fprintf(f, "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda']\n"
			   "__version__ = '%s'\ndebug = False\ncuda: Optional[str] = '12.1'\n", version);
		fclose(f);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/tlm-torch-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	make_tree("t24", "TLM_TEST_C10_V24", "2.4.0+cu121");
	make_tree("t21", "TLM_TEST_C10_V21", "2.1.0");
	make_tree("tnone", "TLM_TEST_C10_V24", NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static struct run run;

static uint64_t note(const char *key)
{
	const char *v = e2e_note(&run, key);
	if (!v)
		fail_msg("no truth note %s", key);
	return strtoull(v, NULL, 10);
}

static double dnote(const char *key)
{
	const char *v = e2e_note(&run, key);
	if (!v)
		fail_msg("no truth note %s", key);
	return strtod(v, NULL);
}

static void check_tree(const char *name, bool expect_assume_note)
{
	char tree[512];
	snprintf(tree, sizeof tree, "%s/%s", root, name);
	const char *const args[] = {tree, NULL};
	/* the workload's arithmetic (torch_workload.c) is the allocator's on a
	 * 64 MiB device: no context holds part of it (tests/sim/test_machine.c
	 * tests the context's cost) */
	static const char *const env[] = {"TLM_SIM_MEMORY=64M", "TLM_SIM_DEVICES=2",
					  "TLM_SIM_CONTEXT_MEMORY=0", NULL};
	assert_int_equal(e2e_run(&run, args, env), 0);
	if (!WIFEXITED(run.status) || WEXITSTATUS(run.status))
		fail_msg("%s: workload status %d: %s", name, run.status, run.stderr_text);
	const char *msg = strstr(run.stderr_text, "assuming the c10::Device layout of torch >= 2.3");
	if (expect_assume_note) {
		assert_non_null(msg);
		assert_null(strstr(msg + 1, "assuming the c10::Device layout")); /* said once */
	} else {
		if (msg)
			fail_msg("%s: %s", name, run.stderr_text);
	}
	char paths[4][512];
	assert_int_equal(e2e_traces(&run, paths, 4), 1);

	/* forwarding: every hook call reached libc10.so */
	assert_true(note("hook_calls") > 10);
	assert_int_equal(note("forwarded_mem"), note("hook_calls"));
	assert_int_equal(note("oom_calls"), 2);
	assert_int_equal(note("forwarded_oom"), 2);

	/* the trace: one block event per CUDA hook call (the CPU one is not) */
	struct trace t;
	assert_int_equal(e2e_load(&t, paths[0]), 0);
	uint64_t nblk = 0, nblk_oom = 0;
	for (size_t i = 0; i < t.nev; i++)
		if (t.ev[i].kind == TLM_KIND_BLOCK) {
			assert_int_equal(t.ev[i].device, 1);
			if (t.ev[i].result)
				nblk_oom++;
			else
				nblk++;
		}
	assert_true(nblk == note("hook_calls") - 1);
	assert_true(nblk_oom == 2);
	e2e_free(&t);

	char err[256];
	struct tlm_report *r = tlm_report_build(paths[0], err, sizeof err);
	assert_non_null(r);
	assert_int_equal(r->nerrors, 0);
	assert_int_equal(r->ndevices, 1); /* device 1 only: no stray device 0, no host row */
	const struct tlm_report_device *d = &r->devices[0];
	assert_int_equal(d->device, 1);
	assert_int_equal(d->kind, TLM_MEM_DEVICE);
	assert_true(d->peak_allocated == note("peak_allocated"));
	assert_true(d->peak_reserved == note("peak_reserved"));
	assert_true(d->peak_allocated == 50 * MiB && d->peak_reserved == 58 * MiB);
	/* at the allocated peak: the 32 blocks of step 1, by site; what of them
	 * was still live at the end is part of what was live at the end */
	uint64_t pk_bytes = 0, pk_count = 0, pk_persist = 0;
	for (size_t i = 0; i < r->nat_peak; i++) {
		assert_int_equal(r->at_peak[i].device, 1);
		pk_bytes += r->at_peak[i].bytes;
		pk_count += r->at_peak[i].count;
		pk_persist += r->at_peak[i].persistent_bytes;
	}
	assert_true(pk_bytes == d->peak_allocated);
	assert_int_equal(pk_count, 32);
	assert_true(pk_persist > 0 && pk_persist <= d->live_bytes_at_end);
	assert_true(d->allocator_totals);
	assert_true(d->allocator_peak_allocated == note("peak_allocated"));
	assert_true(d->allocator_peak_reserved == note("peak_reserved"));
	assert_true(d->ext_known);
	/* at the reserved peak: frag and ext; at the allocated peak: frag from the
	 * two figures beside it (peak allocated, reserved then) */
	double f = dnote("frag_at_peak"), e = dnote("ext_frag_at_peak"), fa = dnote("frag_at_peak_allocated");
	if (d->frag_at_reserved_peak < f - 1e-9 || d->frag_at_reserved_peak > f + 1e-9 ||
	    d->ext_frag_at_peak < e - 1e-9 || d->ext_frag_at_peak > e + 1e-9)
		fail_msg("%s: fragmentation at the reserved peak %.9f/%.9f, the allocator's %.9f/%.9f", name,
			 d->frag_at_reserved_peak, d->ext_frag_at_peak, f, e);
	assert_true(d->allocated_at_peak_reserved == note("allocated_at_peak"));
	assert_true(d->reserved_at_peak_allocated == note("reserved_at_peak_allocated"));
	if (d->frag_at_peak < fa - 1e-9 || d->frag_at_peak > fa + 1e-9)
		fail_msg("%s: fragmentation at the allocated peak %.9f, the allocator's %.9f", name, d->frag_at_peak, fa);
	double sum = 1.0 - (double)d->peak_allocated / (double)d->reserved_at_peak_allocated;
	assert_true(d->frag_at_peak > sum - 1e-9 && d->frag_at_peak < sum + 1e-9);
	assert_true(d->live_bytes_at_end == note("allocated_end"));
	assert_true(d->live_allocs_at_end == note("live_blocks"));
	assert_true(d->reserved_at_end == note("reserved_end"));

	assert_int_equal(r->ooms_total, 2);
	assert_int_equal(r->nooms, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		char k[64];
#define N(field) (snprintf(k, sizeof k, "oom%u_%s", i, field), note(k))
		assert_true(o->allocator);
		assert_int_equal(o->device, 1);
		assert_true(o->requested == N("requested"));
		assert_true(o->reserved_free == N("reserved_free"));
		assert_true(o->largest_free == N("largest_free"));
		assert_true(o->device_free == N("device_free"));
		assert_true(o->allocated == N("allocated"));
		assert_true(o->reserved == N("reserved"));
		assert_true(o->driver_failures == N("failures"));
		assert_int_equal(o->verdict, N("fragmentation") ? TLM_OOM_FRAGMENTATION : TLM_OOM_EXHAUSTION);
#undef N
	}
	assert_true(r->ooms[0].requested == 12 * MiB);
	assert_int_equal(r->ooms[0].verdict, TLM_OOM_FRAGMENTATION);
	assert_true(r->ooms[1].requested == 40 * MiB);
	assert_int_equal(r->ooms[1].verdict, TLM_OOM_EXHAUSTION);
	assert_int_equal(r->unmatched_frees, 0);
	assert_int_equal(r->inconsistencies, 0);
	assert_int_equal(r->failed_allocations, 0);
	tlm_report_free(r);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", run.dir);
	assert_int_equal(system(cmd), 0);
	free(run.truth);
}

static void test_torch_2_4(void **state)
{
	(void)state;
	check_tree("t24", false);
}

static void test_torch_2_1(void **state)
{
	(void)state;
	check_tree("t21", false);
}

static void test_torch_no_version(void **state)
{
	(void)state;
	check_tree("tnone", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torch_2_4),
		cmocka_unit_test(test_torch_2_1),
		cmocka_unit_test(test_torch_no_version),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
