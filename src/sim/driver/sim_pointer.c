// SPDX-License-Identifier: MIT
/*
 * Pointer queries and host-memory hints: cuPointerGetAttribute(s),
 * cuMemGetAddressRange, cuMemHostGetDevicePointer, registration, prefetch
 * and advice. Device blocks report their whole-page extent (the accounting's
 * unit); managed and pinned blocks their mapped extent. Hints change nothing.
 */
#include <string.h>

#include "sim_internal.h"
#include "sim_vmm.h"

struct ptr_info {
	int kind, dev;
	uint64_t base, size;
	bool legacy_ipc;      /* a cuMemAlloc block (cuIpcGetMemHandle takes it) */
	uint64_t vmm_handles; /* a VMM mapping: its handle's requestedHandleTypes */
};

static CUresult lookup(CUdeviceptr p, struct ptr_info *info)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	*info = (struct ptr_info){0};
	info->kind = sim_ptr_lookup(p, &info->base, &info->size);
	if (info->kind == SIM_PTR_DEVICE) {
		info->dev = sim_va_device(info->base);
		pthread_mutex_lock(&sim_lock);
		info->legacy_ipc = !sim_live_pooled(info->base);
		pthread_mutex_unlock(&sim_lock);
		return CUDA_SUCCESS;
	}
	if (info->kind == SIM_PTR_NONE) {
		/* a VMM mapping: device memory of its handle's device */
		pthread_mutex_lock(&sim_lock);
		struct vmm_handle *h = sim_vmm_mapping(p, &info->base, &info->size);
		if (h) {
			info->kind = SIM_PTR_DEVICE;
			info->dev = h->dev;
			info->vmm_handles = (uint64_t)h->prop.requestedHandleTypes;
		}
		pthread_mutex_unlock(&sim_lock);
		return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	}
	int cur;
	if (!sim_current_device(&cur))
		info->dev = cur;
	return CUDA_SUCCESS;
}

/* One attribute into data; CUDA_ERROR_INVALID_VALUE for ones not modelled. */
static CUresult attribute(void *data, int attr, CUdeviceptr p, const struct ptr_info *in)
{
	bool dev = in->kind == SIM_PTR_DEVICE;
	switch (attr) {
	case 1: /* CONTEXT */
		*(CUcontext *)data = sim_primary_ctx(in->dev);
		return CUDA_SUCCESS;
	case 2: /* MEMORY_TYPE: CU_MEMORYTYPE_DEVICE for device and managed */
		*(unsigned *)data = in->kind == SIM_PTR_HOST ? 1 : 2;
		return CUDA_SUCCESS;
	case 3: /* DEVICE_POINTER */
		*(CUdeviceptr *)data = p;
		return CUDA_SUCCESS;
	case 4: /* HOST_POINTER */
		if (dev)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = (void *)(uintptr_t)p;
		return CUDA_SUCCESS;
	case 6: /* SYNC_MEMOPS */
	case 15: /* IS_GPU_DIRECT_RDMA_CAPABLE */
		*(int *)data = 0;
		return CUDA_SUCCESS;
	case 10: /* IS_LEGACY_CUDA_IPC_CAPABLE */
		*(int *)data = in->legacy_ipc;
		return CUDA_SUCCESS;
	case 7:  /* BUFFER_ID */
	case 20: /* MEMORY_BLOCK_ID */
		*(unsigned long long *)data = in->base;
		return CUDA_SUCCESS;
	case 8: /* IS_MANAGED */
		*(int *)data = in->kind == SIM_PTR_MANAGED;
		return CUDA_SUCCESS;
	case 9: /* DEVICE_ORDINAL */
		*(int *)data = in->dev;
		return CUDA_SUCCESS;
	case 11: /* RANGE_START_ADDR */
	case 19: /* MAPPING_BASE_ADDR */
		*(void **)data = (void *)(uintptr_t)in->base;
		return CUDA_SUCCESS;
	case 12: /* RANGE_SIZE */
	case 18: /* MAPPING_SIZE */
		*(size_t *)data = in->size;
		return CUDA_SUCCESS;
	case 13: /* MAPPED */
		*(int *)data = 1;
		return CUDA_SUCCESS;
	case 14: /* ALLOWED_HANDLE_TYPES */
		*(unsigned long long *)data = in->vmm_handles;
		return CUDA_SUCCESS;
	case 16: /* ACCESS_FLAGS: read-write */
		*(int *)data = 3;
		return CUDA_SUCCESS;
	case 17: /* MEMPOOL_HANDLE: not reported */
		*(void **)data = NULL;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult sim_cuPointerGetAttribute(void *data, int attr, CUdeviceptr p)
{
	struct ptr_info in;
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = lookup(p, &in);
	return r ? r : attribute(data, attr, p, &in);
}
SIM_EXPORT(cuPointerGetAttribute);

/* Unlike the single query, an unknown pointer is not an error: every
 * attribute gets its null value (memory type 0), as documented. */
CUresult sim_cuPointerGetAttributes(unsigned n, int *attrs, void **data, CUdeviceptr p)
{
	struct ptr_info in;
	if (!attrs || !data)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = lookup(p, &in);
	if (r == CUDA_ERROR_NOT_INITIALIZED)
		return r;
	for (unsigned i = 0; i < n; i++) {
		if (!data[i])
			continue;
		if (r || attribute(data[i], attrs[i], p, &in)) {
			/* the widest attribute is 8 bytes; sizes below match each */
			size_t w = (attrs[i] == 2 || attrs[i] == 6 || attrs[i] == 8 || attrs[i] == 9 ||
				    attrs[i] == 10 || attrs[i] == 13 || attrs[i] == 15 || attrs[i] == 16)
					   ? 4
					   : 8;
			memset(data[i], 0, w);
			if (attrs[i] == 9)
				*(int *)data[i] = -2; /* CU_DEVICE_INVALID */
		}
	}
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuPointerGetAttributes);

CUresult sim_cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	struct ptr_info in;
	CUresult r = lookup(p, &in);
	if (r)
		return r == CUDA_ERROR_INVALID_VALUE ? CUDA_ERROR_NOT_FOUND : r;
	if (base)
		*base = in.base;
	if (size)
		*size = in.size;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemGetAddressRange_v2);

CUresult sim_cuMemHostGetDevicePointer_v2(CUdeviceptr *dp, void *host, unsigned flags)
{
	struct ptr_info in;
	if (!dp || flags)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = lookup((uint64_t)(uintptr_t)host, &in);
	if (r)
		return r;
	*dp = (uint64_t)(uintptr_t)host; /* unified addressing */
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemHostGetDevicePointer_v2);

CUresult sim_cuMemHostGetFlags(unsigned *flags, void *host)
{
	struct ptr_info in;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = lookup((uint64_t)(uintptr_t)host, &in);
	if (r)
		return r;
	*flags = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuMemHostGetFlags);

/* Registration pins nothing here; the range becomes host memory to the
 * pointer queries, as a pinned allocation. */
CUresult sim_cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	if (!p || !n || (flags & ~0xfu)) /* PORTABLE, DEVICEMAP, IOMEMORY, READ_ONLY */
		return CUDA_ERROR_INVALID_VALUE;
	return sim_host_register((uint64_t)(uintptr_t)p, n);
}
SIM_EXPORT(cuMemHostRegister_v2);

CUresult sim_cuMemHostUnregister(void *p)
{
	CUresult r = sim_enter(false);
	if (r)
		return r;
	return p ? sim_host_unregister((uint64_t)(uintptr_t)p) : CUDA_ERROR_INVALID_VALUE;
}
SIM_EXPORT(cuMemHostUnregister);

/* Managed memory is host memory here: attaching changes nothing, but the
 * arguments are checked: the start of a managed allocation, a length within
 * it (0: all of it), a known flag. */
CUresult sim_cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t len, unsigned flags)
{
	int dev;
	uint64_t base, size;
	CUresult r = sim_stream_device(s, &dev);
	if (r)
		return r;
	if (sim_ptr_lookup(p, &base, &size) != SIM_PTR_MANAGED || base != p ||
	    len > size || (flags != 1 && flags != 2 && flags != 4))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuStreamAttachMemAsync);

CUresult sim_cuStreamAttachMemAsync_ptsz(CUstream s, CUdeviceptr p, size_t len, unsigned flags)
{
	return sim_cuStreamAttachMemAsync(s ? s : CU_STREAM_PER_THREAD, p, len, flags);
}
SIM_EXPORT(cuStreamAttachMemAsync_ptsz);

CUresult sim_cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dst, CUstream s)
{
	int dev;
	(void)p, (void)n, (void)dst;
	return sim_stream_device(s, &dev);
}
SIM_EXPORT(cuMemPrefetchAsync);

CUresult sim_cuMemPrefetchAsync_ptsz(CUdeviceptr p, size_t n, CUdevice dst, CUstream s)
{
	return sim_cuMemPrefetchAsync(p, n, dst, s);
}
SIM_EXPORT(cuMemPrefetchAsync_ptsz);

struct mem_location {
	int type, id;
};

CUresult sim_cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, struct mem_location loc, unsigned flags,
				   CUstream s)
{
	int dev;
	(void)p, (void)n, (void)loc, (void)flags;
	return sim_stream_device(s, &dev);
}
SIM_EXPORT(cuMemPrefetchAsync_v2);

CUresult sim_cuMemPrefetchAsync_v2_ptsz(CUdeviceptr p, size_t n, struct mem_location loc,
					unsigned flags, CUstream s)
{
	return sim_cuMemPrefetchAsync_v2(p, n, loc, flags, s);
}
SIM_EXPORT(cuMemPrefetchAsync_v2_ptsz);

CUresult sim_cuMemAdvise(CUdeviceptr p, size_t n, int advice, CUdevice dev)
{
	(void)p, (void)n, (void)advice, (void)dev;
	return sim_enter(false);
}
SIM_EXPORT(cuMemAdvise);

CUresult sim_cuMemAdvise_v2(CUdeviceptr p, size_t n, int advice, struct mem_location loc)
{
	(void)p, (void)n, (void)advice, (void)loc;
	return sim_enter(false);
}
SIM_EXPORT(cuMemAdvise_v2);
