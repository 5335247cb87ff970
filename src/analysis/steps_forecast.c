/* SPDX-License-Identifier: MIT */
/*
 * steps_forecast.c - when the device runs out (docs/report.md, "Forecast").
 *
 * A run that died of out of memory (a fatal OOM on the step device) is not
 * forecast: the step it died in is said. Otherwise, for a device whose
 * memory an allocator tap reports as blocks (PyTorch's caching allocator),
 * the run's block requests are replayed through the allocator's model
 * (src/whatif/model.h, under the recorded settings, on a device of the
 * capacity the forecast measured) up to the end of the last step, then the
 * last measured steady step is repeated: its allocations in order, each
 * free at its place (a free of memory an earlier step made frees the
 * repetition's own, as many steps back), its survivors kept. The first
 * request the model cannot satisfy ends the forecast: cache, rounding and
 * fragmentation count, not only the bytes. Past MAX_OPS model operations
 * the rest is extrapolated from the model's reserved memory growth.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"
#include "analysis/wi_ops.h"
#include "whatif/model.h"

#define MAX_OPS 4000000ull /* model operations before extrapolating */

static void died(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__srec *recs, size_t n,
		 const struct tlm__steps_found *f, uint64_t start)
{
	for (size_t i = 0; i < r->nooms; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		if (o->outcome != TLM_OOM_FATAL || o->device != st->device)
			continue;
		size_t j = 0;
		while (j < st->count && st->step[j].start_ns <= o->time_ns)
			j++;
		/* in the last step, or in the next that the run's end cut before its
		 * anchor: more allocations since the last step began than a step makes */
		if (j == st->count && st->count >= 2) {
			uint64_t made = 0, t = start + (uint64_t)o->time_ns, typical = st->step[st->count - 2].allocs;
			for (size_t x = f->pos[st->count - 1]; x < n && recs[x].t < t; x++)
				made++;
			if (typical)
				j += made / typical;
		}
		st->died = true;
		st->died_step = j ? j : 1;
		st->died_ns = o->time_ns;
		st->died_requested = o->requested;
		st->died_verdict = o->verdict;
		for (size_t d = 0; d < st->nforecast; d++) {
			st->forecast[d].known = false;
			st->forecast[d].why_not = "the run died of out of memory: no forecast";
		}
		return;
	}
}

/* The step (index) whose window [start, next start) holds t; SIZE_MAX none. */
static size_t step_of(const struct tlm_report_steps *st, uint64_t t)
{
	size_t lo = 0, hi = st->count;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((uint64_t)st->step[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}

static bool is_alloc(uint8_t type)
{
	return type == WI_ALLOC || type == WI_FALLOC;
}

/* The device's requests (src/whatif's reading of the trace: blocks and the
 * memory other code took from the driver), replayed through the run's last
 * step, then its steady step repeated until a request fails. */
static uint64_t model_forecast(const struct tlm_report_steps *st, const struct wi_dev *d,
			       const struct tlm_wi_settings *set, uint64_t capacity, bool *ok)
{
	*ok = false;
	size_t k = st->count, S = k - 2, fs = st->first_steady;
	if (k < 3 || S < fs)
		return 0;
	struct wi_sim sim;
	tlm__wi_sim_init(&sim, capacity, d->va_base);
	struct tlm_wi_drv drv;
	tlm__wi_sim_drv(&sim, &drv);
	struct tlm_wi_model *m = tlm_wi_model_new(set, &drv, d->total ? d->total : capacity);
	uint64_t *maddr = calloc(d->nop + 1, sizeof *maddr), result = 0, **ring = NULL;
	size_t *local = malloc((d->nop + 1) * sizeof *local), *win = malloc((d->nop + 1) * sizeof *win), *real = NULL;
	size_t nw = 0, na = 0, depth = 1;
	if (!m || !maddr || !local || !win)
		goto out;
	tlm_wi_model_sizes_rounded(m, true);
	uint64_t t_end = (uint64_t)st->step[k - 1].end_ns, w0 = (uint64_t)st->step[S].start_ns,
		 w1 = (uint64_t)st->step[S + 1].start_ns;
	/* each allocation's index in its steady step; the run through its last step */
	size_t cur = SIZE_MAX, x = 0;
	for (size_t i = 0; i < d->nop; i++) {
		const struct wi_fc_op *o = &d->op[i];
		size_t j = step_of(st, o->t);
		if (j != cur) {
			cur = j;
			x = 0;
		}
		local[i] = is_alloc(o->type) && j != SIZE_MAX && j >= fs ? x++ : SIZE_MAX;
		if (o->t >= t_end)
			continue;
		uint64_t bs;
		switch (o->type) {
		case WI_ALLOC:
			if (tlm_wi_model_malloc(m, o->size, 0, &maddr[i], &bs) == -2)
				goto out;
			break;
		case WI_FREE:
			if (maddr[o->partner])
				tlm_wi_model_release(m, maddr[o->partner]);
			maddr[o->partner] = 0;
			break;
		case WI_FALLOC:
			if (tlm__wi_sim_take(&sim, o->size, &maddr[i]))
				maddr[i] = 0;
			break;
		case WI_FFREE:
			if (maddr[o->partner])
				tlm__wi_sim_give(&sim, maddr[o->partner], d->op[o->partner].size);
			maddr[o->partner] = 0;
			break;
		case WI_EMPTY:
			if (o->size == 2)
				tlm_wi_model_empty_cache(m);
			break;
		}
		if (sim.nomem)
			goto out;
	}
	/* the steady step's window: its allocations, and the frees of what a
	 * steady step made (a free of a weight or of warm-up memory is once) */
	for (size_t i = 0; i < d->nop; i++) {
		const struct wi_fc_op *o = &d->op[i];
		if (o->t < w0 || o->t >= w1)
			continue;
		if (is_alloc(o->type) && local[i] != SIZE_MAX) {
			win[nw++] = i;
			na++;
		} else if ((o->type == WI_FREE || o->type == WI_FFREE) && local[o->partner] != SIZE_MAX) {
			size_t js = step_of(st, d->op[o->partner].t);
			if (js <= S && S - js + 1 > depth)
				depth = S - js + 1;
			if (js <= S)
				win[nw++] = i;
		}
	}
	if (!na)
		goto out;
	ring = calloc(depth + 1, sizeof *ring);
	real = malloc((k * na + 1) * sizeof *real);
	if (!ring || !real)
		goto out;
	for (size_t q = 0; q <= depth; q++)
		if (!(ring[q] = calloc(na, sizeof **ring)))
			goto out;
	for (size_t q = 0; q < k * na; q++)
		real[q] = SIZE_MAX;
	for (size_t i = 0; i < d->nop; i++)
		if (local[i] != SIZE_MAX && local[i] < na) {
			size_t j = step_of(st, d->op[i].t);
			if (j < k)
				real[j * na + local[i]] = i;
		}
	uint64_t ops = 0, grow_from = 0, grow_step = 0;
	for (uint64_t step = 0;; step++) {
		uint64_t *mine = ring[step % (depth + 1)];
		memset(mine, 0, na * sizeof *mine);
		for (size_t w = 0; w < nw; w++) {
			const struct wi_fc_op *o = &d->op[win[w]];
			if (is_alloc(o->type)) {
				uint64_t bs, a = 0;
				int mr = o->type == WI_ALLOC ? tlm_wi_model_malloc(m, o->size, 0, &a, &bs)
							     : tlm__wi_sim_take(&sim, o->size, &a);
				if (mr == -2 || sim.nomem)
					goto out;
				if (mr) { /* this step would not complete */
					result = step;
					*ok = true;
					goto out;
				}
				mine[local[win[w]]] = a;
				continue;
			}
			size_t p = local[o->partner], back = S - step_of(st, d->op[o->partner].t);
			uint64_t *slot = NULL;
			if (back <= step) {
				slot = &ring[(step - back) % (depth + 1)][p];
			} else if (k >= back - step) { /* made by a real step */
				size_t ri = real[(k - (back - step)) * na + p];
				slot = ri != SIZE_MAX ? &maddr[ri] : NULL;
			}
			if (!slot || !*slot)
				continue;
			if (o->type == WI_FREE)
				tlm_wi_model_release(m, *slot);
			else
				tlm__wi_sim_give(&sim, *slot, o->size);
			*slot = 0;
		}
		ops += nw;
		struct tlm_wi_stats s1;
		tlm_wi_model_stats(m, &s1);
		if (step == 8) {
			grow_from = s1.peak_reserved;
			grow_step = step;
		}
		if (ops > MAX_OPS) { /* the rest from the model's growth per step */
			uint64_t g = step > grow_step && s1.peak_reserved > grow_from
					     ? (s1.peak_reserved - grow_from) / (step - grow_step)
					     : 0;
			if (!g)
				break;
			uint64_t used = s1.peak_reserved + (sim.used_pages * WI_PAGE > s1.reserved
								    ? sim.used_pages * WI_PAGE - s1.reserved : 0);
			result = step + 1 + (capacity > used ? capacity - used : 0) / g;
			*ok = true;
			break;
		}
	}
out:
	if (ring)
		for (size_t q = 0; q <= depth; q++)
			free(ring[q]);
	free(ring);
	free(real);
	free(win);
	free(local);
	free(maddr);
	tlm_wi_model_free(m);
	tlm__wi_sim_fini(&sim);
	return result;
}

int tlm__steps_forecast_model(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__srec *recs, size_t n,
			      const struct tlm__steps_found *f, const size_t *end_idx, uint64_t tend, uint64_t start)
{
	(void)end_idx;
	(void)tend;
	died(r, st, recs, n, f, start);
	if (st->died)
		return 0;
	const struct wi_trace *t = tlm__wi_ops_of(r); /* the pass collected them (wi_ops.c) */
	struct tlm_wi_settings set;
	tlm_wi_defaults(&set);
	set.ties_by_segment = true; /* PyTorch 2.15's tie rule (src/whatif) */
	char err[256];
	if (r->alloc_conf_known && tlm_wi_parse(&set, r->alloc_conf, err, sizeof err))
		return 0;
	for (size_t d = 0; d < st->nforecast && !set.async_backend; d++) {
		struct tlm_report_forecast *fc = &st->forecast[d];
		if (!fc->known)
			continue;
		if (!t)
			return 0; /* the linear rule stays */
		const struct wi_dev *wd = NULL;
		for (size_t i = 0; i < t->ndev; i++)
			if (t->dev[i].device == fc->device && t->dev[i].nalloc)
				wd = &t->dev[i];
		if (!wd)
			continue;
		bool ok;
		uint64_t s = model_forecast(st, wd, &set, fc->capacity, &ok);
		if (!ok)
			continue;
		fc->modelled = true;
		fc->steps_to_oom = s;
		fc->seconds_to_oom = (double)s * st->seconds_per_step;
	}
	return 0;
}
