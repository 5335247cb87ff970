/* SPDX-License-Identifier: MIT */
/* e2e.c - helpers for the end-to-end tests (see e2e.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e.h"
#include "tlm_test.h"

extern char **environ;

static const char *need(const char *name)
{
	const char *v = getenv(name);
	if (!v) {
		fprintf(stderr, "e2e: %s is not set (run through meson test)\n", name);
		exit(2);
	}
	return v;
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
		if (line[0] == 'N' && r->nnotes < 64) {
			line[strcspn(line, "\n")] = 0;
			line[2 + 127] = 0; /* notes are short */
			memcpy(r->notes[r->nnotes++], line + 2, 128);
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

/* Scratch directories are removed when the test program exits (kept with
 * TLM_TEST_KEEP=1, to look at a failure). */
static char *scratch[1024];
static size_t nscratch;

static void remove_scratch(void)
{
	if (getenv("TLM_TEST_KEEP"))
		return;
	for (size_t i = 0; i < nscratch; i++) {
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch[i]);
		if (system(cmd) != 0)
			fprintf(stderr, "e2e: could not remove %s\n", scratch[i]);
		free(scratch[i]);
	}
	nscratch = 0;
}

int e2e_run(struct run *r, const char *const *args, const char *const *env)
{
	memset(r, 0, sizeof *r);
	snprintf(r->dir, sizeof r->dir, "/tmp/tlm-e2e-XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	if (nscratch == 0)
		atexit(remove_scratch);
	if (nscratch < sizeof scratch / sizeof scratch[0])
		scratch[nscratch++] = strdup(r->dir);
	char pre[1024], lib[1024], out[512], truth[512], errp[512];
	const char *first = getenv("TLM_TEST_PRELOAD_FIRST");
	/* "TLM_TEST_NO_LIBTLM=1" among env: libtlm.so is not preloaded (it may
	 * come in another way, e.g. CUDA_INJECTION64_PATH) */
	int no_libtlm = 0;
	for (size_t i = 0; env && env[i]; i++)
		no_libtlm |= !strcmp(env[i], "TLM_TEST_NO_LIBTLM=1");
	snprintf(pre, sizeof pre, "LD_PRELOAD=%s%s%s", first && *first ? first : "",
		 first && *first && !no_libtlm ? " " : "", no_libtlm ? "" : need("TLM_TEST_LIBTLM"));
	snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s", need("TLM_TEST_SIMDIR"));
	snprintf(out, sizeof out, "TLM_OUTPUT=%s/t-%%p.trace", r->dir);
	snprintf(truth, sizeof truth, "TLM_TEST_TRUTH=%s/truth", r->dir);
	snprintf(errp, sizeof errp, "%s/stderr", r->dir);
	const char *envp[64];
	size_t n = 0;
	/* the test's own entries first: getenv takes the first of duplicates */
	for (size_t i = 0; env && env[i] && n < 56; i++)
		envp[n++] = env[i];
	envp[n++] = pre;
	envp[n++] = lib;
	envp[n++] = out;
	envp[n++] = truth;
	envp[n++] = "PATH=/usr/bin:/bin";
	envp[n++] = "TLM_SUMMARY=0"; /* tests that want the end-of-run report say so first */
	static const char *const pass[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"};
	static char passbuf[3][512];
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
	argv[a++] = need("TLM_TEST_WORKLOAD");
	for (size_t i = 0; args[i] && a < 31; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		tlm_test_child_signals();
		int fd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 2);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR)
		;
	FILE *f = fopen(errp, "r");
	if (f) {
		size_t k = fread(r->stderr_text, 1, sizeof r->stderr_text - 1, f);
		r->stderr_text[k] = 0;
		fclose(f);
	}
	load_truth(r);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

size_t e2e_traces(const struct run *r, char paths[][512], size_t max)
{
	DIR *d = opendir(r->dir);
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) && n < max)
		if (!strncmp(de->d_name, "t-", 2))
			snprintf(paths[n++], 512, "%s/%s", r->dir, de->d_name);
	if (d)
		closedir(d);
	qsort(paths, n, 512, cmp_str);
	return n;
}

int e2e_load(struct trace *t, const char *path)
{
	memset(t, 0, sizeof *t);
	snprintf(t->path, sizeof t->path, "%s", path);
	char err[256];
	struct tlm_reader *rd = tlm_reader_open(path, err, sizeof err);
	if (!rd) {
		fprintf(stderr, "e2e: %s\n", err);
		return -1;
	}
	t->hdr = *tlm_reader_header(rd);
	t->hdr.argv = NULL;
	static struct tlm_record rec;
	while (tlm_reader_next(rd, &rec) == 1) {
		switch (rec.type) {
		case TLM_REC_EVENT:
			if (t->nev == t->cap) {
				t->cap = t->cap ? t->cap * 2 : 1024;
				t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
			}
			t->ev[t->nev++] = rec.u.ev;
			if (t->nend)
				t->events_after_end++;
			break;
		case TLM_REC_STACK:
			if (rec.u.stack.id >= t->nstacks) {
				size_t nn = rec.u.stack.id + 1024;
				t->stack_first = realloc(t->stack_first, nn * sizeof *t->stack_first);
				t->stack_depth = realloc(t->stack_depth, nn * sizeof *t->stack_depth);
				memset(t->stack_first + t->nstacks, 0, (nn - t->nstacks) * sizeof *t->stack_first);
				memset(t->stack_depth + t->nstacks, 0, (nn - t->nstacks) * sizeof *t->stack_depth);
				t->nstacks = nn;
			}
			t->stack_first[rec.u.stack.id] = rec.u.stack.depth ? rec.u.stack.ip[0] : 0;
			t->stack_depth[rec.u.stack.id] = rec.u.stack.depth;
			break;
		case TLM_REC_MODULE:
			t->mods = realloc(t->mods, (t->nmods + 1) * sizeof *t->mods);
			t->mods[t->nmods++] = rec.u.module;
			break;
		case TLM_REC_MODULE_UNLOAD:
			if (t->nunloaded < 64) {
				t->unload_after_event[t->nunloaded] = t->nev;
				t->unloaded[t->nunloaded++] = rec.u.module_unload;
			}
			break;
		case TLM_REC_THREAD:
			t->nthreads++;
			break;
		case TLM_REC_SIGNAL:
			t->nsignals++;
			t->signo = rec.u.signal;
			break;
		case TLM_REC_END:
			t->nend++;
			break;
		case TLM_REC_LOST:
			t->nlost_records++;
			t->lost += rec.u.lost.count;
			break;
		case TLM_REC_PROP: {
			bool exit_status = !strcmp(rec.u.prop.key, "exit.status");
			t->ncupti_props += !strncmp(rec.u.prop.key, "cupti", 5);
			char *dst = !strcmp(rec.u.prop.key, "cupti")	       ? t->cupti
				    : !strcmp(rec.u.prop.key, "cupti.detail") ? t->cupti_detail
				    : exit_status			       ? t->exit_status
									       : NULL;
			size_t cap = dst == t->cupti ? sizeof t->cupti
				     : dst == t->exit_status ? sizeof t->exit_status
							     : sizeof t->cupti_detail;
			if (dst) {
				size_t l = rec.u.prop.len < cap ? rec.u.prop.len : cap - 1;
				memcpy(dst, rec.u.prop.value, l);
				dst[l] = 0;
			}
			break;
		}
		default:
			break;
		}
	}
	t->state = (int)tlm_reader_state(rd);
	const char *how = tlm_reader_end_how(rd);
	snprintf(t->end_how, sizeof t->end_how, "%s", how ? how : "");
	const struct tlm_integrity_error *errs;
	t->nerrors = tlm_reader_errors(rd, &errs);
	for (size_t i = 0; i < t->nerrors; i++)
		fprintf(stderr, "e2e: %s: integrity error at %llu: %s\n", path, (unsigned long long)errs[i].offset,
			errs[i].what);
	tlm_reader_close(rd);
	return 0;
}

void e2e_free(struct trace *t)
{
	free(t->ev);
	free(t->stack_first);
	free(t->stack_depth);
	free(t->mods);
}

const char *e2e_note(const struct run *r, const char *key)
{
	size_t k = strlen(key);
	for (size_t i = 0; i < r->nnotes; i++)
		if (!strncmp(r->notes[i], key, k) && r->notes[i][k] == ' ')
			return r->notes[i] + k + 1;
	return NULL;
}

long long e2e_note_num(const struct run *r, const char *key)
{
	const char *v = e2e_note(r, key);
	if (!v) {
		fprintf(stderr, "the workload wrote no note '%s'\n", key);
		return LLONG_MIN;
	}
	return strtoll(v, NULL, 10);
}

const struct tlm_rec_module *e2e_module_of(const struct trace *t, uint64_t ip)
{
	for (size_t i = 0; i < t->nmods; i++)
		for (uint32_t s = 0; s < t->mods[i].nseg; s++)
			if (ip >= t->mods[i].seg[s].start && ip < t->mods[i].seg[s].end)
				return &t->mods[i];
	return NULL;
}

void e2e_say_event(const struct trace *t, size_t i, const char *mark)
{
	const struct tlm_event *e = &t->ev[i];
	fprintf(stderr, "  %s %zu%s: op %u kind %u api %s addr %#llx size %llu thread %u flags %#x res %d t %llu\n", mark,
		i, i + t->events_after_end >= t->nev ? " (after END)" : "", e->op, e->kind, tlm_api_name(e->api),
		(unsigned long long)e->addr, (unsigned long long)e->size, e->thread, e->flags, e->result,
		(unsigned long long)e->time_ns);
}

int e2e_compare(const struct trace *t, const struct truth_ev *tr, size_t n)
{
	if (t->nev != n) {
		fprintf(stderr, "e2e: %zu events recorded, %zu expected\n", t->nev, n);
		for (size_t i = 0; i < t->nev; i++)
			e2e_say_event(t, i, "got");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tlm_event *e = &t->ev[i];
		const struct truth_ev *x = &tr[i];
		if (e->op != x->op || e->kind != x->kind || e->api != x->api || e->addr != x->addr ||
		    e->size != x->size || e->result != x->result || e->device != x->device || e->stream != x->stream ||
		    e->aux != x->aux || e->flags != x->flags) {
			fprintf(stderr,
				"e2e: event %zu differs:\n  got  op %u kind %u api %s addr %llx size %llu res %d dev %d "
				"stream %llx aux %llx flags %u\n  want op %u kind %u api %s addr %llx size %llu res %d "
				"dev %d stream %llx aux %llx flags %u\n",
				i, e->op, e->kind, tlm_api_name(e->api), (unsigned long long)e->addr,
				(unsigned long long)e->size, e->result, e->device, (unsigned long long)e->stream,
				(unsigned long long)e->aux, e->flags, x->op, x->kind, tlm_api_name(x->api),
				(unsigned long long)x->addr, (unsigned long long)x->size, x->result, x->device,
				(unsigned long long)x->stream, (unsigned long long)x->aux, x->flags);
			return -1;
		}
	}
	return 0;
}
