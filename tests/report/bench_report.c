/* SPDX-License-Identifier: MIT */
/*
 * bench_report.c - throughput and memory of the report analysis. Not a test:
 *   build/tests/report/bench_report [EVENTS...]     (default 1000000 10000000)
 * For each size it writes a synthetic trace (constant live set of 1000
 * allocations, alloc/free churn from 50 stacks of 24 frames, 2 devices) to
 * $TMPDIR or /dev/shm, then, in a fresh child process, builds the report
 * (no rendering) and prints events/s and the child's peak RSS. Peak memory
 * must not grow with the event count.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/report.h"

#define LIVE 1000
#define STACKS 50

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int file_sink(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -5;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int generate(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	struct tlm_trace_header h;
	memset(&h, 0, sizeof h);
	h.version = TLM_TRACE_VERSION;
	h.clock_id = 1;
	h.start_monotonic_ns = 1000000000ULL;
	h.stack_depth = 64;
	char *args[] = {"bench_report"};
	h.argc = 1;
	h.argv = args;
	struct tlm_tw *w = tlm_tw_open(&h, file_sink, f, 64 << 10, 0, NULL);
	if (!w)
		return -1;
	for (uint32_t s = 1; s <= STACKS; s++) {
		uint64_t ip[24];
		for (int k = 0; k < 24; k++)
			ip[k] = 0x400000 + s * 0x100 + (uint64_t)k * 0x1000;
		tlm_tw_stack(w, s, ip, 24);
	}
	struct { uint64_t addr; int dev; } live[LIVE];
	uint64_t seed = 88172645463325252ULL, t = h.start_monotonic_ns, next_addr[2] = {0x200000000000ULL, 0x220000000000ULL};
	struct tlm_event e;
	memset(&e, 0, sizeof e);
	uint64_t written = 0;
	for (int i = 0; i < LIVE && written < n; i++, written++) {
		live[i].dev = i & 1;
		live[i].addr = next_addr[live[i].dev] += 1 << 21;
		e = (struct tlm_event){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .addr = live[i].addr,
				       .size = 4096 + rng(&seed) % (1 << 20), .time_ns = t += 1000,
				       .stack_id = (uint32_t)(1 + i % STACKS), .device = (int16_t)live[i].dev};
		tlm_tw_event(w, &e);
	}
	while (written + 2 <= n) {
		int i = (int)(rng(&seed) % LIVE);
		e = (struct tlm_event){.op = TLM_OP_FREE, .kind = TLM_KIND_DEVICE, .addr = live[i].addr,
				       .time_ns = t += 1000, .device = (int16_t)live[i].dev};
		tlm_tw_event(w, &e);
		/* addresses are reused the way a first-fit driver reuses them */
		uint32_t s = (uint32_t)(1 + rng(&seed) % STACKS);
		e = (struct tlm_event){.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .addr = live[i].addr,
				       .size = 4096 * (1 + s % 8), .time_ns = t += 1000, .stack_id = s,
				       .device = (int16_t)live[i].dev};
		tlm_tw_event(w, &e);
		written += 2;
	}
	tlm_tw_end(w, t + 1000);
	tlm_tw_close(w);
	return fclose(f);
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {"1000000", "10000000"};
	int nsizes = argc > 1 ? argc - 1 : 2;
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	char path[512];
	snprintf(path, sizeof path, "%s/tlm-bench-report-%d.trace", dir, (int)getpid());
	for (int k = 0; k < nsizes; k++) {
		uint64_t n = strtoull(argc > 1 ? argv[k + 1] : defaults[k], NULL, 0);
		if (generate(path, n)) {
			perror(path);
			return 1;
		}
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			char err[256];
			double t0 = now();
			struct tlm_report *r = tlm_report_build(path, err, sizeof err);
			double dt = now() - t0;
			if (!r) {
				fprintf(stderr, "bench_report: %s\n", err);
				_exit(1);
			}
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			printf("%10llu events: %6.3f s, %6.2f M events/s, peak RSS %ld KiB (live sites %zu, churn %zu)\n",
			       (unsigned long long)r->events, dt, (double)r->events / dt / 1e6, ru.ru_maxrss, r->nlive,
			       r->nchurn);
			tlm_report_free(r);
			fflush(stdout);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		unlink(path);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
