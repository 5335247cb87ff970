/* SPDX-License-Identifier: MIT */
/*
 * html_base.c - the pieces every part of the HTML report uses: escaping of
 * trace strings, frame and site names, expandable stacks, the page head
 * (inline CSS under a Content Security Policy that forbids any external
 * resource).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"
#include "render/export.h"
#include "encoders/json_out.h"
#include "tlm_config.h"

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
void tlm__html(FILE *f, const char *s)
{
	if (s)
		html_n(f, s, strlen(s));
}

char *tlm__html_human(char *buf, size_t n, uint64_t b)
{
	return tlm__human(buf, n, b);
}

void tlm__html_dev_label(char *buf, size_t n, int device, int kind)
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
		tlm__html(f, fr->function);
	else
		fprintf(f, "0x%" PRIx64, fr->ip);
	fputs("</code>", f);
	if (fr->file) {
		fputs(" <span class=\"loc\">", f);
		tlm__html(f, fr->file);
		if (fr->line > 0)
			fprintf(f, ":%d", fr->line);
		fputs("</span>", f);
	}
	if (fr->module) {
		fputs(" <span class=\"mod\">[", f);
		tlm__html(f, tlm__base(fr->module));
		if (!fr->function)
			fprintf(f, "+0x%" PRIx64, fr->module_offset);
		fputs(fr->stale ? ", changed since the run]" : "]", f);
		fputs("</span>", f);
	}
	if (fr->inlined)
		fputs(" <span class=\"inl\">(inlined)</span>", f);
}

/* One line naming a site on its own (a chart's or segment map's legend):
 * the labels.c rule with this site as the screen. Tables label their rows
 * together (tlm__html_stack_label). */
void tlm__html_site_name(FILE *f, struct tlm_report *r, uint32_t stack_id)
{
	const struct tlm_frame *all;
	if (!tlm_report_frames(r, stack_id, &all)) {
		fputs("<i>no stack recorded</i>", f);
		return;
	}
	struct tlm__labels L;
	int dev = 0;
	tlm__labels_make(&L, r, &dev, &stack_id, 1, TLM__HTML_SEP);
	tlm__html(f, tlm__label(&L, 0));
	tlm__labels_free(&L);
}

void tlm__html_stack(FILE *f, struct tlm_report *r, uint32_t stack_id)
{
	tlm__html_stack_label(f, r, stack_id, NULL);
}

void tlm__html_stack_label(FILE *f, struct tlm_report *r, uint32_t stack_id, const char *label)
{
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(r, stack_id, &fr);
	if (!n) {
		fputs("<i>no stack recorded</i>", f);
		return;
	}
	fputs("<details class=\"stack\"><summary>", f);
	if (label)
		tlm__html(f, label);
	else
		tlm__html_site_name(f, r, stack_id);
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

void tlm__html_doc_head(FILE *f, const char *title, const char *more_css)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>",
	      f);
	tlm__html(f, title);
	fprintf(f, "</title>\n<style>%s%s</style>\n</head>\n<body>\n", css, more_css ? more_css : "");
}

void tlm__html_head(FILE *f, struct tlm_report *r)
{
	char title[320];
	snprintf(title, sizeof title, "tlm report: %s", tlm__base(r->path));
	tlm__html_doc_head(f, title, NULL);
	fputs("<h1>tlm report</h1>\n", f);
	fputs("<p class=\"meta\"><b>trace</b> ", f);
	tlm__html(f, r->path);
	fprintf(f, "</p>\n<p class=\"meta\"><b>process</b> pid %" PRIu32 ": <code>", r->pid);
	for (uint32_t i = 0; i < r->argc; i++) {
		if (i)
			fputc(' ', f);
		tlm__html(f, r->argv[i]);
	}
	fputs("</code></p>\n<p class=\"meta\"><b>run</b> ", f);
	char a[32], b[32];
	if (r->have_events)
		fprintf(f, "ended at %s, first event at %s, %" PRIu64 " events, ", tlm__secs(b, sizeof b, r->run_end_ns),
			tlm__secs(a, sizeof a, r->run_first_ns), r->events);
	else
		fputs("no events, ", f);
	fprintf(f, "exit %s, lost events %" PRIu64 "</p>\n", tlm__exit_name(r->exit), r->lost_events);
	fputs("<p class=\"meta\"><b>times</b> " TLM__TIME_ORIGIN "</p>\n", f);
	if (r->exit == TLM_REPORT_SIGNAL) {
		const char *abbr = sigabbrev_np(r->signo);
		fprintf(f, "<p class=\"note\">The process died of signal %d%s%s; the report covers what was recorded.</p>\n",
			r->signo, abbr ? " SIG" : "", abbr ? abbr : "");
	} else if (r->exit == TLM_REPORT_TRUNCATED) {
		fputs("<p class=\"note\">The trace is truncated (", f);
		tlm__html(f, r->truncation ? r->truncation : "no END record");
		fputs("); the report covers what was recorded.</p>\n", f);
	}
	if (r->nerrors)
		fprintf(f, "<p class=\"note\">%zu integrity error%s: the sections cover the readable chunks "
			   "(<code>tlm info</code> lists them).</p>\n",
			r->nerrors, r->nerrors == 1 ? "" : "s");
	if (r->lost_events)
		fputs("<p class=\"note\">Events were lost in drop mode: every figure may be low.</p>\n", f);
}

/* A table head: names separated by '|'; a leading '#' right-aligns. */
void tlm__html_th(FILE *f, const char *cols)
{
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

/* A right-aligned cell of bytes, human-readable, exact in its title. */
void tlm__html_bytes_cell(FILE *f, uint64_t b)
{
	char h[32];
	fprintf(f, "<td class=\"num\" title=\"%" PRIu64 " bytes\">%s</td>", b, tlm__html_human(h, sizeof h, b));
}

static int by_peak(const void *a, const void *b, void *ctx)
{
	const struct tlm_report *r = ctx;
	const struct tlm_report_device *x = &r->devices[*(const size_t *)a], *y = &r->devices[*(const size_t *)b];
	if (x->peak_reserved != y->peak_reserved)
		return x->peak_reserved > y->peak_reserved ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

void tlm__html_device_order(const struct tlm_report *r, size_t *ord)
{
	for (size_t i = 0; i < r->ndevices; i++)
		ord[i] = i;
	qsort_r(ord, r->ndevices, sizeof *ord, by_peak, (void *)r);
}

bool tlm__html_device_tiny(const struct tlm_report *r, size_t i)
{
	uint64_t top = 0;
	for (size_t k = 0; k < r->ndevices; k++)
		if (r->devices[k].peak_reserved > top)
			top = r->devices[k].peak_reserved;
	uint64_t p = r->devices[i].peak_reserved;
	return r->ndevices > 1 && p < (1u << 20) && p * 100 < top;
}

void tlm__html_folded(FILE *f, const struct tlm_report *r, size_t i)
{
	char dl[64], a[32];
	tlm__html_dev_label(dl, sizeof dl, r->devices[i].device, r->devices[i].kind);
	fprintf(f, "<p class=\"muted folded\">%s: peak %s, too small beside the others to chart.</p>\n", dl,
		tlm__html_human(a, sizeof a, r->devices[i].peak_reserved));
}
