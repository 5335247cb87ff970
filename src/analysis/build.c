/* SPDX-License-Identifier: MIT */
/*
 * build.c - tlm_report_build(): one streaming pass over a trace. Events go
 * to the replay, stacks to the stack table, modules to the symbolizer; the
 * reader's window is about one chunk, so memory follows the live set and the
 * distinct stacks only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/devmem.h"
#include "analysis/internal.h"
#include "analysis/owners.h"
#include "render/render.h" /* tlm__cupti_prop */
#include "analysis/steps_internal.h"

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int copy_header(struct tlm_report *rep, const struct tlm_trace_header *h, uint64_t *start)
{
	rep->pid = h->pid;
	rep->job.ppid = h->ppid;
	snprintf(rep->job.host, sizeof rep->job.host, "%s", h->host);
	rep->job.start_realtime_ns = h->start_realtime_ns;
	rep->job.rank = rep->job.local_rank = rep->job.world_size = rep->job.exit_status = -1;
	rep->exe = dup_or_empty(h->exe);
	rep->argv = calloc(h->argc + 1, sizeof *rep->argv);
	if (!rep->exe || !rep->argv)
		return -1;
	for (uint32_t i = 0; i < h->argc; i++) {
		rep->argv[i] = dup_or_empty(h->argv[i]);
		if (!rep->argv[i])
			return -1;
		rep->argc = i + 1;
	}
	*start = h->start_monotonic_ns;
	return 0;
}

static int finish_reader(struct tlm_report *rep, struct tlm_reader *rd)
{
	switch (tlm_reader_state(rd)) {
	case TLM_TRACE_CLEAN: rep->exit = TLM_REPORT_CLEAN; break;
	case TLM_TRACE_SIGNAL: rep->exit = TLM_REPORT_SIGNAL; break;
	default: rep->exit = TLM_REPORT_TRUNCATED; break;
	}
	const char *how = tlm_reader_end_how(rd);
	snprintf(rep->end_how, sizeof rep->end_how, "%s", how ? how : "");
	const char *t = tlm_reader_truncation(rd, NULL);
	if (t && !(rep->truncation = strdup(t)))
		return -1;
	rep->lost_events = tlm_reader_lost(rd);
	const struct tlm_integrity_error *errs;
	size_t n = tlm_reader_errors(rd, &errs);
	if (n) {
		rep->errors = malloc(n * sizeof *errs);
		if (!rep->errors)
			return -1;
		memcpy(rep->errors, errs, n * sizeof *errs);
		rep->nerrors = n;
	}
	return 0;
}

struct tlm_reader *tlm__reopen(const struct tlm_report *r, char *err, size_t errlen)
{
	if (r->priv && r->priv->stream) {
		snprintf(err, errlen, "the trace came through a pipe, which can be read only once, and this output "
			 "reads it again: give it as a file");
		return NULL;
	}
	return tlm_reader_open(r->path, err, errlen);
}

struct tlm_report *tlm_report_build(const char *path, char *err, size_t errlen)
{
	struct tlm_reader *rd = tlm_reader_open(path, err, errlen);
	if (!rd)
		return NULL;
	struct tlm_report *rep = calloc(1, sizeof *rep);
	struct tlm_record *rec = malloc(sizeof *rec); /* ~5 KiB: off the stack */
	struct tlm__replay rp;
	struct tlm__steps_rec sr;
	struct tlm__devmem_col *dm = tlm__devmem_new();
	struct tlm__owners *own = tlm__owners_new();
	bool rp_ok = false, sr_ok = false;
	if (!rep || !rec || !dm || !own)
		goto nomem;
	rep->priv = calloc(1, sizeof *rep->priv);
	if (!rep->priv || tlm__priv_init(rep->priv)) {
		free(rep->priv);
		rep->priv = NULL;
		goto nomem;
	}
	rep->priv->stream = tlm_reader_is_stream(rd);
	if (!(rep->path = strdup(path)) || tlm__replay_init(&rp, rep))
		goto nomem;
	rp_ok = true;
	rp.on_live = tlm__owners_on_live;
	rp.live_ctx = own;
	if (tlm__steps_init(&sr))
		goto nomem;
	sr_ok = true;
	if (copy_header(rep, tlm_reader_header(rd), &rp.start))
		goto nomem;

	bool have_signal = false;
	while (tlm_reader_next(rd, rec) == 1) {
		if (tlm__owners_record(own, &rp, rec))
			goto nomem;
		switch (rec->type) {
		case TLM_REC_EVENT:
			tlm__replay_event(&rp, &rec->u.ev);
			tlm__steps_event(&sr, &rp, &rec->u.ev);
			tlm__devmem_event(dm, rec->seq);
			break;
		case TLM_REC_DEVMEM:
			if (tlm__devmem_sample(dm, &rp, rec->seq, &rec->u.devmem))
				goto nomem;
			break;
		case TLM_REC_DEVPROCS:
			if (tlm__devmem_procs(dm, &rec->u.devprocs))
				goto nomem;
			break;
		case TLM_REC_STACK:
			if (tlm__stacks_add(&rep->priv->stacks, rec->u.stack.id, rec->u.stack.ip, rec->u.stack.depth))
				goto nomem;
			break;
		case TLM_REC_MODULE:
			tlm__priv_module(rep->priv, &rec->u.module);
			break;
		case TLM_REC_STRING:
			if (tlm__priv_string(rep->priv, &rec->u.string))
				goto nomem;
			break;
		case TLM_REC_PYSTACK:
			if (tlm__priv_pystack(rep->priv, &rec->u.pystack))
				goto nomem;
			break;
		case TLM_REC_MODULE_UNLOAD:
			tlm__priv_module_unload(rep->priv, rec->u.module_unload);
			break;
		case TLM_REC_PROP: /* keys this version does not know are skipped */
			tlm__cupti_prop(&rec->u.prop, rep->cupti_state, sizeof rep->cupti_state, rep->cupti_detail,
					sizeof rep->cupti_detail);
			tlm__job_prop(&rep->job, &rec->u.prop);
			if (!strcmp(rec->u.prop.key, "torch.alloc_conf")) {
				rep->alloc_conf_known = true;
				size_t l = strnlen(rec->u.prop.value, sizeof rep->alloc_conf - 1);
				memcpy(rep->alloc_conf, rec->u.prop.value, l);
				rep->alloc_conf[l] = 0;
			}
			break;
		case TLM_REC_SIGNAL:
			if (!have_signal)
				rep->signo = rec->u.signal;
			have_signal = true;
			break;
		case TLM_REC_END:
			tlm__replay_end(&rp, rec->u.end.end_monotonic_ns);
			break;
		default:
			break;
		}
		if (rp.oom_error || tlm__owners_after(own, rep, rec))
			goto nomem;
	}
	if (finish_reader(rep, rd) || tlm__replay_finish(&rp))
		goto nomem;
	tlm__outcome_finish(rep, &rp);
	if (tlm__owners_finish(own, rep, rp.start) || tlm__steps_finish(&sr, &rp, rep))
		goto nomem;
	struct tlm__devmem_col *dmc = dm;
	dm = NULL; /* finish frees it, whatever happens */
	if (tlm__devmem_finish(dmc, rep, rp.start))
		goto nomem;
	tlm__steps_fini(&sr);
	tlm__replay_fini(&rp);
	tlm__owners_free(own);
	tlm_reader_close(rd);
	free(rec);
	return rep;

nomem:
	snprintf(err, errlen, "out of memory while reading the trace");
	if (rp_ok)
		tlm__replay_fini(&rp);
	if (sr_ok)
		tlm__steps_fini(&sr);
	tlm__devmem_discard(dm);
	tlm__owners_free(own);
	tlm_report_free(rep);
	free(rec);
	tlm_reader_close(rd);
	return NULL;
}

void tlm_report_free(struct tlm_report *r)
{
	if (!r)
		return;
	if (r->priv) {
		tlm__priv_fini(r->priv);
		free(r->priv);
	}
	for (uint32_t i = 0; i < r->argc; i++)
		free(r->argv[i]);
	free(r->argv);
	free(r->exe);
	free(r->path);
	free(r->truncation);
	for (size_t i = 0; i < r->ndevices; i++) {
		free(r->devices[i].points);
		free(r->devices[i].owners);
	}
	free(r->devices);
	for (size_t i = 0; i < r->nooms; i++)
		free(r->ooms[i].owner_bytes);
	free(r->live);
	free(r->leaks);
	free(r->gc_freed);
	free(r->at_peak);
	free(r->churn);
	free(r->ooms);
	free(r->errors);
	tlm__steps_free(r->steps);
	tlm__devmem_free(r->devmem);
	free(r);
}
