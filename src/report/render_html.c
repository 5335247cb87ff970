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
#include <signal.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "export.h"
#include "json_out.h"
#include "render.h"
#include "tlm_config.h"

#define CHART_W 960
#define CHART_H 240
#define PAD_L 78
#define PAD_R 16
#define PAD_T 14
#define PAD_B 30
#define MAP_W 960
#define MAP_ROWS 6
#define MAP_ROW_H 22
#define MAP_MAX_SEGS 20000   /* segments drawn per device; the rest as one "more" block */
#define MAP_MAX_BLOCKS 50000 /* blocks drawn per device (the rest stay in the sums) */
#define SITE_COLOURS 10      /* distinct colours for the largest sites; the rest share grey */
#define HTML_SITES 200       /* rows per table */
#define HTML_OOMS 200

/* ---- escaping ---------------------------------------------------------- */

static void html_n(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		if (c >= 0x80) {
			size_t bad = 1, k = tlm__utf8_seq(s + i, n - i, &bad);
			if (k) {
				fwrite(s + i, 1, k, f);
				i += k;
			} else {
				fputs("&#xFFFD;", f);
				i += bad;
			}
			continue;
		}
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				fputs("&#xFFFD;", f);
			else
				fputc((int)c, f);
		}
		i++;
	}
}

/* Any string from the trace, for text or a quoted attribute value. */
static void html(FILE *f, const char *s)
{
	if (s)
		html_n(f, s, strlen(s));
}

static char *human(char *buf, size_t n, uint64_t b)
{
	return tlm__human(buf, n, b);
}

static void dev_label(char *buf, size_t n, int device, int kind)
{
	char t[64];
	tlm__track_name(t, sizeof t, device, kind);
	snprintf(buf, n, "%s", t);
}

/* ---- frames ------------------------------------------------------------- */

static void frame_html(FILE *f, const struct tlm_frame *fr)
{
	fputs("<code>", f);
	if (fr->function)
		html(f, fr->function);
	else
		fprintf(f, "0x%" PRIx64, fr->ip);
	fputs("</code>", f);
	if (fr->file) {
		fputs(" <span class=\"loc\">", f);
		html(f, fr->file);
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputs("</span>", f);
	}
	if (fr->module) {
		fputs(" <span class=\"mod\">[", f);
		html(f, tlm__base(fr->module));
		if (!fr->function)
			fprintf(f, "+0x%" PRIx64, fr->module_offset);
		fputs(fr->stale ? ", changed since the run]" : "]", f);
		fputs("</span>", f);
	}
	if (fr->inlined)
		fputs(" <span class=\"inl\">(inlined)</span>", f);
}

static void short_frame(FILE *f, const struct tlm_frame *fr)
{
	if (fr->function)
		html(f, fr->function);
	else if (fr->module) {
		html(f, tlm__base(fr->module));
		fprintf(f, "+0x%" PRIx64, fr->module_offset);
	}
	else
		fprintf(f, "0x%" PRIx64, fr->ip);
	if (fr->file) {
		fputs(" (", f);
		html(f, tlm__base(fr->file));
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputc(')', f);
	}
}

/* One line naming a site: its most useful frame and that frame's caller
 * (helpers such as a checked malloc are the useful frame of many sites). */
static void site_name(FILE *f, struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *all, *fr = tlm_report_useful_frame(r, stack_id);
	size_t n = tlm_report_frames(r, stack_id, &all);
	if (!fr) {
		fputs("<i>no stack recorded</i>", f);
		return;
	}
	short_frame(f, fr);
	size_t i = (size_t)(fr - all);
	if (i + 1 < n) {
		fputs(" \xe2\x86\x90 ", f); /* U+2190 leftwards arrow: "called from" */
		short_frame(f, &all[i + 1]);
	}
}

static void stack_details(FILE *f, struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(r, stack_id, &fr);
	if (!n) {
		fputs("<i>no stack recorded</i>", f);
		return;
	}
	fputs("<details class=\"stack\"><summary>", f);
	site_name(f, r, stack_id);
	fprintf(f, " <span class=\"n\">(%zu frame%s)</span></summary><ol>", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		fputs("<li>", f);
		frame_html(f, &fr[i]);
		fputs("</li>", f);
	}
	fputs("</ol></details>", f);
}

/* ---- head --------------------------------------------------------------- */

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px;color:#1b1f24;"
	"background:#fff}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}"
	"h3{font-size:15px;margin:16px 0 4px}"
	".meta{margin:0;color:#57606a}.meta b{color:#1b1f24}.note{background:#fff8c5;padding:4px 8px}"
	"table{border-collapse:collapse;width:100%;margin:4px 0 8px}"
	"th,td{border-bottom:1px solid #eaeef2;padding:3px 6px;text-align:left;vertical-align:top}"
	"th{background:#f6f8fa;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;"
	"white-space:nowrap}"
	"details.stack summary{cursor:pointer}details.stack ol{margin:4px 0 4px 8px;padding-left:24px;"
	"font-size:12.5px}code{font:12.5px ui-monospace,monospace}.loc{color:#0550ae}.mod,.n,.inl{color:#6e7781}"
	"svg{display:block;background:#fff}.chart .grid{stroke:#eaeef2}.chart .axis{fill:#57606a;font-size:11px}"
	".series{fill:none;stroke-width:1.6}.series.reserved{stroke:#0969da}.area{fill:#0969da1f;stroke:none}"
	".series.allocated{stroke:#bf8700;stroke-dasharray:5 3}"
	".oom-marker{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:3 2}.oom-flag{fill:#cf222e}"
	".peak-dot{fill:#0969da;stroke:#fff}.cursor{stroke:#57606a;stroke-width:1}"
	".readout{font-size:12px;fill:#1b1f24}"
	".legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:12px;height:12px;"
	"vertical-align:-2px;margin-right:4px;border:1px solid #0003}"
	".segmap rect{stroke:#fff;stroke-width:.5}.muted{color:#6e7781}.empty{color:#6e7781;font-style:italic}"
	".tools button{font:inherit;margin-right:6px}";

static void head(FILE *f, struct tlm_report *r)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>tlm report: ",
	      f);
	html(f, tlm__base(r->path));
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>tlm report</h1>\n", css);
	fputs("<p class=\"meta\"><b>trace</b> ", f);
	html(f, r->path);
	fprintf(f, "</p>\n<p class=\"meta\"><b>process</b> pid %" PRIu32 ": <code>", r->pid);
	for (uint32_t i = 0; i < r->argc; i++) {
		if (i)
			fputc(' ', f);
		html(f, r->argv[i]);
	}
	fputs("</code></p>\n<p class=\"meta\"><b>run</b> ", f);
	char a[32], b[32];
	if (r->have_events)
		fprintf(f, "%s .. %s (%.3f s), %" PRIu64 " events, ", tlm__secs(a, sizeof a, r->run_first_ns),
			tlm__secs(b, sizeof b, r->run_end_ns),
			(double)((uint64_t)r->run_end_ns - (uint64_t)r->run_first_ns) / 1e9, r->events);
	else
		fputs("no events, ", f);
	fprintf(f, "exit %s, lost events %" PRIu64 "</p>\n", tlm__exit_name(r->exit), r->lost_events);
	if (r->exit == TLM_REPORT_SIGNAL) {
		const char *abbr = sigabbrev_np(r->signo);
		fprintf(f, "<p class=\"note\">The process died of signal %d%s%s; the report covers what was recorded.</p>\n",
			r->signo, abbr ? " SIG" : "", abbr ? abbr : "");
	} else if (r->exit == TLM_REPORT_TRUNCATED) {
		fputs("<p class=\"note\">The trace is truncated (", f);
		html(f, r->truncation ? r->truncation : "no END record");
		fputs("); the report covers what was recorded.</p>\n", f);
	}
	if (r->nerrors)
		fprintf(f, "<p class=\"note\">%zu integrity error%s: the sections cover the readable chunks "
			   "(<code>tlm info</code> lists them).</p>\n",
			r->nerrors, r->nerrors == 1 ? "" : "s");
	if (r->lost_events)
		fputs("<p class=\"note\">Events were lost in drop mode: every figure may be low.</p>\n", f);
}

/* ---- timelines ---------------------------------------------------------- */

struct axes {
	int64_t t0, t1;
	uint64_t ymax;
};

static double px(const struct axes *a, int64_t t)
{
	double span = (double)((uint64_t)a->t1 - (uint64_t)a->t0);
	double off = (double)(int64_t)((uint64_t)t - (uint64_t)a->t0);
	if (off < 0)
		off = 0;
	if (off > span)
		off = span;
	return PAD_L + off / span * (CHART_W - PAD_L - PAD_R);
}

static double py(const struct axes *a, uint64_t v)
{
	return PAD_T + (CHART_H - PAD_T - PAD_B) * (1.0 - (double)v / (double)a->ymax);
}

/* A step line through the points: level v from each point's time on. */
static void step_path(FILE *f, const struct axes *a, const struct tlm_report_device *d, bool allocated)
{
	fprintf(f, "M%.1f,%.1f", px(a, a->t0), py(a, 0));
	double prev = py(a, 0);
	for (size_t i = 0; i < d->npoints; i++) {
		double x = px(a, d->points[i].t_ns);
		double y = py(a, allocated ? d->points[i].allocated : d->points[i].reserved);
		fprintf(f, "L%.1f,%.1fL%.1f,%.1f", x, prev, x, y);
		prev = y;
	}
	fprintf(f, "L%.1f,%.1f", px(a, a->t1), prev);
}

/* A round step for the y grid: 1, 2 or 5 times a power of 1024 or 10. */
static uint64_t nice_max(uint64_t v)
{
	if (v < 4)
		return 4;
	uint64_t unit = 1;
	while (v / unit >= 1024 && unit < (1ULL << 60))
		unit *= 1024;
	double x = (double)v / (double)unit; /* 1 .. 1023 */
	static const double steps[] = {1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 1024};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
		if (steps[i] * 4 >= x)
			return tlm__clamp_u64(steps[i] * 4 * (double)unit); /* near 2^64: UINT64_MAX */
	return v;
}

static void timeline(FILE *f, struct tlm_report *r, const struct tlm_report_device *d)
{
	char label[64], h1[32], h2[32], h3[32], t1[32], t2[32];
	dev_label(label, sizeof label, d->device, d->kind);
	fprintf(f, "<figure class=\"timeline\" data-device=\"%d\" data-kind=\"%s\">\n<h3>", d->device,
		tlm__mkind_name(d->kind));
	html(f, label);
	fprintf(f, "</h3>\n<p class=\"meta\">peak reserved <b>%s</b> at %s, peak allocated <b>%s</b> at %s, "
		   "live at end %s in %" PRIu64 " allocation%s</p>\n",
		human(h1, sizeof h1, d->peak_reserved), tlm__secs(t1, sizeof t1, d->peak_reserved_ns),
		human(h2, sizeof h2, d->peak_allocated), tlm__secs(t2, sizeof t2, d->peak_allocated_ns),
		human(h3, sizeof h3, d->live_bytes_at_end), d->live_allocs_at_end, d->live_allocs_at_end == 1 ? "" : "s");

	struct axes a = {r->run_first_ns, r->run_end_ns, 0};
	if (d->npoints && d->points[0].t_ns < a.t0)
		a.t0 = d->points[0].t_ns;
	if (d->npoints && d->points[d->npoints - 1].t_ns > a.t1)
		a.t1 = d->points[d->npoints - 1].t_ns;
	if (a.t1 <= a.t0)
		a.t1 = a.t0 + 1;
	uint64_t top = d->peak_reserved > d->peak_allocated ? d->peak_reserved : d->peak_allocated;
	a.ymax = nice_max(top);

	/* the points again for the script's read-out: numbers only */
	fputs("<svg class=\"chart\" role=\"img\" aria-label=\"memory over time\" ", f);
	fprintf(f, "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" data-t0=\"%" PRId64 "\" data-t1=\"%" PRId64
		   "\" data-x0=\"%d\" data-x1=\"%d\" data-points=\"",
		CHART_W, CHART_H, CHART_W, CHART_H, a.t0, a.t1, PAD_L, CHART_W - PAD_R);
	for (size_t i = 0; i < d->npoints; i++)
		fprintf(f, "%s%" PRId64 ",%" PRIu64 ",%" PRIu64, i ? ";" : "", d->points[i].t_ns, d->points[i].reserved,
			d->points[i].allocated);
	fputs("\">\n", f);
	/* grid and axes */
	for (int i = 0; i <= 4; i++) {
		uint64_t v = a.ymax / 4 * (uint64_t)i;
		double y = py(&a, v);
		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", PAD_L, CHART_W - PAD_R, y,
			y);
		fprintf(f, "<text class=\"axis\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PAD_L - 6, y + 4,
			human(h1, sizeof h1, v));
	}
	/* enough decimals that the ticks (a fifth of the span apart) differ */
	double step_s = (double)((uint64_t)a.t1 - (uint64_t)a.t0) / 5e9;
	int dec = 3;
	while (dec < 9 && step_s > 0 && step_s < pow(10, -dec))
		dec++;
	for (int i = 0; i <= 5; i++) {
		int64_t t = a.t0 + (int64_t)((double)((uint64_t)a.t1 - (uint64_t)a.t0) * i / 5);
		fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.*fs</text>", px(&a, t),
			CHART_H - 10, i == 0 ? "start" : i == 5 ? "end" : "middle", dec, (double)t / 1e9);
	}
	fputs("\n<path class=\"area\" d=\"", f);
	step_path(f, &a, d, false);
	fprintf(f, "L%.1f,%.1fZ\"/>", px(&a, a.t1), py(&a, 0));
	fputs("\n<path class=\"series reserved\" d=\"", f);
	step_path(f, &a, d, false);
	fputs("\"><title>reserved</title></path>\n<path class=\"series allocated\" d=\"", f);
	step_path(f, &a, d, true);
	fputs("\"><title>allocated</title></path>\n", f);
	if (d->peak_reserved)
		fprintf(f, "<circle class=\"peak-dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>peak reserved %s at %s"
			   "</title></circle>\n",
			px(&a, d->peak_reserved_ns), py(&a, d->peak_reserved), human(h1, sizeof h1, d->peak_reserved),
			tlm__secs(t1, sizeof t1, d->peak_reserved_ns));
	size_t nooms = 0;
	for (size_t i = 0; i < r->nooms; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		if (o->device != d->device || o->kind != d->kind)
			continue;
		nooms++;
		double x = px(&a, o->time_ns);
		fprintf(f, "<g class=\"oom\"><line class=\"oom-marker\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			   "<path class=\"oom-flag\" d=\"M%.1f,%dl-5,-9h10z\"/><title>OOM at %s: requested %s, ",
			x, x, PAD_T, CHART_H - PAD_B, x, PAD_T + 9, tlm__secs(t1, sizeof t1, o->time_ns),
			human(h1, sizeof h1, o->requested));
		fprintf(f, "device free %s: %s. ", human(h2, sizeof h2, o->device_free), tlm__verdict_name(o->verdict));
		site_name(f, r, o->stack_id);
		fputs("</title></g>\n", f);
	}
	fprintf(f, "<line class=\"cursor\" x1=\"-10\" x2=\"-10\" y1=\"%d\" y2=\"%d\" visibility=\"hidden\"/>"
		   "<text class=\"readout\" x=\"%d\" y=\"%d\"></text>\n</svg>\n",
		PAD_T, CHART_H - PAD_B, PAD_L + 8, PAD_T + 12);
	fputs("<p class=\"legend\"><span><i class=\"sw\" style=\"background:#0969da\"></i>reserved (held from the "
	      "driver)</span><span><i class=\"sw\" style=\"background:#bf8700\"></i>allocated (handed out",
	      f);
	fputs(d->ext_known ? ")" : "; = reserved without an allocator tap)", f);
	fputs("</span>", f);
	if (nooms)
		fprintf(f, "<span><i class=\"sw\" style=\"background:#cf222e\"></i>%zu OOM%s</span>", nooms,
			nooms == 1 ? "" : "s");
	fputs("</p>\n</figure>\n", f);
}

static void timelines(FILE *f, struct tlm_report *r)
{
	fputs("<h2 id=\"timeline\">Memory over time</h2>\n", f);
	size_t shown = 0;
	for (size_t i = 0; i < r->ndevices; i++)
		if (r->devices[i].npoints) {
			timeline(f, r, &r->devices[i]);
			shown++;
		}
	if (!shown)
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
	else
		fputs("<p class=\"muted\">Each device's run is cut into at most 1000 intervals: an interval with "
		      "one change is exact; a busier one shows its highest value and its last, so peaks are kept "
		      "and short dips may not be.</p>\n",
		      f);
}

/* ---- segment map -------------------------------------------------------- */

static const char *const palette[SITE_COLOURS] = {
	"#0969da", "#bf8700", "#1a7f37", "#8250df", "#cf222e",
	"#1b7c83", "#bc4c00", "#4d2d8c", "#9a6700", "#d1248f",
};
#define OTHER_COLOUR "#afb8c1"
#define FREE_COLOUR "#eaeef2"

struct site_col {
	uint32_t stack_id;
	uint64_t bytes;
	size_t count;
};

static int by_sc_stack(const void *a, const void *b)
{
	const struct site_col *x = a, *y = b;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int by_sc_bytes(const void *a, const void *b)
{
	const struct site_col *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static const char *colour_of(const struct site_col *sc, size_t n, uint32_t stack_id)
{
	for (size_t i = 0; i < n && i < SITE_COLOURS; i++)
		if (sc[i].stack_id == stack_id)
			return palette[i];
	return OTHER_COLOUR;
}

static void rect(FILE *f, double pos, double w, const char *colour, bool *open_title)
{
	(void)open_title;
	const double len = MAP_W;
	while (w > 0) {
		int row = (int)(pos / len);
		if (row >= MAP_ROWS)
			row = MAP_ROWS - 1;
		double x = pos - row * len, part = w;
		if (x + part > len)
			part = len - x;
		if (part <= 0)
			break;
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>", x, row * MAP_ROW_H, part,
			MAP_ROW_H - 2, colour);
		pos += part;
		w -= part;
	}
}

/* Bytes per allocation site of n segments (or blocks), largest first. */
static struct site_col *sites_of(const struct tlm_report_segment *sg, size_t n, size_t *nsc)
{
	struct site_col *sc = calloc(n + 1, sizeof *sc);
	*nsc = 0;
	if (!sc)
		return NULL;
	for (size_t i = 0; i < n; i++)
		sc[i] = (struct site_col){sg[i].stack_id, sg[i].size, 1};
	qsort(sc, n, sizeof *sc, by_sc_stack);
	for (size_t i = 0; i < n; i++) {
		if (*nsc && sc[*nsc - 1].stack_id == sc[i].stack_id) {
			sc[*nsc - 1].bytes += sc[i].bytes;
			sc[*nsc - 1].count++;
		} else {
			sc[(*nsc)++] = sc[i];
		}
	}
	qsort(sc, *nsc, sizeof *sc, by_sc_bytes);
	return sc;
}

/* One <g> with a title: what, where, when, and the site. */
static void span_open(FILE *f, struct tlm_report *r, const char *cls, const char *what,
		      const struct tlm_report_segment *s)
{
	char h1[32], t1[32];
	fprintf(f, "<g class=\"%s\"><title>%s0x%" PRIx64 ": %s, allocated at %s. ", cls, what, s->addr,
		human(h1, sizeof h1, s->size), tlm__secs(t1, sizeof t1, s->time_ns));
	site_name(f, r, s->stack_id);
	fputs("</title>", f);
}

/* Without blocks: each segment as one piece in its site's colour. */
static void draw_segments(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m,
			  const struct site_col *sc, size_t nsc)
{
	char h1[32];
	double pos = 0, scale = m->total ? (double)MAP_W * MAP_ROWS / (double)m->total : 0;
	uint64_t rest = 0;
	size_t nrest = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct tlm_report_segment *s = &m->seg[i];
		if (i >= MAP_MAX_SEGS) {
			rest += s->size;
			nrest++;
			continue;
		}
		double w = (double)s->size * scale;
		span_open(f, r, "seg", "", s);
		rect(f, pos, w, sc ? colour_of(sc, nsc, s->stack_id) : OTHER_COLOUR, NULL);
		fputs("</g>\n", f);
		pos += w;
	}
	if (nrest) {
		fprintf(f, "<g class=\"seg\"><title>%zu more segments: %s</title>", nrest, human(h1, sizeof h1, rest));
		rect(f, pos, (double)rest * scale, OTHER_COLOUR, NULL);
		fputs("</g>\n", f);
	}
}

/* With blocks: each range of reserved memory pale (free), the blocks inside
 * it at their offsets in their site's colour. Returns the largest free gap;
 * *free gets the free bytes inside the ranges. */
static uint64_t draw_layout(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m,
			    const struct site_col *sc, size_t nsc, uint64_t *free_bytes)
{
	*free_bytes = 0;
	double pos = 0, scale = m->range_bytes ? (double)MAP_W * MAP_ROWS / (double)m->range_bytes : 0;
	uint64_t largest = 0;
	size_t j = 0, drawn = 0;
	for (size_t i = 0; i < m->nranges; i++) {
		const struct tlm_report_segment *g = &m->range[i];
		uint64_t end = g->addr + g->size, at = g->addr;
		span_open(f, r, "seg", "reserved ", g);
		rect(f, pos, (double)g->size * scale, FREE_COLOUR, NULL);
		fputs("</g>\n", f);
		while (j < m->nblocks && m->block[j].addr < g->addr)
			j++; /* blocks outside every range (allocated before tlm) */
		for (; j < m->nblocks && m->block[j].addr < end; j++) {
			const struct tlm_report_segment *b = &m->block[j];
			if (b->addr > at) {
				*free_bytes += b->addr - at;
				if (b->addr - at > largest)
					largest = b->addr - at;
			}
			if (b->addr + b->size > at)
				at = b->addr + b->size;
			if (drawn++ >= MAP_MAX_BLOCKS)
				continue;
			span_open(f, r, "blk", "block ", b);
			rect(f, pos + (double)(b->addr - g->addr) * scale, (double)b->size * scale,
			     sc ? colour_of(sc, nsc, b->stack_id) : OTHER_COLOUR, NULL);
			fputs("</g>\n", f);
		}
		if (end > at) {
			*free_bytes += end - at;
			if (end - at > largest)
				largest = end - at;
		}
		pos += (double)g->size * scale;
	}
	return largest;
}

static void segmap_one(FILE *f, struct tlm_report *r, const struct tlm_report_device *d,
		       const struct tlm_report_segmap *m)
{
	char label[64], h1[32], h2[32], h3[32], t1[32];
	dev_label(label, sizeof label, d->device, d->kind);
	fprintf(f, "<figure class=\"segmap-fig\" data-device=\"%d\" data-kind=\"%s\">\n<h3>", d->device,
		tlm__mkind_name(d->kind));
	html(f, label);
	fprintf(f, ": %s in %zu segment%s at %s</h3>\n", human(h1, sizeof h1, m->total), m->n, m->n == 1 ? "" : "s",
		tlm__secs(t1, sizeof t1, d->peak_reserved_ns));
	if (!m->has_blocks)
		fputs("<p class=\"muted\"><b>blocks unknown: no allocator tap.</b> Each segment (a driver allocation) "
		      "is drawn as one block in its site's colour; what is used or free inside it cannot be seen.</p>\n",
		      f);
	else
		fprintf(f, "<p class=\"muted\">%zu block%s (%s) inside the reserved ranges, in their site's colour; "
			   "free space inside is drawn pale.</p>\n",
			m->nblocks, m->nblocks == 1 ? "" : "s", human(h1, sizeof h1, m->block_bytes));
	/* sites of this map: bytes per stack, the largest get colours */
	size_t nsc = 0;
	struct site_col *sc = m->has_blocks ? sites_of(m->block, m->nblocks, &nsc) : sites_of(m->seg, m->n, &nsc);
	fprintf(f, "<svg class=\"segmap\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" "
		   "aria-label=\"segments at the peak\">\n",
		MAP_W, MAP_ROWS * MAP_ROW_H, MAP_W, MAP_ROWS * MAP_ROW_H);
	uint64_t largest = 0, free_bytes = 0;
	if (m->has_blocks)
		largest = draw_layout(f, r, m, sc, nsc, &free_bytes);
	else
		draw_segments(f, r, m, sc, nsc);
	fputs("</svg>\n<p class=\"legend\">", f);
	for (size_t i = 0; sc && i < nsc && i < SITE_COLOURS; i++) {
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>", palette[i]);
		site_name(f, r, sc[i].stack_id);
		fprintf(f, " <span class=\"n\">%s in %zu</span></span>", human(h2, sizeof h2, sc[i].bytes), sc[i].count);
	}
	if (nsc > SITE_COLOURS)
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%zu other sites</span>", OTHER_COLOUR,
			nsc - SITE_COLOURS);
	if (m->has_blocks)
		fprintf(f, "<span class=\"free\"><i class=\"sw\" style=\"background:%s\"></i>free inside: %s, "
			   "largest gap %s</span>",
			FREE_COLOUR, human(h2, sizeof h2, free_bytes), human(h3, sizeof h3, largest));
	fputs("</p>\n</figure>\n", f);
	free(sc);
}

static void segmaps(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m, const char *why)
{
	fputs("<h2 id=\"segments\">Segments at the peak</h2>\n<p class=\"muted\">What each device held from the "
	      "driver when it first reached its reserved peak, in address order, one colour per allocation site "
	      "(width: bytes).</p>\n",
	      f);
	if (!m) {
		fputs("<p class=\"empty\">Not available: ", f);
		html(f, why);
		fputs("</p>\n", f);
		return;
	}
	size_t shown = 0;
	for (size_t i = 0; i < r->ndevices; i++)
		if (m[i].n) {
			segmap_one(f, r, &r->devices[i], &m[i]);
			shown++;
		}
	if (!shown)
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
}

/* ---- tables ------------------------------------------------------------- */

static void th(FILE *f, const char *cols)
{
	/* cols: names separated by '|'; a leading '#' right-aligns */
	fputs("<thead><tr>", f);
	for (const char *p = cols; *p;) {
		const char *e = strchr(p, '|');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		bool num = *p == '#';
		fprintf(f, "<th%s>%.*s</th>", num ? " class=\"num\"" : "", (int)(n - num), p + num);
		p += n + (e ? 1 : 0);
	}
	fputs("</tr></thead>\n", f);
}

static void dev_cell(FILE *f, int device)
{
	if (device < 0)
		fputs("<td>host</td>", f);
	else
		fprintf(f, "<td class=\"num\">%d</td>", device);
}

static void bytes_cell(FILE *f, uint64_t b)
{
	char h[32];
	fprintf(f, "<td class=\"num\" title=\"%" PRIu64 " bytes\">%s</td>", b, human(h, sizeof h, b));
}

static void memory_table(FILE *f, const struct tlm_report *r)
{
	fputs("<h2 id=\"memory\">Memory per device and kind</h2>\n", f);
	if (!r->ndevices) {
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
		return;
	}
	fputs("<table class=\"memory\">", f);
	th(f, "#dev|kind|#peak reserved|#at|#peak allocated|#at|#live at end|#allocs|#frag|#ext");
	fputs("<tbody>\n", f);
	char t[32];
	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		fputs("<tr class=\"device\">", f);
		dev_cell(f, d->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(d->kind));
		bytes_cell(f, d->peak_reserved);
		fprintf(f, "<td class=\"num\">%s</td>", tlm__secs(t, sizeof t, d->peak_reserved_ns));
		bytes_cell(f, d->peak_allocated);
		fprintf(f, "<td class=\"num\">%s</td>", tlm__secs(t, sizeof t, d->peak_allocated_ns));
		bytes_cell(f, d->live_bytes_at_end);
		fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%.2f</td>", d->live_allocs_at_end,
			d->frag_at_peak);
		if (d->ext_known)
			fprintf(f, "<td class=\"num\">%.2f</td>", d->ext_frag_at_peak);
		else
			fputs("<td class=\"num\" title=\"blocks unknown: no allocator tap\">-</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p class=\"muted\">frag = 1 - allocated/reserved at the reserved peak; ext = 1 - "
	      "largest free gap / free inside reserved memory (- : blocks unknown without an allocator tap).</p>\n",
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
			n, n == 1 ? "" : "s", human(h, sizeof h, bytes), count, count == 1 ? "" : "s");
	else
		fprintf(f, "<p class=\"meta\">%zu site%s, %s in %" PRIu64 " allocation%s.</p>\n", n, n == 1 ? "" : "s",
			human(h, sizeof h, bytes), count, count == 1 ? "" : "s");
	fprintf(f, "<table class=\"sites %s\">", id);
	if (k == LIVE || k == GC)
		th(f, "##|#dev|#bytes|#allocations|#first|#last|allocated at");
	else if (k == LEAK)
		th(f, "##|#dev|#bytes|#allocations|#growth|#first|#last|allocated at");
	else
		th(f, "##|#dev|#size|#cycles|#per second|allocated at");
	fputs("<tbody>\n", f);
	for (size_t i = 0; i < n && i < HTML_SITES; i++) {
		fprintf(f, "<tr class=\"site\"><td class=\"num\">%zu</td>", i + 1);
		dev_cell(f, s[i].device);
		if (k == CHURN) {
			bytes_cell(f, s[i].size);
			fprintf(f, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%.1f</td>", s[i].count, s[i].rate);
		} else {
			bytes_cell(f, s[i].bytes);
			fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", s[i].count);
			if (k == LEAK)
				fprintf(f, "<td class=\"num\">+%s/s</td>", human(h, sizeof h, tlm__clamp_u64(s[i].rate)));
			fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">%s</td>", tlm__secs(a, sizeof a, s[i].first_ns),
				tlm__secs(b, sizeof b, s[i].last_ns));
		}
		fputs("<td>", f);
		stack_details(f, r, s[i].stack_id);
		fputs("</td></tr>\n", f);
	}
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
	th(f, "##|#dev|kind|#bytes|#allocations|#transient|#persistent|allocated at");
	fputs("<tbody>\n", f);
	for (size_t i = 0; i < r->nat_peak && i < HTML_SITES; i++) {
		const struct tlm_report_peak_site *s = &r->at_peak[i];
		fprintf(f, "<tr class=\"site\"><td class=\"num\">%zu</td>", i + 1);
		dev_cell(f, s->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(s->kind));
		bytes_cell(f, s->bytes);
		fprintf(f, "<td class=\"num\">%" PRIu64 "</td>", s->count);
		bytes_cell(f, s->bytes - s->persistent_bytes);
		bytes_cell(f, s->persistent_bytes);
		fputs("<td>", f);
		stack_details(f, r, s->stack_id);
		fputs("</td></tr>\n", f);
	}
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
	th(f, "#time|#dev|kind|#requested|#device free|#reserved but free|#largest gap|#frag|verdict|at");
	fputs("<tbody>\n", f);
	char t[32];
	for (size_t i = 0; i < r->nooms && i < HTML_OOMS; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		fprintf(f, "<tr class=\"oom-row\"><td class=\"num\">%s</td>", tlm__secs(t, sizeof t, o->time_ns));
		dev_cell(f, o->device);
		fprintf(f, "<td>%s</td>", tlm__mkind_name(o->kind));
		bytes_cell(f, o->requested);
		bytes_cell(f, o->device_free);
		bytes_cell(f, o->reserved_free);
		bytes_cell(f, o->largest_free);
		fprintf(f, "<td class=\"num\">%.2f</td><td><b>%s</b></td><td>", o->frag, tlm__verdict_name(o->verdict));
		stack_details(f, r, o->stack_id);
		fputs("</td></tr>\n", f);
	}
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
	"function human(b){var u=['B','KiB','MiB','GiB','TiB','PiB'],i=0;"
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
	"  out.textContent=(t/1e9).toFixed(3)+'s  reserved '+human(res)+'  allocated '+human(al);\n"
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
	head(f, r);
	fputs("<p class=\"tools\" id=\"tools\" hidden><button type=\"button\" data-open=\"1\">expand all stacks"
	      "</button><button type=\"button\" data-open=\"0\">collapse all stacks</button></p>\n",
	      f);
	timelines(f, r);
	segmaps(f, r, m, why);
	memory_table(f, r);
	at_peak_table(f, r);
	site_table(f, r, "leaks", "Leaks", r->leaks, r->nleaks, LEAK,
		   "None (a leak: at least 3 survivors from one site, allocated over at least 25% of the run and "
		   "still in its second half).");
	site_table(f, r, "gc-freed", "Freed by the garbage collector", r->gc_freed, r->ngc_freed, GC,
		   "None: no memory was freed while Python's cyclic garbage collector ran (this needs a Python "
		   "program recorded with Python stacks).");
	site_table(f, r, "live", "Live at end", r->live, r->nlive, LIVE, "Nothing was live at the end of the run.");
	site_table(f, r, "churn", "Churn", r->churn, r->nchurn, CHURN,
		   "None (no site freed and reallocated one size at least 10 times).");
	oom_table(f, r);
	other(f, r);
	fprintf(f, "<p class=\"muted\">tlm %s. Times are seconds since the trace started.</p>\n", TLM_VERSION);
	fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
	tlm_report_segmaps_free(m, r->ndevices);
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		return -1;
	}
	return 0;
}
