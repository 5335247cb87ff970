/* SPDX-License-Identifier: MIT */
/*
 * pytrie.h - a thread's Python stacks interned as paths of a trie, for
 * pystack.c.
 *
 * Contract: a stack is the path from the root (0) through one node per
 * frame key, outermost frame first; tlm__pytrie_child() gives the node of a
 * path one key longer, tlm__pytrie_leaf() the thread's merged stack id of
 * (node, native stack id). Both are exact (every key compared) and cost one
 * probe, so a capture whose outer frames are the last one's interns only
 * its changed inner frames (pystack.c keeps the node of each hop). Nothing
 * allocates: the tables live in the caller's per-thread cache; full tables
 * return 0 and the caller resets (tlm__pytrie_reset) and starts over.
 */
#ifndef TLM_PYTRIE_H
#define TLM_PYTRIE_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/stack/pystack.h"

#define TLM__PYTRIE_SLOTS 16384u /* nodes: reset at half full */
#define TLM__PYTRIE_LEAVES (2u * TLM__PY_STACKS)

struct tlm__pytrie {
	uint32_t nodes, next_id; /* the last node and merged id given (0: none; all zero: empty) */
	struct {
		uint64_t key;
		uint32_t parent, node; /* node 0: empty */
	} slot[TLM__PYTRIE_SLOTS];
	struct {
		uint32_t node, native, id; /* id 0: empty */
	} leaf[TLM__PYTRIE_LEAVES];
	/* Per node (0: the root), by number: the child it led to last (its key
	 * and node; node 0: none) and its merged id with no native stack (0:
	 * none yet; such ids are not in leaf[]). A frame reached from changing
	 * outer paths (one inner line under many callers, as a layer's under
	 * each block) finds its node and id here: nodes are numbered as made,
	 * so a step's few hundred sit in a few dense lines, where the hashed
	 * tables put each on a line of its own, a miss after the framework's
	 * work since the last event. */
	struct {
		uint64_t child_key;
		uint32_t child, id0;
	} nd[TLM__PYTRIE_SLOTS / 2 + 1];
};

/* Empties both tables (all zero); merged ids start again at 1. */
void tlm__pytrie_reset(struct tlm__pytrie *t) TLM_HIDDEN;

/* The node of parent's path and key; 0 when the table is full. */
static inline uint32_t tlm__pytrie_child(struct tlm__pytrie *t, uint32_t parent, uint64_t key)
{
	if (t->nd[parent].child && t->nd[parent].child_key == key)
		return t->nd[parent].child;
	uint64_t h = (key ^ (uint64_t)parent << 40 ^ parent) * 0x9e3779b97f4a7c15ull;
	uint32_t node;
	for (uint32_t i = (uint32_t)(h >> 50);; i = (i + 1) & (TLM__PYTRIE_SLOTS - 1)) {
		if (t->slot[i].node == 0) {
			if (t->nodes * 2 >= TLM__PYTRIE_SLOTS)
				return 0;
			t->slot[i].key = key;
			t->slot[i].parent = parent;
			node = t->slot[i].node = ++t->nodes;
			break;
		}
		if (t->slot[i].key == key && t->slot[i].parent == parent) {
			node = t->slot[i].node;
			break;
		}
	}
	t->nd[parent].child_key = key;
	t->nd[parent].child = node;
	return node;
}

/* The merged id of (node, native); *fresh when it is new. 0 when the ids
 * ran out (TLM__PY_STACKS) or the table is full. */
uint32_t tlm__pytrie_leaf(struct tlm__pytrie *t, uint32_t node, uint32_t native, bool *fresh) TLM_HIDDEN;

#endif
