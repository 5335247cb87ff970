/* SPDX-License-Identifier: MIT */
/*
 * series.c - each (device, kind)'s memory over time, in bounded memory: the
 * run is cut into at most TLM__SERIES_BUCKETS buckets whose width doubles
 * (neighbours merged) whenever a change falls past the last bucket, so the
 * width ends between duration/1000 and duration/500 whatever the length of
 * the run. See internal.h for what a bucket keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"

static void merge_into(struct tlm__bucket *dst, const struct tlm__bucket *a, const struct tlm__bucket *b)
{
	if (!a->n) {
		*dst = *b;
		return;
	}
	if (!b->n) {
		*dst = *a;
		return;
	}
	struct tlm__bucket m = *a;
	m.t_last = b->t_last;
	m.max_res = a->max_res > b->max_res ? a->max_res : b->max_res;
	m.max_alloc = a->max_alloc > b->max_alloc ? a->max_alloc : b->max_alloc;
	m.last_res = b->last_res;
	m.last_alloc = b->last_alloc;
	m.n = a->n + b->n;
	*dst = m;
}

/* Doubles the width: bucket i becomes the merge of 2i and 2i+1. */
static void coarsen(struct tlm__series *s)
{
	static const struct tlm__bucket empty;
	size_t nb = 0;
	for (size_t i = 0; i < s->nb; i += 2) {
		struct tlm__bucket m;
		merge_into(&m, &s->b[i], i + 1 < s->nb ? &s->b[i + 1] : &empty);
		s->b[i / 2] = m;
		nb = i / 2 + 1;
	}
	if (s->nb > nb)
		memset(s->b + nb, 0, (s->nb - nb) * sizeof *s->b);
	s->nb = nb;
	s->width = s->width > UINT64_MAX / 2 ? UINT64_MAX : s->width * 2;
}

void tlm__series_add(struct tlm__series *s, uint64_t t, uint64_t reserved, uint64_t allocated)
{
	if (!s->started) {
		s->started = true;
		s->origin = t;
		s->width = 1;
	}
	/* a clock that went back (damaged trace): into the first bucket */
	uint64_t off = t > s->origin ? t - s->origin : 0;
	while (off / s->width >= TLM__SERIES_BUCKETS)
		coarsen(s);
	size_t i = (size_t)(off / s->width);
	if (i >= s->cap) {
		size_t cap = s->cap ? s->cap : 16;
		while (cap <= i)
			cap *= 2;
		if (cap > TLM__SERIES_BUCKETS)
			cap = TLM__SERIES_BUCKETS;
		struct tlm__bucket *b = realloc(s->b, cap * sizeof *b);
		if (!b)
			return; /* this change is missing from the picture, nothing else */
		memset(b + s->cap, 0, (cap - s->cap) * sizeof *b);
		s->b = b;
		s->cap = cap;
	}
	struct tlm__bucket *b = &s->b[i];
	if (!b->n) {
		b->t_first = t;
		b->max_res = reserved;
		b->max_alloc = allocated;
	}
	b->t_last = t;
	if (reserved > b->max_res)
		b->max_res = reserved;
	if (allocated > b->max_alloc)
		b->max_alloc = allocated;
	b->last_res = reserved;
	b->last_alloc = allocated;
	b->n++;
	if (i + 1 > s->nb)
		s->nb = i + 1;
}

void tlm__series_free(struct tlm__series *s)
{
	if (!s)
		return;
	free(s->b);
	free(s);
}

int tlm__series_points(const struct tlm__series *s, uint64_t start, struct tlm_report_point **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!s->nb)
		return 0;
	size_t cap = 0;
	for (size_t i = 0; i < s->nb; i++)
		cap += s->b[i].n > 1 ? 2 : s->b[i].n;
	struct tlm_report_point *p = malloc(cap * sizeof *p);
	if (!p)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < s->nb; i++) {
		const struct tlm__bucket *b = &s->b[i];
		if (!b->n)
			continue;
		/* the highest values at the first change, the last ones at the
		 * last: a bucket with one change is exact */
		if (b->n > 1 && (b->max_res != b->last_res || b->max_alloc != b->last_alloc))
			p[k++] = (struct tlm_report_point){(int64_t)(b->t_first - start), b->max_res, b->max_alloc};
		p[k++] = (struct tlm_report_point){(int64_t)(b->t_last - start), b->last_res, b->last_alloc};
	}
	*out = p;
	*n = k;
	return 0;
}
