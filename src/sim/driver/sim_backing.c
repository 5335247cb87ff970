// SPDX-License-Identifier: MIT
/*
 * What device memory holds: the bytes last copied or set there, zeros where
 * nothing was written since the allocation was made.
 *
 * Each device's address region (SIM_VA_STRIDE bytes) and the module-global
 * region are backed by sparse host mappings of 1 GiB chunks
 * (MAP_NORESERVE|MAP_PRIVATE|MAP_ANONYMOUS), each made at the first copy or
 * set that touches it: device address a lives at offset (a - region base) %
 * 1 GiB of chunk (a - region base) / 1 GiB, and a host page only
 * materialises when written. Chunks keep the address space used in
 * proportion to the memory touched (a whole 2 TiB region is refused under
 * ThreadSanitizer or an address-space limit). A VMM physical handle has a mapping of its own
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

#define CHUNK (1ull << 30)
/* Chunk pointers, NULL until touched; callers hold sim_lock. */
static uint8_t *dev_chunk[SIM_MAX_DEVICES][SIM_VA_STRIDE / CHUNK];
static uint8_t *global_chunk[SIM_GLOBAL_VA_SIZE / CHUNK];

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

/* Host memory for offset `off` of a region made of `chunks`, and the bytes
 * left in that chunk; NULL when the chunk cannot be mapped. */
static uint8_t *chunk_at(uint8_t **chunks, uint64_t off, uint64_t *left)
{
	uint8_t **slot = &chunks[off / CHUNK];
	if (!*slot)
		*slot = sim_backing_map(CHUNK);
	*left = CHUNK - off % CHUNK;
	return *slot ? *slot + off % CHUNK : NULL;
}

void sim_backing_free(uint64_t va, uint64_t bytes)
{
	int dev = sim_va_device(va);
	if (dev < 0)
		return;
	uint64_t off = va - SIM_VA_BASE - (uint64_t)dev * SIM_VA_STRIDE;
	while (bytes) {
		uint8_t *c = dev_chunk[dev][off / CHUNK];
		uint64_t k = CHUNK - off % CHUNK;
		if (k > bytes)
			k = bytes;
		if (c) /* an untouched chunk holds zeros already */
			sim_backing_zero(c + off % CHUNK, k);
		off += k;
		bytes -= k;
	}
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
		*host = chunk_at(global_chunk, p - SIM_GLOBAL_VA_BASE, avail);
		return *host ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (p >= SIM_VMM_VA_BASE)
		return sim_vmm_span(p, host, avail);
	if (!sim_live_span(p, &base, &len))
		return CUDA_ERROR_INVALID_VALUE;
	int dev = sim_va_device(p);
	if (dev < 0)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t left;
	*host = chunk_at(dev_chunk[dev], p - SIM_VA_BASE - (uint64_t)dev * SIM_VA_STRIDE, &left);
	if (!*host)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*avail = base + len - p < left ? base + len - p : left;
	return CUDA_SUCCESS;
}

CUresult sim_backing_check(uint64_t p, uint64_t n)
{
	uint64_t base, len;
	if (n > UINT64_MAX - p)
		return CUDA_ERROR_INVALID_VALUE;
	if (n == 0 || !sim_is_device_va(p))
		return CUDA_SUCCESS;
	if (sim_is_global(p))
		return n <= SIM_GLOBAL_VA_BASE + SIM_GLOBAL_VA_SIZE - p ? CUDA_SUCCESS
									: CUDA_ERROR_INVALID_VALUE;
	if (p < SIM_VMM_VA_BASE) /* inside one allocation, even when another follows */
		return sim_live_span(p, &base, &len) && n <= base + len - p ? CUDA_SUCCESS
									     : CUDA_ERROR_INVALID_VALUE;
	while (n) { /* VMM: mapping after mapping, without a gap */
		uint8_t *h;
		uint64_t a;
		CUresult r = sim_vmm_span(p, &h, &a);
		if (r)
			return r;
		uint64_t k = a < n ? a : n;
		p += k;
		n -= k;
	}
	return CUDA_SUCCESS;
}
