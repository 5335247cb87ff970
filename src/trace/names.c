/* SPDX-License-Identifier: MIT */
/* names.c - printable names for the enums of tlm/event.h (stable: tools print them). */
#include "tlm/event.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *tlm_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[TLM_KIND_DEVICE] = "device",
		[TLM_KIND_MANAGED] = "managed",
		[TLM_KIND_HOST_PINNED] = "host_pinned",
		[TLM_KIND_VMM_PHYSICAL] = "vmm_physical",
		[TLM_KIND_VMM_RESERVE] = "vmm_reserve",
		[TLM_KIND_VMM_MAPPING] = "vmm_mapping",
		[TLM_KIND_POOL] = "pool",
		[TLM_KIND_BLOCK] = "block",
	};
	_Static_assert(N(names) == TLM_KIND_COUNT, "a kind has no name");
	return kind < N(names) ? names[kind] : "unknown";
}

const char *tlm_op_name(unsigned op)
{
	static const char *const names[] = {
		[0] = "unknown",
		[TLM_OP_ALLOC] = "alloc",
		[TLM_OP_FREE] = "free",
		[TLM_OP_POOL_CREATE] = "pool_create",
		[TLM_OP_POOL_DESTROY] = "pool_destroy",
		[TLM_OP_POOL_TRIM] = "pool_trim",
	};
	_Static_assert(N(names) == TLM_OP_COUNT, "an op has no name");
	return op < N(names) ? names[op] : "unknown";
}

const char *tlm_api_name(unsigned api)
{
#define A(x) [TLM_API_##x] = #x
	static const char *const names[] = {
		[TLM_API_UNKNOWN] = "unknown",
		A(cuMemAlloc_v2), A(cuMemAllocPitch_v2), A(cuMemFree_v2),
		A(cuMemAllocAsync), A(cuMemAllocAsync_ptsz),
		A(cuMemAllocFromPoolAsync), A(cuMemAllocFromPoolAsync_ptsz),
		A(cuMemFreeAsync), A(cuMemFreeAsync_ptsz),
		A(cuMemAllocManaged), A(cuMemAllocHost_v2), A(cuMemHostAlloc),
		A(cuMemFreeHost), A(cuMemCreate), A(cuMemRelease), A(cuMemMap),
		A(cuMemUnmap), A(cuMemAddressReserve), A(cuMemAddressFree),
		A(cuMemPoolCreate), A(cuMemPoolDestroy), A(cuMemPoolTrimTo),
		A(cudaMalloc), A(cudaMallocPitch), A(cudaMalloc3D),
		A(cudaMallocManaged), A(cudaMallocHost), A(cudaHostAlloc),
		A(cudaMallocAsync), A(cudaMallocAsync_ptsz),
		A(cudaMallocFromPoolAsync), A(cudaMallocFromPoolAsync_ptsz),
		A(cudaFree), A(cudaFreeHost), A(cudaFreeAsync), A(cudaFreeAsync_ptsz),
		[TLM_API_c10_reportMemoryUsageToProfiler] = "c10::reportMemoryUsageToProfiler",
		[TLM_API_c10_reportOutOfMemoryToProfiler] = "c10::reportOutOfMemoryToProfiler",
	};
#undef A
	_Static_assert(N(names) == TLM_API_COUNT, "an api has no name");
	return api < N(names) && names[api] ? names[api] : "unknown";
}
