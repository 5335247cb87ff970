/* SPDX-License-Identifier: MIT */
/*
 * replay.c - the per-event accounting: matches frees to allocations, keeps
 * the two accounting layers, the churn groups and the OOM list up to date,
 * and takes the live-at-end snapshot (sections.c then turns the state into
 * the report's sections).
 *
 * Rules (docs/report.md, "Accounting"): a failed free frees nothing; cudaFree
 * (kind DEVICE) frees device or managed memory at that address, both living
 * in one namespace; a free of an address not live is counted and ignored; an
 * allocation at an address still live is counted, and the old one is taken
 * as freed (a missed free) so the accounting recovers. VMM physical handles
 * are device memory; VMM reservations and mappings hold no bytes but are
 * tracked so their frees match.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

int tlm__replay_init(struct tlm__replay *rp, struct tlm_report *rep)
{
	memset(rp, 0, sizeof *rp);
	rp->rep = rep;
	if (tlm__live_init(&rp->live))
		return -1;
	if (tlm__churn_init(&rp->churn)) {
		tlm__live_fini(&rp->live);
		return -1;
	}
	return 0;
}

void tlm__replay_fini(struct tlm__replay *rp)
{
	tlm__live_fini(&rp->live);
	tlm__churn_fini(&rp->churn);
	tlm__accts_fini(&rp->accts);
	free(rp->gc);
	rp->gc = NULL;
	free(rp->snap);
	rp->snap = NULL;
}

/* Memory kind whose bytes an allocation of this event kind holds, or -1. */
static int mkind_of(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_DEVICE: return TLM_MEM_DEVICE;
	case TLM_KIND_MANAGED: return TLM_MEM_MANAGED;
	case TLM_KIND_HOST_PINNED: return TLM_MEM_HOST_PINNED;
	case TLM_KIND_VMM_PHYSICAL: return TLM_MEM_DEVICE;
	case TLM_KIND_BLOCK: return TLM_MEM_DEVICE;
	default: return -1;
	}
}

static struct tlm__acct *acct(struct tlm__replay *rp, int device, int mkind)
{
	struct tlm__acct *a = tlm__acct_get(&rp->accts, device, mkind);
	if (!a)
		rp->oom_error = ENOMEM;
	else
		a->ev = rp->rep->events;
	return a;
}

/* Fragmentation at a new reserved peak, once the blocks are placed. */
static void settle(struct tlm__replay *rp, struct tlm__acct *a)
{
	if (!a->peak_pending)
		return;
	a->peak_pending = false;
	a->frag_at_peak = tlm__acct_frag(a);
	a->allocated_at_peak_reserved = a->allocated;
	if (a->has_blocks)
		a->free_gap_largest = tlm__largest_gap(&rp->live, a->device, a->mkind);
	a->ext_at_peak_known = tlm__acct_ext_frag(a, &a->ext_frag_at_peak);
	if (rp->hooks && rp->hooks->settle)
		rp->hooks->settle(rp->hooks_ctx, a);
}

void tlm__replay_settle_all(struct tlm__replay *rp)
{
	for (size_t i = 0; i < rp->accts.n; i++)
		settle(rp, &rp->accts.a[i]);
}

/* Ends a live allocation at time t; completed ones feed churn. */
static void release(struct tlm__replay *rp, struct tlm__live *e, uint64_t t, bool completed)
{
	if (e->mkind != 0xff) {
		struct tlm__acct *a = acct(rp, e->device, e->mkind);
		if (a) {
			if (e->ns == TLM_NS_BLOCK) {
				tlm__acct_block(a, false, e->size, t, e->stack_id);
			} else {
				settle(rp, a);
				tlm__acct_driver(a, false, e->size, t, e->stack_id);
			}
		}
		/* A block cycle costs no driver call: not churn. */
		if (completed && e->ns != TLM_NS_BLOCK)
			tlm__churn_add(&rp->churn, e->device, e->stack_id, e->size, t);
	}
	if (rp->hooks && rp->hooks->release) /* after the settle above: the peak's layout still held e */
		rp->hooks->release(rp->hooks_ctx, e, rp->ev);
	tlm__live_del(&rp->live, e);
}

static void verdict(struct tlm_report_oom *o)
{
	uint64_t avail = o->reserved_free + o->device_free;
	if (avail < o->reserved_free)
		avail = UINT64_MAX;
	o->verdict = avail >= o->requested ? TLM_OOM_FRAGMENTATION : TLM_OOM_EXHAUSTION;
}

static struct tlm_report_oom *oom(struct tlm__replay *rp, const struct tlm_event *ev, int mk)
{
	struct tlm_report *rep = rp->rep;
	rep->ooms_total++;
	if (rep->nooms >= TLM_REPORT_MAX_OOMS)
		return NULL;
	if (rep->nooms == rp->oom_cap && tlm__grow(&rep->ooms, &rp->oom_cap, rep->nooms + 1, sizeof *rep->ooms, 16)) {
		rp->oom_error = ENOMEM;
		return NULL;
	}
	struct tlm__acct *a = acct(rp, ev->device, mk);
	struct tlm_report_oom *o = &rep->ooms[rep->nooms++];
	memset(o, 0, sizeof *o);
	o->device = ev->device;
	o->kind = mk;
	o->stack_id = ev->stack_id;
	o->time_ns = (int64_t)ev->time_ns; /* absolute until finish */
	o->requested = ev->size;
	o->device_free = ev->device_free;
	o->thread = ev->thread;
	o->event = rep->events;
	o->allocator = ev->kind == TLM_KIND_BLOCK;
	if (a) {
		o->reserved = a->reserved;
		o->allocated = a->allocated;
		o->frag = tlm__acct_frag(a);
		/* Without a tap nothing inside reserved memory is known to be free. */
		if (a->has_blocks) {
			a->free_gap_largest = tlm__largest_gap(&rp->live, a->device, a->mkind);
			o->reserved_free = a->reserved > a->allocated ? a->reserved - a->allocated : 0;
			o->largest_free = a->free_gap_largest;
		}
		o->ext_known = tlm__acct_ext_frag(a, &o->ext_frag);
	}
	verdict(o);
	return o;
}

/* The allocator's OOM: the driver failures it met on the way (its segment
 * requests, its retries after freeing cached blocks: driver-layer OOMs on
 * the same thread and device since the device's last block event, within
 * TLM__FOLD_NS) are folded into it; it keeps the size the program asked for
 * and the device free memory the last of them saw. */
#define TLM__FOLD_NS 10000000000ull
static void allocator_oom(struct tlm__replay *rp, const struct tlm_event *ev)
{
	struct tlm_report *rep = rp->rep;
	struct tlm__acct *a = acct(rp, ev->device, TLM_MEM_DEVICE);
	uint64_t since = a ? a->last_block_ev : 0, folded = 0, dfree = 0, dreq = 0;
	bool have_free = false;
	size_t keep = rep->nooms;
	for (size_t i = rep->nooms; i-- > 0;) {
		const struct tlm_report_oom *o = &rep->ooms[i];
		if (o->event <= since)
			break;
		if (!o->allocator && o->device == ev->device && o->kind == TLM_MEM_DEVICE &&
		    o->thread == ev->thread && ev->time_ns - (uint64_t)o->time_ns <= TLM__FOLD_NS) {
			if (!have_free) {
				dfree = o->device_free;
				dreq = o->requested;
				have_free = true;
			}
			folded++;
			memmove(&rep->ooms[i], &rep->ooms[i + 1], (keep - i - 1) * sizeof *o);
			keep--;
		}
	}
	rep->nooms = keep;
	rep->ooms_total -= folded;
	struct tlm_report_oom *o = oom(rp, ev, TLM_MEM_DEVICE);
	if (!o)
		return;
	o->driver_failures = folded;
	o->driver_request = dreq;
	if (have_free && !o->device_free)
		o->device_free = dfree;
	/* The allocator's own totals (reportOutOfMemoryToProfiler's): its
	 * reserved-but-unallocated memory, without what other code took from the
	 * driver on the same device (PyTorch's "reserved by PyTorch but
	 * unallocated"). */
	if (!(ev->flags & TLM_EVF_NO_TOTALS) && a && a->has_blocks) {
		o->reserved_free = ev->stream > ev->aux ? ev->stream - ev->aux : 0;
		o->largest_free = tlm__largest_gap_in_use(&rp->live, ev->device, TLM_MEM_DEVICE);
	}
	verdict(o);
}

static bool async_api(unsigned api)
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

/* PyTorch's cudaMallocAsync backend probes (cacheInfo): a failed async
 * allocation followed, on the same thread and stream, by one of half its
 * size was a probe, not an OOM. */
static void probe_check(struct tlm__replay *rp, const struct tlm_event *ev)
{
	struct tlm_report *rep = rp->rep;
	if (!rp->probe_pending || ev->thread != rp->probe_thread)
		return;
	rp->probe_pending = false;
	if (!async_api(ev->api) || ev->stream != rp->probe_stream || ev->size != rp->probe_size >> 1)
		return;
	rep->probe_failures++;
	rep->ooms_total--;
	for (size_t i = rep->nooms; i-- > 0;)
		if (rep->ooms[i].event == rp->probe_ev) {
			memmove(&rep->ooms[i], &rep->ooms[i + 1], (rep->nooms - i - 1) * sizeof rep->ooms[i]);
			rep->nooms--;
			break;
		}
}

static void alloc_event(struct tlm__replay *rp, const struct tlm_event *ev)
{
	struct tlm_report *rep = rp->rep;
	int mk = mkind_of(ev->kind);
	bool block = ev->kind == TLM_KIND_BLOCK;
	if (!block)
		probe_check(rp, ev);
	if (ev->result) {
		if (block && ev->result == 2) {
			allocator_oom(rp, ev);
		} else if (mk >= 0 && ev->result == 2) { /* CUDA_ERROR_OUT_OF_MEMORY = cudaErrorMemoryAllocation */
			oom(rp, ev, mk);
			if (async_api(ev->api)) {
				rp->probe_pending = true;
				rp->probe_thread = ev->thread;
				rp->probe_stream = ev->stream;
				rp->probe_size = ev->size;
				rp->probe_ev = rep->events;
			}
		} else {
			rep->failed_allocations++;
		}
		return;
	}
	uint8_t ns = tlm_kind_ns(ev->kind);
	int16_t device = ev->device;
	if (ev->kind == TLM_KIND_VMM_MAPPING && device < 0) {
		/* cuMemMap names no device: the mapped handle's is the one */
		const struct tlm__live *h = tlm__live_find(&rp->live, TLM_NS_VMM_PHYS, ev->aux);
		if (h)
			device = h->device;
	}
	struct tlm__live *old = tlm__live_find(&rp->live, ns, ev->addr);
	if (old) {
		rep->inconsistencies++;
		release(rp, old, ev->time_ns, false);
	}
	struct tlm__acct *a = mk >= 0 ? acct(rp, ev->device, mk) : NULL;
	if (a && !block)
		settle(rp, a); /* a pending peak is settled on the layout it had: before this segment */
	struct tlm__live e = {
		.addr = ev->addr, .size = ev->size, .time_ns = ev->time_ns, .ev = rep->events,
		.stack_id = ev->stack_id, .raw_stack = rp->raw->stack_id,
		.tag = {TLM__NO_TAG, TLM__NO_TAG, TLM__NO_TAG, TLM__NO_TAG},
		.device = device, .ns = ns, .mkind = mk >= 0 ? (uint8_t)mk : 0xff,
	};
	struct tlm__live *put = tlm__live_put(&rp->live, &e);
	if (!put) {
		rp->oom_error = ENOMEM;
		return;
	}
	rp->put_ev = rep->events;
	if (rp->hooks && rp->hooks->alloc)
		rp->hooks->alloc(rp->hooks_ctx, put, ev);
	if (!a)
		return;
	if (block) {
		tlm__acct_block(a, true, ev->size, ev->time_ns, ev->stack_id);
		settle(rp, a);
	} else {
		tlm__acct_driver(a, true, ev->size, ev->time_ns, ev->stack_id);
	}
}

/* The totals a tap event carries: the allocator's own view, kept to compare. */
static void tap_totals(struct tlm__replay *rp, const struct tlm_event *ev)
{
	if (ev->result || (ev->flags & TLM_EVF_NO_TOTALS))
		return;
	struct tlm__acct *a = acct(rp, ev->device, TLM_MEM_DEVICE);
	if (!a)
		return;
	a->tap_totals = true;
	if (ev->aux > a->tap_peak_allocated)
		a->tap_peak_allocated = ev->aux;
	if (ev->stream > a->tap_peak_reserved)
		a->tap_peak_reserved = ev->stream;
}

/* Memory a reference cycle kept alive until the cyclic GC freed it. */
static void gc_add(struct tlm__replay *rp, const struct tlm__live *e)
{
	struct tlm_report_site *g = NULL;
	for (size_t i = 0; i < rp->ngc && !g; i++)
		if (rp->gc[i].device == e->device && rp->gc[i].stack_id == e->stack_id)
			g = &rp->gc[i];
	if (!g) {
		if (rp->ngc == 65536)
			return; /* bounded: the largest groups are the ones that matter */
		if (rp->ngc == rp->gc_cap && tlm__grow(&rp->gc, &rp->gc_cap, rp->ngc + 1, sizeof *rp->gc, 16)) {
			rp->oom_error = ENOMEM;
			return;
		}

		g = &rp->gc[rp->ngc++];
		*g = (struct tlm_report_site){.device = e->device, .stack_id = e->stack_id,
					      .first_ns = (int64_t)e->time_ns, .last_ns = (int64_t)e->time_ns};
	}
	tlm__site_add(g, e);
}

static void free_event(struct tlm__replay *rp, const struct tlm_event *ev)
{
	struct tlm_report *rep = rp->rep;
	if (ev->result) {
		rep->failed_frees++;
		return;
	}
	struct tlm__live *e = tlm__live_find(&rp->live, tlm_kind_ns(ev->kind), ev->addr);
	if (!e) {
		rep->unmatched_frees++;
		return;
	}
	struct tlm__acct *a = e->ns == TLM_NS_BLOCK && e->mkind != 0xff ? acct(rp, e->device, e->mkind) : NULL;
	if ((ev->flags & TLM_EVF_GC_FREED) && !(ev->flags & TLM_EVF_FINALIZING) && e->mkind != 0xff)
		gc_add(rp, e);
	tlm__outcome_free(rp, ev, e->size, e->ns == TLM_NS_BLOCK);
	release(rp, e, ev->time_ns, true);
	if (a)
		settle(rp, a);
}

void tlm__replay_event(struct tlm__replay *rp, const struct tlm_event *ev0)
{
	struct tlm_report *rep = rp->rep;
	struct tlm_event evc;
	const struct tlm_event *ev = ev0;
	if (ev0->stack_id && rep->priv && rep->priv->npy) { /* Python stacks: by their Python frames */
		evc = *ev0;
		evc.stack_id = tlm__priv_canon(rep->priv, ev0->stack_id);
		ev = &evc;
	}
	rp->ev = ev;
	rp->raw = ev0;
	rep->events++;
	if (ev->flags & TLM_EVF_CUPTI) {
		rep->cupti_only++;
		if (ev->api < TLM_API_COUNT)
			rep->cupti_only_by_api[ev->api]++;
	}
	if (!rp->have_t) {
		rp->first_t = rp->last_t = ev->time_ns;
		rp->have_t = true;
	} else if (ev->time_ns < rp->first_t) {
		rp->first_t = ev->time_ns;
	} else if (ev->time_ns > rp->last_t) {
		rp->last_t = ev->time_ns;
	}
	/* the first free made once Python's finalization began ends the run:
	 * what only teardown released was still live at the end */
	if ((ev->flags & TLM_EVF_FINALIZING) && !rp->snapped)
		tlm__replay_mark_end(rp, ev->time_ns);
	bool known_kind = tlm_kind_ns(ev->kind) != TLM_NS_NONE;
	if (ev->kind == TLM_KIND_BLOCK && (ev->op == TLM_OP_ALLOC || ev->op == TLM_OP_FREE)) {
		tap_totals(rp, ev);
		if (!ev->result) {
			struct tlm__acct *a = acct(rp, ev->device, TLM_MEM_DEVICE);
			if (a)
				a->last_block_ev = rep->events;
		}
	}
	switch (ev->op) {
	case TLM_OP_ALLOC:
		if (known_kind)
			alloc_event(rp, ev);
		else
			rep->unknown_events++;
		break;
	case TLM_OP_FREE:
		if (known_kind)
			free_event(rp, ev);
		else
			rep->unknown_events++;
		break;
	/* Pool lifetime is only noted: the memory a pool caches is not visible
	 * to tlm, only the allocations made from it. */
	case TLM_OP_POOL_CREATE: rep->pool_creates++; break;
	case TLM_OP_POOL_DESTROY: rep->pool_destroys++; break;
	case TLM_OP_POOL_TRIM: rep->pool_trims++; break;
	default: rep->unknown_events++; break;
	}
	if (ev->op == TLM_OP_ALLOC && known_kind)
		tlm__outcome_event(rp, ev);
}

void tlm__replay_end(struct tlm__replay *rp, uint64_t t)
{
	if (!rp->end_marked) {
		rp->end_marked = true;
		rp->end_t = t;
	}
}

void tlm__replay_snapshot(struct tlm__replay *rp)
{
	if (rp->snapped)
		return;
	rp->snapped = true;
	for (size_t i = 0; i < rp->accts.n; i++) {
		struct tlm__acct *a = &rp->accts.a[i];
		settle(rp, a);
		a->end_reserved = a->reserved;
		a->end_live_bytes = a->allocated;
		a->end_live_count = a->has_blocks ? a->block_count : a->driver_count;
	}
	if (tlm__sites_group_live(&rp->live, &rp->accts, &rp->snap, &rp->nsnap))
		rp->oom_error = ENOMEM;
	/* survivors allocated before their layer's peak were live at it */
	for (size_t i = 0; i <= rp->live.mask; i++) {
		const struct tlm__live *e = &rp->live.slot[i];
		if (e->ns == TLM_NS_NONE || e->mkind == 0xff)
			continue;
		struct tlm__acct *a = tlm__acct_get(&rp->accts, e->device, e->mkind);
		if (a && a->ps && tlm__acct_counts(a, e) && a->peak_allocated && e->time_ns <= a->peak_allocated_t)
			tlm__psites_persist(a->ps, e->stack_id, e->size);
	}
}

void tlm__replay_mark_end(struct tlm__replay *rp, uint64_t t)
{
	if (rp->snapped)
		return;
	rp->end_marked = true;
	rp->end_t = t;
	tlm__replay_snapshot(rp);
}
