// SPDX-License-Identifier: MIT
/*
 * Graph memory's figures: cuDeviceGetGraphMemAttribute,
 * cuDeviceSetGraphMemAttribute, cuDeviceGraphMemTrim. The simulator models no
 * graph memory node (sim_graph.c refuses allocation while capturing), so no
 * graph memory exists: every figure is 0. PyTorch's
 * cudaMallocAsync backend reads them for torch.cuda.memory_stats(), which
 * fails without them. No memory effect.
 */
#include "sim_internal.h"

/* CUgraphMem_attribute 0..3: used current/high, reserved current/high, each
 * a cuuint64_t; the highs can be reset with 0. */
CUresult sim_cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult sim_cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value)
{
	CUresult r = sim_enter_device(!value || attr < 0 || attr > 3, device);
	if (r)
		return r;
	*(uint64_t *)value = 0;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceGetGraphMemAttribute);

CUresult sim_cuDeviceSetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult sim_cuDeviceSetGraphMemAttribute(CUdevice device, int attr, void *value)
{
	CUresult r = sim_enter_device(
		!value || (attr != 1 && attr != 3) || *(const uint64_t *)value != 0, device);
	if (r)
		return r;
	return CUDA_SUCCESS;
}
SIM_EXPORT(cuDeviceSetGraphMemAttribute);

CUresult sim_cuDeviceGraphMemTrim(CUdevice device);
CUresult sim_cuDeviceGraphMemTrim(CUdevice device)
{
	return sim_enter_device(false, device);
}
SIM_EXPORT(cuDeviceGraphMemTrim);
