/* SPDX-License-Identifier: MIT */
/*
 * stack_int.h - the stack room's parts (stack.h is its contract).
 *
 * Top to bottom, each calling only those below it: stack_cache.c (the
 * whole-unwind cache, tlm__stack_get and the room's init), stack_walk.c (the
 * frame-rule walk of a miss), stack.c (libtlm's own code ranges, libunwind's
 * whole unwind, the per-thread intern table), unwind_dl.c (libunwind itself,
 * and the fork guard around every call into it).
 */
#ifndef TLM_REC_STACK_INT_H
#define TLM_REC_STACK_INT_H

#include <stdatomic.h>

#include "recording/stack/stack.h"

/* ---- stack.c ---- */
void tlm__stack_self_init(void) TLM_HIDDEN; /* libtlm's executable ranges */
/* The executable ranges of one loaded object (stack.c): the first one is
 * tested inline (most objects have one), the others by tlm__in_code_rest. */
#define TLM__CODE_RANGES 4
struct tlm__code {
	uint64_t lo, len; /* the first range */
	int n;
	uint64_t rlo[TLM__CODE_RANGES], rhi[TLM__CODE_RANGES];
};
/* libtlm's own: leading frames inside it are ours */
extern struct tlm__code tlm__self TLM_HIDDEN;
/* The Python interpreter's (stack.h, tlm__stack_interp_found): written
 * before tlm__interp_cut is released; once it is set, native walks end at
 * their first frame inside it. */
extern struct tlm__code tlm__interp TLM_HIDDEN;
extern _Atomic bool tlm__interp_cut TLM_HIDDEN;
bool tlm__in_code_rest(const struct tlm__code *c, uint64_t ip) TLM_HIDDEN;
static inline bool tlm__in_code(const struct tlm__code *c, uint64_t ip)
{
	return ip - c->lo < c->len || (c->n > 1 && tlm__in_code_rest(c, ip));
}
/* libunwind's whole unwind of the callers, our frames dropped; inside the
 * fork guard. 0 without libunwind. */
uint32_t tlm__stack_capture(uint64_t *ips, uint32_t max) TLM_HIDDEN;
/* a stack as a local id; *fresh when new (a full table is reset first) */
uint32_t tlm__stack_intern(struct tlm__stk_cache *c, const uint64_t *ips, uint32_t depth, bool *fresh) TLM_HIDDEN;

/* ---- stack_walk.c (x86-64): the walk from e's caller registers, noting in e
 * the slots it read; *ok false when a frame must be left to libunwind. ---- */
uint32_t tlm__stack_walk(struct tlm__stk_cache *c, struct tlm__sc_entry *e, uint64_t *ips, uint32_t max, bool *ok)
	TLM_HIDDEN;
uint32_t tlm__stack_rules(void) TLM_HIDDEN; /* frame rules learned so far */

#endif
