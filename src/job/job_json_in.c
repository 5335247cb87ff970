/* SPDX-License-Identifier: MIT */
/*
 * job_json_in.c - JSON inputs of the job report: a `tlm report --format
 * json` report (tlm-report/1: one process) or a job report (tlm-job/1: its
 * processes), so that per-node reductions merge into one job report with
 * the same figures as reading every trace at once. Strict: a file that is
 * neither, or lacks a required key, is one error line.
 */
#include <stdlib.h>
#include <string.h>

#include "encoders/json_in.h"
#include "job.h"
#include "job_devmem.h"
#include "job_owners.h"

#define MAX_JSON (1024u << 20)

static uint64_t u64_or(const struct tlm_jv *v, uint64_t dflt)
{
	uint64_t u;
	return tlm_jv_u64(v, &u) ? u : dflt;
}

static int64_t i64_or(const struct tlm_jv *v, int64_t dflt)
{
	int64_t x;
	return tlm_jv_i64(v, &x) ? x : dflt;
}

static char *dup_str(const struct tlm_jv *v)
{
	const char *s = tlm_jv_str(v);
	return strdup(s ? s : "");
}

static void copy_str(char *dst, size_t n, const struct tlm_jv *v)
{
	const char *s = tlm_jv_str(v);
	snprintf(dst, n, "%s", s ? s : "");
}

/* The fields a tlm-report/1 `process` and a tlm-job/1 process share, under
 * the same keys: who the process was in the job and how it ended. */
static void identity(struct tlm_job_proc *p, const struct tlm_jv *o)
{
	p->rank = i64_or(tlm_jv_get(o, "rank"), -1);
	p->local_rank = i64_or(tlm_jv_get(o, "local_rank"), -1);
	p->world_size = i64_or(tlm_jv_get(o, "world_size"), -1);
	const char *origin = tlm_jv_str(tlm_jv_get(o, "origin"));
	p->forked = origin && !strcmp(origin, "fork");
	copy_str(p->exit, sizeof p->exit, tlm_jv_get(o, "exit"));
	copy_str(p->end_how, sizeof p->end_how, tlm_jv_get(o, "end_how"));
	p->start_realtime_ns = u64_or(tlm_jv_get(o, "start_realtime_ns"), 0);
}

static int add_site(struct tlm_job_proc *p, const char *key, uint64_t bytes)
{
	for (size_t k = 0; k < p->nsites; k++)
		if (!strcmp(p->sites[k].key, key)) {
			p->sites[k].bytes += bytes;
			return 0;
		}
	struct tlm_job_site *ns = realloc(p->sites, (p->nsites + 1) * sizeof *ns);
	if (!ns)
		return -1;
	p->sites = ns;
	if (!(p->sites[p->nsites].key = strdup(key)))
		return -1;
	p->sites[p->nsites++].bytes = bytes;
	return 0;
}

static int cmp_site(const void *a, const void *b)
{
	const struct tlm_job_site *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void trim_sites(struct tlm_job_proc *p)
{
	if (p->nsites > 1)
		qsort(p->sites, p->nsites, sizeof *p->sites, cmp_site);
	for (size_t k = TLM_JOB_SITES; k < p->nsites; k++)
		free(p->sites[k].key);
	if (p->nsites > TLM_JOB_SITES)
		p->nsites = TLM_JOB_SITES;
}

/* One process of a tlm-report/1 file (the same rules as job_load.c's). */
static const char *from_report(const struct tlm_jv *v, const char *path, struct tlm_job_proc *p)
{
	const struct tlm_jv *pr = tlm_jv_get(v, "process"), *run = tlm_jv_get(v, "run");
	if (!pr || !tlm_jv_get(pr, "pid") || !run)
		return "a tlm-report/1 file without process or run";
	if (!tlm_jv_get(pr, "host") || !tlm_jv_get(pr, "start_realtime_ns"))
		return "a tlm-report/1 file from a tlm without job fields (host, start_realtime_ns): rerun tlm report";
	p->source = strdup(tlm_jv_str(tlm_jv_get(v, "trace")) ? tlm_jv_str(tlm_jv_get(v, "trace")) : path);
	p->file = strdup(path);
	p->pid = (uint32_t)u64_or(tlm_jv_get(pr, "pid"), 0);
	p->ppid = (uint32_t)u64_or(tlm_jv_get(pr, "ppid"), 0);
	p->host = dup_str(tlm_jv_get(pr, "host"));
	p->exe = dup_str(tlm_jv_get(pr, "exe"));
	const struct tlm_jv *cmd = tlm_jv_get(pr, "command");
	size_t len = 1;
	for (size_t i = 0; i < tlm_jv_len(cmd); i++)
		len += (tlm_jv_str(tlm_jv_at(cmd, i)) ? strlen(tlm_jv_str(tlm_jv_at(cmd, i))) : 0) + 1;
	if (len > 4096)
		len = 4096;
	if ((p->command = malloc(len))) {
		size_t o = 0;
		p->command[0] = 0;
		for (size_t i = 0; i < tlm_jv_len(cmd) && o + 1 < len; i++) {
			const char *a = tlm_jv_str(tlm_jv_at(cmd, i));
			int w = snprintf(p->command + o, len - o, "%s%s", i ? " " : "", a ? a : "");
			if (w < 0)
				break;
			o += (size_t)w < len - o ? (size_t)w : len - o - 1;
		}
	}
	if (!p->source || !p->file || !p->host || !p->exe || !p->command)
		return "out of memory";
	identity(p, pr);
	p->lost_events = u64_or(tlm_jv_get(pr, "lost_events"), 0);
	p->first_event_ns = i64_or(tlm_jv_get(run, "first_event_ns"), 0);
	p->end_ns = i64_or(tlm_jv_get(run, "end_ns"), 0);
	p->events = u64_or(tlm_jv_get(run, "events"), 0);
	p->integrity_errors = tlm_jv_len(tlm_jv_get(v, "integrity_errors"));
	p->device = -1;
	const struct tlm_jv *devs = tlm_jv_get(v, "devices");
	for (size_t i = 0; i < tlm_jv_len(devs); i++) {
		const struct tlm_jv *d = tlm_jv_at(devs, i);
		const char *kind = tlm_jv_str(tlm_jv_get(d, "kind"));
		uint64_t pr_b = u64_or(tlm_jv_get(d, "peak_reserved_bytes"), 0);
		if (!kind || strcmp(kind, "device") || !pr_b)
			continue;
		p->ndevices++;
		if (p->device < 0 || pr_b > p->peak_reserved) {
			p->device = (int)i64_or(tlm_jv_get(d, "device"), 0);
			p->peak_reserved = pr_b;
			p->peak_allocated = u64_or(tlm_jv_get(d, "peak_allocated_bytes"), 0);
		}
	}
	const struct tlm_jv *leaks = tlm_jv_get(v, "leaks");
	p->leak_sites = tlm_jv_len(leaks);
	for (size_t i = 0; i < tlm_jv_len(leaks); i++)
		p->leak_bytes += u64_or(tlm_jv_get(tlm_jv_at(leaks, i), "bytes"), 0);
	p->ooms = u64_or(tlm_jv_get(tlm_jv_get(v, "counters"), "ooms_total"), 0);
	if (!p->ooms)
		p->ooms = u64_or(tlm_jv_get(v, "ooms_total"), 0);
	const struct tlm_jv *oo = tlm_jv_at(tlm_jv_get(v, "ooms"), 0);
	if (oo) {
		p->first_oom_ns = i64_or(tlm_jv_get(oo, "time_ns"), 0);
		p->first_oom_device = (int)i64_or(tlm_jv_get(oo, "device"), 0);
		p->first_oom_requested = u64_or(tlm_jv_get(oo, "requested_bytes"), 0);
	}
	const struct tlm_jv *ap = tlm_jv_get(v, "at_peak");
	for (size_t i = 0; i < tlm_jv_len(ap); i++) {
		const struct tlm_jv *s = tlm_jv_at(ap, i);
		const char *kind = tlm_jv_str(tlm_jv_get(s, "kind")), *key = tlm_jv_str(tlm_jv_get(s, "site"));
		uint64_t b = u64_or(tlm_jv_get(s, "bytes"), 0);
		if (kind && !strcmp(kind, "device") && key && b && add_site(p, key, b))
			return "out of memory";
	}
	trim_sites(p);
	return tlm_job_devmem_from_json(v, false, p) || tlm_job_owners_from_json(v, false, p) ? "out of memory" : NULL;
}

/* One process of a tlm-job/1 file: the fields json_proc() wrote. */
static const char *from_job(const struct tlm_jv *v, struct tlm_job_proc *p)
{
	p->source = dup_str(tlm_jv_get(v, "source"));
	if (!p->source)
		return "out of memory";
	const char *e = tlm_jv_str(tlm_jv_get(v, "error"));
	if (e) {
		p->error = strdup(e);
		return NULL;
	}
	if (!tlm_jv_get(v, "pid") || !tlm_jv_get(v, "start_realtime_ns") || !tlm_jv_get(v, "host"))
		return "a tlm-job/1 process without pid, host or start_realtime_ns";
	p->pid = (uint32_t)u64_or(tlm_jv_get(v, "pid"), 0);
	p->ppid = (uint32_t)u64_or(tlm_jv_get(v, "ppid"), 0);
	p->host = dup_str(tlm_jv_get(v, "host"));
	p->exe = dup_str(tlm_jv_get(v, "exe"));
	p->command = dup_str(tlm_jv_get(v, "command"));
	if (!p->host || !p->exe || !p->command)
		return "out of memory";
	identity(p, v);
	p->first_event_ns = i64_or(tlm_jv_get(v, "first_event_ns"), 0);
	p->end_ns = i64_or(tlm_jv_get(v, "end_ns"), 0);
	p->events = u64_or(tlm_jv_get(v, "events"), 0);
	p->lost_events = u64_or(tlm_jv_get(v, "lost_events"), 0);
	p->integrity_errors = u64_or(tlm_jv_get(v, "integrity_errors"), 0);
	p->device = (int)i64_or(tlm_jv_get(v, "device"), -1);
	p->ndevices = (unsigned)u64_or(tlm_jv_get(v, "devices"), 0);
	p->peak_reserved = u64_or(tlm_jv_get(v, "peak_reserved_bytes"), 0);
	p->peak_allocated = u64_or(tlm_jv_get(v, "peak_allocated_bytes"), 0);
	p->leak_sites = u64_or(tlm_jv_get(v, "leak_sites"), 0);
	p->leak_bytes = u64_or(tlm_jv_get(v, "leak_bytes"), 0);
	p->ooms = u64_or(tlm_jv_get(v, "ooms"), 0);
	const struct tlm_jv *oo = tlm_jv_get(v, "first_oom");
	if (p->ooms && oo) {
		p->first_oom_ns = i64_or(tlm_jv_get(oo, "time_ns"), 0);
		p->first_oom_device = (int)i64_or(tlm_jv_get(oo, "device"), 0);
		p->first_oom_requested = u64_or(tlm_jv_get(oo, "requested_bytes"), 0);
	}
	const struct tlm_jv *ss = tlm_jv_get(v, "sites");
	for (size_t i = 0; i < tlm_jv_len(ss); i++) {
		const struct tlm_jv *s = tlm_jv_at(ss, i);
		const char *key = tlm_jv_str(tlm_jv_get(s, "site"));
		if (key && add_site(p, key, u64_or(tlm_jv_get(s, "bytes"), 0)))
			return "out of memory";
	}
	trim_sites(p);
	return tlm_job_devmem_from_json(v, true, p) || tlm_job_owners_from_json(v, true, p) ? "out of memory" : NULL;
}

int tlm_job_read_json(const char *path, struct tlm_job_proc **out, size_t *n, char *err, size_t errlen)
{
	size_t len;
	char *buf = tlm_json_read_file(path, MAX_JSON, &len, err, errlen);
	if (!buf)
		return -1;
	struct tlm_jv *v = tlm_json_parse(buf, len, err, errlen);
	free(buf);
	if (!v)
		return -1;
	const char *schema = tlm_jv_str(tlm_jv_get(v, "schema"));
	bool job = schema && !strcmp(schema, "tlm-job/1");
	const struct tlm_jv *ps = job ? tlm_jv_get(v, "processes") : NULL;
	size_t count = job ? tlm_jv_len(ps) : 1;
	if (!schema || (!job && strcmp(schema, "tlm-report/1"))) {
		snprintf(err, errlen, "not a tlm report (JSON schema %s%s%s; tlm-report/1 or tlm-job/1 expected)",
			 schema ? "'" : "", schema ? schema : "missing", schema ? "'" : "");
		tlm_json_free(v);
		return -1;
	}
	if (!count) { /* (a job report always has a process) */
		snprintf(err, errlen, "a tlm-job/1 file without processes");
		tlm_json_free(v);
		return -1;
	}
	struct tlm_job_proc *procs = calloc(count, sizeof *procs);
	const char *why = procs ? NULL : "out of memory";
	size_t done = 0;
	for (; !why && done < count; done++)
		why = job ? from_job(tlm_jv_at(ps, done), &procs[done]) : from_report(v, path, &procs[done]);
	tlm_json_free(v);
	if (why) {
		snprintf(err, errlen, "%s", why);
		for (size_t i = 0; procs && i < done; i++)
			tlm_job_proc_fini(&procs[i]);
		free(procs);
		return -1;
	}
	*out = procs;
	*n = count;
	return 0;
}
