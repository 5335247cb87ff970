/* SPDX-License-Identifier: MIT */
/*
 * fuzz_live.c - libFuzzer harness of `tlm top` (src/live): a trace followed
 * while it is written. The input is written to a file in three appends (cut
 * at a third and five sevenths of its length: as inputs vary in length,
 * records and chunks are split anywhere); after each, the view is polled
 * until it is caught up and rendered as text, then the program is declared
 * gone (tlm_live_job_stop) and the rest is read.
 * Each input is tried as it is and with its checksums recomputed, as the
 * other trace harnesses do. Checked: every poll loop ends (a follower that
 * keeps saying "more to read" of a file that stopped growing would spin
 * forever); a view's counts and strings stay within their arrays; the text,
 * whose site labels and command line come from the trace, holds no control
 * byte (C0, DEL, C1) but newline and tab, so it reaches a terminal inert;
 * after the stop the trace has ended or failed. No crash, leak or undefined
 * behaviour: the fuzz build runs under ASan+UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "live/live.h"

static int fd = -1;
static char path[64];

static void append(const uint8_t *data, size_t from, size_t to)
{
	while (from < to) {
		ssize_t k = pwrite(fd, data + from, to - from, (off_t)from);
		if (k <= 0)
			abort();
		from += (size_t)k;
	}
}

static bool within(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

static void check_view(struct tlm_live_job *j)
{
	struct tlm_live *l = tlm_live_job_get(j, 0);
	FUZZ_CHECK(l);
	const struct tlm_live_view *v = tlm_live_view(l, TLM_LIVE_BY_GROWTH, true);
	if (!v)
		return; /* out of memory */
	FUZZ_CHECK(within(v->why, sizeof v->why) && within(v->command, sizeof v->command));
	FUZZ_CHECK(v->ndev <= TLM_LIVE_DEVS && v->nforecast <= TLM_LIVE_DEVS);
	FUZZ_CHECK(v->nsites <= TLM_LIVE_SITES && v->nsites <= v->total_sites);
	FUZZ_CHECK(!v->have_oom || within(v->oom_label, sizeof v->oom_label));
	for (size_t i = 0; i < v->ndev; i++)
		FUZZ_CHECK(v->dev[i].nhist <= TLM_LIVE_HIST);
	for (size_t i = 0; i < v->nsites; i++)
		FUZZ_CHECK(within(v->site[i].label, sizeof v->site[i].label));
}

static void check_text(struct tlm_live_job *j, enum tlm_live_sort sort)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		abort();
	tlm_live_text(f, j, sort);
	if (fclose(f))
		abort();
	fuzz_check_inert_text(text, len);
	free(text);
}

/* Polls until caught up; the file does not grow meanwhile, so a bounded
 * number of turns must do (each reads up to 64 records, and a record takes
 * at least a byte). */
static void catch_up(struct tlm_live_job *j, size_t bytes)
{
	size_t turns = 0;
	while (tlm_live_job_poll(j, 64))
		FUZZ_CHECK(++turns <= bytes / 64 + 16);
}

static void follow(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		if ((fd = memfd_create("tlm-fuzz-live", MFD_CLOEXEC)) < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0)
		abort();
	struct tlm_live_job *j = tlm_live_job_open(TLM_LIVE_FILE, path);
	if (!j)
		return; /* out of memory */
	const size_t cut[4] = {0, size / 3, size * 5 / 7, size};
	for (int k = 1; k < 4; k++) {
		append(data, cut[k - 1], cut[k]);
		catch_up(j, cut[k]);
		check_view(j);
		check_text(j, (enum tlm_live_sort)((size + (size_t)k) % TLM_LIVE_NSORT));
	}
	tlm_live_job_stop(j);
	enum tlm_live_state st = tlm_live_state(tlm_live_job_get(j, 0));
	FUZZ_CHECK(st == TLM_LIVE_ENDED || st == TLM_LIVE_FAILED);
	FUZZ_CHECK(!tlm_live_job_poll(j, 64));
	check_view(j);
	check_text(j, TLM_LIVE_BY_BYTES);
	tlm_live_job_close(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_as_is_and_repaired(data, size, follow);
	return 0;
}
