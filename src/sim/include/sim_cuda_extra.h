/* SPDX-License-Identifier: MIT */
/*
 * sim_cuda_extra.h - CUDA 13 ABI constants the simulator needs beyond
 * common/cuda_abi.h.
 *
 * Contract: values are identical to CUDA 13's cuda.h / driver_types.h. Kept
 * here (not in the shared header) so the simulator never edits a file other
 * modules own; every macro is guarded so a later copy in cuda_abi.h wins
 * silently as long as the values agree.
 */
#ifndef TLM_SIM_CUDA_EXTRA_H
#define TLM_SIM_CUDA_EXTRA_H

#include "common/cuda_abi.h"

/* Only ever passed by pointer here, so an incomplete type is ABI compatible. */
typedef struct CUctxCreateParams_st CUctxCreateParams;
/* cuda.h's CUuuid (16 bytes). */
typedef struct CUuuid_sim_st {
	unsigned char bytes[16];
} CUuuid_sim;
#ifndef CU_MEM_LOCATION_TYPE_HOST
#define CU_MEM_LOCATION_TYPE_HOST 0x2
#endif
#ifndef CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT
#define CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT 0x4
#endif
#ifndef CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 0x1
#endif
#ifndef CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
#define CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#endif
/* cuda.h's CUipcMemHandle (64 opaque bytes, passed by value). */
typedef struct CUipcMemHandle_st {
	char reserved[64];
} CUipcMemHandle;

#ifndef CUDA_ERROR_STUB_LIBRARY
#define CUDA_ERROR_STUB_LIBRARY 34
#endif
#ifndef CUDA_ERROR_NOT_READY
#define CUDA_ERROR_NOT_READY 600
#endif
#ifndef CUDA_ERROR_CONTEXT_IS_DESTROYED
#define CUDA_ERROR_CONTEXT_IS_DESTROYED 709
#endif
#ifndef CUDA_ERROR_UNKNOWN
#define CUDA_ERROR_UNKNOWN 999
#endif
#ifndef CU_STREAM_NON_BLOCKING
#define CU_STREAM_NON_BLOCKING 0x1
#endif
#ifndef CU_MEM_ACCESS_FLAGS_PROT_NONE
#define CU_MEM_ACCESS_FLAGS_PROT_NONE 0x0
#endif
#ifndef CU_MEM_ACCESS_FLAGS_PROT_READ
#define CU_MEM_ACCESS_FLAGS_PROT_READ 0x1
#endif

#ifndef cudaErrorInsufficientDriver
#define cudaErrorInsufficientDriver 35
#endif
#ifndef cudaErrorNoDevice
#define cudaErrorNoDevice 100
#endif
#ifndef cudaErrorInvalidResourceHandle
#define cudaErrorInvalidResourceHandle 400
#endif
#ifndef cudaMemAttachGlobal
#define cudaMemAttachGlobal 0x01
#endif
#ifndef cudaHostAllocDefault
#define cudaHostAllocDefault 0x00
#endif

/* cuda.h's CUDA_MEMCPY2D and CUDA_MEMCPY3D, field for field (the copy
 * entry points take them; tests build them). */
struct memcpy2d {
	size_t srcX, srcY;
	int srcType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstX, dstY;
	int dstType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t width, height;
};

struct memcpy3d {
	size_t srcX, srcY, srcZ, srcLOD;
	int srcType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray, *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstX, dstY, dstZ, dstLOD;
	int dstType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray, *reserved1;
	size_t dstPitch, dstHeight;
	size_t width, height, depth;
};

#endif
