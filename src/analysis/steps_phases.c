/* SPDX-License-Identifier: MIT */
/*
 * steps_phases.c - from the recorded allocations to r->steps: every phase of
 * the run (steps_detect.c), each analysed on its own (steps.c) with its steps
 * stopping where another phase's unit begins, the training phase named (the
 * one whose steps show a backward pass or an optimizer step) and made the
 * report's steps. docs/report.md, "Phases".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

/* Keeps the records counted at their (device, kind)'s allocated layer. */
static size_t allocated_layer(struct tlm__srec *recs, size_t n, const struct tlm__replay *rp)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool keep = !recs[i].block;
		for (size_t a = 0; a < rp->accts.n; a++)
			if (rp->accts.a[a].device == recs[i].device && rp->accts.a[a].mkind == recs[i].mkind)
				keep = rp->accts.a[a].has_blocks ? recs[i].block : !recs[i].block;
		if (keep)
			recs[k++] = recs[i];
	}
	return k;
}

/* A window that began mid-run: what was allocated before its first record
 * and is still live now was live all through it, so every step's peak counts
 * it (what of it was freed inside the window is not known: earlier steps'
 * peaks may be that much low, never high). */
static void window_base(struct tlm__steps_rec *rec, const struct tlm__srec *recs, size_t n,
			const struct tlm__replay *rp)
{
	memset(rec->base, 0, sizeof rec->base);
	if (!rec->window)
		return;
	for (size_t a = 0; a < rp->accts.n; a++) {
		const struct tlm__acct *x = &rp->accts.a[a];
		if (x->mkind == TLM_MEM_DEVICE && x->device >= 0 && x->device < TLM__STEPS_MAX_DEV)
			rec->base[x->device] = x->allocated;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tlm__srec *x = &recs[i];
		if (x->mkind == TLM_MEM_DEVICE && x->device >= 0 && x->device < TLM__STEPS_MAX_DEV &&
		    x->fev == UINT64_MAX)
			rec->base[x->device] -= rec->base[x->device] < x->size ? rec->base[x->device] : x->size;
	}
}

static bool has_ci(const char *s, const char *w)
{
	if (!s)
		return false;
	size_t n = strlen(w);
	for (; *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && tolower((unsigned char)s[i]) == w[i])
			i++;
		if (i == n)
			return true;
	}
	return false;
}

/* A backward pass (a function named *backward*: autograd's nodes, the
 * program's own) or an optimizer step (torch/optim, a function named
 * *optim*) on the stack. */
static bool evidence(void *ctx, uint32_t stack)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(ctx, stack, &f);
	for (size_t i = 0; i < n; i++) {
		if (has_ci(f[i].function, "backward") || has_ci(f[i].function, "optim"))
			return true;
		if (f[i].file && (strstr(f[i].file, "/torch/optim/") || strstr(f[i].file, "/torch/autograd/")))
			return true;
	}
	return false;
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The unit starts of the phases that stop phase p's steps: all but p, the
 * phase p is inside and those inside p. */
static size_t *bounds(const struct tlm__phases_found *pf, size_t p, size_t *nb)
{
	size_t tot = 0;
	for (size_t q = 0; q < pf->n; q++)
		tot += pf->ph[q].k;
	size_t *b = malloc((tot + 1) * sizeof *b);
	if (!b)
		return NULL;
	*nb = 0;
	for (size_t q = 0; q < pf->n; q++) {
		if (q == p || pf->ph[p].inside == (int)q || pf->ph[q].inside == (int)p)
			continue;
		memcpy(b + *nb, pf->ph[q].pos, pf->ph[q].k * sizeof *b);
		*nb += pf->ph[q].k;
	}
	qsort(b, *nb, sizeof *b, by_index);
	return b;
}

static int by_start(const void *a, const void *b)
{
	const struct tlm_report_phase *x = a, *y = b;
	int64_t s = x->st->step[0].start_ns, t = y->st->step[0].start_ns;
	return (s > t) - (s < t);
}

int tlm__steps_finish(struct tlm__steps_rec *rec, const struct tlm__replay *rp, struct tlm_report *r)
{
	struct tlm_report_steps *st = calloc(1, sizeof *st);
	if (!st)
		return -1;
	r->steps = st;
	st->truncated = rec->full;
	size_t n = allocated_layer(rec->r, rec->n, rp);
	st->recorded = n;
	window_base(rec, rec->r, n, rp);
	struct tlm__phases_found pf;
	if (tlm__steps_detect(rec->r, n, evidence, r, &pf))
		return -1;
	int rc = 0;
	if (!pf.n) {
		st->why_not = n ? "no allocation sequence repeats (no site allocates the same number of times in each "
				  "of 3 or more segments)"
				: "no allocations";
		tlm__phases_found_free(&pf);
		return 0;
	}
	/* the primary phase: the first found with a backward pass or an
	 * optimizer step that is no micro-step, else the first found */
	size_t primary = 0;
	for (size_t p = pf.n; p-- > 0;)
		if (pf.ph[p].training && pf.ph[p].inside < 0)
			primary = p;
	st->phases = calloc(pf.n, sizeof *st->phases);
	if (!st->phases) {
		tlm__phases_found_free(&pf);
		return -1;
	}
	for (size_t p = 0; p < pf.n && !rc; p++) {
		struct tlm_report_steps *ps = p == primary ? st : calloc(1, sizeof *ps);
		size_t nb = 0, *b = bounds(&pf, p, &nb);
		if (!ps || !b) {
			free(b);
			if (ps != st)
				free(ps);
			rc = -1;
			break;
		}
		ps->found = true;
		ps->truncated = rec->full;
		ps->recorded = n;
		struct tlm_report_phase *ph = &st->phases[st->nphases++];
		ph->st = ps;
		ph->training = pf.ph[p].training;
		ph->inside = pf.ph[p].inside;
		ph->name = ph->inside >= 0 ? "micro-steps" : ph->training ? "training" : "evaluation";
		rc = tlm__steps_analyse(r, ps, rec, rp, rec->r, n, &pf.ph[p], b, nb, p == primary);
		free(b);
	}
	if (!rc) {
		/* phases by the time they began; inside follows */
		int *newof = malloc(pf.n * sizeof *newof);
		struct tlm_report_steps **old = malloc(pf.n * sizeof *old);
		if (newof && old) {
			for (size_t p = 0; p < pf.n; p++)
				old[p] = st->phases[p].st;
			qsort(st->phases, st->nphases, sizeof *st->phases, by_start);
			for (size_t p = 0; p < pf.n; p++)
				for (size_t q = 0; q < pf.n; q++)
					if (st->phases[q].st == old[p])
						newof[p] = (int)q;
			for (size_t q = 0; q < pf.n; q++) {
				if (st->phases[q].inside >= 0)
					st->phases[q].inside = newof[st->phases[q].inside];
				if (st->phases[q].st == st)
					st->primary = q;
			}
		}
		free(newof);
		free(old);
		st->found = true;
		for (size_t p = 0; p < st->nphases; p++)
			tlm__steps_merge_leaks(r, st->phases[p].st);
		qsort(r->leaks, r->nleaks, sizeof *r->leaks, tlm__site_by_bytes);
	}
	tlm__phases_found_free(&pf);
	return rc;
}
