/* SPDX-License-Identifier: MIT */
/*
 * live_int.h - the pieces behind live.h: the followed trace's model (the
 * analysis's replay and stacks, fed record by record), its history, and the
 * rolling window of allocations the step rules run on.
 */
#ifndef TLM_LIVE_INT_H
#define TLM_LIVE_INT_H

#include <string.h>

#include "live.h"
#include "analysis/internal.h"
#include "analysis/steps_internal.h"

/* ---- steps on a rolling window (live_steps.c) ----------------------------
 * Two of the analysis's step recorders, staggered by half a window: a new one
 * starts when the newer has TLM_LIVE_WINDOW / 2 allocations, and the older is
 * dropped when the new one has as many. The older one, which holds the last
 * TLM_LIVE_WINDOW / 2 .. TLM_LIVE_WINDOW allocations, is what is analysed,
 * with the report's own rules (tlm__steps_finish), at most every few seconds
 * and never more than a tenth of the time. */
struct tlm__lsteps {
	struct tlm__steps_rec rec[2];
	int n;                        /* recorders running; rec[0] is the older */
	struct tlm_report_steps *st;  /* the last analysis, NULL before the first */
	uint64_t analysed_events;     /* the model's event count then */
	uint64_t next_ns;             /* CLOCK_MONOTONIC: not before */
};

int tlm__lsteps_init(struct tlm__lsteps *s);
void tlm__lsteps_fini(struct tlm__lsteps *s);
void tlm__lsteps_event(struct tlm__lsteps *s, const struct tlm__replay *rp, const struct tlm_event *ev);
/* Runs the step rules on the window if due (force: now). -1 without memory. */
int tlm__lsteps_analyse(struct tlm__lsteps *s, const struct tlm__replay *rp, struct tlm_report *rep, bool force);

/* ---- the model (live_model.c) -------------------------------------------- */

struct tlm__lhist {               /* one (device, kind): seconds since the trace start */
	int device, kind;
	int64_t sec;                  /* the second the last slot is; -1: empty */
	uint64_t cur_res, cur_alloc;  /* the values now */
	uint64_t res[TLM_LIVE_HIST], alloc[TLM_LIVE_HIST]; /* ring by second */
};

struct tlm_live {
	char *path;
	enum tlm_live_state state;
	char why[160];
	struct tlm_reader *rd;
	struct tlm_record *rec;
	struct tlm_report *rep;       /* the analysis's model: counters, OOMs, stacks, frames */
	struct tlm__replay rp;
	bool rp_ok;
	struct tlm__lsteps steps;
	bool steps_ok, have_signal, same_host;
	bool caught_up;               /* the last poll read all the file held */
	uint64_t start;               /* the header's start_monotonic_ns */
	uint64_t total[TLM_LIVE_DEVS];  /* device sizes from device samples, by ordinal */
	size_t nhist;
	struct tlm__lhist hist[TLM_LIVE_DEVS];
	uint64_t last_bytes;          /* file size seen last */
	uint64_t idle_since_ns;       /* CLOCK_MONOTONIC: no new bytes since */
	uint64_t next_check_ns;       /* the next look at the process */
	uint64_t rate_ns, rate_events; /* the last view's moment and event count */
	double rate;
	struct tlm_live_view *view;   /* made at the first tlm_live_view() */
};

uint64_t tlm__live_mono_ns(void);
/* Copies s into buf, cut to n - 1 bytes. */
static inline void tlm__live_clip(char *buf, size_t n, const char *s)
{
	size_t k = strlen(s);
	if (k >= n)
		k = n - 1;
	memcpy(buf, s, k);
	buf[k] = 0;
}
/* live_view.c: fills *l->view. */
void tlm__live_fill_view(struct tlm_live *l, enum tlm_live_sort sort, bool sites);
/* Whether process pid of a trace started at start_mono (on this host) is gone. */
bool tlm__live_pid_gone(uint32_t pid, uint64_t start_mono);

#endif
