/* SPDX-License-Identifier: MIT */
/*
 * job_devmem.c - the device's own view per process in the job report
 * (job_devmem.h, docs/job.md "Device memory").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "encoders/json_in.h"
#include "job_devmem.h"
#include "analysis/devmem.h"
#include "encoders/json_out.h"
#include "render/render.h"

void tlm_job_devmem_free(struct tlm_job_devmem *d)
{
	if (!d)
		return;
	free(d->oom_line);
	free(d);
}

int tlm_job_devmem_from_report(struct tlm_report *r, struct tlm_job_proc *p)
{
	const struct tlm_report_devmem *m = r->devmem;
	if (!m)
		return 0;
	struct tlm_job_devmem *d = calloc(1, sizeof *d);
	if (!d)
		return -1;
	p->dm = d;
	d->device = p->device;
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct tlm_report_devmem_dev *dv = &m->devs[i];
		if (dv->device != p->device || !dv->have_peak)
			continue;
		const struct tlm_report_devview *v = &dv->peak;
		d->have_peak = true;
		d->at_reserved_peak = dv->peak_exact;
		d->total = v->total;
		d->used = v->used;
		d->tracked = v->tracked;
		d->split = v->split;
		d->untracked = v->unattributed;
		d->others = v->others;
		d->nothers = v->nothers;
	}
	const struct tlm_report_devview *o = tlm_report_oom_devview(r, 0);
	if (o) {
		char line[1024];
		if (!(d->oom_line = strdup(tlm_report_devview_line(o, r->pid, line, sizeof line))))
			return -1;
	}
	return 0;
}

static bool is_true(const struct tlm_jv *v)
{
	return v && v->type == TLM_JV_BOOL && v->b;
}

static uint64_t u64_or0(const struct tlm_jv *v)
{
	uint64_t u;
	return tlm_jv_u64(v, &u) ? u : 0;
}

int tlm_job_devmem_from_json(const struct tlm_jv *v, bool job, struct tlm_job_proc *p)
{
	const struct tlm_jv *pk = NULL, *diag = NULL;
	bool exact = false;
	if (job) {
		if (!tlm_jv_get(v, "device_memory_at_peak"))
			return 0;
		pk = tlm_jv_get(v, "device_memory_at_peak");
		exact = pk && pk->type == TLM_JV_OBJ && is_true(tlm_jv_get(pk, "at_reserved_peak"));
		diag = tlm_jv_get(tlm_jv_get(v, "first_oom"), "diagnosis");
	} else {
		const struct tlm_jv *dm = tlm_jv_get(v, "device_memory");
		if (!dm)
			return 0;
		const struct tlm_jv *devs = tlm_jv_get(dm, "devices");
		for (size_t i = 0; i < tlm_jv_len(devs); i++) {
			const struct tlm_jv *d = tlm_jv_at(devs, i);
			int64_t dev;
			if (tlm_jv_i64(tlm_jv_get(d, "device"), &dev) && dev == p->device) {
				pk = tlm_jv_get(d, "peak");
				exact = is_true(tlm_jv_get(d, "peak_is_reserved_peak"));
			}
		}
		diag = tlm_jv_get(tlm_jv_get(tlm_jv_at(tlm_jv_get(v, "ooms"), 0), "device_memory"), "diagnosis");
	}
	struct tlm_job_devmem *d = calloc(1, sizeof *d);
	if (!d)
		return -1;
	p->dm = d;
	d->device = p->device;
	if (pk && pk->type == TLM_JV_OBJ) {
		d->have_peak = true;
		d->at_reserved_peak = exact;
		d->total = u64_or0(tlm_jv_get(pk, "total_bytes"));
		d->used = u64_or0(tlm_jv_get(pk, "used_bytes"));
		d->tracked = u64_or0(tlm_jv_get(pk, "tracked_bytes"));
		d->split = tlm_jv_get(pk, "untracked_bytes") && tlm_jv_get(pk, "untracked_bytes")->type == TLM_JV_NUM;
		d->untracked = u64_or0(tlm_jv_get(pk, "unattributed_bytes"));
		d->others = u64_or0(tlm_jv_get(pk, "other_processes_bytes"));
		d->nothers = u64_or0(tlm_jv_get(pk, "other_processes"));
		if (!job) { /* a report lists every process NVML named */
			const struct tlm_jv *np = tlm_jv_get(pk, "nvml_processes");
			d->nothers = 0;
			for (size_t i = 0; d->split && i < tlm_jv_len(np); i++)
				d->nothers += !is_true(tlm_jv_get(tlm_jv_at(np, i), "this_process"));
		}
	}
	if (tlm_jv_str(diag) && !(d->oom_line = strdup(tlm_jv_str(diag))))
		return -1;
	return 0;
}

void tlm_job_devmem_text(const struct tlm_job *j, FILE *f)
{
	bool any = false;
	for (size_t i = 0; i < j->nprocs && !any; i++)
		any = !j->procs[i].error && j->procs[i].dm;
	if (!any)
		return;
	fprintf(f, "\nDEVICE MEMORY AT EACH PROCESS'S RESERVED PEAK (the device's own view: cuMemGetInfo, NVML)\n");
	tlm_text_line(f, "  %-24s %4s %10s %10s %10s %11s\n", "process", "dev", "total", "tracked", "untracked", "other procs");
	bool unsplit = false, inexact = false;
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error || !p->dm)
			continue;
		const struct tlm_job_devmem *d = p->dm;
		char nm[64], a[32], b[32], c[32], e[32];
		tlm_job_proc_name(p, nm, sizeof nm);
		if (!d->have_peak) {
			tlm_text_line(f, "  %-24.24s %4d  no sample of this device\n", nm, p->device);
			continue;
		}
		tlm__human(a, sizeof a, d->total);
		tlm__human(b, sizeof b, d->tracked);
		if (d->split) {
			tlm__human(c, sizeof c, d->untracked);
			tlm_text_line(f, "  %-24.24s %4d %10s %10s %10s %11s%s\n", nm, d->device, a, b, c,
				tlm__human(e, sizeof e, d->others), d->at_reserved_peak ? "" : " *");
		} else {
			unsplit = true;
			tlm_text_line(f, "  %-24.24s %4d %10s %10s %10s %11s  %s either%s\n", nm, d->device,
				a, b, "-", "-", tlm__human(c, sizeof c, d->untracked), d->at_reserved_peak ? "" : " *");
		}
		inexact |= !d->at_reserved_peak;
	}
	fprintf(f, "  untracked: the process's own use that no tracked call holds (CUDA context, library pools)\n");
	if (unsplit)
		fprintf(f, "  '-': no per-process figures (no NVML, or its pid not in NVML's list); 'X either': X is\n"
			   "  untracked or other processes' memory, which cannot be told apart then\n");
	if (inexact)
		fprintf(f, "  *: the reserved peak itself was not sampled; the highest sampled state is shown\n");
}

void tlm_job_devmem_oom_text(const struct tlm_job_proc *p, FILE *f)
{
	if (p->dm && p->dm->oom_line)
		tlm__devmem_wrap(f, "      device: ", "        ", p->dm->oom_line);
}

static void opt(struct tlm__json *js, const char *k, bool known, uint64_t v)
{
	tlm__json_key(js, k);
	if (known)
		tlm__json_u64(js, v);
	else
		tlm__json_null(js);
}

void tlm_job_devmem_json(struct tlm__json *js, const struct tlm_job_proc *p)
{
	const struct tlm_job_devmem *d = p->dm;
	if (!d)
		return;
	tlm__json_key(js, "device_memory_at_peak");
	if (!d->have_peak) {
		tlm__json_null(js);
		return;
	}
	tlm__json_obj(js);
	tlm__json_ki(js, "device", d->device);
	tlm__json_key(js, "at_reserved_peak");
	tlm__json_bool(js, d->at_reserved_peak);
	tlm__json_ku(js, "total_bytes", d->total);
	tlm__json_ku(js, "used_bytes", d->used);
	tlm__json_ku(js, "tracked_bytes", d->tracked);
	opt(js, "untracked_bytes", d->split, d->untracked);
	opt(js, "other_processes_bytes", d->split, d->others);
	opt(js, "other_processes", d->split, d->nothers);
	tlm__json_ku(js, "unattributed_bytes", d->untracked);
	tlm__json_obj_end(js);
}

void tlm_job_devmem_json_oom(struct tlm__json *js, const struct tlm_job_proc *p)
{
	if (!p->dm || !p->dm->oom_line)
		return;
	tlm__json_key(js, "diagnosis");
	tlm__json_str(js, p->dm->oom_line);
}
