// SPDX-License-Identifier: MIT
/*
 * Older ABI flavours that libraries still resolve by name (libcublasLt asks
 * dlsym for cuCtxPopCurrent, cuDevicePrimaryCtxRelease, ...) and that
 * cuGetProcAddress hands out for old versions. Each behaves as the flavour
 * that replaced it: the CUDA 4.0 context calls and the CUDA 7.0 primary
 * context calls changed only their symbol, not their meaning, on 64-bit
 * hosts. The pool and memory-pool-by-device queries are here too.
 */
#include "sim_internal.h"

CUresult sim_cuCtxPopCurrent(CUcontext *pctx)
{
	return sim_cuCtxPopCurrent_v2(pctx);
}
SIM_EXPORT(cuCtxPopCurrent);

CUresult sim_cuCtxPushCurrent(CUcontext ctx)
{
	return sim_cuCtxPushCurrent_v2(ctx);
}
SIM_EXPORT(cuCtxPushCurrent);

CUresult sim_cuCtxDestroy(CUcontext ctx)
{
	return sim_cuCtxDestroy_v2(ctx);
}
SIM_EXPORT(cuCtxDestroy);

CUresult sim_cuStreamDestroy(CUstream s)
{
	return sim_cuStreamDestroy_v2(s);
}
SIM_EXPORT(cuStreamDestroy);

CUresult sim_cuEventDestroy(void *ev);
CUresult sim_cuEventDestroy_v2(void *ev);
CUresult sim_cuEventDestroy(void *ev)
{
	return sim_cuEventDestroy_v2(ev);
}
SIM_EXPORT(cuEventDestroy);

CUresult sim_cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return sim_cuDevicePrimaryCtxRelease_v2(dev);
}
SIM_EXPORT(cuDevicePrimaryCtxRelease);

CUresult sim_cuDevicePrimaryCtxReset_v2(CUdevice dev);
CUresult sim_cuDevicePrimaryCtxReset(CUdevice dev)
{
	return sim_cuDevicePrimaryCtxReset_v2(dev);
}
SIM_EXPORT(cuDevicePrimaryCtxReset);

CUresult sim_cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned flags);
CUresult sim_cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned flags)
{
	return sim_cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
SIM_EXPORT(cuDevicePrimaryCtxSetFlags);
