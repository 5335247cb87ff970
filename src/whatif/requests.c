/* SPDX-License-Identifier: MIT */
/*
 * requests.c - the program's requests, inferred from the block sizes the tap
 * reports (replay_int.h, struct wi_sizes). A block the allocator hands out
 * whole can be up to 1 MiB larger than the request (docs/whatif.md, Limits);
 * the replay under the recorded settings bounds each request from below
 * (tlm_wi_model_last_low) and this file picks, inside [low, size], a size
 * the trace showed before as an exact block (one split off at its request's
 * size, a small-pool block, an OOM's rounded request): the same tensor
 * shapes come back. First the latest such size from the same stack (the same
 * line of the program), else the size seen most often; without one the block
 * size stands (docs/whatif.md, Limits, has what this gets right).
 */
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"
#include "common/grow.h"

#define MAX_SIZES 65536 /* distinct sizes kept: a hostile trace cannot grow this */

static size_t lower(const struct wi_sizes *s, uint64_t size)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].size < size)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t site_slot(uint32_t stack, size_t cap)
{
	uint64_t k = stack * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & (cap - 1);
}

static const struct wi_site *site_find(const struct wi_sizes *s, uint32_t stack)
{
	if (!stack || !s->capsite)
		return NULL;
	for (size_t j = site_slot(stack, s->capsite);; j = (j + 1) & (s->capsite - 1)) {
		if (s->site[j].stack == stack)
			return &s->site[j];
		if (!s->site[j].stack)
			return NULL;
	}
}

static void site_add(struct wi_sizes *s, uint32_t stack, uint64_t size)
{
	if (!stack)
		return;
	if ((s->nsite + 1) * 2 > s->capsite) {
		if (s->nsite >= MAX_SIZES)
			return;
		size_t cap = s->capsite ? s->capsite * 2 : 256;
		struct wi_site *v = calloc(cap, sizeof *v);
		if (!v)
			return;
		for (size_t i = 0; i < s->capsite; i++) {
			if (!s->site[i].stack)
				continue;
			size_t j = site_slot(s->site[i].stack, cap);
			while (v[j].stack)
				j = (j + 1) & (cap - 1);
			v[j] = s->site[i];
		}
		free(s->site);
		s->site = v;
		s->capsite = cap;
	}
	size_t j = site_slot(stack, s->capsite);
	while (s->site[j].stack && s->site[j].stack != stack)
		j = (j + 1) & (s->capsite - 1);
	struct wi_site *t = &s->site[j];
	if (!t->stack) {
		t->stack = stack;
		s->nsite++;
	}
	t->sizes[t->next] = size;
	t->next = (t->next + 1) % WI_SITE_SIZES;
}

void tlm__wi_sizes_seen(struct wi_sizes *s, uint64_t size, uint32_t stack)
{
	site_add(s, stack, size);
	size_t i = lower(s, size);
	if (i < s->n && s->v[i].size == size) {
		if (s->v[i].count < UINT32_MAX)
			s->v[i].count++;
		return;
	}
	if (s->n == MAX_SIZES)
		return;
	if (s->n == s->cap && tlm__grow(&s->v, &s->cap, s->n + 1, sizeof *s->v, 256))
		return; /* a guess less: the block size stands */

	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof *s->v);
	s->v[i] = (struct wi_size_seen){size, 1};
	s->n++;
}

uint64_t tlm__wi_sizes_guess(const struct wi_sizes *s, uint64_t low, uint64_t size, uint32_t stack)
{
	const struct wi_site *t = site_find(s, stack);
	for (uint32_t k = 1; t && k <= WI_SITE_SIZES; k++) { /* the most recent first */
		uint64_t v = t->sizes[(t->next + WI_SITE_SIZES - k) % WI_SITE_SIZES];
		if (v && v >= low && v <= size)
			return v;
	}
	uint64_t best = size;
	uint32_t most = 0;
	for (size_t i = lower(s, low); i < s->n && s->v[i].size <= size; i++)
		if (s->v[i].count >= most) { /* ties: the larger */
			most = s->v[i].count;
			best = s->v[i].size;
		}
	return best;
}

void tlm__wi_sizes_free(struct wi_sizes *s)
{
	free(s->site);
	free(s->v);
	memset(s, 0, sizeof *s);
}
