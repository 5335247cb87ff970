/* SPDX-License-Identifier: MIT */
/*
 * steps_act.c - activations at a step's peak, by the function that made them,
 * and what checkpointing the largest repeated one would leave
 * (docs/report.md, "Activations and checkpointing").
 *
 * An activation is an allocation made in the step, live at its peak and
 * freed before the step ends: memory held from the forward pass to the
 * backward pass (freed on another thread: PyTorch's autograd engine). Its
 * function is the innermost frame of the program's own code
 * (tlm_report_useful_frame), or its caller when that function is a wrapper
 * (its allocations in the step come from two functions or more: a
 * checked-malloc helper), repeatedly. Only allocations made on the step's
 * thread (the one of its first allocation) count: memory the backward pass
 * allocates on autograd's threads is no activation. A function's instances
 * are its calls in the step: the number of times the sequence of (site,
 * size) of its allocations repeats, or without a period, the allocations at
 * its first site. For the unit (steps_unit.c: an nn.Module's forward), else
 * the function with the most activation bytes and at least two instances, checkpointing segments
 * of N consecutive instances keeps only each segment's output (the last
 * activation of its last instance: the next segment's input) and re-creates
 * one segment at a time during the backward pass: steps_ckpt.c replays the
 * step so; printed beside the rule of thumb peak - (1 - 1/N) x activations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"
#include "common/grow.h"

struct group {
	const struct tlm_frame *fr;
	struct tlm_report_act a;
	uint32_t first_site;
	uint64_t first_t, last_t;
	size_t n, off, fill;     /* its allocations in the step: idx[off .. off + n) */
	size_t period;           /* of its (site, size) sequence; n when none */
};

/* The smallest p dividing n such that the sequence repeats every p. */
static size_t period(const struct tlm__srec *recs, const size_t *idx, size_t n)
{
	for (size_t p = 1; p < n; p++) {
		if (n % p)
			continue;
		size_t i = p;
		while (i < n && recs[idx[i]].site == recs[idx[i - p]].site && recs[idx[i]].size == recs[idx[i - p]].size)
			i++;
		if (i == n)
			return p;
	}
	return n;
}

/* The same over (place inside the unit, size). */
static size_t key_period(const struct tlm__srec *recs, const size_t *idx, size_t n, const uint32_t *key_of)
{
	for (size_t p = 1; p < n; p++) {
		if (n % p)
			continue;
		size_t i = p;
		while (i < n && key_of[recs[idx[i]].site] == key_of[recs[idx[i - p]].site] &&
		       recs[idx[i]].size == recs[idx[i - p]].size)
			i++;
		if (i == n)
			return p;
	}
	return n;
}

static bool same_fn(const struct tlm_frame *a, const struct tlm_frame *b)
{
	if (!a || !b)
		return a == b;
	if (a->function && b->function)
		return !strcmp(a->function, b->function) &&
		       (a->file && b->file ? !strcmp(a->file, b->file) : a->file == b->file);
	return !a->function && !b->function && a->ip == b->ip;
}

/* Per site of the step: its frames and the index of the function that made it. */
struct sframe {
	const struct tlm_frame *f;
	size_t n, cur;
	bool seen;
};

static bool same_caller(const struct sframe *a, const struct sframe *b)
{
	const struct tlm_frame *x = a->cur + 1 < a->n ? &a->f[a->cur + 1] : NULL;
	const struct tlm_frame *y = b->cur + 1 < b->n ? &b->f[b->cur + 1] : NULL;
	return same_fn(x, y);
}

/* Moves every site whose function is a wrapper to its caller, until none is. */
static void skip_wrappers(struct sframe *sf, uint32_t nsites)
{
	for (int round = 0; round < 8; round++) {
		bool moved = false;
		for (uint32_t a = 0; a < nsites; a++) {
			if (!sf[a].seen || sf[a].cur + 1 >= sf[a].n)
				continue;
			bool wrapper = false;
			for (uint32_t b = 0; b < nsites && !wrapper; b++)
				wrapper = sf[b].seen && b != a && same_fn(&sf[a].f[sf[a].cur], &sf[b].f[sf[b].cur]) &&
					  !same_caller(&sf[a], &sf[b]);
			if (!wrapper)
				continue;
			const struct tlm_frame *w = &sf[a].f[sf[a].cur];
			for (uint32_t b = 0; b < nsites; b++)
				if (sf[b].seen && sf[b].cur + 1 < sf[b].n && same_fn(w, &sf[b].f[sf[b].cur]))
					sf[b].cur++;
			moved = true;
		}
		if (!moved)
			return;
	}
}

/* The unit with its checkpointing estimate first, then by bytes. */
static int by_bytes(const void *x, const void *y)
{
	const struct tlm_report_act *a = x, *b = y;
	if (!a->nckpt != !b->nckpt)
		return a->nckpt ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
}

/* The estimates for N = 1, 2 and round(sqrt(L)) (when more than 2), from
 * the replay of the step (steps_ckpt.c), beside the rule of thumb. */
static void estimate(struct tlm_report_act *a, const struct tlm__srec *recs, size_t lo, size_t hi, uint64_t t0,
		     uint64_t t1, int device, uint64_t live, const size_t *fn, const size_t *inst, size_t nfn, size_t L,
		     uint64_t peak)
{
	unsigned every[TLM_REPORT_MAX_CKPT] = {1, 2, 3, (unsigned)lround(sqrt((double)L))};
	for (size_t e = 0; e < TLM_REPORT_MAX_CKPT; e++) {
		unsigned N = every[e];
		if (N < 1 || N > L || (e == 3 && N <= 3))
			continue;
		bool ok;
		uint64_t est = tlm__ckpt_replay(recs, lo, hi, t0, t1, device, live, fn, inst, nfn, L, N, &ok);
		if (!ok)
			return;
		struct tlm_report_ckpt *c = &a->ckpt[a->nckpt++];
		c->every = N;
		c->est_peak = est;
		double saved = (1.0 - 1.0 / N) * (double)a->bytes;
		c->rule_peak = peak - (uint64_t)saved;
	}
}

int tlm__steps_activations(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__srec *recs,
			   size_t n, size_t j, uint64_t t0, uint64_t t1, uint64_t peak_ev)
{
	st->act_step = j;
	st->act_peak = st->step[j].peak;
	size_t lo = 0, hi;
	while (lo < n && recs[lo].t < t0)
		lo++;
	for (hi = lo; hi < n && recs[hi].t < t1; hi++)
		;
	uint32_t nsites = 0;
	for (size_t i = lo; i < hi; i++)
		if (recs[i].site >= nsites)
			nsites = recs[i].site + 1;
	uint32_t *gof = malloc((nsites + 1) * sizeof *gof); /* site -> group + 1 */
	size_t *idx = NULL, *unit_at = NULL;
	uint8_t *starts = NULL;
	uint32_t *key_of = NULL;
	uint64_t *sitecount = calloc(nsites + 1, sizeof *sitecount);
	struct sframe *sf = calloc(nsites + 1, sizeof *sf);
	struct group *g = NULL;
	size_t ng = 0, cap = 0;
	int rc = -1;
	if (!gof || !sitecount || !sf)
		goto out;
	memset(gof, 0, (nsites + 1) * sizeof *gof);
	for (size_t i = lo; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		struct sframe *s = &sf[x->site];
		if (s->seen || x->device != st->device || x->mkind != TLM_MEM_DEVICE)
			continue;
		s->n = tlm_report_frames(r, x->stack, &s->f);
		const struct tlm_frame *u = tlm_report_useful_frame(r, x->stack);
		s->seen = s->n > 0;
		s->cur = u && s->n ? (size_t)(u - s->f) : 0;
	}
	skip_wrappers(sf, nsites);
	uint32_t thread = lo < hi ? recs[lo].thread : 0;
	/* Python: the nn.Module whose forward holds the activations is the unit */
	unit_at = malloc((nsites + 1) * sizeof *unit_at);
	starts = malloc(nsites + 1);
	key_of = malloc((nsites + 1) * sizeof *key_of);
	if (!unit_at || !starts || !key_of)
		goto out;
	int unit = tlm__steps_unit(r, recs, lo, hi, st->device, thread, peak_ev, t1, nsites, unit_at, starts, key_of);
	if (unit < 0)
		goto out;
	for (uint32_t v = 0; unit && v < nsites; v++)
		if (sf[v].seen && unit_at[v] != SIZE_MAX && unit_at[v] < sf[v].n)
			sf[v].cur = unit_at[v];
	for (size_t i = lo; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->device != st->device || x->mkind != TLM_MEM_DEVICE || x->thread != thread)
			continue;
		sitecount[x->site]++;
		if (!gof[x->site]) {
			const struct tlm_frame *fr = sf[x->site].seen ? &sf[x->site].f[sf[x->site].cur] : NULL;
			size_t k = 0;
			while (k < ng && !same_fn(g[k].fr, fr))
				k++;
			if (k == ng) {
				if (ng == cap && tlm__grow(&g, &cap, ng + 1, sizeof *g, 16))
					goto out;

				g[ng] = (struct group){.fr = fr, .first_site = x->site, .first_t = x->t};
				g[ng].a.stack_id = x->stack;
				g[ng].a.frame = sf[x->site].cur;
				if (fr) {
					g[ng].a.fn = *fr;
					g[ng].a.have_fn = true;
				}
				ng++;
			}
			gof[x->site] = (uint32_t)k + 1;
		}
		struct group *gr = &g[gof[x->site] - 1];
		gr->last_t = x->t;
		gr->n++;
		if (x->ev <= peak_ev && x->fev > peak_ev && x->ft < t1) {
			gr->a.bytes += x->size;
			gr->a.count++;
			gr->a.other_thread += x->fthread != x->thread;
			st->act_bytes += x->size;
		}
	}
	/* each function's allocations in order: instances from their period */
	idx = malloc((hi - lo + 1) * sizeof *idx);
	if (!idx)
		goto out;
	for (size_t k = 0, off = 0; k < ng; k++) {
		g[k].off = off;
		off += g[k].n;
	}
	for (size_t i = lo; i < hi; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->device == st->device && x->mkind == TLM_MEM_DEVICE && x->thread == thread && gof[x->site]) {
			struct group *gr = &g[gof[x->site] - 1];
			idx[gr->off + gr->fill++] = i;
		}
	}
	size_t ugroup = SIZE_MAX;
	for (size_t k = 0; k < ng; k++) {
		g[k].period = period(recs, idx + g[k].off, g[k].n);
		g[k].a.instances = g[k].period < g[k].n ? g[k].n / g[k].period : sitecount[g[k].first_site];
		if (unit && unit_at[g[k].first_site] != SIZE_MAX) {
			/* instances of the module: the period of its (place, size)
			 * sequence, else the runs at its first allocation's place */
			ugroup = k;
			g[k].period = key_period(recs, idx + g[k].off, g[k].n, key_of);
			g[k].a.instances = g[k].period < g[k].n ? g[k].n / g[k].period : 0;
			for (size_t q = 0; q < g[k].n && g[k].period == g[k].n; q++)
				g[k].a.instances += starts[recs[idx[g[k].off + q]].site] &&
						    (!q || !starts[recs[idx[g[k].off + q - 1]].site]);
		}
		g[k].a.forward_s = g[k].last_t > g[k].first_t ? (double)(g[k].last_t - g[k].first_t) / 1e9 : 0.0;
	}
	/* the largest repeated function: per-instance sizes, then the estimate */
	size_t big = ugroup != SIZE_MAX && g[ugroup].a.bytes && g[ugroup].a.instances >= 2 ? ugroup : SIZE_MAX;
	for (size_t k = 0; k < ng && ugroup == SIZE_MAX; k++)
		if (g[k].a.bytes && g[k].a.instances >= 2 && (big == SIZE_MAX || g[k].a.bytes > g[big].a.bytes))
			big = k;
	if (big != SIZE_MAX) {
		size_t L = g[big].a.instances, nfn = g[big].n;
		size_t *inst = malloc((nfn + 1) * sizeof *inst);
		if (!inst)
			goto out;
		size_t in = 0;
		bool started = false, prev_start = false, by_period = g[big].period < nfn;
		for (size_t q = 0; q < nfn; q++) {
			const struct tlm__srec *x = &recs[idx[g[big].off + q]];
			if (big == ugroup && !by_period) {
				bool st = starts[x->site];
				if (st && started && !prev_start)
					in++;
				started = started || st;
				prev_start = st;
			} else if (by_period) {
				in = q / g[big].period;
			} else if (x->site == g[big].first_site) {
				if (started)
					in++;
				started = true;
			}
			inst[q] = in;
		}
		estimate(&g[big].a, recs, lo, hi, t0, t1, st->device, st->step[j].live_at_start, idx + g[big].off, inst,
			 nfn, L, st->act_peak);
		free(inst);
	}
	st->act = calloc(ng + 1, sizeof *st->act);
	if (!st->act)
		goto out;
	for (size_t k = 0; k < ng; k++)
		if (g[k].a.bytes)
			st->act[st->nact++] = g[k].a;
	qsort(st->act, st->nact, sizeof *st->act, by_bytes);
	rc = 0;
out:
	free(unit_at);
	free(starts);
	free(key_of);
	free(gof);
	free(idx);
	free(sitecount);
	free(sf);
	free(g);
	return rc;
}
