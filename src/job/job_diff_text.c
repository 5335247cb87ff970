/* SPDX-License-Identifier: MIT */
/*
 * job_diff_text.c - `tlm diff` of two jobs as text, <= 100 columns
 * (docs/diff.md, "Jobs"): the processes that changed, those on one side
 * only, the spread across ranks and the sites that differ most in BASE and
 * NEW, the OOMs, and the gates.
 */
#include <inttypes.h>
#include <string.h>

#include "common/text.h"
#include "diff/diff.h"
#include "job_diff.h"
#include "render/render.h"

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void side_line(FILE *f, const char *what, const struct tlm_job *j)
{
	size_t w = 0, c = 0;
	for (size_t i = 0; i < j->nprocs; i++) {
		w += !strcmp(j->procs[i].role, "worker");
		c += !strcmp(j->procs[i].role, "child");
	}
	tlm_text_line(f, "%s: %zu %s (%zu %s, %zu %s, %zu %s) on %zu %s\n", what, j->nprocs,
		plural(j->nprocs, "process", "processes"), j->nranks, plural(j->nranks, "rank", "ranks"), w,
		plural(w, "worker", "workers"), c, plural(c, "child", "children"), j->nhosts, plural(j->nhosts, "host", "hosts"));
}

/* "9.0 MiB" and "+0 B" in two cells */
static void cell(char *v, size_t nv, char *dl, size_t nd, uint64_t before, uint64_t after)
{
	tlm__human(v, nv, after);
	tlm__diff_signed(dl, nd, tlm_job_sub(after, before));
	if (before == after)
		snprintf(dl, nd, "=");
}

static void oom_cell(char *buf, size_t n, uint64_t before, uint64_t after)
{
	if (before == after)
		snprintf(buf, n, "%" PRIu64, after);
	else
		snprintf(buf, n, "%" PRIu64 "->%" PRIu64, before, after);
}

static void changed_table(FILE *f, const struct tlm_jdiff *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nprocs; i++)
		n += d->procs[i].base && d->procs[i].new_ && d->procs[i].changed;
	if (!n) {
		fprintf(f, "\nno matched process changed\n");
		return;
	}
	fprintf(f, "\nPROCESSES THAT CHANGED (%zu; each figure in NEW, and its change from BASE; site: leak sites)\n", n);
	tlm_text_line(f, "  %-17s %22s %22s %22s %4s %6s\n", "process", "peak reserved", "peak allocated", "leaked", "site",
		"OOMs");
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct tlm_jdiff_proc *p = &d->procs[i];
		if (!p->base || !p->new_ || !p->changed)
			continue;
		char rv[32], rd[32], av[32], ad[32], lv[32], ld[32], st[24], oo[48];
		cell(rv, sizeof rv, rd, sizeof rd, p->base->peak_reserved, p->new_->peak_reserved);
		cell(av, sizeof av, ad, sizeof ad, p->base->peak_allocated, p->new_->peak_allocated);
		cell(lv, sizeof lv, ld, sizeof ld, p->base->leak_bytes, p->new_->leak_bytes);
		int64_t sd = tlm_job_sub(p->new_->leak_sites, p->base->leak_sites);
		if (sd)
			snprintf(st, sizeof st, "%+" PRId64, sd);
		else
			snprintf(st, sizeof st, "=");
		oom_cell(oo, sizeof oo, p->base->ooms, p->new_->ooms);
		tlm_text_line(f, "  %-17.17s %10s %11s %10s %11s %10s %11s %4s %6s\n", p->name, rv, rd, av, ad, lv, ld, st, oo);
	}
}

static void only_table(FILE *f, const struct tlm_jdiff *d, bool base)
{
	size_t n = base ? d->only_base : d->only_new;
	if (!n)
		return;
	tlm_text_line(f, "\nONLY IN %s (%zu)\n", base ? "BASE" : "NEW", n);
	tlm_text_line(f, "  %-17s %-26s %10s %10s %10s %5s %4s\n", "process", "pid@host", "reserved", "allocated", "leaked",
		"sites", "OOMs");
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct tlm_jdiff_proc *p = &d->procs[i];
		const struct tlm_job_proc *q = base ? p->base : p->new_;
		if (!q || (base ? p->new_ : p->base))
			continue;
		char who[64], a[32], b[32], c[32];
		snprintf(who, sizeof who, "%" PRIu32 "@%s", q->pid, q->host);
		tlm_text_line(f, "  %-17.17s %-26.26s %10s %10s %10s %5" PRIu64 " %4" PRIu64 "\n", p->name, who,
			tlm__human(a, sizeof a, q->peak_reserved), tlm__human(b, sizeof b, q->peak_allocated),
			tlm__human(c, sizeof c, q->leak_bytes), q->leak_sites, q->ooms);
	}
}

static void spread_rows(FILE *f, const struct tlm_jdiff *d, const char *what, const struct tlm_job_spread *b,
			const struct tlm_job_spread *n)
{
	bool hb = d->base->ncompared, hn = d->new_->ncompared;
	const char *row[3] = {"max", "min", "spread"};
	for (int r = 0; r < 3; r++) {
		uint64_t vb = !hb ? 0 : r == 0 ? b->max : r == 1 ? b->min : b->max - b->min;
		uint64_t vn = !hn ? 0 : r == 0 ? n->max : r == 1 ? n->min : n->max - n->min;
		char sb[32] = "-", sn[32] = "-", nb[80] = "", nn[80] = "", dl[32];
		if (hb)
			tlm__human(sb, sizeof sb, vb);
		if (hn)
			tlm__human(sn, sizeof sn, vn);
		if (hb && r < 2)
			snprintf(nb, sizeof nb, "(%s)", d->procs[d->base_map[r == 0 ? b->max_proc : b->min_proc]].name);
		if (hn && r < 2)
			snprintf(nn, sizeof nn, "(%s)", d->procs[d->new_map[r == 0 ? n->max_proc : n->min_proc]].name);
		tlm__diff_signed(dl, sizeof dl, tlm_job_sub(vn, vb));
		tlm_text_line(f, "  %-14s %-6s %10s %-20.20s %10s %-20.20s %11s\n", r ? "" : what, row[r], sb, nb, sn, nn, dl);
	}
}

static void across(FILE *f, const struct tlm_jdiff *d)
{
	if (d->base->ncompared < 2 && d->new_->ncompared < 2)
		return;
	const char *ub = d->base->compared_ranks ? "ranks" : "processes";
	const char *un = d->new_->compared_ranks ? "ranks" : "processes";
	tlm_text_line(f, "\nACROSS %s (BASE: %zu %s, NEW: %zu %s)\n", d->new_->compared_ranks ? "RANKS" : "PROCESSES",
		d->base->ncompared, ub, d->new_->ncompared, un);
	tlm_text_line(f, "  %-14s %-6s %10s %-20s %10s %-20s %11s\n", "", "", "BASE", "", "NEW", "", "change");
	spread_rows(f, d, "peak reserved", &d->base->peak_reserved, &d->new_->peak_reserved);
	spread_rows(f, d, "peak allocated", &d->base->peak_allocated, &d->new_->peak_allocated);
	if (!d->nsites) {
		tlm_text_line(f, "\nno site holds different bytes on different %s in either job\n", un);
		return;
	}
	tlm_text_line(f, "\nSITES THAT DIFFER MOST BETWEEN %s: the spread in BASE -> NEW\n",
		d->new_->compared_ranks ? "RANKS" : "PROCESSES");
	for (size_t i = 0; i < d->nsites; i++) {
		const struct tlm_jdiff_site *s = &d->sites[i];
		if (strlen(s->key) > 96)
			tlm_text_line(f, "  %.93s...\n", s->key);
		else
			tlm_text_line(f, "  %s\n", s->key);
		char side[2][160];
		const struct tlm_jdiff_spread *sp[2] = {&s->base, &s->new_};
		for (int k = 0; k < 2; k++) {
			char h[32];
			if (!sp[k]->any)
				snprintf(side[k], sizeof side[k], "-");
			else if (sp[k]->max == sp[k]->min)
				snprintf(side[k], sizeof side[k], "0 B");
			else
				snprintf(side[k], sizeof side[k], "%s (%s to %s)", tlm__human(h, sizeof h, sp[k]->max - sp[k]->min),
					 d->procs[sp[k]->min_proc].name, d->procs[sp[k]->max_proc].name);
		}
		char dl[32];
		tlm__line(f, "      %s -> %s: %s", side[0], side[1], tlm__diff_signed(dl, sizeof dl, s->delta));
	}
}

static void first_oom(FILE *f, const struct tlm_jdiff *d, const char *what, const struct tlm_job *j, const size_t *map)
{
	if (!j->noom_procs) {
		tlm_text_line(f, "  %s: no OOM\n", what);
		return;
	}
	const struct tlm_job_proc *p = &j->procs[j->oom_order[0]];
	int64_t t = (int64_t)(p->start_realtime_ns + (uint64_t)p->first_oom_ns - j->start_realtime_ns);
	char rq[32];
	tlm_text_line(f, "  %s: %zu %s; first: %s at %s%.3f s (%s on device %d)\n", what, j->noom_procs,
		plural(j->noom_procs, "process", "processes"), d->procs[map[j->oom_order[0]]].name, t < 0 ? "-" : "+",
		(double)(t < 0 ? -t : t) / 1e9, tlm__human(rq, sizeof rq, p->first_oom_requested), p->first_oom_device);
}

static void oom_list(FILE *f, const struct tlm_jdiff *d, bool fresh)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nprocs; i++) {
		const struct tlm_jdiff_proc *p = &d->procs[i];
		bool b = p->base && p->base->ooms, a = p->new_ && p->new_->ooms;
		if (fresh ? a && !b : b && !a) {
			if (!n)
				tlm_text_line(f, "  %s:", fresh ? "OOMs new in NEW" : "OOMs gone in NEW");
			if (n < 16)
				tlm_text_line(f, "%s %s", n ? "," : "", p->name);
			n++;
		}
	}
	if (n)
		tlm_text_line(f, "%s\n", n > 16 ? ", ..." : "");
}

static void gates(FILE *f, const struct tlm_jdiff *d)
{
	char a[32], b[32], c[32];
	if (d->gate) {
		fprintf(f, "\nGATE --fail-on-growth %" PRIu64 " B: %s\n", d->gate_bytes,
			d->nfailed || d->job_failed ? "FAILED" : "passed");
		for (size_t i = 0; i < d->nprocs; i++) {
			const struct tlm_jdiff_proc *p = &d->procs[i];
			if (p->failed)
				tlm__line(f, "  %-17s leaked %s, per step %s, live at end at leak sites %s%s", p->name,
					  tlm__diff_signed(a, sizeof a, p->leak_growth),
					  tlm__diff_signed(b, sizeof b, p->per_step_growth),
					  tlm__diff_signed(c, sizeof c, p->live_leak_growth), p->full ? "" : " (summary)");
		}
		tlm__line(f, "  %-17s leaked %s, per step %s, live at end at leak sites %s: %s", "job",
			  tlm__diff_signed(a, sizeof a, d->job_leak_growth), tlm__diff_signed(b, sizeof b, d->job_per_step_growth),
			  tlm__diff_signed(c, sizeof c, d->job_live_growth), d->job_failed ? "FAILED" : "passed");
	}
	if (d->peak_gate) {
		fprintf(f, "\nGATE --fail-on-peak-growth %" PRIu64 " B: %s\n", d->peak_gate_bytes,
			d->npeak_failed || d->job_peak_failed ? "FAILED" : "passed");
		for (size_t i = 0; i < d->nprocs; i++) {
			const struct tlm_jdiff_proc *p = &d->procs[i];
			for (size_t k = 0; p->peak_failed && k < p->npeakdev; k++) {
				const struct tlm_jdiff_peakdev *v = &p->peakdev[k];
				tlm__line(f, "  %-17s device %d (%s): %s -> %s (%s)%s", p->name, v->device, v->kind,
					  tlm__human(a, sizeof a, v->before), tlm__human(b, sizeof b, v->after),
					  tlm__diff_signed(c, sizeof c, tlm_job_sub(v->after, v->before)),
					  !p->base ? " (only in NEW)" : p->full ? "" : " (summary)");
			}
		}
		uint64_t pb = d->base->ncompared ? d->base->peak_allocated.max : 0;
		uint64_t pn = d->new_->ncompared ? d->new_->peak_allocated.max : 0;
		tlm__line(f, "  %-17s highest peak allocated %s -> %s (%s): %s", "job", tlm__human(a, sizeof a, pb),
			  tlm__human(b, sizeof b, pn), tlm__diff_signed(c, sizeof c, d->job_peak_growth),
			  d->job_peak_failed ? "FAILED" : "passed");
	}
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].error)
			tlm__line(f, "  %s: not compared: %s", d->procs[i].name, d->procs[i].error);
}

int tlm_jdiff_text(const struct tlm_jdiff *d, const char *base, const char *new_, FILE *f)
{
	tlm__line(f, "tlm diff (jobs): %s -> %s", base, new_);
	side_line(f, "BASE", d->base);
	side_line(f, "NEW", d->new_);
	fprintf(f, "processes: %zu matched (%zu unchanged), %zu only in BASE, %zu only in NEW\n", d->matched,
		d->unchanged, d->only_base, d->only_new);
	changed_table(f, d);
	only_table(f, d, true);
	only_table(f, d, false);
	across(f, d);
	fprintf(f, "\nOUT OF MEMORY\n");
	first_oom(f, d, "BASE", d->base, d->base_map);
	first_oom(f, d, "NEW", d->new_, d->new_map);
	oom_list(f, d, true);
	oom_list(f, d, false);
	gates(f, d);
	fprintf(f, "\none process: tlm diff BASE_TRACE NEW_TRACE; this diff as JSON: --format json (tlm-job-diff/1)\n");
	return ferror(f) ? -1 : 0;
}
