/* SPDX-License-Identifier: MIT */
/*
 * wi_hint.c - the report's what-if hint (report.h: whatif_hint), a consumer
 * of the report's pass: every record goes to a what-if stream (the
 * allocator's block requests replayed under the built-in grid of settings as
 * they are read, src/whatif/run.c), and when the run had an out-of-memory
 * error the hint names a setting that would have avoided a fragmentation OOM
 * (only where the replay under the recorded settings reproduced the trace).
 * A stream that stops (no blocks, a size limit) gives no hint, as
 * `tlm whatif` failing did; one with no OOM in its first 4 Mi events is
 * given up (its cost), and a later OOM then points to `tlm whatif`.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/pass.h"
#include "whatif/whatif.h"

/* Events the stream replays before any OOM: past them, with none so far, the
 * hint is given up (the replay runs every split limit of the grid, about
 * 1 us an event: it made the text report of a 100 M-event run without an OOM
 * take 126 s where the rest took 13 s); a later OOM's line says to run
 * `tlm whatif`, which reads the trace itself. */
#define HINT_EVENTS_BEFORE_OOM (4u << 20)

struct hint {
	struct tlm_wi_stream *s;
	bool stopped, late, saw_oom;
	uint64_t events;
};

static int before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	struct hint *h = ctx;
	char err[400];
	if (h->stopped)
		return 0;
	h->saw_oom |= p->rep->ooms_total != 0;
	if (rec->type == TLM_REC_EVENT && ++h->events > HINT_EVENTS_BEFORE_OOM && !h->saw_oom) {
		h->stopped = h->late = true;
		return 0;
	}
	if (tlm_wi_stream_record(h->s, rec, err, sizeof err))
		h->stopped = true;
	return 0;
}

static int finish(void *ctx, struct tlm__pass *p)
{
	struct hint *h = ctx;
	struct tlm_wi_report wr;
	char err[400], buf[400];
	if (h->late && p->rep->ooms_total) {
		char line[200];
		snprintf(line, sizeof line, "what-if: not replayed (the first OOM came after %u events): "
			 "run `tlm whatif TRACE`", HINT_EVENTS_BEFORE_OOM);
		return (p->rep->whatif_hint = strdup(line)) ? 0 : -1;
	}
	/* the renderers print the hint under the report's OOMs only */
	if (h->stopped || !p->rep->ooms_total || tlm_wi_stream_finish(h->s, p->rep->path, &wr, err, sizeof err))
		return 0;
	int rc = 0;
	if (!tlm_wi_oom_hint(&wr, buf, sizeof buf) && !(p->rep->whatif_hint = strdup(buf)))
		rc = -1;
	tlm_wi_report_free(&wr);
	return rc;
}

static void fini(void *ctx)
{
	struct hint *h = ctx;
	tlm_wi_stream_free(h->s);
	free(h);
}

int tlm__wi_hint_consumer(struct tlm__pass *p)
{
	struct hint *h = calloc(1, sizeof *h);
	struct tlm_wi_options o = {.device = -1};
	if (!h || !(h->s = tlm_wi_stream_new(&o, tlm_reader_header(p->rd)->start_monotonic_ns))) {
		free(h);
		return -1;
	}
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = h, .before = before, .finish = finish, .fini = fini});
}
