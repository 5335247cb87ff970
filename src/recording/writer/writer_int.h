/* SPDX-License-Identifier: MIT */
/*
 * writer_int.h - the writer room's parts, under the writer lock.
 *
 * Contract (top to bottom; each part calls only those below it):
 *  - writer.c: the thread, the lock, properties and the ends of a trace
 *    (writer.h);
 *  - writer_merge.c: one drain, the rings into staging, staging into the
 *    trace in sequence order;
 *  - writer_intern.c: global ids for stacks, strings and Python stacks, each
 *    definition written once; writer_devmem.c: DEVMEM and DEVPROCS records;
 *  - writer_file.c: the open trace (tlm__wf): created (output.c), checked
 *    writes (fdguard.h), its first error kept by tlm__wf_check.
 */
#ifndef TLM_REC_WRITER_INT_H
#define TLM_REC_WRITER_INT_H

#include "recording/ring.h"
#include "tlm/trace.h"

/* ---- writer_file.c ---- */
struct tlm__wfile {
	int fd;
	char path[4300];
	struct tlm_tw *tw;
	bool failed;
	uint64_t next_seq;      /* the seq the next event should have */
	uint64_t order_errors;
	uint64_t discarded;     /* events not written after a write failure */
	bool bypassed;          /* the watermark went past a stuck thread (writer_merge.c) */
	uint64_t late;          /* events written late (TLM_EVF_LATE) */
};
extern struct tlm__wfile tlm__wf TLM_HIDDEN;
void tlm__wf_check(int rc) TLM_HIDDEN; /* keeps the first error; afterwards everything is counted, not written */
/* Creates the trace (TLM_OUTPUT), lists it in `tlm run`'s manifest and
 * writes its header; 0, or -1 after one line (recording is then off). */
int tlm__wf_open(uint64_t start_realtime_ns, uint64_t start_monotonic_ns) TLM_HIDDEN;
void tlm__wf_drop_child(void) TLM_HIDDEN; /* fork child: the parent's trace is not ours */

/* ---- writer_intern.c: global ids (0 when it cannot be stored); no_alloc in
 * a fatal-signal drain. A PYSTACK definition is read from the ring at tail. */
uint32_t tlm__wi_stack(const uint64_t *ip, uint32_t d, bool no_alloc) TLM_HIDDEN;
uint32_t tlm__wi_pystack(const struct tlm__ring *r, uint64_t tail, uint32_t native_gid, bool no_alloc) TLM_HIDDEN;
bool tlm__wi_stack_fits(uint32_t d) TLM_HIDDEN; /* storable without allocating */
bool tlm__wi_pystack_fits(uint32_t frames, uint32_t bytes) TLM_HIDDEN;
void tlm__wi_reset(void) TLM_HIDDEN; /* forget all definitions, keep the buffers (fork child) */
void tlm__wi_prepare(void) TLM_HIDDEN; /* the tables at their first sizes (trace start) */

/* ---- writer_devmem.c: an event's device memory sample (devmem.h) ---- */
uint32_t tlm__wd_stage(const struct tlm__slot *x) TLM_HIDDEN; /* 0: no sample */
void tlm__wd_emit(uint32_t id) TLM_HIDDEN;                     /* after its event: DEVMEM */
void tlm__wd_jobs(bool now) TLM_HIDDEN; /* DEVPROCS for the samples written (now: whatever thread) */
void tlm__wd_reset(void) TLM_HIDDEN;    /* fork child: a new trace */
void tlm__wd_exit(void) TLM_HIDDEN;     /* after the last events: EXIT samples due, and every DEVPROCS */
void tlm__wd_writer_thread(void) TLM_HIDDEN; /* marks the writer thread */

/* ---- writer_merge.c ---- */
void tlm__wm_drain(bool no_alloc) TLM_HIDDEN; /* one drain of every ring into the trace */
void tlm__wm_drain_help(void) TLM_HIDDEN;  /* a producer's drain: no allocation, no loader lock */
void tlm__wm_drain_final(void) TLM_HIDDEN; /* last drain: passes every in-flight thread */
void tlm__wm_reset_child(void) TLM_HIDDEN;    /* fork child: drop staging of the parent's rings */

/* ---- manifest.c: under `tlm run`, the trace's path is added to its list ---- */
void tlm__manifest_add(const char *path) TLM_HIDDEN;

#endif
