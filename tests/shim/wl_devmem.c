/* SPDX-License-Identifier: MIT */
/*
 * wl_devmem.c - workloads for the device memory samples (test_devmem.c):
 * each scenario makes a known sequence of allocations on the simulated
 * device, so the samples tlm takes with them have exact values.
 *   wl_devmem growth|ratelimit|exitpeak|many|oom|multi|threads|failfree
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_abi.h"

cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaSetDevice(int);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuCtxGetCurrent(CUcontext *);
CUresult cuCtxSetCurrent(CUcontext);

#define MiB (1u << 20)

static void *al(size_t n)
{
	void *p = NULL;
	if (cudaMalloc(&p, n) != cudaSuccess) {
		fprintf(stderr, "wl_devmem: cudaMalloc(%zu) failed\n", n);
		exit(3);
	}
	return p;
}

static void fr(void *p)
{
	if (cudaFree(p) != cudaSuccess)
		exit(3);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 300; i++) {
		void *a = al((size_t)(1 + i % 3) * MiB), *b = al(MiB);
		fr(a);
		fr(b);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : "";
	if (cudaSetDevice(0) != cudaSuccess)
		return 3;
	if (!strcmp(s, "growth")) {
		void *a = al(4 * MiB);
		al(2 * MiB);
		al(1 * MiB); /* a whole 2 MiB page on the device, 1 MiB tracked */
		fr(a);
		al(2 * MiB);
		al(4 * MiB);
	} else if (!strcmp(s, "ratelimit")) {
		al(2 * MiB);
		void *b = al(2 * MiB), *c = al(2 * MiB);
		al(2 * MiB);
		fr(b); /* the high (8 MiB) went unsampled: sampled before this free */
		fr(c);
		al(2 * MiB);
	} else if (!strcmp(s, "exitpeak")) {
		al(2 * MiB);
		al(2 * MiB);
		al(2 * MiB); /* a high the rate limit skips, and no free after it */
	} else if (!strcmp(s, "many")) {
		void *p[40];
		for (int i = 0; i < 40; i++)
			p[i] = al(MiB);
		for (int i = 0; i < 40; i++)
			fr(p[i]);
	} else if (!strcmp(s, "oom")) {
		al(2 * MiB);
		void *p = NULL;
		if (cudaMalloc(&p, (size_t)1 << 40) == cudaSuccess)
			return 3;
	} else if (!strcmp(s, "multi")) {
		cudaSetDevice(1);
		void *a = al(2 * MiB), *b = al(4 * MiB);
		CUdeviceptr c = 0;
		if (cuMemAlloc_v2(&c, 2 * MiB) != CUDA_SUCCESS)
			return 3;
		cudaSetDevice(0);
		void *z = al(2 * MiB);
		fr(b); /* device 1's memory freed with device 0 current */
		if (cuMemFree_v2(c) != CUDA_SUCCESS)
			return 3;
		fr(z);
		fr(a);
	} else if (!strcmp(s, "failfree")) {
		/* a free the driver refuses (no context current): the allocation
		 * is still reserved, so the next one makes a new high */
		CUcontext ctx = NULL;
		void *a = al(2 * MiB);
		if (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || cuCtxSetCurrent(NULL) != CUDA_SUCCESS ||
		    cuMemFree_v2((CUdeviceptr)(uintptr_t)a) == CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
			return 3;
		void *b = al(2 * MiB);
		fr(a);
		fr(b);
		al(2 * MiB);
		al(4 * MiB);
	} else if (!strcmp(s, "threads")) {
		pthread_t t[8];
		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	} else {
		fprintf(stderr, "wl_devmem: unknown scenario '%s'\n", s);
		return 2;
	}
	return 0;
}
