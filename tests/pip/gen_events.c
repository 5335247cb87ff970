/* SPDX-License-Identifier: MIT */
/*
 * gen_events.c - a trace of N events of synth.h's workload (threads,
 * device/pinned/managed, sizes from bytes to 1 GiB, rare failures), with
 * every field varied (device, stream, aux, flags too), for the Python
 * reader's tests and its loading benchmark:
 *   gen_events TRACE N [TRUTH]
 * TRUTH gets what was written, the truth the reader's columns must equal:
 * per event 13 little-endian int64 in the column order of tlmpy.h (time
 * since the header's start_monotonic_ns, op, kind, device, address, size,
 * stream, aux, thread, stack id, result, flags, api).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/synth.h"
#include "tlm/trace.h"

static int sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: gen_events TRACE N [TRUTH]\n");
		return 2;
	}
	unsigned long long n = strtoull(argv[2], NULL, 0);
	FILE *f = fopen(argv[1], "wb"), *truth = argc == 4 ? fopen(argv[3], "wb") : NULL;
	if (!f || (argc == 4 && !truth)) {
		perror("gen_events");
		return 1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.pid = 4242;
	h.ppid = 1;
	h.clock_id = 1;
	h.start_realtime_ns = 1800000000000000000ull;
	h.start_monotonic_ns = 4000000000ull;
	strcpy(h.host, "gen");
	strcpy(h.exe, "/usr/bin/gen_events");
	strcpy(h.tlm_version, "test");
	char *args[] = {"gen_events", argv[2]};
	h.argc = 2;
	h.argv = args;
	struct tlm_tw *w = tlm_tw_open(&h, sink, f, 64 << 10, 1, NULL);
	if (!w)
		return 1;
	for (uint32_t t = 0; t < SYNTH_THREADS; t++) {
		struct tlm_rec_thread th = {.index = t, .tid = 100 + (int32_t)t};
		snprintf(th.name, sizeof th.name, "worker%u", t);
		tlm_tw_thread(w, &th);
	}
	struct synth s;
	synth_init(&s, 11);
	for (unsigned long long i = 0; i < n; i++) {
		struct tlm_event ev;
		synth_next(&s, &ev);
		uint64_t r = synth_rand(&s);
		ev.device = (int16_t)(ev.kind == TLM_KIND_HOST_PINNED ? -1 : (int)(r % 3));
		ev.stream = r % 8 ? 0 : 0x5500 + (r >> 8) % 4;
		ev.aux = r % 16 ? 0 : r >> 20;
		ev.flags |= r % 64 ? 0 : TLM_EVF_LATE;
		if (tlm_tw_event(w, &ev))
			return 1;
		if (truth) {
			int64_t row[13] = {(int64_t)(ev.time_ns - h.start_monotonic_ns), ev.op, ev.kind, ev.device,
					   (int64_t)ev.addr, (int64_t)ev.size, (int64_t)ev.stream, (int64_t)ev.aux,
					   ev.thread, ev.stack_id, ev.result, ev.flags, ev.api};
			if (fwrite(row, sizeof row, 1, truth) != 1)
				return 1;
		}
	}
	if (tlm_tw_end(w, s.t + 1000) || fclose(f) || (truth && fclose(truth)))
		return 1;
	tlm_tw_close(w);
	return 0;
}
