/* SPDX-License-Identifier: MIT */
/*
 * alog.h - every allocation's life, for the exports that draw each one (the
 * PyTorch memory snapshot, the HTML active-memory timeline). Internal to
 * src/analysis and src/render.
 *
 * Contract: tlm__alog_build() reads the trace once more and keeps one entry
 * per successful allocation (driver allocations, VMM reservations and
 * mappings, allocator blocks; VMM handles are left out: they have no
 * address of their own), with its
 * allocation and free (time, event ordinal, stack), and one entry per
 * failed allocation that ran out of memory. Frees are matched as the report
 * matches them (replay.c): device and managed memory share one address
 * space, an allocation at an address still live ends the old one. Memory:
 * one entry per allocation, up to max (the rest are counted, not kept).
 * tlm__alog_build_recent() keeps instead every allocation live at once (up
 * to max: past it, it stops with err) and the last `keep` to end, in the
 * order they ended (older ended ones are counted in dropped): memory bounded
 * by the live state and keep, whatever the trace's length, and a window
 * that replays backwards from the end state (PyTorch's own snapshot keeps
 * such a window: max_entries). Failed allocations: the first
 * TLM__AL_MAX_OOMS are kept, the rest counted (oom_dropped).
 * A driver allocation or mapping that held an allocator block during its
 * life is marked TLM__AL_OWNED: it is one of the allocator's segments; so
 * is a reservation that did, and every mapping inside it (PyTorch's
 * expandable segments map pages before blocks use them).
 */
#ifndef TLM_REPORT_ALOG_H
#define TLM_REPORT_ALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/report.h"

#define TLM__AL_OWNED 0x1u   /* a segment: an allocator block lay inside it */
#define TLM__AL_LIVE 0x2u    /* never freed (before the end of the log) */
#define TLM__AL_DROP 0x4u    /* internal: ended and left out of the window, compacted away */
#define TLM__AL_MAX_OOMS 65536u

struct tlm__al {
	uint64_t addr, size, stream;
	uint64_t seq_alloc, seq_free;   /* event ordinals (1-based); seq_free 0 while live */
	int64_t t_alloc, t_free;        /* ns since the trace start; t_free meaningful unless LIVE */
	uint32_t stack_id, free_stack;  /* canonical stack ids (Python stacks by their frames) */
	uint32_t parent;                /* blocks: the segment holding it; mappings: their reservation;
	                                 * else UINT32_MAX */
	int16_t device;
	uint8_t kind;                   /* enum tlm_kind: DEVICE, MANAGED, HOST_PINNED, VMM_RESERVE,
	                                 * VMM_MAPPING, BLOCK */
	uint8_t flags;                  /* TLM__AL_* */
	uint16_t api;                   /* enum tlm_api of the allocation */
};

struct tlm__al_oom {
	uint64_t seq, size, device_free, stream;
	int64_t t;
	uint32_t stack_id, thread;
	int16_t device;
	uint8_t kind;
	bool allocator;                 /* reported by the allocator tap; device_free then comes
	                                 * from its last failed driver request (replay.c folds them) */
};

struct tlm__alog {
	size_t n, cap;
	struct tlm__al *e;              /* in allocation order */
	size_t noom, capoom;
	struct tlm__al_oom *oom;
	uint64_t dropped;               /* allocations past max (or before the window), not kept */
	uint64_t oom_dropped;           /* failed allocations past TLM__AL_MAX_OOMS */
	uint64_t start_realtime_ns;     /* CLOCK_REALTIME at the trace start */
	uint64_t events;                /* events read */
	int64_t end_ns;                 /* the last event's time (since the start) */
	bool stopped_at_end;            /* the log stopped where the run ended */
	int max_device;                 /* highest device ordinal seen, -1 for none */
};

/* Reads r's trace again. stop_at_end: stop at the end of the run (the first
 * free once Python's finalization began, or the END record), as a snapshot
 * taken by the program itself would. 0, or -1 with err. */
int tlm__alog_build(struct tlm_report *r, size_t max, bool stop_at_end, struct tlm__alog *out, char *err,
		    size_t errlen);
int tlm__alog_build_recent(struct tlm_report *r, size_t max, size_t keep, bool stop_at_end, struct tlm__alog *out,
			   char *err, size_t errlen);
void tlm__alog_free(struct tlm__alog *l);

#endif
