/* SPDX-License-Identifier: MIT */
/*
 * abi_check.c - src/common/cupti_abi.h against the toolkit's own CUPTI
 * headers: every constant, struct size and field offset tlm relies on.
 * Built only when meson found cupti.h: a mismatch fails the build (the test
 * itself only runs the result). Keep it in step with cupti_abi.h (one line per field).
 */
#include <stddef.h>

#include <cupti.h> /* includes generated_cuda_meta.h and generated_cuda_runtime_api_meta.h */

#include "common/cupti_abi.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " == " #b)
#define SIZE(t, real) _Static_assert(sizeof(t) == sizeof(real), "sizeof " #t)
#define FIELD(t, real, f)                                                                          \
	_Static_assert(offsetof(t, f) == offsetof(real, f) && sizeof(((t *)0)->f) == sizeof(((real *)0)->f), \
		       #t "." #f)

SAME(TLM_CUPTI_SUCCESS, CUPTI_SUCCESS);
SAME(TLM_CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_INVALID_PARAMETER);
SAME(TLM_CUPTI_ERROR_NOT_INITIALIZED, CUPTI_ERROR_NOT_INITIALIZED);
SAME(TLM_CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
SAME(TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
SAME(TLM_CUPTI_ERROR_UNKNOWN, CUPTI_ERROR_UNKNOWN);
SAME(sizeof(tlm_cupti_result), sizeof(CUptiResult));
SAME(TLM_CUPTI_API_ENTER, CUPTI_API_ENTER);
SAME(TLM_CUPTI_API_EXIT, CUPTI_API_EXIT);
SAME(TLM_CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_DRIVER_API);
SAME(TLM_CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RUNTIME_API);
SAME(sizeof(int), sizeof(CUpti_CallbackDomain));
SAME(sizeof(int), sizeof(CUpti_ApiCallbackSite));
SAME(sizeof(uint32_t), sizeof(CUpti_CallbackId));
SAME(sizeof(tlm_cupti_dptr), sizeof(CUdeviceptr));
SAME(sizeof(tlm_cupti_dptr), sizeof(CUmemGenericAllocationHandle));
SAME(TLM_CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN);
SAME(TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE, CUpti_SubscriberParams_STRUCT_SIZE);
/* CUpti_CallbackFunc passes the domain as an int-sized enum (unsigned int in
 * gcc: the same register and bits as tlm's int for every domain value) */
SIZE(struct tlm_cupti_cbdata, CUpti_CallbackData);

FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, callbackSite);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, functionName);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, functionParams);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, functionReturnValue);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, symbolName);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, context);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, contextUid);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, correlationData);
FIELD(struct tlm_cupti_cbdata, CUpti_CallbackData, correlationId);
FIELD(struct tlm_cupti_subscriber_params, CUpti_SubscriberParams, structSize);
FIELD(struct tlm_cupti_subscriber_params, CUpti_SubscriberParams, subscriberName);
FIELD(struct tlm_cupti_subscriber_params, CUpti_SubscriberParams, oldSubscriberName);
FIELD(struct tlm_cupti_subscriber_params, CUpti_SubscriberParams, oldSubscriberSize);

SAME(TLM_CUPTI_DRV_cuInit, CUPTI_DRIVER_TRACE_CBID_cuInit);
SAME(TLM_CUPTI_DRV_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
SAME(TLM_CUPTI_DRV_cuMemAllocPitch_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2);
SAME(TLM_CUPTI_DRV_cuMemFree_v2, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2);
SAME(TLM_CUPTI_DRV_cuMemAllocHost_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2);
SAME(TLM_CUPTI_DRV_cuMemHostAlloc, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc);
SAME(TLM_CUPTI_DRV_cuMemFreeHost, CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost);
SAME(TLM_CUPTI_DRV_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged);
SAME(TLM_CUPTI_DRV_cuMemAddressReserve, CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve);
SAME(TLM_CUPTI_DRV_cuMemAddressFree, CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree);
SAME(TLM_CUPTI_DRV_cuMemCreate, CUPTI_DRIVER_TRACE_CBID_cuMemCreate);
SAME(TLM_CUPTI_DRV_cuMemRelease, CUPTI_DRIVER_TRACE_CBID_cuMemRelease);
SAME(TLM_CUPTI_DRV_cuMemMap, CUPTI_DRIVER_TRACE_CBID_cuMemMap);
SAME(TLM_CUPTI_DRV_cuMemUnmap, CUPTI_DRIVER_TRACE_CBID_cuMemUnmap);
SAME(TLM_CUPTI_DRV_cuMemAllocAsync, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync);
SAME(TLM_CUPTI_DRV_cuMemAllocAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz);
SAME(TLM_CUPTI_DRV_cuMemFreeAsync, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync);
SAME(TLM_CUPTI_DRV_cuMemFreeAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz);
SAME(TLM_CUPTI_DRV_cuMemPoolTrimTo, CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo);
SAME(TLM_CUPTI_DRV_cuMemPoolCreate, CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate);
SAME(TLM_CUPTI_DRV_cuMemPoolDestroy, CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy);
SAME(TLM_CUPTI_DRV_cuMemAllocFromPoolAsync, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync);
SAME(TLM_CUPTI_DRV_cuMemAllocFromPoolAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz);
SAME(TLM_CUPTI_RT_cudaMalloc, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
SAME(TLM_CUPTI_RT_cudaMallocPitch, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020);
SAME(TLM_CUPTI_RT_cudaFree, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
SAME(TLM_CUPTI_RT_cudaMallocHost, CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020);
SAME(TLM_CUPTI_RT_cudaFreeHost, CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020);
SAME(TLM_CUPTI_RT_cudaHostAlloc, CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020);
SAME(TLM_CUPTI_RT_cudaMalloc3D, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020);
SAME(TLM_CUPTI_RT_cudaMallocManaged, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000);
SAME(TLM_CUPTI_RT_cudaMallocAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020);
SAME(TLM_CUPTI_RT_cudaMallocAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020);
SAME(TLM_CUPTI_RT_cudaFreeAsync, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020);
SAME(TLM_CUPTI_RT_cudaFreeAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020);
SAME(TLM_CUPTI_RT_cudaMallocFromPoolAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020);
SAME(TLM_CUPTI_RT_cudaMallocFromPoolAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020);

SIZE(struct tlm_cupti_p_cuMemAlloc_v2, cuMemAlloc_v2_params);
FIELD(struct tlm_cupti_p_cuMemAlloc_v2, cuMemAlloc_v2_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAlloc_v2, cuMemAlloc_v2_params, bytesize);
SIZE(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params);
FIELD(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, pPitch);
FIELD(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, WidthInBytes);
FIELD(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, Height);
FIELD(struct tlm_cupti_p_cuMemAllocPitch_v2, cuMemAllocPitch_v2_params, ElementSizeBytes);
SIZE(struct tlm_cupti_p_cuMemFree_v2, cuMemFree_v2_params);
FIELD(struct tlm_cupti_p_cuMemFree_v2, cuMemFree_v2_params, dptr);
SIZE(struct tlm_cupti_p_cuMemAllocManaged, cuMemAllocManaged_params);
FIELD(struct tlm_cupti_p_cuMemAllocManaged, cuMemAllocManaged_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocManaged, cuMemAllocManaged_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemAllocManaged, cuMemAllocManaged_params, flags);
SIZE(struct tlm_cupti_p_cuMemAllocHost_v2, cuMemAllocHost_v2_params);
FIELD(struct tlm_cupti_p_cuMemAllocHost_v2, cuMemAllocHost_v2_params, pp);
FIELD(struct tlm_cupti_p_cuMemAllocHost_v2, cuMemAllocHost_v2_params, bytesize);
SIZE(struct tlm_cupti_p_cuMemHostAlloc, cuMemHostAlloc_params);
FIELD(struct tlm_cupti_p_cuMemHostAlloc, cuMemHostAlloc_params, pp);
FIELD(struct tlm_cupti_p_cuMemHostAlloc, cuMemHostAlloc_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemHostAlloc, cuMemHostAlloc_params, Flags);
SIZE(struct tlm_cupti_p_cuMemFreeHost, cuMemFreeHost_params);
FIELD(struct tlm_cupti_p_cuMemFreeHost, cuMemFreeHost_params, p);
SIZE(struct tlm_cupti_p_cuMemCreate, cuMemCreate_params);
FIELD(struct tlm_cupti_p_cuMemCreate, cuMemCreate_params, handle);
FIELD(struct tlm_cupti_p_cuMemCreate, cuMemCreate_params, size);
FIELD(struct tlm_cupti_p_cuMemCreate, cuMemCreate_params, prop);
FIELD(struct tlm_cupti_p_cuMemCreate, cuMemCreate_params, flags);
SIZE(struct tlm_cupti_p_cuMemRelease, cuMemRelease_params);
FIELD(struct tlm_cupti_p_cuMemRelease, cuMemRelease_params, handle);
SIZE(struct tlm_cupti_p_cuMemMap, cuMemMap_params);
FIELD(struct tlm_cupti_p_cuMemMap, cuMemMap_params, ptr);
FIELD(struct tlm_cupti_p_cuMemMap, cuMemMap_params, size);
FIELD(struct tlm_cupti_p_cuMemMap, cuMemMap_params, offset);
FIELD(struct tlm_cupti_p_cuMemMap, cuMemMap_params, handle);
FIELD(struct tlm_cupti_p_cuMemMap, cuMemMap_params, flags);
SIZE(struct tlm_cupti_p_cuMemUnmap, cuMemUnmap_params);
FIELD(struct tlm_cupti_p_cuMemUnmap, cuMemUnmap_params, ptr);
FIELD(struct tlm_cupti_p_cuMemUnmap, cuMemUnmap_params, size);
SIZE(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params);
FIELD(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params, ptr);
FIELD(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params, size);
FIELD(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params, alignment);
FIELD(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params, addr);
FIELD(struct tlm_cupti_p_cuMemAddressReserve, cuMemAddressReserve_params, flags);
SIZE(struct tlm_cupti_p_cuMemAddressFree, cuMemAddressFree_params);
FIELD(struct tlm_cupti_p_cuMemAddressFree, cuMemAddressFree_params, ptr);
FIELD(struct tlm_cupti_p_cuMemAddressFree, cuMemAddressFree_params, size);
SIZE(struct tlm_cupti_p_cuMemAllocAsync, cuMemAllocAsync_params);
FIELD(struct tlm_cupti_p_cuMemAllocAsync, cuMemAllocAsync_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocAsync, cuMemAllocAsync_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemAllocAsync, cuMemAllocAsync_params, hStream);
SIZE(struct tlm_cupti_p_cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz_params);
FIELD(struct tlm_cupti_p_cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz_params, hStream);
SIZE(struct tlm_cupti_p_cuMemFreeAsync, cuMemFreeAsync_params);
FIELD(struct tlm_cupti_p_cuMemFreeAsync, cuMemFreeAsync_params, dptr);
FIELD(struct tlm_cupti_p_cuMemFreeAsync, cuMemFreeAsync_params, hStream);
SIZE(struct tlm_cupti_p_cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz_params);
FIELD(struct tlm_cupti_p_cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz_params, dptr);
FIELD(struct tlm_cupti_p_cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz_params, hStream);
SIZE(struct tlm_cupti_p_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_params);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_params, pool);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_params, hStream);
SIZE(struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz_params);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz_params, dptr);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz_params, bytesize);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz_params, pool);
FIELD(struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz_params, hStream);
SIZE(struct tlm_cupti_p_cuMemPoolCreate, cuMemPoolCreate_params);
FIELD(struct tlm_cupti_p_cuMemPoolCreate, cuMemPoolCreate_params, pool);
FIELD(struct tlm_cupti_p_cuMemPoolCreate, cuMemPoolCreate_params, poolProps);
SIZE(struct tlm_cupti_p_cuMemPoolDestroy, cuMemPoolDestroy_params);
FIELD(struct tlm_cupti_p_cuMemPoolDestroy, cuMemPoolDestroy_params, pool);
SIZE(struct tlm_cupti_p_cuMemPoolTrimTo, cuMemPoolTrimTo_params);
FIELD(struct tlm_cupti_p_cuMemPoolTrimTo, cuMemPoolTrimTo_params, pool);
FIELD(struct tlm_cupti_p_cuMemPoolTrimTo, cuMemPoolTrimTo_params, minBytesToKeep);
SIZE(struct tlm_cupti_p_cudaMalloc, cudaMalloc_v3020_params);
FIELD(struct tlm_cupti_p_cudaMalloc, cudaMalloc_v3020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaMalloc, cudaMalloc_v3020_params, size);
SIZE(struct tlm_cupti_p_cudaMallocPitch, cudaMallocPitch_v3020_params);
FIELD(struct tlm_cupti_p_cudaMallocPitch, cudaMallocPitch_v3020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaMallocPitch, cudaMallocPitch_v3020_params, pitch);
FIELD(struct tlm_cupti_p_cudaMallocPitch, cudaMallocPitch_v3020_params, width);
FIELD(struct tlm_cupti_p_cudaMallocPitch, cudaMallocPitch_v3020_params, height);
SIZE(struct tlm_cupti_p_cudaMalloc3D, cudaMalloc3D_v3020_params);
FIELD(struct tlm_cupti_p_cudaMalloc3D, cudaMalloc3D_v3020_params, pitchedDevPtr);
FIELD(struct tlm_cupti_p_cudaMalloc3D, cudaMalloc3D_v3020_params, extent);
SIZE(struct tlm_cupti_p_cudaMallocManaged, cudaMallocManaged_v6000_params);
FIELD(struct tlm_cupti_p_cudaMallocManaged, cudaMallocManaged_v6000_params, devPtr);
FIELD(struct tlm_cupti_p_cudaMallocManaged, cudaMallocManaged_v6000_params, size);
FIELD(struct tlm_cupti_p_cudaMallocManaged, cudaMallocManaged_v6000_params, flags);
SIZE(struct tlm_cupti_p_cudaMallocHost, cudaMallocHost_v3020_params);
FIELD(struct tlm_cupti_p_cudaMallocHost, cudaMallocHost_v3020_params, ptr);
FIELD(struct tlm_cupti_p_cudaMallocHost, cudaMallocHost_v3020_params, size);
SIZE(struct tlm_cupti_p_cudaHostAlloc, cudaHostAlloc_v3020_params);
FIELD(struct tlm_cupti_p_cudaHostAlloc, cudaHostAlloc_v3020_params, pHost);
FIELD(struct tlm_cupti_p_cudaHostAlloc, cudaHostAlloc_v3020_params, size);
FIELD(struct tlm_cupti_p_cudaHostAlloc, cudaHostAlloc_v3020_params, flags);
SIZE(struct tlm_cupti_p_cudaMallocAsync, cudaMallocAsync_v11020_params);
FIELD(struct tlm_cupti_p_cudaMallocAsync, cudaMallocAsync_v11020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaMallocAsync, cudaMallocAsync_v11020_params, size);
FIELD(struct tlm_cupti_p_cudaMallocAsync, cudaMallocAsync_v11020_params, hStream);
SIZE(struct tlm_cupti_p_cudaMallocAsync_ptsz, cudaMallocAsync_ptsz_v11020_params);
FIELD(struct tlm_cupti_p_cudaMallocAsync_ptsz, cudaMallocAsync_ptsz_v11020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaMallocAsync_ptsz, cudaMallocAsync_ptsz_v11020_params, size);
FIELD(struct tlm_cupti_p_cudaMallocAsync_ptsz, cudaMallocAsync_ptsz_v11020_params, hStream);
SIZE(struct tlm_cupti_p_cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020_params);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020_params, ptr);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020_params, size);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020_params, memPool);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_v11020_params, stream);
SIZE(struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020_params);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020_params, ptr);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020_params, size);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020_params, memPool);
FIELD(struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync_ptsz_v11020_params, stream);
SIZE(struct tlm_cupti_p_cudaFree, cudaFree_v3020_params);
FIELD(struct tlm_cupti_p_cudaFree, cudaFree_v3020_params, devPtr);
SIZE(struct tlm_cupti_p_cudaFreeHost, cudaFreeHost_v3020_params);
FIELD(struct tlm_cupti_p_cudaFreeHost, cudaFreeHost_v3020_params, ptr);
SIZE(struct tlm_cupti_p_cudaFreeAsync, cudaFreeAsync_v11020_params);
FIELD(struct tlm_cupti_p_cudaFreeAsync, cudaFreeAsync_v11020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaFreeAsync, cudaFreeAsync_v11020_params, hStream);
SIZE(struct tlm_cupti_p_cudaFreeAsync_ptsz, cudaFreeAsync_ptsz_v11020_params);
FIELD(struct tlm_cupti_p_cudaFreeAsync_ptsz, cudaFreeAsync_ptsz_v11020_params, devPtr);
FIELD(struct tlm_cupti_p_cudaFreeAsync_ptsz, cudaFreeAsync_ptsz_v11020_params, hStream);

SIZE(struct tlm_cupti_extent, struct cudaExtent);
FIELD(struct tlm_cupti_extent, struct cudaExtent, width);
FIELD(struct tlm_cupti_extent, struct cudaExtent, height);
FIELD(struct tlm_cupti_extent, struct cudaExtent, depth);

/* Everything above is checked while compiling; running it proves it built. */
int main(void)
{
	return 0;
}
