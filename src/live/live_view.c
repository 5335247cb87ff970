/* SPDX-License-Identifier: MIT */
/*
 * live_view.c - the snapshot of a followed trace: per (device, kind) now and
 * at peak with its history, the step analysis of the window, the OOMs, and
 * the top live sites (grouped as the report groups LIVE AT END, labelled by
 * the report's one labelling rule, labels.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "live_int.h"
#include "render/render.h"

void tlm__lhist_advance(struct tlm__lhist *h, int64_t sec); /* live_model.c */

static int64_t rel(const struct tlm_live *l, uint64_t t)
{
	return (int64_t)(t - l->start);
}

static void command(char *buf, size_t n, const struct tlm_trace_header *h)
{
	size_t k = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < h->argc && k + 1 < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? " " : "", h->argv[i]);
	if (!h->argc)
		tlm__live_clip(buf, n, h->exe);
}

static void devices(struct tlm_live *l, struct tlm_live_view *v)
{
	int64_t sec = v->now_ns > 0 ? v->now_ns / 1000000000 : 0;
	for (size_t i = 0; i < l->rp.accts.n && v->ndev < TLM_LIVE_DEVS; i++) {
		const struct tlm__acct *a = &l->rp.accts.a[i];
		if (!a->allocs && !a->has_blocks)
			continue; /* an account only a failed or unmatched call touched */
		struct tlm_live_dev *d = &v->dev[v->ndev++];
		d->device = a->device;
		d->kind = a->mkind;
		d->reserved = a->reserved;
		d->allocated = a->allocated;
		d->peak_reserved = a->peak_reserved;
		d->peak_allocated = a->peak_allocated;
		d->total = a->mkind == TLM_MEM_DEVICE && a->device >= 0 && a->device < TLM_LIVE_DEVS ? l->total[a->device] : 0;
		for (size_t k = 0; k < l->nhist; k++) {
			struct tlm__lhist *h = &l->hist[k];
			if (h->device != a->device || h->kind != a->mkind || h->sec < 0)
				continue;
			tlm__lhist_advance(h, sec); /* the seconds without events held what the last one left */
			int64_t first = h->sec - TLM_LIVE_HIST + 1 > 0 ? h->sec - TLM_LIVE_HIST + 1 : 0;
			for (int64_t s = first; s <= h->sec; s++) {
				d->hist_allocated[d->nhist] = h->alloc[s % TLM_LIVE_HIST];
				d->hist_reserved[d->nhist++] = h->res[s % TLM_LIVE_HIST];
			}
		}
	}
}

static void steps(struct tlm_live *l, struct tlm_live_view *v)
{
	/* the end's view is of the whole window, however recent the last analysis */
	if (tlm__lsteps_analyse(&l->steps, &l->rp, l->rep, l->state == TLM_LIVE_ENDED))
		return; /* without memory: the last analysis stays */
	const struct tlm_report_steps *st = l->steps.st;
	if (!st) {
		v->steps_why = "not analysed yet";
		return;
	}
	v->steps_found = st->found;
	v->steps_why = st->why_not;
	v->steps = st->count;
	v->seconds_per_step = st->seconds_per_step;
	for (size_t i = 0; i < st->nforecast && v->nforecast < TLM_LIVE_DEVS; i++)
		v->forecast[v->nforecast++] = st->forecast[i];
}

static void oom(struct tlm_live *l, struct tlm_live_view *v)
{
	const struct tlm_report *rep = l->rep;
	v->ooms = rep->ooms_total;
	if (!rep->nooms)
		return;
	v->have_oom = true;
	v->last_oom = rep->ooms[rep->nooms - 1];
	v->last_oom.time_ns = rel(l, (uint64_t)v->last_oom.time_ns);
	struct tlm__labels lb;
	if (tlm__labels_make(&lb, l->rep, &v->last_oom.device, &v->last_oom.stack_id, 1, TLM__LABEL_SEP) == 0) {
		tlm__live_clip(v->oom_label, sizeof v->oom_label, tlm__label(&lb, 0));
		tlm__labels_free(&lb);
	}
}

static enum tlm_live_sort sort_key;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b); /* descending */
}

static int by_key(const void *pa, const void *pb)
{
	const struct tlm_live_site *a = pa, *b = pb;
	int c = 0;
	switch (sort_key) {
	case TLM_LIVE_BY_GROWTH: c = cmp_u64(a->leak ? a->per_step : 0, b->leak ? b->per_step : 0); break;
	case TLM_LIVE_BY_COUNT: c = cmp_u64(a->count, b->count); break;
	case TLM_LIVE_BY_NEWEST: c = cmp_u64((uint64_t)a->last_ns, (uint64_t)b->last_ns); break;
	default: break;
	}
	if (!c)
		c = cmp_u64(a->bytes, b->bytes);
	if (!c)
		c = cmp_u64(a->count, b->count);
	if (!c)
		c = (a->device > b->device) - (a->device < b->device);
	if (!c)
		c = (a->stack_id > b->stack_id) - (a->stack_id < b->stack_id);
	return c;
}

static void sites(struct tlm_live *l, struct tlm_live_view *v, enum tlm_live_sort sort)
{
	struct tlm_report_site *all;
	size_t n;
	if (tlm__sites_group_live(&l->rp.live, &l->rp.accts, &all, &n))
		return;
	struct tlm_live_site *s = malloc((n ? n : 1) * sizeof *s);
	if (!s) {
		free(all);
		return;
	}
	const struct tlm_report_steps *st = l->steps.st;
	for (size_t i = 0; i < n; i++) {
		struct tlm_live_site *x = &s[i];
		memset(x, 0, offsetof(struct tlm_live_site, label));
		x->label[0] = 0;
		x->device = all[i].device;
		x->stack_id = all[i].stack_id;
		x->bytes = all[i].bytes;
		x->count = all[i].count;
		x->first_ns = rel(l, (uint64_t)all[i].first_ns);
		x->last_ns = rel(l, (uint64_t)all[i].last_ns);
		for (size_t k = 0; st && k < st->nleaks; k++)
			if (st->leaks[k].device == x->device && st->leaks[k].stack_id == x->stack_id && st->leaks[k].leak) {
				x->leak = true;
				x->per_step = st->leaks[k].bytes_per_step;
			}
	}
	sort_key = sort;
	qsort(s, n, sizeof *s, by_key);
	v->total_sites = n;
	v->nsites = n < TLM_LIVE_SITES ? n : TLM_LIVE_SITES;
	/* the sites shown are the screen's, and its headline live sites, as the
	 * report's LIVE AT END makes them for its labels */
	for (size_t i = 0; i < v->nsites; i++) {
		all[i] = (struct tlm_report_site){.device = s[i].device, .stack_id = s[i].stack_id, .bytes = s[i].bytes,
						  .count = s[i].count};
		v->site[i] = s[i];
	}
	struct tlm__labels lb;
	l->rep->live = all;
	l->rep->nlive = v->nsites;
	if (v->nsites && tlm__labels_sites(&lb, l->rep, all, v->nsites, TLM__LABEL_SEP) == 0) {
		for (size_t i = 0; i < v->nsites; i++)
			tlm__live_clip(v->site[i].label, sizeof v->site[i].label, tlm__label(&lb, i));
		tlm__labels_free(&lb);
	}
	l->rep->live = NULL;
	l->rep->nlive = 0;
	free(all);
	free(s);
}

void tlm__live_fill_view(struct tlm_live *l, enum tlm_live_sort sort, bool with_sites)
{
	struct tlm_live_view *v = l->view;
	memset(v, 0, sizeof *v);
	v->path = l->path;
	v->state = l->state;
	v->rank = -1;
	tlm__live_clip(v->why, sizeof v->why, l->why);
	if (!l->rep)
		return;
	const struct tlm_report *rep = l->rep;
	const struct tlm_trace_header *h = tlm_reader_header(l->rd);
	v->pid = h->pid;
	v->rank = rep->job.rank;
	v->forked = rep->job.forked;
	command(v->command, sizeof v->command, h);
	v->read_bytes = tlm_reader_offset(l->rd);
	struct stat st;
	v->file_bytes = stat(l->path, &st) == 0 ? (uint64_t)st.st_size : v->read_bytes;
	uint64_t last = l->rp.end_marked ? l->rp.end_t : l->rp.have_t ? l->rp.last_t : l->start;
	uint64_t wall = tlm__live_mono_ns();
	/* caught up, on the same clock: time goes on while the program holds its memory */
	if (l->state == TLM_LIVE_RUNNING && l->same_host && l->caught_up && wall > last)
		last = wall;
	v->now_ns = rel(l, last);
	v->events = rep->events;
	if (!l->rate_ns || wall - l->rate_ns >= 1000000000ull) { /* over a second at least */
		l->rate = l->rate_ns ? (double)(rep->events - l->rate_events) * 1e9 / (double)(wall - l->rate_ns) : -1;
		l->rate_ns = wall;
		l->rate_events = rep->events;
	}
	v->events_per_s = l->state == TLM_LIVE_RUNNING ? l->rate : -1;
	v->lost = tlm_reader_lost(l->rd);
	v->integrity_errors = tlm_reader_errors(l->rd, NULL);
	devices(l, v);
	steps(l, v);
	oom(l, v);
	if (with_sites)
		sites(l, v, sort);
}

const struct tlm_live_view *tlm_live_view(struct tlm_live *l, enum tlm_live_sort sort, bool with_sites)
{
	if (!l->view && !(l->view = malloc(sizeof *l->view)))
		return NULL;
	tlm__live_fill_view(l, sort, with_sites);
	return l->view;
}
