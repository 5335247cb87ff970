/* SPDX-License-Identifier: MIT */
/*
 * render_html_segmap.c - the HTML report's segment map at the reserved peak:
 * segments (or, with the caching-allocator tap, their blocks and free gaps)
 * laid out by address and coloured by allocation site.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"
#include "render/export.h"

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
		tlm__html_human(h1, sizeof h1, s->size), tlm__secs(t1, sizeof t1, s->time_ns));
	tlm__html_site_name(f, r, s->stack_id);
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
		fprintf(f, "<g class=\"seg\"><title>%zu more segments: %s</title>", nrest, tlm__html_human(h1, sizeof h1, rest));
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
	tlm__html_dev_label(label, sizeof label, d->device, d->kind);
	fprintf(f, "<figure class=\"segmap-fig\" data-device=\"%d\" data-kind=\"%s\">\n<h3>", d->device,
		tlm__mkind_name(d->kind));
	tlm__html(f, label);
	fprintf(f, ": %s in %zu segment%s at %s</h3>\n", tlm__html_human(h1, sizeof h1, m->total), m->n, m->n == 1 ? "" : "s",
		tlm__secs(t1, sizeof t1, d->peak_reserved_ns));
	if (!m->has_blocks)
		fputs("<p class=\"muted\"><b>blocks unknown: no allocator tap.</b> Each segment (a driver allocation) "
		      "is drawn as one block in its site's colour; what is used or free inside it cannot be seen.</p>\n",
		      f);
	else
		fprintf(f, "<p class=\"muted\">%zu block%s (%s) inside the reserved ranges, in their site's colour; "
			   "free space inside is drawn pale.</p>\n",
			m->nblocks, m->nblocks == 1 ? "" : "s", tlm__html_human(h1, sizeof h1, m->block_bytes));
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
		tlm__html_site_name(f, r, sc[i].stack_id);
		fprintf(f, " <span class=\"n\">%s in %zu</span></span>", tlm__html_human(h2, sizeof h2, sc[i].bytes), sc[i].count);
	}
	if (nsc > SITE_COLOURS)
		fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>%zu other sites</span>", OTHER_COLOUR,
			nsc - SITE_COLOURS);
	if (m->has_blocks)
		fprintf(f, "<span class=\"free\"><i class=\"sw\" style=\"background:%s\"></i>free inside: %s, "
			   "largest gap %s</span>",
			FREE_COLOUR, tlm__html_human(h2, sizeof h2, free_bytes), tlm__html_human(h3, sizeof h3, largest));
	fputs("</p>\n</figure>\n", f);
	free(sc);
}

size_t tlm__html_segmap_colours(const struct tlm_report_segmap *m, uint32_t *stack, const char **colour, size_t max)
{
	size_t nsc = 0, k = 0;
	struct site_col *sc = m->has_blocks ? sites_of(m->block, m->nblocks, &nsc) : sites_of(m->seg, m->n, &nsc);
	for (; sc && k < nsc && k < SITE_COLOURS && k < max; k++) {
		stack[k] = sc[k].stack_id;
		colour[k] = palette[k];
	}
	free(sc);
	return k;
}

void tlm__html_segmaps(FILE *f, struct tlm_report *r, const struct tlm_report_segmap *m, const char *why)
{
	fputs("<h2 id=\"segments\">Segments at the peak</h2>\n<p class=\"muted\">What each device held from the "
	      "driver when it first reached its reserved peak, in address order, one colour per allocation site "
	      "(width: bytes).</p>\n",
	      f);
	if (!m) {
		fputs("<p class=\"empty\">Not available: ", f);
		tlm__html(f, why);
		fputs("</p>\n", f);
		return;
	}
	size_t shown = 0, *ord = malloc((r->ndevices + 1) * sizeof *ord);
	if (ord)
		tlm__html_device_order(r, ord);
	for (size_t k = 0; ord && k < r->ndevices; k++) {
		size_t i = ord[k];
		if (m[i].n && !tlm__html_device_tiny(r, i)) {
			segmap_one(f, r, &r->devices[i], &m[i]);
			shown++;
		}
	}
	free(ord);
	if (!shown)
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
}
