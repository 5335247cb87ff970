/* SPDX-License-Identifier: MIT */
/*
 * build.c - tlm_report_build(): the report's one pass over a trace (pass.h)
 * and the consumers registered on it: definitions (stacks to the stack table,
 * modules to the symbolizer, properties), the owners of the reserved memory,
 * the allocator's requests for the steps' forecast (wi_ops.c), steps, the
 * device's own view, and what the exports and the what-if hint need when
 * asked for. The reader's window is
 * about one chunk, so memory follows the live set and the distinct stacks
 * only (and the logs the exports ask for, and the allocator's requests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/alog.h"
#include "analysis/devmem.h"
#include "render/export.h"
#include "analysis/pass.h"
#include "analysis/owners.h"
#include "render/render.h" /* tlm__cupti_prop */
#include "analysis/steps_internal.h"
#include "analysis/wi_ops.h"

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

/* A PROP record's value kept in dst (n bytes), clipped */
static void keep_prop(char *dst, size_t n, const struct tlm_rec_prop *p)
{
	size_t l = strnlen(p->value, n - 1);
	memcpy(dst, p->value, l);
	dst[l] = 0;
}

/* The definitions the events refer to, and the process's properties. */
static int defs_before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	bool *have_signal = ctx;
	struct tlm_report *rep = p->rep;
	switch (rec->type) {
	case TLM_REC_STACK:
		return tlm__stacks_add(&rep->priv->stacks, rec->u.stack.id, rec->u.stack.ip, rec->u.stack.depth);
	case TLM_REC_MODULE:
		tlm__priv_module(rep->priv, &rec->u.module);
		return 0;
	case TLM_REC_STRING:
		return tlm__priv_string(rep->priv, &rec->u.string);
	case TLM_REC_PYSTACK:
		return tlm__priv_pystack(rep->priv, &rec->u.pystack);
	case TLM_REC_MODULE_UNLOAD:
		tlm__priv_module_unload(rep->priv, rec->u.module_unload);
		return 0;
	case TLM_REC_PROP: /* keys this version does not know are skipped */
		tlm__cupti_prop(&rec->u.prop, rep->cupti_state, sizeof rep->cupti_state, rep->cupti_detail,
				sizeof rep->cupti_detail);
		tlm__job_prop(&rep->job, &rec->u.prop);
		if (!strcmp(rec->u.prop.key, "stacks.native"))
			keep_prop(rep->native_stacks, sizeof rep->native_stacks, &rec->u.prop);
		if (!strcmp(rec->u.prop.key, "signal.during"))
			rep->signal_at_py_exit = !strcmp(rec->u.prop.value, "python-exit");
		if (!strcmp(rec->u.prop.key, "torch.alloc_conf")) {
			rep->alloc_conf_known = true;
			keep_prop(rep->alloc_conf, sizeof rep->alloc_conf, &rec->u.prop);
		}
		return 0;
	case TLM_REC_SIGNAL:
		if (!*have_signal)
			rep->signo = rec->u.signal;
		*have_signal = true;
		return 0;
	default:
		return 0;
	}
}

/* The owners of the reserved memory (owners.h) on the pass: each record
 * before the replay and each event after it, the replay's matches. */
static int owners_before(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	return tlm__owners_record(ctx, &p->rp, rec);
}

static int owners_after(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	return tlm__owners_after(ctx, p->rep, rec);
}

static void owners_alloc(void *ctx, struct tlm__pass *p, struct tlm__live *e, const struct tlm_event *ev)
{
	(void)ev;
	tlm__owners_on_live(ctx, &p->rp, e, p->rp.raw, true);
}

static void owners_release(void *ctx, struct tlm__pass *p, const struct tlm__live *e, const struct tlm_event *ev)
{
	(void)ev;
	tlm__owners_on_live(ctx, &p->rp, e, p->rp.raw, false);
}

static int owners_finish(void *ctx, struct tlm__pass *p)
{
	return tlm__owners_finish(ctx, p->rep, p->rp.start);
}

static void owners_fini(void *ctx)
{
	tlm__owners_free(ctx);
}

static int owners_consumer(struct tlm__pass *p)
{
	struct tlm__owners *o = tlm__owners_new();
	if (!o)
		return -1;
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = o, .before = owners_before, .after = owners_after,
							 .alloc = owners_alloc, .release = owners_release,
							 .finish = owners_finish, .fini = owners_fini});
}

struct tlm_report *tlm_report_build_fd(int fd, const char *path, unsigned needs, char *err, size_t errlen)
{
	struct tlm__pass p;
	struct tlm_report *rep = calloc(1, sizeof *rep);
	if (!rep) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "out of memory while reading the trace");
		return NULL;
	}
	if (tlm__pass_open(&p, rep, path, fd, err, errlen)) {
		free(rep);
		return NULL;
	}
	bool have_signal = false;
	rep->priv = calloc(1, sizeof *rep->priv);
	if (!rep->priv || tlm__priv_init(rep->priv)) {
		free(rep->priv);
		rep->priv = NULL;
		goto nomem;
	}
	if (!(rep->path = strdup(path)) || copy_header(rep, tlm_reader_header(p.rd), &p.rp.start))
		goto nomem;
	/* the consumers, in the order they see each record and finish (the
	 * owners see a record before its definitions land, and finish before
	 * the steps) */
	if (owners_consumer(&p) || tlm__pass_add(&p, &(struct tlm__consumer){.ctx = &have_signal, .before = defs_before}) ||
	    tlm__wi_ops_consumer(&p) || tlm__steps_consumer(&p) || tlm__devmem_consumer(&p) ||
	    ((needs & TLM_REPORT_SEGMAPS) && tlm__segmaps_consumer(&p)) ||
	    ((needs & TLM_REPORT_ACTIVE) && tlm__alog_consumer(&p, TLM__ALOG_ACTIVE)) ||
	    ((needs & TLM_REPORT_SNAPSHOT) && tlm__alog_consumer(&p, TLM__ALOG_SNAPSHOT)) ||
	    ((needs & TLM_REPORT_WHATIF) && tlm__wi_hint_consumer(&p)))
		goto nomem;
	if (tlm__pass_run(&p) || finish_reader(rep, p.rd) || tlm__pass_finish(&p))
		goto nomem;
	tlm__pass_close(&p);
	return rep;

nomem:
	snprintf(err, errlen, "out of memory while reading the trace");
	tlm__pass_close(&p);
	tlm_report_free(rep);
	return NULL;
}

struct tlm_report *tlm_report_build_for(const char *path, unsigned needs, char *err, size_t errlen)
{
	return tlm_report_build_fd(-1, path, needs, err, errlen);
}

struct tlm_report *tlm_report_build(const char *path, char *err, size_t errlen)
{
	return tlm_report_build_for(path, TLM_REPORT_ALL, err, errlen);
}

void tlm_report_free(struct tlm_report *r)
{
	if (!r)
		return;
	if (r->priv) {
		tlm_report_segmaps_free(r->priv->segmaps, r->ndevices);
		for (int i = 0; i < 2; i++)
			if (r->priv->alog[i]) {
				tlm__alog_free(r->priv->alog[i]);
				free(r->priv->alog[i]);
			}
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
	free(r->whatif_hint);
	free(r);
}
