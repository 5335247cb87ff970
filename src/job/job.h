/* SPDX-License-Identifier: MIT */
/*
 * job.h - the job report: many processes (ranks, workers, children) of one
 * job side by side, and how the ranks differ (docs/job.md, JSON schema
 * tlm-job/1 in docs/job.md).
 *
 * Contract: tlm_job_load() reads each input (a trace, a `tlm report --format
 * json` report, or a tlm-job/1 report, so that per-node job reports merge)
 * on up to `threads` threads; each thread holds one report at a time and
 * keeps only its process summary (struct tlm_job_proc, a few KiB), so memory
 * is O(threads x one report + processes x summary). tlm_job_compare() then
 * derives roles and the cross-rank comparison from the summaries alone.
 * Times: each process's CLOCK_REALTIME start (trace header) places it on
 * one job clock; event times are offsets from that start (CLOCK_MONOTONIC),
 * so processes on different hosts align as well as their realtime clocks do.
 */
#ifndef TLM_JOB_H
#define TLM_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TLM_JOB_SCHEMA "tlm-job/1"
#define TLM_JOB_SITES 32 /* at-peak sites kept per process, by bytes */
#define TLM_JOB_TOP_DIFF 10 /* sites listed as differing most */

struct tlm_job_site {
	char *key;      /* tlm_report_site_key() */
	uint64_t bytes; /* device memory it held at the process's allocated peak */
};

/* The job timeline (job_series.c, docs/job.md): a process's device memory
 * over time on the device of its table row, reduced while its trace is read
 * from the report's points (export.h) to at most TLM_JOB_BUCKETS buckets
 * that each keep the points of their lowest and highest reserved and
 * allocated bytes and their last point, so every extreme of those points,
 * and the peak, stays exact. Times are from the process's start. */
#define TLM_JOB_BUCKETS 256
#define TLM_JOB_MAX_POINTS (5 * TLM_JOB_BUCKETS)
#define TLM_JOB_OOMS 16 /* OOMs kept per process for the timeline */

struct tlm_job_point {
	int64_t t_ns;
	uint64_t reserved, allocated;
};

struct tlm_job_oom {
	int64_t t_ns;
	int device;
	uint64_t requested, device_free;
};

struct tlm_job_series {
	int device;                  /* the device drawn (the process's `device`), -1: none */
	int64_t first_ns, end_ns;    /* the run, from the process's start */
	size_t n;
	struct tlm_job_point *pt;    /* time order, <= TLM_JOB_MAX_POINTS */
	size_t nooms;                /* the first ones, any device */
	struct tlm_job_oom ooms[TLM_JOB_OOMS];
};
struct tlm_job_devmem; /* job_devmem.h */
struct tlm_job_owners; /* job_owners.h */

struct tlm_job_proc {
	char *source;                /* the input it came from */
	char *file;                  /* the file to re-read it from (a trace or tlm-report/1); NULL from tlm-job/1 */
	char *error;                 /* non-NULL: unreadable, only source is set */
	uint32_t pid, ppid;
	char *host, *exe, *command;  /* command: argv joined by spaces */
	int64_t rank, local_rank, world_size; /* -1: unknown */
	bool forked;
	char role[8];                /* rank, worker, child, main (tlm_job_compare) */
	char exit[12];               /* clean, signal, truncated */
	char end_how[16];
	uint64_t start_realtime_ns;
	int64_t first_event_ns, end_ns; /* from the process's start */
	uint64_t events, lost_events, integrity_errors;
	int device;                  /* the device of the highest reserved peak, -1: none */
	unsigned ndevices;           /* devices that held device memory */
	uint64_t peak_reserved, peak_allocated; /* device memory, on `device` */
	uint64_t leak_sites, leak_bytes;
	uint64_t ooms;
	int64_t first_oom_ns;        /* from the process's start; if ooms */
	int first_oom_device;
	uint64_t first_oom_requested;
	size_t nsites;
	struct tlm_job_site *sites;  /* by bytes, descending */
	struct tlm_job_series *series; /* NULL: not asked for, or a JSON input */
	struct tlm_job_devmem *dm;   /* the device's own view (job_devmem.h); NULL: no samples */
	struct tlm_job_owners *owners; /* who held `device`'s memory (job_owners.h); NULL: none known */
};

struct tlm_job_spread {
	uint64_t min, max;
	size_t min_proc, max_proc;   /* indices into procs */
};

struct tlm_job_diff {
	char *key;                   /* points into a proc's site */
	uint64_t min, max;
	size_t min_proc, max_proc;
};

struct tlm_job {
	size_t nprocs;
	struct tlm_job_proc *procs;  /* after tlm_job_compare: by rank, host, pid, start */
	size_t ninputs, nunreadable;
	/* tlm_job_compare */
	uint64_t start_realtime_ns;  /* the earliest process start */
	size_t nhosts, nranks;
	bool compared_ranks;         /* the comparison is across ranks (else across all processes) */
	size_t ncompared;
	struct tlm_job_spread peak_reserved, peak_allocated;
	size_t ndiffs;
	struct tlm_job_diff diffs[TLM_JOB_TOP_DIFF];
	size_t noom_procs;
	size_t oom_order[8];         /* the first processes to hit an OOM, by job time */
};

/* Expands inputs (files, directories: their traces and *.json; glob
 * patterns that match no file are expanded with glob(3)) and reads them.
 * NULL with err on a usage problem (no input found, out of memory);
 * unreadable inputs become procs with error set. threads 0 = the online CPUs. */
struct tlm_job *tlm_job_load(char *const *inputs, size_t n, unsigned threads, char *err, size_t errlen);
/* The same, with each trace's timeline kept (proc->series) when series. */
struct tlm_job *tlm_job_load_ex(char *const *inputs, size_t n, unsigned threads, bool series, char *err,
				size_t errlen);
/* Summary of one trace or JSON file into p (source set by the caller). */
void tlm_job_read_one(struct tlm_job_proc *p);
int tlm_job_compare(struct tlm_job *j);
int tlm_job_text(const struct tlm_job *j, FILE *f);
int tlm_job_json(const struct tlm_job *j, FILE *f);
void tlm_job_free(struct tlm_job *j);
void tlm_job_proc_fini(struct tlm_job_proc *p);
/* job_render.c: "2026-12-01T09:51:58.665Z"; "+0.014 s" on the job clock */
void tlm_job_iso_time(char *buf, size_t n, uint64_t realtime_ns);
void tlm_job_secs(char *buf, size_t n, int64_t ns);
/* "rank 3", else "pid 1234@host" */
void tlm_job_proc_name(const struct tlm_job_proc *p, char *buf, size_t len);

/* job_json_in.c: fills procs from a tlm-report/1 or tlm-job/1 file (appends
 * to *out, *n); -1 with err when it is neither. */
int tlm_job_read_json(const char *path, struct tlm_job_proc **out, size_t *n, char *err, size_t errlen);

/* job_series.c: the timeline of r's device `device` (-1: the run and OOMs
 * only); NULL without memory. */
struct tlm_report;
struct tlm_job_series *tlm_job_series_of(const struct tlm_report *r, int device);
void tlm_job_series_free(struct tlm_job_series *s);
/* Each process's id in the merged exports (out[j->nprocs]): its pid, unless
 * an earlier process (job order) has the same one (another host, an exec'd
 * image): then TLM_JOB_PID_BASE + its index, above any Linux pid (at most
 * 2^22). -1 without memory. */
#define TLM_JOB_PID_BASE 4194304u
int tlm_job_track_pids(const struct tlm_job *j, uint32_t *out);
/* "rank 3 (host)", "rank 3 worker pid N (host)", "main pid N (host)" */
void tlm_job_track_name(const struct tlm_job_proc *p, char *buf, size_t len);
/* job_chrome.c, job_html.c: the merged timeline (docs/job.md) */
int tlm_job_chrome(const struct tlm_job *j, FILE *f);
int tlm_job_html(const struct tlm_job *j, FILE *f);

#endif
