/* SPDX-License-Identifier: MIT */
/*
 * test_job_devmem.c - the device's own view in the job report: three ranks
 * written with the trace writer (rank 0: NVML splits its device memory,
 * another process holds 32 MiB and it hits an OOM; rank 1: no NVML; rank 2:
 * an older trace without samples). The exact per-process split and the OOM
 * diagnosis in the text and tlm-job/1, and the same text again from the
 * job's JSON and from per-rank tlm-report/1 files (the merge keeps it).
 * Rank 0's 32 MiB come from libnccl, its 64 MiB from libc10_cuda: each
 * rank's owners (job_owners.h) in the text and tlm-job/1 too.
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

#include "encoders/json_in.h"
#include "job/job.h"
#include "report/rt.h"

#define MS RT_MS
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define DEV 0x700000000000ull

static void sample(struct rt *t, uint32_t s, uint32_t why, uint64_t time, uint64_t free_b)
{
	struct tlm_rec_devmem d = {.sample = s, .device = 0, .why = why, .time_ns = RT_START + time, .total = GiB,
				   .free = free_b};
	assert_int_equal(tlm_tw_devmem(rt_writer(t), &d), 0);
}

static void procs(struct rt *t, uint32_t s, int status, uint64_t self, uint64_t other)
{
	static struct tlm_rec_devprocs p;
	memset(&p, 0, sizeof p);
	p.sample = s;
	p.status = status;
	if (!status) {
		p.n = 2;
		p.p[0].pid = 4242;
		p.p[0].used = self;
		p.p[1].pid = 5000;
		p.p[1].used = other;
	}
	assert_int_equal(tlm_tw_devprocs(rt_writer(t), &p), 0);
}

/* Module i at [i << 28, +1 MiB); stack i calls the driver from it. */
static void lib_stack(struct rt *t, uint32_t i, const char *path)
{
	struct tlm_rec_module m;
	memset(&m, 0, sizeof m);
	m.id = i;
	m.nseg = 1;
	m.seg[0].start = m.base = (uint64_t)i << 28;
	m.seg[0].end = m.base + MiB;
	snprintf(m.path, sizeof m.path, "%s", path);
	assert_int_equal(tlm_tw_module(rt_writer(t), &m), 0);
	uint64_t ip = m.base + 0x100;
	rt_stack(t, i, &ip, 1);
}

static char *rank_trace(int rank)
{
	struct rt *t = rt_open();
	char v[8];
	snprintf(v, sizeof v, "%d", rank);
	rt_prop(t, "env.RANK", v);
	rt_prop(t, "env.WORLD_SIZE", "3");
	if (rank == 0) {
		lib_stack(t, 1, "/venv/torch/lib/libc10_cuda.so");
		lib_stack(t, 2, "/venv/nvidia/nccl/lib/libnccl.so.2");
		rt_alloc(t, TLM_KIND_DEVICE, DEV, 64 * MiB, 1 * MS, 1, 0);
		sample(t, 0, TLM_DEVMEM_START, 1 * MS, GiB - 104 * MiB);
		procs(t, 0, 0, 72 * MiB, 32 * MiB);
		rt_alloc(t, TLM_KIND_DEVICE, DEV + GiB, 32 * MiB, 2 * MS, 2, 0);
		sample(t, 1, TLM_DEVMEM_PEAK, 2 * MS, GiB - 136 * MiB);
		procs(t, 1, 0, 104 * MiB, 32 * MiB);
		rt_ev(t, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, GiB, 3 * MS, 0, 0, 2, GiB - 136 * MiB);
		sample(t, 2, TLM_DEVMEM_OOM, 3 * MS, GiB - 136 * MiB);
		procs(t, 2, 0, 104 * MiB, 32 * MiB);
	} else if (rank == 1) {
		rt_alloc(t, TLM_KIND_DEVICE, DEV, 16 * MiB, 1 * MS, 0, 0);
		sample(t, 0, TLM_DEVMEM_START, 1 * MS, GiB - 56 * MiB);
		procs(t, 0, TLM_DEVPROCS_NO_NVML, 0, 0);
	} else {
		rt_alloc(t, TLM_KIND_DEVICE, DEV, 8 * MiB, 1 * MS, 0, 0);
	}
	return rt_close(t, true, 5 * MS);
}

static char *job_text(char **in, size_t n, char **json)
{
	char err[256];
	struct tlm_job *j = tlm_job_load(in, n, 1, err, sizeof err);
	assert_non_null(j);
	assert_int_equal(tlm_job_compare(j), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tlm_job_text(j, f), 0);
	fclose(f);
	if (json) {
		f = open_memstream(json, &len);
		assert_int_equal(tlm_job_json(j, f), 0);
		fclose(f);
	}
	tlm_job_free(j);
	return buf;
}

static char *tmp_with(const char *text, const char *suffix)
{
	char *path = malloc(64);
	snprintf(path, 64, "/tmp/tlm-jdm-XXXXXX%s", suffix);
	int fd = mkstemps(path, (int)strlen(suffix));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static uint64_t ju(const struct tlm_jv *o, const char *k)
{
	uint64_t u = 0;
	assert_true(tlm_jv_u64(tlm_jv_get(o, k), &u));
	return u;
}

static void test_job_devmem(void **state)
{
	(void)state;
	char *tr[3];
	for (int i = 0; i < 3; i++)
		tr[i] = rank_trace(i);
	char *json = NULL;
	char *text = job_text(tr, 3, &json);
	if (getenv("DM_DUMP"))
		fprintf(stderr, "%s\n%s", text, json);
	assert_non_null(strstr(text, "\nDEVICE MEMORY AT EACH PROCESS'S RESERVED PEAK (the device's own view: "
				     "cuMemGetInfo, NVML)\n"
				     "  process                   dev      total    tracked  untracked other procs\n"
				     "  rank 0                      0    1.0 GiB   96.0 MiB    8.0 MiB    32.0 MiB\n"
				     "  rank 1                      0    1.0 GiB   16.0 MiB          -           -  40.0 MiB "
				     "either\n"
				     "  untracked: "));
	/* no samples: not in the section (the owners' section, after it, has every rank) */
	const char *sec = strstr(text, "\nDEVICE MEMORY AT EACH"), *end = strstr(sec, "\n\n");
	const char *r2 = strstr(sec, "  rank 2   ");
	assert_true(!r2 || (end && r2 > end));
	for (const char *l = text; *l; l = strchr(l, '\n') + 1)
		assert_in_range(strchr(l, '\n') - l, 0, 100);
	/* each rank's owners at its reserved peak: rank 0 NCCL's and PyTorch's,
	 * the others' allocations have no stack */
	assert_non_null(strstr(text, "\nOWNERS AT EACH PROCESS'S RESERVED PEAK (its device; tlm report TRACE splits each "
				     "one)\n"
				     "  process          dev   reserved    pytorch (its peak)     cublas      cudnn       nccl"
				     "     others\n"
				     "  rank 0             0   96.0 MiB   64.0 MiB   64.0 MiB          -          -   32.0 MiB"
				     "        0 B\n"
				     "  rank 1             0   16.0 MiB          -          -          -          -          -"
				     "   16.0 MiB\n"));
	assert_non_null(strstr(text, "1 OOM\n      device: 96.0 MiB tracked, 8.0 MiB context and untracked, 32.0 MiB "
				     "held by pid 5000\n        (of 1.0 GiB; 888.0 MiB free)\n"));
	char err[256];
	struct tlm_jv *v = tlm_json_parse(json, strlen(json), err, sizeof err);
	assert_non_null(v);
	const struct tlm_jv *ps = tlm_jv_get(v, "processes");
	const struct tlm_jv *p0 = tlm_jv_get(tlm_jv_at(ps, 0), "device_memory_at_peak");
	assert_int_equal(ju(p0, "tracked_bytes"), 96 * MiB);
	assert_int_equal(ju(p0, "untracked_bytes"), 8 * MiB);
	assert_int_equal(ju(p0, "other_processes_bytes"), 32 * MiB);
	assert_int_equal(ju(p0, "other_processes"), 1);
	assert_true(tlm_jv_get(p0, "at_reserved_peak")->b);
	assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_get(tlm_jv_at(ps, 0), "first_oom"), "diagnosis")),
			    "96.0 MiB tracked, 8.0 MiB context and untracked, 32.0 MiB held by pid 5000 (of 1.0 GiB; "
			    "888.0 MiB free)");
	const struct tlm_jv *p1 = tlm_jv_get(tlm_jv_at(ps, 1), "device_memory_at_peak");
	assert_int_equal(tlm_jv_get(p1, "untracked_bytes")->type, TLM_JV_NULL);
	assert_int_equal(ju(p1, "unattributed_bytes"), 40 * MiB);
	assert_null(tlm_jv_get(tlm_jv_at(ps, 2), "device_memory_at_peak"));
	const struct tlm_jv *own = tlm_jv_get(tlm_jv_at(ps, 0), "owners");
	assert_int_equal(tlm_jv_len(own), 2);
	assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_at(own, 0), "owner")), "pytorch");
	assert_int_equal(ju(tlm_jv_at(own, 0), "peak_bytes"), 64 * MiB);
	assert_string_equal(tlm_jv_str(tlm_jv_get(tlm_jv_at(own, 1), "owner")), "nccl");
	assert_int_equal(ju(tlm_jv_at(own, 1), "bytes_at_reserved_peak"), 32 * MiB);
	assert_int_equal(ju(tlm_jv_at(own, 1), "live_bytes_at_end"), 32 * MiB);
	tlm_json_free(v);

	/* the job's own JSON as an input: the same report */
	char *jp = tmp_with(json, ".json");
	char *again = job_text(&jp, 1, NULL);
	assert_string_equal(again, text);
	free(again);
	/* per-rank tlm-report/1 files as inputs: the same report */
	char *rp[3];
	for (int i = 0; i < 3; i++) {
		struct tlm_report *r = tlm_report_build(tr[i], err, sizeof err);
		assert_non_null(r);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(tlm_report_json(r, f), 0);
		fclose(f);
		rp[i] = tmp_with(buf, ".json");
		free(buf);
		tlm_report_free(r);
	}
	again = job_text(rp, 3, NULL);
	/* the sources differ (the trace path is each report's "trace"): compare from the section on */
	assert_string_equal(strstr(again, "\nDEVICE MEMORY"), strstr(text, "\nDEVICE MEMORY"));
	free(again);
	for (int i = 0; i < 3; i++) {
		unlink(rp[i]);
		free(rp[i]);
		unlink(tr[i]);
		free(tr[i]);
	}
	unlink(jp);
	free(jp);
	free(json);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_devmem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
