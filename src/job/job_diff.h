/* SPDX-License-Identifier: MIT */
/*
 * job_diff.h - `tlm diff` of two jobs: BASE and NEW are each a set of
 * processes (tlm_job_load: traces, tlm-report/1 and tlm-job/1 files,
 * directories, globs), compared process by process and as a whole
 * (docs/diff.md, "Jobs"; JSON schema tlm-job-diff/1 there).
 *
 * Contract:
 * - Matching: a process's key is (rank, role, ordinal), the ordinal being
 *   its place among the job's processes of the same rank and role in job
 *   order (tlm_job_compare: by host, then start). So ranks match by rank,
 *   a rank's workers and children by the order they started, processes
 *   without a rank (main, their workers) by order. A key on one side only
 *   is a process only in BASE or only in NEW.
 * - Per process and for the job: the summaries' peaks, leaks and OOMs
 *   (struct tlm_job_proc), the spread of the peaks and the sites that differ
 *   most across ranks, and the first OOM.
 * - Gates: the single-trace gates of src/diff (--fail-on-growth,
 *   --fail-on-peak-growth) applied to every process, against an empty run
 *   for a process only in NEW. When both files of a pair are per-process
 *   inputs, they are read again and compared by tlm_diff_compute (sites,
 *   per step, live at end, every device), pair by pair on `threads`
 *   threads, each holding two sides at a time; a process that came from a
 *   tlm-job/1 file is gated on its summary (leak bytes, the peak allocated
 *   bytes of its device). The job gates: the job's leaked bytes (all
 *   processes) and the highest peak allocated across the compared processes.
 */
#ifndef TLM_JOB_DIFF_H
#define TLM_JOB_DIFF_H

#include "job.h"

#define TLM_JOB_DIFF_SCHEMA "tlm-job-diff/1"

struct tlm_jdiff_peakdev { /* a device whose peak allocated bytes grew past the limit */
	int device;
	char kind[12];
	uint64_t before, after;
};

struct tlm_jdiff_proc {
	int64_t rank;
	char role[8];
	size_t ordinal;                  /* 1-based, among (rank, role) */
	char name[64];                   /* "rank 3", "rank 3 worker #2", "main #1" */
	const struct tlm_job_proc *base, *new_; /* NULL: not on that side */
	size_t base_index, new_index;    /* into the jobs' procs */
	bool changed;                    /* a figure differs, or it is on one side only */
	/* the gates (tlm_jdiff_gates) */
	bool full;                       /* gated by src/diff on both files (else the summaries) */
	char *error;                     /* reading a file again failed */
	int64_t leak_growth, per_step_growth, live_leak_growth;
	bool failed, failed_leaks, failed_per_step, failed_live, peak_failed;
	size_t npeakdev;
	struct tlm_jdiff_peakdev *peakdev;
	char *message;                   /* what src/diff says on stderr, with the name */
};

struct tlm_jdiff_spread { /* one side's spread of one site across ranks */
	bool any;                        /* this side compared any process */
	uint64_t min, max;
	size_t min_proc, max_proc;       /* into tlm_jdiff.procs */
};

struct tlm_jdiff_site {
	const char *key;                 /* in one of the jobs */
	struct tlm_jdiff_spread base, new_;
	int64_t delta;                   /* new spread - base spread */
};

struct tlm_jdiff {
	struct tlm_job *base, *new_;
	size_t nprocs;
	struct tlm_jdiff_proc *procs;    /* by rank (none last), role, ordinal */
	size_t *base_map, *new_map;      /* job proc index -> procs index */
	size_t matched, only_base, only_new, unchanged;
	size_t nsites;
	struct tlm_jdiff_site *sites;    /* both jobs' top differing sites, by |delta| */
	/* gates */
	bool gate, peak_gate;
	uint64_t gate_bytes, peak_gate_bytes;
	int64_t job_leak_growth, job_per_step_growth, job_live_growth, job_peak_growth;
	bool job_failed, job_peak_failed;
	size_t nfailed, npeak_failed, nerrors;   /* processes */
	bool failed;                     /* any gate failed: exit 1 */
};

/* Checks both loaded and compared jobs (no unreadable input, no process
 * given twice) and matches them. 0, or -1 with err (one line; *which is
 * "BASE" or "NEW" when one side is at fault). The jdiff owns the jobs. */
int tlm_jdiff_build(struct tlm_job *base, struct tlm_job *new_, struct tlm_jdiff *d, const char **which, char *err,
		    size_t errlen);
/* One side is whole: every input read, no process given twice (one
 * process's trace and a report of it). 0, or -1 with err. */
int tlm_jdiff_check_side(const struct tlm_job *j, char *err, size_t errlen);
/* Applies the gates; threads as tlm_job_load. 0, or -1 (out of memory). */
int tlm_jdiff_gates(struct tlm_jdiff *d, bool gate, uint64_t gate_bytes, bool peak_gate, uint64_t peak_gate_bytes,
		    unsigned threads);
void tlm_jdiff_free(struct tlm_jdiff *d);
int64_t tlm_job_sub(uint64_t after, uint64_t before); /* after - before, saturated */

/* job_diff_render.c */
int tlm_jdiff_text(const struct tlm_jdiff *d, const char *base, const char *new_, FILE *f);
int tlm_jdiff_json(const struct tlm_jdiff *d, const char *base, const char *new_, FILE *f);
/* The gates' verdict on f (stderr): each failing process (the first 8 in
 * full) and the job. */
void tlm_jdiff_gate_message(const struct tlm_jdiff *d, FILE *f);

#endif
