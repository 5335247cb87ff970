/* SPDX-License-Identifier: MIT */
/*
 * cupti_events.c - what a CUPTI callback's parameters say, as one tlm event:
 * the driver's frees (read at ENTER, while the address is live), the
 * driver's allocations and the runtime's memory calls (at EXIT, with the
 * call's result). Pure translation: no state, no recording; cupti.c decides
 * when a callback is recorded (cupti_int.h).
 */
#include <stdint.h>
#include <string.h>

#include "common/cupti_abi.h"
#include "recording/cupti_int.h"
#include "recording/driver_query.h"

#define U(p) ((uint64_t)(uintptr_t)(p))
#define P(type) const struct tlm_cupti_p_##type *p = prm

/* A driver free-like call, described at its ENTER (the address is still
 * live). False for any other call. */
bool tlm__cupti_driver_free(uint32_t cbid, const void *prm, struct tlm__evargs *a)
{
	switch (cbid) {
	case TLM_CUPTI_DRV_cuMemFree_v2: {
		P(cuMemFree_v2);
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .api = TLM_API_cuMemFree_v2,
					  .addr = p->dptr, .device = tlm__current_device()};
		return p->dptr != 0;
	}
	case TLM_CUPTI_DRV_cuMemFreeHost: {
		P(cuMemFreeHost);
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_HOST_PINNED,
					  .api = TLM_API_cuMemFreeHost, .addr = U(p->p), .device = -1};
		return p->p != NULL;
	}
	case TLM_CUPTI_DRV_cuMemRelease: {
		P(cuMemRelease);
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_VMM_PHYSICAL, .api = TLM_API_cuMemRelease,
					  .addr = p->handle, .device = tlm__current_device()};
		return p->handle != 0;
	}
	case TLM_CUPTI_DRV_cuMemPoolDestroy: {
		P(cuMemPoolDestroy);
		*a = (struct tlm__evargs){.op = TLM_OP_POOL_DESTROY, .kind = TLM_KIND_POOL,
					  .api = TLM_API_cuMemPoolDestroy, .addr = U(p->pool),
					  .device = tlm__current_device()};
		return p->pool != NULL;
	}
	case TLM_CUPTI_DRV_cuMemUnmap: {
		P(cuMemUnmap);
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_VMM_MAPPING, .api = TLM_API_cuMemUnmap,
					  .addr = p->ptr, .size = p->size, .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAddressFree: {
		P(cuMemAddressFree);
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_VMM_RESERVE,
					  .api = TLM_API_cuMemAddressFree, .addr = p->ptr, .size = p->size,
					  .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemFreeAsync:
	case TLM_CUPTI_DRV_cuMemFreeAsync_ptsz: {
		P(cuMemFreeAsync);
		bool ptsz = cbid == TLM_CUPTI_DRV_cuMemFreeAsync_ptsz;
		*a = (struct tlm__evargs){.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE,
					  .api = ptsz ? TLM_API_cuMemFreeAsync_ptsz : TLM_API_cuMemFreeAsync,
					  .flags = ptsz ? TLM_EVF_PTSZ : 0, .addr = p->dptr, .stream = U(p->hStream),
					  .device = tlm__current_device()};
		return p->dptr != 0;
	}
	default:
		return false;
	}
}

/* A driver allocation-like call, described at its EXIT with its result. */
bool tlm__cupti_driver_alloc(uint32_t cbid, const void *prm, int32_t r, struct tlm__evargs *a)
{
	bool ok = r == CUDA_SUCCESS;
	switch (cbid) {
	case TLM_CUPTI_DRV_cuMemAlloc_v2: {
		P(cuMemAlloc_v2);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = TLM_API_cuMemAlloc_v2,
					  .addr = ok && p->dptr ? *p->dptr : 0, .size = p->bytesize,
					  .device = tlm__current_device()};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAllocPitch_v2: {
		P(cuMemAllocPitch_v2);
		bool got = ok && p->dptr && p->pPitch;
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE,
					  .api = TLM_API_cuMemAllocPitch_v2, .addr = got ? *p->dptr : 0,
					  .size = got ? *p->pPitch * p->Height : p->WidthInBytes * p->Height,
					  .device = tlm__current_device()};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAllocManaged: {
		P(cuMemAllocManaged);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_MANAGED,
					  .api = TLM_API_cuMemAllocManaged, .addr = ok && p->dptr ? *p->dptr : 0,
					  .size = p->bytesize, .device = tlm__current_device()};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAllocHost_v2: {
		P(cuMemAllocHost_v2);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_HOST_PINNED,
					  .api = TLM_API_cuMemAllocHost_v2, .addr = ok && p->pp ? U(*p->pp) : 0,
					  .size = p->bytesize, .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemHostAlloc: {
		P(cuMemHostAlloc);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_HOST_PINNED,
					  .api = TLM_API_cuMemHostAlloc, .addr = ok && p->pp ? U(*p->pp) : 0,
					  .size = p->bytesize, .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAllocAsync:
	case TLM_CUPTI_DRV_cuMemAllocAsync_ptsz: {
		P(cuMemAllocAsync);
		bool ptsz = cbid == TLM_CUPTI_DRV_cuMemAllocAsync_ptsz;
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE,
					  .api = ptsz ? TLM_API_cuMemAllocAsync_ptsz : TLM_API_cuMemAllocAsync,
					  .flags = ptsz ? TLM_EVF_PTSZ : 0, .addr = ok && p->dptr ? *p->dptr : 0,
					  .size = p->bytesize, .stream = U(p->hStream), .device = tlm__current_device()};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAllocFromPoolAsync:
	case TLM_CUPTI_DRV_cuMemAllocFromPoolAsync_ptsz: {
		P(cuMemAllocFromPoolAsync);
		bool ptsz = cbid == TLM_CUPTI_DRV_cuMemAllocFromPoolAsync_ptsz;
		*a = (struct tlm__evargs){
			.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE,
			.api = ptsz ? TLM_API_cuMemAllocFromPoolAsync_ptsz : TLM_API_cuMemAllocFromPoolAsync,
			.flags = ptsz ? TLM_EVF_PTSZ : 0, .addr = ok && p->dptr ? *p->dptr : 0, .size = p->bytesize,
			.stream = U(p->hStream), .aux = U(p->pool), .device = tlm__current_device()};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemCreate: {
		P(cuMemCreate);
		const CUmemAllocationProp *prop = p->prop;
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_PHYSICAL, .api = TLM_API_cuMemCreate,
					  .addr = ok && p->handle ? *p->handle : 0, .size = p->size,
					  .device = prop ? (int16_t)prop->location.id : -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemMap: {
		P(cuMemMap);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_MAPPING, .api = TLM_API_cuMemMap,
					  .addr = p->ptr, .size = p->size, .stream = p->offset, .aux = p->handle,
					  .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemAddressReserve: {
		P(cuMemAddressReserve);
		*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_RESERVE,
					  .api = TLM_API_cuMemAddressReserve, .addr = ok && p->ptr ? *p->ptr : 0,
					  .size = p->size, .device = -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemPoolCreate: {
		P(cuMemPoolCreate);
		const CUmemPoolProps *props = p->poolProps;
		*a = (struct tlm__evargs){.op = TLM_OP_POOL_CREATE, .kind = TLM_KIND_POOL,
					  .api = TLM_API_cuMemPoolCreate, .addr = ok && p->pool ? U(*p->pool) : 0,
					  .device = props ? (int16_t)props->location.id : -1};
		return true;
	}
	case TLM_CUPTI_DRV_cuMemPoolTrimTo: {
		P(cuMemPoolTrimTo);
		*a = (struct tlm__evargs){.op = TLM_OP_POOL_TRIM, .kind = TLM_KIND_POOL, .api = TLM_API_cuMemPoolTrimTo,
					  .addr = U(p->pool), .size = p->minBytesToKeep, .device = -1};
		return true;
	}
	default:
		return false;
	}
}

/* A runtime memory call, described at its EXIT. False for calls that make no
 * memory operation (cudaFree(NULL), a zero-byte cudaMalloc). */
bool tlm__cupti_runtime_event(uint32_t cbid, const void *prm, int32_t r, struct tlm__evargs *a)
{
	bool ok = r == cudaSuccess;
	uint16_t fl = TLM_EVF_RUNTIME;
	*a = (struct tlm__evargs){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .flags = fl};
	switch (cbid) {
	case TLM_CUPTI_RT_cudaMalloc: {
		P(cudaMalloc);
		a->api = TLM_API_cudaMalloc;
		a->addr = ok && p->devPtr ? U(*p->devPtr) : 0;
		a->size = p->size;
		break;
	}
	case TLM_CUPTI_RT_cudaMallocPitch: {
		P(cudaMallocPitch);
		bool got = ok && p->devPtr && p->pitch;
		a->api = TLM_API_cudaMallocPitch;
		a->addr = got ? U(*p->devPtr) : 0;
		a->size = got ? *p->pitch * p->height : p->width * p->height;
		break;
	}
	case TLM_CUPTI_RT_cudaMalloc3D: {
		P(cudaMalloc3D);
		const struct cudaPitchedPtr *pp = p->pitchedDevPtr;
		bool got = ok && pp;
		a->api = TLM_API_cudaMalloc3D;
		a->addr = got ? U(pp->ptr) : 0;
		a->size = (got ? pp->pitch : p->extent.width) * p->extent.height * p->extent.depth;
		break;
	}
	case TLM_CUPTI_RT_cudaMallocManaged: {
		P(cudaMallocManaged);
		a->api = TLM_API_cudaMallocManaged;
		a->kind = TLM_KIND_MANAGED;
		a->addr = ok && p->devPtr ? U(*p->devPtr) : 0;
		a->size = p->size;
		break;
	}
	case TLM_CUPTI_RT_cudaMallocHost: {
		P(cudaMallocHost);
		a->api = TLM_API_cudaMallocHost;
		a->kind = TLM_KIND_HOST_PINNED;
		a->addr = ok && p->ptr ? U(*p->ptr) : 0;
		a->size = p->size;
		break;
	}
	case TLM_CUPTI_RT_cudaHostAlloc: {
		P(cudaHostAlloc);
		a->api = TLM_API_cudaHostAlloc;
		a->kind = TLM_KIND_HOST_PINNED;
		a->addr = ok && p->pHost ? U(*p->pHost) : 0;
		a->size = p->size;
		break;
	}
	case TLM_CUPTI_RT_cudaMallocAsync:
	case TLM_CUPTI_RT_cudaMallocAsync_ptsz: {
		P(cudaMallocAsync);
		bool ptsz = cbid == TLM_CUPTI_RT_cudaMallocAsync_ptsz;
		a->api = ptsz ? TLM_API_cudaMallocAsync_ptsz : TLM_API_cudaMallocAsync;
		a->flags |= ptsz ? TLM_EVF_PTSZ : 0;
		a->addr = ok && p->devPtr ? U(*p->devPtr) : 0;
		a->size = p->size;
		a->stream = U(p->hStream);
		break;
	}
	case TLM_CUPTI_RT_cudaMallocFromPoolAsync:
	case TLM_CUPTI_RT_cudaMallocFromPoolAsync_ptsz: {
		P(cudaMallocFromPoolAsync);
		bool ptsz = cbid == TLM_CUPTI_RT_cudaMallocFromPoolAsync_ptsz;
		a->api = ptsz ? TLM_API_cudaMallocFromPoolAsync_ptsz : TLM_API_cudaMallocFromPoolAsync;
		a->flags |= ptsz ? TLM_EVF_PTSZ : 0;
		a->addr = ok && p->ptr ? U(*p->ptr) : 0;
		a->size = p->size;
		a->stream = U(p->stream);
		a->aux = U(p->memPool);
		break;
	}
	case TLM_CUPTI_RT_cudaFree: {
		P(cudaFree);
		a->op = TLM_OP_FREE;
		a->api = TLM_API_cudaFree;
		a->addr = U(p->devPtr);
		break;
	}
	case TLM_CUPTI_RT_cudaFreeHost: {
		P(cudaFreeHost);
		a->op = TLM_OP_FREE;
		a->api = TLM_API_cudaFreeHost;
		a->kind = TLM_KIND_HOST_PINNED;
		a->addr = U(p->ptr);
		break;
	}
	case TLM_CUPTI_RT_cudaFreeAsync:
	case TLM_CUPTI_RT_cudaFreeAsync_ptsz: {
		P(cudaFreeAsync);
		bool ptsz = cbid == TLM_CUPTI_RT_cudaFreeAsync_ptsz;
		a->op = TLM_OP_FREE;
		a->api = ptsz ? TLM_API_cudaFreeAsync_ptsz : TLM_API_cudaFreeAsync;
		a->flags |= ptsz ? TLM_EVF_PTSZ : 0;
		a->addr = U(p->devPtr);
		a->stream = U(p->hStream);
		break;
	}
	default:
		return false;
	}
	if (a->op == TLM_OP_FREE ? a->addr == 0 : (ok && a->size == 0))
		return false;
	a->result = r;
	a->device = a->kind == TLM_KIND_HOST_PINNED ? -1 : tlm__current_device();
	return true;
}
