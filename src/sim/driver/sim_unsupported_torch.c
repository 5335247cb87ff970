// SPDX-License-Identifier: MIT
/*
 * Entry points PyTorch's c10 DriverAPI resolves at start-up (through
 * cudaGetDriverEntryPointByVersion) that the simulator does not model: green
 * contexts, driver logs, multicast objects, shareable handles of VMM memory,
 * stream memory operations. A current driver has them all, and the real
 * runtime leaves a sticky cudaErrorSymbolNotFound behind when one is missing,
 * which the caching allocator's next cudaGetLastError() check turns into an
 * exception. So each exists and answers CUDA_ERROR_NOT_SUPPORTED without
 * touching its arguments (TLM_SIM_LOG_UNKNOWN=1 says which was called).
 * None has a memory effect. Kept apart from sim_unsupported.c: these are the
 * ones the real-PyTorch tests (tests/torch/real) need.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

static CUresult torch_unsupported(const char *name)
{
	const char *e = getenv("TLM_SIM_LOG_UNKNOWN");
	if (e && e[0] == '1')
		fprintf(stderr, "tlm-sim: %s called: not modelled\n", name);
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* Arguments are not declared: the callee never reads them, and the caller
 * cleans up its own under the x86-64 and AArch64 calling conventions. */
#define UNSUPPORTED(name)                                                                          \
	CUresult sim_##name(void);                                                                 \
	CUresult sim_##name(void)                                                                  \
	{                                                                                          \
		return torch_unsupported(#name);                                                   \
	}                                                                                          \
	SIM_EXPORT(name)

UNSUPPORTED(cuCtxFromGreenCtx);
UNSUPPORTED(cuDevResourceGenerateDesc);
UNSUPPORTED(cuDevSmResourceSplitByCount);
UNSUPPORTED(cuDeviceGetDevResource);
UNSUPPORTED(cuGreenCtxCreate);
UNSUPPORTED(cuGreenCtxDestroy);
UNSUPPORTED(cuGreenCtxStreamCreate);
UNSUPPORTED(cuLogsRegisterCallback);
UNSUPPORTED(cuLogsUnregisterCallback);
UNSUPPORTED(cuMemExportToShareableHandle);
UNSUPPORTED(cuMemGetAllocationPropertiesFromHandle);
UNSUPPORTED(cuMemImportFromShareableHandle);
UNSUPPORTED(cuMemRetainAllocationHandle);
UNSUPPORTED(cuMulticastAddDevice);
UNSUPPORTED(cuMulticastBindMem);
UNSUPPORTED(cuMulticastUnbind);
UNSUPPORTED(cuStreamWriteValue32_v2);
UNSUPPORTED(cuStreamWriteValue32_v2_ptsz);
