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

#include "pass.h"
#include "steps_internal.h"

static int mkind_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_MANAGED: return TLM_MEM_MANAGED;
	case TLM_KIND_HOST_PINNED: return TLM_MEM_HOST_PINNED;
	default: return TLM_MEM_DEVICE;
	}
}

/* The replay matched e's free (or a missed free before an allocation at its address). */
static void on_release(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev)
{
	struct tlm__steps_rec *s = ctx;
	uint32_t i = e->tag[TLM__TAG_STEPS];
	if (i == TLM__NO_TAG || i >= s->n)
		return;
	struct tlm__srec *r = &s->r[i];
	r->ft = ev->time_ns;
	r->fev = p->rep->events;
	r->fthread = ev->thread;
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

/* After the replay took an event (as read): its free-memory figure. */
static int after(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	if (rec->type == TLM_REC_EVENT && rec->u.ev.op == TLM_OP_ALLOC && rec->u.ev.device_free)
		capacity(ctx, &p->rp, &rec->u.ev);
	return 0;
}

/* A successful allocation entered the live map: its record (the memory that
 * holds bytes; VMM reservations and mappings hold none). */
static void on_alloc(void *ctx, struct tlm__pass *p, struct tlm__live *e, const struct tlm_event *ev)
{
	struct tlm__steps_rec *s = ctx;
	if (e->ns != TLM_NS_DEVVA && e->ns != TLM_NS_HOST && e->ns != TLM_NS_VMM_PHYS && e->ns != TLM_NS_BLOCK)
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
	s->r[s->n] = (struct tlm__srec){
		.t = ev->time_ns, .ft = UINT64_MAX, .ev = p->rep->events, .fev = UINT64_MAX, .size = ev->size,
		.stack = ev->stack_id, .thread = ev->thread, .fthread = ev->thread, .device = ev->device,
		.mkind = (uint8_t)mkind_of(ev->kind), .block = ev->kind == TLM_KIND_BLOCK,
	};
	e->tag[TLM__TAG_STEPS] = (uint32_t)s->n++;
}

static int finish(void *ctx, struct tlm__pass *p)
{
	return tlm__steps_finish(ctx, &p->rp, p->rep);
}

static void fini(void *ctx)
{
	struct tlm__steps_rec *s = ctx;
	free(s->r);
	free(s);
}

int tlm__steps_consumer(struct tlm__pass *p)
{
	struct tlm__steps_rec *s = calloc(1, sizeof *s);
	if (!s)
		return -1;
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = s, .after = after, .alloc = on_alloc,
							 .release = on_release, .finish = finish, .fini = fini});
}
