/* SPDX-License-Identifier: MIT */
/*
 * fuzz_diff.c - libFuzzer harness of `tlm diff`'s JSON input path: the strict
 * JSON reader (json_in), the loader of tlm-report/1 documents into diff sides
 * (tlm_diff_load_json), the matching (tlm_diff_compute) and the text, JSON
 * and gate renderings, written to memory streams.
 *
 * One input holds both sides: BASE is the bytes before the first 0 byte, NEW
 * those after it. An input without a 0 byte is diffed against itself, which
 * must find every site and device unchanged. A side that does not load must
 * be refused with one line of printable ASCII; the diff's JSON must read
 * back with the strict reader, and its text must be printable lines of at
 * most 100 columns. A violated invariant traps (a crash for libFuzzer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "fuzz_input.h"

static bool load(const char *path, const uint8_t *data, size_t size, struct tlm_diff_side *s)
{
	char err[256];
	memset(err, 0, sizeof err);
	if (tlm_diff_load_json(path, (const char *)data, size, s, err, sizeof err) == 0)
		return true;
	fuzz_check_line(err, sizeof err);
	return false;
}

/* Text output: lines of printable ASCII within the width; the count of
 * changed sites left out of a table is at most the number of sites. */
static void check_text(const char *t, size_t n, size_t sites)
{
	FUZZ_CHECK(strlen(t) == n);
	for (const char *p = t; *p;) {
		const char *e = strchr(p, '\n');
		FUZZ_CHECK(e); /* every line ends */
		FUZZ_CHECK(e - p <= 100);
		unsigned long long more;
		if (!strncmp(p, "  ... ", 6) && sscanf(p + 6, "%llu more changed", &more) == 1)
			FUZZ_CHECK(more > 0 && more <= sites);
		for (; p < e; p++)
			FUZZ_CHECK(*p >= 0x20 && *p < 0x7f);
		p = e + 1;
	}
}

static void check_json(const char *t, size_t n)
{
	char err[256];
	struct tlm_jv *v = tlm_json_parse(t, n, err, sizeof err);
	FUZZ_CHECK(v);
	FUZZ_CHECK(!strcmp(tlm_jv_str(tlm_jv_get(v, "schema")) ? tlm_jv_str(tlm_jv_get(v, "schema")) : "",
		      TLM_DIFF_SCHEMA));
	tlm_json_free(v);
}

/* Runs a renderer into a memory stream and checks what it wrote. */
static void render(const struct tlm_diff *d, int what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	int rc = 0;
	if (what == 0)
		rc = tlm_diff_text(d, f);
	else if (what == 1)
		rc = tlm_diff_json(d, f);
	else
		tlm_diff_gate_message(d, f);
	FUZZ_CHECK(rc == 0);
	if (fclose(f))
		abort();
	if (what == 0)
		check_text(buf, len, d->nleaks > d->nlive ? (d->nleaks > d->npeak ? d->nleaks : d->npeak)
							    : (d->nlive > d->npeak ? d->nlive : d->npeak));
	else if (what == 1)
		check_json(buf, len);
	else
		for (size_t i = 0; i < len; i++)
			FUZZ_CHECK(buf[i] == '\n' || (buf[i] >= 0x20 && buf[i] < 0x7f));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *z = memchr(data, 0, size);
	size_t nb = z ? (size_t)(z - data) : size;
	const uint8_t *a = z ? z + 1 : data;
	size_t na = z ? size - nb - 1 : size;

	struct tlm_diff_side base, new_;
	bool hb = load("base.json", data, nb, &base);
	bool hn = load("new.json", a, na, &new_);
	if (!z)
		FUZZ_CHECK(hb == hn); /* one document: it loads twice or never */
	if (hb && hn) {
		/* the gate's threshold: a few input bytes, so it both passes and fails */
		uint64_t gate_bytes = 0;
		for (size_t i = 0; i < 3 && i < size; i++)
			gate_bytes = gate_bytes << 8 | data[size - 1 - i];
		struct tlm_diff d;
		if (tlm_diff_compute(&base, &new_, size & 1, gate_bytes, &d) == 0) {
			if (size & 2)
				tlm_diff_peak_gate(&d, gate_bytes >> 4);
			if (!z) { /* a run against itself: nothing changed */
				FUZZ_CHECK(d.leak_growth == 0 && !d.failed && !d.peak_failed);
				for (size_t i = 0; i < d.npeak; i++)
					FUZZ_CHECK(d.peak[i].status == TLM_DIFF_SAME && d.peak[i].delta_bytes == 0);
				for (size_t i = 0; i < d.nleaks; i++)
					FUZZ_CHECK(d.leaks[i].status == TLM_DIFF_SAME && d.leaks[i].delta_bytes == 0);
				for (size_t i = 0; i < d.nlive; i++)
					FUZZ_CHECK(d.live[i].status == TLM_DIFF_SAME && d.live[i].delta_count == 0);
				for (size_t i = 0; i < d.ndev; i++)
					FUZZ_CHECK(d.dev[i].before && d.dev[i].after);
			}
			render(&d, 0);
			render(&d, 1);
			render(&d, 2);
			tlm_diff_free(&d);
		}
	}
	if (hb)
		tlm_diff_side_free(&base);
	if (hn)
		tlm_diff_side_free(&new_);
	return 0;
}
