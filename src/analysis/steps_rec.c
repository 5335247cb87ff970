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

#include "analysis/pass.h"
#include "analysis/steps_internal.h"
#include "common/grow.h"

static int mkind_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_MANAGED: return TLM_MEM_MANAGED;
	case TLM_KIND_HOST_PINNED: return TLM_MEM_HOST_PINNED;
	default: return TLM_MEM_DEVICE;
	}
}

int tlm__steps_init(struct tlm__steps_rec *s, int tag)
{
	memset(s, 0, sizeof *s);
	s->tag = tag;
	return 0;
}

void tlm__steps_fini(struct tlm__steps_rec *s)
{
	free(s->r);
	memset(s, 0, sizeof *s);
}

void tlm__steps_release(struct tlm__steps_rec *s, const struct tlm__live *e, const struct tlm_event *ev, uint64_t ord)
{
	uint32_t i = e->tag[s->tag];
	if (i == TLM__NO_TAG || i >= s->n || s->r[i].ev != e->ev)
		return; /* not recorded (before this recorder began, or past its cap) */
	struct tlm__srec *r = &s->r[i];
	r->ft = ev->time_ns;
	r->fev = ord;
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

void tlm__steps_event(struct tlm__steps_rec *s, const struct tlm__replay *rp, const struct tlm_event *ev)
{
	if (ev->op == TLM_OP_ALLOC && ev->device_free)
		capacity(s, rp, ev);
}

void tlm__steps_alloc(struct tlm__steps_rec *s, struct tlm__live *e, const struct tlm_event *ev)
{
	if (e->ns != TLM_NS_DEVVA && e->ns != TLM_NS_HOST && e->ns != TLM_NS_VMM_PHYS && e->ns != TLM_NS_BLOCK)
		return; /* VMM reservations and mappings hold no bytes */
	if (s->n == s->cap && (s->n >= TLM__STEPS_MAX_RECS || tlm__grow(&s->r, &s->cap, s->n + 1, sizeof *s->r, 4096))) {
		s->full = true;
		s->dropped++;
		return;
	}

	s->r[s->n] = (struct tlm__srec){
		.t = ev->time_ns, .ft = UINT64_MAX, .ev = e->ev, .fev = UINT64_MAX, .size = ev->size,
		.stack = ev->stack_id, .thread = ev->thread, .fthread = ev->thread, .device = ev->device,
		.mkind = (uint8_t)mkind_of(ev->kind), .block = ev->kind == TLM_KIND_BLOCK,
	};
	e->tag[s->tag] = (uint32_t)s->n++;
}

/* ---- the consumer of the report's pass (pass.h) ------------------------------ */

static void on_alloc(void *ctx, struct tlm__pass *p, struct tlm__live *e, const struct tlm_event *ev)
{
	(void)p;
	tlm__steps_alloc(ctx, e, ev);
}

static void on_release(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev)
{
	tlm__steps_release(ctx, e, ev, p->rep->events);
}

/* After the replay took an event (as read): its free-memory figure. */
static int after(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	if (rec->type == TLM_REC_EVENT)
		tlm__steps_event(ctx, &p->rp, &rec->u.ev);
	return 0;
}

static int finish(void *ctx, struct tlm__pass *p)
{
	return tlm__steps_finish(ctx, &p->rp, p->rep);
}

static void fini(void *ctx)
{
	tlm__steps_fini(ctx);
	free(ctx);
}

int tlm__steps_consumer(struct tlm__pass *p)
{
	struct tlm__steps_rec *s = malloc(sizeof *s);
	if (!s || tlm__steps_init(s, TLM__TAG_STEPS)) {
		free(s);
		return -1;
	}
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = s, .after = after, .alloc = on_alloc,
							 .release = on_release, .finish = finish, .fini = fini});
}
