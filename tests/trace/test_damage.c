/* SPDX-License-Identifier: MIT */
/*
 * test_damage.c - recovery rules: a file cut at every byte offset, a byte
 * flipped anywhere in any chunk, garbage before, between and after chunks,
 * and bad headers give exactly the documented outcome; random mutations never
 * crash or hang the reader.
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

#define MAXCHUNKS 4096

/* A small trace and its layout, built once per compression setting. */
struct fixture {
	struct membuf m;
	struct expect x;
	size_t hdr;                    /* header bytes */
	size_t nchunks;
	size_t off[MAXCHUNKS + 1];     /* chunk offsets; off[nchunks] = file length */
	size_t first_rec[MAXCHUNKS + 1]; /* index of a chunk's first record */
	size_t end_chunk;              /* chunk holding END */
	char *path;
	struct tlm_record *recs;       /* the expected records, in order */
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void build(struct fixture *f, int compress)
{
	memset(f, 0, sizeof *f);
	f->x = (struct expect){.n = 300, .late = 5, .edge = 20, .with_end = 1};
	assert_int_equal(expect_write(f->x, &f->m, 256, compress), 0);
	f->hdr = 16 + le32(f->m.p + 12) + 4;
	size_t o = f->hdr;
	while (o < f->m.len) {
		assert_true(f->nchunks < MAXCHUNKS);
		f->off[f->nchunks++] = o;
		o += 40 + le32(f->m.p + o + 4);
	}
	assert_true(o == f->m.len);
	f->off[f->nchunks] = o;
	f->path = tt_tmpfile(f->m.p, f->m.len);
	struct expect x = f->x;
	f->recs = malloc(expect_total(&x) * sizeof *f->recs);
	for (uint64_t i = 0; i < expect_total(&x); i++)
		expect_next(&x, &f->recs[i]);

	/* Which records each chunk holds, from a clean read. */
	struct tlm_reader *r = tlm_reader_open(f->path, NULL, 0);
	assert_non_null(r);
	struct tlm_record *rec = malloc(sizeof *rec);
	size_t i = 0, k = 0;
	while (tlm_reader_next(r, rec)) {
		while (k < f->nchunks && f->off[k] <= rec->offset) {
			f->first_rec[k] = i;
			k++;
		}
		assert_true(f->off[k - 1] == rec->offset);
		if (rec->type == TLM_REC_END)
			f->end_chunk = k - 1;
		i++;
	}
	assert_true(k == f->nchunks && i == expect_total(&f->x));
	f->first_rec[f->nchunks] = i;
	assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	free(rec);
	tlm_reader_close(r);
	assert_true(f->nchunks > 10);
	assert_true(f->end_chunk + 1 < f->nchunks); /* late events follow END */
}

static void teardown_fixture(struct fixture *f)
{
	unlink(f->path);
	free(f->path);
	free(f->m.p);
	free(f->recs);
}

static size_t g_signals; /* SIGNAL records the last read_expect() returned */

/* The state a trace without a partial chunk ends in. */
static enum tlm_trace_state unpartial_state(int end_seen)
{
	return end_seen ? TLM_TRACE_CLEAN : g_signals ? TLM_TRACE_SIGNAL : TLM_TRACE_TRUNCATED;
}

static int in_chunk(const struct fixture *f, size_t k, size_t i)
{
	return k != SIZE_MAX && i >= f->first_rec[k] && i < f->first_rec[k + 1];
}

/* Reads path expecting exactly the records of the fixture except those of
 * chunk `skip` (or none if skip == SIZE_MAX) and beyond record index `upto`.
 * Returns the reader for further checks. */
static struct tlm_reader *read_expect(struct fixture *f, const char *path, size_t skip, size_t upto)
{
	char err[256];
	struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("open: %s", err);
	struct tlm_record *got = malloc(sizeof *got);
	const struct tlm_record *want = NULL;
	size_t i = 0; /* expected records generated so far */
	g_signals = 0;
	while (tlm_reader_next(r, got)) {
		for (;;) {
			if (i >= upto)
				fail_msg("more records than expected");
			want = &f->recs[i];
			int skipped = in_chunk(f, skip, i++);
			if (!skipped)
				break;
		}
		if (!tt_equal(got, want))
			fail_msg("record %zu differs", i - 1);
		g_signals += got->type == TLM_REC_SIGNAL;
	}
	for (; i < upto; i++)
		if (!in_chunk(f, skip, i))
			fail_msg("record %zu missing", i);
	free(got);
	return r;
}

static void truncate_everywhere(int compress)
{
	struct fixture f;
	build(&f, compress);
	char *path = tt_tmpfile("", 0);
	char err[256], want[256];
	size_t k = 0; /* complete chunks in the cut file */
	for (size_t cut = 0; cut <= f.m.len; cut++) {
		tt_rewrite(path, f.m.p, cut);
		if (cut < f.hdr) {
			assert_null(tlm_reader_open(path, err, sizeof err));
			if (cut == 0)
				snprintf(want, sizeof want, "not a tlm trace (empty file)");
			else if (cut < 8)
				snprintf(want, sizeof want, "truncated header: expected 8 bytes at offset 0, file has %zu", cut);
			else if (cut < 16)
				snprintf(want, sizeof want, "truncated header: expected 8 bytes at offset 8, file has %zu", cut - 8);
			else
				snprintf(want, sizeof want, "truncated header: expected %zu bytes at offset 8, file has %zu",
					 f.hdr - 8, cut - 8);
			assert_string_equal(err, want);
			continue;
		}
		while (k < f.nchunks && f.off[k + 1] <= cut)
			k++;
		struct tlm_reader *r = read_expect(&f, path, SIZE_MAX, f.first_rec[k]);
		assert_int_equal(tlm_reader_errors(r, NULL), 0);
		uint64_t toff = 0;
		const char *msg = tlm_reader_truncation(r, &toff);
		if (cut == f.off[k]) {
			/* Cut on a chunk boundary: nothing partial. */
			assert_null(msg);
			assert_int_equal(tlm_reader_state(r), unpartial_state(k > f.end_chunk));
		} else {
			size_t have = cut - f.off[k];
			size_t need = have < 8 ? 40 : f.off[k + 1] - f.off[k];
			snprintf(want, sizeof want, "truncated at offset %zu: last chunk incomplete (%zu of %zu bytes)",
				 f.off[k], have, need);
			assert_non_null(msg);
			assert_string_equal(msg, want);
			assert_true(toff == f.off[k]);
			assert_int_equal(tlm_reader_state(r), TLM_TRACE_TRUNCATED);
		}
		tlm_reader_close(r);
	}
	unlink(path);
	free(path);
	teardown_fixture(&f);
}

static void test_truncate_raw(void **state)
{
	(void)state;
	truncate_everywhere(0);
}

static void test_truncate_zstd(void **state)
{
	(void)state;
	truncate_everywhere(1);
}

static void flip_everywhere(int compress)
{
	struct fixture f;
	build(&f, compress);
	char *path = tt_tmpfile("", 0);
	uint8_t *buf = malloc(f.m.len);
	static const uint8_t masks[] = {0x01, 0x80, 0xff};
	for (size_t k = 0; k < f.nchunks; k++)
		for (size_t b = f.off[k]; b < f.off[k + 1]; b++)
			for (size_t mi = 0; mi < sizeof masks; mi++) {
				memcpy(buf, f.m.p, f.m.len);
				buf[b] ^= masks[mi];
				tt_rewrite(path, buf, f.m.len);
				struct tlm_reader *r = read_expect(&f, path, k, expect_total(&f.x));
				const struct tlm_integrity_error *errs;
				size_t ne = tlm_reader_errors(r, &errs);
				if (ne == 0 && k == f.nchunks - 1 && b < f.off[k] + 8) {
					/* The last chunk's length grew past the end of the
					 * file: indistinguishable from a cut file. */
					uint64_t toff;
					assert_non_null(tlm_reader_truncation(r, &toff));
					assert_true(toff == f.off[k]);
				} else {
					if (ne != 1)
						fail_msg("chunk %zu byte %zu: %zu errors", k, b - f.off[k], ne);
					assert_true(errs[0].offset == f.off[k]);
					assert_int_equal(tlm_reader_state(r), unpartial_state(k != f.end_chunk));
				}
				tlm_reader_close(r);
			}
	free(buf);
	unlink(path);
	free(path);
	teardown_fixture(&f);
}

static void test_flip_raw(void **state)
{
	(void)state;
	flip_everywhere(0);
}

static void test_flip_zstd(void **state)
{
	(void)state;
	flip_everywhere(1);
}

static void open_error(const void *buf, size_t len, const char *want, int prefix_only)
{
	char err[256];
	char *path = tt_tmpfile(buf, len);
	assert_null(tlm_reader_open(path, err, sizeof err));
	if (prefix_only)
		assert_memory_equal(err, want, strlen(want));
	else
		assert_string_equal(err, want);
	unlink(path);
	free(path);
}

static void test_bad_headers(void **state)
{
	(void)state;
	struct fixture f;
	build(&f, 0);
	size_t len = f.m.len;
	uint8_t *buf = malloc(len + 64);

	memcpy(buf, "GARBAGE!", 8);
	memcpy(buf + 8, f.m.p, len);
	open_error(buf, len + 8, "not a tlm trace (bad magic at offset 0)", 0);

	memcpy(buf, f.m.p, len);
	buf[3] ^= 0x20;
	open_error(buf, len, "not a tlm trace (bad magic at offset 0)", 0);
	open_error("TLMX", 4, "not a tlm trace (bad magic at offset 0)", 0);

	memcpy(buf, f.m.p, len);
	buf[8] = 7;
	open_error(buf, len, "unsupported trace version 7 (this tlm reads version 1)", 0);
	open_error(buf, 12, "unsupported trace version 7 (this tlm reads version 1)", 0);

	memcpy(buf, f.m.p, len);
	buf[12] = buf[13] = buf[14] = buf[15] = 0xff;
	open_error(buf, len, "bad header length 4294967295 at offset 12 (limit 2097152)", 0);

	memcpy(buf, f.m.p, len);
	buf[40] ^= 1;
	open_error(buf, len, "header checksum mismatch at offset", 1);

	open_error("", 0, "not a tlm trace (empty file)", 0);

	char err[256];
	assert_null(tlm_reader_open("/nonexistent/x.trace", err, sizeof err));
	assert_string_equal(err, "cannot open: No such file or directory");
	assert_null(tlm_reader_open("/", err, sizeof err)); /* refused before reading (src/common/input.h) */
	assert_string_equal(err, "not a regular file (a directory)");
	assert_null(tlm_reader_open("/dev/zero", err, sizeof err));
	assert_string_equal(err, "not a regular file (a character device)");
	free(buf);
	teardown_fixture(&f);
}

/* A decompression bomb: a compressed chunk declaring over 1024 raw bytes per
 * byte on disk is refused (one error naming the ratio, no record from it); the
 * chunks around it are read. */
static void test_bomb_chunk(void **state)
{
	(void)state;
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 4u << 20, 1, NULL);
	struct tlm_event e = {.time_ns = 2000000000ULL, .addr = 0x1000, .size = 16, .op = TLM_OP_ALLOC,
			      .kind = TLM_KIND_DEVICE};
	tlm_tw_event(w, &e);
	tlm_tw_flush(w); /* a good chunk */
	for (int i = 0; i < 2000000; i++) /* ~4 MiB of one repeated event: a few KB on disk */
		tlm_tw_event(w, &e);
	tlm_tw_flush(w);
	e.addr = 0x2000;
	tlm_tw_event(w, &e);
	tlm_tw_end(w, 3000000000ULL); /* a good chunk */
	tlm_tw_close(w);
	assert_true(m.len < 16384);
	char *path = tt_tmpfile(m.p, m.len);
	char err[256];
	struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
	assert_non_null(r);
	static struct tlm_record rec;
	uint64_t events = 0, ends = 0;
	while (tlm_reader_next(r, &rec)) {
		events += rec.type == TLM_REC_EVENT;
		ends += rec.type == TLM_REC_END;
	}
	assert_int_equal(events, 2);
	assert_int_equal(ends, 1);
	const struct tlm_integrity_error *errs;
	assert_int_equal(tlm_reader_errors(r, &errs), 1);
	const char *want = "bad chunk header (chunk declares ";
	assert_memory_equal(errs[0].what, want, strlen(want));
	assert_non_null(strstr(errs[0].what, "on disk, over 1024:1)"));
	tlm_reader_close(r);
	unlink(path);
	free(path);
	free(m.p);
}

/* Bytes inserted between two chunks, or appended after the last. */
static void test_garbage_between(void **state)
{
	(void)state;
	struct fixture f;
	build(&f, 1);
	size_t at = f.off[5], glen = 100;
	uint8_t *buf = malloc(f.m.len + glen);
	memcpy(buf, f.m.p, at);
	for (size_t i = 0; i < glen; i++)
		buf[at + i] = (uint8_t)(i * 37 + 11);
	memcpy(buf + at + 20, "TLMK\x10\x00\x00\x00", 8); /* a false chunk start */
	memcpy(buf + at + glen, f.m.p + at, f.m.len - at);
	char *path = tt_tmpfile(buf, f.m.len + glen);
	struct tlm_reader *r = read_expect(&f, path, SIZE_MAX, expect_total(&f.x));
	const struct tlm_integrity_error *errs;
	assert_int_equal(tlm_reader_errors(r, &errs), 1);
	assert_true(errs[0].offset == at);
	char want[160];
	snprintf(want, sizeof want, "bad chunk magic, resynchronised at offset %zu", at + glen);
	assert_string_equal(errs[0].what, want);
	assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	tlm_reader_close(r);

	/* Trailing garbage after the last chunk. */
	memcpy(buf, f.m.p, f.m.len);
	memset(buf + f.m.len, 'x', 10);
	tt_rewrite(path, buf, f.m.len + 10);
	r = read_expect(&f, path, SIZE_MAX, expect_total(&f.x));
	assert_int_equal(tlm_reader_errors(r, &errs), 1);
	assert_true(errs[0].offset == f.m.len);
	assert_string_equal(errs[0].what, "bad chunk magic, no valid chunk after it");
	assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
	tlm_reader_close(r);

	/* Two damaged chunks in a row: one error each. */
	memcpy(buf, f.m.p, f.m.len);
	buf[f.off[3] + 50] ^= 1;
	buf[f.off[4] + 50] ^= 1;
	tt_rewrite(path, buf, f.m.len);
	r = tlm_reader_open(path, NULL, 0);
	struct tlm_record rec;
	while (tlm_reader_next(r, &rec))
		assert_true(rec.offset != f.off[3] && rec.offset != f.off[4]);
	assert_int_equal(tlm_reader_errors(r, &errs), 2);
	assert_true(errs[0].offset == f.off[3] && errs[1].offset == f.off[4]);
	assert_memory_equal(errs[0].what, "chunk checksum mismatch (expected 0x", 35);
	tlm_reader_close(r);

	unlink(path);
	free(path);
	free(buf);
	teardown_fixture(&f);
}

/* Random mutations: the reader must neither crash nor hang nor overread
 * (run under ASan). */
static void test_mutations(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		struct fixture f;
		build(&f, c);
		uint8_t *buf = malloc(f.m.len + 256);
		char *path = tt_tmpfile("", 0);
		uint64_t s = 12345 + (uint64_t)c;
		struct tlm_record *rec = malloc(sizeof *rec);
		for (int it = 0; it < 1500; it++) {
			size_t len = f.m.len;
			memcpy(buf, f.m.p, len);
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			int nflip = 1 + (int)(s >> 60);
			for (int i = 0; i < nflip; i++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				/* Mostly past the header, so chunk decoding is exercised. */
				size_t pos = (it % 10 ? f.hdr : 0) + (size_t)(s >> 33) % (len - (it % 10 ? f.hdr : 0));
				buf[pos] = (uint8_t)(s >> 13);
			}
			if (it % 3 == 0)
				len -= (size_t)(s >> 40) % (len / 2);
			tt_rewrite(path, buf, len);
			struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
			if (!r)
				continue;
			uint64_t n = 0;
			while (tlm_reader_next(r, rec))
				assert_true(++n < 100000);
			const struct tlm_integrity_error *errs;
			size_t ne = tlm_reader_errors(r, &errs);
			for (size_t i = 0; i < ne; i++)
				assert_true(errs[i].offset < len);
			tlm_reader_close(r);
		}
		free(rec);
		free(buf);
		unlink(path);
		free(path);
		teardown_fixture(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_bomb_chunk),
		cmocka_unit_test(test_truncate_raw),
		cmocka_unit_test(test_truncate_zstd),
		cmocka_unit_test(test_flip_raw),
		cmocka_unit_test(test_flip_zstd),
		cmocka_unit_test(test_garbage_between),
		cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
