/* SPDX-License-Identifier: MIT */
/*
 * hostile_gen.c - writes crafted traces for the hostile-input tests
 * (test_inputs.sh, docs/reliability.md):
 *
 *   hostile_gen esc OUT       every string a trace carries (host, exe, argv,
 *                             the recorded torch allocator configuration,
 *                             environment properties, thread names, module
 *                             paths, Python file and function names) holds
 *                             terminal escapes: CSI, an OSC 52 clipboard
 *                             write, a window title, BEL, DEL, a C1 CSI in
 *                             UTF-8 (U+009B), a raw 0x9b byte, a newline;
 *                             with device and allocator-block events, a
 *                             leak, an OOM and a fragmentation OOM
 *   hostile_gen many OUT N    N pairs of the same cudaMalloc/cudaFree and of
 *                             the same allocator block (one live at a time),
 *                             zstd-compressed: a few bytes per thousand
 *                             events on disk
 *   hostile_gen times OUT     event times at both ends of the clock (before
 *                             the trace start, 2^63 ns after it), for the
 *                             arithmetic on them
 *   hostile_gen realtime OUT NS   a small clean trace started at CLOCK_REALTIME NS
 *
 * Prints nothing; exits 1 on a write error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlm/trace.h"

#define MiB (1ull << 20)

/* one of each kind of escape a terminal acts on */
#define EVIL "\x1b[2J\x1b]52;c;aGFja2Vk\x07\x1b]0;owned\x1b\\\xc2\x9b" "31m\x9b" "1m\x7f\nX"

static FILE *out;
static struct tlm_tw *w;

static int sink(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	return fwrite(buf, 1, len, out) == len ? 0 : -5;
}

static void check(int rc)
{
	if (rc) {
		fprintf(stderr, "hostile_gen: write error %d\n", rc);
		exit(1);
	}
}

static void open_trace(const char *path, const char *host, const char *exe, int argc, char **argv,
		       uint64_t realtime, uint64_t mono, int compress)
{
	if (!(out = fopen(path, "wb"))) {
		perror(path);
		exit(1);
	}
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.pid = 4242;
	h.ppid = 1;
	h.start_realtime_ns = realtime;
	h.start_monotonic_ns = mono;
	h.clock_id = 1;
	h.stack_depth = 8;
	snprintf(h.host, sizeof h.host, "%s", host);
	snprintf(h.exe, sizeof h.exe, "%s", exe);
	snprintf(h.tlm_version, sizeof h.tlm_version, "0.1.0");
	h.argc = (uint32_t)argc;
	h.argv = argv;
	int err = 0;
	if (!(w = tlm_tw_open(&h, sink, NULL, 65536, compress, &err)))
		check(err ? err : -12);
}

static void close_trace(uint64_t end)
{
	check(tlm_tw_end(w, end));
	tlm_tw_close(w);
	if (fclose(out))
		check(-5);
}

static void ev(uint64_t t, unsigned op, unsigned kind, uint64_t addr, uint64_t size, int result, uint32_t stack)
{
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	e.time_ns = t;
	e.op = (uint8_t)op;
	e.kind = (uint8_t)kind;
	e.addr = addr;
	e.size = size;
	e.device = 0;
	e.result = result;
	e.device_free = result ? 3 * MiB : 0;
	e.stack_id = stack;
	e.api = kind == TLM_KIND_BLOCK ? (result ? TLM_API_c10_reportOutOfMemoryToProfiler
						 : TLM_API_c10_reportMemoryUsageToProfiler)
				       : op == TLM_OP_FREE ? TLM_API_cudaFree : TLM_API_cudaMalloc;
	check(tlm_tw_event(w, &e));
}

static int gen_esc(const char *path)
{
	char *argv[] = {"python", "train.py", "--name=" EVIL};
	open_trace(path, "node" EVIL, "/usr/bin/" EVIL, 3, argv, 1800000000000000000ull, 1000000000ull, 1);
	check(tlm_tw_prop(w, "torch.alloc_conf", "expandable_segments:False," EVIL ":1"));
	check(tlm_tw_prop(w, "env.RANK", "0"));
	check(tlm_tw_prop(w, "env.MASTER_ADDR", "h" EVIL));
	check(tlm_tw_prop(w, "cupti.detail", "d" EVIL));
	check(tlm_tw_prop(w, "device.0.memory", "67108864"));
	struct tlm_rec_thread th = {.index = 0, .tid = 4242};
	snprintf(th.name, sizeof th.name, "t\x1b]2;x\x07");
	check(tlm_tw_thread(w, &th));
	struct tlm_rec_module m;
	memset(&m, 0, sizeof m);
	m.id = 1;
	m.base = 0x400000;
	m.nseg = 1;
	m.seg[0].start = 0x400000;
	m.seg[0].end = 0x500000;
	snprintf(m.path, sizeof m.path, "/nonexistent/lib" EVIL ".so");
	check(tlm_tw_module(w, &m));
	uint64_t ip[2] = {0x401234, 0x405678};
	check(tlm_tw_stack(w, 1, ip, 2));
	check(tlm_tw_string(w, 1, "/src/" EVIL ".py", (uint32_t)strlen("/src/" EVIL ".py")));
	check(tlm_tw_string(w, 2, "fn" EVIL, (uint32_t)strlen("fn" EVIL)));
	struct tlm_rec_pystack ps;
	memset(&ps, 0, sizeof ps);
	ps.id = 2;
	ps.native = 1;
	ps.depth = 1;
	ps.f[0].file = 1;
	ps.f[0].name = 2;
	ps.f[0].line = 7;
	check(tlm_tw_pystack(w, &ps));
	uint64_t t = 1000000000ull, seg = 0x7f0000000000ull;
	/* the allocator's segment, blocks in it, a block freed, a leak */
	ev(t += 1000, TLM_OP_ALLOC, TLM_KIND_DEVICE, seg, 20 * MiB, 0, 1);
	for (int i = 0; i < 4; i++)
		ev(t += 1000, TLM_OP_ALLOC, TLM_KIND_BLOCK, seg + (uint64_t)i * 4 * MiB, 4 * MiB, 0, 2);
	ev(t += 1000, TLM_OP_FREE, TLM_KIND_BLOCK, seg + 4 * MiB, 0, 0, 2);
	ev(t += 1000, TLM_OP_ALLOC, TLM_KIND_DEVICE, seg + 64 * MiB, 2 * MiB, 0, 1);
	/* an OOM of the driver and of the allocator (free memory fragmented) */
	ev(t += 1000, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 60 * MiB, 2, 1);
	ev(t += 1000, TLM_OP_ALLOC, TLM_KIND_BLOCK, 0, 8 * MiB, 2, 2);
	close_trace(t + 1000);
	return 0;
}

static int gen_many(const char *path, long n)
{
	char *argv[] = {"bomb"};
	open_trace(path, "vm", "/usr/bin/bomb", 1, argv, 1800000000000000000ull, 1000000000ull, 1);
	uint64_t ip[1] = {0x401234};
	check(tlm_tw_stack(w, 1, ip, 1));
	uint64_t t = 1000000000ull, a = 0x7f0000000000ull;
	ev(t += 1, TLM_OP_ALLOC, TLM_KIND_DEVICE, a, 64 * MiB, 0, 1);
	for (long i = 0; i < n; i++) {
		ev(t += 1, TLM_OP_ALLOC, TLM_KIND_BLOCK, a, 512, 0, 1);
		ev(t += 1, TLM_OP_FREE, TLM_KIND_BLOCK, a, 0, 0, 1);
		ev(t += 1, TLM_OP_ALLOC, TLM_KIND_DEVICE, a + 64 * MiB, 512, 0, 1);
		ev(t += 1, TLM_OP_FREE, TLM_KIND_DEVICE, a + 64 * MiB, 0, 0, 1);
	}
	close_trace(t + 1);
	return 0;
}

static int gen_times(const char *path)
{
	char *argv[] = {"clock"};
	/* the start in the middle of the clock: events long before it and 2^63 ns after */
	uint64_t start = 1ull << 62;
	open_trace(path, "vm", "/usr/bin/clock", 1, argv, 1800000000000000000ull, start, 0);
	uint64_t ip[1] = {0x401234};
	check(tlm_tw_stack(w, 1, ip, 1));
	uint64_t a = 0x7f0000000000ull;
	ev(1, TLM_OP_ALLOC, TLM_KIND_DEVICE, a, 64 * MiB, 0, 1);
	ev(2, TLM_OP_ALLOC, TLM_KIND_BLOCK, a, 4 * MiB, 0, 1);
	ev(start + (1ull << 63), TLM_OP_FREE, TLM_KIND_BLOCK, a, 0, 0, 1);
	ev(UINT64_MAX - 1, TLM_OP_ALLOC, TLM_KIND_BLOCK, a, 4 * MiB, 0, 1);
	ev(UINT64_MAX, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ull << 40, 2, 1);
	close_trace(UINT64_MAX);
	return 0;
}

static int gen_realtime(const char *path, uint64_t realtime)
{
	char *argv[] = {"clock"};
	open_trace(path, "vm", "/usr/bin/clock", 1, argv, realtime, 1000000000ull, 0);
	ev(1000001000ull, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0x7f0000000000ull, MiB, 0, 0);
	ev(1000002000ull, TLM_OP_ALLOC, TLM_KIND_DEVICE, 0, 1ull << 40, 2, 0);
	close_trace(1000003000ull);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "esc"))
		return gen_esc(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "many"))
		return gen_many(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "times"))
		return gen_times(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "realtime"))
		return gen_realtime(argv[2], strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: hostile_gen esc|many|times|realtime OUT [N]\n");
	return 2;
}
