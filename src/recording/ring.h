/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the per-thread single-producer/single-consumer event rings.
 *
 * Contract: each recording thread owns one ring (created on its first event,
 * recycled after it exits); the writer thread is the only consumer. A record
 * is one or more 64-byte slots: an event slot, optionally followed by an
 * extension slot, or a stack definition (header slot + address slots) that
 * precedes the first event using it. Slots are published by a release store
 * of head; the consumer frees them by a release store of tail. Positions are
 * free-running 64-bit counters (never wrap in practice).
 *
 * A record is open from tlm__rec_begin to its commit (recorder.h); one whose
 * thread never comes back to commit it is counted lost in its place, so the
 * writer neither waits for it nor finds a gap in the order: a thread that
 * goes on (a longjmp out of the hooked call) publishes it as TLM__SLOT_VOID
 * (tlm__ring_void_open); a thread that exited (cancelled inside the call)
 * leaves it to the writer, which stages the lost event from open_seq when it
 * drains the exited ring.
 *
 * Global order: a producer announces a lower bound of its sequence number in
 * `inflight` (one past the ring's own last number, since numbers only grow;
 * a release store, which the seq_cst add after it publishes) before taking
 * one from tlm__seq, and clears it after publishing; the writer only emits
 * events below the smallest announced bound, so the merged stream is in
 * exact sequence order without ever waiting.
 */
#ifndef TLM_RING_H
#define TLM_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "recording/defs.h"

struct tlm__stk_cache; /* stack/stack.h */

#define TLM__CACHELINE 64

enum tlm__slot_type {
	TLM__SLOT_EVENT = 1,   /* struct tlm__slot as an event */
	TLM__SLOT_EXT = 2,     /* extension of the previous event: u64[0] = device_free */
	TLM__SLOT_EVENT_FREE = 5, /* a successful event followed by an extension (device_free) */
	TLM__SLOT_STACK = 3,   /* header: aux = local stack id, size = depth; ips follow */
	TLM__SLOT_PYSTACK = 4, /* header: aux = local merged id, stream = local native stack id,
	                        * size = frames, addr = payload bytes; payload slots follow, per frame
	                        * i32 line, u16 file length, u16 name length, file, name (pystack.c) */
	TLM__SLOT_VOID = 6,    /* an event begun and never committed (its thread left the hooked
	                        * call without returning): seq set, stream = slots of it that follow;
	                        * the writer counts it lost, in its place in the order */
};

struct tlm__slot {
	uint64_t seq;
	uint64_t time_ns;
	uint64_t addr, size, stream, aux;
	uint32_t stack;        /* thread-local stack id (writer maps it to a global one) */
	int32_t result;
	int16_t device;
	uint16_t flags;
	uint8_t op, kind;
	uint8_t api;           /* enum tlm_api fits a byte */
	uint8_t type;          /* enum tlm__slot_type */
};
_Static_assert(sizeof(struct tlm__slot) == 64, "slot is one cache line");

enum tlm__ring_state {
	TLM__RING_ACTIVE = 1,
	TLM__RING_EXITED = 2, /* owner thread gone: drain, then recycle */
	TLM__RING_FREE = 3,   /* drained, waiting for a new owner */
	TLM__RING_STARTING_CLAIM = 4, /* being set up for a new owner */
};

struct tlm__ring {
	/* producer's line: what every event writes. Every event reads this
	 * line and the next, and no other line of the ring's head: each is one
	 * more cache miss when the host's work between two events evicted it */
	_Alignas(TLM__CACHELINE) _Atomic uint64_t head;
	uint64_t cached_tail;
	_Atomic uint64_t inflight;  /* UINT64_MAX when idle */
	uint64_t last_seq;          /* one past this ring's last seq: its next bound */
	/* the record begun and not committed: its event slot, its end (0: none)
	 * and its seq; atomic (relaxed on the producer's side): the writer reads
	 * them once the owner is gone */
	_Atomic uint64_t open_ev, open_end, open_seq;
	uint32_t mask;              /* slots - 1 */
	_Atomic uint32_t kicked;    /* producer asked the writer to drain */
	/* producer's reads: set at creation (py: at the thread's first Python stack) */
	_Alignas(TLM__CACHELINE) struct tlm__slot *slots;
	struct tlm__stk_cache *stk; /* producer-only */
	void *py;                   /* producer-only: Python frame cache (pystack.c), mapped on first use */
	_Atomic uint64_t lost;      /* events dropped (drop mode, no memory) */
	/* 1: the header's page reads 0 in a child made without fork()
	 * (MADV_WIPEONFORK), so that its events find one there by this line,
	 * which they read anyway, and not by forkguard's page; 2: the kernel
	 * would not wipe it, forkguard tells */
	uint32_t armed;
	/* consumer's line */
	_Alignas(TLM__CACHELINE) _Atomic uint64_t tail;
	_Atomic uint32_t waiting;   /* producer sleeps on wake */
	_Atomic uint32_t wake;
	/* shared, rarely written */
	_Alignas(TLM__CACHELINE) _Atomic int state;
	_Atomic uint32_t gen;       /* bumped at each new owner */
	uint32_t thread_index;      /* trace thread index of the current owner */
	int32_t tid;
	char name[16];
	size_t map_bytes;
	void *wstate;               /* writer-only (writer_merge.c) */
};

/* Registry of all rings (writer iterates it; append-only). */
#define TLM__MAX_RINGS 4096u
extern struct tlm__ring *_Atomic tlm__rings[TLM__MAX_RINGS] TLM_HIDDEN;
extern _Atomic uint32_t tlm__nrings TLM_HIDDEN;
extern _Atomic uint64_t tlm__seq TLM_HIDDEN;         /* next global sequence number */
extern _Atomic uint32_t tlm__next_thread TLM_HIDDEN; /* next trace thread index */
extern _Atomic uint64_t tlm__lost_noring TLM_HIDDEN; /* events lost before a ring existed */

/* The sizes of the per-thread state mapped with each ring (the stack cache,
 * the writer's view): set once, with the configuration, before any ring. */
void tlm__ring_layout(size_t stk_bytes, size_t writer_bytes) TLM_HIDDEN;
/* The calling thread's ring, created or recycled on first use (*adopted
 * set: the caller resets what it keeps in it, and calls tlm__ring_release
 * when the thread exits); NULL when no memory could be had (the event is
 * then counted as lost). */
extern TLM_TLS struct tlm__ring *tlm__t_ring TLM_HIDDEN; /* this thread's, once it has one */
struct tlm__ring *tlm__ring_self_slow(bool *adopted) TLM_HIDDEN;
static inline struct tlm__ring *tlm__ring_self(bool *adopted)
{
	struct tlm__ring *r = tlm__t_ring; /* the fast path is inline: every event takes it */
	return TLM_LIKELY(r != NULL) ? r : tlm__ring_self_slow(adopted);
}
/* Its owner is gone: the writer drains what is left and recycles it. Events
 * the thread makes after this (later TLS destructors) get a fresh ring. */
void tlm__ring_release(struct tlm__ring *r) TLM_HIDDEN;
/* The owner thread (or a signal handler on it) gives up its open record: it
 * is published void and the in-flight bound cleared. true when there was one. */
bool tlm__ring_void_open(struct tlm__ring *r) TLM_HIDDEN;
bool tlm__ring_open(const struct tlm__ring *r) TLM_HIDDEN; /* a record is begun and not published */
void tlm__ring_forget_self(void) TLM_HIDDEN;          /* after fork, in the child */
struct tlm__ring *tlm__ring_peek(void) TLM_HIDDEN;    /* this thread's ring, or NULL (never creates one) */
void tlm__ring_reset_all_child(void) TLM_HIDDEN;

#endif
