/* SPDX-License-Identifier: MIT */
/*
 * driver_query.c - the few driver calls the recorder itself makes: which
 * device is current (cuCtxGetDevice, a thread-local read in the driver) and,
 * for a failed allocation only, how much device memory was free.
 */
#include <stdatomic.h>

#include "shim/shim.h"

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);

static _Atomic(ctx_get_device_fn) p_get_device;
static _Atomic(mem_get_info_fn) p_mem_info;

int16_t tlm__current_device(void)
{
	ctx_get_device_fn f = atomic_load_explicit(&p_get_device, memory_order_acquire);
	if (TLM_UNLIKELY(!f)) {
		f = (ctx_get_device_fn)tlm__libcuda_sym("cuCtxGetDevice");
		if (!f)
			return -1;
		atomic_store_explicit(&p_get_device, f, memory_order_release);
	}
	CUdevice d = -1;
	if (f(&d) != CUDA_SUCCESS)
		return -1;
	return (int16_t)d;
}

uint64_t tlm__device_free_bytes(void)
{
	mem_get_info_fn f = atomic_load_explicit(&p_mem_info, memory_order_acquire);
	if (!f) {
		f = (mem_get_info_fn)tlm__libcuda_sym("cuMemGetInfo_v2");
		if (!f)
			return 0;
		atomic_store_explicit(&p_mem_info, f, memory_order_release);
	}
	size_t fr = 0, total = 0;
	if (f(&fr, &total) != CUDA_SUCCESS)
		return 0;
	return fr;
}
