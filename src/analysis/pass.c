/* SPDX-License-Identifier: MIT */
/*
 * pass.c - the one pass over a trace (pass.h): the reader's loop, the replay
 * and the dispatch of each record and each match to the consumers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"

static void on_alloc(void *ctx, struct tlm__live *e, const struct tlm_event *ev)
{
	struct tlm__pass *p = ctx;
	for (size_t i = 0; i < p->n; i++)
		if (p->c[i].alloc)
			p->c[i].alloc(p->c[i].ctx, p, e, ev);
}

static void on_release(void *ctx, const struct tlm__live *e, const struct tlm_event *ev)
{
	struct tlm__pass *p = ctx;
	for (size_t i = 0; i < p->n; i++)
		if (p->c[i].release)
			p->c[i].release(p->c[i].ctx, p, e, ev);
}

static void on_settle(void *ctx, const struct tlm__acct *a)
{
	struct tlm__pass *p = ctx;
	for (size_t i = 0; i < p->n; i++)
		if (p->c[i].settle)
			p->c[i].settle(p->c[i].ctx, p, a);
}

static const struct tlm__replay_hooks hooks = {on_alloc, on_release, on_settle};

int tlm__pass_open(struct tlm__pass *p, struct tlm_report *rep, const char *path, int fd, char *err, size_t errlen)
{
	memset(p, 0, sizeof *p);
	p->rep = rep;
	if (!(p->rd = fd >= 0 ? tlm_reader_open_fd(fd, err, errlen) : tlm_reader_open(path, err, errlen)))
		return -1;
	if (!(p->rec = malloc(sizeof *p->rec)) || tlm__replay_init(&p->rp, rep)) {
		snprintf(err, errlen, "out of memory while reading the trace");
		free(p->rec);
		p->rec = NULL;
		tlm_reader_close(p->rd);
		p->rd = NULL;
		return -1;
	}
	p->rp_ok = true;
	p->rp.start = tlm_reader_header(p->rd)->start_monotonic_ns;
	p->rp.hooks = &hooks;
	p->rp.hooks_ctx = p;
	return 0;
}

int tlm__pass_add(struct tlm__pass *p, const struct tlm__consumer *c)
{
	if (p->n == TLM__PASS_CONSUMERS) {
		if (c->fini)
			c->fini(c->ctx);
		return -1;
	}
	p->c[p->n++] = *c;
	return 0;
}

int tlm__pass_run(struct tlm__pass *p)
{
	struct tlm_record *rec = p->rec;
	while (tlm_reader_next(p->rd, rec) == 1) {
		for (size_t i = 0; i < p->n; i++)
			if (p->c[i].before && p->c[i].before(p->c[i].ctx, p, rec))
				return -1;
		if (rec->type == TLM_REC_EVENT)
			tlm__replay_event(&p->rp, &rec->u.ev);
		else if (rec->type == TLM_REC_END)
			tlm__replay_end(&p->rp, rec->u.end.end_monotonic_ns);
		for (size_t i = 0; i < p->n; i++)
			if (p->c[i].after && p->c[i].after(p->c[i].ctx, p, rec))
				return -1;
		if (p->rp.oom_error || p->error)
			return -1;
	}
	return 0;
}

int tlm__pass_finish(struct tlm__pass *p)
{
	if (tlm__replay_finish(&p->rp))
		return -1;
	tlm__outcome_finish(p->rep, &p->rp); /* the exit status is known now; the steps' forecast reads the outcomes */
	for (size_t i = 0; i < p->n; i++)
		if (p->c[i].finish && p->c[i].finish(p->c[i].ctx, p))
			return -1;
	return p->error ? -1 : 0;
}

void tlm__pass_close(struct tlm__pass *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->c[i].fini)
			p->c[i].fini(p->c[i].ctx);
	p->n = 0;
	if (p->rp_ok)
		tlm__replay_fini(&p->rp);
	p->rp_ok = false;
	free(p->rec);
	p->rec = NULL;
	tlm_reader_close(p->rd);
	p->rd = NULL;
}
