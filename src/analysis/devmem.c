/* SPDX-License-Identifier: MIT */
/*
 * devmem.c - collects the DEVMEM/DEVPROCS samples a report shows (devmem.h)
 * and reconciles each with the replay's state at its moment.
 *
 * The placement rule (trace.h): a START, PEAK or OOM sample comes directly
 * after the event it was taken with, so when it is read the replay has just
 * accounted that event: tracked is the device's reserved now, or, with
 * F_BEFORE, before that event changed it (acct.c keeps that value). A sample
 * whose record does not follow its event (a damaged chunk lost the event) is
 * dropped and counted: its state is not known.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/devmem.h"
#include "analysis/internal.h"
#include "analysis/pass.h"
#include "common/grow.h"

#define TLM__DEVMEM_OOMS (4 * TLM_REPORT_MAX_OOMS) /* OOM samples kept (probes and folds drop some) */
#define TLM__DEVMEM_DEVS 1024 /* devices kept: a hostile trace cannot make the lookups quadratic */

struct tlm__devmem_col {
	struct tlm_report_devmem m;
	size_t oom_cap;
	bool have_ev;
	uint64_t last_seq;
};

struct tlm__devmem_col *tlm__devmem_new(void)
{
	return calloc(1, sizeof(struct tlm__devmem_col));
}

static void view_fini(struct tlm_report_devview *v)
{
	free(v->procs);
	v->procs = NULL;
	v->nprocs = 0;
}

void tlm__devmem_free(struct tlm_report_devmem *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->ndevs; i++) {
		view_fini(&m->devs[i].start);
		view_fini(&m->devs[i].peak);
	}
	for (size_t i = 0; i < m->nooms; i++)
		view_fini(&m->ooms[i]);
	free(m->devs);
	free(m->ooms);
	free(m->oom_view);
	free(m);
}

void tlm__devmem_discard(struct tlm__devmem_col *c)
{
	if (!c)
		return;
	struct tlm_report_devmem *m = malloc(sizeof *m);
	if (m) {
		*m = c->m;
		tlm__devmem_free(m);
	}
	free(c);
}

void tlm__devmem_event(struct tlm__devmem_col *c, uint64_t seq)
{
	c->have_ev = true;
	c->last_seq = seq;
}

static struct tlm_report_devmem_dev *dev_of(struct tlm_report_devmem *m, int device, bool add)
{
	for (size_t i = 0; i < m->ndevs; i++)
		if (m->devs[i].device == device)
			return &m->devs[i];
	if (!add || m->ndevs >= TLM__DEVMEM_DEVS)
		return NULL;
	struct tlm_report_devmem_dev *n = realloc(m->devs, (m->ndevs + 1) * sizeof *n);
	if (!n)
		return NULL;
	m->devs = n;
	size_t k = m->ndevs++;
	while (k > 0 && n[k - 1].device > device) { /* kept by device */
		n[k] = n[k - 1];
		k--;
	}
	memset(&n[k], 0, sizeof n[k]);
	n[k].device = device;
	return &n[k];
}

/* The replay's reserved device memory on device, after (or before) the
 * event with ordinal ev. */
static uint64_t tracked_of(const struct tlm__replay *rp, int device, bool before, uint64_t ev)
{
	for (size_t i = 0; i < rp->accts.n; i++) {
		const struct tlm__acct *a = &rp->accts.a[i];
		if (a->device != device || a->mkind != TLM_MEM_DEVICE)
			continue;
		return before && a->prev_ev == ev ? a->prev_reserved : a->reserved;
	}
	return 0;
}

int tlm__devmem_sample(struct tlm__devmem_col *c, const struct tlm__replay *rp, uint64_t seq,
		       const struct tlm_rec_devmem *d)
{
	struct tlm_report_devmem *m = &c->m;
	m->samples++;
	bool exit = d->why == TLM_DEVMEM_EXIT;
	if (!exit && (!c->have_ev || c->last_seq + 1 != seq || d->why > TLM_DEVMEM_EXIT)) {
		m->unplaced++;
		return 0;
	}
	struct tlm_report_devview v = {
		.sample = d->sample, .device = d->device, .why = d->why,
		.before = (d->flags & TLM_DEVMEM_F_BEFORE) && !exit,
		.time_ns = (int64_t)d->time_ns, /* absolute until finish */
		.event = exit ? 0 : rp->rep->events,
		.total = d->total, .free = d->free,
		.used = d->total > d->free ? d->total - d->free : 0,
	};
	v.tracked = tracked_of(rp, d->device, v.before, v.event);
	struct tlm_report_devmem_dev *dv = dev_of(m, d->device, true);
	if (!dv && m->ndevs >= TLM__DEVMEM_DEVS) {
		m->unplaced++;
		return 0;
	}
	if (!dv)
		return -1;
	if (d->why == TLM_DEVMEM_START && !dv->have_start) {
		dv->start = v;
		dv->have_start = true;
	}
	/* any sample may describe the highest state: a run with one allocation
	 * has its START sample only */
	if (!dv->have_peak || v.tracked > dv->peak.tracked) {
		view_fini(&dv->peak);
		dv->peak = v;
		dv->have_peak = true;
	}
	if (d->why == TLM_DEVMEM_OOM) {
		if (m->nooms >= TLM__DEVMEM_OOMS)
			return 0;
		if (m->nooms == c->oom_cap && tlm__grow(&m->ooms, &c->oom_cap, m->nooms + 1, sizeof *m->ooms, 16))
			return -1;

		m->ooms[m->nooms++] = v;
	}
	return 0;
}

static int attach(struct tlm_report_devview *v, const struct tlm_rec_devprocs *p)
{
	if (v->sample != p->sample || v->device != p->device || v->nvml != TLM_DM_NVML_NOT_RECORDED)
		return 0;
	v->nvml_status = p->status;
	v->nvml_lag_ns = (int64_t)(p->time_ns - (uint64_t)v->time_ns); /* both absolute here */
	v->nvml = p->status == 0 ? TLM_DM_NVML_OK : p->status == TLM_DEVPROCS_NO_NVML ? TLM_DM_NVML_ABSENT
										      : TLM_DM_NVML_ERROR;
	uint32_t n = p->status == 0 && p->n <= TLM_MAX_DEVPROCS ? p->n : 0;
	if (!n)
		return 0;
	if (!(v->procs = malloc(n * sizeof *v->procs)))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		v->procs[i] = (struct tlm_report_devproc){.pid = p->p[i].pid, .used = p->p[i].used};
	v->nprocs = n;
	return 0;
}

int tlm__devmem_procs(struct tlm__devmem_col *c, const struct tlm_rec_devprocs *p)
{
	struct tlm_report_devmem *m = &c->m;
	struct tlm_report_devmem_dev *dv = dev_of(m, p->device, false);
	if (dv && ((dv->have_start && attach(&dv->start, p)) || (dv->have_peak && attach(&dv->peak, p))))
		return -1;
	/* OOM samples are kept in sample order: find it by bisection */
	size_t lo = 0, hi = m->nooms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->ooms[mid].sample < p->sample)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < m->nooms && m->ooms[i].sample == p->sample; i++)
		if (attach(&m->ooms[i], p))
			return -1;
	return 0;
}

/* The split (devmem.h): others are counted only when NVML lists this pid,
 * since otherwise one of its entries may be this process under another pid
 * (a container's pid namespace: NVML gives host pids). */
static void derive(struct tlm_report_devview *v, uint32_t pid, uint64_t start)
{
	v->time_ns = (int64_t)((uint64_t)v->time_ns - start);
	v->self_nvml = TLM_DEVMEM_UNKNOWN;
	for (size_t i = 0; i < v->nprocs; i++)
		if (v->procs[i].pid == pid) {
			v->self_listed = true;
			v->self_nvml = v->procs[i].used;
		}
	bool known = v->nvml == TLM_DM_NVML_OK && v->self_listed;
	if (v->self_listed)
		for (size_t i = 0; i < v->nprocs; i++) {
			if (v->procs[i].pid == pid)
				continue;
			v->nothers++;
			if (v->procs[i].used == TLM_DEVMEM_UNKNOWN)
				known = false;
			else
				v->others = v->others + v->procs[i].used < v->others ? UINT64_MAX : v->others + v->procs[i].used;
		}
	uint64_t held = v->tracked + v->others < v->tracked ? UINT64_MAX : v->tracked + v->others;
	if (v->self_listed && held > v->used) {
		/* NVML answered later (the shim asks from its writer thread): what it
		 * lists no longer fits the sample, so none of it is subtracted */
		v->stale = true;
		known = false;
		v->others = 0;
		v->nothers = 0;
		held = v->tracked;
	}
	v->others_known = known;
	v->unattributed = v->used > held ? v->used - held : 0;
	v->split = known;
}

int tlm__devmem_finish(struct tlm__devmem_col *c, struct tlm_report *r, uint64_t start)
{
	struct tlm_report_devmem *m = &c->m;
	if (!m->samples) {
		free(c);
		return 0;
	}
	for (size_t i = 0; i < m->ndevs; i++) {
		struct tlm_report_devmem_dev *dv = &m->devs[i];
		if (dv->have_start)
			derive(&dv->start, r->pid, start);
		if (dv->have_peak) {
			derive(&dv->peak, r->pid, start);
			for (size_t k = 0; k < r->ndevices; k++)
				if (r->devices[k].device == dv->device && r->devices[k].kind == TLM_MEM_DEVICE)
					dv->peak_exact = dv->peak.tracked == r->devices[k].peak_reserved;
		}
	}
	for (size_t i = 0; i < m->nooms; i++)
		derive(&m->ooms[i], r->pid, start);
	m->oom_view = malloc((r->nooms ? r->nooms : 1) * sizeof *m->oom_view);
	if (!m->oom_view) {
		tlm__devmem_discard(c);
		return -1;
	}
	/* A driver OOM's sample follows its failed allocation (same ordinal);
	 * an allocator OOM (PyTorch's tap) folded the driver failures before
	 * it: the last sample on its device since the previous OOM is its. */
	size_t k = 0;
	for (size_t i = 0; i < r->nooms; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		uint64_t after = i ? r->ooms[i - 1].event : 0;
		m->oom_view[i] = SIZE_MAX;
		while (k < m->nooms && m->ooms[k].event <= after)
			k++;
		for (size_t s = k; s < m->nooms && m->ooms[s].event <= o->event; s++)
			if (m->ooms[s].device == o->device &&
			    (m->ooms[s].event == o->event || (o->allocator && o->driver_failures)))
				m->oom_view[i] = s;
	}
	m->pid = r->pid;
	struct tlm_report_devmem *out = malloc(sizeof *out);
	if (!out) {
		tlm__devmem_discard(c);
		return -1;
	}
	*out = *m;
	r->devmem = out;
	free(c);
	return 0;
}

const struct tlm_report_devview *tlm_report_oom_devview(const struct tlm_report *r, size_t i)
{
	if (!r->devmem || i >= r->nooms || r->devmem->oom_view[i] == SIZE_MAX)
		return NULL;
	return &r->devmem->ooms[r->devmem->oom_view[i]];
}

/* ---- the consumer of the report's pass (pass.h) ------------------------------ */

struct devmem_consumer {
	struct tlm__devmem_col *c;  /* NULL once finished (finish frees it) */
};

static int dm_after(void *ctx, struct tlm__pass *p, const struct tlm_record *rec)
{
	struct devmem_consumer *d = ctx;
	switch (rec->type) {
	case TLM_REC_EVENT:
		tlm__devmem_event(d->c, rec->seq);
		return 0;
	case TLM_REC_DEVMEM:
		return tlm__devmem_sample(d->c, &p->rp, rec->seq, &rec->u.devmem);
	case TLM_REC_DEVPROCS:
		return tlm__devmem_procs(d->c, &rec->u.devprocs);
	default:
		return 0;
	}
}

static int dm_finish(void *ctx, struct tlm__pass *p)
{
	struct devmem_consumer *d = ctx;
	struct tlm__devmem_col *c = d->c;
	d->c = NULL;
	return tlm__devmem_finish(c, p->rep, p->rp.start);
}

static void dm_fini(void *ctx)
{
	struct devmem_consumer *d = ctx;
	tlm__devmem_discard(d->c);
	free(d);
}

int tlm__devmem_consumer(struct tlm__pass *p)
{
	struct devmem_consumer *d = calloc(1, sizeof *d);
	if (!d || !(d->c = tlm__devmem_new())) {
		free(d);
		return -1;
	}
	return tlm__pass_add(p, &(struct tlm__consumer){.ctx = d, .after = dm_after, .finish = dm_finish,
							 .fini = dm_fini});
}
