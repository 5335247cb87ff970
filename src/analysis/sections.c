/* SPDX-License-Identifier: MIT */
/*
 * sections.c - the report's sections from the replay's state once the run
 * is read (tlm__replay_finish, internal.h): devices and their peaks, the
 * sites at each peak, survivors and leaks, churn, the OOMs' and the garbage
 * collector's times on the trace's clock; each sorted as docs/report.md
 * says.
 */
#include <stdlib.h>

#include "analysis/internal.h"

static int64_t rel(const struct tlm__replay *rp, uint64_t t)
{
	return (int64_t)(t - rp->start);
}

static int by_dev_kind(const void *a, const void *b)
{
	const struct tlm_report_device *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->kind > y->kind) - (x->kind < y->kind);
}

static int by_count(const void *a, const void *b)
{
	const struct tlm_report_site *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	return (x->size > y->size) - (x->size < y->size);
}

static int by_peak_site(const void *a, const void *b)
{
	const struct tlm_report_peak_site *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

/* The sites live at each (device, kind)'s allocated peak. */
static int at_peak(struct tlm__replay *rp)
{
	struct tlm_report *rep = rp->rep;
	size_t n = 0;
	for (size_t i = 0; i < rp->accts.n; i++)
		n += tlm__psites_export(rp->accts.a[i].ps, 0, 0, NULL);
	rep->at_peak = calloc(n + 1, sizeof *rep->at_peak);
	if (!rep->at_peak)
		return -1;
	for (size_t i = 0; i < rp->accts.n; i++) {
		const struct tlm__acct *a = &rp->accts.a[i];
		rep->nat_peak += tlm__psites_export(a->ps, a->device, a->mkind, rep->at_peak + rep->nat_peak);
	}
	qsort(rep->at_peak, rep->nat_peak, sizeof *rep->at_peak, by_peak_site);
	return 0;
}

static double seconds(int64_t from, int64_t to)
{
	return (double)((uint64_t)to - (uint64_t)from) / 1e9;
}

int tlm__replay_finish(struct tlm__replay *rp)
{
	struct tlm_report *rep = rp->rep;
	tlm__replay_snapshot(rp);
	tlm__replay_settle_all(rp); /* a marker may have snapped before the last peak */
	if (rp->oom_error)
		return -1;
	rep->have_events = rp->have_t;
	uint64_t end = rp->end_marked ? rp->end_t : rp->last_t;
	if (rp->have_t && end < rp->first_t) /* an END before every event: damage */
		end = rp->last_t;
	rep->run_first_ns = rp->have_t ? rel(rp, rp->first_t) : 0;
	rep->run_end_ns = rp->have_t ? rel(rp, end) : (rp->end_marked ? rel(rp, end) : 0);
	rep->churn_untracked = rp->churn.untracked;

	rep->devices = calloc(rp->accts.n + 1, sizeof *rep->devices);
	if (!rep->devices)
		return -1;
	for (size_t i = 0; i < rp->accts.n; i++) {
		const struct tlm__acct *a = &rp->accts.a[i];
		struct tlm_report_device *d = &rep->devices[rep->ndevices++];
		d->device = a->device;
		d->kind = a->mkind;
		d->peak_reserved = a->peak_reserved;
		d->peak_reserved_ns = a->peak_reserved ? rel(rp, a->peak_reserved_t) : 0;
		d->peak_allocated = a->peak_allocated;
		d->peak_allocated_ns = a->peak_allocated ? rel(rp, a->peak_allocated_t) : 0;
		d->reserved_at_end = a->end_reserved;
		d->live_bytes_at_end = a->end_live_bytes;
		d->live_allocs_at_end = a->end_live_count;
		d->allocs = a->allocs;
		d->frees = a->frees;
		d->peak_reserved_event = a->peak_reserved_ev;
		d->frag_at_peak = a->frag_at_peak_allocated;
		d->reserved_at_peak_allocated = a->reserved_at_peak_allocated;
		d->frag_at_reserved_peak = a->frag_at_peak;
		d->allocated_at_peak_reserved = a->allocated_at_peak_reserved;
		d->ext_known = a->ext_at_peak_known;
		d->ext_frag_at_peak = a->ext_frag_at_peak;
		d->allocator_totals = a->tap_totals;
		d->allocator_peak_allocated = a->tap_peak_allocated;
		d->allocator_peak_reserved = a->tap_peak_reserved;
		if (a->ts && tlm__series_points(a->ts, rp->start, &d->points, &d->npoints))
			return -1;
	}
	qsort(rep->devices, rep->ndevices, sizeof *rep->devices, by_dev_kind);
	if (at_peak(rp))
		return -1;

	/* Survivors and, among them, leaks. */
	for (size_t i = 0; i < rp->nsnap; i++) {
		rp->snap[i].first_ns = rel(rp, (uint64_t)rp->snap[i].first_ns);
		rp->snap[i].last_ns = rel(rp, (uint64_t)rp->snap[i].last_ns);
	}
	qsort(rp->snap, rp->nsnap, sizeof *rp->snap, tlm__site_by_bytes);
	rep->live = rp->snap;
	rep->nlive = rp->nsnap;
	rp->snap = NULL;
	rep->leaks = calloc(rep->nlive + 1, sizeof *rep->leaks);
	if (!rep->leaks)
		return -1;
	for (size_t i = 0; i < rep->nlive; i++) {
		const struct tlm_report_site *s = &rep->live[i];
		if (!tlm_report_is_leak(s->count, s->first_ns, s->last_ns, rep->run_first_ns, rep->run_end_ns))
			continue;
		struct tlm_report_site *l = &rep->leaks[rep->nleaks++];
		*l = *s;
		double span = seconds(s->first_ns, s->last_ns);
		l->rate = span > 0 ? (double)s->bytes / span : 0.0; /* all at one instant: no rate */
	}

	/* Churn: groups with at least TLM__CHURN_MIN_CYCLES completed cycles. */
	size_t nc = 0;
	for (size_t i = 0; i < rp->churn.n; i++)
		nc += rp->churn.ent[i].count >= TLM__CHURN_MIN_CYCLES;
	rep->churn = calloc(nc + 1, sizeof *rep->churn);
	if (!rep->churn)
		return -1;
	double run_s = rep->have_events ? seconds(rep->run_first_ns, rep->run_end_ns) : 0;
	for (size_t i = 0; i < rp->churn.n; i++) {
		const struct tlm__churn_ent *e = &rp->churn.ent[i];
		if (e->count < TLM__CHURN_MIN_CYCLES)
			continue;
		struct tlm_report_site *c = &rep->churn[rep->nchurn++];
		c->device = (int)(int64_t)e->key.a;
		c->stack_id = (uint32_t)e->key.b;
		c->size = e->key.c;
		c->count = e->count;
		c->bytes = e->count * e->key.c;
		if (e->key.c && c->bytes / e->key.c != e->count)
			c->bytes = UINT64_MAX;
		c->first_ns = rel(rp, e->first_t);
		c->last_ns = rel(rp, e->last_t);
		c->rate = run_s > 0 ? (double)e->count / run_s : 0.0;
	}
	qsort(rep->churn, rep->nchurn, sizeof *rep->churn, by_count);

	for (size_t i = 0; i < rep->nooms; i++)
		rep->ooms[i].time_ns = rel(rp, (uint64_t)rep->ooms[i].time_ns);

	for (size_t i = 0; i < rp->ngc; i++) {
		rp->gc[i].first_ns = rel(rp, (uint64_t)rp->gc[i].first_ns);
		rp->gc[i].last_ns = rel(rp, (uint64_t)rp->gc[i].last_ns);
	}
	if (rp->ngc)
		qsort(rp->gc, rp->ngc, sizeof *rp->gc, tlm__site_by_bytes);
	rep->gc_freed = rp->gc; /* NULL when empty */
	rep->ngc_freed = rp->ngc;
	rp->gc = NULL;
	rp->ngc = rp->gc_cap = 0;
	return 0;
}
