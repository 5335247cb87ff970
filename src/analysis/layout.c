/* SPDX-License-Identifier: MIT */
/*
 * layout.c - where memory lies inside what a device reserved: the virtual
 * address ranges that hold its bytes, and the largest free gap between the
 * blocks an allocator placed in them.
 *
 * A range is a driver allocation in a memory namespace (cudaMalloc'd device
 * or managed memory, pinned host memory) or, for device memory, a run of VMM
 * mappings of the device laid end to end: PyTorch's expandable segments map
 * physical chunks one after the other into one reserved range, and a block
 * may straddle two chunks, so the run is one range. (Mappings get their
 * device from their physical handle; replay.c.)
 */
#include <stdlib.h>

#include "analysis/internal.h"

static int by_start(const void *a, const void *b)
{
	const struct tlm__range *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static bool holds(const struct tlm__live *e, int device, int mkind)
{
	if (e->device != device)
		return false;
	if (e->ns == TLM__NS_DEVVA || e->ns == TLM__NS_HOST)
		return e->mkind == mkind;
	return e->ns == TLM__NS_VMM_MAP && mkind == TLM_MEM_DEVICE;
}

static uint64_t end_of(const struct tlm__live *e)
{
	return e->addr + e->size < e->addr ? UINT64_MAX : e->addr + e->size;
}

ssize_t tlm__va_ranges(const struct tlm__live_map *m, int device, int mkind, struct tlm__range **out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t i = 0; i <= m->mask; i++)
		n += holds(&m->slot[i], device, mkind);
	if (!n)
		return 0;
	struct tlm__range *r = malloc(n * sizeof *r);
	if (!r)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i <= m->mask; i++) {
		const struct tlm__live *e = &m->slot[i];
		if (holds(e, device, mkind))
			r[k++] = (struct tlm__range){e->addr, end_of(e), e->time_ns, e->stack_id,
						     e->ns == TLM__NS_VMM_MAP};
	}
	qsort(r, n, sizeof *r, by_start);
	size_t j = 0; /* merge mappings laid end to end */
	for (size_t i = 1; i < n; i++) {
		if (r[j].vmm && r[i].vmm && r[i].start == r[j].end) {
			r[j].end = r[i].end;
			if (r[i].time_ns < r[j].time_ns)
				r[j].time_ns = r[i].time_ns;
		} else {
			r[++j] = r[i];
		}
	}
	*out = r;
	return (ssize_t)(j + 1);
}

static int by_addr(const void *a, const void *b)
{
	const struct tlm__live *x = *(const struct tlm__live *const *)a, *y = *(const struct tlm__live *const *)b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

ssize_t tlm__live_blocks(const struct tlm__live_map *m, int device, int mkind, const struct tlm__live ***out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t i = 0; i <= m->mask; i++)
		n += m->slot[i].ns == TLM__NS_BLOCK && m->slot[i].device == device && m->slot[i].mkind == mkind;
	if (!n)
		return 0;
	const struct tlm__live **b = malloc(n * sizeof *b);
	if (!b)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i <= m->mask; i++)
		if (m->slot[i].ns == TLM__NS_BLOCK && m->slot[i].device == device && m->slot[i].mkind == mkind)
			b[k++] = &m->slot[i];
	qsort(b, n, sizeof *b, by_addr);
	*out = b;
	return (ssize_t)n;
}

static uint64_t largest_gap(const struct tlm__live_map *m, int device, int mkind, bool in_use);

uint64_t tlm__largest_gap(const struct tlm__live_map *m, int device, int mkind)
{
	return largest_gap(m, device, mkind, false);
}

/* At an allocator's OOM: PyTorch has just released every segment without a
 * live block, so a range without one belongs to someone else (cuBLAS's
 * workspace, NCCL): not a gap the allocator could use. */
uint64_t tlm__largest_gap_in_use(const struct tlm__live_map *m, int device, int mkind)
{
	return largest_gap(m, device, mkind, true);
}

static uint64_t largest_gap(const struct tlm__live_map *m, int device, int mkind, bool in_use)
{
	struct tlm__range *seg;
	const struct tlm__live **blk;
	ssize_t ns = tlm__va_ranges(m, device, mkind, &seg);
	if (ns <= 0)
		return 0;
	ssize_t nb = tlm__live_blocks(m, device, mkind, &blk);
	if (nb < 0) {
		free(seg);
		return 0;
	}
	/* Sweep: each range's free gaps lie between the blocks that start in it. */
	uint64_t best = 0;
	ssize_t j = 0;
	for (ssize_t i = 0; i < ns; i++) {
		while (j < nb && blk[j]->addr < seg[i].start)
			j++; /* blocks outside every range (allocated before tlm) */
		uint64_t at = seg[i].start;
		ssize_t first = j;
		for (; j < nb && blk[j]->addr < seg[i].end; j++) {
			if (blk[j]->addr > at && blk[j]->addr - at > best)
				best = blk[j]->addr - at;
			if (end_of(blk[j]) > at)
				at = end_of(blk[j]);
		}
		if (in_use && j == first)
			continue;
		if (seg[i].end > at && seg[i].end - at > best)
			best = seg[i].end - at;
	}
	free(seg);
	free(blk);
	return best;
}
