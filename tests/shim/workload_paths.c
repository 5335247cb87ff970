/* SPDX-License-Identifier: MIT */
/*
 * workload_paths.c - the same sequence of driver calls reached through every
 * path tlm must intercept (direct symbols, dlsym on libcuda, cuGetProcAddress
 * and cuGetProcAddress_v2, cudaGetDriverEntryPoint*), and the runtime calls.
 */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "src/sim/include/sim_driver.h"
#include "workload.h"

#define MiB (1024ull * 1024ull)

struct drv {
	CUresult (*alloc)(CUdeviceptr *, size_t);
	CUresult (*alloc_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
	CUresult (*free)(CUdeviceptr);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	CUresult (*alloc_async_ptsz)(CUdeviceptr *, size_t, CUstream);
	CUresult (*alloc_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*alloc_pool_ptsz)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*free_async)(CUdeviceptr, CUstream);
	CUresult (*free_async_ptsz)(CUdeviceptr, CUstream);
	CUresult (*alloc_managed)(CUdeviceptr *, size_t, unsigned);
	CUresult (*alloc_host)(void **, size_t);
	CUresult (*host_alloc)(void **, size_t, unsigned);
	CUresult (*free_host)(void *);
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
	CUresult (*unmap)(CUdeviceptr, size_t);
	CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
	CUresult (*address_free)(CUdeviceptr, size_t);
	CUresult (*pool_create)(CUmemoryPool *, const CUmemPoolProps *);
	CUresult (*pool_destroy)(CUmemoryPool);
	CUresult (*pool_trim)(CUmemoryPool, size_t);
	CUresult (*retain)(CUmemGenericAllocationHandle *, void *);
	CUresult (*import)(CUmemGenericAllocationHandle *, void *, int);
};

static const char *const drv_names[] = {
	"cuMemAlloc_v2", "cuMemAllocPitch_v2", "cuMemFree_v2", "cuMemAllocAsync", "cuMemAllocAsync_ptsz",
	"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", "cuMemFreeAsync", "cuMemFreeAsync_ptsz",
	"cuMemAllocManaged", "cuMemAllocHost_v2", "cuMemHostAlloc", "cuMemFreeHost", "cuMemCreate", "cuMemRelease",
	"cuMemMap", "cuMemUnmap", "cuMemAddressReserve", "cuMemAddressFree", "cuMemPoolCreate", "cuMemPoolDestroy",
	"cuMemPoolTrimTo", "cuMemRetainAllocationHandle", "cuMemImportFromShareableHandle",
};
/* cuGetProcAddress names and flags for the same slots */
static const struct {
	const char *base;
	int flags;
} proc_names[] = {
	{"cuMemAlloc", 0}, {"cuMemAllocPitch", 0}, {"cuMemFree", 0}, {"cuMemAllocAsync", 1},
	{"cuMemAllocAsync", 2}, {"cuMemAllocFromPoolAsync", 1}, {"cuMemAllocFromPoolAsync", 2},
	{"cuMemFreeAsync", 1}, {"cuMemFreeAsync", 2}, {"cuMemAllocManaged", 0}, {"cuMemAllocHost", 0},
	{"cuMemHostAlloc", 0}, {"cuMemFreeHost", 0}, {"cuMemCreate", 0}, {"cuMemRelease", 0}, {"cuMemMap", 0},
	{"cuMemUnmap", 0}, {"cuMemAddressReserve", 0}, {"cuMemAddressFree", 0}, {"cuMemPoolCreate", 0},
	{"cuMemPoolDestroy", 0}, {"cuMemPoolTrimTo", 0}, {"cuMemRetainAllocationHandle", 0},
	{"cuMemImportFromShareableHandle", 0},
};
_Static_assert(sizeof(struct drv) / sizeof(void *) == sizeof drv_names / sizeof drv_names[0], "names");
_Static_assert(sizeof proc_names / sizeof proc_names[0] == sizeof drv_names / sizeof drv_names[0], "procs");

static void ctx_setup(void)
{
	CUcontext ctx;
	wl_check(cuInit(0) == 0, "cuInit");
	wl_check(cuDevicePrimaryCtxRetain(&ctx, 0) == 0, "primary ctx");
	wl_check(cuCtxSetCurrent(ctx) == 0, "set ctx");
}

/* The sequence: every driver call once, success and failure. */
static void driver_seq(const struct drv *d)
{
	CUdeviceptr a, b, m, c, c2, e, e2, va;
	void *h1, *h2;
	size_t pitch;
	CUstream s;
	CUmemoryPool pool;
	CUmemGenericAllocationHandle ph;
	wl_check(cuStreamCreate(&s, 0) == 0, "stream");

	wl_check(d->alloc(&a, 1000) == 0, "alloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, a, 1000, 0, 0, 0, 0, 0);
	wl_check(d->alloc_pitch(&b, &pitch, 1000, 3, 4) == 0, "pitch");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocPitch_v2, b, pitch * 3, 0, 0, 0, 0, 0);
	wl_check(d->alloc_managed(&m, 4096, CU_MEM_ATTACH_GLOBAL) == 0, "managed");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_MANAGED, TLM_API_cuMemAllocManaged, m, 4096, 0, 0, 0, 0, 0);
	wl_check(d->alloc_host(&h1, 5000) == 0, "host");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cuMemAllocHost_v2, WL_U(h1), 5000, 0, -1, 0, 0, 0);
	wl_check(d->host_alloc(&h2, 6000, CU_MEMHOSTALLOC_PORTABLE) == 0, "hostalloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cuMemHostAlloc, WL_U(h2), 6000, 0, -1, 0, 0, 0);
	wl_check(d->alloc_async(&c, 3000, s) == 0, "async");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocAsync, c, 3000, 0, 0, WL_U(s), 0, 0);
	wl_check(d->alloc_async_ptsz(&c2, 3001, NULL) == 0, "async ptsz");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocAsync_ptsz, c2, 3001, 0, 0, 0, 0, TLM_EVF_PTSZ);

	CUmemPoolProps pp;
	memset(&pp, 0, sizeof pp);
	pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	pp.location.id = 0;
	wl_check(d->pool_create(&pool, &pp) == 0, "pool create");
	wl_expect(TLM_OP_POOL_CREATE, TLM_KIND_POOL, TLM_API_cuMemPoolCreate, WL_U(pool), 0, 0, 0, 0, 0, 0);
	wl_check(d->alloc_pool(&e, 7000, pool, s) == 0, "pool alloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocFromPoolAsync, e, 7000, 0, 0, WL_U(s), WL_U(pool), 0);
	wl_check(d->alloc_pool_ptsz(&e2, 7001, pool, NULL) == 0, "pool alloc ptsz");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocFromPoolAsync_ptsz, e2, 7001, 0, 0, 0, WL_U(pool),
		  TLM_EVF_PTSZ);

	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync, e, 0, 0, 0, WL_U(s), 0, 0);
	wl_check(d->free_async(e, s) == 0, "free async");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync_ptsz, e2, 0, 0, 0, 0, 0, TLM_EVF_PTSZ);
	wl_check(d->free_async_ptsz(e2, NULL) == 0, "free async ptsz");
	wl_check(d->pool_trim(pool, 0) == 0, "trim");
	wl_expect(TLM_OP_POOL_TRIM, TLM_KIND_POOL, TLM_API_cuMemPoolTrimTo, WL_U(pool), 0, 0, -1, 0, 0, 0);
	wl_expect(TLM_OP_POOL_DESTROY, TLM_KIND_POOL, TLM_API_cuMemPoolDestroy, WL_U(pool), 0, 0, 0, 0, 0, 0);
	wl_check(d->pool_destroy(pool) == 0, "pool destroy");

	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, a, 0, 0, 0, 0, 0, 0);
	wl_check(d->free(a) == 0, "free");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, b, 0, 0, 0, 0, 0, 0);
	wl_check(d->free(b) == 0, "free pitch");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, m, 0, 0, 0, 0, 0, 0);
	wl_check(d->free(m) == 0, "free managed");
	wl_expect(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cuMemFreeHost, WL_U(h1), 0, 0, -1, 0, 0, 0);
	wl_check(d->free_host(h1) == 0, "free host");
	wl_expect(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cuMemFreeHost, WL_U(h2), 0, 0, -1, 0, 0, 0);
	wl_check(d->free_host(h2) == 0, "free host 2");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync, c, 0, 0, 0, WL_U(s), 0, 0);
	wl_check(d->free_async(c, s) == 0, "free async c");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFreeAsync_ptsz, c2, 0, 0, 0, 0, 0, TLM_EVF_PTSZ);
	wl_check(d->free_async_ptsz(c2, NULL) == 0, "free async c2");

	/* VMM: physical memory on device 1 mapped into a reservation */
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 1;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	wl_check(d->create(&ph, 4 * MiB, &prop, 0) == 0, "create");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemCreate, ph, 4 * MiB, 0, 1, 0, 0, 0);
	wl_check(d->reserve(&va, 8 * MiB, 0, 0, 0) == 0, "reserve");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_VMM_RESERVE, TLM_API_cuMemAddressReserve, va, 8 * MiB, 0, -1, 0, 0, 0);
	wl_check(d->map(va + 2 * MiB, 2 * MiB, 2 * MiB, ph, 0) == 0, "map");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_VMM_MAPPING, TLM_API_cuMemMap, va + 2 * MiB, 2 * MiB, 0, -1, 2 * MiB, ph, 0);
	CUmemAccessDesc acc = {.location = {CU_MEM_LOCATION_TYPE_DEVICE, 1}, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
	wl_check(cuMemSetAccess(va + 2 * MiB, 2 * MiB, &acc, 1) == 0, "access");
	/* a retain and an import add references: their releases free nothing
	 * (NCCL's way: retain, release, and the peers' buffers imported) */
	CUmemGenericAllocationHandle rh, ih;
	int fd = -1;
	wl_check(d->retain(&rh, (void *)(uintptr_t)(va + 3 * MiB)) == 0 && rh == ph, "retain");
	wl_check(d->release(rh) == 0, "release the retain's reference");
	wl_check(cuMemExportToShareableHandle(&fd, ph, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) == 0, "export");
	wl_check(d->import(&ih, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0, "import");
	close(fd);
	wl_check(d->release(ih) == 0, "release the import");
	wl_expect(TLM_OP_FREE, TLM_KIND_VMM_MAPPING, TLM_API_cuMemUnmap, va + 2 * MiB, 2 * MiB, 0, -1, 0, 0, 0);
	wl_check(d->unmap(va + 2 * MiB, 2 * MiB) == 0, "unmap");
	wl_expect(TLM_OP_FREE, TLM_KIND_VMM_RESERVE, TLM_API_cuMemAddressFree, va, 8 * MiB, 0, -1, 0, 0, 0);
	wl_check(d->address_free(va, 8 * MiB) == 0, "address free");
	/* the handle's device (1, from the table of live allocations), not the current one */
	wl_expect(TLM_OP_FREE, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemRelease, ph, 0, 0, 1, 0, 0, 0);
	wl_check(d->release(ph) == 0, "release");

	/* failures are events too: an OOM with the free memory at that moment */
	size_t fr, tot;
	wl_check(cuMemGetInfo_v2(&fr, &tot) == 0, "meminfo");
	CUdeviceptr x = 0;
	wl_check(d->alloc(&x, tot * 4) == CUDA_ERROR_OUT_OF_MEMORY, "oom");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, 0, tot * 4, CUDA_ERROR_OUT_OF_MEMORY, 0, 0, 0, 0);
	wl_note("oom_free %zu", fr);
	CUresult bad = d->free(0xdead000);
	wl_check(bad != 0, "bad free fails");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, 0xdead000, 0, bad, 0, 0, 0, 0);
	cuStreamDestroy_v2(s);
}

int wl_driver(void)
{
	ctx_setup();
	struct drv d = {
		cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemFree_v2, cuMemAllocAsync, cuMemAllocAsync_ptsz,
		cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz, cuMemFreeAsync, cuMemFreeAsync_ptsz,
		cuMemAllocManaged, cuMemAllocHost_v2, cuMemHostAlloc, cuMemFreeHost, cuMemCreate, cuMemRelease,
		cuMemMap, cuMemUnmap, cuMemAddressReserve, cuMemAddressFree, cuMemPoolCreate, cuMemPoolDestroy,
		cuMemPoolTrimTo, cuMemRetainAllocationHandle, cuMemImportFromShareableHandle,
	};
	driver_seq(&d);
	return 0;
}

int wl_dlsym(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	wl_check(h != NULL, "dlopen libcuda");
	ctx_setup();
	struct drv d;
	void **slot = (void **)&d;
	for (size_t i = 0; i < sizeof drv_names / sizeof drv_names[0]; i++) {
		slot[i] = dlsym(h, drv_names[i]);
		wl_check(slot[i] != NULL, drv_names[i]);
	}
	driver_seq(&d);
	return 0;
}

/* The way libcudart (shared or static) reaches the driver: one dlsym of
 * cuGetProcAddress_v2, everything else through it; also the older
 * cuGetProcAddress obtained through it. */
int wl_procaddr(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	wl_check(h != NULL, "dlopen libcuda");
	CUresult (*gpa2)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
		(CUresult(*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))dlsym(
			h, "cuGetProcAddress_v2");
	wl_check(gpa2 != NULL, "cuGetProcAddress_v2");
	ctx_setup();
	struct drv d;
	void **slot = (void **)&d;
	CUdriverProcAddressQueryResult st;
	for (size_t i = 0; i < sizeof proc_names / sizeof proc_names[0]; i++) {
		wl_check(gpa2(proc_names[i].base, &slot[i], 13000, (cuuint64_t)proc_names[i].flags, &st) == 0 &&
				 st == CU_GET_PROC_ADDRESS_SUCCESS,
			 proc_names[i].base);
	}
	driver_seq(&d);
	/* v1 cuGetProcAddress, itself obtained through v2 */
	CUresult (*gpa1)(const char *, void **, int, cuuint64_t) = NULL;
	wl_check(gpa2("cuGetProcAddress", (void **)&gpa1, 11030, 0, &st) == 0 && gpa1, "cuGetProcAddress v1");
	CUresult (*alloc)(CUdeviceptr *, size_t) = NULL;
	CUresult (*fr)(CUdeviceptr) = NULL;
	wl_check(gpa1("cuMemAlloc", (void **)&alloc, 12000, 0) == 0 && alloc, "v1 cuMemAlloc");
	wl_check(gpa1("cuMemFree", (void **)&fr, 12000, 0) == 0 && fr, "v1 cuMemFree");
	CUdeviceptr p;
	wl_check(alloc(&p, 12345) == 0, "v1 alloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAlloc_v2, p, 12345, 0, 0, 0, 0, 0);
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cuMemFree_v2, p, 0, 0, 0, 0, 0, 0);
	wl_check(fr(p) == 0, "v1 free");
	return 0;
}

/* Expandable segments' way: cudaGetDriverEntryPoint(ByVersion). */
int wl_entrypoint(void)
{
	wl_check(cudaSetDevice(0) == 0, "set device");
	void *p0 = NULL;
	wl_check(cudaMalloc(&p0, 1) == 0, "init runtime");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(p0), 1, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	enum cudaDriverEntryPointQueryResult st;
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
	CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
	wl_check(cudaGetDriverEntryPoint("cuMemCreate", (void **)&create, cudaEnableDefault, &st) == 0 && create,
		 "entry cuMemCreate");
	wl_check(cudaGetDriverEntryPointByVersion("cuMemRelease", (void **)&release, 12050, cudaEnableDefault, &st) ==
				 0 && release,
		 "entry cuMemRelease");
	wl_check(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", (void **)&alloc_async, 12050,
						  cudaEnablePerThreadDefaultStream, &st) == 0 && alloc_async,
		 "entry cuMemAllocAsync ptsz");
	CUmemAllocationProp prop;
	memset(&prop, 0, sizeof prop);
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	CUmemGenericAllocationHandle ph;
	wl_check(create(&ph, 2 * MiB, &prop, 0) == 0, "create");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemCreate, ph, 2 * MiB, 0, 0, 0, 0, 0);
	wl_expect(TLM_OP_FREE, TLM_KIND_VMM_PHYSICAL, TLM_API_cuMemRelease, ph, 0, 0, 0, 0, 0, 0);
	wl_check(release(ph) == 0, "release");
	CUdeviceptr a;
	wl_check(alloc_async(&a, 4444, NULL) == 0, "alloc async");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cuMemAllocAsync_ptsz, a, 4444, 0, 0, 0, 0, TLM_EVF_PTSZ);
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFreeAsync, a, 0, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaFreeAsync((void *)(uintptr_t)a, NULL) == 0, "free async");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFree, WL_U(p0), 0, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaFree(p0) == 0, "free");
	return 0;
}

int wl_runtime(void)
{
	void *a, *b, *c3, *m, *h1, *h2, *as, *as2, *pa, *pa2;
	size_t pitch;
	cudaStream_t s;
	wl_check(cudaSetDevice(1) == 0, "set device 1");
	wl_check(cudaMalloc(&a, 1 << 20) == 0, "cudaMalloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(a), 1 << 20, 0, 1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaMallocPitch(&b, &pitch, 100, 7) == 0, "pitch");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocPitch, WL_U(b), pitch * 7, 0, 1, 0, 0, TLM_EVF_RUNTIME);
	struct cudaPitchedPtr pp;
	struct cudaExtent ext = {.width = 300, .height = 5, .depth = 3};
	wl_check(cudaMalloc3D(&pp, ext) == 0, "3d");
	c3 = pp.ptr;
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc3D, WL_U(c3), pp.pitch * 5 * 3, 0, 1, 0, 0,
		  TLM_EVF_RUNTIME);
	wl_check(cudaMallocManaged(&m, 8192, 1) == 0, "managed");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_MANAGED, TLM_API_cudaMallocManaged, WL_U(m), 8192, 0, 1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaMallocHost(&h1, 777) == 0, "host");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cudaMallocHost, WL_U(h1), 777, 0, -1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaHostAlloc(&h2, 778, 0) == 0, "hostalloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_HOST_PINNED, TLM_API_cudaHostAlloc, WL_U(h2), 778, 0, -1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaStreamCreate(&s) == 0, "stream");
	wl_check(cudaMallocAsync(&as, 5555, s) == 0, "async");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocAsync, WL_U(as), 5555, 0, 1, WL_U(s), 0, TLM_EVF_RUNTIME);
	wl_check(cudaMallocAsync_ptsz(&as2, 5556, NULL) == 0, "async ptsz");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocAsync_ptsz, WL_U(as2), 5556, 0, 1, 0, 0,
		  TLM_EVF_RUNTIME | TLM_EVF_PTSZ);
	CUmemPoolProps props;
	memset(&props, 0, sizeof props);
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = 1;
	cudaMemPool_t pool;
	wl_check(cudaMemPoolCreate(&pool, &props) == 0, "pool");
	/* the runtime has no hook of ours here: its driver call is the event */
	wl_expect(TLM_OP_POOL_CREATE, TLM_KIND_POOL, TLM_API_cuMemPoolCreate, WL_U(pool), 0, 0, 1, 0, 0, 0);
	wl_check(cudaMallocFromPoolAsync(&pa, 999, pool, s) == 0, "pool alloc");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocFromPoolAsync, WL_U(pa), 999, 0, 1, WL_U(s), WL_U(pool),
		  TLM_EVF_RUNTIME);
	wl_check(cudaMallocFromPoolAsync_ptsz(&pa2, 998, pool, NULL) == 0, "pool alloc ptsz");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMallocFromPoolAsync_ptsz, WL_U(pa2), 998, 0, 1, 0, WL_U(pool),
		  TLM_EVF_RUNTIME | TLM_EVF_PTSZ);
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFreeAsync, WL_U(pa), 0, 0, 1, WL_U(s), 0, TLM_EVF_RUNTIME);
	wl_check(cudaFreeAsync(pa, s) == 0, "free async");
	wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFreeAsync_ptsz, WL_U(pa2), 0, 0, 1, 0, 0,
		  TLM_EVF_RUNTIME | TLM_EVF_PTSZ);
	wl_check(cudaFreeAsync_ptsz(pa2, NULL) == 0, "free async ptsz");
	wl_check(cudaDeviceSynchronize() == 0, "sync");
	wl_expect(TLM_OP_POOL_DESTROY, TLM_KIND_POOL, TLM_API_cuMemPoolDestroy, WL_U(pool), 0, 0, 1, 0, 0, 0);
	wl_check(cudaMemPoolDestroy(pool) == 0, "pool destroy");
	void *frees[] = {a, b, c3, m, as, as2};
	unsigned fapi[] = {TLM_API_cudaFree, TLM_API_cudaFree, TLM_API_cudaFree, TLM_API_cudaFree,
			   TLM_API_cudaFreeAsync, TLM_API_cudaFreeAsync};
	for (int i = 0; i < 6; i++) {
		wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, fapi[i], WL_U(frees[i]), 0, 0, 1, i >= 4 ? WL_U(s) : 0, 0,
			  TLM_EVF_RUNTIME);
		wl_check((i >= 4 ? cudaFreeAsync(frees[i], s) : cudaFree(frees[i])) == 0, "free");
	}
	wl_expect(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cudaFreeHost, WL_U(h1), 0, 0, -1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaFreeHost(h1) == 0, "free host");
	wl_expect(TLM_OP_FREE, TLM_KIND_HOST_PINNED, TLM_API_cudaFreeHost, WL_U(h2), 0, 0, -1, 0, 0, TLM_EVF_RUNTIME);
	wl_check(cudaFreeHost(h2) == 0, "free host 2");
	wl_check(cudaFree(NULL) == 0, "free null"); /* no event */
	void *big;
	wl_check(cudaMalloc(&big, (size_t)1 << 42) == cudaErrorMemoryAllocation, "oom");
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, 0, (size_t)1 << 42, cudaErrorMemoryAllocation, 1,
		  0, 0, TLM_EVF_RUNTIME);
	return 0;
}
