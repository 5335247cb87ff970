/* SPDX-License-Identifier: MIT */
/*
 * render_html_active.c - the HTML report's active-memory timeline: per
 * device and kind, every allocation as a band from its allocation to its
 * free, stacked as PyTorch's memory_viz stacks them (at each moment the
 * live allocations in the order they were made, the oldest at the bottom).
 * This file writes the data; active_timeline.js draws it on a canvas.
 *
 * What is drawn: the allocated layer. With the caching-allocator tap, the
 * allocator's blocks, plus every driver allocation that held no block
 * (NCCL, cuBLAS, raw CUDA: memory outside the allocator); its segments are
 * not drawn (their blocks are). Without it, the driver allocations. VMM
 * memory outside an allocator is drawn by its mappings.
 *
 * The data is embedded compactly, base64 of a byte stream of unsigned
 * LEB128 varints, the events in trace order:
 *   alloc: dt, 0, size, site      free: dt, k (the k-th latest allocation)
 * dt is the nanoseconds since the previous event (never negative: a time
 * that goes back is taken as the previous one); a free names its
 * allocation by how many allocations were made since it (k >= 1), so
 * short-lived ones cost one byte. Sites are numbered by their bytes x
 * seconds on the timeline, largest first, and listed in JSON (name,
 * colour, stack, and with the allocator tap, a note for memory outside the
 * allocator) beside the stream; the first HTML_SITES are rows of the
 * table under the canvas.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "active_timeline_js.h"
#include "analysis/alog.h"
#include "encoders/b64.h"
#include "render/html.h"
#include "encoders/json_out.h"

#define ACTIVE_MAX (2u << 20)      /* allocations read (~140 bytes each); the rest are counted */
#define ACTIVE_SITES_JSON 20000    /* sites whose stack is embedded */
#define ACTIVE_LABELS 2000         /* sites named by the report's labelling rule (labels.c) */
#define CANVAS_W 960
#define CANVAS_H 320

/* Sites the segment map does not colour take these (the map shows them grey). */
static const char *const more_colours[] = {
	"#54aeff", "#d4a72c", "#4ac26b", "#c297ff", "#ff8182", "#3fb8af", "#fb8f44", "#a475f9",
	"#e09b13", "#ff80c8", "#218bff", "#2da44e", "#8c959f", "#bf3989", "#0550ae", "#7d4e00",
};
#define NMORE (sizeof more_colours / sizeof *more_colours)

/* ---- a track: one (device, kind) ------------------------------------------------- */

struct site {
	uint32_t stack_id;
	double area;                 /* bytes x ns on the timeline: the rank */
	uint64_t bytes, count, largest;
	uint32_t rank;
	uint16_t api;                /* of its first allocation */
	bool driver;                 /* ... which was a driver allocation, not an allocator block */
};
struct ev { uint64_t seq; int64_t t; uint32_t i; bool free; };

static int by_stack(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int by_area(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	if (x->area != y->area)
		return x->area > y->area ? -1 : 1;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

static int by_seq(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int mkind_of(const struct tlm__al *a)
{
	switch (a->kind) {
	case TLM_KIND_MANAGED: return TLM_MEM_MANAGED;
	case TLM_KIND_HOST_PINNED: return TLM_MEM_HOST_PINNED;
	default: return TLM_MEM_DEVICE;
	}
}

/* Drawn on this track: its blocks and the driver memory outside any allocator. */
static bool on_track(const struct tlm__al *a, const struct tlm_report_device *d)
{
	if (a->kind == TLM_KIND_VMM_RESERVE)
		return false; /* address space only: no bytes */
	int dev = a->kind == TLM_KIND_HOST_PINNED ? -1 : a->device;
	return dev == d->device && mkind_of(a) == d->kind && !(a->flags & TLM__AL_OWNED);
}

static struct site *find_site(struct site *s, size_t n, uint32_t stack_id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s[mid].stack_id < stack_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &s[lo];
}

static void frames_text(struct tlm_report *r, struct tlm__json *j, uint32_t stack_id)
{
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(r, stack_id, &fr);
	tlm__json_arr(j);
	for (size_t i = 0; i < n; i++) {
		char buf[1024];
		tlm__frame_text(buf, sizeof buf, &fr[i]);
		tlm__json_str(j, buf);
	}
	tlm__json_arr_end(j);
}

static const char *colour_of(uint32_t stack_id, const uint32_t *cs, const char **cc, size_t nc, size_t *more)
{
	for (size_t i = 0; i < nc; i++)
		if (cs[i] == stack_id)
			return cc[i];
	return more_colours[(*more)++ % NMORE];
}

static void site_rows(FILE *f, struct tlm_report *r, int track, const struct site *s, size_t n,
		      const char *const *colour)
{
	char h1[32], h2[32];
	fputs("<table class=\"active-sites\"><thead><tr><th></th><th>site</th><th class=\"num\">allocations</th>"
	      "<th class=\"num\">bytes allocated</th><th class=\"num\">largest</th></tr></thead><tbody>\n",
	      f);
	for (size_t k = 0; k < n && k < HTML_SITES; k++) {
		fprintf(f, "<tr class=\"active-site\" id=\"active-%d-site-%zu\"><td><i class=\"sw\" style=\"background:%s\">"
			   "</i></td><td>",
			track, k, colour[k]);
		tlm__html_stack(f, r, s[k].stack_id);
		fprintf(f, "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
			s[k].count, tlm__html_human(h1, sizeof h1, s[k].bytes), tlm__html_human(h2, sizeof h2, s[k].largest));
	}
	fputs("</tbody></table>\n", f);
	if (n > HTML_SITES)
		fprintf(f, "<p class=\"muted\">The first %d of %zu sites.</p>\n", HTML_SITES, n);
}

/* 1 when drawn, 0 when the track has no allocation, -1 without memory. */
static int track(FILE *f, struct tlm_report *r, int ti, const struct tlm_report_device *d,
		 const struct tlm_report_segmap *m, const struct tlm__alog *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		n += on_track(&l->e[i], d);
	if (!n)
		return 0;
	uint32_t *idx = malloc(n * sizeof *idx);
	struct site *s = calloc(n, sizeof *s);
	struct ev *ev = malloc(2 * n * sizeof *ev);
	uint32_t *rank_of = NULL;
	const char **colour = NULL;
	int rc = -1;
	if (!idx || !s || !ev)
		goto out;
	n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (on_track(&l->e[i], d)) {
			idx[n] = (uint32_t)i;
			s[n].stack_id = l->e[i].stack_id;
			n++;
		}
	/* sites: distinct stacks, ranked by bytes x time on the timeline */
	qsort(s, n, sizeof *s, by_stack);
	size_t ns = 0;
	for (size_t i = 0; i < n; i++)
		if (!ns || s[ns - 1].stack_id != s[i].stack_id)
			s[ns++] = (struct site){.stack_id = s[i].stack_id};
	int64_t end = r->run_end_ns > l->end_ns ? r->run_end_ns : l->end_ns;
	uint64_t peak = 0, cur = 0;
	size_t nev = 0;
	bool tapped = false; /* the allocator tap reported blocks here */
	for (size_t k = 0; k < n; k++) {
		const struct tlm__al *a = &l->e[idx[k]];
		struct site *st = find_site(s, ns, a->stack_id);
		int64_t tf = (a->flags & TLM__AL_LIVE) ? end : a->t_free;
		/* unsigned: a hostile trace's times may be 2^63 apart (no signed overflow) */
		st->area += (double)a->size * (double)(tf > a->t_alloc ? (uint64_t)tf - (uint64_t)a->t_alloc : 0);
		if (!st->count) {
			st->api = a->api;
			st->driver = a->kind != TLM_KIND_BLOCK;
		}
		tapped |= a->kind == TLM_KIND_BLOCK;
		st->bytes += a->size;
		st->count++;
		if (a->size > st->largest)
			st->largest = a->size;
		ev[nev++] = (struct ev){a->seq_alloc, a->t_alloc, (uint32_t)k, false};
		if (!(a->flags & TLM__AL_LIVE))
			ev[nev++] = (struct ev){a->seq_free, a->t_free, (uint32_t)k, true};
	}
	rank_of = malloc(ns * sizeof *rank_of);
	colour = malloc(ns * sizeof *colour);
	if (!rank_of || !colour)
		goto out;
	/* colours by rank; rank_of maps the stack-sorted index to the rank */
	struct site *byrank = malloc(ns * sizeof *byrank);
	if (!byrank)
		goto out;
	for (size_t i = 0; i < ns; i++)
		s[i].rank = (uint32_t)i;
	memcpy(byrank, s, ns * sizeof *s);
	qsort(byrank, ns, sizeof *byrank, by_area);
	for (size_t k = 0; k < ns; k++)
		rank_of[byrank[k].rank] = (uint32_t)k;
	uint32_t cs[SITE_COLOURS];
	const char *cc[SITE_COLOURS];
	size_t nc = m ? tlm__html_segmap_colours(m, cs, cc, SITE_COLOURS) : 0, more = 0;
	for (size_t k = 0; k < ns; k++)
		colour[k] = colour_of(byrank[k].stack_id, cs, cc, nc, &more);
	qsort(ev, nev, sizeof *ev, by_seq);

	char label[64], h[32];
	tlm__html_dev_label(label, sizeof label, d->device, d->kind);
	fprintf(f, "<figure class=\"active\" id=\"active-%d\" data-n=\"%zu\" data-t0=\"%" PRId64 "\" data-t1=\"%" PRId64
		   "\">\n<h3>",
		ti, n, r->run_first_ns, end);
	tlm__html(f, label);
	fprintf(f, ": %zu allocation%s, %zu site%s</h3>\n", n, n == 1 ? "" : "s", ns, ns == 1 ? "" : "s");
	fprintf(f, "<div class=\"active-view\"><canvas width=\"%d\" height=\"%d\" aria-label=\"active memory of ", CANVAS_W,
		CANVAS_H);
	tlm__html(f, label);
	fputs("\"></canvas><div class=\"active-tip\" hidden></div></div>\n"
	      "<p class=\"active-info muted\">wheel: zoom in time, drag: pan, double-click: the whole run; hover an "
	      "allocation for its size, times and stack, click to pin it and find its site below.</p>\n",
	      f);
	/* the stream */
	fputs("<script type=\"application/octet-stream\" class=\"active-data\">", f);
	struct tlm__b64 w = {.f = f};
	int64_t last = 0; /* times from the trace start: the clock of the axis (data-t0, data-t1) and of the text */
	for (size_t e = 0, made = 0; e < nev; e++) {
		int64_t t = ev[e].t > last ? ev[e].t : last;
		tlm__b64_varint(&w, (uint64_t)(t - last));
		last = t;
		const struct tlm__al *a = &l->e[idx[ev[e].i]];
		if (!ev[e].free) {
			tlm__b64_varint(&w, 0);
			tlm__b64_varint(&w, a->size);
			tlm__b64_varint(&w, rank_of[find_site(s, ns, a->stack_id) - s]);
			made++;
			cur += a->size;
			if (cur > peak)
				peak = cur;
		} else {
			tlm__b64_varint(&w, made - ev[e].i); /* allocations are numbered in the order they were made */
			cur -= a->size;
		}
	}
	tlm__b64_end(&w);
	fputs("</script>\n<script type=\"application/json\" class=\"active-sites\">", f);
	struct tlm__json j;
	tlm__json_init(&j, f);
	/* names by the report's labelling rule for the sites shown together (the
	 * first ACTIVE_LABELS); the rest by their most useful frame */
	size_t nl = ns < ACTIVE_LABELS ? ns : ACTIVE_LABELS;
	int *ldev = malloc((nl + 1) * sizeof *ldev);
	uint32_t *lstack = malloc((nl + 1) * sizeof *lstack);
	struct tlm__labels L = {0};
	bool labelled = false;
	if (ldev && lstack) {
		for (size_t k = 0; k < nl; k++) {
			ldev[k] = d->device;
			lstack[k] = byrank[k].stack_id;
		}
		labelled = !tlm__labels_make(&L, r, ldev, lstack, nl, TLM__HTML_SEP);
	}
	free(ldev);
	free(lstack);
	tlm__json_arr(&j);
	for (size_t k = 0; k < ns; k++) {
		tlm__json_arr(&j);
		const struct tlm_frame *fr = tlm_report_useful_frame(r, byrank[k].stack_id);
		char buf[1024] = "no stack recorded";
		if (labelled && k < nl)
			snprintf(buf, sizeof buf, "%s", tlm__label(&L, k));
		else if (fr)
			tlm__frame_text(buf, sizeof buf, fr);
		tlm__json_str(&j, buf);
		tlm__json_str(&j, colour[k]);
		if (k < ACTIVE_SITES_JSON)
			frames_text(r, &j, byrank[k].stack_id);
		else
			tlm__json_null(&j);
		if (tapped && byrank[k].driver) { /* memory the allocator does not manage */
			char note[96];
			snprintf(note, sizeof note, "outside the allocator (%s)", tlm_api_name(byrank[k].api));
			tlm__json_str(&j, note);
		}
		tlm__json_arr_end(&j);
	}
	tlm__json_arr_end(&j);
	if (labelled)
		tlm__labels_free(&L);
	fprintf(f, "</script>\n<p class=\"muted\">Highest total: %s.</p>\n", tlm__html_human(h, sizeof h, peak));
	site_rows(f, r, ti, byrank, ns, colour);
	fputs("</figure>\n", f);
	free(byrank);
	rc = 1;
out:
	free(idx);
	free(s);
	free(ev);
	free(rank_of);
	free(colour);
	return rc;
}

static const char css[] =
	".active-view{position:relative}.active-view canvas{width:100%;height:auto;cursor:crosshair;"
	"border:1px solid #d0d7de}"
	".active-tip{position:absolute;z-index:2;max-width:380px;background:#fff;border:1px solid #8c959f;"
	"box-shadow:0 2px 8px #0003;padding:4px 6px;font:12px/1.35 ui-monospace,monospace;white-space:pre-wrap;"
	"pointer-events:none}"
	"tr.hit td{background:#fff8c5}";

void tlm__html_active(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m)
{
	fprintf(f, "<style>%s</style>\n", css);
	fputs("<h2 id=\"active\">Active memory over time</h2>\n<p class=\"muted\">Each allocation is a band from its "
	      "allocation to its free, as tall as its bytes; at each moment the live allocations are stacked in the "
	      "order they were made, the oldest at the bottom (as PyTorch's memory_viz stacks them). Colours are "
	      "the sites' colours in the segment map; other sites have colours of their own. Each pixel column "
	      "shows the moment of its highest total.</p>\n",
	      f);
	struct tlm__alog l;
	char err[256];
	if (tlm__alog_build(r, ACTIVE_MAX, false, &l, err, sizeof err)) {
		fputs("<p class=\"empty\">Not available: ", f);
		tlm__html(f, err);
		fputs("</p>\n", f);
		return;
	}
	if (l.dropped)
		fprintf(f, "<p class=\"note\">%" PRIu64 " allocations past the first %u are not drawn.</p>\n", l.dropped,
			ACTIVE_MAX);
	int shown = 0;
	size_t *ord = malloc((r->ndevices + 1) * sizeof *ord);
	if (ord)
		tlm__html_device_order(r, ord);
	for (size_t k = 0; ord && k < r->ndevices; k++) {
		size_t i = ord[k];
		if (tlm__html_device_tiny(r, i))
			continue; /* folded in the timelines above */
		int rc = track(f, r, shown, &r->devices[i], m ? &m[i] : NULL, &l);
		if (rc < 0) {
			fputs("<p class=\"empty\">Not available: out of memory.</p>\n", f);
			break;
		}
		shown += rc;
	}
	free(ord);
	if (!shown)
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
	tlm__alog_free(&l);
	fprintf(f, "<script>\n%s</script>\n", tlm__active_js);
}
