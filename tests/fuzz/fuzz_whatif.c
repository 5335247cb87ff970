/* SPDX-License-Identifier: MIT */
/*
 * fuzz_whatif.c - libFuzzer harness of `tlm whatif` (issue 26): the trace
 * read as one stream into every setting's allocator model, then the text and
 * JSON renderings and the report's one-line OOM hint. Each input is tried as
 * it is and with its checksums recomputed (as fuzz_reader), so mutations
 * reach the classifier and the models. A refusal must be one line; whatever
 * the input, the replay's memory is bounded by its own size limit, which
 * libFuzzer's -rss_limit_mb checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "whatif/whatif.h"

static void whatif_all(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	const char *path = fuzz_as_file(data, size);
	struct tlm_wi_options o;
	memset(&o, 0, sizeof o);
	o.device = -1;
	struct tlm_wi_report r;
	memset(&r, 0, sizeof r);
	char err[512];
	memset(err, 0, sizeof err);
	char hint[512];
	if (tlm_wi_run(path, &o, &r, err, sizeof err) == 0) {
		tlm_wi_render_text(&r, null);
		tlm_wi_render_json(&r, null);
		if (tlm_wi_oom_hint(&r, hint, sizeof hint) == 0) /* the report's one-line hint, from this replay */
			FUZZ_CHECK(memchr(hint, 0, sizeof hint) != NULL);
	} else {
		FUZZ_CHECK(err[0] && !strchr(err, '\n')); /* refused with one line */
	}
	tlm_wi_report_free(&r);
	fflush(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_as_is_and_repaired(data, size, whatif_all);
	return 0;
}
