/* SPDX-License-Identifier: MIT */
/*
 * job_gen.c - writes the traces of a synthetic training job, for the merged
 * timeline's tests and its 512-process measurement (docs/job.md):
 *   job_gen DIR N EVENTS [HOST]
 * writes DIR/rR.trace for R in 0..N-1: 8 ranks per host ("node00", ...,
 * or HOST followed by the host's number: hostile names for the escaping),
 * pids 1000 + local rank (so pids repeat across hosts), each host's
 * monotonic clock its own, starts 1 ms apart on CLOCK_REALTIME. Each rank
 * allocates weights of 64 MiB + R MiB, then runs steps of 32 activations
 * (freed in reverse order) until it made about EVENTS events; in the middle
 * step a spike of (R + 1) x 16 MiB is allocated and freed at once, which is
 * its peak; the last rank also fails to allocate 1 TiB there (an OOM). The
 * events are evenly spaced over just under 1000 x 2^20 ns, so that the
 * report's memory over time fills nearly all its 1000 intervals (up to
 * 2000 points: more than a job's track keeps, so every track is reduced).
 * Prints one line per rank: "rank R peak P start_ns S oom_ns O" (P: the
 * exact peak of device memory; S: its start on the job clock; O: the
 * OOM's time from its start, -1 when none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"

#define MiB (1ull << 20)
#define REAL0 1800000000000000000ull

static int sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5;
}

static uint64_t dt = 2000; /* between events */

static void ev(struct tlm_tw *w, uint64_t t, unsigned op, uint64_t addr, uint64_t size, int result)
{
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	e.time_ns = t;
	e.op = (uint8_t)op;
	e.kind = TLM_KIND_DEVICE;
	e.addr = addr;
	e.size = size;
	e.device = 0;
	e.result = result;
	e.device_free = result ? 4 * MiB : 0;
	e.api = TLM_API_cudaMalloc;
	if (tlm_tw_event(w, &e)) {
		fprintf(stderr, "job_gen: write error\n");
		exit(1);
	}
}

static const char *host_prefix = "node";

static int one(const char *dir, int r, int n, long events)
{
	char path[4096], argv2[16], val[32];
	snprintf(path, sizeof path, "%s/r%d.trace", dir, r);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	snprintf(argv2, sizeof argv2, "%d", r);
	char *argv[] = {"train", "--rank", argv2};
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.pid = 1000 + (uint32_t)(r % 8);
	h.ppid = 1;
	h.start_realtime_ns = REAL0 + (uint64_t)r * 1000000u;
	uint64_t t = 5000000000ull + (uint64_t)(r / 8) * 1000000000ull; /* this host's monotonic clock */
	h.start_monotonic_ns = t;
	h.clock_id = 1;
	snprintf(h.host, sizeof h.host, "%s%02d", host_prefix, r / 8);
	snprintf(h.exe, sizeof h.exe, "/usr/bin/train");
	snprintf(h.tlm_version, sizeof h.tlm_version, "0.1.0");
	h.argc = 3;
	h.argv = argv;
	int err = 0;
	struct tlm_tw *w = tlm_tw_open(&h, sink, f, 65536, 1, &err);
	if (!w)
		return -1;
	snprintf(val, sizeof val, "%d", r);
	tlm_tw_prop(w, "env.RANK", val);
	snprintf(val, sizeof val, "%d", r % 8);
	tlm_tw_prop(w, "env.LOCAL_RANK", val);
	snprintf(val, sizeof val, "%d", n);
	tlm_tw_prop(w, "env.WORLD_SIZE", val);
	uint64_t addr = 0x7f0000000000ull, live = 0, peak = 0, made = 0;
	int64_t oom = -1;
#define ALLOC(sz)                                                                                              \
	do {                                                                                                   \
		ev(w, t += dt, TLM_OP_ALLOC, addr + made * 64 * MiB, (sz), 0);                               \
		made++;                                                                                        \
		live += (sz);                                                                                  \
		peak = live > peak ? live : peak;                                                              \
	} while (0)
	ALLOC(64 * MiB + (uint64_t)r * MiB);
	long steps = events / 64 > 1 ? events / 64 : 1;
	dt = (999ull << 20) / (uint64_t)(steps * 64 + 4);
	for (long s = 0; s < steps; s++) {
		uint64_t first = made, size[32];
		for (int k = 0; k < 32; k++) {
			size[k] = (uint64_t)(1 + (k * 7 + s) % 16) * MiB;
			ALLOC(size[k]);
		}
		if (s == steps / 2) {
			uint64_t spike = (uint64_t)(r + 1) * 16 * MiB;
			ALLOC(spike);
			ev(w, t += dt, TLM_OP_FREE, addr + (made - 1) * 64 * MiB, 0, 0);
			live -= spike;
			if (r == n - 1) {
				ev(w, t += dt, TLM_OP_ALLOC, 0, 1ull << 40, 2);
				oom = (int64_t)(t - h.start_monotonic_ns);
			}
		}
		for (int k = 31; k >= 0; k--) {
			ev(w, t += dt, TLM_OP_FREE, addr + (first + (uint64_t)k) * 64 * MiB, 0, 0);
			live -= size[k];
		}
	}
	if (tlm_tw_end(w, t + 1000) || fclose(f))
		return -1;
	tlm_tw_close(w);
	printf("rank %d peak %llu start_ns %llu oom_ns %lld\n", r, (unsigned long long)peak,
	       (unsigned long long)r * 1000000u, (long long)oom);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: job_gen DIR N EVENTS [HOST]\n");
		return 2;
	}
	if (argc == 5)
		host_prefix = argv[4];
	int n = atoi(argv[2]);
	long events = atol(argv[3]);
	for (int r = 0; r < n; r++)
		if (one(argv[1], r, n, events)) {
			fprintf(stderr, "job_gen: %s: cannot write rank %d\n", argv[1], r);
			return 1;
		}
	return 0;
}
