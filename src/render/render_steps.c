/* SPDX-License-Identifier: MIT */
/*
 * render_steps.c - the step sections of the text, summary, JSON and HTML
 * reports (render_steps.h). Steps are numbered from 1 in text and HTML,
 * indexed from 0 in JSON.
 */
#include <inttypes.h>
#include <string.h>

#include "common/sat.h"
#include "render/html.h"
#include "render/render.h"
#include "render/render_steps.h"

#define TEXT_STEPS 12
#define TEXT_STEP_LEAKS 5
#define TEXT_ACT 5
#define TEXT_LEAK_FRAMES 4
#define JSON_STEPS 10000 /* per_step entries */
#define SUM_FORECASTS 2

static const struct tlm_frame *driving(struct tlm_report *r, const struct tlm_report_steps *st)
{
	(void)r;
	return st->have_driving ? &st->driving : NULL;
}

static void frame_or(char *buf, size_t n, const struct tlm_frame *fr)
{
	if (fr)
		tlm__frame_text(buf, n, fr);
	else
		snprintf(buf, n, "(no stack recorded)");
}

static void dev_name(char *buf, size_t n, int device)
{
	if (device < 0)
		snprintf(buf, n, "host");
	else
		snprintf(buf, n, "dev %d", device);
}

static void steps_head(FILE *f, struct tlm_report *r, const struct tlm_report_steps *st)
{
	char w[512];
	frame_or(w, sizeof w, driving(r, st));
	tlm__line(f, "STEPS: %zu steps of %.3f s, driven by %s", st->count, st->seconds_per_step, w);
	if (st->first_steady == 1)
		tlm__line(f, "  warm-up: step 1 (it allocates differently); steady from step 2");
	else if (st->first_steady)
		tlm__line(f, "  warm-up: steps 1..%zu (they allocate differently); steady from step %zu", st->first_steady,
			  st->first_steady + 1);
	tlm__line(f, "  %zu site%s allocate the same number of times in every step%s", st->step_sites,
		  st->step_sites == 1 ? "" : "s",
		  st->truncated ? "; only the first recorded allocations were looked at" : "");
}

static void text_steps(FILE *f, const struct tlm_report_steps *st)
{
	char a[32], b[32], c[32], d[32], dv[16];
	dev_name(dv, sizeof dv, st->device);
	tlm__line(f, "  peak per step (%s): warm-up %s, steady %s", dv,
		  st->first_steady ? tlm__human(a, sizeof a, st->warmup_peak) : "-",
		  tlm__human(b, sizeof b, st->steady_peak));
	tlm__line(f, "  %6s %11s %12s %12s %12s %7s", "step", "start", "peak", "live before", "survivors", "allocs");
	for (size_t j = 0; j < st->count; j++) {
		if (j == TEXT_STEPS / 2 && st->count > TEXT_STEPS) {
			tlm__line(f, "  ... %zu more steps", st->count - TEXT_STEPS);
			j = st->count - TEXT_STEPS / 2;
		}
		const struct tlm_report_step *s = &st->step[j];
		tlm__line(f, "  %6zu %11s %12s %12s %12s %7" PRIu64 "%s", j + 1, tlm__secs(a, sizeof a, s->start_ns),
			  tlm__human(b, sizeof b, s->peak), tlm__human(c, sizeof c, s->live_at_start),
			  tlm__human(d, sizeof d, s->survivors), s->allocs, s->steady ? "" : "  warm-up");
	}
	tlm__line(f, "  survivors: what the step made that was still live when the last step ended (steady");
	tlm__line(f, "  steps but the last); live before: allocated when the step began");
}

static void text_leaks(FILE *f, struct tlm_report *r, const struct tlm_report_steps *st)
{
	size_t nl = 0;
	for (size_t i = 0; i < st->nleaks; i++)
		nl += st->leaks[i].leak;
	int dev[TEXT_STEP_LEAKS];
	uint32_t stk[TEXT_STEP_LEAKS];
	size_t nlab = 0;
	for (size_t i = 0; i < st->nleaks && nlab < TEXT_STEP_LEAKS; i++)
		if (st->leaks[i].leak) {
			dev[nlab] = st->leaks[i].device;
			stk[nlab++] = st->leaks[i].stack_id;
		}
	struct tlm__labels L;
	bool lab = nlab && tlm__labels_make(&L, r, dev, stk, nlab, TLM__LABEL_SEP) == 0;
	if (!nl) {
		tlm__line(f, "LEAKS PER STEP: none (no site left survivors in most steady steps)");
		return;
	}
	tlm__line(f, "LEAKS PER STEP: %zu site%s left memory live at the end of the last step in most", nl,
		  nl == 1 ? "" : "s");
	tlm__line(f, "  steady steps (whatever happened after it)");
	for (size_t i = 0, k = 0; i < st->nleaks && k < TEXT_STEP_LEAKS; i++) {
		const struct tlm_report_step_leak *l = &st->leaks[i];
		if (!l->leak)
			continue;
		char a[32], dv[16], w[512];
		dev_name(dv, sizeof dv, l->device);
		tlm__line(f, "%4zu. %-7s +%s per step in %.1f allocations, in %" PRIu64 " of %" PRIu64 " steps%s", ++k,
			  dv, tlm__human(a, sizeof a, l->bytes_per_step), l->tensors_per_step, l->steps_with_survivors,
			  l->steps_measured, l->steady ? " (steady)" : "");
		if (lab)
			tlm__line(f, "        site %s", tlm__label(&L, k - 1));
		const struct tlm_frame *fr;
		size_t n = tlm_report_frames(r, l->stack_id, &fr);
		for (size_t x = 0; x < n && x < TEXT_LEAK_FRAMES; x++) {
			tlm__frame_text(w, sizeof w, &fr[x]);
			tlm__line(f, "        %s %s", x ? "from" : "at  ", w);
		}
	}
	if (lab)
		tlm__labels_free(&L);
}

static void text_forecast(FILE *f, const struct tlm_report_steps *st)
{
	if (st->died) {
		char a[32], t[32];
		tlm__line(f, "FORECAST: none: the run died of out of memory in step %zu (%s, %s requested: %s)",
			  st->died_step, tlm__secs(t, sizeof t, st->died_ns), tlm__human(a, sizeof a, st->died_requested),
			  tlm__verdict_name(st->died_verdict));
		return;
	}
	for (size_t i = 0; i < st->nforecast; i++) {
		const struct tlm_report_forecast *fc = &st->forecast[i];
		char a[32], b[32], c[32];
		if (!fc->known) {
			if (fc->growth_per_step) {
				tlm__line(f, "FORECAST: dev %d: +%s per step; no forecast:", fc->device,
					  tlm__human(a, sizeof a, fc->growth_per_step));
				tlm__line(f, "  %s", fc->why_not);
			}
			else
				tlm__line(f, "FORECAST: dev %d: %s", fc->device, fc->why_not);
			continue;
		}
		tlm__line(f, "FORECAST: dev %d: +%s per step (%s); out of memory after %" PRIu64 " more steps (%.1f s)",
			  fc->device, tlm__human(a, sizeof a, fc->growth_per_step), fc->steady ? "steady" : "irregular",
			  fc->steps_to_oom, fc->seconds_to_oom);
		tlm__line(f, "  the process could hold %s (free at the %s + its reserved); the last step",
			  tlm__human(b, sizeof b, fc->capacity), fc->capacity_source);
		if (fc->modelled)
			tlm__line(f, "  peaked at %s; the steady step replayed through the caching allocator's model (cache,",
				  tlm__human(c, sizeof c, fc->last_peak));
		else
			tlm__line(f, "  peaked at %s; allocator rounding and fragmentation make it sooner",
				  tlm__human(c, sizeof c, fc->last_peak));
		if (fc->modelled)
			tlm__line(f, "  rounding, fragmentation) until a request fails; bytes alone: %" PRIu64 " more steps",
				  fc->linear_steps);
	}
}

static const struct tlm_frame *act_frame(struct tlm_report *r, const struct tlm_report_act *a)
{
	(void)r;
	return a->have_fn ? &a->fn : NULL;
}

static void fn_name(char *buf, size_t n, struct tlm_report *r, const struct tlm_report_act *a)
{
	frame_or(buf, n, act_frame(r, a));
}

static void text_act(FILE *f, struct tlm_report *r, const struct tlm_report_steps *st)
{
	char a[32], b[32], w[512];
	if (!st->nact) {
		tlm__line(f, "ACTIVATIONS: none held at the peak of step %zu", st->act_step + 1);
		return;
	}
	tlm__line(f, "ACTIVATIONS at the peak of step %zu: %s of %s (made in the step, held at its peak,",
		  st->act_step + 1, tlm__human(a, sizeof a, st->act_bytes), tlm__human(b, sizeof b, st->act_peak));
	tlm__line(f, "  freed before it ended: held from the forward pass to the backward pass), by function");
	const struct tlm_report_act *big = NULL;
	for (size_t i = 0; i < st->nact; i++) {
		const struct tlm_report_act *x = &st->act[i];
		if (x->nckpt && !big)
			big = x;
		if (i >= TEXT_ACT)
			continue;
		fn_name(w, sizeof w, r, x);
		tlm__line(f, "%4zu. %11s in %" PRIu64 ", %" PRIu64 " instance%s%s: %s", i + 1, tlm__human(a, sizeof a, x->bytes),
			  x->count, x->instances, x->instances == 1 ? "" : "s",
			  x->other_thread ? ", freed on another thread" : "", w);
	}
	if (st->nact > TEXT_ACT)
		tlm__line(f, "  ... %zu more (tlm report --format json lists all)", st->nact - TEXT_ACT);
	if (!big)
		return;
	fn_name(w, sizeof w, r, big);
	tlm__line(f, "  checkpointing %s (%" PRIu64 " instances), peak %s:", w, big->instances,
		  tlm__human(a, sizeof a, st->act_peak));
	for (size_t e = 0; e < big->nckpt; e++) {
		const struct tlm_report_ckpt *c = &big->ckpt[e];
		char x[32], y[32], lbl[32];
		if (c->every == 1)
			snprintf(lbl, sizeof lbl, "each instance");
		else
			snprintf(lbl, sizeof lbl, "every %u", c->every);
		tlm__line(f, "    %-14s -> %s estimated from the measured sizes (rule (1-1/%u): %s)", lbl,
			  tlm__human(x, sizeof x, c->est_peak), c->every, tlm__human(y, sizeof y, c->rule_peak));
	}
	tlm__line(f, "    price: one more forward of those layers per step (their allocations spanned %.3f ms)",
		  big->forward_s * 1e3);
}

void tlm__steps_text(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	if (!st)
		return;
	tlm__line(f, "%s", "");
	if (!st->found) {
		tlm__line(f, "STEPS: none found (%s); the report is by time only", st->why_not);
		return;
	}
	tlm__phases_text(f, r);
	steps_head(f, r, st);
	text_steps(f, st);
	text_leaks(f, r, st);
	text_forecast(f, st);
	text_act(f, r, st);
}

static bool in_leaks(const struct tlm_report *r, const struct tlm_report_step_leak *l)
{
	for (size_t i = 0; i < r->nleaks; i++)
		if (r->leaks[i].device == l->device && r->leaks[i].stack_id == l->stack_id)
			return true;
	return false;
}

/* The phases' steps, the primary's (the report's own) first. */
static const struct tlm_report_steps *phase_steps(const struct tlm_report_steps *st, size_t p)
{
	if (p == 0)
		return st;
	const struct tlm_report_steps *q = st->phases[p - 1].st;
	return q == st ? NULL : q;
}

/* A step leak not in LEAKS and not already met in an earlier phase (a site
 * leaking per micro-step leaks per training step too): once per site. */
static bool freed_leak(const struct tlm_report *r, size_t p, const struct tlm_report_step_leak *l)
{
	if (!l->leak || in_leaks(r, l))
		return false;
	for (size_t e = 0; e < p; e++) {
		const struct tlm_report_steps *q = phase_steps(r->steps, e);
		for (size_t i = 0; q && i < q->nleaks; i++)
			if (q->leaks[i].leak && q->leaks[i].device == l->device && q->leaks[i].stack_id == l->stack_id)
				return false;
	}
	return true;
}

/* n: how many such sites; bytes: their bytes_per_step, summed */
static size_t leaks_freed(const struct tlm_report *r, uint64_t *bytes)
{
	const struct tlm_report_steps *st = r->steps;
	size_t n = 0;
	*bytes = 0;
	for (size_t p = 0; st && p <= st->nphases; p++) {
		const struct tlm_report_steps *q = phase_steps(st, p);
		for (size_t i = 0; q && i < q->nleaks; i++)
			if (freed_leak(r, p, &q->leaks[i])) {
				n++;
				*bytes = tlm__sat_add(*bytes, q->leaks[i].bytes_per_step);
			}
	}
	return n;
}

size_t tlm__steps_leaks_freed(const struct tlm_report *r)
{
	uint64_t b;
	return leaks_freed(r, &b);
}

void tlm__steps_summary(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	if (!st || !st->found)
		return;
	char a[32], b[32], w[512];
	frame_or(w, sizeof w, driving(r, st));
	tlm__line(f, "steps: %zu of %.3f s (steady from step %zu, peak %s) by %s", st->count, st->seconds_per_step,
		  st->first_steady + 1, tlm__human(a, sizeof a, st->steady_peak), w);
	if (st->died) {
		tlm__line(f, "  died of out of memory in step %zu (%s requested): no forecast", st->died_step,
			  tlm__human(b, sizeof b, st->died_requested));
		return;
	}
	for (size_t i = 0, shown = 0; i < st->nforecast && shown < SUM_FORECASTS; i++) {
		const struct tlm_report_forecast *fc = &st->forecast[i];
		shown += fc->known || fc->growth_per_step; /* the summary stays within 25 lines */
		if (fc->known)
			tlm__line(f, "  dev %d: +%s per step%s: out of memory in %" PRIu64 " more steps (%.1f s)", fc->device,
				  tlm__human(b, sizeof b, fc->growth_per_step), fc->steady ? "" : " (irregular)",
				  fc->steps_to_oom, fc->seconds_to_oom);
		else if (fc->growth_per_step)
			tlm__line(f, "  dev %d: +%s per step (%s)", fc->device, tlm__human(b, sizeof b, fc->growth_per_step),
				  fc->why_not);
	}
}

/* ---- JSON ----------------------------------------------------------------- */

void tlm__json_frame(struct tlm__json *j, const char *key, const struct tlm_frame *fr)
{
	tlm__json_key(j, key);
	if (!fr) {
		tlm__json_null(j);
		return;
	}
	tlm__json_obj(j);
	tlm__json_key(j, "function");
	tlm__json_str(j, fr->function);
	tlm__json_key(j, "file");
	tlm__json_str(j, fr->file);
	tlm__json_ki(j, "line", fr->line);
	tlm__json_key(j, "module");
	tlm__json_str(j, fr->module);
	tlm__json_obj_end(j);
}

static void json_act(struct tlm__json *j, struct tlm_report *r, const struct tlm_report_steps *st)
{
	tlm__json_key(j, "activations");
	if (!st || !st->found) {
		tlm__json_null(j);
		return;
	}
	tlm__json_obj(j);
	tlm__json_ku(j, "step", st->act_step);
	tlm__json_ku(j, "peak_bytes", st->act_peak);
	tlm__json_ku(j, "activation_bytes", st->act_bytes);
	tlm__json_key(j, "functions");
	tlm__json_arr(j);
	for (size_t i = 0; i < st->nact; i++) {
		const struct tlm_report_act *x = &st->act[i];
		tlm__json_obj(j);
		tlm__json_frame(j, "frame", act_frame(r, x));
		tlm__json_ku(j, "bytes_at_peak", x->bytes);
		tlm__json_ku(j, "count_at_peak", x->count);
		tlm__json_ku(j, "instances", x->instances);
		tlm__json_ku(j, "freed_on_other_thread", x->other_thread);
		tlm__json_key(j, "forward_seconds");
		tlm__json_dbl(j, x->forward_s, 6);
		tlm__json_key(j, "checkpointing");
		if (!x->nckpt) {
			tlm__json_null(j);
		} else {
			tlm__json_arr(j);
			for (size_t e = 0; e < x->nckpt; e++) {
				tlm__json_obj(j);
				tlm__json_ku(j, "every", x->ckpt[e].every);
				tlm__json_ku(j, "estimated_peak_bytes", x->ckpt[e].est_peak);
				tlm__json_ku(j, "rule_of_thumb_peak_bytes", x->ckpt[e].rule_peak);
				tlm__json_obj_end(j);
			}
			tlm__json_arr_end(j);
		}
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__json_obj_end(j);
}

void tlm__steps_json(struct tlm__json *j, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	tlm__json_key(j, "steps");
	tlm__json_obj(j);
	tlm__json_key(j, "found");
	tlm__json_bool(j, st && st->found);
	if (!st || !st->found) {
		tlm__json_key(j, "why_not");
		tlm__json_str(j, st ? st->why_not : "not analysed");
		tlm__json_ku(j, "count", 0);
		tlm__phases_json(j, r);
		tlm__json_obj_end(j);
		json_act(j, r, st);
		return;
	}
	tlm__json_ku(j, "count", st->count);
	/* what tlm diff gates on: every leak's bytes_per_step (LEAKS) and the step
	 * leaks' freed before the end */
	uint64_t freed, gate = 0;
	leaks_freed(r, &freed);
	for (size_t i = 0; i < r->nleaks; i++) {
		const struct tlm_report_step_leak *l = tlm_report_step_leak(r, r->leaks[i].device, r->leaks[i].stack_id);
		gate = tlm__sat_add(gate, l ? l->bytes_per_step : 0);
	}
	tlm__json_ku(j, "leak_bytes_per_step", tlm__sat_add(gate, freed));
	tlm__phases_json(j, r);
	tlm__json_key(j, "died");
	if (st->died) {
		tlm__json_obj(j);
		tlm__json_ku(j, "step", st->died_step);
		tlm__json_ki(j, "time_ns", st->died_ns);
		tlm__json_ku(j, "requested_bytes", st->died_requested);
		tlm__json_key(j, "verdict");
		tlm__json_str(j, tlm__verdict_name(st->died_verdict));
		tlm__json_obj_end(j);
	} else {
		tlm__json_null(j);
	}
	tlm__json_frame(j, "driving_frame", driving(r, st));
	tlm__json_key(j, "seconds_per_step");
	tlm__json_dbl(j, st->seconds_per_step, 6);
	tlm__json_ku(j, "first_steady_step", st->first_steady);
	tlm__json_ki(j, "device", st->device);
	tlm__json_ku(j, "step_sites", st->step_sites);
	tlm__json_key(j, "truncated");
	tlm__json_bool(j, st->truncated);
	tlm__json_ku(j, "warmup_peak_bytes", st->warmup_peak);
	tlm__json_ku(j, "steady_peak_bytes", st->steady_peak);
	tlm__json_key(j, "per_step_peaks");
	tlm__json_arr(j);
	for (size_t i = 0; i < st->count && i < JSON_STEPS; i++)
		tlm__json_u64(j, st->step[i].peak);
	tlm__json_arr_end(j);
	tlm__json_key(j, "per_step_truncated");
	tlm__json_bool(j, st->count > JSON_STEPS);
	tlm__json_key(j, "per_step");
	tlm__json_arr(j);
	for (size_t i = 0; i < st->count && i < JSON_STEPS; i++) {
		const struct tlm_report_step *s = &st->step[i];
		tlm__json_obj(j);
		tlm__json_ki(j, "start_ns", s->start_ns);
		tlm__json_ki(j, "end_ns", s->end_ns);
		tlm__json_ku(j, "peak_bytes", s->peak);
		tlm__json_ku(j, "live_bytes_at_start", s->live_at_start);
		tlm__json_ku(j, "survivor_bytes", s->survivors);
		tlm__json_ku(j, "transient_at_peak_bytes", s->held_at_peak);
		tlm__json_ku(j, "allocations", s->allocs);
		tlm__json_key(j, "steady");
		tlm__json_bool(j, s->steady);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__json_obj_end(j);
	json_act(j, r, st);
}

void tlm__steps_json_leak(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_site *s)
{
	const struct tlm_report_step_leak *l = tlm_report_step_leak(r, s->device, s->stack_id);
	tlm__json_key(j, "bytes_per_step");
	if (l)
		tlm__json_u64(j, l->bytes_per_step);
	else
		tlm__json_null(j);
	tlm__json_key(j, "tensors_per_step");
	if (l)
		tlm__json_dbl(j, l->tensors_per_step, 3);
	else
		tlm__json_null(j);
	tlm__json_key(j, "steps_with_survivors");
	if (l)
		tlm__json_u64(j, l->steps_with_survivors);
	else
		tlm__json_null(j);
	tlm__json_key(j, "steps_measured");
	if (l)
		tlm__json_u64(j, l->steps_measured);
	else
		tlm__json_null(j);
}

void tlm__steps_json_forecast(struct tlm__json *j, const struct tlm_report *r, int device, int kind)
{
	const struct tlm_report_forecast *fc = NULL;
	if (r->steps && kind == TLM_MEM_DEVICE)
		for (size_t i = 0; i < r->steps->nforecast; i++)
			if (r->steps->forecast[i].device == device)
				fc = &r->steps->forecast[i];
	tlm__json_key(j, "forecast");
	if (!fc || (!fc->known && !fc->growth_per_step)) {
		tlm__json_null(j);
		return;
	}
	tlm__json_obj(j);
	tlm__json_ku(j, "growth_bytes_per_step", fc->growth_per_step);
	tlm__json_key(j, "steady");
	tlm__json_bool(j, fc->steady);
	tlm__json_key(j, "steps_to_oom");
	if (fc->known)
		tlm__json_u64(j, fc->steps_to_oom);
	else
		tlm__json_null(j);
	tlm__json_key(j, "seconds_to_oom");
	if (fc->known)
		tlm__json_dbl(j, fc->seconds_to_oom, 3);
	else
		tlm__json_null(j);
	tlm__json_key(j, "capacity_bytes");
	if (fc->known)
		tlm__json_u64(j, fc->capacity);
	else
		tlm__json_null(j);
	tlm__json_key(j, "capacity_source");
	tlm__json_str(j, fc->known ? fc->capacity_source : NULL);
	tlm__json_ku(j, "last_step_peak_bytes", fc->last_peak);
	tlm__json_key(j, "method");
	tlm__json_str(j, fc->known ? (fc->modelled ? "allocator model" : "linear") : NULL);
	tlm__json_key(j, "linear_steps_to_oom");
	if (fc->known)
		tlm__json_u64(j, fc->linear_steps);
	else
		tlm__json_null(j);
	tlm__json_key(j, "why_not");
	tlm__json_str(j, fc->known ? NULL : fc->why_not);
	tlm__json_obj_end(j);
}

/* ---- HTML ----------------------------------------------------------------- */

void tlm__steps_html(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	char a[32], b[32], c[32], w[512];
	fputs("<h2 id=\"steps\">Steps</h2>\n", f);
	if (!st || !st->found) {
		fputs("<p class=\"empty\">", f);
		tlm__html(f, st ? st->why_not : "not analysed");
		fputs(": the report is by time only.</p>\n", f);
		return;
	}
	frame_or(w, sizeof w, driving(r, st));
	fprintf(f, "<p class=\"meta\">%zu steps of %.3f s, steady from step %zu, driven by <code>", st->count,
		st->seconds_per_step, st->first_steady + 1);
	tlm__html(f, w);
	fprintf(f, "</code>. Peak per step: warm-up %s, steady %s.</p>\n",
		st->first_steady ? tlm__html_human(a, sizeof a, st->warmup_peak) : "-",
		tlm__html_human(b, sizeof b, st->steady_peak));
	if (st->died)
		fprintf(f, "<p class=\"meta\">The run died of out of memory in step %zu (%s requested): no forecast.</p>\n",
			st->died_step, tlm__html_human(a, sizeof a, st->died_requested));
	for (size_t i = 0; i < st->nforecast && !st->died; i++) {
		const struct tlm_report_forecast *fc = &st->forecast[i];
		if (!fc->growth_per_step)
			continue;
		fprintf(f, "<p class=\"meta\">Device %d grows by %s per step (%s)", fc->device,
			tlm__html_human(a, sizeof a, fc->growth_per_step), fc->steady ? "steady" : "irregular");
		if (fc->known)
			fprintf(f, ": out of memory after %" PRIu64 " more steps (%.1f s), of %s it could hold.</p>\n",
				fc->steps_to_oom, fc->seconds_to_oom, tlm__html_human(c, sizeof c, fc->capacity));
		else
			fprintf(f, "; %s.</p>\n", fc->why_not);
	}
	fputs("<table class=\"sites steps\"><thead><tr><th class=\"num\">step</th><th class=\"num\">start</th>"
	      "<th class=\"num\">peak</th><th class=\"num\">survivors</th><th class=\"num\">allocations</th></tr>"
	      "</thead><tbody>\n",
	      f);
	for (size_t j = 0; j < st->count && j < HTML_SITES; j++) {
		const struct tlm_report_step *s = &st->step[j];
		fprintf(f, "<tr><td class=\"num\">%zu%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			   "<td class=\"num\">%s</td><td class=\"num\">%" PRIu64 "</td></tr>\n",
			j + 1, s->steady ? "" : " (warm-up)", tlm__secs(a, sizeof a, s->start_ns),
			tlm__html_human(b, sizeof b, s->peak), tlm__html_human(c, sizeof c, s->survivors), s->allocs);
	}
	fputs("</tbody></table>\n", f);
	fputs("<table class=\"sites step-leaks\"><thead><tr><th class=\"num\">per step</th><th class=\"num\">"
	      "steps</th><th>allocated at</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < st->nleaks && i < HTML_SITES; i++) {
		const struct tlm_report_step_leak *l = &st->leaks[i];
		if (!l->leak)
			continue;
		fprintf(f, "<tr><td class=\"num\">+%s</td><td class=\"num\">%" PRIu64 " of %" PRIu64 "</td><td>",
			tlm__html_human(a, sizeof a, l->bytes_per_step), l->steps_with_survivors, l->steps_measured);
		tlm__html_stack(f, r, l->stack_id);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (!st->nact)
		return;
	fprintf(f, "<p class=\"meta\">Activations at the peak of step %zu: %s of %s.</p>\n", st->act_step + 1,
		tlm__html_human(a, sizeof a, st->act_bytes), tlm__html_human(b, sizeof b, st->act_peak));
	fputs("<table class=\"sites activations\"><thead><tr><th class=\"num\">bytes</th><th class=\"num\">"
	      "instances</th><th>checkpointing (estimated peak)</th><th>function</th></tr></thead><tbody>\n",
	      f);
	for (size_t i = 0; i < st->nact && i < HTML_SITES; i++) {
		const struct tlm_report_act *x = &st->act[i];
		fprintf(f, "<tr><td class=\"num\">%s</td><td class=\"num\">%" PRIu64 "</td><td>",
			tlm__html_human(a, sizeof a, x->bytes), x->instances);
		for (size_t e = 0; e < x->nckpt; e++)
			fprintf(f, "%severy %u: %s (rule %s)", e ? "; " : "", x->ckpt[e].every,
				tlm__html_human(b, sizeof b, x->ckpt[e].est_peak),
				tlm__html_human(c, sizeof c, x->ckpt[e].rule_peak));
		fputs("</td><td>", f);
		fn_name(w, sizeof w, r, x);
		tlm__html(f, w);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}
