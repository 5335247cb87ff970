// SPDX-License-Identifier: MIT
/*
 * Copies and sets.
 *
 * Device memory holds what was last copied or set there, zeros where nothing
 * was written since allocation (sim_backing.c). A pointer is device memory
 * when it lies in a device region (plain and pool allocations, VMM
 * reservations, module globals); every byte of a device range must lie in a
 * live allocation or mapping, else the call fails with
 * CUDA_ERROR_INVALID_VALUE before anything is written, as the real driver
 * does. Anything else is host memory (managed and pinned memory are real host
 * memory), which the caller vouches for. Copies run at once, under sim_lock,
 * whatever the stream. Nothing here has a memory effect on the accounting.
 */
#include <string.h>

#include "sim_internal.h"

/* Copy n bytes whose ranges were checked; caller holds sim_lock. */
static CUresult copy_locked(uint64_t dst, uint64_t src, uint64_t n)
{
	while (n) {
		uint8_t *d, *s;
		uint64_t da, sa;
		CUresult r;
		if ((r = sim_backing_span(dst, &d, &da)) || (r = sim_backing_span(src, &s, &sa)))
			return r;
		uint64_t k = da < sa ? da : sa;
		if (k > n)
			k = n;
		memmove(d, s, k);
		dst += k;
		src += k;
		n -= k;
	}
	return CUDA_SUCCESS;
}

/* Rows of `width` bytes, `rows` of them at dst/src + i*pitch (2D and 3D
 * copies flatten to this); all are checked before any is copied. */
CUresult sim_copy_rows(uint64_t dst, uint64_t dpitch, uint64_t src, uint64_t spitch, uint64_t width,
		       uint64_t rows)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (width == 0 || rows == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_capture_copy(dst, dpitch, src, spitch, width, rows, &r))
		return r; /* recorded into a graph: runs at its launches */
	pthread_mutex_lock(&sim_lock);
	for (uint64_t y = 0; y < rows && !r; y++)
		if (!(r = sim_backing_check(dst + y * dpitch, width)))
			r = sim_backing_check(src + y * spitch, width);
	for (uint64_t y = 0; y < rows && !r; y++)
		r = copy_locked(dst + y * dpitch, src + y * spitch, width);
	pthread_mutex_unlock(&sim_lock);
	return r;
}

/* One contiguous copy between two addresses of either kind. */
static CUresult copy_bytes(uint64_t dst, uint64_t src, size_t n)
{
	return sim_copy_rows(dst, 0, src, 0, n, 1);
}

/* Fill bytes [p, p+n) with elements of `elem` bytes; spans split only at
 * 2 MiB boundaries, so no element is cut. Caller holds sim_lock. */
static CUresult fill(uint64_t p, uint64_t n, unsigned value, unsigned elem)
{
	while (n) {
		uint8_t *h;
		uint64_t a;
		CUresult r = sim_backing_span(p, &h, &a);
		if (r)
			return r;
		uint64_t k = a < n ? a : n;
		if (elem == 1)
			memset(h, (int)(uint8_t)value, k);
		else if (elem == 2)
			for (uint64_t i = 0; i < k / 2; i++)
				((uint16_t *)h)[i] = (uint16_t)value;
		else
			for (uint64_t i = 0; i < k / 4; i++)
				((uint32_t *)h)[i] = value;
		p += k;
		n -= k;
	}
	return CUDA_SUCCESS;
}

CUresult sim_set_rows(uint64_t dst, size_t pitch, size_t width, size_t height, unsigned value,
		      unsigned elem)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (width == 0 || height == 0)
		return CUDA_SUCCESS;
	if (!dst || (elem > 1 && dst % elem) || width > UINT64_MAX / elem)
		return CUDA_ERROR_INVALID_VALUE;
	uint64_t row = (uint64_t)width * elem;
	if (height > 1 && (pitch < row || (elem > 1 && pitch % elem) ||
			   (uint64_t)(height - 1) > (UINT64_MAX - dst - row) / pitch))
		return CUDA_ERROR_INVALID_VALUE;
	if (sim_capture_set(dst, pitch, width, height, value, elem, &r))
		return r;
	pthread_mutex_lock(&sim_lock);
	for (size_t y = 0; y < height && !r; y++)
		r = sim_backing_check(dst + y * pitch, row);
	for (size_t y = 0; y < height && !r; y++)
		r = fill(dst + y * pitch, row, value, elem);
	pthread_mutex_unlock(&sim_lock);
	return r;
}

/* Checks the stream and, while it is being captured, makes the call's copies
 * and sets be recorded (sim_graph.c); done() ends that. */
static CUresult on_stream(CUstream s)
{
	int dev;
	CUresult r = sim_stream_device(s, &dev);
	if (!r)
		sim_capture_begin_call(s);
	return r;
}

static CUresult done(CUresult r)
{
	sim_capture_end_call();
	return r;
}

/* ---- linear copies; the _ptds/_ptsz flavours are the same here ---- */

#define PT(name, suffix, proto, args)                                                              \
	CUresult sim_##name##suffix proto                                                          \
	{                                                                                          \
		return sim_##name args;                                                            \
	}                                                                                          \
	SIM_EXPORT(name##suffix)

CUresult sim_cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_bytes(dst, src, n);
}
SIM_EXPORT(cuMemcpy);
PT(cuMemcpy, _ptds, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n));

CUresult sim_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(copy_bytes(dst, src, n));
}
SIM_EXPORT(cuMemcpyAsync);
PT(cuMemcpyAsync, _ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return copy_bytes(dst, (uint64_t)(uintptr_t)src, n);
}
SIM_EXPORT(cuMemcpyHtoD_v2);
PT(cuMemcpyHtoD_v2, _ptds, (CUdeviceptr d, const void *s, size_t n), (d, s, n));

CUresult sim_cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return copy_bytes((uint64_t)(uintptr_t)dst, src, n);
}
SIM_EXPORT(cuMemcpyDtoH_v2);
PT(cuMemcpyDtoH_v2, _ptds, (void *d, CUdeviceptr s, size_t n), (d, s, n));

CUresult sim_cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy_bytes(dst, src, n);
}
SIM_EXPORT(cuMemcpyDtoD_v2);
PT(cuMemcpyDtoD_v2, _ptds, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n));

CUresult sim_cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(copy_bytes(dst, (uint64_t)(uintptr_t)src, n));
}
SIM_EXPORT(cuMemcpyHtoDAsync_v2);
PT(cuMemcpyHtoDAsync_v2, _ptsz, (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(copy_bytes((uint64_t)(uintptr_t)dst, src, n));
}
SIM_EXPORT(cuMemcpyDtoHAsync_v2);
PT(cuMemcpyDtoHAsync_v2, _ptsz, (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(copy_bytes(dst, src, n));
}
SIM_EXPORT(cuMemcpyDtoDAsync_v2);
PT(cuMemcpyDtoDAsync_v2, _ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyPeer(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n)
{
	if (!sim_ctx_valid(dc, NULL) || !sim_ctx_valid(sc, NULL))
		return CUDA_ERROR_INVALID_CONTEXT;
	return copy_bytes(dst, src, n);
}
SIM_EXPORT(cuMemcpyPeer);
PT(cuMemcpyPeer, _ptds, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n),
   (d, dc, s, sc, n));

CUresult sim_cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n,
			       CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(sim_cuMemcpyPeer(dst, dc, src, sc, n));
}
SIM_EXPORT(cuMemcpyPeerAsync);
PT(cuMemcpyPeerAsync, _ptsz,
   (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st),
   (d, dc, s, sc, n, st));

/* ---- 2D and 3D copies (layouts: sim_cuda_extra.h) ---- */

enum { MT_HOST = 1, MT_DEVICE = 2, MT_ARRAY = 3, MT_UNIFIED = 4 };

static CUresult base_of(int type, const void *host, CUdeviceptr dev, uint64_t *out)
{
	switch (type) {
	case MT_HOST:
		*out = (uint64_t)(uintptr_t)host;
		return CUDA_SUCCESS;
	case MT_DEVICE:
	case MT_UNIFIED:
		*out = dev;
		return CUDA_SUCCESS;
	case MT_ARRAY:
		return CUDA_ERROR_NOT_SUPPORTED; /* arrays are not modelled */
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static CUresult copy_3d(uint64_t dst, size_t dpitch, size_t dheight, uint64_t src, size_t spitch,
			size_t sheight, size_t width, size_t height, size_t depth)
{
	if (dheight == 0 && sheight == 0) /* 2D */
		return sim_copy_rows(dst, dpitch, src, spitch, width, height);
	for (size_t z = 0; z < depth; z++) {
		CUresult r = sim_copy_rows(dst + z * dheight * dpitch, dpitch, src + z * sheight * spitch,
				       spitch, width, height);
		if (r)
			return r;
	}
	return CUDA_SUCCESS;
}

CUresult sim_cuMemcpy2D_v2(const struct memcpy2d *p)
{
	uint64_t s, d;
	CUresult r = sim_enter(!p);
	if (r)
		return r;
	if ((r = base_of(p->srcType, p->srcHost, p->srcDevice, &s)) ||
	    (r = base_of(p->dstType, p->dstHost, p->dstDevice, &d)))
		return r;
	if ((p->height > 1 && (p->srcPitch < p->width || p->dstPitch < p->width)))
		return CUDA_ERROR_INVALID_VALUE;
	return copy_3d(d + p->dstY * p->dstPitch + p->dstX, p->dstPitch, 0,
		       s + p->srcY * p->srcPitch + p->srcX, p->srcPitch, 0, p->width, p->height, 1);
}
SIM_EXPORT(cuMemcpy2D_v2);
PT(cuMemcpy2D_v2, _ptds, (const struct memcpy2d *p), (p));

CUresult sim_cuMemcpy2DUnaligned_v2(const struct memcpy2d *p)
{
	return sim_cuMemcpy2D_v2(p);
}
SIM_EXPORT(cuMemcpy2DUnaligned_v2);
PT(cuMemcpy2DUnaligned_v2, _ptds, (const struct memcpy2d *p), (p));

CUresult sim_cuMemcpy2DAsync_v2(const struct memcpy2d *p, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(sim_cuMemcpy2D_v2(p));
}
SIM_EXPORT(cuMemcpy2DAsync_v2);
PT(cuMemcpy2DAsync_v2, _ptsz, (const struct memcpy2d *p, CUstream s), (p, s));

CUresult sim_cuMemcpy3D_v2(const struct memcpy3d *p)
{
	uint64_t s, d;
	CUresult r = sim_enter(!p);
	if (r)
		return r;
	if ((r = base_of(p->srcType, p->srcHost, p->srcDevice, &s)) ||
	    (r = base_of(p->dstType, p->dstHost, p->dstDevice, &d)))
		return r;
	size_t sh = p->srcHeight ? p->srcHeight : p->height, dh = p->dstHeight ? p->dstHeight : p->height;
	return copy_3d(d + (p->dstZ * dh + p->dstY) * p->dstPitch + p->dstX, p->dstPitch, dh,
		       s + (p->srcZ * sh + p->srcY) * p->srcPitch + p->srcX, p->srcPitch, sh, p->width,
		       p->height, p->depth);
}
SIM_EXPORT(cuMemcpy3D_v2);
PT(cuMemcpy3D_v2, _ptds, (const struct memcpy3d *p), (p));

CUresult sim_cuMemcpy3DAsync_v2(const struct memcpy3d *p, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : done(sim_cuMemcpy3D_v2(p));
}
SIM_EXPORT(cuMemcpy3DAsync_v2);
PT(cuMemcpy3DAsync_v2, _ptsz, (const struct memcpy3d *p, CUstream s), (p, s));

/* ---- sets ---- */

#define SETS(bits, T, elem)                                                                        \
	CUresult sim_cuMemsetD##bits##_v2(CUdeviceptr d, T v, size_t n)                            \
	{                                                                                          \
		return sim_set_rows(d, 0, n, 1, v, elem);                                             \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD##bits##_v2);                                                          \
	PT(cuMemsetD##bits##_v2, _ptds, (CUdeviceptr d, T v, size_t n), (d, v, n));                \
	CUresult sim_cuMemsetD##bits##Async(CUdeviceptr d, T v, size_t n, CUstream s)              \
	{                                                                                          \
		CUresult r = on_stream(s);                                                         \
		return r ? r : done(sim_set_rows(d, 0, n, 1, v, elem));                               \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD##bits##Async);                                                        \
	PT(cuMemsetD##bits##Async, _ptsz, (CUdeviceptr d, T v, size_t n, CUstream s), (d, v, n, s)); \
	CUresult sim_cuMemsetD2D##bits##_v2(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h)  \
	{                                                                                          \
		return sim_set_rows(d, pitch, w, h, v, elem);                                         \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD2D##bits##_v2);                                                        \
	PT(cuMemsetD2D##bits##_v2, _ptds, (CUdeviceptr d, size_t p, T v, size_t w, size_t h),      \
	   (d, p, v, w, h));                                                                       \
	CUresult sim_cuMemsetD2D##bits##Async(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, \
					      CUstream s)                                          \
	{                                                                                          \
		CUresult r = on_stream(s);                                                         \
		return r ? r : done(sim_set_rows(d, pitch, w, h, v, elem));                           \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD2D##bits##Async);                                                      \
	PT(cuMemsetD2D##bits##Async, _ptsz,                                                        \
	   (CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s))

SETS(8, unsigned char, 1);
SETS(16, unsigned short, 2);
SETS(32, unsigned int, 4);
