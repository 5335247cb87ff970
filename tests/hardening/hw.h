/* SPDX-License-Identifier: MIT */
/*
 * hw.h - runs the hardening workload under libtlm.so like tests/shim's
 * e2e_run (same environment, same struct run, so e2e_traces, e2e_load and
 * e2e_note apply), but without blocking: the test can kill it at a moment of
 * its choosing, and every run has a deadline after which its whole process
 * group is killed (a deadlock fails the test instead of hanging the suite).
 */
#ifndef TLM_HW_H
#define TLM_HW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "e2e.h"

struct hw_proc {
	struct run r;
	pid_t pid;
	int timed_out;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
};

uint64_t hw_now_ns(void);
/* For the next hw_start: another program than the workload (a path; NULL:
 * the workload), and whether to leave libtlm.so out (a plain run). Reset by
 * hw_start. */
extern const char *hw_program;
extern int hw_no_preload;
/* Starts `hw_workload ARGS...` (env: extra NAME=value entries, NULL ended) in
 * a fresh scratch directory, in its own process group. 0 ok. */
int hw_start(struct hw_proc *p, const char *const *args, const char *const *env);
/* Waits for it, at most timeout_ms; then kills the process group and sets
 * timed_out. Loads stderr and the truth file into p->r. */
void hw_wait(struct hw_proc *p, unsigned timeout_ms);
int hw_run(struct hw_proc *p, const char *const *args, const char *const *env, unsigned timeout_ms);
/* Removes the scratch directory. */
void hw_cleanup(struct hw_proc *p);

/* Replays a trace's successful ALLOC/FREE events per (kind, address): frees
 * of an address not live and allocations of an address already live. */
struct hw_replay {
	size_t unknown_frees, double_allocs, live_at_end;
};
void hw_replay(const struct trace *t, struct hw_replay *out);

#endif
