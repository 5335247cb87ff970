/* SPDX-License-Identifier: MIT */
/*
 * alog.c - every allocation's life, from one more pass over the trace
 * (alog.h). The matching of frees follows replay.c; the allocator segments
 * are found by looking up, at each block allocation, the live driver
 * allocation or mapping that holds the block's address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/alog.h"
#include "analysis/internal.h"

/* ---- (namespace, address) -> value ---------------------------------------- */

struct slot { uint64_t addr; uint32_t val; uint8_t ns; };
struct amap { struct slot *s; size_t mask, count; };

static size_t hash(uint8_t ns, uint64_t a)
{
	uint64_t h = (a ^ ((uint64_t)ns << 56)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 29));
}

static int amap_grow(struct amap *m)
{
	size_t cap = m->s ? (m->mask + 1) * 2 : 1024;
	struct slot *n = calloc(cap, sizeof *n);
	if (!n)
		return -1;
	for (size_t i = 0; m->s && i <= m->mask; i++) {
		if (!m->s[i].ns)
			continue;
		size_t j = hash(m->s[i].ns, m->s[i].addr) & (cap - 1);
		while (n[j].ns)
			j = (j + 1) & (cap - 1);
		n[j] = m->s[i];
	}
	free(m->s);
	m->s = n;
	m->mask = cap - 1;
	return 0;
}

static struct slot *amap_find(struct amap *m, uint8_t ns, uint64_t a)
{
	if (!m->s)
		return NULL;
	for (size_t j = hash(ns, a) & m->mask;; j = (j + 1) & m->mask) {
		if (!m->s[j].ns)
			return NULL;
		if (m->s[j].ns == ns && m->s[j].addr == a)
			return &m->s[j];
	}
}

static int amap_put(struct amap *m, uint8_t ns, uint64_t a, uint32_t v)
{
	if ((!m->s || (m->count + 1) * 2 > m->mask + 1) && amap_grow(m))
		return -1;
	size_t j = hash(ns, a) & m->mask;
	while (m->s[j].ns)
		j = (j + 1) & m->mask;
	m->s[j] = (struct slot){a, v, ns};
	m->count++;
	return 0;
}

/* Backward-shift deletion: no tombstones, lookups stay short. */
static void amap_del(struct amap *m, struct slot *s)
{
	size_t i = (size_t)(s - m->s);
	for (size_t j = (i + 1) & m->mask; m->s[j].ns; j = (j + 1) & m->mask) {
		size_t home = hash(m->s[j].ns, m->s[j].addr) & m->mask;
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	m->s[i].ns = 0;
	m->count--;
}

/* ---- the pass ---------------------------------------------------------------- */

enum { NS_DEVVA = 1, NS_HOST, NS_PHYS, NS_MAP, NS_BLOCK, NS_RESV };

static uint8_t ns_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_DEVICE:
	case TLM_KIND_MANAGED: return NS_DEVVA;
	case TLM_KIND_HOST_PINNED: return NS_HOST;
	case TLM_KIND_VMM_PHYSICAL: return NS_PHYS;
	case TLM_KIND_VMM_MAPPING: return NS_MAP;
	case TLM_KIND_BLOCK: return NS_BLOCK;
	case TLM_KIND_VMM_RESERVE: return NS_RESV;
	default: return 0; /* pools: nothing to draw */
	}
}

/* A set of live address ranges (log indices), searched by address: sorted
 * lazily, when searched after it grew; freed ones dropped lazily too. */
struct segset {
	struct seg { uint64_t addr; uint32_t idx; } *v;
	size_t n, cap;
	size_t ndead;          /* entries freed since, not yet dropped */
	bool dirty;            /* grew since it was sorted */
};

struct pass {
	struct tlm__alog *l;
	struct amap map;
	size_t max;
	uint64_t start;        /* times are taken from it in unsigned arithmetic, as the report's
	                        * (replay.c): a crafted time 2^63 away wraps, never overflows */
	/* tlm__alog_build_recent: the last keep entries to end (a ring of log
	 * indices, oldest at head), the entries live now, and those marked
	 * TLM__AL_DROP and not yet compacted away */
	size_t keep, live, ndrop;
	uint32_t *ring;
	size_t rhead, rcount;
	bool over;             /* more than max live at once */
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
	if (set->n == set->cap) {
		size_t nc = set->cap ? set->cap * 2 : 64;
		struct seg *n = realloc(set->v, nc * sizeof *n);
		if (!n)
			return -1;
		set->v = n;
		set->cap = nc;
	}
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
static void window_push(struct pass *p, uint32_t idx)
{
	p->live--;
	if (p->rcount == p->keep) {
		p->l->e[p->ring[p->rhead]].flags |= TLM__AL_DROP;
		p->l->dropped++;
		p->ndrop++;
		p->ring[p->rhead] = idx;
		p->rhead = (p->rhead + 1) % p->keep;
	} else {
		p->ring[(p->rhead + p->rcount++) % p->keep] = idx;
	}
}

/* Removes the dropped entries from the log, in order, and renumbers every
 * index that names one that stays (the address map, the segment sets, the
 * parents, the window). */
static int compact(struct pass *p)
{
	struct tlm__alog *l = p->l;
	set_compact(&p->segs, l->e); /* only live entries stay there */
	set_compact(&p->resv, l->e);
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
	for (size_t i = 0; p->map.s && i <= p->map.mask; i++)
		if (p->map.s[i].ns && p->map.s[i].ns != NS_PHYS)
			p->map.s[i].val = to[p->map.s[i].val];
	for (size_t i = 0; i < p->segs.n; i++)
		p->segs.v[i].idx = to[p->segs.v[i].idx];
	for (size_t i = 0; i < p->resv.n; i++)
		p->resv.v[i].idx = to[p->resv.v[i].idx];
	for (size_t i = 0; i < p->rcount; i++) {
		uint32_t *x = &p->ring[(p->rhead + i) % p->keep];
		*x = to[*x];
	}
	l->n = k;
	p->ndrop = 0;
	free(to);
	return 0;
}

static void end_one(struct pass *p, struct slot *s, const struct tlm_event *ev, uint64_t seq)
{
	if (s->ns == NS_PHYS) {
		amap_del(&p->map, s);
		return;
	}
	struct tlm__al *a = &p->l->e[s->val];
	a->flags &= (uint8_t)~TLM__AL_LIVE;
	a->seq_free = seq;
	a->t_free = (int64_t)(ev->time_ns - p->start);
	a->free_stack = ev->stack_id;
	if (p->keep)
		window_push(p, s->val);
	if (a->kind == TLM_KIND_VMM_RESERVE)
		set_del(&p->resv, p->l->e);
	else if (a->kind != TLM_KIND_BLOCK && a->kind != TLM_KIND_HOST_PINNED)
		set_del(&p->segs, p->l->e);
	amap_del(&p->map, s);
}

static int on_alloc(struct pass *p, const struct tlm_event *ev, uint64_t seq)
{
	struct tlm__alog *l = p->l;
	uint8_t ns = ns_of(ev->kind);
	if (ev->result) {
		if (ev->result != 2 || !ns)
			return 0;
		if (l->noom >= TLM__AL_MAX_OOMS) { /* a crafted trace of OOMs: bounded */
			l->oom_dropped++;
			return 0;
		}
		if (l->noom == l->capoom) {
			size_t nc = l->capoom ? l->capoom * 2 : 16;
			struct tlm__al_oom *n = realloc(l->oom, nc * sizeof *n);
			if (!n)
				return -1;
			l->oom = n;
			l->capoom = nc;
		}
		struct tlm__al_oom o = {seq, ev->size, ev->device_free, ev->stream, (int64_t)(ev->time_ns - p->start),
					ev->stack_id, ev->thread, ev->device, ev->kind, ev->kind == TLM_KIND_BLOCK};
		for (size_t i = l->noom; o.allocator && !o.device_free && i-- > 0 && !l->oom[i].allocator;)
			if (l->oom[i].device == o.device && l->oom[i].thread == o.thread)
				o.device_free = l->oom[i].device_free; /* the allocator's own failed cudaMalloc */
		l->oom[l->noom++] = o;
		return 0;
	}
	if (!ns)
		return 0;
	struct slot *old = amap_find(&p->map, ns, ev->addr);
	if (old)
		end_one(p, old, ev, seq); /* a missed free: the old one ends here */
	if (ns == NS_PHYS) /* handles only tell their mappings' device */
		return amap_put(&p->map, ns, ev->addr, (uint32_t)(uint16_t)ev->device);
	int16_t device = ev->device;
	if (ns == NS_MAP && device < 0) {
		const struct slot *h = amap_find(&p->map, NS_PHYS, ev->aux);
		if (h)
			device = (int16_t)(uint16_t)h->val;
	}
	if (p->keep && p->live >= p->max) {
		p->over = true;
		return -1;
	}
	if (!p->keep && l->n >= p->max) {
		l->dropped++;
		return 0;
	}
	if (p->keep && p->ndrop >= 4096 && p->ndrop * 2 >= l->n && compact(p))
		return -1;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 1024;
		struct tlm__al *n = realloc(l->e, nc * sizeof *n);
		if (!n)
			return -1;
		l->e = n;
		l->cap = nc;
	}
	uint32_t idx = (uint32_t)l->n++;
	p->live++;
	struct tlm__al *a = &l->e[idx];
	*a = (struct tlm__al){
		.addr = ev->addr, .size = ev->size, .stream = ev->kind == TLM_KIND_BLOCK ? 0 : ev->stream,
		.seq_alloc = seq, .t_alloc = (int64_t)(ev->time_ns - p->start), .stack_id = ev->stack_id,
		.parent = UINT32_MAX, .device = device, .kind = ev->kind, .flags = TLM__AL_LIVE, .api = ev->api,
	};
	if (ns == NS_MAP)
		a->stream = 0; /* a mapping's "stream" is its offset into the handle */
	if (device > l->max_device && ev->kind != TLM_KIND_HOST_PINNED)
		l->max_device = device;
	if (ev->kind == TLM_KIND_BLOCK) {
		uint32_t h = holder(&p->segs, l->e, device, ev->addr), v = holder(&p->resv, l->e, -1, ev->addr);
		a->parent = h;
		if (h != UINT32_MAX)
			l->e[h].flags |= TLM__AL_OWNED;
		if (v != UINT32_MAX) /* the allocator's reservation: all its mappings are its segments */
			l->e[v].flags |= TLM__AL_OWNED;
	} else if (ev->kind == TLM_KIND_VMM_RESERVE) {
		if (set_add(&p->resv, l->e, idx))
			return -1;
	} else if (ev->kind != TLM_KIND_HOST_PINNED) {
		if (ns == NS_MAP)
			a->parent = holder(&p->resv, l->e, -1, ev->addr);
		if (set_add(&p->segs, l->e, idx))
			return -1;
	}
	return amap_put(&p->map, ns, ev->addr, idx);
}

static void on_free(struct pass *p, const struct tlm_event *ev, uint64_t seq)
{
	uint8_t ns = ns_of(ev->kind);
	if (ev->result || !ns)
		return;
	struct slot *s = amap_find(&p->map, ns, ev->addr);
	if (s)
		end_one(p, s, ev, seq);
}

void tlm__alog_free(struct tlm__alog *l)
{
	free(l->e);
	free(l->oom);
	memset(l, 0, sizeof *l);
}

static int build(struct tlm_report *r, size_t max, size_t keep, bool stop_at_end, struct tlm__alog *out, char *err,
		 size_t errlen)
{
	memset(out, 0, sizeof *out);
	out->max_device = -1;
	struct tlm_reader *rd = tlm__reopen(r, err, errlen);
	if (!rd)
		return -1;
	const struct tlm_trace_header *hd = tlm_reader_header(rd);
	struct pass p = {.l = out, .max = max, .keep = keep, .start = hd->start_monotonic_ns};
	out->start_realtime_ns = hd->start_realtime_ns;
	struct tlm_record *rec = malloc(sizeof *rec);
	int rc = -1;
	if (!rec || (keep && !(p.ring = malloc(keep * sizeof *p.ring))))
		goto out;
	bool canon = r->priv && r->priv->npy;
	uint64_t seq = 0;
	while (tlm_reader_next(rd, rec) == 1) {
		if (rec->type == TLM_REC_END && stop_at_end) {
			out->stopped_at_end = true;
			break;
		}
		if (rec->type != TLM_REC_EVENT)
			continue;
		struct tlm_event ev = rec->u.ev;
		if (stop_at_end && (ev.flags & TLM_EVF_FINALIZING)) {
			out->stopped_at_end = true;
			break;
		}
		seq++;
		if (canon && ev.stack_id)
			ev.stack_id = tlm__priv_canon(r->priv, ev.stack_id);
		out->end_ns = (int64_t)(ev.time_ns - p.start);
		if (ev.op == TLM_OP_ALLOC ? on_alloc(&p, &ev, seq) : (on_free(&p, &ev, seq), 0))
			goto out;
	}
	out->events = seq;
	/* a mapping inside a reservation that held the allocator's blocks is one
	 * of its segments even when no block lay in that page yet */
	for (size_t i = 0; i < out->n; i++) {
		struct tlm__al *a = &out->e[i];
		if (a->kind == TLM_KIND_VMM_MAPPING && a->parent != UINT32_MAX && (out->e[a->parent].flags & TLM__AL_OWNED))
			a->flags |= TLM__AL_OWNED;
	}
	rc = p.ndrop && compact(&p);
out:
	if (rc && p.over)
		snprintf(err, errlen, "more than %zu allocations live at once: beyond this export's limit", max);
	else if (rc)
		snprintf(err, errlen, "out of memory while reading the trace again");
	free(rec);
	free(p.ring);
	free(p.map.s);
	free(p.segs.v);
	free(p.resv.v);
	tlm_reader_close(rd);
	if (rc)
		tlm__alog_free(out);
	return rc;
}

int tlm__alog_build(struct tlm_report *r, size_t max, bool stop_at_end, struct tlm__alog *out, char *err,
		    size_t errlen)
{
	return build(r, max, 0, stop_at_end, out, err, errlen);
}

int tlm__alog_build_recent(struct tlm_report *r, size_t max, size_t keep, bool stop_at_end, struct tlm__alog *out,
			   char *err, size_t errlen)
{
	return build(r, max, keep ? keep : 1, stop_at_end, out, err, errlen);
}
