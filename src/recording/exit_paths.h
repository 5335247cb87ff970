/* SPDX-License-Identifier: MIT */
/*
 * exit_paths.h - the ends of a process that skip destructors: _exit/_Exit,
 * the termination signals at their default action, the fatal signals, and
 * a vfork child's exit() (docs/reliability.md lists what each promises).
 *
 * Contract: each writes what the rings hold and says in the trace how the
 * process ended (writer.h), then lets the process end exactly as it would
 * have: the same status, the same signal (core included). The host sees the
 * dispositions it set: sigaction() and signal() are interposed for the
 * termination signals, where tlm's handler stands in for SIG_DFL.
 */
#ifndef TLM_REC_EXIT_PATHS_H
#define TLM_REC_EXIT_PATHS_H

#include "recording/defs.h"

/* constructor: the termination signals' handlers, and the fatal ones' */
void tlm__exit_paths_init(void) TLM_HIDDEN;
void tlm__exit_paths_child(void) TLM_HIDDEN; /* a fork child: no fatal signal is being handled */
void tlm__exit_vfork_child(void) TLM_HIDDEN; /* our destructor, run by a vfork child's exit() */
/* A termination signal pending on this thread (writer.h) ends the trace and
 * the process now. */
void tlm__exit_term_deferred(void) TLM_HIDDEN __attribute__((noreturn));

#endif
