/* SPDX-License-Identifier: MIT */
/*
 * steps_score.c - the candidate units of steps_detect.c (steps_score.h;
 * docs/report.md, "Steps" and "Phases").
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_score.h"
#include "common/grow.h"

static const struct tlm__key *site_key(const void *ctx, uint32_t v)
{
	const struct tlm__ssites *s = ctx;
	return &s->s[v].key;
}

int tlm__ss_intern(struct tlm__ssites *ss, struct tlm__srec *recs, size_t n)
{
	if (tlm__index_init(&ss->idx, site_key, ss))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tlm__key k = {(uint64_t)(int64_t)recs[i].device, recs[i].stack, 0};
		uint32_t v = tlm__index_get(&ss->idx, &k);
		if (v == UINT32_MAX) {
			if (ss->n == ss->cap && tlm__grow(&ss->s, &ss->cap, ss->n + 1, sizeof *ss->s, 256))
				return -1;

			v = (uint32_t)ss->n;
			ss->s[v] = (struct tlm__ssite){k, 0, i, i, 0, recs[i].thread, 0, 0, UINT64_MAX, 0};
			if (tlm__index_add(&ss->idx, &k, v))
				return -1;
			ss->n++;
		}
		if (ss->s[v].count && recs[ss->s[v].last].fev < recs[i].ev)
			ss->s[v].recycled++;

		ss->s[v].count++;
		ss->s[v].last = i;
		recs[i].site = v;
	}
	for (size_t i = 0; i < n; i++) {
		struct tlm__ssite *x = &ss->s[recs[i].site];
		if (!i || recs[i - 1].site != recs[i].site) {
			x->bursts++;
			x->run = 0;
		}
		uint64_t run = ++x->run;
		if (i + 1 == n || recs[i + 1].site != recs[i].site) { /* the run ends */
			if (run < x->bmin)
				x->bmin = run;
			if (run > x->bmax)
				x->bmax = run;
		}
	}
	return 0;
}

static void close_seg(struct tlm__stally *t, uint64_t m)
{
	if (t->seg != SIZE_MAX && t->in_seg == m)
		t->good++;
}

/* Scores candidate k with anchor a; marks the step sites into mark when not NULL. */
void tlm__ss_score(const struct tlm__ssites *ss, const struct tlm__srec *recs, size_t n, size_t k, uint32_t a,
		  const uint8_t *taken, struct tlm__stally *t, struct tlm__sscore *out, uint8_t *mark)
{
	for (size_t i = 0; i < ss->n; i++) /* divisions once per site, not per allocation */
		t[i] = (struct tlm__stally){!taken[i] && ss->s[i].count >= k && ss->s[i].count % k == 0 ? ss->s[i].count / k : 0,
				      SIZE_MAX, 0, 0};
	size_t seg = SIZE_MAX;
	uint64_t am = ss->s[a].count / k, occ = 0;
	for (size_t i = ss->s[a].first; i < n; i++) {
		uint32_t v = recs[i].site;
		if (v == a && occ++ % am == 0)
			seg = seg == SIZE_MAX ? 0 : seg + 1;
		uint64_t m = t[v].m;
		if (!m)
			continue;
		if (t[v].seg != seg) {
			close_seg(&t[v], m);
			t[v].seg = seg;
			t[v].in_seg = 0;
		}
		t[v].in_seg++;
	}
	*out = (struct tlm__sscore){.k = k, .anchor = a, .am = am};
	for (size_t v = 0; v < ss->n; v++) {
		if (!t[v].m)
			continue;
		close_seg(&t[v], t[v].m);
		if (4 * t[v].good >= 3 * k) {
			out->step_sites++;
			out->covered += t[v].good * (ss->s[v].count / k);
			out->recycles |= 2 * ss->s[v].recycled >= ss->s[v].count;
			if (mark)
				mark[v] = 1;
		}
	}
}

bool tlm__ss_better(const struct tlm__sscore *x, const struct tlm__sscore *y)
{
	if (x->weight != y->weight)
		return x->weight > y->weight;
	if (x->span != y->span)
		return x->span > y->span;
	if (x->covered != y->covered)
		return x->covered > y->covered;
	return x->k > y->k;
}

/* ---- nested loops: steps inside epochs ---------------------------------- */

static int by_ord(const void *a, const void *b)
{
	const struct tlm__sdelta *x = a, *y = b;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

/* All allocations and frees by event order. */
struct tlm__sdelta *tlm__ss_deltas(const struct tlm__srec *recs, size_t n, size_t *nd)
{
	struct tlm__sdelta *d = malloc((2 * n + 1) * sizeof *d);
	if (!d)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		d[k++] = (struct tlm__sdelta){recs[i].ev, (int64_t)recs[i].size};
		if (recs[i].fev != UINT64_MAX)
			d[k++] = (struct tlm__sdelta){recs[i].fev, -(int64_t)recs[i].size};
	}
	qsort(d, k, sizeof *d, by_ord);
	*nd = k;
	return d;
}

/* Whether memory comes back to the same level (or a steadily growing one)
 * at each of the anchor's allocations: true at step boundaries, false at a
 * layer loop's (activations pile up through the forward pass). The total
 * variation of the live bytes there may exceed their net change by half the
 * mean transient memory of a unit at most. */
bool tlm__ss_flat(const struct tlm__srec *recs, size_t n, const struct tlm__sdelta *d, size_t nd, uint32_t a)
{
	int64_t cur = 0, prev = 0, first = 0, peak = 0, tv = 0, trans = 0;
	size_t units = 0, i = 0;
	for (size_t x = 0; x < nd; x++) {
		/* an allocation of the anchor starts a unit: live bytes before it */
		while (i < n && recs[i].ev < d[x].ord)
			i++;
		bool start = false;
		for (size_t r = i; r < n && recs[r].ev == d[x].ord; r++)
			start = d[x].bytes > 0 && recs[r].site == a;
		if (start) {
			if (units) {
				trans += peak - prev;
				tv += cur > prev ? cur - prev : prev - cur;
			} else {
				first = cur;
			}
			prev = peak = cur;
			units++;
		}
		cur += d[x].bytes;
		if (cur > peak)
			peak = cur;
	}
	if (units < 2)
		return false;
	int64_t net = prev > first ? prev - first : first - prev;
	return tv <= net + trans / (int64_t)(units - 1) / 2;
}

static int by_nmult(const void *a, const void *b)
{
	const struct tlm__scand *x = a, *y = b;
	if (x->nmult != y->nmult)
		return x->nmult > y->nmult ? -1 : 1;
	return (x->count < y->count) - (x->count > y->count);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct counts (>= 3) by how many sites' counts they divide; and the
 * sites whose allocations come in k >= 3 runs of one length (a loop of
 * layers or parameters inside each step, where no site allocates once per
 * step: their first allocation of each run is the anchor). */
size_t tlm__ss_candidates(const struct tlm__ssites *ss, const uint8_t *taken, struct tlm__scand *c, size_t max)
{
	uint64_t *v = malloc((ss->n + 1) * sizeof *v);
	if (!v)
		return 0;
	size_t nv = 0;
	for (size_t i = 0; i < ss->n; i++)
		if (ss->s[i].count >= 3 && !taken[i])
			v[nv++] = ss->s[i].count;
	qsort(v, nv, sizeof *v, by_u64);
	size_t nd = 0;
	for (size_t i = 0; i < nv; i++)
		if (!nd || v[nd - 1] != v[i])
			v[nd++] = v[i];
	/* Each distinct count is tried against each site: distinct counts are
	 * few in practice; past 256 only the 256 smallest are tried. */
	if (nd > 256)
		nd = 256;
	struct tlm__scand *all = malloc((nd + ss->n + 1) * sizeof *all);
	if (!all) {
		free(v);
		return 0;
	}
	for (size_t d = 0; d < nd; d++) {
		all[d] = (struct tlm__scand){v[d], 0, UINT32_MAX};
		for (size_t i = 0; i < ss->n; i++)
			all[d].nmult += !taken[i] && ss->s[i].count >= 3 && ss->s[i].count % v[d] == 0;
	}
	qsort(all, nd, sizeof *all, by_nmult);
	size_t nc = nd < max ? nd : max;
	memcpy(c, all, nc * sizeof *c);
	/* runs: a few slots of their own, the most allocations first */
	size_t nr = 0;
	for (size_t i = 0; i < ss->n; i++) {
		const struct tlm__ssite *x = &ss->s[i];
		if (!taken[i] && x->bursts >= 3 && x->bursts < x->count && x->bmin == x->bmax &&
		    x->count == x->bursts * x->bmin)
			all[nr++] = (struct tlm__scand){x->bursts, x->count, (uint32_t)i};
	}
	qsort(all, nr, sizeof *all, by_nmult);
	for (size_t i = 0; i < nr && i < MAX_RUN_CANDIDATES; i++)
		c[nc++] = all[i];
	free(all);
	free(v);
	return nc;
}

