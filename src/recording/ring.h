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
 * Global order: a producer announces a lower bound of its sequence number in
 * `inflight` (seq_cst; one past the ring's own last number, since numbers only
 * grow) before taking one from tlm__seq, and clears it after
 * publishing; the writer only emits events below the smallest announced bound,
 * so the merged stream is in exact sequence order without ever waiting.
 */
#ifndef TLM_RING_H
#define TLM_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "recording/shim.h"

#define TLM__CACHELINE 64

enum tlm__slot_type {
	TLM__SLOT_EVENT = 1,   /* struct tlm__slot as an event */
	TLM__SLOT_EXT = 2,     /* extension of the previous event: u64[0] = device_free */
	TLM__SLOT_EVENT_FREE = 5, /* a successful event followed by an extension (device_free) */
	TLM__SLOT_STACK = 3,   /* header: aux = local stack id, size = depth; ips follow */
	TLM__SLOT_PYSTACK = 4, /* header: aux = local merged id, stream = local native stack id,
	                        * size = frames, addr = payload bytes; payload slots follow, per frame
	                        * i32 line, u16 file length, u16 name length, file, name (pystack.c) */
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

/* Per-thread stack intern cache (producer-only memory). */
#define TLM__STK_BUCKETS 4096u        /* power of two */
#define TLM__STK_ARENA (64u * 1024u)  /* ips kept per thread before a reset */
struct tlm__stk_entry {
	uint64_t hash;
	uint32_t id;     /* local id, 0 = empty */
	uint32_t depth;
	uint32_t off;    /* into arena */
};
/* Per-thread cache of whole unwinds (x86-64): a stack seen before at the same
 * stack position is recognised by re-reading only the memory the unwinder
 * read (return-address and saved-frame-pointer slots), see stack.c. */
#define TLM__SC_ENTRIES 32u          /* power of two */
#define TLM__SC_DEPTH 128u           /* deeper stacks are not cached */
#define TLM__SC_SLOTS (2u * TLM__SC_DEPTH)
#define TLM__RC 256u                 /* power of two */
#define TLM__SCRATCH 4096u           /* words: stack_walk.c learns frame rules over it */
struct tlm__sc_entry {
	uint64_t ip0, cfa0, rbp0;    /* the caller's registers at the hooked call */
	uint32_t depth, nslot;
	uint32_t local_id, gen;      /* intern id, valid while gen == cache gen */
	bool need_rbp0;              /* the walk used the caller's rbp */
	uint64_t ip[TLM__SC_DEPTH];
	uint64_t slot_addr[TLM__SC_SLOTS], slot_val[TLM__SC_SLOTS];
};
/* stack_walk.c: where each frame of the thread's last walk stood, so that the
 * next walk can take over its outer frames (a free's stack differs from its
 * alloc's only inside); its return addresses and slots stay in its entry */
struct tlm__walk_rec {
	struct tlm__sc_entry *e; /* the entry that holds the walk; NULL: none */
	uint32_t depth;
	bool natural;            /* ended by the chain's end, not by the depth limit */
	uint64_t sp[TLM__SC_DEPTH], rbp[TLM__SC_DEPTH];
	uint32_t slot0[TLM__SC_DEPTH]; /* its first slot: the return-address slot of its step */
};
struct tlm__stk_cache {
	uint32_t next_id;
	uint32_t arena_used;
	uint32_t gen;                /* bumped when the intern table is reset */
	uint64_t stack_lo, stack_hi; /* this thread's stack, 0 if unknown */
	struct tlm__stk_entry b[TLM__STK_BUCKETS];
	uint64_t arena[TLM__STK_ARENA];
	struct tlm__sc_entry sc[TLM__SC_ENTRIES];
	uint64_t rc_ip[TLM__RC], rc_rule[TLM__RC]; /* stack_walk.c: this thread's recent frame rules */
	struct tlm__walk_rec last; /* stack_walk.c */
	uint64_t scratch[TLM__SCRATCH];
};

enum tlm__ring_state {
	TLM__RING_ACTIVE = 1,
	TLM__RING_EXITED = 2, /* owner thread gone: drain, then recycle */
	TLM__RING_FREE = 3,   /* drained, waiting for a new owner */
	TLM__RING_STARTING_CLAIM = 4, /* being set up for a new owner */
};

struct tlm__ring {
	/* producer's line */
	_Alignas(TLM__CACHELINE) _Atomic uint64_t head;
	uint64_t cached_tail;
	_Atomic uint64_t inflight;  /* UINT64_MAX when idle */
	uint64_t last_seq;          /* one past this ring's last seq: its next bound */
	_Atomic uint64_t lost;      /* events dropped (drop mode, no memory) */
	_Atomic uint32_t kicked;    /* producer asked the writer to drain */
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
	uint32_t mask;              /* slots - 1 */
	size_t map_bytes;
	struct tlm__stk_cache *stk; /* producer-only */
	void *py;                   /* producer-only: Python frame cache (pystack.c), mapped on first use */
	void *wstate;               /* writer-only (writer.c) */
	struct tlm__slot *slots;
};

/* Registry of all rings (writer iterates it; append-only). */
#define TLM__MAX_RINGS 4096u
extern struct tlm__ring *_Atomic tlm__rings[TLM__MAX_RINGS] TLM_HIDDEN;
extern _Atomic uint32_t tlm__nrings TLM_HIDDEN;
extern _Atomic uint64_t tlm__seq TLM_HIDDEN;         /* next global sequence number */
extern _Atomic uint32_t tlm__next_thread TLM_HIDDEN; /* next trace thread index */
extern _Atomic uint64_t tlm__lost_noring TLM_HIDDEN; /* events lost before a ring existed */

/* The calling thread's ring, created or recycled on first use; NULL when no
 * memory could be had (the event is then counted as lost). */
struct tlm__ring *tlm__ring_self(void) TLM_HIDDEN;
void tlm__ring_forget_self(void) TLM_HIDDEN;          /* after fork, in the child */
struct tlm__ring *tlm__ring_peek(void) TLM_HIDDEN;    /* this thread's ring, or NULL (never creates one) */
void tlm__ring_reset_all_child(void) TLM_HIDDEN;

#endif
