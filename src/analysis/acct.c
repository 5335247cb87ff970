/* SPDX-License-Identifier: MIT */
/*
 * acct.c - two-layer accounting per (device, memory kind).
 *
 * The driver layer is what the process holds from the driver (reserved); the
 * allocator layer is what sub-allocators hand out of it (allocated). Until an
 * allocator tap reports blocks for a device, nothing is known about what
 * happens inside reserved memory, so the allocator layer mirrors the driver
 * layer (allocated == reserved, no external fragmentation known). The first
 * tlm__acct_block() call switches the device to its own allocator layer.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/internal.h"
#include "common/grow.h"

struct tlm__acct *tlm__acct_get(struct tlm__accts *s, int device, int mkind)
{
	if (s->last < s->n && s->a[s->last].device == device && s->a[s->last].mkind == mkind)
		return &s->a[s->last];
	for (size_t i = 0; i < s->n; i++)
		if (s->a[i].device == device && s->a[i].mkind == mkind) {
			s->last = i;
			return &s->a[i];
		}
	if (s->n == s->cap && tlm__grow(&s->a, &s->cap, s->n + 1, sizeof *s->a, 8))
		return NULL;

	struct tlm__acct *a = &s->a[s->n];
	memset(a, 0, sizeof *a);
	a->device = (int16_t)device;
	a->mkind = (uint8_t)mkind;
	if (s->n < TLM__SERIES_ACCTS)
		a->ts = calloc(1, sizeof *a->ts); /* NULL: no series, nothing else lost */
	a->ps = tlm__psites_new();        /* NULL: no peak sites for it, nothing else lost */
	s->last = s->n++;
	return a;
}

void tlm__accts_fini(struct tlm__accts *s)
{
	for (size_t i = 0; i < s->n; i++) {
		tlm__series_free(s->a[i].ts);
		tlm__psites_free(s->a[i].ps);
	}
	free(s->a);
	memset(s, 0, sizeof *s);
}

/* Saturating: matched frees never underflow, but a hostile trace may
 * announce sizes near 2^64. */
static uint64_t add(uint64_t v, bool alloc, uint64_t bytes)
{
	if (alloc)
		return v + bytes < v ? UINT64_MAX : v + bytes;
	return bytes > v ? 0 : v - bytes;
}

double tlm__acct_frag(const struct tlm__acct *a)
{
	if (!a->reserved || a->allocated >= a->reserved)
		return 0.0;
	return 1.0 - (double)a->allocated / (double)a->reserved;
}

bool tlm__acct_ext_frag(const struct tlm__acct *a, double *out)
{
	if (!a->has_blocks)
		return false;
	uint64_t free_inside = a->reserved > a->allocated ? a->reserved - a->allocated : 0;
	*out = free_inside ? 1.0 - (double)a->free_gap_largest / (double)free_inside : 0.0;
	return true;
}

/* Fragmentation at the peak is taken where allocated memory first peaks (the
 * moment the workload needed the most), with the reserved memory of that
 * moment, so peak allocated and reserved-then give it. The reserved peak's
 * own figures (and the layout: ext, the segment map) are kept beside it. */
static void at_peaks(struct tlm__acct *a, uint64_t t)
{
	if (a->reserved > a->peak_reserved) {
		a->peak_reserved = a->reserved;
		a->peak_reserved_t = t;
		a->peak_reserved_ev = a->ev;
		a->frag_at_peak = tlm__acct_frag(a);
		a->allocated_at_peak_reserved = a->allocated;
		a->ext_at_peak_known = tlm__acct_ext_frag(a, &a->ext_frag_at_peak);
		/* the replay settles it where the blocks inside are known (replay.c) */
		a->peak_pending = true;
	}
	if (a->allocated > a->peak_allocated) {
		a->peak_allocated = a->allocated;
		a->peak_allocated_t = t;
		a->reserved_at_peak_allocated = a->reserved;
		a->frag_at_peak_allocated = tlm__acct_frag(a);
		tlm__psites_peak(a->ps);
	}
	if (a->ts)
		tlm__series_add(a->ts, t, a->reserved, a->allocated);
}

/* The allocated layer's sites; without memory for them, the peak-site
 * section loses this (device, kind), nothing else. */
static void site_change(struct tlm__acct *a, uint32_t stack_id, bool alloc, uint64_t bytes)
{
	if (tlm__psites_change(a->ps, stack_id, alloc, bytes)) {
		tlm__psites_free(a->ps);
		a->ps = NULL;
	}
}

void tlm__acct_driver(struct tlm__acct *a, bool alloc, uint64_t bytes, uint64_t t, uint32_t stack_id)
{
	if (a->prev_ev != a->ev) { /* the state before this event, for a sample taken before it (devmem.c) */
		a->prev_ev = a->ev;
		a->prev_reserved = a->reserved;
	}
	a->reserved = add(a->reserved, alloc, bytes);
	if (alloc) {
		a->driver_count++;
		a->allocs++;
	} else {
		a->driver_count -= a->driver_count > 0;
		a->frees++;
	}
	if (!a->has_blocks) {
		a->allocated = a->reserved;
		site_change(a, stack_id, alloc, bytes);
	}
	at_peaks(a, t);
}

void tlm__acct_block(struct tlm__acct *a, bool alloc, uint64_t bytes, uint64_t t, uint32_t stack_id)
{
	if (!a->has_blocks) {
		/* First block seen: from now on allocated counts blocks only. */
		a->has_blocks = true;
		a->allocated = 0;
		/* what mirrored reserved until now was no block: allocated starts here */
		a->peak_allocated = 0;
		a->peak_allocated_t = 0;
		a->reserved_at_peak_allocated = 0;
		a->frag_at_peak_allocated = 0.0;
		tlm__psites_reset(a->ps);
	}
	site_change(a, stack_id, alloc, bytes);
	a->allocated = add(a->allocated, alloc, bytes);
	if (alloc)
		a->block_count++;
	else
		a->block_count -= a->block_count > 0;
	at_peaks(a, t);
}
