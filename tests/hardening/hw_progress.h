/* SPDX-License-Identifier: MIT */
/* hw_progress.h - what the busy workload tells the test through shared memory. */
#ifndef TLM_HW_PROGRESS_H
#define TLM_HW_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

#define HW_MAX_THREADS 64

struct hw_progress {
	uint32_t nthreads;
	_Atomic uint64_t calls_at_exit; /* busyexit: the sum when a thread called _exit */
	_Atomic uint32_t pause;         /* set by the test: busy threads stop calling */
	struct hw_progress_thread {
		_Atomic uint64_t calls;   /* CUDA calls returned (each is one event) */
		_Atomic uint64_t last_ns; /* CLOCK_MONOTONIC when the last one returned */
		_Atomic uint32_t paused;  /* this thread saw pause, between two calls */
		char pad[44];
	} t[HW_MAX_THREADS];
};

#endif
