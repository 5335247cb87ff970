/* SPDX-License-Identifier: MIT */
/*
 * render_collapsed.c - folded stacks ("collapsed" format) for flamegraph.pl,
 * speedscope, inferno: one line per allocation site,
 *   device 0;main (app.c:80);train_step (app.c:52);record_loss (app.c:40) 2097152
 * the outermost frame first, after a root frame naming the device, then the
 * bytes. metric live: the bytes live at the end of the run (the report's
 * live_at_end); metric peak: the bytes live when each (device, kind) first
 * reached its reserved peak (export.h: a second pass over the trace);
 * metric peak-allocated: the report's AT PEAK, what held each (device,
 * kind)'s allocated peak (tensors by Python line with PyTorch's tap).
 * Frames read "function (file:line)"; ';' and control characters in names
 * are replaced so that a name can never split or end a line.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "render/export.h"
#include "render/render.h"

/* Writes s with ';' -> ':' (the format's separator), and every byte the
 * one rule of src/common/text.h does not show (controls, C1 controls,
 * ill-formed UTF-8) as '?'; printable UTF-8 is kept (flame graphs show it). */
static void clean(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t bad, k = tlm_text_utf8(p + i, n - i, &bad);
		if (!k) {
			fputc('?', f);
			i += bad;
		} else if (p[i] == ';') {
			fputc(':', f);
			i++;
		} else {
			fwrite(p + i, 1, k, f);
			i += k;
		}
	}
}

static void frame(FILE *f, const struct tlm_frame *fr)
{
	char buf[64];
	if (fr->function) {
		clean(f, fr->function);
		if (fr->file) {
			fputs(" (", f);
			clean(f, tlm__base(fr->file));
			if (fr->line > 0)
				fprintf(f, ":%d", fr->line);
			fputc(')', f);
		}
	} else if (fr->module) {
		clean(f, tlm__base(fr->module));
		snprintf(buf, sizeof buf, "+0x%" PRIx64, fr->module_offset);
		fputs(buf, f);
	} else {
		snprintf(buf, sizeof buf, "0x%" PRIx64, fr->ip);
		fputs(buf, f);
	}
}

static void line(FILE *f, struct tlm_report *r, int device, int kind, uint32_t stack_id, uint64_t bytes)
{
	if (!bytes)
		return;
	char root[64];
	tlm__track_name(root, sizeof root, device, kind);
	fputs(root, f);
	const struct tlm_frame *fr;
	size_t n = tlm_report_frames(r, stack_id, &fr);
	if (!n)
		fputs(";[no stack recorded]", f);
	for (size_t i = n; i-- > 0;) {
		fputc(';', f);
		frame(f, &fr[i]);
	}
	fprintf(f, " %" PRIu64 "\n", bytes);
}

static int by_stack(const void *a, const void *b)
{
	const struct tlm_report_segment *x = a, *y = b;
	return (x->stack_id > y->stack_id) - (x->stack_id < y->stack_id);
}

int tlm_report_collapsed(struct tlm_report *r, FILE *f, int metric, char *err, size_t errlen)
{
	if (metric == TLM_COLLAPSED_PEAK_ALLOCATED) {
		for (size_t i = 0; i < r->nat_peak; i++)
			line(f, r, r->at_peak[i].device, r->at_peak[i].kind, r->at_peak[i].stack_id, r->at_peak[i].bytes);
		return ferror(f) ? -1 : 0;
	}
	if (metric == TLM_COLLAPSED_LIVE) {
		for (size_t i = 0; i < r->nlive; i++) {
			const struct tlm_report_site *s = &r->live[i];
			int kind = TLM_MEM_DEVICE;
			/* live sites are per device; host memory is device -1 */
			if (s->device < 0)
				kind = TLM_MEM_HOST_PINNED;
			line(f, r, s->device, kind, s->stack_id, s->bytes);
		}
		return ferror(f) ? -1 : 0;
	}
	struct tlm_report_segmap *m = tlm_report_peak_segments(r, err, errlen);
	if (!m)
		return -1;
	for (size_t i = 0; i < r->ndevices; i++) {
		struct tlm_report_segmap *s = &m[i];
		if (s->n) /* a device that never reserved anything has no map */
			qsort(s->seg, s->n, sizeof *s->seg, by_stack);
		for (size_t k = 0; k < s->n;) {
			uint64_t bytes = 0;
			size_t j = k;
			for (; j < s->n && s->seg[j].stack_id == s->seg[k].stack_id; j++)
				bytes = bytes + s->seg[j].size < bytes ? UINT64_MAX : bytes + s->seg[j].size;
			line(f, r, r->devices[i].device, r->devices[i].kind, s->seg[k].stack_id, bytes);
			k = j;
		}
	}
	tlm_report_segmaps_free(m, r->ndevices);
	if (ferror(f)) {
		snprintf(err, errlen, "write error");
		return -1;
	}
	return 0;
}
