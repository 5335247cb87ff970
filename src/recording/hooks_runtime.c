/* SPDX-License-Identifier: MIT */
/*
 * hooks_runtime.c - the runtime (libcudart) allocation calls, for programs
 * that link libcudart dynamically. The driver calls they make inside run at
 * depth > 0 and are not recorded again. (cudaGetDriverEntryPoint*, which
 * hand out our driver wrappers: procaddr.c.)
 */
#include "recording/driver_query.h"
#include "recording/guard.h"
#include "recording/hooks.h"
#include "recording/recorder.h"

#define E(...) (&(struct tlm__evargs){__VA_ARGS__})
#define RT(i) tlm__rt_real(&tlm__rt[i])
#define NOT_LOADED cudaErrorInitializationError

enum {
	R_cudaMalloc, R_cudaMallocPitch, R_cudaMalloc3D, R_cudaMallocManaged, R_cudaMallocHost, R_cudaHostAlloc,
	R_cudaMallocAsync, R_cudaMallocAsync_ptsz, R_cudaMallocFromPoolAsync, R_cudaMallocFromPoolAsync_ptsz,
	R_cudaFree, R_cudaFreeHost, R_cudaFreeAsync, R_cudaFreeAsync_ptsz, R_COUNT
};

static void rec_alloc(cudaError_t r, void *p, size_t size, uint8_t kind, uint16_t api, uint64_t stream,
		      uint64_t pool, uint16_t fl)
{
	tlm__record(E(.op = TLM_OP_ALLOC, .kind = kind, .api = api, .flags = (uint16_t)(TLM_EVF_RUNTIME | fl),
		      .result = r, .addr = r == cudaSuccess ? (uint64_t)(uintptr_t)p : 0, .size = size,
		      .stream = stream, .aux = pool,
		      .device = kind == TLM_KIND_HOST_PINNED ? -1 : tlm__current_device()));
}

typedef cudaError_t (*malloc_fn)(void **, size_t);
static cudaError_t plain(unsigned idx, void **p, size_t size, uint8_t kind, uint16_t api)
{
	malloc_fn f = (malloc_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(p, size);
	if (rec)
		rec_alloc(r, p ? *p : NULL, size, kind, api, 0, 0, 0);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
	return plain(R_cudaMalloc, p, size, TLM_KIND_DEVICE, TLM_API_cudaMalloc);
}

TLM_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
	return plain(R_cudaMallocHost, p, size, TLM_KIND_HOST_PINNED, TLM_API_cudaMallocHost);
}

typedef cudaError_t (*malloc_flags_fn)(void **, size_t, unsigned);
static cudaError_t with_flags(unsigned idx, void **p, size_t size, unsigned fl, uint8_t kind, uint16_t api)
{
	malloc_flags_fn f = (malloc_flags_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(p, size, fl);
	if (rec)
		rec_alloc(r, p ? *p : NULL, size, kind, api, 0, 0, 0);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned fl)
{
	return with_flags(R_cudaMallocManaged, p, size, fl, TLM_KIND_MANAGED, TLM_API_cudaMallocManaged);
}

TLM_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned fl)
{
	return with_flags(R_cudaHostAlloc, p, size, fl, TLM_KIND_HOST_PINNED, TLM_API_cudaHostAlloc);
}

typedef cudaError_t (*pitch_fn)(void **, size_t *, size_t, size_t);
TLM_EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
	pitch_fn f = (pitch_fn)RT(R_cudaMallocPitch);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(p, pitch, w, h);
	if (rec) {
		bool ok = r == cudaSuccess && p && pitch;
		rec_alloc(r, ok ? *p : NULL, ok ? *pitch * h : w * h, TLM_KIND_DEVICE, TLM_API_cudaMallocPitch, 0, 0, 0);
	}
	tlm__leave(&g);
	return r;
}

typedef cudaError_t (*m3d_fn)(struct cudaPitchedPtr *, struct cudaExtent);
TLM_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent e)
{
	m3d_fn f = (m3d_fn)RT(R_cudaMalloc3D);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(pp, e);
	if (rec) {
		bool ok = r == cudaSuccess && pp;
		rec_alloc(r, ok ? pp->ptr : NULL, ok ? pp->pitch * e.height * e.depth : e.width * e.height * e.depth,
			  TLM_KIND_DEVICE, TLM_API_cudaMalloc3D, 0, 0, 0);
	}
	tlm__leave(&g);
	return r;
}

typedef cudaError_t (*async_fn)(void **, size_t, cudaStream_t);
static cudaError_t async(unsigned idx, void **p, size_t size, cudaStream_t s, uint16_t api, uint16_t fl)
{
	async_fn f = (async_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(p, size, s);
	if (rec)
		rec_alloc(r, p ? *p : NULL, size, TLM_KIND_DEVICE, api, (uint64_t)(uintptr_t)s, 0, fl);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
	return async(R_cudaMallocAsync, p, size, s, TLM_API_cudaMallocAsync, 0);
}

TLM_EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
	return async(R_cudaMallocAsync_ptsz, p, size, s, TLM_API_cudaMallocAsync_ptsz, TLM_EVF_PTSZ);
}

typedef cudaError_t (*pool_fn)(void **, size_t, cudaMemPool_t, cudaStream_t);
static cudaError_t pool_async(unsigned idx, void **p, size_t size, cudaMemPool_t pool, cudaStream_t s, uint16_t api,
			      uint16_t fl)
{
	pool_fn f = (pool_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__guard g;
	bool rec = tlm__enter(&g);
	cudaError_t r = f(p, size, pool, s);
	if (rec)
		rec_alloc(r, p ? *p : NULL, size, TLM_KIND_DEVICE, api, (uint64_t)(uintptr_t)s,
			  (uint64_t)(uintptr_t)pool, fl);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
	return pool_async(R_cudaMallocFromPoolAsync, p, size, pool, s, TLM_API_cudaMallocFromPoolAsync, 0);
}

TLM_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
	return pool_async(R_cudaMallocFromPoolAsync_ptsz, p, size, pool, s, TLM_API_cudaMallocFromPoolAsync_ptsz,
			  TLM_EVF_PTSZ);
}

typedef cudaError_t (*free_fn)(void *);
static cudaError_t free_common(unsigned idx, void *p, uint8_t kind, uint16_t api)
{
	free_fn f = (free_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__rec rc;
	struct tlm__guard g;
	bool rec = tlm__enter(&g) && p &&
		   tlm__free_begin(&rc, E(.op = TLM_OP_FREE, .kind = kind, .api = api, .flags = TLM_EVF_RUNTIME,
					   .addr = (uint64_t)(uintptr_t)p,
					   .device = kind == TLM_KIND_HOST_PINNED ? -1 : TLM__DEV_OF_PTR));
	cudaError_t r = f(p);
	if (rec)
		tlm__free_end(&rc, r);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaFree(void *p)
{
	return free_common(R_cudaFree, p, TLM_KIND_DEVICE, TLM_API_cudaFree);
}

TLM_EXPORT cudaError_t cudaFreeHost(void *p)
{
	return free_common(R_cudaFreeHost, p, TLM_KIND_HOST_PINNED, TLM_API_cudaFreeHost);
}

typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);
static cudaError_t free_async(unsigned idx, void *p, cudaStream_t s, uint16_t api, uint16_t fl)
{
	free_async_fn f = (free_async_fn)RT(idx);
	if (!f)
		return NOT_LOADED;
	struct tlm__rec rc;
	struct tlm__guard g;
	bool rec = tlm__enter(&g) && p &&
		   tlm__free_begin(&rc, E(.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .api = api,
					   .flags = (uint16_t)(TLM_EVF_RUNTIME | fl), .addr = (uint64_t)(uintptr_t)p,
					   .stream = (uint64_t)(uintptr_t)s, .device = TLM__DEV_OF_PTR));
	cudaError_t r = f(p, s);
	if (rec)
		tlm__free_end(&rc, r);
	tlm__leave(&g);
	return r;
}

TLM_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
	return free_async(R_cudaFreeAsync, p, s, TLM_API_cudaFreeAsync, 0);
}

TLM_EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
	return free_async(R_cudaFreeAsync_ptsz, p, s, TLM_API_cudaFreeAsync_ptsz, TLM_EVF_PTSZ);
}

#define H(n) [R_##n] = {.name = #n, .hook = (void *)n}
struct tlm__rt_fn tlm__rt[] = {
	H(cudaMalloc), H(cudaMallocPitch), H(cudaMalloc3D), H(cudaMallocManaged), H(cudaMallocHost),
	H(cudaHostAlloc), H(cudaMallocAsync), H(cudaMallocAsync_ptsz), H(cudaMallocFromPoolAsync),
	H(cudaMallocFromPoolAsync_ptsz), H(cudaFree), H(cudaFreeHost), H(cudaFreeAsync), H(cudaFreeAsync_ptsz),
};
const unsigned tlm__nrt = R_COUNT;
_Static_assert(sizeof tlm__rt / sizeof tlm__rt[0] == R_COUNT, "table complete");
