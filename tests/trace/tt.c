/* SPDX-License-Identifier: MIT */
/* tt.c - test helpers, see tt.h. */
#include "tt.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tt_mem_sink(void *ctx, const void *buf, size_t len)
{
	struct membuf *m = ctx;
	m->calls++;
	if (m->fail)
		return m->fail;
	if (m->len + len > m->cap) {
		size_t ncap = (m->len + len) * 2;
		uint8_t *np = realloc(m->p, ncap);
		if (!np)
			return -ENOMEM;
		m->p = np;
		m->cap = ncap;
	}
	memcpy(m->p + m->len, buf, len);
	m->len += len;
	return 0;
}

void tt_header(struct tlm_trace_header *h)
{
	static char *argv[] = {"train", "--lr", "0.1", "my file", ""};
	memset(h, 0, sizeof *h);
	h->version = TLM_TRACE_VERSION;
	h->flags = TLM_TRACE_F_DROP_MODE;
	h->pid = 4242;
	h->ppid = 1;
	h->start_realtime_ns = 1700000000123456789ULL;
	h->start_monotonic_ns = 1000000000ULL;
	h->clock_id = 1;
	h->stack_depth = 16;
	strcpy(h->host, "testhost");
	strcpy(h->exe, "/usr/bin/train");
	strcpy(h->tlm_version, "0.1.0");
	h->argc = 5;
	h->argv = argv;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64 */
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

static const uint64_t edges[] = {
	0, 1, 2, UINT64_MAX, UINT64_MAX - 1, 1ULL << 63, (1ULL << 63) - 1, 1ULL << 62,
	(1ULL << 62) + 1, (1ULL << 62) - 1, 3ULL << 62, 256, 4096, 2ULL << 20,
	0x7f4a20000000ULL, 0x7f4a20000100ULL, 0xffffffffULL, 0x100000000ULL,
};

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	r->s = mix(r->s);
	return r->s;
}

static uint64_t pick64(struct rng *r, int edge, uint64_t normal)
{
	uint64_t x = next(r);
	if ((int)(x % 100) < edge)
		return edges[(x >> 8) % (sizeof edges / sizeof edges[0])];
	return normal;
}

void tt_gen(uint64_t i, int edge, struct tlm_record *rec)
{
	struct rng r = {mix(i * 7919 + 17)};
	uint64_t x = next(&r);
	unsigned t = (unsigned)(x % 100);
	/* Clear only the header and the member used: records are 5 KiB. */
	memset(rec, 0, offsetof(struct tlm_record, u));
	if (t < 80) {
		memset(&rec->u.ev, 0, sizeof rec->u.ev);
		struct tlm_event *e = &rec->u.ev;
		rec->type = TLM_REC_EVENT;
		/* Base values drift with i so deltas are realistic; edges jump. */
		e->time_ns = pick64(&r, edge, 1000000000ULL + i * 1500 + next(&r) % 700);
		e->addr = pick64(&r, edge, 0x7f4a20000000ULL + (next(&r) % (300u << 20)) / 256 * 256);
		e->size = pick64(&r, edge, next(&r) % 3 ? next(&r) % (1u << 30) : 0);
		e->stream = pick64(&r, edge, next(&r) % 4 ? 0 : 0x55550000 + next(&r) % 4 * 0x100);
		e->aux = pick64(&r, edge, next(&r) % 8 ? 0 : 0x66660000 + next(&r) % 4 * 0x40);
		e->device_free = pick64(&r, edge, next(&r) % 50 ? 0 : next(&r));
		e->stack_id = (uint32_t)pick64(&r, edge, next(&r) % 20);
		e->thread = (uint32_t)pick64(&r, edge, next(&r) % 4);
		e->result = (int32_t)pick64(&r, edge, next(&r) % 30 ? 0 : (uint64_t)(int64_t)-(int64_t)(next(&r) % 3) + 2);
		e->device = (int16_t)pick64(&r, edge, next(&r) % 10 ? 0 : (uint64_t)-1);
		uint64_t o = next(&r) % 100;
		e->op = (uint8_t)(o < 45 ? TLM_OP_ALLOC : o < 90 ? TLM_OP_FREE : o < 98 ? 3 + o % 3 : pick64(&r, 100, 0));
		e->kind = (uint8_t)(next(&r) % 50 ? next(&r) % TLM_KIND_COUNT : pick64(&r, 100, 0));
		e->flags = (uint16_t)pick64(&r, edge, next(&r) % 3);
		e->api = (uint16_t)pick64(&r, edge, next(&r) % TLM_API_COUNT);
		return;
	}
	x = next(&r);
	switch (t % 8) {
	case 0: {
		memset(&rec->u.thread, 0, sizeof rec->u.thread);
		rec->type = TLM_REC_THREAD;
		rec->u.thread.index = (uint32_t)pick64(&r, edge, x % 8);
		rec->u.thread.tid = (int32_t)pick64(&r, edge, 1000 + x % 5000);
		size_t n = next(&r) % 16;
		for (size_t k = 0; k < n; k++)
			rec->u.thread.name[k] = (char)(1 + next(&r) % 255);
		break;
	}
	case 1: {
		memset(&rec->u.stack, 0, offsetof(struct tlm_rec_stack, ip));
		rec->type = TLM_REC_STACK;
		rec->u.stack.id = (uint32_t)pick64(&r, edge, 1 + x % 100);
		rec->u.stack.depth = (uint32_t)(next(&r) % 3 ? next(&r) % 24 : next(&r) % (TLM_MAX_STACK_DEPTH + 1));
		for (uint32_t k = 0; k < rec->u.stack.depth; k++)
			rec->u.stack.ip[k] = pick64(&r, edge / 4, 0x400000 + next(&r) % 0x100000);
		break;
	}
	case 2: {
		struct tlm_rec_module *m = &rec->u.module;
		memset(m, 0, sizeof *m);
		rec->type = TLM_REC_MODULE;
		m->id = (uint32_t)pick64(&r, edge, 1 + x % 50);
		m->base = pick64(&r, edge, 0x7f0000000000ULL + (next(&r) % 1000) * 0x1000);
		m->nseg = (uint32_t)(next(&r) % (TLM_MAX_SEGMENTS + 1));
		uint64_t a = m->base;
		for (uint32_t k = 0; k < m->nseg; k++) {
			m->seg[k].start = pick64(&r, edge / 4, a + next(&r) % 0x10000);
			m->seg[k].end = pick64(&r, edge / 4, m->seg[k].start + next(&r) % 0x100000);
			a = m->seg[k].end;
		}
		m->build_id_len = (uint32_t)(next(&r) % 65);
		for (uint32_t k = 0; k < m->build_id_len; k++)
			m->build_id[k] = (uint8_t)next(&r);
		size_t n = next(&r) % 4 ? next(&r) % 80 : next(&r) % 4096;
		for (size_t k = 0; k < n; k++)
			m->path[k] = (char)(1 + next(&r) % 255);
		break;
	}
	case 3:
		memset(&rec->u.lost, 0, sizeof rec->u.lost);
		rec->type = TLM_REC_MODULE_UNLOAD;
		rec->u.module_unload = (uint32_t)pick64(&r, edge, 1 + x % 50);
		break;
	case 4:
		memset(&rec->u.lost, 0, sizeof rec->u.lost);
		rec->type = TLM_REC_LOST;
		rec->u.lost.thread = (uint32_t)pick64(&r, edge, x % 8);
		rec->u.lost.count = next(&r) % 1000;
		break;
	case 5: {
		struct tlm_rec_devmem *d = &rec->u.devmem;
		memset(d, 0, sizeof *d);
		rec->type = TLM_REC_DEVMEM;
		d->sample = (uint32_t)pick64(&r, edge, x % 1000);
		d->device = (int32_t)pick64(&r, edge, next(&r) % 8);
		d->why = (uint32_t)pick64(&r, edge, next(&r) % 4);
		d->flags = (uint32_t)pick64(&r, edge, next(&r) % 2);
		d->time_ns = pick64(&r, edge, 1000000000ULL + i * 1500);
		d->total = pick64(&r, edge, 80ULL << 30);
		d->free = pick64(&r, edge, next(&r) % (80ULL << 30));
		break;
	}
	case 6: {
		struct tlm_rec_devprocs *d = &rec->u.devprocs;
		memset(d, 0, offsetof(struct tlm_rec_devprocs, p));
		rec->type = TLM_REC_DEVPROCS;
		d->sample = (uint32_t)pick64(&r, edge, x % 1000);
		d->device = (int32_t)pick64(&r, edge, next(&r) % 8);
		d->status = (int32_t)pick64(&r, edge, next(&r) % 3 ? 0 : next(&r) % 2 ? (uint64_t)-1 : 3);
		d->time_ns = pick64(&r, edge, 1000000000ULL + i * 1500);
		d->n = d->status ? 0 : (uint32_t)(next(&r) % 4 ? next(&r) % 8 : next(&r) % (TLM_MAX_DEVPROCS + 1));
		for (uint32_t k = 0; k < d->n; k++) {
			d->p[k].pid = (uint32_t)pick64(&r, edge, 1000 + next(&r) % 100000);
			d->p[k].used = pick64(&r, edge, next(&r) % (80ULL << 30));
		}
		break;
	}
	default:
		memset(&rec->u.lost, 0, sizeof rec->u.lost);
		rec->type = TLM_REC_SIGNAL;
		rec->u.signal = (int32_t)pick64(&r, edge, 1 + x % 31);
		break;
	}
}

int tt_write(struct tlm_tw *w, const struct tlm_record *rec)
{
	switch (rec->type) {
	case TLM_REC_EVENT: return tlm_tw_event(w, &rec->u.ev);
	case TLM_REC_THREAD: return tlm_tw_thread(w, &rec->u.thread);
	case TLM_REC_STACK: return tlm_tw_stack(w, rec->u.stack.id, rec->u.stack.ip, rec->u.stack.depth);
	case TLM_REC_MODULE: return tlm_tw_module(w, &rec->u.module);
	case TLM_REC_MODULE_UNLOAD: return tlm_tw_module_unload(w, rec->u.module_unload);
	case TLM_REC_LOST: return tlm_tw_lost(w, rec->u.lost.thread, rec->u.lost.count);
	case TLM_REC_SIGNAL: return tlm_tw_signal(w, rec->u.signal);
	case TLM_REC_DEVMEM: return tlm_tw_devmem(w, &rec->u.devmem);
	case TLM_REC_DEVPROCS: return tlm_tw_devprocs(w, &rec->u.devprocs);
	case TLM_REC_END: return tlm_tw_end(w, rec->u.end.end_monotonic_ns);
	}
	return -EINVAL;
}

#define DIFF(field)                                                                 \
	do {                                                                        \
		if (a->field != b->field) {                                         \
			fprintf(stderr, "record differs in " #field ": %llu != %llu\n", \
				(unsigned long long)a->field, (unsigned long long)b->field); \
			return 0;                                                   \
		}                                                                   \
	} while (0)

int tt_equal(const struct tlm_record *a, const struct tlm_record *b)
{
	DIFF(type);
	DIFF(seq);
	switch (a->type) {
	case TLM_REC_EVENT:
		DIFF(u.ev.time_ns);
		DIFF(u.ev.addr);
		DIFF(u.ev.size);
		DIFF(u.ev.stream);
		DIFF(u.ev.aux);
		DIFF(u.ev.device_free);
		DIFF(u.ev.stack_id);
		DIFF(u.ev.thread);
		DIFF(u.ev.result);
		DIFF(u.ev.device);
		DIFF(u.ev.op);
		DIFF(u.ev.kind);
		DIFF(u.ev.flags);
		DIFF(u.ev.api);
		break;
	case TLM_REC_THREAD:
		DIFF(u.thread.index);
		DIFF(u.thread.tid);
		if (memcmp(a->u.thread.name, b->u.thread.name, sizeof a->u.thread.name)) {
			fprintf(stderr, "thread name differs\n");
			return 0;
		}
		break;
	case TLM_REC_STACK:
		DIFF(u.stack.id);
		DIFF(u.stack.depth);
		for (uint32_t k = 0; k < a->u.stack.depth; k++)
			DIFF(u.stack.ip[k]);
		break;
	case TLM_REC_MODULE:
		DIFF(u.module.id);
		DIFF(u.module.base);
		DIFF(u.module.nseg);
		for (uint32_t k = 0; k < a->u.module.nseg; k++) {
			DIFF(u.module.seg[k].start);
			DIFF(u.module.seg[k].end);
		}
		DIFF(u.module.build_id_len);
		if (memcmp(a->u.module.build_id, b->u.module.build_id, a->u.module.build_id_len) ||
		    strcmp(a->u.module.path, b->u.module.path)) {
			fprintf(stderr, "module build-id or path differs\n");
			return 0;
		}
		break;
	case TLM_REC_MODULE_UNLOAD:
		DIFF(u.module_unload);
		break;
	case TLM_REC_LOST:
		DIFF(u.lost.thread);
		DIFF(u.lost.count);
		break;
	case TLM_REC_SIGNAL:
		DIFF(u.signal);
		break;
	case TLM_REC_DEVMEM:
		DIFF(u.devmem.sample);
		DIFF(u.devmem.device);
		DIFF(u.devmem.why);
		DIFF(u.devmem.flags);
		DIFF(u.devmem.time_ns);
		DIFF(u.devmem.total);
		DIFF(u.devmem.free);
		break;
	case TLM_REC_DEVPROCS:
		DIFF(u.devprocs.sample);
		DIFF(u.devprocs.device);
		DIFF(u.devprocs.status);
		DIFF(u.devprocs.time_ns);
		DIFF(u.devprocs.n);
		for (uint32_t k = 0; k < a->u.devprocs.n; k++) {
			DIFF(u.devprocs.p[k].pid);
			DIFF(u.devprocs.p[k].used);
		}
		break;
	case TLM_REC_CLOCK:
		DIFF(u.clock.time_ns);
		DIFF(u.clock.realtime_ns);
		break;
	case TLM_REC_END:
		DIFF(u.end.events);
		DIFF(u.end.lost);
		DIFF(u.end.end_monotonic_ns);
		break;
	}
	return 1;
}

char *tt_tmpfile(const void *buf, size_t len)
{
	/* The tests rewrite files thousands of times: prefer memory-backed
	 * /dev/shm over a disk that may discard on every truncation. */
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	char *path;
	if (asprintf(&path, "%s/tlm-test-XXXXXX", dir) < 0)
		abort();
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	tt_rewrite(path, buf, len);
	return path;
}

void tt_rewrite(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f || (len && fwrite(buf, 1, len, f) != len) || fclose(f))
		abort();
}
