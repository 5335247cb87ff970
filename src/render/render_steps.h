/* SPDX-License-Identifier: MIT */
/*
 * render_steps.h - the step sections (report_steps.h) in each rendering:
 * called by render_text.c, render_summary.c, render_json.c and
 * render_html.c; each prints nothing useful-less: a run without steps gets
 * one line (text), nothing (summary), "steps": {"found": false, ...} (JSON).
 */
#ifndef TLM_REPORT_RENDER_STEPS_H
#define TLM_REPORT_RENDER_STEPS_H

#include <stdio.h>

#include "encoders/json_out.h"
#include "analysis/report_steps.h"

void tlm__steps_text(FILE *f, struct tlm_report *r);
void tlm__steps_summary(FILE *f, struct tlm_report *r);
/* Step leaks (any phase) that LEAKS does not hold: their memory was freed
 * before the run ended (a list of losses local to a training function). */
size_t tlm__steps_leaks_freed(const struct tlm_report *r);
/* Top-level keys "steps" and "activations". */
void tlm__steps_json(struct tlm__json *j, struct tlm_report *r);
/* Inside a leak object: "bytes_per_step", "tensors_per_step", "steps_with_survivors" (null without steps). */
void tlm__steps_json_leak(struct tlm__json *j, const struct tlm_report *r, const struct tlm_report_site *s);
/* Inside a device object: "forecast" (null unless known). */
void tlm__steps_json_forecast(struct tlm__json *j, const struct tlm_report *r, int device, int kind);
void tlm__steps_html(FILE *f, struct tlm_report *r);
/* render_phases.c: PHASES (text, only with two phases or more) and the key
 * "phases" inside the steps object (JSON). */
void tlm__phases_text(FILE *f, struct tlm_report *r);
void tlm__phases_json(struct tlm__json *j, struct tlm_report *r);

#endif
