/* SPDX-License-Identifier: MIT */
/*
 * devmem.h - the device's own view of its memory (DEVMEM and DEVPROCS
 * records: cuMemGetInfo, NVML's per-process use) reconciled with what the
 * report tracked: at each device's start, at its reserved peak and at every
 * OOM, the device's used memory split into tracked (the report's reserved
 * device memory in that exact state), this process's untracked share
 * (context, library pools no API shows) and other processes (pid, bytes).
 *
 * Contract: the collector follows the record stream (build.c) and keeps only
 * the samples it shows (per device: start and the best peak candidate; one
 * per OOM, bounded), so its memory does not grow with the number of samples.
 * A trace without DEVMEM records leaves r->devmem NULL and every output as
 * it was. docs/report.md ("DEVICE MEMORY") gives the rules.
 */
#ifndef TLM_REPORT_DEVMEM_H
#define TLM_REPORT_DEVMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/report.h"

#define TLM_DEVMEM_UNKNOWN UINT64_MAX /* NVML listed a process without its bytes */

enum tlm_devmem_nvml {
	TLM_DM_NVML_NOT_RECORDED = 0, /* no DEVPROCS record completes the sample */
	TLM_DM_NVML_ABSENT = 1,       /* no NVML library was loaded */
	TLM_DM_NVML_ERROR = 2,        /* NVML answered with an error (nvml_status) */
	TLM_DM_NVML_OK = 3,
};

struct tlm_report_devproc {
	uint32_t pid;
	uint64_t used;                 /* bytes; TLM_DEVMEM_UNKNOWN when NVML did not say */
};

/* One sample of one device, reconciled. */
struct tlm_report_devview {
	uint32_t sample;
	int device;
	uint32_t why;                  /* enum tlm_devmem_why of the sample */
	bool before;                   /* TLM_DEVMEM_F_BEFORE: the state before its event */
	int64_t time_ns;               /* since the trace start */
	uint64_t event;                /* ordinal (1-based) of the event it was taken with; 0 for EXIT */
	uint64_t total, free, used;    /* cuMemGetInfo; used = total - free */
	uint64_t tracked;              /* the report's reserved device memory in that state */
	int nvml;                      /* enum tlm_devmem_nvml */
	int32_t nvml_status;
	int64_t nvml_lag_ns;           /* when NVML answered, after the sample (the shim asks from its writer) */
	size_t nprocs;
	struct tlm_report_devproc *procs; /* every process NVML listed, as listed (NULL when none) */
	/* derived (tlm__devmem_derive) */
	bool self_listed;              /* NVML lists this trace's pid */
	uint64_t self_nvml;            /* NVML's figure for it; TLM_DEVMEM_UNKNOWN when not listed / not said */
	bool others_known;             /* self listed and every other process's bytes known */
	uint64_t others;               /* bytes of the other processes with known bytes (self listed), else 0 */
	size_t nothers;                /* processes other than this one that NVML listed (self listed), else 0 */
	uint64_t unattributed;         /* used - tracked - others, >= 0 */
	bool split;                    /* unattributed is this process's untracked share (nvml OK, self
	                                * listed, others known); else "untracked or other processes" */
	bool stale;                    /* NVML's later list does not fit the sample (tracked + others >
	                                * used: the processes changed in between): not used */
};

struct tlm_report_devmem_dev {
	int device;
	bool have_start, have_peak;
	struct tlm_report_devview start;
	struct tlm_report_devview peak; /* the sample of the highest tracked state (the first of equals) */
	bool peak_exact;               /* peak.tracked == the device's peak reserved: the peak state */
};

struct tlm_report_devmem {
	uint32_t pid;                  /* the trace's pid, which NVML's list is read against */
	uint64_t samples;              /* DEVMEM records read */
	uint64_t unplaced;             /* dropped: not directly after their event (damage), past 1024 devices */
	size_t ndevs;
	struct tlm_report_devmem_dev *devs; /* by device */
	size_t nooms;
	struct tlm_report_devview *ooms; /* OOM samples kept, by sample order */
	size_t *oom_view;              /* per r->ooms[i]: index into ooms, SIZE_MAX when none */
};

/* ---- collection (build.c) ------------------------------------------------ */

struct tlm__replay;
struct tlm__devmem_col;
struct tlm__devmem_col *tlm__devmem_new(void);
void tlm__devmem_discard(struct tlm__devmem_col *c);
/* Each EVENT record's seq, after the replay accounted it. */
void tlm__devmem_event(struct tlm__devmem_col *c, uint64_t seq);
/* -1 without memory. */
int tlm__devmem_sample(struct tlm__devmem_col *c, const struct tlm__replay *rp, uint64_t seq,
		       const struct tlm_rec_devmem *d);
int tlm__devmem_procs(struct tlm__devmem_col *c, const struct tlm_rec_devprocs *p);
/* After the replay finished: links OOMs, derives the splits, hands the
 * result to r->devmem (stays NULL without samples) and frees c. -1 ENOMEM. */
int tlm__devmem_finish(struct tlm__devmem_col *c, struct tlm_report *r, uint64_t start);
void tlm__devmem_free(struct tlm_report_devmem *m);

/* ---- reading it ---------------------------------------------------------- */

/* The view of r->ooms[i], or NULL. */
const struct tlm_report_devview *tlm_report_oom_devview(const struct tlm_report *r, size_t i);
/* The OOM diagnosis in one line ("72.1 GiB tracked, 0.6 GiB context and
 * untracked, 7.9 GiB held by pid 4242 (of 80.0 GiB; 0 B free)"), at most
 * 3 other processes named. Returns buf. */
char *tlm_report_devview_line(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n);
/* The same without the free memory, and the reason for no split in a word
 * or two ("NVML not loaded"): the summary's form, under its OOM line. */
char *tlm_report_devview_short(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n);
/* Why NVML gave no split, in words ("NVML not loaded"), or NULL when it did. */
const char *tlm_report_devview_why_unsplit(const struct tlm_report_devview *v, uint32_t pid, char *buf, size_t n);
const char *tlm_report_devmem_why_name(uint32_t why); /* "start", "peak", "oom", "exit" */
const char *tlm_report_devmem_nvml_name(int nvml);    /* "not_recorded", "absent", "error", "ok" */

/* ---- renderers (render_devmem.c, render_html_devmem.c): nothing without samples */

struct tlm__json;
/* text after first, cut at ", " / "; " / " (" so no line passes TLM__WIDTH; then cont */
void tlm__devmem_wrap(FILE *f, const char *first, const char *cont, const char *text);
void tlm__devmem_text(FILE *f, struct tlm_report *r);          /* DEVICE MEMORY */
void tlm__devmem_text_oom(FILE *f, struct tlm_report *r, size_t i); /* r->ooms[i]'s diagnosis */
bool tlm__devmem_summary_oom(FILE *f, struct tlm_report *r, size_t i); /* one line; false: none */
void tlm__devmem_json(struct tlm__json *j, const struct tlm_report *r); /* "device_memory" */
void tlm__devmem_json_view(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_devview *v);
void tlm__devmem_json_oom(struct tlm__json *j, const struct tlm_report *r, size_t i);
void tlm__devmem_html(FILE *f, struct tlm_report *r);          /* the "Device memory" table */
void tlm__devmem_html_oom(FILE *f, const struct tlm_report *r, size_t i, int cols); /* a row under an OOM */

#endif
