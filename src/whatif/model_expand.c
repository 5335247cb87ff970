/* SPDX-License-Identifier: MIT */
/*
 * model_expand.c - expandable segments (expandable_segments:True): one
 * address range per (pool, stream), 1 1/8 of the device's memory long, mapped
 * in pages of 2 MiB (small pool) or 20 MiB (large pool) as the program needs
 * them, at the lowest address where free and unmapped space together fit the
 * request; unmapped again, page by page, only when the cache is emptied (an
 * OOM retry or empty_cache()).
 */
#include <stdlib.h>

#include "whatif/model_int.h"

static bool allocatable(const struct wi_block *b)
{
	return b && !b->allocated;
}

static bool has_room(const struct wi_block *b, uint64_t size)
{
	uint64_t bytes = 0;
	while (bytes < size && allocatable(b)) {
		bytes += b->size;
		b = b->next;
	}
	return bytes >= size;
}

/* find_expandable_block: the lowest address of an existing segment with room,
 * else a new segment. */
static struct wi_block *find_block(struct tlm_wi_model *m, uint64_t stream, struct wi_pool *p, uint64_t size)
{
	struct wi_set *u = &p->unmapped;
	for (size_t i = tlm__wi_lower(u, stream, 0, 0); i < u->n && u->v[i]->stream == stream; i++) {
		struct wi_block *c = u->v[i];
		if (allocatable(c->prev))
			c = c->prev;
		if (has_room(c, size))
			return c;
	}
	uint64_t page = p->small ? TLM_WI_SMALL_BUFFER : TLM_WI_LARGE_BUFFER;
	uint64_t space = m->device_total + m->device_total / 8;
	uint64_t npages = (space + page - 1) / page;
	if (!npages)
		npages = 1;
	uint64_t base;
	if (m->drv.va_reserve(m->drv.ctx, npages * page, page, &base))
		return NULL;
	struct wi_seg *es = calloc(1, sizeof *es);
	struct wi_block *c = tlm__wi_block_new(m, base, npages * page, stream, p);
	if (!es || !c) {
		free(es);
		free(c);
		m->nomem = true;
		m->drv.va_free(m->drv.ctx, base, npages * page);
		return NULL;
	}
	es->base = base;
	es->page = page;
	es->npages = npages;
	es->next_seg = m->segs;
	m->segs = es;
	c->mapped = false;
	c->es = es;
	c->reg = ++m->reg_counter;
	if (tlm__wi_insert(u, c))
		m->nomem = true;
	return c;
}

/* map_block: maps the pages covering [b->ptr, b->ptr + size); the mapped part
 * joins its free neighbours in the cache. */
static bool map_block(struct tlm_wi_model *m, struct wi_block *b, uint64_t size)
{
	struct wi_seg *es = b->es;
	uint64_t first = (b->ptr - es->base) / es->page;
	uint64_t end = (b->ptr + size - es->base + es->page - 1) / es->page;
	uint64_t bytes = (end - first) * es->page;
	if (end > first && m->drv.map(m->drv.ctx, es->base + first * es->page, end - first, es->page))
		return false;
	struct wi_pool *p = b->pool;
	tlm__wi_erase(&p->unmapped, b);
	b->mapped = true;
	if (bytes < b->size) {
		struct wi_block *rest = tlm__wi_block_new(m, b->ptr + bytes, b->size - bytes, b->stream, p);
		if (!rest)
			return false;
		rest->mapped = false;
		rest->es = es;
		rest->reg = b->reg;
		rest->prev = b;
		rest->next = b->next;
		if (b->next)
			b->next->prev = rest;
		b->next = rest;
		if (tlm__wi_insert(&p->unmapped, rest))
			m->nomem = true;
		b->size = bytes;
	}
	tlm__wi_try_merge(m, b, b->prev);
	tlm__wi_try_merge(m, b, b->next);
	tlm__wi_insert_free(m, b);
	tlm__wi_reserved_add(m, bytes);
	m->st.num_device_alloc++;
	return true;
}

/* try_allocate_expandable_block */
struct wi_block *tlm__wi_expand_alloc(struct tlm_wi_model *m, uint64_t stream, struct wi_pool *p, uint64_t size)
{
	struct wi_block *c = find_block(m, stream, p, size);
	if (!c)
		return NULL;
	if (!c->mapped && !map_block(m, c, c->size < size ? c->size : size))
		return NULL;
	while (c->size < size) {
		struct wi_block *n = c->next;
		uint64_t rest = size - c->size;
		if (!n || !map_block(m, n, rest < n->size ? rest : n->size))
			return NULL;
		c = n;
	}
	tlm__wi_erase(&p->blocks, c);
	return c;
}

/* unmap_block: unmaps the whole pages inside a free block. */
void tlm__wi_unmap_block(struct tlm_wi_model *m, struct wi_block *b)
{
	struct wi_seg *es = b->es;
	uint64_t first = (b->ptr - es->base + es->page - 1) / es->page;
	uint64_t end = (b->ptr + b->size - es->base) / es->page;
	if (first >= end)
		return;
	struct wi_pool *p = b->pool;
	tlm__wi_erase(&p->blocks, b);
	uint64_t ustart = es->base + first * es->page, ubytes = (end - first) * es->page;
	uint64_t before = ustart - b->ptr, after = b->size - before - ubytes;
	if (before) {
		struct wi_block *x = tlm__wi_block_new(m, b->ptr, before, b->stream, p);
		if (!x)
			return;
		x->es = es;
		x->reg = b->reg;
		x->prev = b->prev;
		x->next = b;
		if (b->prev)
			b->prev->next = x;
		b->prev = x;
		tlm__wi_insert_free(m, x);
	}
	if (after) {
		struct wi_block *x = tlm__wi_block_new(m, ustart + ubytes, after, b->stream, p);
		if (!x)
			return;
		x->es = es;
		x->reg = b->reg;
		x->prev = b;
		x->next = b->next;
		if (b->next)
			b->next->prev = x;
		b->next = x;
		tlm__wi_insert_free(m, x);
	}
	b->ptr = ustart;
	b->size = ubytes;
	b->mapped = false;
	tlm__wi_try_merge(m, b, b->prev);
	tlm__wi_try_merge(m, b, b->next);
	if (tlm__wi_insert(&p->unmapped, b))
		m->nomem = true;
	m->drv.unmap(m->drv.ctx, ustart, end - first, es->page);
	tlm__wi_reserved_sub(m, ubytes);
	m->st.num_device_free++;
}

/* release_expandable_segment: a wholly unmapped segment gives back its range. */
void tlm__wi_release_segment(struct tlm_wi_model *m, struct wi_block *b)
{
	struct wi_seg *es = b->es, **pp = &m->segs;
	tlm__wi_erase(&b->pool->unmapped, b);
	m->drv.va_free(m->drv.ctx, es->base, es->npages * es->page);
	while (*pp && *pp != es)
		pp = &(*pp)->next_seg;
	if (*pp)
		*pp = es->next_seg;
	free(es);
	free(b);
}

void tlm__wi_segs_free(struct tlm_wi_model *m)
{
	while (m->segs) {
		struct wi_seg *n = m->segs->next_seg;
		free(m->segs);
		m->segs = n;
	}
}
