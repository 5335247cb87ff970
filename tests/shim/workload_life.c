/* SPDX-License-Identifier: MIT */
/*
 * workload_life.c - process-lifecycle scenarios: many threads with address
 * reuse, fork, exec, kill -9, a fatal signal, drop mode, late teardown.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static unsigned long arg_ul(int argc, char **argv, int i, unsigned long def)
{
	return argc > i ? strtoul(argv[i], NULL, 10) : def;
}

/* N pairs of cudaMalloc/cudaFree of one size: the simulated driver hands the
 * lowest free address out again, so threads reuse each other's addresses. */
static unsigned long pairs;
static pthread_barrier_t barrier;

static void *churn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	for (unsigned long i = 0; i < pairs; i++) {
		void *p;
		wl_check(cudaMalloc(&p, 4096) == 0, "churn alloc");
		wl_check(cudaFree(p) == 0, "churn free");
	}
	return NULL;
}

static int threads(unsigned long n, unsigned long per)
{
	void *warm;
	wl_check(cudaMalloc(&warm, 1) == 0 && cudaFree(warm) == 0, "warm up");
	pairs = per;
	pthread_t t[256];
	if (n > 256)
		n = 256;
	pthread_barrier_init(&barrier, NULL, (unsigned)n);
	for (unsigned long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (unsigned long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	wl_note("events %lu", 2 + 2 * n * per);
	return 0;
}

static int alloc_n(unsigned n, void **out)
{
	for (unsigned i = 0; i < n; i++) {
		wl_check(cudaMalloc(&out[i], 1000 + i) == 0, "alloc");
		wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(out[i]), 1000 + i, 0, 0, 0, 0,
			  TLM_EVF_RUNTIME);
	}
	return 0;
}

static int do_fork(void)
{
	void *p[4];
	alloc_n(2, p);
	wl_note("parent %d", (int)getpid());
	fflush(NULL);
	pid_t c = fork();
	if (c == 0) {
		/* the child writes its own truth lines, tagged by pid */
		void *q;
		wl_check(cudaMalloc(&q, 31337) == 0, "child alloc");
		wl_note("child %d %llx", (int)getpid(), (unsigned long long)WL_U(q));
		wl_check(cudaFree(q) == 0, "child free");
		exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	wl_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child ok");
	alloc_n(1, &p[2]);
	return 0;
}

/* A fork right after the first event, while the writer thread may still be
 * starting: the child must never wait for a lock the parent's writer held
 * at the fork. The parent allocates 1000 B, forks, waits for the child (5 s
 * at most: "child_hung 1"), frees; the child allocates and frees 2000 B. */
static int fork_early(void)
{
	void *q;
	wl_check(cudaMalloc(&q, 1000) == 0, "alloc");
	fflush(NULL);
	pid_t c = fork();
	wl_check(c >= 0, "fork");
	if (c == 0) {
		void *x;
		wl_check(cudaMalloc(&x, 2000) == 0 && cudaFree(x) == 0, "child pair");
		exit(0);
	}
	int st = wl_wait_child(c, 5);
	wl_check(cudaFree(q) == 0, "free");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

static int do_exec(char *self)
{
	void *p[2];
	alloc_n(2, p);
	wl_note("before_exec %d", (int)getpid());
	fflush(NULL);
	char *argv[] = {self, "exec-child", NULL};
	execv(self, argv);
	wl_check(0, "execv");
	return 1;
}

static int exec_child(void)
{
	void *p[1];
	wl_note("after_exec %d", (int)getpid());
	alloc_n(1, p);
	return 0;
}

/* allocate, wait longer than the drain interval, then die without a chance
 * to flush: everything made before the wait must be in the trace */
static int kill9(unsigned n, unsigned wait_ms)
{
	void **p = calloc(n, sizeof *p);
	alloc_n(n, p);
	fflush(NULL);
	wl_msleep(wait_ms);
	kill(getpid(), SIGKILL);
	return 1;
}

static int fatal(unsigned n)
{
	void **p = calloc(n, sizeof *p);
	alloc_n(n, p);
	fflush(NULL);
	volatile int *null = NULL;
	*null = 1; /* SIGSEGV */
	return 1;
}

static int burst(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p;
		wl_check(cudaMalloc(&p, 64) == 0, "burst alloc");
		wl_check(cudaFree(p) == 0, "burst free");
	}
	wl_note("attempted %lu", 2 * n);
	return 0;
}

/* a thread keeps allocating while main returns: events after the final
 * flush must still be written (or counted), never crash or hang */
static void *late_loop(void *arg)
{
	(void)arg;
	for (;;) {
		void *p;
		if (cudaMalloc(&p, 128) == 0)
			cudaFree(p);
	}
	return NULL;
}

static int late(void)
{
	pthread_t t;
	void *p;
	wl_check(cudaMalloc(&p, 1) == 0, "init");
	pthread_create(&t, NULL, late_loop, NULL);
	wl_msleep(50);
	return 0; /* exit() with the thread still running */
}

extern void *wl_early_ptr, *wl_early_thread_ptr;

static int early(void)
{
	/* the library constructor's allocations, then one from main */
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(wl_early_ptr), 1111, 0, 0, 0, 0,
		  TLM_EVF_RUNTIME);
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(wl_early_thread_ptr), 2222, 0, 0, 0, 0,
		  TLM_EVF_RUNTIME);
	void *p[1];
	alloc_n(1, p);
	return 0;
}

static int plugin(void)
{
	/* recording (and the writer thread) starts before the dlopen; then the
	 * writer drains a few times while this thread is idle, so it meets the
	 * new module with nothing ordering it after the loader's writes but the
	 * loader's own lock (ThreadSanitizer once called that a race) */
	void *first[1];
	alloc_n(1, first);
	void *h = dlopen(getenv("WL_PLUGIN"), RTLD_NOW);
	wl_check(h != NULL, "dlopen plugin");
	wl_msleep(30);
	void *(*f)(size_t) = (void *(*)(size_t))dlsym(h, "wl_plugin_alloc");
	wl_check(f != NULL, "plugin symbol");
	void *p = f(4321);
	wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(p), 4321, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	wl_check(dlclose(h) == 0, "dlclose");
	void *q[1];
	alloc_n(1, q); /* after the unload */
	return 0;
}

/* tlm_debug_pause (libtlm.so, TLM_DEBUG_PAUSE=1): a pair, three pairs
 * paused, a pair; notes what each call of it returned (0, or -1 when it is
 * not enabled, or "none" without libtlm.so) */
static int pause_scenario(void)
{
	int (*pause)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "tlm_debug_pause");
	void *p;
	wl_check(cudaMalloc(&p, 1000) == 0 && cudaFree(p) == 0, "pair");
	int rc_on = pause ? pause(1) : 2;
	for (int i = 0; i < 3; i++)
		wl_check(cudaMalloc(&p, 2000) == 0 && cudaFree(p) == 0, "paused pair");
	int rc_off = pause ? pause(0) : 2;
	wl_check(cudaMalloc(&p, 3000) == 0 && cudaFree(p) == 0, "pair");
	wl_note("pause %d resume %d", rc_on, rc_off);
	return 0;
}

int wl_edges(int argc, char **argv); /* workload_edges.c */

int wl_lifecycle(int argc, char **argv)
{
	if (!strcmp(argv[1], "early"))
		return early();
	if (!strcmp(argv[1], "plugin"))
		return plugin();
	const char *s = argv[1];
	if (!strcmp(s, "threads"))
		return threads(arg_ul(argc, argv, 2, 16), arg_ul(argc, argv, 3, 100000));
	if (!strcmp(s, "fork"))
		return do_fork();
	if (!strcmp(s, "fork-early"))
		return fork_early();
	if (!strcmp(s, "exec"))
		return do_exec(argv[0]);
	if (!strcmp(s, "exec-child"))
		return exec_child();
	if (!strcmp(s, "kill9"))
		return kill9((unsigned)arg_ul(argc, argv, 2, 1000), (unsigned)arg_ul(argc, argv, 3, 300));
	if (!strcmp(s, "segv"))
		return fatal((unsigned)arg_ul(argc, argv, 2, 10));
	if (!strcmp(s, "burst"))
		return burst(arg_ul(argc, argv, 2, 10000));
	if (!strcmp(s, "late"))
		return late();
	if (!strcmp(s, "pause"))
		return pause_scenario();
	return wl_edges(argc, argv);
}
