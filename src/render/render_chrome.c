/* SPDX-License-Identifier: MIT */
/*
 * render_chrome.c - the report as Chrome trace-event JSON (the "JSON Object
 * Format" that chrome://tracing and Perfetto's UI open): one counter track
 * per (device, kind) with the bytes allocated and reserved over time (the
 * report's downsampled points, export.h), and one instant event per OOM.
 * Timestamps are microseconds since the trace start, with nanosecond
 * decimals. docs/exports.md describes it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/chrome_out.h"
#include "render/export.h"
#include "encoders/json_out.h"
#include "render/render.h"

void tlm__chrome_str(FILE *f, const char *s)
{
	fputc('"', f);
	tlm__json_escape(f, s ? s : "", s ? strlen(s) : 0);
	fputc('"', f);
}

void tlm__chrome_ts(FILE *f, int64_t ns)
{
	uint64_t m = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	fprintf(f, "\"ts\":%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", m / 1000, m % 1000);
}

/* "device 0", "device 0 managed", "host pinned". */
void tlm__track_name(char *buf, size_t n, int device, int kind)
{
	if (kind == TLM_MEM_HOST_PINNED)
		snprintf(buf, n, "host pinned");
	else if (kind == TLM_MEM_MANAGED)
		snprintf(buf, n, "device %d managed", device);
	else
		snprintf(buf, n, "device %d", device);
}

void tlm__chrome_counter(FILE *f, bool *first, uint32_t pid, const char *name, int64_t t, uint64_t alloc,
			 uint64_t res)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = false;
	fputs("{\"name\":", f);
	tlm__chrome_str(f, name);
	fprintf(f, ",\"ph\":\"C\",");
	tlm__chrome_ts(f, t);
	fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":0,\"args\":{\"allocated\":%" PRIu64 ",\"reserved\":%" PRIu64 "}}", pid,
		alloc, res);
}

int tlm_report_chrome(struct tlm_report *r, FILE *f)
{
	uint32_t pid = r->pid;
	bool first = true;
	fputs("{\"traceEvents\":[", f);
	/* the process track's name: the command */
	char cmd[512] = "", *p = cmd;
	for (uint32_t i = 0; i < r->argc && p < cmd + sizeof cmd - 2; i++)
		p += snprintf(p, (size_t)(cmd + sizeof cmd - p), "%s%s", i ? " " : "", r->argv[i]);
	char pname[600];
	snprintf(pname, sizeof pname, "%s (pid %" PRIu32 ")", r->argc ? cmd : r->exe ? r->exe : "?", pid);
	fprintf(f, "\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":0,\"args\":{\"name\":", pid);
	tlm__chrome_str(f, pname);
	fputs("}}", f);
	first = false;

	for (size_t i = 0; i < r->ndevices; i++) {
		const struct tlm_report_device *d = &r->devices[i];
		char name[64];
		tlm__track_name(name, sizeof name, d->device, d->kind);
		if (!d->npoints)
			continue;
		/* from 0 at the start of the run to the last level at its end */
		if (r->have_events && r->run_first_ns < d->points[0].t_ns)
			tlm__chrome_counter(f, &first, pid, name, r->run_first_ns, 0, 0);
		for (size_t k = 0; k < d->npoints; k++)
			tlm__chrome_counter(f, &first, pid, name, d->points[k].t_ns, d->points[k].allocated,
					    d->points[k].reserved);
		const struct tlm_report_point *last = &d->points[d->npoints - 1];
		if (r->have_events && r->run_end_ns > last->t_ns)
			tlm__chrome_counter(f, &first, pid, name, r->run_end_ns, last->allocated, last->reserved);
	}
	struct tlm__labels L; /* the OOMs are one screen: labels tell them apart (labels.c) */
	tlm__labels_ooms(&L, r);
	for (size_t i = 0; i < r->nooms; i++) {
		const struct tlm_report_oom *o = &r->ooms[i];
		char name[96], track[64];
		tlm__track_name(track, sizeof track, o->device, o->kind);
		snprintf(name, sizeof name, "OOM %s", track);
		const struct tlm_frame *fr;
		const char *at = tlm_report_frames(r, o->stack_id, &fr) ? tlm__label(&L, i) : "";
		fputs(",\n{\"name\":", f);
		tlm__chrome_str(f, name);
		fputs(",\"cat\":\"oom\",\"ph\":\"i\",\"s\":\"p\",", f);
		tlm__chrome_ts(f, o->time_ns);
		fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":0,\"args\":{\"device\":%d,\"kind\":\"%s\","
			   "\"requested_bytes\":%" PRIu64 ",\"device_free_bytes\":%" PRIu64 ",\"reserved_bytes\":%" PRIu64
			   ",\"allocated_bytes\":%" PRIu64 ",\"verdict\":\"%s\",\"at\":",
			pid, o->device, tlm__mkind_name(o->kind), o->requested, o->device_free, o->reserved,
			o->allocated, tlm__verdict_name(o->verdict));
		tlm__chrome_str(f, at);
		fputs("}}", f);
	}
	tlm__labels_free(&L);
	fputs("\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"tlm\",\"trace\":", f);
	tlm__chrome_str(f, r->path);
	fprintf(f, ",\"ooms_total\":%" PRIu64 "}}\n", r->ooms_total);
	return ferror(f) ? -1 : 0;
}
