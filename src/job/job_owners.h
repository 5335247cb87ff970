/* SPDX-License-Identifier: MIT */
/*
 * job_owners.h - who held each process's device memory in the job report
 * (docs/job.md, "Owners"): per process, the owners of its device (job.h:
 * `device`) as its own report splits them (report.h: tlm_report_owner),
 * read from a trace, a tlm-report/1 or a tlm-job/1 file alike, so merges
 * keep them. A process without owners (an older JSON report) has none and
 * its row says so.
 */
#ifndef TLM_JOB_OWNERS_H
#define TLM_JOB_OWNERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

struct tlm_jv;
struct tlm__json;
struct tlm_report;

struct tlm_job_owner {
	char *name;
	uint64_t peak, at_reserved_peak, at_end;
};

struct tlm_job_owners {
	size_t n;
	struct tlm_job_owner *o;  /* as the report orders them */
};

/* From a report; p->owners stays NULL when its device has none. -1 without memory. */
int tlm_job_owners_from_report(const struct tlm_report *r, struct tlm_job_proc *p);
/* From a tlm-report/1 object (job = false: its devices[] entry of p->device)
 * or a tlm-job/1 process (its "owners"). */
int tlm_job_owners_from_json(const struct tlm_jv *v, bool job, struct tlm_job_proc *p);
void tlm_job_owners_free(struct tlm_job_owners *w);
/* The section of the text report (nothing when no process has owners). */
void tlm_job_owners_text(const struct tlm_job *j, FILE *f);
/* The tlm-job/1 key of a process, "owners" ([] without them). */
void tlm_job_owners_json(struct tlm__json *js, const struct tlm_job_proc *p);

#endif
