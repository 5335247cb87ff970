/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the per-thread nesting guard of hooked calls.
 *
 * Contract: every hook calls tlm__enter() on entry and tlm__leave() on exit;
 * only the outermost hooked call of a thread records, so cudaMalloc reaching
 * cuMemAlloc_v2 yields one event (the runtime's call, at the layer the
 * program called). tlm__enter() also starts the trace on the first
 * outermost call (lifecycle.h). tlm__in_hook() tells a CUPTI callback
 * whether a wrapper is around it.
 */
#ifndef TLM_REC_GUARD_H
#define TLM_REC_GUARD_H

#include "recording/lifecycle.h"

extern TLM_TLS unsigned tlm__depth TLM_HIDDEN;

/* true when this call is the outermost hooked call and recording is on */
static inline bool tlm__enter(void)
{
	return tlm__depth++ == 0 && tlm__recording();
}
static inline void tlm__leave(void)
{
	tlm__depth--;
}
static inline bool tlm__in_hook(void)
{
	return tlm__depth != 0;
}

#endif
