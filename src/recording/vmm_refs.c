/* SPDX-License-Identifier: MIT */
/*
 * vmm_refs.c - which cuMemRelease gives a VMM handle's memory back.
 *
 * A handle has one reference from cuMemCreate and one more per
 * cuMemRetainAllocationHandle, which hands out the same handle value (NCCL
 * retains every buffer it frees or registers, then releases twice); its
 * memory goes with the last release. A handle from
 * cuMemImportFromShareableHandle is another process's memory: no release of
 * it frees any of this process's. So the cuMemRelease hook records the free
 * only when tlm__vmm_release_frees() says the release drops the creation's
 * reference.
 *
 * A fixed open-addressing table, lock-free (the hooks may run on any thread,
 * and a fork child inherits it consistent): keys are never removed (handle
 * values are few: the calls that add them are set-up calls, not per-step
 * ones); an entry whose count went back to 0 is as good as absent. When the
 * table is full, retains and imports go unnoted: releases are then recorded
 * as before, each as a free.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "recording/vmm_refs.h"

#define NSLOT 4096
#define IMPORTED INT64_MIN /* the count of a handle imported from another process */

static struct {
	_Atomic uint64_t key;
	_Atomic int64_t n; /* retains not yet released, or IMPORTED */
} slots[NSLOT];

/* The slot of handle h, inserted when `add`; NULL when absent or full. */
static _Atomic int64_t *slot(uint64_t h, bool add)
{
	uint64_t i = (h * 0x9e3779b97f4a7c15ull) >> 52; /* 12 bits: NSLOT */
	for (unsigned probe = 0; probe < NSLOT; probe++, i = (i + 1) % NSLOT) {
		uint64_t k = atomic_load_explicit(&slots[i].key, memory_order_acquire);
		if (k == h)
			return &slots[i].n;
		if (k == 0) {
			if (!add)
				return NULL;
			uint64_t zero = 0;
			if (atomic_compare_exchange_strong(&slots[i].key, &zero, h) || zero == h)
				return &slots[i].n;
		}
	}
	return NULL;
}

void tlm__vmm_created(uint64_t h)
{
	_Atomic int64_t *n = slot(h, false);
	if (n) /* a value handed out again: no retain or import of the old handle holds */
		atomic_store(n, 0);
}

void tlm__vmm_retained(uint64_t h)
{
	_Atomic int64_t *n = slot(h, true);
	if (n && atomic_load(n) != IMPORTED)
		atomic_fetch_add(n, 1);
}

void tlm__vmm_imported(uint64_t h)
{
	_Atomic int64_t *n = slot(h, true);
	if (n)
		atomic_store(n, IMPORTED);
}

bool tlm__vmm_release_frees(uint64_t h)
{
	_Atomic int64_t *n = slot(h, false);
	if (!n)
		return true;
	int64_t v = atomic_load(n);
	while (v > 0)
		if (atomic_compare_exchange_weak(n, &v, v - 1))
			return false; /* a retain's reference */
	return v != IMPORTED;
}

void tlm__vmm_release_failed(uint64_t h, bool freed)
{
	if (!freed) /* the reference the release was to drop is still held */
		tlm__vmm_retained(h);
}
