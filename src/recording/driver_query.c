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

#include "common/cuda_abi.h"
#include "recording/driver_query.h"
#include "recording/realsym.h"

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

/* ---- device memory samples (devmem.h) ---- */

typedef CUresult (*primary_state_fn)(CUdevice, unsigned *, int *);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*primary_release_fn)(CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*pci_bus_id_fn)(char *, int, CUdevice);
static _Atomic(void *) p_pstate, p_pretain, p_prelease, p_push, p_pop, p_pci;

static bool mem_info_here(uint64_t *free_b, uint64_t *total)
{
	mem_get_info_fn f = (mem_get_info_fn)driver_fn(&p_mem_info, "cuMemGetInfo_v2", "cuMemGetInfo", 3020);
	size_t fr = 0, tot = 0;
	if (!f || f(&fr, &tot) != CUDA_SUCCESS)
		return false;
	*free_b = fr;
	*total = tot;
	return true;
}

/* cuMemGetInfo answers for the current context's device. Another device is
 * asked through its primary context, only when that is active already (the
 * driver then only counts one more reference, and nothing is created), and
 * the thread's context stack is left as it was. */
bool tlm__device_mem_info(int16_t device, uint64_t *free_b, uint64_t *total)
{
	int16_t cur = tlm__current_device();
	if (device < 0)
		return false;
	if (device == cur)
		return mem_info_here(free_b, total);
	device_get_fn get = (device_get_fn)driver_fn(&p_dev_get, "cuDeviceGet", "cuDeviceGet", 2000);
	primary_state_fn st = (primary_state_fn)driver_fn(&p_pstate, "cuDevicePrimaryCtxGetState",
							  "cuDevicePrimaryCtxGetState", 7000);
	primary_retain_fn ret = (primary_retain_fn)driver_fn(&p_pretain, "cuDevicePrimaryCtxRetain",
							     "cuDevicePrimaryCtxRetain", 7000);
	primary_release_fn rel = (primary_release_fn)driver_fn(&p_prelease, "cuDevicePrimaryCtxRelease_v2",
							       "cuDevicePrimaryCtxRelease", 11000);
	ctx_push_fn push = (ctx_push_fn)driver_fn(&p_push, "cuCtxPushCurrent_v2", "cuCtxPushCurrent", 4000);
	ctx_pop_fn pop = (ctx_pop_fn)driver_fn(&p_pop, "cuCtxPopCurrent_v2", "cuCtxPopCurrent", 4000);
	CUdevice d = 0;
	unsigned fl = 0;
	int active = 0;
	CUcontext ctx = NULL, popped = NULL;
	if (!get || !st || !ret || !rel || !push || !pop || get(&d, device) != CUDA_SUCCESS ||
	    st(d, &fl, &active) != CUDA_SUCCESS || !active || ret(&ctx, d) != CUDA_SUCCESS)
		return false;
	bool ok = false;
	if (push(ctx) == CUDA_SUCCESS) {
		ok = mem_info_here(free_b, total);
		pop(&popped);
	}
	rel(d);
	return ok;
}

bool tlm__device_pci_bus_id(int device, char *buf, int len)
{
	device_get_fn get = (device_get_fn)driver_fn(&p_dev_get, "cuDeviceGet", "cuDeviceGet", 2000);
	pci_bus_id_fn f = (pci_bus_id_fn)driver_fn(&p_pci, "cuDeviceGetPCIBusId", "cuDeviceGetPCIBusId", 4010);
	CUdevice d = 0;
	return get && f && get(&d, device) == CUDA_SUCCESS && f(buf, len, d) == CUDA_SUCCESS;
}
