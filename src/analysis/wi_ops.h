/* SPDX-License-Identifier: MIT */
/*
 * wi_ops.h - the caching allocator's requests of a run, kept in memory for
 * the steps' forecast (steps_forecast.c), which replays the run and then
 * repeats a step through the allocator's model: random access, so every op.
 *
 * Contract: a consumer of the report's pass (pass.h) hands each record to
 * whatif's classifier (src/whatif/trace_in.c, the reading `tlm whatif` does)
 * and keeps each device's ops in order, each free naming its allocation
 * (wi_op.partner). Once the pass finishes, tlm__wi_ops_of(report) is the
 * trace's ops, or NULL when they could not be read (a classifier limit,
 * more than 16 Mi ops): the forecast then keeps its linear rule. Memory:
 * every op of a device with allocator blocks (64 bytes each, at most 1 GiB),
 * until the report's pass closes.
 */
#ifndef TLM_ANALYSIS_WI_OPS_H
#define TLM_ANALYSIS_WI_OPS_H

#include "whatif/replay_int.h"

struct tlm_report;
struct tlm__pass;

struct wi_dev {
	int device;
	struct wi_op *op;
	size_t nop, capop;
	uint64_t total, va_base, nalloc;
};

struct wi_trace {
	struct wi_dev *dev;
	size_t ndev;
};

int tlm__wi_ops_consumer(struct tlm__pass *p);
const struct wi_trace *tlm__wi_ops_of(const struct tlm_report *r);

#endif
