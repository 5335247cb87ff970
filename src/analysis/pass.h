/* SPDX-License-Identifier: MIT */
/*
 * pass.h - the one pass over a trace behind tlm_report_build(): the trace is
 * opened and read once; events go to the replay (replay.c), the one
 * free-matcher, and every analysis is a consumer registered on the pass.
 *
 * Contract: for each record, in the trace's order, each consumer's before()
 * (in the order they were added), then the replay takes it (an event: it
 * calls alloc() / release() as it matches allocations and frees, settle() at
 * each new reserved peak once its blocks are placed; END: the run's end),
 * then each after(). Once the trace is read and the replay has filled the
 * report's sections (tlm__pass_finish), each finish(), in order; fini()
 * frees a consumer whatever happened (it may be called without finish()).
 * A hook that runs out of memory returns -1 (or sets p->error when it returns
 * nothing): the report then fails. Consumers see the events' stacks made
 * canonical (frames.c); p->rp.raw is the event as read.
 */
#ifndef TLM_REPORT_PASS_H
#define TLM_REPORT_PASS_H

#include "analysis/internal.h"

#define TLM__PASS_CONSUMERS 12

struct tlm__pass;

struct tlm__consumer {
	void *ctx;
	int (*before)(void *ctx, struct tlm__pass *p, const struct tlm_record *rec);
	int (*after)(void *ctx, struct tlm__pass *p, const struct tlm_record *rec);
	void (*alloc)(void *ctx, struct tlm__pass *p, struct tlm__live *e, const struct tlm_event *ev);
	void (*release)(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev);
	void (*settle)(void *ctx, struct tlm__pass *p, const struct tlm__acct *a);
	int (*finish)(void *ctx, struct tlm__pass *p);
	void (*fini)(void *ctx);
};

struct tlm__pass {
	struct tlm_report *rep;
	struct tlm_reader *rd;
	struct tlm_record *rec;       /* the record being read (about 5 KiB: off the stack) */
	struct tlm__replay rp;
	bool rp_ok;
	struct tlm__consumer c[TLM__PASS_CONSUMERS];
	size_t n;
	int error;                    /* ENOMEM from a hook that returns nothing */
};

/* Opens the trace at path (or reads fd when >= 0: the pass owns it) for rep;
 * err gets one line when it cannot be opened. */
int tlm__pass_open(struct tlm__pass *p, struct tlm_report *rep, const char *path, int fd, char *err, size_t errlen);
/* Registers a consumer; -1 (and its fini() is called) when the table is full. */
int tlm__pass_add(struct tlm__pass *p, const struct tlm__consumer *c);
/* Reads every record; -1 without memory. */
int tlm__pass_run(struct tlm__pass *p);
/* The replay's sections, then each consumer's finish(). -1 without memory. */
int tlm__pass_finish(struct tlm__pass *p);
/* Frees the consumers, the replay and the reader. */
void tlm__pass_close(struct tlm__pass *p);

/* Consumers without a header of their own; each registers itself, -1
 * without memory. segments.c: the segment maps at the reserved peaks
 * (export.h); wi_hint.c: the what-if hint (report.h: whatif_hint). */
int tlm__segmaps_consumer(struct tlm__pass *p);
int tlm__wi_hint_consumer(struct tlm__pass *p);

#endif
