/* SPDX-License-Identifier: MIT */
/*
 * report_steps.h - the training steps of a run, found from the trace alone
 * (steps_detect.c), and what is computed per step (steps.c, steps_act.c):
 * the peak of each step, leaks as bytes per step, a forecast of when the
 * device runs out, and the activations held at the step's peak with a
 * checkpointing estimate. docs/report.md ("Steps") gives the rules and their
 * limits; the model is part of struct tlm_report (r->steps, never NULL after
 * tlm_report_build: found is false when the run does not repeat).
 */
#ifndef TLM_REPORT_STEPS_H
#define TLM_REPORT_STEPS_H

#include "analysis/report.h"

struct tlm_report_step {
	int64_t start_ns, end_ns;       /* [start, end) relative to the trace start */
	uint64_t allocs;                /* allocations made in it (all devices) */
	uint64_t peak;                  /* allocated bytes at its peak, on the step device */
	uint64_t live_at_start;         /* allocated bytes on the step device when it began */
	uint64_t survivors;             /* bytes made in it still live when the last step ended */
	uint64_t held_at_peak;          /* bytes made in it, live at its peak, freed before it ended */
	bool steady;
};

/* A site (device, stack) that leaves survivors in the measured steps: the
 * steady steps but the last (which the run's end may cut). */
struct tlm_report_step_leak {
	int device;
	int kind;                        /* enum tlm_mem_kind */
	uint32_t stack_id;
	uint64_t bytes_per_step;         /* survivor bytes / measured steps (rounded down) */
	double tensors_per_step;         /* survivor allocations / measured steps */
	uint64_t steps_with_survivors, steps_measured;
	uint64_t survivor_bytes, survivor_count;
	bool steady;                     /* every measured step left the same bytes */
	bool leak;                       /* survivors in more than half of the measured steps */
};

/* When the device runs out at this growth (null in JSON when !known). */
struct tlm_report_forecast {
	int device;
	bool known;
	const char *why_not;             /* static text when !known */
	uint64_t capacity;               /* memory this process could hold: free + its reserved, when measured */
	const char *capacity_source;     /* "first allocation" (free memory then) or "out of memory" */
	uint64_t last_peak;              /* the last step's peak */
	uint64_t growth_per_step;        /* bytes: the leak sites' bytes_per_step, summed */
	uint64_t steps_to_oom;           /* more steps until the peak no longer fits */
	double seconds_to_oom;
	bool steady;                     /* the growth was the same in every measured step */
	bool modelled;                   /* steps_to_oom from the steady step replayed through the allocator's
	                                  * model (cache, rounding, fragmentation); else the linear rule */
	uint64_t linear_steps;           /* what the linear rule says: (capacity - last peak) / growth */
};

/* Checkpointing estimate for segments of `every` consecutive instances. */
struct tlm_report_ckpt {
	unsigned every;
	uint64_t est_peak;               /* from the measured sizes */
	uint64_t rule_peak;              /* the rule of thumb: peak - (1 - 1/every) x activations */
};

#define TLM_REPORT_MAX_CKPT 4 /* every 1, 2, 3 and round(sqrt(instances)) */

/* Activations of one function (its frame: the innermost of the program's own
 * code) at the peak of the steady step with the highest peak. */
struct tlm_report_act {
	uint32_t stack_id;               /* a stack of the function's allocations */
	size_t frame;                    /* the function: index in tlm_report_frames(stack_id) when built */
	bool have_fn;
	struct tlm_frame fn;             /* that frame (strings live as long as the report) */
	uint64_t bytes, count;           /* held at the peak, made in the step, freed within it */
	uint64_t instances;              /* calls in the step (occurrences of its first site) */
	uint64_t other_thread;           /* of those, freed on another thread (autograd's backward) */
	double forward_s;                /* from its first to its last allocation in the step */
	size_t nckpt;                    /* estimates (only for the largest repeated function) */
	struct tlm_report_ckpt ckpt[TLM_REPORT_MAX_CKPT];
};

/* One repeating phase of the run (docs/report.md, "Phases"): its own steps,
 * step leaks and forecast in st (found is true there). */
struct tlm_report_phase {
	const char *name;                /* "training", "micro-steps", "evaluation" (static) */
	bool training;                   /* a backward pass or an optimizer step is seen in its steps */
	int inside;                      /* index of the phase whose steps hold these; -1 none */
	struct tlm_report_steps *st;     /* the primary phase's is the report's steps itself */
};

struct tlm_report_steps {
	bool found;
	const char *why_not;             /* static text when !found */
	size_t count;
	size_t first_steady;             /* index of the first steady step */
	int device;                      /* the step device: the one of the step's first allocation */
	int kind;
	uint32_t driving_stack;          /* frames[driving_frame] of this stack drives the steps */
	size_t driving_frame;            /* index in tlm_report_frames() order (innermost first), when built */
	bool have_driving;
	struct tlm_frame driving;        /* that frame, as resolved when the report was built (folded stacks):
	                                  * the renderers print it whatever resolver or --full-stacks follows */
	size_t step_sites;               /* sites allocating the same number of times in every step */
	double seconds_per_step;         /* median duration of the steady steps */
	uint64_t warmup_peak, steady_peak; /* highest step peak before / from first_steady */
	bool truncated;                  /* more allocations than recorded: steps cover a prefix */
	uint64_t recorded;               /* allocations looked at */
	struct tlm_report_step *step;
	size_t nleaks;                   /* sites with survivors, by bytes_per_step descending */
	struct tlm_report_step_leak *leaks;
	size_t nforecast;                /* one per device with step allocations */
	struct tlm_report_forecast *forecast;
	size_t nact;                     /* by bytes descending */
	struct tlm_report_act *act;
	size_t act_step;                 /* the step whose peak is analysed */
	uint64_t act_peak;               /* that step's peak */
	uint64_t act_bytes;              /* of which activations */
	/* every phase, by the time its first step began (the report's steps
	 * only; the fields above are those of the primary phase: the training
	 * one, else the strongest) */
	/* the run died of out of memory (a fatal OOM on the step device): no
	 * forecast; the step it died in (1-based, count + 1: after the last) */
	bool died;
	size_t died_step;
	int64_t died_ns;
	uint64_t died_requested;
	int died_verdict;                /* enum tlm_oom_verdict */
	size_t nphases;
	struct tlm_report_phase *phases;
	size_t primary;                  /* index of the phase the fields above describe */
};

/* The step-leak entry of a (device, stack) site in any phase, or NULL
 * (the training phase's first). */
const struct tlm_report_step_leak *tlm_report_step_leak(const struct tlm_report *r, int device, uint32_t stack_id);

#endif
