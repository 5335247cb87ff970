/* SPDX-License-Identifier: MIT */
/*
 * job_compare.c - tlm_job_compare(): roles, the processes in job order, and
 * how the ranks differ (docs/job.md gives each rule).
 *
 * Roles: a fork child of a traced process (PROP origin=fork) is a worker;
 * else one whose parent, or whose previous image (same host and pid, ended
 * by exec), is in the job is a child, unless it has a RANK that this parent
 * lacks (a rank started by a traced launcher); else a process with RANK is
 * a rank; else main (the launcher or the program itself).
 */
#include <stdlib.h>
#include <string.h>

#include "job.h"

static int cmp_proc(const void *a, const void *b)
{
	const struct tlm_job_proc *x = a, *y = b;
	if (!x->error != !y->error)
		return x->error ? 1 : -1;
	if (x->error)
		return strcmp(x->source, y->source);
	if ((x->rank < 0) != (y->rank < 0))
		return x->rank < 0 ? 1 : -1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->forked != y->forked)
		return x->forked ? 1 : -1;
	int h = strcmp(x->host, y->host);
	if (h)
		return h;
	if (x->start_realtime_ns != y->start_realtime_ns)
		return x->start_realtime_ns < y->start_realtime_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->source, y->source);
}

static const struct tlm_job_proc *parent_of(const struct tlm_job *j, const struct tlm_job_proc *p)
{
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *q = &j->procs[i];
		if (q == p || q->error || strcmp(q->host, p->host))
			continue;
		if (q->pid == p->ppid)
			return q;
		if (q->pid == p->pid && !strcmp(q->end_how, "exec") && q->start_realtime_ns <= p->start_realtime_ns)
			return q;
	}
	return NULL;
}

struct triple {
	const char *key;
	size_t proc;
	uint64_t bytes;
};

static int cmp_triple(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

static bool in_compared(const struct tlm_job *j, const struct tlm_job_proc *p)
{
	return !p->error && (!j->compared_ranks || !strcmp(p->role, "rank"));
}

/* Keeps the TLM_JOB_TOP_DIFF largest spreads (ties: by key). */
static void keep_diff(struct tlm_job *j, const struct tlm_job_diff *d)
{
	uint64_t sp = d->max - d->min;
	size_t at = j->ndiffs;
	while (at > 0) {
		const struct tlm_job_diff *o = &j->diffs[at - 1];
		uint64_t osp = o->max - o->min;
		if (osp > sp || (osp == sp && strcmp(o->key, d->key) < 0))
			break;
		at--;
	}
	if (at >= TLM_JOB_TOP_DIFF)
		return;
	size_t last = j->ndiffs < TLM_JOB_TOP_DIFF ? j->ndiffs : TLM_JOB_TOP_DIFF - 1;
	memmove(&j->diffs[at + 1], &j->diffs[at], (last - at) * sizeof *d);
	j->diffs[at] = *d;
	if (j->ndiffs < TLM_JOB_TOP_DIFF)
		j->ndiffs++;
}

static int site_diffs(struct tlm_job *j)
{
	size_t nt = 0;
	for (size_t i = 0; i < j->nprocs; i++)
		if (in_compared(j, &j->procs[i]))
			nt += j->procs[i].nsites;
	struct triple *t = malloc((nt ? nt : 1) * sizeof *t);
	if (!t)
		return -1;
	nt = 0;
	for (size_t i = 0; i < j->nprocs; i++)
		if (in_compared(j, &j->procs[i]))
			for (size_t k = 0; k < j->procs[i].nsites; k++)
				t[nt++] = (struct triple){j->procs[i].sites[k].key, i, j->procs[i].sites[k].bytes};
	qsort(t, nt, sizeof *t, cmp_triple);
	for (size_t a = 0; a < nt;) {
		size_t b = a;
		struct tlm_job_diff d = {.key = (char *)t[a].key, .min = t[a].bytes, .max = t[a].bytes,
					 .min_proc = t[a].proc, .max_proc = t[a].proc};
		size_t present = 0;
		for (; b < nt && !strcmp(t[b].key, t[a].key); b++) {
			present += b == a || t[b].proc != t[b - 1].proc;
			if (t[b].bytes < d.min || (t[b].bytes == d.min && t[b].proc < d.min_proc)) {
				d.min = t[b].bytes;
				d.min_proc = t[b].proc;
			}
			if (t[b].bytes > d.max) {
				d.max = t[b].bytes;
				d.max_proc = t[b].proc;
			}
		}
		if (present < j->ncompared) { /* absent from some: 0 there (the first such) */
			size_t q = 0, at = a;
			for (; q < j->nprocs; q++) {
				if (!in_compared(j, &j->procs[q]))
					continue;
				while (at < b && t[at].proc < q)
					at++;
				if (at == b || t[at].proc != q)
					break;
			}
			d.min = 0;
			d.min_proc = q;
		}
		if (d.max > d.min)
			keep_diff(j, &d);
		a = b;
	}
	free(t);
	return 0;
}

static void spread(const struct tlm_job *j, struct tlm_job_spread *s, size_t off)
{
	bool first = true;
	for (size_t i = 0; i < j->nprocs; i++) {
		if (!in_compared(j, &j->procs[i]))
			continue;
		uint64_t v = *(const uint64_t *)((const char *)&j->procs[i] + off);
		if (first || v < s->min) {
			s->min = v;
			s->min_proc = i;
		}
		if (first || v > s->max) {
			s->max = v;
			s->max_proc = i;
		}
		first = false;
	}
}

static uint64_t oom_time(const struct tlm_job_proc *p)
{
	return p->start_realtime_ns + (uint64_t)p->first_oom_ns;
}

int tlm_job_compare(struct tlm_job *j)
{
	qsort(j->procs, j->nprocs, sizeof *j->procs, cmp_proc);
	size_t nread = 0;
	j->start_realtime_ns = 0;
	for (size_t i = 0; i < j->nprocs; i++) {
		struct tlm_job_proc *p = &j->procs[i];
		if (p->error) {
			snprintf(p->role, sizeof p->role, "-");
			continue;
		}
		nread++;
		if (!j->start_realtime_ns || p->start_realtime_ns < j->start_realtime_ns)
			j->start_realtime_ns = p->start_realtime_ns;
		const struct tlm_job_proc *par = p->forked ? NULL : parent_of(j, p);
		const char *role = p->forked                                ? "worker"
				   : par && (p->rank < 0 || par->rank == p->rank) ? "child"
				   : p->rank >= 0                                  ? "rank"
										   : "main";
		snprintf(p->role, sizeof p->role, "%s", role);
		j->nranks += !strcmp(role, "rank");
		bool seen = false;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !j->procs[k].error && !strcmp(j->procs[k].host, p->host);
		j->nhosts += !seen;
	}
	j->compared_ranks = j->nranks > 0;
	j->ncompared = j->compared_ranks ? j->nranks : nread;
	spread(j, &j->peak_reserved, offsetof(struct tlm_job_proc, peak_reserved));
	spread(j, &j->peak_allocated, offsetof(struct tlm_job_proc, peak_allocated));
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error || !p->ooms)
			continue;
		j->noom_procs++;
		size_t n = j->noom_procs - 1 < 8 ? j->noom_procs - 1 : 8, at = n;
		while (at > 0 && oom_time(&j->procs[j->oom_order[at - 1]]) > oom_time(p))
			at--;
		if (at >= 8)
			continue;
		size_t last = n < 8 ? n : 7;
		memmove(&j->oom_order[at + 1], &j->oom_order[at], (last - at) * sizeof *j->oom_order);
		j->oom_order[at] = i;
	}
	return site_diffs(j);
}

void tlm_job_proc_name(const struct tlm_job_proc *p, char *buf, size_t len)
{
	if (p->rank >= 0 && (!p->role[0] || !strcmp(p->role, "rank")))
		snprintf(buf, len, "rank %lld", (long long)p->rank);
	else if (p->rank >= 0)
		snprintf(buf, len, "rank %lld %s pid %u", (long long)p->rank, p->role, p->pid);
	else
		snprintf(buf, len, "pid %u@%s", p->pid, p->host ? p->host : "?");
}
