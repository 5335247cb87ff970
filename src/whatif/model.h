/* SPDX-License-Identifier: MIT */
/*
 * model.h - a model of PyTorch's CUDA caching allocator (DeviceCachingAllocator
 * in c10/cuda/CUDACachingAllocator.cpp), one device, written from its rules.
 *
 * Contract: tlm_wi_model_malloc/free take the program's requests (size,
 * stream) in order and make the same decisions the allocator makes: request
 * rounding (512 B, roundup_power2_divisions), small (<= 1 MiB, 2 MiB segments)
 * and large pools (20 MiB segments below 10 MiB, else the request rounded to
 * 2 MiB), best fit by (stream, size, address), splitting and its limits
 * (max_split_size_mb, the max_non_split_rounding tolerance for oversize
 * blocks), merging on free, on a failed driver allocation: freeing oversize
 * cached blocks, then every unsplit cached block, and retrying,
 * garbage_collection_threshold (only with a memory fraction, as in PyTorch),
 * and expandable segments (model_expand.c). Memory comes from a driver given
 * as callbacks (struct tlm_wi_drv): the replay's simulated device or, in the
 * tests, the simulated CUDA driver itself. What the model does not see:
 * recordStream uses (freed blocks are reusable at once), CUDA graph pools,
 * free-memory callbacks. Single-threaded; no global state.
 */
#ifndef TLM_WHATIF_MODEL_H
#define TLM_WHATIF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "whatif/whatif.h"

#define TLM_WI_MIN_BLOCK 512ull
#define TLM_WI_SMALL_SIZE (1ull << 20)      /* kSmallSize */
#define TLM_WI_SMALL_BUFFER (2ull << 20)    /* kSmallBuffer */
#define TLM_WI_LARGE_BUFFER (20ull << 20)   /* kLargeBuffer */
#define TLM_WI_MIN_LARGE_ALLOC (10ull << 20) /* kMinLargeAlloc */
#define TLM_WI_ROUND_LARGE (2ull << 20)     /* kRoundLarge */
#define TLM_WI_MAX_REQUEST (1ull << 50)     /* larger requests fail at once (a damaged trace) */

/* Where the allocator's memory comes from. Each returns 0 or -1 (out of
 * memory). Expandable segments: va_reserve / va_free an address range;
 * map creates npages handles of page bytes (all, or none on failure) and maps
 * them at addr; unmap unmaps and releases them. */
struct tlm_wi_drv {
	void *ctx;
	int (*seg_alloc)(void *ctx, uint64_t size, uint64_t *addr);
	void (*seg_free)(void *ctx, uint64_t addr, uint64_t size);
	int (*va_reserve)(void *ctx, uint64_t size, uint64_t align, uint64_t *addr);
	void (*va_free)(void *ctx, uint64_t addr, uint64_t size);
	int (*map)(void *ctx, uint64_t addr, uint64_t npages, uint64_t page);
	void (*unmap)(void *ctx, uint64_t addr, uint64_t npages, uint64_t page);
};

struct tlm_wi_model;

/* device_total: the device's memory (totalGlobalMem): sizes the address
 * range of an expandable segment and, with a fraction, the allowed maximum. */
struct tlm_wi_model *tlm_wi_model_new(const struct tlm_wi_settings *s, const struct tlm_wi_drv *drv,
				      uint64_t device_total);
void tlm_wi_model_free(struct tlm_wi_model *m);

/* 0: *addr, *block_size (the block handed out); -1: out of memory (the
 * allocator raises OutOfMemoryError), *block_size = the rounded request;
 * -2: no memory for the model itself. */
int tlm_wi_model_malloc(struct tlm_wi_model *m, uint64_t size, uint64_t stream, uint64_t *addr,
			uint64_t *block_size);
/* Requests are block sizes already rounded under these settings (a replay
 * of recorded block sizes): not rounded again. */
void tlm_wi_model_sizes_rounded(struct tlm_wi_model *m, bool yes);
/* After a successful malloc of a recorded block size: the lowest request that
 * makes the same decision. A block the allocator hands out whole (a cached
 * block, or a new segment, at most 1 MiB larger than the request; an oversize
 * block up to max_non_split_rounding_mb larger) is all the tap reports, so
 * the program's request lies in [low, size]; low = size when the block was
 * split off at the request's size (or comes from the small pool, an
 * expandable segment, or a rounding rule the model does not invert). */
uint64_t tlm_wi_model_last_low(const struct tlm_wi_model *m);
/* The address of the cached block a request of size (not rounded again)
 * would be given now, 0 when it would take a new segment. No side effect. */
uint64_t tlm_wi_model_peek(const struct tlm_wi_model *m, uint64_t size, uint64_t stream);
/* Frees the block at addr; returns its size, 0 when no block is there. */
uint64_t tlm_wi_model_release(struct tlm_wi_model *m, uint64_t addr);
/* torch.cuda.empty_cache() */
void tlm_wi_model_empty_cache(struct tlm_wi_model *m);

struct tlm_wi_stats {
	uint64_t allocated, reserved;         /* now */
	uint64_t peak_allocated, peak_reserved;
	uint64_t allocated_at_peak;           /* once the block that made the peak is placed */
	uint64_t largest_free_at_peak;        /* the largest cached free block then */
	uint64_t num_device_alloc, num_device_free; /* as torch.cuda.memory_stats() counts them */
	uint64_t num_alloc_retries, num_ooms;
	uint64_t segments;                    /* cudaMalloc segments now (not expandable) */
};
void tlm_wi_model_stats(const struct tlm_wi_model *m, struct tlm_wi_stats *st);
/* Reserved but free bytes and the largest cached free block, now. */
void tlm_wi_model_free_space(const struct tlm_wi_model *m, uint64_t *free_bytes, uint64_t *largest);

/* Rounding of a request (exposed for the tests). */
uint64_t tlm_wi_round_size(const struct tlm_wi_settings *s, uint64_t size);
uint64_t tlm_wi_allocation_size(uint64_t size);

#endif
