/* SPDX-License-Identifier: MIT */
/*
 * bench_vary.c - allocation pairs from stacks that vary, as in real programs.
 *
 * Each pair is made from one of PATHS distinct call paths (different chains
 * of functions), at a recursion depth that changes from call to call (10 to
 * 10+SPAN-1 frames), with the stack pointer shifted by a varying alloca in
 * the frames on the way: PATHS x SPAN x 4 distinct stacks at distinct stack
 * positions, more than any per-thread cache of whole unwinds holds, so most
 * captures are misses. MODE cuda: cuMemAlloc_v2/cuMemFree_v2 on the
 * simulated driver (run under libtlm.so); MODE malloc: malloc/free (run under
 * heaptrack); MODE unw: two unw_backtrace calls (libunwind's fast trace, 64
 * frames) in place of the pair, the yardstick for a miss; MODE nop: nothing
 * (the loop's own cost). Prints ns per pair of the timed loop; the added cost
 * per event is (under the tool - plain) / 2.
 *
 * With THREADS > 1, that many threads each make PAIRS pairs at once (the
 * merge of several rings); the figure is then wall time / all pairs.
 *
 * usage: bench_vary cuda|malloc|unw|nop [PAIRS] [PATHS] [SPAN] [THREADS]
 */
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "src/sim/include/sim_driver.h"

enum { CUDA, MALLOC, UNW, NOP };
static int mode;
static volatile int sink;
static unsigned long pairs;
static unsigned paths = 8, span = 20, nthreads = 1;
static CUcontext ctx;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void one_pair(void)
{
	if (mode == CUDA) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096) != 0 || cuMemFree_v2(p) != 0)
			abort();
	} else if (mode == MALLOC) {
		void *volatile p = malloc(4096);
		free(p);
	} else if (mode == UNW) {
		void *buf[64];
		sink += unw_backtrace(buf, 64);
		sink += unw_backtrace(buf, 64);
	}
}

/* recursion whose frames shift the stack by a varying amount */
static __attribute__((noinline)) void descend(int left, unsigned shift)
{
	volatile char *pad = alloca(16 + 16 * (shift & 3));
	pad[0] = 0;
	if (left <= 0)
		one_pair();
	else
		descend(left - 1, shift >> 1 | (shift & 1) << 5);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

/* distinct call paths: each entry is its own chain of three functions */
#define PATH(n)                                                                                                      \
	static __attribute__((noinline)) void p##n##_c(int d, unsigned s)                                            \
	{                                                                                                            \
		descend(d, s);                                                                                       \
		__asm__ volatile("" ::: "memory");                                                                   \
	}                                                                                                            \
	static __attribute__((noinline)) void p##n##_b(int d, unsigned s)                                            \
	{                                                                                                            \
		p##n##_c(d, s);                                                                                      \
		__asm__ volatile("" ::: "memory");                                                                   \
	}                                                                                                            \
	static __attribute__((noinline)) void p##n##_a(int d, unsigned s)                                            \
	{                                                                                                            \
		p##n##_b(d, s);                                                                                      \
		__asm__ volatile("" ::: "memory");                                                                   \
	}
PATH(0) PATH(1) PATH(2) PATH(3) PATH(4) PATH(5) PATH(6) PATH(7)
PATH(8) PATH(9) PATH(10) PATH(11) PATH(12) PATH(13) PATH(14) PATH(15)
static void (*const entry[16])(int, unsigned) = {
	p0_a, p1_a, p2_a, p3_a, p4_a, p5_a, p6_a, p7_a, p8_a, p9_a, p10_a, p11_a, p12_a, p13_a, p14_a, p15_a,
};

static __attribute__((noinline)) void loop(uint32_t x)
{
	for (unsigned long i = 0; i < pairs; i++) {
		x = x * 1103515245u + 12345u; /* the same sequence in every run */
		unsigned path = (x >> 8) % paths, depth = 10 + (x >> 16) % span, shift = x >> 24;
		entry[path]((int)depth, shift);
	}
}

static void *thread_main(void *arg)
{
	if (mode == CUDA && cuCtxSetCurrent(ctx))
		abort();
	loop(12345u + 7919u * (uint32_t)(uintptr_t)arg); /* its own sequence, the same in every run */
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"cuda", "malloc", "unw", "nop"};
	mode = -1;
	for (int m = 0; argc >= 2 && m < 4; m++)
		if (!strcmp(argv[1], modes[m]))
			mode = m;
	if (mode < 0) {
		fprintf(stderr, "usage: bench_vary cuda|malloc|unw|nop [PAIRS] [PATHS 1..16] [SPAN] [THREADS]\n");
		return 2;
	}
	pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	if (argc > 3)
		paths = (unsigned)atoi(argv[3]);
	if (argc > 4)
		span = (unsigned)atoi(argv[4]);
	if (argc > 5)
		nthreads = (unsigned)atoi(argv[5]);
	if (paths < 1 || paths > 16 || span < 1 || span > 200 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "bench_vary: PATHS is 1..16, SPAN 1..200, THREADS 1..64\n");
		return 2;
	}
	if (mode == CUDA) {
		if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
			return 1;
	}
	one_pair(); /* warm up: trace start */
	double t0 = now();
	if (nthreads == 1)
		loop(12345u);
	else {
		pthread_t t[64];
		for (unsigned i = 0; i < nthreads; i++)
			if (pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i))
				abort();
		for (unsigned i = 0; i < nthreads; i++)
			pthread_join(t[i], NULL);
	}
	double t1 = now();
	printf("%.1f\n", (t1 - t0) * 1e9 / (double)(pairs * nthreads));
	return 0;
}
