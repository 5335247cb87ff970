/* SPDX-License-Identifier: MIT */
/*
 * wi_ops.c - the run's allocator requests per device, collected from the
 * report's pass (wi_ops.h).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "analysis/wi_ops.h"
#include "common/grow.h"

/* Ops read, all devices together, those dropped before a device's first
 * block op included (24 bytes each kept: at most 384 MiB). Past it the
 * forecast keeps its linear rule, as when the ops could not be read: the
 * report's memory and time stay bounded on a trace of any length. */
#define MAX_OPS (1u << 24)

/* Events read before any device's first block op: past them, with none so
 * far, the collection stops and the forecast keeps its linear rule (its
 * model needs blocks; on a run of driver calls alone the classifier took a
 * tenth of `tlm report`'s time, up to MAX_OPS, for nothing). */
#define EVENTS_BEFORE_BLOCKS (4u << 20)

struct coll {
	struct wi_trace t;
	struct wi_feed *feed;
	struct wi_table *live; /* per device: block address (even) or others' key (odd) -> op + 1 */
	size_t nops;           /* read, all devices (MAX_OPS) */
	uint64_t events;       /* read while no device had blocks */
	bool started;          /* a device had a block op */
	struct tlm__report_priv *priv;
	bool failed;           /* stopped: the forecast keeps its linear rule */
	bool nomem;
};

static struct wi_dev *cdev(struct coll *c, int device, size_t *di)
{
	for (size_t i = 0; i < c->t.ndev; i++)
		if (c->t.dev[i].device == device)
			return &c->t.dev[(*di = i)];
	size_t n = c->t.ndev + 1;
	struct wi_dev *d = realloc(c->t.dev, n * sizeof *d);
	if (d)
		c->t.dev = d;
	struct wi_table *l = d ? realloc(c->live, 2 * n * sizeof *l) : NULL;
	if (!l)
		return NULL;
	c->live = l;
	memset(&d[n - 1], 0, sizeof *d);
	memset(&l[2 * n - 2], 0, 2 * sizeof *l);
	d[n - 1].device = device;
	c->t.ndev = n;
	return &d[(*di = n - 1)];
}

/* Squeezes out the entries of others' memory freed before the device's
 * first block op, keeping the order; the table's indices follow (each kept
 * entry's partner, unused before then, holds its new index meanwhile). */
static void squeeze(struct wi_dev *d, struct wi_table *others)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nop; i++)
		if (d->op[i].type)
			d->op[i].partner = (uint32_t)n++;
	for (size_t j = 0; j < others->cap; j++)
		if (others->val[j])
			others->val[j] = d->op[others->val[j] - 1].partner + 1;
	n = 0;
	for (size_t i = 0; i < d->nop; i++)
		if (d->op[i].type) {
			d->op[n] = d->op[i];
			d->op[n++].partner = 0;
		}
	d->nop = n;
	d->ndropped = 0;
}

static int first_op(void *ctx, const struct wi_facts *f)
{
	struct coll *c = ctx;
	size_t di = 0;
	struct wi_dev *d = cdev(c, f->device, &di);
	if (!d)
		return c->nomem = true, -1;
	squeeze(d, &c->live[2 * di + 1]);
	d->started = c->started = true;
	return 0;
}

static int keep(struct coll *c, struct wi_dev *d, const struct wi_fc_op *x)
{
	if (d->nop == d->capop && tlm__grow(&d->op, &d->capop, d->nop + 1, sizeof *d->op, 1024))
		return c->nomem = true, -1;
	d->op[d->nop++] = *x;

	return 0;
}

/* Before the device's first block op only others' memory comes: what is
 * still held when the first block comes is what the model starts with (as
 * in `tlm whatif`), so a free drops its allocation's entry instead of
 * being kept, and a device that never has blocks keeps only its live
 * allocations however long the run. */
static int early(struct coll *c, struct wi_dev *d, struct wi_table *others, const struct wi_op *o)
{
	if (o->type == WI_FFREE) {
		uint64_t a = tlm__wi_table_take(others, o->addr);
		if (a) {
			d->op[a - 1].type = 0;
			d->ndropped++;
			c->nops++;
		}
		if (d->ndropped >= 1024 && d->ndropped * 2 >= d->nop)
			squeeze(d, others);
		return 0;
	}
	if (o->type != WI_FALLOC)
		return 0;
	if (tlm__wi_table_put(others, o->addr, d->nop + 1))
		return c->nomem = true, -1;
	c->nops++;
	return keep(c, d, &(struct wi_fc_op){o->t, o->size, 0, WI_FALLOC});
}

static int op(void *ctx, const struct wi_facts *f, const struct wi_op *o)
{
	struct coll *c = ctx;
	size_t di = 0;
	struct wi_dev *d = cdev(c, f->device, &di);
	if (!d)
		return c->nomem = true, -1;
	d->total = f->total;
	d->va_base = f->va_base;
	d->nalloc = f->nalloc;
	/* blocks and others' memory in two tables: their keys may meet */
	struct wi_table *live = &c->live[2 * di + (o->type == WI_FALLOC || o->type == WI_FFREE)];
	if (c->nops == MAX_OPS)
		return -1; /* not nomem: the collection stops, the report goes on */
	if (!d->started)
		return early(c, d, live, o);
	struct wi_fc_op x = {o->t, o->size, 0, o->type};
	if (o->type == WI_ALLOC || o->type == WI_FALLOC) {
		if (tlm__wi_table_put(live, o->addr, d->nop + 1))
			return c->nomem = true, -1;
	} else if (o->type == WI_FREE || o->type == WI_FFREE) {
		uint64_t a = tlm__wi_table_take(live, o->addr);
		if (!a)
			return 0; /* a free of nothing the forecast replays */
		x.partner = (uint32_t)(a - 1);
	}
	if (keep(c, d, &x))
		return -1;
	c->nops++;
	return 0;
}

static int call(void *ctx, const struct wi_facts *f, const struct wi_devev *e)
{
	(void)ctx, (void)f, (void)e;
	return 0;
}

static void drop(struct coll *c)
{
	for (size_t i = 0; i < 2 * c->t.ndev && c->live; i++)
		tlm__wi_table_free(&c->live[i]);
	free(c->live);
	c->live = NULL;
	for (size_t i = 0; i < c->t.ndev; i++)
		free(c->t.dev[i].op);
	free(c->t.dev);
	memset(&c->t, 0, sizeof c->t);
	c->failed = true;
}

static int before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	(void)p;
	struct coll *c = ctx;
	char err[256];
	if (c->failed)
		return 0;
	if (!c->started && rec->type == TLM_REC_EVENT && ++c->events > EVENTS_BEFORE_BLOCKS) {
		drop(c);
		return 0;
	}
	if (!tlm__wi_feed_record(c->feed, rec, err, sizeof err))
		return 0;
	int nomem = c->nomem;
	drop(c); /* a limit of the classifier: no model forecast, as when the trace could not be read */
	return nomem ? -1 : 0;
}

static int finish(void *ctx, struct tlm__pass *p)
{
	(void)p;
	struct coll *c = ctx;
	char err[256];
	if (!c->failed && tlm__wi_feed_end(c->feed, err, sizeof err)) {
		int nomem = c->nomem;
		drop(c);
		if (nomem)
			return -1;
	}
	if (!c->failed)
		c->priv->wi_ops = &c->t;
	return 0;
}

static void fini(void *ctx)
{
	struct coll *c = ctx;
	c->priv->wi_ops = NULL; /* the ops go with the pass */
	drop(c);
	tlm__wi_feed_free(c->feed);
	free(c);
}

int tlm__wi_ops_consumer(struct tlm__pass *p)
{
	struct coll *c = calloc(1, sizeof *c);
	if (!c)
		return -1;
	c->priv = p->rep->priv;
	struct wi_sink sink = {c, first_op, op, call};
	if (!(c->feed = tlm__wi_feed_new(&sink, tlm_reader_header(p->rd)->start_monotonic_ns))) {
		free(c);
		return -1;
	}
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = c, .before = before, .finish = finish, .fini = fini});
}

const struct wi_trace *tlm__wi_ops_of(const struct tlm_report *r)
{
	return r->priv ? r->priv->wi_ops : NULL;
}
