/* SPDX-License-Identifier: MIT */
/*
 * hint.c - the one line `tlm report` adds under an OOM caused by
 * fragmentation when a replayed setting would have avoided it: only when
 * the replay under the recorded settings reproduced the trace, so a trace
 * of another allocator (or a model gap) never gets advice.
 */
#include <stdio.h>
#include <string.h>

#include "whatif/whatif.h"

int tlm_wi_oom_hint(const char *path, char *buf, size_t len)
{
	struct tlm_wi_options o = {.device = -1};
	struct tlm_wi_report r;
	char err[256];
	if (!path || tlm_wi_run(path, &o, &r, err, sizeof err))
		return -1;
	int rc = -1;
	for (size_t i = 0; i < r.ndev && rc; i++) {
		const struct tlm_wi_device *d = &r.dev[i];
		const struct tlm_wi_result *r0 = &d->res[0];
		bool frag = false;
		for (uint64_t k = 0; k < r0->nooms && k < TLM_WI_MAX_OOMS; k++)
			frag |= r0->oom[k].fragmentation;
		/* only when the model reproduces the recorded run */
		if (!frag || d->best < 0 || d->res[d->best].nooms >= r0->nooms || !d->check.done || d->check.mismatches)
			continue;
		const struct tlm_wi_result *b = &d->res[d->best];
		char x[48], y[48];
		tlm_wi_human_pair(x, y, sizeof x, r0->peak_reserved, b->peak_reserved);
		snprintf(buf, len, "what-if: %s avoids %s (peak reserved %s -> %s; tlm whatif)", b->label,
			 b->nooms ? "some" : r0->nooms == 1 ? "it" : "them", x, y);
		rc = 0;
	}
	tlm_wi_report_free(&r);
	return rc;
}
