/* SPDX-License-Identifier: MIT */
/*
 * alog.c - every allocation's life, a consumer of the report's pass
 * (alog.h). Frees are the replay's matches (replay.c); the allocator segments
 * are found by looking up, at each block allocation, the live driver
 * allocation or mapping that holds the block's address. The snapshot's log
 * keeps a window of the last allocations to end, compacted as it goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alog.h"
#include "analysis/internal.h"
#include "analysis/pass.h"
#include "common/grow.h"

/* A set of live address ranges (log indices), searched by address: sorted
 * lazily, when searched after it grew; freed ones dropped lazily too. */
struct segset {
	struct seg { uint64_t addr; uint32_t idx; } *v;
	size_t n, cap;
	size_t ndead;          /* entries freed since, not yet dropped */
	bool dirty;            /* grew since it was sorted */
};

struct alog_col {
	struct tlm__alog *l;
	int which;             /* TLM__TAG_ACTIVE or TLM__TAG_SNAPSHOT: its tag in the live map */
	size_t max;
	bool stop_at_end, stopped;
	uint64_t start;        /* times are taken from it in unsigned arithmetic, as the report's
	                        * (replay.c): a crafted time 2^63 away wraps, never overflows */
	uint64_t seq;          /* events seen */
	/* the snapshot's window: the last keep entries to end (a ring of log
	 * indices, oldest at head), the entries live now, and those marked
	 * TLM__AL_DROP and not yet compacted away */
	size_t keep, live, ndrop;
	uint32_t *ring;
	size_t rhead, rcount;
	bool over;             /* more than max live at once: the log is given up */
	struct segset segs;    /* live driver allocations and mappings */
	struct segset resv;    /* live VMM reservations (PyTorch's expandable segments reserve one each) */
};

static int by_addr(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Drops the ranges freed since the last call (order kept). */
static void set_compact(struct segset *set, const struct tlm__al *e)
{
	size_t k = 0;
	for (size_t i = 0; i < set->n; i++)
		if (e[set->v[i].idx].flags & TLM__AL_LIVE)
			set->v[k++] = set->v[i];
	set->n = k;
	set->ndead = 0;
}

/* The live range of set holding addr on device (any device when device < 0,
 * as reservations name none), or UINT32_MAX. */
static uint32_t holder(struct segset *set, const struct tlm__al *e, int device, uint64_t addr)
{
	if (set->ndead)
		set_compact(set, e);
	if (set->dirty) {
		qsort(set->v, set->n, sizeof *set->v, by_addr);
		set->dirty = false;
	}
	size_t lo = 0, hi = set->n; /* first range starting after addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (set->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct tlm__al *s = &e[set->v[i].idx];
		if (addr - s->addr >= s->size)
			break; /* ranges of one set do not overlap: no earlier one holds it */
		if (device < 0 || s->device == device)
			return set->v[i].idx;
	}
	return UINT32_MAX;
}

static int set_add(struct segset *set, const struct tlm__al *e, uint32_t idx)
{
	if (set->n == set->cap && tlm__grow(&set->v, &set->cap, set->n + 1, sizeof *set->v, 64))
		return -1;
	set->v[set->n++] = (struct seg){e[idx].addr, idx};
	set->dirty = true;
	return 0;
}

/* A range ended: dropped lazily, so that a run of frees costs O(1) each. */
static void set_del(struct segset *set, const struct tlm__al *e)
{
	if (++set->ndead > set->n / 2)
		set_compact(set, e);
}

/* An entry ended: it joins the window of the last ones to end; the oldest
 * there leaves it (dropped, counted). */
static void window_push(struct alog_col *c, uint32_t idx)
{
	c->live--;
	if (c->rcount == c->keep) {
		c->l->e[c->ring[c->rhead]].flags |= TLM__AL_DROP;
		c->l->dropped++;
		c->ndrop++;
		c->ring[c->rhead] = idx;
		c->rhead = (c->rhead + 1) % c->keep;
	} else {
		c->ring[(c->rhead + c->rcount++) % c->keep] = idx;
	}
}

/* Removes the dropped entries from the log, in order, and renumbers every
 * index that names one that stays (the live map's tags, the segment sets,
 * the parents, the window). */
static int compact(struct alog_col *c, struct tlm__live_map *lm)
{
	struct tlm__alog *l = c->l;
	set_compact(&c->segs, l->e); /* only live entries stay there */
	set_compact(&c->resv, l->e);
	uint32_t *to = malloc((l->n ? l->n : 1) * sizeof *to);
	if (!to)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		to[i] = l->e[i].flags & TLM__AL_DROP ? UINT32_MAX : (uint32_t)k;
		if (!(l->e[i].flags & TLM__AL_DROP))
			l->e[k++] = l->e[i];
	}
	for (size_t i = 0; i < k; i++)
		if (l->e[i].parent != UINT32_MAX)
			l->e[i].parent = to[l->e[i].parent];
	for (size_t i = 0; lm->slot && i <= lm->mask; i++) {
		uint32_t *t = &lm->slot[i].tag[c->which];
		if (lm->slot[i].ns != TLM_NS_NONE && *t != TLM__NO_TAG && *t < l->n)
			*t = to[*t];
	}
	for (size_t i = 0; i < c->segs.n; i++)
		c->segs.v[i].idx = to[c->segs.v[i].idx];
	for (size_t i = 0; i < c->resv.n; i++)
		c->resv.v[i].idx = to[c->resv.v[i].idx];
	for (size_t i = 0; i < c->rcount; i++) {
		uint32_t *x = &c->ring[(c->rhead + i) % c->keep];
		*x = to[*x];
	}
	l->n = k;
	c->ndrop = 0;
	free(to);
	return 0;
}

/* The replay matched a's free (or a missed free: an allocation at its address). */
static void on_release(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev)
{
	struct alog_col *c = ctx;
	uint32_t idx = e->tag[c->which];
	if (c->stopped || idx == TLM__NO_TAG)
		return;
	struct tlm__al *a = &c->l->e[idx];
	a->flags &= (uint8_t)~TLM__AL_LIVE;
	a->seq_free = c->seq;
	a->t_free = (int64_t)(ev->time_ns - c->start);
	a->free_stack = p->rp.raw->stack_id; /* made canonical at the end, with every Python stack known */
	if (c->keep)
		window_push(c, idx);
	if (a->kind == TLM_KIND_VMM_RESERVE)
		set_del(&c->resv, c->l->e);
	else if (a->kind != TLM_KIND_BLOCK && a->kind != TLM_KIND_HOST_PINNED)
		set_del(&c->segs, c->l->e);
}

/* A failed allocation that ran out of memory. */
static int oom(struct alog_col *c, const struct tlm_event *ev)
{
	struct tlm__alog *l = c->l;
	if (ev->result != 2 || !tlm_kind_ns(ev->kind))
		return 0;
	if (l->noom >= TLM__AL_MAX_OOMS) { /* a crafted trace of OOMs: bounded */
		l->oom_dropped++;
		return 0;
	}
	if (l->noom == l->capoom && tlm__grow(&l->oom, &l->capoom, l->noom + 1, sizeof *l->oom, 16))
		return -1;
	struct tlm__al_oom o = {c->seq, ev->size, ev->device_free, ev->stream, (int64_t)(ev->time_ns - c->start),
				ev->stack_id, ev->thread, ev->device, ev->kind, ev->kind == TLM_KIND_BLOCK};
	for (size_t i = l->noom; o.allocator && !o.device_free && i-- > 0 && !l->oom[i].allocator;)
		if (l->oom[i].device == o.device && l->oom[i].thread == o.thread)
			o.device_free = l->oom[i].device_free; /* the allocator's own failed cudaMalloc */
	l->oom[l->noom++] = o;
	return 0;
}

/* A CLOCK record: kept in time order (one out of order, from a damaged or
 * crafted trace, is dropped), up to TLM__AL_MAX_CLOCKS; past that, each
 * replaces the last kept, so that the newest setting holds from there on
 * (a clock slewed fast may be set every drain, 50 times a second). */
static int clock_set(struct tlm__alog *l, int64_t t, uint64_t realtime_ns)
{
	if (l->nclock && t < l->clock[l->nclock - 1].t)
		return 0;
	if (l->nclock >= TLM__AL_MAX_CLOCKS) {
		l->clock[l->nclock - 1] = (struct tlm__al_clock){t, realtime_ns};
		return 0;
	}
	if (tlm__grow(&l->clock, &l->capclock, l->nclock + 1, sizeof *l->clock, 16))
		return -1;
	l->clock[l->nclock++] = (struct tlm__al_clock){t, realtime_ns};
	return 0;
}

uint64_t tlm__alog_realtime(const struct tlm__alog *l, int64_t t)
{
	size_t lo = 0, hi = l->nclock; /* the first sample after t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->clock[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return l->start_realtime_ns + (uint64_t)t;
	return l->clock[lo - 1].realtime_ns + ((uint64_t)t - (uint64_t)l->clock[lo - 1].t);
}

/* Before the replay: the end of the log, the events' count and time, OOMs,
 * the wall clock's settings. */
static int before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	(void)p;
	struct alog_col *c = ctx;
	if (c->stopped)
		return 0;
	if (rec->type == TLM_REC_END && c->stop_at_end) {
		c->l->stopped_at_end = c->stopped = true;
		return 0;
	}
	if (rec->type == TLM_REC_CLOCK)
		return clock_set(c->l, (int64_t)(rec->u.clock.time_ns - c->start), rec->u.clock.realtime_ns);
	if (rec->type != TLM_REC_EVENT)
		return 0;
	const struct tlm_event *ev = &rec->u.ev;
	if (c->stop_at_end && (ev->flags & TLM_EVF_FINALIZING)) {
		c->l->stopped_at_end = c->stopped = true;
		return 0;
	}
	c->seq++;
	c->l->end_ns = (int64_t)(ev->time_ns - c->start);
	return ev->op == TLM_OP_ALLOC && ev->result ? oom(c, ev) : 0;
}

/* The replay entered a successful allocation (ev: its stack canonical; the
 * log keeps the recorded one until the end). */
static void on_alloc(void *ctx, struct tlm__pass *p, struct tlm__live *e, const struct tlm_event *ev)
{
	struct alog_col *c = ctx;
	struct tlm__alog *l = c->l;
	if (c->stopped || e->ns == TLM_NS_VMM_PHYS) /* handles only tell their mappings' device (the replay's) */
		return;
	int16_t device = e->device;
	if (c->keep && c->live >= c->max) { /* more live at once than the export keeps: it says so */
		c->over = c->stopped = true;
		return;
	}
	if (!c->keep && l->n >= c->max) {
		l->dropped++;
		return;
	}
	if (c->keep && c->ndrop >= 4096 && c->ndrop * 2 >= l->n && compact(c, &p->rp.live)) {
		p->error = ENOMEM;
		return;
	}
	if (l->n == l->cap && tlm__grow(&l->e, &l->cap, l->n + 1, sizeof *l->e, 1024)) {
		p->error = ENOMEM;
		return;
	}

	uint32_t idx = (uint32_t)l->n++;
	c->live++;
	struct tlm__al *a = &l->e[idx];
	*a = (struct tlm__al){
		.addr = ev->addr, .size = ev->size, .stream = ev->kind == TLM_KIND_BLOCK ? 0 : ev->stream,
		.seq_alloc = c->seq, .t_alloc = (int64_t)(ev->time_ns - c->start), .stack_id = e->raw_stack,
		.parent = UINT32_MAX, .device = device, .kind = ev->kind, .flags = TLM__AL_LIVE, .api = ev->api,
	};
	e->tag[c->which] = idx;
	if (e->ns == TLM_NS_VMM_MAP)
		a->stream = 0; /* a mapping's "stream" is its offset into the handle */
	if (device > l->max_device && ev->kind != TLM_KIND_HOST_PINNED)
		l->max_device = device;
	if (ev->kind == TLM_KIND_BLOCK) {
		uint32_t h = holder(&c->segs, l->e, device, ev->addr), v = holder(&c->resv, l->e, -1, ev->addr);
		a->parent = h;
		if (h != UINT32_MAX)
			l->e[h].flags |= TLM__AL_OWNED;
		if (v != UINT32_MAX) /* the allocator's reservation: all its mappings are its segments */
			l->e[v].flags |= TLM__AL_OWNED;
	} else if (ev->kind == TLM_KIND_VMM_RESERVE) {
		if (set_add(&c->resv, l->e, idx))
			p->error = ENOMEM;
	} else if (ev->kind != TLM_KIND_HOST_PINNED) {
		if (e->ns == TLM_NS_VMM_MAP)
			a->parent = holder(&c->resv, l->e, -1, ev->addr);
		if (set_add(&c->segs, l->e, idx))
			p->error = ENOMEM;
	}
}

void tlm__alog_free(struct tlm__alog *l)
{
	free(l->e);
	free(l->oom);
	free(l->clock);
	memset(l, 0, sizeof *l);
}

static int finish(void *ctx, struct tlm__pass *p)
{
	struct alog_col *c = ctx;
	struct tlm__alog *l = c->l;
	struct tlm__report_priv *priv = p->rep->priv;
	if (c->over) {
		snprintf(priv->why_alog[c->which - TLM__TAG_ACTIVE], sizeof priv->why_alog[0],
			 "more than %zu allocations live at once: beyond this export's limit", c->max);
		return 0; /* the export says so; the report stands */
	}
	if (c->ndrop && compact(c, &p->rp.live))
		return -1;
	l->events = c->seq;
	if (priv->npy) /* Python stacks by their Python frames, as the report's sites */
		for (size_t i = 0; i < l->n + l->noom; i++) {
			uint32_t *id = i < l->n ? &l->e[i].stack_id : &l->oom[i - l->n].stack_id;
			if (*id)
				*id = tlm__priv_canon(priv, *id);
			if (i < l->n && l->e[i].free_stack)
				l->e[i].free_stack = tlm__priv_canon(priv, l->e[i].free_stack);
		}
	/* a mapping inside a reservation that held the allocator's blocks is one
	 * of its segments even when no block lay in that page yet */
	for (size_t i = 0; i < l->n; i++) {
		struct tlm__al *a = &l->e[i];
		if (a->kind == TLM_KIND_VMM_MAPPING && a->parent != UINT32_MAX && (l->e[a->parent].flags & TLM__AL_OWNED))
			a->flags |= TLM__AL_OWNED;
	}
	priv->alog[c->which - TLM__TAG_ACTIVE] = l;
	c->l = NULL;
	return 0;
}

static void fini(void *ctx)
{
	struct alog_col *c = ctx;
	if (c->l) {
		tlm__alog_free(c->l);
		free(c->l);
	}
	free(c->segs.v);
	free(c->resv.v);
	free(c->ring);
	free(c);
}

int tlm__alog_consumer(struct tlm__pass *p, int which)
{
	struct alog_col *c = calloc(1, sizeof *c);
	if (c)
		c->l = calloc(1, sizeof *c->l);
	if (!c || !c->l) {
		if (c)
			free(c);
		return -1;
	}
	bool snap = which == TLM__ALOG_SNAPSHOT;
	c->which = snap ? TLM__TAG_SNAPSHOT : TLM__TAG_ACTIVE;
	c->max = snap ? TLM__ALOG_SNAPSHOT_MAX : TLM__ALOG_ACTIVE_MAX;
	c->keep = snap ? TLM__ALOG_SNAPSHOT_KEEP : 0;
	c->stop_at_end = snap;
	c->start = tlm_reader_header(p->rd)->start_monotonic_ns;
	if (c->keep && !(c->ring = malloc(c->keep * sizeof *c->ring))) {
		free(c->l);
		free(c);
		return -1;
	}
	c->l->max_device = -1;
	c->l->start_realtime_ns = tlm_reader_header(p->rd)->start_realtime_ns;
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = c, .before = before, .alloc = on_alloc,
							 .release = on_release, .finish = finish, .fini = fini});
}

int tlm__alog_get(const struct tlm_report *r, int which, struct tlm__alog *out, char *err, size_t errlen)
{
	const struct tlm__alog *l = r->priv ? r->priv->alog[which] : NULL;
	if (!l && r->priv && r->priv->why_alog[which][0]) {
		snprintf(err, errlen, "%s", r->priv->why_alog[which]);
		return -1;
	}
	if (!l) {
		snprintf(err, errlen, "not collected (the report was built without TLM_REPORT_%s)",
			 which == TLM__ALOG_SNAPSHOT ? "SNAPSHOT" : "ACTIVE");
		return -1;
	}
	*out = *l;
	return 0;
}
