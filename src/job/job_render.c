/* SPDX-License-Identifier: MIT */
/*
 * job_render.c - the job report as text (<= 100 columns) and as JSON
 * (schema tlm-job/1, docs/job.md). Key names are a contract: add keys,
 * never rename. A tlm-job/1 file is also an input (job_json_in.c), so it
 * carries every per-process field the comparison needs.
 */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "common/text.h"
#include "job.h"
#include "job_devmem.h"
#include "job_owners.h"
#include "encoders/json_out.h"
#include "render/render.h"

void tlm_job_iso_time(char *buf, size_t n, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, n, "?");
		return;
	}
	char d[32];
	strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, n, "%s.%03uZ", d, (unsigned)(ns % 1000000000u / 1000000u));
}

/* seconds on the job clock, signed; the magnitude in unsigned arithmetic
 * (-INT64_MIN overflows: a tlm-job/1 input can hold any int64) */
void tlm_job_secs(char *buf, size_t n, int64_t ns)
{
	uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, n, "%s%.3f s", ns < 0 ? "-" : "+", (double)mag / 1e9);
}

/* From the earliest start (so never negative), held at INT64_MAX: starts
 * 2^63 ns apart (crafted realtime clocks) wrapped to negative offsets. */
static int64_t job_offset(const struct tlm_job *j, uint64_t realtime)
{
	uint64_t d = realtime - j->start_realtime_ns;
	return realtime < j->start_realtime_ns ? -(int64_t)((j->start_realtime_ns - realtime) & INT64_MAX)
	       : d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

static void opt_num(char *buf, size_t n, int64_t v)
{
	if (v >= 0)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "-");
}

static void text_spread(FILE *f, const struct tlm_job *j, const char *what, const struct tlm_job_spread *s)
{
	char a[32], b[32], c[32], na[64], nb[64];
	tlm_job_proc_name(&j->procs[s->min_proc], na, sizeof na);
	tlm_job_proc_name(&j->procs[s->max_proc], nb, sizeof nb);
	tlm_text_line(f, "  %-15s min %10s (%s)  max %10s (%s)  spread %s\n", what, tlm__human(a, sizeof a, s->min), na,
		tlm__human(b, sizeof b, s->max), nb, tlm__human(c, sizeof c, s->max - s->min));
}

static uint64_t oom_real(const struct tlm_job_proc *p)
{
	return p->start_realtime_ns + (uint64_t)p->first_oom_ns;
}

int tlm_job_text(const struct tlm_job *j, FILE *f)
{
	size_t nread = j->nprocs - j->nunreadable, nworkers = 0, nchildren = 0;
	for (size_t i = 0; i < j->nprocs; i++) {
		nworkers += !strcmp(j->procs[i].role, "worker");
		nchildren += !strcmp(j->procs[i].role, "child");
	}
	tlm_text_line(f, "tlm job report: %zu process%s (%zu rank%s, %zu worker%s, %zu child%s) on %zu host%s\n", nread,
		nread == 1 ? "" : "es", j->nranks, j->nranks == 1 ? "" : "s", nworkers, nworkers == 1 ? "" : "s",
		nchildren, nchildren == 1 ? "" : "ren", j->nhosts, j->nhosts == 1 ? "" : "s");
	char t[64];
	tlm_job_iso_time(t, sizeof t, j->start_realtime_ns);
	tlm_text_line(f, "times: from the earliest process start, %s (each trace's CLOCK_REALTIME start)\n", t);
	if (j->nunreadable)
		tlm_text_line(f, "%zu input%s could not be read (listed at the end)\n", j->nunreadable, j->nunreadable == 1 ? "" : "s");

	fprintf(f, "\nPROCESSES                                          PEAK (device memory)\n");
	tlm_text_line(f, "%6s %5s %-6s %-14s %8s %4s %11s %11s %5s %4s %10s\n", "rank", "local", "role", "host", "pid", "dev",
		"reserved", "allocated", "leaks", "OOMs", "start");
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error)
			continue;
		char rk[24], lr[24], dev[16], a[32], b[32], st[32];
		opt_num(rk, sizeof rk, p->rank);
		opt_num(lr, sizeof lr, p->local_rank);
		opt_num(dev, sizeof dev, p->device);
		tlm_job_secs(st, sizeof st, job_offset(j, p->start_realtime_ns));
		tlm_text_line(f, "%6s %5s %-6s %-14.14s %8" PRIu32 " %4s %11s %11s %5" PRIu64 " %4" PRIu64 " %10s%s%s\n", rk, lr,
			p->role, p->host, p->pid, dev, tlm__human(a, sizeof a, p->peak_reserved),
			tlm__human(b, sizeof b, p->peak_allocated), p->leak_sites, p->ooms, st,
			strcmp(p->exit, "clean") ? " " : "", strcmp(p->exit, "clean") ? p->exit : "");
	}
	tlm_job_devmem_text(j, f); /* only when a process has device samples */
	tlm_job_owners_text(j, f); /* only when a process has owners */

	if (j->ncompared > 1) {
		tlm_text_line(f, "\nACROSS %zu %s\n", j->ncompared, j->compared_ranks ? "RANKS" : "PROCESSES");
		text_spread(f, j, "peak reserved", &j->peak_reserved);
		text_spread(f, j, "peak allocated", &j->peak_allocated);
		if (j->ndiffs) {
			tlm_text_line(f, "\nSITES THAT DIFFER MOST BETWEEN %s (device memory at each one's allocated peak)\n",
				j->compared_ranks ? "RANKS" : "PROCESSES");
			for (size_t i = 0; i < j->ndiffs; i++) {
				const struct tlm_job_diff *d = &j->diffs[i];
				char a[32], b[32], c[32], na[64], nb[64];
				tlm_job_proc_name(&j->procs[d->min_proc], na, sizeof na);
				tlm_job_proc_name(&j->procs[d->max_proc], nb, sizeof nb);
				size_t len = strlen(d->key);
				if (len > 96)
					tlm_text_line(f, "  %.93s...\n", d->key);
				else
					tlm_text_line(f, "  %s\n", d->key);
				tlm_text_line(f, "      spread %s: %s (%s) to %s (%s)\n", tlm__human(c, sizeof c, d->max - d->min),
					tlm__human(a, sizeof a, d->min), na, tlm__human(b, sizeof b, d->max), nb);
			}
		} else {
			tlm_text_line(f, "\nno site holds different bytes on different %s\n",
				j->compared_ranks ? "ranks" : "processes");
		}
	}

	if (j->noom_procs) {
		size_t n = j->noom_procs < 8 ? j->noom_procs : 8;
		tlm_text_line(f, "\nOUT OF MEMORY: %zu process%s hit an OOM; in job time order:\n", j->noom_procs,
			j->noom_procs == 1 ? "" : "es");
		for (size_t i = 0; i < n; i++) {
			const struct tlm_job_proc *p = &j->procs[j->oom_order[i]];
			char nm[64], ts[32], rq[32];
			tlm_job_proc_name(p, nm, sizeof nm);
			tlm_job_secs(ts, sizeof ts, job_offset(j, oom_real(p)));
			tlm_text_line(f, "  %s%s (%s, pid %" PRIu32 ") at %s: %s requested on device %d, %" PRIu64 " OOM%s\n",
				i ? "" : "first: ", nm, p->host, p->pid, ts, tlm__human(rq, sizeof rq, p->first_oom_requested),
				p->first_oom_device, p->ooms, p->ooms == 1 ? "" : "s");
			tlm_job_devmem_oom_text(p, f);
		}
	} else {
		fprintf(f, "\nno process hit an OOM\n");
	}
	if (j->nunreadable) {
		fprintf(f, "\nUNREADABLE\n");
		for (size_t i = 0; i < j->nprocs; i++)
			if (j->procs[i].error)
				tlm_text_line(f, "  %s: %s\n", j->procs[i].source, j->procs[i].error);
	}
	fprintf(f, "\nper process: tlm report TRACE; this report as JSON: --format json (tlm-job/1)\n");
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------ JSON */

static void k_opt(struct tlm__json *js, const char *key, int64_t v)
{
	tlm__json_key(js, key);
	if (v >= 0)
		tlm__json_i64(js, v);
	else
		tlm__json_null(js);
}

static void k_str(struct tlm__json *js, const char *key, const char *v)
{
	tlm__json_key(js, key);
	tlm__json_str(js, v);
}

static void proc_ref(struct tlm__json *js, const struct tlm_job *j, const char *key, size_t i)
{
	char nm[64];
	tlm_job_proc_name(&j->procs[i], nm, sizeof nm);
	tlm__json_key(js, key);
	tlm__json_obj(js);
	tlm__json_ku(js, "index", i);
	k_str(js, "name", nm);
	tlm__json_obj_end(js);
}

static void json_proc(struct tlm__json *js, const struct tlm_job *j, const struct tlm_job_proc *p)
{
	tlm__json_obj(js);
	k_str(js, "source", p->source);
	k_str(js, "error", p->error);
	if (p->error) {
		tlm__json_obj_end(js);
		return;
	}
	tlm__json_ku(js, "pid", p->pid);
	tlm__json_ku(js, "ppid", p->ppid);
	k_str(js, "host", p->host);
	k_str(js, "exe", p->exe);
	k_str(js, "command", p->command);
	k_opt(js, "rank", p->rank);
	k_opt(js, "local_rank", p->local_rank);
	k_opt(js, "world_size", p->world_size);
	k_str(js, "origin", p->forked ? "fork" : "");
	k_str(js, "role", p->role);
	k_str(js, "exit", p->exit);
	k_str(js, "end_how", p->end_how);
	tlm__json_ku(js, "start_realtime_ns", p->start_realtime_ns);
	tlm__json_ki(js, "start_ns", job_offset(j, p->start_realtime_ns));
	tlm__json_ki(js, "first_event_ns", p->first_event_ns);
	tlm__json_ki(js, "end_ns", p->end_ns);
	tlm__json_ku(js, "events", p->events);
	tlm__json_ku(js, "lost_events", p->lost_events);
	tlm__json_ku(js, "integrity_errors", p->integrity_errors);
	k_opt(js, "device", p->device);
	tlm__json_ku(js, "devices", p->ndevices);
	tlm__json_ku(js, "peak_reserved_bytes", p->peak_reserved);
	tlm__json_ku(js, "peak_allocated_bytes", p->peak_allocated);
	tlm__json_ku(js, "leak_sites", p->leak_sites);
	tlm__json_ku(js, "leak_bytes", p->leak_bytes);
	tlm__json_ku(js, "ooms", p->ooms);
	tlm__json_key(js, "first_oom");
	if (p->ooms) {
		tlm__json_obj(js);
		tlm__json_ki(js, "time_ns", p->first_oom_ns);
		tlm__json_ki(js, "job_time_ns", job_offset(j, oom_real(p)));
		tlm__json_ki(js, "device", p->first_oom_device);
		tlm__json_ku(js, "requested_bytes", p->first_oom_requested);
		tlm_job_devmem_json_oom(js, p);
		tlm__json_obj_end(js);
	} else {
		tlm__json_null(js);
	}
	tlm__json_key(js, "sites");
	tlm__json_arr(js);
	for (size_t i = 0; i < p->nsites; i++) {
		tlm__json_obj(js);
		k_str(js, "site", p->sites[i].key);
		tlm__json_ku(js, "bytes", p->sites[i].bytes);
		tlm__json_obj_end(js);
	}
	tlm__json_arr_end(js);
	tlm_job_devmem_json(js, p);
	tlm_job_owners_json(js, p);
	tlm__json_obj_end(js);
}

static void json_spread(struct tlm__json *js, const struct tlm_job *j, const char *key, const struct tlm_job_spread *s)
{
	tlm__json_key(js, key);
	tlm__json_obj(js);
	tlm__json_ku(js, "min_bytes", s->min);
	proc_ref(js, j, "min_process", s->min_proc);
	tlm__json_ku(js, "max_bytes", s->max);
	proc_ref(js, j, "max_process", s->max_proc);
	tlm__json_ku(js, "spread_bytes", s->max - s->min);
	tlm__json_obj_end(js);
}

int tlm_job_json(const struct tlm_job *j, FILE *f)
{
	struct tlm__json js;
	tlm__json_init(&js, f);
	tlm__json_obj(&js);
	k_str(&js, "schema", TLM_JOB_SCHEMA);
	tlm__json_ku(&js, "inputs", j->ninputs);
	tlm__json_ku(&js, "unreadable", j->nunreadable);
	tlm__json_ku(&js, "start_realtime_ns", j->start_realtime_ns);
	tlm__json_ku(&js, "hosts", j->nhosts);
	tlm__json_ku(&js, "ranks", j->nranks);
	tlm__json_key(&js, "processes");
	tlm__json_arr(&js);
	for (size_t i = 0; i < j->nprocs; i++)
		json_proc(&js, j, &j->procs[i]);
	tlm__json_arr_end(&js);
	tlm__json_key(&js, "comparison");
	if (j->ncompared) {
		tlm__json_obj(&js);
		k_str(&js, "across", j->compared_ranks ? "ranks" : "processes");
		tlm__json_ku(&js, "count", j->ncompared);
		json_spread(&js, j, "peak_reserved", &j->peak_reserved);
		json_spread(&js, j, "peak_allocated", &j->peak_allocated);
		tlm__json_key(&js, "sites");
		tlm__json_arr(&js);
		for (size_t i = 0; i < j->ndiffs; i++) {
			const struct tlm_job_diff *d = &j->diffs[i];
			tlm__json_obj(&js);
			k_str(&js, "site", d->key);
			tlm__json_ku(&js, "spread_bytes", d->max - d->min);
			tlm__json_ku(&js, "min_bytes", d->min);
			proc_ref(&js, j, "min_process", d->min_proc);
			tlm__json_ku(&js, "max_bytes", d->max);
			proc_ref(&js, j, "max_process", d->max_proc);
			tlm__json_obj_end(&js);
		}
		tlm__json_arr_end(&js);
		tlm__json_obj_end(&js);
	} else {
		tlm__json_null(&js);
	}
	tlm__json_ku(&js, "oom_processes", j->noom_procs);
	tlm__json_key(&js, "first_ooms");
	tlm__json_arr(&js);
	for (size_t i = 0; i < j->noom_procs && i < 8; i++) {
		const struct tlm_job_proc *p = &j->procs[j->oom_order[i]];
		tlm__json_obj(&js);
		proc_ref(&js, j, "process", j->oom_order[i]);
		tlm__json_ki(&js, "job_time_ns", job_offset(j, oom_real(p)));
		tlm__json_ku(&js, "requested_bytes", p->first_oom_requested);
		tlm__json_ki(&js, "device", p->first_oom_device);
		tlm__json_obj_end(&js);
	}
	tlm__json_arr_end(&js);
	tlm__json_obj_end(&js);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
