/* SPDX-License-Identifier: MIT */
/*
 * bench_seq.c - the cost of taking a global sequence number, per event.
 *
 * The recorder orders events across threads by one shared counter (ring.h):
 * it announces a lower bound in its own ring's `inflight` (seq_cst store),
 * then takes a number with a seq_cst fetch_add. THREADS threads do only that,
 * PER_THREAD times each, all at once (a barrier), in four ways:
 *   read-bound  bound read from the shared counter first (tlm before issue 12)
 *   own-bound   bound = one past the thread's own last number (tlm now)
 *   per-thread  the same two operations on the thread's own counter (the
 *               floor: no line shared between threads)
 *   tsc         a TSC read ordered by lfence on both sides in place of the
 *               add (what a clock-ordered scheme would pay at least)
 * Prints ns per event (wall time of the slowest thread / PER_THREAD), the
 * minimum of REPEAT rounds (the round least disturbed by other work).
 *
 * usage: bench_seq [THREADS] [PER_THREAD] [REPEAT]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { READ_BOUND, OWN_BOUND, PER_THREAD, TSC, MODES };
static const char *const names[MODES] = {"read-bound", "own-bound", "per-thread", "tsc"};

static _Alignas(64) _Atomic uint64_t shared_seq;
struct own {
	_Alignas(64) _Atomic uint64_t inflight;
	_Atomic uint64_t counter;
	uint64_t last;
	uint64_t sum;
};
static struct own own[64];
static unsigned long per;
static int mode;
static pthread_barrier_t bar;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline uint64_t tsc_ordered(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

static void *worker(void *arg)
{
	struct own *o = arg;
	pthread_barrier_wait(&bar);
	uint64_t sum = 0;
	for (unsigned long i = 0; i < per; i++) {
		uint64_t s;
		switch (mode) {
		case READ_BOUND:
			atomic_store_explicit(&o->inflight, atomic_load_explicit(&shared_seq, memory_order_relaxed),
					      memory_order_seq_cst);
			s = atomic_fetch_add_explicit(&shared_seq, 1, memory_order_seq_cst);
			break;
		case OWN_BOUND:
			atomic_store_explicit(&o->inflight, o->last, memory_order_seq_cst);
			s = atomic_fetch_add_explicit(&shared_seq, 1, memory_order_seq_cst);
			o->last = s + 1;
			break;
		case PER_THREAD:
			atomic_store_explicit(&o->inflight, o->last, memory_order_seq_cst);
			s = atomic_fetch_add_explicit(&o->counter, 1, memory_order_seq_cst);
			o->last = s + 1;
			break;
		default:
			atomic_store_explicit(&o->inflight, o->last, memory_order_seq_cst);
			s = tsc_ordered();
			o->last = s;
			break;
		}
		sum += s;
		atomic_store_explicit(&o->inflight, UINT64_MAX, memory_order_release);
	}
	o->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
	per = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
	int repeat = argc > 3 ? atoi(argv[3]) : 5;
	if (threads < 1 || threads > 64 || repeat < 1) {
		fprintf(stderr, "usage: bench_seq [THREADS 1..64] [PER_THREAD] [REPEAT]\n");
		return 2;
	}
	for (mode = 0; mode < MODES; mode++) {
		double best = 1e30;
		for (int r = 0; r < repeat; r++) {
			pthread_t t[64];
			pthread_barrier_init(&bar, NULL, threads + 1);
			for (unsigned i = 0; i < threads; i++)
				pthread_create(&t[i], NULL, worker, &own[i]);
			pthread_barrier_wait(&bar);
			double t0 = now();
			for (unsigned i = 0; i < threads; i++)
				pthread_join(t[i], NULL);
			double ns = (now() - t0) * 1e9 / (double)per;
			pthread_barrier_destroy(&bar);
			if (ns < best)
				best = ns;
		}
		printf("%-10s %u thread%s: %6.1f ns per event\n", names[mode], threads, threads > 1 ? "s" : " ", best);
	}
	return 0;
}
