/* SPDX-License-Identifier: MIT */
/*
 * devmem_wl.c - the two processes of the device-memory end-to-end test
 * (test_devmem_e2e.sh) on one shared simulated device:
 *   devmem_wl hold MIB READY DONE   holds MIB MiB, creates READY 300 ms later
 *                                   (tlm's writer, which drains every 20 ms, has
 *                                   asked NVML about its sample by then), waits
 *                                   for DONE (at most 60 s), frees and exits
 *   devmem_wl fill MIB PIDFILE      writes its pid to PIDFILE, then allocates
 *                                   MIB MiB at a time until one fails; prints
 *                                   "allocs N" and exits 0 (3 on a surprise)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_abi.h"

cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaSetDevice(int);

static int touch(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", (long)getpid());
	return fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 4 || cudaSetDevice(0) != cudaSuccess)
		return 3;
	size_t mib = (size_t)strtoul(argv[2], NULL, 10) << 20;
	if (!strcmp(argv[1], "hold") && argc == 5) {
		void *p = NULL;
		if (cudaMalloc(&p, mib) != cudaSuccess)
			return 3;
		usleep(300000);
		if (touch(argv[3]))
			return 3;
		for (int i = 0; i < 6000 && access(argv[4], F_OK); i++)
			usleep(10000);
		return cudaFree(p) == cudaSuccess ? 0 : 3;
	}
	if (!strcmp(argv[1], "fill")) {
		if (touch(argv[3]))
			return 3;
		void *p;
		int n = 0;
		while (n < 100000 && cudaMalloc(&p, mib) == cudaSuccess)
			n++;
		printf("allocs %d\n", n);
		return 0;
	}
	return 3;
}
