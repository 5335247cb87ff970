/* SPDX-License-Identifier: MIT */
/*
 * reserved_table.h - the shim's exact view of the device memory the process
 * reserved: every live device allocation (kinds DEVICE, MANAGED and
 * VMM_PHYSICAL) and the per-device bytes they add up to.
 *
 * Contract: a preallocated lock-free open-addressing table, mapped once at
 * start (tlm__rt_init): no allocation and no lock on the hot path.
 * "Reserved" counts what docs/report.md counts: the requested bytes of live
 * DEVICE and VMM_PHYSICAL allocations, per device. A free is claimed before
 * the real call (the allocation leaves the table and its bytes the count
 * then, as the event is stamped then) and settled after it: a failed free
 * puts it back. When the table
 * is full the counts are unknown from then on (one line says so); frees then
 * fall back to asking the driver for a pointer's device.
 */
#ifndef TLM_REC_RESERVED_TABLE_H
#define TLM_REC_RESERVED_TABLE_H

#include "recording/defs.h"

#define TLM__DM_DEVS 64 /* devices 0..63 are counted and sampled */

/* A live allocation a free claimed. */
struct tlm__rt_claim {
	int32_t slot;   /* -1: nothing claimed */
	uint8_t ns;
	bool counted;   /* counts as reserved */
	int16_t device;
	uint64_t addr, size;
};

void tlm__rt_init(void) TLM_HIDDEN;
/* A successful allocation; *after: the device's reserved bytes after it (0
 * when not counted). false: not tracked (table full or not mapped). */
bool tlm__rt_insert(unsigned kind, uint64_t addr, uint64_t size, int16_t device, uint64_t *after) TLM_HIDDEN;
/* A free about to be made: claims the live allocation at addr, if any. */
bool tlm__rt_claim(unsigned kind, uint64_t addr, struct tlm__rt_claim *c) TLM_HIDDEN;
void tlm__rt_settle(const struct tlm__rt_claim *c, bool freed) TLM_HIDDEN;
uint64_t tlm__rt_reserved(int device) TLM_HIDDEN;
bool tlm__rt_exact(void) TLM_HIDDEN; /* false once an allocation could not be tracked */

#endif
