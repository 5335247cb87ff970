/* SPDX-License-Identifier: MIT */
/*
 * steps_score.h - scoring candidate units of a run's allocation sequence
 * (steps_score.c), for the phase search of steps_detect.c: the sites of the
 * records (device, stack) with their counts and runs, a candidate step count
 * with its anchor scored by the sites that allocate the same number of times
 * in each of its units, and whether memory comes back to one level at each
 * unit's start (flat).
 */
#ifndef TLM_REPORT_STEPS_SCORE_H
#define TLM_REPORT_STEPS_SCORE_H

#include "analysis/steps_internal.h"

#define MAX_CANDIDATES 24
#define MAX_RUN_CANDIDATES 8

struct tlm__ssite {
	struct tlm__key key;     /* a = device, b = stack */
	uint64_t count;
	size_t first;            /* record index of its first allocation */
	size_t last;             /* record index of its last allocation (while interning) */
	uint64_t recycled;       /* allocations freed before the site's next one */
	uint32_t thread;         /* of its first allocation */
	uint64_t bursts;         /* runs of its allocations with no other site's between */
	uint64_t run, bmin, bmax; /* the current run's length, the shortest and longest */
};

struct tlm__ssites {
	struct tlm__ssite *s;
	size_t n, cap;
	struct tlm__index idx;
};

struct tlm__sscore {
	size_t k;
	uint32_t anchor;
	uint64_t am;             /* the anchor's allocations per unit (a unit starts at every am-th) */
	size_t step_sites;
	bool recycles;           /* a step site frees most of its allocations before its next one */
	double weight;           /* step-site allocations per unit */
	uint64_t span;           /* the time the anchor's allocations span */
	uint64_t covered;        /* allocations of step sites in their consistent segments */
};

/* Per site while scoring one candidate. */
struct tlm__stally {
	uint64_t m;              /* count / k when a multiple of k, else 0 */
	size_t seg;              /* segment of the last occurrence, SIZE_MAX none */
	uint64_t in_seg;         /* occurrences in it */
	uint64_t good;           /* segments with exactly count/k occurrences */
};

struct tlm__sdelta {
	uint64_t ord;
	int64_t bytes;
};

struct tlm__scand {
	uint64_t count;
	size_t nmult;            /* sites (>= 3 allocations) whose count is a multiple */
	uint32_t site;           /* a site allocating in `count` runs of one length: the anchor; else UINT32_MAX */
};

int tlm__ss_intern(struct tlm__ssites *ss, struct tlm__srec *recs, size_t n);
/* Scores candidate k with anchor a over the sites not taken; marks the step sites into mark when not NULL. */
void tlm__ss_score(const struct tlm__ssites *ss, const struct tlm__srec *recs, size_t n, size_t k, uint32_t a,
		   const uint8_t *taken, struct tlm__stally *t, struct tlm__sscore *out, uint8_t *mark);
bool tlm__ss_better(const struct tlm__sscore *x, const struct tlm__sscore *y);
struct tlm__sdelta *tlm__ss_deltas(const struct tlm__srec *recs, size_t n, size_t *nd);
bool tlm__ss_flat(const struct tlm__srec *recs, size_t n, const struct tlm__sdelta *d, size_t nd, uint32_t a);
size_t tlm__ss_candidates(const struct tlm__ssites *ss, const uint8_t *taken, struct tlm__scand *c, size_t max);

#endif
