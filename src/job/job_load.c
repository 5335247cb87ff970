/* SPDX-License-Identifier: MIT */
/*
 * job_load.c - tlm_job_load(): the inputs found, read in parallel, each
 * reduced to its process summary at once (job.h has the memory contract).
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/input.h"
#include "job.h"
#include "job_devmem.h"
#include "job_owners.h"
#include "analysis/report.h"
#include "common/grow.h"

struct paths {
	char **v;
	size_t n, cap;
};

static int push(struct paths *p, const char *s)
{
	if (p->n == p->cap && tlm__grow(&p->v, &p->cap, p->n + 1, sizeof *p->v, 64))
		return -1;

	if (!(p->v[p->n] = strdup(s)))
		return -1;
	p->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* A directory's inputs, sorted: files that start like a trace, and *.json;
 * and every entry that could not be read (not a regular file, no
 * permission, a dangling link), so that the report lists it as unreadable
 * instead of leaving it out. Subdirectories are not inputs. */
static int add_dir(struct paths *p, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	size_t first = p->n;
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = strlen(dir) + strlen(e->d_name) + 2;
		char *full = malloc(len);
		if (!full) {
			rc = -1;
			break;
		}
		snprintf(full, len, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
		struct stat st;
		bool take = true; /* what cannot be read is listed */
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			take = false;
		} else if (!ends_with(e->d_name, ".json")) {
			char magic[8];
			FILE *f = tlm_input_fopen(full, 0, NULL, 0);
			if (f)
				take = fread(magic, 1, 8, f) == 8 && !memcmp(magic, "TLMTRACE", 8);
			if (f)
				fclose(f);
		}
		if (take)
			rc = push(p, full);
		free(full);
	}
	closedir(d);
	if (!rc)
		qsort(p->v + first, p->n - first, sizeof *p->v, cmp_str);
	return rc;
}

static int expand(struct paths *p, const char *in, char *err, size_t errlen)
{
	struct stat st;
	if (stat(in, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			size_t before = p->n;
			if (add_dir(p, in)) {
				snprintf(err, errlen, "%s: %s", in, strerror(errno ? errno : ENOMEM));
				return -1;
			}
			if (p->n == before) {
				snprintf(err, errlen, "%s: no trace or .json report in this directory", in);
				return -1;
			}
			return 0;
		}
		return push(p, in);
	}
	if (strpbrk(in, "*?[")) {
		glob_t g;
		int rc = glob(in, 0, NULL, &g);
		if (rc == GLOB_NOMATCH) {
			snprintf(err, errlen, "%s: no file matches", in);
			return -1;
		}
		for (size_t i = 0; !rc && i < g.gl_pathc; i++)
			rc = push(p, g.gl_pathv[i]);
		globfree(&g);
		if (rc)
			snprintf(err, errlen, "out of memory");
		return rc ? -1 : 0;
	}
	return push(p, in); /* unreadable: reported as such */
}

/* ------------------------------------------------------------ summaries */

static int cmp_site(const void *a, const void *b)
{
	const struct tlm_job_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->key, y->key);
}

static char *join_argv(const struct tlm_report *r)
{
	size_t len = 1;
	for (uint32_t i = 0; i < r->argc; i++)
		len += strlen(r->argv[i]) + 1;
	if (len > 4096)
		len = 4096;
	char *s = malloc(len);
	if (!s)
		return NULL;
	size_t o = 0;
	s[0] = 0;
	for (uint32_t i = 0; i < r->argc && o + 1 < len; i++) {
		int w = snprintf(s + o, len - o, "%s%s", i ? " " : "", r->argv[i]);
		if (w < 0)
			break;
		o += (size_t)w < len - o ? (size_t)w : len - o - 1;
	}
	return s;
}

/* The at-peak sites of device memory, merged by key (one key can cover
 * several stacks), the TLM_JOB_SITES largest kept. */
static int sites_of(struct tlm_report *r, struct tlm_job_proc *p)
{
	size_t n = 0;
	struct tlm_job_site *s = calloc(r->nat_peak ? r->nat_peak : 1, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < r->nat_peak; i++) {
		const struct tlm_report_peak_site *a = &r->at_peak[i];
		if (a->kind != 0 /* TLM_MEM_DEVICE */ || !a->bytes)
			continue;
		char key[512];
		tlm_report_site_key(r, a->stack_id, key, sizeof key);
		size_t k = 0;
		while (k < n && strcmp(s[k].key, key))
			k++;
		if (k == n) {
			if (!(s[n].key = strdup(key)))
				goto fail;
			n++;
		}
		s[k].bytes += a->bytes;
	}
	qsort(s, n, sizeof *s, cmp_site);
	for (size_t k = TLM_JOB_SITES; k < n; k++)
		free(s[k].key);
	p->nsites = n < TLM_JOB_SITES ? n : TLM_JOB_SITES;
	p->sites = s;
	return 0;
fail:
	for (size_t k = 0; k < n; k++)
		free(s[k].key);
	free(s);
	return -1;
}

static const char *exit_name(int e)
{
	return e == TLM_REPORT_CLEAN ? "clean" : e == TLM_REPORT_SIGNAL ? "signal" : "truncated";
}

static int summarize(struct tlm_report *r, struct tlm_job_proc *p, bool series)
{
	p->pid = r->pid;
	p->ppid = r->job.ppid;
	p->host = strdup(r->job.host);
	p->exe = strdup(r->exe ? r->exe : "");
	p->command = join_argv(r);
	if (!p->host || !p->exe || !p->command)
		return -1;
	p->rank = r->job.rank;
	p->local_rank = r->job.local_rank;
	p->world_size = r->job.world_size;
	p->forked = r->job.forked;
	snprintf(p->exit, sizeof p->exit, "%s", exit_name(r->exit));
	snprintf(p->end_how, sizeof p->end_how, "%s", r->end_how);
	p->start_realtime_ns = r->job.start_realtime_ns;
	p->first_event_ns = r->have_events ? r->run_first_ns : 0;
	p->end_ns = r->have_events ? r->run_end_ns : 0;
	p->events = r->events;
	p->lost_events = r->lost_events;
	p->integrity_errors = r->nerrors;
	p->device = -1;
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		if (d->kind != TLM_MEM_DEVICE || !d->peak_reserved)
			continue;
		p->ndevices++;
		if (p->device < 0 || d->peak_reserved > p->peak_reserved) {
			p->device = d->device;
			p->peak_reserved = d->peak_reserved;
			p->peak_allocated = d->peak_allocated;
		}
	}
	p->leak_sites = r->nleaks;
	for (size_t i = 0; i < r->nleaks; i++)
		p->leak_bytes += r->leaks[i].bytes;
	p->ooms = r->ooms_total;
	if (r->nooms) {
		p->first_oom_ns = r->ooms[0].time_ns;
		p->first_oom_device = r->ooms[0].device;
		p->first_oom_requested = r->ooms[0].requested;
	}
	if (series && !(p->series = tlm_job_series_of(r, p->device)))
		return -1;
	if (tlm_job_devmem_from_report(r, p) || tlm_job_owners_from_report(r, p))
		return -1;
	return sites_of(r, p);
}

static bool is_json(const char *path)
{
	FILE *f = tlm_input_fopen(path, 0, NULL, 0);
	int c = ' ';
	while (f && (c = fgetc(f)) != EOF && (c == ' ' || c == '\n' || c == '\t' || c == '\r'))
		;
	if (f)
		fclose(f);
	return c == '{';
}

static void set_error(struct tlm_job_proc *p, const char *msg)
{
	char *src = p->source, *file = p->file;
	p->source = p->file = NULL;
	tlm_job_proc_fini(p);
	p->source = src;
	p->file = file;
	p->error = strdup(msg);
}

/* One input -> its summaries (a tlm-job/1 file holds many). */
struct slot {
	struct tlm_job_proc *procs;
	size_t n;
};

static void read_input(const char *path, struct slot *s, bool series)
{
	char err[512];
	/* only a regular file it can read: a FIFO matched by a glob or found in a
	 * directory would be waited on for ever, and an input read as a stream
	 * could not be told a JSON report from a trace without consuming it */
	int fd = tlm_input_open(path, 0, err, sizeof err);
	bool readable = fd >= 0;
	if (readable)
		close(fd);
	if (readable && is_json(path)) {
		if (tlm_job_read_json(path, &s->procs, &s->n, err, sizeof err) == 0)
			return;
	} else if (readable) {
		struct tlm_report *r = tlm_report_build_for(path, 0, err, sizeof err);
		s->procs = calloc(1, sizeof *s->procs);
		if (!s->procs)
			return;
		s->n = 1;
		if (!(s->procs[0].source = strdup(path)) || !(s->procs[0].file = strdup(path)))
			return;
		if (r) {
			if (summarize(r, &s->procs[0], series))
				set_error(&s->procs[0], "out of memory");
			tlm_report_free(r);
			return;
		}
	}
	/* unreadable: one proc with the error */
	if (!s->procs && !(s->procs = calloc(1, sizeof *s->procs)))
		return;
	if (!s->n)
		s->n = 1;
	set_error(&s->procs[0], err);
	if (!s->procs[0].source)
		s->procs[0].source = strdup(path);
}

struct pool {
	struct paths *in;
	struct slot *slots;
	atomic_size_t next;
	bool series;
};

static void *worker(void *arg)
{
	struct pool *pl = arg;
	size_t i;
	while ((i = atomic_fetch_add(&pl->next, 1)) < pl->in->n)
		read_input(pl->in->v[i], &pl->slots[i], pl->series);
	return NULL;
}

struct tlm_job *tlm_job_load(char *const *inputs, size_t n, unsigned threads, char *err, size_t errlen)
{
	return tlm_job_load_ex(inputs, n, threads, false, err, errlen);
}

struct tlm_job *tlm_job_load_ex(char *const *inputs, size_t n, unsigned threads, bool series, char *err,
				size_t errlen)
{
	struct paths in = {0};
	struct tlm_job *j = NULL;
	struct slot *slots = NULL;
	for (size_t i = 0; i < n; i++)
		if (expand(&in, inputs[i], err, errlen))
			goto out;
	if (!in.n) {
		snprintf(err, errlen, "no input");
		goto out;
	}
	if (!(slots = calloc(in.n, sizeof *slots)) || !(j = calloc(1, sizeof *j))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (!threads) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		threads = c > 0 ? (unsigned)c : 1;
	}
	if (threads > in.n)
		threads = (unsigned)in.n;
	if (threads > 256)
		threads = 256;
	struct pool pl = {.in = &in, .slots = slots, .series = series};
	atomic_init(&pl.next, 0);
	pthread_t tid[256];
	unsigned started = 0;
	for (unsigned t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, worker, &pl) == 0)
			started++;
	worker(&pl); /* this thread works too: at least one always does */
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	size_t total = 0;
	for (size_t i = 0; i < in.n; i++)
		total += slots[i].n ? slots[i].n : 1;
	if (!(j->procs = calloc(total, sizeof *j->procs))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < in.n; i++) {
		if (!slots[i].n) { /* no memory even for the error */
			j->procs[j->nprocs].source = in.v[i];
			j->procs[j->nprocs++].error = strdup("out of memory");
			in.v[i] = NULL;
			continue;
		}
		for (size_t k = 0; k < slots[i].n; k++) {
			j->nunreadable += slots[i].procs[k].error != NULL;
			j->procs[j->nprocs++] = slots[i].procs[k];
		}
		free(slots[i].procs);
		slots[i].procs = NULL;
		slots[i].n = 0;
	}
	j->ninputs = in.n;
	goto out;
fail:
	for (size_t i = 0; i < in.n; i++) {
		for (size_t k = 0; k < slots[i].n; k++)
			tlm_job_proc_fini(&slots[i].procs[k]);
		free(slots[i].procs);
	}
	tlm_job_free(j);
	j = NULL;
out:
	for (size_t i = 0; i < in.n; i++)
		free(in.v[i]);
	free(in.v);
	free(slots);
	return j;
}

void tlm_job_proc_fini(struct tlm_job_proc *p)
{
	free(p->source);
	free(p->file);
	free(p->error);
	free(p->host);
	free(p->exe);
	free(p->command);
	for (size_t i = 0; i < p->nsites; i++)
		free(p->sites[i].key);
	free(p->sites);
	tlm_job_series_free(p->series);
	tlm_job_devmem_free(p->dm);
	tlm_job_owners_free(p->owners);
	memset(p, 0, sizeof *p);
}

void tlm_job_free(struct tlm_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->nprocs; i++)
		tlm_job_proc_fini(&j->procs[i]);
	free(j->procs);
	free(j);
}
