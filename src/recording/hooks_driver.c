/* SPDX-License-Identifier: MIT */
/*
 * hooks_driver.c - the driver memory calls (libcuda), whichever way they are
 * reached: direct calls bind to the exported slot-0 wrappers; dlsym,
 * cuGetProcAddress and cudaGetDriverEntryPoint hand out the others
 * (procaddr.c). cuInit also sets CUPTI up (cupti.c).
 *
 * Allocations are recorded after the real call returns, frees before it (the
 * address cannot be handed out again in between, see ring.h).
 */
#include <string.h>

#include "recording/cupti_int.h"
#include "recording/driver_query.h"
#include "recording/guard.h"
#include "recording/hooks.h"
#include "recording/recorder.h"
#include "recording/vmm_refs.h"

#define E(...) (&(struct tlm__evargs){__VA_ARGS__})
#define NOT_LOADED CUDA_ERROR_NOT_INITIALIZED

enum {
	I_cuMemAlloc_v2, I_cuMemAllocPitch_v2, I_cuMemFree_v2, I_cuMemAllocAsync, I_cuMemAllocAsync_ptsz,
	I_cuMemAllocFromPoolAsync, I_cuMemAllocFromPoolAsync_ptsz, I_cuMemFreeAsync, I_cuMemFreeAsync_ptsz,
	I_cuMemAllocManaged, I_cuMemAllocHost_v2, I_cuMemHostAlloc, I_cuMemFreeHost, I_cuMemCreate,
	I_cuMemRelease, I_cuMemMap, I_cuMemUnmap, I_cuMemAddressReserve, I_cuMemAddressFree, I_cuMemPoolCreate,
	I_cuMemPoolDestroy, I_cuMemPoolTrimTo, I_cuMemRetainAllocationHandle, I_cuMemImportFromShareableHandle,
	I_cuInit, I_COUNT
};

/* -------- plain device allocations -------- */

typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
static CUresult do_alloc(void *rp, CUdeviceptr *dptr, size_t size, uint16_t api, uint8_t kind)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((alloc_fn)rp)(dptr, size);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = kind, .api = api, .result = r,
			      .addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size,
			      .device = kind == TLM_KIND_HOST_PINNED ? -1 : tlm__current_device()));
	tlm__leave(&g);
	return r;
}

static CUresult do_cuMemAlloc_v2(void *rp, CUdeviceptr *dptr, size_t size)
{
	return do_alloc(rp, dptr, size, TLM_API_cuMemAlloc_v2, TLM_KIND_DEVICE);
}
TLM__SLOTS(tlm__drv, I_cuMemAlloc_v2, cuMemAlloc_v2, CUresult, (CUdeviceptr * dptr, size_t size), dptr, size)

static CUresult do_cuMemAllocHost_v2(void *rp, void **pp, size_t size)
{
	return do_alloc(rp, (CUdeviceptr *)pp, size, TLM_API_cuMemAllocHost_v2, TLM_KIND_HOST_PINNED);
}
TLM__SLOTS(tlm__drv, I_cuMemAllocHost_v2, cuMemAllocHost_v2, CUresult, (void **pp, size_t size), pp, size)

typedef CUresult (*alloc_flags_fn)(CUdeviceptr *, size_t, unsigned);
static CUresult do_alloc_flags(void *rp, CUdeviceptr *dptr, size_t size, unsigned fl, uint16_t api, uint8_t kind)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((alloc_flags_fn)rp)(dptr, size, fl);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = kind, .api = api, .result = r,
			      .addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size,
			      .device = kind == TLM_KIND_HOST_PINNED ? -1 : tlm__current_device()));
	tlm__leave(&g);
	return r;
}

static CUresult do_cuMemAllocManaged(void *rp, CUdeviceptr *dptr, size_t size, unsigned fl)
{
	return do_alloc_flags(rp, dptr, size, fl, TLM_API_cuMemAllocManaged, TLM_KIND_MANAGED);
}
TLM__SLOTS(tlm__drv, I_cuMemAllocManaged, cuMemAllocManaged, CUresult, (CUdeviceptr * dptr, size_t size, unsigned fl),
	   dptr, size, fl)

static CUresult do_cuMemHostAlloc(void *rp, void **pp, size_t size, unsigned fl)
{
	return do_alloc_flags(rp, (CUdeviceptr *)pp, size, fl, TLM_API_cuMemHostAlloc, TLM_KIND_HOST_PINNED);
}
TLM__SLOTS(tlm__drv, I_cuMemHostAlloc, cuMemHostAlloc, CUresult, (void **pp, size_t size, unsigned fl), pp, size, fl)

typedef CUresult (*pitch_fn)(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
static CUresult do_cuMemAllocPitch_v2(void *rp, CUdeviceptr *dptr, size_t *pitch, size_t w, size_t h, unsigned es)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((pitch_fn)rp)(dptr, pitch, w, h, es);
	if (rec) {
		bool ok = r == CUDA_SUCCESS && dptr && pitch;
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = TLM_API_cuMemAllocPitch_v2,
			      .result = r, .addr = ok ? *dptr : 0, .size = ok ? *pitch * h : w * h,
			      .device = tlm__current_device()));
	}
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemAllocPitch_v2, cuMemAllocPitch_v2, CUresult,
	   (CUdeviceptr * dptr, size_t *pitch, size_t w, size_t h, unsigned es), dptr, pitch, w, h, es)

/* -------- frees: stamped before the real call -------- */

typedef CUresult (*free_fn)(CUdeviceptr);
static CUresult do_free(void *rp, CUdeviceptr p, uint64_t size, uint16_t api, uint8_t kind, uint8_t op)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__rec rc;
	struct tlm__guard g;
	bool rec = tlm__enter(&g) && p &&
		   tlm__free_begin(&rc, E(.op = op, .kind = kind, .api = api, .addr = p, .size = size,
					   .device = kind == TLM_KIND_HOST_PINNED ? -1 : TLM__DEV_CURRENT));
	CUresult r = ((free_fn)rp)(p);
	if (rec)
		tlm__free_end(&rc, r);
	tlm__leave(&g);
	return r;
}

static CUresult do_cuMemFree_v2(void *rp, CUdeviceptr p)
{
	return do_free(rp, p, 0, TLM_API_cuMemFree_v2, TLM_KIND_DEVICE, TLM_OP_FREE);
}
TLM__SLOTS(tlm__drv, I_cuMemFree_v2, cuMemFree_v2, CUresult, (CUdeviceptr p), p)

static CUresult do_cuMemFreeHost(void *rp, void *p)
{
	return do_free(rp, (CUdeviceptr)(uintptr_t)p, 0, TLM_API_cuMemFreeHost, TLM_KIND_HOST_PINNED, TLM_OP_FREE);
}
TLM__SLOTS(tlm__drv, I_cuMemFreeHost, cuMemFreeHost, CUresult, (void *p), p)

/* Only the release that drops the creation's reference frees (vmm_refs.c). */
static CUresult do_cuMemRelease(void *rp, CUmemGenericAllocationHandle h)
{
	if (!rp)
		return NOT_LOADED;
	bool frees = tlm__vmm_release_frees(h);
	CUresult r;
	if (frees) {
		r = do_free(rp, h, 0, TLM_API_cuMemRelease, TLM_KIND_VMM_PHYSICAL, TLM_OP_FREE);
	} else {
		struct tlm__guard g;
		(void)tlm__enter(&g); /* interposed, though unrecorded: CUPTI's callback must not record it */
		r = ((CUresult(*)(CUmemGenericAllocationHandle))rp)(h);
		tlm__leave(&g);
	}
	if (r != CUDA_SUCCESS)
		tlm__vmm_release_failed(h, frees);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemRelease, cuMemRelease, CUresult, (CUmemGenericAllocationHandle h), h)

static CUresult do_cuMemPoolDestroy(void *rp, CUmemoryPool pool)
{
	return do_free(rp, (CUdeviceptr)(uintptr_t)pool, 0, TLM_API_cuMemPoolDestroy, TLM_KIND_POOL,
		       TLM_OP_POOL_DESTROY);
}
TLM__SLOTS(tlm__drv, I_cuMemPoolDestroy, cuMemPoolDestroy, CUresult, (CUmemoryPool pool), pool)

typedef CUresult (*range_fn)(CUdeviceptr, size_t);
static CUresult do_range_free(void *rp, CUdeviceptr p, size_t size, uint16_t api, uint8_t kind)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__rec rc;
	struct tlm__guard g;
	bool rec = tlm__enter(&g) &&
		   tlm__free_begin(&rc, E(.op = TLM_OP_FREE, .kind = kind, .api = api, .addr = p, .size = size,
					   .device = -1));
	CUresult r = ((range_fn)rp)(p, size);
	if (rec)
		tlm__free_end(&rc, r);
	tlm__leave(&g);
	return r;
}

static CUresult do_cuMemUnmap(void *rp, CUdeviceptr p, size_t size)
{
	return do_range_free(rp, p, size, TLM_API_cuMemUnmap, TLM_KIND_VMM_MAPPING);
}
TLM__SLOTS(tlm__drv, I_cuMemUnmap, cuMemUnmap, CUresult, (CUdeviceptr p, size_t size), p, size)

static CUresult do_cuMemAddressFree(void *rp, CUdeviceptr p, size_t size)
{
	return do_range_free(rp, p, size, TLM_API_cuMemAddressFree, TLM_KIND_VMM_RESERVE);
}
TLM__SLOTS(tlm__drv, I_cuMemAddressFree, cuMemAddressFree, CUresult, (CUdeviceptr p, size_t size), p, size)

/* -------- stream-ordered allocator -------- */

typedef CUresult (*async_fn)(CUdeviceptr *, size_t, CUstream);
static CUresult do_async(void *rp, CUdeviceptr *dptr, size_t size, CUstream s, uint16_t api, uint16_t fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((async_fn)rp)(dptr, size, s);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = api, .flags = fl, .result = r,
			      .addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size,
			      .stream = (uint64_t)(uintptr_t)s, .device = tlm__current_device()));
	tlm__leave(&g);
	return r;
}
static CUresult do_cuMemAllocAsync(void *rp, CUdeviceptr *d, size_t n, CUstream s)
{
	return do_async(rp, d, n, s, TLM_API_cuMemAllocAsync, 0);
}
static CUresult do_cuMemAllocAsync_ptsz(void *rp, CUdeviceptr *d, size_t n, CUstream s)
{
	return do_async(rp, d, n, s, TLM_API_cuMemAllocAsync_ptsz, TLM_EVF_PTSZ);
}
TLM__SLOTS(tlm__drv, I_cuMemAllocAsync, cuMemAllocAsync, CUresult, (CUdeviceptr * d, size_t n, CUstream s), d, n, s)
TLM__SLOTS(tlm__drv, I_cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz, CUresult, (CUdeviceptr * d, size_t n, CUstream s), d, n,
	   s)

typedef CUresult (*pool_async_fn)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
static CUresult do_pool_async(void *rp, CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s,
			      uint16_t api, uint16_t fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((pool_async_fn)rp)(dptr, size, pool, s);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = api, .flags = fl, .result = r,
			      .addr = r == CUDA_SUCCESS && dptr ? *dptr : 0, .size = size,
			      .stream = (uint64_t)(uintptr_t)s, .aux = (uint64_t)(uintptr_t)pool,
			      .device = tlm__current_device()));
	tlm__leave(&g);
	return r;
}
static CUresult do_cuMemAllocFromPoolAsync(void *rp, CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
	return do_pool_async(rp, d, n, p, s, TLM_API_cuMemAllocFromPoolAsync, 0);
}
static CUresult do_cuMemAllocFromPoolAsync_ptsz(void *rp, CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
	return do_pool_async(rp, d, n, p, s, TLM_API_cuMemAllocFromPoolAsync_ptsz, TLM_EVF_PTSZ);
}
TLM__SLOTS(tlm__drv, I_cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, CUresult,
	   (CUdeviceptr * d, size_t n, CUmemoryPool p, CUstream s), d, n, p, s)
TLM__SLOTS(tlm__drv, I_cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz, CUresult,
	   (CUdeviceptr * d, size_t n, CUmemoryPool p, CUstream s), d, n, p, s)

typedef CUresult (*free_async_fn)(CUdeviceptr, CUstream);
static CUresult do_free_async(void *rp, CUdeviceptr p, CUstream s, uint16_t api, uint16_t fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__rec rc;
	struct tlm__guard g;
	bool rec = tlm__enter(&g) && p &&
		   tlm__free_begin(&rc, E(.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .api = api, .flags = fl,
					   .addr = p, .stream = (uint64_t)(uintptr_t)s,
					   .device = TLM__DEV_CURRENT));
	CUresult r = ((free_async_fn)rp)(p, s);
	if (rec)
		tlm__free_end(&rc, r);
	tlm__leave(&g);
	return r;
}
static CUresult do_cuMemFreeAsync(void *rp, CUdeviceptr p, CUstream s)
{
	return do_free_async(rp, p, s, TLM_API_cuMemFreeAsync, 0);
}
static CUresult do_cuMemFreeAsync_ptsz(void *rp, CUdeviceptr p, CUstream s)
{
	return do_free_async(rp, p, s, TLM_API_cuMemFreeAsync_ptsz, TLM_EVF_PTSZ);
}
TLM__SLOTS(tlm__drv, I_cuMemFreeAsync, cuMemFreeAsync, CUresult, (CUdeviceptr p, CUstream s), p, s)
TLM__SLOTS(tlm__drv, I_cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz, CUresult, (CUdeviceptr p, CUstream s), p, s)

/* -------- virtual memory management -------- */

typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
static CUresult do_cuMemCreate(void *rp, CUmemGenericAllocationHandle *h, size_t size,
			       const CUmemAllocationProp *prop, unsigned long long fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((create_fn)rp)(h, size, prop, fl);
	if (r == CUDA_SUCCESS && h)
		tlm__vmm_created(*h);
	/* a host location's id is a NUMA node, not a device */
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_PHYSICAL, .api = TLM_API_cuMemCreate,
			      .result = r, .addr = r == CUDA_SUCCESS && h ? *h : 0, .size = size,
			      .device = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE
						? (int16_t)prop->location.id
						: -1));
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemCreate, cuMemCreate, CUresult,
	   (CUmemGenericAllocationHandle * h, size_t size, const CUmemAllocationProp *prop, unsigned long long fl),
	   h, size, prop, fl)

/* Neither allocates: they add a reference to a handle (vmm_refs.c). */
typedef CUresult (*retain_fn)(CUmemGenericAllocationHandle *, void *);
static CUresult do_cuMemRetainAllocationHandle(void *rp, CUmemGenericAllocationHandle *h, void *addr)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	(void)tlm__enter(&g);
	CUresult r = ((retain_fn)rp)(h, addr);
	tlm__leave(&g);
	if (r == CUDA_SUCCESS && h)
		tlm__vmm_retained(*h);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, CUresult,
	   (CUmemGenericAllocationHandle * h, void *addr), h, addr)

typedef CUresult (*import_fn)(CUmemGenericAllocationHandle *, void *, int);
static CUresult do_cuMemImportFromShareableHandle(void *rp, CUmemGenericAllocationHandle *h, void *os,
						  int type)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	(void)tlm__enter(&g);
	CUresult r = ((import_fn)rp)(h, os, type);
	tlm__leave(&g);
	if (r == CUDA_SUCCESS && h)
		tlm__vmm_imported(*h);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, CUresult,
	   (CUmemGenericAllocationHandle * h, void *os, int type), h, os, type)

typedef CUresult (*map_fn)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
static CUresult do_cuMemMap(void *rp, CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
			    unsigned long long fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((map_fn)rp)(p, size, off, h, fl);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_MAPPING, .api = TLM_API_cuMemMap, .result = r,
			      .addr = p, .size = size, .stream = off, .aux = h, .device = -1));
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemMap, cuMemMap, CUresult,
	   (CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h, unsigned long long fl), p, size,
	   off, h, fl)

typedef CUresult (*reserve_fn)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
static CUresult do_cuMemAddressReserve(void *rp, CUdeviceptr *p, size_t size, size_t align, CUdeviceptr hint,
				       unsigned long long fl)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((reserve_fn)rp)(p, size, align, hint, fl);
	if (rec)
		tlm__record(E(.op = TLM_OP_ALLOC, .kind = TLM_KIND_VMM_RESERVE, .api = TLM_API_cuMemAddressReserve,
			      .result = r, .addr = r == CUDA_SUCCESS && p ? *p : 0, .size = size, .device = -1));
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemAddressReserve, cuMemAddressReserve, CUresult,
	   (CUdeviceptr * p, size_t size, size_t align, CUdeviceptr hint, unsigned long long fl), p, size, align,
	   hint, fl)

/* -------- pools -------- */

typedef CUresult (*pool_create_fn)(CUmemoryPool *, const CUmemPoolProps *);
static CUresult do_cuMemPoolCreate(void *rp, CUmemoryPool *pool, const CUmemPoolProps *props)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((pool_create_fn)rp)(pool, props);
	if (rec)
		tlm__record(E(.op = TLM_OP_POOL_CREATE, .kind = TLM_KIND_POOL, .api = TLM_API_cuMemPoolCreate,
			      .result = r, .addr = r == CUDA_SUCCESS && pool ? (uint64_t)(uintptr_t)*pool : 0,
			      .device = props ? (int16_t)props->location.id : -1));
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemPoolCreate, cuMemPoolCreate, CUresult, (CUmemoryPool * pool, const CUmemPoolProps *props), pool,
	   props)

typedef CUresult (*trim_fn)(CUmemoryPool, size_t);
static CUresult do_cuMemPoolTrimTo(void *rp, CUmemoryPool pool, size_t keep)
{
	if (!rp)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	CUresult r = ((trim_fn)rp)(pool, keep);
	if (rec)
		tlm__record(E(.op = TLM_OP_POOL_TRIM, .kind = TLM_KIND_POOL, .api = TLM_API_cuMemPoolTrimTo,
			      .result = r, .addr = (uint64_t)(uintptr_t)pool, .size = keep, .device = -1));
	tlm__leave(&g);
	return r;
}
TLM__SLOTS(tlm__drv, I_cuMemPoolTrimTo, cuMemPoolTrimTo, CUresult, (CUmemoryPool pool, size_t keep), pool, keep)

/* -------- cuInit: CUPTI is set up once CUDA is initialised -------- */

typedef CUresult (*init_fn)(unsigned);
static CUresult do_cuInit(void *rp, unsigned fl)
{
	if (!rp)
		return NOT_LOADED;
	CUresult r = ((init_fn)rp)(fl);
	if (r == CUDA_SUCCESS)
		tlm__cupti_after_init();
	return r;
}
TLM__SLOTS(tlm__drv, I_cuInit, cuInit, CUresult, (unsigned fl), fl)

/* -------- the table -------- */

#define F(n, b, v, p) [I_##n] = {.name = #n, .base = b, .minver = v, .ptsz = p, .wrapper = TLM__SLOT_PTRS(n)}
struct tlm__drv_fn tlm__drv[] = {
	F(cuMemAlloc_v2, "cuMemAlloc", 3020, false),
	F(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, false),
	F(cuMemFree_v2, "cuMemFree", 3020, false),
	F(cuMemAllocAsync, "cuMemAllocAsync", 11020, false),
	F(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, true),
	F(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, false),
	F(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, true),
	F(cuMemFreeAsync, "cuMemFreeAsync", 11020, false),
	F(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, true),
	F(cuMemAllocManaged, "cuMemAllocManaged", 6000, false),
	F(cuMemAllocHost_v2, "cuMemAllocHost", 3020, false),
	F(cuMemHostAlloc, "cuMemHostAlloc", 2020, false),
	F(cuMemFreeHost, "cuMemFreeHost", 2000, false),
	F(cuMemCreate, "cuMemCreate", 10020, false),
	F(cuMemRelease, "cuMemRelease", 10020, false),
	F(cuMemMap, "cuMemMap", 10020, false),
	F(cuMemUnmap, "cuMemUnmap", 10020, false),
	F(cuMemAddressReserve, "cuMemAddressReserve", 10020, false),
	F(cuMemAddressFree, "cuMemAddressFree", 10020, false),
	F(cuMemPoolCreate, "cuMemPoolCreate", 11020, false),
	F(cuMemPoolDestroy, "cuMemPoolDestroy", 11020, false),
	F(cuMemPoolTrimTo, "cuMemPoolTrimTo", 11020, false),
	F(cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle", 11000, false),
	F(cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle", 10020, false),
	F(cuInit, "cuInit", 2000, false),
};
const unsigned tlm__ndrv = I_COUNT;
_Static_assert(sizeof tlm__drv / sizeof tlm__drv[0] == I_COUNT, "table complete");
