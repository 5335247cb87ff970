/* SPDX-License-Identifier: MIT */
/*
 * live_job.c - the traces followed together: one file, every trace of a
 * directory (a job's, `tlm run -o DIR/%h-%r-%p.trace`), or those a `tlm
 * run` manifest names (each libtlm.so of the run appends its path there).
 * New traces are picked up as they appear; rows are ordered by rank, then
 * pid, then path.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/input.h"
#include "live_int.h"
#include "common/grow.h"

#define SCAN_NS 1000000000ull /* a directory or manifest is looked at once a second */

struct tlm_live_job {
	enum tlm_live_source kind;
	char *src, *name;
	struct tlm_live **v;
	size_t n, cap;
	uint64_t next_scan_ns;
	long manifest_off;           /* bytes of the manifest taken */
};

static bool known(const struct tlm_live_job *j, const char *path)
{
	for (size_t i = 0; i < j->n; i++)
		if (!strcmp(tlm_live_path(j->v[i]), path))
			return true;
	return false;
}

static void add(struct tlm_live_job *j, const char *path)
{
	if (known(j, path))
		return;
	if (j->n == j->cap && tlm__grow(&j->v, &j->cap, j->n + 1, sizeof *j->v, 8))
		return; /* without memory: not followed, tried again at the next scan */

	struct tlm_live *l = tlm_live_open(path);
	if (l)
		j->v[j->n++] = l;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

/* A file that is a trace, or named like one (it may still be empty). */
static bool is_trace(const char *path, const char *name)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (ends_with(name, ".trace") || strstr(name, ".trace."))
		return true; /* tlm-<pid>.trace, PATH.1 after an exec */
	char magic[8];
	FILE *f = tlm_input_fopen(path, 0, NULL, 0);
	bool yes = f && fread(magic, 1, 8, f) == 8 && !memcmp(magic, TLM_TRACE_MAGIC, 8);
	if (f)
		fclose(f);
	return yes;
}

static void scan_dir(struct tlm_live_job *j)
{
	DIR *d = opendir(j->src);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t len = strlen(j->src) + strlen(e->d_name) + 2;
		char *full = malloc(len);
		if (!full)
			break;
		snprintf(full, len, "%s%s%s", j->src, ends_with(j->src, "/") ? "" : "/", e->d_name);
		if (!known(j, full) && is_trace(full, e->d_name))
			add(j, full);
		free(full);
	}
	closedir(d);
}

static void scan_manifest(struct tlm_live_job *j)
{
	FILE *f = tlm_input_fopen(j->src, 0, NULL, 0); /* whoever can write it could make it a FIFO */
	if (!f)
		return;
	char line[4400];
	if (fseek(f, j->manifest_off, SEEK_SET) == 0)
		while (fgets(line, sizeof line, f)) {
			size_t k = strlen(line);
			if (!k || line[k - 1] != '\n')
				break; /* a line still being written: taken next time */
			j->manifest_off += (long)k;
			line[k - 1] = 0;
			if (line[0])
				add(j, line);
		}
	fclose(f);
}

static int64_t rank_of(struct tlm_live *l)
{
	return l->rep && l->rep->job.rank >= 0 ? l->rep->job.rank : INT64_MAX;
}

static int by_row(const void *a, const void *b)
{
	struct tlm_live *x = *(struct tlm_live *const *)a, *y = *(struct tlm_live *const *)b;
	int64_t rx = rank_of(x), ry = rank_of(y);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	uint32_t px = x->rep ? x->rep->pid : UINT32_MAX, py = y->rep ? y->rep->pid : UINT32_MAX;
	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(x->path, y->path);
}

struct tlm_live_job *tlm_live_job_open(enum tlm_live_source kind, const char *src)
{
	struct tlm_live_job *j = calloc(1, sizeof *j);
	if (!j || !(j->src = strdup(src))) {
		free(j);
		return NULL;
	}
	j->kind = kind;
	if (kind == TLM_LIVE_FILE) {
		add(j, src);
		if (!j->n) {
			tlm_live_job_close(j);
			return NULL;
		}
	}
	return j;
}

int tlm_live_job_poll(struct tlm_live_job *j, uint64_t budget)
{
	uint64_t now = tlm__live_mono_ns();
	if (j->kind != TLM_LIVE_FILE && now >= j->next_scan_ns) {
		j->next_scan_ns = now + SCAN_NS;
		if (j->kind == TLM_LIVE_DIR)
			scan_dir(j);
		else
			scan_manifest(j);
	}
	int more = 0;
	for (size_t i = 0; i < j->n; i++)
		more |= tlm_live_poll(j->v[i], j->n > 1 ? budget / j->n + 1 : budget);
	qsort(j->v, j->n, sizeof *j->v, by_row);
	return more;
}

size_t tlm_live_job_count(const struct tlm_live_job *j)
{
	return j->n;
}

struct tlm_live *tlm_live_job_get(struct tlm_live_job *j, size_t i)
{
	return i < j->n ? j->v[i] : NULL;
}

bool tlm_live_job_ended(const struct tlm_live_job *j)
{
	for (size_t i = 0; i < j->n; i++)
		if (tlm_live_state(j->v[i]) != TLM_LIVE_ENDED && tlm_live_state(j->v[i]) != TLM_LIVE_FAILED)
			return false;
	return j->n > 0;
}

void tlm_live_job_stop(struct tlm_live_job *j)
{
	if (j->kind == TLM_LIVE_MANIFEST)
		scan_manifest(j);
	else if (j->kind == TLM_LIVE_DIR)
		scan_dir(j);
	for (size_t i = 0; i < j->n; i++)
		tlm_live_stop(j->v[i]);
	qsort(j->v, j->n, sizeof *j->v, by_row);
}

void tlm_live_job_settle(struct tlm_live_job *j)
{
	for (size_t i = 0; i < j->n; i++)
		tlm_live_settle(j->v[i]);
	qsort(j->v, j->n, sizeof *j->v, by_row);
}

const char *tlm_live_job_source(const struct tlm_live_job *j)
{
	return j->name ? j->name : j->src;
}

void tlm_live_job_set_name(struct tlm_live_job *j, const char *name)
{
	free(j->name);
	j->name = strdup(name); /* NULL without memory: the source is shown */
}

bool tlm_live_job_is_set(const struct tlm_live_job *j)
{
	return j->kind != TLM_LIVE_FILE;
}

void tlm_live_job_close(struct tlm_live_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		tlm_live_close(j->v[i]);
	free(j->v);
	free(j->src);
	free(j->name);
	free(j);
}
