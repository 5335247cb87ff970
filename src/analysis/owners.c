/* SPDX-License-Identifier: MIT */
/*
 * owners.c - who holds each device's reserved memory (owners.h): the
 * module map as the trace builds it, each native stack's owner (decided
 * once per stack id while the modules stay loaded), and per (device, kind)
 * each owner's bytes, fed by the replay's matches (its own map of the live
 * allocations holding bytes, each with its owner's name index).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "analysis/owners.h"
#include "common/grow.h"

/* One loaded segment: [start, end) belongs to a module whose frames say cls
 * (enum tlm__owner_cls), with the owner's name index when named. */
struct seg {
	uint64_t start, end;
	uint32_t module;      /* the MODULE record's id */
	uint32_t name;        /* its owner's (or, for a carrier, its own) name index */
	uint8_t cls;
};

struct slot {
	uint32_t name;
	uint64_t cur, peak, peak_t, at_rpeak, at_end;
};

struct acct {
	int16_t device;
	uint8_t mkind;
	uint64_t total, peak;
	struct slot *s;
	size_t n, cap;
};

/* One OOM the report listed: its owners' bytes at pairs[off .. off + n). */
struct oom {
	uint64_t ev;
	size_t off, n;
};

struct pair {
	uint32_t name;
	uint64_t bytes;
};

#define MAX_OOMS 65536      /* snapshots kept (the report lists at most TLM_REPORT_MAX_OOMS) */
#define MAX_CACHED (1u << 22) /* stack ids whose owner is remembered */
#define PROGRAM_CLS UINT32_MAX /* in the cache: the program's own call (the API decides) */
#define NO_NAME UINT32_MAX

struct tlm__owners {
	struct tlm__live_map live; /* driver-layer allocations holding bytes; stack_id: the owner's name index */
	char (*names)[TLM_REPORT_OWNER_NAME];
	size_t nnames, capnames;
	uint32_t pools, program, unknown;
	struct seg *seg;
	size_t nseg, capseg;
	uint32_t *cache;      /* by native stack id: 0 unknown yet, else the name index + 1 (or PROGRAM_CLS) */
	size_t ncache;
	struct acct *a;
	size_t na, capa;
	struct oom *oom;
	size_t noom, capoom;
	struct pair *pairs;
	size_t npairs, cappairs;
	bool ended;
};

/* The index of a name (added when new); NO_NAME without memory. */
static uint32_t intern(struct tlm__owners *o, const char *name)
{
	for (size_t i = 0; i < o->nnames; i++)
		if (!strcmp(o->names[i], name))
			return (uint32_t)i;
	if (tlm__grow(&o->names, &o->capnames, o->nnames + 1, sizeof *o->names, 16))
		return NO_NAME;
	size_t l = strnlen(name, TLM_REPORT_OWNER_NAME - 1);
	memcpy(o->names[o->nnames], name, l);
	o->names[o->nnames][l] = 0;
	return (uint32_t)o->nnames++;
}

/* ---- the module map ---------------------------------------------------- */

static int module(struct tlm__owners *o, const struct tlm_rec_module *m, const char *exe)
{
	const char *owner;
	enum tlm__owner_cls cls = tlm__owner_class(m->path, exe, &owner);
	uint32_t name = NO_NAME;
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	/* tlm's own frames name nothing, not even a stack of carriers only */
	if (cls != TLM__OWN_PROGRAM && strncmp(base, "libtlm", 6)) {
		name = intern(o, owner ? owner : base);
		if (name == NO_NAME)
			return -1;
	}
	for (uint32_t i = 0; i < m->nseg && i < TLM_MAX_SEGMENTS; i++) {
		if (m->seg[i].end <= m->seg[i].start)
			continue;
		if (tlm__grow(&o->seg, &o->capseg, o->nseg + 1, sizeof *o->seg, 16))
			return -1;
		size_t at = o->nseg; /* sorted by start: modules load at new addresses */
		while (at && o->seg[at - 1].start > m->seg[i].start)
			at--;
		memmove(&o->seg[at + 1], &o->seg[at], (o->nseg - at) * sizeof *o->seg);
		o->seg[at] = (struct seg){m->seg[i].start, m->seg[i].end, m->id, name, (uint8_t)cls};
		o->nseg++;
	}
	return 0;
}

static void module_unload(struct tlm__owners *o, uint32_t id)
{
	size_t k = 0;
	for (size_t i = 0; i < o->nseg; i++)
		if (o->seg[i].module != id)
			o->seg[k++] = o->seg[i];
	o->nseg = k;
	/* an owner decided under the old map may name the module: decide again */
	if (o->cache)
		memset(o->cache, 0, o->ncache * sizeof *o->cache);
}

/* The segment holding a code address; NULL when no module holds it. The
 * latest segment over an address wins (a module mapped over an unloaded
 * one's range is removed with it). */
static const struct seg *seg_of(const struct tlm__owners *o, uint64_t ip)
{
	size_t lo = 0, hi = o->nseg;
	while (lo < hi) { /* the first segment starting after ip */
		size_t mid = (lo + hi) / 2;
		if (o->seg[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		if (ip < o->seg[i].end)
			return &o->seg[i];
		if (lo - i > 8)
			break; /* segments do not nest deeper than this in practice */
	}
	return NULL;
}

/* ---- each stack's owner ------------------------------------------------- */

/* The name index + 1 that the stack's frames give, or PROGRAM_CLS. */
static uint32_t stack_owner(const struct tlm__owners *o, const uint64_t *ip, uint32_t depth)
{
	uint32_t carrier = 0;
	for (uint32_t i = 0; i < depth; i++) {
		if (!ip[i])
			continue;
		const struct seg *s = seg_of(o, ip[i] - 1); /* a return address: the call is before it */
		if (!s)
			continue;
		if (s->cls == TLM__OWN_PROGRAM)
			return PROGRAM_CLS;
		if (s->cls == TLM__OWN_NAMED)
			return s->name + 1;
		if (!carrier && s->name != NO_NAME)
			carrier = s->name + 1;
	}
	return carrier ? carrier : o->unknown + 1;
}

static bool pool_api(unsigned api)
{
	switch (api) {
	case TLM_API_cudaMallocAsync: case TLM_API_cudaMallocAsync_ptsz:
	case TLM_API_cudaMallocFromPoolAsync: case TLM_API_cudaMallocFromPoolAsync_ptsz:
	case TLM_API_cuMemAllocAsync: case TLM_API_cuMemAllocAsync_ptsz:
	case TLM_API_cuMemAllocFromPoolAsync: case TLM_API_cuMemAllocFromPoolAsync_ptsz:
		return true;
	default:
		return false;
	}
}

static uint32_t owner_of(struct tlm__owners *o, struct tlm__report_priv *pv, uint32_t raw, unsigned api)
{
	uint32_t id = raw ? tlm__priv_native(pv, raw) : 0, depth = 0;
	const uint64_t *ip = id ? tlm__stacks_get(&pv->stacks, id, &depth) : NULL;
	if (!ip || !depth)
		return o->unknown;
	uint32_t c = id < o->ncache ? o->cache[id] : 0;
	if (!c) {
		c = stack_owner(o, ip, depth);
		size_t was = o->ncache;
		if (id < MAX_CACHED && !tlm__grow(&o->cache, &o->ncache, (size_t)id + 1, sizeof *o->cache, 16)) {
			memset(o->cache + was, 0, (o->ncache - was) * sizeof *o->cache);
			o->cache[id] = c;
		}
	}
	if (c == PROGRAM_CLS)
		return pool_api(api) ? o->pools : o->program;
	return c - 1;
}

/* ---- per (device, kind): each owner's bytes ---------------------------- */

static struct acct *acct_of(struct tlm__owners *o, int device, int mkind, bool add)
{
	for (size_t i = 0; i < o->na; i++)
		if (o->a[i].device == device && o->a[i].mkind == mkind)
			return &o->a[i];
	if (!add || tlm__grow(&o->a, &o->capa, o->na + 1, sizeof *o->a, 16))
		return NULL;
	struct acct *a = &o->a[o->na++];
	memset(a, 0, sizeof *a);
	a->device = (int16_t)device;
	a->mkind = (uint8_t)mkind;
	return a;
}

static struct slot *slot_of(struct acct *a, uint32_t name)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->s[i].name == name)
			return &a->s[i];
	if (tlm__grow(&a->s, &a->cap, a->n + 1, sizeof *a->s, 16))
		return NULL;
	a->s[a->n] = (struct slot){.name = name};
	return &a->s[a->n++];
}

/* Saturating as the replay's accounting is (acct.c), so the sums match it. */
static uint64_t add(uint64_t v, bool alloc, uint64_t bytes)
{
	if (alloc)
		return v + bytes < v ? UINT64_MAX : v + bytes;
	return bytes > v ? 0 : v - bytes;
}

static void on_alloc(struct tlm__owners *o, struct tlm__replay *rp, const struct tlm__live *e,
		     const struct tlm_event *raw)
{
	uint32_t name = owner_of(o, rp->rep->priv, raw->stack_id, raw->api);
	struct acct *a = acct_of(o, e->device, e->mkind, true);
	struct slot *s = a ? slot_of(a, name) : NULL;
	struct tlm__live own = *e;
	own.stack_id = name;
	if (!s || !tlm__live_put(&o->live, &own)) {
		rp->oom_error = ENOMEM;
		return;
	}
	s->cur = add(s->cur, true, e->size);
	if (s->cur > s->peak) {
		s->peak = s->cur;
		s->peak_t = e->time_ns;
	}
	a->total = add(a->total, true, e->size);
	if (a->total > a->peak) { /* as the replay's reserved peak: its first moment */
		a->peak = a->total;
		for (size_t i = 0; i < a->n; i++)
			a->s[i].at_rpeak = a->s[i].cur;
	}
}

static void on_release(struct tlm__owners *o, const struct tlm__live *e)
{
	struct tlm__live *own = tlm__live_find(&o->live, e->ns, e->addr);
	struct acct *a = own ? acct_of(o, own->device, own->mkind, false) : NULL;
	for (size_t i = 0; a && i < a->n; i++)
		if (a->s[i].name == own->stack_id) {
			a->s[i].cur = add(a->s[i].cur, false, own->size);
			a->total = add(a->total, false, own->size);
			break;
		}
	if (own)
		tlm__live_del(&o->live, own);
}

void tlm__owners_on_live(void *ctx, struct tlm__replay *rp, const struct tlm__live *e, const struct tlm_event *raw,
			 bool alloc)
{
	struct tlm__owners *o = ctx;
	if (e->ns == TLM_NS_BLOCK || e->mkind == 0xff)
		return; /* a block lies in reserved memory; reservations and mappings hold none */
	if (alloc)
		on_alloc(o, rp, e, raw);
	else
		on_release(o, e);
}

static void end_of_run(struct tlm__owners *o)
{
	if (o->ended)
		return;
	o->ended = true;
	for (size_t i = 0; i < o->na; i++)
		for (size_t k = 0; k < o->a[i].n; k++)
			o->a[i].s[k].at_end = o->a[i].s[k].cur;
}

int tlm__owners_record(struct tlm__owners *o, const struct tlm__replay *rp, const struct tlm_record *rec)
{
	switch (rec->type) {
	case TLM_REC_MODULE:
		return module(o, &rec->u.module, rp->rep->exe);
	case TLM_REC_MODULE_UNLOAD:
		module_unload(o, rec->u.module_unload);
		return 0;
	case TLM_REC_EVENT:
		/* the replay ends the run here, before the event (replay.c) */
		if ((rec->u.ev.flags & TLM_EVF_FINALIZING) && !rp->snapped)
			end_of_run(o);
		return 0;
	default:
		return 0;
	}
}

/* An OOM the replay just listed: its device's owners now. */
int tlm__owners_after(struct tlm__owners *o, const struct tlm_report *rep, const struct tlm_record *rec)
{
	if (rec->type != TLM_REC_EVENT || rec->u.ev.op != TLM_OP_ALLOC || !rec->u.ev.result || !rep->nooms)
		return 0;
	const struct tlm_report_oom *x = &rep->ooms[rep->nooms - 1];
	if (x->event != rep->events || o->noom >= MAX_OOMS)
		return 0;
	const struct acct *a = acct_of(o, x->device, x->kind, false);
	size_t n = a ? a->n : 0;
	if (tlm__grow(&o->oom, &o->capoom, o->noom + 1, sizeof *o->oom, 16) ||
	    tlm__grow(&o->pairs, &o->cappairs, o->npairs + n, sizeof *o->pairs, 16))
		return -1;
	o->oom[o->noom++] = (struct oom){x->event, o->npairs, n};
	for (size_t i = 0; i < n; i++)
		o->pairs[o->npairs++] = (struct pair){a->s[i].name, a->s[i].cur};
	return 0;
}

static int by_size(const void *x, const void *y)
{
	const struct tlm_report_owner *a = x, *b = y;
	if (a->at_reserved_peak != b->at_reserved_peak)
		return a->at_reserved_peak > b->at_reserved_peak ? -1 : 1;
	if (a->peak != b->peak)
		return a->peak > b->peak ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int fill_device(struct tlm__owners *o, struct tlm_report_device *d, uint64_t start)
{
	const struct acct *a = acct_of(o, d->device, d->kind, false);
	if (!a || !a->n)
		return 0;
	if (!(d->owners = calloc(a->n, sizeof *d->owners)))
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		struct tlm_report_owner *w = &d->owners[i];
		memcpy(w->name, o->names[a->s[i].name], sizeof w->name);
		w->peak = a->s[i].peak;
		w->peak_ns = (int64_t)(a->s[i].peak_t - start);
		w->at_reserved_peak = a->s[i].at_rpeak;
		w->at_end = a->s[i].at_end;
	}
	d->nowners = a->n;
	qsort(d->owners, d->nowners, sizeof *d->owners, by_size);
	return 0;
}

static const struct oom *oom_of(const struct tlm__owners *o, uint64_t ev)
{
	size_t lo = 0, hi = o->noom;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (o->oom[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->noom && o->oom[lo].ev == ev ? &o->oom[lo] : NULL;
}

static int fill_oom(struct tlm__owners *o, struct tlm_report *rep, struct tlm_report_oom *x)
{
	const struct oom *s = oom_of(o, x->event);
	const struct tlm_report_device *d = NULL;
	for (size_t i = 0; i < rep->ndevices && !d; i++)
		if (rep->devices[i].device == x->device && rep->devices[i].kind == x->kind)
			d = &rep->devices[i];
	if (!s || !d || !d->nowners)
		return 0;
	if (!(x->owner_bytes = calloc(d->nowners, sizeof *x->owner_bytes)))
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const char *name = o->names[o->pairs[s->off + i].name];
		for (size_t k = 0; k < d->nowners; k++)
			if (!strcmp(d->owners[k].name, name))
				x->owner_bytes[k] = o->pairs[s->off + i].bytes;
	}
	return 0;
}

int tlm__owners_finish(struct tlm__owners *o, struct tlm_report *rep, uint64_t start)
{
	end_of_run(o);
	for (size_t i = 0; i < rep->ndevices; i++)
		if (fill_device(o, &rep->devices[i], start))
			return -1;
	for (size_t i = 0; i < rep->nooms; i++)
		if (fill_oom(o, rep, &rep->ooms[i]))
			return -1;
	return 0;
}

void tlm__owners_free(struct tlm__owners *o)
{
	if (!o)
		return;
	tlm__live_fini(&o->live);
	for (size_t i = 0; i < o->na; i++)
		free(o->a[i].s);
	free(o->a);
	free(o->names);
	free(o->seg);
	free(o->cache);
	free(o->oom);
	free(o->pairs);
	free(o);
}

struct tlm__owners *tlm__owners_new(void)
{
	struct tlm__owners *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	if (tlm__live_init(&o->live)) {
		free(o);
		return NULL;
	}
	o->pools = intern(o, TLM_OWNER_POOLS);
	o->program = intern(o, TLM_OWNER_PROGRAM);
	o->unknown = intern(o, TLM_OWNER_UNKNOWN);
	if (o->unknown == NO_NAME) {
		tlm__owners_free(o);
		return NULL;
	}
	return o;
}
