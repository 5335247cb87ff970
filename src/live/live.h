/* SPDX-License-Identifier: MIT */
/*
 * live.h - `tlm top`: traces followed while they are written (docs/top.md).
 *
 * Contract: a struct tlm_live follows one trace file. It reads what the
 * writer has written so far (the reader's follow mode: a chunk still being
 * written is waited for, not an error), at most a budget of records per
 * call, through the analysis's own per-event model (the replay: two-layer
 * accounting, the live map, OOMs; stacks, frames and labels as the report
 * makes them), and keeps memory bounded: the live set, the distinct stacks,
 * TLM_LIVE_HIST seconds of history per device and a rolling window of the
 * last TLM_LIVE_WINDOW allocations on which the report's step rules run
 * (steps per second, growth per step, the forecast). It only reads the
 * file: the recorded program pays nothing. It ends where the trace says
 * the process ended (END, an exec), or when the process is gone (on the
 * trace's host: its pid is unused, a zombie, or a later process), and then
 * reads the rest as a plain reader does (a cut last chunk: truncated).
 *
 * A struct tlm_live_job is a set of them: one trace, every trace of a
 * directory (new ones picked up as they appear), or the traces a `tlm run`
 * manifest names. Views (tlm_live_view) are snapshots for the renderers:
 * plain text (live_text.c: --once, --interval) and the ncurses screen
 * (live_tui.c). Single-threaded.
 */
#ifndef TLM_LIVE_H
#define TLM_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/report_steps.h"

#define TLM_LIVE_HIST 300      /* seconds of history kept per (device, kind) */
#define TLM_LIVE_DEVS 8        /* (device, kind) rows kept per trace */
#define TLM_LIVE_SITES 64      /* top live sites in a view */
#define TLM_LIVE_LABEL 240     /* bytes of a site's label */
#define TLM_LIVE_WINDOW (1u << 17) /* allocations the step analysis looks at, at most */

enum tlm_live_state {
	TLM_LIVE_WAITING = 0,  /* no trace (header) in the file yet */
	TLM_LIVE_RUNNING = 1,  /* following */
	TLM_LIVE_ENDED = 2,    /* the process ended (or is gone): everything is read */
	TLM_LIVE_FAILED = 3,   /* cannot be read (not a trace, out of memory) */
};

enum tlm_live_sort { TLM_LIVE_BY_BYTES, TLM_LIVE_BY_GROWTH, TLM_LIVE_BY_COUNT, TLM_LIVE_BY_NEWEST, TLM_LIVE_NSORT };

struct tlm_live_dev {
	int device, kind;            /* kind: enum tlm_mem_kind */
	uint64_t reserved, allocated, peak_reserved, peak_allocated;
	uint64_t total;              /* the device's size (the trace's device samples), 0: unknown */
	size_t nhist;                /* seconds of history, oldest first, the last one now */
	uint64_t hist_allocated[TLM_LIVE_HIST], hist_reserved[TLM_LIVE_HIST]; /* the highest in each second */
};

struct tlm_live_site {
	int device;
	uint32_t stack_id;
	uint64_t bytes, count;
	int64_t first_ns, last_ns;   /* first and last allocation still live, since the trace start */
	bool leak;                   /* a step leak of the window (report.md, "Leaks per step") */
	uint64_t per_step;           /* its bytes per step then */
	char label[TLM_LIVE_LABEL];  /* the report's label for it (labels.c) */
};

struct tlm_live_view {
	const char *path;
	enum tlm_live_state state;
	char why[160];               /* WAITING, FAILED: why; ENDED: how ("exit", "signal 9", "truncated", ...) */
	uint32_t pid;
	int64_t rank;                /* env.RANK, -1: none */
	bool forked;                 /* a fork child (a DataLoader worker) */
	char command[200];
	int64_t now_ns;              /* the view's moment, since the trace start */
	uint64_t events;
	double events_per_s;         /* over the last second or more; -1: not known yet */
	uint64_t read_bytes, file_bytes; /* read < file: catching up */
	uint64_t lost, integrity_errors;
	size_t ndev;
	struct tlm_live_dev dev[TLM_LIVE_DEVS];
	/* the report's step rules on the window of the last allocations */
	bool steps_found;
	const char *steps_why;       /* static text when !steps_found */
	size_t steps;                /* steps in the window */
	double seconds_per_step;
	size_t nforecast;
	struct tlm_report_forecast forecast[TLM_LIVE_DEVS];
	/* out of memory errors so far; the last one */
	uint64_t ooms;
	bool have_oom;
	struct tlm_report_oom last_oom;
	char oom_label[TLM_LIVE_LABEL];
	size_t nsites, total_sites;  /* shown (the first, in the view's order), all live sites */
	struct tlm_live_site site[TLM_LIVE_SITES];
};

struct tlm_live;
struct tlm_live *tlm_live_open(const char *path); /* NULL only without memory */
/* Reads what the file holds now, at most budget records. 1: more is there to
 * read (call again at once), 0: caught up, waiting, ended or failed. */
int tlm_live_poll(struct tlm_live *l, uint64_t budget);
enum tlm_live_state tlm_live_state(const struct tlm_live *l);
/* The process is known to be gone (tlm run reaped it): read the rest, end. */
void tlm_live_stop(struct tlm_live *l);
/* Ends the trace now if its process is gone (on this host), without waiting
 * for the file to stay idle first (tlm top --once). */
void tlm_live_settle(struct tlm_live *l);
/* The snapshot now, with the top live sites labelled when sites is set
 * (else nsites is 0); valid until the next call on l. NULL without memory. */
const struct tlm_live_view *tlm_live_view(struct tlm_live *l, enum tlm_live_sort sort, bool sites);
const char *tlm_live_path(const struct tlm_live *l);
void tlm_live_close(struct tlm_live *l);

/* ---- a set of traces (live_job.c) -------------------------------------- */

enum tlm_live_source { TLM_LIVE_FILE, TLM_LIVE_DIR, TLM_LIVE_MANIFEST };
struct tlm_live_job;
/* FILE: src is the trace (it may not exist yet); DIR: every trace in it;
 * MANIFEST: the file tlm run's libtlm.so instances append their paths to. */
struct tlm_live_job *tlm_live_job_open(enum tlm_live_source kind, const char *src);
/* Picks up new traces (at most once a second) and reads each; 1 while a
 * backlog remains. */
int tlm_live_job_poll(struct tlm_live_job *j, uint64_t budget);
size_t tlm_live_job_count(const struct tlm_live_job *j);
/* In row order: by rank, then pid, then path. */
struct tlm_live *tlm_live_job_get(struct tlm_live_job *j, size_t i);
/* Every trace ended (and there is one). */
bool tlm_live_job_ended(const struct tlm_live_job *j);
void tlm_live_job_stop(struct tlm_live_job *j);
void tlm_live_job_settle(struct tlm_live_job *j); /* tlm_live_settle on each */
/* What the job is called on the screen: its name, else its source. */
const char *tlm_live_job_source(const struct tlm_live_job *j);
void tlm_live_job_set_name(struct tlm_live_job *j, const char *name);
bool tlm_live_job_is_set(const struct tlm_live_job *j); /* DIR or MANIFEST: shown as a job */
void tlm_live_job_close(struct tlm_live_job *j);

/* ---- renderers ----------------------------------------------------------- */

extern const char *const tlm_live_sort_names[TLM_LIVE_NSORT]; /* "bytes", "growth", "count", "newest" */
/* Plain text, <= 100 columns: one trace in full, or a job's rows and the
 * sites of its selected trace. -1 on a write error. */
int tlm_live_text(FILE *f, struct tlm_live_job *j, enum tlm_live_sort sort);
/* The text every o->interval_s until the job ends or o->tick says so, then
 * once more (the end). -1 on a write error. */
struct tlm_live_ui;
int tlm_live_text_loop(FILE *f, struct tlm_live_job *j, const struct tlm_live_ui *o);
/* "12.3 s", "4 min 5 s", "3.2 h", "5.0 d" */
char *tlm_live_duration(char *buf, size_t n, double s);

struct tlm_live_ui {
	double interval_s;           /* between redraws */
	enum tlm_live_sort sort;
	/* Called every turn of the loop: nonzero ends the screen (tlm run --live:
	 * the program exited). NULL: the screen ends when the job has ended. */
	int (*tick)(void *ctx);
	void *ctx;
};
/* The ncurses screen until the job ends, tick says so, or the user quits
 * (then 1). 0 when the job ended; -1 when no terminal could be set up (the
 * caller prints text instead). */
int tlm_live_tui(struct tlm_live_job *j, const struct tlm_live_ui *o);

#endif
