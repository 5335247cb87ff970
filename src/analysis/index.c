/* SPDX-License-Identifier: MIT */
/*
 * index.c - a (u64, u64, u64) key -> u32 value hash for the stack table and
 * the churn groups. It stores only values; keys live in the caller's array
 * (key_of), so each group's key is held once.
 */
#include <stdlib.h>

#include "analysis/internal.h"

static inline size_t hash(const struct tlm__key *k)
{
	uint64_t h = k->a * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 31) ^ k->b) * 0xBF58476D1CE4E5B9ULL;
	h = (h ^ (h >> 29) ^ k->c) * 0x94D049BB133111EBULL;
	return (size_t)(h ^ (h >> 32));
}

static inline int same(const struct tlm__key *x, const struct tlm__key *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c;
}

int tlm__index_init(struct tlm__index *x, const struct tlm__key *(*key_of)(const void *, uint32_t),
		    const void *ctx)
{
	x->mask = 255;
	x->count = 0;
	x->key_of = key_of;
	x->ctx = ctx;
	x->slot = calloc(x->mask + 1, sizeof *x->slot);
	return x->slot ? 0 : -1;
}

void tlm__index_fini(struct tlm__index *x)
{
	free(x->slot);
	x->slot = NULL;
}

uint32_t tlm__index_get(const struct tlm__index *x, const struct tlm__key *k)
{
	for (size_t i = hash(k) & x->mask;; i = (i + 1) & x->mask) {
		uint32_t v = x->slot[i];
		if (!v)
			return UINT32_MAX;
		if (same(x->key_of(x->ctx, v - 1), k))
			return v - 1;
	}
}

static void place(struct tlm__index *x, const struct tlm__key *k, uint32_t value)
{
	size_t i = hash(k) & x->mask;
	while (x->slot[i])
		i = (i + 1) & x->mask;
	x->slot[i] = value + 1;
}

int tlm__index_add(struct tlm__index *x, const struct tlm__key *k, uint32_t value)
{
	if ((x->count + 1) * 2 > x->mask + 1) {
		size_t ocap = x->mask + 1;
		uint32_t *old = x->slot;
		uint32_t *n = calloc(ocap * 2, sizeof *n);
		if (!n)
			return -1;
		x->slot = n;
		x->mask = ocap * 2 - 1;
		for (size_t i = 0; i < ocap; i++)
			if (old[i])
				place(x, x->key_of(x->ctx, old[i] - 1), old[i] - 1);
		free(old);
	}
	place(x, k, value);
	x->count++;
	return 0;
}
