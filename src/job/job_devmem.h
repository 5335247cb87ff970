/* SPDX-License-Identifier: MIT */
/*
 * job_devmem.h - the device's own view in the job report (docs/job.md):
 * per process, its device memory at its reserved peak split into tracked,
 * its untracked share and other processes, and its first OOM's diagnosis
 * line (src/analysis/devmem.h). Kept per process in a few words; read from a
 * trace, a tlm-report/1 or a tlm-job/1 file alike, so merges keep it. A
 * process without device samples has none, and the job report then prints
 * and writes exactly what it did before.
 */
#ifndef TLM_JOB_DEVMEM_H
#define TLM_JOB_DEVMEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "job.h"

struct tlm_jv;
struct tlm__json;
struct tlm_report;

struct tlm_job_devmem {
	bool have_peak;          /* a sample of the process's device at its highest sampled state */
	int device;
	bool at_reserved_peak;   /* that sample is of the reserved peak state itself */
	uint64_t total, used, tracked;
	bool split;              /* NVML split it: untracked is this process's share */
	uint64_t untracked;      /* split: this process's untracked share; else untracked or other processes */
	uint64_t others;         /* split: other processes' bytes */
	uint64_t nothers;        /* split: how many */
	char *oom_line;          /* the first OOM's diagnosis, NULL when it has none */
};

/* From a report (device: the process's device, job.h); p->dm stays NULL
 * when the trace has no samples. -1 without memory. */
int tlm_job_devmem_from_report(struct tlm_report *r, struct tlm_job_proc *p);
/* From a tlm-report/1 object (job = false) or a tlm-job/1 process. */
int tlm_job_devmem_from_json(const struct tlm_jv *v, bool job, struct tlm_job_proc *p);
void tlm_job_devmem_free(struct tlm_job_devmem *d);
/* The section of the text report (nothing when no process has samples). */
void tlm_job_devmem_text(const struct tlm_job *j, FILE *f);
/* The diagnosis under a process's line in the OOM list. */
void tlm_job_devmem_oom_text(const struct tlm_job_proc *p, FILE *f);
/* tlm-job/1 keys of a process ("device_memory_at_peak"), and of its
 * first_oom ("diagnosis"); none without samples. */
void tlm_job_devmem_json(struct tlm__json *js, const struct tlm_job_proc *p);
void tlm_job_devmem_json_oom(struct tlm__json *js, const struct tlm_job_proc *p);

#endif
