/* SPDX-License-Identifier: MIT */
/*
 * snap_synth.c - `--format torch-snapshot` of a synthetic trace shaped like
 * PyTorch's expandable segments, for check_snap_synth.py (test
 * export_torch_snapshot_vmm):
 *   snap_synth OUT.pickle [OUT.html]
 * Device 0: a reserved range; two 2 MiB physical chunks mapped end to end
 * (the mappings name no device: their handles do); blocks of 1 MiB, of
 * 2 MiB across the chunks' boundary, and of 512 KiB, freed; a 4 MiB
 * cudaMalloc that holds no block (memory outside the allocator); a failed
 * cuMemCreate and the allocator's OOM it led to. One event carries a time
 * later than the next one's, as a thread delayed between taking its
 * number and reading the clock leaves it. The wall clock is set twice
 * during the run (CLOCK records): 50 ms ahead at 8 ms, 30 ms back at 11 ms.
 */
#include <stdio.h>
#include <stdlib.h>

#include "render/export.h"
#include "../report/rt.h"

#define MiB (1ull << 20)
#define VA 0x300000000000ull
#define EXT 0x7000000000ull

static void ev(struct rt *t, unsigned op, unsigned kind, uint64_t addr, uint64_t size, uint64_t aux,
	       uint64_t stream, uint64_t time, int device, int result, uint32_t stack, unsigned api)
{
	struct tlm_event e = {.time_ns = time, .op = (uint8_t)op, .kind = (uint8_t)kind, .addr = addr, .size = size,
			      .aux = aux, .stream = stream, .device = (int16_t)device, .result = result,
			      .stack_id = stack, .api = (uint16_t)api, .thread = 1,
			      .device_free = result ? 1 * MiB : 0};
	rt_event(t, &e);
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: snap_synth OUT.pickle [OUT.html]\n");
		return 2;
	}
	struct rt *t = rt_open();
	uint64_t ip1[] = {0x401000, 0x402000}, ip2[] = {0x403000, 0x402000}, ip3[] = {0x404000};
	rt_stack(t, 1, ip1, 2);
	rt_stack(t, 2, ip2, 2);
	rt_stack(t, 3, ip3, 1);
	const unsigned A = TLM_OP_ALLOC, F = TLM_OP_FREE, B = TLM_KIND_BLOCK;
	const unsigned MEM = TLM_API_c10_reportMemoryUsageToProfiler;
	ev(t, A, TLM_KIND_VMM_RESERVE, VA, 64 * MiB, 0, 0, 1 * RT_MS, -1, 0, 1, TLM_API_cuMemAddressReserve);
	ev(t, A, TLM_KIND_VMM_PHYSICAL, 0x11, 2 * MiB, 0, 0, 2 * RT_MS, 0, 0, 1, TLM_API_cuMemCreate);
	ev(t, A, TLM_KIND_VMM_MAPPING, VA, 2 * MiB, 0x11, 0, 3 * RT_MS, -1, 0, 1, TLM_API_cuMemMap);
	ev(t, A, B, VA, 1 * MiB, 1 * MiB, 2 * MiB, 4 * RT_MS, 0, 0, 1, MEM);
	ev(t, A, TLM_KIND_VMM_PHYSICAL, 0x12, 2 * MiB, 0, 0, 5 * RT_MS, 0, 0, 2, TLM_API_cuMemCreate);
	ev(t, A, TLM_KIND_VMM_MAPPING, VA + 2 * MiB, 2 * MiB, 0x12, 0, 6 * RT_MS, -1, 0, 2, TLM_API_cuMemMap);
	ev(t, A, B, VA + 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, 7 * RT_MS, 0, 0, 2, MEM);
	/* the wall clock set 50 ms ahead at 8 ms (realtime: the header's + 58 ms) */
	const uint64_t RT0 = 1700000000000000000ULL; /* rt.c's header */
	tlm_tw_clock(rt_writer(t), &(struct tlm_rec_clock){RT_START + 8 * RT_MS, RT0 + 58 * RT_MS});
	/* its thread read the clock late (after the next event's): 9.5 ms */
	ev(t, A, B, VA + 3 * MiB + MiB / 2, MiB / 2, 7 * MiB / 2, 4 * MiB, 9 * RT_MS + RT_MS / 2, 0, 0, 1, MEM);
	ev(t, F, B, VA + 3 * MiB + MiB / 2, MiB / 2, 3 * MiB, 4 * MiB, 9 * RT_MS, 0, 0, 2, MEM);
	ev(t, A, TLM_KIND_DEVICE, EXT, 4 * MiB, 0, 0, 10 * RT_MS, 0, 0, 3, TLM_API_cudaMalloc);
	/* then 30 ms back at 11 ms: the header's + 31 ms */
	tlm_tw_clock(rt_writer(t), &(struct tlm_rec_clock){RT_START + 11 * RT_MS, RT0 + 31 * RT_MS});
	ev(t, A, TLM_KIND_VMM_PHYSICAL, 0, 8 * MiB, 0, 0, 11 * RT_MS, 0, 2, 1, TLM_API_cuMemCreate);
	ev(t, A, B, 0, 8 * MiB, 3 * MiB, 4 * MiB, 12 * RT_MS, 0, 2, 1, TLM_API_c10_reportOutOfMemoryToProfiler);
	char *path = rt_close(t, true, 20 * RT_MS);
	struct tlm_report *r = rt_report(path);
	FILE *f = fopen(argv[1], "wb");
	char err[256];
	int rc = !f || tlm_report_torch_snapshot(r, f, err, sizeof err) || fclose(f);
	if (argc == 3) { /* and the HTML page, whose timeline marks memory outside the allocator */
		FILE *h = fopen(argv[2], "w");
		rc |= !h || tlm_report_html(r, h, err, sizeof err) || fclose(h);
	}
	tlm_report_free(r);
	remove(path);
	free(path);
	return rc;
}
