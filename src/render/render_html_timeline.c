/* SPDX-License-Identifier: MIT */
/*
 * render_html_timeline.c - the HTML report's timelines: per device and kind,
 * bytes allocated and reserved over time as SVG step lines, with OOM markers
 * and the points the page's script reads under the pointer.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/html.h"
#include "render/export.h"

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
	tlm__html_dev_label(label, sizeof label, d->device, d->kind);
	fprintf(f, "<figure class=\"timeline\" data-device=\"%d\" data-kind=\"%s\">\n<h3>", d->device,
		tlm__mkind_name(d->kind));
	tlm__html(f, label);
	fprintf(f, "</h3>\n<p class=\"meta\">peak reserved <b>%s</b> at %s, peak allocated <b>%s</b> at %s, "
		   "live at end %s in %" PRIu64 " allocation%s</p>\n",
		tlm__html_human(h1, sizeof h1, d->peak_reserved), tlm__secs(t1, sizeof t1, d->peak_reserved_ns),
		tlm__html_human(h2, sizeof h2, d->peak_allocated), tlm__secs(t2, sizeof t2, d->peak_allocated_ns),
		tlm__html_human(h3, sizeof h3, d->live_bytes_at_end), d->live_allocs_at_end, d->live_allocs_at_end == 1 ? "" : "s");

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
			tlm__html_human(h1, sizeof h1, v));
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
			px(&a, d->peak_reserved_ns), py(&a, d->peak_reserved), tlm__html_human(h1, sizeof h1, d->peak_reserved),
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
			tlm__html_human(h1, sizeof h1, o->requested));
		fprintf(f, "device free %s: %s. ", tlm__html_human(h2, sizeof h2, o->device_free), tlm__verdict_name(o->verdict));
		tlm__html_site_name(f, r, o->stack_id);
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

void tlm__html_timelines(FILE *f, struct tlm_report *r)
{
	fputs("<h2 id=\"timeline\">Memory over time</h2>\n", f);
	size_t shown = 0, *ord = malloc((r->ndevices + 1) * sizeof *ord);
	if (ord)
		tlm__html_device_order(r, ord);
	for (size_t k = 0; ord && k < r->ndevices; k++) {
		size_t i = ord[k];
		if (!r->devices[i].npoints)
			continue;
		if (tlm__html_device_tiny(r, i))
			tlm__html_folded(f, r, i);
		else
			timeline(f, r, &r->devices[i]);
		shown++;
	}
	free(ord);
	if (!shown)
		fputs("<p class=\"empty\">No memory was allocated.</p>\n", f);
	else
		fputs("<p class=\"muted\">Each device's run is cut into at most 1000 intervals: an interval with "
		      "one change is exact; a busier one shows its highest value and its last, so peaks are kept "
		      "and short dips may not be.</p>\n",
		      f);
}
