/* SPDX-License-Identifier: MIT */
/*
 * live_text.c - `tlm top --once` / `--interval`: the view as plain text for
 * logs, <= 100 columns (tlm__line): one trace in full; for a job, one row per
 * trace (rank) and the top sites of the one holding the most now.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "live_fmt.h"
#include "live_int.h"
#include "render/render.h"

#define TEXT_SITES 10
#define MARKS 50 /* one per 6 s of the last 5 minutes */

static void head(FILE *f, const struct tlm_live_view *v)
{
	char r[32] = "";
	if (v->rank >= 0)
		snprintf(r, sizeof r, " (rank %" PRId64 ")", v->rank);
	if (v->pid)
		tlm__line(f, "tlm top: %s: pid %" PRIu32 "%s%s: %s", v->path, v->pid, r, v->forked ? " (fork child)" : "",
			  v->command);
	else
		tlm__line(f, "tlm top: %s", v->path);
}

static void sites(FILE *f, const struct tlm_live_view *v, enum tlm_live_sort sort, size_t max)
{
	char b[512];
	if (!v->total_sites) {
		tlm__line(f, "  live sites: none");
		return;
	}
	tlm__line(f, "  live sites: %zu, by %s%s", v->total_sites, tlm_live_sort_names[sort],
		  v->total_sites > max ? ", the first shown" : "");
	tlm__live_site_head(b, sizeof b);
	tlm__line(f, "  %s", b);
	for (size_t i = 0; i < v->nsites && i < max; i++) {
		tlm__live_site_line(b, sizeof b, &v->site[i]);
		tlm__line(f, "  %s", b);
	}
}

static void one(FILE *f, struct tlm_live *l, enum tlm_live_sort sort)
{
	const struct tlm_live_view *v = tlm_live_view(l, sort, true);
	char b[512], m[MARKS + 1];
	if (!v)
		return;
	head(f, v);
	tlm__live_state_line(b, sizeof b, v);
	tlm__line(f, "  %s", b);
	if (v->state == TLM_LIVE_WAITING || v->state == TLM_LIVE_FAILED)
		return;
	if (!v->ndev)
		tlm__line(f, "  no device memory yet");
	for (size_t i = 0; i < v->ndev; i++) {
		tlm__live_dev_line(b, sizeof b, &v->dev[i]);
		tlm__line(f, "  %s", b);
		if (v->dev[i].nhist > 1) {
			tlm__live_marks(m, MARKS, &v->dev[i], TLM_LIVE_HIST, " .:-=+*#");
			tlm__line(f, "    last 5 min, allocated (6 s a mark): |%s|", m);
		}
	}
	tlm__live_steps_line(b, sizeof b, v);
	tlm__line(f, "  %s", b);
	for (size_t i = 0; i < v->nforecast; i++) {
		tlm__live_forecast_line(b, sizeof b, &v->forecast[i]);
		tlm__line(f, "  %s", b);
		if (v->forecast[i].known && !v->forecast[i].modelled)
			tlm__line(f, "    %s", TLM__LIVE_LINEAR);
	}
	tlm__live_oom_line(b, sizeof b, v);
	tlm__line(f, "  %s", b);
	sites(f, v, sort, TEXT_SITES);
}

/* One row of a job: its device of most allocated memory now. */
static void row(FILE *f, const struct tlm_live_view *v)
{
	char rk[24], dv[16] = "-", r[32], a[32], p[32], g[32], sp[24];
	const struct tlm_live_dev *d = NULL;
	for (size_t i = 0; i < v->ndev; i++)
		if (!d || v->dev[i].allocated > d->allocated)
			d = &v->dev[i];
	if (v->rank >= 0)
		snprintf(rk, sizeof rk, "%" PRId64, v->rank);
	else
		snprintf(rk, sizeof rk, "-");
	if (d && d->device >= 0)
		snprintf(dv, sizeof dv, "%d", d->device);
	else if (d)
		snprintf(dv, sizeof dv, "host");
	uint64_t growth = 0;
	for (size_t i = 0; d && i < v->nforecast; i++)
		if (v->forecast[i].device == d->device)
			growth = v->forecast[i].growth_per_step;
	if (v->steps_found && v->seconds_per_step > 0)
		snprintf(sp, sizeof sp, "%.2f", 1.0 / v->seconds_per_step);
	else
		snprintf(sp, sizeof sp, "-");
	if (growth)
		snprintf(g, sizeof g, "+%s", tlm__human(p, sizeof p, growth));
	else
		snprintf(g, sizeof g, "-");
	tlm__line(f, "  %4s %7" PRIu32 " %-8s %3s %10s %10s %10s %7s %11s %4" PRIu64 "  %s", rk, v->pid,
		  tlm__live_state_word(v), dv,
		  d ? tlm__human(r, sizeof r, d->reserved) : "-", d ? tlm__human(a, sizeof a, d->allocated) : "-",
		  d ? tlm__human(p, sizeof p, d->peak_allocated) : "-", sp, g, v->ooms, tlm__base(v->path));
}

int tlm_live_text(FILE *f, struct tlm_live_job *j, enum tlm_live_sort sort)
{
	size_t n = tlm_live_job_count(j);
	if (!tlm_live_job_is_set(j) || n == 1) {
		if (n)
			one(f, tlm_live_job_get(j, 0), sort);
		fflush(f);
		return ferror(f) ? -1 : 0;
	}
	size_t ended = 0;
	for (size_t i = 0; i < n; i++)
		ended += tlm_live_state(tlm_live_job_get(j, i)) >= TLM_LIVE_ENDED;
	tlm__line(f, "tlm top: job %s: %zu trace%s, %zu ended", tlm_live_job_source(j), n, n == 1 ? "" : "s", ended);
	if (!n) {
		tlm__line(f, "  waiting for traces");
		fflush(f);
		return ferror(f) ? -1 : 0;
	}
	tlm__line(f, "  %4s %7s %-8s %3s %10s %10s %10s %7s %11s %4s  %s", "RANK", "PID", "STATE", "DEV", "RESERVED",
		  "ALLOCATED", "PEAK ALLOC", "STEPS/S", "GROWTH/STEP", "OOM", "TRACE");
	struct tlm_live *most = NULL;
	uint64_t most_b = 0;
	for (size_t i = 0; i < n; i++) {
		struct tlm_live *l = tlm_live_job_get(j, i);
		const struct tlm_live_view *v = tlm_live_view(l, sort, false);
		if (!v)
			continue;
		row(f, v);
		for (size_t k = 0; k < v->ndev; k++)
			if (!most || v->dev[k].allocated > most_b) {
				most = l;
				most_b = v->dev[k].allocated;
			}
	}
	if (most && most_b) { /* nothing allocated anywhere (all ended): no sites to show */
		const struct tlm_live_view *v = tlm_live_view(most, sort, true);
		if (v) {
			char r[32] = "";
			if (v->rank >= 0)
				snprintf(r, sizeof r, "rank %" PRId64 ", ", v->rank);
			tlm__line(f, "the most allocated now: %spid %" PRIu32 " (%s)", r, v->pid, tlm__base(v->path));
			sites(f, v, sort, 5);
		}
	}
	fflush(f);
	return ferror(f) ? -1 : 0;
}

int tlm_live_text_loop(FILE *f, struct tlm_live_job *j, const struct tlm_live_ui *o)
{
	uint64_t iv = (uint64_t)(o->interval_s * 1e9), next = 0;
	for (;;) {
		/* a backlog is read until the next view is due (which then says how far it got) */
		bool more;
		while ((more = tlm_live_job_poll(j, 1u << 16)) && tlm__live_mono_ns() < next)
			;
		bool end = o->tick ? o->tick(o->ctx) != 0 : tlm_live_job_ended(j);
		uint64_t now = tlm__live_mono_ns();
		if (end || now >= next) {
			if (end && o->tick)
				tlm_live_job_stop(j);
			if (tlm_live_text(f, j, o->sort))
				return -1;
			if (end)
				return 0;
			fputc('\n', f);
			next = now + iv;
		}
		struct timespec ts = {0, 100000000};
		if (!more)
			nanosleep(&ts, NULL);
	}
}
