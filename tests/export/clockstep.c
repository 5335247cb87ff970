/* SPDX-License-Identifier: MIT */
/*
 * clockstep.c - a preload for test export_clock_step: CLOCK_REALTIME as the
 * system's plus an offset the program sets with tlm_test_clock_step(ns),
 * the wall clock set during a run (by hand, a time daemon's step, a
 * hypervisor's agent) without touching the machine's own. Every reader in
 * the process that asks libc's clock_gettime sees it: the program's own
 * (Python's time.time_ns, as PyTorch reads the wall clock at each event) and
 * libtlm.so's writer.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static _Atomic int64_t offset_ns;

__attribute__((visibility("default"))) void tlm_test_clock_step(int64_t ns)
{
	atomic_fetch_add(&offset_ns, ns);
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(id, ts);
	int64_t off = atomic_load(&offset_ns);
	if (rc == 0 && off && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + off;
		ts->tv_sec = (time_t)(ns / 1000000000);
		ts->tv_nsec = (long)(ns % 1000000000);
	}
	return rc;
}
