/* SPDX-License-Identifier: MIT */
/*
 * job_owners.c - who held each process's device memory in the job report
 * (job_owners.h, docs/job.md "Owners").
 */
#include <stdlib.h>
#include <string.h>

#include "job_owners.h"
#include "analysis/owners.h"
#include "encoders/json_in.h"
#include "encoders/json_out.h"
#include "render/render.h"

void tlm_job_owners_free(struct tlm_job_owners *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->o[i].name);
	free(w->o);
	free(w);
}

static struct tlm_job_owners *new_owners(size_t n)
{
	struct tlm_job_owners *w = calloc(1, sizeof *w);
	if (w && !(w->o = calloc(n ? n : 1, sizeof *w->o))) {
		free(w);
		return NULL;
	}
	return w;
}

int tlm_job_owners_from_report(const struct tlm_report *r, struct tlm_job_proc *p)
{
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		if (d->device != p->device || d->kind != TLM_MEM_DEVICE || !d->nowners)
			continue;
		if (!(p->owners = new_owners(d->nowners)))
			return -1;
		for (size_t k = 0; k < d->nowners; k++) {
			struct tlm_job_owner *o = &p->owners->o[k];
			if (!(o->name = strdup(d->owners[k].name)))
				return -1;
			p->owners->n = k + 1;
			o->peak = d->owners[k].peak;
			o->at_reserved_peak = d->owners[k].at_reserved_peak;
			o->at_end = d->owners[k].at_end;
		}
	}
	return 0;
}

static uint64_t u64_or0(const struct tlm_jv *v)
{
	uint64_t u;
	return tlm_jv_u64(v, &u) ? u : 0;
}

int tlm_job_owners_from_json(const struct tlm_jv *v, bool job, struct tlm_job_proc *p)
{
	const struct tlm_jv *arr = NULL;
	if (job) {
		arr = tlm_jv_get(v, "owners");
	} else {
		const struct tlm_jv *devs = tlm_jv_get(v, "devices");
		for (size_t i = 0; i < tlm_jv_len(devs); i++) {
			const struct tlm_jv *d = tlm_jv_at(devs, i);
			const char *kind = tlm_jv_str(tlm_jv_get(d, "kind"));
			int64_t dev;
			if (tlm_jv_i64(tlm_jv_get(d, "device"), &dev) && dev == p->device && kind && !strcmp(kind, "device"))
				arr = tlm_jv_get(d, "owners");
		}
	}
	size_t n = arr && arr->type == TLM_JV_ARR ? tlm_jv_len(arr) : 0;
	if (!n)
		return 0;
	if (!(p->owners = new_owners(n)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct tlm_jv *e = tlm_jv_at(arr, i);
		const char *name = tlm_jv_str(tlm_jv_get(e, "owner"));
		if (!name)
			continue; /* not an owner: skipped, the rest kept */
		struct tlm_job_owner *o = &p->owners->o[p->owners->n];
		if (!(o->name = strdup(name)))
			return -1;
		p->owners->n++;
		o->peak = u64_or0(tlm_jv_get(e, "peak_bytes"));
		o->at_reserved_peak = u64_or0(tlm_jv_get(e, "bytes_at_reserved_peak"));
		o->at_end = u64_or0(tlm_jv_get(e, "live_bytes_at_end"));
	}
	return 0;
}

static const struct tlm_job_owner *find(const struct tlm_job_owners *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->o[i].name, name))
			return &w->o[i];
	return NULL;
}

static char *cell(char *buf, size_t n, const struct tlm_job_owner *o, bool peak)
{
	return o ? tlm__human(buf, n, peak ? o->peak : o->at_reserved_peak) : strcpy(buf, "-");
}

void tlm_job_owners_text(const struct tlm_job *j, FILE *f)
{
	static const char *const cols[] = {TLM_OWNER_CUBLAS, TLM_OWNER_CUDNN, TLM_OWNER_NCCL};
	bool any = false;
	for (size_t i = 0; i < j->nprocs && !any; i++)
		any = !j->procs[i].error && j->procs[i].owners;
	if (!any)
		return;
	fprintf(f, "\nOWNERS AT EACH PROCESS'S RESERVED PEAK (its device; tlm report TRACE splits each one)\n");
	fprintf(f, "  %-16s %3s %10s %10s %10s %10s %10s %10s %10s\n", "process", "dev", "reserved", "pytorch",
		"(its peak)", cols[0], cols[1], cols[2], "others");
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error || p->device < 0)
			continue;
		char nm[64], c[8][32];
		tlm_job_proc_name(p, nm, sizeof nm);
		if (!p->owners) {
			fprintf(f, "  %-16.16s %3d %10s  no owners in this input\n", nm, p->device,
				tlm__human(c[0], sizeof c[0], p->peak_reserved));
			continue;
		}
		const struct tlm_job_owner *pt = find(p->owners, TLM_OWNER_PYTORCH);
		uint64_t rest = 0;
		for (size_t k = 0; k < p->owners->n; k++) {
			const char *name = p->owners->o[k].name;
			bool shown = !strcmp(name, TLM_OWNER_PYTORCH);
			for (size_t x = 0; x < 3; x++)
				shown |= !strcmp(name, cols[x]);
			if (!shown)
				rest += p->owners->o[k].at_reserved_peak;
		}
		fprintf(f, "  %-16.16s %3d %10s %10s %10s %10s %10s %10s %10s\n", nm, p->device,
			tlm__human(c[0], sizeof c[0], p->peak_reserved), cell(c[1], sizeof c[1], pt, false),
			cell(c[2], sizeof c[2], pt, true), cell(c[3], sizeof c[3], find(p->owners, cols[0]), false),
			cell(c[4], sizeof c[4], find(p->owners, cols[1]), false),
			cell(c[5], sizeof c[5], find(p->owners, cols[2]), false), tlm__human(c[6], sizeof c[6], rest));
	}
	fprintf(f, "  (its peak): pytorch's own peak, torch.cuda.max_memory_reserved(); '-': no such owner;\n"
		   "  others: the program's own calls, memory pools and other libraries (tlm report TRACE names them)\n");
}

void tlm_job_owners_json(struct tlm__json *js, const struct tlm_job_proc *p)
{
	tlm__json_key(js, "owners");
	tlm__json_arr(js);
	for (size_t i = 0; p->owners && i < p->owners->n; i++) {
		const struct tlm_job_owner *o = &p->owners->o[i];
		tlm__json_obj(js);
		tlm__json_key(js, "owner");
		tlm__json_str(js, o->name);
		tlm__json_ku(js, "peak_bytes", o->peak);
		tlm__json_ku(js, "bytes_at_reserved_peak", o->at_reserved_peak);
		tlm__json_ku(js, "live_bytes_at_end", o->at_end);
		tlm__json_obj_end(js);
	}
	tlm__json_arr_end(js);
}
