/* SPDX-License-Identifier: MIT */
/*
 * sim_drv.c - the device a replay runs on: memory counted in 2 MiB pages (an
 * allocation takes whole pages, as the driver rounds), fails only when pages
 * are short, addresses first fit from the lowest address the trace used.
 * Under the recorded settings the model's segments take the recorded
 * addresses in order (while their sizes agree: the queues the replay fills
 * as the trace is read), so block addresses and best fit ties come out as
 * they did; the calls are logged for the check, which takes them off as it
 * compares them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "whatif/replay_int.h"
#include "common/grow.h"

static uint64_t pages_of(uint64_t size)
{
	return (size + WI_PAGE - 1) / WI_PAGE;
}

/* A queue in one array: room at the end is made by moving what is left to
 * the front, then by doubling. */
static int queue_push(struct wi_devev **v, size_t *head, size_t *n, size_t *cap, const struct wi_devev *e)
{
	if (*head + *n == *cap) {
		if (*head && *n <= *cap / 2) {
			memmove(*v, *v + *head, *n * sizeof **v);
			*head = 0;
		} else if (tlm__grow(v, cap, *cap + 1, sizeof **v, 256)) {
			return -1;
		}
	}
	(*v)[*head + (*n)++] = *e;
	return 0;
}

int tlm__wi_fifo_push(struct wi_fifo *q, const struct wi_devev *e)
{
	return queue_push(&q->v, &q->head, &q->n, &q->cap, e);
}

void tlm__wi_fifo_pop(struct wi_fifo *q)
{
	if (q->n) {
		q->head++;
		q->n--;
	}
	if (!q->n)
		q->head = 0;
}

void tlm__wi_fifo_free(struct wi_fifo *q)
{
	free(q->v);
	memset(q, 0, sizeof *q);
}

static void log_ev(struct wi_sim *s, uint8_t what, uint64_t addr, uint64_t size)
{
	if (!s->keep_log)
		return;
	struct wi_devev e = {s->at, addr, size, what};
	if (queue_push(&s->log, &s->loghead, &s->nlog, &s->caplog, &e))
		s->nomem = true;
}

void tlm__wi_sim_log_pop(struct wi_sim *s)
{
	if (s->nlog) {
		s->loghead++;
		s->nlog--;
	}
	if (!s->nlog)
		s->loghead = 0;
}

/* ---- the live ranges (struct wi_vnode, replay_int.h) ----------------------- */

static uint64_t page_up(uint64_t v)
{
	return v > UINT64_MAX - WI_PAGE + 1 ? UINT64_MAX : (v + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
}

/* The free room between a range ending at end and the next starting at
 * start, as a first fit counts it (from end rounded up to a page). */
static uint64_t gap_between(uint64_t end, uint64_t start)
{
	uint64_t from = page_up(end);
	return start > from ? start - from : 0;
}

static void pull(struct wi_sim *s, uint32_t x)
{
	struct wi_vnode *n = &s->vn[x];
	n->lo = n->start;
	n->maxend = n->end;
	n->gap = 0;
	if (n->l) {
		const struct wi_vnode *l = &s->vn[n->l];
		n->lo = l->lo;
		n->gap = l->gap;
		uint64_t g = gap_between(l->maxend, n->start);
		if (g > n->gap)
			n->gap = g;
	}
	if (n->r) {
		const struct wi_vnode *r = &s->vn[n->r];
		n->maxend = r->maxend;
		if (r->gap > n->gap)
			n->gap = r->gap;
		uint64_t g = gap_between(n->end, r->lo);
		if (g > n->gap)
			n->gap = g;
	}
}

/* t split into the ranges starting below key (*a) and the rest (*b). */
static void split(struct wi_sim *s, uint32_t t, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (!t) {
		*a = *b = 0;
		return;
	}
	if (s->vn[t].start < key) {
		split(s, s->vn[t].r, key, &s->vn[t].r, b);
		*a = t;
	} else {
		split(s, s->vn[t].l, key, a, &s->vn[t].l);
		*b = t;
	}
	pull(s, t);
}

/* a and b joined, every range of a below every range of b. */
static uint32_t merge(struct wi_sim *s, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (s->vn[a].prio > s->vn[b].prio) {
		s->vn[a].r = merge(s, s->vn[a].r, b);
		pull(s, a);
		return a;
	}
	s->vn[b].l = merge(s, a, s->vn[b].l);
	pull(s, b);
	return b;
}

static int va_insert(struct wi_sim *s, uint64_t start, uint64_t len)
{
	uint32_t x = s->freelist;
	if (x) {
		s->freelist = s->vn[x].l;
	} else {
		if (s->nused + 2 > s->capvn && tlm__grow(&s->vn, &s->capvn, (size_t)s->nused + 2, sizeof *s->vn, 64))
			return -1;
		x = ++s->nused;
	}
	s->rng ^= s->rng << 13; /* xorshift32: the treap's priorities */
	s->rng ^= s->rng >> 17;
	s->rng ^= s->rng << 5;
	s->vn[x] = (struct wi_vnode){.start = start, .end = start + len, .prio = s->rng};
	pull(s, x);
	uint32_t a, b;
	split(s, s->root, start, &a, &b);
	s->root = merge(s, merge(s, a, x), b);
	s->nlive++;
	return 0;
}

static void va_remove(struct wi_sim *s, uint64_t start)
{
	uint32_t a, b, m, c;
	split(s, s->root, start, &a, &b);
	split(s, b, start + 1, &m, &c); /* m: the range starting at start, if any */
	if (m) {
		s->vn[m].l = s->freelist;
		s->freelist = m;
		s->nlive--;
	}
	s->root = merge(s, a, c);
}

/* First fit in subtree x from *at, as a scan of its ranges in address
 * order would: a range ending at or below *at is passed over, one that
 * leaves no room below it moves *at past its end (rounded up to a page).
 * 1: [*at, *at + len) is free; 0: not in this subtree (*at moved past
 * it); -1: the top of the address space was reached. */
static int fit_in(struct wi_sim *s, uint32_t x, uint64_t *at, uint64_t len)
{
	if (!x)
		return 0;
	const struct wi_vnode *n = &s->vn[x];
	s->visits++;
	if (n->maxend <= *at)
		return 0;
	if (*at + len < *at)
		return -1;
	if (*at + len <= n->lo)
		return 1;
	/* no room between its ranges: past its last one. Only from a page
	 * boundary: an address inside the page after a range's unaligned end
	 * (a damaged trace's) may have room that the gap, counted from the page
	 * boundary, does not show */
	if (n->gap < len && !(*at % WI_PAGE)) {
		*at = page_up(n->maxend);
		return 0;
	}
	int r = fit_in(s, n->l, at, len);
	if (r)
		return r;
	if (n->end > *at) {
		if (*at + len < *at)
			return -1;
		if (n->start >= *at + len)
			return 1;
		*at = page_up(n->end);
	}
	return fit_in(s, n->r, at, len);
}

static int fit_from(struct wi_sim *s, uint64_t at, uint64_t len, uint64_t *addr)
{
	int r = fit_in(s, s->root, &at, len);
	if (r < 0 || at + len < at || at == UINT64_MAX)
		return -1;
	*addr = at;
	return 0;
}

/* First fit at the lowest free address from the base, else from the bottom
 * of the address space (a damaged trace's lowest address can be near the
 * top: wrapping past it would hand out one address twice); -1 when the whole
 * space is taken. The scan from the bottom starts at the second page (0 is
 * handed out only as a trace's own lowest address). */
static int va_find(struct wi_sim *s, uint64_t len, uint64_t *addr)
{
	if (!fit_from(s, s->va_base, len, addr))
		return 0;
	return fit_from(s, WI_PAGE, len, addr);
}

/* Whether [start, start + len) is free: the last range starting below its
 * end must end at or below its start. */
static bool va_free_at(const struct wi_sim *s, uint64_t start, uint64_t len)
{
	if (start + len < start)
		return false;
	uint32_t x = s->root, pred = 0;
	while (x) {
		if (s->vn[x].start < start + len) {
			pred = x;
			x = s->vn[x].r;
		} else {
			x = s->vn[x].l;
		}
	}
	return !pred || s->vn[pred].end <= start;
}

/* The recorded address of the next segment (what = SEG_ALLOC or RESERVE) when
 * its size agrees; else a first fit. -1: no room. */
static int place(struct wi_sim *s, uint8_t what, uint64_t size, uint64_t *addr)
{
	struct wi_fifo *q = what == WI_SEG_ALLOC ? s->oracle_seg : s->oracle_res;
	if (q && q->n) {
		struct wi_devev o = q->v[q->head];
		tlm__wi_fifo_pop(q);
		/* a reserved range's size follows the device's size, which the trace
		 * may not tell: the k-th range keeps its place whatever its size */
		/* never over a live range (a damaged trace may say so) */
		if ((o.size == size || what == WI_RESERVE) && va_free_at(s, o.addr, pages_of(size) * WI_PAGE)) {
			*addr = o.addr;
			return 0;
		}
	}
	return va_find(s, pages_of(size) * WI_PAGE, addr);
}

static int seg_alloc(void *ctx, uint64_t size, uint64_t *addr)
{
	struct wi_sim *s = ctx;
	if (s->cap_pages && s->used_pages + pages_of(size) > s->cap_pages) {
		log_ev(s, WI_SEG_FAIL, 0, size);
		return -1;
	}
	if (place(s, WI_SEG_ALLOC, size, addr)) {
		log_ev(s, WI_SEG_FAIL, 0, size);
		return -1;
	}
	if (va_insert(s, *addr, pages_of(size) * WI_PAGE))
		s->nomem = true;
	s->used_pages += pages_of(size);
	log_ev(s, WI_SEG_ALLOC, *addr, size);
	return 0;
}

static void seg_free(void *ctx, uint64_t addr, uint64_t size)
{
	struct wi_sim *s = ctx;
	log_ev(s, WI_SEG_FREE, addr, size);
	va_remove(s, addr);
	s->used_pages -= pages_of(size);
}

static int va_reserve(void *ctx, uint64_t size, uint64_t align, uint64_t *addr)
{
	struct wi_sim *s = ctx;
	(void)align;
	if (place(s, WI_RESERVE, size, addr))
		return -1;
	if (va_insert(s, *addr, pages_of(size) * WI_PAGE))
		s->nomem = true;
	log_ev(s, WI_RESERVE, *addr, size);
	return 0;
}

static void va_free(void *ctx, uint64_t addr, uint64_t size)
{
	struct wi_sim *s = ctx;
	log_ev(s, WI_RESERVE_FREE, addr, size);
	va_remove(s, addr);
}

/* cuMemCreate for each page (all or none), then cuMemMap for each. */
static int map(void *ctx, uint64_t addr, uint64_t npages, uint64_t page)
{
	struct wi_sim *s = ctx;
	uint64_t pp = pages_of(page);
	for (uint64_t i = 0; i < npages; i++)
		if (s->cap_pages && s->used_pages + (i + 1) * pp > s->cap_pages) {
			log_ev(s, WI_CREATE_FAIL, 0, page);
			return -1;
		}
	s->used_pages += npages * pp;
	for (uint64_t i = 0; i < npages; i++)
		log_ev(s, WI_MAP, addr + i * page, page);
	return 0;
}

static void unmap(void *ctx, uint64_t addr, uint64_t npages, uint64_t page)
{
	struct wi_sim *s = ctx;
	for (uint64_t i = 0; i < npages; i++)
		log_ev(s, WI_UNMAP, addr + i * page, page);
	s->used_pages -= npages * pages_of(page);
}

void tlm__wi_sim_init(struct wi_sim *s, uint64_t memory, uint64_t va_base)
{
	memset(s, 0, sizeof *s);
	s->cap_pages = memory / WI_PAGE;
	s->va_base = va_base;
	/* the treap's priorities from a seed a trace cannot know: one written to
	 * insert its ranges in the order of known priorities would make the tree
	 * a list, and its recursion as deep as the ranges are many. No result
	 * depends on the tree's shape */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t seed = ((uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull) ^ (uint64_t)(uintptr_t)s ^ (uint64_t)ts.tv_sec;
	s->rng = (uint32_t)(seed ^ seed >> 32) | 1u;
}

void tlm__wi_sim_memory(struct wi_sim *s, uint64_t memory)
{
	s->cap_pages = memory / WI_PAGE;
}

void tlm__wi_sim_drv(struct wi_sim *s, struct tlm_wi_drv *d)
{
	*d = (struct tlm_wi_drv){s, seg_alloc, seg_free, va_reserve, va_free, map, unmap};
}

int tlm__wi_sim_take(struct wi_sim *s, uint64_t size, uint64_t *addr)
{
	if (size > TLM_WI_MAX_REQUEST || (s->cap_pages && s->used_pages + pages_of(size) > s->cap_pages))
		return -1;
	if (va_find(s, pages_of(size) * WI_PAGE, addr))
		return -1;
	if (va_insert(s, *addr, pages_of(size) * WI_PAGE))
		s->nomem = true;
	s->used_pages += pages_of(size);
	return 0;
}

void tlm__wi_sim_give(struct wi_sim *s, uint64_t addr, uint64_t size)
{
	va_remove(s, addr);
	s->used_pages -= pages_of(size);
}

uint64_t tlm__wi_sim_free_bytes(const struct wi_sim *s)
{
	return s->cap_pages ? (s->cap_pages - s->used_pages) * WI_PAGE : UINT64_MAX;
}

void tlm__wi_sim_fini(struct wi_sim *s)
{
	free(s->vn);
	free(s->log);
	memset(s, 0, sizeof *s);
}
