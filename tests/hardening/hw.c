/* SPDX-License-Identifier: MIT */
/* hw.c - see hw.h. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw.h"
#include "tlm_test.h"
#include "tlm/event.h"

static const char *need(const char *name)
{
	const char *v = getenv(name);
	if (!v) {
		fprintf(stderr, "hw: %s is not set (run through meson test)\n", name);
		exit(2);
	}
	return v;
}

uint64_t hw_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *hw_program;
int hw_no_preload;

int hw_start(struct hw_proc *p, const char *const *args, const char *const *env)
{
	const char *prog = hw_program ? hw_program : need("TLM_TEST_HW_WORKLOAD");
	int plain = hw_no_preload;
	hw_program = NULL;
	hw_no_preload = 0;
	memset(p, 0, sizeof *p);
	struct run *r = &p->r;
	snprintf(r->dir, sizeof r->dir, "/tmp/tlm-hw-XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	static char pre[1024], lib[1024], out[512], truth[512], dir[512], errp[512], passbuf[3][512];
	const char *first = getenv("TLM_TEST_PRELOAD_FIRST");
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s%s%s", first && *first ? first : "", first && *first ? " " : "",
		 need("TLM_TEST_LIBTLM"));
	snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", need("TLM_TEST_SIMDIR"));
	snprintf(out, sizeof out, "TLM_OUTPUT=%s/t-%%p.trace", r->dir);
	snprintf(truth, sizeof truth, "TLM_TEST_TRUTH=%s/truth", r->dir);
	snprintf(dir, sizeof dir, "HW_DIR=%s", r->dir);
	snprintf(errp, sizeof errp, "%s/stderr", r->dir);
	const char *envp[64];
	size_t n = 0;
	for (size_t i = 0; env && env[i] && n < 50; i++)
		envp[n++] = env[i]; /* first: getenv takes the first of duplicates */
	if (!plain)
		envp[n++] = pre;
	envp[n++] = lib;
	envp[n++] = out;
	envp[n++] = truth;
	envp[n++] = dir;
	envp[n++] = "PATH=/usr/bin:/bin";
	envp[n++] = "TLM_SUMMARY=0";
	static const char *const pass[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"};
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(pass[i]);
		if (v) {
			snprintf(passbuf[i], sizeof passbuf[i], "%s=%s", pass[i], v);
			envp[n++] = passbuf[i];
		}
	}
	envp[n] = NULL;
	const char *argv[32];
	size_t a = 0;
	argv[a++] = prog;
	for (size_t i = 0; args[i] && a < 31; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	p->start_ns = hw_now_ns();
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		tlm_test_child_signals();
		setpgid(0, 0);
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	setpgid(p->pid, p->pid); /* both sides: no race with the kill below */
	return 0;
}

static void load_truth(struct run *r)
{
	char path[300];
	snprintf(path, sizeof path, "%s/truth", r->dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	size_t cap = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == 'N' && r->nnotes < 64) {
			size_t k = strnlen(line + 2, sizeof r->notes[0] - 1);
			memcpy(r->notes[r->nnotes], line + 2, k);
			r->notes[r->nnotes++][k] = 0;
			continue;
		}
		if (line[0] != 'E')
			continue;
		if (r->ntruth == cap) {
			cap = cap ? cap * 2 : 64;
			r->truth = realloc(r->truth, cap * sizeof *r->truth);
		}
		struct truth_ev *e = &r->truth[r->ntruth];
		unsigned long long a, s, st, ax;
		if (sscanf(line, "E %u %u %u %llx %llu %d %d %llx %llx %u", &e->op, &e->kind, &e->api, &a, &s,
			   &e->result, &e->device, &st, &ax, &e->flags) == 10) {
			e->addr = a, e->size = s, e->stream = st, e->aux = ax;
			r->ntruth++;
		}
	}
	fclose(f);
}

void hw_wait(struct hw_proc *p, unsigned timeout_ms)
{
	uint64_t deadline = p->start_ns + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		pid_t w = waitpid(p->pid, &p->r.status, WNOHANG);
		if (w == p->pid || (w < 0 && errno != EINTR))
			break;
		if (hw_now_ns() > deadline) {
			p->timed_out = 1;
			kill(-p->pid, SIGKILL);
			while (waitpid(p->pid, &p->r.status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	p->end_ns = hw_now_ns();
	kill(-p->pid, SIGKILL); /* no stray child outlives its run */
	char errp[300];
	snprintf(errp, sizeof errp, "%s/stderr", p->r.dir);
	FILE *f = fopen(errp, "r");
	if (f) {
		size_t k = fread(p->r.stderr_text, 1, sizeof p->r.stderr_text - 1, f);
		p->r.stderr_text[k] = 0;
		fclose(f);
	}
	load_truth(&p->r);
	if (p->timed_out)
		fprintf(stderr, "hw: the workload ran past %u ms (deadlock?); killed. stderr:\n%s\n", timeout_ms,
			p->r.stderr_text);
}

int hw_run(struct hw_proc *p, const char *const *args, const char *const *env, unsigned timeout_ms)
{
	if (hw_start(p, args, env))
		return -1;
	hw_wait(p, timeout_ms);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

void hw_cleanup(struct hw_proc *p)
{
	if (p->r.dir[0])
		nftw(p->r.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(p->r.truth);
	p->r.truth = NULL;
}

/* Open addressing set of (kind, address) keys; 0 is the empty slot. */
struct set {
	uint64_t *k;
	size_t cap, n;
};

static uint64_t key(const struct tlm_event *e)
{
	return (e->addr ^ ((uint64_t)e->kind << 56)) | 1ull << 63; /* never 0 */
}

static size_t slot_of(const struct set *s, uint64_t k)
{
	size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);
	while (s->k[h] && s->k[h] != k)
		h = (h + 1) & (s->cap - 1);
	return h;
}

static void grow(struct set *s)
{
	struct set o = *s;
	s->cap = o.cap ? o.cap * 2 : 1024;
	s->k = calloc(s->cap, sizeof *s->k);
	for (size_t i = 0; i < o.cap; i++)
		if (o.k[i])
			s->k[slot_of(s, o.k[i])] = o.k[i];
	free(o.k);
}

void hw_replay(const struct trace *t, struct hw_replay *out)
{
	memset(out, 0, sizeof *out);
	struct set s = {0};
	grow(&s);
	for (size_t i = 0; i < t->nev; i++) {
		const struct tlm_event *e = &t->ev[i];
		if (e->result != 0 || (e->op != TLM_OP_ALLOC && e->op != TLM_OP_FREE))
			continue;
		uint64_t k = key(e);
		size_t h = slot_of(&s, k);
		if (e->op == TLM_OP_ALLOC) {
			if (s.k[h] == k) {
				out->double_allocs++;
				continue;
			}
			s.k[h] = k;
			if (++s.n * 2 > s.cap)
				grow(&s);
		} else {
			if (s.k[h] != k) {
				out->unknown_frees++;
				continue;
			}
			/* delete with backward shift */
			s.k[h] = 0;
			s.n--;
			for (size_t j = (h + 1) & (s.cap - 1); s.k[j]; j = (j + 1) & (s.cap - 1)) {
				uint64_t v = s.k[j];
				s.k[j] = 0;
				s.k[slot_of(&s, v)] = v;
			}
		}
	}
	out->live_at_end = s.n;
	free(s.k);
}
