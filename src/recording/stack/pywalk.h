/* SPDX-License-Identifier: MIT */
/*
 * pywalk.h - a thread's Python cache and the walk of its frame chain, for
 * pystack.c (pystack.h is the room's contract for Python stacks).
 *
 * Contract: tlm__py_walk() reads the calling thread's frames into the
 * cache's hops, comparing them with the last walk's (pywalk.c); pystack.c
 * interns the hops it leaves (the trie path, the merged id) and writes the
 * definitions. The cache is the thread's alone (mapped by pystack.c, zeroed
 * = empty) and nothing here allocates or calls the interpreter.
 */
#ifndef TLM_PYWALK_H
#define TLM_PYWALK_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/stack/pycode.h"
#include "recording/stack/pymemo.h"
#include "recording/stack/pystack.h"
#include "recording/stack/pystack_int.h"
#include "recording/stack/pytrie.h"

#define TLM__PY_SCRATCH (TLM__PY_MAX_FRAMES * (8u + TLM__PY_FILE_MAX + TLM__PY_NAME_MAX))

/* One hop of the last walk, as read. A hop that reads the same code object
 * as the last walk's hop at the same depth is that code when no code object
 * died since that walk (pycache.memo_deaths), or else when it has the
 * signature of the code's cache entry (the cache's own validation); with the same instruction word as well, its
 * interned key (serial, line) holds: the block allocations and frees one
 * Python line makes come one after another from one chain, and the next
 * line's differ in the innermost frame's word only. The frame's own address
 * does not matter to the key, a function of the code and the offset; it
 * serves to find the last walk's frames at other hops (hop_f). A walk
 * equal to the last one at every hop reuses its interned id as well, and
 * one equal beyond its first hops reuses the trie node of those beyond
 * (pytrie.h): interning costs a probe per changed frame, not per frame.
 * Every hop of a walk is kept (it stops at TLM__PY_MEMO_HOPS). */
#define TLM__PY_MEMO_HOPS 256u
struct hop {
	uint64_t code, raw;  /* the code object; the instruction word as read (offset, or pointer) */
	uint64_t key;        /* serial << 32 | line */
	uint32_t ci;         /* index into code[]; UINT32_MAX: a hop the walk skipped */
	uint32_t node;       /* the trie node of the frames from this hop outward (pycache.nodes_ok) */
};

struct pycache {
	uint32_t gen_native;   /* native intern generation the merged ids were made under */
	/* the last walk (memo_hops 0: none usable) and, per kind of native id
	 * (0: none, as a block free's; else an allocation's), the merged id that
	 * walk was last interned to */
	uint32_t memo_hops, memo_epoch;
	uint64_t memo_ts;
	/* tlm__py_code_deaths as the last walk read it at its start: no code
	 * object died since when codes.deaths, the current walk's, is the same
	 * (and counted), so the last walk's codes are those at their addresses
	 * now. memo_epoch: codes.epoch then (an entry replaced since: the hops
	 * may name the old one) */
	uint64_t memo_deaths;
	uint32_t memo_sid[2], memo_id[2];
	/* the hops' nodes hold for the last walk (it was interned whole, not cut);
	 * the walk's outermost hop that differs from the one before it (-1: none) */
	bool nodes_ok, aligned;
	int32_t diff_hi;
	struct hop hop[TLM__PY_MEMO_HOPS];
	uint64_t hop_f[TLM__PY_MEMO_HOPS]; /* the frame each hop was read from (realign) */
	struct tlm__pycodes codes;
	struct tlm__pytrie trie;
	/* the pending definition */
	uint32_t pend_id, pend_native, pend_n, pend_bytes;
	uint32_t gen; /* bumped by reset(): the memo's entries from before do not hold */
	uint8_t scratch[TLM__PY_SCRATCH];
	struct tlm__pymemo_ent memo[TLM__PYMEMO_SLOTS];
};

/* A frame the interpreter made for itself, not the user's code: the C-stack
 * entry frame under every C->Python call (3.12-3.13, owner 3) and the __init__
 * shim of specialised class calls (3.13: its code carries CO_NO_MONITORING_EVENTS).
 * Showing either would split one allocation line into several sites. */
static inline bool tlm__py_cstack_frame(uint64_t f)
{
	return tlm__pyo.skip_cstack && tlm__py_rd8(f, tlm__pyo.f_owner) == 3;
}
static inline bool tlm__py_interp_frame(uint64_t f, uint64_t code)
{
	if (tlm__py_cstack_frame(f))
		return true;
	return tlm__pyo.shim_flags && tlm__py_is_type(code, tlm__py_code_type) && (tlm__py_rd32(code, tlm__pyo.co_flags) & tlm__pyo.shim_flags);
}

/* The memo's entry of hop h's frame when it holds h's key (the trie node
 * and ids it keeps are of that key). */
static inline struct tlm__pymemo_ent *tlm__py_memo_of(struct pycache *c, const struct hop *h)
{
	struct tlm__pymemo_ent *e = &c->memo[tlm__pymemo_slot(h->code, h->raw)];
	return e->code == h->code && e->raw == h->raw && e->key == h->key && e->gen == c->gen ? e : NULL;
}

/* The thread's frames (from thread state ts) into c->hop; returns how many
 * are the user's, -1 when the code cache is full (the caller resets and
 * walks again). *cut: the chain went on past TLM__PY_MAX_FRAMES user
 * frames; then the count is one less, room for the marker frame. *same:
 * every hop read as the last walk's, so its frames and ids hold.
 * c->aligned: as many hops as the last walk, neither cut, so the hops past
 * c->diff_hi are the last walk's, and their nodes hold. */
int tlm__py_walk(struct pycache *c, uint64_t ts, bool *cut, bool *same) TLM_HIDDEN;

#endif
