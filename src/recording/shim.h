/* SPDX-License-Identifier: MIT */
/*
 * shim.h - internals of libtlm.so shared by its files (never exported).
 *
 * Contract: the hooks (hooks_*.c, procaddr.c) call tlm__enter() on entry and
 * tlm__leave() on exit; only the outermost hooked call of a thread records, so
 * cudaMalloc reaching cuMemAlloc_v2 yields one event. Recording goes through
 * tlm__rec_begin()/tlm__rec_commit() (recorder.c), which never allocate, never
 * take a lock the host could hold, and never drop an event unless drop mode is
 * on. Everything here has hidden visibility.
 */
#ifndef TLM_SHIM_H
#define TLM_SHIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cuda_abi.h"
#include "tlm/event.h"

#define TLM_HIDDEN __attribute__((visibility("hidden")))
#define TLM_EXPORT __attribute__((visibility("default")))
#define TLM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TLM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLM_TLS __thread __attribute__((tls_model("initial-exec")))
#define TLM_MAX_STACK_DEPTH_CFG 256

/* ---- configuration (config.c), read once from TLM_* variables ---- */
struct tlm__config {
	char output[4096];     /* TLM_OUTPUT pattern */
	unsigned stack_depth;  /* TLM_STACK_DEPTH, 0 = off */
	bool drop;             /* TLM_DROP=1: drop and count instead of waiting */
	unsigned ring_slots;   /* TLM_RING_SIZE: slots per thread ring, power of two */
	unsigned drain_ms;     /* TLM_DRAIN_MS: writer period */
	bool compress;         /* TLM_COMPRESS */
	bool signals;          /* TLM_SIGNALS: flush on fatal signals */
	bool disabled;         /* TLM_DISABLE=1 or a setuid/setgid process */
	unsigned writer_delay_ms; /* TLM_DEBUG_WRITER_DELAY_MS: tests fill rings with it */
	bool verify_stacks;    /* TLM_DEBUG_STACK_VERIFY: check every cached stack */
	bool stack_stats;      /* TLM_DEBUG_STACK_STATS: unwind cache hits and misses at exit */
	bool summary;          /* TLM_SUMMARY: end-of-run report on stderr */
	bool python_off;       /* TLM_PYTHON=off: no Python stacks or GC flags */
	int cupti;             /* TLM_CUPTI: enum tlm__cupti_mode */
	char cupti_library[4096]; /* TLM_CUPTI_LIBRARY: this libcupti, no search */
	unsigned peak_ms;      /* TLM_DEBUG_PEAK_MS: at most one PEAK sample per device per this (1) */
	unsigned table_slots;  /* TLM_DEBUG_TABLE_SLOTS: live-allocation table size (0: 2^19 and 2^16) */
	bool nvml_off;         /* TLM_NVML=off: no NVML process lists */
};
enum tlm__cupti_mode { TLM__CUPTI_AUTO = 0, TLM__CUPTI_ON = 1, TLM__CUPTI_OFF = 2 };
extern struct tlm__config tlm__cfg TLM_HIDDEN;
void tlm__config_load(void) TLM_HIDDEN;

/* ---- logging (log.c): one line to stderr, "tlm: ..." ---- */
void tlm__log(const char *fmt, ...) TLM_HIDDEN __attribute__((format(printf, 1, 2)));
/* logs once per flag word */
#define tlm__log_once(flag, ...)                                                  \
	do {                                                                          \
		static atomic_int flag##_once;                                            \
		if (!atomic_exchange_explicit(&flag##_once, 1, memory_order_relaxed))     \
			tlm__log(__VA_ARGS__);                                                \
	} while (0)

/* ---- process state (lifecycle.c) ---- */
enum tlm__state {
	TLM__UNINIT = 0,  /* nothing started: the first event starts the trace */
	TLM__STARTING = 1,
	TLM__RUNNING = 2, /* writer thread drains the rings */
	TLM__CLOSED = 3,  /* final flush done: producers write synchronously */
	TLM__OFF = 4,     /* disabled, or the trace could not be opened */
};
extern _Atomic int tlm__state TLM_HIDDEN;
bool tlm__start_slow(void) TLM_HIDDEN;
void tlm__config_ensure(void) TLM_HIDDEN; /* config read (the constructor may not have run yet) */
static inline bool tlm__recording(void)
{
	int s = atomic_load_explicit(&tlm__state, memory_order_acquire);
	if (TLM_LIKELY(s == TLM__RUNNING || s == TLM__CLOSED))
		return true;
	return s == TLM__OFF ? false : tlm__start_slow();
}
uint64_t tlm__now_ns(void) TLM_HIDDEN;

/* ---- clock (clock.c): ticks on the hot path, nanoseconds in the writer ---- */
extern bool tlm__use_tsc TLM_HIDDEN;
void tlm__clock_init(void) TLM_HIDDEN;
void tlm__clock_calibrate(void) TLM_HIDDEN;      /* writer, at each drain */
uint64_t tlm__ticks_to_ns(uint64_t t) TLM_HIDDEN; /* writer */
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
static inline uint64_t tlm__ticks(void)
{
#if defined(__x86_64__)
	if (TLM_LIKELY(tlm__use_tsc))
		return __rdtsc();
#endif
	return tlm__now_ns();
}

/* ---- per-thread nesting guard ---- */
extern TLM_TLS unsigned tlm__depth TLM_HIDDEN;
/* true when this call is the outermost hooked call and recording is on */
static inline bool tlm__enter(void)
{
	return tlm__depth++ == 0 && tlm__recording();
}
static inline void tlm__leave(void)
{
	tlm__depth--;
}

/* ---- recording (recorder.c) ---- */
struct tlm__slot; /* ring.h */
struct tlm__ring;
/* A live allocation a free claimed in reserved_table.c (devmem.h). */
struct tlm__rt_claim {
	int32_t slot;   /* -1: nothing claimed */
	uint8_t ns;
	bool counted;   /* counts as reserved */
	int16_t device;
	uint64_t meta, size;
};
struct tlm__rec {
	struct tlm__ring *ring;
	struct tlm__slot *ev;  /* the event slot to fill (seq and time are set) */
	uint64_t head;         /* ring position after the record */
	bool ext;              /* an extension slot follows ev */
	struct tlm__rt_claim claim; /* frees: the allocation freed */
};
/* Reserves ring space (capturing the caller's stack first), takes the global
 * sequence number and the time. Returns false when the event is not recorded
 * (drop mode and a full ring, or out of memory for a ring): it is counted. */
bool tlm__rec_begin(struct tlm__rec *r, bool ext) TLM_HIDDEN;
bool tlm__rec_begin_nostack(struct tlm__rec *r) TLM_HIDDEN; /* the same, stack id 0 */
void tlm__rec_commit(struct tlm__rec *r) TLM_HIDDEN;

/* convenience used by hooks */
struct tlm__evargs {
	uint64_t addr, size, stream, aux;
	int32_t result;
	int16_t device;
	uint8_t op, kind;
	uint16_t flags, api;
};
void tlm__record(const struct tlm__evargs *a) TLM_HIDDEN;        /* alloc-like: after the call */
/* frees: begin before the real call (so the address cannot be reused first) */
bool tlm__free_begin(struct tlm__rec *r, const struct tlm__evargs *a) TLM_HIDDEN;
void tlm__free_end(struct tlm__rec *r, int32_t result) TLM_HIDDEN;

/* ---- driver helpers (driver_query.c) ---- */
int16_t tlm__current_device(void) TLM_HIDDEN;
/* A free's device: the current one, else the one ptr lives on (no context
 * is current yet in a thread whose first runtime call is the free). */
int16_t tlm__free_device(uint64_t ptr) TLM_HIDDEN;
uint64_t tlm__device_free_bytes(void) TLM_HIDDEN;
uint64_t tlm__device_total_bytes(int16_t ordinal) TLM_HIDDEN; /* 0 when unknown */

/* ---- writer (writer.c) ---- */
int tlm__writer_start(void) TLM_HIDDEN;      /* opens the trace, starts the thread */
void tlm__writer_kick(void) TLM_HIDDEN;      /* wake the writer now */
void tlm__writer_drain_sync(void) TLM_HIDDEN;/* drain on this thread (under the writer lock) */
bool tlm__writer_drain_sync_bounded(unsigned ms) TLM_HIDDEN; /* the same; false: lock not had within ms */
int tlm__real_dlclose(void *handle) TLM_HIDDEN; /* dlclose without our pre-unload drain */
void tlm__writer_help_drain(void) TLM_HIDDEN;/* a producer helps a starved writer (no malloc) */
void tlm__writer_finish(void) TLM_HIDDEN;    /* final drain + END record */
void tlm__writer_signal(int signo) TLM_HIDDEN; /* async-signal path: drain what can be, SIGNAL record */
void tlm__writer_atfork_prepare(void) TLM_HIDDEN;
void tlm__writer_atfork_parent(void) TLM_HIDDEN;
void tlm__writer_atfork_child(void) TLM_HIDDEN;
void tlm__writer_note_start(void) TLM_HIDDEN;
size_t tlm__writer_ring_bytes(unsigned slots) TLM_HIDDEN; /* writer state kept in each ring */   /* process start time for the header */
const char *tlm__writer_path(void) TLM_HIDDEN;  /* the trace being written, or NULL */
uint64_t tlm__writer_order_errors(void) TLM_HIDDEN;
/* A fact about the recording (a PROP record, e.g. "cupti" -> "attached"):
 * written now if a trace is open, else into each trace when it starts. Takes
 * the writer lock: not for the hot path or signal handlers. */
void tlm__writer_prop(const char *key, const char *value) TLM_HIDDEN;
/* job_props.c: RANK/LOCAL_RANK/WORLD_SIZE at trace start; "origin" in a fork child */
void tlm__job_props(void) TLM_HIDDEN;
void tlm__job_props_forked(void) TLM_HIDDEN;
void tlm__summary(const char *trace) TLM_HIDDEN; /* summary.c: end-of-run report */

/* ---- stacks (stack.c) ---- */
void tlm__stack_init(void) TLM_HIDDEN;
bool tlm__in_self(uint64_t ip) TLM_HIDDEN;

/* ---- CUPTI, the second source (cupti.c) ---- */
/* After a successful cuInit: sets CUPTI up once (cheap afterwards). */
void tlm__cupti_after_init(void) TLM_HIDDEN;

/* ---- real functions (procaddr.c) ---- */
extern void *(*tlm__real_dlsym)(void *, const char *) TLM_HIDDEN;
void tlm__resolve_dlsym(void) TLM_HIDDEN;
void *tlm__libcuda_sym(const char *name) TLM_HIDDEN; /* real driver symbol, NULL if none */
/* name as defined by a loaded object whose file name contains part (one
 * loaded RTLD_LOCAL, out of RTLD_NEXT's reach); NULL if none (c10_tap.c) */
void *tlm__loaded_sym(const char *part, const char *name) TLM_HIDDEN;

#endif
