// SPDX-License-Identifier: MIT
/* Benchmark: N (default 1000000) cuMemAlloc_v2/cuMemFree_v2 pairs on one
 * thread, with 200 of 400 allocations held live (default 1 GiB = 512 pages)
 * so that the free-range tree is not trivial. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim_driver.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	static CUdeviceptr live[400];
	CUcontext ctx;
	struct timespec a, b;
	if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 1;
	for (int i = 0; i < 400; i++)
		if (cuMemAlloc_v2(&live[i], 1))
			return 2;
	for (int i = 0; i < 400; i += 2) /* leave holes */
		cuMemFree_v2(live[i]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096) || cuMemFree_v2(p))
			return 3;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%ld alloc/free pairs: %.3f s (%.0f ns/pair)\n", n, s, s * 1e9 / (double)n);
	for (int i = 1; i < 400; i += 2)
		cuMemFree_v2(live[i]);
	return 0;
}
