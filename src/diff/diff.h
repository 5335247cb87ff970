/* SPDX-License-Identifier: MIT */
/*
 * diff.h - `tlm diff BASE NEW`: what changed between two runs, site by site.
 *
 * Each side is a trace or a `tlm report --format json` file (schema
 * tlm-report/1); a trace is first turned into that JSON in memory, so both
 * go through one loader. Sites are (device, allocation stack) groups of the
 * report's `leaks` and `live_at_end`; they are matched across runs by a key
 * made of the device and, for each frame, (function, file base name, line),
 * or (module base name, offset in the module) for a frame without symbols,
 * or "unknown". Addresses are never compared, so two runs of one program
 * match whatever their load addresses. Sites with the same key in one run
 * are added up. docs/diff.md is the user guide and the JSON schema.
 */
#ifndef TLM_DIFF_DIFF_H
#define TLM_DIFF_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "encoders/json_in.h"
#include "encoders/json_out.h"
#include "analysis/report.h"

#define TLM_DIFF_SCHEMA "tlm-diff/1"
#define TLM_DIFF_MAX_INPUT ((size_t)256 << 20) /* bytes of one JSON report */

struct tlm_diff_site {
	int device;
	uint64_t bytes, count;
	char *key;                    /* the match key (owned) */
	const struct tlm_jv *stack;   /* frames of the first site with this key (in the side's doc) */
	uint64_t per_step;            /* leaks: bytes_per_step (0 when the report has none) */
	bool stack_cut;               /* that stack's Python frames were cut at 64 ("python_stack_cut") */
	const char *label;            /* the report's label of that site (its "label"), NULL without */
};

struct tlm_diff_dev {
	int device;
	const char *kind;             /* in the side's doc */
	uint64_t peak_reserved, peak_allocated;
	double frag;                  /* fragmentation at peak */
};

struct tlm_diff_side {
	char *path;
	struct tlm_jv *doc;
	size_t ndev, nleaks, nlive, npeak;
	struct tlm_diff_dev *dev;
	struct tlm_diff_site *leaks, *live, *peak;
	uint64_t leak_bytes, leak_count, live_bytes, live_count;
	uint64_t per_step_bytes;      /* the leaks' bytes_per_step, summed (reports with steps) */
	bool has_peak;                /* the report has "at_peak" (older ones do not) */
	uint64_t peak_bytes, peak_count;  /* what held the allocated peaks, all devices */
	uint64_t integrity_errors;
};

/* Loads a trace or a JSON report. 0, or -1 with err. */
int tlm_diff_load(const char *path, struct tlm_diff_side *out, char *err, size_t errlen);
/* Loads from a report already built (tests: with a fake symbolizer). */
int tlm_diff_load_report(struct tlm_report *r, struct tlm_diff_side *out, char *err, size_t errlen);
/* Loads from JSON text (a tlm-report/1 document). */
int tlm_diff_load_json(const char *path, const char *buf, size_t len, struct tlm_diff_side *out, char *err,
		       size_t errlen);
void tlm_diff_side_free(struct tlm_diff_side *s);

enum tlm_diff_status { TLM_DIFF_SAME, TLM_DIFF_GREW, TLM_DIFF_SHRANK, TLM_DIFF_NEW, TLM_DIFF_GONE };

struct tlm_diff_row {
	int status;                          /* enum tlm_diff_status */
	int device;
	const struct tlm_diff_site *before, *after; /* NULL for new / gone */
	uint64_t before_bytes, before_count, after_bytes, after_count;
	int64_t delta_bytes, delta_count;    /* after - before, saturated */
};

struct tlm_diff_devrow {
	int device;
	const char *kind;
	const struct tlm_diff_dev *before, *after; /* NULL when absent on that side */
};

struct tlm_diff {
	const struct tlm_diff_side *base, *new_;
	size_t nleaks, nlive, ndev, npeak;
	struct tlm_diff_row *leaks, *live;   /* by |delta_bytes| descending */
	struct tlm_diff_row *peak;           /* at the allocated peaks; both sides have them */
	struct tlm_diff_devrow *dev;         /* by device, then kind */
	int64_t leak_growth;                 /* leaked bytes, new - base (saturated) */
	bool gate;                           /* --fail-on-growth given */
	uint64_t gate_bytes;
	bool failed;                         /* gate && leak_growth > gate_bytes */
	bool peak_gate;                      /* --fail-on-peak-growth given */
	uint64_t peak_gate_bytes;
	bool peak_failed;                    /* a device's peak allocated grew by more */
	/* diff_steps.c: the growth gate also compares, against the same bytes,
	 * the leaks' growth per step and the live-at-end growth at the sites
	 * that are leaks in either run */
	int64_t per_step_growth;
	int64_t live_leak_growth;
	bool failed_leaks, failed_per_step, failed_live; /* which comparisons failed (failed = any) */
};

/* Compares; 0 or -1 (out of memory). gate: whether to apply gate_bytes. */
int tlm_diff_compute(const struct tlm_diff_side *base, const struct tlm_diff_side *new_, bool gate,
		     uint64_t gate_bytes, struct tlm_diff *out);
void tlm_diff_free(struct tlm_diff *d);
/* The peak gate: fails when any device's peak allocated bytes grew by more
 * than bytes (a device only in NEW grew by all of its peak). */
void tlm_diff_peak_gate(struct tlm_diff *d, uint64_t bytes);
int64_t tlm_diff_sub(uint64_t after, uint64_t before); /* after - before, saturated to int64 */

/* diff_steps.c, called by tlm_diff_compute / the text and JSON writers / the gate message */
void tlm__diff_steps_compute(struct tlm_diff *d);
void tlm__diff_steps_text(const struct tlm_diff *d, FILE *f);
void tlm__diff_steps_json(struct tlm__json *j, const struct tlm_diff *d);
void tlm__diff_steps_message(const struct tlm_diff *d, FILE *f);
/* diff.c's stack printer and signed sizes, for diff_steps.c */
void tlm__diff_stack(FILE *f, const struct tlm_jv *stack, size_t max);
/* The row's site by the report's labelling rule ("site ..."), when it says
 * more than its stack's first frame. */
void tlm__diff_label(FILE *f, const struct tlm_diff_row *r);
char *tlm__diff_signed(char *buf, size_t n, int64_t v);

int tlm_diff_text(const struct tlm_diff *d, FILE *f);
int tlm_diff_json(const struct tlm_diff *d, FILE *f);
/* The gate's verdict on f (stderr): the growth and the sites that grew. */
void tlm_diff_gate_message(const struct tlm_diff *d, FILE *f);

#endif
