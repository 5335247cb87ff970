/* SPDX-License-Identifier: MIT */
/*
 * render_summary.c - the short end-of-run report: at most 25 lines of at most
 * 100 columns. Line budget: 1 head, 1 note, 9 device lines (with their owners), 1 + 5 leak lines,
 * 1 + 3 OOM lines, 1 counters, 1 integrity, 1 command = 24.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/devmem.h"
#include "analysis/internal.h"
#include "render/render.h"
#include "render/render_owners.h"
#include "render/render_steps.h"

#define SUM_DEVICES 8
#define SUM_LEAKS 5
#define SUM_OOMS 2 /* with every other line, 25 in all */
#define SUM_GC_SCREEN 10 /* gc-freed sites the top one is told apart from */

int tlm_report_summary(struct tlm_report *r, FILE *f)
{
	char a[32], b[32], c[32], e[32];
	/* the run's end on the clock every later time uses (the trace start), not
	 * the span of its events: a peak "at" is never later than this */
	tlm__line(f, "tlm: pid %" PRIu32 ", %.3f s since the trace start, exit %s, %" PRIu64 " events, lost events %" PRIu64,
		  r->pid, r->run_end_ns > 0 ? (double)r->run_end_ns / 1e9 : 0.0, tlm__exit_name(r->exit), r->events,
		  r->lost_events);
	tlm__exit_note(f, r);
	char cs[700];
	if (tlm__cupti_status(cs, sizeof cs, r->cupti_state, NULL)) /* the detail is in the full report */
		tlm__line(f, "note: %s, so %s", cs, TLM__CUPTI_BLIND);
	else if (r->cupti_only) {
		char calls[160];
		tlm__cupti_calls(calls, sizeof calls, r);
		tlm__line(f, "warning: %" PRIu64 " calls seen only by CUPTI (bypassed the hooks): %s", r->cupti_only,
			  calls); /* clipped at 100 columns */
	}
	/* a machine without a usable libunwind: no owners, no native frames (asked
	 * for with TLM_STACK_DEPTH=0, it is no news) */
	if (tlm__native_stacks_off(r) && !strstr(r->native_stacks, "TLM_STACK_DEPTH=0"))
		tlm__line(f, "note: native stacks %s", r->native_stacks);
	size_t i = 0;
	for (int lines = 0; i < r->ndevices && lines < SUM_DEVICES; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		char dev[16];
		if (d->device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "dev %d", d->device);
		/* frag = 1 - the two figures before it: both taken at the allocated peak */
		tlm__line(f, "%s %s: peak %s of %s reserved at %s, frag %.2f, live at end %s in %" PRIu64, dev,
			  tlm__mkind_name(d->kind), tlm__human(b, sizeof b, d->peak_allocated),
			  tlm__human(a, sizeof a, d->reserved_at_peak_allocated),
			  tlm__secs(c, sizeof c, d->peak_allocated_ns), d->frag_at_peak,
			  tlm__human(e, sizeof e, d->live_bytes_at_end), d->live_allocs_at_end);
		if (++lines < SUM_DEVICES)
			lines += tlm__owners_summary(f, d);
	}
	if (i < r->ndevices)
		tlm__line(f, "... %zu more devices", r->ndevices - i);
	if (r->nleaks) {
		uint64_t tot = 0;
		for (size_t i = 0; i < r->nleaks; i++)
			tot += r->leaks[i].bytes;
		tlm__line(f, "leaks: %zu site%s, %s never freed%s", r->nleaks, r->nleaks == 1 ? "" : "s",
			  tlm__human(a, sizeof a, tot), r->nleaks > SUM_LEAKS ? " (top 5)" : "");
		/* the lines shown are one screen: each label tells its site apart (labels.c) */
		struct tlm__labels L;
		tlm__labels_sites(&L, r, r->leaks, r->nleaks < SUM_LEAKS ? r->nleaks : SUM_LEAKS, TLM__LABEL_SEP);
		for (size_t i = 0; i < r->nleaks && i < SUM_LEAKS; i++)
			tlm__line(f, "  %10s in %-6" PRIu64 " +%s/s  %s", tlm__human(a, sizeof a, r->leaks[i].bytes),
				  r->leaks[i].count, tlm__human(b, sizeof b, tlm__clamp_u64(r->leaks[i].rate)),
				  tlm__label(&L, i));
		tlm__labels_free(&L);
	} else {
		size_t n = tlm__steps_leaks_freed(r); /* a leak in the steps, freed before the end */
		if (n)
			tlm__line(f, "leaks: none at the end; %zu site%s grew in most steps, freed later (steps, below)",
				  n, n == 1 ? "" : "s");
		else
			tlm__line(f, "leaks: none");
	}
	tlm__steps_summary(f, r);
	if (r->ngc_freed) { /* what to do, and where the most was allocated */
		uint64_t tot = 0;
		for (size_t i = 0; i < r->ngc_freed; i++)
			tot += r->gc_freed[i].bytes;
		struct tlm__labels L;
		tlm__labels_sites(&L, r, r->gc_freed, r->ngc_freed < SUM_GC_SCREEN ? r->ngc_freed : SUM_GC_SCREEN,
				  TLM__LABEL_SEP);
		tlm__line(f, "gc-freed: %s held by ref cycles (break, del, weakref); top: %s",
			  tlm__human(a, sizeof a, tot), tlm__label(&L, 0)); /* one line: the summary stays <= 25 */
		tlm__labels_free(&L);
	}
	if (r->ooms_total) {
		char cnt[160];
		tlm__outcome_counts(cnt, sizeof cnt, r);
		tlm__line(f, "out of memory: %s", cnt);
		/* with the device's view, an OOM takes two lines of the same budget;
		 * the raised and fatal ones first, then the recovered ones apart */
		size_t lines = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < r->nooms && lines < SUM_OOMS; i++) {
				const struct tlm_report_oom *o = &r->ooms[i];
				if ((o->outcome == TLM_OOM_RECOVERED) != pass)
					continue;
				if (pass) {
					char d[32];
					tlm__line(f, "  recovered %s dev %d: %s requested; the retry freed %s of cache first",
						  tlm__secs(c, sizeof c, o->time_ns), o->device,
						  tlm__human(a, sizeof a, o->requested), tlm__human(d, sizeof d, o->retry_freed));
					lines++;
					continue;
				}
				tlm__line(f, "  %s %s dev %d: %s requested, %s free on the device: %s",
					  tlm__outcome_name(o->outcome), tlm__secs(c, sizeof c, o->time_ns), o->device,
					  tlm__human(a, sizeof a, o->requested), tlm__human(b, sizeof b, o->device_free),
					  tlm__verdict_name(o->verdict));
				lines += 1 + tlm__devmem_summary_oom(f, r, i);
			}
		if (r->whatif_hint)
			tlm__line(f, "  %s", r->whatif_hint);
	}
	if (r->unmatched_frees || r->inconsistencies)
		tlm__line(f, "frees of unknown addresses: %" PRIu64 ", allocations at a live address: %" PRIu64,
			  r->unmatched_frees, r->inconsistencies);
	if (r->nerrors)
		tlm__line(f, "integrity errors: %zu", r->nerrors);
	tlm__command_line(f, "full report: tlm report ", r->path);
	return ferror(f) ? -1 : 0;
}
