/* SPDX-License-Identifier: MIT */
/*
 * render.c - `tlm whatif` output: a table per device with the check of the
 * recorded replay and the recommendation (text), or the same as JSON (the
 * schema is in docs/whatif.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/text.h"
#include "whatif/whatif.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static const char *human(char *b, size_t n, uint64_t v)
{
	if (v >= GiB)
		snprintf(b, n, "%.1f GiB", (double)v / (double)GiB);
	else if (v >= MiB)
		snprintf(b, n, "%.1f MiB", (double)v / (double)MiB);
	else if (v >= 1024)
		snprintf(b, n, "%.1f KiB", (double)v / 1024.0);
	else
		snprintf(b, n, "%" PRIu64 " B", v);
	return b;
}

static void text_check(const struct tlm_wi_device *d, FILE *f)
{
	const struct tlm_wi_check *c = &d->check;
	if (!c->done)
		return;
	if (!c->mismatches)
		fprintf(f, "  check: the replay under the recorded settings reproduces the trace: %" PRIu64
			   " driver calls event for event, the allocator's totals at %" PRIu64 " block events%s%s\n",
			c->segment_events, c->block_events, c->block_events ? ", its peaks to the byte" : "",
			d->ties_by_segment ? "" : " (equal-size blocks: lowest address first, as older PyTorch)");
	else
		fprintf(f, "  check: the replay under the recorded settings DIFFERS from the trace in %" PRIu64
			   " places; first: %s\n", c->mismatches, c->first);
}

int tlm_wi_render_text(const struct tlm_wi_report *r, FILE *f)
{
	char a[32], b[32], c[32];
	tlm_text_line(f, "recorded settings: %s%s\n", r->recorded_spec[0] ? r->recorded_spec : "PyTorch's defaults",
		r->recorded_known ? "" : " (the trace does not say; assumed)");
	for (size_t i = 0; i < r->ndev; i++) {
		const struct tlm_wi_device *d = &r->dev[i];
		tlm_text_line(f, "\ndevice %d: %s of memory%s; %" PRIu64 " block requests, %" PRIu64 " frees, %" PRIu64
			   " OOM%s recorded\n", d->device, d->memory_known ? human(a, sizeof a, d->memory) : "unknown amount",
			!d->memory_known ? " (the trace does not say: OOMs cannot be predicted, use --memory)" :
			!strcmp(d->memory_source, "device") ? " (the device's size)" : "",
			d->requests, d->frees, d->recorded_ooms, d->recorded_ooms == 1 ? "" : "s");
		text_check(d, f);
		int w = 8;
		for (size_t k = 0; k < d->nres; k++)
			if ((int)strlen(d->res[k].label) > w)
				w = (int)strlen(d->res[k].label);
		tlm_text_line(f, "  %-*s %13s %5s %5s  %-22s %s\n", w, "setting", "peak reserved", "frag", "OOMs", "first OOM",
			"driver allocs/frees");
		for (size_t k = 0; k < d->nres; k++) {
			const struct tlm_wi_result *x = &d->res[k];
			if (!x->valid) {
				tlm_text_line(f, "  %-*s %s\n", w, x->label, x->note);
				continue;
			}
			char oom[48] = "-";
			if (x->nooms) {
				double s = (double)x->oom[0].time_ns / 1e9;
				snprintf(oom, sizeof oom, s >= 10 ? "%.1fs %s" : "%.3fs %s", s,
					 human(c, sizeof c, x->oom[0].request));
			}
			tlm_text_line(f, "  %-*s %13s %5.2f %5" PRIu64 "  %-22s %" PRIu64 "/%" PRIu64 "%s%s\n", w, x->label,
				human(b, sizeof b, x->peak_reserved), x->frag_at_peak, x->nooms, oom, x->driver_allocs,
				x->driver_frees, x->note[0] ? "  " : "", x->note);
		}
		tlm_text_line(f, "  => %s\n", d->recommendation);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------- */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t bad, k = tlm_text_utf8(p + i, n - i, &bad);
		if (p[i] == '"' || p[i] == '\\') {
			fprintf(f, "\\%c", p[i]);
			i++;
		} else if (p[i] < 0x80 && !k) {
			fprintf(f, "\\u%04x", p[i]);
			i++;
		} else if (!k) { /* a C1 control or ill-formed UTF-8: valid, inert JSON */
			fputs("\\ufffd", f);
			i += bad;
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
		}
	}
	fputc('"', f);
}

static void jresult(const struct tlm_wi_result *x, FILE *f)
{
	fprintf(f, "{\"label\":");
	jstr(f, x->label);
	fprintf(f, ",\"settings\":");
	jstr(f, x->spec);
	fprintf(f, ",\"modelled\":%s,\"note\":", x->valid ? "true" : "false");
	jstr(f, x->note);
	fprintf(f, ",\"peak_reserved_bytes\":%" PRIu64 ",\"peak_allocated_bytes\":%" PRIu64
		   ",\"allocated_at_peak_bytes\":%" PRIu64 ",\"largest_free_at_peak_bytes\":%" PRIu64
		   ",\"fragmentation_at_peak\":%.6f,\"peak_time_s\":%.9f,\"driver_allocs\":%" PRIu64
		   ",\"driver_frees\":%" PRIu64 ",\"alloc_retries\":%" PRIu64 ",\"ooms\":%" PRIu64
		   ",\"recorded_ooms_avoided\":%" PRIu64 ",\"oom\":[",
		x->peak_reserved, x->peak_allocated, x->allocated_at_peak, x->largest_free_at_peak, x->frag_at_peak,
		(double)x->peak_time_ns / 1e9, x->driver_allocs, x->driver_frees, x->retries, x->nooms,
		x->recorded_ooms_avoided);
	uint64_t n = x->nooms < TLM_WI_MAX_OOMS ? x->nooms : TLM_WI_MAX_OOMS;
	for (uint64_t i = 0; i < n; i++) {
		const struct tlm_wi_oom *o = &x->oom[i];
		fprintf(f, "%s{\"time_s\":%.9f,\"request_bytes\":%" PRIu64 ",\"allocated_bytes\":%" PRIu64
			   ",\"reserved_bytes\":%" PRIu64 ",\"reserved_free_bytes\":%" PRIu64
			   ",\"device_free_bytes\":%" PRIu64 ",\"verdict\":\"%s\",\"recorded\":%s}",
			i ? "," : "", (double)o->time_ns / 1e9, o->request, o->allocated, o->reserved, o->reserved_free,
			o->device_free, o->fragmentation ? "fragmentation" : "exhaustion", o->recorded ? "true" : "false");
	}
	fprintf(f, "]}");
}

int tlm_wi_render_json(const struct tlm_wi_report *r, FILE *f)
{
	fprintf(f, "{\"whatif_version\":1,\"recorded_settings\":");
	jstr(f, r->recorded_spec);
	fprintf(f, ",\"recorded_settings_known\":%s,\"devices\":[", r->recorded_known ? "true" : "false");
	for (size_t i = 0; i < r->ndev; i++) {
		const struct tlm_wi_device *d = &r->dev[i];
		const struct tlm_wi_check *c = &d->check;
		fprintf(f, "%s{\"device\":%d,\"memory_bytes\":%" PRIu64 ",\"memory_known\":%s,\"memory_source\":\"%s\",\"requests\":%" PRIu64
			   ",\"frees\":%" PRIu64 ",\"recorded_ooms\":%" PRIu64 ",\"recorded_peak_reserved_bytes\":%" PRIu64
			   ",\"recorded_peak_allocated_bytes\":%" PRIu64 ",\"check\":{\"done\":%s,\"driver_calls\":%" PRIu64
			   ",\"block_events\":%" PRIu64 ",\"mismatches\":%" PRIu64 ",\"ties_by_segment\":%s,\"first_mismatch\":",
			i ? "," : "", d->device, d->memory, d->memory_known ? "true" : "false", d->memory_source, d->requests,
			d->frees,
			d->recorded_ooms, d->recorded_peak_reserved, d->recorded_peak_allocated, c->done ? "true" : "false",
			c->segment_events, c->block_events, c->mismatches, d->ties_by_segment ? "true" : "false");
		jstr(f, c->first);
		fprintf(f, "},\"settings\":[");
		for (size_t k = 0; k < d->nres; k++) {
			if (k)
				fputc(',', f);
			jresult(&d->res[k], f);
		}
		fprintf(f, "],\"recommended\":");
		if (d->best >= 0)
			fprintf(f, "%d", d->best);
		else
			fprintf(f, "null");
		fprintf(f, ",\"recommendation\":");
		jstr(f, d->recommendation);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
	return ferror(f) ? -1 : 0;
}
