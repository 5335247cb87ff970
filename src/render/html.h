/* SPDX-License-Identifier: MIT */
/*
 * html.h - what the parts of the HTML report share (render_html*.c): the
 * escaping every string from the trace goes through, frame and site names,
 * the page head, and the sections each part draws. Internal to src/render.
 */
#ifndef TLM_REPORT_HTML_H
#define TLM_REPORT_HTML_H

#include <stdio.h>

#include "render/export.h"
#include "render/render.h"

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

/* Any string from the trace, for text or a quoted attribute value: &, <, >,
 * " and ' become entities; control characters and invalid UTF-8 U+FFFD. */
void tlm__html(FILE *f, const char *s);
char *tlm__html_human(char *buf, size_t n, uint64_t b);
void tlm__html_th(FILE *f, const char *cols);        /* <thead>: 'a|#b' (# = numeric) */
void tlm__html_bytes_cell(FILE *f, uint64_t b);     /* <td class=num> human, exact title */
void tlm__html_dev_label(char *buf, size_t n, int device, int kind);
/* The charts' order of r->devices: by peak reserved, largest first (ord gets
 * r->ndevices indices); a tiny one (under 1 MiB and 1/100 of the largest)
 * gets one line instead of a chart (tlm__html_folded). */
void tlm__html_device_order(const struct tlm_report *r, size_t *ord);
bool tlm__html_device_tiny(const struct tlm_report *r, size_t i);
void tlm__html_folded(FILE *f, const struct tlm_report *r, size_t i);
/* One line naming a site, and its whole stack in an expandable element. */
void tlm__html_site_name(FILE *f, struct tlm_report *r, uint32_t stack_id);
void tlm__html_stack(FILE *f, struct tlm_report *r, uint32_t stack_id);
/* The same with the label its table gave it (labels.c; NULL: its own). */
void tlm__html_stack_label(FILE *f, struct tlm_report *r, uint32_t stack_id, const char *label);
#define TLM__HTML_SEP " \xe2\x86\x90 " /* U+2190 leftwards arrow: "called from" */
/* <!doctype html> up to <body>: the Content Security Policy that forbids any
 * external resource, the title (escaped), the shared CSS and more_css. */
void tlm__html_doc_head(FILE *f, const char *title, const char *more_css);
/* <!doctype html> up to the run's header. */
void tlm__html_head(FILE *f, struct tlm_report *r);

/* Sections: per-device timelines (render_html_timeline.c) and the segment
 * map at the reserved peak (render_html_segmap.c). */
void tlm__html_timelines(FILE *f, struct tlm_report *r);
void tlm__html_segmaps(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m, const char *why);
/* The sites the segment map m gives a colour of their own (at most max,
 * largest first) and those colours, so other views colour them alike. */
size_t tlm__html_segmap_colours(const struct tlm_report_segmap *m, uint32_t *stack, const char **colour, size_t max);
/* The active-memory timeline per device (render_html_active.c): each
 * allocation a band from allocation to free, drawn on a canvas by its
 * script; m (may be NULL) gives the sites' colours. */
void tlm__html_active(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m);

#endif
