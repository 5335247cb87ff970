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

/* Live ranges, by address, never overlapping. live[0 .. hint_i) leave no free
 * page below hint_at: a first fit starts there (most allocations go to the
 * end, and this keeps them from walking every range). */
static uint64_t page_up(uint64_t v)
{
	return v > UINT64_MAX - WI_PAGE + 1 ? UINT64_MAX : (v + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
}

static size_t first_from(const struct wi_sim *s, uint64_t start)
{
	size_t lo = 0, hi = s->nlive;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->live[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void hint_grow(struct wi_sim *s)
{
	while (s->hint_i < s->nlive && s->live[s->hint_i].start <= s->hint_at) {
		uint64_t e = page_up(s->live[s->hint_i].end);
		if (e > s->hint_at)
			s->hint_at = e;
		s->hint_i++;
	}
}

static int va_insert(struct wi_sim *s, uint64_t start, uint64_t len)
{
	if (s->nlive == s->caplive && tlm__grow(&s->live, &s->caplive, s->nlive + 1, sizeof *s->live, 64))
		return -1;

	size_t i = first_from(s, start);
	memmove(&s->live[i + 1], &s->live[i], (s->nlive - i) * sizeof *s->live);
	s->live[i] = (struct wi_range){start, start + len};
	s->nlive++;
	if (i < s->hint_i) { /* below the hint (a recorded address): start over */
		s->hint_i = 0;
		s->hint_at = s->va_base;
	}
	hint_grow(s);
	return 0;
}

/* First fit from at, over the ranges from i on; -1 when none fits below the
 * top of the address space. */
static int fit_from(const struct wi_sim *s, size_t i, uint64_t at, uint64_t len, uint64_t *addr)
{
	for (; i < s->nlive; i++) {
		if (s->live[i].end <= at)
			continue;
		if (at + len < at)
			return -1;
		if (s->live[i].start >= at + len)
			break;
		at = page_up(s->live[i].end);
	}
	if (at + len < at || at == UINT64_MAX)
		return -1;
	*addr = at;
	return 0;
}

/* First fit at the lowest free address from the base, else from the bottom
 * of the address space (a damaged trace's lowest address can be near the
 * top: wrapping past it would hand out one address twice); -1 when the whole
 * space is taken. The scan from the bottom starts at the second page (0 is
 * handed out only as a trace's own lowest address). */
static int va_find(const struct wi_sim *s, uint64_t len, uint64_t *addr)
{
	uint64_t at = s->hint_at > s->va_base ? s->hint_at : s->va_base;
	if (!fit_from(s, s->hint_i, at, len, addr))
		return 0;
	return fit_from(s, 0, WI_PAGE, len, addr);
}

static void va_remove(struct wi_sim *s, uint64_t start)
{
	size_t i = first_from(s, start);
	if (i >= s->nlive || s->live[i].start != start)
		return;
	memmove(&s->live[i], &s->live[i + 1], (s->nlive - i - 1) * sizeof *s->live);
	s->nlive--;
	if (i < s->hint_i) {
		s->hint_i = i;
		s->hint_at = i ? page_up(s->live[i - 1].end) : s->va_base;
		if (s->hint_at < s->va_base)
			s->hint_at = s->va_base;
	}
}

static bool va_free_at(const struct wi_sim *s, uint64_t start, uint64_t len)
{
	if (start + len < start)
		return false;
	size_t i = first_from(s, start); /* the ranges from start on, and the one before */
	if (i < s->nlive && s->live[i].start < start + len)
		return false;
	return !i || s->live[i - 1].end <= start;
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
	s->hint_at = va_base;
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
	free(s->live);
	free(s->log);
	memset(s, 0, sizeof *s);
}
