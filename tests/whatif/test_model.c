/* SPDX-License-Identifier: MIT */
/*
 * test_model.c - the allocator model on hand-built request sequences. Every
 * expected figure below was derived by hand from the rules of
 * c10/cuda/CUDACachingAllocator.cpp (the comments give the steps), on the
 * replay's simulated device (2 MiB pages, first fit from the base).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "whatif/replay_int.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define BASE 0x200000000000ull

struct fx {
	struct wi_sim sim;
	struct tlm_wi_drv drv;
	struct tlm_wi_model *m;
	struct tlm_wi_stats st;
};

static void setup_fx(struct fx *f, const char *spec, uint64_t memory)
{
	struct tlm_wi_settings s;
	char err[200];
	tlm_wi_defaults(&s);
	assert_int_equal(tlm_wi_parse(&s, spec, err, sizeof err), 0);
	tlm__wi_sim_init(&f->sim, memory, BASE);
	f->sim.keep_log = true;
	tlm__wi_sim_drv(&f->sim, &f->drv);
	f->m = tlm_wi_model_new(&s, &f->drv, memory ? memory : 80ull << 30);
	assert_non_null(f->m);
}

static void teardown_fx(struct fx *f)
{
	tlm_wi_model_free(f->m);
	tlm__wi_sim_fini(&f->sim);
}

static uint64_t get(struct fx *f, uint64_t size, uint64_t *bsize)
{
	uint64_t a = 0, b = 0;
	assert_int_equal(tlm_wi_model_malloc(f->m, size, 0, &a, &b), 0);
	if (bsize)
		*bsize = b;
	return a;
}

static void stats(struct fx *f)
{
	tlm_wi_model_stats(f->m, &f->st);
}

static void log_is(const struct fx *f, size_t i, int what, uint64_t addr, uint64_t size)
{
	assert_true(i < f->sim.nlog);
	assert_int_equal(f->sim.log[i].what, what);
	assert_int_equal(f->sim.log[i].size, size);
	if (what != WI_SEG_FAIL && what != WI_CREATE_FAIL)
		assert_int_equal(f->sim.log[i].addr, addr);
}

static void test_rounding(void **state)
{
	(void)state;
	struct tlm_wi_settings s;
	char err[200];
	tlm_wi_defaults(&s);
	assert_int_equal(tlm_wi_round_size(&s, 1), 512);
	assert_int_equal(tlm_wi_round_size(&s, 512), 512);
	assert_int_equal(tlm_wi_round_size(&s, 513), 1024);
	assert_int_equal(tlm_wi_round_size(&s, MiB + 1), MiB + 512);
	assert_int_equal(tlm_wi_allocation_size(MiB), 2 * MiB);
	assert_int_equal(tlm_wi_allocation_size(MiB + 512), 20 * MiB);
	assert_int_equal(tlm_wi_allocation_size(10 * MiB - 512), 20 * MiB);
	assert_int_equal(tlm_wi_allocation_size(10 * MiB), 10 * MiB);
	assert_int_equal(tlm_wi_allocation_size(11 * MiB + 512), 12 * MiB);
	assert_int_equal(tlm_wi_parse(&s, "roundup_power2_divisions:4", err, sizeof err), 0);
	/* below 512 B x 4 divisions: plain 512 B rounding */
	assert_int_equal(tlm_wi_round_size(&s, 1200), 1536);
	/* 1.2 MiB: floor 1 MiB, quarter steps of 256 KiB -> 1.25 MiB */
	assert_int_equal(tlm_wi_round_size(&s, 1258291), MiB + 256 * KiB);
	assert_int_equal(tlm_wi_round_size(&s, 3 * MiB + 1), 3 * MiB + 512 * KiB);
	assert_int_equal(tlm_wi_round_size(&s, 4 * MiB), 4 * MiB);
	/* per interval: [256:1,512:2,1024:4,>:8] */
	tlm_wi_defaults(&s);
	assert_int_equal(tlm_wi_parse(&s, "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", err, sizeof err), 0);
	assert_int_equal(tlm_wi_round_size(&s, 300 * MiB + 1), 300 * MiB + 512);
	assert_int_equal(tlm_wi_round_size(&s, 600 * MiB), 768 * MiB);
	/* ">" fills the intervals after the last one named: 1024 MiB keeps 4
	 * (the real 2.15 allocator: 65 MiB under [16:2,64:4,>:8] takes an
	 * 80 MiB block, tests/whatif/real) */
	assert_int_equal(tlm_wi_round_size(&s, 1100 * MiB), 1280 * MiB);
	assert_int_equal(tlm_wi_round_size(&s, 2100 * MiB), 2304 * MiB);
}

static void test_settings(void **state)
{
	(void)state;
	struct tlm_wi_settings s;
	char err[200], buf[256];
	tlm_wi_defaults(&s);
	assert_int_equal(tlm_wi_parse(&s, "max_split_size_mb:10", err, sizeof err), -1);
	assert_non_null(strstr(err, ">= 20"));
	assert_int_equal(tlm_wi_parse(&s, "foo:1", err, sizeof err), -1);
	assert_string_equal(err, "unrecognized allocator setting 'foo'");
	assert_int_equal(tlm_wi_parse(&s, "expandable_segments:true", err, sizeof err), -1);
	assert_int_equal(tlm_wi_parse(&s, "garbage_collection_threshold:1.0", err, sizeof err), -1);
	assert_int_equal(tlm_wi_parse(&s, "max_split_size_mb", err, sizeof err), -1);
	tlm_wi_defaults(&s);
	assert_int_equal(tlm_wi_parse(&s, " expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6",
				      err, sizeof err), 0);
	tlm_wi_format(&s, buf, sizeof buf);
	assert_string_equal(buf, "expandable_segments:True,max_split_size_mb:128,garbage_collection_threshold:0.6");
	assert_int_equal(tlm_wi_parse(&s, "backend:cudaMallocAsync", err, sizeof err), 0);
	assert_true(s.async_backend);
	tlm_wi_defaults(&s);
	tlm_wi_format(&s, buf, sizeof buf);
	assert_string_equal(buf, "");
}

/* Small pool: 2 MiB segments, blocks split at 512 B, best fit. */
static void test_small_pool(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "", 0);
	uint64_t b, a1 = get(&f, 1000, &b);
	assert_int_equal(b, 1024);
	assert_int_equal(a1, BASE);
	uint64_t a2 = get(&f, 1536, &b);
	assert_int_equal(a2, BASE + 1024);
	assert_int_equal(tlm_wi_model_release(f.m, a1), 1024);
	/* free: [BASE, 1024) and the tail after a2; best fit takes the first */
	assert_int_equal(get(&f, 600, &b), BASE);
	assert_int_equal(b, 1024);
	stats(&f);
	assert_int_equal(f.st.reserved, 2 * MiB);
	assert_int_equal(f.st.allocated, 2560);
	assert_int_equal(f.st.num_device_alloc, 1);
	teardown_fx(&f);
}

/* Large pool: a 20 MiB segment for 1-10 MiB, split while > 1 MiB remains;
 * from 10 MiB the request rounded to 2 MiB. */
static void test_large_pool(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "", 0);
	uint64_t b, a = get(&f, 3 * MiB, &b);
	assert_int_equal(a, BASE);
	assert_int_equal(b, 3 * MiB);
	/* 16.5 MiB fits the 17 MiB rest; 0.5 MiB would remain: not split */
	assert_int_equal(get(&f, 16 * MiB + 512 * KiB, &b), BASE + 3 * MiB);
	assert_int_equal(b, 17 * MiB);
	/* 11 MiB + 1: 12 MiB segment, 1 MiB - 512 remains: not split */
	assert_int_equal(get(&f, 11 * MiB + 1, &b), BASE + 20 * MiB);
	assert_int_equal(b, 12 * MiB);
	stats(&f);
	assert_int_equal(f.st.reserved, 32 * MiB);
	assert_int_equal(f.st.allocated, 32 * MiB);
	assert_int_equal(f.st.num_device_alloc, 2);
	log_is(&f, 0, WI_SEG_ALLOC, BASE, 20 * MiB);
	log_is(&f, 1, WI_SEG_ALLOC, BASE + 20 * MiB, 12 * MiB);
	teardown_fx(&f);
}

/* max_split_size_mb: oversize blocks serve only requests >= the limit, and
 * only within kLargeBuffer (20 MiB) of their size; they are never split. */
static void test_max_split(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "max_split_size_mb:32", 0);
	uint64_t b, a40 = get(&f, 40 * MiB, &b);
	tlm_wi_model_release(f.m, a40);
	uint64_t a30 = get(&f, 30 * MiB, &b); /* not the cached 40 MiB block */
	assert_int_equal(a30, BASE + 40 * MiB);
	tlm_wi_model_release(f.m, a30);
	assert_int_equal(get(&f, 38 * MiB, &b), a40); /* 40 < 38 + 20: taken whole */
	assert_int_equal(b, 40 * MiB);
	get(&f, 35 * MiB, &b); /* the cached 30 MiB is too small: a 36 MiB segment */
	assert_int_equal(b, 36 * MiB);
	stats(&f);
	assert_int_equal(f.st.reserved, 106 * MiB);
	assert_int_equal(f.st.num_device_alloc, 3);
	teardown_fx(&f);
}

/* A failed cudaMalloc frees every unsplit cached block and retries. */
static void test_oom_retry(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "", 64 * MiB);
	uint64_t a[5], b;
	for (int i = 0; i < 5; i++)
		a[i] = get(&f, 12 * MiB, &b);
	tlm_wi_model_release(f.m, a[1]);
	tlm_wi_model_release(f.m, a[3]);
	assert_int_equal(get(&f, 14 * MiB, &b), BASE + 60 * MiB);
	stats(&f);
	assert_int_equal(f.st.reserved, 50 * MiB);
	assert_int_equal(f.st.num_device_free, 2);
	assert_int_equal(f.st.num_alloc_retries, 1);
	assert_int_equal(f.sim.nlog, 9);
	log_is(&f, 5, WI_SEG_FAIL, 0, 14 * MiB);
	log_is(&f, 6, WI_SEG_FREE, BASE + 12 * MiB, 12 * MiB);
	log_is(&f, 7, WI_SEG_FREE, BASE + 36 * MiB, 12 * MiB);
	log_is(&f, 8, WI_SEG_ALLOC, BASE + 60 * MiB, 14 * MiB);
	teardown_fx(&f);
}

/* A 40 MiB block cached, then split by a 12 MiB request: 30 MiB has no room
 * on a 64 MiB device. max_split_size_mb:32 and expandable segments avoid it. */
static void scenario(struct fx *f, int *rc_c)
{
	uint64_t b, a = get(f, 40 * MiB, &b), c = 0;
	tlm_wi_model_release(f->m, a);
	get(f, 12 * MiB, &b);
	*rc_c = tlm_wi_model_malloc(f->m, 30 * MiB, 0, &c, &b);
	stats(f);
}

static void test_fragmentation_default(void **state)
{
	(void)state;
	struct fx f;
	int rc;
	setup_fx(&f, "", 64 * MiB);
	scenario(&f, &rc);
	assert_int_equal(rc, -1);
	assert_int_equal(f.st.num_ooms, 1);
	assert_int_equal(f.st.num_alloc_retries, 1);
	assert_int_equal(f.st.peak_reserved, 40 * MiB);
	uint64_t fr, big;
	tlm_wi_model_free_space(f.m, &fr, &big);
	assert_int_equal(fr, 28 * MiB);
	assert_int_equal(big, 28 * MiB);
	teardown_fx(&f);
}

static void test_fragmentation_max_split(void **state)
{
	(void)state;
	struct fx f;
	int rc;
	setup_fx(&f, "max_split_size_mb:32", 64 * MiB);
	scenario(&f, &rc);
	assert_int_equal(rc, 0);
	/* 12 MiB segment (52 MiB reserved), then the 40 MiB one is released */
	assert_int_equal(f.st.peak_reserved, 52 * MiB);
	assert_int_equal(f.st.allocated_at_peak, 12 * MiB);
	assert_int_equal(f.st.reserved, 42 * MiB);
	assert_int_equal(f.st.num_device_alloc, 3);
	assert_int_equal(f.st.num_device_free, 1);
	assert_int_equal(f.st.num_alloc_retries, 0);
	log_is(&f, 2, WI_SEG_FAIL, 0, 30 * MiB);
	log_is(&f, 3, WI_SEG_FREE, BASE, 40 * MiB);
	teardown_fx(&f);
}

static void test_fragmentation_expandable(void **state)
{
	(void)state;
	struct fx f;
	int rc;
	setup_fx(&f, "expandable_segments:True", 64 * MiB);
	scenario(&f, &rc);
	assert_int_equal(rc, 0);
	/* 72 MiB of address space = 4 pages of 20 MiB; 2 pages, then 1 more */
	assert_int_equal(f.st.peak_reserved, 60 * MiB);
	assert_int_equal(f.st.num_device_alloc, 2);
	assert_int_equal(f.st.num_device_free, 0);
	log_is(&f, 0, WI_RESERVE, BASE, 80 * MiB);
	log_is(&f, 1, WI_MAP, BASE, 20 * MiB);
	log_is(&f, 2, WI_MAP, BASE + 20 * MiB, 20 * MiB);
	log_is(&f, 3, WI_MAP, BASE + 40 * MiB, 20 * MiB);
	assert_int_equal(f.sim.nlog, 4);
	/* the 30 MiB block starts where the 12 MiB one ends */
	uint64_t b, c = get(&f, 6 * MiB, &b);
	assert_int_equal(c, BASE + 42 * MiB);
	/* empty the cache: everything free is unmapped, the range given back */
	tlm_wi_model_release(f.m, c);
	tlm_wi_model_release(f.m, BASE);
	tlm_wi_model_release(f.m, BASE + 12 * MiB);
	tlm_wi_model_empty_cache(f.m);
	stats(&f);
	assert_int_equal(f.st.reserved, 0);
	assert_int_equal(f.st.num_device_free, 1);
	log_is(&f, 4, WI_UNMAP, BASE, 20 * MiB);
	log_is(&f, 6, WI_UNMAP, BASE + 40 * MiB, 20 * MiB);
	log_is(&f, 7, WI_RESERVE_FREE, BASE, 80 * MiB);
	teardown_fx(&f);
}

/* garbage_collection_threshold (with a memory fraction below 1): over
 * 0.5 x 0.99 x 64 MiB, the cached blocks at least as old as the mean are
 * freed, all of them here. */
static void test_gc(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "garbage_collection_threshold:0.5,per_process_memory_fraction:0.99", 64 * MiB);
	uint64_t a[3], b;
	for (int i = 0; i < 3; i++)
		a[i] = get(&f, 12 * MiB, &b);
	for (int i = 0; i < 3; i++)
		tlm_wi_model_release(f.m, a[i]);
	get(&f, 14 * MiB, &b);
	stats(&f);
	assert_int_equal(f.st.num_device_free, 3);
	assert_int_equal(f.st.reserved, 14 * MiB);
	teardown_fx(&f);
	/* without a fraction (or at 1.0) PyTorch never collects */
	setup_fx(&f, "garbage_collection_threshold:0.5,per_process_memory_fraction:1.0", 64 * MiB);
	for (int i = 0; i < 3; i++)
		a[i] = get(&f, 12 * MiB, &b);
	for (int i = 0; i < 3; i++)
		tlm_wi_model_release(f.m, a[i]);
	get(&f, 14 * MiB, &b);
	stats(&f);
	assert_int_equal(f.st.num_device_free, 0);
	assert_int_equal(f.st.reserved, 50 * MiB);
	teardown_fx(&f);
}

/* Streams: a block freed on one stream is not reused on another. */
static void test_streams(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "", 0);
	uint64_t a = 0, b = 0, c = 0;
	assert_int_equal(tlm_wi_model_malloc(f.m, 4096, 7, &a, &b), 0);
	tlm_wi_model_release(f.m, a);
	assert_int_equal(tlm_wi_model_malloc(f.m, 4096, 9, &c, &b), 0);
	assert_int_equal(c, BASE + 2 * MiB);
	assert_int_equal(tlm_wi_model_malloc(f.m, 4096, 7, &c, &b), 0);
	assert_int_equal(c, BASE);
	teardown_fx(&f);
}

/* Ties between cached blocks of one size: the lowest address, or (newer
 * PyTorch) the oldest segment first. Segment A is given back, C takes its
 * (lower) address after B: C's and B's free halves tie. */
static void test_ties(void **state)
{
	(void)state;
	for (int by_segment = 0; by_segment < 2; by_segment++) {
		struct fx f;
		setup_fx(&f, "", 0);
		struct tlm_wi_model *m = f.m;
		struct tlm_wi_settings s;
		tlm_wi_defaults(&s);
		s.ties_by_segment = by_segment;
		tlm_wi_model_free(m);
		f.m = tlm_wi_model_new(&s, &f.drv, 80ull << 30);
		uint64_t b, a1 = get(&f, MiB, &b), a2 = get(&f, MiB, &b);
		uint64_t b1 = get(&f, MiB, &b), b2 = get(&f, MiB, &b);
		assert_int_equal(b1, BASE + 2 * MiB);
		tlm_wi_model_release(f.m, a1);
		tlm_wi_model_release(f.m, a2);
		tlm_wi_model_empty_cache(f.m);
		uint64_t c1 = get(&f, MiB, &b), c2 = get(&f, MiB, &b);
		assert_int_equal(c1, BASE); /* first fit: A's old place */
		tlm_wi_model_release(f.m, c2);
		tlm_wi_model_release(f.m, b2);
		assert_int_equal(get(&f, MiB, &b), by_segment ? BASE + 3 * MiB : BASE + MiB);
		(void)b1;
		(void)c1;
		teardown_fx(&f);
	}
}

/* What a recorded block size tells of its request (tlm_wi_model_last_low):
 * a block split off is the request; one handed out whole can be up to 1 MiB
 * larger (the rest is not split at 1 MiB or less), no larger than the next
 * smaller cached block could have served, and a new segment of 10 MiB or more
 * was asked for by a request of 10 MiB or more. */
static void test_request_bounds(void **state)
{
	(void)state;
	struct fx f;
	setup_fx(&f, "", 1ull << 30);
	tlm_wi_model_sizes_rounded(f.m, true); /* as the recorded replay asks */
	uint64_t a = get(&f, 22 * MiB, NULL); /* a new 22 MiB segment, whole */
	assert_int_equal(tlm_wi_model_last_low(f.m), 21 * MiB);
	uint64_t b = get(&f, 5 * MiB, NULL); /* split off a new 20 MiB segment */
	assert_int_equal(tlm_wi_model_last_low(f.m), 5 * MiB);
	uint64_t c = get(&f, 40 * MiB, NULL);
	tlm_wi_model_release(f.m, c);
	get(&f, 18 * MiB + 512 * KiB, NULL); /* splits the cached 40: 21.5 MiB stay cached */
	assert_int_equal(tlm_wi_model_last_low(f.m), 18 * MiB + 512 * KiB);
	/* peek: the cached 21.5 MiB block for 21 MiB, a new segment for 30 */
	assert_int_equal(tlm_wi_model_peek(f.m, 21 * MiB, 0), c + 18 * MiB + 512 * KiB);
	assert_int_equal(tlm_wi_model_peek(f.m, 30 * MiB, 0), 0);
	get(&f, 22 * MiB, NULL); /* a new segment: a request <= 21.5 MiB took the cached one */
	assert_int_equal(tlm_wi_model_last_low(f.m), 21 * MiB + 512 * KiB + 512);
	tlm_wi_model_release(f.m, a);
	get(&f, 22 * MiB, NULL); /* the cached 22 MiB block, whole, above the 21.5 MiB one */
	assert_int_equal(tlm_wi_model_last_low(f.m), 21 * MiB + 512 * KiB + 512);
	(void)b;
	teardown_fx(&f);
	/* a cached oversize block serves only requests >= max_split_size, up to
	 * max_non_split_rounding_mb (20 MiB) smaller than it */
	setup_fx(&f, "max_split_size_mb:32", 1ull << 30);
	tlm_wi_model_sizes_rounded(f.m, true);
	c = get(&f, 60 * MiB, NULL);
	tlm_wi_model_release(f.m, c);
	get(&f, 60 * MiB, NULL);
	assert_int_equal(tlm_wi_model_last_low(f.m), 40 * MiB + 512);
	teardown_fx(&f);
	/* the guess: the latest exact size of the same stack in range, else the
	 * size seen most often in range, else the block size */
	struct wi_sizes z = {0};
	tlm__wi_sizes_seen(&z, 5 * MiB, 7);
	tlm__wi_sizes_seen(&z, 5 * MiB + 512 * KiB, 9);
	tlm__wi_sizes_seen(&z, 5 * MiB + 512 * KiB, 9);
	assert_int_equal(tlm__wi_sizes_guess(&z, 5 * MiB, 6 * MiB, 7), 5 * MiB);
	assert_int_equal(tlm__wi_sizes_guess(&z, 5 * MiB, 6 * MiB, 3), 5 * MiB + 512 * KiB);
	assert_int_equal(tlm__wi_sizes_guess(&z, 5 * MiB + 768 * KiB, 6 * MiB, 7), 6 * MiB);
	tlm__wi_sizes_free(&z);
}

/* A damaged trace whose lowest address is 3 pages below the top of the
 * 64-bit space: a first fit never wraps past the top (that handed one address
 * out twice); with no room above the base it starts again from the bottom.
 * Neither address 0 nor the top page is handed out (a range ending at 2^64
 * has no end address). */
static void test_address_space_top(void **state)
{
	(void)state;
	struct wi_sim s;
	uint64_t a = 0, b = 0, c = 0;
	const uint64_t top3 = 0 - 3 * WI_PAGE;
	tlm__wi_sim_init(&s, 0, top3);
	assert_int_equal(tlm__wi_sim_take(&s, 2 * WI_PAGE, &a), 0);
	assert_int_equal(a, top3);
	assert_int_equal(tlm__wi_sim_take(&s, 2 * WI_PAGE, &b), 0);
	assert_int_equal(b, WI_PAGE);
	assert_int_equal(tlm__wi_sim_take(&s, WI_PAGE, &c), 0);
	assert_int_equal(c, 3 * WI_PAGE);
	tlm__wi_sim_fini(&s);
}

/* A damaged trace's device size, 2^64 - 1 B: an expandable range is 1 1/8 of
 * the device (CUDACachingAllocator.cpp), which wrapped to 2 EiB and let the
 * large pool's range start inside the small pool's. The model takes no device
 * over 1 PiB (TLM_WI_MAX_REQUEST: no larger request can succeed): the small
 * range is 1 1/8 PiB = 2^50 + 2^47 B, a whole number of 2 MiB pages; the
 * large one follows it, in 20 MiB pages: ceil(1207959552 MiB / 20 MiB) =
 * 60397978 pages = 1207959560 MiB. */
static void test_device_size_bounded(void **state)
{
	(void)state;
	struct fx f;
	const uint64_t small_range = (1ull << 50) + (1ull << 47);
	setup_fx(&f, "expandable_segments:True", UINT64_MAX);
	assert_int_equal(get(&f, 4096, NULL), BASE);
	assert_int_equal(get(&f, 30 * MiB, NULL), BASE + small_range);
	log_is(&f, 0, WI_RESERVE, BASE, small_range);
	log_is(&f, 1, WI_MAP, BASE, 2 * MiB);
	log_is(&f, 2, WI_RESERVE, BASE + small_range, 1207959560ull * MiB);
	teardown_fx(&f);
}

/* ---- first fit against a scan ------------------------------------------- */

/* The reference: the live ranges in a sorted array, a first fit by scanning
 * them in address order from the base, else from the second page, a range
 * ending at or below the candidate passed over, one in the way moving the
 * candidate past its end rounded up to a page (docs/whatif.md, "the
 * simulated device"); no room below the top of the space: none. */
struct ref {
	uint64_t (*r)[2];
	size_t n;
};

static uint64_t ref_page_up(uint64_t v)
{
	return v > UINT64_MAX - WI_PAGE + 1 ? UINT64_MAX : (v + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
}

static int ref_fit(const struct ref *f, uint64_t at, uint64_t len, uint64_t *addr)
{
	for (size_t i = 0; i < f->n; i++) {
		if (f->r[i][1] <= at)
			continue;
		if (at + len < at)
			return -1;
		if (f->r[i][0] >= at + len)
			break;
		at = ref_page_up(f->r[i][1]);
	}
	if (at + len < at || at == UINT64_MAX)
		return -1;
	*addr = at;
	return 0;
}

static int ref_take(struct ref *f, uint64_t base, uint64_t size, uint64_t *addr)
{
	uint64_t len = (size + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
	if (ref_fit(f, base, len, addr) && ref_fit(f, WI_PAGE, len, addr))
		return -1;
	size_t i = 0;
	while (i < f->n && f->r[i][0] < *addr)
		i++;
	memmove(&f->r[i + 1], &f->r[i], (f->n - i) * sizeof *f->r);
	f->r[i][0] = *addr;
	f->r[i][1] = *addr + len;
	f->n++;
	return 0;
}

static void ref_give(struct ref *f, size_t i)
{
	memmove(&f->r[i], &f->r[i + 1], (f->n - i - 1) * sizeof *f->r);
	f->n--;
}

static bool ref_free_at(const struct ref *f, uint64_t start, uint64_t len)
{
	if (start + len < start)
		return false;
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i][0] < start + len && start < f->r[i][1])
			return false;
	return true;
}

/* 30,000 random operations on the simulated device from a base on a page
 * boundary, one off it, and one 40 pages below the top of the space (so
 * that most fits start again from the bottom): takes of 1-6 pages (others'
 * memory, always a first fit), gives, and segments with a recorded address
 * (any byte, within 300 pages of the base: a damaged trace's), taken there when it is free
 * and else by a first fit. Every address handed out is the scan's. */
static void test_first_fit_matches_scan(void **state)
{
	(void)state;
	const uint64_t bases[] = {BASE, BASE + 12345, 0 - 40 * WI_PAGE};
	for (size_t k = 0; k < sizeof bases / sizeof *bases; k++) {
		struct wi_sim s;
		struct tlm_wi_drv d;
		struct wi_fifo q = {0};
		struct ref f = {calloc(30000, sizeof *f.r), 0};
		assert_non_null(f.r);
		tlm__wi_sim_init(&s, 0, bases[k]);
		tlm__wi_sim_drv(&s, &d);
		s.oracle_seg = &q;
		uint32_t x = 12345u + (uint32_t)k;
		int placed = 0;
		for (int op = 0; op < 30000; op++) {
			x = x * 1103515245u + 12345u;
			uint32_t v = x >> 8;
			if (f.n && v % 100 < 40) {
				size_t i = (v / 100) % f.n;
				tlm__wi_sim_give(&s, f.r[i][0], f.r[i][1] - f.r[i][0]);
				ref_give(&f, i);
				continue;
			}
			uint64_t size = (1 + (v / 100) % 6) * WI_PAGE - (v % 3) * 4096, a = 0, b = 0;
			int want;
			if (v % 100 >= 85) { /* a recorded address, within 300 pages of the base */
				x = x * 1103515245u + 12345u;
				uint64_t at = bases[k] - 300 * WI_PAGE + (uint64_t)(x >> 4) % (600 * WI_PAGE);
				uint64_t len = (size + WI_PAGE - 1) / WI_PAGE * WI_PAGE;
				assert_int_equal(tlm__wi_fifo_push(&q, &(struct wi_devev){0, at, size, WI_SEG_ALLOC}), 0);
				if (ref_free_at(&f, at, len)) {
					size_t i = 0;
					while (i < f.n && f.r[i][0] < at)
						i++;
					memmove(&f.r[i + 1], &f.r[i], (f.n - i) * sizeof *f.r);
					f.r[i][0] = at;
					f.r[i][1] = at + len;
					f.n++;
					b = at;
					want = 0;
					placed++;
				} else {
					want = ref_take(&f, bases[k], size, &b);
				}
				assert_int_equal(d.seg_alloc(d.ctx, size, &a), want);
			} else {
				want = ref_take(&f, bases[k], size, &b);
				assert_int_equal(tlm__wi_sim_take(&s, size, &a), want);
			}
			if (!want && a != b)
				fail_msg("base %#llx, operation %d: first fit at %#llx, the scan's at %#llx", (unsigned long long)bases[k],
					 op, (unsigned long long)a, (unsigned long long)b);
		}
		assert_int_equal(s.nlive, f.n);
		print_message("base %#llx: %d recorded addresses taken\n", (unsigned long long)bases[k], placed);
		assert_true(placed > 100); /* the recorded addresses were taken, not only fits */
		tlm__wi_fifo_free(&q);
		tlm__wi_sim_fini(&s);
		free(f.r);
	}
}

/* A damaged trace's unaligned base (BASE + 12345) just past the end of a
 * recorded segment ending at BASE + 10000, and another recorded at BASE + 2
 * MiB + 20000: a page at the base fits before the second (the scan passes
 * the first over, it ends below the base), though the room between the two
 * counted from the first one's end rounded up to a page is 20000 bytes. */
static void test_first_fit_in_unaligned_slack(void **state)
{
	(void)state;
	struct wi_sim s;
	struct tlm_wi_drv d;
	struct wi_fifo q = {0};
	uint64_t a = 0;
	tlm__wi_sim_init(&s, 0, BASE + 12345);
	tlm__wi_sim_drv(&s, &d);
	s.oracle_seg = &q;
	assert_int_equal(tlm__wi_fifo_push(&q, &(struct wi_devev){0, BASE + 10000 - WI_PAGE, WI_PAGE, WI_SEG_ALLOC}), 0);
	assert_int_equal(tlm__wi_fifo_push(&q, &(struct wi_devev){0, BASE + WI_PAGE + 20000, WI_PAGE, WI_SEG_ALLOC}), 0);
	assert_int_equal(d.seg_alloc(d.ctx, WI_PAGE, &a), 0);
	assert_int_equal(a, BASE + 10000 - WI_PAGE);
	assert_int_equal(d.seg_alloc(d.ctx, WI_PAGE, &a), 0);
	assert_int_equal(a, BASE + WI_PAGE + 20000);
	assert_int_equal(tlm__wi_sim_take(&s, WI_PAGE, &a), 0);
	assert_int_equal(a, BASE + 12345);
	tlm__wi_fifo_free(&q);
	tlm__wi_sim_fini(&s);
}

/* A damaged trace whose base is 2 pages below the top, taken at once: every
 * later first fit starts again from the bottom, over ranges that leave no
 * room. A scan of them in address order looked at every range each time
 * (100,000 takes: 5e9 looks, minutes); the tree skips each subtree with no
 * room: here at most 96 nodes a fit (the tree's shape is random: 23.8-55.6
 * on average in 300 runs, median 45.8). */
static void test_first_fit_skips_full_ranges(void **state)
{
	(void)state;
	struct wi_sim s;
	uint64_t a = 0;
	tlm__wi_sim_init(&s, 0, 0 - 3 * WI_PAGE);
	assert_int_equal(tlm__wi_sim_take(&s, 2 * WI_PAGE, &a), 0);
	assert_int_equal(a, 0 - 3 * WI_PAGE);
	const uint64_t n = 100000;
	s.visits = 0;
	for (uint64_t i = 0; i < n; i++) {
		assert_int_equal(tlm__wi_sim_take(&s, WI_PAGE, &a), 0);
		assert_int_equal(a, (i + 1) * WI_PAGE);
	}
	/* every other one given back, then taken again: the holes from the bottom up */
	for (uint64_t i = 0; i < n; i += 2)
		tlm__wi_sim_give(&s, (i + 1) * WI_PAGE, WI_PAGE);
	for (uint64_t i = 0; i < n; i += 2) {
		assert_int_equal(tlm__wi_sim_take(&s, WI_PAGE, &a), 0);
		assert_int_equal(a, (i + 1) * WI_PAGE);
	}
	print_message("first fit: %.1f nodes a fit\n", (double)s.visits / (double)(n + n / 2));
	assert_true(s.visits <= 96 * (n + n / 2));
	tlm__wi_sim_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_small_pool),
		cmocka_unit_test(test_large_pool),
		cmocka_unit_test(test_max_split),
		cmocka_unit_test(test_oom_retry),
		cmocka_unit_test(test_fragmentation_default),
		cmocka_unit_test(test_fragmentation_max_split),
		cmocka_unit_test(test_fragmentation_expandable),
		cmocka_unit_test(test_gc),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_request_bounds),
		cmocka_unit_test(test_address_space_top),
		cmocka_unit_test(test_device_size_bounded),
		cmocka_unit_test(test_first_fit_matches_scan),
		cmocka_unit_test(test_first_fit_in_unaligned_slack),
		cmocka_unit_test(test_first_fit_skips_full_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
