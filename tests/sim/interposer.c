// SPDX-License-Identifier: MIT
/*
 * A stand-in for a preloaded profiler: defines some driver entry points under
 * their ABI names, counts calls and forwards with dlsym(RTLD_NEXT). Linked
 * into test_procaddr ahead of the simulated driver, so the executable's own
 * calls bind here; the simulator's internal calls and the pointers it hands
 * out must never land here.
 */
#include <dlfcn.h>

#include "sim_driver.h"

__attribute__((visibility("default"))) int interposer_calls;

#define FORWARD(name, params, args)                                                                \
	CUresult name params                                                                       \
	{                                                                                          \
		static __typeof__(&name) next;                                                     \
		if (!next)                                                                         \
			*(void **)&next = dlsym(RTLD_NEXT, #name);                                 \
		__atomic_add_fetch(&interposer_calls, 1, __ATOMIC_RELAXED);                        \
		return next args;                                                                  \
	}

FORWARD(cuMemAlloc_v2, (CUdeviceptr * p, size_t n), (p, n))
FORWARD(cuMemFree_v2, (CUdeviceptr p), (p))
FORWARD(cuMemHostAlloc, (void **p, size_t n, unsigned f), (p, n, f))
FORWARD(cuCtxGetDevice_v2, (CUdevice * d, CUcontext c), (d, c))
FORWARD(cuCtxSynchronize_v2, (CUcontext c), (c))
FORWARD(cuStreamSynchronize, (CUstream s), (s))
FORWARD(cuGetProcAddress_v2,
	(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *st),
	(s, p, v, f, st))
