/* SPDX-License-Identifier: MIT */
/*
 * edges.h - the edges of a process: how it ends, who it is, and where the
 * trace may be written (docs/reliability.md lists what each promises).
 *
 * Contract:
 *  - forkguard.c knows which process owns the open trace. A page mapped with
 *    MADV_WIPEONFORK reads 0 in any child made without our atfork handlers
 *    (syscall(SYS_fork), clone), so the hot path tells one by a single load;
 *    a vfork child shares our memory and is told by its pid.
 *  - fdguard.c keeps the trace descriptor high (F_DUPFD_CLOEXEC) and checks,
 *    before each chunk, that it is still the file tlm created (device and
 *    inode) in the process that created it; a write never raises SIGXFSZ.
 *  - exit_paths.c records _exit/_Exit and the default-action ends of
 *    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2, showing the host
 *    exactly the dispositions it set (sigaction/signal are interposed).
 *  - spawn_quiet.c starts the summary tool as a child the host never sees
 *    (no SIGCHLD, invisible to its waitpid(-1)).
 */
#ifndef TLM_SHIM_EDGES_H
#define TLM_SHIM_EDGES_H

#include <stdbool.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "recording/shim.h"

/* forkguard.c */
extern volatile int *tlm__fork_mark TLM_HIDDEN; /* NULL before the constructor */
extern pthread_t tlm__main_thread TLM_HIDDEN;   /* set by the constructor */
void tlm__forkguard_init(void) TLM_HIDDEN;
void tlm__forkguard_arm(void) TLM_HIDDEN;        /* after a reset: this process owns the state */
/* Hot path: true when this is a child that inherited the parent's state
 * without our atfork handlers; it has then been reset (as after fork). */
void tlm__forkguard_slow(void) TLM_HIDDEN;
static inline void tlm__forkguard_check(void)
{
	volatile int *m = tlm__fork_mark;
	if (TLM_UNLIKELY(m && !*m))
		tlm__forkguard_slow();
}
/* Slow paths (exit, exec, signals): true when the calling process owns the
 * open trace; resets a raw-fork child first, and is false in a vfork child. */
bool tlm__forkguard_mine(void) TLM_HIDDEN;
void tlm__lifecycle_child_reset(void) TLM_HIDDEN; /* lifecycle.c: the atfork child handler */
extern TLM_TLS bool tlm__starting_here TLM_HIDDEN; /* lifecycle.c: this thread is opening the trace */

/* fdguard.c */
int tlm__fd_adopt(int fd, const char *path) TLM_HIDDEN; /* moves fd high, remembers its identity; returns the fd to use */
int tlm__fd_write(int fd, const void *buf, size_t len) TLM_HIDDEN; /* 0 or -errno */
bool tlm__fd_reported(void) TLM_HIDDEN; /* the failure was already explained */

/* exit_paths.c */
void tlm__exit_paths_init(void) TLM_HIDDEN; /* constructor: termination signals */
void tlm__exit_vfork_child(void) TLM_HIDDEN; /* our destructor, run by a vfork child's exit() */
/* A termination signal that came while this thread could not end the trace
 * (it was draining, or opening the trace): pending here until the drain lets
 * go of the writer lock or the trace is open, then tlm__exit_term_deferred
 * ends the trace and raises the signal again. */
extern TLM_TLS int tlm__term_pending TLM_HIDDEN;
void tlm__exit_term_deferred(void) TLM_HIDDEN __attribute__((noreturn));

/* manifest.c: under `tlm run`, the trace's path is added to its list */
void tlm__manifest_add(const char *path) TLM_HIDDEN;

/* spawn_quiet.c: 0 and the child's wait status in *status, or -1 */
int tlm__spawn_quiet(const char *path, char *const argv[], char *const envp[], int *status) TLM_HIDDEN;

/* writer.c: the ends of a trace other than exit */
/* Async-signal-safe end: drain (no allocation), a SIGNAL record (signo > 0)
 * or PROP end=how + END, flush; the writer lock stays held (the process is
 * going), so no other thread starts a chunk it would cut. */
void tlm__writer_end_now(int signo, const char *how) TLM_HIDDEN;
/* (when this thread holds the lock, a signal's end is left pending) */
/* exec: everything written and marked (PROP end=exec) under the lock, held
 * across the exec; if the exec fails, the trace just goes on. */
void tlm__writer_exec_begin(void) TLM_HIDDEN;
void tlm__writer_exec_failed(void) TLM_HIDDEN;

#endif
