/* SPDX-License-Identifier: MIT */
/*
 * wi_ops.h - the caching allocator's requests of a run, kept in memory for
 * the steps' forecast (steps_forecast.c), which replays the run and then
 * repeats a step through the allocator's model: random access, so every op.
 *
 * Contract: a consumer of the report's pass (pass.h) hands each record to
 * whatif's classifier (src/whatif/trace_in.c, the reading `tlm whatif` does)
 * and keeps, per device with allocator blocks, its ops in order, each free
 * naming its allocation (wi_fc_op.partner). Before a device's first block
 * op only the memory other code still holds is kept, in order (what
 * `tlm whatif` keeps then too): a device without blocks costs its live
 * allocations, not its history. Once the pass finishes, tlm__wi_ops_of(report)
 * is the trace's ops, or NULL when they could not be read (a classifier
 * limit, more than 16 Mi ops on devices with blocks): the forecast then keeps
 * its linear rule. Memory: 24 bytes an op (at most 384 MiB), until the
 * report's pass closes.
 */
#ifndef TLM_ANALYSIS_WI_OPS_H
#define TLM_ANALYSIS_WI_OPS_H

#include "whatif/replay_int.h"

struct tlm_report;
struct tlm__pass;

/* An op as the forecast replays it (struct wi_op less what it never reads). */
struct wi_fc_op {
	uint64_t t;       /* ns from the trace's start */
	uint64_t size;    /* as recorded */
	uint32_t partner; /* WI_FREE, WI_FFREE: its allocation's index */
	uint8_t type;     /* enum wi_op_type; 0: a dropped entry, only before the device's first block op */
};

struct wi_dev {
	int device;
	bool started;     /* its first block op came */
	struct wi_fc_op *op;
	size_t nop, capop;
	size_t ndropped;  /* before started: others' memory freed again, still in op[] */
	uint64_t total, va_base, nalloc;
};

struct wi_trace {
	struct wi_dev *dev;
	size_t ndev;
};

int tlm__wi_ops_consumer(struct tlm__pass *p);
const struct wi_trace *tlm__wi_ops_of(const struct tlm_report *r);

#endif
