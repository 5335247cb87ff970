/* SPDX-License-Identifier: MIT */
/*
 * render_devmem.c - the device-memory view (devmem.h) in the text report
 * (DEVICE MEMORY, and the diagnosis under each OOM), the summary's OOM
 * lines and the JSON (docs/report-json.md, "device_memory"). Each prints
 * nothing when the trace has no samples, so older outputs stay as they were.
 */
#include <inttypes.h>
#include <string.h>

#include "analysis/devmem.h"
#include "encoders/json_out.h"
#include "render/render.h"

#define TEXT_DEVMEM_OOMS 10

/* Prints text after first, cut at ", " / "; " / " (" boundaries so that no
 * line is wider than TLM__WIDTH; the next lines start with cont. */
void tlm__devmem_wrap(FILE *f, const char *first, const char *cont, const char *text)
{
	const char *pre = first;
	while (*text) {
		size_t room = TLM__WIDTH > strlen(pre) ? TLM__WIDTH - strlen(pre) : 1;
		size_t len = strlen(text), cut = len;
		if (len > room) {
			cut = 0;
			for (size_t i = 1; i < room && i + 1 < len; i++)
				if ((text[i] == ',' || text[i] == ';') && text[i + 1] == ' ')
					cut = i + 1;
				else if (text[i] == ' ' && text[i + 1] == '(')
					cut = i;
			if (!cut)
				cut = room;
		}
		tlm__line(f, "%s%.*s", pre, (int)cut, text);
		text += cut;
		while (*text == ' ')
			text++;
		pre = cont;
	}
}

static void row(FILE *f, const struct tlm_report *r, const struct tlm_report_devview *v, const char *moment)
{
	char t[32], a[32], b[32], c[32], d[32], e[32], g[32];
	const char *un = "-", *ot = "-";
	if (v->split) {
		un = tlm__human(e, sizeof e, v->unattributed);
		ot = tlm__human(g, sizeof g, v->others);
	}
	tlm__line(f, "%3d %-8s %9s %10s %10s %10s %10s %11s %11s", v->device, moment, tlm__secs(t, sizeof t, v->time_ns),
		  tlm__human(a, sizeof a, v->total), tlm__human(b, sizeof b, v->used), tlm__human(c, sizeof c, v->free),
		  tlm__human(d, sizeof d, v->tracked), un, ot);
	char line[2048], why[256];
	if (!v->split) {
		snprintf(line, sizeof line, "%s untracked or other processes: %s", tlm__human(a, sizeof a, v->unattributed),
			 tlm_report_devview_why_unsplit(v, r->pid, why, sizeof why));
		tlm__devmem_wrap(f, "      ", "        ", line);
	}
	if (v->nvml != TLM_DM_NVML_OK || !v->nprocs)
		return;
	line[0] = 0;
	size_t o = 0;
	char lag[48] = "";
	if (v->nvml_lag_ns >= 1000000) /* the shim asks NVML from its writer: say when it answered */
		snprintf(lag, sizeof lag, " %.1f ms later", (double)v->nvml_lag_ns / 1e6);
	bool named = v->self_listed && !v->stale;
	if (named) {
		o += (size_t)snprintf(line, sizeof line, "NVML%s: this process %s", lag,
				      v->self_nvml == TLM_DEVMEM_UNKNOWN ? "?" : tlm__human(a, sizeof a, v->self_nvml));
		if (v->nothers)
			o += (size_t)snprintf(line + o, sizeof line - o, "; other processes:");
	} else {
		o += (size_t)snprintf(line, sizeof line, "NVML%s lists:", lag);
	}
	size_t k = 0;
	for (size_t i = 0; i < v->nprocs && o < sizeof line; i++) {
		if (named && v->procs[i].pid == r->pid)
			continue;
		o += (size_t)snprintf(line + o, sizeof line - o, "%s pid %" PRIu32 " %s", k++ ? "," : "", v->procs[i].pid,
				      v->procs[i].used == TLM_DEVMEM_UNKNOWN ? "?"
									      : tlm__human(a, sizeof a, v->procs[i].used));
	}
	tlm__devmem_wrap(f, "      ", "        ", line);
}

void tlm__devmem_text(FILE *f, struct tlm_report *r)
{
	const struct tlm_report_devmem *m = r->devmem;
	if (!m)
		return;
	tlm__line(f, "%s", "");
	tlm__line(f, "DEVICE MEMORY: what the device said (cuMemGetInfo; other processes: NVML)");
	tlm__line(f, "%3s %-8s %9s %10s %10s %10s %10s %11s %11s", "dev", "moment", "at", "total", "used", "free",
		  "tracked", "untracked", "other procs");
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct tlm_report_devmem_dev *d = &m->devs[i];
		if (d->have_start)
			row(f, r, &d->start, "start");
		if (d->have_peak)
			row(f, r, &d->peak, d->peak_exact ? "peak" : "highest");
		size_t n = 0;
		for (size_t k = 0; k < r->nooms; k++) {
			const struct tlm_report_devview *v = tlm_report_oom_devview(r, k);
			if (!v || v->device != d->device)
				continue;
			if (++n > TEXT_DEVMEM_OOMS)
				continue;
			char mo[32];
			snprintf(mo, sizeof mo, "oom %zu", k + 1);
			row(f, r, v, mo);
		}
		if (n > TEXT_DEVMEM_OOMS)
			tlm__line(f, "  ... %zu more OOMs on dev %d (tlm report --format json lists all)",
				  n - TEXT_DEVMEM_OOMS, d->device);
		if (d->have_peak && !d->peak_exact)
			tlm__line(f, "  dev %d: no sample of the reserved peak state; 'highest' is the highest state sampled",
				  d->device);
	}
	tlm__line(f, "  tracked: the reserved device memory this report counts, in that state; untracked: the rest");
	tlm__line(f, "  of this process's use (CUDA context, library pools, the driver's rounding)");
	if (m->unplaced)
		tlm__line(f, "  %" PRIu64 " sample%s not placed after their event (damaged trace) left out", m->unplaced,
			  m->unplaced == 1 ? "" : "s");
}

void tlm__devmem_text_oom(FILE *f, struct tlm_report *r, size_t i)
{
	const struct tlm_report_devview *v = tlm_report_oom_devview(r, i);
	if (!v)
		return;
	char line[1024];
	tlm_report_devview_line(v, r->pid, line, sizeof line);
	tlm__devmem_wrap(f, "      device: ", "        ", line);
}

bool tlm__devmem_summary_oom(FILE *f, struct tlm_report *r, size_t i)
{
	const struct tlm_report_devview *v = tlm_report_oom_devview(r, i);
	if (!v)
		return false;
	char line[1024];
	tlm_report_devview_short(v, r->pid, line, sizeof line);
	tlm__line(f, "    %s", line); /* one line: the summary's budget */
	return true;
}

/* ---- JSON ------------------------------------------------------------------ */

static void opt_u64(struct tlm__json *j, const char *k, bool known, uint64_t v)
{
	tlm__json_key(j, k);
	if (known)
		tlm__json_u64(j, v);
	else
		tlm__json_null(j);
}

void tlm__devmem_json_view(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_devview *v)
{
	tlm__json_obj(j);
	tlm__json_ku(j, "sample", v->sample);
	tlm__json_ki(j, "device", v->device);
	tlm__json_key(j, "why");
	tlm__json_str(j, tlm_report_devmem_why_name(v->why));
	tlm__json_key(j, "before");
	tlm__json_bool(j, v->before);
	tlm__json_ki(j, "time_ns", v->time_ns);
	tlm__json_ku(j, "total_bytes", v->total);
	tlm__json_ku(j, "free_bytes", v->free);
	tlm__json_ku(j, "used_bytes", v->used);
	tlm__json_ku(j, "tracked_bytes", v->tracked);
	opt_u64(j, "untracked_bytes", v->split, v->unattributed);
	opt_u64(j, "other_processes_bytes", v->split, v->others);
	tlm__json_ku(j, "unattributed_bytes", v->unattributed);
	tlm__json_key(j, "nvml");
	tlm__json_str(j, tlm_report_devmem_nvml_name(v->nvml));
	tlm__json_key(j, "nvml_status");
	if (v->nvml == TLM_DM_NVML_NOT_RECORDED)
		tlm__json_null(j);
	else
		tlm__json_i64(j, v->nvml_status);
	tlm__json_key(j, "nvml_lag_ns");
	if (v->nvml == TLM_DM_NVML_NOT_RECORDED)
		tlm__json_null(j);
	else
		tlm__json_i64(j, v->nvml_lag_ns);
	tlm__json_key(j, "nvml_stale");
	tlm__json_bool(j, v->stale);
	tlm__json_key(j, "this_process_listed");
	tlm__json_bool(j, v->self_listed);
	opt_u64(j, "this_process_nvml_bytes", v->self_listed && v->self_nvml != TLM_DEVMEM_UNKNOWN, v->self_nvml);
	tlm__json_key(j, "nvml_processes");
	tlm__json_arr(j);
	for (size_t i = 0; i < v->nprocs; i++) {
		tlm__json_obj(j);
		tlm__json_ku(j, "pid", v->procs[i].pid);
		opt_u64(j, "used_bytes", v->procs[i].used != TLM_DEVMEM_UNKNOWN, v->procs[i].used);
		tlm__json_key(j, "this_process");
		tlm__json_bool(j, v->procs[i].pid == r->pid);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	char line[1024];
	tlm__json_key(j, "diagnosis");
	tlm__json_str(j, tlm_report_devview_line(v, r->pid, line, sizeof line));
	tlm__json_obj_end(j);
}

void tlm__devmem_json(struct tlm__json *j, const struct tlm_report *r)
{
	const struct tlm_report_devmem *m = r->devmem;
	if (!m)
		return;
	tlm__json_key(j, "device_memory");
	tlm__json_obj(j);
	tlm__json_ku(j, "samples", m->samples);
	tlm__json_ku(j, "unplaced_samples", m->unplaced);
	tlm__json_key(j, "devices");
	tlm__json_arr(j);
	for (size_t i = 0; i < m->ndevs; i++) {
		const struct tlm_report_devmem_dev *d = &m->devs[i];
		tlm__json_obj(j);
		tlm__json_ki(j, "device", d->device);
		tlm__json_key(j, "start");
		if (d->have_start)
			tlm__devmem_json_view(j, r, &d->start);
		else
			tlm__json_null(j);
		tlm__json_key(j, "peak");
		if (d->have_peak)
			tlm__devmem_json_view(j, r, &d->peak);
		else
			tlm__json_null(j);
		tlm__json_key(j, "peak_is_reserved_peak");
		tlm__json_bool(j, d->have_peak && d->peak_exact);
		tlm__json_obj_end(j);
	}
	tlm__json_arr_end(j);
	tlm__json_obj_end(j);
}

void tlm__devmem_json_oom(struct tlm__json *j, const struct tlm_report *r, size_t i)
{
	const struct tlm_report_devview *v = tlm_report_oom_devview(r, i);
	if (!v)
		return;
	tlm__json_key(j, "device_memory");
	tlm__devmem_json_view(j, r, v);
}
