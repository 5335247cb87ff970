/* SPDX-License-Identifier: MIT */
/*
 * recorder.h - the hot path: one event from a hook into the thread's ring.
 *
 * Contract: a hook records an allocation after the real call returned
 * (tlm__record) and a free in two steps around it (tlm__free_begin before,
 * so its sequence number comes before any reuse of the address, then
 * tlm__free_end with the result). tlm__rec_begin() reserves ring space
 * (capturing the caller's native and Python stacks first), takes the global
 * sequence number and the time; tlm__rec_commit() publishes. They never
 * allocate, never take a lock the host could hold, and never drop an event
 * unless drop mode is on (a dropped event is counted). A full ring makes the
 * thread wait for the writer, and drain itself after 2 ms (writer.h).
 * Callers have asked tlm__recording() (lifecycle.h) first.
 */
#ifndef TLM_REC_RECORDER_H
#define TLM_REC_RECORDER_H

#include "recording/reserved_table.h"
#include "recording/ring.h"
#include "tlm/event.h"

struct tlm__rec {
	struct tlm__ring *ring;
	struct tlm__slot *ev;  /* the event slot to fill (seq and time are set) */
	uint64_t head;         /* ring position after the record */
	bool ext;              /* an extension slot follows ev */
	struct tlm__rt_claim claim; /* frees: the allocation freed */
	/* the thread state the event's Python frames were read from (0: none),
	 * TLM__PY_TS_ASK when they were not read (tlm__py_free_flags) */
	uint64_t py_ts;
};
/* false when the event is not recorded (drop mode and a full ring, or out of
 * memory for a ring): it is counted as lost. */
bool tlm__rec_begin(struct tlm__rec *r, bool ext) TLM_HIDDEN;
/* the same with the Python frames only (native stack id 0; 0 off a Python thread) */
bool tlm__rec_begin_pyonly(struct tlm__rec *r) TLM_HIDDEN;
/* An allocator block's: its Python frames, and a native unwind only off a
 * Python thread (as PyTorch's autograd threads), where nothing else names
 * the call; with TLM_BLOCK_NATIVE_STACKS=1 both, as tlm__rec_begin. */
bool tlm__rec_begin_block(struct tlm__rec *r, bool ext) TLM_HIDDEN;
void tlm__rec_commit(struct tlm__rec *r) TLM_HIDDEN;

/* what a hook knows about one call */
struct tlm__evargs {
	uint64_t addr, size, stream, aux;
	int32_t result;
	int16_t device;
	uint8_t op, kind;
	uint16_t flags, api;
};
void tlm__record(const struct tlm__evargs *a) TLM_HIDDEN;        /* alloc-like: after the call */
/* A free's device in tlm__evargs, asked of the driver only when the table of
 * live allocations does not know the address (where it lives otherwise): the
 * current device, or tlm__free_device's answer. A driver call per free is
 * most of what a free costs with stacks off. */
#define TLM__DEV_CURRENT INT16_MIN
#define TLM__DEV_OF_PTR (INT16_MIN + 1)
bool tlm__free_begin(struct tlm__rec *r, const struct tlm__evargs *a) TLM_HIDDEN; /* before the real free */
void tlm__free_end(struct tlm__rec *r, int32_t result) TLM_HIDDEN;

/* This thread left a hooked call without returning (guard.h): its open
 * record, if any, is voided (counted lost by the writer, in its place) and a
 * free's claim put back. Async-signal-safe. A thread that exits inside one
 * has the same by itself. */
void tlm__rec_abandon(void) TLM_HIDDEN;
void tlm__rec_atfork_child(void) TLM_HIDDEN; /* a fork child: the parent's rings are not its own */

#endif
