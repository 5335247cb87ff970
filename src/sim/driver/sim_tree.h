/* SPDX-License-Identifier: MIT */
/*
 * sim_tree.h - an ordered map from uint64 keys to (len, val), used for every
 * address-keyed table in the simulated driver.
 *
 * Contract: a treap (randomised balanced binary search tree) keyed by a unique
 * uint64 key. Each node carries a length `len` and an opaque `val`; the tree
 * keeps, per subtree, the largest `len` so that "leftmost node with len >= n"
 * is found in O(log n) expected time (the VA first-fit search). All operations
 * are O(log n) expected. Not thread safe: callers hold the sim lock. Nodes are
 * owned by the tree; `len` must only change by remove + insert, `val` may be
 * changed in place.
 */
#ifndef TLM_SIM_TREE_H
#define TLM_SIM_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct sim_node {
	uint64_t key, len;
	uint64_t maxlen; /* max len over this subtree; drives first-fit search */
	uintptr_t val;
	uint32_t prio;
	struct sim_node *l, *r;
};

struct sim_tree {
	struct sim_node *root;
	uint32_t rng; /* xorshift state for priorities; 0 means "not seeded" */
	size_t count;
	/* A few removed nodes kept for reuse: alloc/free pairs remove and insert
	 * one node each, and recycling them avoids a malloc/free per call. */
	struct sim_node *spare;
	unsigned nspare;
};

/* Insert a new key (must not be present). False only when out of host memory. */
bool sim_tree_insert(struct sim_tree *t, uint64_t key, uint64_t len, uintptr_t val);
/* Remove `key`; returns false if absent. len/val may be NULL. */
bool sim_tree_remove(struct sim_tree *t, uint64_t key, uint64_t *len, uintptr_t *val);
struct sim_node *sim_tree_find(const struct sim_tree *t, uint64_t key);
/* Largest key <= key, or NULL. */
struct sim_node *sim_tree_floor(const struct sim_tree *t, uint64_t key);
/* Smallest key >= key, or NULL. */
struct sim_node *sim_tree_ceil(const struct sim_tree *t, uint64_t key);
/* Largest key overall, or NULL. */
struct sim_node *sim_tree_max(const struct sim_tree *t);
/* Leftmost node [key, key+len) that contains an `align`-aligned sub-range of
 * `need` (align is a power of two). Pruned by maxlen, so O(log n) when every
 * key is already aligned. */
struct sim_node *sim_tree_first_fit(const struct sim_tree *t, uint64_t need, uint64_t align);

#pragma GCC visibility pop

#endif
