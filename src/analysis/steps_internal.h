/* SPDX-License-Identifier: MIT */
/*
 * steps_internal.h - the pieces behind report_steps.h.
 *
 * Contract: while the trace streams, tlm__steps_event() records each
 * successful allocation (time, event ordinal, size, site, thread) and its
 * free, up to TLM__STEPS_MAX_RECS allocations (about 56 bytes each: the only
 * part of the report whose memory follows the number of events, bounded by
 * that cap); past it, steps are found in the recorded prefix and the report
 * says so. It also keeps, per device, the first free-memory figure the trace
 * carries. tlm__steps_finish() then detects the steps and fills r->steps.
 */
#ifndef TLM_REPORT_STEPS_INTERNAL_H
#define TLM_REPORT_STEPS_INTERNAL_H

#include "analysis/internal.h"
#include "analysis/report_steps.h"

#define TLM__STEPS_MAX_RECS (1u << 20)
#define TLM__STEPS_MAX_DEV 64

struct tlm__srec {
	uint64_t t, ft;          /* allocation and free time (absolute); ft = UINT64_MAX: never freed */
	uint64_t ev, fev;        /* event ordinals; fev = UINT64_MAX */
	uint64_t size;
	uint32_t stack;          /* canonical stack id */
	uint32_t thread, fthread;
	int16_t device;
	uint8_t mkind;
	uint8_t block;           /* allocator-layer block */
	uint32_t site;           /* dense site id (detection) */
};

struct tlm__steps_rec {
	struct tlm__srec *r;
	size_t n, cap;
	struct tlm__live_map map; /* (ns, addr) -> record index (in .size) */
	bool map_ok, full;
	/* The records began mid-run (tlm top's rolling window): the allocated
	 * bytes live before the first record and still live count in every
	 * step's peak (base, per device, set by tlm__steps_finish). */
	bool window;
	uint64_t base[TLM__STEPS_MAX_DEV];
	uint64_t dropped;
	struct {
		bool known;
		uint64_t capacity;   /* free + reserved then */
		const char *source;
	} cap_[TLM__STEPS_MAX_DEV];
};

struct tlm__steps_found;

int tlm__steps_init(struct tlm__steps_rec *s);
void tlm__steps_fini(struct tlm__steps_rec *s);
/* After tlm__replay_event(rp, ev): ev as read (the stack is made canonical here). */
void tlm__steps_event(struct tlm__steps_rec *s, const struct tlm__replay *rp, const struct tlm_event *ev);
/* After tlm__replay_finish: fills r->steps (always allocated). -1 on ENOMEM. */
int tlm__steps_finish(struct tlm__steps_rec *s, const struct tlm__replay *rp, struct tlm_report *r);
void tlm__steps_free(struct tlm_report_steps *st);
/* steps.c: one phase's steps, peaks, leaks and forecast (and with primary,
 * its activations) into st; its steps stop at the records bnd[0..nb) (other
 * phases' unit starts, sorted). */
int tlm__steps_analyse(struct tlm_report *r, struct tlm_report_steps *st, struct tlm__steps_rec *rec,
		       const struct tlm__replay *rp, struct tlm__srec *recs, size_t n, const struct tlm__steps_found *f,
		       const size_t *bnd, size_t nb, bool primary);
/* steps_forecast.c: a run that died of out of memory gets no forecast (the
 * step it died in instead); else each device's forecast with growth is
 * replaced by the steady step replayed through the caching allocator's
 * model until a request fails (devices with allocator blocks). */
int tlm__steps_forecast_model(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__srec *recs, size_t n,
			      const struct tlm__steps_found *f, const size_t *end_idx, uint64_t tend, uint64_t start);

/* Adds st's step leaks live at the end that the time rule did not call leaks. */
void tlm__steps_merge_leaks(struct tlm_report *r, const struct tlm_report_steps *st);

/* ---- detection (steps_detect.c) ---------------------------------------- */

#define TLM__STEPS_MAX_PHASES 8

/* One repeating phase: its units (steps) and the sites that run in each. */
struct tlm__steps_found {
	size_t k;                /* steps; 0 = none */
	size_t *pos;             /* record index of each step's first allocation (k of them) */
	uint32_t anchor_site;
	uint8_t *step_site;      /* by site id: allocates count/k times in (most) steps */
	size_t nsites, nstep_sites;
	uint32_t *site_stack;    /* by site id (shared by the phases of one detection) */
	int16_t *site_device;
	int inside;              /* the phase whose steps hold these (micro-steps), -1 none */
	bool training;           /* a backward pass or an optimizer step is seen in its steps */
};

/* Whether a stack shows a backward pass or an optimizer step (steps.c: by
 * its frames). */
typedef bool (*tlm__steps_evidence_fn)(void *ctx, uint32_t stack);

/* Every phase of the run, in the order they were found (the strongest first). */
struct tlm__phases_found {
	size_t n;
	struct tlm__steps_found ph[TLM__STEPS_MAX_PHASES];
	size_t nsites;
	uint32_t *site_stack;
	int16_t *site_device;
};

/* recs in event order, only those of the allocated layer; sets rec.site. */
int tlm__steps_detect(struct tlm__srec *recs, size_t n, tlm__steps_evidence_fn ev, void *ev_ctx,
		      struct tlm__phases_found *out);
void tlm__phases_found_free(struct tlm__phases_found *f);

/* ---- activations (steps_act.c) ------------------------------------------ */

/* The activations at the peak of step j (peak reached at event ordinal
 * peak_ev), with the checkpointing estimate; fills st->act. */
int tlm__steps_activations(struct tlm_report *r, struct tlm_report_steps *st, const struct tlm__srec *recs,
			   size_t n, size_t j, uint64_t t0, uint64_t t1, uint64_t peak_ev);

/* steps_unit.c: in the step's window [lo, hi) on device and thread, the
 * nn.Module whose forward holds the activations (Python stacks): for each
 * site, unit_at[site] = the index of its frame in the site's frames
 * (SIZE_MAX: not under it), starts[site] = an allocation there begins an
 * instance, key_of[site] = the same id for sites at the same place inside
 * the unit (the same frames from the innermost to its line). 1 found, 0
 * none, -1 ENOMEM. */
int tlm__steps_unit(struct tlm_report *r, const struct tlm__srec *recs, size_t lo, size_t hi, int device,
		    uint32_t thread, uint64_t peak_ev, uint64_t t1, uint32_t nsites, size_t *unit_at, uint8_t *starts,
		    uint32_t *key_of);

/* steps_ckpt.c: the highest point of step [t0, t1) (records [lo, hi)) on
 * device replayed with segments of `every` instances checkpointed; fn: the
 * function's allocations in the step (record indices, in order), inst: the
 * instance of each (< L). *ok false without memory. */
uint64_t tlm__ckpt_replay(const struct tlm__srec *recs, size_t lo, size_t hi, uint64_t t0, uint64_t t1, int device,
			  uint64_t live_at_start, const size_t *fn, const size_t *inst, size_t nfn, size_t L,
			  unsigned every, bool *ok);

#endif
