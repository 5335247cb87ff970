/* SPDX-License-Identifier: MIT */
/*
 * devmem.h - which events carry a sample of the device's own view of its
 * memory (cuMemGetInfo), taken on the host's thread into the event's
 * extension slot; the writer turns it into a DEVMEM record right after the
 * event (writer_devmem.c).
 *
 * Contract: the recorder asks tlm__dm_after_alloc() for every allocation
 * (it also enters the allocation into reserved_table.h) and
 * tlm__dm_before_free() for every claimed free; a "why" >= 0 means a sample
 * is due, taken by tlm__dm_take(). Only a new high pays for a clock read;
 * the common event pays two loads.
 */
#ifndef TLM_REC_DEVMEM_H
#define TLM_REC_DEVMEM_H

#include "recording/reserved_table.h"
#include "recording/ring.h"
#include "tlm/trace.h"

/* x->op = why + 1 (0: none), x->flags = TLM_DEVMEM_F_*, x->device,
 * x->size = free, x->stream = total, x->aux = ticks when taken */
int tlm__dm_after_alloc(unsigned op, unsigned kind, int32_t result, uint64_t addr, uint64_t size, int16_t device,
			bool first) TLM_HIDDEN; /* why, or -1 */
bool tlm__dm_before_free(const struct tlm__rt_claim *c) TLM_HIDDEN;        /* F_BEFORE sample due */
bool tlm__dm_exit_due(int device) TLM_HIDDEN; /* a high went unsampled: an EXIT sample is due */
/* Takes the sample of `device` into x; false when the driver could not say. */
bool tlm__dm_take(struct tlm__slot *x, int why, unsigned flags, int16_t device) TLM_HIDDEN;

#endif
