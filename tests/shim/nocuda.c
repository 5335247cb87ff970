/* SPDX-License-Identifier: MIT */
/*
 * nocuda.c - a program whose libcudart cannot load the driver (no libcuda on
 * the library path): every cudaMalloc fails, and each is still recorded.
 * Prints the mean cost of a call in nanoseconds (test_nocuda.sh).
 */
#include <stdio.h>
#include <time.h>

#include "common/cuda_abi.h"

cudaError_t cudaMalloc(void **, size_t);

int main(void)
{
	void *p;
	cudaMalloc(&p, 1); /* the first call starts the trace */
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int ok = 0;
	for (int i = 0; i < 20000; i++)
		ok += cudaMalloc(&p, 64) == cudaSuccess;
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 20000;
	printf("%.0f ns per call, %d succeeded\n", ns, ok);
	return 0;
}
