/* SPDX-License-Identifier: MIT */
/*
 * bench_shim.c - what libtlm.so adds to each recorded event.
 *
 * Runs N cudaMalloc/cudaFree-like driver pairs (cuMemAlloc_v2/cuMemFree_v2 on
 * the simulated driver) from a call chain DEPTH frames deep, three ways: with
 * no preload, under libtlm.so with stacks on, and with TLM_STACK_DEPTH=0.
 * The added cost per event is (run under tlm - plain run) / (2 * N), the
 * same measure heaptrack's figure in the issue uses. REPEAT rounds each run
 * the three in turn, each in a fresh process, so that a drift of the
 * machine's speed falls on all three alike; reported are each one's median
 * and minimum, and the median of the rounds' own differences (a round's
 * tlm run minus its plain run), the figure least moved by a noisy machine.
 *
 * usage: bench_shim LIBTLM [PAIRS] [DEPTH] [REPEAT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/sim/include/sim_driver.h"

static unsigned long pairs;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static __attribute__((noinline)) void loop(void)
{
	for (unsigned long i = 0; i < pairs; i++) {
		CUdeviceptr p;
		if (cuMemAlloc_v2(&p, 4096) != 0 || cuMemFree_v2(p) != 0)
			abort();
	}
}

/* a call chain: each level is a real frame */
static __attribute__((noinline)) void descend(int left)
{
	if (left <= 0)
		loop();
	else
		descend(left - 1);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

static int child(int depth)
{
	CUcontext ctx;
	if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx))
		return 2;
	CUdeviceptr w;
	cuMemAlloc_v2(&w, 1); /* warm up: trace start, first stack */
	cuMemFree_v2(w);
	double t0 = now();
	descend(depth);
	double t1 = now();
	printf("%.3f\n", (t1 - t0) * 1e9 / (double)pairs);
	return 0;
}

static double run(char *self, const char *preload, const char *depth_env, int depth)
{
	int fd[2];
	if (pipe(fd))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		if (depth_env)
			setenv("TLM_STACK_DEPTH", depth_env, 1);
		setenv("TLM_OUTPUT", "/tmp/tlm-bench-%p.trace", 1);
		setenv("TLM_SUMMARY", "0", 1);
		char d[16], n[32];
		snprintf(d, sizeof d, "%d", depth);
		snprintf(n, sizeof n, "%lu", pairs);
		execl(self, self, "--child", n, d, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char buf[64] = {0};
	ssize_t k = read(fd[0], buf, sizeof buf - 1);
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	char pat[64];
	snprintf(pat, sizeof pat, "/tmp/tlm-bench-%d.trace", (int)pid);
	unlink(pat);
	if (k <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench child failed\n");
		exit(1);
	}
	return atof(buf);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof v[0], cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--child")) {
		pairs = strtoul(argv[2], NULL, 10);
		return child(atoi(argv[3]));
	}
	if (argc < 2) {
		fprintf(stderr, "usage: bench_shim LIBTLM [PAIRS] [DEPTH] [REPEAT]\n");
		return 64;
	}
	pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
	/* frames below descend(): loop, child, main, __libc_start_call_main,
	 * __libc_start_main, _start: 6, so DEPTH-6 levels give a DEPTH-frame stack */
	int depth = argc > 3 ? atoi(argv[3]) : 30;
	int rep = argc > 4 ? atoi(argv[4]) : 5;
	if (rep > 31)
		rep = 31;
	if (rep < 1)
		rep = 1;
	int levels = depth > 6 ? depth - 6 : 0;
	double p[32], st[32], no[32], dst[32], dno[32];
	for (int i = 0; i < rep; i++) {
		p[i] = run(argv[0], NULL, NULL, levels);
		st[i] = run(argv[0], argv[1], NULL, levels);
		no[i] = run(argv[0], argv[1], "0", levels);
		dst[i] = (st[i] - p[i]) / 2;
		dno[i] = (no[i] - p[i]) / 2;
	}
	double plain = median_of(p, rep), stk = median_of(st, rep), nostk = median_of(no, rep);
	double pmin = p[0], smin = st[0], nmin = no[0]; /* sorted by median_of */
	printf("pairs %lu, stack depth %d, %d interleaved rounds: median (minimum)\n", pairs, depth, rep);
	printf("plain:            %6.1f (%6.1f) ns per alloc+free pair\n", plain, pmin);
	printf("tlm, %2d frames:   %6.1f (%6.1f) ns per pair -> %5.1f (%5.1f) ns added per event; "
	       "rounds' own: %5.1f\n",
	       depth, stk, smin, (stk - plain) / 2, (smin - pmin) / 2, median_of(dst, rep));
	printf("tlm, stacks off:  %6.1f (%6.1f) ns per pair -> %5.1f (%5.1f) ns added per event; "
	       "rounds' own: %5.1f\n",
	       nostk, nmin, (nostk - plain) / 2, (nmin - pmin) / 2, median_of(dno, rep));
	return 0;
}
