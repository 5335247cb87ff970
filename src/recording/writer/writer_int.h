/* SPDX-License-Identifier: MIT */
/*
 * writer_int.h - what the writer's three parts share (all under the writer lock).
 *
 * Contract: writer.c owns the file, the thread, the lock, properties and the
 * ends of a trace (exit, signal, fork); writer_intern.c gives global ids to
 * stacks, strings and Python stacks and writes each definition once;
 * writer_merge.c drains the rings into staging and emits events in sequence
 * order. tlm__wf is the open trace; tlm__wf_check() keeps its first error.
 */
#ifndef TLM_WRITER_INT_H
#define TLM_WRITER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/ring.h"
#include "tlm/trace.h"

struct tlm__wfile {
	int fd;
	char path[4300];
	struct tlm_tw *tw;
	bool failed;
	uint64_t next_seq;      /* the seq the next event should have */
	uint64_t order_errors;
	uint64_t discarded;     /* events not written after a write failure */
	bool bypassed;          /* the watermark went past a stuck thread (writer_merge.c) */
	uint64_t late;          /* events written late (TLM_EVF_LATE) */
};
extern struct tlm__wfile tlm__wf TLM_HIDDEN;
void tlm__wf_check(int rc) TLM_HIDDEN; /* keeps the first error; afterwards everything is counted, not written */

/* writer_intern.c: global ids (0 when it cannot be stored); no_alloc in a
 * fatal-signal drain. A PYSTACK definition is read from the ring at tail. */
uint32_t tlm__wi_stack(const uint64_t *ip, uint32_t d, bool no_alloc) TLM_HIDDEN;
uint32_t tlm__wi_pystack(const struct tlm__ring *r, uint64_t tail, uint32_t native_gid, bool no_alloc) TLM_HIDDEN;
bool tlm__wi_stack_fits(uint32_t d) TLM_HIDDEN; /* storable without allocating */
bool tlm__wi_pystack_fits(uint32_t frames, uint32_t bytes) TLM_HIDDEN;
void tlm__wi_reset(void) TLM_HIDDEN; /* forget all definitions, keep the buffers (fork child) */
void tlm__wi_prepare(void) TLM_HIDDEN; /* the tables at their first sizes (trace start) */

/* writer_merge.c */
void tlm__wm_drain(bool no_alloc) TLM_HIDDEN; /* one drain of every ring into the trace */
void tlm__wm_drain_help(void) TLM_HIDDEN;  /* a producer's drain: no allocation, no loader lock */
void tlm__wm_drain_final(void) TLM_HIDDEN; /* last drain: passes every in-flight thread */
void tlm__wm_reset_child(void) TLM_HIDDEN;    /* fork child: drop staging of the parent's rings */

#endif
