/* SPDX-License-Identifier: MIT */
/*
 * test_roundtrip.c - every record type and every event field survives a write
 * and a read exactly, compressed or not, in one chunk or thousands; plus the
 * writer's edge cases (oversized records, sink errors), the final states and
 * the compactness target on a realistic workload.
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

#include "expect.h"
#include "synth.h"
#include "tt.h"

/* Reads path back and checks it holds exactly x's sequence. */
static void check_file(const char *path, struct expect x, enum tlm_trace_state want_state)
{
	char err[256];
	struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("open: %s", err);
	const struct tlm_trace_header *h = tlm_reader_header(r);
	struct tlm_trace_header hw;
	tt_header(&hw);
	assert_int_equal(h->version, 1);
	assert_int_equal(h->pid, hw.pid);
	assert_int_equal(h->ppid, hw.ppid);
	assert_int_equal(h->flags, hw.flags);
	assert_true(h->start_realtime_ns == hw.start_realtime_ns);
	assert_true(h->start_monotonic_ns == hw.start_monotonic_ns);
	assert_int_equal(h->clock_id, hw.clock_id);
	assert_int_equal(h->stack_depth, hw.stack_depth);
	assert_string_equal(h->host, hw.host);
	assert_string_equal(h->exe, hw.exe);
	assert_string_equal(h->tlm_version, hw.tlm_version);
	assert_int_equal(h->argc, hw.argc);
	for (uint32_t i = 0; i < h->argc; i++)
		assert_string_equal(h->argv[i], hw.argv[i]);
	assert_null(h->argv[h->argc]);

	struct tlm_record *got = malloc(sizeof *got), *want = malloc(sizeof *want);
	uint64_t n = 0, last_off = 0;
	x.j = x.events = x.lost = 0;
	while (tlm_reader_next(r, got)) {
		assert_true(n < expect_total(&x));
		expect_next(&x, want);
		if (!tt_equal(got, want))
			fail_msg("record %llu differs", (unsigned long long)n);
		assert_true(got->offset >= last_off);
		last_off = got->offset;
		n++;
	}
	assert_true(n == expect_total(&x));
	assert_int_equal(tlm_reader_errors(r, NULL), 0);
	assert_int_equal(tlm_reader_state(r), want_state);
	assert_null(tlm_reader_truncation(r, NULL));
	assert_true(tlm_reader_lost(r) == x.lost);
	free(got);
	free(want);
	tlm_reader_close(r);
}

static void roundtrip(struct expect x, size_t chunk, int compress, enum tlm_trace_state st)
{
	struct membuf m = {0};
	assert_int_equal(expect_write(x, &m, chunk, compress), 0);
	char *path = tt_tmpfile(m.p, m.len);
	check_file(path, x, st);
	unlink(path);
	free(path);
	free(m.p);
}

static void test_all_records(void **state)
{
	(void)state;
	static const size_t chunks[] = {64, 300, 4096, 65536};
	/* raw, every chunk compressed, and compressed while it pays (libtlm.so's:
	 * raw and zstd chunks side by side) */
	for (int c = 0; c <= TLM_TW_ZSTD_PAYS; c++)
		for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
			struct expect x = {.n = 3000, .late = 50, .edge = 0, .with_end = 1};
			roundtrip(x, chunks[k], c, TLM_TRACE_CLEAN);
			x.edge = 30; /* edge values everywhere */
			roundtrip(x, chunks[k], c, TLM_TRACE_CLEAN);
			x.edge = 100;
			roundtrip(x, chunks[k], c, TLM_TRACE_CLEAN);
		}
}

/* Hand-picked events: extremes of every field, negative deltas. */
static void test_edge_events(void **state)
{
	(void)state;
	static const struct tlm_event evs[] = {
		{.time_ns = 0, .addr = 0, .op = TLM_OP_ALLOC, .device = -1},
		{.time_ns = UINT64_MAX, .addr = UINT64_MAX, .size = UINT64_MAX, .stream = UINT64_MAX,
		 .aux = UINT64_MAX, .device_free = UINT64_MAX, .stack_id = UINT32_MAX,
		 .thread = UINT32_MAX, .result = INT32_MIN, .device = INT16_MIN, .op = 255,
		 .kind = 255, .flags = UINT16_MAX, .api = UINT16_MAX},
		{.time_ns = 1, .addr = 1, .size = 1, .result = INT32_MAX, .device = INT16_MAX,
		 .op = TLM_OP_FREE, .kind = TLM_KIND_POOL},
		{.time_ns = 0, .addr = 1ULL << 63, .size = (1ULL << 62) + 1, .op = 0, .kind = 7},
		{.time_ns = 5, .addr = (1ULL << 63) - 1, .size = 3ULL << 62, .result = -1,
		 .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .stream = 1, .aux = 2},
		{.time_ns = 4, .addr = 0x7f4a20000000ULL, .size = 1ULL << 30, .op = TLM_OP_ALLOC,
		 .device = -1, .stream = 0, .aux = UINT64_MAX},
		{.time_ns = 3, .addr = 0x7f4a1ff00000ULL, .size = 0, .op = TLM_OP_FREE,
		 .device = -1, .device_free = 1},
		{.time_ns = 2, .addr = 0, .size = 512, .op = TLM_OP_POOL_TRIM, .kind = TLM_KIND_POOL},
	};
	const size_t n = sizeof evs / sizeof evs[0];
	for (int c = 0; c < 2; c++)
		for (size_t chunk = 64; chunk <= 4096; chunk *= 64) {
			struct membuf m = {0};
			struct tlm_trace_header h;
			tt_header(&h);
			struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, chunk, c, NULL);
			assert_non_null(w);
			for (int rep = 0; rep < 3; rep++)
				for (size_t i = 0; i < n; i++)
					assert_int_equal(tlm_tw_event(w, &evs[i]), 0);
			assert_true(tlm_tw_events(w) == 3 * n);
			assert_int_equal(tlm_tw_end(w, 7), 0);
			assert_true(tlm_tw_bytes(w) == m.len);
			tlm_tw_close(w);

			char *path = tt_tmpfile(m.p, m.len);
			struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
			assert_non_null(r);
			struct tlm_record *rec = malloc(sizeof *rec), want;
			for (size_t i = 0; i < 3 * n; i++) {
				assert_int_equal(tlm_reader_next(r, rec), 1);
				memset(&want, 0, sizeof want);
				want.type = TLM_REC_EVENT;
				want.seq = i;
				want.u.ev = evs[i % n];
				if (!tt_equal(rec, &want))
					fail_msg("event %zu differs", i);
			}
			assert_int_equal(tlm_reader_next(r, rec), 1);
			assert_int_equal(rec->type, TLM_REC_END);
			assert_true(rec->u.end.events == 3 * n && rec->u.end.end_monotonic_ns == 7);
			assert_int_equal(tlm_reader_next(r, rec), 0);
			assert_int_equal(tlm_reader_state(r), TLM_TRACE_CLEAN);
			free(rec);
			tlm_reader_close(r);
			unlink(path);
			free(path);
			free(m.p);
		}
}

/* Records bigger than the chunk size, and a header at its limits. */
static void test_oversized(void **state)
{
	(void)state;
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	memset(h.host, 'h', sizeof h.host);   /* not NUL-terminated: clamped */
	memset(h.exe, 'e', sizeof h.exe);
	memset(h.tlm_version, 'v', sizeof h.tlm_version);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64, 1, NULL);
	assert_non_null(w);
	static uint64_t ip[TLM_MAX_STACK_DEPTH];
	for (int i = 0; i < TLM_MAX_STACK_DEPTH; i++)
		ip[i] = (uint64_t)i * 0x123456789abcdefULL;
	static struct tlm_rec_module mod;
	mod.id = 3;
	mod.base = UINT64_MAX;
	mod.nseg = TLM_MAX_SEGMENTS;
	for (int i = 0; i < TLM_MAX_SEGMENTS; i++) {
		mod.seg[i].start = (uint64_t)i << 60;
		mod.seg[i].end = UINT64_MAX - (uint64_t)i;
	}
	mod.build_id_len = 64;
	memset(mod.build_id, 0xab, 64);
	memset(mod.path, 'p', sizeof mod.path - 1);
	struct tlm_event ev = {.op = TLM_OP_ALLOC, .addr = 0x1000, .size = 10};
	assert_int_equal(tlm_tw_event(w, &ev), 0);
	assert_int_equal(tlm_tw_stack(w, 1, ip, TLM_MAX_STACK_DEPTH), 0);
	assert_int_equal(tlm_tw_module(w, &mod), 0);
	assert_int_equal(tlm_tw_event(w, &ev), 0);
	assert_int_equal(tlm_tw_end(w, 1), 0);
	tlm_tw_close(w);

	char *path = tt_tmpfile(m.p, m.len);
	struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
	assert_non_null(r);
	assert_int_equal(strlen(tlm_reader_header(r)->host), 255);
	assert_int_equal(strlen(tlm_reader_header(r)->exe), 4095);
	assert_int_equal(strlen(tlm_reader_header(r)->tlm_version), 31);
	struct tlm_record *rec = malloc(sizeof *rec);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_STACK);
	assert_int_equal(rec->u.stack.depth, TLM_MAX_STACK_DEPTH);
	assert_memory_equal(rec->u.stack.ip, ip, sizeof ip);
	assert_true(rec->seq == 1);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_MODULE);
	assert_int_equal(strlen(rec->u.module.path), 4095);
	assert_memory_equal(rec->u.module.seg, mod.seg, sizeof mod.seg);
	assert_memory_equal(rec->u.module.build_id, mod.build_id, 64);
	assert_true(rec->u.module.base == UINT64_MAX);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_EVENT);
	assert_true(rec->seq == 1);
	assert_int_equal(tlm_reader_next(r, rec), 1);
	assert_int_equal(rec->type, TLM_REC_END);
	assert_int_equal(tlm_reader_next(r, rec), 0);
	assert_int_equal(tlm_reader_errors(r, NULL), 0);
	free(rec);
	tlm_reader_close(r);
	unlink(path);
	free(path);
	free(m.p);
}

/* STRING and PYSTACK records (Python stacks) at their limits. */
static void test_python_records(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		struct membuf m = {0};
		struct tlm_trace_header h;
		tt_header(&h);
		struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64, c, NULL);
		assert_non_null(w);
		static char big[TLM_MAX_STRING + 10];
		memset(big, 'f', sizeof big);
		static struct tlm_rec_pystack ps;
		ps.id = 0xfffffffe;
		ps.native = 7;
		ps.depth = TLM_MAX_PY_DEPTH;
		for (uint32_t i = 0; i < ps.depth; i++)
			ps.f[i] = (struct tlm_py_frame){1 + i % 2, UINT32_MAX - i, i % 3 ? (int32_t)i : INT32_MIN + (int32_t)i};
		struct tlm_event ev = {.op = TLM_OP_FREE, .addr = 0x1000, .stack_id = ps.id,
				       .flags = TLM_EVF_GC_FREED | TLM_EVF_FINALIZING};
		assert_int_equal(tlm_tw_string(w, 1, big, sizeof big), 0); /* clamped to 4095 */
		assert_int_equal(tlm_tw_string(w, 2, "", 0), 0);
		assert_int_equal(tlm_tw_pystack(w, &ps), 0);
		assert_int_equal(tlm_tw_event(w, &ev), 0);
		assert_int_equal(tlm_tw_end(w, 1), 0);
		tlm_tw_close(w);

		char *path = tt_tmpfile(m.p, m.len);
		struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
		assert_non_null(r);
		struct tlm_record *rec = malloc(sizeof *rec);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_STRING);
		assert_int_equal(rec->u.string.id, 1);
		assert_int_equal(rec->u.string.len, TLM_MAX_STRING);
		assert_int_equal(strlen(rec->u.string.s), TLM_MAX_STRING);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_STRING);
		assert_int_equal(rec->u.string.len, 0);
		assert_string_equal(rec->u.string.s, "");
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_PYSTACK);
		assert_true(rec->u.pystack.id == ps.id);
		assert_int_equal(rec->u.pystack.native, 7);
		assert_int_equal(rec->u.pystack.depth, TLM_MAX_PY_DEPTH);
		assert_memory_equal(rec->u.pystack.f, ps.f, sizeof ps.f);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_EVENT);
		assert_true(rec->u.ev.stack_id == ps.id);
		assert_int_equal(rec->u.ev.flags, TLM_EVF_GC_FREED | TLM_EVF_FINALIZING);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_END);
		assert_int_equal(tlm_reader_next(r, rec), 0);
		assert_int_equal(tlm_reader_errors(r, NULL), 0);
		free(rec);
		tlm_reader_close(r);
		unlink(path);
		free(path);
		free(m.p);
	}
}

/* PROP records: exact keys and values, the value clamped, bad keys refused. */
static void test_prop_records(void **state)
{
	(void)state;
	char key63[TLM_MAX_PROP_KEY + 1], key64[TLM_MAX_PROP_KEY + 2];
	memset(key63, 'k', sizeof key63 - 1);
	key63[sizeof key63 - 1] = 0;
	memset(key64, 'k', sizeof key64 - 1);
	key64[sizeof key64 - 1] = 0;
	static char big[TLM_MAX_STRING + 10];
	memset(big, 'v', sizeof big - 1);
	for (int c = 0; c < 2; c++) {
		struct membuf m = {0};
		struct tlm_trace_header h;
		tt_header(&h);
		struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64, c, NULL);
		assert_non_null(w);
		assert_int_equal(tlm_tw_prop(w, "cupti", "attached"), 0);
		assert_int_equal(tlm_tw_prop(w, key63, big), 0); /* value clamped to 4095 */
		assert_int_equal(tlm_tw_prop(w, "", "x"), -EINVAL);
		assert_int_equal(tlm_tw_prop(w, key64, "x"), -EINVAL);
		assert_int_equal(tlm_tw_prop(w, "cupti.detail", ""), 0);
		assert_int_equal(tlm_tw_end(w, 1), 0);
		tlm_tw_close(w);

		char *path = tt_tmpfile(m.p, m.len);
		struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
		assert_non_null(r);
		struct tlm_record *rec = malloc(sizeof *rec);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_PROP);
		assert_string_equal(rec->u.prop.key, "cupti");
		assert_string_equal(rec->u.prop.value, "attached");
		assert_int_equal(rec->u.prop.len, 8);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_PROP);
		assert_string_equal(rec->u.prop.key, key63);
		assert_int_equal(rec->u.prop.len, TLM_MAX_STRING);
		assert_int_equal(strlen(rec->u.prop.value), TLM_MAX_STRING);
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_PROP);
		assert_string_equal(rec->u.prop.key, "cupti.detail");
		assert_string_equal(rec->u.prop.value, "");
		assert_int_equal(tlm_reader_next(r, rec), 1);
		assert_int_equal(rec->type, TLM_REC_END);
		assert_int_equal(tlm_reader_next(r, rec), 0);
		assert_int_equal(tlm_reader_errors(r, NULL), 0);
		free(rec);
		tlm_reader_close(r);
		unlink(path);
		free(path);
		free(m.p);
	}
}

/* A damaged PROP record whose chunk checksum is right (a writer bug, a
 * crafted file): the reader names the offset and what was wrong. */
static void test_prop_decode_errors(void **state)
{
	(void)state;
	static const struct {
		size_t at; /* byte of the record to change: 1 = key length, 7 = value length */
		uint8_t to;
		const char *want;
	} cases[] = {
		{1, 0, "property key length not in 1..63"},
		{1, 64, "property key length not in 1..63"},
		{2, 0, "property key holds a NUL byte"},
		{7, 0x7f, "record ends early"}, /* a value longer than the payload */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct membuf m = {0};
		struct tlm_trace_header h;
		tt_header(&h);
		struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 4096, 0, NULL);
		assert_non_null(w);
		assert_int_equal(tlm_tw_prop(w, "cupti", "held"), 0); /* 1 tag, 1 len, "cupti", 1 len, "held" */
		assert_int_equal(tlm_tw_flush(w), 0);
		tlm_tw_close(w);
		/* the last chunk: 40-byte header, then the 12-byte record */
		uint8_t *chunk = (uint8_t *)m.p + m.len - 40 - 12;
		assert_memory_equal(chunk, "TLMK", 4);
		assert_int_equal(chunk[40], TLM_REC_PROP << 3 | 7);
		chunk[40 + cases[k].at] = cases[k].to;
		uint32_t crc = (uint32_t)crc32(crc32(0, chunk + 12, 28), chunk + 40, 12);
		memcpy(chunk + 8, &crc, 4); /* little-endian host */
		char *path = tt_tmpfile(m.p, m.len);
		struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
		assert_non_null(r);
		struct tlm_record *rec = malloc(sizeof *rec);
		assert_int_equal(tlm_reader_next(r, rec), 0);
		const struct tlm_integrity_error *errs;
		assert_int_equal(tlm_reader_errors(r, &errs), 1);
		assert_int_equal(errs[0].offset, (uint64_t)(chunk - (uint8_t *)m.p));
		if (!strstr(errs[0].what, cases[k].want))
			fprintf(stderr, "case %zu: %s\n", k, errs[0].what);
		assert_non_null(strstr(errs[0].what, cases[k].want));
		free(rec);
		tlm_reader_close(r);
		unlink(path);
		free(path);
		free(m.p);
	}
}

static void test_sink_errors(void **state)
{
	(void)state;
	struct membuf m = {.fail = -ENOSPC};
	struct tlm_trace_header h;
	int err = 0;
	tt_header(&h);
	assert_null(tlm_tw_open(&h, tt_mem_sink, &m, 4096, 0, &err));
	assert_int_equal(err, -ENOSPC);

	m.fail = 0;
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64, 0, &err);
	assert_non_null(w);
	assert_int_equal(err, 0);
	struct tlm_event ev = {.op = TLM_OP_ALLOC, .addr = 0x1000, .size = 10};
	assert_int_equal(tlm_tw_event(w, &ev), 0);
	m.fail = -EIO;
	int rc = 0;
	for (int i = 0; i < 20 && !rc; i++)
		rc = tlm_tw_event(w, &ev); /* the call that flushes reports the error */
	assert_int_equal(rc, -EIO);
	m.fail = 0;
	assert_int_equal(tlm_tw_end(w, 5), 0);
	tlm_tw_close(w);
	tlm_tw_close(NULL);
	free(m.p);
}

/* SIGNAL without END; neither SIGNAL nor END (compressed or not); lost counts. */
static void test_states(void **state)
{
	(void)state;
	for (int kind = 0; kind < 3; kind++) {
		struct membuf m = {0};
		struct tlm_trace_header h;
		tt_header(&h);
		struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 4096, kind == 1, NULL);
		struct tlm_event ev = {.op = TLM_OP_ALLOC, .addr = 0x1000, .size = 10};
		assert_int_equal(tlm_tw_event(w, &ev), 0);
		assert_int_equal(tlm_tw_lost(w, 2, 40), 0);
		assert_int_equal(tlm_tw_lost(w, 3, 2), 0);
		if (kind == 0)
			assert_int_equal(tlm_tw_signal(w, 11), 0);
		assert_int_equal(tlm_tw_flush(w), 0);
		assert_int_equal(tlm_tw_flush(w), 0); /* nothing pending: no-op */
		tlm_tw_close(w);
		char *path = tt_tmpfile(m.p, m.len);
		struct tlm_reader *r = tlm_reader_open(path, NULL, 0);
		struct tlm_record rec;
		int n = 0;
		while (tlm_reader_next(r, &rec))
			n++;
		assert_int_equal(n, kind == 0 ? 4 : 3);
		assert_int_equal(tlm_reader_state(r), kind == 0 ? TLM_TRACE_SIGNAL : TLM_TRACE_TRUNCATED);
		assert_null(tlm_reader_truncation(r, NULL));
		assert_true(tlm_reader_lost(r) == 42);
		tlm_reader_close(r);
		unlink(path);
		free(path);
		free(m.p);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(tlm_kind_name(TLM_KIND_DEVICE), "device");
	assert_string_equal(tlm_kind_name(TLM_KIND_HOST_PINNED), "host_pinned");
	assert_string_equal(tlm_kind_name(TLM_KIND_VMM_MAPPING), "vmm_mapping");
	assert_string_equal(tlm_kind_name(TLM_KIND_POOL), "pool");
	assert_string_equal(tlm_kind_name(99), "unknown");
	assert_string_equal(tlm_op_name(TLM_OP_ALLOC), "alloc");
	assert_string_equal(tlm_op_name(TLM_OP_POOL_TRIM), "pool_trim");
	assert_string_equal(tlm_op_name(0), "unknown");
	assert_string_equal(tlm_op_name(77), "unknown");
	assert_string_equal(tlm_api_name(TLM_API_cuMemAlloc_v2), "cuMemAlloc_v2");
	assert_string_equal(tlm_api_name(TLM_API_cudaFreeAsync_ptsz), "cudaFreeAsync_ptsz");
	assert_string_equal(tlm_api_name(TLM_API_COUNT), "unknown");
}

/* The compactness target on the synthetic workload (see synth.h). */
static double bytes_per_event(int compress, uint64_t n)
{
	struct membuf m = {0};
	struct tlm_trace_header h;
	tt_header(&h);
	struct tlm_tw *w = tlm_tw_open(&h, tt_mem_sink, &m, 64 << 10, compress, NULL);
	size_t hdr = m.len;
	struct synth s;
	synth_init(&s, 1);
	struct tlm_event ev;
	for (uint64_t i = 0; i < n; i++) {
		synth_next(&s, &ev);
		assert_int_equal(tlm_tw_event(w, &ev), 0);
	}
	assert_int_equal(tlm_tw_end(w, s.t), 0);
	tlm_tw_close(w);
	double b = (double)(m.len - hdr) / (double)n;
	free(m.p);
	return b;
}

static void test_compactness(void **state)
{
	(void)state;
	double raw = bytes_per_event(0, 200000), z = bytes_per_event(1, 200000);
	printf("synthetic workload, 64 KiB chunks: %.2f bytes/event uncompressed, %.2f with zstd\n", raw, z);
	assert_true(raw <= 16.0);
	assert_true(z <= raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_edge_events),
		cmocka_unit_test(test_all_records),
		cmocka_unit_test(test_oversized),
		cmocka_unit_test(test_python_records),
		cmocka_unit_test(test_prop_records),
		cmocka_unit_test(test_prop_decode_errors),
		cmocka_unit_test(test_sink_errors),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_compactness),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
