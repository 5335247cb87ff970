/* SPDX-License-Identifier: MIT */
/* workload_main.c - scenario dispatch and the truth file (TLM_TEST_TRUTH). */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "workload.h"

FILE *wl_truth;

void wl_expect(unsigned op, unsigned kind, unsigned api, uint64_t addr, uint64_t size, int result, int device,
	       uint64_t stream, uint64_t aux, unsigned flags)
{
	if (wl_truth)
		fprintf(wl_truth, "E %u %u %u %llx %llu %d %d %llx %llx %u\n", op, kind, api, (unsigned long long)addr,
			(unsigned long long)size, result, device, (unsigned long long)stream, (unsigned long long)aux,
			flags);
}

void wl_note(const char *fmt, ...)
{
	if (!wl_truth)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("N ", wl_truth);
	vfprintf(wl_truth, fmt, ap);
	fputc('\n', wl_truth);
	va_end(ap);
}

void wl_check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "workload: check failed: %s\n", what);
		exit(3);
	}
}

void wl_msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int wl_wait_child(pid_t c, unsigned seconds)
{
	int st = 0;
	pid_t w = waitpid(c, &st, WNOHANG);
	for (unsigned i = 0; w == 0 && i < seconds * 100; i++) {
		wl_msleep(10);
		w = waitpid(c, &st, WNOHANG);
	}
	if (w == 0) {
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		wl_note("child_hung 1");
	}
	return st;
}

int wl_lifecycle(int argc, char **argv);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: workload SCENARIO [ARGS]\n");
		return 64;
	}
	const char *t = getenv("TLM_TEST_TRUTH");
	if (t && *t) {
		wl_truth = fopen(t, "a");
		if (!wl_truth) {
			perror(t);
			return 2;
		}
		setvbuf(wl_truth, NULL, _IOLBF, 0);
	}
	const char *s = argv[1];
	int rc;
	if (!strcmp(s, "runtime"))
		rc = wl_runtime();
	else if (!strcmp(s, "driver"))
		rc = wl_driver();
	else if (!strcmp(s, "dlsym"))
		rc = wl_dlsym();
	else if (!strcmp(s, "procaddr"))
		rc = wl_procaddr();
	else if (!strcmp(s, "entrypoint"))
		rc = wl_entrypoint();
	else if (!strcmp(s, "cupti"))
		rc = wl_cupti();
	else if (!strcmp(s, "cupti_runtime"))
		rc = wl_cupti_runtime();
	else
		rc = wl_lifecycle(argc, argv);
	if (wl_truth)
		fclose(wl_truth);
	return rc;
}
