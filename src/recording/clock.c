/* SPDX-License-Identifier: MIT */
/*
 * clock.c - event time stamps.
 *
 * The hot path reads the TSC (about 10 ns here, against 24 ns for the vDSO
 * clock_gettime) when the kernel itself uses the TSC as its clocksource (so
 * it is invariant and synchronised across CPUs); the writer turns ticks into
 * CLOCK_MONOTONIC nanoseconds with a calibration point taken at each drain,
 * so a conversion never extrapolates further than the age of an event.
 * Elsewhere the hot path reads CLOCK_MONOTONIC directly.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "recording/clock.h"

TLM_HOT bool tlm__use_tsc;

uint64_t tlm__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct {
	uint64_t t0, n0; /* first calibration point */
	uint64_t tk, nk; /* latest */
	double rate;     /* ns per tick */
} cal;

#if defined(__x86_64__)

static void pair(uint64_t *t, uint64_t *n)
{
	/* the clock read between two TSC reads; their mean is its tick */
	uint64_t a = __rdtsc();
	*n = tlm__now_ns();
	uint64_t b = __rdtsc();
	*t = a + (b - a) / 2;
}

void tlm__clock_init(void)
{
	char cs[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (f) {
		if (!fgets(cs, sizeof cs, f))
			cs[0] = 0;
		fclose(f);
	}
	tlm__use_tsc = !strcmp(cs, "tsc\n");
	if (!tlm__use_tsc)
		return;
	pair(&cal.t0, &cal.n0);
	/* a first rate over ~200 us; each drain refines it over the whole run */
	uint64_t t, n;
	do
		pair(&t, &n);
	while (n - cal.n0 < 200000);
	cal.rate = (double)(n - cal.n0) / (double)(t - cal.t0);
	cal.tk = t;
	cal.nk = n;
}

void tlm__clock_calibrate(void)
{
	if (!tlm__use_tsc)
		return;
	uint64_t t, n;
	pair(&t, &n);
	if (t > cal.t0 && n > cal.n0 + 1000000)
		cal.rate = (double)(n - cal.n0) / (double)(t - cal.t0);
	cal.tk = t;
	cal.nk = n;
}

uint64_t tlm__ticks_to_ns(uint64_t t)
{
	if (!tlm__use_tsc)
		return t;
	return cal.nk + (uint64_t)(int64_t)((double)(int64_t)(t - cal.tk) * cal.rate);
}

#else

void tlm__clock_init(void)
{
}
void tlm__clock_calibrate(void)
{
}
uint64_t tlm__ticks_to_ns(uint64_t t)
{
	return t;
}

#endif
