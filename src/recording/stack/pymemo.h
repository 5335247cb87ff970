/* SPDX-License-Identifier: MIT */
/*
 * pymemo.h - a thread's memo of the Python frames its walks met, for
 * pywalk.c and pystack.c: a frame read as (code object, instruction word)
 * -> its interned key and code cache entry, the trie node it last made and
 * under which parent, and that node's merged ids.
 *
 * Why: a frame that differs from the last walk's at its depth (the next
 * line, another function) otherwise costs a probe of the code cache, of its
 * line cache, of the trie and of its leaves (pycode.h, pytrie.h): four cache
 * lines, each cold again by the next step of a training loop, where the
 * framework's own work between two allocations evicts them. A memo entry is
 * one line.
 *
 * Contract: direct mapped, TLM__PYMEMO_SLOTS entries of one cache line, in
 * the caller's per-thread cache (a zeroed one is empty: no frame has code
 * 0). An entry's key and code entry hold while no code object died since it
 * was made (deaths, as tlm__py_code_deaths counts them) and the caller has
 * not reset its tables (gen); its trie node and ids hold while gen does.
 * Nothing is lost on a collision: the caller looks the frame up as before.
 */
#ifndef TLM_PYMEMO_H
#define TLM_PYMEMO_H

#include <stdint.h>

#define TLM__PYMEMO_SLOTS 4096u

struct tlm__pymemo_ent {
	uint64_t code, raw;         /* the frame's code object and instruction word as read (code 0: empty) */
	uint64_t key;               /* serial << 32 | line (pywalk.h's struct hop) */
	uint64_t deaths;            /* tlm__py_code_deaths when the code was found to be entry ci's */
	uint32_t ci, gen;           /* the code cache entry; the caller's table generation when made */
	uint32_t parent, node;      /* trie: the child of parent by key is node (0: none yet) */
	uint32_t id0, native1, id1; /* node's merged ids: with no native stack; with native stack native1 */
	uint32_t pad;
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct tlm__pymemo_ent) == 64, "a memo entry is one cache line");

static inline uint32_t tlm__pymemo_slot(uint64_t code, uint64_t raw)
{
	return (uint32_t)(((code >> 4) ^ raw * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull >> 52) & (TLM__PYMEMO_SLOTS - 1);
}

#endif
