/* SPDX-License-Identifier: MIT */
/*
 * model_set.c - the model's containers: blocks ordered by (stream, size,
 * address), (stream, size, segment, address) or (stream, address) in a sorted array (binary search; the cache
 * holds hundreds to thousands of free blocks, so the moves are cheap), and an
 * open-addressing table from a 64-bit key to a nonzero 64-bit value.
 */
#include <stdlib.h>
#include <string.h>

#include "whatif/model_int.h"
#include "common/grow.h"

static int cmp(const struct wi_set *s, const struct wi_block *a, uint64_t stream, uint64_t size, uint32_t reg,
	       uint64_t ptr)
{
	if (a->stream != stream)
		return a->stream < stream ? -1 : 1;
	if (s->by_size && a->size != size)
		return a->size < size ? -1 : 1;
	if (s->by_size && s->by_reg && a->reg != reg)
		return a->reg < reg ? -1 : 1;
	return (a->ptr > ptr) - (a->ptr < ptr);
}

static size_t lower(const struct wi_set *s, uint64_t stream, uint64_t size, uint32_t reg, uint64_t ptr)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(s, s->v[mid], stream, size, reg, ptr) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first element not less than the key (a search key: the oldest
 * segment, the lowest address). */
size_t tlm__wi_lower(const struct wi_set *s, uint64_t stream, uint64_t size, uint64_t ptr)
{
	return lower(s, stream, size, 0, ptr);
}

int tlm__wi_insert(struct wi_set *s, struct wi_block *b)
{
	if (s->n == s->cap && tlm__grow(&s->v, &s->cap, s->n + 1, sizeof *s->v, 64))
		return -1;

	size_t i = lower(s, b->stream, b->size, b->reg, b->ptr);
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
	s->v[i] = b;
	s->n++;
	return 0;
}

void tlm__wi_erase(struct wi_set *s, const struct wi_block *b)
{
	size_t i = lower(s, b->stream, b->size, b->reg, b->ptr);
	if (i < s->n && s->v[i] == b) {
		memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
		s->n--;
	}
}

void tlm__wi_set_free(struct wi_set *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static size_t slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int grow(struct wi_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint64_t *key = calloc(cap, sizeof *key);
	uint64_t *val = calloc(cap, sizeof *val);
	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->val[i])
			continue;
		size_t j = slot(t->key[i], cap);
		while (val[j])
			j = (j + 1) & (cap - 1);
		key[j] = t->key[i];
		val[j] = t->val[i];
	}
	free(t->key);
	free(t->val);
	t->key = key;
	t->val = val;
	t->cap = cap;
	return 0;
}

int tlm__wi_table_put(struct wi_table *t, uint64_t key, uint64_t b)
{
	if ((t->n + 1) * 2 > t->cap && grow(t))
		return -1;
	size_t j = slot(key, t->cap);
	while (t->val[j] && t->key[j] != key)
		j = (j + 1) & (t->cap - 1);
	t->n += !t->val[j];
	t->key[j] = key;
	t->val[j] = b;
	return 0;
}

uint64_t tlm__wi_table_get(const struct wi_table *t, uint64_t key)
{
	if (!t->cap)
		return 0;
	size_t j = slot(key, t->cap);
	while (t->val[j] && t->key[j] != key)
		j = (j + 1) & (t->cap - 1);
	return t->val[j];
}

/* Removes and returns; backward-shift deletion keeps probe chains whole. */
uint64_t tlm__wi_table_take(struct wi_table *t, uint64_t key)
{
	if (!t->cap)
		return 0;
	size_t j = slot(key, t->cap);
	while (t->val[j] && t->key[j] != key)
		j = (j + 1) & (t->cap - 1);
	uint64_t b = t->val[j];
	if (!b)
		return 0;
	t->val[j] = 0;
	t->n--;
	for (size_t k = (j + 1) & (t->cap - 1); t->val[k]; k = (k + 1) & (t->cap - 1)) {
		size_t h = slot(t->key[k], t->cap);
		/* move k back to j when its home h is not in (j, k] (cyclically) */
		bool in = j < k ? (h > j && h <= k) : (h > j || h <= k);
		if (!in) {
			t->key[j] = t->key[k];
			t->val[j] = t->val[k];
			t->val[k] = 0;
			j = k;
		}
	}
	return b;
}

void tlm__wi_table_free(struct wi_table *t)
{
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof *t);
}
