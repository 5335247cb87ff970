/* SPDX-License-Identifier: MIT */
/*
 * bench_malloc_pairs.c - the same shape of workload as bench_shim (PAIRS
 * alloc/free pairs from a 30-frame call chain) on malloc, to measure KDE
 * heaptrack on this machine for comparison:
 *   b=build/tests/bench/bench_malloc_pairs
 *   plain=$($b 1000000); ht=$(heaptrack -o /tmp/ht $b 1000000 | tail -1)
 *   added per event = (ht - plain) / 2 ns
 * Prints ns per pair.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long pairs;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void loop(void)
{
	for (unsigned long i = 0; i < pairs; i++) {
		void *volatile p = malloc(4096);
		free(p);
	}
}

static __attribute__((noinline)) void descend(int left)
{
	if (left <= 0)
		loop();
	else
		descend(left - 1);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	pairs = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	double t0 = now();
	descend(24); /* + loop, main and 4 frames of libc start-up: 30 frames */
	double t1 = now();
	printf("%.1f\n", (t1 - t0) * 1e9 / (double)pairs);
	return 0;
}
