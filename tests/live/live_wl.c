/* SPDX-License-Identifier: MIT */
/*
 * live_wl.c - the program `tlm top` watches in tests/live: it holds MIB1 MiB
 * (allocated in hold_first), then frees it and holds MIB2 MiB (hold_second),
 * each state until the test says it saw it, so that no check depends on
 * timing:
 *   live_wl DIR MIB1 MIB2   after each allocation writes its pid to DIR/held.N
 *                           (N = 1, 2) and waits for DIR/go.N (at most 120 s:
 *                           then exit 3)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/cuda_abi.h"

cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaSetDevice(int);

static int state(const char *dir, int n)
{
	char p[4096], q[4096];
	snprintf(p, sizeof p, "%s/held.%d.tmp", dir, n);
	snprintf(q, sizeof q, "%s/held.%d", dir, n);
	FILE *f = fopen(p, "w");
	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) || rename(p, q))
		return -1;
	snprintf(p, sizeof p, "%s/go.%d", dir, n);
	for (int i = 0; i < 12000; i++) {
		if (!access(p, F_OK))
			return 0;
		usleep(10000);
	}
	return -1;
}

__attribute__((noinline)) static void *hold_first(size_t bytes)
{
	void *p = NULL;
	return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

__attribute__((noinline)) static void *hold_second(size_t bytes)
{
	void *p = NULL;
	return cudaMalloc(&p, bytes) == cudaSuccess ? p : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4 || cudaSetDevice(0) != cudaSuccess)
		return 3;
	size_t a = (size_t)strtoul(argv[2], NULL, 10) << 20, b = (size_t)strtoul(argv[3], NULL, 10) << 20;
	void *p = hold_first(a);
	if (!p || state(argv[1], 1))
		return 3;
	if (cudaFree(p) != cudaSuccess || !(p = hold_second(b)) || state(argv[1], 2))
		return 3;
	return cudaFree(p) == cudaSuccess ? 0 : 3;
}
