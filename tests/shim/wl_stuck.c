/* SPDX-License-Identifier: MIT */
/*
 * wl_stuck.c - threads that stay inside a hooked free must not hold the
 * others' events back. With TLM_SIM_SLOW_FREE_MS=4000, cuMemFree_v2 on a
 * thread named "slowfree" blocks 4 s: thread A blocks there and returns late; thread B blocks
 * there and is cancelled. Meanwhile the main thread makes 1000 pairs, waits
 * 2.5 s and prints how much the trace grew ("grew N"): the writer must have
 * written them while A and B were still inside their calls.
 * usage: wl_stuck TRACE
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "src/sim/include/sim_driver.h"

static CUcontext ctx;

static void *blocked(void *arg)
{
	(void)arg;
	cuCtxSetCurrent(ctx);
	CUdeviceptr p;
	cuMemAlloc_v2(&p, 128);
	pthread_setname_np(pthread_self(), "slowfree");
	cuMemFree_v2(p);
	return NULL;
}

static long size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

int main(int argc, char **argv)
{
	if (argc != 2 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 2;
	CUdeviceptr p;
	cuMemAlloc_v2(&p, 64); /* the trace exists */
	cuMemFree_v2(p);
	pthread_t a, b;
	pthread_create(&a, NULL, blocked, NULL);
	pthread_create(&b, NULL, blocked, NULL);
	struct timespec tenth = {0, 100000000};
	nanosleep(&tenth, NULL); /* both are inside cuMemFree_v2 now */
	long before = size_of(argv[1]);
	for (int i = 0; i < 1000; i++) {
		cuMemAlloc_v2(&p, 4096);
		cuMemFree_v2(p);
	}
	struct timespec wait = {2, 500000000};
	nanosleep(&wait, NULL);
	printf("grew %ld\n", size_of(argv[1]) - before);
	fflush(stdout);
	pthread_cancel(b);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	return 0;
}
