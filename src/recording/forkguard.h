/* SPDX-License-Identifier: MIT */
/*
 * forkguard.h - which process owns libtlm's state.
 *
 * Contract: fork() runs our atfork handlers (lifecycle.c); syscall(SYS_fork)
 * and clone() do not. A page mapped with MADV_WIPEONFORK reads 0 in any
 * child made without them: each ring's header page is one (ring.h, armed),
 * which tells the hot path at a load it makes anyway (lifecycle.h); this
 * file's mark page tells a thread without a ring, and the slow paths
 * (tlm__forkguard_raw_child). The caller then resets (lifecycle.h) and arms
 * the page again. A vfork child shares our memory and is told by its pid:
 * tlm__forkguard_owner() is false there, and in a raw-fork child that has
 * not been reset. Nothing here calls out of this file.
 */
#ifndef TLM_REC_FORKGUARD_H
#define TLM_REC_FORKGUARD_H

#include <pthread.h>
#include <sys/mman.h>

#include "recording/defs.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18 /* Linux 4.14; older headers lack it */
#endif

extern volatile int *tlm__fork_mark TLM_HIDDEN; /* NULL before the constructor */
extern pthread_t tlm__main_thread TLM_HIDDEN;   /* set by the constructor */
void tlm__forkguard_init(void) TLM_HIDDEN;
void tlm__forkguard_arm(void) TLM_HIDDEN; /* after a reset: this process owns the state */
static inline bool tlm__forkguard_raw_child(void)
{
	volatile int *m = tlm__fork_mark;
	return TLM_UNLIKELY(m && !*m);
}
/* Slow paths (exit, exec, signals): this process owns the state. */
bool tlm__forkguard_owner(void) TLM_HIDDEN;

#endif
