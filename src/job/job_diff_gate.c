/* SPDX-License-Identifier: MIT */
/*
 * job_diff_gate.c - the gates of `tlm diff` on jobs: src/diff's own gates
 * on each matched pair whose files can be read again (in parallel, two
 * sides per thread at a time), the summaries' figures otherwise, then the
 * job's totals (job_diff.h).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/text.h"
#include "diff/diff.h"
#include "job_diff.h"
#include "render/render.h"

#define MESSAGE_MAX 4096 /* of one process's gate message (stderr) */

static bool over(int64_t grew, uint64_t limit)
{
	return grew > 0 && (uint64_t)grew > limit;
}

static int add_peakdev(struct tlm_jdiff_proc *p, int device, const char *kind, uint64_t before, uint64_t after)
{
	struct tlm_jdiff_peakdev *n = realloc(p->peakdev, (p->npeakdev + 1) * sizeof *n);
	if (!n)
		return -1;
	p->peakdev = n;
	n[p->npeakdev].device = device;
	snprintf(n[p->npeakdev].kind, sizeof n->kind, "%s", kind ? kind : "?");
	n[p->npeakdev].before = before;
	n[p->npeakdev++].after = after;
	return 0;
}

/* src/diff's message, each "tlm diff: " line naming the process */
static char *named_message(const struct tlm_diff *d, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	tlm_diff_gate_message(d, f);
	if (fclose(f))
		return NULL;
	char *out = malloc(MESSAGE_MAX);
	size_t o = 0;
	for (const char *s = buf; out && *s && o + 1 < MESSAGE_MAX;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
		int w = !strncmp(s, "tlm diff: ", 10)
				? snprintf(out + o, MESSAGE_MAX - o, "tlm diff: %s: %.*s", name, (int)n - 10, s + 10)
				: snprintf(out + o, MESSAGE_MAX - o, "%.*s", (int)n, s);
		if (w < 0 || (size_t)w >= MESSAGE_MAX - o)
			break;
		o += (size_t)w;
		s += n;
	}
	if (out)
		out[o] = 0;
	free(buf);
	return out;
}

struct gates {
	struct tlm_jdiff *d;
	atomic_size_t next;
	atomic_bool nomem;
};

static void fail_read(struct tlm_jdiff_proc *p, const char *path, const char *err)
{
	size_t n = strlen(path) + strlen(err) + 8;
	if ((p->error = malloc(n)))
		snprintf(p->error, n, "%s: %s", path, err);
}

/* src/diff on both files; an absent side is an empty run. */
static int full_pair(const struct tlm_jdiff *d, struct tlm_jdiff_proc *p)
{
	struct tlm_diff_side side[2] = {{0}, {0}};
	const struct tlm_job_proc *q[2] = {p->base, p->new_};
	char err[256];
	int rc = 0;
	for (int s = 0; s < 2; s++) {
		if (!q[s]) {
			side[s].has_peak = true;
			continue;
		}
		if (tlm_diff_load(q[s]->file, &side[s], err, sizeof err)) {
			fail_read(p, q[s]->file, err);
			goto out;
		}
	}
	struct tlm_diff r;
	if (tlm_diff_compute(&side[0], &side[1], d->gate, d->gate_bytes, &r)) {
		rc = -1;
		goto out;
	}
	if (d->peak_gate)
		tlm_diff_peak_gate(&r, d->peak_gate_bytes);
	p->leak_growth = r.leak_growth;
	p->per_step_growth = r.per_step_growth;
	p->live_leak_growth = r.live_leak_growth;
	p->failed_leaks = r.failed_leaks;
	p->failed_per_step = r.failed_per_step;
	p->failed_live = r.failed_live;
	p->peak_failed = r.peak_failed;
	for (size_t i = 0; d->peak_gate && i < r.ndev; i++) {
		const struct tlm_diff_devrow *v = &r.dev[i];
		uint64_t b = v->before ? v->before->peak_allocated : 0, a = v->after ? v->after->peak_allocated : 0;
		if (over(tlm_diff_sub(a, b), d->peak_gate_bytes) && add_peakdev(p, v->device, v->kind, b, a))
			rc = -1;
	}
	if ((r.failed || r.peak_failed) && !(p->message = named_message(&r, p->name)))
		rc = -1;
	tlm_diff_free(&r);
out:
	tlm_diff_side_free(&side[0]);
	tlm_diff_side_free(&side[1]);
	return rc;
}

/* From the summaries: the leak total and the peak of each one's device. */
static int summary_pair(const struct tlm_jdiff *d, struct tlm_jdiff_proc *p)
{
	uint64_t lb = p->base ? p->base->leak_bytes : 0, ln = p->new_ ? p->new_->leak_bytes : 0;
	uint64_t pb = p->base ? p->base->peak_allocated : 0, pn = p->new_ ? p->new_->peak_allocated : 0;
	p->leak_growth = tlm_job_sub(ln, lb);
	p->failed_leaks = d->gate && over(p->leak_growth, d->gate_bytes);
	int64_t grew = tlm_job_sub(pn, pb);
	p->peak_failed = d->peak_gate && over(grew, d->peak_gate_bytes);
	int dev = p->new_ && p->new_->device >= 0 ? p->new_->device : p->base ? p->base->device : -1;
	if (p->peak_failed && add_peakdev(p, dev, "device", pb, pn))
		return -1;
	char buf[512], g[32], h[32];
	int o = 0;
	buf[0] = 0;
	if (p->failed_leaks)
		o = snprintf(buf, sizeof buf,
			     "tlm diff: %s: leaked bytes grew by %" PRId64 " B (+%s), more than --fail-on-growth %" PRIu64
			     " (from a job summary: no sites)\n",
			     p->name, p->leak_growth, tlm__human(g, sizeof g, (uint64_t)p->leak_growth), d->gate_bytes);
	if (p->peak_failed && o >= 0 && (size_t)o < sizeof buf)
		snprintf(buf + o, sizeof buf - (size_t)o,
			 "tlm diff: %s: peak allocated of device %d grew by %" PRId64 " B (+%s), more than "
			 "--fail-on-peak-growth %" PRIu64 " (from a job summary: no sites)\n",
			 p->name, dev, grew, tlm__human(h, sizeof h, (uint64_t)grew), d->peak_gate_bytes);
	if (buf[0] && !(p->message = strdup(buf)))
		return -1;
	return 0;
}

static void *worker(void *arg)
{
	struct gates *g = arg;
	size_t i;
	while ((i = atomic_fetch_add(&g->next, 1)) < g->d->nprocs) {
		struct tlm_jdiff_proc *p = &g->d->procs[i];
		if (p->full && full_pair(g->d, p))
			atomic_store(&g->nomem, true);
	}
	return NULL;
}

static void add_sat(int64_t *acc, int64_t v)
{
	int64_t s = *acc + v;
	*acc = v > 0 && s < *acc ? INT64_MAX : v < 0 && s > *acc ? INT64_MIN : s;
}

int tlm_jdiff_gates(struct tlm_jdiff *d, bool gate, uint64_t gate_bytes, bool peak_gate, uint64_t peak_gate_bytes,
		    unsigned threads)
{
	d->gate = gate;
	d->gate_bytes = gate_bytes;
	d->peak_gate = peak_gate;
	d->peak_gate_bytes = peak_gate_bytes;
	size_t nfull = 0;
	for (size_t i = 0; i < d->nprocs; i++) {
		struct tlm_jdiff_proc *p = &d->procs[i];
		/* without a gate the job's totals come from the summaries */
		p->full = (gate || peak_gate) && (!p->base || p->base->file) && (!p->new_ || p->new_->file);
		nfull += p->full;
		if (!p->full && summary_pair(d, p))
			return -1;
	}
	struct gates g = {.d = d};
	atomic_init(&g.next, 0);
	atomic_init(&g.nomem, false);
	if (!threads) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		threads = c > 0 ? (unsigned)c : 1;
	}
	if (threads > nfull)
		threads = nfull ? (unsigned)nfull : 1;
	if (threads > 256)
		threads = 256;
	pthread_t tid[256];
	unsigned started = 0;
	for (unsigned t = 1; t < threads; t++)
		if (pthread_create(&tid[started], NULL, worker, &g) == 0)
			started++;
	worker(&g);
	for (unsigned t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	if (atomic_load(&g.nomem))
		return -1;
	uint64_t base_peak = d->base->ncompared ? d->base->peak_allocated.max : 0;
	uint64_t new_peak = d->new_->ncompared ? d->new_->peak_allocated.max : 0;
	d->job_peak_growth = tlm_job_sub(new_peak, base_peak);
	for (size_t i = 0; i < d->nprocs; i++) {
		struct tlm_jdiff_proc *p = &d->procs[i];
		p->failed = p->failed_leaks || p->failed_per_step || p->failed_live;
		add_sat(&d->job_leak_growth, p->leak_growth);
		add_sat(&d->job_per_step_growth, p->per_step_growth);
		add_sat(&d->job_live_growth, p->live_leak_growth);
		d->nfailed += p->failed;
		d->npeak_failed += p->peak_failed;
		d->nerrors += p->error != NULL;
		p->changed |= p->failed || p->peak_failed || p->error;
	}
	d->job_failed = gate && (over(d->job_leak_growth, gate_bytes) || over(d->job_per_step_growth, gate_bytes) ||
				 over(d->job_live_growth, gate_bytes));
	d->job_peak_failed = peak_gate && over(d->job_peak_growth, peak_gate_bytes);
	d->failed = d->nfailed || d->npeak_failed || d->job_failed || d->job_peak_failed;
	return 0;
}

void tlm_jdiff_gate_message(const struct tlm_jdiff *d, FILE *f)
{
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct tlm_jdiff_proc *p = &d->procs[i];
		if (!p->failed && !p->peak_failed)
			continue;
		if (shown++ < 8 && p->message)
			fputs(p->message, f);
		else
			more++;
	}
	if (more) {
		tlm_text_line(f, "tlm diff: %zu more process%s failed:", more, more == 1 ? "" : "es");
		size_t k = 0;
		for (size_t i = 0, s = 0; i < d->nprocs && k < 16; i++)
			if ((d->procs[i].failed || d->procs[i].peak_failed) && s++ >= 8)
				tlm_text_line(f, "%s %s", k++ ? "," : "", d->procs[i].name);
		tlm_text_line(f, "%s (the JSON lists them all)\n", more > k ? ", ..." : "");
	}
	char a[32], b[32], c[32];
	if (d->job_failed)
		tlm_text_line(f, "tlm diff: job: leaked bytes grew by %s, leaks per step by %s, live at end at leak sites "
			   "by %s (all processes), more than --fail-on-growth %" PRIu64 "\n",
			tlm__diff_signed(a, sizeof a, d->job_leak_growth), tlm__diff_signed(b, sizeof b, d->job_per_step_growth),
			tlm__diff_signed(c, sizeof c, d->job_live_growth), d->gate_bytes);
	if (d->job_peak_failed)
		tlm_text_line(f, "tlm diff: job: the highest peak allocated across %s grew by %s (%" PRIu64 " -> %" PRIu64
			   " B), more than --fail-on-peak-growth %" PRIu64 "\n",
			d->new_->compared_ranks ? "ranks" : "processes", tlm__diff_signed(a, sizeof a, d->job_peak_growth),
			d->base->ncompared ? d->base->peak_allocated.max : 0,
			d->new_->ncompared ? d->new_->peak_allocated.max : 0, d->peak_gate_bytes);
}
