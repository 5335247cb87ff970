/* SPDX-License-Identifier: MIT */
/*
 * export.h - what the exports need beyond the report's sections, and the
 * export renderers: `tlm report --format html|chrome|collapsed`.
 *
 * Memory over time: each (device, kind) of a report carries its points
 * (struct tlm_report_device.points, see report.h), downsampled while
 * streaming into at most 1000 buckets (TLM_REPORT_MAX_POINTS points): a
 * bucket with one change gives one exact point; a busier one gives its
 * highest values at its first change and its last values at its last
 * change, so peaks are kept and short dips inside one bucket may not be.
 *
 * The segment map at the peak: the driver allocations (segments) live at the
 * moment each (device, kind) first reached its reserved peak. It takes a
 * second pass over the trace, up to the last peak, with the same bounded
 * memory as the first. Without an allocator tap each segment is one block
 * of unknown content: nothing is invented inside it. With one (the device
 * has blocks), the map also holds the layout: the address ranges that hold
 * reserved memory (segments; VMM mappings laid end to end, as PyTorch's
 * expandable segments make them, are one range) and the live blocks, so the
 * free gaps between blocks can be drawn.
 *
 * docs/exports.md describes the formats.
 */
#ifndef TLM_REPORT_EXPORT_H
#define TLM_REPORT_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/report.h"

/* A segment (a driver allocation), a range of addresses holding reserved
 * memory, or a block inside one. */
struct tlm_report_segment {
	uint64_t addr, size;
	uint32_t stack_id;   /* its allocation's (a range: of its first mapping) */
	int64_t time_ns;     /* when (the first of) it was allocated */
};

/* The segments of one (device, kind) at its reserved peak, by address. */
struct tlm_report_segmap {
	size_t n;
	struct tlm_report_segment *seg;
	uint64_t total;      /* their bytes (= peak_reserved) */
	/* the layout, when an allocator tap reported blocks for this device */
	bool has_blocks;
	size_t nranges, nblocks;
	struct tlm_report_segment *range, *block;   /* each by address */
	uint64_t range_bytes, block_bytes;
};

/* One map per r->devices[i] (same order). NULL with err on failure (the
 * trace cannot be read again, or out of memory). */
struct tlm_report_segmap *tlm_report_peak_segments(struct tlm_report *r, char *err, size_t errlen);
void tlm_report_segmaps_free(struct tlm_report_segmap *m, size_t n);

/* Renderers; return 0, or -1 on a write error (or, for html/collapsed peak,
 * when the second pass fails: err says why). */
int tlm_report_html(struct tlm_report *r, FILE *f, char *err, size_t errlen);
int tlm_report_chrome(struct tlm_report *r, FILE *f);
/* The pickle torch.cuda.memory._dump_snapshot() writes (render_torch_snapshot.c);
 * a third pass over the trace. On success err is "" or one line saying what
 * its bounded window left out. */
int tlm_report_torch_snapshot(struct tlm_report *r, FILE *f, char *err, size_t errlen);
/* live: live at the end; peak: the reserved peak's segments (a second pass);
 * peak-allocated: what held each allocated peak (the report's AT PEAK) */
enum tlm_collapsed_metric { TLM_COLLAPSED_LIVE = 0, TLM_COLLAPSED_PEAK = 1, TLM_COLLAPSED_PEAK_ALLOCATED = 2 };
int tlm_report_collapsed(struct tlm_report *r, FILE *f, int metric, char *err, size_t errlen);

#endif
