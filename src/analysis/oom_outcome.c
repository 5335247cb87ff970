/* SPDX-License-Identifier: MIT */
/*
 * oom_outcome.c - what followed each failed allocation (report.h, enum
 * tlm_oom_outcome; docs/report.md, OUT OF MEMORY).
 *
 * Recovered: after a failed driver allocation, the same thread freed memory
 * on the device (PyTorch's allocator releasing its cached segments) and the
 * same request then succeeded, before the thread's next allocator block and
 * within TLM__RETRY_NS. PyTorch's allocator folds the failures it gives up
 * on into its own OOM (replay.c), which is never recovered. Fatal: the
 * process ended by a signal, was cut, or exited with a non-zero status
 * (PROP exit.status), and its thread allocated nothing after its last
 * failure that was not recovered. Every other one was raised: the program
 * got the error and went on.
 */
#include "analysis/internal.h"

#define TLM__RETRY_NS 10000000000ull

static struct tlm_report_oom *by_event(struct tlm_report *rep, uint64_t ev)
{
	for (size_t i = rep->nooms; i-- > 0;)
		if (rep->ooms[i].event == ev)
			return &rep->ooms[i];
	return NULL;
}

void tlm__outcome_free(struct tlm__replay *rp, const struct tlm_event *ev, uint64_t size, bool block)
{
	if (!rp->watch.open || block || ev->thread != rp->watch.thread || ev->device != rp->watch.device)
		return;
	rp->watch.freed += size;
	rp->watch.frees++;
}

void tlm__outcome_event(struct tlm__replay *rp, const struct tlm_event *ev)
{
	struct tlm_report *rep = rp->rep;
	bool block = ev->kind == TLM_KIND_BLOCK;
	if (ev->result == 2) {
		/* a recorded OOM is the last one (a probe, a full list: none) */
		const struct tlm_report_oom *o = rep->nooms ? &rep->ooms[rep->nooms - 1] : NULL;
		if (!o || o->event != rep->events)
			return;
		rp->last_oom_ev = o->event;
		rp->last_oom_thread = ev->thread;
		rp->allocs_after_oom = 0;
		if (block) {
			rp->watch.open = false; /* the allocator gave up: its failures are folded into this one */
			return;
		}
		rp->watch.open = true;
		rp->watch.ev = o->event;
		rp->watch.size = ev->size;
		rp->watch.t = ev->time_ns;
		rp->watch.freed = rp->watch.frees = 0;
		rp->watch.thread = ev->thread;
		rp->watch.device = ev->device;
		return;
	}
	if (ev->result)
		return;
	if (ev->thread == rp->last_oom_thread)
		rp->allocs_after_oom++;
	if (!rp->watch.open || ev->thread != rp->watch.thread)
		return;
	if (ev->time_ns - rp->watch.t > TLM__RETRY_NS) {
		rp->watch.open = false;
		return;
	}
	if (block) { /* the allocator went on without a retry of that size */
		rp->watch.open = false;
		return;
	}
	if (ev->device != rp->watch.device || ev->size != rp->watch.size || !rp->watch.frees)
		return;
	struct tlm_report_oom *o = by_event(rep, rp->watch.ev);
	if (o) {
		o->outcome = TLM_OOM_RECOVERED;
		o->retry_freed = rp->watch.freed;
		o->retry_frees = rp->watch.frees;
		o->retry_ns = (int64_t)(ev->time_ns - rp->watch.t);
	}
	if (rp->last_oom_ev == rp->watch.ev)
		rp->last_oom_ev = 0;
	rp->watch.open = false;
}

void tlm__outcome_finish(struct tlm_report *rep, const struct tlm__replay *rp)
{
	bool died = rep->exit != TLM_REPORT_CLEAN || rep->job.exit_status > 0;
	for (size_t i = 0; i < rep->nooms; i++) {
		struct tlm_report_oom *o = &rep->ooms[i];
		if (o->outcome != TLM_OOM_RECOVERED && died && o->event == rp->last_oom_ev && !rp->allocs_after_oom)
			o->outcome = TLM_OOM_FATAL;
		rep->ooms_by_outcome[o->outcome]++;
	}
}
