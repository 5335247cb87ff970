/* SPDX-License-Identifier: MIT */
/*
 * test_devmem.c - the device memory samples libtlm.so takes on the
 * simulated device (wl_devmem.c), compared record by record with what they
 * must be: START with the exact free and total, PEAK at each new high of the
 * tracked reserved bytes (every one with TLM_DEBUG_PEAK_MS=0; the rate-limited
 * high sampled before the next free, F_BEFORE, or at the end, EXIT), OOM, a free of another
 * device's memory recorded with that device (and sampled there), NVML's
 * process list (or its status: not supported, not loaded, off), and threads
 * allocating at once on one device.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tlm/trace.h"
#include "tlm_test.h"

#define MiB (1ull << 20)

static char dir[256], trace_path[512], err_text[4096];
static char procs_txt[512]; /* the last DEVPROCS list: "self:MiB PID:MiB ..." */

/* Runs wl_devmem SCENARIO with the simulated driver (64 MiB devices, no
 * context cost) and extra "NAME=value" entries; libpath: LD_LIBRARY_PATH
 * (the simulator's directory, where its NVML stand-in is, unless given). */
static void run(const char *scenario, const char *libpath, const char *const *extra)
{
	snprintf(dir, sizeof dir, "/tmp/tlm-devmem-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char pre[1024], lib[1024], out[512], errp[512];
	const char *first = getenv("TLM_TEST_PRELOAD_FIRST");
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s%s%s", first && *first ? first : "", first && *first ? " " : "",
		 getenv("TLM_TEST_LIBTLM"));
	snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", libpath ? libpath : getenv("TLM_TEST_SIMDIR"));
	snprintf(out, sizeof out, "TLM_OUTPUT=%s/t.trace", dir);
	snprintf(trace_path, sizeof trace_path, "%s/t.trace", dir);
	snprintf(errp, sizeof errp, "%s/stderr", dir);
	const char *envp[40];
	size_t n = 0;
	for (size_t i = 0; extra && extra[i] && n < 16; i++)
		envp[n++] = extra[i]; /* first: getenv takes the first of duplicates */
	const char *const base[] = {pre, lib, out, "TLM_SUMMARY=0", "TLM_SIM_MEMORY=64M", "TLM_SIM_DEVICES=2",
				    "TLM_SIM_CONTEXT_MEMORY=0", "PATH=/usr/bin:/bin"};
	for (size_t i = 0; i < 8; i++)
		envp[n++] = base[i];
	static const char *const pass[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"};
	static char passbuf[3][512];
	for (size_t i = 0; i < 3; i++)
		if (getenv(pass[i])) {
			snprintf(passbuf[i], sizeof passbuf[i], "%s=%s", pass[i], getenv(pass[i]));
			envp[n++] = passbuf[i];
		}
	envp[n] = NULL;
	const char *argv[] = {getenv("TLM_TEST_WL_DEVMEM"), scenario, NULL};
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tlm_test_child_signals();
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	FILE *f = fopen(errp, "r");
	err_text[0] = 0;
	if (f) {
		err_text[fread(err_text, 1, sizeof err_text - 1, f)] = 0;
		fclose(f);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fprintf(stderr, "wl_devmem %s: status %d, stderr: %s\n", scenario, st, err_text);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void cleanup(void)
{
	unlink(trace_path);
	char p[600];
	snprintf(p, sizeof p, "%s/stderr", dir);
	unlink(p);
	rmdir(dir);
}

static const char *const whys[] = {"START", "PEAK", "OOM", "EXIT"};

/* The trace as text: "A<dev> <MiB>" for an allocation (or "A<dev> fail"),
 * "F<dev>" for a free, "S<n> <why>[-] d<dev> <used MiB>/<total MiB>" for a
 * DEVMEM record ("-": F_BEFORE), each followed by a space; DEVPROCS records
 * are checked to complete each sample once with status `procs_status`, the
 * last one's list kept in procs_txt. Also checks that a START/PEAK/OOM
 * sample directly follows an event. */
static void transcript(char *txt, size_t cap, int procs_status)
{
	char err[256];
	struct tlm_reader *r = tlm_reader_open(trace_path, err, sizeof err);
	if (!r)
		fail_msg("open: %s", err);
	struct tlm_record *rec = malloc(sizeof *rec);
	size_t len = 0;
	uint32_t nsamples = 0, ndone = 0;
	uint8_t done[1024] = {0};
	int prev_event = 0;
	txt[0] = 0;
	while (tlm_reader_next(r, rec) == 1) {
		char one[128] = "";
		if (rec->type == TLM_REC_EVENT) {
			const struct tlm_event *e = &rec->u.ev;
			if (e->op == TLM_OP_ALLOC && e->result)
				snprintf(one, sizeof one, "A%d fail ", e->device);
			else if (e->op == TLM_OP_ALLOC)
				snprintf(one, sizeof one, "A%d %llu ", e->device, (unsigned long long)(e->size / MiB));
			else if (e->op == TLM_OP_FREE)
				snprintf(one, sizeof one, "F%d ", e->device);
		} else if (rec->type == TLM_REC_DEVMEM) {
			const struct tlm_rec_devmem *d = &rec->u.devmem;
			assert_int_equal(d->sample, nsamples);
			assert_true(d->why <= TLM_DEVMEM_EXIT);
			assert_true(prev_event || d->why == TLM_DEVMEM_EXIT); /* the placement rule */
			nsamples++;
			snprintf(one, sizeof one, "S%u %s%s d%d %llu/%llu ", d->sample, whys[d->why],
				 d->flags & TLM_DEVMEM_F_BEFORE ? "-" : "", d->device,
				 (unsigned long long)((d->total - d->free) / MiB), (unsigned long long)(d->total / MiB));
		} else if (rec->type == TLM_REC_DEVPROCS) {
			const struct tlm_rec_devprocs *p = &rec->u.devprocs;
			assert_true(p->sample < nsamples && p->sample < sizeof done && !done[p->sample]);
			done[p->sample] = 1;
			ndone++;
			assert_int_equal(p->status, procs_status);
			size_t pl = 0;
			procs_txt[0] = 0;
			for (uint32_t i = 0; i < p->n && pl < sizeof procs_txt - 64; i++) {
				if (p->p[i].pid == tlm_reader_header(r)->pid)
					pl += (size_t)sprintf(procs_txt + pl, "self:");
				else
					pl += (size_t)sprintf(procs_txt + pl, "%u:", p->p[i].pid);
				pl += (size_t)sprintf(procs_txt + pl, "%llu ", (unsigned long long)(p->p[i].used / MiB));
			}
		}
		prev_event = rec->type == TLM_REC_EVENT;
		size_t k = strlen(one);
		assert_true(len + k < cap);
		memcpy(txt + len, one, k + 1);
		len += k;
	}
	assert_int_equal(tlm_reader_errors(r, NULL), 0);
	assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	assert_int_equal(ndone, nsamples); /* every sample completed by NVML's answer */
	tlm_reader_close(r);
	free(rec);
}

static void expect(const char *scenario, const char *libpath, const char *const *extra, int procs_status,
		   const char *want)
{
	static char txt[1 << 20];
	run(scenario, libpath, extra);
	transcript(txt, sizeof txt, procs_status);
	if (strcmp(txt, want))
		fail_msg("%s:\n got  %s\n want %s", scenario, txt, want);
	cleanup();
}

/* Every new high sampled (no rate limit); the simulated device counts whole
 * 2 MiB pages, tlm the bytes asked for. NVML's stand-in lists this process. */
static void test_growth(void **state)
{
	(void)state;
	const char *env[] = {"TLM_DEBUG_PEAK_MS=0", "TLM_DRAIN_MS=10000", NULL};
	expect("growth", NULL, env, 0,
	       "A0 4 S0 START d0 4/64 A0 2 S1 PEAK d0 6/64 A0 1 S2 PEAK d0 8/64 F0 A0 2 A0 4 S3 PEAK d0 10/64 ");
	assert_string_equal(procs_txt, "self:10 "); /* asked at exit (no drain before): the final state */
}

/* One PEAK per device per period (here an hour): the next new high is
 * sampled before the free that lowers it, describing the state before. */
static void test_rate_limited(void **state)
{
	(void)state;
	const char *env[] = {"TLM_DEBUG_PEAK_MS=3600000", "TLM_DRAIN_MS=10000", NULL};
	expect("ratelimit", NULL, env, 0,
	       "A0 2 S0 START d0 2/64 A0 2 S1 PEAK d0 4/64 A0 2 A0 2 F0 S2 PEAK- d0 8/64 F0 A0 2 ");
	assert_string_equal(procs_txt, "self:6 ");
}

/* The process ends at a high the limit skipped: an EXIT sample after its
 * last event. */
static void test_exit_sample(void **state)
{
	(void)state;
	const char *env[] = {"TLM_DEBUG_PEAK_MS=3600000", "TLM_DRAIN_MS=10000", NULL};
	expect("exitpeak", NULL, env, 0, "A0 2 S0 START d0 2/64 A0 2 S1 PEAK d0 4/64 A0 2 S2 EXIT d0 6/64 ");
	assert_string_equal(procs_txt, "self:6 ");
}

static void test_oom(void **state)
{
	(void)state;
	const char *late[] = {"TLM_DRAIN_MS=10000", NULL};
	expect("oom", NULL, late, 0, "A0 2 S0 START d0 2/64 A0 fail S1 OOM d0 2/64 ");
	assert_string_equal(procs_txt, "self:2 ");
}

/* Memory of device 1 freed while device 0 is current (runtime and driver
 * calls): the frees name device 1, and the pending high of device 1 is
 * sampled on device 1. */
static void test_multi_device(void **state)
{
	(void)state;
	const char *env[] = {"TLM_DEBUG_PEAK_MS=3600000", "TLM_DRAIN_MS=10000", NULL};
	expect("multi", NULL, env, 0,
	       "A1 2 S0 START d1 2/64 A1 4 S1 PEAK d1 6/64 A1 2 A0 2 S2 START d0 2/64 F1 S3 PEAK- d1 8/64 F1 F0 F1 ");
	assert_string_equal(procs_txt, "self:0 "); /* everything freed by then */
}

/* A free the driver refuses leaves its allocation reserved: the allocation
 * after it is a new high (4 MiB), and the frees that follow take both
 * out of the count (2 then 6 MiB are the next values, 6 the next high). */
static void test_failed_free(void **state)
{
	(void)state;
	const char *env[] = {"TLM_DEBUG_PEAK_MS=0", "TLM_DRAIN_MS=10000", NULL};
	expect("failfree", NULL, env, 0,
	       "A0 2 S0 START d0 2/64 F0 A0 2 S1 PEAK d0 4/64 F0 F0 A0 2 A0 4 S2 PEAK d0 6/64 ");
}

/* Another process on the same simulated machine holds 10 MiB: the device's
 * free memory says so in every sample, and NVML names it; both processes pay
 * their context (8 MiB, the default), which no allocation API shows. */
static void test_other_process(void **state)
{
	(void)state;
	char mdir[] = "/tmp/tlm-machine-XXXXXX", machine[128], menv[160], lib[1024];
	assert_non_null(mkdtemp(mdir));
	snprintf(machine, sizeof machine, "%s/m", mdir);
	snprintf(menv, sizeof menv, "TLM_SIM_MACHINE=%s", machine);
	snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", getenv("TLM_TEST_SIMDIR"));
	int in[2], out[2];
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid_t h = fork();
	assert_true(h >= 0);
	if (h == 0) {
		tlm_test_child_signals();
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		const char *argv[] = {getenv("TLM_TEST_HOLDER"), "10", NULL};
		const char *envp[] = {menv, lib, "TLM_SIM_MEMORY=64M", "TLM_SIM_DEVICES=2", NULL};
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	char line[128] = "";
	FILE *f = fdopen(out[0], "r");
	assert_non_null(fgets(line, sizeof line, f));
	int hpid = 0;
	assert_int_equal(sscanf(line, "ready %d", &hpid), 1);
	const char *env[] = {menv, "TLM_SIM_CONTEXT_MEMORY=8M", "TLM_DRAIN_MS=10000", NULL};
	expect("oom", NULL, env, 0, "A0 2 S0 START d0 28/64 A0 fail S1 OOM d0 28/64 ");
	char want[64];
	snprintf(want, sizeof want, "%d:18 self:10 ", hpid);
	if (strcmp(procs_txt, want)) { /* NVML's order is the machine's: either */
		snprintf(want, sizeof want, "self:10 %d:18 ", hpid);
		assert_string_equal(procs_txt, want);
	}
	close(in[1]);
	int st;
	waitpid(h, &st, 0);
	fclose(f);
	unlink(machine);
	rmdir(mdir);
}

/* A table of live allocations too small for the run (16 slots, 40
 * allocations): one line says so, PEAK samples stop at the 16th allocation,
 * and every event is still recorded. */
static void test_table_full(void **state)
{
	(void)state;
	static char txt[1 << 16];
	const char *env[] = {"TLM_DEBUG_PEAK_MS=0", "TLM_DEBUG_TABLE_SLOTS=16", "TLM_SIM_MEMORY=256M", NULL};
	run("many", NULL, env);
	transcript(txt, sizeof txt, 0);
	unsigned peaks = 0, allocs = 0, frees = 0;
	for (const char *p = txt; (p = strstr(p, " PEAK ")); p++)
		peaks++;
	for (const char *p = txt; (p = strstr(p, "A0 1 ")); p++)
		allocs++;
	for (const char *p = txt; (p = strstr(p, "F0 ")); p++)
		frees++;
	assert_int_equal(peaks, 15);
	assert_int_equal(allocs, 40);
	assert_int_equal(frees, 40);
	assert_non_null(strstr(txt, "S15 PEAK d0 32/256 A0 1 A0 1 "));
	assert_non_null(strstr(err_text, "the reserved-memory peaks are no longer sampled (the events stay complete)\n"));
	cleanup();
}

/* No NVML to load: each sample's DEVPROCS says so (-1), and one line says why. */
static void test_no_nvml(void **state)
{
	(void)state;
	expect("oom", "/nonexistent", NULL, TLM_DEVPROCS_NO_NVML, "A0 2 S0 START d0 2/64 A0 fail S1 OOM d0 2/64 ");
	assert_non_null(strstr(err_text, "]: NVML: libnvidia-ml.so.1 could not be loaded: the trace has no per-process device memory\n"));
	const char *off[] = {"TLM_NVML=off", NULL};
	expect("oom", NULL, off, TLM_DEVPROCS_NO_NVML, "A0 2 S0 START d0 2/64 A0 fail S1 OOM d0 2/64 ");
	assert_null(strstr(err_text, "NVML"));
}

/* 8 threads allocating and freeing at once on device 0: a readable trace,
 * samples numbered in order, each right after an event (transcript checks
 * it) and completed once; no PEAK exceeds what the threads can hold: each
 * holds at most 3 MiB + 1 MiB, which the device counts in whole 2 MiB pages
 * (4 + 2 MiB), so 8 x 6 MiB of device memory (no context: its cost is 0 here). */
static void test_threads(void **state)
{
	(void)state;
	static char txt[1 << 22];
	const char *env[] = {"TLM_DEBUG_PEAK_MS=0", NULL};
	run("threads", NULL, env);
	transcript(txt, sizeof txt, 0);
	unsigned starts = 0, peaks = 0;
	for (const char *p = txt; (p = strstr(p, " START ")); p++)
		starts++;
	for (const char *p = txt; (p = strstr(p, " PEAK")); p++) {
		unsigned used = 0, total = 0;
		assert_int_equal(sscanf(strchr(p, 'd'), "d0 %u/%u", &used, &total), 2);
		assert_true(used <= 8 * 6 && total == 64);
		peaks++;
	}
	assert_int_equal(starts, 1);
	assert_true(peaks >= 1);
	cleanup();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_growth),       cmocka_unit_test(test_rate_limited),
		cmocka_unit_test(test_exit_sample),  cmocka_unit_test(test_oom),
		cmocka_unit_test(test_multi_device), cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_table_full),   cmocka_unit_test(test_failed_free),
		cmocka_unit_test(test_no_nvml),      cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
