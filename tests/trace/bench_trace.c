/* SPDX-License-Identifier: MIT */
/*
 * bench_trace.c - encode/decode throughput and size on the synthetic
 * workload of synth.h. Not a test: run by hand,
 *   build/tests/trace/bench_trace [EVENTS] [FILE]
 * It writes EVENTS events (default 20M) to FILE (default /tmp/tlm-bench.trace,
 * removed afterwards) with 64 KiB chunks, uncompressed then zstd, reads each
 * back and prints events/s for both directions and bytes/event.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "synth.h"
#include "tlm/trace.h"

#define POOL (1u << 20) /* pre-generated events, replayed with shifted times */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int file_sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5;
}

int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 0) : 20000000ULL;
	const char *path = argc > 2 ? argv[2] : "/tmp/tlm-bench.trace";
	struct tlm_event *pool = malloc(POOL * sizeof *pool);
	struct synth s;
	synth_init(&s, 7);
	for (unsigned i = 0; i < POOL; i++)
		synth_next(&s, &pool[i]);
	uint64_t span = s.t - pool[0].time_ns + 1000;

	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.clock_id = 1;
	strcpy(h.host, "bench");
	char *args[] = {"bench_trace"};
	h.argc = 1;
	h.argv = args;

	for (int compress = 0; compress < 2; compress++) {
		FILE *f = fopen(path, "wb");
		if (!f) {
			perror(path);
			return 1;
		}
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		struct tlm_tw *w = tlm_tw_open(&h, file_sink, f, 64 << 10, compress, NULL);
		double t0 = now();
		for (unsigned long long i = 0; i < n; i++) {
			struct tlm_event ev = pool[i % POOL];
			ev.time_ns += (i / POOL) * span;
			tlm_tw_event(w, &ev);
		}
		tlm_tw_end(w, s.t + (n / POOL) * span);
		double t1 = now();
		uint64_t bytes = tlm_tw_bytes(w);
		tlm_tw_close(w);
		fclose(f);

		char err[256];
		struct tlm_reader *r = tlm_reader_open(path, err, sizeof err);
		if (!r) {
			fprintf(stderr, "%s: %s\n", path, err);
			return 1;
		}
		struct tlm_record *rec = malloc(sizeof *rec);
		uint64_t events = 0, sum = 0;
		double t2 = now();
		while (tlm_reader_next(r, rec))
			if (rec->type == TLM_REC_EVENT) {
				events++;
				sum += rec->u.ev.addr;
			}
		double t3 = now();
		int ok = events == n && tlm_reader_state(r) == TLM_TRACE_CLEAN &&
			 tlm_reader_errors(r, NULL) == 0;
		tlm_reader_close(r);
		free(rec);
		printf("%-5s %llu events, %llu bytes, %.2f bytes/event; encode %.1f M events/s; "
		       "decode %.1f M events/s%s (checksum %llx)\n",
		       compress ? "zstd" : "raw", n, (unsigned long long)bytes, (double)bytes / (double)n,
		       (double)n / (t1 - t0) / 1e6, (double)events / (t3 - t2) / 1e6,
		       ok ? "" : " READ BACK FAILED", (unsigned long long)sum);
		if (!ok)
			return 1;
	}
	unlink(path);
	free(pool);
	return 0;
}
