/* SPDX-License-Identifier: MIT */
/*
 * live_fmt.c - the lines a view is said in, shared by the plain text and the
 * screen so that both say the same: the process, each device now and at
 * peak, steps, the forecast, OOMs, a site row, and the history as marks.
 * Sizes and times as the report prints them (tlm__human, tlm__secs).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "live_fmt.h"
#include "render/render.h"

const char *const tlm_live_sort_names[TLM_LIVE_NSORT] = {"bytes", "growth", "count", "newest"};

char *tlm_live_duration(char *buf, size_t n, double s)
{
	if (s < 0 || s != s)
		s = 0;
	if (s < 60)
		snprintf(buf, n, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, n, "%d min %d s", (int)(s / 60), (int)s % 60);
	else if (s < 86400 * 2)
		snprintf(buf, n, "%.1f h", s / 3600);
	else
		snprintf(buf, n, "%.1f d", s / 86400);
	return buf;
}

const char *tlm__live_state_word(const struct tlm_live_view *v)
{
	switch (v->state) {
	case TLM_LIVE_WAITING: return "waiting";
	case TLM_LIVE_RUNNING: return v->read_bytes + (64u << 10) < v->file_bytes ? "reading" : "running";
	case TLM_LIVE_ENDED: return "ended";
	default: return "failed";
	}
}

void tlm__live_state_line(char *buf, size_t n, const struct tlm_live_view *v)
{
	char t[32], a[32], b[32];
	if (v->state == TLM_LIVE_WAITING || v->state == TLM_LIVE_FAILED) {
		snprintf(buf, n, "%s: %s", tlm__live_state_word(v), v->why);
		return;
	}
	size_t k = (size_t)snprintf(buf, n, "%s%s%s%s, %s since the trace start, %" PRIu64 " events",
				    tlm__live_state_word(v), v->state == TLM_LIVE_ENDED ? " (" : "",
				    v->state == TLM_LIVE_ENDED ? v->why : "", v->state == TLM_LIVE_ENDED ? ")" : "",
				    tlm__secs(t, sizeof t, v->now_ns), v->events);
	if (k < n && v->state == TLM_LIVE_RUNNING && v->events_per_s >= 0)
		k += (size_t)snprintf(buf + k, n - k, " (%.0f/s)", v->events_per_s);
	if (k < n && v->read_bytes + (64u << 10) < v->file_bytes)
		k += (size_t)snprintf(buf + k, n - k, ", read %s of %s", tlm__human(a, sizeof a, v->read_bytes),
				      tlm__human(b, sizeof b, v->file_bytes));
	if (k < n && v->lost)
		k += (size_t)snprintf(buf + k, n - k, ", lost %" PRIu64, v->lost);
	if (k < n && v->integrity_errors)
		snprintf(buf + k, n - k, ", %" PRIu64 " damaged chunks", v->integrity_errors);
}

void tlm__live_dev_name(char *buf, size_t n, const struct tlm_live_dev *d)
{
	if (d->kind == TLM_MEM_HOST_PINNED)
		snprintf(buf, n, "host pinned");
	else
		snprintf(buf, n, "dev %d%s", d->device, d->kind == TLM_MEM_MANAGED ? " managed" : "");
}

void tlm__live_dev_line(char *buf, size_t n, const struct tlm_live_dev *d)
{
	char nm[32], r[32], rp[32], a[32], ap[32], t[32];
	tlm__live_dev_name(nm, sizeof nm, d);
	size_t k = (size_t)snprintf(buf, n, "%-9s reserved %s (peak %s), allocated %s (peak %s)", nm,
				    tlm__human(r, sizeof r, d->reserved), tlm__human(rp, sizeof rp, d->peak_reserved),
				    tlm__human(a, sizeof a, d->allocated), tlm__human(ap, sizeof ap, d->peak_allocated));
	if (k < n && d->total)
		snprintf(buf + k, n - k, " of %s", tlm__human(t, sizeof t, d->total));
}

void tlm__live_steps_line(char *buf, size_t n, const struct tlm_live_view *v)
{
	char d[32];
	if (!v->steps_found) {
		snprintf(buf, n, "steps: none found (%s)", v->steps_why ? v->steps_why : "no allocations");
		return;
	}
	snprintf(buf, n, "steps: %zu in the last %s, %.3f s per step (%.2f steps/s)", v->steps,
		 tlm_live_duration(d, sizeof d, v->seconds_per_step * (double)v->steps), v->seconds_per_step,
		 v->seconds_per_step > 0 ? 1.0 / v->seconds_per_step : 0.0);
}

/* The report's FORECAST line (render_steps.c), for one device. */
void tlm__live_forecast_line(char *buf, size_t n, const struct tlm_report_forecast *fc)
{
	char a[32], d[32];
	if (!fc->known) {
		if (fc->growth_per_step)
			snprintf(buf, n, "forecast: dev %d: +%s per step; no forecast: %s", fc->device,
				 tlm__human(a, sizeof a, fc->growth_per_step), fc->why_not);
		else
			snprintf(buf, n, "forecast: dev %d: %s", fc->device, fc->why_not);
		return;
	}
	snprintf(buf, n, "forecast: dev %d: +%s per step (%s); out of memory after %" PRIu64 " more steps (%s)",
		 fc->device, tlm__human(a, sizeof a, fc->growth_per_step), fc->steady ? "steady" : "irregular",
		 fc->steps_to_oom, tlm_live_duration(d, sizeof d, fc->seconds_to_oom));
}

void tlm__live_oom_line(char *buf, size_t n, const struct tlm_live_view *v)
{
	char a[32], t[32];
	if (!v->ooms) {
		snprintf(buf, n, "out of memory: none");
		return;
	}
	const struct tlm_report_oom *o = &v->last_oom;
	snprintf(buf, n, "out of memory: %" PRIu64 " so far; %s at %s: %s on dev %d (%s) at %s", v->ooms,
		 v->ooms > 1 ? "the last kept" : "it", tlm__secs(t, sizeof t, o->time_ns), tlm__human(a, sizeof a, o->requested),
		 o->device, tlm__verdict_name(o->verdict), v->oom_label);
}

void tlm__live_site_head(char *buf, size_t n)
{
	snprintf(buf, n, "%11s %8s %11s  %s", "BYTES", "ALLOCS", "PER STEP", "SITE");
}

void tlm__live_site_line(char *buf, size_t n, const struct tlm_live_site *s)
{
	char b[32], g[32];
	if (s->leak)
		snprintf(g, sizeof g, "+%s", tlm__human(b, sizeof b, s->per_step));
	else
		snprintf(g, sizeof g, "-");
	snprintf(buf, n, "%11s %8" PRIu64 " %11s  %s", tlm__human(b, sizeof b, s->bytes), s->count, g, s->label);
}

/* Marks of a history, the highest allocated in each of w equal spans of
 * the last `secs` seconds, on a scale of the highest of them. */
void tlm__live_marks(char *buf, size_t w, const struct tlm_live_dev *d, size_t secs, const char *ramp)
{
	size_t levels = strlen(ramp), have = d->nhist < secs ? d->nhist : secs;
	uint64_t top = 0;
	for (size_t i = d->nhist - have; i < d->nhist; i++)
		top = d->hist_allocated[i] > top ? d->hist_allocated[i] : top;
	for (size_t c = 0; c < w; c++) {
		/* span c covers seconds [secs - (w - c) * secs / w, ...) counted back from now */
		size_t lo = c * secs / w, hi = (c + 1) * secs / w;
		uint64_t m = 0;
		bool any = false;
		for (size_t s = lo; s < hi; s++) {
			size_t back = secs - s; /* 1 = now */
			if (back > have)
				continue;
			uint64_t x = d->hist_allocated[d->nhist - back];
			m = x > m ? x : m;
			any = true;
		}
		buf[c] = !any ? ' ' : top ? ramp[(size_t)((double)m / (double)top * (double)(levels - 1) + 0.5)] : ramp[0];
	}
	buf[w] = 0;
}
