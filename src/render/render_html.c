/* SPDX-License-Identifier: MIT */
/*
 * render_html.c - the report as one self-contained HTML page: inline CSS,
 * SVG and a little JavaScript, no external resource of any kind (a Content
 * Security Policy forbids loading one). It shows, per device and kind, the
 * bytes allocated and reserved over time with OOM markers; the segment map
 * at the reserved peak, coloured by allocation site; and the memory, leak,
 * gc-freed, live-at-end, churn and OOM tables with expandable stacks.
 *
 * Every string that comes from the trace (paths, arguments, symbols) goes
 * through html() below: &, <, >, " and ' become entities, control
 * characters and bytes that are not valid UTF-8 become U+FFFD. Numbers are
 * printed by us. The page works without its script; the script adds a
 * read-out under the pointer on the timelines and marks the page ready
 * (data-tlm-ready on <body>). docs/exports.md describes the page.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/devmem.h"
#include "render/export.h"
#include "render/html.h"
#include "encoders/json_out.h"
#include "render/render_owners.h"
#include "render/render_steps.h"
#include "tlm_config.h"

/* ---- tables ------------------------------------------------------------- */


static void dev_cell(FILE *f, int device)
{
	if (device < 0)
		fputs("<td>host</td>", f);
	else
		fprintf(f, "<td class=\"num\">%d</td>", device);
}


static void memory_table(FILE *f, const struct tlm_report *r)
{
	fputs("<h2 id=\"memory\">Memory per device and kind</h2>\n", f);
	if (!r->ndevices) {
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
		return;
	}
	fputs("<table class=\"memory\">", f);
	tlm__html_th(f, "#dev|kind|#peak allocated|#at|#reserved then|#frag|#peak reserved|#at|#ext|#live at end|#allocs");
	fputs("<tbody>\n", f);
	char t[32];
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		fputs("<tr class=\"device\">", f);
		dev_cell(f, d->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(d->kind));
		tlm__html_bytes_cell(f, d->peak_allocated);
		fprintf(f, "<td class=\"num\">%s</td>", tlm__secs(t, sizeof t, d->peak_allocated_ns));
		tlm__html_bytes_cell(f, d->reserved_at_peak_allocated);
		fprintf(f, "<td class=\"num\">%.2f</td>", d->frag_at_peak);
		tlm__html_bytes_cell(f, d->peak_reserved);
		fprintf(f, "<td class=\"num\">%s</td>", tlm__secs(t, sizeof t, d->peak_reserved_ns));
		if (d->ext_known)
			fprintf(f, "<td class=\"num\">%.2f</td>", d->ext_frag_at_peak);
		else
			fputs("<td class=\"num\" title=\"blocks unknown: no allocator tap\">-</td>", f);
		tlm__html_bytes_cell(f, d->live_bytes_at_end);
		fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", d->live_allocs_at_end);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p class=\"muted\">frag = 1 - peak allocated / reserved then (both at the allocated "
	      "peak); ext = 1 - largest free gap / free inside reserved memory at the reserved peak (- : blocks "
	      "unknown without an allocator tap).</p>\n",
	      f);
}

enum kind { LIVE, LEAK, GC, CHURN };

static void site_table(FILE *f, struct tlm_report *r, const char *id, const char *title,
		       const struct tlm_report_site *s, size_t n, enum kind k, const char *empty)
{
	uint64_t bytes = 0, count = 0;
	for (size_t i = 0; i < n; i++) {
		bytes += s[i].bytes;
		count += s[i].count;
	}
	char h[32], a[32], b[32];
	fprintf(f, "<h2 id=\"%s\">%s</h2>\n", id, title);
	if (!n) {
		fprintf(f, "<p class=\"empty\">%s</p>\n", empty);
		return;
	}
	if (k == CHURN)
		fprintf(f, "<p class=\"meta\">%zu site%s allocate and free the same size over and over.</p>\n", n,
			n == 1 ? "" : "s");
	else if (k == GC)
		fprintf(f, "<p class=\"meta\">%zu site%s, %s in %" PRIu64 " allocation%s kept alive by reference "
			   "cycles until Python's cyclic garbage collector ran: break the cycle, <code>del</code> the "
			   "reference, or hold it with a weakref.</p>\n",
			n, n == 1 ? "" : "s", tlm__html_human(h, sizeof h, bytes), count, count == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"meta\">%zu site%s, %s in %" PRIu64 " allocation%s.</p>\n", n, n == 1 ? "" : "s",
			tlm__html_human(h, sizeof h, bytes), count, count == 1 ? "" : "s");
	fprintf(f, "<table class=\"sites %s\">", id);
	if (k == LIVE || k == GC)
		tlm__html_th(f, "##|#dev|#bytes|#allocations|#first|#last|allocated at");
	else if (k == LEAK)
		tlm__html_th(f, "##|#dev|#bytes|#allocations|#growth|#first|#last|allocated at");
	else
		tlm__html_th(f, "##|#dev|#size|#cycles|#per second|allocated at");
	fputs("<tbody>\n", f);
	struct tlm__labels L; /* the rows shown are one screen (labels.c) */
	tlm__labels_sites(&L, r, s, n < HTML_SITES ? n : HTML_SITES, TLM__HTML_SEP);
	for (size_t i = 0; i < n && i < HTML_SITES; i++) {
		fprintf(f, "<tr class=\"site\"><td class=\"num\">%zu</td>", i + 1);
		dev_cell(f, s[i].device);
		if (k == CHURN) {
			tlm__html_bytes_cell(f, s[i].size);
			fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%.1f</td>", s[i].count, s[i].rate);
		} else {
			tlm__html_bytes_cell(f, s[i].bytes);
			fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", s[i].count);
			if (k == LEAK)
				fprintf(f, "<td class=\"num\">+%s/s</td>", tlm__html_human(h, sizeof h, tlm__clamp_u64(s[i].rate)));
			fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">%s</td>", tlm__secs(a, sizeof a, s[i].first_ns),
				tlm__secs(b, sizeof b, s[i].last_ns));
		}
		fputs("<td>", f);
		tlm__html_stack_label(f, r, s[i].stack_id, tlm__label(&L, i));
		fputs("</td></tr>\n", f);
	}
	tlm__labels_free(&L);
	fputs("</tbody></table>\n", f);
	if (n > HTML_SITES)
		fprintf(f, "<p class=\"muted\">... %zu more (<code>tlm report --format json</code> lists all).</p>\n",
			n - HTML_SITES);
}

static void at_peak_table(FILE *f, struct tlm_report *r)
{
	fputs("<h2 id=\"at-peak\">At the peak</h2>\n", f);
	if (!r->nat_peak) {
		fputs("<p class=\"empty\">Nothing was allocated.</p>\n", f);
		return;
	}
	fputs("<p class=\"meta\">What held memory when each device's allocated memory peaked, by site. "
	      "<b>Transient</b>: freed before the end of the run (activations held from the forward to the backward "
	      "pass, temporaries): activation checkpointing, a smaller batch or freeing earlier lowers it. "
	      "<b>Persistent</b>: still live at the end (weights, optimizer state, leaks).</p>\n",
	      f);
	fputs("<table class=\"sites at-peak\">", f);
	tlm__html_th(f, "##|#dev|kind|#bytes|#allocations|#transient|#persistent|allocated at");
	fputs("<tbody>\n", f);
	struct tlm__labels L;
	tlm__labels_peak(&L, r, r->at_peak, r->nat_peak < HTML_SITES ? r->nat_peak : HTML_SITES, TLM__HTML_SEP);
	for (size_t i = 0; i < r->nat_peak && i < HTML_SITES; i++) {
		const struct tlm_report_peak_site *s = &r->at_peak[i];
		fprintf(f, "<tr class=\"site\"><td class=\"num\">%zu</td>", i + 1);
		dev_cell(f, s->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(s->kind));
		tlm__html_bytes_cell(f, s->bytes);
		fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", s->count);
		tlm__html_bytes_cell(f, s->bytes - s->persistent_bytes);
		tlm__html_bytes_cell(f, s->persistent_bytes);
		fputs("<td>", f);
		tlm__html_stack_label(f, r, s->stack_id, tlm__label(&L, i));
		fputs("</td></tr>\n", f);
	}
	tlm__labels_free(&L);
	fputs("</tbody></table>\n", f);
	if (r->nat_peak > HTML_SITES)
		fprintf(f, "<p class=\"muted\">... %zu more (<code>tlm report --format json</code> lists all).</p>\n",
			r->nat_peak - HTML_SITES);
}

static void oom_table(FILE *f, struct tlm_report *r)
{
	fputs("<h2 id=\"ooms\">Out of memory</h2>\n", f);
	if (!r->ooms_total) {
		fputs("<p class=\"empty\">None.</p>\n", f);
		return;
	}
	fprintf(f, "<p class=\"meta\">%" PRIu64 " failed allocation%s.</p>\n<table class=\"ooms\">", r->ooms_total,
		r->ooms_total == 1 ? "" : "s");
	tlm__html_th(f, "#time|#dev|kind|#requested|#device free|#reserved but free|#largest gap|#frag|verdict|at");
	fputs("<tbody>\n", f);
	char t[32];
	size_t no = r->nooms < HTML_OOMS ? r->nooms : HTML_OOMS;
	int *dv = malloc((no ? no : 1) * sizeof *dv);
	uint32_t *st = malloc((no ? no : 1) * sizeof *st);
	struct tlm__labels L = {0};
	if (dv && st) {
		for (size_t i = 0; i < no; i++) {
			dv[i] = r->ooms[i].device;
			st[i] = r->ooms[i].stack_id;
		}
		tlm__labels_make(&L, r, dv, st, no, TLM__HTML_SEP);
	}
	free(dv);
	free(st);
	for (size_t i = 0; i < r->nooms && i < HTML_OOMS; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		fprintf(f, "<tr class=\"oom-row\"><td class=\"num\">%s</td>", tlm__secs(t, sizeof t, o->time_ns));
		dev_cell(f, o->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(o->kind));
		tlm__html_bytes_cell(f, o->requested);
		tlm__html_bytes_cell(f, o->device_free);
		tlm__html_bytes_cell(f, o->reserved_free);
		tlm__html_bytes_cell(f, o->largest_free);
		fprintf(f, "<td class=\"num\">%.2f</td><td><b>%s</b></td><td>", o->frag, tlm__verdict_name(o->verdict));
		tlm__html_stack_label(f, r, o->stack_id, tlm__label(&L, i));
		fputs("</td></tr>\n", f);
		tlm__devmem_html_oom(f, r, i, 10);
	}
	tlm__labels_free(&L);
	fputs("</tbody></table>\n<p class=\"muted\"><b>fragmentation</b>: reserved-but-free plus device-free memory "
	      "would have covered the request; <b>exhaustion</b>: even all of it is less than the request.</p>\n",
	      f);
}

static void other(FILE *f, const struct tlm_report *r)
{
	fputs("<h2 id=\"other\">Other</h2>\n<table class=\"other\"><tbody>\n", f);
	fprintf(f, "<tr><td>frees of unknown addresses</td><td class=\"num\">%" PRIu64 "</td></tr>\n",
		r->unmatched_frees);
	fprintf(f, "<tr><td>allocations at a live address</td><td class=\"num\">%" PRIu64 "</td></tr>\n",
		r->inconsistencies);
	fprintf(f, "<tr><td>failed allocations (not out of memory)</td><td class=\"num\">%" PRIu64 "</td></tr>\n",
		r->failed_allocations);
	fprintf(f, "<tr><td>failed frees</td><td class=\"num\">%" PRIu64 "</td></tr>\n", r->failed_frees);
	fprintf(f, "<tr><td>memory pools created / destroyed / trimmed</td><td class=\"num\">%" PRIu64 " / %" PRIu64
		   " / %" PRIu64 "</td></tr>\n",
		r->pool_creates, r->pool_destroys, r->pool_trims);
	fprintf(f, "<tr><td>integrity errors</td><td class=\"num\">%zu</td></tr>\n", r->nerrors);
	fputs("</tbody></table>\n", f);
}

/* ---- script ------------------------------------------------------------- */

static const char script[] =
	"(function(){\n"
	"'use strict';\n"
	"function tlm__html_human(b){var u=['B','KiB','MiB','GiB','TiB','PiB'],i=0;"
	"while(b>=1023.95&&i<u.length-1){b/=1024;i++;}return i?b.toFixed(1)+' '+u[i]:b+' B';}\n"
	"var charts=document.querySelectorAll('svg.chart');\n"
	"charts.forEach(function(svg){\n"
	" var pts=(svg.getAttribute('data-points')||'').split(';').filter(Boolean).map(function(s){"
	"var v=s.split(',');return [Number(v[0]),Number(v[1]),Number(v[2])];});\n"
	" var t0=Number(svg.dataset.t0),t1=Number(svg.dataset.t1),x0=Number(svg.dataset.x0),x1=Number(svg.dataset.x1);\n"
	" var cur=svg.querySelector('.cursor'),out=svg.querySelector('.readout');\n"
	" svg.addEventListener('mousemove',function(e){\n"
	"  var r=svg.getBoundingClientRect(),x=(e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;\n"
	"  if(x<x0||x>x1){cur.setAttribute('visibility','hidden');out.textContent='';return;}\n"
	"  var t=t0+(x-x0)/(x1-x0)*(t1-t0),lo=0,hi=pts.length-1,k=-1;\n"
	"  while(lo<=hi){var m=(lo+hi)>>1;if(pts[m][0]<=t){k=m;lo=m+1;}else hi=m-1;}\n"
	"  var res=k<0?0:pts[k][1],al=k<0?0:pts[k][2];\n"
	"  cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.setAttribute('visibility','visible');\n"
	"  out.textContent=(t/1e9).toFixed(3)+'s  reserved '+tlm__html_human(res)+'  allocated '+tlm__html_human(al);\n"
	" });\n"
	" svg.addEventListener('mouseleave',function(){cur.setAttribute('visibility','hidden');out.textContent='';});\n"
	"});\n"
	"var tools=document.getElementById('tools');\n"
	"if(tools){tools.hidden=false;tools.querySelectorAll('button').forEach(function(b){"
	"b.addEventListener('click',function(){var open=b.dataset.open==='1';"
	"document.querySelectorAll('details.stack').forEach(function(d){d.open=open;});});});}\n"
	"document.body.setAttribute('data-tlm-ready','1');\n"
	"document.body.setAttribute('data-tlm-charts',String(charts.length));\n"
	"})();\n";

int tlm_report_html(struct tlm_report *r, FILE *f, char *err, size_t errlen)
{
	char why[256] = "";
	struct tlm_report_segmap *m = tlm_report_peak_segments(r, why, sizeof why);
	tlm__html_head(f, r);
	fputs("<p class=\"tools\" id=\"tools\" hidden><button type=\"button\" data-open=\"1\">expand all stacks"
	      "</button><button type=\"button\" data-open=\"0\">collapse all stacks</button></p>\n",
	      f);
	tlm__html_timelines(f, r);
	tlm__html_segmaps(f, r, m, why);
	tlm__html_active(f, r, m);
	memory_table(f, r);
	tlm__devmem_html(f, r); /* only for traces with device samples */
	tlm__owners_html(f, r);
	at_peak_table(f, r);
	site_table(f, r, "leaks", "Leaks", r->leaks, r->nleaks, LEAK,
		   "None (a leak: at least 3 survivors from one site, allocated over at least 25% of the run and "
		   "still in its second half).");
	tlm__steps_html(f, r);
	site_table(f, r, "gc-freed", "Freed by the garbage collector", r->gc_freed, r->ngc_freed, GC,
		   "None: no memory was freed while Python's cyclic garbage collector ran (this needs a Python "
		   "program recorded with Python stacks).");
	site_table(f, r, "live", "Live at end", r->live, r->nlive, LIVE, "Nothing was live at the end of the run.");
	site_table(f, r, "churn", "Churn", r->churn, r->nchurn, CHURN,
		   "None (no site freed and reallocated one size at least 10 times).");
	oom_table(f, r);
	other(f, r);
	fprintf(f, "<p class=\"muted\">tlm %s.</p>\n", TLM_VERSION);
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
	tlm_report_segmaps_free(m, r->ndevices);
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		return -1;
	}
	return 0;
}
