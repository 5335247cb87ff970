// SPDX-License-Identifier: MIT
/* Host memory cost of device memory contents (src/sim/driver/sim_backing.c): RSS
 * after allocating MiB of device memory, after writing all of it, after
 * reading it back, after freeing it. Prints one line of figures; for
 * docs/simulated-device.md. Usage: bench_sim_contents [MiB] (default 256). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_driver.h"

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);

static long rss_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256, n = mib << 20;
	CUcontext ctx;
	CUdeviceptr d;
	char *h = malloc(n);
	if (!h || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 1;
	memset(h, 0x5a, n);
	long base = rss_kib();
	if (cuMemAlloc_v2(&d, n))
		return 1;
	long alloc = rss_kib();
	if (cuMemcpyHtoD_v2(d, h, n))
		return 1;
	long written = rss_kib();
	if (cuMemcpyDtoH_v2(h, d, n))
		return 1;
	long read = rss_kib();
	if (cuMemFree_v2(d))
		return 1;
	long freed = rss_kib();
	printf("%zu MiB device memory: RSS +%ld KiB allocated, +%ld KiB written, +%ld KiB read back, "
	       "+%ld KiB freed (relative to before the allocation)\n",
	       mib, alloc - base, written - base, read - base, freed - base);
	return 0;
}
