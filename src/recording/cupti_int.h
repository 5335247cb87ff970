/* SPDX-License-Identifier: MIT */
/*
 * cupti_int.h - the two parts of CUPTI, the second source (docs/cupti.md).
 *
 * Contract: cupti.c loads libcupti, subscribes once and, in its callbacks,
 * decides which calls no wrapper saw (the de-duplication rules at its top)
 * and records them; cupti_events.c only translates one callback's
 * parameters into an event. Each translator returns false for a call that is
 * not its kind, and leaves the flags for the caller to add (TLM_EVF_CUPTI).
 */
#ifndef TLM_CUPTI_INT_H
#define TLM_CUPTI_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/cuda_abi.h"
#include "recording/recorder.h"

/* cupti.c: after a successful cuInit, sets CUPTI up once (cheap afterwards). */
void tlm__cupti_after_init(void) TLM_HIDDEN;

/* cupti_events.c: a driver free-like call at its ENTER (the address still live). */
bool tlm__cupti_driver_free(uint32_t cbid, const void *prm, struct tlm__evargs *a) TLM_HIDDEN;
/* A driver allocation at its EXIT, r its result. */
bool tlm__cupti_driver_alloc(uint32_t cbid, const void *prm, int32_t r, struct tlm__evargs *a) TLM_HIDDEN;
/* A runtime memory call at its EXIT, r its result. */
bool tlm__cupti_runtime_event(uint32_t cbid, const void *prm, int32_t r, struct tlm__evargs *a) TLM_HIDDEN;

#endif
