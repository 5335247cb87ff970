/* SPDX-License-Identifier: MIT */
/*
 * segments.c - the segment map at each device's reserved peak (export.h): a
 * second streaming pass that replays the events exactly as the first did,
 * and, right after the event that first reached a (device, kind)'s peak
 * (its ordinal was noted by the first pass), copies that (device, kind)'s
 * live driver allocations. Memory: the live set, as in the first pass, plus
 * the copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "internal.h"

static int by_addr(const void *a, const void *b)
{
	const struct tlm_report_segment *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* Copies the live driver allocations of device d into m. */
static int take(const struct tlm__live_map *lm, const struct tlm_report_device *d, struct tlm_report_segmap *m,
		uint64_t start)
{
	size_t n = 0;
	for (size_t i = 0; i <= lm->mask; i++) {
		const struct tlm__live *e = &lm->slot[i];
		n += e->ns != TLM__NS_EMPTY && e->ns != TLM__NS_BLOCK && e->mkind == d->kind && e->device == d->device;
	}
	m->seg = calloc(n + 1, sizeof *m->seg);
	if (!m->seg)
		return -1;
	for (size_t i = 0; i <= lm->mask; i++) {
		const struct tlm__live *e = &lm->slot[i];
		if (e->ns == TLM__NS_EMPTY || e->ns == TLM__NS_BLOCK || e->mkind != d->kind || e->device != d->device)
			continue;
		m->seg[m->n++] = (struct tlm_report_segment){e->addr, e->size, e->stack_id,
							     (int64_t)(e->time_ns - start)};
		m->total = m->total + e->size < m->total ? UINT64_MAX : m->total + e->size;
	}
	qsort(m->seg, m->n, sizeof *m->seg, by_addr);
	return 0;
}

void tlm_report_segmaps_free(struct tlm_report_segmap *m, size_t n)
{
	if (!m)
		return;
	for (size_t i = 0; i < n; i++)
		free(m[i].seg);
	free(m);
}

struct tlm_report_segmap *tlm_report_peak_segments(struct tlm_report *r, char *err, size_t errlen)
{
	struct tlm_report_segmap *maps = calloc(r->ndevices + 1, sizeof *maps);
	if (!maps) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	uint64_t last = 0;
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].peak_reserved_event > last)
			last = r->devices[i].peak_reserved_event;
	if (!last)
		return maps; /* nothing was ever reserved */

	struct tlm_reader *rd = tlm_reader_open(r->path, err, errlen);
	if (!rd) {
		free(maps);
		return NULL;
	}
	struct tlm_report *scratch = calloc(1, sizeof *scratch);
	struct tlm_record *rec = malloc(sizeof *rec);
	struct tlm__replay rp;
	bool rp_ok = false, ok = false;
	snprintf(err, errlen, "out of memory while reading the trace");
	if (!scratch || !rec || tlm__replay_init(&rp, scratch))
		goto out;
	rp_ok = true;
	rp.start = tlm_reader_header(rd)->start_monotonic_ns;
	while (scratch->events < last && tlm_reader_next(rd, rec) == 1) {
		if (rec->type != TLM_REC_EVENT)
			continue;
		tlm__replay_event(&rp, &rec->u.ev);
		if (rp.oom_error)
			goto out;
		for (size_t i = 0; i < r->ndevices; i++)
			if (r->devices[i].peak_reserved_event == scratch->events &&
			    take(&rp.live, &r->devices[i], &maps[i], rp.start))
				goto out;
	}
	if (scratch->events < last) /* the file changed since the first pass */
		snprintf(err, errlen, "the trace changed while it was read");
	else
		ok = true;
out:
	if (rp_ok)
		tlm__replay_fini(&rp);
	if (scratch)
		free(scratch->ooms);
	free(scratch);
	free(rec);
	tlm_reader_close(rd);
	if (!ok) {
		tlm_report_segmaps_free(maps, r->ndevices);
		return NULL;
	}
	return maps;
}
