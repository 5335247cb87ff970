/* SPDX-License-Identifier: MIT */
/*
 * workload_cupti.c - calls that bypass every entry point libtlm interposes,
 * next to calls it does see, for the CUPTI tests (test_cupti.c):
 *   - driver memory calls through tlm_sim_private_entry(name, 0), the way a
 *     private export table reaches the driver's API layer: only CUPTI's
 *     driver callbacks see them;
 *   - runtime calls through dlvsym (tlm overrides dlsym, not dlvsym): the
 *     runtime then reaches the driver through wrapped pointers, so the driver
 *     wrapper records them, and CUPTI must not record them again;
 *   - with TLM_SIM_RUNTIME_PRIVATE=1 the runtime reaches the driver's
 *     internals (no driver callback either): only CUPTI's runtime callbacks
 *     see those calls.
 * Events only CUPTI can see are written to the truth file only when
 * TLM_TEST_CUPTI_SEES=1 (the test says whether CUPTI is attached).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "src/sim/include/sim_driver.h"
#include "workload.h"

#define MiB (1024ull * 1024ull)
#define C TLM_EVF_CUPTI

static int sees;

/* expect an event that only CUPTI can report */
#define CUPTI_ONLY(...)                                                                            \
	do {                                                                                       \
		if (sees)                                                                          \
			wl_expect(__VA_ARGS__);                                                    \
	} while (0)

static void *priv(const char *name)
{
	void *p = tlm_sim_private_entry(name, 0);
	wl_check(p != NULL, name);
	return p;
}

static void *rt(const char *name)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
	wl_check(h != NULL, "libcudart loaded");
	void *p = dlvsym(h, name, "libcudart.so.13");
	wl_check(p != NULL, name);
	return p;
}

/* Private driver entry points next to wrapped ones. */
static void bypass_driver(void)
{
	CUresult (*alloc)(CUdeviceptr *, size_t) = priv("cuMemAlloc_v2");
	CUresult (*dfree)(CUdeviceptr) = priv("cuMemFree_v2");
	CUresult (*pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned) = priv("cuMemAllocPitch_v2");
	CUresult (*managed)(CUdeviceptr *, size_t, unsigned) = priv("cuMemAllocManaged");
	CUresult (*host)(void **, size_t, unsigned) = priv("cuMemHostAlloc");
	CUresult (*free_host)(void *) = priv("cuMemFreeHost");
	CUresult (*async_ptsz)(CUdeviceptr *, size_t, CUstream) = priv("cuMemAllocAsync_ptsz");
	CUresult (*pool_alloc)(CUdeviceptr *, size_t, CUmemoryPool, CUstream) = priv("cuMemAllocFromPoolAsync");
	CUresult (*free_async)(CUdeviceptr, CUstream) = priv("cuMemFreeAsync");
	CUresult (*pool_create)(CUmemoryPool *, const CUmemPoolProps *) = priv("cuMemPoolCreate");
	CUresult (*pool_trim)(CUmemoryPool, size_t) = priv("cuMemPoolTrimTo");
	CUresult (*pool_destroy)(CUmemoryPool) = priv("cuMemPoolDestroy");
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long) =
		priv("cuMemCreate");
	CUresult (*release)(CUmemGenericAllocationHandle) = priv("cuMemRelease");
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) =
		priv("cuMemAddressReserve");
	CUresult (*afree)(CUdeviceptr, size_t) = priv("cuMemAddressFree");
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long) =
		priv("cuMemMap");
	CUresult (*unmap)(CUdeviceptr, size_t) = priv("cuMemUnmap");

	CUdeviceptr a, b, p, m, s1, s2, va;
	size_t pp;
	void *h;
	CUstream s;
	wl_check(cuStreamCreate(&s, 0) == 0, "stream");

	wl_check(cuMemAlloc_v2(&a, 1111) == 0, "wrapped alloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, a, 1111, 0, 0, 0, 0, 0);
	wl_check(alloc(&b, 2222) == 0, "private alloc");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, b, 2222, 0, 0, 0, 0, C);
	wl_check(pitch(&p, &pp, 1000, 3, 4) == 0, "private pitch");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocPitch_v2, p, pp * 3, 0, 0, 0, 0, C);
	wl_check(managed(&m, 4096, CU_MEM_ATTACH_GLOBAL) == 0, "private managed");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_MANAGED, TLM_API_cuMemAllocManaged, m, 4096, 0, 0, 0, 0, C);
	wl_check(host(&h, 5000, 0) == 0, "private host");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cuMemHostAlloc, WL_U(h), 5000, 0, -1, 0, 0, C);
	wl_check(async_ptsz(&s1, 3000, NULL) == 0, "private async ptsz");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocAsync_ptsz, s1, 3000, 0, 0, 0, 0,
		   C | TLM_EVF_PTSZ);

	CUmemPoolProps props;
	memset(&props, 0, sizeof props);
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 0;
	CUmemoryPool pool;
	wl_check(pool_create(&pool, &props) == 0, "private pool");
	CUPTI_ONLY(TLM_OP_POOL_CREATE, TLM_KIND_POOL, TLM_API_cuMemPoolCreate, WL_U(pool), 0, 0, 0, 0, 0, C);
	wl_check(pool_alloc(&s2, 7000, pool, s) == 0, "private pool alloc");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocFromPoolAsync, s2, 7000, 0, 0, WL_U(s), WL_U(pool), C);
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync, s2, 0, 0, 0, WL_U(s), 0, C);
	wl_check(free_async(s2, s) == 0, "private free async");
	wl_check(pool_trim(pool, 0) == 0, "private trim");
	CUPTI_ONLY(TLM_OP_POOL_TRIM, TLM_KIND_POOL, TLM_API_cuMemPoolTrimTo, WL_U(pool), 0, 0, -1, 0, 0, C);
	CUPTI_ONLY(TLM_OP_POOL_DESTROY, TLM_KIND_POOL, TLM_API_cuMemPoolDestroy, WL_U(pool), 0, 0, 0, 0, 0, C);
	wl_check(pool_destroy(pool) == 0, "private pool destroy");

	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 1;
	CUmemGenericAllocationHandle ph;
	wl_check(create(&ph, 4 * MiB, &prop, 0) == 0, "private create");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemCreate, ph, 4 * MiB, 0, 1, 0, 0, C);
	wl_check(reserve(&va, 8 * MiB, 0, 0, 0) == 0, "private reserve");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_VMM_RESERVE, TLM_API_cuMemAddressReserve, va, 8 * MiB, 0, -1, 0, 0, C);
	wl_check(map(va, 2 * MiB, 2 * MiB, ph, 0) == 0, "private map");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_VMM_MAPPING, TLM_API_cuMemMap, va, 2 * MiB, 0, -1, 2 * MiB, ph, C);
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_VMM_MAPPING, TLM_API_cuMemUnmap, va, 2 * MiB, 0, -1, 0, 0, C);
	wl_check(unmap(va, 2 * MiB) == 0, "private unmap");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_VMM_RESERVE, TLM_API_cuMemAddressFree, va, 8 * MiB, 0, -1, 0, 0, C);
	wl_check(afree(va, 8 * MiB) == 0, "private address free");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemRelease, ph, 0, 0, 1, 0, 0, C); /* the handle's device */
	wl_check(release(ph) == 0, "private release");

	/* a failure only CUPTI saw: the result and the free memory at that moment */
	size_t fr, tot;
	wl_check(cuMemGetInfo_v2(&fr, &tot) == 0, "meminfo");
	CUdeviceptr x = 0;
	wl_check(alloc(&x, tot * 4) == CUDA_ERROR_OUT_OF_MEMORY, "private oom");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, 0, tot * 4, CUDA_ERROR_OUT_OF_MEMORY, 0, 0, 0,
		   C);
	if (sees)
		wl_note("oom_free %zu", fr);

	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cuMemFreeHost, WL_U(h), 0, 0, -1, 0, 0, C);
	wl_check(free_host(h) == 0, "private free host");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, b, 0, 0, 0, 0, 0, C);
	wl_check(dfree(b) == 0, "private free");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, p, 0, 0, 0, 0, 0, C);
	wl_check(dfree(p) == 0, "private free pitch");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, m, 0, 0, 0, 0, 0, C);
	wl_check(dfree(m) == 0, "private free managed");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync, s1, 0, 0, 0, 0, 0, C);
	wl_check(free_async(s1, NULL) == 0, "private free async 2");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, a, 0, 0, 0, 0, 0, 0);
	wl_check(cuMemFree_v2(a) == 0, "wrapped free");
	cuStreamDestroy_v2(s);
}

/* The runtime reached without tlm's runtime hooks; its driver calls go
 * through wrapped pointers, so the driver wrapper records them, once. */
static void bypass_runtime_hooks(void)
{
	cudaError_t (*rmalloc)(void **, size_t) = rt("cudaMalloc");
	cudaError_t (*rfree)(void *) = rt("cudaFree");
	cudaError_t (*rmalloc_async)(void **, size_t, cudaStream_t) = rt("cudaMallocAsync");
	cudaError_t (*rfree_async)(void *, cudaStream_t) = rt("cudaFreeAsync");
	void *a, *b;
	wl_check(rmalloc(&a, 6000) == 0, "dlvsym cudaMalloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, WL_U(a), 6000, 0, 0, 0, 0, 0);
	wl_check(rmalloc_async(&b, 6001, NULL) == 0, "dlvsym cudaMallocAsync");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocAsync, WL_U(b), 6001, 0, 0, 0, 0, 0);
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync, WL_U(b), 0, 0, 0, 0, 0, 0);
	wl_check(rfree_async(b, NULL) == 0, "dlvsym cudaFreeAsync");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, WL_U(a), 0, 0, 0, 0, 0, 0);
	wl_check(rfree(a) == 0, "dlvsym cudaFree");
	wl_check(rfree(NULL) == 0, "dlvsym cudaFree(NULL)"); /* no event */
}

int wl_cupti(void)
{
	const char *e = getenv("TLM_TEST_CUPTI_SEES");
	sees = e && !strcmp(e, "1");
	CUcontext ctx;
	wl_check(cuInit(0) == 0, "cuInit");
	wl_check(cuDevicePrimaryCtxRetain(&ctx, 0) == 0, "primary ctx");
	wl_check(cuCtxSetCurrent(ctx) == 0, "set ctx");
	bypass_driver();
	wl_check(cudaSetDevice(0) == 0, "set device");
	bypass_runtime_hooks();
	return 0;
}

/* TLM_SIM_RUNTIME_PRIVATE=1: the runtime reaches the driver's internals. */
int wl_cupti_runtime(void)
{
	const char *e = getenv("TLM_TEST_CUPTI_SEES");
	sees = e && !strcmp(e, "1");
	cudaError_t (*rmalloc)(void **, size_t) = NULL;
	void *a, *b, *c, *z;
	cudaStream_t s;
	wl_check(cudaSetDevice(0) == 0, "set device");
	wl_check(cudaStreamCreate(&s) == 0, "stream");
	wl_check(cudaMalloc(&a, 100) == 0, "hooked cudaMalloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(a), 100, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	rmalloc = rt("cudaMalloc");
	cudaError_t (*rfree)(void *) = rt("cudaFree");
	cudaError_t (*rmalloc_async)(void **, size_t, cudaStream_t) = rt("cudaMallocAsync");
	cudaError_t (*rfree_async)(void *, cudaStream_t) = rt("cudaFreeAsync");
	cudaError_t (*rhost)(void **, size_t) = rt("cudaMallocHost");
	cudaError_t (*rfree_host)(void *) = rt("cudaFreeHost");
	wl_check(rmalloc(&b, 200) == 0, "dlvsym cudaMalloc");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(b), 200, 0, 0, 0, 0, TLM_EVF_RUNTIME | C);
	wl_check(rmalloc_async(&c, 300, s) == 0, "dlvsym cudaMallocAsync");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocAsync, WL_U(c), 300, 0, 0, WL_U(s), 0,
		   TLM_EVF_RUNTIME | C);
	wl_check(rhost(&z, 400) == 0, "dlvsym cudaMallocHost");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cudaMallocHost, WL_U(z), 400, 0, -1, 0, 0,
		   TLM_EVF_RUNTIME | C);
	wl_check(rmalloc(&b, 0) == 0 && b == NULL, "dlvsym cudaMalloc(0)"); /* no event */
	void *big;
	wl_check(rmalloc(&big, (size_t)1 << 42) == cudaErrorMemoryAllocation, "dlvsym oom");
	CUPTI_ONLY(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, 0, (size_t)1 << 42, cudaErrorMemoryAllocation, 0,
		   0, 0, TLM_EVF_RUNTIME | C);
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cudaFreeHost, WL_U(z), 0, 0, -1, 0, 0, TLM_EVF_RUNTIME | C);
	wl_check(rfree_host(z) == 0, "dlvsym cudaFreeHost");
	CUPTI_ONLY(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFreeAsync, WL_U(c), 0, 0, 0, WL_U(s), 0, TLM_EVF_RUNTIME | C);
	wl_check(rfree_async(c, s) == 0, "dlvsym cudaFreeAsync");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFree, WL_U(a), 0, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaFree(a) == 0, "hooked cudaFree");
	wl_check(rfree(NULL) == 0, "dlvsym cudaFree(NULL)"); /* no event */
	return 0;
}
