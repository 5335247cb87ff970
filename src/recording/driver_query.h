/* SPDX-License-Identifier: MIT */
/*
 * driver_query.h - the few driver calls the recorder itself makes, through
 * the real driver (never our hooks).
 *
 * Contract: each entry point is looked up once (a name the loaded driver
 * lacks is remembered as missing, so no event repeats a failed look-up);
 * every answer is "unknown" (-1, 0, false) without a driver. No allocation.
 */
#ifndef TLM_REC_DRIVER_QUERY_H
#define TLM_REC_DRIVER_QUERY_H

#include "recording/defs.h"

int16_t tlm__current_device(void) TLM_HIDDEN;
/* A free's device: the current one, else the one ptr lives on (no context
 * is current yet in a thread whose first runtime call is the free). */
int16_t tlm__free_device(uint64_t ptr) TLM_HIDDEN;
uint64_t tlm__device_free_bytes(void) TLM_HIDDEN;
uint64_t tlm__device_total_bytes(int16_t ordinal) TLM_HIDDEN; /* 0 when unknown */
bool tlm__device_mem_info(int16_t device, uint64_t *free_b, uint64_t *total) TLM_HIDDEN;
bool tlm__device_pci_bus_id(int device, char *buf, int len) TLM_HIDDEN;

#endif
