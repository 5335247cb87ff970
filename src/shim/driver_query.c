/* SPDX-License-Identifier: MIT */
/*
 * driver_query.c - the few driver calls the recorder itself makes: which
 * device is current (cuCtxGetDevice, a thread-local read in the driver), the
 * device a pointer lives on (for a free made before any context is current,
 * e.g. a new thread's first cudaFree, which the runtime binds lazily),
 * for a failed allocation only, how much device memory was free, and once
 * per device with allocator blocks, its size.
 *
 * Each entry point is looked up once: by name in the loaded libcuda.so.1,
 * else through its cuGetProcAddress (a driver that does not export the name,
 * as an old or stand-in driver may not). A name the loaded driver lacks both
 * ways is remembered as missing, so no event repeats the failed lookup; while
 * no libcuda.so.1 is loaded at all nothing is remembered.
 */
#include <stdatomic.h>

#include "shim/shim.h"

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);
typedef CUresult (*pointer_attr_fn)(void *, int, CUdeviceptr);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*total_mem_fn)(size_t *, CUdevice);

#define MISSING ((void *)1)
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

static _Atomic(void *) p_get_device, p_mem_info, p_ptr_attr, p_dev_get, p_total_mem;

/* The driver's entry point `abi` (base name `base`, ABI from `version`). */
static void *driver_fn(_Atomic(void *) *slot, const char *abi, const char *base, int version)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);
	if (TLM_LIKELY(f != NULL))
		return f == MISSING ? NULL : f;
	f = tlm__libcuda_sym(abi);
	if (!f) {
		gpa_fn gpa = (gpa_fn)tlm__libcuda_sym("cuGetProcAddress");
		void *p = NULL;
		if (gpa && gpa(base, &p, version, 0) == CUDA_SUCCESS)
			f = p;
		else if (!gpa && !tlm__libcuda_sym("cuInit"))
			return NULL; /* no driver loaded yet: ask again later */
	}
	atomic_store_explicit(slot, f ? f : MISSING, memory_order_release);
	return f;
}

int16_t tlm__current_device(void)
{
	ctx_get_device_fn f = (ctx_get_device_fn)driver_fn(&p_get_device, "cuCtxGetDevice", "cuCtxGetDevice", 2000);
	CUdevice d = -1;
	if (!f || f(&d) != CUDA_SUCCESS)
		return -1;
	return (int16_t)d;
}

int16_t tlm__free_device(uint64_t ptr)
{
	int16_t d = tlm__current_device();
	if (d >= 0 || !ptr)
		return d;
	pointer_attr_fn f = (pointer_attr_fn)driver_fn(&p_ptr_attr, "cuPointerGetAttribute", "cuPointerGetAttribute", 4000);
	int ord = -1;
	if (!f || f(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr) != CUDA_SUCCESS)
		return -1;
	return (int16_t)ord;
}

uint64_t tlm__device_free_bytes(void)
{
	mem_get_info_fn f = (mem_get_info_fn)driver_fn(&p_mem_info, "cuMemGetInfo_v2", "cuMemGetInfo", 3020);
	size_t fr = 0, total = 0;
	if (!f || f(&fr, &total) != CUDA_SUCCESS)
		return 0;
	return fr;
}

uint64_t tlm__device_total_bytes(int16_t ordinal)
{
	device_get_fn g = (device_get_fn)driver_fn(&p_dev_get, "cuDeviceGet", "cuDeviceGet", 2000);
	total_mem_fn f = (total_mem_fn)driver_fn(&p_total_mem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem", 3020);
	CUdevice d = 0;
	size_t total = 0;
	if (!g || !f || g(&d, ordinal) != CUDA_SUCCESS || f(&total, d) != CUDA_SUCCESS)
		return 0;
	return total;
}
