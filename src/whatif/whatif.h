/* SPDX-License-Identifier: MIT */
/*
 * whatif.h - `tlm whatif`: replay a trace's PyTorch allocator requests
 * through a model of the CUDA caching allocator under other settings.
 *
 * Contract: tlm_wi_parse reads a PYTORCH_CUDA_ALLOC_CONF string (the keys the
 * model knows; unknown keys are an error, as in PyTorch). tlm_wi_run reads a
 * trace once, takes each device's block requests (the tap's block sizes, in
 * order; one stream), its other driver allocations and its memory size
 * (driver usage + free memory, the least at a failed allocation or a device
 * memory sample so far, or the caller's), and
 * replays them as it reads, under the recorded settings (the trace's `torch.alloc_conf`
 * property, else the defaults) and each alternative. The replay under the
 * recorded settings is also checked against the trace: segment allocations
 * and frees event for event, and the allocator's own totals at every block
 * event. Rendering: text and JSON (docs/whatif.md has the schema). Memory:
 * the live state (blocks, segments, others' allocations) once per setting.
 */
#ifndef TLM_WHATIF_H
#define TLM_WHATIF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define TLM_WI_DIVS 16 /* roundup_power2_divisions intervals: 1 MiB .. 64 GiB */

struct tlm_wi_settings {
	bool expandable;            /* expandable_segments:True */
	bool async_backend;         /* backend:cudaMallocAsync (not modelled) */
	uint64_t max_split;         /* max_split_size_mb in bytes; UINT64_MAX = unlimited */
	uint64_t max_nonsplit_round;/* max_non_split_rounding_mb (kLargeBuffer by default) */
	double gc_threshold;        /* garbage_collection_threshold, 0 = off */
	double fraction;            /* per_process_memory_fraction (set_per_process_memory_fraction), 0 = unset */
	uint32_t div[TLM_WI_DIVS];  /* roundup_power2_divisions per power-of-two interval */
	/* Not a PyTorch setting: how the allocator breaks ties between cached
	 * blocks of one size. false: lowest address (PyTorch up to about 2.9);
	 * true: oldest segment first, then address (the registration counter of
	 * newer PyTorch, 2.15). The replay takes the one that reproduces the trace. */
	bool ties_by_segment;
};

/* Defaults (PyTorch's). */
void tlm_wi_defaults(struct tlm_wi_settings *s);
/* Applies the keys of spec on top of *s. Returns 0, or -1 with one line in err. */
int tlm_wi_parse(struct tlm_wi_settings *s, const char *spec, char *err, size_t errlen);
/* The settings as a PYTORCH_CUDA_ALLOC_CONF string ("" = the defaults). */
void tlm_wi_format(const struct tlm_wi_settings *s, char *buf, size_t len);

/* ---- replay ----------------------------------------------------------- */

#define TLM_WI_MAX_OOMS 8

struct tlm_wi_oom {
	uint64_t time_ns;   /* from the trace's start */
	uint64_t request;   /* the rounded request */
	uint64_t allocated, reserved, reserved_free, device_free;
	bool fragmentation; /* reserved_free + device_free would have covered it */
	bool recorded;      /* the recorded run failed here too */
};

struct tlm_wi_result {
	char label[160];            /* what was changed ("recorded", "expandable_segments:True") */
	char spec[256];             /* the full settings */
	bool valid;                 /* false: the spec could not be modelled (error in note) */
	char note[160];
	uint64_t peak_reserved, peak_allocated, allocated_at_peak, largest_free_at_peak;
	double frag_at_peak;        /* 1 - allocated/reserved at the reserved peak */
	uint64_t peak_time_ns;
	uint64_t driver_allocs, driver_frees, retries;
	uint64_t nooms;             /* requests the model could not satisfy */
	struct tlm_wi_oom oom[TLM_WI_MAX_OOMS];
	uint64_t recorded_ooms_avoided; /* recorded OOMs this setting satisfies */
};

struct tlm_wi_check {           /* the replay under the recorded settings vs the trace */
	bool done;
	uint64_t segment_events;    /* the trace's allocator segment events compared */
	uint64_t block_events;      /* block events whose totals were compared */
	uint64_t mismatches;
	char first[320];            /* the earliest mismatch in the run, "" when none */
	uint64_t first_pos;         /* where: 2 x block ops before it (+1 at a block op) */
};

struct tlm_wi_device {
	int device;
	uint64_t memory;            /* the device memory the replay had (0 = unlimited) */
	bool memory_known;          /* from the trace or --memory */
	const char *memory_source;  /* "option", "failure" (driver usage + free at a failed allocation),
	                             * "sample" (the same at a device memory sample),
	                             * "device" (the recorded device size), "unknown" */
	uint64_t requests, frees, recorded_ooms;
	uint64_t recorded_peak_reserved, recorded_peak_allocated; /* the allocator's own totals */
	struct tlm_wi_check check;
	bool ties_by_segment;       /* the tie rule that reproduced the run (struct tlm_wi_settings) */
	bool older_rule_better;     /* a stream's report: the older tie rule reproduces the run better, and
	                             * these are the newer rule's figures (tlm_wi_run replays it again) */
	size_t nres;
	struct tlm_wi_result *res;  /* res[0]: the recorded settings */
	int best;                   /* index of the recommended setting, -1: none */
	char recommendation[320];
};

struct tlm_wi_report {
	char recorded_spec[256];
	bool recorded_known;        /* the trace carried torch.alloc_conf */
	size_t ndev;
	struct tlm_wi_device *dev;
};

struct tlm_wi_options {
	int device;                 /* -1: every device with blocks */
	const char *const *settings;/* alternatives; NULL/0: the built-in grid */
	size_t nsettings;
	const char *recorded;       /* overrides the recorded settings; NULL: from the trace */
	uint64_t memory;            /* device memory; 0: from the trace */
};

/* 0 ok; -1 with one line in err (unreadable trace, no allocator blocks,
 * cudaMallocAsync backend, bad setting, a size limit: more blocks live at
 * once than a replay keeps). Reads the trace once, every setting's model in
 * lock step, in memory bounded by the live state (docs/whatif.md); a second
 * time when the older tie rule reproduces the run better. */
int tlm_wi_run(const char *path, const struct tlm_wi_options *o, struct tlm_wi_report *r, char *err,
	       size_t errlen);

/* The same as a consumer of a pass over a trace's records, in order:
 * new (the header's start_monotonic_ns), each record (0 go on; -1 stopped,
 * one line in err), finish (path names the trace in the messages). A
 * stream cannot read the trace again: older_rule_better says when
 * tlm_wi_run would have. */
struct tlm_record;
struct tlm_wi_stream;
struct tlm_wi_stream *tlm_wi_stream_new(const struct tlm_wi_options *o, uint64_t start_monotonic_ns);
int tlm_wi_stream_record(struct tlm_wi_stream *s, const struct tlm_record *rec, char *err, size_t errlen);
int tlm_wi_stream_finish(struct tlm_wi_stream *s, const char *path, struct tlm_wi_report *r, char *err,
			 size_t errlen);
void tlm_wi_stream_free(struct tlm_wi_stream *s);
void tlm_wi_report_free(struct tlm_wi_report *r);
/* Two sizes for "x -> y": with the digits that tell them apart ("7.81 GiB ->
 * 7.84 GiB", not "7.8 GiB -> 7.8 GiB"). */
void tlm_wi_human_pair(char *a, char *b, size_t n, uint64_t x, uint64_t y);

int tlm_wi_render_text(const struct tlm_wi_report *r, FILE *f);
int tlm_wi_render_json(const struct tlm_wi_report *r, FILE *f);

/* For `tlm report`: one line naming a setting that would have avoided a
 * fragmentation OOM of the trace at path, with its figures; 0 when one was
 * written into buf, -1 when none (no OOM, no blocks, no setting avoids it). */
int tlm_wi_oom_hint(const char *path, char *buf, size_t len);

#endif
