/* SPDX-License-Identifier: MIT */
/*
 * cupti_abi.h - the slice of the CUPTI ABI that tlm touches (callback API).
 *
 * Contract: every constant, struct size and field offset here equals the CUDA
 * 13 toolkit's (cupti_result.h, cupti_callbacks.h, cupti_driver_cbid.h,
 * cupti_runtime_cbid.h, generated_cuda_meta.h,
 * generated_cuda_runtime_api_meta.h), so that tlm builds without a toolkit and
 * never links libcupti. Names carry a tlm_ / TLM_ prefix and only plain C
 * types are used, so this header can sit next to the toolkit's own headers:
 * tests/cupti/abi_check.c (built when the toolkit is found) checks every
 * value and layout against them. Shared by the shim (src/recording/cupti.c), the
 * simulated driver and the CUPTI double (src/sim/).
 */
#ifndef TLM_CUPTI_ABI_H
#define TLM_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ---- cupti_result.h: CUptiResult (an int-sized enum) ---- */
typedef int tlm_cupti_result;
#define TLM_CUPTI_SUCCESS 0
#define TLM_CUPTI_ERROR_INVALID_PARAMETER 1
#define TLM_CUPTI_ERROR_NOT_INITIALIZED 15
#define TLM_CUPTI_ERROR_NOT_SUPPORTED 27
#define TLM_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39
#define TLM_CUPTI_ERROR_UNKNOWN 999

/* ---- cupti_callbacks.h ---- */
#define TLM_CUPTI_API_ENTER 0 /* CUpti_ApiCallbackSite */
#define TLM_CUPTI_API_EXIT 1
#define TLM_CUPTI_CB_DOMAIN_DRIVER_API 1 /* CUpti_CallbackDomain */
#define TLM_CUPTI_CB_DOMAIN_RUNTIME_API 2

typedef struct tlm_cupti_subscriber_st *tlm_cupti_subscriber; /* CUpti_SubscriberHandle */
/* CUpti_CallbackFunc; the domain is a CUpti_CallbackDomain (int-sized enum) */
typedef void (*tlm_cupti_callback_fn)(void *userdata, int domain, uint32_t cbid, const void *cbdata);

/* CUpti_CallbackData: what a DRIVER_API or RUNTIME_API callback receives. */
struct tlm_cupti_cbdata {
	int callbackSite;            /* TLM_CUPTI_API_ENTER / EXIT */
	const char *functionName;
	const void *functionParams;  /* one of the tlm_cupti_p_* structs below */
	void *functionReturnValue;   /* CUresult * / cudaError_t *, valid at EXIT */
	const char *symbolName;
	void *context;               /* CUcontext */
	uint32_t contextUid;
	uint64_t *correlationData;
	uint32_t correlationId;
};

/* CUpti_SubscriberParams (cuptiSubscribe_v2, CUDA 13.0). The last field is
 * documented from CUPTI 13.2 on (cuptiGetVersion() >= 130200): a client that
 * sets it passes TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI as structSize. */
struct tlm_cupti_subscriber_params {
	size_t structSize;
	const char *subscriberName;
	char *oldSubscriberName;
	size_t oldSubscriberSize;
	uint8_t allowMultipleSubscribers; /* 13.2 */
};
#define TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE                                                            \
	(offsetof(struct tlm_cupti_subscriber_params, oldSubscriberSize) + sizeof(size_t))
#define TLM_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI                                                      \
	(offsetof(struct tlm_cupti_subscriber_params, allowMultipleSubscribers) + sizeof(uint8_t))
#define TLM_CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN 64
#define TLM_CUPTI_API_VERSION_MULTI 130200 /* cuptiGetVersion() of CUPTI 13.2 */

/* ---- cupti_driver_cbid.h: CUpti_driver_api_trace_cbid ---- */
#define TLM_CUPTI_DRV_cuInit 1
#define TLM_CUPTI_DRV_cuMemAlloc_v2 243
#define TLM_CUPTI_DRV_cuMemAllocPitch_v2 244
#define TLM_CUPTI_DRV_cuMemFree_v2 245
#define TLM_CUPTI_DRV_cuMemAllocHost_v2 294
#define TLM_CUPTI_DRV_cuMemHostAlloc 39
#define TLM_CUPTI_DRV_cuMemFreeHost 38
#define TLM_CUPTI_DRV_cuMemAllocManaged 371
#define TLM_CUPTI_DRV_cuMemAddressReserve 547
#define TLM_CUPTI_DRV_cuMemAddressFree 548
#define TLM_CUPTI_DRV_cuMemCreate 549
#define TLM_CUPTI_DRV_cuMemRelease 550
#define TLM_CUPTI_DRV_cuMemMap 551
#define TLM_CUPTI_DRV_cuMemUnmap 552
#define TLM_CUPTI_DRV_cuMemImportFromShareableHandle 555
#define TLM_CUPTI_DRV_cuMemRetainAllocationHandle 565
#define TLM_CUPTI_DRV_cuMemAllocAsync 598
#define TLM_CUPTI_DRV_cuMemAllocAsync_ptsz 599
#define TLM_CUPTI_DRV_cuMemFreeAsync 600
#define TLM_CUPTI_DRV_cuMemFreeAsync_ptsz 601
#define TLM_CUPTI_DRV_cuMemPoolTrimTo 602
#define TLM_CUPTI_DRV_cuMemPoolCreate 607
#define TLM_CUPTI_DRV_cuMemPoolDestroy 608
#define TLM_CUPTI_DRV_cuMemAllocFromPoolAsync 611
#define TLM_CUPTI_DRV_cuMemAllocFromPoolAsync_ptsz 612

/* ---- cupti_runtime_cbid.h: CUpti_runtime_api_trace_cbid ---- */
#define TLM_CUPTI_RT_cudaMalloc 20                /* _v3020 */
#define TLM_CUPTI_RT_cudaMallocPitch 21           /* _v3020 */
#define TLM_CUPTI_RT_cudaFree 22                  /* _v3020 */
#define TLM_CUPTI_RT_cudaMallocHost 25            /* _v3020 */
#define TLM_CUPTI_RT_cudaFreeHost 26              /* _v3020 */
#define TLM_CUPTI_RT_cudaHostAlloc 27             /* _v3020 */
#define TLM_CUPTI_RT_cudaMalloc3D 140             /* _v3020 */
#define TLM_CUPTI_RT_cudaMallocManaged 206        /* _v6000 */
#define TLM_CUPTI_RT_cudaMallocAsync 373          /* _v11020 */
#define TLM_CUPTI_RT_cudaMallocAsync_ptsz 374     /* _v11020 */
#define TLM_CUPTI_RT_cudaFreeAsync 375            /* _v11020 */
#define TLM_CUPTI_RT_cudaFreeAsync_ptsz 376       /* _v11020 */
#define TLM_CUPTI_RT_cudaMallocFromPoolAsync 391  /* _v11020 */
#define TLM_CUPTI_RT_cudaMallocFromPoolAsync_ptsz 392 /* _v11020 */

/* ---- generated_cuda_meta.h: <name>_params, driver API ---- */
typedef unsigned long long tlm_cupti_dptr; /* CUdeviceptr, CUmemGenericAllocationHandle */

struct tlm_cupti_p_cuMemAlloc_v2 { tlm_cupti_dptr *dptr; size_t bytesize; };
struct tlm_cupti_p_cuMemAllocPitch_v2 {
	tlm_cupti_dptr *dptr;
	size_t *pPitch;
	size_t WidthInBytes;
	size_t Height;
	unsigned int ElementSizeBytes;
};
struct tlm_cupti_p_cuMemFree_v2 { tlm_cupti_dptr dptr; };
struct tlm_cupti_p_cuMemAllocManaged { tlm_cupti_dptr *dptr; size_t bytesize; unsigned int flags; };
struct tlm_cupti_p_cuMemAllocHost_v2 { void **pp; size_t bytesize; };
struct tlm_cupti_p_cuMemHostAlloc { void **pp; size_t bytesize; unsigned int Flags; };
struct tlm_cupti_p_cuMemFreeHost { void *p; };
struct tlm_cupti_p_cuMemCreate {
	tlm_cupti_dptr *handle;
	size_t size;
	const void *prop; /* const CUmemAllocationProp * */
	unsigned long long flags;
};
struct tlm_cupti_p_cuMemRelease { tlm_cupti_dptr handle; };
struct tlm_cupti_p_cuMemRetainAllocationHandle { tlm_cupti_dptr *handle; void *addr; };
struct tlm_cupti_p_cuMemImportFromShareableHandle {
	tlm_cupti_dptr *handle;
	void *osHandle;
	int shHandleType; /* CUmemAllocationHandleType */
};
struct tlm_cupti_p_cuMemMap {
	tlm_cupti_dptr ptr;
	size_t size;
	size_t offset;
	tlm_cupti_dptr handle;
	unsigned long long flags;
};
struct tlm_cupti_p_cuMemUnmap { tlm_cupti_dptr ptr; size_t size; };
struct tlm_cupti_p_cuMemAddressReserve {
	tlm_cupti_dptr *ptr;
	size_t size;
	size_t alignment;
	tlm_cupti_dptr addr;
	unsigned long long flags;
};
struct tlm_cupti_p_cuMemAddressFree { tlm_cupti_dptr ptr; size_t size; };
struct tlm_cupti_p_cuMemAllocAsync { tlm_cupti_dptr *dptr; size_t bytesize; void *hStream; };
struct tlm_cupti_p_cuMemAllocAsync_ptsz { tlm_cupti_dptr *dptr; size_t bytesize; void *hStream; };
struct tlm_cupti_p_cuMemFreeAsync { tlm_cupti_dptr dptr; void *hStream; };
struct tlm_cupti_p_cuMemFreeAsync_ptsz { tlm_cupti_dptr dptr; void *hStream; };
struct tlm_cupti_p_cuMemAllocFromPoolAsync {
	tlm_cupti_dptr *dptr;
	size_t bytesize;
	void *pool;
	void *hStream;
};
struct tlm_cupti_p_cuMemAllocFromPoolAsync_ptsz {
	tlm_cupti_dptr *dptr;
	size_t bytesize;
	void *pool;
	void *hStream;
};
struct tlm_cupti_p_cuMemPoolCreate { void **pool; const void *poolProps; /* const CUmemPoolProps * */ };
struct tlm_cupti_p_cuMemPoolDestroy { void *pool; };
struct tlm_cupti_p_cuMemPoolTrimTo { void *pool; size_t minBytesToKeep; };

/* ---- generated_cuda_runtime_api_meta.h: <name>_v<ver>_params, runtime API ---- */
struct tlm_cupti_p_cudaMalloc { void **devPtr; size_t size; };
struct tlm_cupti_p_cudaMallocPitch { void **devPtr; size_t *pitch; size_t width; size_t height; };
struct tlm_cupti_extent { size_t width, height, depth; };            /* struct cudaExtent */
struct tlm_cupti_p_cudaMalloc3D {
	void *pitchedDevPtr; /* struct cudaPitchedPtr * */
	struct tlm_cupti_extent extent;
};
struct tlm_cupti_p_cudaMallocManaged { void **devPtr; size_t size; unsigned int flags; };
struct tlm_cupti_p_cudaMallocHost { void **ptr; size_t size; };
struct tlm_cupti_p_cudaHostAlloc { void **pHost; size_t size; unsigned int flags; };
struct tlm_cupti_p_cudaMallocAsync { void **devPtr; size_t size; void *hStream; };
struct tlm_cupti_p_cudaMallocAsync_ptsz { void **devPtr; size_t size; void *hStream; };
struct tlm_cupti_p_cudaMallocFromPoolAsync { void **ptr; size_t size; void *memPool; void *stream; };
struct tlm_cupti_p_cudaMallocFromPoolAsync_ptsz { void **ptr; size_t size; void *memPool; void *stream; };
struct tlm_cupti_p_cudaFree { void *devPtr; };
struct tlm_cupti_p_cudaFreeHost { void *ptr; };
struct tlm_cupti_p_cudaFreeAsync { void *devPtr; void *hStream; };
struct tlm_cupti_p_cudaFreeAsync_ptsz { void *devPtr; void *hStream; };

#endif
