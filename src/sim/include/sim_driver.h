/* SPDX-License-Identifier: MIT */
/*
 * sim_driver.h - the driver entry points the simulated libcuda.so.1 exports.
 *
 * Contract: every prototype matches the CUDA 13 cuda.h declaration of the same
 * exported symbol (the ABI name, e.g. cuMemAlloc_v2, not the macro name). Test
 * programs include this to call the simulated driver directly; the simulator
 * includes it so the compiler checks its definitions against these prototypes.
 * The tlm_sim_* functions are the simulator's only non-CUDA exports: read-only
 * introspection for tests.
 */
#ifndef TLM_SIM_DRIVER_H
#define TLM_SIM_DRIVER_H

#include "common/cuda_abi.h"
#include "sim_cuda_extra.h"

#define SIM_PUBLIC __attribute__((visibility("default")))

SIM_PUBLIC CUresult cuInit(unsigned int flags);
SIM_PUBLIC CUresult cuDriverGetVersion(int *driverVersion);
SIM_PUBLIC CUresult cuGetErrorName(CUresult error, const char **pStr);
SIM_PUBLIC CUresult cuGetErrorString(CUresult error, const char **pStr);
SIM_PUBLIC CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags);
SIM_PUBLIC CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
					cuuint64_t flags,
					CUdriverProcAddressQueryResult *symbolStatus);

SIM_PUBLIC CUresult cuDeviceGet(CUdevice *device, int ordinal);
SIM_PUBLIC CUresult cuDeviceGetCount(int *count);
SIM_PUBLIC CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
SIM_PUBLIC CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
SIM_PUBLIC CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
SIM_PUBLIC CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);

SIM_PUBLIC CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
SIM_PUBLIC CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
				   unsigned int flags, CUdevice dev);
SIM_PUBLIC CUresult cuCtxDestroy_v2(CUcontext ctx);
SIM_PUBLIC CUresult cuCtxSetCurrent(CUcontext ctx);
SIM_PUBLIC CUresult cuCtxGetCurrent(CUcontext *pctx);
SIM_PUBLIC CUresult cuCtxPushCurrent_v2(CUcontext ctx);
SIM_PUBLIC CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
SIM_PUBLIC CUresult cuCtxGetDevice(CUdevice *device);
SIM_PUBLIC CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
SIM_PUBLIC CUresult cuCtxSynchronize(void);
SIM_PUBLIC CUresult cuCtxSynchronize_v2(CUcontext ctx);

SIM_PUBLIC CUresult cuStreamCreate(CUstream *phStream, unsigned int flags);
SIM_PUBLIC CUresult cuStreamDestroy_v2(CUstream hStream);
SIM_PUBLIC CUresult cuStreamSynchronize(CUstream hStream);
SIM_PUBLIC CUresult cuStreamSynchronize_ptsz(CUstream hStream);

SIM_PUBLIC CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
SIM_PUBLIC CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
SIM_PUBLIC CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				       size_t Height, unsigned int ElementSizeBytes);
SIM_PUBLIC CUresult cuMemFree_v2(CUdeviceptr dptr);
SIM_PUBLIC CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
SIM_PUBLIC CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
SIM_PUBLIC CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
SIM_PUBLIC CUresult cuMemFreeHost(void *p);

SIM_PUBLIC CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
SIM_PUBLIC CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
SIM_PUBLIC CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
					    CUstream hStream);
SIM_PUBLIC CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
						 CUmemoryPool pool, CUstream hStream);
SIM_PUBLIC CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
SIM_PUBLIC CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
SIM_PUBLIC CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
SIM_PUBLIC CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
SIM_PUBLIC CUresult cuMemPoolDestroy(CUmemoryPool pool);
SIM_PUBLIC CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);

SIM_PUBLIC CUresult cuMemGetAllocationGranularity(size_t *granularity,
						  const CUmemAllocationProp *prop, int option);
SIM_PUBLIC CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				const CUmemAllocationProp *prop, unsigned long long flags);
SIM_PUBLIC CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
SIM_PUBLIC CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
					CUdeviceptr addr, unsigned long long flags);
SIM_PUBLIC CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
SIM_PUBLIC CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			     CUmemGenericAllocationHandle handle, unsigned long long flags);
SIM_PUBLIC CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
SIM_PUBLIC CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
				   size_t count);
SIM_PUBLIC CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);
SIM_PUBLIC CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							   CUmemGenericAllocationHandle handle);
SIM_PUBLIC CUresult cuMemExportToShareableHandle(void *shareableHandle,
						 CUmemGenericAllocationHandle handle, int handleType,
						 unsigned long long flags);
SIM_PUBLIC CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
						   void *osHandle, int shHandleType);

SIM_PUBLIC CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
SIM_PUBLIC CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
					  unsigned int Flags);
SIM_PUBLIC CUresult cuIpcCloseMemHandle(CUdeviceptr dptr);

/* ---- simulator introspection (not CUDA; for tests) ---- */

/* Physical 2 MiB pages in use on `dev` (live allocations, pool caches, VMM
 * handles), or -1 for a bad device or before cuInit. Needs no context. */
SIM_PUBLIC long long tlm_sim_used_pages(int dev);
/* Bytes a pool holds cached (freed but not yet returned), or -1 for a bad pool. */
SIM_PUBLIC long long tlm_sim_pool_cached_bytes(CUmemoryPool pool);

/* ---- the machine, for the NVML stand-in (src/sim/nvml/sim_nvml.c) ---- */

/* These need no cuInit (NVML does not start CUDA): they attach the machine
 * (TLM_SIM_MACHINE, or this process's private devices). */
SIM_PUBLIC int tlm_sim_machine_devices(void);
/* dev's total bytes and the bytes every process uses on it (contexts
 * included); -1 for a bad device. */
SIM_PUBLIC int tlm_sim_machine_memory(int dev, unsigned long long *total, unsigned long long *used);
/* The processes using dev (holding memory or a live context), by pid: at
 * most max into pids[] and bytes[]; returns how many there are (-1: bad dev). */
SIM_PUBLIC int tlm_sim_machine_processes(int dev, unsigned *pids, unsigned long long *bytes, int max);
/* dev's UUID (cuDeviceGetUuid's bytes) and PCI bus (cuDeviceGetPCIBusId's
 * "00000000:BB:00.0"); -1 for a bad device. */
SIM_PUBLIC int tlm_sim_device_ids(int dev, unsigned char uuid[16], int *pci_bus);
/* One context's cost in bytes (TLM_SIM_CONTEXT_MEMORY, or the machine's). */
SIM_PUBLIC unsigned long long tlm_sim_context_bytes(void);

/* ---- the API layer, for the CUPTI double (src/sim/cupti/sim_cupti.c) ---- */

/* Called at the entry (site TLM_CUPTI_API_ENTER, result NULL) and the exit
 * (TLM_CUPTI_API_EXIT, result -> the CUresult / cudaError_t) of every memory
 * entry point, with the CUPTI domain and callback id and a pointer to the
 * parameters laid out as CUPTI's <name>_params (src/common/cupti_abi.h).
 * Only the calls listed in docs/simulated-device.md notify. */
typedef void (*tlm_sim_api_observer)(void *user, int domain, uint32_t cbid, int site, const char *name,
				     const void *params, const void *result);
/* One observer at a time; NULL removes it. */
SIM_PUBLIC void tlm_sim_set_api_observer(tlm_sim_api_observer fn, void *user);
/* For the runtime double: deliver a RUNTIME_API notification to the observer. */
SIM_PUBLIC void tlm_sim_api_notify(int domain, uint32_t cbid, int site, const char *name, const void *params,
				   const void *result);
/* A memory entry point by ABI name ("cuMemAlloc_v2"), handed out the way a
 * private export table would: no symbol lookup, no cuGetProcAddress, so no
 * interposer sees it. internal = 0: the API function (it notifies the
 * observer, as the real driver's API layer issues CUPTI callbacks);
 * internal = 1: the implementation behind it (no notification). NULL for a
 * name that is not a memory entry point. */
SIM_PUBLIC void *tlm_sim_private_entry(const char *name, int internal);

#endif
