/* SPDX-License-Identifier: MIT */
/*
 * hw_common.h - shared by the hardening workload and its late library: a
 * truth file written with one write(2) per line (safe from any thread, from a
 * forked child, an atexit handler or a destructor that runs after stdio was
 * torn down), in the format tests/shim/e2e.c reads ("E ..." and "N ...").
 */
#ifndef TLM_HW_COMMON_H
#define TLM_HW_COMMON_H

#include <stdint.h>

#include "workload.h" /* tests/shim: the runtime double's prototypes */

void hw_expect_alloc(uint64_t addr, uint64_t size);
void hw_expect_free(uint64_t addr);
void hw_notef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
