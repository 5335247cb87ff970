/* SPDX-License-Identifier: MIT */
/*
 * wl_stacks.c - THREADS threads, released together by a barrier so that
 * their first events race, each making PAIRS cuMemAlloc_v2/cuMemFree_v2
 * pairs from stacks that vary: 4 call paths, recursion depth 3..18, the
 * stack pointer shifted by a varying alloca (a quarter from one fixed stack,
 * which the unwind cache must recognise). Run by test_stacks.sh under
 * TLM_DEBUG_STACK_VERIFY=1 (every computed stack checked against
 * libunwind's own unwind).
 *
 * usage: wl_stacks THREADS PAIRS
 */
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "src/sim/include/sim_driver.h"

static pthread_barrier_t go;
static unsigned long pairs;
static CUcontext ctx;

static __attribute__((noinline)) void pair(void)
{
	CUdeviceptr p;
	if (cuMemAlloc_v2(&p, 256) != 0 || cuMemFree_v2(p) != 0)
		abort();
}

static __attribute__((noinline)) void descend(int left, unsigned shift)
{
	volatile char *pad = alloca(16 + 32 * (shift & 3));
	pad[0] = 1;
	if (left <= 0)
		pair();
	else
		descend(left - 1, shift >> 2 | (shift & 3) << 6);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static __attribute__((noinline)) void path_a(int d, unsigned s) { descend(d, s); __asm__ volatile("" ::: "memory"); }
static __attribute__((noinline)) void path_b(int d, unsigned s) { path_a(d, s); __asm__ volatile("" ::: "memory"); }
static __attribute__((noinline)) void path_c(int d, unsigned s) { descend(d, s); __asm__ volatile("" ::: "memory"); }
static __attribute__((noinline)) void path_d(int d, unsigned s) { path_c(d, s); __asm__ volatile("" ::: "memory"); }
static void (*const paths[4])(int, unsigned) = {path_a, path_b, path_c, path_d};

static void *worker(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;
	cuCtxSetCurrent(ctx);
	pthread_barrier_wait(&go);
	for (unsigned long i = 0; i < pairs; i++) {
		x = x * 1103515245u + 12345u;
		if (x >> 30 == 0)
			paths[0](5, 0); /* a quarter from one stack: cache hits */
		else
			paths[(x >> 8) & 3]((int)(3 + (x >> 12) % 16), x >> 20);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	unsigned n = (unsigned)atoi(argv[1]);
	pairs = strtoul(argv[2], NULL, 10);
	if (n < 1 || n > 64 || cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0))
		return 2;
	pthread_t t[64];
	pthread_barrier_init(&go, NULL, n);
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i))
			return 1;
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
