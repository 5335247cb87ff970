// SPDX-License-Identifier: MIT
// cublas.cu - cuBLAS handle life on the simulated driver: cublasCreate,
// cublasSetWorkspace with the program's own buffer, cublasDestroy, on each
// device. The allocations cuBLAS makes itself are not known in advance: the
// truth names the program lines of the cuBLAS calls ("C func line"), and
// check.py requires each of cuBLAS's own events to carry one of them in its
// stack, and every one of its allocations to be freed by cublasDestroy.
// GEMM is not run: its private driver interface is not modelled.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define U(p) ((unsigned long long)(uintptr_t)(p))
static FILE *truth;

#define CK(x)                                                                                         \
	do {                                                                                          \
		if ((x) != 0) {                                                                       \
			fprintf(stderr, "cublas: %s failed at line %d\n", #x, __LINE__);              \
			exit(3);                                                                      \
		}                                                                                     \
	} while (0)
#define CALL(x) do { fprintf(truth, "C %s %d\n", __func__, __LINE__); CK(x); } while (0)

static void one_device(int dev)
{
	cublasHandle_t h;
	void *ws;
	const size_t wsz = 4 << 20;
	CK(cudaSetDevice(dev));
	CK(cudaMalloc(&ws, wsz)); fprintf(truth, "E 1 0 %llx %zu %d %s %d\n", U(ws), wsz, dev, __func__, __LINE__);
	CALL(cublasCreate(&h));
	CALL(cublasSetWorkspace(h, ws, wsz));
	CALL(cublasDestroy(h));
	fprintf(truth, "E 2 0 %llx 0 %d %s %d\n", U(ws), dev, __func__, __LINE__); CK(cudaFree(ws));
}

int main(void)
{
	const char *tp = getenv("TLM_TEST_TRUTH");
	truth = fopen(tp ? tp : "/dev/null", "w");
	if (!truth)
		return 2;
	int n = 0;
	CK(cudaGetDeviceCount(&n));
	for (int d = 0; d < n && d < 2; d++)
		one_device(d);
	fclose(truth);
	printf("cublas: ok\n");
	return 0;
}
