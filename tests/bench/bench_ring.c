/* SPDX-License-Identifier: MIT */
/*
 * bench_ring.c - recording throughput through the rings and the writer.
 *
 * Links libtlm's objects directly and calls the recorder from P producer
 * threads (stacks off, no CUDA): events per second from the first event until
 * the writer has written the last one (END record), and trace bytes per
 * event. Each configuration runs in a fresh process (one trace per process).
 *
 * usage: bench_ring [EVENTS_TOTAL] [COMPRESS 0|1]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recording/lifecycle.h"
#include "recording/recorder.h"

static unsigned long per_thread;
static pthread_barrier_t bar;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *producer(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg << 32;
	pthread_barrier_wait(&bar);
	for (unsigned long i = 0; i < per_thread; i += 2) {
		struct tlm__evargs a = {.op = TLM_OP_ALLOC, .kind = TLM_KIND_DEVICE, .api = TLM_API_cudaMalloc,
					.addr = base + (i & 1023) * 4096, .size = 4096, .device = 0};
		tlm__record(&a);
		a.op = TLM_OP_FREE;
		a.size = 0;
		tlm__record(&a);
	}
	return NULL;
}

static int child(unsigned threads, unsigned long total, const char *path)
{
	per_thread = total / threads;
	pthread_barrier_init(&bar, NULL, threads + 1);
	if (!tlm__recording())
		return 2;
	pthread_t t[64];
	for (unsigned i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, producer, (void *)(uintptr_t)(i + 1));
	double t0 = now();
	pthread_barrier_wait(&bar);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double t1 = now();
	tlm__writer_finish(); /* returns once everything is written */
	double t2 = now();
	struct stat st;
	stat(path, &st);
	unsigned long n = per_thread * threads;
	printf("%u producer%s: %6.2f M events/s recorded, %6.2f M events/s written; %.2f bytes/event\n", threads,
	       threads > 1 ? "s" : " ", (double)n / (t1 - t0) / 1e6, (double)n / (t2 - t0) / 1e6,
	       (double)st.st_size / (double)n);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long total = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000000;
	const char *compress = argc > 2 ? argv[2] : "1";
	static const unsigned conf[] = {1, 2, 8};
	printf("%lu events per run, stacks off, TLM_COMPRESS=%s\n", total, compress);
	fflush(stdout);
	for (size_t k = 0; k < sizeof conf / sizeof conf[0]; k++) {
		char path[128];
		snprintf(path, sizeof path, "/tmp/tlm-bench-ring-%d-%u.trace", (int)getpid(), conf[k]);
		pid_t pid = fork();
		if (pid == 0) {
			/* the library read its configuration at load: set it, then re-exec */
			setenv("TLM_OUTPUT", path, 1);
			setenv("TLM_STACK_DEPTH", "0", 1);
			setenv("TLM_COMPRESS", compress, 1);
			char n[32], th[8];
			snprintf(n, sizeof n, "%lu", total);
			snprintf(th, sizeof th, "%u", conf[k]);
			execl("/proc/self/exe", argv[0], "--child", th, n, path, (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}

/* re-exec entry: runs before main() decides anything else */
__attribute__((constructor(200))) static void maybe_child(void)
{
	FILE *f = fopen("/proc/self/cmdline", "r");
	if (!f)
		return;
	static char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *a[8] = {0};
	size_t k = 0;
	for (size_t i = 0; i < n && k < 8; i += strlen(buf + i) + 1)
		a[k++] = buf + i;
	if (k >= 5 && !strcmp(a[1], "--child"))
		exit(child((unsigned)atoi(a[2]), strtoul(a[3], NULL, 10), a[4]));
}
