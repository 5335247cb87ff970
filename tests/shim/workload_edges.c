/* SPDX-License-Identifier: MIT */
/*
 * workload_edges.c - the edges of a process (issue 13): _exit, termination
 * signals at their default action, the host's view of its dispositions,
 * descriptors closed or replaced under the trace, RLIMIT_FSIZE, children made
 * without fork() (raw SYS_fork, vfork + exit), a failed exec, SIGCHLD, a
 * dlclose from inside a dl_iterate_phdr callback.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static void allocs(unsigned n, size_t base)
{
	for (unsigned i = 0; i < n; i++) {
		void *p;
		wl_check(cudaMalloc(&p, base + i) == 0, "alloc");
		wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(p), base + i, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	}
}

static void pairs(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		void *p;
		wl_check(cudaMalloc(&p, 256) == 0, "alloc");
		wl_expect(TLM_OP_ALLOC, TLM_KIND_DEVICE, TLM_API_cudaMalloc, WL_U(p), 256, 0, 0, 0, 0, TLM_EVF_RUNTIME);
		wl_check(cudaFree(p) == 0, "free");
		wl_expect(TLM_OP_FREE, TLM_KIND_DEVICE, TLM_API_cudaFree, WL_U(p), 0, 0, 0, 0, 0, TLM_EVF_RUNTIME);
	}
}

/* the trace descriptor: the link in /proc/self/fd that names a .trace */
static int trace_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;
	while (d && (de = readdir(d))) {
		char l[300], t[512];
		snprintf(l, sizeof l, "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(l, t, sizeof t - 1);
		if (n > 0) {
			t[n] = 0;
			if (strstr(t, ".trace"))
				found = atoi(de->d_name);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/* _exit / _Exit right after the calls, before any drain */
static int fast_exit(const char *how, unsigned n)
{
	allocs(n, 1000);
	fflush(NULL);
	if (!strcmp(how, "_Exit"))
		_Exit(7);
	_exit(7);
}

/* n calls, then the signal to itself, left at its default action */
static int term(int sig, unsigned n)
{
	allocs(n, 2000);
	fflush(NULL);
	if (sig)
		kill(getpid(), sig);
	wl_msleep(60000); /* sig 0: until someone else sends one */
	return 1;
}

static void h(int s)
{
	(void)s;
}

/* what the program sees of its dispositions is what it set */
static int sigview(void)
{
	allocs(1, 10);
	struct sigaction o;
	int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
	int dfl = 0;
	for (int i = 0; i < 6; i++)
		dfl += sigaction(sigs[i], NULL, &o) == 0 && o.sa_handler == SIG_DFL && !(o.sa_flags & SA_SIGINFO);
	wl_note("dfl %d", dfl);
	wl_note("signal_prev_dfl %d", signal(SIGINT, h) == SIG_DFL);
	wl_note("signal_prev_h %d", signal(SIGINT, SIG_DFL) == h);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &sa, NULL);
	wl_note("ign %d", sigaction(SIGHUP, NULL, &o) == 0 && o.sa_handler == SIG_IGN);
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGHUP, &sa, NULL);
	wl_note("dfl_flags %d", sigaction(SIGHUP, NULL, &o) == 0 && o.sa_handler == SIG_DFL &&
					  (unsigned)o.sa_flags == (unsigned)SA_RESETHAND);
	/* a handler of its own runs, and the program goes on */
	static volatile sig_atomic_t got;
	signal(SIGUSR1, h);
	kill(getpid(), SIGUSR1);
	got = 1;
	wl_note("alive %d", (int)got);
	allocs(1, 11);
	/* back at the default, the signal ends it */
	signal(SIGUSR2, SIG_DFL);
	fflush(NULL);
	kill(getpid(), SIGUSR2);
	wl_msleep(5000);
	return 1;
}

/* a daemon closes every descriptor it did not open and opens its own */
static int closefds(void)
{
	allocs(3, 3000);
	wl_msleep(60); /* the writer drains: the trace descriptor is open and used */
	int keep = wl_truth ? fileno(wl_truth) : -1;
	for (int fd = 3; fd < 65536; fd++)
		if (fd != keep)
			close(fd);
	const char *own = getenv("WL_OWN_FILE");
	int fds[2048], n = 0;
	for (; n < 2048; n++) /* it reuses every number, the trace's old one among them */
		if ((fds[n] = open(own, O_WRONLY | O_CREAT | O_APPEND, 0600)) < 0)
			break;
	allocs(50, 4000);
	wl_msleep(100);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

/* the program puts a pipe where the trace descriptor was */
static int dup2over(void)
{
	allocs(3, 5000);
	wl_msleep(60);
	int fd = trace_fd();
	wl_check(fd >= 0, "trace descriptor found");
	int p[2];
	wl_check(pipe(p) == 0, "pipe");
	wl_check(dup2(p[1], fd) == fd, "dup2");
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	allocs(50, 6000);
	wl_msleep(100);
	char buf[65536];
	ssize_t got = read(p[0], buf, sizeof buf);
	wl_note("leaked %zd", got < 0 ? (ssize_t)0 : got);
	wl_note("tracefd %d", fd);
	return 0;
}

/* RLIMIT_FSIZE below what the trace needs */
static int fsize(void)
{
	struct rlimit rl = {4096, 4096};
	wl_check(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit");
	FILE *t = wl_truth;
	wl_truth = NULL; /* its own truth file would hit the limit too */
	pairs(2000);
	wl_msleep(60);
	pairs(2000);
	wl_truth = t;
	wl_note("survived 1");
	return 0;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* a child made by the raw system call: no atfork handlers. It records
 * RAWFORK_PAIRS pairs of 4242 B between its 31337 B block's allocation and
 * free, enough to fill a small ring many times over. */
#define RAWFORK_PAIRS 3000
static int rawfork(void)
{
	allocs(2, 7000);
	fflush(NULL);
	long c = syscall(SYS_fork);
	if (c == 0) {
		void *q, *x;
		wl_check(cudaMalloc(&q, 31337) == 0, "child alloc");
		wl_note("child %d %llx", (int)getpid(), (unsigned long long)WL_U(q));
		wl_note("child_threads %d", count_threads());
		for (int i = 0; i < RAWFORK_PAIRS; i++) {
			wl_check(cudaMalloc(&x, 4242) == 0, "child pair alloc");
			wl_check(cudaFree(x) == 0, "child pair free");
		}
		wl_check(cudaFree(q) == 0, "child free");
		exit(0);
	}
	int st = wl_wait_child((pid_t)c, 10);
	wl_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child ok");
	wl_note("parent %d", (int)getpid());
	allocs(1, 7100);
	return 0;
}

/* a raw child that makes no CUDA call and leaves by exit() */
static int rawfork_quiet(void)
{
	allocs(2, 7200);
	fflush(NULL);
	long c = syscall(SYS_fork);
	if (c == 0)
		exit(0);
	wl_wait_child((pid_t)c, 10);
	allocs(1, 7300);
	return 0;
}

/* vfork, the exec fails, the child calls exit() (not _exit) */
static int vfork_exit(void)
{
	allocs(2, 8000);
	fflush(NULL);
	pid_t c = vfork();
	if (c == 0) {
		execlp("/nonexistent/tlm-test-program", "x", (char *)NULL);
		exit(1);
	}
	int st;
	waitpid(c, &st, 0);
	wl_check(WIFEXITED(st) && WEXITSTATUS(st) == 1, "vfork child exit 1");
	allocs(1, 8100); /* at once: only the final flush can write it */
	return 0;
}

/* the exec fails: the trace goes on, batched as before */
/* dlclose inside a dl_iterate_phdr callback, the loader lock held, while
 * the writer thread (TLM_DRAIN_MS=1) waits for that lock in its module scan
 * with its own lock held: the dlclose hook must not wait for it for good. */
static int dl_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	int *done = ctx;
	if (*done || !info->dlpi_name || !strstr(info->dlpi_name, "libc.so"))
		return 0;
	*done = 1;
	allocs(1, 4096); /* an event, so the writer thread has a drain to do */
	wl_msleep(150);     /* it is in its module scan by now, waiting for our lock */
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	wl_check(h != NULL, "dlopen libc NOLOAD");
	dlclose(h);
	return 1;
}

static int dlclose_in_iterate(void)
{
	int done = 0;
	alarm(20); /* a hang ends as SIGALRM, which the test reports */
	allocs(1, 1024);
	/* the recording opened NVML in that first call, on this thread: its
	 * writer thread never dlopens, which deadlocked with the dlopen below
	 * once in a hundred runs (nvml_dl.c) */
	void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
	wl_check(nv != NULL, "NVML already open after the first recorded call");
	dlclose(nv);
	dl_iterate_phdr(dl_cb, &done);
	wl_check(done, "libc in dl_iterate_phdr");
	allocs(1, 2048);
	return 0;
}

static int exec_fail(void)
{
	allocs(1, 9000);
	execlp("/nonexistent/tlm-test-program", "x", (char *)NULL);
	wl_check(errno == ENOENT, "exec failed");
	pairs(1000);
	return 0;
}

/* the host ignores SIGCHLD, or reaps every child in a handler */
static int truth_fd = -1;
static void reap(int s)
{
	(void)s;
	int e = errno;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		if (truth_fd >= 0 && write(truth_fd, "N reaped 1\n", 11) < 0)
			break;
	errno = e;
}

static int sigchld(const char *mode)
{
	if (!strcmp(mode, "ign"))
		signal(SIGCHLD, SIG_IGN);
	else
		signal(SIGCHLD, reap);
	allocs(2, 9500);
	truth_fd = wl_truth ? fileno(wl_truth) : -1;
	alarm(30); /* a summary that waits forever ends in SIGALRM, not a hung test */
	return 0;
}

/* a relative TLM_OUTPUT, then a chdir before the first call */
static int do_chdir(void)
{
	wl_check(chdir("/") == 0, "chdir");
	allocs(2, 9700);
	return 0;
}

int wl_edges(int argc, char **argv)
{
	if (!strcmp(argv[1], "chdir"))
		return do_chdir();
	const char *s = argv[1];
	unsigned n = argc > 2 ? (unsigned)strtoul(argv[argc - 1], NULL, 10) : 5;
	if (!strcmp(s, "fast-exit"))
		return fast_exit(argc > 2 ? argv[2] : "_exit", argc > 3 ? n : 5);
	if (!strcmp(s, "term"))
		return term(argc > 2 ? atoi(argv[2]) : SIGTERM, argc > 3 ? n : 3);
	if (!strcmp(s, "sigview"))
		return sigview();
	if (!strcmp(s, "closefds"))
		return closefds();
	if (!strcmp(s, "dup2over"))
		return dup2over();
	if (!strcmp(s, "fsize"))
		return fsize();
	if (!strcmp(s, "rawfork"))
		return rawfork();
	if (!strcmp(s, "rawfork-quiet"))
		return rawfork_quiet();
	if (!strcmp(s, "vfork-exit"))
		return vfork_exit();
	if (!strcmp(s, "exec-fail"))
		return exec_fail();
	if (!strcmp(s, "dlclose-in-iterate"))
		return dlclose_in_iterate();
	if (!strcmp(s, "sigchld"))
		return sigchld(argc > 2 ? argv[2] : "ign");
	fprintf(stderr, "workload: unknown scenario %s\n", s);
	return 64;
}
