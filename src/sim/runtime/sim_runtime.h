/* SPDX-License-Identifier: MIT */
/*
 * sim_runtime.h - the runtime entry points the libcudart.so.13 double exports.
 *
 * Contract: prototypes match CUDA 13's cuda_runtime_api.h for the exported
 * ABI names (cudaMallocAsync_ptsz etc. included). Test programs link the
 * double and include this header; the double includes it so its definitions
 * are checked against these prototypes.
 */
#ifndef TLM_SIM_RUNTIME_H
#define TLM_SIM_RUNTIME_H

#include "common/cuda_abi.h"
#include "sim_cuda_extra.h"

#define SIMRT_PUBLIC __attribute__((visibility("default")))

SIMRT_PUBLIC cudaError_t cudaMalloc(void **devPtr, size_t size);
SIMRT_PUBLIC cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height);
SIMRT_PUBLIC cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent);
SIMRT_PUBLIC cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
SIMRT_PUBLIC cudaError_t cudaMallocHost(void **ptr, size_t size);
SIMRT_PUBLIC cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags);
SIMRT_PUBLIC cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream);
SIMRT_PUBLIC cudaError_t cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
SIMRT_PUBLIC cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
						 cudaStream_t stream);
SIMRT_PUBLIC cudaError_t cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
						      cudaMemPool_t memPool, cudaStream_t stream);
SIMRT_PUBLIC cudaError_t cudaFree(void *devPtr);
SIMRT_PUBLIC cudaError_t cudaFreeHost(void *ptr);
SIMRT_PUBLIC cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream);
SIMRT_PUBLIC cudaError_t cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
/* props has the layout of CUmemPoolProps (struct cudaMemPoolProps). */
SIMRT_PUBLIC cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const void *poolProps);
SIMRT_PUBLIC cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool);
SIMRT_PUBLIC cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep);
SIMRT_PUBLIC cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device);
SIMRT_PUBLIC cudaError_t cudaSetDevice(int device);
SIMRT_PUBLIC cudaError_t cudaGetDevice(int *device);
SIMRT_PUBLIC cudaError_t cudaGetDeviceCount(int *count);
SIMRT_PUBLIC cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
SIMRT_PUBLIC cudaError_t cudaDeviceSynchronize(void);
SIMRT_PUBLIC cudaError_t cudaStreamCreate(cudaStream_t *pStream);
SIMRT_PUBLIC cudaError_t cudaStreamDestroy(cudaStream_t stream);
SIMRT_PUBLIC cudaError_t cudaStreamSynchronize(cudaStream_t stream);
SIMRT_PUBLIC cudaError_t cudaGetLastError(void);
SIMRT_PUBLIC cudaError_t cudaPeekAtLastError(void);
SIMRT_PUBLIC const char *cudaGetErrorString(cudaError_t error);
SIMRT_PUBLIC const char *cudaGetErrorName(cudaError_t error);
SIMRT_PUBLIC cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);
SIMRT_PUBLIC cudaError_t cudaDriverGetVersion(int *driverVersion);
SIMRT_PUBLIC cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
						 unsigned long long flags,
						 enum cudaDriverEntryPointQueryResult *driverStatus);
SIMRT_PUBLIC cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
						      unsigned long long flags,
						      enum cudaDriverEntryPointQueryResult *driverStatus);
SIMRT_PUBLIC cudaError_t cudaGetDriverEntryPointByVersion(
	const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus);
SIMRT_PUBLIC cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
	const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
	enum cudaDriverEntryPointQueryResult *driverStatus);

#endif
