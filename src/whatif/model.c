/* SPDX-License-Identifier: MIT */
/*
 * model.c - the caching allocator's pools, blocks and its malloc and free
 * paths (model.h). Each function is named after the allocator's step it
 * models; the rules are those of c10/cuda/CUDACachingAllocator.cpp.
 */
#include <stdlib.h>
#include <string.h>

#include "whatif/model_int.h"

#define MAXU UINT64_MAX

/* ---- sizes ---------------------------------------------------------------- */

static uint64_t pow2_floor(uint64_t v)
{
	return 1ull << (63 - __builtin_clzll(v));
}

/* The divisions in force for a size: one entry per power of two from 1 MiB. */
static uint32_t divisions(const struct tlm_wi_settings *s, uint64_t size)
{
	int idx = (63 - __builtin_clzll(size)) - 20;
	idx = idx < 0 ? 0 : idx >= TLM_WI_DIVS ? TLM_WI_DIVS - 1 : idx;
	return s->div[idx];
}

static uint64_t next_division(uint64_t size, uint64_t divs)
{
	if (!(size & (size - 1)))
		return size;
	uint64_t floor = pow2_floor(size);
	uint64_t step = floor >> (63 - __builtin_clzll(divs));
	if (!step)
		return floor << 1;
	uint64_t r = size & ~(step - 1);
	return r == size ? size : r + step;
}

uint64_t tlm_wi_round_size(const struct tlm_wi_settings *s, uint64_t size)
{
	if (size < TLM_WI_MIN_BLOCK)
		return TLM_WI_MIN_BLOCK;
	uint32_t d = divisions(s, size);
	if (d > 1 && size > TLM_WI_MIN_BLOCK * d)
		return next_division(size, d);
	return (size + TLM_WI_MIN_BLOCK - 1) / TLM_WI_MIN_BLOCK * TLM_WI_MIN_BLOCK;
}

uint64_t tlm_wi_allocation_size(uint64_t size)
{
	if (size <= TLM_WI_SMALL_SIZE)
		return TLM_WI_SMALL_BUFFER;
	if (size < TLM_WI_MIN_LARGE_ALLOC)
		return TLM_WI_LARGE_BUFFER;
	return (size + TLM_WI_ROUND_LARGE - 1) / TLM_WI_ROUND_LARGE * TLM_WI_ROUND_LARGE;
}

/* ---- blocks and statistics -------------------------------------------------- */

struct wi_block *tlm__wi_block_new(struct tlm_wi_model *m, uint64_t ptr, uint64_t size, uint64_t stream,
				   struct wi_pool *pool)
{
	struct wi_block *b = calloc(1, sizeof *b);
	if (!b) {
		m->nomem = true;
		return NULL;
	}
	b->ptr = ptr;
	b->size = size;
	b->stream = stream;
	b->pool = pool;
	b->mapped = true;
	return b;
}

static bool is_split(const struct wi_block *b)
{
	return b->prev || b->next;
}

void tlm__wi_insert_free(struct tlm_wi_model *m, struct wi_block *b)
{
	b->gc_base = b->pool->get_free_calls;
	if (tlm__wi_insert(&b->pool->blocks, b))
		m->nomem = true;
}

void tlm__wi_reserved_add(struct tlm_wi_model *m, uint64_t bytes)
{
	m->st.reserved += bytes;
	if (m->st.reserved > m->st.peak_reserved) {
		m->st.peak_reserved = m->st.reserved;
		m->peak_pending = true;
	}
}

void tlm__wi_reserved_sub(struct tlm_wi_model *m, uint64_t bytes)
{
	m->st.reserved -= bytes;
}

static uint64_t largest_free(const struct tlm_wi_model *m)
{
	uint64_t best = 0;
	const struct wi_pool *p[2] = {&m->small, &m->large};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < p[k]->blocks.n; i++)
			if (p[k]->blocks.v[i]->size > best)
				best = p[k]->blocks.v[i]->size;
	return best;
}

void tlm_wi_model_free_space(const struct tlm_wi_model *m, uint64_t *free_bytes, uint64_t *largest)
{
	*free_bytes = m->st.reserved - m->st.allocated;
	*largest = largest_free(m);
}

/* Merges src into dst when src is free and mapped alike; returns the bytes
 * taken over. dst is in no set. */
size_t tlm__wi_try_merge(struct tlm_wi_model *m, struct wi_block *dst, struct wi_block *src)
{
	(void)m;
	if (!src || src->allocated || dst->mapped != src->mapped)
		return 0;
	tlm__wi_erase(src->mapped ? &src->pool->blocks : &src->pool->unmapped, src);
	if (dst->prev == src) {
		dst->ptr = src->ptr;
		dst->prev = src->prev;
		if (dst->prev)
			dst->prev->next = dst;
	} else {
		dst->next = src->next;
		if (dst->next)
			dst->next->prev = dst;
	}
	size_t n = src->size;
	dst->size += n;
	free(src);
	return n;
}

/* ---- releasing cached memory -------------------------------------------------- */

static void release_block(struct tlm_wi_model *m, struct wi_block *b)
{
	tlm__wi_erase(&b->pool->blocks, b);
	m->drv.seg_free(m->drv.ctx, b->ptr, b->size);
	tlm__wi_reserved_sub(m, b->size);
	m->st.num_device_free++;
	m->st.segments--;
	free(b);
}

/* release_blocks: every unsplit cached block; expandable ones are unmapped
 * page by page and their segment released once wholly unmapped. */
static void release_blocks(struct tlm_wi_model *m, struct wi_pool *p)
{
	size_t nun = 0;
	struct wi_block **un = p->blocks.n ? malloc(p->blocks.n * sizeof *un) : NULL;
	if (p->blocks.n && !un) {
		m->nomem = true;
		return;
	}
	for (size_t i = 0; i < p->blocks.n;) {
		struct wi_block *b = p->blocks.v[i];
		if (b->es) {
			un[nun++] = b;
			i++;
		} else if (!is_split(b)) {
			release_block(m, b); /* shifts the rest down */
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < nun; i++) {
		tlm__wi_unmap_block(m, un[i]);
		if (!un[i]->mapped && !is_split(un[i]))
			tlm__wi_release_segment(m, un[i]);
	}
	free(un);
}

static bool release_cached_blocks(struct tlm_wi_model *m)
{
	release_blocks(m, &m->large);
	release_blocks(m, &m->small);
	return true;
}

/* Frees oversize cached blocks (>= max_split_size): the smallest one large
 * enough, else the largest ones until their sizes add up to the request. */
static bool release_available_cached_blocks(struct tlm_wi_model *m, struct wi_pool *p, uint64_t size,
					    uint64_t stream)
{
	uint64_t ms = m->s.max_split;
	if (ms == MAXU || m->s.expandable)
		return false; /* expandable blocks cannot go through release_block */
	uint64_t key = size < ms ? ms : size;
	size_t i = tlm__wi_lower(&p->blocks, stream, key, 0);
	if (i < p->blocks.n && p->blocks.v[i]->stream == stream) {
		release_block(m, p->blocks.v[i]);
		return true;
	}
	if (i == 0)
		return false;
	uint64_t total = 0;
	for (i--;;) {
		struct wi_block *b = p->blocks.v[i];
		if (total >= key || b->size < ms || b->stream != stream)
			break;
		total += b->size;
		release_block(m, b);
		if (i == 0)
			break;
		i--;
	}
	return total >= key;
}

/* garbage_collection_threshold: above threshold * allowed maximum, free the
 * unsplit large cached blocks that waited longest (age >= the mean age). */
static void garbage_collect(struct tlm_wi_model *m)
{
	uint64_t thr = (uint64_t)(m->s.gc_threshold * (double)m->allowed_max);
	if (m->st.reserved <= thr)
		return;
	uint64_t target = m->st.reserved - thr, got = 0, total_age = 0;
	int64_t count = 0;
	struct wi_pool *p = &m->large;
	for (size_t i = 0; i < p->blocks.n; i++)
		if (!is_split(p->blocks.v[i]) && !p->blocks.v[i]->es) {
			total_age += (uint64_t)(p->get_free_calls - p->blocks.v[i]->gc_base);
			count++;
		}
	bool freed = true;
	while (count > 0 && got < target && freed) {
		double age_thr = (double)total_age / (double)count;
		freed = false;
		for (size_t i = 0; i < p->blocks.n;) {
			struct wi_block *b = p->blocks.v[i];
			uint64_t age = (uint64_t)(p->get_free_calls - b->gc_base);
			if (!is_split(b) && !b->es && (double)age >= age_thr) {
				freed = true;
				got += b->size;
				total_age -= age;
				count--;
				release_block(m, b);
			} else {
				i++;
			}
		}
	}
}

/* ---- malloc ----------------------------------------------------------------- */

static bool gc_on(const struct tlm_wi_model *m)
{
	return m->set_fraction && m->s.gc_threshold > 0;
}

/* The block get_free_block takes, without taking it: its index in the set,
 * SIZE_MAX none. */
static size_t find_free_block(const struct tlm_wi_model *m, const struct wi_pool *p, uint64_t size,
			      uint64_t stream)
{
	const struct wi_set *s = &p->blocks;
	size_t i = tlm__wi_lower(s, stream, size, 0);
	if (i >= s->n || s->v[i]->stream != stream)
		return SIZE_MAX;
	if (s->v[i]->es) {
		if (m->s.expandable) {
			/* best fit counts what a block at a segment's end can grow to */
#define EXP_SIZE(b) ((b)->size + ((b)->next && !(b)->next->mapped ? (b)->next->size : 0))
			while (s->v[i]->es && i + 1 < s->n && s->v[i + 1]->stream == stream &&
			       EXP_SIZE(s->v[i + 1]) < EXP_SIZE(s->v[i]))
				i++;
#undef EXP_SIZE
		} else {
			do
				i++;
			while (i < s->n && s->v[i]->es && s->v[i]->stream == stream);
			if (i >= s->n || s->v[i]->stream != stream)
				return SIZE_MAX;
		}
	}
	const struct wi_block *b = s->v[i];
	if (size < m->s.max_split && b->size >= m->s.max_split)
		return SIZE_MAX; /* no oversize block for a request below max_split_size */
	if (size >= m->s.max_split && b->size >= size + m->s.max_nonsplit_round)
		return SIZE_MAX; /* an oversize block only within the rounding tolerance */
	return i;
}

static struct wi_block *get_free_block(struct tlm_wi_model *m, struct wi_pool *p, uint64_t size, uint64_t stream)
{
	if (gc_on(m))
		p->get_free_calls++;
	size_t i = find_free_block(m, p, size, stream);
	if (i == SIZE_MAX)
		return NULL;
	struct wi_block *b = p->blocks.v[i];
	tlm__wi_erase(&p->blocks, b);
	return b;
}

uint64_t tlm_wi_model_peek(const struct tlm_wi_model *m, uint64_t size, uint64_t stream)
{
	const struct wi_pool *p = size <= TLM_WI_SMALL_SIZE ? &m->small : &m->large;
	size_t i = find_free_block(m, p, size, stream);
	return i == SIZE_MAX ? 0 : p->blocks.v[i]->ptr;
}

static bool any_divisions(const struct tlm_wi_settings *s)
{
	for (size_t j = 0; j < TLM_WI_DIVS; j++)
		if (s->div[j] > 1)
			return true;
	return false;
}

/* The lowest request for which the allocator, in the state before this
 * malloc, hands out the block of size got whole (docs/whatif.md, Limits):
 * pred is the largest cached block of the pool below size (a request at or
 * below it would have been given that one), fresh whether got is a new
 * segment. */
static uint64_t request_low(const struct tlm_wi_model *m, uint64_t got, uint64_t pred, bool fresh)
{
	uint64_t ms = m->s.max_split, low;
	if (!fresh && got >= ms) /* a cached oversize block: the request was >= max_split_size */
		low = got > ms + m->s.max_nonsplit_round ? got - m->s.max_nonsplit_round + TLM_WI_MIN_BLOCK : ms;
	else /* the rest was no more than 1 MiB: not split */
		low = got - TLM_WI_SMALL_SIZE;
	if (low < TLM_WI_SMALL_SIZE + TLM_WI_MIN_BLOCK)
		low = TLM_WI_SMALL_SIZE + TLM_WI_MIN_BLOCK;
	if (fresh && got >= TLM_WI_MIN_LARGE_ALLOC && low < TLM_WI_MIN_LARGE_ALLOC)
		low = TLM_WI_MIN_LARGE_ALLOC; /* below 10 MiB the segment would be 20 MiB, and split */
	if (pred && (pred < ms || low >= ms) && pred + TLM_WI_MIN_BLOCK > low)
		low = pred + TLM_WI_MIN_BLOCK;
	return low > got ? got : low;
}

static struct wi_block *alloc_block(struct tlm_wi_model *m, struct wi_pool *p, uint64_t size, uint64_t alloc_size,
				    uint64_t stream, bool retry)
{
	if (retry)
		m->st.num_alloc_retries++;
	if (m->set_fraction && m->st.reserved + alloc_size > m->allowed_max)
		return NULL;
	if (m->s.expandable)
		return tlm__wi_expand_alloc(m, stream, p, size);
	uint64_t ptr;
	if (m->drv.seg_alloc(m->drv.ctx, alloc_size, &ptr))
		return NULL;
	struct wi_block *b = tlm__wi_block_new(m, ptr, alloc_size, stream, p);
	if (!b) {
		m->drv.seg_free(m->drv.ctx, ptr, alloc_size);
		return NULL;
	}
	b->reg = ++m->reg_counter;
	tlm__wi_reserved_add(m, alloc_size);
	m->st.num_device_alloc++;
	m->st.segments++;
	return b;
}

static bool should_split(const struct tlm_wi_model *m, const struct wi_block *b, uint64_t size)
{
	uint64_t rest = b->size - size;
	if (b->pool->small || m->s.expandable)
		return rest >= TLM_WI_MIN_BLOCK;
	return size < m->s.max_split && rest > TLM_WI_SMALL_SIZE;
}

int tlm_wi_model_malloc(struct tlm_wi_model *m, uint64_t orig, uint64_t stream, uint64_t *addr, uint64_t *bsize)
{
	if (orig > TLM_WI_MAX_REQUEST) { /* no device has it; the rounding below must not wrap */
		*bsize = orig;
		m->st.num_ooms++;
		return -1;
	}
	uint64_t size = m->sizes_rounded && orig >= TLM_WI_MIN_BLOCK ? orig : tlm_wi_round_size(&m->s, orig);
	struct wi_pool *p = size <= TLM_WI_SMALL_SIZE ? &m->small : &m->large;
	uint64_t alloc_size = tlm_wi_allocation_size(size);
	*bsize = size;
	/* the largest cached block below the request, for request_low() */
	size_t at = tlm__wi_lower(&p->blocks, stream, size, 0);
	uint64_t pred = at && p->blocks.v[at - 1]->stream == stream ? p->blocks.v[at - 1]->size : 0;
	struct wi_block *b = get_free_block(m, p, size, stream);
	bool fresh = !b;
	if (!b) {
		if (gc_on(m))
			garbage_collect(m);
		b = alloc_block(m, p, size, alloc_size, stream, false);
		if (!b && release_available_cached_blocks(m, p, size, stream))
			b = alloc_block(m, p, size, alloc_size, stream, false);
		if (!b && release_cached_blocks(m))
			b = alloc_block(m, p, size, alloc_size, stream, true);
	}
	if (!b) {
		m->st.num_ooms++;
		m->peak_pending = false;
		return m->nomem ? -2 : -1;
	}
	bool split = should_split(m, b, size);
	m->last_low = split || p->small || m->s.expandable || !m->sizes_rounded || any_divisions(&m->s)
			      ? size : request_low(m, b->size, pred, fresh);
	if (split) {
		struct wi_block *rest = b;
		b = tlm__wi_block_new(m, rest->ptr, size, stream, p);
		if (!b)
			return -2;
		b->es = rest->es;
		b->reg = rest->reg;
		b->prev = rest->prev;
		if (b->prev)
			b->prev->next = b;
		b->next = rest;
		rest->prev = b;
		rest->ptr += size;
		rest->size -= size;
		tlm__wi_insert_free(m, rest);
	}
	b->allocated = true;
	if (tlm__wi_table_put(&m->active, b->ptr, (uint64_t)(uintptr_t)b))
		return -2;
	m->st.allocated += b->size;
	if (m->st.allocated > m->st.peak_allocated)
		m->st.peak_allocated = m->st.allocated;
	if (m->peak_pending) {
		m->peak_pending = false;
		m->st.allocated_at_peak = m->st.allocated;
		m->st.largest_free_at_peak = largest_free(m);
	}
	*addr = b->ptr;
	*bsize = b->size;
	return m->nomem ? -2 : 0;
}

/* ---- free ------------------------------------------------------------------- */

uint64_t tlm_wi_model_release(struct tlm_wi_model *m, uint64_t addr)
{
	struct wi_block *b = (struct wi_block *)(uintptr_t)tlm__wi_table_take(&m->active, addr);
	if (!b)
		return 0;
	uint64_t size = b->size;
	b->allocated = false;
	m->st.allocated -= size;
	tlm__wi_try_merge(m, b, b->prev);
	tlm__wi_try_merge(m, b, b->next);
	tlm__wi_insert_free(m, b);
	return size;
}

uint64_t tlm_wi_model_last_low(const struct tlm_wi_model *m)
{
	return m->last_low;
}

void tlm_wi_model_sizes_rounded(struct tlm_wi_model *m, bool yes)
{
	m->sizes_rounded = yes;
}

void tlm_wi_model_empty_cache(struct tlm_wi_model *m)
{
	release_cached_blocks(m);
}

/* ---- life ------------------------------------------------------------------- */

struct tlm_wi_model *tlm_wi_model_new(const struct tlm_wi_settings *s, const struct tlm_wi_drv *drv,
				      uint64_t device_total)
{
	struct tlm_wi_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->s = *s;
	m->drv = *drv;
	/* no device has more; a damaged trace's size must not wrap an
	 * expandable range's length (1 1/8 of it) */
	m->device_total = device_total < TLM_WI_MAX_REQUEST ? device_total : TLM_WI_MAX_REQUEST;
	/* newer PyTorch keeps no maximum (and collects no garbage) at 1.0 */
	m->set_fraction = s->fraction > 0 && s->fraction < 1;
	m->allowed_max = (uint64_t)(s->fraction * (double)m->device_total);
	m->small.small = true;
	m->small.blocks.by_size = m->large.blocks.by_size = true;
	m->small.blocks.by_reg = m->large.blocks.by_reg = s->ties_by_segment;
	return m;
}

void tlm_wi_model_free(struct tlm_wi_model *m)
{
	if (!m)
		return;
	/* every block is in exactly one place: a free set, an unmapped set, or
	 * the table of allocated blocks */
	struct wi_set *sets[4] = {&m->small.blocks, &m->large.blocks, &m->small.unmapped, &m->large.unmapped};
	for (int k = 0; k < 4; k++) {
		for (size_t i = 0; i < sets[k]->n; i++)
			free(sets[k]->v[i]);
		tlm__wi_set_free(sets[k]);
	}
	for (size_t i = 0; i < m->active.cap; i++)
		if (m->active.val[i])
			free((struct wi_block *)(uintptr_t)m->active.val[i]);
	tlm__wi_table_free(&m->active);
	tlm__wi_segs_free(m);
	free(m);
}

void tlm_wi_model_stats(const struct tlm_wi_model *m, struct tlm_wi_stats *st)
{
	*st = m->st;
}
