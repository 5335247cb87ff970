/* SPDX-License-Identifier: MIT */
/*
 * tlm-demo - a small "training loop" on the CUDA runtime, for trying tlm on a
 * machine without a GPU (it runs on the simulated device) or with one.
 *
 * Start-up allocates the weights and optimizer state (live to the end, not a
 * leak); each step allocates activations and a gradient buffer and frees them
 * (churn), and keeps one small tensor per step in a "loss history" that is
 * never freed (a leak); the last step asks for more memory than the device
 * has (an out-of-memory error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/cuda_abi.h"

cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaMallocAsync(void **, size_t, cudaStream_t);
cudaError_t cudaFree(void *);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaFreeAsync(void *, cudaStream_t);
cudaError_t cudaStreamCreate(cudaStream_t *);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaMemGetInfo(size_t *, size_t *);

#define MiB ((size_t)1 << 20)

static void *must(size_t bytes)
{
	void *p;
	if (cudaMalloc(&p, bytes) != cudaSuccess) {
		fprintf(stderr, "tlm-demo: cudaMalloc(%zu) failed\n", bytes);
		exit(1);
	}
	return p;
}

static void *load_weights(int layer)
{
	return must((size_t)(32 + 16 * layer) * MiB);
}

static void *record_loss(void)
{
	void *loss = NULL;
	cudaMalloc(&loss, 2 * MiB); /* kept forever: the leak */
	return loss;
}

static void train_step(cudaStream_t s, void **losses, int step)
{
	void *act[3] = {must(32 * MiB), must(16 * MiB), must(8 * MiB)};
	void *grad;
	if (cudaMallocAsync(&grad, 24 * MiB, s) != cudaSuccess)
		exit(1);
	losses[step] = record_loss();
	cudaFreeAsync(grad, s);
	for (int i = 2; i >= 0; i--)
		cudaFree(act[i]);
	cudaStreamSynchronize(s);
	struct timespec compute = {0, 2000000}; /* the step's kernels */
	nanosleep(&compute, NULL);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 50;
	if (steps < 1 || steps > 200)
		steps = 50;
	cudaStream_t s;
	if (cudaStreamCreate(&s) != cudaSuccess) {
		fprintf(stderr, "tlm-demo: no CUDA device\n");
		return 1;
	}
	void *weights[4], *opt, *pinned;
	for (int l = 0; l < 4; l++)
		weights[l] = load_weights(l);
	opt = must(128 * MiB);
	if (cudaMallocHost(&pinned, 16 * MiB) != cudaSuccess)
		return 1;
	void *losses[200];
	for (int i = 0; i < steps; i++)
		train_step(s, losses, i);
	size_t fr, total;
	cudaMemGetInfo(&fr, &total);
	void *huge;
	cudaError_t oom = cudaMalloc(&huge, total + 64 * MiB);
	printf("tlm-demo: %d steps; weights %zu MiB live; %d MiB leaked in loss history; "
	       "oversized request %s\n",
	       steps, (size_t)(32 + 48 + 64 + 80) + 128, 2 * steps,
	       oom == cudaErrorMemoryAllocation ? "failed with out of memory, as intended" : "did not fail");
	cudaFreeHost(pinned);
	(void)weights;
	(void)opt;
	return 0;
}
