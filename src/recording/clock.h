/* SPDX-License-Identifier: MIT */
/*
 * clock.h - time: ticks on the hot path, CLOCK_MONOTONIC nanoseconds for
 * everything else.
 *
 * Contract: tlm__ticks() is the event time stamp (the TSC when the kernel's
 * clocksource is the TSC, else CLOCK_MONOTONIC ns); the writer turns ticks
 * into ns with tlm__ticks_to_ns() against a calibration point it takes at
 * each drain (tlm__clock_calibrate). tlm__now_ns() is CLOCK_MONOTONIC.
 */
#ifndef TLM_REC_CLOCK_H
#define TLM_REC_CLOCK_H

#include "recording/defs.h"

uint64_t tlm__now_ns(void) TLM_HIDDEN;
extern bool tlm__use_tsc TLM_HIDDEN;
void tlm__clock_init(void) TLM_HIDDEN;           /* with the configuration */
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

#endif
