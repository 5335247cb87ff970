// SPDX-License-Identifier: MIT
/*
 * The runtime double's error names and texts (cudaGetErrorString,
 * cudaGetErrorName), as NVIDIA's runtime spells them; an unknown code is
 * "unrecognized error code", as there.
 */
#include <stddef.h>

#include "sim_runtime.h"

static const struct {
	cudaError_t code;
	const char *name, *text;
} rt_errors[] = {
	{cudaSuccess, "cudaSuccess", "no error"},
	{cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
	{cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
	{cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
	{cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
	 "CUDA driver version is insufficient for CUDA runtime version"},
	{cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
	{cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
	{201, "cudaErrorDeviceUninitialized", "invalid device context"},
	{208, "cudaErrorAlreadyMapped", "resource already mapped"},
	{cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
	{cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
	{cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
};

static int rt_error(cudaError_t e)
{
	for (size_t i = 0; i < sizeof(rt_errors) / sizeof(rt_errors[0]); i++)
		if (rt_errors[i].code == e)
			return (int)i;
	return -1;
}

const char *cudaGetErrorString(cudaError_t error)
{
	int i = rt_error(error);
	return i < 0 ? "unrecognized error code" : rt_errors[i].text;
}

const char *cudaGetErrorName(cudaError_t error)
{
	int i = rt_error(error);
	return i < 0 ? "unrecognized error code" : rt_errors[i].name;
}
