/* SPDX-License-Identifier: MIT */
/*
 * steps.c - from the recorded allocations to r->steps: the allocated layer
 * only, the steps (steps_detect.c), their windows, warm-up against steady
 * state, the peak of each step, survivors and leaks per step, the forecast
 * per device, and the frame that drives the steps. docs/report.md, "Steps".
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* ---- peaks: the allocated layer swept in event order -------------------- */

struct delta {
	uint64_t ord, t;
	int64_t bytes;
	int dev;
};

static int by_ord(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	return (x->ord > y->ord) - (x->ord < y->ord);
}

/* Per step: peak and bytes at the start on each device used. */
struct sweep {
	uint64_t *peak, *start, *peak_ev; /* [at(step, device)] */
	uint64_t at_end[TLM__STEPS_MAX_DEV]; /* allocated when the last step ended */
	bool used[TLM__STEPS_MAX_DEV];
	int idx[TLM__STEPS_MAX_DEV];      /* device -> column (devices used only) */
	size_t ncol;
};

static size_t at(const struct sweep *s, size_t step, int device)
{
	return step * s->ncol + (size_t)s->idx[device];
}

/* base: the bytes live on each device from before the first record (0 for a
 * whole run, see window_base). */
static int sweep(const struct tlm__srec *recs, size_t n, const size_t *pos, const uint64_t *stop_ev, size_t k,
		 uint64_t tend, const uint64_t *base, struct sweep *s)
{
	for (size_t i = 0; i < n; i++) {
		const struct tlm__srec *r = &recs[i];
		if (r->mkind == TLM_MEM_DEVICE && r->device >= 0 && r->device < TLM__STEPS_MAX_DEV)
			s->used[r->device] = true;
	}
	for (int v = 0; v < TLM__STEPS_MAX_DEV; v++)
		s->idx[v] = s->used[v] ? (int)s->ncol++ : 0;
	size_t m = (size_t)k * (s->ncol ? s->ncol : 1);
	s->peak = calloc(m, sizeof *s->peak);
	s->start = calloc(m, sizeof *s->start);
	s->peak_ev = calloc(m, sizeof *s->peak_ev);
	struct delta *d = malloc((2 * n + 1) * sizeof *d);
	if (!s->peak || !s->start || !s->peak_ev || !d) {
		free(d);
		return -1;
	}
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		const struct tlm__srec *r = &recs[i];
		if (r->mkind != TLM_MEM_DEVICE || r->device < 0 || r->device >= TLM__STEPS_MAX_DEV)
			continue;
		d[nd++] = (struct delta){r->ev, r->t, (int64_t)r->size, r->device};
		if (r->fev != UINT64_MAX)
			d[nd++] = (struct delta){r->fev, r->ft, -(int64_t)r->size, r->device};
	}
	qsort(d, nd, sizeof *d, by_ord);
	uint64_t cur[TLM__STEPS_MAX_DEV];
	memcpy(cur, base, sizeof cur);
	size_t j = 0;        /* steps started so far */
	bool ended = false;
	for (size_t i = 0; i < nd; i++) {
		while (j < k && d[i].ord >= recs[pos[j]].ev) { /* event order: a clock may run backwards */
			for (int v = 0; v < TLM__STEPS_MAX_DEV; v++)
				if (s->used[v])
					s->start[at(s, j, v)] = s->peak[at(s, j, v)] = cur[v];
			j++;
		}
		if (!ended && j == k && d[i].t > tend) {
			ended = true;
			memcpy(s->at_end, cur, sizeof cur);
		}
		int v = d[i].dev;
		cur[v] = (uint64_t)((int64_t)cur[v] + d[i].bytes);
		if (j && !ended && d[i].ord < stop_ev[j - 1]) { /* another phase's unit stops the step */
			size_t x = at(s, j - 1, v);
			if (cur[v] > s->peak[x]) {
				s->peak[x] = cur[v];
				s->peak_ev[x] = d[i].ord;
			}
		}
	}
	if (!ended)
		memcpy(s->at_end, cur, sizeof cur);
	free(d);
	return 0;
}

static void sweep_free(struct sweep *s)
{
	free(s->peak);
	free(s->start);
	free(s->peak_ev);
}

/* ---- survivors per site --------------------------------------------------- */

struct surv {
	size_t last_step;
	uint64_t step_bytes, min, max;
	uint64_t steps, bytes, count;
	int kind;
};

static void surv_close(struct surv *s)
{
	if (s->last_step == SIZE_MAX)
		return;
	if (!s->steps || s->step_bytes < s->min)
		s->min = s->step_bytes;
	if (s->step_bytes > s->max)
		s->max = s->step_bytes;
	s->steps++;
}

static int by_per_step(const void *a, const void *b)
{
	const struct tlm_report_step_leak *x = a, *y = b;
	if (x->bytes_per_step != y->bytes_per_step)
		return x->bytes_per_step > y->bytes_per_step ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int leaks(struct tlm_report_steps *st, const struct tlm__srec *recs, const struct tlm__steps_found *f,
		 const size_t *end_idx, uint64_t tend)
{
	size_t lo = st->first_steady, hi = st->count - 1; /* measured: [lo, hi) */
	size_t measured = hi > lo ? hi - lo : 0;
	if (measured < 2)
		return 0;
	struct surv *sv = calloc(f->nsites + 1, sizeof *sv);
	if (!sv)
		return -1;
	for (size_t i = 0; i < f->nsites; i++)
		sv[i].last_step = SIZE_MAX;
	for (size_t j = lo; j < hi; j++) {
		for (size_t i = f->pos[j]; i < end_idx[j]; i++) {
			const struct tlm__srec *r = &recs[i];
			if (r->ft != UINT64_MAX && r->ft <= tend)
				continue;
			struct surv *s = &sv[r->site];
			if (s->last_step != j) {
				surv_close(s);
				s->last_step = j;
				s->step_bytes = 0;
			}
			s->step_bytes += r->size;
			s->bytes += r->size;
			s->count++;
			s->kind = r->mkind;
			st->step[j].survivors += r->size;
		}
	}
	size_t nl = 0;
	for (size_t i = 0; i < f->nsites; i++) {
		surv_close(&sv[i]);
		nl += sv[i].steps > 0;
	}
	st->leaks = calloc(nl + 1, sizeof *st->leaks);
	if (!st->leaks) {
		free(sv);
		return -1;
	}
	for (size_t i = 0; i < f->nsites; i++) {
		const struct surv *s = &sv[i];
		if (!s->steps)
			continue;
		struct tlm_report_step_leak *l = &st->leaks[st->nleaks++];
		l->device = f->site_device[i];
		l->kind = s->kind;
		l->stack_id = f->site_stack[i];
		l->bytes_per_step = s->bytes / measured;
		l->tensors_per_step = (double)s->count / (double)measured;
		l->steps_with_survivors = s->steps;
		l->steps_measured = measured;
		l->survivor_bytes = s->bytes;
		l->survivor_count = s->count;
		l->steady = s->steps == measured && s->min == s->max;
		l->leak = measured >= 3 && 2 * s->steps > measured;
	}
	free(sv);
	qsort(st->leaks, st->nleaks, sizeof *st->leaks, by_per_step);
	return 0;
}

static void forecast(struct tlm_report_steps *st, const struct tlm__steps_rec *rec, const struct sweep *sw)
{
	size_t nf = 0;
	for (int v = 0; v < TLM__STEPS_MAX_DEV; v++) {
		if (!sw->used[v])
			continue;
		struct tlm_report_forecast *fc = &st->forecast[nf++];
		fc->device = v;
		fc->steady = true;
		for (size_t i = 0; i < st->nleaks; i++) {
			const struct tlm_report_step_leak *l = &st->leaks[i];
			if (l->leak && l->device == v && l->kind == TLM_MEM_DEVICE) {
				fc->growth_per_step += l->bytes_per_step;
				fc->steady = fc->steady && l->steady;
			}
		}
		/* the peak the last step reaches: the highest steady peak carried
		 * forward by the growth (a periodic evaluation or checkpoint save
		 * comes back; the run's end may cut the last step) */
		size_t last = st->count - 1;
		for (size_t j = st->first_steady; j <= last; j++) {
			uint64_t p = sw->peak[at(sw, j, v)] + (uint64_t)(last - j) * fc->growth_per_step;
			if (p > fc->last_peak)
				fc->last_peak = p;
		}
		if (!fc->growth_per_step) {
			fc->why_not = st->nleaks || st->count > 3 ? "no growth per step" : "too few steps to measure growth";
			continue;
		}
		if (!rec->cap_[v].known) {
			fc->why_not = "the trace does not say how much memory the device had free";
			continue;
		}
		fc->capacity = rec->cap_[v].capacity;
		fc->capacity_source = rec->cap_[v].source;
		uint64_t room = fc->capacity > fc->last_peak ? fc->capacity - fc->last_peak : 0;
		fc->known = true;
		fc->steps_to_oom = fc->linear_steps = room / fc->growth_per_step;
		fc->seconds_to_oom = (double)fc->steps_to_oom * st->seconds_per_step;
	}
	st->nforecast = nf;
}

/* ---- the frame driving the steps ---------------------------------------- */

static bool same_frame(const struct tlm_frame *a, const struct tlm_frame *b)
{
	if (a->function && b->function)
		return !strcmp(a->function, b->function) && a->line == b->line &&
		       (a->file && b->file ? !strcmp(a->file, b->file) : a->file == b->file);
	return !a->function && !b->function && a->ip == b->ip;
}

/* The outermost frames of two stacks: the same thread's entry. */
static bool same_root(const struct tlm_frame *a, const struct tlm_frame *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->function && b->function)
		return !strcmp(a->function, b->function);
	return !a->function && !b->function;
}

static void driving(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__steps_found *f)
{
	uint32_t anchor = f->site_stack[f->anchor_site];
	const struct tlm_frame *af;
	size_t an = tlm_report_frames(r, anchor, &af);
	st->driving_stack = anchor;
	if (!an)
		return;
	/* copy: frames of other stacks may be resolved (and the cache grown) meanwhile */
	struct tlm_frame *a = malloc(an * sizeof *a);
	if (!a)
		return;
	memcpy(a, af, an * sizeof *a);
	size_t common = an, seen = 0;
	for (size_t v = 0; v < f->nsites && seen < 64; v++) {
		if (!f->step_site[v] || f->site_stack[v] == anchor)
			continue;
		const struct tlm_frame *b;
		size_t bn = tlm_report_frames(r, f->site_stack[v], &b);
		if (!bn || !same_root(&b[bn - 1], &a[an - 1]))
			continue; /* autograd's thread: other frames, no loop of the program's */
		seen++;
		size_t c = 0;
		while (c < an && c < bn && same_frame(&a[an - 1 - c], &b[bn - 1 - c]))
			c++;
		if (c < common)
			common = c;
	}
	/* the loop's function when its steps call from several lines of it
	 * (forward-backward, then the optimizer step) */
	bool same_fn = common < an;
	for (size_t v = 0, seen2 = 0; v < f->nsites && seen2 < 64 && same_fn; v++) {
		if (!f->step_site[v] || f->site_stack[v] == anchor)
			continue;
		const struct tlm_frame *b;
		size_t bn = tlm_report_frames(r, f->site_stack[v], &b);
		if (!bn || !same_root(&b[bn - 1], &a[an - 1]))
			continue;
		seen2++;
		const struct tlm_frame *x = &a[an - 1 - common], *y = common < bn ? &b[bn - 1 - common] : NULL;
		same_fn = y && x->function && y->function && !strcmp(x->function, y->function);
	}
	/* a loop in one function called once (from libc's start, a module's
	 * top level): that function drives the steps */
	if (same_fn && common < an && common &&
	    (!tlm__frame_own(&a[an - common]) ||
	     (a[an - common].function && !strcmp(a[an - common].function, "<module>"))))
		common++;
	size_t df = common ? an - common : an - 1;
	/* never a library's frame (a decorator, a framework's loop): its caller */
	while (df + 1 < an && !tlm__frame_user(&a[df]))
		df++;
	free(a);
	st->driving_frame = df;
	size_t n2 = tlm_report_frames(r, anchor, &af);
	if (st->driving_frame < n2) {
		st->driving = af[st->driving_frame];
		st->have_driving = true;
	}
}

/* ---- finish ------------------------------------------------------------- */

/* Adds the step leaks live at the end that the time rule did not call leaks
 * (r->leaks has room for every live site). */
void tlm__steps_merge_leaks(struct tlm_report *r, const struct tlm_report_steps *st)
{
	for (size_t i = 0; i < st->nleaks; i++) {
		const struct tlm_report_step_leak *l = &st->leaks[i];
		if (!l->leak)
			continue;
		bool have = false;
		for (size_t k = 0; k < r->nleaks && !have; k++)
			have = r->leaks[k].device == l->device && r->leaks[k].stack_id == l->stack_id;
		for (size_t k = 0; k < r->nlive && !have; k++) {
			const struct tlm_report_site *s = &r->live[k];
			if (s->device != l->device || s->stack_id != l->stack_id)
				continue;
			struct tlm_report_site *n = &r->leaks[r->nleaks++];
			*n = *s;
			double span = (double)((uint64_t)s->last_ns - (uint64_t)s->first_ns) / 1e9;
			n->rate = span > 0 ? (double)s->bytes / span : 0.0;
			have = true;
		}
	}
}

/* Steady steps: those with the most common multiset of sites (a hash of
 * it); the first of them starts the steady state. With no signature seen
 * twice (every step differs), the first step is taken as warm-up. */
static size_t first_steady(const struct tlm__srec *recs, const struct tlm__steps_found *f, const size_t *end_idx,
			   size_t k, bool *typical)
{
	for (size_t j = 0; j < k; j++)
		typical[j] = true;
	uint64_t *sig = calloc(k + 1, sizeof *sig), *sorted = calloc(k + 1, sizeof *sorted);
	size_t best = k > 1 ? 1 : 0;
	if (!sig || !sorted)
		goto out;
	for (size_t j = 0; j < k; j++) {
		for (size_t i = f->pos[j]; i < end_idx[j]; i++)
			sig[j] += mix(recs[i].site + 1);
		sorted[j] = sig[j];
	}
	qsort(sorted, k, sizeof *sorted, cmp_i64);
	uint64_t mode = 0;
	size_t run = 0, most = 0;
	for (size_t j = 0; j < k; j++) {
		run = j && sorted[j] == sorted[j - 1] ? run + 1 : 1;
		if (run > most) {
			most = run;
			mode = sorted[j];
		}
	}
	if (most >= 2) {
		for (size_t j = k; j-- > 0;)
			if ((typical[j] = sig[j] == mode))
				best = j;
	}
out:
	free(sig);
	free(sorted);
	return best;
}

/* The first boundary (record index, sorted bnd) after record i; n when none. */
static size_t next_bound(const size_t *bnd, size_t nb, size_t i, size_t n)
{
	size_t lo = 0, hi = nb;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (bnd[mid] <= i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nb ? bnd[lo] : n;
}

int tlm__steps_analyse(struct tlm_report *r, struct tlm_report_steps *st, struct tlm__steps_rec *rec,
		       const struct tlm__replay *rp, struct tlm__srec *recs, size_t n, const struct tlm__steps_found *f,
		       const size_t *bnd, size_t nb, bool primary)
{
	size_t k = f->k;
	uint64_t run_end = rp->end_marked && rp->end_t >= rp->first_t ? rp->end_t : rp->last_t;
	uint64_t *t0 = calloc(k + 1, sizeof *t0), *t1 = calloc(k + 1, sizeof *t1), *stop = calloc(k + 1, sizeof *stop);
	size_t *end_idx = calloc(k + 1, sizeof *end_idx);
	int64_t *dur = calloc(k + 1, sizeof *dur);
	bool *typical = NULL;
	struct sweep sw = {0};
	int rc = -1;
	st->step = calloc(k, sizeof *st->step);
	st->forecast = calloc(TLM__STEPS_MAX_DEV, sizeof *st->forecast);
	if (!t0 || !t1 || !stop || !end_idx || !dur || !st->step || !st->forecast)
		goto out;
	/* a step ends where the next begins, or where another phase's unit does */
	for (size_t j = 0; j < k; j++) {
		t0[j] = recs[f->pos[j]].t;
		size_t b = next_bound(bnd, nb, f->pos[j], n);
		end_idx[j] = j + 1 < k ? f->pos[j + 1] : n;
		if (b < end_idx[j])
			end_idx[j] = b;
	}
	for (size_t j = 0; j + 1 < k; j++) {
		t1[j] = end_idx[j] < f->pos[j + 1] ? recs[end_idx[j]].t : t0[j + 1];
		stop[j] = end_idx[j] < f->pos[j + 1] ? recs[end_idx[j]].ev : UINT64_MAX;
	}
	size_t last_bound = end_idx[k - 1];
	stop[k - 1] = last_bound < n ? recs[last_bound].ev : UINT64_MAX;
	/* The last step: no next start; it ends a typical step after its start,
	 * and before the first allocation, after its last step-site allocation,
	 * of a site no earlier step allocated (an evaluation phase). */
	size_t last_step_alloc = f->pos[k - 1];
	for (size_t i = f->pos[k - 1]; i < last_bound; i++)
		if (f->step_site[recs[i].site])
			last_step_alloc = i;
	size_t nd = 0;
	for (size_t j = 0; j + 1 < k; j++)
		dur[nd++] = t0[j + 1] > t0[j] ? (int64_t)(t0[j + 1] - t0[j]) : 0; /* a damaged clock: 0 */
	qsort(dur, nd, sizeof *dur, cmp_i64);
	uint64_t median = nd ? (uint64_t)dur[nd / 2] : run_end > t0[k - 1] ? run_end - t0[k - 1] : 0;
	uint64_t tend = t0[k - 1] + median < t0[k - 1] ? UINT64_MAX : t0[k - 1] + median;
	if (tend > run_end)
		tend = run_end;
	if (tend < recs[last_step_alloc].t)
		tend = recs[last_step_alloc].t;
	/* Nor up to a free, after its last step-site allocation, of memory
	 * from before it: by then the step's own work is done, and that is the
	 * run after the steps dropping what they kept (a list of losses, freed
	 * newest first). Its start plus a typical step reached into such frees
	 * when the last step was short beside the others (sleeps that
	 * overshot under load in other steps), and they then counted as freed
	 * within the steps: no survivors, no leak per step. */
	for (size_t i = 0; i < f->pos[k - 1]; i++)
		if (recs[i].ft != UINT64_MAX && recs[i].ft > recs[last_step_alloc].t && recs[i].ft <= tend)
			tend = recs[i].ft - 1;
	end_idx[k - 1] = last_step_alloc + 1;
	size_t *first = malloc((f->nsites + 1) * sizeof *first); /* by site: its first record */
	if (!first)
		goto out;
	for (size_t v = 0; v < f->nsites; v++)
		first[v] = SIZE_MAX;
	for (size_t i = n; i-- > 0;)
		first[recs[i].site] = i;
	if (last_bound < n && recs[last_bound].t < tend)
		tend = recs[last_bound].t > recs[last_step_alloc].t ? recs[last_bound].t : recs[last_step_alloc].t;
	for (size_t i = last_step_alloc + 1; i < last_bound && recs[i].t <= tend; i++) {
		if (first[recs[i].site] >= f->pos[k - 1]) {
			tend = recs[i].t;
			break;
		}
		end_idx[k - 1] = i + 1;
	}
	free(first);
	t1[k - 1] = tend;
	st->count = k;
	typical = calloc(k + 1, sizeof *typical);
	if (!typical)
		goto out;
	st->first_steady = first_steady(recs, f, end_idx, k, typical);
	nd = 0;
	for (size_t j = st->first_steady; j + 1 < k; j++)
		dur[nd++] = t0[j + 1] > t0[j] ? (int64_t)(t0[j + 1] - t0[j]) : 0; /* a damaged clock: 0 */
	qsort(dur, nd, sizeof *dur, cmp_i64);
	st->seconds_per_step = (double)(nd ? (uint64_t)dur[nd / 2] : median) / 1e9;
	st->device = recs[f->pos[0]].device;
	st->kind = recs[f->pos[0]].mkind;
	st->step_sites = f->nstep_sites;
	if (sweep(recs, n, f->pos, stop, k, tend, rec->base, &sw))
		goto out;
	int dv = st->device >= 0 && st->device < TLM__STEPS_MAX_DEV ? st->device : 0;
	for (size_t j = 0; j < k; j++) {
		struct tlm_report_step *s = &st->step[j];
		s->start_ns = (int64_t)(t0[j] - rp->start);
		s->end_ns = (int64_t)(t1[j] - rp->start);
		s->allocs = end_idx[j] - f->pos[j];
		s->peak = sw.used[dv] ? sw.peak[at(&sw, j, dv)] : 0;
		s->live_at_start = sw.used[dv] ? sw.start[at(&sw, j, dv)] : 0;
		s->steady = j >= st->first_steady;
		/* memory made in the step, held at its peak, freed before it ended */
		uint64_t pev = sw.used[dv] ? sw.peak_ev[at(&sw, j, dv)] : 0;
		for (size_t i = f->pos[j]; i < end_idx[j]; i++) {
			const struct tlm__srec *x = &recs[i];
			if (x->device == st->device && x->mkind == TLM_MEM_DEVICE && x->ev <= pev && x->fev > pev &&
			    x->fev != UINT64_MAX && x->ft < t1[j])
				s->held_at_peak += x->size;
		}
		uint64_t *pk = s->steady ? &st->steady_peak : &st->warmup_peak;
		if (s->peak > *pk)
			*pk = s->peak;
	}
	if (leaks(st, recs, f, end_idx, tend))
		goto out;
	forecast(st, rec, &sw);
	driving(r, st, f);
	if (primary && tlm__steps_forecast_model(r, st, recs, n, f, end_idx, tend, rp->start))
		goto out;
	if (!primary) {
		rc = 0;
		goto out;
	}
	/* activations at the highest steady peak (the last step only when alone) */
	/* steps allocating like most do (not those an evaluation or a
	 * checkpoint save between steps falls in), the last only when alone */
	size_t pj = SIZE_MAX;
	for (size_t j = st->first_steady; j < k; j++)
		if (typical[j] && (j + 1 < k || pj == SIZE_MAX) && (pj == SIZE_MAX || st->step[j].peak > st->step[pj].peak))
			pj = j;
	if (pj == SIZE_MAX)
		pj = st->first_steady;
	if (tlm__steps_activations(r, st, recs, n, pj, t0[pj], t1[pj],
				   sw.used[dv] ? sw.peak_ev[at(&sw, pj, dv)] : 0))
		goto out;
	rc = 0;
out:
	sweep_free(&sw);
	free(typical);
	free(t0);
	free(t1);
	free(stop);
	free(end_idx);
	free(dur);
	return rc;
}

static void free_one(struct tlm_report_steps *st)
{
	free(st->step);
	free(st->leaks);
	free(st->forecast);
	free(st->act);
}

void tlm__steps_free(struct tlm_report_steps *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nphases; i++)
		if (st->phases[i].st && st->phases[i].st != st) {
			free_one(st->phases[i].st);
			free(st->phases[i].st);
		}
	free(st->phases);
	free_one(st);
	free(st);
}

const struct tlm_report_step_leak *tlm_report_step_leak(const struct tlm_report *r, int device, uint32_t stack_id)
{
	const struct tlm_report_steps *st = r->steps;
	if (!st)
		return NULL;
	for (size_t i = 0; i < st->nleaks; i++)
		if (st->leaks[i].device == device && st->leaks[i].stack_id == stack_id)
			return &st->leaks[i];
	for (size_t p = 0; p < st->nphases; p++) {
		const struct tlm_report_steps *q = st->phases[p].st;
		for (size_t i = 0; q && q != st && i < q->nleaks; i++)
			if (q->leaks[i].device == device && q->leaks[i].stack_id == stack_id)
				return &q->leaks[i];
	}
	return NULL;
}
