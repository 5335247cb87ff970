/* SPDX-License-Identifier: MIT */
/*
 * render.h - helpers shared by the text, summary and JSON renderers: names,
 * human units, and a line writer that keeps every line within the width.
 */
#ifndef TLM_REPORT_RENDER_H
#define TLM_REPORT_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/report.h"

#define TLM__WIDTH 100 /* columns of text output, never wider */

const char *tlm__mkind_name(int k);
const char *tlm__exit_name(int e);
const char *tlm__verdict_name(int v);
/* "raised", "recovered", "fatal"; the outcome said in one line; the counts
 * ("2 raised, 1 fatal; 1 recovered (...)"): names.c */
const char *tlm__outcome_name(int o);
void tlm__outcome_text(char *buf, size_t n, const struct tlm_report *r, const struct tlm_report_oom *o);
void tlm__outcome_counts(char *buf, size_t n, const struct tlm_report *r);

/* "512 B", "1.5 KiB", "12.0 MiB", "3.2 GiB" (one decimal). */
char *tlm__human(char *buf, size_t n, uint64_t bytes);
/* Two sizes shown side by side (before -> after): as tlm__human, but when
 * they differ and would print the same, with more decimals in one unit
 * (up to 4), else in bytes, so a change is never between equal figures. */
void tlm__human_pair(char *xb, size_t nx, char *yb, size_t ny, uint64_t x, uint64_t y);
/* a rate as bytes for tlm__human: negative or NaN -> 0, too large -> UINT64_MAX */
uint64_t tlm__clamp_u64(double v);
/* "cuMemAlloc_v2 x2, cuMemFree_v2 x1" for the calls only CUPTI saw */
void tlm__cupti_calls(char *buf, size_t n, const struct tlm_report *r);
/* What became of CUPTI, in words ("CUPTI attached (DETAIL)"; detail may be
 * NULL); returns true when calls that bypass the hooks could not have been
 * seen (CUPTI held by another tool, not found, unusable or off), which the
 * caller then says (TLM__CUPTI_BLIND). */
#define TLM__CUPTI_BLIND "calls that bypass tlm's hooks could not be seen"
bool tlm__cupti_status(char *buf, size_t n, const char *state, const char *detail);
/* Whether the trace says native stacks were off (PROP stacks.native "off: why") */
bool tlm__native_stacks_off(const struct tlm_report *r);
/* Keeps the value of a PROP record "cupti" or "cupti.detail" (clipped to the
 * buffer); other keys are left alone. */
void tlm__cupti_prop(const struct tlm_rec_prop *p, char *state, size_t ns, char *detail, size_t nd);
/* The one time origin of every time a report prints: said once per output
 * (the text and HTML head, the summary's first line). */
#define TLM__TIME_ORIGIN "seconds since the trace start (libtlm.so loaded in the process)"
/* Seconds since the trace start: "12.345s". */
char *tlm__secs(char *buf, size_t n, int64_t ns);
/* Basename of a path (the path itself when it has no '/'). */
const char *tlm__base(const char *path);

/* One output line: formatted, bytes outside printable ASCII replaced by '?'
 * (the text output is for terminals: no escapes, no wide characters), and
 * cut to TLM__WIDTH columns with "..." when longer. */
void tlm__line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes the command line to paste to get the full report, shell-quoted;
 * never cut (a cut path would be a wrong command). */
void tlm__command_line(FILE *f, const char *prefix, const char *path);
/* One "note: ..." line for a trace that did not end cleanly, else nothing. */
void tlm__exit_note(FILE *f, const struct tlm_report *r);
/* The name of a (device, kind) track in the exports: "device 0",
 * "device 0 managed", "host pinned". */
void tlm__track_name(char *buf, size_t n, int device, int kind);
/* The key "stack" and a stack's frames as the JSON report writes them
 * (docs/report-json.md, site), and "python_stack_cut" when cut
 * (render_json.c; also the Python package's stacks, src/python). */
struct tlm__json;
void tlm__json_stack(struct tlm__json *j, struct tlm_report *r, uint32_t stack_id);
/* KEY: {function, file, line, module} of fr, or null without one (render_steps.c). */
void tlm__json_frame(struct tlm__json *j, const char *key, const struct tlm_frame *fr);
/* "func (file.c:12) [module]" for a frame, into buf (cut by tlm__line later). */
void tlm__frame_text(char *buf, size_t n, const struct tlm_frame *fr);

/* ---- labels (labels.c): the one rule naming a site in one line ---------- */

#define TLM__LABEL_SEP " <- " /* "called from", in plain text (the HTML uses an arrow) */
struct tlm__label_frames {
	size_t n;
	size_t idx[3];        /* the frames a label shows (indices into the stack's frames) */
};
struct tlm__labels {
	size_t n;
	char **text;          /* per site */
	char *buf;
	struct tlm__label_frames *shown; /* NULL without memory */
};
/* Labels for the n sites shown together on one screen (site i: dev[i],
 * stack[i]): each shows what tells it apart from the others (the first frame
 * outside the code all of them, or the report's headline sites, share; then
 * the frames where alike sites differ) and, when the screen holds several
 * devices, the device. sep joins frames. -1 without memory (*out empty). */
int tlm__labels_make(struct tlm__labels *out, struct tlm_report *r, const int *dev, const uint32_t *stack,
		     size_t n, const char *sep);
int tlm__labels_sites(struct tlm__labels *out, struct tlm_report *r, const struct tlm_report_site *s, size_t n,
		      const char *sep);
int tlm__labels_peak(struct tlm__labels *out, struct tlm_report *r, const struct tlm_report_peak_site *s,
		     size_t n, const char *sep);
int tlm__labels_ooms(struct tlm__labels *out, struct tlm_report *r); /* all of them, TLM__LABEL_SEP */
void tlm__labels_free(struct tlm__labels *l);
/* The label of site i; a placeholder when there is none (out of memory). */
const char *tlm__label(const struct tlm__labels *l, size_t i);

#endif
