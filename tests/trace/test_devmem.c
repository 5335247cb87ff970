/* SPDX-License-Identifier: MIT */
/*
 * test_devmem.c - DEVMEM and DEVPROCS records (the device's own view of its
 * memory): exact round trips with edge values, their place after the event
 * they were taken with (seq), the writer's clamp of n, and every decode
 * error a damaged record with a right checksum can give. CLOCK records (the
 * wall clock set during the run, on the same clock as the samples): exact
 * round trips with edge values, among them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "tt.h"

static struct tlm_reader *open_mem(const struct membuf *m, char **path)
{
	*path = tt_tmpfile(m->p, m->len);
	struct tlm_reader *r = tlm_reader_open(*path, NULL, 0);
	assert_non_null(r);
	return r;
}

static void done(struct tlm_reader *r, char *path, struct membuf *m)
{
	tlm_reader_close(r);
	unlink(path);
	free(path);
	free(m->p);
}

static void test_roundtrip(void **state)
{
	(void)state;
	static const struct tlm_rec_devmem dm[] = {
		{0, 0, TLM_DEVMEM_START, 0, 1000, 80ULL << 30, (80ULL << 30) - (8u << 20)},
		{1, 3, TLM_DEVMEM_PEAK, TLM_DEVMEM_F_BEFORE, 2000, 16ULL << 30, 0},
		{2, -1, TLM_DEVMEM_OOM, 0, UINT64_MAX, UINT64_MAX, UINT64_MAX},
		{UINT32_MAX, INT32_MIN, TLM_DEVMEM_EXIT, UINT32_MAX, 0, 0, 0},
		{7, INT32_MAX, 9 /* a reason a later version may add: kept */, 2, 1, 1, 1},
	};
	static struct tlm_rec_devprocs dp[4];
	dp[0] = (struct tlm_rec_devprocs){.sample = 0, .device = 0, .status = 0, .time_ns = 1500, .n = 3};
	dp[0].p[0].pid = 4242, dp[0].p[0].used = 24u << 20;
	dp[0].p[1].pid = 1, dp[0].p[1].used = UINT64_MAX; /* NVML: not available */
	dp[0].p[2].pid = UINT32_MAX, dp[0].p[2].used = 0;
	dp[1] = (struct tlm_rec_devprocs){.sample = 1, .device = 3, .status = TLM_DEVPROCS_NO_NVML, .time_ns = 2500};
	dp[2] = (struct tlm_rec_devprocs){.sample = 2, .device = -1, .status = 3 /* NOT_SUPPORTED */, .time_ns = 3};
	dp[3] = (struct tlm_rec_devprocs){.sample = UINT32_MAX, .device = INT32_MIN, .status = INT32_MIN,
					  .time_ns = UINT64_MAX, .n = TLM_MAX_DEVPROCS};
	for (uint32_t k = 0; k < TLM_MAX_DEVPROCS; k++)
		dp[3].p[k].pid = 100000 + k, dp[3].p[k].used = (uint64_t)k << 32 | k;
	static const struct tlm_rec_clock ck[] = {
		{1000, 1700000000000000000ULL}, {1001, 1700000003600000000ULL}, {2000, 0}, {UINT64_MAX, UINT64_MAX}, {0, 1},
	};

	for (int c = 0; c < 2; c++)
		for (size_t chunk = 64; chunk <= 65536; chunk *= 1024) {
			struct membuf m = {0};
			struct tlm_trace_header h;
			tt_header(&h);
			struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, chunk, c, NULL);
			assert_non_null(w);
			struct tlm_event ev = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .addr = 0x7f0000000000,
					       .size = 1 << 20, .time_ns = 900, .device_free = 123};
			for (size_t i = 0; i < 5; i++) {
				/* an event, then its sample, then (for the first four) NVML's answer, then a clock setting */
				assert_int_equal(tlm_tw_event(w, &ev), 0);
				assert_int_equal(tlm_tw_devmem(w, &dm[i]), 0);
				if (i < 4)
					assert_int_equal(tlm_tw_devprocs(w, &dp[i]), 0);
				assert_int_equal(tlm_tw_clock(w, &ck[i]), 0);
			}
			assert_int_equal(tlm_tw_end(w, 9), 0);
			tlm_tw_close(w);

			char *path;
			struct tlm_reader *r = open_mem(&m, &path);
			struct tlm_record *rec = malloc(sizeof *rec), *want = calloc(1, sizeof *want);
			for (size_t i = 0; i < 5; i++) {
				assert_int_equal(tlm_reader_next(r, rec), 1);
				assert_int_equal(rec->type, TLM_REC_EVENT);
				assert_int_equal(rec->seq, i);
				assert_int_equal(tlm_reader_next(r, rec), 1);
				want->type = TLM_REC_DEVMEM;
				want->seq = i + 1; /* the placement rule: the event is seq - 1 */
				want->u.devmem = dm[i];
				assert_true(tt_equal(rec, want));
				if (i < 4) {
					assert_int_equal(tlm_reader_next(r, rec), 1);
					want->type = TLM_REC_DEVPROCS;
					want->u.devprocs = dp[i];
					assert_true(tt_equal(rec, want));
				}
				assert_int_equal(tlm_reader_next(r, rec), 1);
				want->type = TLM_REC_CLOCK;
				want->u.clock = ck[i];
				assert_true(tt_equal(rec, want));
			}
			assert_int_equal(tlm_reader_next(r, rec), 1);
			assert_int_equal(rec->type, TLM_REC_END);
			assert_int_equal(tlm_reader_next(r, rec), 0);
			assert_int_equal(tlm_reader_errors(r, NULL), 0);
			assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
			free(rec);
			free(want);
			done(r, path, &m);
		}
}

/* n over 256 is clamped to the 256 entries the record holds. */
static void test_clamp(void **state)
{
	(void)state;
	struct tlm_rec_devprocs *d = calloc(1, sizeof *d);
	d->n = 1000;
	for (uint32_t k = 0; k < TLM_MAX_DEVPROCS; k++)
		d->p[k].pid = k + 1, d->p[k].used = k;
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64, 0, NULL);
	assert_non_null(w);
	assert_int_equal(tlm_tw_devprocs(w, d), 0);
	assert_int_equal(tlm_tw_end(w, 1), 0);
	tlm_tw_close(w);
	char *path;
	struct tlm_reader *r = open_mem(&m, &path);
	struct tlm_record *rec = malloc(sizeof *rec);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_DEVPROCS);
	assert_int_equal(rec->u.devprocs.n, TLM_MAX_DEVPROCS);
	assert_int_equal(rec->u.devprocs.p[255].pid, 256);
	assert_int_equal(rec->u.devprocs.p[255].used, 255);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_END);
	assert_int_equal(tlm_reader_errors(r, NULL), 0);
	free(rec);
	free(d);
	done(r, path, &m);
}

/* Writes one record alone in a chunk through put(), changes byte `at` of it
 * to `to` (or cuts the payload to `at` bytes when cut), fixes the checksum,
 * and expects exactly one integrity error at the chunk holding `want`. */
static void damaged(int (*put)(struct tlm_tw *), size_t len, int cut, size_t at, uint8_t to, const char *want)
{
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 4096, 0, NULL);
	assert_non_null(w);
	assert_int_equal(put(w), 0);
	assert_int_equal(tlm_tw_flush(w), 0);
	tlm_tw_close(w);
	uint8_t *chunk = m.p + m.len - 40 - len;
	assert_memory_equal(chunk, "TLMK", 4);
	size_t plen = len;
	if (cut) {
		plen = at;
		uint32_t l32 = (uint32_t)plen;
		memcpy(chunk + 4, &l32, 4);  /* on disk */
		memcpy(chunk + 16, &l32, 4); /* raw */
		m.len -= len - plen;
	} else {
		chunk[40 + at] = to;
	}
	uint32_t crc = (uint32_t)crc32(crc32(0, chunk + 12, 28), chunk + 40, (uInt)plen);
	memcpy(chunk + 8, &crc, 4); /* little-endian host */
	char *path;
	struct tlm_reader *r = open_mem(&m, &path);
	struct tlm_record *rec = malloc(sizeof *rec);
	assert_int_equal(tlm_reader_next(r, rec), 0);
	const struct tlm_integrity_error *errs;
	assert_int_equal(tlm_reader_errors(r, &errs), 1);
	assert_int_equal(errs[0].offset, (uint64_t)(chunk - m.p));
	if (!strstr(errs[0].what, want))
		fprintf(stderr, "want \"%s\", got: %s\n", want, errs[0].what);
	assert_non_null(strstr(errs[0].what, want));
	free(rec);
	done(r, path, &m);
}

/* 1 tag, sample 1, device zz(2) = 4, why 1, flags 1, time 5, total 6, free 7: 8 bytes */
static int put_devmem(struct tlm_tw *w)
{
	struct tlm_rec_devmem d = {1, 2, TLM_DEVMEM_PEAK, TLM_DEVMEM_F_BEFORE, 5, 6, 7};
	return tlm_tw_devmem(w, &d);
}

/* 1 tag, sample 1, device 0, status 0, time 5, n 2, (pid 9, used 8) x 2: 10 bytes */
static int put_devprocs(struct tlm_tw *w)
{
	struct tlm_rec_devprocs *d = calloc(1, sizeof *d);
	*d = (struct tlm_rec_devprocs){.sample = 1, .time_ns = 5, .n = 2};
	d->p[0].pid = d->p[1].pid = 9;
	d->p[0].used = d->p[1].used = 8;
	int rc = tlm_tw_devprocs(w, d);
	free(d);
	return rc;
}

static void test_decode_errors(void **state)
{
	(void)state;
	/* DEVMEM: a varint that does not end, a sample index over 32 bits, a
	 * device outside int32, a cut record */
	damaged(put_devmem, 8, 0, 7, 0x80, "bad varint");
	damaged(put_devmem, 8, 1, 1, 0, "bad varint");
	damaged(put_devmem, 8, 1, 5, 0, "bad varint");
	/* DEVPROCS: n larger than the list that follows, a cut process list */
	damaged(put_devprocs, 10, 0, 5, 0x7f, "bad varint");
	damaged(put_devprocs, 10, 1, 8, 0, "bad varint");
}

/* Values that do not fit their fields, crafted byte by byte. */
static void test_out_of_range(void **state)
{
	(void)state;
	static const struct {
		uint8_t rec[32];
		size_t len;
		const char *want;
	} cases[] = {
		/* DEVMEM sample = 2^32 */
		{{0x67, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0, 0}, 12, "sample index out of range"},
		/* DEVMEM device = zz(2^31) */
		{{0x67, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0, 0}, 12, "device out of range"},
		/* DEVMEM why = 2^32 */
		{{0x67, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0, 0}, 12, "sample reason out of range"},
		/* DEVMEM flags = 2^32 */
		{{0x67, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 0, 0, 0}, 12, "sample flags out of range"},
		/* DEVPROCS status = zz(-2^31 - 1) */
		{{0x6f, 0, 0, 0x81, 0x80, 0x80, 0x80, 0x10, 0, 0}, 10, "NVML status out of range"},
		/* DEVPROCS n = 257 */
		{{0x6f, 0, 0, 0, 0, 0x81, 0x02}, 7, "device process count exceeds 256"},
		/* DEVPROCS pid = 2^32 */
		{{0x6f, 0, 0, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x10, 0}, 12, "pid out of range"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		/* a chunk of one record: an uncompressed payload, framed by hand */
		uint8_t chunk[40 + 32] = "TLMK";
		uint32_t len = (uint32_t)cases[k].len, one = 1;
		memcpy(chunk + 4, &len, 4);
		memcpy(chunk + 16, &len, 4);
		memcpy(chunk + 20, &one, 4);
		memcpy(chunk + 40, cases[k].rec, len);
		uint32_t crc = (uint32_t)crc32(crc32(0, chunk + 12, 28), chunk + 40, len);
		memcpy(chunk + 8, &crc, 4);

		struct membuf m = {0};
		struct tlm_trace_header h;
		tt_header(&h);
		struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 4096, 0, NULL);
		assert_non_null(w);
		tlm_tw_close(w);
		size_t hdr = m.len;
		assert_int_equal(tt_mem_sink(&m, chunk, 40 + len), 0);
		char *path;
		struct tlm_reader *r = open_mem(&m, &path);
		struct tlm_record *rec = malloc(sizeof *rec);
		assert_int_equal(tlm_reader_next(r, rec), 0);
		const struct tlm_integrity_error *errs;
		assert_int_equal(tlm_reader_errors(r, &errs), 1);
		assert_int_equal(errs[0].offset, hdr);
		if (!strstr(errs[0].what, cases[k].want))
			fprintf(stderr, "case %zu: want \"%s\", got: %s\n", k, cases[k].want, errs[0].what);
		assert_non_null(strstr(errs[0].what, cases[k].want));
		free(rec);
		done(r, path, &m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
