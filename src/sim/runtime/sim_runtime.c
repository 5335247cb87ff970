// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13 double. It reaches the driver exactly the way the real
 * runtime does, which is what an interposer has to cope with: one
 * dlopen("libcuda.so.1"), one dlsym of cuGetProcAddress_v2, and every other
 * driver entry point resolved through that (CUDA 13000, legacy-stream flavour,
 * or the per-thread flavour behind the _ptsz runtime calls). The driver is
 * never linked, so a preloaded cuMemAlloc_v2 is never called by name from
 * here. Linked -Bsymbolic with a libcudart.so.13 version node, like the real
 * library.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cupti_abi.h"
#include "sim_runtime.h"

#define RT_VERSION 13000
#define RT_MAX_DEVICES 16

typedef CUresult (*pfn_getproc)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);

/* Driver entry points, resolved once. Field types spell out the signatures
 * the runtime calls them with (as of CUDA 13000). */
static struct {
	pfn_getproc getProcAddress;
	CUresult (*init)(unsigned);
	CUresult (*driverGetVersion)(int *);
	CUresult (*deviceGetCount)(int *);
	CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*ctxSetCurrent)(CUcontext);
	CUresult (*ctxSynchronize)(CUcontext); /* cuCtxSynchronize_v2 at 13000 */
	CUresult (*memAlloc)(CUdeviceptr *, size_t);
	CUresult (*memAllocPitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
	CUresult (*memFree)(CUdeviceptr);
	CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
	CUresult (*memAllocHost)(void **, size_t);
	CUresult (*memHostAlloc)(void **, size_t, unsigned);
	CUresult (*memFreeHost)(void *);
	CUresult (*memGetInfo)(size_t *, size_t *);
	CUresult (*memAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*memAllocAsync_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*memAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*memAllocFromPoolAsync_ptsz)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*memFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*memFreeAsync_ptsz)(CUdeviceptr, CUstream);
	CUresult (*memPoolCreate)(CUmemoryPool *, const CUmemPoolProps *);
	CUresult (*memPoolDestroy)(CUmemoryPool);
	CUresult (*memPoolTrimTo)(CUmemoryPool, size_t);
	CUresult (*deviceGetDefaultMemPool)(CUmemoryPool *, CUdevice);
	CUresult (*streamCreate)(CUstream *, unsigned);
	CUresult (*streamDestroy)(CUstream);
	CUresult (*streamSynchronize)(CUstream);
} drv;

/* The driver's API observer, for runtime callbacks (tlm_sim_api_notify). */
typedef void (*pfn_notify)(int, uint32_t, int, const char *, const void *, const void *);
static _Atomic(pfn_notify) notify; /* set once by the loader, read by every call */
typedef void *(*pfn_private)(const char *, int);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cudaError_t init_error;
static int device_count;
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primary[RT_MAX_DEVICES];

static __thread int tls_device;        /* cudaSetDevice is per thread */
static __thread int tls_bound = -1;    /* device whose primary context is current here */
static __thread cudaError_t tls_error; /* for cudaGetLastError */

static bool resolve(const char *name, void *slot, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st;
	void *fn = NULL;
	if (drv.getProcAddress(name, &fn, RT_VERSION, flags, &st) != CUDA_SUCCESS ||
	    st != CU_GET_PROC_ADDRESS_SUCCESS || !fn)
		return false;
	*(void **)slot = fn;
	return true;
}

/* sim_runtime_find.c: libcuda.so.1 beside this library, when dlopen by name fails. */
void *simrt_open_beside(void) __attribute__((visibility("hidden")));

static void load_driver(void)
{
	const cuuint64_t L = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
	const cuuint64_t T = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		h = simrt_open_beside();
	if (!h || !(*(void **)&drv.getProcAddress = dlsym(h, "cuGetProcAddress_v2"))) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
	bool ok = resolve("cuInit", &drv.init, L) &&
		  resolve("cuDriverGetVersion", &drv.driverGetVersion, L) &&
		  resolve("cuDeviceGetCount", &drv.deviceGetCount, L) &&
		  resolve("cuDevicePrimaryCtxRetain", &drv.primaryCtxRetain, L) &&
		  resolve("cuCtxSetCurrent", &drv.ctxSetCurrent, L) &&
		  resolve("cuCtxSynchronize", &drv.ctxSynchronize, L) &&
		  resolve("cuMemAlloc", &drv.memAlloc, L) &&
		  resolve("cuMemAllocPitch", &drv.memAllocPitch, L) &&
		  resolve("cuMemFree", &drv.memFree, L) &&
		  resolve("cuMemAllocManaged", &drv.memAllocManaged, L) &&
		  resolve("cuMemAllocHost", &drv.memAllocHost, L) &&
		  resolve("cuMemHostAlloc", &drv.memHostAlloc, L) &&
		  resolve("cuMemFreeHost", &drv.memFreeHost, L) &&
		  resolve("cuMemGetInfo", &drv.memGetInfo, L) &&
		  resolve("cuMemAllocAsync", &drv.memAllocAsync, L) &&
		  resolve("cuMemAllocAsync", &drv.memAllocAsync_ptsz, T) &&
		  resolve("cuMemAllocFromPoolAsync", &drv.memAllocFromPoolAsync, L) &&
		  resolve("cuMemAllocFromPoolAsync", &drv.memAllocFromPoolAsync_ptsz, T) &&
		  resolve("cuMemFreeAsync", &drv.memFreeAsync, L) &&
		  resolve("cuMemFreeAsync", &drv.memFreeAsync_ptsz, T) &&
		  resolve("cuMemPoolCreate", &drv.memPoolCreate, L) &&
		  resolve("cuMemPoolDestroy", &drv.memPoolDestroy, L) &&
		  resolve("cuMemPoolTrimTo", &drv.memPoolTrimTo, L) &&
		  resolve("cuDeviceGetDefaultMemPool", &drv.deviceGetDefaultMemPool, L) &&
		  resolve("cuStreamCreate", &drv.streamCreate, L) &&
		  resolve("cuStreamDestroy", &drv.streamDestroy, L) &&
		  resolve("cuStreamSynchronize", &drv.streamSynchronize, L);
	if (!ok) {
		init_error = cudaErrorInsufficientDriver;
		return;
	}
	atomic_store(&notify, (pfn_notify)dlsym(h, "tlm_sim_api_notify"));
	/* TLM_SIM_RUNTIME_PRIVATE=1: the memory calls go through the driver's
	 * private entry points, skipping its API layer (no driver callbacks),
	 * as a runtime using a private export table would. */
	const char *priv = getenv("TLM_SIM_RUNTIME_PRIVATE");
	pfn_private pe;
	if (priv && !strcmp(priv, "1") && (*(void **)&pe = dlsym(h, "tlm_sim_private_entry"))) {
#define PRIV(slot, name) *(void **)&drv.slot = pe(name, 1)
		PRIV(memAlloc, "cuMemAlloc_v2");
		PRIV(memAllocPitch, "cuMemAllocPitch_v2");
		PRIV(memFree, "cuMemFree_v2");
		PRIV(memAllocManaged, "cuMemAllocManaged");
		PRIV(memAllocHost, "cuMemAllocHost_v2");
		PRIV(memHostAlloc, "cuMemHostAlloc");
		PRIV(memFreeHost, "cuMemFreeHost");
		PRIV(memAllocAsync, "cuMemAllocAsync");
		PRIV(memAllocAsync_ptsz, "cuMemAllocAsync_ptsz");
		PRIV(memAllocFromPoolAsync, "cuMemAllocFromPoolAsync");
		PRIV(memAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync_ptsz");
		PRIV(memFreeAsync, "cuMemFreeAsync");
		PRIV(memFreeAsync_ptsz, "cuMemFreeAsync_ptsz");
#undef PRIV
	}
	if (drv.init(0) != CUDA_SUCCESS || drv.deviceGetCount(&device_count) != CUDA_SUCCESS) {
		init_error = cudaErrorInitializationError;
		return;
	}
	if (device_count > RT_MAX_DEVICES)
		device_count = RT_MAX_DEVICES;
	if (device_count == 0)
		init_error = cudaErrorNoDevice;
}

/* Record a failure for cudaGetLastError and hand it back. */
static cudaError_t ret(cudaError_t e)
{
	if (e != cudaSuccess)
		tls_error = e;
	return e;
}

/* Driver and runtime codes share numbers for everything the double returns. */
static cudaError_t map(CUresult r)
{
	return ret((cudaError_t)r);
}

static cudaError_t driver_ready(void)
{
	pthread_once(&init_once, load_driver);
	return init_error;
}

/* Make the primary context of this thread's device current (retained once per
 * process and device, like the real runtime). */
static cudaError_t bind(int dev)
{
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&primary_lock);
	if (!primary[dev])
		r = drv.primaryCtxRetain(&primary[dev], dev);
	pthread_mutex_unlock(&primary_lock);
	if (r == CUDA_SUCCESS)
		r = drv.ctxSetCurrent(primary[dev]);
	if (r != CUDA_SUCCESS)
		return (cudaError_t)r;
	tls_bound = dev;
	return cudaSuccess;
}

/* Lazy initialisation at the top of every call that needs a context. */
static cudaError_t enter(void)
{
	cudaError_t e = driver_ready();
	if (e == cudaSuccess && tls_bound != tls_device)
		e = bind(tls_device);
	return e;
}

#define ENTER()                                                                                    \
	do {                                                                                       \
		cudaError_t e_ = enter();                                                          \
		if (e_ != cudaSuccess)                                                             \
			return ret(e_);                                                            \
	} while (0)

/* A runtime memory call as CUPTI's runtime domain sees it: the implementation
 * rti_NAME between an ENTER and an EXIT notification, the parameters laid out
 * as CUPTI's NAME_v<ver>_params. */
#define RT_API(name, proto, args, ...)                                                             \
	cudaError_t name proto                                                                     \
	{                                                                                          \
		(void)driver_ready(); /* the observer is known once the driver is */               \
		pfn_notify n_ = atomic_load(&notify);                                              \
		struct tlm_cupti_p_##name p_ = __VA_ARGS__;                                        \
		if (n_)                                                                            \
			n_(TLM_CUPTI_CB_DOMAIN_RUNTIME_API, TLM_CUPTI_RT_##name, TLM_CUPTI_API_ENTER, \
			   #name, &p_, NULL);                                                      \
		cudaError_t r_ = rti_##name args;                                                  \
		if (n_)                                                                            \
			n_(TLM_CUPTI_CB_DOMAIN_RUNTIME_API, TLM_CUPTI_RT_##name, TLM_CUPTI_API_EXIT,  \
			   #name, &p_, &r_);                                                       \
		return r_;                                                                         \
	}

static void *ptr_of(CUdeviceptr d)
{
	return (void *)(uintptr_t)d;
}

static CUdeviceptr dptr_of(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

static cudaError_t rti_cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr d;
	CUresult r;
	ENTER();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (size == 0) { /* the real runtime answers a zero-byte request with NULL */
		*devPtr = NULL;
		return cudaSuccess;
	}
	r = drv.memAlloc(&d, size);
	if (r == CUDA_SUCCESS)
		*devPtr = ptr_of(d);
	return map(r);
}
RT_API(cudaMalloc, (void **devPtr, size_t size),
       (devPtr, size), {devPtr, size})

static cudaError_t rti_cudaMallocPitch(void **devPtr, size_t *pitch, size_t width, size_t height)
{
	CUdeviceptr d;
	CUresult r;
	ENTER();
	if (!devPtr || !pitch)
		return ret(cudaErrorInvalidValue);
	r = drv.memAllocPitch(&d, pitch, width, height, 16);
	if (r == CUDA_SUCCESS)
		*devPtr = ptr_of(d);
	return map(r);
}
RT_API(cudaMallocPitch, (void **devPtr, size_t *pitch, size_t width, size_t height),
       (devPtr, pitch, width, height), {devPtr, pitch, width, height})

static cudaError_t rti_cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent)
{
	CUdeviceptr d;
	size_t pitch;
	CUresult r;
	ENTER();
	if (!pitchedDevPtr || (extent.depth && extent.height > SIZE_MAX / extent.depth))
		return ret(cudaErrorInvalidValue);
	/* height*depth rows of one pitch each */
	r = drv.memAllocPitch(&d, &pitch, extent.width, extent.height * extent.depth, 16);
	if (r == CUDA_SUCCESS) {
		pitchedDevPtr->ptr = ptr_of(d);
		pitchedDevPtr->pitch = pitch;
		pitchedDevPtr->xsize = extent.width;
		pitchedDevPtr->ysize = extent.height;
	}
	return map(r);
}
RT_API(cudaMalloc3D, (struct cudaPitchedPtr *pitchedDevPtr, struct cudaExtent extent),
       (pitchedDevPtr, extent), {pitchedDevPtr, {extent.width, extent.height, extent.depth}})

static cudaError_t rti_cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr d;
	CUresult r;
	ENTER();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	r = drv.memAllocManaged(&d, size, flags);
	if (r == CUDA_SUCCESS)
		*devPtr = ptr_of(d);
	return map(r);
}
RT_API(cudaMallocManaged, (void **devPtr, size_t size, unsigned int flags),
       (devPtr, size, flags), {devPtr, size, flags})

static cudaError_t rti_cudaMallocHost(void **ptr, size_t size)
{
	ENTER();
	return map(drv.memAllocHost(ptr, size));
}
RT_API(cudaMallocHost, (void **ptr, size_t size),
       (ptr, size), {ptr, size})

static cudaError_t rti_cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	ENTER();
	return map(drv.memHostAlloc(pHost, size, flags));
}
RT_API(cudaHostAlloc, (void **pHost, size_t size, unsigned int flags),
       (pHost, size, flags), {pHost, size, flags})

static cudaError_t malloc_async(void **devPtr, size_t size, cudaMemPool_t pool, cudaStream_t s,
				bool ptsz)
{
	CUdeviceptr d;
	CUresult r;
	ENTER();
	if (!devPtr)
		return ret(cudaErrorInvalidValue);
	if (pool)
		r = (ptsz ? drv.memAllocFromPoolAsync_ptsz : drv.memAllocFromPoolAsync)(&d, size,
											  pool, s);
	else
		r = (ptsz ? drv.memAllocAsync_ptsz : drv.memAllocAsync)(&d, size, s);
	if (r == CUDA_SUCCESS)
		*devPtr = ptr_of(d);
	return map(r);
}

static cudaError_t rti_cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(devPtr, size, NULL, hStream, false);
}
RT_API(cudaMallocAsync, (void **devPtr, size_t size, cudaStream_t hStream),
       (devPtr, size, hStream), {devPtr, size, hStream})

static cudaError_t rti_cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream)
{
	return malloc_async(devPtr, size, NULL, hStream, true);
}
RT_API(cudaMallocAsync_ptsz, (void **devPtr, size_t size, cudaStream_t hStream),
       (devPtr, size, hStream), {devPtr, size, hStream})

static cudaError_t rti_cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool,
				    cudaStream_t stream)
{
	if (!memPool)
		return ret(cudaErrorInvalidValue);
	return malloc_async(ptr, size, memPool, stream, false);
}
RT_API(cudaMallocFromPoolAsync, (void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream),
       (ptr, size, memPool, stream), {ptr, size, memPool, stream})

static cudaError_t rti_cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
					 cudaStream_t stream)
{
	if (!memPool)
		return ret(cudaErrorInvalidValue);
	return malloc_async(ptr, size, memPool, stream, true);
}
RT_API(cudaMallocFromPoolAsync_ptsz, (void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream),
       (ptr, size, memPool, stream), {ptr, size, memPool, stream})

static cudaError_t rti_cudaFree(void *devPtr)
{
	ENTER(); /* cudaFree(NULL) is the classic "initialise now" idiom */
	if (!devPtr)
		return cudaSuccess;
	return map(drv.memFree(dptr_of(devPtr)));
}
RT_API(cudaFree, (void *devPtr),
       (devPtr), {devPtr})

static cudaError_t rti_cudaFreeHost(void *ptr)
{
	ENTER();
	if (!ptr)
		return cudaSuccess;
	return map(drv.memFreeHost(ptr));
}
RT_API(cudaFreeHost, (void *ptr),
       (ptr), {ptr})

static cudaError_t rti_cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	ENTER();
	return map(drv.memFreeAsync(dptr_of(devPtr), hStream));
}
RT_API(cudaFreeAsync, (void *devPtr, cudaStream_t hStream),
       (devPtr, hStream), {devPtr, hStream})

static cudaError_t rti_cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
	ENTER();
	return map(drv.memFreeAsync_ptsz(dptr_of(devPtr), hStream));
}
RT_API(cudaFreeAsync_ptsz, (void *devPtr, cudaStream_t hStream),
       (devPtr, hStream), {devPtr, hStream})

cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const void *poolProps)
{
	ENTER();
	return map(drv.memPoolCreate(memPool, (const CUmemPoolProps *)poolProps));
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
	ENTER();
	return map(drv.memPoolDestroy(memPool));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
	ENTER();
	return map(drv.memPoolTrimTo(memPool, minBytesToKeep));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	ENTER();
	return map(drv.deviceGetDefaultMemPool(memPool, device));
}

cudaError_t cudaSetDevice(int device)
{
	cudaError_t e = driver_ready();
	if (e != cudaSuccess)
		return ret(e);
	if (device < 0 || device >= device_count)
		return ret(cudaErrorInvalidDevice);
	tls_device = device;
	return ret(bind(device)); /* since CUDA 12 cudaSetDevice initialises the context */
}

cudaError_t cudaGetDevice(int *device)
{
	cudaError_t e = driver_ready();
	if (e != cudaSuccess)
		return ret(e);
	if (!device)
		return ret(cudaErrorInvalidValue);
	*device = tls_device;
	return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
	cudaError_t e = driver_ready();
	if (!count)
		return ret(cudaErrorInvalidValue);
	if (e != cudaSuccess) {
		*count = 0;
		return ret(e);
	}
	*count = device_count;
	return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	ENTER();
	return map(drv.memGetInfo(free, total));
}

cudaError_t cudaDeviceSynchronize(void)
{
	ENTER();
	return map(drv.ctxSynchronize(NULL));
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	ENTER();
	return map(drv.streamCreate(pStream, 0));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	ENTER();
	return map(drv.streamDestroy(stream));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	ENTER();
	return map(drv.streamSynchronize(stream));
}

cudaError_t cudaGetLastError(void)
{
	cudaError_t e = tls_error;
	tls_error = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return tls_error;
}

/* cudaGetErrorString and cudaGetErrorName: sim_runtime_errors.c */

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return ret(cudaErrorInvalidValue);
	*runtimeVersion = RT_VERSION;
	return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	cudaError_t e = driver_ready();
	if (!driverVersion)
		return ret(cudaErrorInvalidValue);
	if (e != cudaSuccess) {
		*driverVersion = 0; /* the real runtime reports 0 without a driver */
		return cudaSuccess;
	}
	return map(drv.driverGetVersion(driverVersion));
}

/* Forward to the driver's cuGetProcAddress_v2; a per-thread build turns the
 * default flag into the per-thread flavour. */
static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned cudaVersion,
			       unsigned long long flags,
			       enum cudaDriverEntryPointQueryResult *driverStatus, bool ptsz)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult r;
	cudaError_t e = driver_ready();
	if (e != cudaSuccess)
		return ret(e);
	if (!symbol || !funcPtr)
		return ret(cudaErrorInvalidValue);
	if (ptsz && flags == cudaEnableDefault)
		flags = cudaEnablePerThreadDefaultStream;
	r = drv.getProcAddress(symbol, funcPtr, (int)cudaVersion, flags, &st);
	if (driverStatus)
		*driverStatus = (enum cudaDriverEntryPointQueryResult)st;
	/* A symbol that is not found (or too new) is reported through
	 * driverStatus and a NULL *funcPtr; the call itself succeeds, as the
	 * runtime documents. */
	if (r == CUDA_ERROR_NOT_FOUND)
		return cudaSuccess;
	return map(r);
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, RT_VERSION, flags, driverStatus, false);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
					 unsigned long long flags,
					 enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, RT_VERSION, flags, driverStatus, true);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, false);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
						  unsigned int cudaVersion,
						  unsigned long long flags,
						  enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus, true);
}
