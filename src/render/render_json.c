/* SPDX-License-Identifier: MIT */
/*
 * render_json.c - the report as JSON, schema "tlm-report/1"
 * (docs/report-json.md). Key names are a contract: add keys, never rename.
 */
#include <inttypes.h>
#include <stdio.h>

#include "analysis/devmem.h"
#include "analysis/job_info.h"
#include "encoders/json_out.h"
#include "render/render.h"
#include "render/render_owners.h"
#include "render/render_steps.h"

void tlm__json_stack(struct tlm__json *j, struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(r, stack_id, &f);
	tlm__json_key(j, "stack");
	tlm__json_arr(j);
	for (size_t i = 0; i < n; i++) {
		char ip[24];
		snprintf(ip, sizeof ip, "0x%" PRIx64, f[i].ip);
		tlm__json_obj(j);
		tlm__json_key(j, "kind");
		tlm__json_str(j, f[i].kind == TLM_FRAME_PYTHON ? "python" : "native");
		tlm__json_key(j, "function");
		tlm__json_str(j, f[i].function);
		tlm__json_key(j, "file");
		tlm__json_str(j, f[i].file);
		tlm__json_key(j, "line");
		if (f[i].line > 0)
			tlm__json_i64(j, f[i].line);
		else
			tlm__json_null(j);
		tlm__json_key(j, "module");
		tlm__json_str(j, f[i].module);
		tlm__json_key(j, "ip");
		tlm__json_str(j, ip);
		/* where in its module: what matches across runs when the frame has no
		 * symbols (load addresses differ from run to run) */
		tlm__json_key(j, "offset");
		if (f[i].module) {
			snprintf(ip, sizeof ip, "0x%" PRIx64, f[i].module_offset);
			tlm__json_str(j, ip);
		} else {
			tlm__json_null(j);
		}
		tlm__json_key(j, "inlined");
		tlm__json_bool(j, f[i].inlined);
		tlm__json_key(j, "stale");
		tlm__json_bool(j, f[i].stale);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	if (tlm_report_stack_cut(r, stack_id)) { /* only then: older readers see the same objects */
		tlm__json_key(j, "python_stack_cut");
		tlm__json_bool(j, true);
	}
}

/* "label" (the site's short name, labels.c: each JSON section is one screen)
 * and "stack". */
static void frames(struct tlm__json *j, struct tlm_report *r, uint32_t stack_id, const struct tlm__labels *L,
		   size_t li)
{
	const struct tlm_frame *f;
	size_t n = tlm_report_frames(r, stack_id, &f);
	tlm__json_key(j, "label");
	if (n)
		tlm__json_str(j, tlm__label(L, li));
	else
		tlm__json_null(j);
	tlm__json_stack(j, r, stack_id);
}

static void kd(struct tlm__json *j, const char *k, double v, int decimals)
{
	tlm__json_key(j, k);
	tlm__json_dbl(j, v, decimals);
}

static void process(struct tlm__json *j, const struct tlm_report *r)
{
	tlm__json_key(j, "process");
	tlm__json_obj(j);
	tlm__json_ku(j, "pid", r->pid);
	tlm__json_key(j, "command");
	tlm__json_arr(j);
	for (uint32_t i = 0; i < r->argc; i++)
		tlm__json_str(j, r->argv[i]);
	tlm__json_arr_end(j);
	tlm__json_key(j, "exe");
	tlm__json_str(j, r->exe);
	tlm__json_key(j, "exit");
	tlm__json_str(j, tlm__exit_name(r->exit));
	tlm__json_key(j, "signal");
	if (r->exit == TLM_REPORT_SIGNAL)
		tlm__json_i64(j, r->signo);
	else
		tlm__json_null(j);
	tlm__json_key(j, "truncation");
	tlm__json_str(j, r->truncation);
	tlm__json_ku(j, "lost_events", r->lost_events);
	tlm__job_json(j, r); /* job_info.c: ppid, host, start, rank, origin */
	tlm__json_obj_end(j);

	tlm__json_key(j, "run");
	tlm__json_obj(j);
	tlm__json_ki(j, "first_event_ns", r->run_first_ns);
	tlm__json_ki(j, "end_ns", r->run_end_ns);
	tlm__json_ku(j, "duration_ns", r->have_events ? (uint64_t)r->run_end_ns - (uint64_t)r->run_first_ns : 0);
	tlm__json_ku(j, "events", r->events);
	tlm__json_obj_end(j);

	tlm__json_key(j, "coverage");
	tlm__json_obj(j);
	tlm__json_ku(j, "interposition", r->events - r->cupti_only);
	tlm__json_ku(j, "cupti_only", r->cupti_only);
	tlm__json_key(j, "cupti_only_calls");
	tlm__json_arr(j);
	for (unsigned a = 0; a < TLM_API_COUNT; a++) {
		if (!r->cupti_only_by_api[a])
			continue;
		tlm__json_obj(j);
		tlm__json_key(j, "api");
		tlm__json_str(j, tlm_api_name(a));
		tlm__json_ku(j, "count", r->cupti_only_by_api[a]);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__json_key(j, "cupti");
	if (r->cupti_state[0]) {
		tlm__json_obj(j);
		tlm__json_key(j, "state");
		tlm__json_str(j, r->cupti_state);
		tlm__json_key(j, "detail");
		tlm__json_str(j, r->cupti_detail);
		tlm__json_obj_end(j);
	} else {
		tlm__json_null(j);
	}
	tlm__json_key(j, "native_stacks");
	if (r->native_stacks[0])
		tlm__json_str(j, r->native_stacks);
	else
		tlm__json_null(j);
	tlm__json_obj_end(j);
}

static void counters(struct tlm__json *j, const struct tlm_report *r)
{
	tlm__json_ku(j, "unmatched_frees", r->unmatched_frees);
	tlm__json_ku(j, "inconsistencies", r->inconsistencies);
	tlm__json_ku(j, "failed_allocations", r->failed_allocations);
	tlm__json_ku(j, "failed_frees", r->failed_frees);
	tlm__json_ku(j, "ooms_total", r->ooms_total);
	tlm__json_ku(j, "unknown_events", r->unknown_events);
	tlm__json_ku(j, "churn_untracked_frees", r->churn_untracked);
	tlm__json_ku(j, "probe_failures", r->probe_failures);
	tlm__json_key(j, "pool_events");
	tlm__json_obj(j);
	tlm__json_ku(j, "create", r->pool_creates);
	tlm__json_ku(j, "destroy", r->pool_destroys);
	tlm__json_ku(j, "trim", r->pool_trims);
	tlm__json_obj_end(j);
}

/* a fraction, or null when it cannot be known (blocks unknown without a tap) */
static void kd_known(struct tlm__json *j, const char *k, bool known, double v)
{
	tlm__json_key(j, k);
	if (known)
		tlm__json_dbl(j, v, 4);
	else
		tlm__json_null(j);
}

static void devices(struct tlm__json *j, const struct tlm_report *r)
{
	tlm__json_key(j, "devices");
	tlm__json_arr(j);
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		tlm__json_obj(j);
		tlm__json_ki(j, "device", d->device);
		tlm__json_key(j, "kind");
		tlm__json_str(j, tlm__mkind_name(d->kind));
		tlm__json_ku(j, "peak_reserved_bytes", d->peak_reserved);
		tlm__json_ki(j, "peak_reserved_time_ns", d->peak_reserved_ns);
		tlm__json_ku(j, "peak_allocated_bytes", d->peak_allocated);
		tlm__json_ki(j, "peak_allocated_time_ns", d->peak_allocated_ns);
		tlm__json_ku(j, "reserved_bytes_at_end", d->reserved_at_end);
		tlm__json_ku(j, "live_bytes_at_end", d->live_bytes_at_end);
		tlm__json_ku(j, "live_allocations_at_end", d->live_allocs_at_end);
		kd(j, "fragmentation_at_peak", d->frag_at_peak, 4);
		kd_known(j, "external_fragmentation_at_peak", d->ext_known, d->ext_frag_at_peak);
		tlm__json_ku(j, "reserved_at_peak_allocated_bytes", d->reserved_at_peak_allocated);
		tlm__json_ku(j, "allocated_at_peak_reserved_bytes", d->allocated_at_peak_reserved);
		kd(j, "fragmentation_at_reserved_peak", d->frag_at_reserved_peak, 4);
		tlm__json_ku(j, "allocations", d->allocs);
		tlm__json_ku(j, "frees", d->frees);
		tlm__json_key(j, "allocator_reported");
		if (d->allocator_totals) {
			tlm__json_obj(j);
			tlm__json_ku(j, "peak_allocated_bytes", d->allocator_peak_allocated);
			tlm__json_ku(j, "peak_reserved_bytes", d->allocator_peak_reserved);
			tlm__json_obj_end(j);
		} else {
			tlm__json_null(j);
		}
		tlm__owners_json(j, d);
		tlm__steps_json_forecast(j, r, d->device, d->kind);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
}

enum site_kind { LIVE, LEAK, CHURN };

static void sites(struct tlm__json *j, struct tlm_report *r, const char *key, const struct tlm_report_site *s,
		  size_t n, enum site_kind k)
{
	struct tlm__labels L;
	tlm__labels_sites(&L, r, s, n, TLM__LABEL_SEP);
	tlm__json_key(j, key);
	tlm__json_arr(j);
	for (size_t i = 0; i < n; i++) {
		tlm__json_obj(j);
		tlm__json_ki(j, "device", s[i].device);
		tlm__json_ku(j, "bytes", k == CHURN ? s[i].size : s[i].bytes);
		if (k == CHURN)
			tlm__json_ku(j, "total_bytes", s[i].bytes);
		tlm__json_ku(j, "count", s[i].count);
		if (k == LEAK) {
			kd(j, "growth_bytes_per_second", s[i].rate, 3);
			tlm__steps_json_leak(j, r, &s[i]);
		}
		if (k == CHURN)
			kd(j, "per_second", s[i].rate, 3);
		tlm__json_ki(j, "first_ns", s[i].first_ns);
		tlm__json_ki(j, "last_ns", s[i].last_ns);
		frames(j, r, s[i].stack_id, &L, i);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__labels_free(&L);
}

static void at_peak(struct tlm__json *j, struct tlm_report *r)
{
	struct tlm__labels L;
	tlm__labels_peak(&L, r, r->at_peak, r->nat_peak, TLM__LABEL_SEP);
	tlm__json_key(j, "at_peak");
	tlm__json_arr(j);
	for (size_t i = 0; i < r->nat_peak; i++) {
		const struct tlm_report_peak_site *s = &r->at_peak[i];
		tlm__json_obj(j);
		tlm__json_ki(j, "device", s->device);
		tlm__json_key(j, "kind");
		tlm__json_str(j, tlm__mkind_name(s->kind));
		tlm__json_ku(j, "bytes", s->bytes);
		tlm__json_ku(j, "count", s->count);
		tlm__json_ku(j, "transient_bytes", s->bytes - s->persistent_bytes);
		tlm__json_ku(j, "transient_count", s->count - s->persistent_count);
		tlm__json_ku(j, "persistent_bytes", s->persistent_bytes);
		tlm__json_ku(j, "persistent_count", s->persistent_count);
		frames(j, r, s->stack_id, &L, i);
		char key[512];
		tlm_report_site_key(r, s->stack_id, key, sizeof key);
		tlm__json_key(j, "site"); /* matches across the processes of a job */
		tlm__json_str(j, key);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__labels_free(&L);
}

static void ooms(struct tlm__json *j, struct tlm_report *r)
{
	struct tlm__labels L;
	tlm__labels_ooms(&L, r);
	tlm__json_key(j, "ooms");
	tlm__json_arr(j);
	for (size_t i = 0; i < r->nooms; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		tlm__json_obj(j);
		tlm__json_ki(j, "device", o->device);
		tlm__json_key(j, "kind");
		tlm__json_str(j, tlm__mkind_name(o->kind));
		tlm__json_ki(j, "time_ns", o->time_ns);
		tlm__json_ku(j, "requested_bytes", o->requested);
		tlm__json_ku(j, "reserved_free_bytes", o->reserved_free);
		tlm__json_ku(j, "largest_free_bytes", o->largest_free);
		tlm__json_ku(j, "device_free_bytes", o->device_free);
		tlm__json_ku(j, "reserved_bytes", o->reserved);
		tlm__json_ku(j, "allocated_bytes", o->allocated);
		kd(j, "fragmentation", o->frag, 4);
		kd_known(j, "external_fragmentation", o->ext_known, o->ext_frag);
		tlm__json_key(j, "verdict");
		tlm__json_str(j, tlm__verdict_name(o->verdict));
		tlm__json_key(j, "outcome");
		tlm__json_str(j, tlm__outcome_name(o->outcome));
		tlm__json_key(j, "retry");
		if (o->outcome == TLM_OOM_RECOVERED) {
			tlm__json_obj(j);
			tlm__json_ku(j, "freed_bytes", o->retry_freed);
			tlm__json_ku(j, "frees", o->retry_frees);
			tlm__json_ki(j, "ns", o->retry_ns);
			tlm__json_obj_end(j);
		} else {
			tlm__json_null(j);
		}
		tlm__json_key(j, "source");
		tlm__json_str(j, o->allocator ? "allocator" : "driver");
		tlm__json_ku(j, "driver_failures", o->driver_failures);
		tlm__json_key(j, "driver_request_bytes");
		if (o->driver_request)
			tlm__json_u64(j, o->driver_request);
		else
			tlm__json_null(j);
		tlm__owners_json_oom(j, r, o);
		tlm__devmem_json_oom(j, r, i); /* only with a sample of the device */
		frames(j, r, o->stack_id, &L, i);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__labels_free(&L);
}

int tlm_report_json(struct tlm_report *r, FILE *f)
{
	struct tlm__json j;
	tlm__json_init(&j, f);
	tlm__json_obj(&j);
	tlm__json_key(&j, "schema");
	tlm__json_str(&j, TLM_REPORT_SCHEMA);
	tlm__json_key(&j, "trace");
	tlm__json_str(&j, r->path);
	process(&j, r);
	counters(&j, r);
	devices(&j, r);
	tlm__devmem_json(&j, r); /* only for traces with device samples */
	at_peak(&j, r);
	sites(&j, r, "live_at_end", r->live, r->nlive, LIVE);
	sites(&j, r, "leaks", r->leaks, r->nleaks, LEAK);
	/* Freed by Python's cyclic GC (reference cycles), by allocation stack */
	sites(&j, r, "gc_freed", r->gc_freed, r->ngc_freed, LIVE);
	ooms(&j, r);
	sites(&j, r, "churn", r->churn, r->nchurn, CHURN);
	tlm__steps_json(&j, r);
	tlm__json_key(&j, "integrity_errors");
	tlm__json_arr(&j);
	for (size_t i = 0; i < r->nerrors; i++) {
		tlm__json_obj(&j);
		tlm__json_ku(&j, "offset", r->errors[i].offset);
		tlm__json_key(&j, "what");
		tlm__json_str(&j, r->errors[i].what);
		tlm__json_obj_end(&j);
	}
	tlm__json_arr_end(&j);
	tlm__json_obj_end(&j);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}
