/* SPDX-License-Identifier: MIT */
/*
 * sim_drv.c - the device a replay runs on: memory counted in 2 MiB pages (an
 * allocation takes whole pages, as the driver rounds), fails only when pages
 * are short, addresses first fit from the lowest address the trace used.
 * Under the recorded settings the model's segments take the recorded
 * addresses in order (while their sizes agree), so block addresses and best
 * fit ties come out as they did; the calls are logged for the check.
 */
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"

static uint64_t pages_of(uint64_t size)
{
	return (size + WI_PAGE - 1) / WI_PAGE;
}

int tlm__wi_push_ev(struct wi_devev **v, size_t *n, size_t *cap, const struct wi_devev *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct wi_devev *p = realloc(*v, c * sizeof *p);
		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *e;
	return 0;
}

static void log_ev(struct wi_sim *s, uint8_t what, uint64_t addr, uint64_t size)
{
	if (!s->keep_log)
		return;
	struct wi_devev e = {s->at, addr, size, what};
	if (tlm__wi_push_ev(&s->log, &s->nlog, &s->caplog, &e))
		s->nomem = true;
}

static int va_insert(struct wi_sim *s, uint64_t start, uint64_t len)
{
	if (s->nlive == s->caplive) {
		size_t c = s->caplive ? s->caplive * 2 : 64;
		struct wi_range *p = realloc(s->live, c * sizeof *p);
		if (!p)
			return -1;
		s->live = p;
		s->caplive = c;
	}
	size_t i = 0;
	while (i < s->nlive && s->live[i].start < start)
		i++;
	memmove(&s->live[i + 1], &s->live[i], (s->nlive - i) * sizeof *s->live);
	s->live[i] = (struct wi_range){start, start + len};
	s->nlive++;
	return 0;
}

/* First fit at the lowest free address from the base. */
static uint64_t va_find(const struct wi_sim *s, uint64_t len)
{
	uint64_t at = s->va_base;
	for (size_t i = 0; i < s->nlive; i++) {
		if (s->live[i].end <= at)
			continue;
		if (s->live[i].start >= at + len)
			break;
		at = (s->live[i].end + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
	}
	return at;
}

static void va_remove(struct wi_sim *s, uint64_t start)
{
	for (size_t i = 0; i < s->nlive; i++)
		if (s->live[i].start == start) {
			memmove(&s->live[i], &s->live[i + 1], (s->nlive - i - 1) * sizeof *s->live);
			s->nlive--;
			return;
		}
}

static bool va_free_at(const struct wi_sim *s, uint64_t start, uint64_t len)
{
	if (start + len < start)
		return false;
	for (size_t i = 0; i < s->nlive; i++)
		if (s->live[i].start < start + len && start < s->live[i].end)
			return false;
	return true;
}

/* The recorded address of the next segment (what = SEG_ALLOC or RESERVE) when
 * its size agrees; else a first fit. */
static uint64_t place(struct wi_sim *s, uint8_t what, uint64_t size)
{
	size_t *next = what == WI_SEG_ALLOC ? &s->next_seg : &s->next_res;
	while (*next < s->noracle && s->oracle[*next].what != what)
		(*next)++;
	if (*next < s->noracle) {
		const struct wi_devev *o = &s->oracle[(*next)++];
		/* a reserved range's size follows the device's size, which the trace
		 * may not tell: the k-th range keeps its place whatever its size */
		/* never over a live range (a damaged trace may say so) */
		if ((o->size == size || what == WI_RESERVE) && va_free_at(s, o->addr, pages_of(size) * WI_PAGE))
			return o->addr;
	}
	return va_find(s, (size + WI_PAGE - 1) / WI_PAGE * WI_PAGE);
}

static int seg_alloc(void *ctx, uint64_t size, uint64_t *addr)
{
	struct wi_sim *s = ctx;
	if (s->cap_pages && s->used_pages + pages_of(size) > s->cap_pages) {
		log_ev(s, WI_SEG_FAIL, 0, size);
		return -1;
	}
	*addr = place(s, WI_SEG_ALLOC, size);
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
	*addr = place(s, WI_RESERVE, size);
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
}

void tlm__wi_sim_drv(struct wi_sim *s, struct tlm_wi_drv *d)
{
	*d = (struct tlm_wi_drv){s, seg_alloc, seg_free, va_reserve, va_free, map, unmap};
}

int tlm__wi_sim_take(struct wi_sim *s, uint64_t size, uint64_t *addr)
{
	if (size > TLM_WI_MAX_REQUEST || (s->cap_pages && s->used_pages + pages_of(size) > s->cap_pages))
		return -1;
	*addr = va_find(s, pages_of(size) * WI_PAGE);
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
