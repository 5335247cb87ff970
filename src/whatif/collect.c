/* SPDX-License-Identifier: MIT */
/*
 * collect.c - a trace's ops, all of them, per device (replay_int.h, struct
 * wi_trace): trace_in.c's stream collected, each free pointing at its
 * allocation, for a reader that walks a device's ops more than once (the
 * report's forecast). Memory: every op (about 64 bytes each); tlm whatif
 * itself does not use this.
 */
#include <stdlib.h>
#include <string.h>

#include "whatif/replay_int.h"

struct coll {
	struct wi_trace *t;
	struct wi_table *live; /* per device: block address (even keys) or others' key (odd) -> op + 1 */
	bool nomem;
};

static struct wi_dev *cdev(struct coll *c, int device, size_t *di)
{
	for (size_t i = 0; i < c->t->ndev; i++)
		if (c->t->dev[i].device == device)
			return &c->t->dev[(*di = i)];
	size_t n = c->t->ndev + 1;
	struct wi_dev *d = realloc(c->t->dev, n * sizeof *d);
	struct wi_table *l = realloc(c->live, 2 * n * sizeof *l);
	if (d)
		c->t->dev = d;
	if (l)
		c->live = l;
	if (!d || !l)
		return NULL;
	memset(&d[n - 1], 0, sizeof *d);
	memset(&l[2 * n - 2], 0, 2 * sizeof *l);
	d[n - 1].device = device;
	c->t->ndev = n;
	return &d[(*di = n - 1)];
}

static int first_op(void *ctx, const struct wi_facts *f)
{
	(void)ctx, (void)f;
	return 0;
}

static int op(void *ctx, const struct wi_facts *f, const struct wi_op *o)
{
	struct coll *c = ctx;
	size_t di = 0;
	struct wi_dev *d = cdev(c, f->device, &di);
	if (!d)
		return c->nomem = true, -1;
	if (d->nop == d->capop) {
		size_t n = d->capop ? d->capop * 2 : 1024;
		struct wi_op *p = realloc(d->op, n * sizeof *p);
		if (!p)
			return c->nomem = true, -1;
		d->op = p;
		d->capop = n;
	}
	struct wi_op x = *o;
	/* blocks and others' memory in two tables: their keys may meet */
	struct wi_table *live = &c->live[2 * di + (o->type == WI_FALLOC || o->type == WI_FFREE)];
	if (o->type == WI_ALLOC || o->type == WI_FALLOC) {
		if (tlm__wi_table_put(live, o->addr, d->nop + 1))
			return c->nomem = true, -1;
	} else if (o->type == WI_FREE || o->type == WI_FFREE) {
		uint64_t a = tlm__wi_table_take(live, o->addr);
		if (!a)
			return 0;
		x.partner = a - 1;
	}
	d->op[d->nop++] = x;
	d->total = f->total;
	d->va_base = f->va_base;
	d->nalloc = f->nalloc;
	return 0;
}

static int call(void *ctx, const struct wi_facts *f, const struct wi_devev *e)
{
	(void)ctx, (void)f, (void)e;
	return 0;
}

int tlm__wi_trace_read(const char *path, struct wi_trace *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof *t);
	struct tlm_reader *rd = tlm_reader_open(path, err, errlen);
	if (!rd)
		return -1;
	struct coll c = {t, NULL, false};
	struct wi_sink sink = {&c, first_op, op, call};
	struct wi_feed *f = tlm__wi_feed_new(&sink, tlm_reader_header(rd)->start_monotonic_ns);
	struct tlm_record *rec = malloc(sizeof *rec);
	int rc = -1;
	if (f && rec) {
		rc = 0;
		while (!rc && tlm_reader_next(rd, rec) == 1)
			rc = tlm__wi_feed_record(f, rec, err, errlen);
		if (!rc)
			rc = tlm__wi_feed_end(f, err, errlen);
	}
	for (size_t i = 0; i < 2 * t->ndev && c.live; i++)
		tlm__wi_table_free(&c.live[i]);
	free(c.live);
	free(rec);
	tlm__wi_feed_free(f);
	tlm_reader_close(rd);
	if (rc)
		tlm__wi_trace_free(t);
	return rc;
}

void tlm__wi_trace_free(struct wi_trace *t)
{
	for (size_t i = 0; i < t->ndev; i++)
		free(t->dev[i].op);
	free(t->dev);
	memset(t, 0, sizeof *t);
}
