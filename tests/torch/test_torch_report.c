/* SPDX-License-Identifier: MIT */
/*
 * test_torch_report.c - the report's allocator layer on synthetic traces:
 * block events round-trip compactly, the allocator's OOM folds the driver
 * failures of its own thread since its device's last block (and no others),
 * cudaMallocAsync probes are not OOMs, and the layout of blocks inside
 * segments gives the largest free gap.
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

#include "../report/rt.h"
#include "render/export.h"
#include "tlm/event.h"

#define MiB (1ull << 20)
#define SEG0 0x200000000000ull

static void blk(struct rt *t, unsigned op, uint64_t addr, uint64_t size, uint64_t time, uint64_t allocated,
		uint64_t reserved, uint32_t thread, int result)
{
	struct tlm_event ev = {.time_ns = time, .op = (uint8_t)op, .kind = TLM_KIND_BLOCK, .addr = addr,
			       .size = size, .aux = allocated, .stream = reserved, .thread = thread, .device = 0,
			       .result = result,
			       .api = result ? TLM_API_c10_reportOutOfMemoryToProfiler
					     : TLM_API_c10_reportMemoryUsageToProfiler};
	rt_event(t, &ev);
}

static void drv(struct rt *t, uint64_t addr, uint64_t size, uint64_t time, uint32_t thread, int result,
		uint64_t device_free)
{
	struct tlm_event ev = {.time_ns = time, .op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .addr = addr,
			       .size = size, .thread = thread, .device = 0, .result = result,
			       .device_free = device_free, .api = TLM_API_cudaMalloc, .flags = TLM_EVF_RUNTIME};
	rt_event(t, &ev);
}

/* Fragmentation at the peak is taken where allocated memory peaks, with the
 * reserved memory of that moment: 180 of 200 MiB is 0.10, and the summary, the
 * text and the JSON print the two figures that give it. The reserved peak,
 * taken once the block the second segment was mapped for is placed (100 of
 * 200 MiB allocated then, before later blocks fill it), keeps its own 0.50. */
static void test_frag_at_allocated_peak(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	drv(t, SEG0, 100 * MiB, 1 * RT_MS, 1, 0, 0);
	blk(t, TLM_OP_ALLOC, SEG0, 90 * MiB, 2 * RT_MS, 90 * MiB, 100 * MiB, 1, 0);
	drv(t, SEG0 + 100 * MiB, 100 * MiB, 3 * RT_MS, 1, 0, 0); /* the reserved peak */
	blk(t, TLM_OP_ALLOC, SEG0 + 100 * MiB, 10 * MiB, 4 * RT_MS, 100 * MiB, 200 * MiB, 1, 0); /* settles it */
	blk(t, TLM_OP_ALLOC, SEG0 + 110 * MiB, 80 * MiB, 5 * RT_MS, 180 * MiB, 200 * MiB, 1, 0); /* fills it */
	char *path = rt_close(t, true, 10 * RT_MS);
	struct tlm_report *r = rt_report(path);
	const struct tlm_report_device *d = &r->devices[0];
	assert_true(d->peak_allocated == 180 * MiB && d->reserved_at_peak_allocated == 200 * MiB);
	assert_true(d->frag_at_peak > 0.0999 && d->frag_at_peak < 0.1001);
	assert_true(d->peak_reserved == 200 * MiB && d->allocated_at_peak_reserved == 100 * MiB);
	assert_true(d->frag_at_reserved_peak > 0.4999 && d->frag_at_reserved_peak < 0.5001);
	char *sum = rt_render(r, tlm_report_summary), *txt = rt_render(r, tlm_report_text);
	char *js = rt_render(r, tlm_report_json);
	assert_non_null(strstr(sum, "dev 0 device: peak 180.0 MiB of 200.0 MiB reserved at 0.005s, frag 0.10,"));
	assert_non_null(strstr(txt, "  0 device           180.0 MiB    0.005s     200.0 MiB  0.10     200.0 MiB"));
	assert_non_null(strstr(txt, "dev 0 device: at the reserved peak (0.003s) 200.0 MiB reserved, 100.0 MiB "
				    "allocated: frag 0.50"));
	assert_non_null(strstr(js, "\"fragmentation_at_peak\":0.1000,"));
	assert_non_null(strstr(js, "\"reserved_at_peak_allocated_bytes\":209715200,"));
	assert_non_null(strstr(js, "\"allocated_at_peak_reserved_bytes\":104857600,"));
	assert_non_null(strstr(js, "\"fragmentation_at_reserved_peak\":0.5000,"));
	free(sum);
	free(txt);
	free(js);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Segments [0, 4M) and [8M, 10M); blocks leave gaps of 1M, 1.5M and 0.5M. */
static void test_layout_and_folding(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	drv(t, SEG0, 4 * MiB, 1 * RT_MS, 1, 0, 0);
	blk(t, TLM_OP_ALLOC, SEG0 + 1 * MiB, 1 * MiB, 2 * RT_MS, 1 * MiB, 4 * MiB, 1, 0);
	blk(t, TLM_OP_ALLOC, SEG0 + 3 * MiB + MiB / 2, MiB / 2, 3 * RT_MS, 3 * MiB / 2, 4 * MiB, 1, 0);
	drv(t, SEG0 + 8 * MiB, 2 * MiB, 4 * RT_MS, 1, 0, 0); /* the reserved peak: 6M */
	blk(t, TLM_OP_ALLOC, SEG0 + 8 * MiB, 3 * MiB / 2, 5 * RT_MS, 3 * MiB, 6 * MiB, 1, 0);
	/* another thread's failure: not the allocator's */
	drv(t, 0, 64 * MiB, 6 * RT_MS, 2, 2, 7 * MiB);
	/* the allocator's way to its OOM: two failed segment requests */
	drv(t, 0, 4 * MiB, 7 * RT_MS, 1, 2, 3 * MiB);
	drv(t, 0, 4 * MiB, 8 * RT_MS, 1, 2, 2 * MiB);
	blk(t, TLM_OP_ALLOC, 0, 3 * MiB, 9 * RT_MS, 3 * MiB, 6 * MiB, 1, 2);
	char *path = rt_close(t, true, 20 * RT_MS);
	struct tlm_report *r = rt_report(path);

	assert_int_equal(r->ndevices, 1);
	const struct tlm_report_device *d = &r->devices[0];
	assert_true(d->peak_reserved == 6 * MiB);
	assert_true(d->peak_allocated == 3 * MiB);
	assert_true(d->allocator_totals);
	assert_true(d->allocator_peak_allocated == 3 * MiB && d->allocator_peak_reserved == 6 * MiB);
	/* at the peak, after the block was placed: free 3M, largest gap 1.5M */
	assert_true(d->ext_known);
	assert_true(d->frag_at_peak > 0.4999 && d->frag_at_peak < 0.5001);
	assert_true(d->ext_frag_at_peak > 0.4999 && d->ext_frag_at_peak < 0.5001);
	assert_true(d->live_bytes_at_end == 3 * MiB && d->live_allocs_at_end == 3);
	/* at the allocated peak (5 ms): the three blocks, all still live at the
	 * end; the segments seen before the first block are not in it */
	assert_int_equal(r->nat_peak, 1);
	assert_true(r->at_peak[0].bytes == 3 * MiB && r->at_peak[0].count == 3);
	assert_true(r->at_peak[0].persistent_bytes == 3 * MiB && r->at_peak[0].persistent_count == 3);

	assert_int_equal(r->ooms_total, 2);
	assert_int_equal(r->nooms, 2);
	assert_false(r->ooms[0].allocator);
	assert_true(r->ooms[0].requested == 64 * MiB);
	const struct tlm_report_oom *o = &r->ooms[1];
	assert_true(o->allocator);
	assert_int_equal(o->driver_failures, 2);
	assert_true(o->driver_request == 4 * MiB);    /* the segment it asked the driver for */
	assert_true(o->requested == 3 * MiB);
	assert_true(o->device_free == 2 * MiB);       /* the last failure's */
	assert_true(o->reserved_free == 3 * MiB);
	assert_true(o->largest_free == 3 * MiB / 2);
	assert_int_equal(o->verdict, TLM_OOM_FRAGMENTATION);
	char *text = rt_render(r, tlm_report_text);
	assert_non_null(strstr(text, "reported by PyTorch's allocator; 2 failed driver requests of 4.0 MiB on the way"));
	assert_non_null(strstr(text, "PyTorch's allocator reported peaks of 3.0 MiB allocated, 6.0 MiB reserved"));
	free(text);
	char *json = rt_render(r, tlm_report_json);
	assert_non_null(strstr(json, "\"allocator_reported\":{\"peak_allocated_bytes\":3145728,"
				     "\"peak_reserved_bytes\":6291456}"));
	assert_non_null(strstr(json, "\"source\":\"allocator\",\"driver_failures\":2,\"driver_request_bytes\":4194304"));
	free(json);
	/* the map at the peak: both segments, and the three blocks in them */
	char err[256];
	struct tlm_report_segmap *m = tlm_report_peak_segments(r, err, sizeof err);
	assert_non_null(m);
	assert_int_equal(m[0].n, 2);
	assert_true(m[0].has_blocks);
	assert_int_equal(m[0].nranges, 2);
	assert_true(m[0].range[0].addr == SEG0 && m[0].range[0].size == 4 * MiB);
	assert_true(m[0].range[1].addr == SEG0 + 8 * MiB && m[0].range[1].size == 2 * MiB);
	assert_int_equal(m[0].nblocks, 3);
	assert_true(m[0].block[2].addr == SEG0 + 8 * MiB && m[0].block[2].size == 3 * MiB / 2);
	assert_true(m[0].block_bytes == 3 * MiB);
	tlm_report_segmaps_free(m, r->ndevices);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

static void vmm(struct rt *t, unsigned op, unsigned kind, uint64_t addr, uint64_t size, uint64_t handle,
		uint64_t time, int device)
{
	struct tlm_event ev = {.time_ns = time, .op = (uint8_t)op, .kind = (uint8_t)kind, .addr = addr,
			       .size = size, .aux = handle, .device = (int16_t)device, .api = TLM_API_cuMemMap};
	rt_event(t, &ev);
}

#define VA 0x300000000000ull

/* PyTorch's expandable segments: one reserved range, physical chunks mapped
 * end to end as it grows. Free space between blocks spans the chunks, and
 * the mappings name no device (their handles do). */
static void test_expandable_segments(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	vmm(t, TLM_OP_ALLOC, TLM_KIND_VMM_RESERVE, VA, 64 * MiB, 0, 1 * RT_MS, -1);
	vmm(t, TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, 0x11, 2 * MiB, 0, 2 * RT_MS, 0);
	vmm(t, TLM_OP_ALLOC, TLM_KIND_VMM_MAPPING, VA, 2 * MiB, 0x11, 3 * RT_MS, -1);
	blk(t, TLM_OP_ALLOC, VA, 1 * MiB, 4 * RT_MS, 1 * MiB, 2 * MiB, 1, 0);
	vmm(t, TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, 0x12, 2 * MiB, 0, 5 * RT_MS, 0); /* the reserved peak: 4M */
	vmm(t, TLM_OP_ALLOC, TLM_KIND_VMM_MAPPING, VA + 2 * MiB, 2 * MiB, 0x12, 6 * RT_MS, -1);
	/* placed after the new chunk: the peak is settled here */
	blk(t, TLM_OP_ALLOC, VA + 3 * MiB, MiB / 2, 7 * RT_MS, 3 * MiB / 2, 4 * MiB, 1, 0);
	/* free inside: [1M, 3M) across the chunk boundary and [3.5M, 4M) */
	blk(t, TLM_OP_ALLOC, 0, 3 * MiB, 8 * RT_MS, 3 * MiB / 2, 4 * MiB, 1, 2);
	char *path = rt_close(t, true, 20 * RT_MS);
	struct tlm_report *r = rt_report(path);

	assert_int_equal(r->ndevices, 1);
	const struct tlm_report_device *d = &r->devices[0];
	assert_true(d->peak_reserved == 4 * MiB);
	assert_true(d->peak_allocated == 3 * MiB / 2);
	assert_true(d->ext_known);
	/* free 2.5M, largest gap 2M (one gap over both chunks): 1 - 2/2.5 */
	assert_true(d->ext_frag_at_peak > 0.1999 && d->ext_frag_at_peak < 0.2001);
	assert_int_equal(r->nooms, 1);
	assert_true(r->ooms[0].reserved_free == 5 * MiB / 2);
	assert_true(r->ooms[0].largest_free == 2 * MiB);

	char err[256];
	struct tlm_report_segmap *m = tlm_report_peak_segments(r, err, sizeof err);
	assert_non_null(m);
	assert_int_equal(m[0].n, 2); /* the two physical chunks: what the process holds */
	assert_true(m[0].total == 4 * MiB);
	assert_true(m[0].has_blocks);
	assert_int_equal(m[0].nranges, 1);
	assert_true(m[0].range[0].addr == VA && m[0].range[0].size == 4 * MiB);
	assert_int_equal(m[0].range[0].time_ns, 3 * RT_MS);
	assert_int_equal(m[0].nblocks, 2);
	assert_true(m[0].block[0].addr == VA && m[0].block[0].size == 1 * MiB);
	assert_true(m[0].block[1].addr == VA + 3 * MiB && m[0].block[1].size == MiB / 2);
	assert_int_equal(m[0].block[1].time_ns, 7 * RT_MS);
	assert_true(m[0].range_bytes == 4 * MiB && m[0].block_bytes == 3 * MiB / 2);
	tlm_report_segmaps_free(m, r->ndevices);

	/* the HTML map draws the range, the blocks at their places, the free space */
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);
	assert_int_equal(tlm_report_html(r, f, err, sizeof err), 0);
	fclose(f);
	assert_non_null(strstr(html, "<g class=\"seg\"><title>reserved 0x300000000000: 4.0 MiB, allocated at 0.003s. "));
	assert_non_null(strstr(html, "<g class=\"blk\"><title>block 0x300000000000: 1.0 MiB, allocated at 0.004s. "));
	assert_non_null(strstr(html, "<g class=\"blk\"><title>block 0x300000300000: 512.0 KiB, allocated at 0.007s. "));
	/* 960 x 6 px for 4 MiB: the second block starts 3/4 of the way, in row 4 */
	assert_non_null(strstr(html, "<rect x=\"480.00\" y=\"88\" width=\"480.00\" height=\"20\""));
	assert_non_null(strstr(html, "2 blocks (1.5 MiB) inside the reserved ranges"));
	assert_non_null(strstr(html, "free inside: 2.5 MiB, largest gap 2.0 MiB"));
	assert_null(strstr(html, "<b>blocks unknown: no allocator tap.</b>"));
	free(html);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Failures before the device's last block event are not folded. */
static void test_fold_only_since_last_block(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	drv(t, SEG0, 2 * MiB, 1 * RT_MS, 1, 0, 0);
	drv(t, 0, 8 * MiB, 2 * RT_MS, 1, 2, 0);           /* a failure of its own (not the allocator's) */
	blk(t, TLM_OP_ALLOC, SEG0, 1 * MiB, 3 * RT_MS, 1 * MiB, 2 * MiB, 1, 0);
	blk(t, TLM_OP_ALLOC, 0, 4 * MiB, 4 * RT_MS, 1 * MiB, 2 * MiB, 1, 2);
	char *path = rt_close(t, true, 10 * RT_MS);
	struct tlm_report *r = rt_report(path);
	assert_int_equal(r->ooms_total, 2);
	assert_int_equal(r->nooms, 2);
	assert_int_equal(r->ooms[1].driver_failures, 0);
	/* 1M free inside + 0 on the device < 4M */
	assert_int_equal(r->ooms[1].verdict, TLM_OOM_EXHAUSTION);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

static void async(struct rt *t, unsigned op, uint64_t addr, uint64_t size, uint64_t time, int result)
{
	struct tlm_event ev = {.time_ns = time, .op = (uint8_t)op, .kind = TLM_KIND_DEVICE, .addr = addr,
			       .size = size, .thread = 1, .device = 0, .result = result, .stream = 0x5000,
			       .flags = TLM_EVF_RUNTIME,
			       .api = op == TLM_OP_ALLOC ? TLM_API_cudaMallocAsync : TLM_API_cudaFreeAsync};
	rt_event(t, &ev);
}

/* PyTorch's cudaMallocAsync backend: cacheInfo halves a failed size until an
 * allocation fits, then frees it. */
static void test_async_probes(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	async(t, TLM_OP_ALLOC, SEG0, 4 * MiB, 1 * RT_MS, 0);          /* a tensor, kept */
	async(t, TLM_OP_ALLOC, 0, 64 * MiB, 2 * RT_MS, 2);            /* probe */
	async(t, TLM_OP_ALLOC, 0, 32 * MiB, 3 * RT_MS, 2);            /* probe */
	async(t, TLM_OP_ALLOC, SEG0 + 64 * MiB, 16 * MiB, 4 * RT_MS, 0);
	async(t, TLM_OP_FREE, SEG0 + 64 * MiB, 0, 5 * RT_MS, 0);
	async(t, TLM_OP_ALLOC, 0, 1024 * MiB, 6 * RT_MS, 2);          /* a real OOM */
	async(t, TLM_OP_ALLOC, SEG0 + 128 * MiB, 4096, 7 * RT_MS, 0);
	char *path = rt_close(t, true, 10 * RT_MS);
	struct tlm_report *r = rt_report(path);
	assert_int_equal(r->probe_failures, 2);
	assert_int_equal(r->ooms_total, 1);
	assert_int_equal(r->nooms, 1);
	assert_true(r->ooms[0].requested == 1024 * MiB);
	assert_int_equal(r->nleaks, 0);
	assert_int_equal(r->nlive, 1); /* the two tensors (one site), not the probe */
	assert_int_equal(r->live[0].count, 2);
	assert_true(r->live[0].bytes == 4 * MiB + 4096);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

/* Block events of a training-like loop: bytes per event. */
static void test_block_compactness(void **state)
{
	(void)state;
	struct rt *t = rt_open();
	uint64_t now = RT_MS, allocated = 0, reserved = 1024 * MiB, rng = 42;
	uint64_t live[64] = {0}, lsize[64] = {0};
	const size_t n = 200000;
	drv(t, SEG0, reserved, now, 1, 0, 0);
	for (size_t i = 0; i < n; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		unsigned k = (unsigned)(rng >> 58);
		now += 2000 + (rng >> 40) % 20000;
		if (live[k]) {
			allocated -= lsize[k];
			blk(t, TLM_OP_FREE, live[k], lsize[k], now, allocated, reserved, 1, 0);
			live[k] = 0;
		} else {
			lsize[k] = (uint64_t)512 << ((rng >> 20) % 14);
			live[k] = SEG0 + (uint64_t)k * 16 * MiB;
			allocated += lsize[k];
			blk(t, TLM_OP_ALLOC, live[k], lsize[k], now, allocated, reserved, 1, 0);
		}
	}
	char *path = rt_close(t, true, now);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	double b = (double)ftell(f) / (double)n;
	fclose(f);
	printf("block events: %.2f bytes/event (uncompressed writer of the report tests)\n", b);
	assert_true(b <= 8.0);
	struct tlm_report *r = rt_report(path);
	assert_true(r->devices[0].allocator_totals);
	assert_int_equal(r->unmatched_frees, 0);
	assert_int_equal(r->inconsistencies, 0);
	tlm_report_free(r);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frag_at_allocated_peak),
		cmocka_unit_test(test_layout_and_folding),
		cmocka_unit_test(test_expandable_segments),
		cmocka_unit_test(test_fold_only_since_last_block),
		cmocka_unit_test(test_async_probes),
		cmocka_unit_test(test_block_compactness),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
