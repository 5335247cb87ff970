/* SPDX-License-Identifier: MIT */
/*
 * tlm/event.h - the in-memory event model shared by the recorder and every tool.
 *
 * Contract: one struct tlm_event describes one memory operation as the shim saw
 * it. The recorder fills it, the trace writer encodes it, the reader decodes it
 * back bit-for-bit (every field round-trips). Definitions that events refer to
 * (threads, stacks, modules) are separate records, see tlm/trace.h.
 */
#ifndef TLM_EVENT_H
#define TLM_EVENT_H

#include <stdint.h>

/* What kind of memory an operation touches. Address namespaces differ per kind:
 * DEVICE and MANAGED share the device virtual address space, HOST_PINNED is a
 * host address, VMM_PHYSICAL is a CUmemGenericAllocationHandle, VMM_RESERVE and
 * VMM_MAPPING are device virtual ranges, POOL is a CUmemoryPool handle. */
enum tlm_kind {
	TLM_KIND_DEVICE = 0,
	TLM_KIND_MANAGED = 1,
	TLM_KIND_HOST_PINNED = 2,
	TLM_KIND_VMM_PHYSICAL = 3,
	TLM_KIND_VMM_RESERVE = 4,
	TLM_KIND_VMM_MAPPING = 5,
	TLM_KIND_POOL = 6,
	TLM_KIND_BLOCK = 7,     /* a block handed out by an allocator inside memory it reserved
	                         * (PyTorch's caching allocator, docs/pytorch.md): device VA */
	TLM_KIND_COUNT
};

/* Address namespaces: where an event kind's addresses (or handles) live, so
 * that a free finds its allocation. DEVICE and MANAGED share the device
 * virtual address space (cudaFree frees either); each other kind is a space
 * of its own; a pool handle names no memory (TLM_NS_NONE). This is the one
 * rule: the report's replay, its consumers and the recorder's table of live
 * allocations all take it from tlm_kind_ns(). */
enum tlm_ns {
	TLM_NS_NONE = 0,
	TLM_NS_DEVVA = 1,    /* device and managed allocations */
	TLM_NS_HOST = 2,     /* pinned host memory */
	TLM_NS_VMM_PHYS = 3, /* cuMemCreate handles */
	TLM_NS_VMM_RESV = 4, /* cuMemAddressReserve ranges (hold no bytes) */
	TLM_NS_VMM_MAP = 5,  /* cuMemMap ranges (hold no bytes: the handle does) */
	TLM_NS_BLOCK = 6,    /* allocator blocks (kind BLOCK) */
	TLM_NS_COUNT
};

static inline enum tlm_ns tlm_kind_ns(unsigned kind)
{
	switch (kind) {
	case TLM_KIND_DEVICE:
	case TLM_KIND_MANAGED: return TLM_NS_DEVVA;
	case TLM_KIND_HOST_PINNED: return TLM_NS_HOST;
	case TLM_KIND_VMM_PHYSICAL: return TLM_NS_VMM_PHYS;
	case TLM_KIND_VMM_RESERVE: return TLM_NS_VMM_RESV;
	case TLM_KIND_VMM_MAPPING: return TLM_NS_VMM_MAP;
	case TLM_KIND_BLOCK: return TLM_NS_BLOCK;
	default: return TLM_NS_NONE;
	}
}

enum tlm_op {
	TLM_OP_ALLOC = 1,      /* addr, size, kind; stream/pool for async; aux = VMM handle for a mapping */
	TLM_OP_FREE = 2,       /* addr (size for unmap / address free); kind as the API implies */
	TLM_OP_POOL_CREATE = 3,/* addr = pool handle */
	TLM_OP_POOL_DESTROY = 4,
	TLM_OP_POOL_TRIM = 5,  /* addr = pool, size = minBytesToKeep */
	TLM_OP_COUNT
};

/* The entry point a call was recorded at (kept in the trace so a report can say
 * "cudaMallocPitch" rather than "an allocation"). Values are part of trace v1. */
enum tlm_api {
	TLM_API_UNKNOWN = 0,
	TLM_API_cuMemAlloc_v2, TLM_API_cuMemAllocPitch_v2, TLM_API_cuMemFree_v2,
	TLM_API_cuMemAllocAsync, TLM_API_cuMemAllocAsync_ptsz,
	TLM_API_cuMemAllocFromPoolAsync, TLM_API_cuMemAllocFromPoolAsync_ptsz,
	TLM_API_cuMemFreeAsync, TLM_API_cuMemFreeAsync_ptsz,
	TLM_API_cuMemAllocManaged, TLM_API_cuMemAllocHost_v2, TLM_API_cuMemHostAlloc,
	TLM_API_cuMemFreeHost, TLM_API_cuMemCreate, TLM_API_cuMemRelease, TLM_API_cuMemMap,
	TLM_API_cuMemUnmap, TLM_API_cuMemAddressReserve, TLM_API_cuMemAddressFree,
	TLM_API_cuMemPoolCreate, TLM_API_cuMemPoolDestroy, TLM_API_cuMemPoolTrimTo,
	TLM_API_cudaMalloc, TLM_API_cudaMallocPitch, TLM_API_cudaMalloc3D,
	TLM_API_cudaMallocManaged, TLM_API_cudaMallocHost, TLM_API_cudaHostAlloc,
	TLM_API_cudaMallocAsync, TLM_API_cudaMallocAsync_ptsz,
	TLM_API_cudaMallocFromPoolAsync, TLM_API_cudaMallocFromPoolAsync_ptsz,
	TLM_API_cudaFree, TLM_API_cudaFreeHost, TLM_API_cudaFreeAsync, TLM_API_cudaFreeAsync_ptsz,
	TLM_API_c10_reportMemoryUsageToProfiler, /* kind BLOCK: the caching allocator's tap */
	TLM_API_c10_reportOutOfMemoryToProfiler,
	TLM_API_COUNT /* < 256: the recorder keeps it in a byte */
};

/* Event flags. */
#define TLM_EVF_PTSZ 0x1u      /* per-thread default stream flavour of the call */
#define TLM_EVF_RUNTIME 0x2u   /* recorded at the runtime (cudart) layer */
#define TLM_EVF_CUPTI 0x4u     /* seen only through CUPTI's callbacks: the call bypassed every
                                * interposed entry point (docs/cupti.md) */
#define TLM_EVF_NO_TOTALS 0x8u /* kind BLOCK: the allocator reported no totals (torch < 1.10):
                                * aux is tlm's running sum of its blocks, stream 0 */
#define TLM_EVF_GC_FREED 0x10u /* a free during a cyclic GC collection of the Python interpreter,
                                * on the thread holding the GIL (docs/recording.md, Python stacks) */
#define TLM_EVF_FINALIZING 0x20u /* a free after the Python interpreter's finalization began */
#define TLM_EVF_LATE 0x40u     /* written after events numbered later: its thread stayed inside the
                                * hooked call so long that the writer went on without it, so its
                                * order against them is not proven (docs/recording.md) */

/* Kind BLOCK (allocator layer), ops ALLOC and FREE: addr = block, size = block
 * size (a failed ALLOC: the size the program asked for, result = 2), aux = the
 * allocator's allocated bytes and stream = its reserved bytes on that device
 * after the operation, as the allocator itself reported them. */
struct tlm_event {
	uint64_t time_ns;     /* CLOCK_MONOTONIC, see the header's clock pair */
	uint64_t addr;        /* address or handle, see enum tlm_kind; 0 when a call failed */
	uint64_t size;        /* bytes (requested size for a failed allocation) */
	uint64_t stream;      /* CUstream as passed (0 = default stream), 0 when none;
	                       * for a VMM mapping: the offset into the handle */
	uint64_t aux;         /* pool handle (pool allocations), VMM handle (cuMemMap) */
	uint64_t device_free; /* failed allocations: device free bytes at that moment */
	uint32_t stack_id;    /* 0 = no stack */
	uint32_t thread;      /* trace-local thread index (see thread records) */
	int32_t result;       /* CUresult / cudaError_t returned, 0 = success */
	int16_t device;       /* device ordinal, -1 for none / unknown */
	uint8_t op;           /* enum tlm_op */
	uint8_t kind;         /* enum tlm_kind */
	uint16_t flags;       /* TLM_EVF_* */
	uint16_t api;         /* enum tlm_api */
};

const char *tlm_kind_name(unsigned kind);
const char *tlm_op_name(unsigned op);
const char *tlm_api_name(unsigned api);

#endif
