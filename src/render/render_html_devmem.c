/* SPDX-License-Identifier: MIT */
/*
 * render_html_devmem.c - the device-memory view (devmem.h) in the HTML
 * report: a "Device memory" table (start, reserved peak, each OOM per
 * device) and the diagnosis row under each OOM. Nothing without samples.
 * Only numbers and tlm's own words are printed, except through tlm__html().
 */
#include <inttypes.h>

#include "analysis/devmem.h"
#include "render/html.h"

static void cell(FILE *f, uint64_t b)
{
	char h[32];
	fprintf(f, "<td class=\"num\" title=\"%" PRIu64 " bytes\">%s</td>", b, tlm__html_human(h, sizeof h, b));
}

static void row(FILE *f, const struct tlm_report *r, const struct tlm_report_devview *v, const char *moment)
{
	char t[32], why[256];
	fprintf(f, "<tr class=\"devmem-row\"><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%s</td>", v->device,
		moment, tlm__secs(t, sizeof t, v->time_ns));
	cell(f, v->total);
	cell(f, v->used);
	cell(f, v->free);
	cell(f, v->tracked);
	if (v->split) {
		cell(f, v->unattributed);
		cell(f, v->others);
	} else {
		fputs("<td class=\"num\">-</td><td class=\"num\">-</td>", f);
	}
	fputs("<td>", f);
	if (!v->split) {
		char h[32];
		fprintf(f, "%s untracked or other processes: ", tlm__html_human(h, sizeof h, v->unattributed));
		tlm__html(f, tlm_report_devview_why_unsplit(v, r->pid, why, sizeof why));
		if (v->nprocs)
			fputs(". ", f);
	}
	for (size_t i = 0, k = 0; v->nvml == TLM_DM_NVML_OK && i < v->nprocs; i++) {
		char h[32];
		const struct tlm_report_devproc *p = &v->procs[i];
		fprintf(f, "%spid %" PRIu32 "%s: %s", k++ ? ", " : "", p->pid, p->pid == r->pid ? " (this process)" : "",
			p->used == TLM_DEVMEM_UNKNOWN ? "?" : tlm__html_human(h, sizeof h, p->used));
	}
	fputs("</td></tr>\n", f);
}

void tlm__devmem_html(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_devmem *m = r->devmem;
	if (!m)
		return;
	fputs("<h2 id=\"device-memory\">Device memory</h2>\n<p class=\"meta\">What the device said (cuMemGetInfo) and "
	      "NVML's per-process use, split: tracked (the reserved device memory this report counts), this "
	      "process's untracked share (CUDA context, library pools, the driver's rounding), other "
	      "processes.</p>\n<table class=\"devmem\">",
	      f);
	fputs("<thead><tr><th class=\"num\">dev</th><th>moment</th><th class=\"num\">at</th><th class=\"num\">total</th>"
	      "<th class=\"num\">used</th><th class=\"num\">free</th><th class=\"num\">tracked</th>"
	      "<th class=\"num\">untracked</th><th class=\"num\">other processes</th><th>NVML</th></tr></thead>"
	      "<tbody>\n",
	      f);
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct tlm_report_devmem_dev *d = &m->devs[i];
		if (d->have_start)
			row(f, r, &d->start, "start");
		if (d->have_peak)
			row(f, r, &d->peak, d->peak_exact ? "reserved peak" : "highest sampled");
		for (size_t k = 0, n = 0; k < r->nooms && n < HTML_OOMS; k++) {
			const struct tlm_report_devview *v = tlm_report_oom_devview(r, k);
			if (!v || v->device != d->device)
				continue;
			char mo[32];
			snprintf(mo, sizeof mo, "OOM %zu", k + 1);
			row(f, r, v, mo);
			n++;
		}
	}
	fputs("</tbody></table>\n", f);
}

void tlm__devmem_html_oom(FILE *f, const struct tlm_report *r, size_t i, int cols)
{
	const struct tlm_report_devview *v = tlm_report_oom_devview(r, i);
	if (!v)
		return;
	char line[1024];
	fprintf(f, "<tr class=\"oom-diagnosis\"><td colspan=\"%d\">device: ", cols);
	tlm__html(f, tlm_report_devview_line(v, r->pid, line, sizeof line));
	fputs("</td></tr>\n", f);
}
