/* SPDX-License-Identifier: MIT */
/*
 * job_diff_json.c - `tlm diff` of two jobs as JSON, schema tlm-job-diff/1
 * (docs/diff.md, "Jobs"). Keys are a contract: add keys, never rename.
 */
#include <string.h>

#include "job_diff.h"
#include "encoders/json_out.h"

static void k_str(struct tlm__json *js, const char *key, const char *v)
{
	tlm__json_key(js, key);
	tlm__json_str(js, v);
}

static void k_bool(struct tlm__json *js, const char *key, bool v)
{
	tlm__json_key(js, key);
	tlm__json_bool(js, v);
}

static void change(struct tlm__json *js, const char *key, const struct tlm_job_proc *b,
		   const struct tlm_job_proc *a, size_t off)
{
	uint64_t vb = b ? *(const uint64_t *)((const char *)b + off) : 0;
	uint64_t va = a ? *(const uint64_t *)((const char *)a + off) : 0;
	tlm__json_key(js, key);
	tlm__json_obj(js);
	tlm__json_key(js, "before");
	if (b)
		tlm__json_u64(js, vb);
	else
		tlm__json_null(js);
	tlm__json_key(js, "after");
	if (a)
		tlm__json_u64(js, va);
	else
		tlm__json_null(js);
	tlm__json_ki(js, "delta", tlm_job_sub(va, vb));
	tlm__json_obj_end(js);
}

static void side_proc(struct tlm__json *js, const char *key, const struct tlm_job_proc *p)
{
	tlm__json_key(js, key);
	if (!p) {
		tlm__json_null(js);
		return;
	}
	tlm__json_obj(js);
	k_str(js, "source", p->source);
	tlm__json_ku(js, "pid", p->pid);
	k_str(js, "host", p->host);
	tlm__json_key(js, "device");
	if (p->device >= 0)
		tlm__json_i64(js, p->device);
	else
		tlm__json_null(js);
	tlm__json_ku(js, "integrity_errors", p->integrity_errors);
	tlm__json_obj_end(js);
}

static void proc_gate(struct tlm__json *js, const struct tlm_jdiff *d, const struct tlm_jdiff_proc *p)
{
	tlm__json_key(js, "gate");
	if (!d->gate && !d->peak_gate) {
		tlm__json_null(js);
		return;
	}
	tlm__json_obj(js);
	k_str(js, "compared", p->full ? "sites" : "summary");
	k_str(js, "error", p->error);
	tlm__json_ki(js, "leak_growth_bytes", p->leak_growth);
	tlm__json_ki(js, "per_step_growth_bytes", p->per_step_growth);
	tlm__json_ki(js, "live_growth_at_leak_sites_bytes", p->live_leak_growth);
	k_bool(js, "failed", p->failed);
	tlm__json_key(js, "failed_on");
	tlm__json_arr(js);
	if (p->failed_leaks)
		tlm__json_str(js, "leaks");
	if (p->failed_per_step)
		tlm__json_str(js, "per_step");
	if (p->failed_live)
		tlm__json_str(js, "live_at_end");
	tlm__json_arr_end(js);
	k_bool(js, "peak_failed", p->peak_failed);
	tlm__json_key(js, "grown_peak_devices");
	tlm__json_arr(js);
	for (size_t k = 0; k < p->npeakdev; k++) {
		const struct tlm_jdiff_peakdev *v = &p->peakdev[k];
		tlm__json_obj(js);
		tlm__json_ki(js, "device", v->device);
		k_str(js, "kind", v->kind);
		tlm__json_ku(js, "before", v->before);
		tlm__json_ku(js, "after", v->after);
		tlm__json_ki(js, "delta", tlm_job_sub(v->after, v->before));
		tlm__json_obj_end(js);
	}
	tlm__json_arr_end(js);
	tlm__json_obj_end(js);
}

static void proc(struct tlm__json *js, const struct tlm_jdiff *d, const struct tlm_jdiff_proc *p)
{
	tlm__json_obj(js);
	k_str(js, "name", p->name);
	tlm__json_key(js, "rank");
	if (p->rank >= 0)
		tlm__json_i64(js, p->rank);
	else
		tlm__json_null(js);
	k_str(js, "role", p->role);
	tlm__json_ku(js, "ordinal", p->ordinal);
	k_str(js, "status", p->base && p->new_ ? "both" : p->base ? "base" : "new");
	k_bool(js, "changed", p->changed);
	side_proc(js, "base", p->base);
	side_proc(js, "new", p->new_);
	change(js, "peak_reserved_bytes", p->base, p->new_, offsetof(struct tlm_job_proc, peak_reserved));
	change(js, "peak_allocated_bytes", p->base, p->new_, offsetof(struct tlm_job_proc, peak_allocated));
	change(js, "leak_bytes", p->base, p->new_, offsetof(struct tlm_job_proc, leak_bytes));
	change(js, "leak_sites", p->base, p->new_, offsetof(struct tlm_job_proc, leak_sites));
	change(js, "ooms", p->base, p->new_, offsetof(struct tlm_job_proc, ooms));
	bool b = p->base && p->base->ooms, a = p->new_ && p->new_->ooms;
	k_str(js, "oom", b && a ? "both" : a ? "new" : b ? "gone" : "none");
	proc_gate(js, d, p);
	tlm__json_obj_end(js);
}

static void ref(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, size_t i)
{
	tlm__json_key(js, key);
	tlm__json_obj(js);
	tlm__json_ku(js, "index", i);
	k_str(js, "name", d->procs[i].name);
	tlm__json_obj_end(js);
}

static void side_spread(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, const struct tlm_job *j,
			const size_t *map, const struct tlm_job_spread *s)
{
	tlm__json_key(js, key);
	if (!j->ncompared) {
		tlm__json_null(js);
		return;
	}
	tlm__json_obj(js);
	tlm__json_ku(js, "min_bytes", s->min);
	ref(js, d, "min_process", map[s->min_proc]);
	tlm__json_ku(js, "max_bytes", s->max);
	ref(js, d, "max_process", map[s->max_proc]);
	tlm__json_ku(js, "spread_bytes", s->max - s->min);
	tlm__json_obj_end(js);
}

static void spread_pair(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, size_t off)
{
	const struct tlm_job_spread *b = (const void *)((const char *)d->base + off);
	const struct tlm_job_spread *n = (const void *)((const char *)d->new_ + off);
	bool hb = d->base->ncompared, hn = d->new_->ncompared;
	tlm__json_key(js, key);
	tlm__json_obj(js);
	side_spread(js, d, "base", d->base, d->base_map, b);
	side_spread(js, d, "new", d->new_, d->new_map, n);
	tlm__json_ki(js, "delta_max_bytes", tlm_job_sub(hn ? n->max : 0, hb ? b->max : 0));
	tlm__json_ki(js, "delta_min_bytes", tlm_job_sub(hn ? n->min : 0, hb ? b->min : 0));
	tlm__json_ki(js, "delta_spread_bytes", tlm_job_sub(hn ? n->max - n->min : 0, hb ? b->max - b->min : 0));
	tlm__json_obj_end(js);
}

static void site_side(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, const struct tlm_jdiff_spread *s)
{
	tlm__json_key(js, key);
	if (!s->any) {
		tlm__json_null(js);
		return;
	}
	tlm__json_obj(js);
	tlm__json_ku(js, "spread_bytes", s->max - s->min);
	tlm__json_ku(js, "min_bytes", s->min);
	ref(js, d, "min_process", s->min_proc);
	tlm__json_ku(js, "max_bytes", s->max);
	ref(js, d, "max_process", s->max_proc);
	tlm__json_obj_end(js);
}

static void side_ooms(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, const struct tlm_job *j,
		      const size_t *map)
{
	tlm__json_key(js, key);
	tlm__json_obj(js);
	tlm__json_ku(js, "processes", j->noom_procs);
	tlm__json_key(js, "first");
	if (j->noom_procs) {
		const struct tlm_job_proc *p = &j->procs[j->oom_order[0]];
		tlm__json_obj(js);
		ref(js, d, "process", map[j->oom_order[0]]);
		tlm__json_ki(js, "job_time_ns",
			     (int64_t)(p->start_realtime_ns + (uint64_t)p->first_oom_ns - j->start_realtime_ns));
		tlm__json_ku(js, "requested_bytes", p->first_oom_requested);
		tlm__json_ki(js, "device", p->first_oom_device);
		tlm__json_obj_end(js);
	} else {
		tlm__json_null(js);
	}
	tlm__json_obj_end(js);
}

static void index_list(struct tlm__json *js, const struct tlm_jdiff *d, const char *key, int what)
{
	tlm__json_key(js, key);
	tlm__json_arr(js);
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct tlm_jdiff_proc *p = &d->procs[i];
		bool b = p->base && p->base->ooms, a = p->new_ && p->new_->ooms;
		if ((what == 0 && a && !b) || (what == 1 && b && !a) || (what == 2 && p->failed) ||
		    (what == 3 && p->peak_failed))
			tlm__json_u64(js, i);
	}
	tlm__json_arr_end(js);
}

static void side_head(struct tlm__json *js, const char *key, const char *inputs, const struct tlm_job *j)
{
	tlm__json_key(js, key);
	tlm__json_obj(js);
	k_str(js, "inputs", inputs);
	tlm__json_ku(js, "files", j->ninputs);
	tlm__json_ku(js, "processes", j->nprocs);
	tlm__json_ku(js, "ranks", j->nranks);
	tlm__json_ku(js, "hosts", j->nhosts);
	k_str(js, "across", j->ncompared ? (j->compared_ranks ? "ranks" : "processes") : NULL);
	tlm__json_ku(js, "compared", j->ncompared);
	size_t damaged = 0;
	for (size_t i = 0; i < j->nprocs; i++)
		damaged += j->procs[i].integrity_errors != 0;
	tlm__json_ku(js, "integrity_errors", damaged);
	tlm__json_obj_end(js);
}

static void k_limit(struct tlm__json *js, const char *key, bool on, uint64_t v)
{
	tlm__json_key(js, key);
	if (on)
		tlm__json_u64(js, v);
	else
		tlm__json_null(js);
}

int tlm_jdiff_json(const struct tlm_jdiff *d, const char *base, const char *new_, FILE *f)
{
	struct tlm__json js;
	tlm__json_init(&js, f);
	tlm__json_obj(&js);
	k_str(&js, "schema", TLM_JOB_DIFF_SCHEMA);
	side_head(&js, "base", base, d->base);
	side_head(&js, "new", new_, d->new_);
	tlm__json_ku(&js, "matched", d->matched);
	tlm__json_ku(&js, "unchanged", d->unchanged);
	tlm__json_ku(&js, "only_in_base", d->only_base);
	tlm__json_ku(&js, "only_in_new", d->only_new);
	tlm__json_key(&js, "processes");
	tlm__json_arr(&js);
	for (size_t i = 0; i < d->nprocs; i++)
		proc(&js, d, &d->procs[i]);
	tlm__json_arr_end(&js);

	tlm__json_key(&js, "comparison");
	tlm__json_obj(&js);
	spread_pair(&js, d, "peak_reserved", offsetof(struct tlm_job, peak_reserved));
	spread_pair(&js, d, "peak_allocated", offsetof(struct tlm_job, peak_allocated));
	tlm__json_key(&js, "sites");
	tlm__json_arr(&js);
	for (size_t i = 0; i < d->nsites; i++) {
		const struct tlm_jdiff_site *s = &d->sites[i];
		tlm__json_obj(&js);
		k_str(&js, "site", s->key);
		site_side(&js, d, "base", &s->base);
		site_side(&js, d, "new", &s->new_);
		tlm__json_ki(&js, "delta_spread_bytes", s->delta);
		tlm__json_obj_end(&js);
	}
	tlm__json_arr_end(&js);
	tlm__json_obj_end(&js);

	tlm__json_key(&js, "ooms");
	tlm__json_obj(&js);
	side_ooms(&js, d, "base", d->base, d->base_map);
	side_ooms(&js, d, "new", d->new_, d->new_map);
	index_list(&js, d, "new_in", 0);
	index_list(&js, d, "gone_in", 1);
	tlm__json_obj_end(&js);

	tlm__json_key(&js, "gate");
	tlm__json_obj(&js);
	k_limit(&js, "fail_on_growth", d->gate, d->gate_bytes);
	k_limit(&js, "fail_on_peak_growth", d->peak_gate, d->peak_gate_bytes);
	k_bool(&js, "failed", d->failed);
	index_list(&js, d, "failed_processes", 2);
	index_list(&js, d, "peak_failed_processes", 3);
	tlm__json_ki(&js, "job_leak_growth_bytes", d->job_leak_growth);
	tlm__json_ki(&js, "job_per_step_growth_bytes", d->job_per_step_growth);
	tlm__json_ki(&js, "job_live_growth_at_leak_sites_bytes", d->job_live_growth);
	k_bool(&js, "job_failed", d->job_failed);
	tlm__json_ki(&js, "job_peak_growth_bytes", d->job_peak_growth);
	k_bool(&js, "job_peak_failed", d->job_peak_failed);
	tlm__json_ku(&js, "not_compared", d->nerrors);
	tlm__json_obj_end(&js);
	tlm__json_obj_end(&js);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
