/* SPDX-License-Identifier: MIT */
/*
 * wi_gen.c - writes PyTorch-allocator traces for tlm whatif's memory tests:
 *   wi_gen churn OUT N   one 20 MiB segment, then N block allocations of
 *                        1 MiB + 512 B, each freed at once: 2N + 2 events
 *                        that compress to almost nothing, one live block
 *   wi_gen live OUT N    one segment per 4 blocks, N blocks of 5 MiB never
 *                        freed: the live state grows with N
 *   wi_gen churnoom OUT N  churn, then a cudaMalloc of 2 TiB that fails (an
 *                        OOM after 2N + 1 events)
 * Each block event carries the allocator's totals, as the tap's do; the
 * device is 1 TiB (device.0.memory), so nothing fails (but churnoom's last).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"

#define MiB (1ull << 20)

static int sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5;
}

static uint64_t now = 1000000000ull;

static int32_t result; /* the next event's */

static void ev(struct tlm_tw *w, unsigned kind, unsigned op, uint64_t addr, uint64_t size, uint64_t allocated,
	       uint64_t reserved)
{
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	e.result = result;
	e.time_ns = now += 1000;
	e.kind = (uint8_t)kind;
	e.op = (uint8_t)op;
	e.addr = addr;
	e.size = size;
	e.aux = allocated;
	e.stream = reserved;
	e.api = kind == TLM_KIND_DEVICE ? (op == TLM_OP_ALLOC ? TLM_API_cudaMalloc : TLM_API_cudaFree) : 0;
	if (tlm_tw_event(w, &e)) {
		fprintf(stderr, "wi_gen: write error\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	bool oom = argc == 4 && !strcmp(argv[1], "churnoom");
	if (argc != 4 || (strcmp(argv[1], "churn") && strcmp(argv[1], "live") && !oom)) {
		fprintf(stderr, "usage: wi_gen churn|live|churnoom OUT N\n");
		return 64;
	}
	long long n = atoll(argv[3]);
	FILE *f = fopen(argv[2], "wb");
	if (!f || n < 1) {
		perror(argv[2]);
		return 1;
	}
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.pid = 4242;
	h.start_monotonic_ns = now;
	h.clock_id = 1;
	snprintf(h.exe, sizeof h.exe, "/usr/bin/python3");
	snprintf(h.tlm_version, sizeof h.tlm_version, "0.1.0");
	int err = 0;
	struct tlm_tw *w = tlm_tw_open(&h, sink, f, 65536, 1, &err);
	if (!w)
		return 1;
	tlm_tw_prop(w, "torch.alloc_conf", "");
	tlm_tw_prop(w, "device.0.memory", "1099511627776");
	const uint64_t base = 0x7f0000000000ull;
	if (!strcmp(argv[1], "churn") || oom) {
		uint64_t b = MiB + 512;
		ev(w, TLM_KIND_DEVICE, TLM_OP_ALLOC, base, 20 * MiB, 0, 0);
		for (long long i = 0; i < n; i++) {
			ev(w, TLM_KIND_BLOCK, TLM_OP_ALLOC, base, b, b, 20 * MiB);
			ev(w, TLM_KIND_BLOCK, TLM_OP_FREE, base, b, 0, 20 * MiB);
		}
		if (oom) {
			result = 2; /* cudaErrorMemoryAllocation */
			ev(w, TLM_KIND_DEVICE, TLM_OP_ALLOC, 0, 2 * 1099511627776ull, 0, 20 * MiB);
		}
	} else {
		uint64_t reserved = 0;
		for (long long i = 0; i < n; i++) {
			uint64_t seg = base + (uint64_t)(i / 4) * 20 * MiB;
			if (i % 4 == 0) {
				reserved += 20 * MiB;
				ev(w, TLM_KIND_DEVICE, TLM_OP_ALLOC, seg, 20 * MiB, (uint64_t)i * 5 * MiB, reserved - 20 * MiB);
			}
			ev(w, TLM_KIND_BLOCK, TLM_OP_ALLOC, seg + (uint64_t)(i % 4) * 5 * MiB, 5 * MiB,
			   (uint64_t)(i + 1) * 5 * MiB, reserved);
		}
	}
	if (tlm_tw_end(w, now + 1000) || fclose(f))
		return 1;
	tlm_tw_close(w);
	return 0;
}
