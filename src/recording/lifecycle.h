/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.h - the process around the trace: load, the start of the trace
 * at the first recorded event, fork, exec, dlclose and exit.
 *
 * Contract: tlm__recording() is every hook's question "record this call?":
 * true while a trace is open (RUNNING, or CLOSED after the final flush); the
 * first time it is asked it starts the trace (tlm__start_slow: the
 * configuration, the writer, the job's properties), so a process that never
 * touches CUDA leaves no file. In a child made without fork() (forkguard.h)
 * it first resets the inherited state, as the atfork child handler does.
 * Ends that skip destructors (_exit, signals) are exit_paths.h's. With
 * TLM_DEBUG_PAUSE=1 a benchmark may pause recording (tlm_debug_pause).
 */
#ifndef TLM_REC_LIFECYCLE_H
#define TLM_REC_LIFECYCLE_H

#include "recording/forkguard.h"
#include "recording/ring.h"
#include "recording/writer/writer.h"

bool tlm__start_slow(void) TLM_HIDDEN;
void tlm__config_ensure(void) TLM_HIDDEN; /* config read (the constructor may not have run yet) */
/* A child starts with only the forking thread and none of the parent's
 * trace: the atfork child handler (raw false), and a child made without one
 * (raw true: it writes its trace without a thread, writer.h). */
void tlm__lifecycle_child_reset(bool raw) TLM_HIDDEN;

/* tlm_debug_pause (lifecycle.c): while set, the hooks pass calls through
 * unrecorded; never set unless TLM_DEBUG_PAUSE=1 */
extern _Atomic bool tlm__paused TLM_HIDDEN;
/* exported, for benchmarks: 0, or -1 without TLM_DEBUG_PAUSE=1 */
int tlm_debug_pause(int paused) TLM_EXPORT;
int tlm_debug_drain(void) TLM_EXPORT;

/* A child made without fork(), told by the thread's ring header (ring.h,
 * armed), else by forkguard's page. */
static inline bool tlm__raw_child(void)
{
	const struct tlm__ring *r = tlm__t_ring;
	if (TLM_LIKELY(r && r->armed == 1))
		return false;
	return r && !r->armed ? true : tlm__forkguard_raw_child();
}

static inline bool tlm__recording(void)
{
	if (TLM_UNLIKELY(tlm__raw_child()))
		tlm__lifecycle_child_reset(true); /* as after fork: this is the child's first event */
	int s = atomic_load_explicit(&tlm__state, memory_order_acquire);
	if (TLM_LIKELY(s == TLM__RUNNING || s == TLM__CLOSED))
		return !TLM_UNLIKELY(atomic_load_explicit(&tlm__paused, memory_order_relaxed));
	return s == TLM__OFF ? false : tlm__start_slow();
}

/* job_props.c: RANK/LOCAL_RANK/WORLD_SIZE at trace start; "origin" in a fork
 * child. Called once per trace start and once in a fork child; never
 * allocates. */
void tlm__job_props(void) TLM_HIDDEN;
void tlm__job_props_forked(void) TLM_HIDDEN;

#endif
