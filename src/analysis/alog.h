/* SPDX-License-Identifier: MIT */
/*
 * alog.h - every allocation's life, for the exports that draw each one (the
 * PyTorch memory snapshot, the HTML active-memory timeline). Internal to
 * src/analysis and src/render.
 *
 * Contract: a consumer of the report's one pass (pass.h, asked for with
 * TLM_REPORT_ACTIVE or TLM_REPORT_SNAPSHOT) keeps one entry per successful
 * allocation (driver allocations, VMM reservations and mappings, allocator
 * blocks; VMM handles are left out: they have no address of their own),
 * with its allocation and free (time, event ordinal, stack), and one entry
 * per failed allocation that ran out of memory. Frees are the replay's
 * matches (replay.c): device and managed memory share one address space, an
 * allocation at an address still live ends the old one. The active log
 * keeps every allocation up to its maximum (the rest are counted, not kept).
 * The snapshot's keeps instead every allocation live at once (up to its
 * maximum: past it, the log is given up and the export says why) and the
 * last TLM__ALOG_SNAPSHOT_KEEP to end, in the order they ended (older ended
 * ones are counted in dropped): memory bounded by the live state, whatever
 * the trace's length, and a window that replays backwards from the end
 * state (PyTorch's own snapshot keeps such a window: max_entries). Failed
 * allocations: the first TLM__AL_MAX_OOMS are kept, the rest counted
 * (oom_dropped).
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

/* A CLOCK record (trace-format.md): from t on (ns since the trace start),
 * the wall clock reads realtime_ns + (time - t). */
struct tlm__al_clock {
	int64_t t;
	uint64_t realtime_ns;
};
#define TLM__AL_MAX_CLOCKS 65536u /* a trace's wall-clock settings kept (a hostile one's are not all) */

struct tlm__alog {
	size_t n, cap;
	struct tlm__al *e;              /* in allocation order */
	size_t noom, capoom;
	struct tlm__al_oom *oom;
	uint64_t dropped;               /* allocations past max (or before the window), not kept */
	uint64_t oom_dropped;           /* failed allocations past TLM__AL_MAX_OOMS */
	uint64_t start_realtime_ns;     /* CLOCK_REALTIME at the trace start */
	size_t nclock, capclock;
	struct tlm__al_clock *clock;    /* in trace order; times never decrease */
	uint64_t events;                /* events read */
	int64_t end_ns;                 /* the last event's time (since the start) */
	bool stopped_at_end;            /* the log stopped where the run ended */
	int max_device;                 /* highest device ordinal seen, -1 for none */
};

/* The two logs: the HTML's active-memory timeline (to the end of the trace,
 * up to its maximum of allocations, ~140 bytes each) and torch-snapshot's
 * (to the end of the run: the first free once Python's finalization began,
 * or the END record, as a snapshot taken by the program itself would; its
 * maximum is of allocations live at once, its window the last KEEP to end). */
enum { TLM__ALOG_ACTIVE = 0, TLM__ALOG_SNAPSHOT = 1 };
#define TLM__ALOG_ACTIVE_MAX (2u << 20)
#define TLM__ALOG_SNAPSHOT_MAX (4u << 20)
#define TLM__ALOG_SNAPSHOT_KEEP 100000u

struct tlm__pass;
int tlm__alog_consumer(struct tlm__pass *p, int which);
/* The report's log (a shallow copy: not to be freed), or -1 with err when
 * it was not collected. */
int tlm__alog_get(const struct tlm_report *r, int which, struct tlm__alog *out, char *err, size_t errlen);
void tlm__alog_free(struct tlm__alog *l);
/* The wall clock (CLOCK_REALTIME ns) at t ns since the trace start, as the
 * process read it then: the start's pair, or the last CLOCK record at or
 * before t (the clock was set during the run). */
uint64_t tlm__alog_realtime(const struct tlm__alog *l, int64_t t);

#endif
