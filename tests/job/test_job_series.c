/* SPDX-License-Identifier: MIT */
/*
 * test_job_series.c - the merged timeline's reduction (src/job/job_series.c)
 * on point lists with known extremes: at most TLM_JOB_MAX_POINTS points, all
 * of them points of the input in order, every bucket's lowest and highest
 * reserved and allocated values and its last point kept, the peak exact;
 * short lists kept whole (less the points that change nothing); the ids
 * of the merged exports (tlm_job_track_pids).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "job/job.h"
#include "analysis/report.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A report holding one device-0 series of n points, times from t0 with random steps. */
static struct tlm_report *fake(size_t n, int64_t t0, uint64_t spread)
{
	struct tlm_report *r = calloc(1, sizeof *r);
	struct tlm_report_device *d = calloc(1, sizeof *d);
	struct tlm_report_point *p = calloc(n, sizeof *p);
	assert_non_null(r);
	assert_non_null(d);
	assert_non_null(p);
	int64_t t = t0;
	for (size_t i = 0; i < n; i++) {
		t += 1 + (int64_t)(next() % spread);
		p[i].t_ns = t;
		p[i].reserved = (next() % 1000) << 20;
		uint64_t gap = (next() % 4) << 20;
		p[i].allocated = p[i].reserved - (gap < p[i].reserved ? gap : p[i].reserved);
	}
	d->device = 0;
	d->kind = TLM_MEM_DEVICE;
	d->npoints = n;
	d->points = p;
	r->ndevices = 1;
	r->devices = d;
	r->have_events = true;
	r->run_first_ns = t0;
	r->run_end_ns = t + 5;
	return r;
}

static void unfake(struct tlm_report *r)
{
	free(r->devices[0].points);
	free(r->devices);
	free(r);
}

/* Index in in[] of each output point: they are input points, in order. */
static void as_subsequence(const struct tlm_report_point *in, size_t m, const struct tlm_job_series *s, size_t *at)
{
	size_t k = 0;
	for (size_t i = 0; i < s->n; i++) {
		while (k < m && !(in[k].t_ns == s->pt[i].t_ns && in[k].reserved == s->pt[i].reserved &&
				  in[k].allocated == s->pt[i].allocated))
			k++;
		assert_true(k < m); /* point i is not an input point after the previous one */
		at[i] = k++;
	}
}

/* The output's level at time t (the last point at or before it). */
static const struct tlm_job_point *level_at(const struct tlm_job_series *s, int64_t t)
{
	const struct tlm_job_point *l = NULL;
	for (size_t i = 0; i < s->n && s->pt[i].t_ns <= t; i++)
		l = &s->pt[i];
	return l;
}

static void check_reduced(size_t m, uint64_t spread)
{
	struct tlm_report *r = fake(m, 1000, spread);
	const struct tlm_report_point *in = r->devices[0].points;
	struct tlm_job_series *s = tlm_job_series_of(r, 0);
	assert_non_null(s);
	assert_true(s->n <= TLM_JOB_MAX_POINTS);
	assert_int_equal(s->device, 0);
	assert_int_equal(s->first_ns, 1000);
	assert_int_equal(s->end_ns, in[m - 1].t_ns + 5);
	size_t *at = calloc(s->n ? s->n : 1, sizeof *at);
	as_subsequence(in, m, s, at);
	/* every bucket's extremes and last point are in the output */
	uint64_t width = (uint64_t)(in[m - 1].t_ns - in[0].t_ns) / TLM_JOB_BUCKETS + 1;
	uint64_t peak = 0, out_peak = 0;
	for (size_t a = 0; a < m;) {
		size_t b = a;
		uint64_t bucket = (uint64_t)(in[a].t_ns - in[0].t_ns) / width;
		uint64_t rmin = UINT64_MAX, rmax = 0, amin = UINT64_MAX, amax = 0;
		while (b < m && (uint64_t)(in[b].t_ns - in[0].t_ns) / width == bucket) {
			rmin = in[b].reserved < rmin ? in[b].reserved : rmin;
			rmax = in[b].reserved > rmax ? in[b].reserved : rmax;
			amin = in[b].allocated < amin ? in[b].allocated : amin;
			amax = in[b].allocated > amax ? in[b].allocated : amax;
			b++;
		}
		peak = rmax > peak ? rmax : peak;
		/* each extreme is a level drawn in the bucket: at one of its points, or
		 * carried in (a point equal to the level before it is dropped) */
		const struct tlm_job_point *c = level_at(s, in[a].t_ns - 1);
		bool r_lo = c && c->reserved == rmin, r_hi = c && c->reserved == rmax;
		bool a_lo = c && c->allocated == amin, a_hi = c && c->allocated == amax;
		for (size_t i = 0; i < s->n; i++) {
			if (at[i] < a || at[i] >= b)
				continue;
			r_lo |= s->pt[i].reserved == rmin;
			r_hi |= s->pt[i].reserved == rmax;
			a_lo |= s->pt[i].allocated == amin;
			a_hi |= s->pt[i].allocated == amax;
		}
		assert_true(r_lo && r_hi && a_lo && a_hi);
		/* and the bucket hands on its last level exactly */
		const struct tlm_job_point *end = level_at(s, in[b - 1].t_ns);
		assert_int_equal(end->reserved, in[b - 1].reserved);
		assert_int_equal(end->allocated, in[b - 1].allocated);
		a = b;
	}
	for (size_t i = 0; i < s->n; i++)
		out_peak = s->pt[i].reserved > out_peak ? s->pt[i].reserved : out_peak;
	assert_int_equal(out_peak, peak);
	free(at);
	tlm_job_series_free(s);
	unfake(r);
}

static void test_reduced(void **state)
{
	(void)state;
	check_reduced(TLM_REPORT_MAX_POINTS, 1000);
	check_reduced(TLM_JOB_MAX_POINTS + 1, 10);
	check_reduced(100000, 100000); /* more than a report holds: still bounded */
}

static void test_short_kept_whole(void **state)
{
	(void)state;
	struct tlm_report *r = fake(TLM_JOB_MAX_POINTS, 0, 50);
	struct tlm_report_point *in = r->devices[0].points;
	in[7] = (struct tlm_report_point){in[7].t_ns, in[6].reserved, in[6].allocated}; /* changes nothing */
	struct tlm_job_series *s = tlm_job_series_of(r, 0);
	assert_non_null(s);
	size_t want = 0;
	for (size_t i = 0; i < TLM_JOB_MAX_POINTS; i++)
		want += !i || in[i].reserved != in[i - 1].reserved || in[i].allocated != in[i - 1].allocated;
	assert_int_equal(s->n, want);
	assert_true(want < TLM_JOB_MAX_POINTS);
	size_t *at = calloc(s->n, sizeof *at);
	as_subsequence(in, TLM_JOB_MAX_POINTS, s, at);
	free(at);
	tlm_job_series_free(s);
	/* another device, or none: no points, the run and OOMs still there */
	s = tlm_job_series_of(r, 1);
	assert_non_null(s);
	assert_int_equal(s->n, 0);
	assert_int_equal(s->device, 1);
	tlm_job_series_free(s);
	unfake(r);
}

static void test_ooms_kept(void **state)
{
	(void)state;
	struct tlm_report *r = fake(10, 0, 5);
	struct tlm_report_oom o[TLM_JOB_OOMS + 3];
	memset(o, 0, sizeof o);
	for (size_t i = 0; i < TLM_JOB_OOMS + 3; i++)
		o[i] = (struct tlm_report_oom){.device = (int)(i % 2), .time_ns = (int64_t)(100 + i),
					       .requested = 1000 + i, .device_free = 7};
	r->ooms = o;
	r->nooms = TLM_JOB_OOMS + 3;
	struct tlm_job_series *s = tlm_job_series_of(r, 0);
	assert_int_equal(s->nooms, TLM_JOB_OOMS);
	for (size_t i = 0; i < TLM_JOB_OOMS; i++) {
		assert_int_equal(s->ooms[i].t_ns, 100 + (int64_t)i);
		assert_int_equal(s->ooms[i].requested, 1000 + i);
		assert_int_equal(s->ooms[i].device, (int)(i % 2));
		assert_int_equal(s->ooms[i].device_free, 7);
	}
	tlm_job_series_free(s);
	unfake(r);
}

static void test_track_pids(void **state)
{
	(void)state;
	struct tlm_job_proc p[5];
	memset(p, 0, sizeof p);
	uint32_t pid[5] = {300, 200, 300, 300, 5000000};
	for (int i = 0; i < 5; i++)
		p[i].pid = pid[i];
	struct tlm_job j = {.nprocs = 5, .procs = p};
	uint32_t out[5];
	assert_int_equal(tlm_job_track_pids(&j, out), 0);
	assert_int_equal(out[0], 300);
	assert_int_equal(out[1], 200);
	assert_int_equal(out[2], TLM_JOB_PID_BASE + 2);
	assert_int_equal(out[3], TLM_JOB_PID_BASE + 3);
	assert_int_equal(out[4], TLM_JOB_PID_BASE + 4); /* not a Linux pid: could meet an id above */
	char name[160];
	p[0].rank = 3;
	p[0].host = "node1";
	snprintf(p[0].role, sizeof p[0].role, "rank");
	tlm_job_track_name(&p[0], name, sizeof name);
	assert_string_equal(name, "rank 3 (node1)");
	p[1].rank = -1;
	p[1].host = "h";
	snprintf(p[1].role, sizeof p[1].role, "main");
	tlm_job_track_name(&p[1], name, sizeof name);
	assert_string_equal(name, "main pid 200 (h)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reduced),
		cmocka_unit_test(test_short_kept_whole),
		cmocka_unit_test(test_ooms_kept),
		cmocka_unit_test(test_track_pids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
