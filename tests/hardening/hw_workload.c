/* SPDX-License-Identifier: MIT */
/*
 * hw_workload.c - the program under test of the hardening suite (run under
 * libtlm.so on the simulated driver by test_hardening.c):
 *
 *   busy THREADS           threads allocate and free at random until killed;
 *                          progress in $HW_DIR/progress (shared memory) says
 *                          how many calls each made and when the last one
 *                          returned
 *   forkstorm THREADS FORKS [PAUSE_US [vary]]  THREADS allocate (pausing
 *                          PAUSE_US after every 32 pairs; "vary": each pair
 *                          from another stack position, so that the unwind
 *                          cache misses and libunwind runs) while main forks FORKS
 *                          times; each child makes 3 cudaMalloc/cudaFree
 *                          pairs of its own size and exits
 *   sigstorm THREADS MS [MIN]  THREADS allocate while another thread sends
 *                          them SIGUSR1 (handler installed with SA_RESTART)
 *                          as fast as it can for MS milliseconds, and on
 *                          until MIN signals were handled (at most 30 s):
 *                          on a loaded machine under ThreadSanitizer, which
 *                          runs handlers only at its own points, few are
 *                          handled in the first second
 *   late                   CUDA calls from main, from atexit handlers and
 *                          (with HW_LATE=1) from hw_late.so's destructor
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw_common.h"
#include "hw_progress.h"

#define U(p) ((uint64_t)(uintptr_t)(p))

static void die(const char *what)
{
	fprintf(stderr, "hw_workload: %s\n", what);
	_exit(3);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t xorshift(uint32_t *s)
{
	uint32_t x = *s;
	x ^= x << 13, x ^= x >> 17, x ^= x << 5;
	return *s = x;
}

static atomic_int stop;

/* One call from main before any thread starts: the runtime double resolves
 * the driver on its first call and reads what that sets without a barrier
 * (a race ThreadSanitizer reports when threads start cold). */
static void warm_up(void)
{
	void *p;
	if (cudaMalloc(&p, 1) != 0 || cudaFree(p) != 0)
		die("warm up");
}
static atomic_ullong total_events;

/* ---- busy: random alloc/free until killed ---------------------------- */

static struct hw_progress *prog;
static uint64_t exit_at_ns; /* busyexit: thread 0 calls _exit(5) then */

static void *busy_thread(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint32_t seed = 0x9e3779b9u * (id + 1);
	void *live[8] = {0};
	struct hw_progress_thread *me = &prog->t[id];
	for (;;) {
		if (atomic_load_explicit(&prog->pause, memory_order_acquire)) {
			/* no call in flight: the test may count what was done */
			atomic_store_explicit(&me->paused, 1, memory_order_release);
			struct timespec ms = {0, 1000000};
			while (atomic_load_explicit(&prog->pause, memory_order_acquire))
				nanosleep(&ms, NULL);
			atomic_store_explicit(&me->paused, 0, memory_order_relaxed);
		}
		unsigned k = xorshift(&seed) % 8;
		if (live[k]) {
			if (cudaFree(live[k]) != 0)
				die("busy free");
			live[k] = NULL;
		} else if (cudaMalloc(&live[k], ((size_t)xorshift(&seed) % 64 + 1) * 256) != 0) {
			die("busy alloc");
		}
		uint64_t t = now_ns();
		atomic_store_explicit(&me->last_ns, t, memory_order_relaxed);
		atomic_fetch_add_explicit(&me->calls, 1, memory_order_release);
		if (exit_at_ns && id == 0 && t >= exit_at_ns) {
			/* every call counted here returned before the _exit */
			uint64_t sum = 0;
			for (unsigned i = 0; i < prog->nthreads; i++)
				sum += atomic_load(&prog->t[i].calls);
			atomic_store(&prog->calls_at_exit, sum);
			_exit(5);
		}
	}
	return NULL;
}

static int busy(unsigned n)
{
	const char *dir = getenv("HW_DIR");
	if (!dir || n == 0 || n > HW_MAX_THREADS)
		die("busy: HW_DIR and 1..64 threads");
	char path[512];
	snprintf(path, sizeof path, "%s/progress", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof *prog) != 0)
		die("progress file");
	prog = mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (prog == MAP_FAILED)
		die("mmap progress");
	prog->nthreads = n;
	warm_up();
	pthread_t t[HW_MAX_THREADS];
	for (unsigned i = 0; i < n; i++)
		pthread_create(&t[i], NULL, busy_thread, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* ---- forkstorm --------------------------------------------------------- */

static unsigned pause_us; /* after every 32 pairs; 0: none */
static int vary;          /* calls from ever different stack positions */

static __attribute__((noinline)) void churn_pair(void)
{
	void *p;
	if (cudaMalloc(&p, 4096) != 0 || cudaFree(p) != 0)
		die("churn");
}

static __attribute__((noinline)) void churn_shifted(unsigned shift)
{
	volatile char *pad = __builtin_alloca(16 + shift * 16);
	pad[0] = 0;
	churn_pair();
}

static void *churn_until_stop(void *arg)
{
	(void)arg;
	unsigned long long n = 0;
	uint32_t seed = (uint32_t)(uintptr_t)&n | 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (vary)
			churn_shifted(xorshift(&seed) % 4096); /* the unwind cache misses: full unwinds */
		else
			churn_pair();
		n += 2;
		if (pause_us && n % 64 == 0) {
			struct timespec ts = {0, (long)pause_us * 1000};
			nanosleep(&ts, NULL);
		}
	}
	atomic_fetch_add(&total_events, n);
	return NULL;
}

static int forkstorm(unsigned n, unsigned forks)
{
	if (n > 256)
		n = 256;
	warm_up();
	pthread_t t[256];
	for (unsigned i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, churn_until_stop, NULL) != 0)
			die("pthread_create");
	hw_notef("parent %d", (int)getpid());
	unsigned ok = 0;
	for (unsigned f = 0; f < forks; f++) {
		struct timespec ts = {0, 5 * 1000000L}; /* let the threads run between forks */
		nanosleep(&ts, NULL);
		pid_t c = fork();
		if (c < 0)
			die("fork");
		if (c == 0) {
			/* the child: only this thread exists; its own size marks its events */
			uint64_t size = 700000 + (uint64_t)f;
			for (int i = 0; i < 3; i++) {
				void *p;
				if (cudaMalloc(&p, size) != 0 || cudaFree(p) != 0)
					_exit(4);
			}
			hw_notef("child %d %llu", (int)getpid(), (unsigned long long)size);
			exit(0); /* atexit handlers and destructors: the child's trace ends cleanly */
		}
		int st;
		while (waitpid(c, &st, 0) < 0)
			if (errno != EINTR)
				die("waitpid");
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else
			hw_notef("child_failed %d %#x", (int)c, st);
	}
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	hw_notef("children_ok %u", ok);
	hw_notef("events %llu", (unsigned long long)atomic_load(&total_events));
	return ok == forks ? 0 : 5;
}

/* ---- sigstorm ---------------------------------------------------------- */

static atomic_ullong handled;

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
}

static int sigstorm(unsigned n, unsigned ms, unsigned long long min_handled)
{
	if (n > 64)
		n = 64;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	warm_up();
	pthread_t t[64];
	for (unsigned i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn_until_stop, NULL);
	uint64_t start = now_ns(), end = start + (uint64_t)ms * 1000000u, cap = start + 30000000000ull;
	unsigned long long sent = 0;
	for (uint64_t now = start; now < end || (atomic_load(&handled) < min_handled && now < cap); now = now_ns())
		for (unsigned i = 0; i < n; i++)
			if (pthread_kill(t[i], SIGUSR1) == 0)
				sent++;
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	hw_notef("sent %llu", sent);
	hw_notef("handled %llu", (unsigned long long)atomic_load(&handled));
	hw_notef("events %llu", (unsigned long long)atomic_load(&total_events));
	return 0;
}

/* ---- late: atexit handlers (and hw_late.so's destructor) --------------- */

static void pair(size_t size)
{
	void *p;
	if (cudaMalloc(&p, size) != 0)
		die("late alloc");
	hw_expect_alloc(U(p), size);
	if (cudaFree(p) != 0)
		die("late free");
	hw_expect_free(U(p));
}

static void at_exit_1(void)
{
	pair(3001);
	hw_notef("atexit1_done 1");
}

static void at_exit_2(void)
{
	pair(3002);
	hw_notef("atexit2_done 1");
}

static int late(void)
{
	atexit(at_exit_1);
	pair(1000);
	atexit(at_exit_2); /* runs first */
	return 0;
}

/* Under the ThreadSanitizer suite (libtsan preloaded): GCC 12's runtime
 * makes a thread's signal context on its first blocking call (here main's
 * first pthread_join) with a plain store, not a compare-and-swap, so a
 * signal that comes while it does so is armed in a context that is then
 * overwritten: never delivered, the workload runs on unsignalled (later
 * runtimes use a CAS). A zero sleep is a blocking call: main has its
 * context before the test can signal it (before the trace exists). */
static void settle_signal_context(void)
{
	struct timespec zero = {0, 0};
	nanosleep(&zero, NULL);
}

int main(int argc, char **argv)
{
	settle_signal_context();
	if (argc < 2)
		die("usage: hw_workload busy|forkstorm|sigstorm|late [ARGS]");
	unsigned a = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
	unsigned b = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 20;
	if (!strcmp(argv[1], "busy"))
		return busy(a);
	if (!strcmp(argv[1], "busyexit")) { /* busyexit THREADS MS: a thread leaves by _exit after MS */
		exit_at_ns = now_ns() + (uint64_t)b * 1000000ull;
		return busy(a);
	}
	if (!strcmp(argv[1], "forkstorm")) {
		pause_us = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0;
		vary = argc > 5 && !strcmp(argv[5], "vary");
		return forkstorm(a, b);
	}
	if (!strcmp(argv[1], "sigstorm"))
		return sigstorm(a, b, argc > 4 ? strtoull(argv[4], NULL, 10) : 0);
	if (!strcmp(argv[1], "late"))
		return late();
	die("unknown scenario");
	return 64;
}
