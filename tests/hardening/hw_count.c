/* SPDX-License-Identifier: MIT */
/*
 * hw_count.c - counts what the hot path costs the host: this program defines
 * malloc, calloc, realloc, free and pthread_mutex_lock itself (the executable
 * comes first in symbol lookup, so libtlm.so, libunwind and the runtime
 * double all call these), warms up, then makes PAIRS cudaMalloc/cudaFree
 * pairs from one call site and notes how many of those calls the main thread
 * made meanwhile. The test runs it with and without libtlm.so: the
 * difference is what recording added (docs/reliability.md: none).
 *   hw_count PAIRS
 *   hw_count stacks BITS   one pair from each of 2^BITS call paths (new
 *                          stacks: the trace's stack tables must grow)
 * Not for sanitized builds (their runtimes own malloc).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw_common.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static __thread int counting;
static unsigned long long n_malloc, n_free, n_lock;
static int (*real_lock)(pthread_mutex_t *);

void *malloc(size_t n)
{
	if (counting)
		n_malloc++;
	return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	if (counting)
		n_malloc++;
	return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	if (counting)
		n_malloc++;
	return __libc_realloc(p, n);
}

void free(void *p)
{
	if (counting && p)
		n_free++;
	__libc_free(p);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (counting)
		n_lock++;
	if (!real_lock) /* resolved in main before counting: dlsym may allocate */
		real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	return real_lock(m);
}

static __attribute__((noinline)) void pairs(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p;
		if (cudaMalloc(&p, 4096) != 0 || cudaFree(p) != 0)
			abort();
	}
}

/* One pair from the call path that spells i in BITS frames of walk0 and
 * walk1 (the empty asm after each call keeps it from being a tail call). */
static void walk(unsigned long i, unsigned bits);

static __attribute__((noinline)) void walk0(unsigned long i, unsigned bits)
{
	walk(i, bits);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void walk1(unsigned long i, unsigned bits)
{
	walk(i, bits);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void walk(unsigned long i, unsigned bits)
{
	if (!bits)
		pairs(1);
	else if (i & 1)
		walk1(i >> 1, bits - 1);
	else
		walk0(i >> 1, bits - 1);
	__asm__ volatile("" ::: "memory");
}

static void stacks(unsigned bits)
{
	for (unsigned long i = 0; i < 1ul << bits; i++)
		walk(i, bits);
}

int main(int argc, char **argv)
{
	unsigned bits = argc > 2 && !strcmp(argv[1], "stacks") ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
	unsigned long n = argc > 1 && !bits ? strtoul(argv[1], NULL, 10) : 10000;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pairs(1000); /* first event: trace, ring, writer thread, stack cache */
	counting = 1;
	if (bits)
		stacks(bits);
	else
		pairs(n);
	counting = 0;
	hw_notef("malloc %llu", n_malloc);
	hw_notef("free %llu", n_free);
	hw_notef("mutex %llu", n_lock);
	return 0;
}
