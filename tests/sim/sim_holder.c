// SPDX-License-Identifier: MIT
/*
 * sim_holder MIB [DEV]: another process on the simulated machine
 * (TLM_SIM_MACHINE) for test_machine.c: retains DEV's primary context (0 by
 * default), allocates MIB MiB there, writes "ready PID USED_PAGES NDEV FREE\n"
 * (tlm_sim_used_pages and cuMemGetInfo's free bytes of DEV) on
 * stdout and waits until stdin closes (or SIGKILL), then frees and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim_driver.h"

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr p = 0;
	int n = 0, dev = argc > 2 ? atoi(argv[2]) : 0;
	size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
	char c;
	if (cuInit(0) || cuDeviceGetCount(&n) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || (mib && cuMemAlloc_v2(&p, mib << 20))) {
		printf("failed\n");
		return 3;
	}
	size_t f = 0, t = 0;
	if (cuMemGetInfo_v2(&f, &t))
		return 5;
	printf("ready %d %lld %d %zu\n", (int)getpid(), tlm_sim_used_pages(dev), n, f);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	if (p && cuMemFree_v2(p))
		return 4;
	return 0;
}
