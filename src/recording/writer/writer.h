/* SPDX-License-Identifier: MIT */
/*
 * writer.h - the trace being written: its state, the writer thread that
 * drains every ring into it, and the ends of a trace.
 *
 * Contract: the writer is the only consumer of the rings (ring.h). Its
 * thread wakes every TLM_DRAIN_MS, or when kicked, and drains; whoever
 * drains holds the writer lock (the writer thread; a producer whose ring
 * stayed full; after the final flush, a late producer; a signal handler
 * within a bounded wait). Nothing here is called from inside the writer
 * room's lower parts (writer_int.h) or from the rings and stacks below.
 *
 * A child made without atfork handlers (syscall(SYS_fork), clone), and any
 * child it forks, has no writer thread: its producers drain when a ring
 * fills and at the end. The parent's threads may have held a lock of the C
 * library or of a sanitizer runtime at the fork (the writer thread's start
 * under ASan allocates, the writer's tables grow with malloc); nobody
 * releases it in the child, where a new thread's start can wait for it
 * forever (39 in 2000 raw-fork children under ASan did,
 * tests/shim/test_edges.c). The child's own thread carries the state of the
 * thread that forked, which held none.
 *
 * The trace's state (tlm__state) moves UNINIT -> STARTING -> RUNNING or OFF
 * (lifecycle.c, at the first event) -> CLOSED (here: the final flush, a
 * signal's or _exit's end); a fork child goes back to UNINIT.
 */
#ifndef TLM_REC_WRITER_H
#define TLM_REC_WRITER_H

#include "recording/defs.h"

enum tlm__state {
	TLM__UNINIT = 0,  /* nothing started: the first event starts the trace */
	TLM__STARTING = 1,
	TLM__RUNNING = 2, /* writer thread drains the rings */
	TLM__CLOSED = 3,  /* final flush done: producers write synchronously */
	TLM__OFF = 4,     /* disabled, or the trace could not be opened */
};
extern _Atomic int tlm__state TLM_HIDDEN;
extern TLM_TLS bool tlm__starting_here TLM_HIDDEN; /* this thread is opening the trace (lifecycle.c) */

/* A termination signal that came while this thread could not end the trace
 * (it held the writer lock, or was opening the trace) is pending here
 * (exit_paths.c sets it); when this thread lets go of the lock, the writer
 * calls tlm__writer_deferred_end (set by exit_paths.c), which ends the trace
 * and the process. */
extern TLM_TLS int tlm__term_pending TLM_HIDDEN;
extern void (*tlm__writer_deferred_end)(void) TLM_HIDDEN;

int tlm__writer_start(void) TLM_HIDDEN;      /* opens the trace, starts the thread */
void tlm__writer_kick(void) TLM_HIDDEN;      /* wake the writer now */
void tlm__writer_drain_sync(void) TLM_HIDDEN;/* drain on this thread (under the writer lock) */
bool tlm__writer_drain_sync_bounded(unsigned ms) TLM_HIDDEN; /* the same; false: lock not had within ms */
void tlm__writer_help_drain(void) TLM_HIDDEN;/* a producer helps a starved writer (no malloc) */
void tlm__writer_finish(void) TLM_HIDDEN;    /* final drain + END record */
/* fatal signal: drain what can be, SIGNAL record; py_exit: it came while the
 * Python interpreter was finalizing (PROP signal.during = python-exit first) */
void tlm__writer_signal(int signo, bool py_exit) TLM_HIDDEN;
/* Async-signal-safe end: drain (no allocation), a SIGNAL record (signo > 0)
 * or PROP end=how + END, flush; the writer lock stays held (the process is
 * going), so no other thread starts a chunk it would cut. When this thread
 * holds the lock, a signal's end is left pending (tlm__term_pending). */
void tlm__writer_end_now(int signo, const char *how) TLM_HIDDEN;
/* exec: everything written and marked (PROP end=exec) under the lock, held
 * across the exec; if the exec fails, the trace just goes on. */
void tlm__writer_exec_begin(void) TLM_HIDDEN;
void tlm__writer_exec_failed(void) TLM_HIDDEN;
void tlm__writer_atfork_prepare(void) TLM_HIDDEN;
void tlm__writer_atfork_parent(void) TLM_HIDDEN;
void tlm__writer_atfork_child(bool raw) TLM_HIDDEN; /* raw: no writer thread from now on */
bool tlm__writer_threadless(void) TLM_HIDDEN; /* producers drain: no writer thread will */
void tlm__writer_note_start(void) TLM_HIDDEN;   /* process start time for the header */
size_t tlm__writer_ring_bytes(unsigned slots) TLM_HIDDEN; /* writer state kept in each ring (writer_merge.c) */
const char *tlm__writer_path(void) TLM_HIDDEN;  /* the trace being written, or NULL */
/* A fact about the recording (a PROP record, e.g. "cupti" -> "attached"):
 * written now if a trace is open, else into each trace when it starts. Takes
 * the writer lock: not for the hot path or signal handlers. */
void tlm__writer_prop(const char *key, const char *value) TLM_HIDDEN;

#endif
