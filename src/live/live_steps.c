/* SPDX-License-Identifier: MIT */
/*
 * live_steps.c - the report's step rules (steps_detect.c, steps.c) on a
 * rolling window of the last allocations, so that a run of days still shows
 * its steps per second, its growth per step and the forecast of its last
 * minutes (live_int.h: two staggered recorders). The analysis runs on a
 * copy of the older recorder's records (it reorders them) and a scratch
 * report sharing the followed trace's stacks and frames.
 */
#include <stdlib.h>
#include <string.h>

#include "live_int.h"

#define HALF (TLM_LIVE_WINDOW / 2)
#define EVERY_NS 2000000000ull /* at most every 2 s ... */
#define SHARE 10               /* ... and at most 1/SHARE of the time */

int tlm__lsteps_init(struct tlm__lsteps *s)
{
	memset(s, 0, sizeof *s);
	if (tlm__steps_init(&s->rec[0]))
		return -1;
	s->n = 1; /* the first covers the run from its start: not a window */
	return 0;
}

void tlm__lsteps_fini(struct tlm__lsteps *s)
{
	for (int i = 0; i < s->n; i++)
		tlm__steps_fini(&s->rec[i]);
	tlm__steps_free(s->st);
	memset(s, 0, sizeof *s);
}

void tlm__lsteps_event(struct tlm__lsteps *s, const struct tlm__replay *rp, const struct tlm_event *ev)
{
	for (int i = 0; i < s->n; i++)
		tlm__steps_event(&s->rec[i], rp, ev);
	struct tlm__steps_rec *newer = &s->rec[s->n - 1];
	if (newer->n < HALF)
		return;
	if (s->n == 2) { /* the older holds a whole window: the newer takes over */
		tlm__steps_fini(&s->rec[0]);
		s->rec[0] = s->rec[1];
		memset(&s->rec[1], 0, sizeof s->rec[1]);
		s->n = 1;
		return;
	}
	if (tlm__steps_init(&s->rec[1]))
		return; /* without memory the older one goes on alone (up to its cap) */
	s->rec[1].window = true;
	memcpy(s->rec[1].cap_, s->rec[0].cap_, sizeof s->rec[1].cap_); /* what the device had, learnt once */
	s->n = 2;
}

int tlm__lsteps_analyse(struct tlm__lsteps *s, const struct tlm__replay *rp, struct tlm_report *rep, bool force)
{
	uint64_t now = tlm__live_mono_ns();
	if (rep->events == s->analysed_events && s->st)
		return 0; /* nothing new */
	if (!force && now < s->next_ns)
		return 0;
	const struct tlm__steps_rec *src = &s->rec[0];
	struct tlm__steps_rec tmp;
	memset(&tmp, 0, sizeof tmp);
	tmp.window = src->window;
	tmp.full = src->full;
	memcpy(tmp.cap_, src->cap_, sizeof tmp.cap_);
	tmp.n = tmp.cap = src->n;
	tmp.r = malloc((src->n ? src->n : 1) * sizeof *tmp.r);
	if (!tmp.r)
		return -1;
	if (src->n)
		memcpy(tmp.r, src->r, src->n * sizeof *tmp.r);
	/* the window's run: from its first allocation to now */
	struct tlm__replay v = *rp;
	if (tmp.window && tmp.n && tmp.r[0].t > v.first_t)
		v.first_t = tmp.r[0].t;
	struct tlm_report scratch;
	struct tlm_report_site no_leaks; /* the report's time-rule leaks: none to merge the step leaks into */
	memset(&scratch, 0, sizeof scratch);
	scratch.priv = rep->priv; /* frames for the driving frame and activations */
	scratch.events = rep->events;
	scratch.leaks = &no_leaks;
	int rc = tlm__steps_finish(&tmp, &v, &scratch);
	free(tmp.r);
	if (rc) {
		tlm__steps_free(scratch.steps);
		return -1;
	}
	tlm__steps_free(s->st);
	s->st = scratch.steps;
	s->analysed_events = rep->events;
	uint64_t cost = tlm__live_mono_ns() - now;
	s->next_ns = now + (EVERY_NS > cost * SHARE ? EVERY_NS : cost * SHARE);
	return 0;
}
