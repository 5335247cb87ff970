/* SPDX-License-Identifier: MIT */
/*
 * steps_detect.c - the repeating unit of a run, from the sequence of
 * allocation sites (docs/report.md, "Steps").
 *
 * A site is (device, canonical stack). A candidate step count k is the
 * number of allocations of some site (>= 3 of them); that site's
 * occurrences cut the sequence into k segments (the anchor: among the sites
 * allocating exactly k times, the one allocating first). A site allocating
 * m*k times is a step site when it allocates exactly m times in at least 3/4
 * of the segments. A candidate needs a step site that recycles (frees most
 * of its allocations before its next one: a step has transient memory;
 * weights loaded in a loop only pile up). The one with the most step-site allocations per unit wins
 * (then the longest span, the most allocations covered, the larger k): a
 * training step allocates at more sites than an evaluation step (forward,
 * backward, optimizer), and an outer loop covers the sites of its inner
 * loops (a layer loop of L layers gives k*L, whose step sites are a subset). An outer loop may also
 * hold the steps (epochs, each ending with an evaluation): then a loop
 * running a multiple of its count inside its units (its anchor is one of
 * their step sites), covering half its allocations at least, whose units
 * leave memory flat (see flat()), is the step. Sizes are not
 * compared, so steps of varying length (other shapes each step) are still
 * one unit; sites made once (optimizer state at step 1) or a few times
 * (caches growing) are no step sites and do not break the unit; an
 * evaluation phase has its own sites and falls outside the steps. Each step
 * then begins at its first step-site allocation: as many of them before
 * each anchor allocation as before the first.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

#define MAX_CANDIDATES 12

struct site {
	struct tlm__key key;     /* a = device, b = stack */
	uint64_t count;
	size_t first;            /* record index of its first allocation */
	size_t last;             /* record index of its last allocation (while interning) */
	uint64_t recycled;       /* allocations freed before the site's next one */
};

struct sites {
	struct site *s;
	size_t n, cap;
	struct tlm__index idx;
};

static const struct tlm__key *site_key(const void *ctx, uint32_t v)
{
	const struct sites *s = ctx;
	return &s->s[v].key;
}

static int intern(struct sites *ss, struct tlm__srec *recs, size_t n)
{
	if (tlm__index_init(&ss->idx, site_key, ss))
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct tlm__key k = {(uint64_t)(int64_t)recs[i].device, recs[i].stack, 0};
		uint32_t v = tlm__index_get(&ss->idx, &k);
		if (v == UINT32_MAX) {
			if (ss->n == ss->cap) {
				size_t cap = ss->cap ? ss->cap * 2 : 256;
				struct site *p = realloc(ss->s, cap * sizeof *p);
				if (!p)
					return -1;
				ss->s = p;
				ss->cap = cap;
			}
			v = (uint32_t)ss->n;
			ss->s[v] = (struct site){k, 0, i, i, 0};
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
	return 0;
}

struct score {
	size_t k;
	uint32_t anchor;
	size_t step_sites;
	bool recycles;           /* a step site frees most of its allocations before its next one */
	double weight;           /* step-site allocations per unit */
	uint64_t span;           /* the time the anchor's allocations span */
	uint64_t covered;        /* allocations of step sites in their consistent segments */
};

/* Per site while scoring one candidate. */
struct tally {
	uint64_t m;              /* count / k when a multiple of k, else 0 */
	size_t seg;              /* segment of the last occurrence, SIZE_MAX none */
	uint64_t in_seg;         /* occurrences in it */
	uint64_t good;           /* segments with exactly count/k occurrences */
};

static void close_seg(struct tally *t, uint64_t m)
{
	if (t->seg != SIZE_MAX && t->in_seg == m)
		t->good++;
}

/* Scores candidate k with anchor a; marks the step sites into mark when not NULL. */
static void score(const struct sites *ss, const struct tlm__srec *recs, size_t n, size_t k, uint32_t a,
		  struct tally *t, struct score *out, uint8_t *mark)
{
	for (size_t i = 0; i < ss->n; i++) /* divisions once per site, not per allocation */
		t[i] = (struct tally){ss->s[i].count >= k && ss->s[i].count % k == 0 ? ss->s[i].count / k : 0, SIZE_MAX, 0,
				      0};
	size_t seg = SIZE_MAX;
	for (size_t i = ss->s[a].first; i < n; i++) {
		uint32_t v = recs[i].site;
		if (v == a)
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
	*out = (struct score){.k = k, .anchor = a};
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

static bool better(const struct score *x, const struct score *y)
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

struct delta {
	uint64_t ord;
	int64_t bytes;
};

static int by_ord(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

/* All allocations and frees by event order. */
static struct delta *deltas(const struct tlm__srec *recs, size_t n, size_t *nd)
{
	struct delta *d = malloc((2 * n + 1) * sizeof *d);
	if (!d)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		d[k++] = (struct delta){recs[i].ev, (int64_t)recs[i].size};
		if (recs[i].fev != UINT64_MAX)
			d[k++] = (struct delta){recs[i].fev, -(int64_t)recs[i].size};
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
static bool flat(const struct tlm__srec *recs, size_t n, const struct delta *d, size_t nd, uint32_t a)
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

struct cand {
	uint64_t count;
	size_t nmult;            /* sites (>= 3 allocations) whose count is a multiple */
};

static int by_nmult(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->nmult != y->nmult)
		return x->nmult > y->nmult ? -1 : 1;
	return (x->count < y->count) - (x->count > y->count);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The distinct counts (>= 3) by how many sites' counts they divide. */
static size_t candidates(const struct sites *ss, struct cand *c, size_t max)
{
	uint64_t *v = malloc((ss->n + 1) * sizeof *v);
	if (!v)
		return 0;
	size_t nv = 0;
	for (size_t i = 0; i < ss->n; i++)
		if (ss->s[i].count >= 3)
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
	struct cand *all = malloc((nd + 1) * sizeof *all);
	if (!all) {
		free(v);
		return 0;
	}
	for (size_t d = 0; d < nd; d++) {
		all[d] = (struct cand){v[d], 0};
		for (size_t i = 0; i < ss->n; i++)
			all[d].nmult += ss->s[i].count >= 3 && ss->s[i].count % v[d] == 0;
	}
	qsort(all, nd, sizeof *all, by_nmult);
	size_t nc = nd < max ? nd : max;
	memcpy(c, all, nc * sizeof *c);
	free(all);
	free(v);
	return nc;
}

int tlm__steps_detect(struct tlm__srec *recs, size_t n, uint64_t run_first, uint64_t run_end,
		      struct tlm__steps_found *out)
{
	memset(out, 0, sizeof *out);
	struct sites ss = {0};
	struct tally *t = NULL;
	int rc = -1;
	if (intern(&ss, recs, n))
		goto done;
	out->nsites = ss.n;
	out->site_stack = calloc(ss.n + 1, sizeof *out->site_stack);
	out->site_device = calloc(ss.n + 1, sizeof *out->site_device);
	out->step_site = calloc(ss.n + 1, 1);
	t = malloc((ss.n + 1) * sizeof *t);
	if (!out->site_stack || !out->site_device || !out->step_site || !t)
		goto done;
	for (size_t i = 0; i < ss.n; i++) {
		out->site_stack[i] = (uint32_t)ss.s[i].key.b;
		out->site_device[i] = (int16_t)(int64_t)ss.s[i].key.a;
	}
	struct cand c[MAX_CANDIDATES];
	size_t nc = candidates(&ss, c, MAX_CANDIDATES);
	(void)run_first; /* time is a tie-break only: a short loop may follow seconds of start-up */
	(void)run_end;
	struct score best = {0}, all[MAX_CANDIDATES];
	size_t nall = 0;
	for (size_t ci = 0; ci < nc; ci++) {
		uint32_t a = UINT32_MAX; /* the site allocating exactly k times that allocates first */
		for (size_t i = 0; i < ss.n; i++)
			if (ss.s[i].count == c[ci].count && (a == UINT32_MAX || ss.s[i].first < ss.s[a].first))
				a = (uint32_t)i;
		if (a == UINT32_MAX)
			continue;
		/* the time its anchor spans: a tie-break */
		uint64_t t_first = recs[ss.s[a].first].t, t_last = t_first;
		for (size_t i = n; i-- > ss.s[a].first;)
			if (recs[i].site == a) {
				t_last = recs[i].t;
				break;
			}
		uint64_t span = t_last > t_first ? t_last - t_first : 0;
		struct score sc;
		score(&ss, recs, n, c[ci].count, a, t, &sc, NULL);
		if (!sc.recycles)
			continue; /* memory that only piles up (weights loaded in a loop) */
		sc.weight = (double)sc.covered / (double)sc.k;
		sc.span = span;
		all[nall++] = sc;
		if (!best.k || better(&sc, &best))
			best = sc;
	}
	/* The loop covering most allocations may hold the steps (epochs with
	 * an evaluation each): a loop running a multiple of its count, covering
	 * half of it at least, whose units leave memory flat, is the step. */
	size_t nd = 0;
	struct delta *dl = best.k ? deltas(recs, n, &nd) : NULL;
	for (bool moved = dl != NULL; moved;) {
		moved = false;
		const struct score *in = NULL;
		struct score tmp;
		memset(out->step_site, 0, ss.n);
		score(&ss, recs, n, best.k, best.anchor, t, &tmp, out->step_site);
		for (size_t x = 0; x < nall; x++) {
			const struct score *c2 = &all[x];
			/* inside the units: its anchor is a step site of theirs */
			if (c2->k < 2 * best.k || c2->k % best.k || 2 * c2->covered < best.covered || !c2->step_sites ||
			    !out->step_site[c2->anchor])
				continue;
			if ((!in || better(c2, in)) && flat(recs, n, dl, nd, c2->anchor))
				in = c2;
		}
		if (in) {
			best = *in;
			moved = true;
		}
	}
	free(dl);
	rc = 0;
	if (!best.k || !best.step_sites)
		goto done;
	struct score sc;
	memset(out->step_site, 0, ss.n);
	score(&ss, recs, n, best.k, best.anchor, t, &sc, out->step_site);
	out->nstep_sites = sc.step_sites;
	out->pos = malloc(best.k * sizeof *out->pos);
	if (!out->pos) {
		rc = -1;
		goto done;
	}
	size_t j = 0;
	for (size_t i = 0; i < n && j < best.k; i++)
		if (recs[i].site == best.anchor)
			out->pos[j++] = i;
	/* A step begins at its first step-site allocation, not at the anchor's:
	 * as many step-site allocations before each anchor as before the first. */
	size_t nss = 0, d = 0, q = 0;
	for (size_t i = 0; i < n; i++)
		nss += out->step_site[recs[i].site];
	size_t *ssi = malloc((nss + 1) * sizeof *ssi);
	if (!ssi) {
		rc = -1;
		goto done;
	}
	nss = 0;
	for (size_t i = 0; i < n; i++)
		if (out->step_site[recs[i].site]) {
			if (i == out->pos[0])
				d = nss;
			ssi[nss++] = i;
		}
	for (size_t i = 0, jj = 0; i < nss && jj < best.k; i++)
		if (ssi[i] == out->pos[jj]) {
			q = i >= d ? i - d : 0;
			out->pos[jj] = ssi[q] > (jj ? out->pos[jj - 1] : 0) || !jj ? ssi[q] : out->pos[jj];
			jj++;
		}
	free(ssi);
	out->k = best.k;
	out->anchor_site = best.anchor;
done:
	free(t);
	free(ss.s);
	if (ss.idx.slot)
		tlm__index_fini(&ss.idx);
	return rc;
}

void tlm__steps_found_free(struct tlm__steps_found *f)
{
	free(f->pos);
	free(f->step_site);
	free(f->site_stack);
	free(f->site_device);
	memset(f, 0, sizeof *f);
}
