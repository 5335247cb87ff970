/* SPDX-License-Identifier: MIT */
/*
 * fuzz_job.c - libFuzzer harness of the job reader (issue 26): one input, a
 * tlm-job/1 or tlm-report/1 JSON file or a trace (the loader sniffs which,
 * as `tlm report DIR` does), loaded as a job, compared across its ranks and
 * rendered as text, JSON and Chrome trace events. Strings from the input are
 * hostile (host names, sites): the text must reach a terminal escaped, so
 * the text rendering may hold no control byte (C0, DEL, C1) but newline
 * and tab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "job/job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	char path[64];
	snprintf(path, sizeof path, "%s", fuzz_as_file(data, size));
	char *inputs[] = {path};
	char err[512];
	memset(err, 0, sizeof err);
	struct tlm_job *j = tlm_job_load(inputs, 1, 1, err, sizeof err);
	if (!j) {
		FUZZ_CHECK(err[0] && !strchr(err, '\n')); /* refused with one line */
		return 0;
	}
	tlm_job_compare(j);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	tlm_job_text(j, f);
	if (fclose(f))
		abort();
	fuzz_check_inert_text(text, len);
	free(text);
	tlm_job_json(j, null);
	tlm_job_chrome(j, null);
	fflush(null);
	tlm_job_free(j);
	return 0;
}
