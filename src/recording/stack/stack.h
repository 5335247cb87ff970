/* SPDX-License-Identifier: MIT */
/*
 * stack.h - native call stacks for the recorder: the stack room's contract.
 *
 * Contract: tlm__stack_get() gives the hooked call's caller's stack as a
 * small per-thread id: from the whole-unwind cache when the call path is one
 * seen before (stack_cache.c), else walked (stack_walk.c, or libunwind's
 * unw_backtrace for frames the walk leaves to it: stack.c) and interned;
 * libtlm's own frames are never in it. When the id is new (*fresh) its
 * return addresses are in ips and its definition must go into the ring
 * before the first event using it. Never allocates; a first sight of a
 * return address may take glibc's loader lock inside libunwind, and fork
 * waits for such unwinds (unwind_dl.h). The per-thread state lives in the
 * thread's ring mapping (struct tlm__stk_cache, producer-only).
 */
#ifndef TLM_REC_STACK_H
#define TLM_REC_STACK_H

#include "recording/defs.h"
#include "tlm/trace.h"

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
#define TLM__SC_SETS 128u            /* power of two */
#define TLM__SC_WAYS 4u              /* stacks kept per set: many share one caller position */
#define TLM__SC_ENTRIES (TLM__SC_SETS * TLM__SC_WAYS)
#define TLM__SC_DEPTH 128u           /* deeper stacks are not cached */
#define TLM__SC_SLOTS (2u * TLM__SC_DEPTH)
#define TLM__RC 256u                 /* power of two */
#define TLM__SCRATCH 4096u           /* words: stack_walk.c learns frame rules over it */
struct tlm__sc_entry {
	uint64_t ip0, cfa0, rbp0;    /* the caller's registers at the hooked call */
	uint32_t depth, nslot;
	uint32_t local_id, gen;      /* intern id, valid while gen == cache gen */
	bool need_rbp0;              /* the walk used the caller's rbp */
	bool packed;                 /* chunk made (at its first hit) */
	/* the slots, packed for a lookup's few lines, 8 a chunk: each slot's
	 * address is the previous one's (cfa0 for the first) + 8 * step, and
	 * the chunk's hash is of the values the walk read there */
	struct tlm__sc_chunk {
		uint64_t hash;
		int16_t step[8];
	} chunk[TLM__SC_SLOTS / 8];
	uint64_t ip[TLM__SC_DEPTH];
	/* the walk's slots as it read them: a later walk takes over a suffix */
	uint64_t slot_addr[TLM__SC_SLOTS], slot_val[TLM__SC_SLOTS];
};
/* A set's tags, one line: a lookup reads the entries whose tag matches only.
 * tag 0: the way holds no stack. */
struct tlm__sc_set {
	uint64_t tag[TLM__SC_WAYS];
	uint32_t used[TLM__SC_WAYS]; /* the thread's lookup count at its last use: the oldest way goes */
} __attribute__((aligned(64)));
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
	uint32_t tick;               /* stack_cache.c: counts lookups, for the ways' age */
	bool cut;                    /* walks end at the interpreter: what the entries were made under */
	uint64_t stack_lo, stack_hi; /* this thread's stack, 0 if unknown */
	struct tlm__stk_entry b[TLM__STK_BUCKETS];
	uint64_t arena[TLM__STK_ARENA];
	struct tlm__sc_set sc_set[TLM__SC_SETS];
	struct tlm__sc_entry sc[TLM__SC_ENTRIES];
	uint64_t rc_ip[TLM__RC], rc_rule[TLM__RC]; /* stack_walk.c: this thread's recent frame rules */
	struct tlm__walk_rec last; /* stack_walk.c */
	uint64_t scratch[TLM__SCRATCH];
	/* the recorder's: an event's return addresses, here rather than in its
	 * frame, where 2 KiB of them put every frame the event's capture calls
	 * 2 KiB deeper than the host's own, on stack lines it seldom touches */
	uint64_t ips[TLM_MAX_STACK_DEPTH];
};

/* With the configuration, before any event: libtlm's own code ranges,
 * libunwind, the cache's settings. */
void tlm__stack_init(void) TLM_HIDDEN;
uint32_t tlm__stack_get(struct tlm__stk_cache *c, uint64_t *ips, uint32_t max, uint32_t *depth, bool *fresh)
	TLM_HIDDEN;
void tlm__stack_thread_init(struct tlm__stk_cache *c) TLM_HIDDEN; /* a new owner: stack bounds, nothing cached */
void tlm__stack_forget_all(struct tlm__stk_cache *c) TLM_HIDDEN;  /* a definition was dropped: every id anew */
void tlm__stack_report(void) TLM_HIDDEN; /* TLM_DEBUG_STACK_STATS / _VERIFY lines at the end */
/* Python stacks (pysetup.c, pystack.c): sym lies in the interpreter's code;
 * once its frame layout is validated (_on), a native stack ends at its first
 * frame inside the interpreter, which it keeps (the frames past it are the
 * eval loop's, which the Python frames tell better, and the report shows
 * native frames under Python ones only with --full-stacks);
 * TLM_STACK_PAST_PYTHON=1 keeps them. */
void tlm__stack_interp_found(const void *sym) TLM_HIDDEN;
void tlm__stack_interp_on(void) TLM_HIDDEN;
void tlm__stack_atfork_prepare(void) TLM_HIDDEN; /* unwind_dl.c: waits for unwinds in flight */
void tlm__stack_atfork_done(void) TLM_HIDDEN;    /* parent and child */

#endif
