/* SPDX-License-Identifier: MIT */
/*
 * devmem.h - the shim's exact view of the device memory the process reserved
 * (reserved_table.c) and the samples of the device's own view taken with the
 * events that change it (devmem.c), written by the writer (writer_devmem.c,
 * nvml_dl.c).
 *
 * Contract: reserved_table.c keeps every live device allocation (kinds
 * DEVICE, MANAGED and VMM_PHYSICAL) in a preallocated lock-free
 * open-addressing table, mapped once at start: no allocation and no lock on
 * the hot path. "Reserved" counts what docs/report.md counts: the requested
 * bytes of live DEVICE and VMM_PHYSICAL allocations, per device. A free is
 * claimed before the real call (its bytes leave the count then, as the event
 * is stamped then) and settled after it: a failed free puts them back. When
 * the table is full the counts are unknown from then on (one line says so);
 * frees then fall back to asking the driver for a pointer's device.
 */
#ifndef TLM_SHIM_DEVMEM_H
#define TLM_SHIM_DEVMEM_H

#include <stdbool.h>
#include <stdint.h>

#include "recording/ring.h"
#include "tlm/trace.h"

#define TLM__DM_DEVS 64 /* devices 0..63 are sampled */

/* ---- reserved_table.c ---- */
/* struct tlm__rt_claim: shim.h (a free's record holds one) */
void tlm__rt_init(void) TLM_HIDDEN;
/* A successful allocation; *after: the device's reserved bytes after it (0
 * when not counted). false: not tracked (table full or not mapped). */
bool tlm__rt_insert(unsigned kind, uint64_t addr, uint64_t size, int16_t device, uint64_t *after) TLM_HIDDEN;
/* A free about to be made: claims the live allocation at addr, if any. */
bool tlm__rt_claim(unsigned kind, uint64_t addr, struct tlm__rt_claim *c) TLM_HIDDEN;
void tlm__rt_settle(const struct tlm__rt_claim *c, bool freed) TLM_HIDDEN;
uint64_t tlm__rt_reserved(int device) TLM_HIDDEN;
bool tlm__rt_exact(void) TLM_HIDDEN; /* false once an allocation could not be tracked */

/* ---- devmem.c: which events carry a sample (in their extension slot) ---- */
/* x->op = why + 1 (0: none), x->flags = TLM_DEVMEM_F_*, x->device,
 * x->size = free, x->stream = total, x->aux = ticks when taken */
int tlm__dm_after_alloc(const struct tlm__evargs *a, bool first) TLM_HIDDEN; /* why, or -1 */
bool tlm__dm_before_free(const struct tlm__rt_claim *c) TLM_HIDDEN;        /* F_BEFORE sample due */
bool tlm__dm_exit_due(int device) TLM_HIDDEN; /* a high went unsampled: an EXIT sample is due */
/* Takes the sample of `device` into x; false when the driver could not say. */
bool tlm__dm_take(struct tlm__slot *x, int why, unsigned flags, int16_t device) TLM_HIDDEN;

/* ---- writer_devmem.c (writer lock held) ---- */
uint32_t tlm__wd_stage(const struct tlm__slot *x) TLM_HIDDEN; /* 0: no sample */
void tlm__wd_emit(uint32_t id) TLM_HIDDEN;                     /* after its event: DEVMEM */
void tlm__wd_jobs(bool now) TLM_HIDDEN; /* DEVPROCS for the samples written (now: whatever thread) */
void tlm__wd_reset(void) TLM_HIDDEN;    /* fork child: a new trace */
void tlm__wd_exit(void) TLM_HIDDEN;     /* after the last events: EXIT samples due, and every DEVPROCS */
void tlm__wd_writer_thread(void) TLM_HIDDEN; /* marks the writer thread */

/* ---- nvml_dl.c (writer thread) ---- */
/* NVML's processes on CUDA device `device`; status as in tlm_rec_devprocs. */
void tlm__nvml_procs(int device, struct tlm_rec_devprocs *out) TLM_HIDDEN;
void tlm__nvml_open(void) TLM_HIDDEN; /* load and init NVML: on the thread that starts the recording, never the writer */

/* ---- driver_query.c ---- */
bool tlm__device_mem_info(int16_t device, uint64_t *free_b, uint64_t *total) TLM_HIDDEN;
bool tlm__device_pci_bus_id(int device, char *buf, int len) TLM_HIDDEN;

#endif
