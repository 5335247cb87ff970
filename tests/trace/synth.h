/* SPDX-License-Identifier: MIT */
/*
 * synth.h - a deterministic synthetic workload for size and speed checks: a
 * few threads running an alloc/free loop on device, pinned host and managed
 * memory, with addresses inside a few hundred MiB, sizes from bytes to 1 GiB,
 * stacks from a small set of call sites and a rare failed allocation.
 *
 * Contract: synth_next() produces the same event stream for the same seed.
 */
#ifndef TLM_TESTS_SYNTH_H
#define TLM_TESTS_SYNTH_H

#include <stdint.h>

#include "tlm/event.h"

#define SYNTH_THREADS 4
#define SYNTH_LIVE 256

struct synth {
	uint64_t rng, t;
	uint32_t thread;
	uint32_t nlive;
	struct { uint64_t addr, size; uint8_t kind; } live[SYNTH_LIVE];
};

static inline uint64_t synth_rand(struct synth *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1DULL;
}

static inline void synth_init(struct synth *s, uint64_t seed)
{
	s->rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	s->t = 5000000000ULL;
	s->thread = 0;
	s->nlive = 0;
}

static inline void synth_next(struct synth *s, struct tlm_event *ev)
{
	uint64_t r = synth_rand(s);
	*ev = (struct tlm_event){0};
	s->t += 500 + r % 20000;   /* 0.5..20 us between calls */
	ev->time_ns = s->t;
	if ((r >> 20) % 2)         /* threads run in short bursts */
		s->thread = (uint32_t)((r >> 24) % SYNTH_THREADS);
	ev->thread = s->thread;
	ev->device = 0;
	ev->flags = TLM_EVF_RUNTIME;

	int do_alloc = s->nlive < 32 || (s->nlive < SYNTH_LIVE && (r >> 30) % 2);
	if (!do_alloc) {
		uint32_t i = (uint32_t)((r >> 32) % s->nlive);
		ev->op = TLM_OP_FREE;
		ev->kind = s->live[i].kind;
		ev->addr = s->live[i].addr;
		ev->api = ev->kind == TLM_KIND_HOST_PINNED ? TLM_API_cudaFreeHost : TLM_API_cudaFree;
		ev->stack_id = 13 + (uint32_t)((r >> 40) % 4);
		s->live[i] = s->live[--s->nlive];
		return;
	}
	uint64_t r2 = synth_rand(s);
	unsigned pk = (unsigned)(r2 % 100);
	ev->op = TLM_OP_ALLOC;
	ev->kind = pk < 90 ? TLM_KIND_DEVICE : pk < 97 ? TLM_KIND_HOST_PINNED : TLM_KIND_MANAGED;
	unsigned ps = (unsigned)((r2 >> 8) % 100);
	uint64_t base;
	switch (ev->kind) {
	case TLM_KIND_DEVICE:
		base = 0x7f4a20000000ULL;
		ev->api = TLM_API_cudaMalloc;
		break;
	case TLM_KIND_HOST_PINNED:
		base = 0x7f1234000000ULL;
		ev->api = TLM_API_cudaMallocHost;
		break;
	default:
		base = 0x7f0000000000ULL;
		ev->api = TLM_API_cudaMallocManaged;
		break;
	}
	if (ps < 50) {             /* small, arbitrary byte counts, sub-allocated */
		ev->size = 1 + (r2 >> 16) % 65536;
		ev->addr = base + ((r2 >> 32) % (256u << 20)) / 512 * 512;
	} else if (ps < 85) {      /* medium, 512-byte multiples */
		ev->size = (1 + (r2 >> 16) % 32768) * 512;
		ev->addr = base + ((r2 >> 32) % (256u << 20)) / 512 * 512;
	} else {                   /* large: 2 MiB .. 1 GiB, 2 MiB aligned */
		ev->size = (2ULL << 20) << ((r2 >> 16) % 10);
		ev->addr = base + (256ULL << 20) + ((r2 >> 32) % 256) * (2ULL << 20);
	}
	ev->stack_id = 1 + (uint32_t)((r2 >> 48) % 4 ? (r2 >> 52) % 3 : (r2 >> 52) % 12);
	if ((r2 >> 40) % 1000 == 0) { /* a failed allocation */
		ev->result = 2;
		ev->device_free = ev->size / 2 + 4096;
		ev->addr = 0;
		return;
	}
	s->live[s->nlive].addr = ev->addr;
	s->live[s->nlive].size = ev->size;
	s->live[s->nlive].kind = ev->kind;
	s->nlive++;
}

#endif
