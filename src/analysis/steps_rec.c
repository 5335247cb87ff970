/* SPDX-License-Identifier: MIT */
/*
 * steps_rec.c - what step detection needs from the stream: every successful
 * allocation with its free (bounded, steps_internal.h), and per device the
 * memory the process could have held, from the first free-memory figure the
 * trace carries (the shim measures it at the first allocation on a device,
 * and at every failed one).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/steps_internal.h"

int tlm__steps_init(struct tlm__steps_rec *s)
{
	memset(s, 0, sizeof *s);
	s->map_ok = tlm__live_init(&s->map) == 0;
	return s->map_ok ? 0 : -1;
}

void tlm__steps_fini(struct tlm__steps_rec *s)
{
	if (s->map_ok)
		tlm__live_fini(&s->map);
	free(s->r);
	memset(s, 0, sizeof *s);
}

/* The replay's namespaces (replay.c): device and managed memory share one. */
static uint8_t ns_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_DEVICE:
	case TLM_KIND_MANAGED: return TLM__NS_DEVVA;
	case TLM_KIND_HOST_PINNED: return TLM__NS_HOST;
	case TLM_KIND_VMM_PHYSICAL: return TLM__NS_VMM_PHYS;
	case TLM_KIND_BLOCK: return TLM__NS_BLOCK;
	default: return TLM__NS_EMPTY; /* VMM reservations and mappings hold no bytes */
	}
}

static int mkind_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_MANAGED: return TLM_MEM_MANAGED;
	case TLM_KIND_HOST_PINNED: return TLM_MEM_HOST_PINNED;
	default: return TLM_MEM_DEVICE;
	}
}

static void end_rec(struct tlm__steps_rec *s, struct tlm__live *e, const struct tlm_event *ev, uint64_t ord)
{
	if (e->size < s->n) {
		struct tlm__srec *r = &s->r[e->size];
		r->ft = ev->time_ns;
		r->fev = ord;
		r->fthread = ev->thread;
	}
	tlm__live_del(&s->map, e);
}

static void capacity(struct tlm__steps_rec *s, const struct tlm__replay *rp, const struct tlm_event *ev)
{
	if (ev->device < 0 || ev->device >= TLM__STEPS_MAX_DEV || s->cap_[ev->device].known)
		return;
	if (ev->kind != TLM_KIND_DEVICE && ev->kind != TLM_KIND_BLOCK && ev->kind != TLM_KIND_VMM_PHYSICAL)
		return;
	uint64_t reserved = 0;
	for (size_t i = 0; i < rp->accts.n; i++)
		if (rp->accts.a[i].device == ev->device && rp->accts.a[i].mkind == TLM_MEM_DEVICE)
			reserved = rp->accts.a[i].reserved;
	s->cap_[ev->device].known = true;
	s->cap_[ev->device].capacity = ev->device_free + reserved;
	s->cap_[ev->device].source = ev->result ? "out of memory" : "first allocation";
}

void tlm__steps_event(struct tlm__steps_rec *s, const struct tlm__replay *rp, const struct tlm_event *ev)
{
	if (!s->map_ok)
		return;
	if (ev->op == TLM_OP_ALLOC && ev->device_free)
		capacity(s, rp, ev);
	if (ev->result || (ev->op != TLM_OP_ALLOC && ev->op != TLM_OP_FREE))
		return;
	uint8_t ns = ns_of(ev->kind);
	if (ns == TLM__NS_EMPTY)
		return;
	uint64_t ord = rp->rep->events;
	struct tlm__live *e = tlm__live_find(&s->map, ns, ev->addr);
	if (e)
		end_rec(s, e, ev, ord); /* a free, or a missed free before this allocation */
	if (ev->op != TLM_OP_ALLOC)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		struct tlm__srec *n = s->n < TLM__STEPS_MAX_RECS ? realloc(s->r, cap * sizeof *n) : NULL;
		if (!n) {
			s->full = true;
			s->dropped++;
			return;
		}
		s->r = n;
		s->cap = cap;
	}
	uint32_t stack = ev->stack_id;
	if (stack && rp->rep->priv && rp->rep->priv->npy)
		stack = tlm__priv_canon(rp->rep->priv, stack);
	s->r[s->n] = (struct tlm__srec){
		.t = ev->time_ns, .ft = UINT64_MAX, .ev = ord, .fev = UINT64_MAX, .size = ev->size, .stack = stack,
		.thread = ev->thread, .fthread = ev->thread, .device = ev->device, .mkind = (uint8_t)mkind_of(ev->kind),
		.block = ev->kind == TLM_KIND_BLOCK,
	};
	struct tlm__live le = {.addr = ev->addr, .size = s->n, .ns = ns, .device = ev->device};
	if (!tlm__live_put(&s->map, &le))
		return; /* without memory its free is not seen: it stays a survivor */
	s->n++;
}
