/* SPDX-License-Identifier: MIT */
/*
 * render_phases.c - the phases of a run (report_steps.h, steps.phases) in the
 * text report (PHASES, and the leaks and forecast of each phase but the
 * primary one, whose are in STEPS) and in JSON (steps.phases[]).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/render.h"
#include "render/render_steps.h"

#define TEXT_PHASE_LEAKS 3

static void frame_or(char *buf, size_t n, const struct tlm_report_steps *st)
{
	if (st->have_driving)
		tlm__frame_text(buf, n, &st->driving);
	else
		snprintf(buf, n, "(no stack recorded)");
}

static size_t nleaks(const struct tlm_report_steps *st)
{
	size_t n = 0;
	for (size_t i = 0; i < st->nleaks; i++)
		n += st->leaks[i].leak;
	return n;
}

void tlm__phases_text(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	if (!st || st->nphases < 2)
		return;
	char w[512], a[32];
	tlm__line(f, "PHASES: %zu repeating phases (STEPS below is the %s phase)", st->nphases,
		  st->phases[st->primary].name);
	for (size_t p = 0; p < st->nphases; p++) {
		const struct tlm_report_phase *ph = &st->phases[p];
		frame_or(w, sizeof w, ph->st);
		char in[32] = "";
		if (ph->inside >= 0)
			snprintf(in, sizeof in, " inside %s", st->phases[ph->inside].name);
		tlm__line(f, "  %-12s %6zu steps of %.3f s%s from %s, driven by %s", ph->name, ph->st->count,
			  ph->st->seconds_per_step, in, tlm__secs(a, sizeof a, ph->st->step[0].start_ns), w);
	}
	for (size_t p = 0; p < st->nphases; p++) {
		const struct tlm_report_steps *ps = st->phases[p].st;
		if (ps == st || !nleaks(ps))
			continue;
		struct tlm__labels L;
		int dev[TEXT_PHASE_LEAKS];
		uint32_t stk[TEXT_PHASE_LEAKS];
		const struct tlm_report_step_leak *shown[TEXT_PHASE_LEAKS];
		size_t k = 0;
		for (size_t i = 0; i < ps->nleaks && k < TEXT_PHASE_LEAKS; i++)
			if (ps->leaks[i].leak) {
				shown[k] = &ps->leaks[i];
				dev[k] = ps->leaks[i].device;
				stk[k++] = ps->leaks[i].stack_id;
			}
		bool lab = tlm__labels_make(&L, r, dev, stk, k, TLM__LABEL_SEP) == 0;
		tlm__line(f, "  %s leaks per step:", st->phases[p].name);
		for (size_t i = 0; i < k; i++)
			tlm__line(f, "    dev %d +%s per step in %" PRIu64 " of %" PRIu64 " steps: %s", shown[i]->device,
				  tlm__human(a, sizeof a, shown[i]->bytes_per_step), shown[i]->steps_with_survivors,
				  shown[i]->steps_measured, lab ? tlm__label(&L, i) : "(no label)");
		if (lab)
			tlm__labels_free(&L);
		for (size_t i = 0; i < ps->nforecast; i++) {
			const struct tlm_report_forecast *fc = &ps->forecast[i];
			if (fc->known)
				tlm__line(f, "    dev %d: out of memory after %" PRIu64 " more %s steps", fc->device,
					  fc->steps_to_oom, st->phases[p].name);
		}
	}
}

static void json_leaks(struct tlm__json *j, struct tlm_report *r, const struct tlm_report_steps *ps)
{
	size_t n = nleaks(ps), k = 0;
	int *dev = malloc((n + 1) * sizeof *dev);
	uint32_t *stk = malloc((n + 1) * sizeof *stk);
	struct tlm__labels L;
	bool lab = false;
	if (dev && stk) {
		for (size_t i = 0; i < ps->nleaks; i++)
			if (ps->leaks[i].leak) {
				dev[k] = ps->leaks[i].device;
				stk[k++] = ps->leaks[i].stack_id;
			}
		lab = tlm__labels_make(&L, r, dev, stk, k, TLM__LABEL_SEP) == 0;
	}
	tlm__json_key(j, "leaks");
	tlm__json_arr(j);
	for (size_t i = 0, x = 0; i < ps->nleaks; i++) {
		const struct tlm_report_step_leak *l = &ps->leaks[i];
		if (!l->leak)
			continue;
		tlm__json_obj(j);
		tlm__json_ki(j, "device", l->device);
		tlm__json_ku(j, "bytes_per_step", l->bytes_per_step);
		tlm__json_key(j, "tensors_per_step");
		tlm__json_dbl(j, l->tensors_per_step, 3);
		tlm__json_ku(j, "steps_with_survivors", l->steps_with_survivors);
		tlm__json_ku(j, "steps_measured", l->steps_measured);
		tlm__json_key(j, "label");
		tlm__json_str(j, lab ? tlm__label(&L, x) : NULL);
		x++;
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	if (lab)
		tlm__labels_free(&L);
	free(dev);
	free(stk);
}

void tlm__phases_json(struct tlm__json *j, struct tlm_report *r)
{
	const struct tlm_report_steps *st = r->steps;
	tlm__json_key(j, "phases");
	tlm__json_arr(j);
	for (size_t p = 0; st && p < st->nphases; p++) {
		const struct tlm_report_phase *ph = &st->phases[p];
		const struct tlm_report_steps *ps = ph->st;
		tlm__json_obj(j);
		tlm__json_key(j, "name");
		tlm__json_str(j, ph->name);
		tlm__json_key(j, "training");
		tlm__json_bool(j, ph->training);
		tlm__json_key(j, "primary");
		tlm__json_bool(j, ps == st);
		tlm__json_key(j, "inside");
		if (ph->inside >= 0)
			tlm__json_i64(j, ph->inside);
		else
			tlm__json_null(j);
		tlm__json_ku(j, "count", ps->count);
		tlm__json_frame(j, "driving_frame", ps->have_driving ? &ps->driving : NULL);
		tlm__json_key(j, "seconds_per_step");
		tlm__json_dbl(j, ps->seconds_per_step, 6);
		tlm__json_ki(j, "start_ns", ps->step[0].start_ns);
		tlm__json_ki(j, "end_ns", ps->step[ps->count - 1].end_ns);
		tlm__json_ku(j, "first_steady_step", ps->first_steady);
		tlm__json_ku(j, "step_sites", ps->step_sites);
		tlm__json_ku(j, "steady_peak_bytes", ps->steady_peak);
		json_leaks(j, r, ps);
		tlm__json_key(j, "forecast");
		tlm__json_arr(j);
		for (size_t i = 0; i < ps->nforecast; i++) {
			const struct tlm_report_forecast *fc = &ps->forecast[i];
			if (!fc->growth_per_step)
				continue;
			tlm__json_obj(j);
			tlm__json_ki(j, "device", fc->device);
			tlm__json_ku(j, "growth_bytes_per_step", fc->growth_per_step);
			tlm__json_key(j, "steps_to_oom");
			if (fc->known)
				tlm__json_u64(j, fc->steps_to_oom);
			else
				tlm__json_null(j);
			tlm__json_key(j, "why_not");
			tlm__json_str(j, fc->known ? NULL : fc->why_not);
			tlm__json_obj_end(j);
		}
		tlm__json_arr_end(j);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
}
