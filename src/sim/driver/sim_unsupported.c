// SPDX-License-Identifier: MIT
/*
 * Entry points the simulator exports but does not model: building and
 * editing graphs by hand (capture, instantiate and launch: sim_graph.c), the
 * JIT linker, stream memory operations, tensor maps, IPC, arrays, textures. Libraries resolve some of them by name at start-up
 * (libcublasLt fails to start when one is missing), so each exists and
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
UNSUPPORTED(cuLinkCreate_v2);
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
UNSUPPORTED(cuIpcGetMemHandle);
UNSUPPORTED(cuIpcOpenMemHandle_v2);
UNSUPPORTED(cuIpcCloseMemHandle);
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
