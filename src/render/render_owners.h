/* SPDX-License-Identifier: MIT */
/*
 * render_owners.h - who held the reserved memory (report.h: tlm_report_owner,
 * docs/report.md OWNERS) in each rendering: called by render_text.c,
 * render_summary.c, render_json.c and render_html.c.
 */
#ifndef TLM_RENDER_OWNERS_H
#define TLM_RENDER_OWNERS_H

#include <stdio.h>

#include "analysis/report.h"
#include "encoders/json_out.h"

/* The OWNERS section (a line when nothing was reserved). */
void tlm__owners_text(FILE *f, const struct tlm_report *r);
/* Under OOM i: one line of its owners' bytes (nothing when unknown). */
void tlm__owners_text_oom(FILE *f, const struct tlm_report *r, size_t i);
/* The summary's line for a device (kind device, more than one owner at its
 * reserved peak); returns the lines written (0 or 1). */
int tlm__owners_summary(FILE *f, const struct tlm_report_device *d);
/* Inside a device object: "owners" (docs/report-json.md); inside an OOM
 * object: "owners" (null when unknown). */
void tlm__owners_json(struct tlm__json *j, const struct tlm_report_device *d);
void tlm__owners_json_oom(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_oom *o);
/* The owners' table of the HTML page. */
void tlm__owners_html(FILE *f, const struct tlm_report *r);
/* What an owner is, in a few words ("PyTorch's caching allocator"). */
const char *tlm__owner_what(const char *name);
/* The (device, kind) entry an OOM belongs to; NULL when none. */
const struct tlm_report_device *tlm__owners_device(const struct tlm_report *r, int device, int kind);

#endif
