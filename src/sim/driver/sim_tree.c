// SPDX-License-Identifier: MIT
/* Treap with split/merge; see sim_tree.h for the contract. */
#include "sim_tree.h"

#include <stdlib.h>

static uint64_t sub_max(const struct sim_node *n)
{
	return n ? n->maxlen : 0;
}

/* Recompute the augmented maximum after a child changed. */
static void pull(struct sim_node *n)
{
	uint64_t m = n->len, a = sub_max(n->l), b = sub_max(n->r);
	if (a > m)
		m = a;
	if (b > m)
		m = b;
	n->maxlen = m;
}

/* Split t into keys < key (*a) and keys >= key (*b). */
static void split(struct sim_node *t, uint64_t key, struct sim_node **a, struct sim_node **b)
{
	if (!t) {
		*a = *b = NULL;
		return;
	}
	if (t->key < key) {
		split(t->r, key, &t->r, b);
		*a = t;
	} else {
		split(t->l, key, a, &t->l);
		*b = t;
	}
	pull(t);
}

/* Merge two treaps where every key of a is below every key of b. */
static struct sim_node *merge(struct sim_node *a, struct sim_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->r = merge(a->r, b);
		pull(a);
		return a;
	}
	b->l = merge(a, b->l);
	pull(b);
	return b;
}

static uint32_t next_prio(struct sim_tree *t)
{
	uint32_t x = t->rng ? t->rng : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return x;
}

/* Insert by descending while the new node's priority is lower, then split the
 * subtree it displaces: one split instead of split + two merges. */
static struct sim_node *insert_at(struct sim_node *t, struct sim_node *n)
{
	if (!t)
		return n;
	if (n->prio > t->prio) {
		split(t, n->key, &n->l, &n->r);
		pull(n);
		return n;
	}
	if (n->key < t->key)
		t->l = insert_at(t->l, n);
	else
		t->r = insert_at(t->r, n);
	pull(t);
	return t;
}

#define MAX_SPARE 64

bool sim_tree_insert(struct sim_tree *t, uint64_t key, uint64_t len, uintptr_t val)
{
	struct sim_node *n = t->spare;
	if (n) {
		t->spare = n->r;
		t->nspare--;
	} else if (!(n = malloc(sizeof(*n)))) {
		return false;
	}
	n->key = key;
	n->len = len;
	n->maxlen = len;
	n->val = val;
	n->prio = next_prio(t);
	n->l = n->r = NULL;
	t->root = insert_at(t->root, n);
	t->count++;
	return true;
}

static struct sim_node *remove_at(struct sim_node *t, uint64_t key, struct sim_node **out)
{
	if (!t)
		return NULL;
	if (key == t->key) {
		struct sim_node *m = merge(t->l, t->r);
		*out = t;
		return m;
	}
	if (key < t->key)
		t->l = remove_at(t->l, key, out);
	else
		t->r = remove_at(t->r, key, out);
	pull(t);
	return t;
}

bool sim_tree_remove(struct sim_tree *t, uint64_t key, uint64_t *len, uintptr_t *val)
{
	struct sim_node *gone = NULL;
	if (!sim_tree_find(t, key))
		return false; /* avoid recomputing maxlen along a miss path for nothing */
	t->root = remove_at(t->root, key, &gone);
	if (len)
		*len = gone->len;
	if (val)
		*val = gone->val;
	if (t->nspare < MAX_SPARE) {
		gone->r = t->spare;
		t->spare = gone;
		t->nspare++;
	} else {
		free(gone);
	}
	t->count--;
	return true;
}

struct sim_node *sim_tree_find(const struct sim_tree *t, uint64_t key)
{
	struct sim_node *n = t->root;
	while (n && n->key != key)
		n = key < n->key ? n->l : n->r;
	return n;
}

struct sim_node *sim_tree_floor(const struct sim_tree *t, uint64_t key)
{
	struct sim_node *n = t->root, *best = NULL;
	while (n) {
		if (n->key <= key) {
			best = n;
			n = n->r;
		} else {
			n = n->l;
		}
	}
	return best;
}

struct sim_node *sim_tree_ceil(const struct sim_tree *t, uint64_t key)
{
	struct sim_node *n = t->root, *best = NULL;
	while (n) {
		if (n->key >= key) {
			best = n;
			n = n->l;
		} else {
			n = n->r;
		}
	}
	return best;
}

struct sim_node *sim_tree_max(const struct sim_tree *t)
{
	struct sim_node *n = t->root;
	while (n && n->r)
		n = n->r;
	return n;
}

static bool fits(const struct sim_node *n, uint64_t need, uint64_t align)
{
	uint64_t a = (n->key + align - 1) & ~(align - 1);
	uint64_t skip = a - n->key;
	return a >= n->key && skip <= n->len && n->len - skip >= need;
}

static struct sim_node *fit(struct sim_node *n, uint64_t need, uint64_t align)
{
	while (n && n->maxlen >= need) {
		struct sim_node *r = fit(n->l, need, align);
		if (r)
			return r;
		if (fits(n, need, align))
			return n;
		n = n->r; /* tail position: iterate instead of recursing */
	}
	return NULL;
}

struct sim_node *sim_tree_first_fit(const struct sim_tree *t, uint64_t need, uint64_t align)
{
	return fit(t->root, need, align ? align : 1);
}
