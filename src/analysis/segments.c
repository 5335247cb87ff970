/* SPDX-License-Identifier: MIT */
/*
 * segments.c - the segment map at each device's reserved peak (export.h),
 * a consumer of the report's one pass: where the replay settles a new
 * reserved peak of a (device, kind) (the fragmentation at the peak is taken
 * there, once the blocks placed after the new segment are known), the
 * layout of that moment is what the map shows: that (device, kind)'s live
 * driver allocations and, when an allocator tap reported blocks, its layout
 * (layout.c). Memory: the allocations live at the last peak that were freed
 * after it, besides the replay's live set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/export.h"
#include "analysis/internal.h"
#include "analysis/pass.h"
#include "common/grow.h"
#include "common/sat.h"

static int by_addr(const void *a, const void *b)
{
	const struct tlm_report_segment *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
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
		m->range_bytes = tlm__sat_add(m->range_bytes, m->range[i].size);
	}
	for (ssize_t i = 0; i < nb; i++) {
		m->block[i] = (struct tlm_report_segment){bl[i]->addr, bl[i]->size, bl[i]->stack_id,
						       (int64_t)(bl[i]->time_ns - start)};
		m->block_bytes = tlm__sat_add(m->block_bytes, bl[i]->size);
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
		n += e->ns != TLM_NS_NONE && e->ns != TLM_NS_BLOCK && e->mkind == d->kind && e->device == d->device;
	}
	m->seg = calloc(n + 1, sizeof *m->seg);
	if (!m->seg)
		return -1;
	for (size_t i = 0; i <= lm->mask; i++) {
		const struct tlm__live *e = &lm->slot[i];
		if (e->ns == TLM_NS_NONE || e->ns == TLM_NS_BLOCK || e->mkind != d->kind || e->device != d->device)
			continue;
		m->seg[m->n++] = (struct tlm_report_segment){e->addr, e->size, e->stack_id,
							     (int64_t)(e->time_ns - start)};
		m->total = tlm__sat_add(m->total, e->size);
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

/* ---- the consumer of the report's pass (pass.h) ---------------------------- */

/* For each (device, kind), the layout at its last settled reserved peak
 * without copying it there (a run that keeps growing settles a new peak at
 * each segment): what was live then is what is live at the end and entered
 * the live map before (live_at), plus what left it since: those are copied
 * as they leave, at most the live set at that peak. */
struct seg_acct {
	int16_t device;
	uint8_t mkind;
	uint64_t at;               /* the event ordinal at the settle ... */
	bool at_put;               /* ... after that event's allocation entered the live map */
	uint64_t ev;               /* the peak's event ordinal */
	struct tlm__live *gone;    /* live at the peak, freed since */
	size_t ngone, capgone;
};

struct seg_col {
	struct seg_acct *a;
	size_t n, cap;
};

static bool live_at(const struct seg_acct *s, const struct tlm__live *e)
{
	return e->ev < s->at || (e->ev == s->at && s->at_put);
}

static struct seg_acct *seg_acct(struct seg_col *c, int device, int mkind, bool add)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->a[i].device == device && c->a[i].mkind == mkind)
			return &c->a[i];
	if (!add)
		return NULL;
	if (c->n == c->cap && tlm__grow(&c->a, &c->cap, c->n + 1, sizeof *c->a, 8))
		return NULL;
	c->a[c->n] = (struct seg_acct){.device = (int16_t)device, .mkind = (uint8_t)mkind};
	return &c->a[c->n++];
}

static void seg_settle(void *ctx, struct tlm__pass *p, const struct tlm__acct *a)
{
	struct seg_acct *s = seg_acct(ctx, a->device, a->mkind, true);
	if (!s) {
		p->error = ENOMEM;
		return;
	}
	s->at = p->rep->events;
	s->at_put = p->rp.put_ev == p->rep->events; /* a block settles after it entered, a segment before */
	s->ev = a->peak_reserved_ev;
	s->ngone = 0;
}

static void seg_release(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev)
{
	(void)ev;
	struct seg_col *c = ctx;
	for (size_t i = 0; i < c->n; i++) {
		struct seg_acct *s = &c->a[i];
		if (s->device != e->device || !live_at(s, e))
			continue;
		if (s->ngone == s->capgone && tlm__grow(&s->gone, &s->capgone, s->ngone + 1, sizeof *s->gone, 64)) {
			p->error = ENOMEM;
			return;
		}

		s->gone[s->ngone++] = *e;
	}
}

/* The live map of device d at its acct's last peak, stacks as recorded. */
static int layout_at_peak(const struct tlm__live_map *lm, const struct seg_acct *s, struct tlm__live_map *out)
{
	if (tlm__live_init(out))
		return -1;
	for (size_t i = 0; i <= lm->mask + s->ngone; i++) {
		const struct tlm__live *e = i <= lm->mask ? &lm->slot[i] : &s->gone[i - lm->mask - 1];
		if (e->ns == TLM_NS_NONE || e->device != s->device || !live_at(s, e))
			continue;
		struct tlm__live c = *e;
		c.stack_id = c.raw_stack; /* the map names stacks as recorded (docs/exports.md) */
		if (!tlm__live_put(out, &c)) {
			tlm__live_fini(out);
			return -1;
		}
	}
	return 0;
}

static int seg_finish(void *ctx, struct tlm__pass *p)
{
	struct seg_col *c = ctx;
	struct tlm_report *r = p->rep;
	struct tlm_report_segmap *maps = calloc(r->ndevices + 1, sizeof *maps);
	if (!maps)
		goto nomem;
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		const struct seg_acct *s = seg_acct(c, d->device, d->kind, false);
		if (!d->peak_reserved_event || !s || s->ev != d->peak_reserved_event)
			continue; /* nothing was ever reserved */
		struct tlm__live_map lm;
		if (layout_at_peak(&p->rp.live, s, &lm))
			goto nomem;
		int rc = take(&lm, d, &maps[i], p->rp.start);
		tlm__live_fini(&lm);
		if (rc)
			goto nomem;
	}
	r->priv->segmaps = maps;
	return 0;
nomem:
	tlm_report_segmaps_free(maps, r->ndevices);
	snprintf(r->priv->why_segmaps, sizeof r->priv->why_segmaps, "out of memory");
	return 0; /* the exports say so; the report stands */
}

static void seg_fini(void *ctx)
{
	struct seg_col *c = ctx;
	for (size_t i = 0; i < c->n; i++)
		free(c->a[i].gone);
	free(c->a);
	free(c);
}

int tlm__segmaps_consumer(struct tlm__pass *p)
{
	struct seg_col *c = calloc(1, sizeof *c);
	if (!c)
		return -1;
	snprintf(p->rep->priv->why_segmaps, sizeof p->rep->priv->why_segmaps, "%s", "");
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = c, .release = seg_release, .settle = seg_settle,
							 .finish = seg_finish, .fini = seg_fini});
}

const struct tlm_report_segmap *tlm_report_peak_segments(const struct tlm_report *r, char *err, size_t errlen)
{
	if (r->priv && r->priv->segmaps)
		return r->priv->segmaps;
	snprintf(err, errlen, "%s",
		 r->priv && r->priv->why_segmaps[0] ? r->priv->why_segmaps
						   : "not collected (the report was built without TLM_REPORT_SEGMAPS)");
	return NULL;
}
