// SPDX-License-Identifier: MIT
/*
 * Concurrency and speed: THREADS threads each doing ITERS cuMemAlloc/cuMemFree
 * pairs (argv[1], default 100000), half of them while holding a few other
 * allocations of mixed sizes so that ranges split and coalesce. At the end
 * every page is free and the whole device is again one free VA range.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim_test.h"

#define THREADS 16

static long iters = 100000;

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	CUdeviceptr keep[4] = {0};
	CUcontext ctx;
	if (cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return (void *)1;
	for (long i = 0; i < iters; i++) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 1 << 20) || cuMemFree_v2(p))
			return (void *)2;
		if (i % 2) {
			int k = (int)(rand_r(&seed) % 4);
			if (keep[k] && cuMemFree_v2(keep[k]))
				return (void *)3;
			keep[k] = 0;
			/* 1..3 pages; 16 threads * 4 * 3 pages stays within 1 GiB */
			if (cuMemAlloc_v2(&keep[k], (size_t)(1 + rand_r(&seed) % 3) * PAGE))
				return (void *)4;
		}
	}
	for (int k = 0; k < 4; k++)
		if (keep[k] && cuMemFree_v2(keep[k]))
			return (void *)5;
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	struct timespec a, b;
	CUdeviceptr all;
	size_t f, tot;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *res;
		assert_int_equal(pthread_join(t[i], &res), 0);
		assert_null(res);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("# %d threads x %ld pairs: %.3f s\n", THREADS, iters,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	assert_int_equal(tlm_sim_used_pages(0), 0);
	CU_OK(cuMemGetInfo_v2(&f, &tot));
	assert_int_equal(f, tot - CTX_COST); /* all but the primary context's cost */
	CU_OK(cuMemAlloc_v2(&all, f)); /* no VA fragments left behind */
	assert_int_equal(all, DEV_VA_BASE);
	CU_OK(cuMemFree_v2(all));
}

int main(int argc, char **argv)
{
	if (argc > 1)
		iters = atol(argv[1]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_threads, sim_test_no_leak),
	};
	return cmocka_run_group_tests(tests, sim_test_setup_dev0, NULL);
}
