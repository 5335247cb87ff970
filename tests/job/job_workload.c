/* SPDX-License-Identifier: MIT */
/*
 * job_workload.c - one process of a test job whose ranks differ by
 * construction (tests/job/test_job.sh holds the truth):
 *   - every process allocates 8 MiB at BASE_LINE and (RANK + 1) MiB at
 *     RANK_LINE, both live at once, so its peak is (9 + RANK) MiB;
 *   - JOB_LEAK_RANK=r[:n][,r2[:n2]...]: rank r also leaks n (default 3) x
 *     1 MiB at LEAK_LINE, 20 ms apart while the rest is live (a leak by
 *     docs/report.md's rule when n >= 3);
 *   - JOB_EXTRA_RANK=r:n[,...]: rank r also holds n MiB at EXTRA_LINE while
 *     the rest is live (its peak is n MiB higher), then frees it;
 *   - JOB_OOM_RANK=r[,r2...]: those ranks ask for 1 TiB once (an OOM);
 *   - argv[1] = N: forks N workers (DataLoader-like), each allocating 1 MiB;
 *   - JOB_EXEC=path: afterwards execs path (its own trace, same pid).
 * No frees are skipped except the leak, so nothing else leaks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define MIB (1024ull * 1024ull)

static int rank_of(void)
{
	const char *r = getenv("RANK");
	return r ? atoi(r) : 0;
}

__attribute__((noinline)) static void *alloc(size_t n)
{
	void *p = NULL;
	if (cudaMalloc(&p, n) != cudaSuccess)
		return NULL;
	return p;
}

/* "r[:n],...": n for rank r (dflt without ":n"), 0 when r is not listed */
static int in_list(const char *list, int r, int dflt)
{
	for (const char *s = list; s && *s;) {
		if (atoi(s) == r)
			return s[strcspn(s, ":,")] == ':' ? atoi(s + strcspn(s, ":,") + 1) : dflt;
		s = strchr(s, ',');
		s = s ? s + 1 : NULL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int r = rank_of();
	void *base = alloc(8 * MIB);                  /* BASE_LINE */
	void *mine = alloc((size_t)(r + 1) * MIB);    /* RANK_LINE */
	if (!base || !mine) {
		fprintf(stderr, "job_workload: allocation failed\n");
		return 3;
	}
	int more = in_list(getenv("JOB_EXTRA_RANK"), r, 0);
	void *extra = more ? alloc((size_t)more * MIB) : NULL; /* EXTRA_LINE */
	for (int i = 0, n = in_list(getenv("JOB_LEAK_RANK"), r, 3); i < n; i++) {
		if (i)
			usleep(20000);
		(void)alloc(MIB);                     /* LEAK_LINE */
	}
	if (in_list(getenv("JOB_OOM_RANK"), r, 1)) {
		void *huge = alloc(1ull << 40);       /* OOM_LINE */
		if (huge)
			cudaFree(huge);
	}
	if (extra)
		cudaFree(extra);
	cudaFree(mine);
	cudaFree(base);
	int workers = argc > 1 ? atoi(argv[1]) : 0;
	for (int w = 0; w < workers; w++) {
		pid_t c = fork();
		if (c == 0) {
			void *p = alloc(MIB);         /* WORKER_LINE */
			cudaFree(p);
			_exit(p ? 0 : 3);
		}
		int st;
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "job_workload: worker failed\n");
			return 3;
		}
	}
	const char *ex = getenv("JOB_EXEC");
	if (ex) {
		unsetenv("JOB_EXEC");
		execl(ex, ex, (char *)NULL);
		perror("job_workload: exec");
		return 3;
	}
	return 0;
}
