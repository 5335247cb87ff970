/* SPDX-License-Identifier: MIT */
/*
 * job_series.c - a process's timeline for the merged job exports (job.h):
 * the report's points of one device (at most TLM_REPORT_MAX_POINTS, each
 * bucket of the report keeping its highest values, export.h) reduced to at
 * most TLM_JOB_BUCKETS buckets of equal width, each keeping the points that
 * hold its lowest and highest reserved and allocated bytes, and its last
 * point (the level it hands to the next bucket). Points that change nothing
 * are dropped. So the track's peak, and every bucket's extremes, are those
 * of the report, exactly; only the points between them are left out. Also
 * the track names and ids the exports share.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "analysis/report.h"

static void emit(struct tlm_job_series *s, const struct tlm_report_point *p)
{
	if (s->n && s->pt[s->n - 1].reserved == p->reserved && s->pt[s->n - 1].allocated == p->allocated)
		return; /* a step to the same level: nothing to draw */
	s->pt[s->n++] = (struct tlm_job_point){p->t_ns, p->reserved, p->allocated};
}

/* Emits the chosen points of one bucket (indices, any order, repeats) in order. */
static void emit_bucket(struct tlm_job_series *s, const struct tlm_report_point *pts, size_t *idx, size_t n)
{
	for (size_t i = 1; i < n; i++) /* insertion sort of at most 5 */
		for (size_t k = i; k > 0 && idx[k - 1] > idx[k]; k--) {
			size_t t = idx[k];
			idx[k] = idx[k - 1];
			idx[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++)
		if (!i || idx[i] != idx[i - 1])
			emit(s, &pts[idx[i]]);
}

static void reduce(struct tlm_job_series *s, const struct tlm_report_point *pts, size_t m)
{
	if (m <= TLM_JOB_MAX_POINTS) {
		for (size_t k = 0; k < m; k++)
			emit(s, &pts[k]);
		return;
	}
	int64_t t0 = pts[0].t_ns, t1 = pts[m - 1].t_ns;
	uint64_t span = t1 > t0 ? (uint64_t)t1 - (uint64_t)t0 : 0;
	uint64_t width = span / TLM_JOB_BUCKETS + 1; /* so that every bucket index is < TLM_JOB_BUCKETS */
	size_t cur = 0, idx[5] = {0}, have = 0;
	for (size_t k = 0; k < m; k++) {
		int64_t t = pts[k].t_ns;
		uint64_t off = t > t0 ? (uint64_t)t - (uint64_t)t0 : 0; /* a clock that went back: bucket 0 */
		size_t b = (size_t)(off / width);
		if (b < cur)
			b = cur; /* out of order (damaged trace): stays in the bucket it is in */
		if (have && b != cur) {
			emit_bucket(s, pts, idx, 5);
			have = 0;
		}
		cur = b;
		if (!have) {
			for (int i = 0; i < 5; i++)
				idx[i] = k;
			have = 1;
			continue;
		}
		const struct tlm_report_point *p = &pts[k];
		if (p->reserved > pts[idx[0]].reserved)
			idx[0] = k;
		if (p->reserved < pts[idx[1]].reserved)
			idx[1] = k;
		if (p->allocated > pts[idx[2]].allocated)
			idx[2] = k;
		if (p->allocated < pts[idx[3]].allocated)
			idx[3] = k;
		idx[4] = k;
	}
	if (have)
		emit_bucket(s, pts, idx, 5);
}

struct tlm_job_series *tlm_job_series_of(const struct tlm_report *r, int device)
{
	struct tlm_job_series *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->device = device;
	s->first_ns = r->have_events ? r->run_first_ns : 0;
	s->end_ns = r->have_events ? r->run_end_ns : 0;
	for (size_t i = 0; i < r->nooms && s->nooms < TLM_JOB_OOMS; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		s->ooms[s->nooms++] = (struct tlm_job_oom){o->time_ns, o->device, o->requested, o->device_free};
	}
	const struct tlm_report_device *d = NULL;
	for (size_t i = 0; device >= 0 && i < r->ndevices && !d; i++)
		if (r->devices[i].kind == TLM_MEM_DEVICE && r->devices[i].device == device)
			d = &r->devices[i];
	if (!d || !d->npoints)
		return s;
	size_t cap = d->npoints < TLM_JOB_MAX_POINTS ? d->npoints : TLM_JOB_MAX_POINTS;
	if (!(s->pt = malloc(cap * sizeof *s->pt))) {
		free(s);
		return NULL;
	}
	reduce(s, d->points, d->npoints);
	if (s->n < cap) { /* give back what the dropped points took */
		struct tlm_job_point *p = realloc(s->pt, (s->n ? s->n : 1) * sizeof *p);
		if (p)
			s->pt = p;
	}
	return s;
}

void tlm_job_series_free(struct tlm_job_series *s)
{
	if (!s)
		return;
	free(s->pt);
	free(s);
}

struct by_pid {
	uint32_t pid;
	size_t i;
};

static int cmp_pid(const void *a, const void *b)
{
	const struct by_pid *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int tlm_job_track_pids(const struct tlm_job *j, uint32_t *out)
{
	struct by_pid *v = malloc((j->nprocs ? j->nprocs : 1) * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < j->nprocs; i++)
		v[i] = (struct by_pid){j->procs[i].pid, i};
	qsort(v, j->nprocs, sizeof *v, cmp_pid);
	for (size_t k = 0; k < j->nprocs; k++) {
		bool dup = k > 0 && v[k - 1].pid == v[k].pid;
		out[v[k].i] = dup || v[k].pid >= TLM_JOB_PID_BASE ? TLM_JOB_PID_BASE + (uint32_t)v[k].i : v[k].pid;
	}
	free(v);
	return 0;
}

void tlm_job_track_name(const struct tlm_job_proc *p, char *buf, size_t len)
{
	char nm[64];
	if (p->rank >= 0)
		tlm_job_proc_name(p, nm, sizeof nm);
	else
		snprintf(nm, sizeof nm, "%s pid %" PRIu32, p->role[0] ? p->role : "process", p->pid);
	snprintf(buf, len, "%s (%s)", nm, p->host ? p->host : "?");
}
