/* SPDX-License-Identifier: MIT */
/*
 * report_workload.c - the program whose trace the end-to-end report test
 * analyses: start-up allocations that live to the end (load_model: not a
 * leak), a training loop with an activation allocated and freed every
 * iteration (churn) and a loss kept forever (record_loss: a leak), then one
 * allocation larger than the device (an OOM by exhaustion).
 *
 * It writes what the report must find to $TLM_TEST_TRUTH as "N key value"
 * lines: the peak of requested bytes, the device free memory cudaMemGetInfo
 * reported just before the failing allocation, and its result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report_workload.h"
#include "sim_runtime.h"

static void *weights[RW_WEIGHTS];
static void *losses[RW_ITERS];
static unsigned long long cur, peak;

static void account(long long delta)
{
	cur += (unsigned long long)delta;
	if (cur > peak)
		peak = cur;
}

/* Kept out of line so each site is its own frame. */
__attribute__((noinline)) static void record_loss(int i)
{
	cudaError_t rc = cudaMalloc(&losses[i], RW_LOSS_SIZE); _Static_assert(__LINE__ == RW_LOSS_LINE, "RW_LOSS_LINE");
	if (rc)
		exit(3);
	account(RW_LOSS_SIZE);
}

__attribute__((noinline)) static void load_model(void)
{
	for (int i = 0; i < RW_WEIGHTS; i++) {
		if (cudaMalloc(&weights[i], RW_WEIGHT_SIZE))
			exit(3);
		account(RW_WEIGHT_SIZE);
	}
}

__attribute__((noinline)) static void train_step(int i)
{
	void *act;
	if (cudaMalloc(&act, RW_ACT_SIZE))
		exit(3);
	account(RW_ACT_SIZE);
	usleep(RW_ITER_US);
	if (cudaFree(act))
		exit(3);
	account(-(long long)RW_ACT_SIZE);
	record_loss(i);
}

int main(void)
{
	if (cudaSetDevice(0))
		return 3;
	load_model();
	for (int i = 0; i < RW_ITERS; i++)
		train_step(i);
	size_t free_b = 0, total_b = 0;
	if (cudaMemGetInfo(&free_b, &total_b))
		return 3;
	void *big;
	cudaError_t oom = cudaMalloc(&big, RW_OOM_SIZE);
	const char *t = getenv("TLM_TEST_TRUTH");
	FILE *f = t && *t ? fopen(t, "w") : NULL;
	if (f) {
		fprintf(f, "N peak_reserved %llu\n", peak);
		fprintf(f, "N live_bytes %llu\n", cur);
		fprintf(f, "N device_free %zu\n", free_b);
		fprintf(f, "N oom_result %d\n", (int)oom);
		fclose(f);
	}
	return oom == cudaErrorMemoryAllocation ? 0 : 4;
}
