/* SPDX-License-Identifier: MIT */
/*
 * job_html.c - the job report as one self-contained HTML page (docs/job.md):
 * the merged timeline (a track per process, drawn by job_timeline.js from
 * the data embedded here) and the job report's tables. No external resource
 * of any kind (the Content Security Policy of html_base.c forbids one).
 *
 * Every string from an input (hosts, paths, commands, site names) is
 * escaped: tlm__html() for the tables, the JSON writer (which escapes <, >
 * and &) for the timeline's data. The timeline's points are base64 of
 * zigzag varints, per point: the time since the previous point (ns; the
 * first: since the process's start), the change of reserved bytes, and the
 * change of allocated bytes less that of reserved (0, one byte, when they
 * move together); decoded exactly (integers below 2^53) by the script.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job_timeline_js.h"
#include "encoders/b64.h"
#include "render/html.h"
#include "encoders/json_out.h"
#include "render/render.h"
#include "tlm_config.h"

static const char css[] =
	"body{max-width:1400px}"
	".jt-bar{margin:6px 0}.jt-bar button{font:inherit;margin-right:6px}"
	".jt-readout{font:12.5px ui-monospace,monospace;min-height:1.5em;margin:4px 0;white-space:pre}"
	".jt-scroll{position:relative;overflow-y:auto;border:1px solid #d0d7de}"
	".jt-scroll canvas{position:sticky;top:0;display:block;cursor:crosshair}"
	"tr.notrack td{color:#6e7781}";

static int64_t job_off(const struct tlm_job *j, uint64_t realtime)
{
	return (int64_t)(realtime - j->start_realtime_ns);
}



static void opt_cell(FILE *f, int64_t v)
{
	if (v >= 0)
		fprintf(f, "<td class=\"num\">%" PRId64 "</td>", v);
	else
		fputs("<td class=\"num\">-</td>", f);
}

static void name_of(FILE *f, const struct tlm_job *j, size_t i)
{
	char nm[64];
	tlm_job_proc_name(&j->procs[i], nm, sizeof nm);
	tlm__html(f, nm);
}

/* ---- the timeline's data ------------------------------------------------ */

/* The points as base64 of zigzag varints (malloc'd; NULL without memory). */
static char *points_b64(const struct tlm_job_series *s, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	if (!m)
		return NULL;
	struct tlm__b64 w = {.f = m};
	int64_t t = 0;
	uint64_t res = 0, al = 0;
	for (size_t k = 0; k < s->n; k++) {
		const struct tlm_job_point *q = &s->pt[k];
		tlm__b64_svarint(&w, (int64_t)((uint64_t)q->t_ns - (uint64_t)t));
		tlm__b64_svarint(&w, (int64_t)(q->reserved - res));
		/* allocated moves with reserved (always, without an allocator tap): its change less reserved's */
		tlm__b64_svarint(&w, (int64_t)((q->allocated - al) - (q->reserved - res)));
		t = q->t_ns;
		res = q->reserved;
		al = q->allocated;
	}
	tlm__b64_end(&w);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void track_json(struct tlm__json *js, const struct tlm_job *j, size_t i, uint32_t pid)
{
	const struct tlm_job_proc *p = &j->procs[i];
	const struct tlm_job_series *s = p->series;
	char name[160], sub[160];
	tlm_job_track_name(p, name, sizeof name);
	if (s->device >= 0)
		snprintf(sub, sizeof sub, "%s, pid %" PRIu32 ", device %d", p->role, p->pid, s->device);
	else
		snprintf(sub, sizeof sub, "%s, pid %" PRIu32 ", no device memory", p->role, p->pid);
	tlm__json_obj(js);
	tlm__json_ku(js, "proc", i);
	tlm__json_ku(js, "pid", pid);
	tlm__json_key(js, "name");
	tlm__json_str(js, name);
	tlm__json_key(js, "sub");
	tlm__json_str(js, sub);
	tlm__json_ki(js, "device", s->device);
	tlm__json_ki(js, "start", job_off(j, p->start_realtime_ns));
	tlm__json_ki(js, "first", s->first_ns);
	tlm__json_ki(js, "end", s->end_ns);
	tlm__json_ku(js, "peak_reserved", p->peak_reserved);
	tlm__json_ku(js, "peak_allocated", p->peak_allocated);
	size_t len = 0;
	char *d = points_b64(s, &len);
	tlm__json_ku(js, "n", d ? s->n : 0); /* out of memory: a track without points */
	tlm__json_key(js, "d");
	tlm__json_strn(js, d ? d : "", len);
	free(d);
	tlm__json_key(js, "ooms");
	tlm__json_arr(js);
	for (size_t k = 0; k < s->nooms; k++) {
		tlm__json_arr(js);
		tlm__json_i64(js, s->ooms[k].t_ns);
		tlm__json_u64(js, s->ooms[k].requested);
		tlm__json_u64(js, s->ooms[k].device_free);
		tlm__json_i64(js, s->ooms[k].device);
		tlm__json_arr_end(js);
	}
	tlm__json_arr_end(js);
	tlm__json_ku(js, "ooms_total", p->ooms);
	tlm__json_obj_end(js);
}

/* The data, the canvas and its controls; returns the tracks drawn. */
static size_t timeline(FILE *f, const struct tlm_job *j, const uint32_t *pids, size_t without)
{
	size_t ntracks = 0;
	int64_t end = 1;
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error || !p->series)
			continue;
		ntracks++;
		int64_t e = job_off(j, p->start_realtime_ns) + p->series->end_ns;
		if (p->series->n && p->series->pt[p->series->n - 1].t_ns > p->series->end_ns)
			e = job_off(j, p->start_realtime_ns) + p->series->pt[p->series->n - 1].t_ns;
		if (e > end)
			end = e;
	}
	fputs("<h2 id=\"timeline\">Memory over time, every process</h2>\n", f);
	if (without)
		fprintf(f, "<p class=\"note\">%zu process%s came from JSON reports, which hold no memory over time: "
			   "%s in the tables below, without a track.</p>\n",
			without, without == 1 ? "" : "es", without == 1 ? "it is" : "they are");
	if (!ntracks) {
		fputs("<p class=\"empty\">No trace was read: no timeline.</p>\n", f);
		return 0;
	}
	fprintf(f, "<p class=\"meta\">%zu track%s on the job clock (0 = the earliest process start; see "
		   "<i>Clocks</i> below): reserved device memory (blue, filled) and allocated (orange, dashed) of each "
		   "process's device, OOMs in red. Wheel: zoom in time, drag: pan, double-click: the whole job; "
		   "hover for the values; scroll the tracks with the scroll bar or over the names.</p>\n",
		ntracks, ntracks == 1 ? "" : "s");
	fputs("<div class=\"jt-bar\" id=\"jt-bar\" hidden><button type=\"button\" data-act=\"whole\">whole job"
	      "</button><button type=\"button\" data-act=\"scale\">scale: shared</button></div>\n"
	      "<div class=\"jt-readout\" id=\"jt-readout\"></div>\n"
	      "<div class=\"jt-scroll\" id=\"jt-scroll\"><canvas id=\"jt-canvas\" aria-label=\"memory of every "
	      "process over time\"></canvas><div id=\"jt-spacer\"></div></div>\n"
	      "<noscript><p class=\"note\">The timeline is drawn by the page's script; the tables below need "
	      "none.</p></noscript>\n",
	      f);
	fputs("<script type=\"application/json\" id=\"tlm-job-data\">", f);
	struct tlm__json js;
	tlm__json_init(&js, f);
	tlm__json_obj(&js);
	tlm__json_ku(&js, "start_realtime_ns", j->start_realtime_ns);
	tlm__json_ki(&js, "end", end);
	tlm__json_key(&js, "tracks");
	tlm__json_arr(&js);
	for (size_t i = 0; i < j->nprocs; i++)
		if (!j->procs[i].error && j->procs[i].series)
			track_json(&js, j, i, pids[i]);
	tlm__json_arr_end(&js);
	tlm__json_obj_end(&js);
	fputs("</script>\n", f);
	return ntracks;
}

/* ---- tables ------------------------------------------------------------- */

static void processes(FILE *f, const struct tlm_job *j, const uint32_t *pids)
{
	fputs("<h2 id=\"processes\">Processes</h2>\n<table class=\"processes\">", f);
	tlm__html_th(f, "#rank|#local|role|host|#pid|#dev|#peak reserved|#peak allocated|#leaks|#OOMs|#start|exit|track");
	fputs("<tbody>\n", f);
	size_t track = 0;
	for (size_t i = 0; i < j->nprocs; i++) {
		const struct tlm_job_proc *p = &j->procs[i];
		if (p->error)
			continue;
		char st[32];
		fprintf(f, "<tr class=\"proc%s\" title=\"", p->series ? "" : " notrack");
		tlm__html(f, p->source);
		fputs("\">", f);
		opt_cell(f, p->rank);
		opt_cell(f, p->local_rank);
		fprintf(f, "<td>%s</td><td>", p->role);
		tlm__html(f, p->host);
		fprintf(f, "</td><td class=\"num\">%" PRIu32 "</td>", p->pid);
		opt_cell(f, p->device);
		tlm__html_bytes_cell(f, p->peak_reserved);
		tlm__html_bytes_cell(f, p->peak_allocated);
		fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64 "</td>", p->leak_sites, p->ooms);
		tlm_job_secs(st, sizeof st, job_off(j, p->start_realtime_ns));
		fprintf(f, "<td class=\"num\">%s</td><td>%s</td>", st, p->exit);
		if (p->series)
			fprintf(f, "<td>%zu (id %" PRIu32 ")</td></tr>\n", ++track, pids[i]);
		else
			fputs("<td>none: a JSON report</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void spread_row(FILE *f, const struct tlm_job *j, const char *what, const struct tlm_job_spread *s)
{
	fprintf(f, "<tr><td>%s</td>", what);
	tlm__html_bytes_cell(f, s->min);
	fputs("<td>", f);
	name_of(f, j, s->min_proc);
	fputs("</td>", f);
	tlm__html_bytes_cell(f, s->max);
	fputs("<td>", f);
	name_of(f, j, s->max_proc);
	fputs("</td>", f);
	tlm__html_bytes_cell(f, s->max - s->min);
	fputs("</tr>\n", f);
}

static void across(FILE *f, const struct tlm_job *j)
{
	const char *who = j->compared_ranks ? "ranks" : "processes";
	fprintf(f, "<h2 id=\"across\">Across %zu %s</h2>\n", j->ncompared, who);
	if (j->ncompared < 2) {
		fprintf(f, "<p class=\"empty\">Fewer than two %s: nothing to compare.</p>\n", who);
		return;
	}
	fputs("<table class=\"across\">", f);
	tlm__html_th(f, "peak|#min|min at|#max|max at|#spread");
	fputs("<tbody>\n", f);
	spread_row(f, j, "reserved", &j->peak_reserved);
	spread_row(f, j, "allocated", &j->peak_allocated);
	fputs("</tbody></table>\n", f);
	fprintf(f, "<h3>Sites that differ most between %s</h3>\n", who);
	if (!j->ndiffs) {
		fprintf(f, "<p class=\"empty\">No site holds different bytes on different %s.</p>\n", who);
		return;
	}
	fputs("<p class=\"meta\">Device memory each site held at each one's allocated peak (0 where it did "
	      "not have the site).</p>\n<table class=\"diffs\">",
	      f);
	tlm__html_th(f, "site|#spread|#least|least at|#most|most at");
	fputs("<tbody>\n", f);
	for (size_t i = 0; i < j->ndiffs; i++) {
		const struct tlm_job_diff *d = &j->diffs[i];
		fputs("<tr class=\"diff\"><td><code>", f);
		tlm__html(f, d->key);
		fputs("</code></td>", f);
		tlm__html_bytes_cell(f, d->max - d->min);
		tlm__html_bytes_cell(f, d->min);
		fputs("<td>", f);
		name_of(f, j, d->min_proc);
		fputs("</td>", f);
		tlm__html_bytes_cell(f, d->max);
		fputs("<td>", f);
		name_of(f, j, d->max_proc);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void ooms(FILE *f, const struct tlm_job *j)
{
	fputs("<h2 id=\"ooms\">Out of memory</h2>\n", f);
	if (!j->noom_procs) {
		fputs("<p class=\"empty\">No process hit an OOM.</p>\n", f);
		return;
	}
	size_t n = j->noom_procs < 8 ? j->noom_procs : 8;
	fprintf(f, "<p class=\"meta\">%zu process%s hit an OOM; the first %zu in job time order:</p>\n"
		   "<table class=\"ooms\">",
		j->noom_procs, j->noom_procs == 1 ? "" : "es", n);
	tlm__html_th(f, "#|process|host|#pid|#at|#requested|#dev|#OOMs");
	fputs("<tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct tlm_job_proc *p = &j->procs[j->oom_order[i]];
		char ts[32];
		tlm_job_secs(ts, sizeof ts, job_off(j, p->start_realtime_ns + (uint64_t)p->first_oom_ns));
		fprintf(f, "<tr class=\"oom-row\"><td class=\"num\">%zu</td><td>", i + 1);
		name_of(f, j, j->oom_order[i]);
		fputs("</td><td>", f);
		tlm__html(f, p->host);
		fprintf(f, "</td><td class=\"num\">%" PRIu32 "</td><td class=\"num\">%s</td>", p->pid, ts);
		tlm__html_bytes_cell(f, p->first_oom_requested);
		fprintf(f, "<td class=\"num\">%d</td><td class=\"num\">%" PRIu64 "</td></tr>\n", p->first_oom_device,
			p->ooms);
	}
	fputs("</tbody></table>\n", f);
}

static void unreadable(FILE *f, const struct tlm_job *j)
{
	if (!j->nunreadable)
		return;
	fputs("<h2 id=\"unreadable\">Unreadable inputs</h2>\n<ul class=\"unreadable\">\n", f);
	for (size_t i = 0; i < j->nprocs; i++)
		if (j->procs[i].error) {
			fputs("<li><code>", f);
			tlm__html(f, j->procs[i].source);
			fputs("</code>: ", f);
			tlm__html(f, j->procs[i].error);
			fputs("</li>\n", f);
		}
	fputs("</ul>\n", f);
}

int tlm_job_html(const struct tlm_job *j, FILE *f)
{
	uint32_t *pids = malloc((j->nprocs ? j->nprocs : 1) * sizeof *pids);
	if (!pids || tlm_job_track_pids(j, pids)) {
		free(pids);
		return -1;
	}
	size_t nread = j->nprocs - j->nunreadable, nworkers = 0, nchildren = 0, without = 0;
	for (size_t i = 0; i < j->nprocs; i++) {
		nworkers += !strcmp(j->procs[i].role, "worker");
		nchildren += !strcmp(j->procs[i].role, "child");
		without += !j->procs[i].error && !j->procs[i].series;
	}
	tlm__html_doc_head(f, "tlm job report", css);
	fprintf(f, "<h1>tlm job report</h1>\n<p class=\"meta\"><b>%zu</b> process%s (%zu rank%s, %zu worker%s, "
		   "%zu child%s) on %zu host%s, from %zu input%s</p>\n",
		nread, nread == 1 ? "" : "es", j->nranks, j->nranks == 1 ? "" : "s", nworkers, nworkers == 1 ? "" : "s",
		nchildren, nchildren == 1 ? "" : "ren", j->nhosts, j->nhosts == 1 ? "" : "s", j->ninputs,
		j->ninputs == 1 ? "" : "s");
	char t[64];
	tlm_job_iso_time(t, sizeof t, j->start_realtime_ns);
	fprintf(f, "<p class=\"meta\"><b>times</b> seconds from the earliest process start, %s (the job "
		   "clock)</p>\n",
		t);
	if (j->nunreadable)
		fprintf(f, "<p class=\"note\">%zu input%s could not be read (listed at the end).</p>\n", j->nunreadable,
			j->nunreadable == 1 ? "" : "s");
	timeline(f, j, pids, without);
	processes(f, j, pids);
	across(f, j);
	ooms(f, j);
	unreadable(f, j);
	fputs("<h2 id=\"clocks\">Clocks</h2>\n<p class=\"meta\">Each trace's events are times of its host's "
	      "CLOCK_MONOTONIC; its header holds CLOCK_REALTIME and CLOCK_MONOTONIC read together when recording "
	      "started. A process's events are placed at its CLOCK_REALTIME start plus their monotonic offset "
	      "from it, so processes of one host align to well under a microsecond, and processes of different "
	      "hosts as well as those hosts' clocks agree (NTP: milliseconds, PTP: microseconds).</p>\n",
	      f);
	fprintf(f, "<p class=\"muted\">tlm %s.</p>\n<script>\n%s</script>\n</body>\n</html>\n", TLM_VERSION,
		tlm__job_timeline_js);
	free(pids);
	return ferror(f) ? -1 : 0;
}
