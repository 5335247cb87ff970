/* SPDX-License-Identifier: MIT */
/*
 * job_diff.c - two jobs matched process by process, and the sites that
 * differ most across ranks in either, compared (job_diff.h has the rules).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "job_diff.h"

static int role_order(const char *role)
{
	static const char *const order[] = {"rank", "worker", "child", "main"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(role, order[i]))
			return i;
	return 4;
}

struct key {
	const struct tlm_job *job;
	size_t index;                 /* into job->procs */
	size_t ordinal;
};

static const struct tlm_job_proc *proc_of(const struct key *k)
{
	return &k->job->procs[k->index];
}

/* rank (none last), role, then ordinal (or job order while counting) */
static int cmp_key_base(const struct key *x, const struct key *y)
{
	const struct tlm_job_proc *a = proc_of(x), *b = proc_of(y);
	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int ra = role_order(a->role), rb = role_order(b->role);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return ra == 4 ? strcmp(a->role, b->role) : 0;
}

static int cmp_key_index(const void *p, const void *q)
{
	const struct key *x = p, *y = q;
	int c = cmp_key_base(x, y);
	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_key(const struct key *x, const struct key *y)
{
	int c = cmp_key_base(x, y);
	return c ? c : (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

/* The keys of one job, sorted, with their ordinals. */
static struct key *keys_of(const struct tlm_job *j)
{
	struct key *k = calloc(j->nprocs ? j->nprocs : 1, sizeof *k);
	if (!k)
		return NULL;
	for (size_t i = 0; i < j->nprocs; i++)
		k[i] = (struct key){j, i, 0};
	qsort(k, j->nprocs, sizeof *k, cmp_key_index);
	for (size_t i = 0; i < j->nprocs; i++)
		k[i].ordinal = i && !cmp_key_base(&k[i - 1], &k[i]) ? k[i - 1].ordinal + 1 : 1;
	return k;
}

static void name_of(const struct tlm_job_proc *p, size_t ordinal, char *buf, size_t len)
{
	bool is_rank = !strcmp(p->role, "rank");
	if (p->rank >= 0 && is_rank && ordinal == 1)
		snprintf(buf, len, "rank %" PRId64, p->rank);
	else if (p->rank >= 0 && is_rank)
		snprintf(buf, len, "rank %" PRId64 " #%zu", p->rank, ordinal);
	else if (p->rank >= 0)
		snprintf(buf, len, "rank %" PRId64 " %s #%zu", p->rank, p->role, ordinal);
	else
		snprintf(buf, len, "%s #%zu", p->role, ordinal);
}

/* One side must be whole: every input read, no process given twice. */
int tlm_jdiff_check_side(const struct tlm_job *j, char *err, size_t errlen)
{
	for (size_t i = 0; i < j->nprocs; i++)
		if (j->procs[i].error) {
			snprintf(err, errlen, "%s: %s%s", j->procs[i].source, j->procs[i].error,
				 j->nunreadable > 1 ? " (and more unreadable inputs)" : "");
			return -1;
		}
	/* in job order, one process's copies are neighbours unless another of
	 * its host started at the same nanosecond: compare within equal starts */
	for (size_t i = 0; i < j->nprocs; i++)
		for (size_t k = i + 1; k < j->nprocs; k++) {
			const struct tlm_job_proc *a = &j->procs[i], *b = &j->procs[k];
			if (a->rank != b->rank || a->forked != b->forked || strcmp(a->host, b->host) ||
			    a->start_realtime_ns != b->start_realtime_ns)
				break;
			if (a->pid == b->pid) {
				snprintf(err, errlen, "pid %" PRIu32 "@%s is given twice, in %s and %s (give each process once)",
					 a->pid, a->host, a->source, b->source);
				return -1;
			}
		}
	return 0;
}

static bool changed(const struct tlm_job_proc *a, const struct tlm_job_proc *b)
{
	return !a || !b || a->device != b->device || a->peak_reserved != b->peak_reserved ||
	       a->peak_allocated != b->peak_allocated || a->leak_bytes != b->leak_bytes ||
	       a->leak_sites != b->leak_sites || a->ooms != b->ooms;
}

static int match(struct tlm_jdiff *d)
{
	struct key *kb = keys_of(d->base), *kn = keys_of(d->new_);
	size_t nb = d->base->nprocs, nn = d->new_->nprocs;
	d->procs = calloc(nb + nn + 1, sizeof *d->procs);
	d->base_map = calloc(nb + 1, sizeof *d->base_map);
	d->new_map = calloc(nn + 1, sizeof *d->new_map);
	if (!kb || !kn || !d->procs || !d->base_map || !d->new_map) {
		free(kb);
		free(kn);
		return -1;
	}
	size_t i = 0, k = 0;
	while (i < nb || k < nn) {
		int c = i >= nb ? 1 : k >= nn ? -1 : cmp_key(&kb[i], &kn[k]);
		struct tlm_jdiff_proc *p = &d->procs[d->nprocs];
		const struct key *any = c <= 0 ? &kb[i] : &kn[k];
		if (c <= 0) {
			p->base = proc_of(&kb[i]);
			p->base_index = kb[i].index;
			d->base_map[kb[i++].index] = d->nprocs;
		}
		if (c >= 0) {
			p->new_ = proc_of(&kn[k]);
			p->new_index = kn[k].index;
			d->new_map[kn[k++].index] = d->nprocs;
		}
		const struct tlm_job_proc *q = proc_of(any);
		p->rank = q->rank;
		snprintf(p->role, sizeof p->role, "%s", q->role);
		p->ordinal = any->ordinal;
		name_of(q, p->ordinal, p->name, sizeof p->name);
		p->changed = changed(p->base, p->new_);
		d->matched += p->base && p->new_;
		d->only_base += !p->new_;
		d->only_new += !p->base;
		d->unchanged += !p->changed;
		d->nprocs++;
	}
	free(kb);
	free(kn);
	return 0;
}

/* ---------------------------------------------------------------- sites */

static bool in_compared(const struct tlm_job *j, const struct tlm_job_proc *p)
{
	return !p->error && (!j->compared_ranks || !strcmp(p->role, "rank"));
}

/* A site's spread across one job's compared processes, by job_compare.c's
 * rule: 0 where a process lacks it, the first process on a tie. */
static void spread_of(const struct tlm_job *j, const size_t *map, const char *key, struct tlm_jdiff_spread *s)
{
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (!in_compared(j, p))
			continue;
		uint64_t v = 0;
		for (size_t k = 0; k < p->nsites; k++)
			if (!strcmp(p->sites[k].key, key)) {
				v = p->sites[k].bytes;
				break;
			}
		if (!s->any || v < s->min) {
			s->min = v;
			s->min_proc = map[i];
		}
		if (!s->any || v > s->max) {
			s->max = v;
			s->max_proc = map[i];
		}
		s->any = true;
	}
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int cmp_site(const void *p, const void *q)
{
	const struct tlm_jdiff_site *x = p, *y = q;
	if (mag(x->delta) != mag(y->delta))
		return mag(x->delta) < mag(y->delta) ? 1 : -1;
	uint64_t sx = x->new_.max - x->new_.min, sy = y->new_.max - y->new_.min;
	if (sx != sy)
		return sx < sy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static int sites(struct tlm_jdiff *d)
{
	d->sites = calloc(2 * TLM_JOB_TOP_DIFF, sizeof *d->sites);
	if (!d->sites)
		return -1;
	const struct tlm_job *side[2] = {d->base, d->new_};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < side[s]->ndiffs; i++) {
			const char *key = side[s]->diffs[i].key;
			bool seen = false;
			for (size_t k = 0; k < d->nsites && !seen; k++)
				seen = !strcmp(d->sites[k].key, key);
			if (!seen)
				d->sites[d->nsites++].key = key;
		}
	for (size_t k = 0; k < d->nsites; k++) {
		struct tlm_jdiff_site *x = &d->sites[k];
		spread_of(d->base, d->base_map, x->key, &x->base);
		spread_of(d->new_, d->new_map, x->key, &x->new_);
		x->delta = tlm_job_sub(x->new_.max - x->new_.min, x->base.max - x->base.min);
	}
	qsort(d->sites, d->nsites, sizeof *d->sites, cmp_site);
	return 0;
}

int64_t tlm_job_sub(uint64_t after, uint64_t before)
{
	if (after >= before)
		return after - before > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(after - before);
	return before - after > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)(before - after);
}

int tlm_jdiff_build(struct tlm_job *base, struct tlm_job *new_, struct tlm_jdiff *d, const char **which, char *err,
		    size_t errlen)
{
	memset(d, 0, sizeof *d);
	d->base = base;
	d->new_ = new_;
	*which = NULL;
	if (tlm_jdiff_check_side(base, err, errlen)) {
		*which = "BASE";
		return -1;
	}
	if (tlm_jdiff_check_side(new_, err, errlen)) {
		*which = "NEW";
		return -1;
	}
	if (match(d) || sites(d)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

void tlm_jdiff_free(struct tlm_jdiff *d)
{
	for (size_t i = 0; d->procs && i < d->nprocs; i++) {
		free(d->procs[i].error);
		free(d->procs[i].peakdev);
		free(d->procs[i].message);
	}
	free(d->procs);
	free(d->base_map);
	free(d->new_map);
	free(d->sites);
	tlm_job_free(d->base);
	tlm_job_free(d->new_);
	memset(d, 0, sizeof *d);
}
