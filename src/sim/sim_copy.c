// SPDX-License-Identifier: MIT
/*
 * Copies, sets and pointer queries.
 *
 * What a read of device memory returns: zeros. Device memory has no backing
 * here (device pointers are numbers, docs/simulated-device.md), so a copy or
 * set whose destination is device memory changes nothing, a copy from device
 * memory to host memory writes zeros there, and host-to-host copies (managed
 * and pinned memory are real host memory) copy for real. A pointer is device
 * memory when it lies in a device region (plain and pool allocations, VMM
 * reservations, module globals); anything else is host memory, which the
 * caller vouches for, as with the real driver. Nothing here has a memory
 * effect on the accounting.
 */
#include <string.h>

#include "sim_internal.h"

static bool is_device(uint64_t p)
{
	return (p >= SIM_VA_BASE && p < SIM_VA_BASE + SIM_MAX_DEVICES * SIM_VA_STRIDE) ||
	       (p >= SIM_VMM_VA_BASE && p < SIM_VMM_VA_BASE + SIM_VMM_VA_SIZE) || sim_is_global(p);
}

/* One contiguous copy between two addresses of either kind. */
static CUresult copy_bytes(uint64_t dst, uint64_t src, size_t n)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	bool dd = is_device(dst), sd = is_device(src);
	if (dd)
		return CUDA_SUCCESS; /* device memory keeps nothing */
	if (sd)
		memset((void *)(uintptr_t)dst, 0, n); /* device memory reads as zeros */
	else
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

static CUresult set_bytes(uint64_t dst, size_t pitch, size_t width, size_t height, unsigned value,
			  unsigned elem)
{
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (width == 0 || height == 0)
		return CUDA_SUCCESS;
	if (!dst || (elem > 1 && dst % elem))
		return CUDA_ERROR_INVALID_VALUE;
	if (is_device(dst))
		return CUDA_SUCCESS;
	for (size_t y = 0; y < height; y++) {
		uint8_t *row = (uint8_t *)(uintptr_t)(dst + y * pitch);
		for (size_t x = 0; x < width; x++) {
			if (elem == 1)
				row[x] = (uint8_t)value;
			else if (elem == 2)
				((uint16_t *)row)[x] = (uint16_t)value;
			else
				((uint32_t *)row)[x] = value;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult on_stream(CUstream s)
{
	int dev;
	return sim_stream_device(s, &dev);
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
	return r ? r : copy_bytes(dst, src, n);
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
	return r ? r : copy_bytes(dst, (uint64_t)(uintptr_t)src, n);
}
SIM_EXPORT(cuMemcpyHtoDAsync_v2);
PT(cuMemcpyHtoDAsync_v2, _ptsz, (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : copy_bytes((uint64_t)(uintptr_t)dst, src, n);
}
SIM_EXPORT(cuMemcpyDtoHAsync_v2);
PT(cuMemcpyDtoHAsync_v2, _ptsz, (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st));

CUresult sim_cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	CUresult r = on_stream(s);
	return r ? r : copy_bytes(dst, src, n);
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
	return r ? r : sim_cuMemcpyPeer(dst, dc, src, sc, n);
}
SIM_EXPORT(cuMemcpyPeerAsync);
PT(cuMemcpyPeerAsync, _ptsz,
   (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st),
   (d, dc, s, sc, n, st));

/* ---- 2D and 3D copies (CUDA_MEMCPY2D / CUDA_MEMCPY3D layouts) ---- */

enum { MT_HOST = 1, MT_DEVICE = 2, MT_ARRAY = 3, MT_UNIFIED = 4 };

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
	for (size_t z = 0; z < depth; z++)
		for (size_t y = 0; y < height; y++) {
			CUresult r = copy_bytes(dst + (z * dheight + y) * dpitch,
						src + (z * sheight + y) * spitch, width);
			if (r)
				return r;
		}
	return CUDA_SUCCESS;
}

CUresult sim_cuMemcpy2D_v2(const struct memcpy2d *p)
{
	uint64_t s, d;
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
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
	return r ? r : sim_cuMemcpy2D_v2(p);
}
SIM_EXPORT(cuMemcpy2DAsync_v2);
PT(cuMemcpy2DAsync_v2, _ptsz, (const struct memcpy2d *p, CUstream s), (p, s));

CUresult sim_cuMemcpy3D_v2(const struct memcpy3d *p)
{
	uint64_t s, d;
	CUresult r = sim_check_init();
	if (r)
		return r;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
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
	return r ? r : sim_cuMemcpy3D_v2(p);
}
SIM_EXPORT(cuMemcpy3DAsync_v2);
PT(cuMemcpy3DAsync_v2, _ptsz, (const struct memcpy3d *p, CUstream s), (p, s));

/* ---- sets ---- */

#define SETS(bits, T, elem)                                                                        \
	CUresult sim_cuMemsetD##bits##_v2(CUdeviceptr d, T v, size_t n)                            \
	{                                                                                          \
		return set_bytes(d, 0, n, 1, v, elem);                                             \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD##bits##_v2);                                                          \
	PT(cuMemsetD##bits##_v2, _ptds, (CUdeviceptr d, T v, size_t n), (d, v, n));                \
	CUresult sim_cuMemsetD##bits##Async(CUdeviceptr d, T v, size_t n, CUstream s)              \
	{                                                                                          \
		CUresult r = on_stream(s);                                                         \
		return r ? r : set_bytes(d, 0, n, 1, v, elem);                                     \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD##bits##Async);                                                        \
	PT(cuMemsetD##bits##Async, _ptsz, (CUdeviceptr d, T v, size_t n, CUstream s), (d, v, n, s)); \
	CUresult sim_cuMemsetD2D##bits##_v2(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h)  \
	{                                                                                          \
		return set_bytes(d, pitch, w, h, v, elem);                                         \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD2D##bits##_v2);                                                        \
	PT(cuMemsetD2D##bits##_v2, _ptds, (CUdeviceptr d, size_t p, T v, size_t w, size_t h),      \
	   (d, p, v, w, h));                                                                       \
	CUresult sim_cuMemsetD2D##bits##Async(CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, \
					      CUstream s)                                          \
	{                                                                                          \
		CUresult r = on_stream(s);                                                         \
		return r ? r : set_bytes(d, pitch, w, h, v, elem);                                 \
	}                                                                                          \
	SIM_EXPORT(cuMemsetD2D##bits##Async);                                                      \
	PT(cuMemsetD2D##bits##Async, _ptsz,                                                        \
	   (CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream s), (d, p, v, w, h, s))

SETS(8, unsigned char, 1);
SETS(16, unsigned short, 2);
SETS(32, unsigned int, 4);
