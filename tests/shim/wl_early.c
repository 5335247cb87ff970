/* SPDX-License-Identifier: MIT */
/*
 * wl_early.c - a library the workload links, whose constructor allocates on
 * the GPU and starts a thread that does too: CUDA calls that may run before
 * libtlm's own constructor, from a thread that may predate it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

void *wl_early_ptr, *wl_early_thread_ptr;
static pthread_t th;

static void *early_thread(void *arg)
{
	(void)arg;
	cudaMalloc(&wl_early_thread_ptr, 2222);
	return NULL;
}

__attribute__((constructor)) static void early(void)
{
	if (!getenv("WL_EARLY"))
		return;
	cudaMalloc(&wl_early_ptr, 1111);
	pthread_create(&th, NULL, early_thread, NULL);
	pthread_join(th, NULL);
}
