/* SPDX-License-Identifier: MIT */
/*
 * expect.h - the record sequence a generated test trace holds: records
 * tt_gen(0..n-1), optionally an END, then `late` more generated records
 * (events after END). Used both to write such a trace and to check one read
 * back, so writer and checker cannot disagree.
 */
#ifndef TLM_TESTS_EXPECT_H
#define TLM_TESTS_EXPECT_H

#include <stdint.h>

#include "tt.h"

#define EXPECT_END_TIME 9000000000ULL

struct expect {
	uint64_t n, late, j, events, lost;
	int edge, with_end;
};

static inline uint64_t expect_total(const struct expect *x)
{
	return x->n + (x->with_end ? 1 : 0) + x->late;
}

/* The next expected record, with its seq. */
static inline void expect_next(struct expect *x, struct tlm_record *rec)
{
	if (x->with_end && x->j == x->n) {
		rec->type = TLM_REC_END;
		rec->u.end.events = x->events;
		rec->u.end.lost = x->lost;
		rec->u.end.end_monotonic_ns = EXPECT_END_TIME;
	} else {
		tt_gen(x->j - (x->with_end && x->j > x->n ? 1 : 0), x->edge, rec);
	}
	rec->seq = x->events;
	if (rec->type == TLM_REC_EVENT)
		x->events++;
	if (rec->type == TLM_REC_LOST)
		x->lost += rec->u.lost.count;
	x->j++;
}

/* Writes the whole sequence to m; returns 0 or the first writer error. */
static inline int expect_write(struct expect x, struct membuf *m, size_t chunk, int compress)
{
	struct tlm_trace_header h;
	struct tlm_record rec;
	int err = 0, rc = 0;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, m, chunk, compress, &err);
	if (!w)
		return err ? err : -1;
	x.j = x.events = x.lost = 0;
	for (uint64_t i = 0; i < expect_total(&x) && !rc; i++) {
		expect_next(&x, &rec);
		rc = tt_write(w, &rec);
	}
	if (!rc)
		rc = tlm_tw_flush(w);
	tlm_tw_close(w);
	return rc;
}

#endif
