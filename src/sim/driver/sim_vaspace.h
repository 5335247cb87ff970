/* SPDX-License-Identifier: MIT */
/*
 * sim_vaspace.h - a simulated device virtual address range allocator.
 *
 * Contract: manages the free ranges of one fixed region [base, base+size).
 * Allocation is first-fit at the LOWEST free address (optionally aligned, or
 * at a hint when that exact range is free), so a freed range is handed out
 * again deterministically. Freed ranges coalesce with their neighbours. All
 * operations are O(log n) in the number of free ranges (aligned searches with
 * alignment above every range's natural alignment may visit more). Addresses
 * are plain numbers: nothing is ever mapped. Not thread safe.
 */
#ifndef TLM_SIM_VASPACE_H
#define TLM_SIM_VASPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim_tree.h"

#pragma GCC visibility push(hidden)

struct sim_vaspace {
	uint64_t base, size;
	struct sim_tree free; /* key = start, len = length of a free range */
};

void sim_vas_init(struct sim_vaspace *v, uint64_t base, uint64_t size);
/* Take `len` bytes aligned to `align` (power of two, 0 = 1). If hint is nonzero,
 * aligned and [hint, hint+len) is free, that range is used. False if no free
 * range fits (or out of host memory). */
bool sim_vas_alloc(struct sim_vaspace *v, uint64_t len, uint64_t align, uint64_t hint,
		   uint64_t *out);
/* Give back a range previously returned by sim_vas_alloc (or part of one). */
bool sim_vas_release(struct sim_vaspace *v, uint64_t addr, uint64_t len);
/* True when [addr, addr+len) lies inside the region. */
bool sim_vas_contains(const struct sim_vaspace *v, uint64_t addr, uint64_t len);

#pragma GCC visibility pop

#endif
