/* SPDX-License-Identifier: MIT */
/*
 * hw_leave.c - threads that leave a hooked call without returning, slow
 * first calls, and a host that moves its stderr (run under libtlm.so on the
 * simulated driver by test_leave_hw.c). A thread named "slowfree" blocks in
 * cuMemFree_v2 for TLM_SIM_SLOW_FREE_MS first (src/sim/driver/sim_memory.c).
 *
 *   longjmp N     N cudaMalloc/cudaFree pairs; a cudaMalloc, then its
 *                 cudaFree blocks until a SIGALRM handler siglongjmps out
 *                 of it; N pairs more ("calls" note: every call made)
 *   firstfree T   main makes T allocations; T threads, each one's first
 *                 CUDA call the free of one of them (slow), then one pair
 *   cancel N      a thread's cudaFree blocks and the thread is cancelled
 *                 inside it; then main makes N pairs
 *   stderr N      the host points fd 2 at $HW_DIR/host.err (writing one
 *                 line there itself), then N pairs, then exit()
 *   stderr-gone N the same, after closing every descriptor above 2 (tlm's
 *                 copy of stderr among them) and putting $HW_DIR/other.err
 *                 at descriptors 3..1100
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "hw_common.h"

static unsigned long calls;

static void die(const char *what)
{
	fprintf(stderr, "hw_leave: %s\n", what);
	_exit(3);
}

static void msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void pairs(unsigned n, size_t size)
{
	for (unsigned i = 0; i < n; i++) {
		void *p;
		if (cudaMalloc(&p, size))
			die("cudaMalloc");
		if (cudaFree(p))
			die("cudaFree");
		calls += 2;
	}
}

static sigjmp_buf out;

static void on_alarm(int sig)
{
	(void)sig;
	siglongjmp(out, 1);
}

static int leave_by_longjmp(unsigned n)
{
	pairs(n, 4096);
	void *p;
	if (cudaMalloc(&p, 8192))
		die("cudaMalloc");
	calls++;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	prctl(PR_SET_NAME, "slowfree", 0, 0, 0);
	if (!sigsetjmp(out, 1)) {
		struct itimerval it = {{0, 0}, {0, 200000}};
		setitimer(ITIMER_REAL, &it, NULL);
		calls++;
		cudaFree(p); /* blocks; the handler jumps out of it */
		die("the slow free returned");
	}
	prctl(PR_SET_NAME, "hw_leave", 0, 0, 0);
	pairs(n, 4096);
	hw_notef("calls %lu", calls);
	return 0;
}

static void *first_free(void *arg)
{
	prctl(PR_SET_NAME, "slowfree", 0, 0, 0);
	if (cudaFree(arg))
		die("cudaFree");
	prctl(PR_SET_NAME, "hw_leave_t", 0, 0, 0);
	void *p;
	if (cudaMalloc(&p, 512) || cudaFree(p))
		die("pair");
	return NULL;
}

static int first_call_slow(unsigned t)
{
	pthread_t th[64];
	void *p[64];
	if (t > 64)
		t = 64;
	for (unsigned i = 0; i < t; i++)
		if (cudaMalloc(&p[i], 1024 + i))
			die("cudaMalloc");
	for (unsigned i = 0; i < t; i++)
		pthread_create(&th[i], NULL, first_free, p[i]);
	for (unsigned i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	hw_notef("calls %u", 4 * t);
	return 0;
}

static void *cancelled(void *arg)
{
	(void)arg;
	void *p;
	if (cudaMalloc(&p, 2048))
		die("cudaMalloc");
	prctl(PR_SET_NAME, "slowfree", 0, 0, 0);
	cudaFree(p); /* blocks: cancelled inside */
	return NULL;
}

static int cancel_inside(unsigned n)
{
	pthread_t th;
	pthread_create(&th, NULL, cancelled, NULL);
	msleep(300); /* inside its cudaFree by now, well below the 1 s a thread may stay inside */
	pthread_cancel(th);
	pthread_join(th, NULL);
	pairs(n, 4096);
	hw_notef("calls %lu", calls + 2);
	return 0;
}

static int moved_stderr(unsigned n, int gone)
{
	const char *dir = getenv("HW_DIR");
	char path[600];
	if (!dir)
		die("HW_DIR");
	if (gone) {
		for (int fd = 3; fd < 1200; fd++)
			close(fd);
		snprintf(path, sizeof path, "%s/other.err", dir);
		int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0)
			die("other.err");
		for (int fd = 3; fd <= 1100; fd++)
			if (fd != o && dup2(o, fd) < 0)
				die("dup2");
	}
	snprintf(path, sizeof path, "%s/host.err", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0 || dup2(fd, 2) < 0)
		die("host.err");
	if (fd != 2)
		close(fd);
	static const char line[] = "the host's own line\n";
	if (write(2, line, sizeof line - 1) < 0)
		die("write");
	pairs(n, 4096);
	hw_notef("calls %lu", calls);
	exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		die("usage: hw_leave longjmp|firstfree|cancel|stderr|stderr-gone N");
	unsigned n = (unsigned)atoi(argv[2]);
	if (!strcmp(argv[1], "longjmp"))
		return leave_by_longjmp(n);
	if (!strcmp(argv[1], "firstfree"))
		return first_call_slow(n);
	if (!strcmp(argv[1], "cancel"))
		return cancel_inside(n);
	if (!strcmp(argv[1], "stderr"))
		return moved_stderr(n, 0);
	if (!strcmp(argv[1], "stderr-gone"))
		return moved_stderr(n, 1);
	die("unknown scenario");
	return 3;
}
