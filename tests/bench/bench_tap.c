/* SPDX-License-Identifier: MIT */
/*
 * bench_tap.c - the torch tap's path as PyTorch's caching allocator drives it
 * (a benchmark and icount.sh's "tap" workload, not a test).
 *
 *   bench_tap PAIRS [PATHS] [DEPTHS] [OUTER] [EVICT_KB]
 *
 * Calls c10::reportMemoryUsageToProfiler (the current mangled form) the way
 * libc10_cuda.so does: every block allocation from one call site inside the
 * "allocator", reached through PATHS distinct caller functions (1..16, each
 * with its own frame size) and 1..DEPTHS recursion levels, so PATHS x DEPTHS
 * distinct stacks come back over and over, each at its own stack position,
 * with one caller address, as a training step's few hundred blocks do, all
 * under OUTER common frames (default 24: the interpreter's and the
 * framework's frames outside every PyTorch op are about that many); each
 * block is freed right away from main (a free asks for Python frames only:
 * none here, a native program). Under
 * libtlm.so the symbol is tlm's (the preload wins), without it there is no
 * such symbol and a no-op stands in, so plain runs cost the same loop.
 *
 * EVICT_KB > 0: the host's own work between two blocks, as in a training
 * step, where each op's kernels and the framework's code leave tlm's lines
 * out of the near caches: before each pair, EVICT_KB KiB are copied (twice
 * the last-level cache per core evicts it), and only the pair is timed; it
 * prints the median ns per pair (allocation and free) and the mean of the
 * middle 80 %. The event's cost then is mostly its cache misses, which
 * counted instructions (icount.sh) do not see.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*tap_fn)(void *, int64_t, size_t, size_t, uint64_t);

static void no_tap(void *p, int64_t d, size_t a, size_t r, uint64_t dev)
{
	(void)p, (void)d, (void)a, (void)r, (void)dev;
}

static tap_fn tap = no_tap;
static size_t allocated;

#define DEV_CUDA0 1u /* c10::Device {type CUDA (1), index 0} in a register */

/* the allocator: one call site for every block */
static __attribute__((noinline)) void alloc_block(uintptr_t addr, int64_t size)
{
	allocated += (size_t)size;
	tap((void *)addr, size, allocated, 1u << 30, DEV_CUDA0);
	__asm__ volatile("" ::: "memory");
}

/* DEPTHS levels of one frame size, larger than the paths' sizes differ by,
 * so that every (path, depth) pair has a stack position of its own */
static __attribute__((noinline)) void deep(int depth, uintptr_t addr)
{
	char pad[272];
	__asm__ volatile("" : : "r"(pad) : "memory");
	if (depth > 0)
		deep(depth - 1, addr);
	else
		alloc_block(addr, 512);
	__asm__ volatile("" ::: "memory");
}

#define PATH(k)                                                                          \
	static __attribute__((noinline)) void path##k(int depth, uintptr_t addr)        \
	{                                                                                \
		char pad[16 * (k + 1)];                                                  \
		__asm__ volatile("" : : "r"(pad) : "memory"); /* a frame of its own size */ \
		deep(depth, addr);                                                       \
		__asm__ volatile("" ::: "memory");                                      \
	}
PATH(0) PATH(1) PATH(2) PATH(3) PATH(4) PATH(5) PATH(6) PATH(7)
PATH(8) PATH(9) PATH(10) PATH(11) PATH(12) PATH(13) PATH(14) PATH(15)

static void (*const paths[16])(int, uintptr_t) = {path0, path1, path2,  path3,  path4,  path5,  path6,  path7,
						   path8, path9, path10, path11, path12, path13, path14, path15};

static long n;
static int np, nd;
static size_t evict_bytes;
static char *evict_src, *evict_dst;
static uint64_t *pair_ns;

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static __attribute__((noinline)) void run(void)
{
	const uintptr_t base = 0x7f0000000000u;
	for (long i = 0; i < n; i++) {
		uintptr_t addr = base + (uintptr_t)(i % 1024) * 512;
		uint64_t t0 = 0;
		if (evict_bytes) {
			memcpy(evict_dst, evict_src, evict_bytes);
			__asm__ volatile("" ::: "memory");
			t0 = now_ns();
		}
		paths[i % np]((int)(i / np % nd), addr);
		allocated -= 512;
		tap((void *)addr, -512, allocated, 1u << 30, DEV_CUDA0);
		if (evict_bytes)
			pair_ns[i] = now_ns() - t0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static __attribute__((noinline)) void outer(int k)
{
	if (k > 0)
		outer(k - 1);
	else
		run();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 100000;
	np = argc > 2 ? atoi(argv[2]) : 16;
	nd = argc > 3 ? atoi(argv[3]) : 8;
	int no = argc > 4 ? atoi(argv[4]) : 24;
	long ekb = argc > 5 ? atol(argv[5]) : 0;
	if (n < 1 || np < 1 || np > 16 || nd < 1 || no < 0 || no > 1000 || ekb < 0 || ekb > (1l << 20)) {
		fprintf(stderr, "usage: bench_tap PAIRS [PATHS 1..16] [DEPTHS] [OUTER] [EVICT_KB 0..1048576]\n");
		return 2;
	}
	if (ekb) {
		evict_bytes = (size_t)ekb * 1024 / 2;
		evict_src = malloc(evict_bytes);
		evict_dst = malloc(evict_bytes);
		pair_ns = malloc((size_t)n * sizeof *pair_ns);
		if (!evict_src || !evict_dst || !pair_ns) {
			fprintf(stderr, "bench_tap: out of memory\n");
			return 1;
		}
		memset(evict_src, 1, evict_bytes);
		memset(evict_dst, 2, evict_bytes);
	}
	void *t = dlsym(RTLD_DEFAULT, "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE");
	if (t)
		tap = (tap_fn)t;
	outer(no);
	printf("%ld pairs, %d paths x %d depths under %d frames, tap %s\n", n, np, nd, no, t ? "tlm's" : "none");
	if (ekb) {
		qsort(pair_ns, (size_t)n, sizeof *pair_ns, cmp_u64);
		double sum = 0;
		long lo = n / 10, hi = n - n / 10;
		for (long i = lo; i < hi; i++)
			sum += (double)pair_ns[i];
		printf("caches evicted (%ld KiB) before each pair: median %llu ns per pair, mean of the middle 80%% %.0f\n",
		       ekb, (unsigned long long)pair_ns[n / 2], hi > lo ? sum / (double)(hi - lo) : 0.0);
	}
	return 0;
}
