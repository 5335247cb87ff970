/* SPDX-License-Identifier: MIT */
/*
 * sat.h - saturating sums for figures that come from a trace or a report
 * file: a hostile input's sizes must not wrap a total (UINT64_MAX stands for
 * "more than can be said").
 */
#ifndef TLM_COMMON_SAT_H
#define TLM_COMMON_SAT_H

#include <stdint.h>

static inline uint64_t tlm__sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#endif
