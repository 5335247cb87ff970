/* SPDX-License-Identifier: MIT */
/*
 * wi_hint.c - the report's what-if hint (report.h: whatif_hint), a consumer
 * of the report's pass: it hands every record to the what-if replay's input
 * (the allocator's block requests and the driver calls around them, as
 * `tlm whatif` reads them) and, when the run had an out-of-memory error,
 * replays them under the built-in grid of settings: the hint names one that
 * would have avoided a fragmentation OOM (only where the replay under the
 * recorded settings reproduced the trace).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "whatif/replay_int.h"

static int before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	(void)p;
	return tlm__wi_input_record(ctx, rec);
}

static int finish(void *ctx, struct tlm__pass *p)
{
	struct wi_trace t;
	if (tlm__wi_input_finish(ctx, &t)) {
		tlm__wi_trace_free(&t);
		return -1;
	}
	char buf[400];
	int rc = 0;
	/* the renderers print the hint under the report's OOMs only */
	if (p->rep->ooms_total && !tlm__wi_hint(&t, buf, sizeof buf) && !(p->rep->whatif_hint = strdup(buf)))
		rc = -1;
	tlm__wi_trace_free(&t);
	return rc;
}

static void fini(void *ctx)
{
	tlm__wi_input_free(ctx);
}

int tlm__wi_hint_consumer(struct tlm__pass *p)
{
	struct tlm__wi_input *in = tlm__wi_input_new(tlm_reader_header(p->rd)->start_monotonic_ns);
	if (!in)
		return -1;
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = in, .before = before, .finish = finish, .fini = fini});
}
