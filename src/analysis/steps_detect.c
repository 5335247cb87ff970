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

#include "analysis/steps_score.h"

/* The step positions of candidate sc (step_site marked): each step begins at
 * its first step-site allocation, as many of them before each anchor
 * allocation as before the first. */
static int positions(const struct tlm__srec *recs, size_t n, const struct tlm__sscore *sc, const uint8_t *step_site,
		     size_t **out)
{
	size_t k = sc->k, *pos = malloc(k * sizeof *pos);
	if (!pos)
		return -1;
	size_t j = 0;
	uint64_t occ = 0;
	for (size_t i = 0; i < n && j < k; i++)
		if (recs[i].site == sc->anchor && occ++ % sc->am == 0)
			pos[j++] = i;
	size_t nss = 0, d = 0, q = 0;
	for (size_t i = 0; i < n; i++)
		nss += step_site[recs[i].site];
	size_t *ssi = malloc((nss + 1) * sizeof *ssi);
	if (!ssi) {
		free(pos);
		return -1;
	}
	nss = 0;
	for (size_t i = 0; i < n; i++)
		if (step_site[recs[i].site]) {
			if (i == pos[0])
				d = nss;
			ssi[nss++] = i;
		}
	for (size_t i = 0, jj = 0; i < nss && jj < k; i++)
		if (ssi[i] == pos[jj]) {
			q = i >= d ? i - d : 0;
			pos[jj] = ssi[q] > (jj ? pos[jj - 1] : 0) || !jj ? ssi[q] : pos[jj];
			jj++;
		}
	free(ssi);
	*out = pos;
	return 0;
}

struct detect {
	struct tlm__ssites ss;
	struct tlm__stally *t;
	uint8_t *taken, *mark, *evid;   /* by site; evid: 0 unknown, 1 no, 2 yes */
	tlm__steps_evidence_fn ev;
	void *ev_ctx;
	struct tlm__srec *recs;
	size_t n;
	struct tlm__sdelta *dl;
	size_t nd;
};

static bool site_evidence(struct detect *D, uint32_t v)
{
	if (!D->evid[v])
		D->evid[v] = D->ev && D->ev(D->ev_ctx, (uint32_t)D->ss.s[v].key.b) ? 2 : 1;
	return D->evid[v] == 2;
}

/* Whether the step sites in `in` (but not in `but`, when given) show a
 * backward pass or an optimizer step; or allocations of the units on another
 * thread than the anchor's (PyTorch's autograd engine). */
static bool evidence(struct detect *D, const struct tlm__sscore *sc, const uint8_t *in, const uint8_t *but)
{
	size_t asked = 0;
	for (size_t v = 0; v < D->ss.n && asked < 256; v++) {
		if (!in[v] || (but && but[v]))
			continue;
		if (D->ss.s[v].thread != D->ss.s[sc->anchor].thread)
			return true;
		asked++;
		if (site_evidence(D, (uint32_t)v))
			return true;
	}
	return false;
}

static void mark_of(struct detect *D, const struct tlm__sscore *c, uint8_t *m)
{
	struct tlm__sscore tmp;
	memset(m, 0, D->ss.n);
	tlm__ss_score(&D->ss, D->recs, D->n, c->k, c->anchor, D->taken, D->t, &tmp, m);
}

static bool nested_in(struct detect *D, const struct tlm__sscore *in, const struct tlm__sscore *out, const uint8_t *out_mark)
{
	return in->k >= 2 * out->k && in->k % out->k == 0 && in->step_sites && out_mark[in->anchor] &&
	       D->ss.s[in->anchor].thread == D->ss.s[out->anchor].thread;
}

/* The better anchor: on the thread that allocated first (the program's:
 * not autograd's), then the one spanning more of the run, then the first. */
static bool wider(const struct tlm__ssite *x, const struct tlm__ssite *y, uint32_t main_thread)
{
	if ((x->thread == main_thread) != (y->thread == main_thread))
		return x->thread == main_thread;
	size_t sx = x->last - x->first, sy = y->last - y->first;
	return sx != sy ? sx > sy : x->first < y->first;
}

/* One phase among the sites not yet taken: the candidate with the most
 * step-site allocations per unit, or a loop inside its units that holds the
 * steps (see the file's head); *micro gets the loop of micro-steps inside a
 * step whose own sites show an optimizer step. 0 none, 1 found, -1 ENOMEM. */
/* Whether the anchor a allocates inside most units (3/4) of a phase already
 * found: a loop of its steps (layers), no phase of its own. */
static bool within(const struct detect *D, const struct tlm__phases_found *pf, uint32_t a)
{
	for (size_t p = 0; p < pf->n; p++) {
		const struct tlm__steps_found *f = &pf->ph[p];
		size_t units = 0, last = SIZE_MAX, u = 0;
		for (size_t i = D->ss.s[a].first; i <= D->ss.s[a].last && i < D->n; i++) {
			if (D->recs[i].site != a)
				continue;
			while (u + 1 < f->k && f->pos[u + 1] <= i)
				u++;
			if (i >= f->pos[0] && u != last) {
				units++;
				last = u;
			}
		}
		if (4 * units >= 3 * f->k)
			return true;
	}
	return false;
}

static int one_phase(struct detect *D, const struct tlm__phases_found *pf, struct tlm__sscore *best, struct tlm__sscore *micro)
{
	struct tlm__scand c[MAX_CANDIDATES + MAX_RUN_CANDIDATES];
	struct tlm__sscore all[MAX_CANDIDATES + MAX_RUN_CANDIDATES];
	size_t nc = tlm__ss_candidates(&D->ss, D->taken, c, MAX_CANDIDATES), nall = 0;
	*best = (struct tlm__sscore){0};
	*micro = (struct tlm__sscore){0};
	for (size_t ci = 0; ci < nc; ci++) {
		/* the anchor: of the sites allocating exactly k times, the one
		 * whose allocations span the most of the run (a loop's, not a few
		 * made at start-up), then the first; or the site of the runs */
		uint32_t a = c[ci].site;
		for (size_t i = 0; i < D->ss.n && a == UINT32_MAX; i++)
			if (!D->taken[i] && D->ss.s[i].count == c[ci].count)
				a = (uint32_t)i;
		for (size_t i = a + 1; c[ci].site == UINT32_MAX && i < D->ss.n; i++)
			if (!D->taken[i] && D->ss.s[i].count == c[ci].count &&
			    wider(&D->ss.s[i], &D->ss.s[a], D->recs[0].thread))
				a = (uint32_t)i;
		/* the time its anchor spans: a tie-break */
		uint64_t t_first = D->recs[D->ss.s[a].first].t, t_last = t_first;
		for (size_t i = D->n; i-- > D->ss.s[a].first;)
			if (D->recs[i].site == a) {
				t_last = D->recs[i].t;
				break;
			}
		struct tlm__sscore sc;
		tlm__ss_score(&D->ss, D->recs, D->n, c[ci].count, a, D->taken, D->t, &sc, NULL);
		if (!sc.recycles || !sc.step_sites)
			continue; /* memory that only piles up (weights loaded in a loop) */
		if (pf->n && (sc.step_sites < 2 || within(D, pf, a)))
			continue; /* a phase after the first runs two sites at least, outside the others' steps */
		sc.weight = (double)sc.covered / (double)sc.k;
		sc.span = t_last > t_first ? t_last - t_first : 0;
		all[nall++] = sc;
		if (!best->k || tlm__ss_better(&sc, best))
			*best = sc;
	}
	if (!best->k)
		return 0;
	/* a unit cut at every m-th allocation of its anchor may be two steps:
	 * the finest loop covering as much of its sites (9/10) is the step (a
	 * unit whose anchor allocates once in it is kept: a batch whose layers
	 * make most of its allocations is no loop of layers) */
	uint8_t *m2 = calloc(D->ss.n + 1, 1), *only = calloc(D->ss.n + 1, 1);
	if (!m2 || !only) {
		free(m2);
		free(only);
		return -1;
	}
	for (bool finer = true; finer;) {
		finer = false;
		mark_of(D, best, D->mark);
		for (size_t v = 0; v < D->ss.n; v++)
			only[v] = D->taken[v] || !D->mark[v];
		for (size_t x = 0; x < nall && !finer; x++) {
			const struct tlm__sscore *c2 = &all[x];
			if (best->am == 1 || c2->k <= best->k || c2->k % best->k)
				continue;
			struct tlm__sscore in_best; /* what it covers of the coarser unit's sites */
			tlm__ss_score(&D->ss, D->recs, D->n, c2->k, c2->anchor, only, D->t, &in_best, NULL);
			if (10 * in_best.covered < 9 * best->covered)
				continue;
			/* micro-steps of a step whose own sites show an optimizer step
			 * are no step: the loop below keeps them apart */
			mark_of(D, c2, m2);
			if (evidence(D, c2, m2, NULL) && evidence(D, best, D->mark, m2))
				continue;
			*best = *c2;
			finer = true;
		}
	}
	free(m2);
	free(only);
	uint8_t *inner = calloc(D->ss.n + 1, 1);
	if (!inner)
		return -1;
	/* The loop covering most allocations may hold the steps (epochs with an
	 * evaluation each): a loop on the same thread running a multiple of its
	 * count, covering half of it at least, whose units leave memory flat, is
	 * the step; one with a backward pass or an optimizer step first. A step
	 * whose own sites (outside every such loop) show an optimizer step keeps
	 * its units: the loop inside is its micro-steps (gradient accumulation). */
	for (bool moved = D->dl != NULL; moved;) {
		moved = false;
		const struct tlm__sscore *in = NULL;
		bool in_ev = false;
		mark_of(D, best, D->mark);
		memset(inner, 0, D->ss.n);
		uint8_t *m2 = calloc(D->ss.n + 1, 1);
		if (!m2) {
			free(inner);
			return -1;
		}
		for (size_t x = 0; x < nall; x++) {
			const struct tlm__sscore *c2 = &all[x];
			/* a loop of one temporary inside a batch is no step: a step runs
			 * several sites, a third of the outer unit's at least */
			if (!nested_in(D, c2, best, D->mark) || 2 * c2->covered < best->covered || c2->step_sites < 2 ||
			    3 * c2->step_sites < best->step_sites)
				continue;
			mark_of(D, c2, m2);
			/* micro-steps (a backward pass each) of a step whose own sites
			 * show an optimizer step: gradients pile up over them, so their
			 * memory is not flat */
			if (!micro->k && evidence(D, c2, m2, NULL) && evidence(D, best, D->mark, m2))
				*micro = *c2;
			if (!tlm__ss_flat(D->recs, D->n, D->dl, D->nd, c2->anchor))
				continue;
			for (size_t v = 0; v < D->ss.n; v++)
				inner[v] |= m2[v];
			bool e2 = evidence(D, c2, m2, NULL);
			if (!in || (e2 && !in_ev) || (e2 == in_ev && tlm__ss_better(c2, in))) {
				in = c2;
				in_ev = e2;
			}
		}
		free(m2);
		if (micro->k)
			break;
		if (in) {
			/* a unit whose own sites (outside those loops) each allocate once
			 * per unit is a batch with a loop inside (its layers): kept */
			bool own = false, once = true;
			for (size_t v = 0; v < D->ss.n; v++)
				if (D->mark[v] && !inner[v]) {
					own = true;
					once = once && D->ss.s[v].count == best->k;
				}
			if (own && once)
				break;
			*best = *in;
			moved = true;
		}
	}
	free(inner);
	return 1;
}

int tlm__steps_detect(struct tlm__srec *recs, size_t n, tlm__steps_evidence_fn ev, void *ev_ctx,
		      struct tlm__phases_found *out)
{
	memset(out, 0, sizeof *out);
	struct detect D = {.ev = ev, .ev_ctx = ev_ctx, .recs = recs, .n = n};
	int rc = -1;
	if (tlm__ss_intern(&D.ss, recs, n))
		goto done;
	out->nsites = D.ss.n;
	out->site_stack = calloc(D.ss.n + 1, sizeof *out->site_stack);
	out->site_device = calloc(D.ss.n + 1, sizeof *out->site_device);
	D.t = malloc((D.ss.n + 1) * sizeof *D.t);
	D.taken = calloc(D.ss.n + 1, 1);
	D.mark = calloc(D.ss.n + 1, 1);
	D.evid = calloc(D.ss.n + 1, 1);
	if (!out->site_stack || !out->site_device || !D.t || !D.taken || !D.mark || !D.evid)
		goto done;
	for (size_t i = 0; i < D.ss.n; i++) {
		out->site_stack[i] = (uint32_t)D.ss.s[i].key.b;
		out->site_device[i] = (int16_t)(int64_t)D.ss.s[i].key.a;
	}
	D.dl = n ? tlm__ss_deltas(recs, n, &D.nd) : NULL;
	while (out->n < TLM__STEPS_MAX_PHASES) {
		struct tlm__sscore best, micro;
		int got = one_phase(&D, out, &best, &micro);
		if (got < 0)
			goto done;
		if (!got)
			break;
		const struct tlm__sscore *list[2] = {&best, micro.k ? &micro : NULL};
		size_t outer = out->n;
		uint8_t *claim = calloc(D.ss.n + 1, 1);
		if (!claim)
			goto done;
		for (int q = 0; q < 2 && list[q] && out->n < TLM__STEPS_MAX_PHASES; q++) {
			struct tlm__steps_found *f = &out->ph[out->n];
			f->step_site = calloc(D.ss.n + 1, 1);
			if (!f->step_site) {
				free(claim);
				goto done;
			}
			mark_of(&D, list[q], f->step_site);
			struct tlm__sscore sc;
			tlm__ss_score(&D.ss, recs, n, list[q]->k, list[q]->anchor, D.taken, D.t, &sc, NULL);
			f->nstep_sites = sc.step_sites;
			f->k = list[q]->k;
			f->anchor_site = list[q]->anchor;
			f->nsites = D.ss.n;
			f->site_stack = out->site_stack;
			f->site_device = out->site_device;
			f->inside = q ? (int)outer : -1;
			f->training = evidence(&D, list[q], f->step_site, NULL);
			if (positions(recs, n, list[q], f->step_site, &f->pos)) {
				free(claim);
				goto done;
			}
			for (size_t v = 0; v < D.ss.n; v++)
				claim[v] |= f->step_site[v];
			out->n++;
		}
		for (size_t v = 0; v < D.ss.n; v++)
			D.taken[v] |= claim[v];
		D.taken[best.anchor] = 1;
		free(claim);
	}
	rc = 0;
done:
	free(D.dl);
	free(D.t);
	free(D.taken);
	free(D.mark);
	free(D.evid);
	free(D.ss.s);
	if (D.ss.idx.slot)
		tlm__index_fini(&D.ss.idx);
	return rc;
}

void tlm__phases_found_free(struct tlm__phases_found *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->ph[i].pos);
		free(f->ph[i].step_site);
	}
	free(f->site_stack);
	free(f->site_device);
	memset(f, 0, sizeof *f);
}
