/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the per-thread nesting guard of hooked calls.
 *
 * Contract: every hook holds a struct tlm__guard in its own frame, passes it
 * to tlm__enter() on entry and to tlm__leave() on exit; only the outermost
 * hooked call of a thread records, so cudaMalloc reaching cuMemAlloc_v2
 * yields one event (the runtime's call, at the layer the program called).
 * tlm__enter() also starts the trace at the first outermost call
 * (lifecycle.h). tlm__in_hook() tells a CUPTI callback whether a wrapper is
 * around it.
 *
 * The guard is the outermost call's frame, not a counter, so a call that
 * never returns does not stop the thread's recording: a longjmp or
 * siglongjmp out of it (a signal handler's), an exception through it, a
 * pthread_exit or cancellation from inside it. Another hook is nested only
 * when it runs deeper on the stack than that frame and the frame still holds
 * the token it wrote; anywhere else the outer call is gone: its open record
 * is voided and counted lost (tlm__rec_abandon), and the new call is the
 * outermost. A hook on a signal handler's alternate stack counts as nested
 * (it interrupted whatever ran). No allocation, no lock; a system call
 * (sigaltstack) only when the outer frame looks gone.
 */
#ifndef TLM_REC_GUARD_H
#define TLM_REC_GUARD_H

#include "recording/lifecycle.h"

struct tlm__guard {
	uint64_t token; /* written in the hook's frame at entry */
};
extern TLM_TLS struct tlm__guard *tlm__guard_top TLM_HIDDEN; /* the outermost live hooked call */
extern TLM_TLS uint64_t tlm__guard_serial TLM_HIDDEN;
/* top is set: true when g is nested inside it; false when top's call is
 * gone (it is then forgotten) */
bool tlm__guard_nested(struct tlm__guard *g) TLM_HIDDEN;

/* true when g is the outermost hooked call of this thread */
static inline bool tlm__guard_enter(struct tlm__guard *g)
{
	if (TLM_UNLIKELY(tlm__guard_top != NULL) && tlm__guard_nested(g))
		return false;
	g->token = ++tlm__guard_serial;
	tlm__guard_top = g;
	return true;
}
/* true when this call is the outermost hooked call and recording is on */
static inline bool tlm__enter(struct tlm__guard *g)
{
	return tlm__guard_enter(g) && tlm__recording();
}
static inline void tlm__leave(struct tlm__guard *g)
{
	if (tlm__guard_top == g)
		tlm__guard_top = NULL;
}
/* a wrapper is around this point (a CUPTI callback inside the real call) */
static inline bool tlm__in_hook(void)
{
	struct tlm__guard here;
	return tlm__guard_top != NULL && tlm__guard_nested(&here);
}

#endif
