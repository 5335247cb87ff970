// SPDX-License-Identifier: MIT
/*
 * What device memory holds: the bytes last copied or set there, zeros where
 * nothing was written since the allocation was made.
 *
 * Each device's address region (SIM_VA_STRIDE bytes) and the module-global
 * region have one sparse host mapping (MAP_NORESERVE|MAP_PRIVATE|
 * MAP_ANONYMOUS, made at the first copy or set that touches the region):
 * device address a lives at host + (a - region base), and a host page only
 * materialises when written. A VMM physical handle has a mapping of its own
 * (sim_vmm.c), so every reservation range mapped to the same handle sees the
 * same bytes. Freeing an allocation zeroes its range and gives the pages back
 * (madvise MADV_DONTNEED), so a reused address reads zeros and the host's
 * memory use follows the live, written device memory.
 *
 * sim_backing_span resolves one address to host memory and says how many
 * bytes are contiguous from there; an address in a device region that no live
 * allocation or mapping covers is CUDA_ERROR_INVALID_VALUE, as with the real
 * driver. sim_backing_check accepts a range only inside one allocation (a
 * plain or pool one, even when another one follows it), or inside VMM
 * mappings without a gap, or inside the module-global region. Callers hold
 * sim_lock.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_internal.h"

static uint8_t *dev_back[SIM_MAX_DEVICES]; /* caller holds sim_lock */
static uint8_t *global_back;

uint8_t *sim_backing_map(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		static bool said;
		if (!said)
			fprintf(stderr, "tlm-sim: cannot reserve %llu bytes of host address space for "
					"device memory contents; copies to device memory fail\n",
				(unsigned long long)bytes);
		said = true;
		return NULL;
	}
	return p;
}

/* Zero [p, p+n) of a host backing: whole host pages are handed back to the
 * kernel (they read as zeros again), the partial ends are cleared. */
void sim_backing_zero(uint8_t *p, uint64_t n)
{
	const uintptr_t pg = 4096;
	uintptr_t a = (uintptr_t)p, e = a + n;
	uintptr_t ia = (a + pg - 1) & ~(pg - 1), ie = e & ~(pg - 1);
	if (ia >= ie) {
		memset(p, 0, n);
		return;
	}
	memset(p, 0, ia - a);
	memset((void *)ie, 0, e - ie);
	if (madvise((void *)ia, ie - ia, MADV_DONTNEED) != 0)
		memset((void *)ia, 0, ie - ia);
}

static uint8_t *region(uint8_t **slot, uint64_t size)
{
	if (!*slot)
		*slot = sim_backing_map(size);
	return *slot;
}

void sim_backing_free(uint64_t va, uint64_t bytes)
{
	int dev = sim_va_device(va);
	if (dev >= 0 && dev_back[dev])
		sim_backing_zero(dev_back[dev] + (va - SIM_VA_BASE - (uint64_t)dev * SIM_VA_STRIDE), bytes);
}

bool sim_is_device_va(uint64_t p)
{
	return (p >= SIM_VA_BASE && p < SIM_VA_BASE + SIM_MAX_DEVICES * SIM_VA_STRIDE) ||
	       (p >= SIM_VMM_VA_BASE && p < SIM_VMM_VA_BASE + SIM_VMM_VA_SIZE) || sim_is_global(p);
}

CUresult sim_backing_span(uint64_t p, uint8_t **host, uint64_t *avail)
{
	uint64_t base, len;
	if (!sim_is_device_va(p)) {
		*host = (uint8_t *)(uintptr_t)p; /* host memory: the caller vouches for it */
		*avail = UINT64_MAX - p;
		return CUDA_SUCCESS;
	}
	if (sim_is_global(p)) {
		uint8_t *b = region(&global_back, SIM_GLOBAL_VA_SIZE);
		if (!b)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*host = b + (p - SIM_GLOBAL_VA_BASE);
		*avail = SIM_GLOBAL_VA_BASE + SIM_GLOBAL_VA_SIZE - p;
		return CUDA_SUCCESS;
	}
	if (p >= SIM_VMM_VA_BASE)
		return sim_vmm_span(p, host, avail);
	if (!sim_live_span(p, &base, &len))
		return CUDA_ERROR_INVALID_VALUE;
	int dev = sim_va_device(p);
	uint8_t *b = dev >= 0 ? region(&dev_back[dev], SIM_VA_STRIDE) : NULL;
	if (!b)
		return dev >= 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	*host = b + (p - SIM_VA_BASE - (uint64_t)dev * SIM_VA_STRIDE);
	*avail = base + len - p;
	return CUDA_SUCCESS;
}

CUresult sim_backing_check(uint64_t p, uint64_t n)
{
	if (n > UINT64_MAX - p)
		return CUDA_ERROR_INVALID_VALUE;
	while (n) {
		uint8_t *h;
		uint64_t a;
		CUresult r = sim_backing_span(p, &h, &a);
		if (r)
			return r;
		/* one allocation per copy side; only VMM ranges may run on
		 * into the next mapping */
		if (a < n && (p < SIM_VMM_VA_BASE || p >= SIM_VMM_VA_BASE + SIM_VMM_VA_SIZE))
			return CUDA_ERROR_INVALID_VALUE;
		uint64_t k = a < n ? a : n;
		p += k;
		n -= k;
	}
	return CUDA_SUCCESS;
}
