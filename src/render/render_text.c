/* SPDX-License-Identifier: MIT */
/*
 * render_text.c - the full report for a terminal: compact, aligned, at most
 * 100 columns (tlm__line cuts anything longer), sizes in KiB/MiB/GiB with one
 * decimal, times in seconds since the trace start. docs/report.md describes
 * each section. Lists are cut to the first TEXT_SITES entries; the JSON
 * output has them all.
 */
#include <inttypes.h>
#include <signal.h>
#include <string.h>

#include "analysis/devmem.h"
#include "analysis/internal.h"
#include "render/render.h"
#include "render/render_owners.h"
#include "render/render_steps.h"

#define TEXT_SITES 10
#define TEXT_FRAMES 6
#define TEXT_OOMS 10
#define TEXT_PEAK_SITES 5 /* per device and kind */

static void more_frames(FILE *f, size_t k, const char *note)
{
	if (k)
		tlm__line(f, "        ... %zu more frame%s%s", k, k == 1 ? "" : "s", note);
	else if (*note)
		tlm__line(f, "        ...%s", note);
}

/* The first TEXT_FRAMES frames, and the frames the site's label shows
 * (labels.c: what tells it apart) wherever they are, never hidden. */
static void stack_lines(FILE *f, struct tlm_report *r, uint32_t stack_id, const struct tlm__labels *L, size_t li)
{
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(r, stack_id, &fr);
	if (!n) {
		tlm__line(f, "        (no stack recorded)");
		return;
	}
	const struct tlm__label_frames *must = L && L->shown && li < L->n ? &L->shown[li] : NULL;
	char buf[512];
	size_t skipped = 0;
	for (size_t i = 0; i < n; i++) {
		bool show = i < TEXT_FRAMES;
		for (size_t k = 0; must && k < must->n && !show; k++)
			show = must->idx[k] == i;
		if (!show) {
			skipped++;
			continue;
		}
		more_frames(f, skipped, "");
		skipped = 0;
		tlm__frame_text(buf, sizeof buf, &fr[i]);
		tlm__line(f, "        %s %s", i ? "from" : "at  ", buf);
	}
	more_frames(f, skipped, tlm_report_stack_cut(r, stack_id) ? " (the Python stack was cut at 64 frames)" : "");
}

void tlm__exit_note(FILE *f, const struct tlm_report *r)
{
	if (r->exit == TLM_REPORT_SIGNAL && r->signal_at_py_exit) {
		/* PyTorch's autograd device thread drops its last graph task, whose
		 * Python objects need the GIL, after the main thread began to
		 * finalize: CPython ends that thread, std::terminate (docs/simulate.md) */
		tlm__line(f, "note: SIGABRT while Python exited, after the program's end%s",
			  r->alloc_conf_known ? ": PyTorch's own (its autograd thread)"
					      : " (a thread that needed the GIL then)");
	} else if (r->exit == TLM_REPORT_SIGNAL) {
		const char *abbr = sigabbrev_np(r->signo);
		tlm__line(f, "note: the process died of signal %d%s%s; the report covers what was recorded", r->signo,
			  abbr ? " SIG" : "", abbr ? abbr : "");
	} else if (r->exit == TLM_REPORT_TRUNCATED) {
		tlm__line(f, "note: the trace is truncated (%s); the report covers what was recorded",
			  r->truncation ? r->truncation : "no END record");
	} else if (!strcmp(r->end_how, "exec")) {
		tlm__line(f, "note: the process replaced itself by exec; its new image has a trace of its own");
	} else if (r->end_how[0] && strcmp(r->end_how, "exit")) {
		tlm__line(f, "note: the process left by %s (no exit handlers ran); the trace is complete", r->end_how);
	}
}

static void head(FILE *f, const struct tlm_report *r)
{
	char cmd[512] = "", *p = cmd;
	for (uint32_t i = 0; i < r->argc && p < cmd + sizeof cmd - 2; i++)
		p += snprintf(p, (size_t)(cmd + sizeof cmd - p), "%s%s", i ? " " : "", r->argv[i]);
	char a[32], b[32], d[32];
	tlm__line(f, "tlm report: %s", r->path);
	tlm__line(f, "process:    pid %" PRIu32 ": %s", r->pid, cmd);
	tlm__line(f, "times:      %s", TLM__TIME_ORIGIN);
	if (r->have_events)
		tlm__line(f, "run:        ended at %s, first event at %s, %" PRIu64 " events, exit %s, lost events %" PRIu64,
			  tlm__secs(b, sizeof b, r->run_end_ns), tlm__secs(a, sizeof a, r->run_first_ns), r->events,
			  tlm__exit_name(r->exit), r->lost_events);
	else
		tlm__line(f, "run:        no events, exit %s, lost events %" PRIu64, tlm__exit_name(r->exit),
			  r->lost_events);
	(void)d;
	tlm__line(f, "sources:    interposition %" PRIu64 ", CUPTI only %" PRIu64, r->events - r->cupti_only,
		  r->cupti_only);
	char cs[700];
	bool blind = tlm__cupti_status(cs, sizeof cs, r->cupti_state, r->cupti_detail);
	tlm__line(f, "  %s", cs);
	if (blind)
		tlm__line(f, "    so %s", TLM__CUPTI_BLIND);
	if (tlm__native_stacks_off(r)) /* the trace's text: tlm__line shows it safe */
		tlm__line(f, "  native stacks %s", r->native_stacks);
	if (r->cupti_only) {
		char calls[256];
		tlm__cupti_calls(calls, sizeof calls, r);
		tlm__line(f, "  warning: %" PRIu64 " call%s bypassed tlm's hooks and %s seen only by CUPTI:",
			  r->cupti_only, r->cupti_only == 1 ? "" : "s", r->cupti_only == 1 ? "was" : "were");
		tlm__line(f, "    %s", calls);
	}
	tlm__exit_note(f, r);
}

static void memory(FILE *f, const struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	tlm__line(f, "MEMORY per device and kind");
	if (!r->ndevices) {
		tlm__line(f, "  no memory was allocated");
		return;
	}
	tlm__line(f, "%3s %-11s %14s %9s %13s %5s %13s %5s %11s %7s", "dev", "kind", "peak allocated", "at",
		  "reserved then", "frag", "peak reserved", "ext", "live at end", "allocs");
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		char pr[32], rt[32], pa[32], pat[32], live[32], dev[16], ext[16];
		if (d->device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "%d", d->device);
		if (d->ext_known)
			snprintf(ext, sizeof ext, "%.2f", d->ext_frag_at_peak);
		else
			snprintf(ext, sizeof ext, "-");
		tlm__line(f, "%3s %-11s %14s %9s %13s %5.2f %13s %5s %11s %7" PRIu64, dev, tlm__mkind_name(d->kind),
			  tlm__human(pa, sizeof pa, d->peak_allocated), tlm__secs(pat, sizeof pat, d->peak_allocated_ns),
			  tlm__human(rt, sizeof rt, d->reserved_at_peak_allocated), d->frag_at_peak,
			  tlm__human(pr, sizeof pr, d->peak_reserved), ext,
			  tlm__human(live, sizeof live, d->live_bytes_at_end), d->live_allocs_at_end);
	}
	tlm__line(f, "  frag = 1 - peak allocated / reserved then (at the allocated peak); ext = 1 - largest free");
	tlm__line(f, "  gap / free inside reserved memory at the reserved peak ('-': no allocator tap)");
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		char a[32], b[32], c[32];
		if (d->peak_reserved != d->reserved_at_peak_allocated || d->allocated_at_peak_reserved != d->peak_allocated)
			tlm__line(f, "  dev %d %s: at the reserved peak (%s) %s reserved, %s allocated: frag %.2f", d->device,
				  tlm__mkind_name(d->kind), tlm__secs(c, sizeof c, d->peak_reserved_ns),
				  tlm__human(a, sizeof a, d->peak_reserved),
				  tlm__human(b, sizeof b, d->allocated_at_peak_reserved), d->frag_at_reserved_peak);
		if (d->allocator_totals)
			tlm__line(f, "  dev %d: PyTorch's allocator reported peaks of %s allocated, %s reserved", d->device,
				  tlm__human(a, sizeof a, d->allocator_peak_allocated),
				  tlm__human(b, sizeof b, d->allocator_peak_reserved));
	}
}

static void site_head(FILE *f, size_t i, const struct tlm_report_site *s, const char *what)
{
	char dev[16], by[32], a[32], b[32];
	if (s->device < 0)
		snprintf(dev, sizeof dev, "host");
	else
		snprintf(dev, sizeof dev, "dev %d", s->device);
	tlm__line(f, "%4zu. %-7s %11s in %" PRIu64 " allocation%s, allocated %s .. %s%s", i + 1, dev,
		  tlm__human(by, sizeof by, s->bytes), s->count, s->count == 1 ? "" : "s",
		  tlm__secs(a, sizeof a, s->first_ns), tlm__secs(b, sizeof b, s->last_ns), what);
}

static uint64_t total(const struct tlm_report_site *s, size_t n, uint64_t *count)
{
	uint64_t b = 0;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		b += s[i].bytes;
		*count += s[i].count;
	}
	return b;
}

static void more(FILE *f, size_t n)
{
	if (n > TEXT_SITES)
		tlm__line(f, "  ... %zu more (tlm report --format json lists all)", n - TEXT_SITES);
}

/* What held memory at each allocated peak: transient (freed before the end:
 * activations, temporaries) or persistent (weights, optimizer state, leaks). */
static void at_peak(FILE *f, struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	if (!r->nat_peak) {
		tlm__line(f, "AT PEAK: nothing was allocated");
		return;
	}
	tlm__line(f, "AT PEAK: what held memory when allocated memory peaked (transient: freed before the end,");
	tlm__line(f, "  e.g. activations held from forward to backward; persistent: still live at the end)");
	for (size_t g = 0, e; g < r->nat_peak; g = e) {
		const struct tlm_report_peak_site *s = r->at_peak;
		uint64_t bytes = 0, persist = 0;
		for (e = g; e < r->nat_peak && s[e].device == s[g].device && s[e].kind == s[g].kind; e++) {
			bytes += s[e].bytes;
			persist += s[e].persistent_bytes;
		}
		char dev[16], a[32], b[32], c[32], t[32];
		int64_t when = 0;
		for (size_t i = 0; i < r->ndevices; i++)
			if (r->devices[i].device == s[g].device && r->devices[i].kind == s[g].kind)
				when = r->devices[i].peak_allocated_ns;
		if (s[g].device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "dev %d", s[g].device);
		tlm__line(f, "%s %s: %s at %s: %s transient, %s persistent, in %zu site%s", dev,
			  tlm__mkind_name(s[g].kind), tlm__human(a, sizeof a, bytes), tlm__secs(t, sizeof t, when),
			  tlm__human(b, sizeof b, bytes - persist), tlm__human(c, sizeof c, persist), e - g,
			  e - g == 1 ? "" : "s");
		struct tlm__labels L; /* one screen: this (device, kind)'s sites shown */
		tlm__labels_peak(&L, r, s + g, e - g < TEXT_PEAK_SITES ? e - g : TEXT_PEAK_SITES, TLM__LABEL_SEP);
		for (size_t i = g; i < e && i < g + TEXT_PEAK_SITES; i++) {
			uint64_t tb = s[i].bytes - s[i].persistent_bytes, tc = s[i].count - s[i].persistent_count;
			tlm__line(f, "%4zu. %11s in %" PRIu64 ": %s transient in %" PRIu64 ", %s persistent in %" PRIu64,
				  i - g + 1, tlm__human(a, sizeof a, s[i].bytes), s[i].count, tlm__human(b, sizeof b, tb), tc,
				  tlm__human(c, sizeof c, s[i].persistent_bytes), s[i].persistent_count);
			stack_lines(f, r, s[i].stack_id, &L, i - g);
		}
		tlm__labels_free(&L);
		if (e - g > TEXT_PEAK_SITES)
			tlm__line(f, "  ... %zu more (tlm report --format json lists all)", e - g - TEXT_PEAK_SITES);
	}
	tlm__line(f, "  Transient memory at the peak is what activation checkpointing, a smaller batch or");
	tlm__line(f, "  freeing earlier lowers; persistent memory is what the run keeps (see LIVE AT END).");
}

static void live(FILE *f, struct tlm_report *r)
{
	uint64_t c, b = total(r->live, r->nlive, &c);
	char h[32];
	tlm__line(f, "%s", "");
	tlm__line(f, "LIVE AT END: %zu site%s, %s in %" PRIu64 " allocation%s still live when the run ended", r->nlive,
		  r->nlive == 1 ? "" : "s", tlm__human(h, sizeof h, b), c, c == 1 ? "" : "s");
	struct tlm__labels L;
	tlm__labels_sites(&L, r, r->live, r->nlive < TEXT_SITES ? r->nlive : TEXT_SITES, TLM__LABEL_SEP);
	for (size_t i = 0; i < r->nlive && i < TEXT_SITES; i++) {
		site_head(f, i, &r->live[i], "");
		stack_lines(f, r, r->live[i].stack_id, &L, i);
	}
	tlm__labels_free(&L);
	more(f, r->nlive);
}

static void leaks(FILE *f, struct tlm_report *r)
{
	uint64_t c, b = total(r->leaks, r->nleaks, &c);
	char h[32];
	tlm__line(f, "%s", "");
	if (!r->nleaks) {
		tlm__line(f, "LEAKS: none (a leak: >= 3 survivors from one site, allocated over >= 25%% of the");
		tlm__line(f, "  run and still in its second half)");
		size_t n = tlm__steps_leaks_freed(r);
		if (n)
			tlm__line(f, "  but %zu site%s left memory in most steps and freed it later: LEAKS PER STEP", n,
				  n == 1 ? "" : "s");
		return;
	}
	tlm__line(f, "LEAKS: %zu site%s kept adding memory never freed: %s in %" PRIu64 " allocations", r->nleaks,
		  r->nleaks == 1 ? "" : "s", tlm__human(h, sizeof h, b), c);
	struct tlm__labels L;
	tlm__labels_sites(&L, r, r->leaks, r->nleaks < TEXT_SITES ? r->nleaks : TEXT_SITES, TLM__LABEL_SEP);
	for (size_t i = 0; i < r->nleaks && i < TEXT_SITES; i++) {
		char rate[48], hr[32];
		snprintf(rate, sizeof rate, ", +%s/s", tlm__human(hr, sizeof hr, tlm__clamp_u64(r->leaks[i].rate)));
		site_head(f, i, &r->leaks[i], rate);
		stack_lines(f, r, r->leaks[i].stack_id, &L, i);
	}
	tlm__labels_free(&L);
	more(f, r->nleaks);
}

/* Printed only when a Python run had memory freed by its cyclic GC. */
static void gc_freed(FILE *f, struct tlm_report *r)
{
	if (!r->ngc_freed)
		return;
	uint64_t c, b = total(r->gc_freed, r->ngc_freed, &c);
	char h[32];
	tlm__line(f, "%s", "");
	tlm__line(f, "GC-FREED: %zu site%s: %s in %" PRIu64 " allocation%s kept alive by reference cycles until",
		  r->ngc_freed, r->ngc_freed == 1 ? "" : "s", tlm__human(h, sizeof h, b), c, c == 1 ? "" : "s");
	tlm__line(f, "  Python's cyclic GC ran; break the cycle, `del` the reference, or hold it with a weakref");
	struct tlm__labels L;
	tlm__labels_sites(&L, r, r->gc_freed, r->ngc_freed < TEXT_SITES ? r->ngc_freed : TEXT_SITES, TLM__LABEL_SEP);
	for (size_t i = 0; i < r->ngc_freed && i < TEXT_SITES; i++) {
		site_head(f, i, &r->gc_freed[i], "");
		stack_lines(f, r, r->gc_freed[i].stack_id, &L, i);
	}
	tlm__labels_free(&L);
	more(f, r->ngc_freed);
}

static void verdict_line(FILE *f, const struct tlm_report_oom *o)
{
	char req[32], avail[32];
	uint64_t a = o->reserved_free + o->device_free;
	if (a < o->reserved_free)
		a = UINT64_MAX;
	tlm__human(req, sizeof req, o->requested);
	tlm__human(avail, sizeof avail, a);
	if (o->verdict == TLM_OOM_FRAGMENTATION)
		tlm__line(f, "      fragmentation: %s was free (reserved-but-free + device free) but not in one piece",
			  avail);
	else
		tlm__line(f, "      exhaustion: only %s free in all (reserved-but-free + device free) for %s", avail,
			  req);
}

static void ooms(FILE *f, struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	if (!r->ooms_total) {
		tlm__line(f, "OUT OF MEMORY: none");
		return;
	}
	char cnt[160], oc[256];
	tlm__outcome_counts(cnt, sizeof cnt, r);
	tlm__line(f, "OUT OF MEMORY: %" PRIu64 " failed allocation%s: %s", r->ooms_total, r->ooms_total == 1 ? "" : "s",
		  cnt);
	struct tlm__labels L;
	tlm__labels_ooms(&L, r);
	for (size_t i = 0; i < r->nooms && i < TEXT_OOMS; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		char t[32], req[32], df[32], rf[32], lf[32], dev[16];
		if (o->device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "dev %d", o->device);
		tlm__line(f, "%4zu. %s %s %s: requested %s, device free %s", i + 1, tlm__secs(t, sizeof t, o->time_ns),
			  dev, tlm__mkind_name(o->kind), tlm__human(req, sizeof req, o->requested),
			  tlm__human(df, sizeof df, o->device_free));
		tlm__line(f, "      reserved but free %s (largest gap %s), fragmentation %.2f",
			  tlm__human(rf, sizeof rf, o->reserved_free), tlm__human(lf, sizeof lf, o->largest_free), o->frag);
		if (o->allocator && o->driver_request) {
			char dr[32];
			tlm__line(f, "      reported by PyTorch's allocator; %" PRIu64 " failed driver request%s of %s on the way",
				  o->driver_failures, o->driver_failures == 1 ? "" : "s",
				  tlm__human(dr, sizeof dr, o->driver_request));
		} else if (o->allocator) {
			tlm__line(f, "      reported by PyTorch's allocator; %" PRIu64 " failed driver request%s on the way",
				  o->driver_failures, o->driver_failures == 1 ? "" : "s");
		}
		tlm__outcome_text(oc, sizeof oc, r, o);
		tlm__line(f, "      %s", oc);
		verdict_line(f, o);
		tlm__devmem_text_oom(f, r, i);
		tlm__owners_text_oom(f, r, i);
		stack_lines(f, r, o->stack_id, &L, i);
	}
	tlm__labels_free(&L);
	if (r->ooms_total > TEXT_OOMS)
		tlm__line(f, "  ... %" PRIu64 " more", r->ooms_total - (r->nooms < TEXT_OOMS ? r->nooms : TEXT_OOMS));
	if (r->whatif_hint) /* a setting that avoids a fragmentation OOM (wi_hint.c) */
		tlm__line(f, "  %s", r->whatif_hint);
}

static void churn(FILE *f, struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	if (!r->nchurn) {
		tlm__line(f, "CHURN: none (no site freed and reallocated one size >= 10 times)");
		return;
	}
	tlm__line(f, "CHURN: %zu site%s allocate and free the same size over and over (reuse candidates)",
		  r->nchurn, r->nchurn == 1 ? "" : "s");
	struct tlm__labels L;
	tlm__labels_sites(&L, r, r->churn, r->nchurn < TEXT_SITES ? r->nchurn : TEXT_SITES, TLM__LABEL_SEP);
	for (size_t i = 0; i < r->nchurn && i < TEXT_SITES; i++) {
		const struct tlm_report_site *s = &r->churn[i];
		char dev[16], sz[32];
		if (s->device < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "dev %d", s->device);
		tlm__line(f, "%4zu. %-7s %11s x %" PRIu64 " cycles, %.1f/s", i + 1, dev, tlm__human(sz, sizeof sz, s->size),
			  s->count, s->rate);
		stack_lines(f, r, s->stack_id, &L, i);
	}
	tlm__labels_free(&L);
	more(f, r->nchurn);
}

static void other(FILE *f, const struct tlm_report *r)
{
	tlm__line(f, "%s", "");
	tlm__line(f, "OTHER");
	tlm__line(f, "  frees of unknown addresses: %" PRIu64, r->unmatched_frees);
	tlm__line(f, "  allocations at a live address: %" PRIu64, r->inconsistencies);
	tlm__line(f, "  failed allocations (not out of memory): %" PRIu64 ", failed frees: %" PRIu64,
		  r->failed_allocations, r->failed_frees);
	if (r->pool_creates || r->pool_destroys || r->pool_trims)
		tlm__line(f, "  memory pools: %" PRIu64 " created, %" PRIu64 " destroyed, %" PRIu64 " trimmed",
			  r->pool_creates, r->pool_destroys, r->pool_trims);
	if (r->unknown_events)
		tlm__line(f, "  events of unknown kinds (ignored): %" PRIu64, r->unknown_events);
	if (r->churn_untracked)
		tlm__line(f, "  frees not grouped for churn (table full): %" PRIu64, r->churn_untracked);
	if (r->nerrors)
		tlm__line(f, "  integrity errors: %zu (tlm info lists them); sections cover the readable chunks",
			  r->nerrors);
}

int tlm_report_text(struct tlm_report *r, FILE *f)
{
	head(f, r);
	memory(f, r);
	tlm__devmem_text(f, r);
	tlm__owners_text(f, r);
	at_peak(f, r);
	live(f, r);
	leaks(f, r);
	tlm__steps_text(f, r);
	gc_freed(f, r);
	ooms(f, r);
	churn(f, r);
	other(f, r);
	return ferror(f) ? -1 : 0;
}
