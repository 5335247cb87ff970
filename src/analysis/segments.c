/* SPDX-License-Identifier: MIT */
/*
 * segments.c - the segment map at each device's reserved peak (export.h): a
 * second streaming pass that replays the events exactly as the first did,
 * and where the replay settles the peak of a (device, kind) (its event
 * ordinal was noted by the first pass; the fragmentation at the peak is
 * taken there, once the blocks placed after the new segment are known),
 * copies that (device, kind)'s live driver allocations and, when an
 * allocator tap reported blocks, its layout (layout.c). Memory: the live
 * set, as in the first pass, plus the copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/export.h"
#include "analysis/internal.h"

static int by_addr(const void *a, const void *b)
{
	const struct tlm_report_segment *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* The ranges holding d's reserved memory and the blocks in them. */
static int take_layout(const struct tlm__live_map *lm, const struct tlm_report_device *d,
		       struct tlm_report_segmap *m, uint64_t start)
{
	struct tlm__range *rg;
	const struct tlm__live **bl;
	ssize_t nr = tlm__va_ranges(lm, d->device, d->kind, &rg);
	if (nr < 0)
		return -1;
	ssize_t nb = tlm__live_blocks(lm, d->device, d->kind, &bl);
	m->range = calloc((size_t)nr + 1, sizeof *m->range);
	m->block = calloc(nb > 0 ? (size_t)nb + 1 : 1, sizeof *m->block);
	if (nb < 0 || !m->range || !m->block) {
		free(rg);
		free(bl);
		return -1;
	}
	m->has_blocks = true;
	for (ssize_t i = 0; i < nr; i++) {
		m->range[i] = (struct tlm_report_segment){rg[i].start, rg[i].end - rg[i].start, rg[i].stack_id,
						       (int64_t)(rg[i].time_ns - start)};
		m->range_bytes = sat_add(m->range_bytes, m->range[i].size);
	}
	for (ssize_t i = 0; i < nb; i++) {
		m->block[i] = (struct tlm_report_segment){bl[i]->addr, bl[i]->size, bl[i]->stack_id,
						       (int64_t)(bl[i]->time_ns - start)};
		m->block_bytes = sat_add(m->block_bytes, bl[i]->size);
	}
	m->nranges = (size_t)nr;
	m->nblocks = nb > 0 ? (size_t)nb : 0;
	free(rg);
	free(bl);
	return 0;
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
		m->total = sat_add(m->total, e->size);
	}
	qsort(m->seg, m->n, sizeof *m->seg, by_addr);
	return d->ext_known ? take_layout(lm, d, m, start) : 0;
}

void tlm_report_segmaps_free(struct tlm_report_segmap *m, size_t n)
{
	if (!m)
		return;
	for (size_t i = 0; i < n; i++) {
		free(m[i].seg);
		free(m[i].range);
		free(m[i].block);
	}
	free(m);
}

struct pass {
	const struct tlm_report *r;
	struct tlm_report_segmap *maps;
	bool *taken;
	size_t left;
	bool failed;
};

static void on_settle(void *ctx, const struct tlm__replay *rp, const struct tlm__acct *a)
{
	struct pass *p = ctx;
	for (size_t i = 0; i < p->r->ndevices; i++) {
		const struct tlm_report_device *d = &p->r->devices[i];
		if (p->taken[i] || d->device != a->device || d->kind != a->mkind ||
		    d->peak_reserved_event != a->peak_reserved_ev)
			continue;
		p->taken[i] = true;
		p->left--;
		if (take(&rp->live, d, &p->maps[i], rp->start))
			p->failed = true;
	}
}

struct tlm_report_segmap *tlm_report_peak_segments(struct tlm_report *r, char *err, size_t errlen)
{
	struct tlm_report_segmap *maps = calloc(r->ndevices + 1, sizeof *maps);
	bool *taken = calloc(r->ndevices + 1, sizeof *taken);
	if (!maps || !taken) {
		free(maps);
		free(taken);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct pass ps = {.r = r, .maps = maps, .taken = taken};
	for (size_t i = 0; i < r->ndevices; i++) {
		if (r->devices[i].peak_reserved_event)
			ps.left++;
		else
			taken[i] = true; /* nothing was ever reserved */
	}
	if (!ps.left) {
		free(taken);
		return maps;
	}

	struct tlm_reader *rd = tlm__reopen(r, err, errlen);
	if (!rd) {
		free(maps);
		free(taken);
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
	rp.on_settle = on_settle;
	rp.settle_ctx = &ps;
	while (ps.left && !ps.failed && tlm_reader_next(rd, rec) == 1) {
		if (rec->type != TLM_REC_EVENT)
			continue;
		tlm__replay_event(&rp, &rec->u.ev);
		if (rp.oom_error)
			goto out;
	}
	if (ps.left && !ps.failed)
		tlm__replay_settle_all(&rp); /* peaks the trace ended on */
	if (ps.failed)
		goto out;
	if (ps.left) /* the file changed since the first pass */
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
	free(taken);
	tlm_reader_close(rd);
	if (!ok) {
		tlm_report_segmaps_free(maps, r->ndevices);
		return NULL;
	}
	return maps;
}
