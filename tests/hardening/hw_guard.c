/* SPDX-License-Identifier: MIT */
/*
 * hw_guard.c - makes the simulated driver fork-safe for the fork storm.
 *
 * The simulated driver serialises every call on one global mutex and has no
 * fork handler: a child forked while another thread holds that mutex
 * deadlocks in its first CUDA call (as real CUDA does not support CUDA calls
 * in a child forked after CUDA was initialised at all). This library sits
 * between libtlm.so and the runtime double in symbol lookup (libtlm's real
 * cudaMalloc/cudaFree, found with RTLD_NEXT, are these) and holds a read
 * lock around the simulated call only; hw_guard_install() registers fork
 * handlers that take the write lock. tlm's own recording runs outside the
 * lock, so forks still land in the middle of recording on other threads.
 * Outside the fork storm the lock is never contended.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "hw_common.h"

static pthread_rwlock_t guard;
static atomic_ullong guarded;

static void guard_init(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	/* forks must not starve behind 64 readers */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&guard, &a);
	pthread_rwlockattr_destroy(&a);
}

static void prepare(void)
{
	pthread_rwlock_wrlock(&guard);
}

static void release(void)
{
	pthread_rwlock_unlock(&guard);
}

/* The child has one thread, but the lock word still counts the parent's
 * waiting readers: start over. */
static void child(void)
{
	guard_init();
}

__attribute__((constructor)) static void guard_ctor(void)
{
	guard_init();
}

void hw_guard_install(void)
{
	pthread_atfork(prepare, release, child);
}

unsigned long long hw_guard_calls(void)
{
	return atomic_load(&guarded);
}

cudaError_t cudaMalloc(void **p, size_t size)
{
	static cudaError_t (*real)(void **, size_t);
	if (!real)
		real = (cudaError_t(*)(void **, size_t))dlsym(RTLD_NEXT, "cudaMalloc");
	pthread_rwlock_rdlock(&guard);
	cudaError_t r = real(p, size);
	pthread_rwlock_unlock(&guard);
	atomic_fetch_add_explicit(&guarded, 1, memory_order_relaxed);
	return r;
}

cudaError_t cudaFree(void *p)
{
	static cudaError_t (*real)(void *);
	if (!real)
		real = (cudaError_t(*)(void *))dlsym(RTLD_NEXT, "cudaFree");
	pthread_rwlock_rdlock(&guard);
	cudaError_t r = real(p);
	pthread_rwlock_unlock(&guard);
	atomic_fetch_add_explicit(&guarded, 1, memory_order_relaxed);
	return r;
}
