/* SPDX-License-Identifier: MIT */
/*
 * test_follow.c - the reader in follow mode (tlm top): a trace read while it
 * is written, the file growing by a few bytes or a few chunks at a time, cut
 * anywhere (inside a chunk header, inside a payload, on a boundary), gives
 * every record exactly once, in order, and no error; the wait concludes
 * nothing (no truncation, no damage) until follow mode is turned off, and
 * then the state is the one an ordinary reader gives on that file. Damage in
 * the middle, with the next chunk appended later, is one integrity error.
 * Random damage (a byte flipped, a tail cut), grown in random steps: the
 * same records, state and number of integrity errors as a plain reader of
 * the final file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "expect.h"
#include "tt.h"

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void append(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	assert_true(!len || fwrite(p, 1, len, f) == len);
	assert_int_equal(fclose(f), 0);
}

/* Reads until TLM_READER_AGAIN (or the end), checking each record against
 * the expected sequence; returns what the last call returned. */
static int drain(struct tlm_reader *r, struct expect *x, struct tlm_record *got, struct tlm_record *want, size_t *n)
{
	int k;
	while ((k = tlm_reader_next(r, got)) == 1) {
		assert_true(*n < expect_total(x));
		expect_next(x, want);
		assert_true(tt_equal(got, want));
		assert_int_equal(got->seq, want->seq);
		(*n)++;
	}
	return k;
}

/* The file grows by `step` bytes at a time (after the header); the reader
 * follows. with_end: the trace ends cleanly, else it stops at cut. */
static void grow(int compress, size_t step, int with_end, size_t cut_back)
{
	struct membuf m = {0};
	struct expect x = {.n = 400, .late = with_end ? 3 : 0, .edge = 10, .with_end = with_end};
	assert_int_equal(expect_write(x, &m, 512, compress), 0);
	size_t hdr = 16 + le32(m.p + 12) + 4, total = m.len - cut_back;
	char *path = tt_tmpfile(m.p, hdr);
	struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
	assert_non_null(r);
	tlm_reader_follow(r, true);
	struct tlm_record *got = malloc(sizeof *got), *want = malloc(sizeof *want);
	size_t n = 0;
	x.j = x.events = x.lost = 0;
	assert_int_equal(drain(r, &x, got, want, &n), TLM_READER_AGAIN);
	for (size_t off = hdr; off < total; off += step) {
		size_t k = off + step <= total ? step : total - off;
		append(path, m.p + off, k);
		assert_int_equal(drain(r, &x, got, want, &n), TLM_READER_AGAIN);
		/* waiting concludes nothing */
		assert_int_equal(tlm_reader_errors(r, NULL), 0);
		assert_null(tlm_reader_truncation(r, NULL));
	}
	assert_int_equal(tlm_reader_offset(r) <= total, 1);
	tlm_reader_follow(r, false);
	assert_int_equal(drain(r, &x, got, want, &n), 0);
	assert_int_equal(tlm_reader_errors(r, NULL), 0);
	/* the same outcome as an ordinary reader of the file as it is */
	struct tlm_reader *o = tlm_reader_open(path, NULL, 0);
	assert_non_null(o);
	size_t on = 0;
	while (tlm_reader_next(o, got) == 1)
		on++;
	assert_int_equal(on, n);
	assert_int_equal(tlm_reader_state(o), tlm_reader_state(r));
	const char *tr = tlm_reader_truncation(r, NULL), *to = tlm_reader_truncation(o, NULL);
	assert_true((!tr && !to) || (tr && to && !strcmp(tr, to)));
	if (with_end && !cut_back) {
		assert_int_equal(n, expect_total(&x));
		assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	} else if (cut_back) {
		assert_int_equal(tlm_reader_state(r), TLM_TRACE_TRUNCATED);
		assert_non_null(tr);
	} else {
		assert_int_not_equal(tlm_reader_state(r), TLM_TRACE_CLEAN); /* generated SIGNAL records: SIGNAL */
	}
	tlm_reader_close(o);
	tlm_reader_close(r);
	unlink(path);
	free(path);
	free(got);
	free(want);
	free(m.p);
}

static void t_grow_bytes(void **s)
{
	(void)s;
	for (int c = 0; c <= 1; c++) {
		grow(c, 1, 1, 0);   /* every cut position */
		grow(c, 7, 1, 0);
		grow(c, 333, 1, 0);
		grow(c, 4096, 1, 0);
	}
}

static void t_grow_truncated(void **s)
{
	(void)s;
	/* the writer died inside its last chunk: a wait, then (follow off) a truncation */
	for (int c = 0; c <= 1; c++) {
		grow(c, 97, 0, 0);
		grow(c, 97, 1, 5);
		grow(c, 97, 1, 41);
	}
}

/* A chunk damaged in the middle of a growing trace: the reader waits after
 * it while nothing follows, then resynchronises on the next chunk once it is
 * written: one integrity error, every other record once. */
static void t_damage_then_grow(void **s)
{
	(void)s;
	struct membuf m = {0};
	struct expect x = {.n = 300, .edge = 0, .with_end = 1};
	assert_int_equal(expect_write(x, &m, 256, 0), 0);
	size_t hdr = 16 + le32(m.p + 12) + 4;
	size_t c1 = hdr + 40 + le32(m.p + hdr + 4); /* second chunk */
	size_t c2 = c1 + 40 + le32(m.p + c1 + 4);   /* third */
	m.p[c1 + 45] ^= 0x40;                        /* damage the second chunk's payload */
	char *path = tt_tmpfile(m.p, c2);
	struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
	assert_non_null(r);
	tlm_reader_follow(r, true);
	struct tlm_record *rec = malloc(sizeof *rec);
	size_t n = 0;
	int k;
	while ((k = tlm_reader_next(r, rec)) == 1)
		n++;
	assert_int_equal(k, TLM_READER_AGAIN);
	size_t first = n;
	assert_int_equal(tlm_reader_errors(r, NULL), 0); /* nothing after it yet: not concluded */
	append(path, m.p + c2, m.len - c2);
	while ((k = tlm_reader_next(r, rec)) == 1)
		n++;
	assert_int_equal(k, TLM_READER_AGAIN);
	const struct tlm_integrity_error *e;
	assert_int_equal(tlm_reader_errors(r, &e), 1);
	assert_int_equal(e[0].offset, c1);
	assert_true(n > first);
	tlm_reader_follow(r, false);
	while (tlm_reader_next(r, rec) == 1)
		n++;
	assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	assert_int_equal(tlm_reader_errors(r, NULL), 1);
	tlm_reader_close(r);
	unlink(path);
	free(path);
	free(rec);
	free(m.p);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* All records of a reader, and its outcome. */
static size_t read_all(struct tlm_reader *r, struct tlm_record *recs, size_t max, int follow_done)
{
	size_t n = 0;
	int k;
	while ((k = tlm_reader_next(r, &recs[n < max ? n : max - 1])) == 1)
		n++;
	assert_int_equal(k, follow_done ? TLM_READER_AGAIN : 0);
	return n;
}

static void t_random(void **s)
{
	(void)s;
	struct membuf m = {0};
	struct expect x = {.n = 200, .edge = 10, .with_end = 1};
	assert_int_equal(expect_write(x, &m, 300, 1), 0);
	size_t hdr = 16 + le32(m.p + 12) + 4, max = expect_total(&x) + 16;
	struct tlm_record *a = malloc(max * sizeof *a), *b = malloc(max * sizeof *b);
	uint8_t *d = malloc(m.len);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 300; round++) {
		memcpy(d, m.p, m.len);
		size_t len = m.len - (rnd(&seed) % 3 ? 0 : rnd(&seed) % (m.len - hdr));
		if (round % 4)
			d[hdr + rnd(&seed) % (len - hdr)] ^= (uint8_t)(1u << (rnd(&seed) % 8));
		char *path = tt_tmpfile(d, hdr);
		struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
		assert_non_null(r);
		tlm_reader_follow(r, true);
		size_t na = 0;
		for (size_t off = hdr; off < len;) {
			size_t k = 1 + rnd(&seed) % 700;
			if (k > len - off)
				k = len - off;
			append(path, d + off, k);
			off += k;
			na += read_all(r, a + na, max - na, 1);
		}
		tlm_reader_follow(r, false);
		na += read_all(r, a + na, max - na, 0);
		struct tlm_reader *o = tlm_reader_open(path, NULL, 0);
		assert_non_null(o);
		size_t nb = read_all(o, b, max, 0);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++) {
			assert_true(tt_equal(&a[i], &b[i]));
			assert_int_equal(a[i].seq, b[i].seq);
		}
		assert_int_equal(tlm_reader_state(r), tlm_reader_state(o));
		assert_int_equal(tlm_reader_errors(r, NULL), tlm_reader_errors(o, NULL));
		tlm_reader_close(o);
		tlm_reader_close(r);
		unlink(path);
		free(path);
	}
	free(a);
	free(b);
	free(d);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_grow_bytes),
		cmocka_unit_test(t_grow_truncated),
		cmocka_unit_test(t_damage_then_grow),
		cmocka_unit_test(t_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
