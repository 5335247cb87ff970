/* SPDX-License-Identifier: MIT */
/*
 * live_gen.c - a training-like trace written at a given pace, to measure
 * `tlm top` following a large trace (docs/top.md, "Cost"). Not a test:
 *   build/tests/live/live_gen FILE STEPS [EVENTS_PER_S] [COMPRESS]
 * Each step: one 4 KiB allocation kept (a leak), 200 activations of 64 KiB
 * from as many sites (24-frame stacks), all freed; 1000 weights before the
 * first step; events 2 us apart. EVENTS_PER_S 0 (default): as fast as it
 * can (a trace of many GB in little time); else the writer sleeps to keep
 * that pace, flushing a chunk at least every 20 ms as libtlm.so does.
 * COMPRESS 1 (default): zstd chunks, as libtlm.so writes them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tlm/trace.h"

#define ACTS 200
#define SITES ACTS
#define DEPTH 24

static int sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len && fflush(ctx) == 0 ? 0 : -5;
}

static uint64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int ev(struct tlm_tw *w, uint64_t t, int alloc, uint64_t addr, uint64_t size, uint32_t stack, uint64_t df)
{
	struct tlm_event e = {.time_ns = t, .addr = addr, .size = alloc ? size : 0, .stack_id = stack, .device = 0,
			      .op = alloc ? TLM_OP_ALLOC : TLM_OP_FREE, .kind = TLM_KIND_DEVICE,
			      .api = alloc ? TLM_API_cudaMalloc : TLM_API_cudaFree, .device_free = df};
	return tlm_tw_event(w, &e);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: live_gen FILE STEPS [EVENTS_PER_S] [COMPRESS]\n");
		return 64;
	}
	unsigned long long steps = strtoull(argv[2], NULL, 10), pace = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
	int compress = argc > 4 ? atoi(argv[4]) : 1;
	FILE *f = fopen(argv[1], "wbx");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	static char *args[] = {"live_gen"};
	struct tlm_trace_header h = {.version = TLM_TRACE_VERSION, .pid = (uint32_t)getpid(), .clock_id = 1,
				     .stack_depth = DEPTH, .argc = 1, .argv = args};
	uint64_t t = mono();
	h.start_monotonic_ns = t;
	gethostname(h.host, sizeof h.host - 1);
	strcpy(h.exe, "live_gen");
	int err = 0;
	struct tlm_tw *w = tlm_tw_open(&h, sink, f, 64 << 10, compress, &err);
	if (!w)
		return 1;
	for (uint32_t s = 1; s <= SITES + 2; s++) {
		uint64_t ip[DEPTH];
		for (int d = 0; d < DEPTH; d++)
			ip[d] = 0x400000 + (uint64_t)d * 0x1000 + (d < 4 ? s * 0x10 : 0);
		tlm_tw_stack(w, s, ip, DEPTH);
	}
	int rc = 0;
	for (int i = 0; i < 1000; i++)
		rc |= ev(w, t += 2000, 1, 0x700000000000ull + (uint64_t)i * (1 << 20), 1 << 20, 1, i ? 0 : 64ull << 30);
	uint64_t start = mono(), written = 1000, flushed = start;
	for (unsigned long long j = 0; j < steps && !rc; j++) {
		rc |= ev(w, t += 2000, 1, 0x710000000000ull + j * 4096, 4096, SITES + 2, 0);
		for (int k = 0; k < ACTS; k++)
			rc |= ev(w, t += 2000, 1, 0x720000000000ull + (uint64_t)k * 65536, 65536, 2 + (uint32_t)(k % SITES), 0);
		for (int k = ACTS; k-- > 0;)
			rc |= ev(w, t += 2000, 0, 0x720000000000ull + (uint64_t)k * 65536, 0, 2 + (uint32_t)(k % SITES), 0);
		written += 2 * ACTS + 1;
		if (pace) {
			uint64_t due = start + (uint64_t)((double)written / (double)pace * 1e9), now = mono();
			if (now - flushed >= 20000000ull) { /* what libtlm.so's writer does every TLM_DRAIN_MS */
				rc |= tlm_tw_flush(w);
				flushed = now;
			}
			if (due > now) {
				struct timespec d = {(time_t)((due - now) / 1000000000ull), (long)((due - now) % 1000000000ull)};
				nanosleep(&d, NULL);
			}
		}
	}
	rc |= tlm_tw_end(w, t + 1000);
	fprintf(stderr, "live_gen: %llu events, %llu bytes in %.1f s\n", (unsigned long long)tlm_tw_events(w),
		(unsigned long long)tlm_tw_bytes(w), (double)(mono() - start) / 1e9);
	tlm_tw_close(w);
	return fclose(f) || rc ? 1 : 0;
}
