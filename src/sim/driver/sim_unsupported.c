// SPDX-License-Identifier: MIT
/*
 * Entry points the simulator exports but does not model. Libraries resolve
 * them by name or through cuGetProcAddress at start-up and fail to start
 * when one is missing (libcublasLt's plain dlsym of about 90 names; the real
 * runtime leaves a sticky cudaErrorSymbolNotFound behind for one that
 * PyTorch's c10 DriverAPI asks for, which the caching allocator's next
 * cudaGetLastError() check turns into an exception). So each exists and
 * answers CUDA_ERROR_NOT_SUPPORTED without touching its arguments; with
 * TLM_SIM_LOG_UNKNOWN=1 it says which was called. None has a memory effect.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim_internal.h"

static CUresult unsupported(const char *name)
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
		return unsupported(#name);                                                         \
	}                                                                                          \
	SIM_EXPORT(name)

/* Asked for by cuBLAS/cuBLASLt and NVIDIA's runtime: building and editing
 * graphs by hand (capture, instantiate and launch: sim_graph.c), the JIT
 * linker, stream memory operations, tensor maps, IPC events, arrays, textures. */
UNSUPPORTED(cuGraphGetNodes);
UNSUPPORTED(cuGraphNodeGetType);
UNSUPPORTED(cuGraphKernelNodeGetParams);
UNSUPPORTED(cuGraphKernelNodeGetParams_v2);
UNSUPPORTED(cuGraphExecKernelNodeSetParams);
UNSUPPORTED(cuGraphExecKernelNodeSetParams_v2);
UNSUPPORTED(cuGraphAddMemAllocNode);
UNSUPPORTED(cuGraphAddMemFreeNode);
UNSUPPORTED(cuStreamBeginCaptureToGraph);
UNSUPPORTED(cuStreamBeginCaptureToGraph_ptsz);
UNSUPPORTED(cuLinkCreate);
UNSUPPORTED(cuLinkCreate_v2);
UNSUPPORTED(cuLinkAddData);
UNSUPPORTED(cuLinkAddData_v2);
UNSUPPORTED(cuLinkAddFile_v2);
UNSUPPORTED(cuLinkComplete);
UNSUPPORTED(cuLinkDestroy);
UNSUPPORTED(cuStreamBatchMemOp);
UNSUPPORTED(cuStreamBatchMemOp_ptsz);
UNSUPPORTED(cuStreamWaitValue32);
UNSUPPORTED(cuStreamWaitValue32_ptsz);
UNSUPPORTED(cuStreamWriteValue32);
UNSUPPORTED(cuStreamWriteValue32_ptsz);
UNSUPPORTED(cuStreamWaitValue64);
UNSUPPORTED(cuStreamWaitValue64_ptsz);
UNSUPPORTED(cuStreamWriteValue64);
UNSUPPORTED(cuStreamWriteValue64_ptsz);
UNSUPPORTED(cuTensorMapEncodeTiled);
UNSUPPORTED(cuTensorMapEncodeIm2col);
UNSUPPORTED(cuTensorMapReplaceAddress);
UNSUPPORTED(cuIpcGetEventHandle);
UNSUPPORTED(cuIpcOpenEventHandle);
UNSUPPORTED(cuArrayCreate_v2);
UNSUPPORTED(cuArray3DCreate_v2);
UNSUPPORTED(cuArrayDestroy);
UNSUPPORTED(cuTexObjectCreate);
UNSUPPORTED(cuTexObjectDestroy);
UNSUPPORTED(cuSurfObjectCreate);
UNSUPPORTED(cuSurfObjectDestroy);
UNSUPPORTED(cuMulticastCreate);
UNSUPPORTED(cuGraphicsUnregisterResource);

/* Asked for by PyTorch's c10 DriverAPI (cudaGetDriverEntryPointByVersion)
 * and cuDNN's frontend (dlsym: the JIT linker's old flavours, green contexts):
 * green contexts, driver logs, multicast objects, stream memory operations. */
UNSUPPORTED(cuCtxFromGreenCtx);
UNSUPPORTED(cuDevResourceGenerateDesc);
UNSUPPORTED(cuDevSmResourceSplitByCount);
UNSUPPORTED(cuDeviceGetDevResource);
UNSUPPORTED(cuGreenCtxCreate);
UNSUPPORTED(cuGreenCtxDestroy);
UNSUPPORTED(cuGreenCtxStreamCreate);
UNSUPPORTED(cuStreamGetGreenCtx);
UNSUPPORTED(cuLogsRegisterCallback);
UNSUPPORTED(cuLogsUnregisterCallback);
UNSUPPORTED(cuMulticastAddDevice);
UNSUPPORTED(cuMulticastBindMem);
UNSUPPORTED(cuMulticastUnbind);
UNSUPPORTED(cuStreamWriteValue32_v2);
UNSUPPORTED(cuStreamWriteValue32_v2_ptsz);
