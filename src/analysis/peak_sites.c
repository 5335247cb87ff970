/* SPDX-License-Identifier: MIT */
/*
 * peak_sites.c - what held memory when the allocated layer of a (device,
 * kind) peaked, by allocation site, in one pass and memory proportional to
 * the sites.
 *
 * S holds each site's live bytes at the best peak so far; D each site's net
 * change since then, with the list of sites D touched. A new peak folds D
 * into S (S is then the state at this peak) and clears it. Every change is
 * written once into D and folded at most once, so the whole run costs O(n).
 * At the end, survivors allocated before the peak (they were live at it) are
 * the persistent part of each site's bytes; the rest was freed before the
 * end: transient memory such as activations.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

struct psite {
	uint32_t stack_id;
	bool touched;
	uint64_t s_bytes, s_count;          /* at the peak */
	int64_t d_bytes, d_count;           /* since the peak */
	uint64_t persist_bytes, persist_count;
};

struct tlm__psites {
	struct psite *e;
	size_t n, cap;
	uint32_t *slot;                     /* index + 1, 0 = empty; open addressing */
	size_t mask;
	uint32_t *touched;
	size_t ntouched, tcap;
};

struct tlm__psites *tlm__psites_new(void)
{
	return calloc(1, sizeof(struct tlm__psites));
}

void tlm__psites_free(struct tlm__psites *p)
{
	if (!p)
		return;
	free(p->e);
	free(p->slot);
	free(p->touched);
	free(p);
}

void tlm__psites_reset(struct tlm__psites *p)
{
	if (!p)
		return;
	p->n = p->ntouched = 0;
	if (p->slot)
		memset(p->slot, 0, (p->mask + 1) * sizeof *p->slot);
}

static size_t hash(uint32_t k)
{
	return (size_t)(k * 2654435761u);
}

static int grow(struct tlm__psites *p)
{
	size_t cap = p->mask ? (p->mask + 1) * 2 : 64;
	uint32_t *slot = calloc(cap, sizeof *slot);
	if (!slot)
		return -1;
	for (size_t i = 0; i < p->n; i++) {
		size_t h = hash(p->e[i].stack_id) & (cap - 1);
		while (slot[h])
			h = (h + 1) & (cap - 1);
		slot[h] = (uint32_t)(i + 1);
	}
	free(p->slot);
	p->slot = slot;
	p->mask = cap - 1;
	return 0;
}

static struct psite *get(struct tlm__psites *p, uint32_t stack_id)
{
	if ((p->n + 1) * 2 > p->mask + 1 && grow(p))
		return NULL;
	size_t h = hash(stack_id) & p->mask;
	for (; p->slot[h]; h = (h + 1) & p->mask)
		if (p->e[p->slot[h] - 1].stack_id == stack_id)
			return &p->e[p->slot[h] - 1];
	if (p->n == p->cap && tlm__grow(&p->e, &p->cap, p->n + 1, sizeof *p->e, 64))
		return NULL;
	if (p->n >= UINT32_MAX - 1)
		return NULL;
	struct psite *s = &p->e[p->n];
	memset(s, 0, sizeof *s);
	s->stack_id = stack_id;
	p->slot[h] = (uint32_t)++p->n;
	return s;
}

int tlm__psites_change(struct tlm__psites *p, uint32_t stack_id, bool alloc, uint64_t bytes)
{
	if (!p)
		return 0;
	struct psite *s = get(p, stack_id);
	if (!s)
		return -1;
	if (!s->touched) {
		if (p->ntouched == p->tcap && tlm__grow(&p->touched, &p->tcap, p->ntouched + 1, sizeof *p->touched, 64))
			return -1;

		p->touched[p->ntouched++] = (uint32_t)(s - p->e);
		s->touched = true;
	}
	s->d_bytes += alloc ? (int64_t)bytes : -(int64_t)bytes;
	s->d_count += alloc ? 1 : -1;
	return 0;
}

/* Adds a signed delta, clamped to 0 (a hostile trace may free what it never
 * allocated; the accounting itself never goes below 0 either). */
static uint64_t fold(uint64_t v, int64_t d)
{
	if (d >= 0)
		return v + (uint64_t)d < v ? UINT64_MAX : v + (uint64_t)d;
	return (uint64_t)-(d + 1) + 1 > v ? 0 : v - ((uint64_t)-(d + 1) + 1);
}

void tlm__psites_peak(struct tlm__psites *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ntouched; i++) {
		struct psite *s = &p->e[p->touched[i]];
		s->s_bytes = fold(s->s_bytes, s->d_bytes);
		s->s_count = fold(s->s_count, s->d_count);
		s->d_bytes = s->d_count = 0;
		s->touched = false;
	}
	p->ntouched = 0;
}

void tlm__psites_persist(struct tlm__psites *p, uint32_t stack_id, uint64_t bytes)
{
	if (!p)
		return;
	struct psite *s = get(p, stack_id);
	if (!s)
		return;
	s->persist_bytes = fold(s->persist_bytes, (int64_t)(bytes > INT64_MAX ? INT64_MAX : bytes));
	s->persist_count++;
}

size_t tlm__psites_export(const struct tlm__psites *p, int device, int kind, struct tlm_report_peak_site *out)
{
	size_t k = 0;
	for (size_t i = 0; p && i < p->n; i++) {
		const struct psite *s = &p->e[i];
		if (!s->s_bytes && !s->s_count)
			continue;
		if (out) {
			/* a survivor allocated in the peak's own nanosecond after it may
			 * be counted as persistent: never more than was there */
			out[k] = (struct tlm_report_peak_site){
				.device = device, .kind = kind, .stack_id = s->stack_id, .bytes = s->s_bytes,
				.count = s->s_count,
				.persistent_bytes = s->persist_bytes < s->s_bytes ? s->persist_bytes : s->s_bytes,
				.persistent_count = s->persist_count < s->s_count ? s->persist_count : s->s_count,
			};
		}
		k++;
	}
	return k;
}
