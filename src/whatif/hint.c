/* SPDX-License-Identifier: MIT */
/*
 * hint.c - the one line `tlm report` adds under an OOM caused by
 * fragmentation when a replayed setting would have avoided it.
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
		if (!frag || d->best < 0 || d->res[d->best].nooms >= r0->nooms)
			continue;
		snprintf(buf, len, "what-if (dev %d): %s (tlm whatif)", d->device, d->recommendation);
		rc = 0;
	}
	tlm_wi_report_free(&r);
	return rc;
}
