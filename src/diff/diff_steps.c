/* SPDX-License-Identifier: MIT */
/*
 * diff_steps.c - the step-aware half of the growth gate (docs/diff.md):
 * besides the leaked bytes, --fail-on-growth BYTES compares the leaks'
 * growth per step (bytes_per_step of reports with steps) and the growth of
 * live-at-end memory at the sites that are leaks in either run, so that a
 * leak the NEW run's rule no longer calls a leak (its survivors are still
 * live at the end) cannot pass as "gone".
 */
#include <inttypes.h>
#include <string.h>

#include "common/text.h"
#include "diff.h"
#include "render/render.h"

#define GATE_FRAMES 3

static bool is_leak_key(const struct tlm_diff *d, const char *key)
{
	const struct tlm_diff_side *s[2] = {d->base, d->new_};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < s[k]->nleaks; i++)
			if (!strcmp(s[k]->leaks[i].key, key))
				return true;
	return false;
}

static const char *row_key(const struct tlm_diff_row *r)
{
	return r->after ? r->after->key : r->before->key;
}

static bool over(const struct tlm_diff *d, int64_t grew)
{
	return d->gate && grew > 0 && (uint64_t)grew > d->gate_bytes;
}

void tlm__diff_steps_compute(struct tlm_diff *d)
{
	d->per_step_growth = tlm_diff_sub(d->new_->per_step_bytes, d->base->per_step_bytes);
	int64_t live = 0;
	for (size_t i = 0; i < d->nlive; i++) {
		const struct tlm_diff_row *r = &d->live[i];
		if (!is_leak_key(d, row_key(r)))
			continue;
		int64_t v = live + r->delta_bytes;
		live = r->delta_bytes > 0 && v < live ? INT64_MAX : r->delta_bytes < 0 && v > live ? INT64_MIN : v;
	}
	d->live_leak_growth = live;
	d->failed_leaks = d->failed;
	d->failed_per_step = over(d, d->per_step_growth);
	d->failed_live = over(d, d->live_leak_growth);
	d->failed = d->failed_leaks || d->failed_per_step || d->failed_live;
}

void tlm__diff_steps_text(const struct tlm_diff *d, FILE *f)
{
	char g[32];
	tlm__line(f, "gate: leaks per step %s, limit +%" PRIu64 " B: %s", tlm__diff_signed(g, sizeof g, d->per_step_growth),
		  d->gate_bytes, d->failed_per_step ? "FAILED" : "passed");
	tlm__line(f, "gate: live at end at leak sites %s, limit +%" PRIu64 " B: %s",
		  tlm__diff_signed(g, sizeof g, d->live_leak_growth), d->gate_bytes, d->failed_live ? "FAILED" : "passed");
}

void tlm__diff_steps_json(struct tlm__json *j, const struct tlm_diff *d)
{
	tlm__json_ki(j, "per_step_growth_bytes", d->per_step_growth);
	tlm__json_ki(j, "live_growth_at_leak_sites_bytes", d->live_leak_growth);
	tlm__json_key(j, "failed_on");
	tlm__json_arr(j);
	if (d->failed_leaks)
		tlm__json_str(j, "leaks");
	if (d->failed_per_step)
		tlm__json_str(j, "per_step");
	if (d->failed_live)
		tlm__json_str(j, "live_at_end");
	tlm__json_arr_end(j);
}

void tlm__diff_steps_message(const struct tlm_diff *d, FILE *f)
{
	char g[32], a[32], b[32];
	if (d->failed_per_step) {
		fprintf(f, "tlm diff: leaks per step grew by %" PRId64 " B (%s per step), more than --fail-on-growth %" PRIu64
			   "\n",
			d->per_step_growth, tlm__diff_signed(g, sizeof g, d->per_step_growth), d->gate_bytes);
		int64_t listed = 0;
		for (size_t i = 0; i < d->nleaks; i++) {
			const struct tlm_diff_row *r = &d->leaks[i];
			uint64_t pb = r->before ? r->before->per_step : 0, pa = r->after ? r->after->per_step : 0;
			if (pa <= pb)
				continue;
			int64_t up = tlm_diff_sub(pa, pb); /* > 0; saturated: hostile figures must not wrap */
			listed = listed > INT64_MAX - up ? INT64_MAX : listed + up;
			tlm_text_line(f, "  %s per step on device %d (%s -> %s per step):\n",
				tlm__diff_signed(g, sizeof g, tlm_diff_sub(pa, pb)), r->device, tlm__human(a, sizeof a, pb),
				tlm__human(b, sizeof b, pa));
			tlm__diff_label(f, r);
			tlm__diff_stack(f, r->after ? r->after->stack : r->before->stack, GATE_FRAMES);
		}
		if (listed < d->per_step_growth) /* step leaks freed before the end are in no LEAKS */
			fprintf(f, "  %s per step at sites whose memory was freed before the run ended: LEAKS PER STEP "
				   "in tlm report of the new run\n",
				tlm__diff_signed(g, sizeof g, d->per_step_growth - listed));
	}
	if (d->failed_live) {
		fprintf(f, "tlm diff: live memory at the end grew by %" PRId64 " B (%s) at leak sites, more than "
			   "--fail-on-growth %" PRIu64 "\n",
			d->live_leak_growth, tlm__diff_signed(g, sizeof g, d->live_leak_growth), d->gate_bytes);
		for (size_t i = 0; i < d->nlive; i++) {
			const struct tlm_diff_row *r = &d->live[i];
			if (r->delta_bytes <= 0 || !is_leak_key(d, row_key(r)))
				continue;
			tlm_text_line(f, "  %s live at end on device %d (%" PRIu64 " -> %" PRIu64 " B):\n",
				tlm__diff_signed(g, sizeof g, r->delta_bytes), r->device, r->before_bytes, r->after_bytes);
			tlm__diff_label(f, r);
			tlm__diff_stack(f, r->after ? r->after->stack : r->before->stack, GATE_FRAMES);
		}
	}
}
