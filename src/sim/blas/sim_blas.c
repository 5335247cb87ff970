/* SPDX-License-Identifier: MIT */
/*
 * sim_blas.c - libtlm_simblas.so: the compute calls of cuBLAS and cuBLASLt,
 * answered on the simulated device.
 *
 * Contract: preloaded (after libtlm.so) into a program running on the
 * simulated driver, it defines the GEMM-family entry points PyTorch calls
 * (cublas*gemm*, *gemv*, *dot*, cublasLtMatmul), and cublasLt's algorithm
 * search, which has nothing to search on a device without kernels. Each
 * returns CUBLAS_STATUS_SUCCESS and does nothing: no kernel runs on the simulated
 * device, so only memory behaviour matters, and these calls allocate
 * nothing (their workspace is one the caller passed in). Everything else
 * (cublasCreate, cublasSetWorkspace, descriptors) stays the real
 * library's, so the handles and workspaces it allocates stay exactly what
 * they are. Why answer at all: the real GEMM reaches the driver through a
 * private export table nobody has described (../docs/simulated-device.md).
 *
 * The definitions take no parameters on purpose: on x86-64 and AArch64 the
 * caller owns its argument registers and stack, so a callee that ignores
 * them is call-compatible with any prototype; the return register holds the
 * status (0 = success). The output matrices keep whatever the simulated
 * device holds there (see simulated-device.md, "Copies").
 */

#define TLM_SIMBLAS_ANSWER(name) \
	__attribute__((visibility("default"))) int name(void); \
	int name(void) { return 0; }

/* cuBLAS (libcublas.so.13): GEMM, batched GEMM, GEMV, dot */
TLM_SIMBLAS_ANSWER(cublasSgemm_v2)
TLM_SIMBLAS_ANSWER(cublasDgemm_v2)
TLM_SIMBLAS_ANSWER(cublasCgemm_v2)
TLM_SIMBLAS_ANSWER(cublasZgemm_v2)
TLM_SIMBLAS_ANSWER(cublasHgemm)
TLM_SIMBLAS_ANSWER(cublasSgemmEx)
TLM_SIMBLAS_ANSWER(cublasCgemmEx)
TLM_SIMBLAS_ANSWER(cublasGemmEx)
TLM_SIMBLAS_ANSWER(cublasGemmBatchedEx)
TLM_SIMBLAS_ANSWER(cublasGemmStridedBatchedEx)
TLM_SIMBLAS_ANSWER(cublasSgemmBatched)
TLM_SIMBLAS_ANSWER(cublasDgemmBatched)
TLM_SIMBLAS_ANSWER(cublasCgemmBatched)
TLM_SIMBLAS_ANSWER(cublasZgemmBatched)
TLM_SIMBLAS_ANSWER(cublasHgemmBatched)
TLM_SIMBLAS_ANSWER(cublasSgemmStridedBatched)
TLM_SIMBLAS_ANSWER(cublasDgemmStridedBatched)
TLM_SIMBLAS_ANSWER(cublasCgemmStridedBatched)
TLM_SIMBLAS_ANSWER(cublasZgemmStridedBatched)
TLM_SIMBLAS_ANSWER(cublasHgemmStridedBatched)
TLM_SIMBLAS_ANSWER(cublasSgemv_v2)
TLM_SIMBLAS_ANSWER(cublasDgemv_v2)
TLM_SIMBLAS_ANSWER(cublasCgemv_v2)
TLM_SIMBLAS_ANSWER(cublasZgemv_v2)
TLM_SIMBLAS_ANSWER(cublasSgemvStridedBatched)
TLM_SIMBLAS_ANSWER(cublasDgemvStridedBatched)
/* torch sets CUBLAS_POINTER_MODE_DEVICE around dot: the result is device memory */
TLM_SIMBLAS_ANSWER(cublasSdot_v2)
TLM_SIMBLAS_ANSWER(cublasDdot_v2)
TLM_SIMBLAS_ANSWER(cublasCdotu_v2)
TLM_SIMBLAS_ANSWER(cublasCdotc_v2)
TLM_SIMBLAS_ANSWER(cublasZdotu_v2)
TLM_SIMBLAS_ANSWER(cublasZdotc_v2)
TLM_SIMBLAS_ANSWER(cublasDotEx)

/* cuBLASLt (libcublasLt.so.13): the matmul itself */
TLM_SIMBLAS_ANSWER(cublasLtMatmul)

/* cublasLtMatmulAlgoGetHeuristic: one result, an all-zero algorithm that
 * needs no workspace (the caller's own workspace, allocated before this call
 * and whatever the answer, is what memory sees). The real one asks the
 * device for kernels the simulated device does not have. */
struct tlm_simblas_heuristic {  /* cublasLtMatmulHeuristicResult_t */
	unsigned long long algo[8]; /* cublasLtMatmulAlgo_t */
	unsigned long workspace_size;
	int state;                  /* cublasStatus_t */
	float waves_count;
	int reserved[4];
};

__attribute__((visibility("default"))) int cublasLtMatmulAlgoGetHeuristic(
	void *handle, void *op, void *a, void *b, void *c, void *d, void *pref, int requested,
	struct tlm_simblas_heuristic *results, int *returned);
int cublasLtMatmulAlgoGetHeuristic(void *handle, void *op, void *a, void *b, void *c, void *d,
				   void *pref, int requested, struct tlm_simblas_heuristic *results,
				   int *returned)
{
	(void)handle, (void)op, (void)a, (void)b, (void)c, (void)d, (void)pref;
	if (requested < 1 || !results || !returned)
		return 7; /* CUBLAS_STATUS_INVALID_VALUE */
	*results = (struct tlm_simblas_heuristic){.waves_count = 1.0f};
	*returned = 1;
	return 0;
}
