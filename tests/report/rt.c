/* SPDX-License-Identifier: MIT */
/* rt.c - report test helpers, see rt.h. */
#include "rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../trace/tt.h"

struct rt {
	struct membuf m;
	struct tlm_tw *w;
};

static void must(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "rt: %s failed: %d\n", what, rc);
		abort();
	}
}

struct rt *rt_open(void)
{
	struct rt *t = calloc(1, sizeof *t);
	static char *argv[] = {"train", "--epochs", "3"};
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.pid = 4242;
	h.ppid = 1;
	h.start_realtime_ns = 1700000000000000000ULL;
	h.start_monotonic_ns = RT_START;
	h.clock_id = 1;
	h.stack_depth = 64;
	strcpy(h.host, "testhost");
	strcpy(h.exe, "/usr/bin/train");
	strcpy(h.tlm_version, "0.1.0");
	h.argc = 3;
	h.argv = argv;
	int err = 0;
	t->w = tlm_tw_open(&h, tt_mem_sink, &t->m, 4096, 0, &err);
	if (!t->w)
		abort();
	return t;
}

void rt_stack(struct rt *t, uint32_t id, const uint64_t *ip, uint32_t depth)
{
	must(tlm_tw_stack(t->w, id, ip, depth), "stack");
}

void rt_ev(struct rt *t, unsigned op, unsigned kind, uint64_t addr, uint64_t size, uint64_t time, uint32_t stack,
	   int device, int result, uint64_t device_free)
{
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	e.op = (uint8_t)op;
	e.kind = (uint8_t)kind;
	e.addr = addr;
	e.size = size;
	e.time_ns = RT_START + time;
	e.stack_id = stack;
	e.device = (int16_t)device;
	e.result = result;
	e.device_free = device_free;
	must(tlm_tw_event(t->w, &e), "event");
}

void rt_event(struct rt *t, const struct tlm_event *ev)
{
	struct tlm_event e = *ev;
	e.time_ns += RT_START;
	must(tlm_tw_event(t->w, &e), "event");
}

void rt_alloc(struct rt *t, unsigned kind, uint64_t addr, uint64_t size, uint64_t time, uint32_t stack, int device)
{
	rt_ev(t, TLM_OP_ALLOC, kind, addr, size, time, stack, device, 0, 0);
}

void rt_free(struct rt *t, unsigned kind, uint64_t addr, uint64_t time, int device)
{
	rt_ev(t, TLM_OP_FREE, kind, addr, 0, time, 0, device, 0, 0);
}

void rt_signal(struct rt *t, int signo)
{
	must(tlm_tw_signal(t->w, signo), "signal");
}

void rt_prop(struct rt *t, const char *key, const char *value)
{
	must(tlm_tw_prop(t->w, key, value), "prop");
}

struct tlm_tw *rt_writer(struct rt *t)
{
	return t->w;
}

char *rt_close(struct rt *t, bool with_end, uint64_t end_time)
{
	if (with_end)
		must(tlm_tw_end(t->w, RT_START + end_time), "end");
	else
		must(tlm_tw_flush(t->w), "flush");
	tlm_tw_close(t->w);
	char *path = tt_tmpfile(t->m.p, t->m.len);
	free(t->m.p);
	free(t);
	return path;
}

struct tlm_report *rt_report(const char *path)
{
	char err[256];
	struct tlm_report *r = tlm_report_build(path, err, sizeof err);
	if (!r) {
		fprintf(stderr, "rt: %s: %s\n", path, err);
		abort();
	}
	tlm_report_set_resolver(r, rt_resolve, NULL);
	return r;
}

struct tlm_report *rt_build(struct rt *t, bool end, uint64_t end_t, char **pathp)
{
	char *path = rt_close(t, end, end_t);
	struct tlm_report *r = rt_report(path);
	if (pathp)
		*pathp = path;
	else {
		unlink(path);
		free(path);
	}
	return r;
}

/* Names kept in a static pool: resolver strings must outlive the report. */
static char pool[256][3][96];
static size_t npool;

size_t rt_resolve(void *ctx, uint64_t ip, struct tlm_frame *out, size_t max)
{
	(void)ctx;
	if (!max)
		return 0;
	memset(out, 0, sizeof *out);
	out->ip = ip;
	char (*p)[96] = pool[npool++ % 256];
	snprintf(p[0], 96, "fn_%llx", (unsigned long long)ip);
	snprintf(p[1], 96, "src/f%llx.c", (unsigned long long)ip);
	out->function = p[0];
	out->file = p[1];
	out->line = (int)(ip % 1000);
	out->module = "/opt/app/libapp.so";
	out->module_offset = ip - 0x400000;
	return 1;
}

char *rt_render(struct tlm_report *r, int (*fn)(struct tlm_report *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || fn(r, f))
		abort();
	fclose(f);
	return buf;
}
