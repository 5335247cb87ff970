/* SPDX-License-Identifier: MIT */
/*
 * stack.h - native call stacks for the recorder.
 *
 * Contract: tlm__stack_capture() fills return addresses of the callers of the
 * hooked CUDA call, innermost first, with libtlm's own frames removed; it
 * never allocates. tlm__stack_intern() maps a stack to a small per-thread id
 * and says whether the id is new (its definition must then go into the ring
 * before the first event using it).
 */
#ifndef TLM_STACK_H
#define TLM_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/ring.h"
#include "tlm/trace.h"

uint32_t tlm__stack_capture(uint64_t *ips, uint32_t max) TLM_HIDDEN;
uint32_t tlm__stack_intern(struct tlm__stk_cache *c, const uint64_t *ips, uint32_t depth, bool *fresh) TLM_HIDDEN;
/* The caller's stack as a local id: from the unwind cache when the same call
 * path is seen again, else unwound and interned. ips/depth are filled when
 * *fresh (the definition must go into the ring). */
uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
	TLM_HIDDEN;
void tlm__stack_thread_init(struct tlm__stk_cache *c) TLM_HIDDEN; /* stack bounds, on a thread's first event */
void tlm__stack_forget_all(struct tlm__stk_cache *c) TLM_HIDDEN;  /* a definition was dropped */
void tlm__stack_report(void) TLM_HIDDEN;
void tlm__stack_cache_init(void) TLM_HIDDEN; /* with the configuration, before any event */
/* stack_walk.c (x86-64): the walk from e's caller registers, noting in e the
 * slots it read; *ok false when a frame must be left to libunwind. */
uint32_t tlm__stack_walk(struct tlm__stk_cache *c, struct tlm__sc_entry *e, uint64_t *ips, uint32_t max, bool *ok)
	TLM_HIDDEN;
uint32_t tlm__stack_rules(void) TLM_HIDDEN; /* frame rules learned so far */
void tlm__stack_unwind_enter(void) TLM_HIDDEN; /* around any libunwind call: fork waits for it */
void tlm__stack_unwind_leave(void) TLM_HIDDEN;
void tlm__stack_atfork_prepare(void) TLM_HIDDEN; /* waits for unwinds in flight */
void tlm__stack_atfork_done(void) TLM_HIDDEN;    /* parent and child */

/* tlm__in_self() with the usual case (one executable range) inline */
extern uint64_t tlm__self_lo TLM_HIDDEN, tlm__self_len TLM_HIDDEN;
extern bool tlm__self_more TLM_HIDDEN;
static inline bool tlm__in_self_fast(uint64_t ip)
{
	return ip - tlm__self_lo < tlm__self_len || (tlm__self_more && tlm__in_self(ip));
}

#endif
